//! `roce-dissect export CAPTURE... -o DIR`: the captures as a Parquet
//! dataset, several captures at once; `--schema` prints every table's
//! columns.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::args::ExportArgs;
use super::{Progress, RunError, print_warnings};
use crate::export::{self, Table};
use crate::output::report::human_bytes;
use crate::output::text::{count, terminal_safe};

/// Every table's columns as Markdown: the README's schema section.
pub fn schema_markdown() -> String {
    let mut s = String::new();
    for t in Table::ALL {
        let about = t.about();
        let mut first = about.chars();
        let about: String = first
            .next()
            .map(|c| c.to_uppercase().chain(first).collect())
            .unwrap_or_default();
        let _ = writeln!(s, "#### `{}`\n\n{about}.\n", t.name());
        let _ = writeln!(s, "| column | type | from |\n|---|---|---|");
        for ((name, kind), from) in t.schema().into_iter().zip(t.sources()) {
            let from = if from.is_empty() {
                format!("the {name}'s number, from 1")
            } else {
                format!("`{from}`")
            };
            let _ = writeln!(s, "| `{name}` | {} | {from} |", kind.sql());
        }
        s.push('\n');
    }
    s
}

pub fn run(args: &ExportArgs) -> Result<(), RunError> {
    if args.schema {
        super::sink::Sink::stdout(std::io::stdout().lock())
            .write_all(schema_markdown().as_bytes())?;
        return Ok(());
    }
    let Some(out) = args.output.clone() else {
        return Err(RunError::Usage("export needs -o DIR".into()));
    };
    let filter = args
        .filter
        .as_deref()
        .map(crate::filter::Filter::parse)
        .transpose()
        .map_err(|e| RunError::Usage(format!("--where: {e}")))?;
    let inputs = super::inputs::expand(&args.captures)?;
    // Each capture is read twice (the report, then its frames): a pipe
    // would be empty the second time, and a named pipe opened again would
    // wait for a writer that is gone.
    let once_only = |p: &PathBuf| {
        (p.as_os_str() == "-")
            .then_some("standard input")
            .or_else(|| {
                std::fs::metadata(p)
                    .is_ok_and(|m| !m.is_file())
                    .then_some("a pipe or device")
            })
    };
    if let Some((p, what)) = inputs
        .paths
        .iter()
        .find_map(|p| once_only(p).map(|what| (p, what)))
    {
        return Err(RunError::Usage(format!(
            "export reads each capture twice, so not from {what} ({}): save it to a file first",
            terminal_safe(&p.display().to_string())
        )));
    }
    // Partitions are named by file name: two captures of one name would
    // be one partition.
    let mut names: HashMap<String, &PathBuf> = HashMap::new();
    for p in &inputs.paths {
        let name = partition_name(p);
        if let Some(other) = names.insert(name.clone(), p) {
            return Err(RunError::Usage(format!(
                "{} and {} are both named {}: partitions are named by file name, so export them to different folders (or rename one)",
                terminal_safe(&other.display().to_string()),
                terminal_safe(&p.display().to_string()),
                terminal_safe(&name)
            )));
        }
    }
    let mut tables: Vec<Table> = if args.tables.is_empty() {
        Table::ALL.to_vec()
    } else {
        args.tables.iter().map(|t| t.table()).collect()
    };
    tables.dedup();
    if filter.is_some() && !tables.contains(&Table::Packets) {
        return Err(RunError::Usage(
            "--where selects packets rows, but --tables leaves the packets table out".into(),
        ));
    }
    // The folders made for the dataset, deepest first: gone again if no
    // capture is exported into them.
    let made: Vec<PathBuf> = out
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && std::fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(&out).map_err(|e| {
        RunError::Usage(format!(
            "-o {}: {e}",
            terminal_safe(&out.display().to_string())
        ))
    })?;
    super::stop::remove_left(&out, export::staging_pid);
    let cores = crate::pipeline::threads().map_err(RunError::Usage)?;
    let n = inputs.paths.len();
    let workers = args
        .jobs
        .map(usize::from)
        .unwrap_or(cores)
        .clamp(1, n.max(1));
    let stop = super::stop::Stop::at_signals();
    let opts = export::Options {
        out: out.clone(),
        tables,
        filter,
        dissect: args.decode.dissect_options(),
        analysis: args.analysis.options(&args.decode)?,
        threads: (cores / workers).max(1),
        stop: Arc::clone(stop.flag()),
    };
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    // Captures whose dataset could not be written (a full disk): exit 1,
    // not 2, and the message names the folder, not the capture.
    let unwritten = AtomicUsize::new(0);
    let interrupted = AtomicUsize::new(0);
    let last_error = Mutex::new(String::new());
    let dir = terminal_safe(&out.display().to_string());
    let totals = Mutex::new((0u64, 0u64, HashMap::<Table, u64>::new()));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = inputs.paths.get(i) else {
                        break;
                    };
                    if opts.stop.load(Ordering::Relaxed) {
                        interrupted.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let shown = terminal_safe(&path.display().to_string());
                    let t0 = Instant::now();
                    let result = if n == 1 {
                        let mut progress = Progress::new(&path.display().to_string());
                        let mut tell = |done: usize, total: usize, frames| {
                            progress.update(done as u64, total as u64, frames)
                        };
                        let r = export::export(path, &partition_name(path), &opts, Some(&mut tell));
                        progress.finish();
                        r
                    } else {
                        export::export(path, &partition_name(path), &opts, None)
                    };
                    match result {
                        Ok(w) => {
                            print_warnings(
                                &w.warnings,
                                w.warnings.len() as u64,
                                (n > 1).then_some(shown.as_str()),
                            );
                            let rows: Vec<String> = w
                                .rows
                                .iter()
                                .map(|(t, r)| {
                                    format!("{} {}", t.name(), crate::output::report::grouped(*r))
                                })
                                .collect();
                            eprintln!(
                                "roce-dissect: {shown}: {} in {:.2} s → {} ({})",
                                count(w.frames, "frame", "frames"),
                                t0.elapsed().as_secs_f64(),
                                rows.join(", "),
                                human_bytes(w.bytes)
                            );
                            if let Ok(mut t) = totals.lock() {
                                t.0 += w.frames;
                                t.1 += w.bytes;
                                for (table, r) in w.rows {
                                    *t.2.entry(table).or_default() += r;
                                }
                            }
                        }
                        Err(export::Failed::Interrupted) => {
                            interrupted.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            failed.fetch_add(1, Ordering::Relaxed);
                            let e = match e {
                                export::Failed::Read(e) => {
                                    format!("{shown}: {}", terminal_safe(&e))
                                }
                                export::Failed::Write(e) => {
                                    unwritten.fetch_add(1, Ordering::Relaxed);
                                    format!("cannot write {dir} ({shown}): {}", terminal_safe(&e))
                                }
                                export::Failed::Interrupted => String::new(),
                            };
                            match n {
                                1 => *last_error.lock().unwrap_or_else(|p| p.into_inner()) = e,
                                _ => eprintln!("roce-dissect: {e}"),
                            }
                        }
                    }
                }
            });
        }
    });
    let failed = failed.into_inner();
    let unwritten = unwritten.into_inner();
    let interrupted = interrupted.into_inner();
    if failed + interrupted == n {
        for d in &made {
            let _ = std::fs::remove_dir(d);
        }
    }
    if interrupted > 0 {
        return Err(stop.error(&match n {
            1 => format!(
                "{} was not exported ({dir} is as it was)",
                terminal_safe(&inputs.paths[0].display().to_string())
            ),
            _ => format!(
                "{} of {n} captures were exported to {dir}, the other {interrupted} not",
                n - interrupted - failed
            ),
        }));
    }
    let (frames, bytes, _) = totals.into_inner().unwrap_or_default();
    if n == 1 && failed == 1 {
        let e = last_error.into_inner().unwrap_or_default();
        return Err(match unwritten {
            0 => RunError::Usage(e),
            _ => RunError::Io(std::io::Error::other(e)),
        });
    }
    if unwritten > 0 {
        return Err(RunError::Io(std::io::Error::other(format!(
            "{unwritten} of {n} captures could not be written to {dir} (see above)"
        ))));
    }
    if failed == n {
        return Err(RunError::SomeFailed { failed, total: n });
    }
    if n > 1 {
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "roce-dissect: {} captures, {} in {secs:.2} s ({:.2} M frames/s) → {dir} ({})",
            n - failed,
            count(frames, "frame", "frames"),
            frames as f64 / secs.max(1e-9) / 1e6,
            human_bytes(bytes)
        );
    }
    if opts.tables.contains(&Table::Flows) {
        eprintln!(
            "roce-dissect: query it, e.g.: duckdb -c \"SELECT capture, src, dst, destqp, retransmits FROM read_parquet('{dir}/flows/**/*.parquet', hive_partitioning = true) ORDER BY retransmits DESC LIMIT 10\""
        );
    }
    if failed > 0 {
        return Err(RunError::SomeFailed { failed, total: n });
    }
    Ok(())
}

/// A capture's partition name: its file name.
fn partition_name(p: &std::path::Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}
