//! `packets -w FILE`: the frames selected, written as a capture (as
//! `tshark -r IN -Y FILTER -w OUT` writes them), for Wireshark, a
//! colleague or a vendor.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::RunError;
use super::args::WriteFormat;
use super::beside::{Beside, beside, create_output};
use super::sink::Sink;
use crate::capture::compress::{Compression, Compressor};
use crate::capture::write::{FrameWriter, OutFormat, WriteError};
use crate::dissect::Packet;
use crate::output::text::terminal_safe;

type Out = Compressor<BufWriter<Sink<Box<dyn Write>>>>;

/// Where the frames go. Written to a file beside the one named and
/// renamed to its name once complete, so that a run that fails (a full
/// disk, an unreadable capture) leaves no half-written file, and the
/// file named is never one being read.
pub struct CaptureOut {
    /// Until the first frame: a pcap's header names its link type.
    pending: Option<Out>,
    writer: Option<FrameWriter<Out>>,
    format: OutFormat,
    /// The file being written beside `path` (`None`: standard output, a
    /// pipe or a device, written as they are).
    partial: Option<Beside>,
    path: PathBuf,
}

/// The container for `path`, by `-F` or else the name: `.pcap` (`.cap`)
/// is a classic pcap, `.ns.pcap` one in nanoseconds, anything else pcapng
/// (tshark's default); in the capture's own resolution unless `-F
/// ns-pcap`.
pub fn format_for(path: &Path, chosen: Option<WriteFormat>, resolution_ns: u64) -> OutFormat {
    let name = path.to_string_lossy().to_ascii_lowercase();
    // What the name says once a compression suffix is taken off.
    let stem = Compression::strip_suffix(&name);
    let chosen = chosen.unwrap_or(if stem.ends_with(".ns.pcap") || stem.ends_with(".nspcap") {
        WriteFormat::NsPcap
    } else if stem.ends_with(".pcap") || stem.ends_with(".cap") {
        WriteFormat::Pcap
    } else {
        WriteFormat::Pcapng
    });
    match chosen {
        WriteFormat::Pcapng => OutFormat::PcapNg.for_resolution(resolution_ns),
        WriteFormat::Pcap => OutFormat::PcapMicros.for_resolution(resolution_ns),
        WriteFormat::NsPcap => OutFormat::PcapNanos,
    }
}

/// Whether `a` and `b` name one file.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl CaptureOut {
    /// Opens `path` (`-`: standard output) for the frames of a capture
    /// whose timestamps are `resolution_ns` apart, read from `inputs`.
    pub fn create(
        path: &Path,
        chosen: Option<WriteFormat>,
        resolution_ns: u64,
        inputs: &[PathBuf],
    ) -> Result<CaptureOut, RunError> {
        let format = format_for(path, chosen, resolution_ns);
        let shown = terminal_safe(&path.display().to_string());
        let compression = Compression::of_name(path);
        if let Some(c) = compression.filter(|c| !c.is_read()) {
            return Err(RunError::Usage(format!(
                "{shown}: {} is not written; end the name in .gz, .zst or .xz, or in neither",
                c.name()
            )));
        }
        let (base, partial): (Sink<Box<dyn Write>>, _) = if path.as_os_str() == "-" {
            super::sink::binary_stdout("-w")?;
            (Sink::stdout(Box::new(io::stdout())), None)
        } else {
            if let Some(input) = inputs.iter().find(|i| same_file(i, path)) {
                return Err(RunError::Usage(format!(
                    "{shown} is the capture being read ({}): write the frames to another file",
                    terminal_safe(&input.display().to_string())
                )));
            }
            if path.is_dir() {
                return Err(RunError::Usage(format!(
                    "{shown} is a folder: name a file in it"
                )));
            }
            let (file, partial) = create_output(path, beside(path))?;
            (Sink::file(Box::new(file) as Box<dyn Write>, path), partial)
        };
        let out = Compressor::new(BufWriter::with_capacity(1 << 20, base), compression)?;
        Ok(CaptureOut {
            pending: Some(out),
            writer: None,
            format,
            partial,
            path: path.to_path_buf(),
        })
    }

    /// Writes one frame, as it was read.
    pub fn write(&mut self, pkt: &Packet<'_>) -> Result<(), RunError> {
        // `data` is the record as read (an ERF record with its header).
        self.write_record(pkt.ts_ns, pkt.data, pkt.record_len, pkt.link, pkt.if_speed)
    }

    /// Writes one frame's record: `data` of `orig_len` bytes on the wire.
    pub fn write_record(
        &mut self,
        ts_ns: u64,
        data: &[u8],
        orig_len: u32,
        link: crate::capture::LinkType,
        speed: Option<std::num::NonZeroU64>,
    ) -> Result<(), RunError> {
        let link = link.number();
        let w = self.writer_for(link)?;
        w.write(ts_ns, data, orig_len, link, speed)
            .map_err(|e| self.error(e))
    }

    fn writer_for(&mut self, link: u32) -> Result<&mut FrameWriter<Out>, RunError> {
        if self.writer.is_none() {
            let out = self
                .pending
                .take()
                .ok_or_else(|| RunError::Io(io::Error::other("the capture's writer was lost")))?;
            self.writer = Some(FrameWriter::new(out, self.format, link)?);
        }
        self.writer
            .as_mut()
            .ok_or_else(|| RunError::Io(io::Error::other("the capture's writer was lost")))
    }

    fn error(&self, e: WriteError) -> RunError {
        match e {
            WriteError::Io(e) => RunError::from(e),
            other => RunError::Usage(format!(
                "{}: {other}",
                terminal_safe(&self.path.display().to_string())
            )),
        }
    }

    /// Ends the capture (a file with no frame still gets its header) and
    /// puts it in place; the frames written.
    pub fn finish(mut self) -> Result<u64, RunError> {
        // An empty pcap's header names Ethernet.
        let w = self.writer_for(1)?;
        w.flush()?;
        let frames = w.frames();
        let Some(writer) = self.writer.take() else {
            return Ok(frames);
        };
        let mut inner = writer.into_inner().finish()?;
        inner.flush()?;
        drop(inner);
        if let Some(b) = self.partial.take() {
            std::fs::rename(&b.partial, &b.target).map_err(|e| {
                let _ = std::fs::remove_file(&b.partial);
                RunError::Io(io::Error::new(
                    e.kind(),
                    format!(
                        "cannot write {}: {e}",
                        terminal_safe(&self.path.display().to_string())
                    ),
                ))
            })?;
        }
        Ok(frames)
    }

    /// Whether the capture goes where it is seen as it is written
    /// (standard output, a pipe, a device) rather than to a file put in
    /// place at the end.
    pub fn in_place(&self) -> bool {
        self.partial.is_none()
    }

    /// The file written (`-`: standard output).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A capture not finished (an error, a stop) leaves no file behind.
impl Drop for CaptureOut {
    fn drop(&mut self) {
        if let Some(b) = self.partial.take() {
            let _ = std::fs::remove_file(&b.partial);
        }
    }
}
