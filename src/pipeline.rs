//! File → frames → packets → report, for the CLI, the TUI and the tests.

use crate::analysis::{AnalysisOptions, Analyzer, CaptureInfo, FlowKey, Report};
use crate::capture::{CaptureError, CaptureFile, FrameSource};
use crate::dissect::{DissectOptions, dissect};

/// Called now and then with (bytes read, file size, frames so far).
pub type Progress<'p> = &'p mut dyn FnMut(usize, usize, u64);

/// Analyses a capture held in memory (tests, fuzzing).
pub fn analyze(
    file: &CaptureFile,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    let mut reader = file.frames()?;
    let name = file.path().display().to_string();
    analyze_source(&mut reader, &name, dissect_opts, opts, progress)
}

/// Analyses every frame of `source`. Warnings (a cut file, skipped blocks)
/// are in `report.capture.warnings`.
pub fn analyze_source(
    source: &mut dyn FrameSource,
    name: &str,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    mut progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    let mut an = Analyzer::new(opts);
    let mut n = 0u64;
    loop {
        let frame = match source.next_frame() {
            None => break,
            Some(f) => f?,
        };
        let pkt = dissect(&frame, dissect_opts);
        an.packet(&pkt);
        n += 1;
        if n.is_multiple_of(1 << 16)
            && let Some(p) = progress.as_mut()
        {
            let (done, total) = source.progress();
            p(done as usize, total.unwrap_or(0) as usize, n);
        }
    }
    let mut warnings: Vec<String> = source.warnings().to_vec();
    let more = source.warning_count().saturating_sub(warnings.len() as u64);
    if more > 0 {
        warnings.push(format!("{more} more warnings not shown"));
    }
    let info = CaptureInfo {
        file: name.to_string(),
        format: source.format().to_string(),
        ts_resolution_ns: source.ts_resolution_ns(),
        warnings,
    };
    Ok(an.finish(info))
}

/// Parses a `--flow SRC,DST,QP` filter (QP decimal or 0x-hex).
pub fn parse_flow(s: &str) -> Result<FlowKey, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let [src, dst, qp] = parts[..] else {
        return Err(format!(
            "'{s}': expected SRC,DST,QP (e.g. 10.0.0.1,10.0.0.2,0x11)"
        ));
    };
    let src = src
        .parse()
        .map_err(|_| format!("'{src}' is not an IP address or GID"))?;
    let dst = dst
        .parse()
        .map_err(|_| format!("'{dst}' is not an IP address or GID"))?;
    let dest_qp = match qp.strip_prefix("0x").or_else(|| qp.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => qp.parse(),
    }
    .map_err(|_| format!("'{qp}' is not a QP number"))?;
    if dest_qp > 0xff_ffff {
        return Err(format!("'{qp}' is wider than 24 bits"));
    }
    Ok(FlowKey { src, dst, dest_qp })
}
