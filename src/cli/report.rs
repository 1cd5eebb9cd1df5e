//! `roce-dissect CAPTURE...`: the analysis report, as text or JSON; one per
//! capture (several analysed at once), or one for all with `--merge`.

use std::io::{self, IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use super::inputs::{Inputs, expand};
use super::{Cli, Progress, RunError, capture_error, print_notes, print_warnings};
use crate::analysis::{AnalysisOptions, Report};
use crate::output::report::{Style, TextOptions};

/// The analysis options; `--html` draws each flow's throughput and PSNs
/// over time, so it turns the series on.
fn options(cli: &Cli) -> Result<AnalysisOptions, RunError> {
    let mut opts = cli.analysis.options(&cli.decode)?;
    opts.timeline_series |= cli.report.html.is_some();
    Ok(opts)
}

/// `--html FILE`: the page of `reports` written to FILE (`-`: stdout).
fn write_html(path: &Path, reports: &[Report]) -> Result<(), RunError> {
    let page = crate::output::html::page(reports);
    if path.as_os_str() == "-" {
        super::sink::Sink::stdout(io::stdout().lock()).write_all(page.as_bytes())?;
        return Ok(());
    }
    // A file that cannot be made is a wrong option (exit 2); one that
    // cannot be written (a full disk) a failed output (exit 1).
    let file = std::fs::File::create(path).map_err(|e| {
        RunError::Usage(format!(
            "--html {}: {e}",
            crate::output::text::terminal_safe(&path.display().to_string())
        ))
    })?;
    let mut out = super::sink::Sink::file(file, path);
    out.write_all(page.as_bytes())?;
    out.flush()?;
    eprintln!(
        "roce-dissect: wrote {} ({}): open it in a browser",
        crate::output::text::terminal_safe(&path.display().to_string()),
        crate::output::report::human_bytes(page.len() as u64)
    );
    Ok(())
}

/// The report's `-Y`, compiled.
fn display_filter(cli: &Cli) -> Result<Option<crate::filter::Filter>, RunError> {
    cli.report
        .filter
        .as_deref()
        .map(crate::filter::Filter::parse)
        .transpose()
        .map_err(|e| RunError::Usage(format!("-Y: {e}")))
}

pub fn run(cli: &Cli) -> Result<(), RunError> {
    display_filter(cli)?;
    let inputs = expand(&cli.captures)?;
    let threads = crate::pipeline::threads_or(cli.threads).map_err(RunError::Usage)?;
    if cli.merge && inputs.paths.len() > 1 {
        return merged(&inputs.paths, cli, threads);
    }
    match &inputs {
        Inputs { paths, several } if !*several && paths.len() == 1 => {
            single(&paths[0], cli, threads)
        }
        _ => many(&inputs.paths, cli, threads),
    }
}

fn single(path: &Path, cli: &Cli, threads: usize) -> Result<(), RunError> {
    let opts = AnalysisOptions {
        ends_process: true,
        ..options(cli)?
    };
    let mut progress = Progress::new(&path.display().to_string());
    let mut tell = |done, total, frames| progress.update(done as u64, total as u64, frames);
    let result = match display_filter(cli)? {
        None => crate::pipeline::analyze_path(
            path,
            &cli.decode.dissect_options(),
            opts,
            threads,
            Some(&mut tell),
        ),
        Some(f) => crate::pipeline::analyze_path_filtered(
            path,
            &cli.decode.dissect_options(),
            opts,
            threads,
            &f,
            Some(&mut tell),
        ),
    };
    progress.finish();
    let mut report = result.map_err(|e| capture_error(e, path))?;
    look_elsewhere(&mut report, path, &cli.decode.dissect_options());
    print_notes(&report, None);
    if let Some(html) = &cli.report.html {
        print_warnings(
            &report.capture.warnings,
            report.capture.warnings.len() as u64,
            None,
        );
        return write_html(html, std::slice::from_ref(&report));
    }
    let written = write_report(&report, cli, Placement::Alone, threads);
    // The process ends next, which frees the report at once; freeing it
    // piece by piece first (every flow's events and episodes) took
    // milliseconds on large captures.
    std::mem::forget(report);
    written
}

/// Frames read again, at most, to find where RoCE went.
const PROBE_FRAMES: u64 = 100_000;

/// A report of no RoCE frame, of the file at `path`: its first frames
/// decoded again as RoCE v2 at their own UDP ports, and when some are
/// (their ICRCs check), a hint names the port (`--roce-port`). Standard
/// input and pipes, read once already, are not read again.
pub(crate) fn look_elsewhere(
    report: &mut Report,
    path: &Path,
    opts: &crate::dissect::DissectOptions,
) {
    let c = &report.capture;
    if c.roce_frames > 0 || c.frames == 0 || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return;
    }
    let Ok(mut source) = crate::capture::open_stream(path) else {
        return;
    };
    if let Some((port, n)) = crate::dissect::probe::other_roce_port(&mut source, opts, PROBE_FRAMES)
    {
        crate::analysis::hints::roce_on_other_port(&mut report.hints, opts.roce_port, port, n);
    }
}

/// Where a report goes among those of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// The only one: JSON as a document.
    Alone,
    /// One of several: JSON as one line of JSON Lines.
    First,
    Next,
}

fn merged(paths: &[PathBuf], cli: &Cli, threads: usize) -> Result<(), RunError> {
    let opts = AnalysisOptions {
        ends_process: true,
        ..options(cli)?
    };
    let mut progress = Progress::new(&format!("{} captures", paths.len()));
    let filter = display_filter(cli)?;
    let result = crate::pipeline::analyze_merged(
        paths,
        &cli.decode.dissect_options(),
        opts,
        filter.as_ref(),
        threads,
        Some(&mut |done, total, frames| progress.update(done as u64, total as u64, frames)),
    );
    progress.finish();
    let report = result.map_err(|e| match e {
        // The inner error names its file already.
        crate::capture::CaptureError::In { file, source } => {
            RunError::Capture(PathBuf::from(file), *source)
        }
        other => RunError::Capture(PathBuf::from("--merge"), other),
    })?;
    print_notes(&report, None);
    if let Some(html) = &cli.report.html {
        print_warnings(
            &report.capture.warnings,
            report.capture.warnings.len() as u64,
            None,
        );
        return write_html(html, std::slice::from_ref(&report));
    }
    let written = write_report(&report, cli, Placement::Alone, threads);
    std::mem::forget(report);
    written
}

/// A report per capture, several analysed at once, written in the order
/// given as each is ready: text reports one after the other, JSON as JSON
/// Lines (one report document per line). A capture that cannot be read is
/// said on stderr in its place and the others go on; the exit code is then
/// 2.
fn many(paths: &[PathBuf], cli: &Cli, threads: usize) -> Result<(), RunError> {
    let opts = options(cli)?;
    let total_bytes: u64 = paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let mut progress = Progress::new(&format!("{} captures", paths.len()));
    let mut read_bytes = 0u64;
    let mut frames = 0u64;
    let mut failed = 0usize;
    let mut out_err: Option<RunError> = None;
    let filter = display_filter(cli)?;
    // --html: one page for all, written at the end.
    let mut pages: Vec<(usize, Report)> = Vec::new();
    crate::pipeline::analyze_many(
        paths,
        &cli.decode.dissect_options(),
        &opts,
        filter.as_ref(),
        threads,
        &mut |i, result| {
            read_bytes += std::fs::metadata(&paths[i]).map_or(0, |m| m.len());
            if out_err.is_some() {
                return;
            }
            match result {
                Ok(mut report) if cli.report.html.is_some() => {
                    look_elsewhere(&mut report, &paths[i], &cli.decode.dissect_options());
                    let of = Some(report.capture.file.as_str());
                    progress.suspend(|| {
                        print_notes(&report, of);
                        print_warnings(
                            &report.capture.warnings,
                            report.capture.warnings.len() as u64,
                            of,
                        );
                    });
                    frames += report.capture.frames;
                    let _ = progress.update(read_bytes, total_bytes, frames);
                    pages.push((i, report));
                }
                Ok(mut report) => {
                    look_elsewhere(&mut report, &paths[i], &cli.decode.dissect_options());
                    frames += report.capture.frames;
                    let _ = progress.update(read_bytes, total_bytes, frames);
                    progress.suspend(|| {
                        print_notes(&report, Some(&report.capture.file));
                        let at = if i == 0 {
                            Placement::First
                        } else {
                            Placement::Next
                        };
                        if let Err(e) = write_report(&report, cli, at, threads) {
                            out_err = Some(e);
                        }
                    });
                    std::mem::forget(report);
                }
                Err(e) => {
                    failed += 1;
                    progress.suspend(|| eprintln!("roce-dissect: {}", capture_error(e, &paths[i])));
                }
            }
        },
    );
    progress.finish();
    if let Some(e) = out_err {
        return Err(e);
    }
    if let Some(html) = &cli.report.html {
        pages.sort_by_key(|p| p.0);
        let reports: Vec<Report> = pages.into_iter().map(|p| p.1).collect();
        if !reports.is_empty() {
            write_html(html, &reports)?;
        }
    }
    if failed > 0 {
        return Err(RunError::SomeFailed {
            failed,
            total: paths.len(),
        });
    }
    Ok(())
}

/// Writes one report on stdout: the JSON document (compact, one line,
/// when it is one of several) or the text (after a blank line when
/// another came before).
fn write_report(report: &Report, cli: &Cli, at: Placement, threads: usize) -> Result<(), RunError> {
    let args = &cli.report;
    print_warnings(
        &report.capture.warnings,
        report.capture.warnings.len() as u64,
        (at != Placement::Alone).then_some(report.capture.file.as_str()),
    );
    // Both writers below hand over large pieces: no buffer in between, and
    // not standard output's own handle either, which is line-buffered (each
    // piece would go out as two writes, the second a copy of its last line).
    let mut out = super::sink::Sink::stdout(std::fs::File::from(
        io::stdout().as_fd().try_clone_to_owned()?,
    ));
    if args.json && at != Placement::Alone {
        let mut doc = Vec::new();
        crate::output::report_json::write(&mut doc, report)?;
        let mut line = crate::output::json::minify(&doc);
        line.push(b'\n');
        out.write_all(&line)?;
    } else if args.json {
        crate::output::report_json::write_on(&mut out, report, threads)?;
    } else {
        let color = !args.no_color
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            && io::stdout().is_terminal();
        let text = crate::output::report::render(
            report,
            &TextOptions {
                style: Style { color },
                events: args.events,
                all: args.all,
                width: args.layout.stdout_width(),
            },
        );
        if at == Placement::Next {
            out.write_all(b"\n")?;
        }
        out.write_all(text.as_bytes())?;
    }
    out.flush()?;
    Ok(())
}
