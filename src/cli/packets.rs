//! `roce-dissect packets CAPTURE`: one line per frame (with what the
//! analysis found in it), the header tree, hex, or JSON Lines.

use std::cell::RefCell;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::ops::ControlFlow;

use super::args::PacketsFormat;
use super::{PacketsArgs, Progress, RunError, ordered, print_warnings, source_error};
use crate::analysis::Analyzer;
use crate::fields;
use crate::filter::Filter;
use crate::output::fields::FieldsFormat;
use crate::output::text::terminal_safe;
use crate::output::{packets, tree};
use crate::pipeline::Seen;

/// What `packets` writes for each frame shown.
enum Mode {
    Text,
    Json,
    Fields {
        fields: Vec<&'static fields::Field>,
        format: FieldsFormat,
    },
}

fn mode(args: &PacketsArgs) -> Result<Mode, RunError> {
    let format = match (args.format, args.json) {
        (Some(PacketsFormat::Fields), true) | (Some(PacketsFormat::Text), true) => {
            return Err(RunError::Usage(
                "--json is -T json: give one of them".into(),
            ));
        }
        (Some(f), _) => f,
        (None, true) => PacketsFormat::Json,
        (None, false) if !args.fields.is_empty() => {
            return Err(RunError::Usage(
                "-e needs -T fields (e.g. packets CAPTURE -T fields -e frame.number -e bth.psn)"
                    .into(),
            ));
        }
        (None, false) => PacketsFormat::Text,
    };
    if format != PacketsFormat::Text && (args.verbose || args.hex) {
        return Err(RunError::Usage(
            "-V and -x go with the text output, not -T fields or JSON".into(),
        ));
    }
    if format != PacketsFormat::Fields && !args.field_options.is_empty() {
        return Err(RunError::Usage("-E goes with -T fields".into()));
    }
    Ok(match format {
        PacketsFormat::Text => Mode::Text,
        PacketsFormat::Json => Mode::Json,
        PacketsFormat::Fields => {
            if args.fields.is_empty() {
                return Err(RunError::Usage(
                    "-T fields was given, but no fields with -e (e.g. -e frame.number -e bth.psn; `roce-dissect fields` lists them)".into(),
                ));
            }
            let fields = args
                .fields
                .iter()
                .flat_map(|e| e.split(','))
                .map(|name| {
                    fields::lookup(name.trim()).ok_or_else(|| {
                        let hint = fields::suggest(name.trim());
                        RunError::Usage(format!(
                            "-e {}: no such field{}",
                            terminal_safe(name),
                            if hint.is_empty() {
                                " (`roce-dissect fields` lists them)".to_string()
                            } else {
                                format!("; did you mean {}?", hint.join(", "))
                            }
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let format = FieldsFormat::parse(&args.field_options).map_err(RunError::Usage)?;
            Mode::Fields { fields, format }
        }
    })
}

/// How `packets` formats a frame: [`ordered::Render`] for the threads
/// that format.
struct Lines<'m> {
    mode: &'m Mode,
    verbose: bool,
    hex: bool,
    ts_digits: usize,
    link_speed: crate::analysis::LinkSpeed,
}

impl ordered::Render for Lines<'_> {
    fn render(&self, seen: &Seen<'_, '_>, flow_number: Option<u64>, out: &mut Vec<u8>) {
        let pkt = seen.pkt;
        let found = seen.analysis;
        match self.mode {
            Mode::Json => packets::write_json_line_analysed(out, pkt, found, flow_number),
            Mode::Fields { fields, format } => {
                let mut line = String::new();
                format.write_row(&mut line, fields, &seen.ctx(flow_number), &mut Vec::new());
                line.push('\n');
                out.extend_from_slice(line.as_bytes());
            }
            Mode::Text => {
                let bps = self.link_speed.bps(pkt.if_speed);
                let mut line = String::with_capacity(192);
                packets::write_summary_line(
                    &mut line,
                    pkt,
                    seen.first_ts_ns,
                    self.ts_digits,
                    bps,
                    seen.tcp.as_ref(),
                );
                packets::push_nvme(&mut line, pkt, found.nvme);
                packets::push_marks(&mut line, found.marks);
                line.push('\n');
                out.extend_from_slice(line.as_bytes());
                if self.verbose {
                    tree::write_header_tree(pkt, bps, seen.tcp.as_ref(), out);
                    if let Some(role) = found.nvme {
                        tree::write_nvme_tree(pkt, role, out);
                    }
                }
                if self.hex {
                    out.extend_from_slice(tree::hex_dump(pkt.data).as_bytes());
                }
                if self.verbose || self.hex {
                    out.push(b'\n');
                }
            }
        }
    }
}

/// The report's number of each flow (1-based, as the report and the TUI
/// list them), keyed as the report names flows; from a first, parallel
/// analysis of the input. `None` for standard input and pipes, which
/// cannot be read twice: flows are then numbered in order of first
/// appearance.
fn report_numbers(
    paths: &[std::path::PathBuf],
    args: &PacketsArgs,
    threads: usize,
) -> Option<crate::pipeline::FlowNumbers> {
    let regular = |p: &std::path::PathBuf| {
        p.as_os_str() != "-" && std::fs::metadata(p).is_ok_and(|m| m.is_file())
    };
    if !paths.iter().all(regular) {
        return None;
    }
    let mut opts = args.analysis.options(&args.decode).ok()?;
    // The numbers follow the report's order, by trouble (replays, gaps,
    // NAKs, CE marks, CNPs...) then first frame: the PSN analysis says all
    // of it, with duplicates left out as the command leaves them out. The
    // stages that measure (timing, throughput, PFC and DCQCN reactions,
    // NVMe-oF) change no flow's place, and skipping them made this pass
    // a fifth cheaper (500 k frames of 900 bytes: 0.065 s against 0.081,
    // best of 7).
    let dup = crate::analysis::Stage::Duplicates;
    opts.stages = if opts.stages.has(dup) {
        crate::analysis::Stages::none().with(dup)
    } else {
        crate::analysis::Stages::none()
    };
    let dopts = args.decode.dissect_options();
    let report = if paths.len() == 1 {
        crate::pipeline::analyze_path(&paths[0], &dopts, opts, threads, None)
    } else {
        crate::pipeline::analyze_merged(paths, &dopts, opts, None, threads, None)
    }
    .ok()?;
    Some(crate::pipeline::FlowNumbers::of(&report))
}

/// With `-w` and no `-P` nothing is printed: an option that only says how
/// to print is a mistake worth a word.
fn check_write(args: &PacketsArgs) -> Result<(), RunError> {
    let Some(path) = &args.write else {
        return Ok(());
    };
    if path.as_os_str() == "-" && args.print {
        return Err(RunError::Usage(
            "-P prints the frames to the standard output, where -w - writes the capture: write the capture to a file".into(),
        ));
    }
    let printing = [
        (args.verbose, "-V"),
        (args.hex, "-x"),
        (args.json, "--json"),
        (args.format.is_some(), "-T"),
        (!args.fields.is_empty(), "-e"),
        (!args.field_options.is_empty(), "-E"),
        (args.line_buffered, "-l"),
    ];
    if !args.print
        && let Some((_, flag)) = printing.iter().find(|(given, _)| *given)
    {
        return Err(RunError::Usage(format!(
            "{flag} says how to print frames, and -w writes them to a capture without printing: add -P to print them as well"
        )));
    }
    Ok(())
}

pub fn run(args: &PacketsArgs) -> Result<(), RunError> {
    check_write(args)?;
    let mode = mode(args)?;
    // Lines go to the standard output unless -w writes a capture
    // instead (and -P does not ask for both).
    let printing = args.write.is_none() || args.print;
    let threads = crate::pipeline::threads_or(args.threads).map_err(RunError::Usage)?;
    let filter = args
        .filter
        .as_deref()
        .map(Filter::parse)
        .transpose()
        .map_err(|e| RunError::Usage(format!("-Y: {e}")))?;
    let inputs = super::inputs::expand(&args.captures)?;
    let (mut reader, name) = super::open_inputs(&inputs.paths, args.merge, "packets")?;
    // Flow numbers are the report's when something shows them.
    let needs_numbers = matches!(mode, Mode::Json)
        || args.fields.iter().any(|f| f.contains("roce.analysis.flow"))
        || args
            .filter
            .as_deref()
            .is_some_and(|f| f.contains("roce.analysis.flow"));
    let mut numbers = if needs_numbers {
        report_numbers(&inputs.paths, args, threads)
    } else {
        None
    };
    let path = std::path::Path::new(&name);
    let opts = args.decode.dissect_options();
    let link_speed = args.decode.link_speed();
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, super::sink::Sink::stdout(stdout.lock()));
    // Microseconds when that is all the capture has (a classic pcap);
    // nanoseconds otherwise (ns pcaps, pcapng, ERF records).
    let ts_digits = if reader.ts_resolution_ns() >= 1000 {
        6
    } else {
        9
    };
    // Ctrl-C while a capture file is read and one written: the file
    // being written goes, and a file of its name stays as it was. (A
    // stream's first Ctrl-C ends its input instead, and what was read is
    // written in full.) Caught from before the file is made.
    let stop = args
        .write
        .as_ref()
        .filter(|w| w.as_os_str() != "-")
        .filter(|_| {
            inputs
                .paths
                .iter()
                .all(|p| p.as_os_str() != "-" && p.is_file())
        })
        .map(|_| super::stop::Stop::at_signals());
    let mut capture_out = match &args.write {
        Some(p) => Some(super::capture_out::CaptureOut::create(
            p,
            args.write_format,
            reader.ts_resolution_ns(),
            &inputs.paths,
        )?),
        None => None,
    };
    let stopped = || stop.as_ref().is_some_and(super::stop::Stop::requested);
    let lines = Lines {
        mode: &mode,
        verbose: args.verbose,
        hex: args.hex,
        ts_digits,
        link_speed,
    };
    let mut shown = 0u64;
    // Set by whichever part of the loop first fails to write.
    let written: RefCell<io::Result<()>> = RefCell::new(Ok(()));
    let mut progress = if printing {
        Progress::beside_output(&path.display().to_string())
    } else {
        Progress::new(&path.display().to_string())
    };
    // Set when the capture being written fails.
    let capture_failed: RefCell<Option<RunError>> = RefCell::new(None);
    let mut tell = |done: usize, total: usize, frames| {
        if stopped() {
            return ControlFlow::Break(());
        }
        progress.update(done as u64, total as u64, frames)
    };
    if let Mode::Fields { format, .. } = &mode
        && format.header
    {
        writeln!(out, "{}", format.header_line(&args.fields))?;
    }
    let aopts = args.analysis.options(&args.decode)?;
    let result = ordered::with_output(
        &mut out,
        &lines,
        &opts,
        if printing {
            ordered::workers(threads)
        } else {
            0
        },
        |output| {
            // Shared by the frame loop's two hooks, never both at once.
            let output = RefCell::new(output);
            let failed = |e| {
                *written.borrow_mut() = Err(e);
                ControlFlow::Break(())
            };
            // The analysis sees every frame, shown or not, so that what it
            // says of a frame (a retransmission, a gap) is what the report
            // says.
            let mut show = |seen: &crate::pipeline::Seen<'_, '_>| -> ControlFlow<()> {
                let pkt = seen.pkt;
                let found = seen.analysis;
                if args.roce_only && pkt.roce.is_none() && pkt.pause.is_none() {
                    return ControlFlow::Continue(());
                }
                if let Some(want) = &args.flow
                    && Analyzer::flow_key(pkt).as_ref() != Some(want)
                {
                    return ControlFlow::Continue(());
                }
                let flow_number = match &mut numbers {
                    None => found.flow().map(|id| u64::from(id) + 1),
                    Some(n) => n.number(seen),
                };
                if let Some(f) = &filter
                    && !f.matches(&seen.ctx(flow_number))
                {
                    return ControlFlow::Continue(());
                }
                if stopped() {
                    return ControlFlow::Break(());
                }
                if let Some(c) = &mut capture_out
                    && let Err(e) = c.write(pkt)
                {
                    *capture_failed.borrow_mut() = Some(e);
                    return ControlFlow::Break(());
                }
                if printing {
                    let mut output = output.borrow_mut();
                    if let Err(e) = output.show(seen, flow_number) {
                        return failed(e);
                    }
                    if args.line_buffered
                        && let Err(e) = output.flush()
                    {
                        return failed(e);
                    }
                }
                shown += 1;
                if args.count.is_some_and(|c| shown >= c) {
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            };
            // With a filter, a single capture file is read by every core:
            // the workers test the filter on each frame's bytes, and only
            // the frames it may pass are decoded again here.
            let result = match (&filter, inputs.paths.as_slice()) {
                (Some(f), [one]) if one.as_os_str() != "-" && one.is_file() => {
                    drop(reader);
                    crate::pipeline::visit_path(
                        one,
                        &opts,
                        aopts,
                        threads,
                        f,
                        Some(&mut tell),
                        &mut show,
                    )
                }
                _ => {
                    // A pipe with nothing more for now (a live `tcpdump
                    // -w -`): the lines of the frames it sent go out
                    // before the wait, as tshark's do.
                    let mut waiting = || match output.borrow_mut().flush() {
                        Ok(()) => ControlFlow::Continue(()),
                        Err(e) => failed(e),
                    };
                    crate::pipeline::visit_source(
                        &mut *reader,
                        &name,
                        &opts,
                        aopts,
                        Some(&mut tell),
                        &mut show,
                        Some(&mut waiting),
                    )
                }
            };
            if written.borrow().is_ok() {
                let finished = output.borrow_mut().finish();
                *written.borrow_mut() = finished;
            }
            result
        },
    );
    progress.finish();
    if let Some(e) = capture_failed.into_inner() {
        return Err(e);
    }
    if let (Some(stop), Some(c)) = (&stop, &capture_out)
        && stop.requested()
    {
        let to = terminal_safe(&c.path().display().to_string());
        let what = if c.in_place() {
            format!("what went to {to} is cut short")
        } else {
            format!("{to} was not written (a file of that name is as it was)")
        };
        drop(capture_out);
        return Err(stop.error(&what));
    }
    written.into_inner()?;
    out.flush()?;
    let report = result.map_err(|e| source_error(e, path))?;
    // A flow with no frame is most likely a mistyped one: say so, and
    // leave a file named by -w as it was rather than an empty capture.
    let mut no_flow = match &args.flow {
        Some(f) if shown == 0 => Some(format!(
            "no frame of flow {},{},0x{:06x} in {} ({} read; `roce-dissect {}` lists its flows)",
            f.src,
            f.dst,
            f.dest_qp,
            crate::output::text::terminal_safe(&path.display().to_string()),
            crate::output::text::count(report.capture.frames, "frame", "frames"),
            crate::output::text::shell_quote(&path.display().to_string()),
        )),
        _ => None,
    };
    if let Some(c) = capture_out.take_if(|c| no_flow.is_some() && !c.in_place()) {
        let to = terminal_safe(&c.path().display().to_string());
        drop(c);
        if let Some(msg) = &mut no_flow {
            msg.push_str(&format!(
                "; {to} was not written (a file of that name is as it was)"
            ));
        }
    }
    if let Some(c) = capture_out {
        let to = c.path().to_path_buf();
        let n = c.finish()?;
        if to.as_os_str() != "-" && io::stderr().is_terminal() {
            eprintln!(
                "{} of {} written to {}",
                crate::output::text::count(n, "frame", "frames"),
                crate::output::report::grouped(report.capture.frames),
                terminal_safe(&to.display().to_string())
            );
        }
    }
    // The capture's warnings and the analysis's, but not those about the
    // report's lists, which this command does not show.
    let warnings: Vec<String> = report
        .capture
        .warnings
        .iter()
        .filter(|w| !crate::analysis::about_report_lists(w))
        .cloned()
        .collect();
    print_warnings(&warnings, warnings.len() as u64, None);
    match no_flow {
        Some(msg) => Err(RunError::NothingFound(msg)),
        None => Ok(()),
    }
}
