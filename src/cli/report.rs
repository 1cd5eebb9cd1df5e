//! `roce-dissect CAPTURE`: the analysis report, as text or JSON.

use std::io::{self, IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::Path;

use super::{Cli, Progress, RunError, capture_error, print_warnings};
use crate::output::report::{Style, TextOptions};

pub fn run(path: &Path, cli: &Cli) -> Result<(), RunError> {
    let opts = cli.analysis.options(&cli.decode)?;
    let args = &cli.report;
    let mut progress = Progress::new(&path.display().to_string());
    let threads = match cli.threads {
        Some(n) => usize::from(n),
        None => crate::pipeline::threads().map_err(RunError::Usage)?,
    };
    let result = crate::pipeline::analyze_path(
        path,
        &cli.decode.dissect_options(),
        opts,
        threads,
        Some(&mut |done, total, frames| progress.update(done as u64, total as u64, frames)),
    );
    progress.finish();
    let report = result.map_err(|e| capture_error(e, path))?;
    print_warnings(
        &report.capture.warnings,
        report.capture.warnings.len() as u64,
    );
    // Both writers below hand over large pieces: no buffer in between, and
    // not standard output's own handle either, which is line-buffered (each
    // piece would go out as two writes, the second a copy of its last line).
    let mut out = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    if args.json {
        crate::output::report_json::write(&mut out, &report)?;
    } else {
        let color = !args.no_color
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            && io::stdout().is_terminal();
        let text = crate::output::report::render(
            &report,
            &TextOptions {
                style: Style { color },
                events: args.events,
                all: args.all,
            },
        );
        out.write_all(text.as_bytes())?;
    }
    out.flush()?;
    // The process ends next, which frees the report at once; freeing it
    // piece by piece first (every flow's events and episodes) took
    // milliseconds on large captures.
    std::mem::forget(report);
    Ok(())
}
