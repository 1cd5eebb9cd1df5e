//! The captures named on the command line: files, standard input (`-`) and
//! folders, whose capture files are taken in name order.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::RunError;
use crate::capture::compress::{Compression, MAGIC_LEN};
use crate::output::text::terminal_safe;

/// The captures to read, and whether they came as a set (several names or
/// a folder): then the report is one per capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    pub paths: Vec<PathBuf>,
    pub several: bool,
}

/// Whether the first bytes of a file are those of a capture this tool
/// reads: pcap (either byte order, µs or ns), pcapng, or gzip, zstd or xz.
pub fn looks_like_capture(head: &[u8]) -> bool {
    if Compression::detect(head).is_some_and(Compression::is_read) {
        return true;
    }
    matches!(
        head.first_chunk::<4>().map(|m| u32::from_be_bytes(*m)),
        Some(0xA1B2_C3D4 | 0xA1B2_3C4D | 0xD4C3_B2A1 | 0x4D3C_B2A1 | 0x0A0D_0D0A)
    )
}

fn head_of(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = std::fs::File::open(path)?;
    let mut head = vec![0u8; MAGIC_LEN];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    head.truncate(got);
    Ok(head)
}

/// Expands folders (their regular files that are captures, by content, in
/// name order; others are named on stderr as skipped) and checks that `-`
/// comes at most once.
pub fn expand(args: &[PathBuf]) -> Result<Inputs, RunError> {
    let mut paths = Vec::new();
    let mut several = args.len() > 1;
    let mut stdin = 0;
    for a in args {
        if a.as_os_str() == "-" {
            stdin += 1;
            paths.push(a.clone());
            continue;
        }
        if !a.is_dir() {
            paths.push(a.clone());
            continue;
        }
        several = true;
        let entries = std::fs::read_dir(a).map_err(|e| {
            RunError::Capture(
                a.clone(),
                crate::capture::CaptureError::Io {
                    path: a.clone(),
                    source: e,
                },
            )
        })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        let mut skipped = Vec::new();
        let before = paths.len();
        for f in files {
            match head_of(&f) {
                Ok(head) if looks_like_capture(&head) => paths.push(f),
                _ => skipped.push(f),
            }
        }
        if !skipped.is_empty() {
            let names: Vec<String> = skipped
                .iter()
                .take(5)
                .map(|p| terminal_safe(&p.file_name().unwrap_or(p.as_os_str()).to_string_lossy()))
                .collect();
            let more = skipped.len().saturating_sub(names.len());
            eprintln!(
                "roce-dissect: {}: skipped {} ({}{})",
                terminal_safe(&a.display().to_string()),
                crate::output::text::count(
                    skipped.len() as u64,
                    "file that is not a capture",
                    "files that are not captures"
                ),
                names.join(", "),
                if more > 0 {
                    format!(", and {more} more")
                } else {
                    String::new()
                }
            );
        }
        if paths.len() == before {
            return Err(RunError::Usage(format!(
                "{}: no capture file in this folder (pcap, pcapng, or one of them compressed)",
                terminal_safe(&a.display().to_string())
            )));
        }
    }
    if stdin > 1 {
        return Err(RunError::Usage(
            "standard input (`-`) can be read only once".into(),
        ));
    }
    Ok(Inputs { paths, several })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_give_their_captures_in_name_order() {
        let d = tempfile::tempdir().unwrap();
        let pcap = [0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
        std::fs::write(d.path().join("b.pcap"), pcap).unwrap();
        std::fs::write(d.path().join("a.cap"), [0x0a, 0x0d, 0x0d, 0x0a, 0, 0]).unwrap();
        std::fs::write(d.path().join("c.gz"), [0x1f, 0x8b, 8, 0]).unwrap();
        std::fs::write(d.path().join("README"), b"notes").unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let i = expand(&[d.path().to_path_buf()]).unwrap();
        let names: Vec<_> = i
            .paths
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(names, ["a.cap", "b.pcap", "c.gz"]);
        assert!(i.several);
        let one = expand(&[d.path().join("b.pcap")]).unwrap();
        assert!(!one.several);
        let empty = tempfile::tempdir().unwrap();
        assert!(expand(&[empty.path().to_path_buf()]).is_err());
        assert!(expand(&["-".into(), "-".into()]).is_err());
    }
}
