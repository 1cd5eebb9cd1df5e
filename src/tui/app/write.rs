//! `W`: the frames of the list in view written as a capture beside the
//! one read.

use super::{App, Scope};

impl App {
    /// A name for a capture of the frames of `scope`: the capture's, with
    /// what they are (`mixed-flow4.pcapng`), beside it.
    pub(super) fn capture_name(&self, scope: Scope) -> String {
        let stem = self
            .reading
            .first()
            .filter(|_| self.reading.len() == 1)
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .map(|n| {
                let n = crate::capture::compress::Compression::strip_suffix(&n);
                [".pcapng", ".pcap", ".cap"]
                    .iter()
                    .find_map(|e| n.strip_suffix(e))
                    .unwrap_or(n)
                    .to_string()
            })
            .filter(|n| !n.is_empty() && n != "-")
            .unwrap_or_else(|| "capture".to_string());
        let what = match scope {
            Scope::All if self.display.is_some() => "filtered".to_string(),
            Scope::All => "frames".to_string(),
            Scope::Flow(f) => format!("flow{}", f + 1),
            Scope::Pause(i) => format!("pause{}", i + 1),
            Scope::Io(i) => format!("io{}", i + 1),
        };
        format!("{stem}-{what}.pcapng")
    }

    /// Writes the frames of the packet list to the capture file `name`
    /// (pcapng, or as its name says: `.pcap`, `.gz`...); says how it went
    /// on the status line.
    pub(super) fn write_listed(&mut self, name: &str) {
        if name.is_empty() {
            self.status = "no file named: nothing written".into();
            return;
        }
        let path = std::path::Path::new(name);
        let shown = crate::output::text::terminal_safe(name);
        let mut out = match crate::cli::capture_out::CaptureOut::create(
            path,
            None,
            self.ts_resolution_ns,
            &self.reading,
        ) {
            Ok(o) => o,
            Err(e) => {
                self.status = format!("not written: {e}");
                return;
            }
        };
        let list = std::mem::take(&mut self.packet_list);
        let mut failed = None;
        for &pos in &list {
            let Some(f) = self.read(pos) else {
                failed = Some(std::mem::take(&mut self.status));
                break;
            };
            if let Err(e) = out.write_record(
                f.meta.ts_ns,
                &f.data,
                f.meta.len,
                f.meta.link,
                f.meta.if_speed,
            ) {
                failed = Some(e.to_string());
                break;
            }
        }
        self.packet_list = list;
        self.status = match failed {
            // The file being written goes with `out`.
            Some(why) => format!("not written: {why}"),
            None => match out.finish() {
                Ok(n) => format!(
                    "{} written to {shown}",
                    crate::output::text::count(n, "frame", "frames")
                ),
                Err(e) => format!("not written: {e}"),
            },
        };
    }
}
