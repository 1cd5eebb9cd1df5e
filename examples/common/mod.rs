//! What the measuring examples share: a capture's frames read into memory,
//! and their facts built as the chunked reader builds them.
use std::time::Instant;

use roce_dissect::analysis::Facts;
use roce_dissect::capture::{CaptureFile, Frame};
use roce_dissect::dissect::DissectOptions;

/// The capture at `path`, or a one-line error from `tool` and exit code 2.
pub fn open(tool: &str, path: &str) -> CaptureFile {
    CaptureFile::open(path).unwrap_or_else(|e| {
        eprintln!("{tool}: {path}: {e}");
        std::process::exit(2);
    })
}

/// At most `limit` frames of `file` (at least one), or a one-line error
/// from `tool` and exit code 2.
pub fn frames<'a>(tool: &str, path: &str, file: &'a CaptureFile, limit: usize) -> Vec<Frame<'a>> {
    let Ok(reader) = file.frames() else {
        eprintln!("{tool}: {path}: not a capture");
        std::process::exit(2);
    };
    let frames: Vec<_> = reader.flatten().take(limit).collect();
    if frames.is_empty() {
        eprintln!("{tool}: {path}: no frames");
        std::process::exit(2);
    }
    frames
}

/// Builds every frame's facts into one reused buffer of a chunk's size (as
/// the chunked reader does), appending them to `keep` if given; the
/// seconds it took.
pub fn build_facts(
    frames: &[Frame],
    opts: &DissectOptions,
    mut keep: Option<&mut Vec<Facts>>,
) -> f64 {
    let mut buf = Vec::new();
    let t = Instant::now();
    for chunk in frames.chunks(2000) {
        for (i, f) in chunk.iter().enumerate() {
            Facts::put_from_frame(&mut buf, i, f, opts);
        }
        buf.truncate(chunk.len());
        if let Some(all) = keep.as_deref_mut() {
            all.extend_from_slice(&buf);
        }
    }
    t.elapsed().as_secs_f64()
}
