//! `roce-dissect export`: captures as a Parquet dataset that DuckDB, Spark
//! or Trino read as it is, hive-partitioned by capture:
//! `DIR/TABLE/capture=NAME/part-0.parquet`.
//!
//! A capture is read twice: once by every core for the report (the
//! report's tables, and the flow numbers), then once in order, frame by
//! frame, for the `packets` and `nvme_ios` rows, which go out in batches
//! to a writer thread that encodes them. Memory is a batch and the
//! report's, whatever the capture's size. Each table is written in a
//! folder beside the dataset and moved into place when complete, so a
//! partition is either the old export or the new one. An export that is
//! stopped ([`Options::stop`], Ctrl-C) removes that folder; one that could
//! not (a second Ctrl-C, a kill) leaves it, and the next export into the
//! dataset removes it (the command's, with [`staging_pid`]).

pub mod column;
pub mod packets;
pub mod tables;

use std::fs;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

use arrow_array::RecordBatch;
use serde_json::Value as J;

use crate::analysis::{AnalysisOptions, Analyzer};
use crate::capture::open_stream;
use crate::dissect::DissectOptions;
use crate::filter::Filter;
use crate::pipeline::{FlowNumbers, Progress};
use column::Columns;
use tables::Col;

/// A table of the dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Table {
    Packets,
    Flows,
    Events,
    Episodes,
    PfcIntervals,
    Connections,
    NvmeIos,
    TcpConversations,
}

impl Table {
    pub const ALL: [Table; 8] = [
        Table::Packets,
        Table::Flows,
        Table::Events,
        Table::Episodes,
        Table::PfcIntervals,
        Table::Connections,
        Table::NvmeIos,
        Table::TcpConversations,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Table::Packets => "packets",
            Table::Flows => "flows",
            Table::Events => "events",
            Table::Episodes => "episodes",
            Table::PfcIntervals => "pfc_intervals",
            Table::Connections => "connections",
            Table::NvmeIos => "nvme_ios",
            Table::TcpConversations => "tcp_conversations",
        }
    }

    pub fn about(self) -> &'static str {
        match self {
            Table::Packets => {
                "a row per frame: every field of the field registry (`roce-dissect fields`), named as the JSON Lines name it, and what the analysis concluded of the frame"
            }
            Table::Flows => {
                "a row per flow of the report, every figure of `flows[]` (with `timing` and `cc`)"
            }
            Table::Events => "a row per event the report lists for a flow (`flows[].events`)",
            Table::Episodes => "a row per retransmission episode (`flows[].episodes`)",
            Table::PfcIntervals => "a row per pause interval (`pfc.intervals`)",
            Table::Connections => "a row per connection: the flows paired (`connections`)",
            Table::NvmeIos => {
                "a row per completed NVMe-oF command: queue, opcode, LBA, bytes, latencies, status"
            }
            Table::TcpConversations => {
                "a row per TCP conversation beside the RoCE (`other.tcp_conversations`): frames and bytes each way, handshake and ACK round trips, resets, tshark's analysis notes"
            }
        }
    }

    /// The report-made tables' column declarations.
    fn spec(self) -> Option<&'static [&'static [Col]]> {
        Some(match self {
            Table::Packets => return None,
            Table::Flows => tables::FLOWS,
            Table::Events => tables::EVENTS,
            Table::Episodes => tables::EPISODES,
            Table::PfcIntervals => tables::PFC_INTERVALS,
            Table::Connections => tables::CONNECTIONS,
            Table::NvmeIos => tables::NVME_IOS,
            Table::TcpConversations => tables::TCP_CONVERSATIONS,
        })
    }

    /// The table's columns: names and kinds.
    pub fn schema(self) -> Vec<(String, column::Kind)> {
        match self.spec() {
            None => packets::columns()
                .into_iter()
                .map(|c| (c.name, c.kind))
                .collect(),
            Some(spec) => tables::cols(spec)
                .map(|c| (c.name.to_string(), c.kind))
                .collect(),
        }
    }

    /// Where a column's values come from (the README's schema).
    pub fn sources(self) -> Vec<String> {
        match self.spec() {
            None => packets::columns()
                .into_iter()
                .map(|c| c.field.name.to_string())
                .collect(),
            Some(spec) => tables::cols(spec).map(|c| c.path.to_string()).collect(),
        }
    }
}

/// What to export, and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub out: PathBuf,
    pub tables: Vec<Table>,
    /// Only the frames this passes go to `packets`.
    pub filter: Option<Filter>,
    pub dissect: DissectOptions,
    pub analysis: AnalysisOptions,
    /// Cores for the first pass.
    pub threads: usize,
    /// Set to stop: each export stops at its next chunk (the report's
    /// pass), frame or table, removes what it wrote and fails with
    /// [`Failed::Interrupted`].
    pub stop: Arc<AtomicBool>,
}

impl Options {
    fn stopped(&self) -> Result<(), Failed> {
        match self.stop.load(Ordering::Relaxed) {
            true => Err(Failed::Interrupted),
            false => Ok(()),
        }
    }
}

/// What one capture's export wrote.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// Rows per table, in [`Options::tables`] order.
    pub rows: Vec<(Table, u64)>,
    pub bytes: u64,
    pub frames: u64,
    pub warnings: Vec<String>,
}

/// A hive partition value: the capture's file name, with what a path or
/// an engine would misread percent-escaped (as Hive and Spark escape).
pub fn partition_value(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for ch in name.chars() {
        if !ch.is_ascii() || ch.is_ascii_alphanumeric() || "._-+@,".contains(ch) {
            out.push(ch);
        } else {
            out.push_str(&format!("%{:02X}", ch as u8));
        }
    }
    out
}

/// Why a capture's export failed: reading it, or writing the dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failed {
    /// The capture could not be read.
    Read(String),
    /// The dataset could not be written (a full disk, a folder not
    /// writable): the rest of the module's errors.
    Write(String),
    /// Stopped ([`Options::stop`]) before it was complete: nothing of it
    /// was kept.
    Interrupted,
}

impl From<String> for Failed {
    fn from(e: String) -> Self {
        Failed::Write(e)
    }
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Read(e) | Failed::Write(e) => f.write_str(e),
            Failed::Interrupted => f.write_str("interrupted"),
        }
    }
}

/// How the name of the folder an export writes in before moving it into
/// place begins: `.roce-dissect-PID-NAME`.
const STAGING: &str = ".roce-dissect-";

/// The process that writes a folder of [`export`]'s (named
/// `.roce-dissect-PID-NAME`), from its name; `None` for any other name.
pub fn staging_pid(name: &str) -> Option<u32> {
    let (pid, _) = name.strip_prefix(STAGING)?.split_once('-')?;
    pid.parse().ok()
}

/// Exports the capture at `path` as partition `name` of every table.
pub fn export(
    path: &Path,
    name: &str,
    opts: &Options,
    progress: Option<Progress<'_>>,
) -> Result<Written, Failed> {
    let part = format!("capture={}", partition_value(name));
    let staging = opts.out.join(format!(
        "{STAGING}{}-{}",
        std::process::id(),
        partition_value(name)
    ));
    let result = write_all(path, &staging, opts, progress);
    let written = match result {
        Ok(w) => w,
        Err(e) => {
            let _ = fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    let placed = into_place(&staging, &part, opts);
    let _ = fs::remove_dir_all(&staging);
    placed?;
    Ok(written)
}

/// Each table's partition `part` replaced by the one in `staging`: every
/// table's folder made first, and nothing touched when a file is in the
/// way of one.
fn into_place(staging: &Path, part: &str, opts: &Options) -> Result<(), String> {
    let dirs = opts.tables.iter().map(|t| opts.out.join(t.name()));
    if let Some(file) = dirs.clone().find(|d| d.exists() && !d.is_dir()) {
        return Err(format!("{}: not a folder", file.display()));
    }
    for dir in dirs {
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    for t in &opts.tables {
        let dest = opts.out.join(t.name()).join(part);
        if dest.exists() {
            fs::remove_dir_all(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        }
        let from = staging.join(t.name());
        fs::rename(&from, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    Ok(())
}

fn file_in(staging: &Path, t: Table) -> Result<PathBuf, String> {
    let dir = staging.join(t.name());
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir.join("part-0.parquet"))
}

/// Writes `columns`' rows as the whole file of `t`.
fn write_table(staging: &Path, t: Table, mut columns: Columns) -> Result<u64, String> {
    let path = file_in(staging, t)?;
    let rows = columns.rows as u64;
    let mut w = column::open(&path, columns.schema.clone())?;
    let batch = columns.batch()?;
    w.write(&batch).map_err(column::parquet_error)?;
    w.close().map_err(column::parquet_error)?;
    Ok(rows)
}

fn write_all(
    path: &Path,
    staging: &Path,
    opts: &Options,
    progress: Option<Progress<'_>>,
) -> Result<Written, Failed> {
    let _ = fs::remove_dir_all(staging);
    fs::create_dir_all(staging).map_err(|e| format!("{}: {e}", staging.display()))?;
    let wants = |t: Table| opts.tables.contains(&t);
    // Ctrl-C stops this pass too, at its next chunk of the file.
    let mut stop_here = |_: usize, _: usize, _: u64| match opts.stop.load(Ordering::Relaxed) {
        true => ControlFlow::Break(()),
        false => ControlFlow::Continue(()),
    };
    let report = crate::pipeline::analyze_path(
        path,
        &opts.dissect,
        opts.analysis.clone(),
        opts.threads,
        Some(&mut stop_here),
    )
    .map_err(|e| Failed::Read(e.to_string()))?;
    opts.stopped()?;
    let mut written = Written {
        frames: report.capture.frames,
        warnings: report.capture.warnings.clone(),
        ..Written::default()
    };
    // Printed with the warnings: why `--analysis-threads` did not split.
    written.warnings.extend(report.notes.iter().cloned());
    let json = serde_json::to_value(&report).map_err(|e| e.to_string())?;
    for t in [
        Table::Flows,
        Table::Events,
        Table::Episodes,
        Table::PfcIntervals,
        Table::Connections,
        Table::TcpConversations,
    ] {
        if wants(t) {
            opts.stopped()?;
            let rows = write_table(staging, t, report_rows(t, &json))?;
            written.rows.push((t, rows));
        }
    }
    drop(json);
    if wants(Table::Packets) || wants(Table::NvmeIos) {
        // Of the report, the second pass needs the flows' numbers only.
        let numbers = FlowNumbers::of(&report);
        drop(report);
        let (packets, ios) = frame_tables(path, staging, opts, numbers, progress)?;
        if let Some(n) = packets {
            written.rows.push((Table::Packets, n));
        }
        if let Some(n) = ios {
            written.rows.push((Table::NvmeIos, n));
        }
    }
    written
        .rows
        .sort_by_key(|(t, _)| opts.tables.iter().position(|x| x == t));
    written.bytes = dir_bytes(staging);
    Ok(written)
}

/// A report table's rows.
fn report_rows(t: Table, json: &J) -> Columns {
    let spec = t.spec().unwrap_or(tables::FLOWS);
    let mut cols = tables::columns(spec);
    let list = |v: Option<&J>| v.and_then(J::as_array).cloned().unwrap_or_default();
    let flows = list(json.get("flows"));
    match t {
        Table::Flows => {
            for (i, f) in flows.iter().enumerate() {
                tables::push(&mut cols, spec, f, i as u64 + 1);
            }
        }
        Table::Events | Table::Episodes => {
            let key = if t == Table::Events {
                "events"
            } else {
                "episodes"
            };
            for (i, f) in flows.iter().enumerate() {
                for item in list(f.get(key)) {
                    tables::push(&mut cols, spec, &item, i as u64 + 1);
                }
            }
        }
        Table::PfcIntervals => {
            for item in list(json.get("pfc").and_then(|p| p.get("intervals"))) {
                tables::push(&mut cols, spec, &item, 0);
            }
        }
        Table::Connections => {
            for (i, item) in list(json.get("connections")).iter().enumerate() {
                tables::push(&mut cols, spec, item, i as u64 + 1);
            }
        }
        Table::TcpConversations => {
            let convs = json.get("other").and_then(|o| o.get("tcp_conversations"));
            for item in list(convs) {
                tables::push(&mut cols, spec, &item, 0);
            }
        }
        Table::Packets | Table::NvmeIos => {}
    }
    cols
}

/// Rows per batch handed to a writer thread.
const BATCH_ROWS: usize = 16 * 1024;

/// A table written as it is filled: batches go to a thread that encodes
/// them into the table's file.
struct Stream<'scope> {
    cols: Columns,
    tx: mpsc::SyncSender<RecordBatch>,
    encoder: std::thread::ScopedJoinHandle<'scope, Result<(), String>>,
    rows: u64,
}

impl<'scope> Stream<'scope> {
    fn new<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        staging: &Path,
        t: Table,
        cols: Columns,
    ) -> Result<Self, String> {
        let file = file_in(staging, t)?;
        let schema = cols.schema.clone();
        let (tx, rx) = mpsc::sync_channel::<RecordBatch>(2);
        let encoder = scope.spawn(move || -> Result<(), String> {
            let mut w = column::open(&file, schema)?;
            for batch in rx {
                w.write(&batch).map_err(column::parquet_error)?;
            }
            w.close().map(|_| ()).map_err(column::parquet_error)
        });
        Ok(Stream {
            cols,
            tx,
            encoder,
            rows: 0,
        })
    }

    /// Hands the rows so far to the encoder when there are `at_least`.
    fn flush(&mut self, at_least: usize) -> Result<(), String> {
        if self.cols.rows == 0 || self.cols.rows < at_least {
            return Ok(());
        }
        self.rows += self.cols.rows as u64;
        let batch = self.cols.batch()?;
        self.tx
            .send(batch)
            .map_err(|_| "the Parquet writer stopped".to_string())
    }

    /// The last rows, then the file closed; the rows written.
    fn finish(mut self) -> Result<u64, String> {
        let flushed = self.flush(1);
        drop(self.tx);
        let encoded = self
            .encoder
            .join()
            .unwrap_or_else(|_| Err("the Parquet writer failed".into()));
        // The encoder's error says why a send failed.
        encoded.and(flushed).map(|()| self.rows)
    }
}

/// The second pass: `packets` and `nvme_ios`, frame by frame. Returns
/// their row counts (`None`: not asked for).
fn frame_tables(
    path: &Path,
    staging: &Path,
    opts: &Options,
    mut numbers: FlowNumbers,
    progress: Option<Progress<'_>>,
) -> Result<(Option<u64>, Option<u64>), Failed> {
    let want_ios = opts.tables.contains(&Table::NvmeIos);
    let mut source = open_stream(path).map_err(|e| Failed::Read(e.to_string()))?;
    // This pass's report is not used: no latency samples or event lists
    // kept (they are the first pass's), which leaves every frame's marks as
    // they were.
    let mut aopts = opts.analysis.clone();
    aopts.limits.timing_samples = 0;
    aopts.limits.events_total = 0;
    aopts.timeline_series = false;
    let mut an = Analyzer::new(aopts);
    if want_ios {
        an.keep_nvme_ios();
    }
    std::thread::scope(|s| -> Result<_, Failed> {
        // Packets: the frame loop fills a batch while a thread encodes
        // the last one (with every core).
        let mut packets = match opts.tables.contains(&Table::Packets) {
            true => {
                let mut enc = packets::Encoder::create(
                    &file_in(staging, Table::Packets)?,
                    opts.threads,
                    opts.dissect,
                )?;
                let (full_tx, full_rx) = mpsc::sync_channel::<packets::Batch>(0);
                let (empty_tx, empty_rx) = mpsc::sync_channel::<packets::Batch>(2);
                let _ = empty_tx.send(packets::Batch::default());
                let encoder = s.spawn(move || -> Result<u64, String> {
                    for mut batch in full_rx {
                        enc.write(&batch)?;
                        batch.clear();
                        let _ = empty_tx.send(batch);
                    }
                    enc.close()
                });
                Some((packets::Batch::default(), full_tx, empty_rx, encoder))
            }
            false => None,
        };
        let mut ios = match want_ios {
            true => Some(Stream::new(
                s,
                staging,
                Table::NvmeIos,
                tables::columns(tables::NVME_IOS),
            )?),
            false => None,
        };
        let mut failed: Option<Failed> = None;
        let mut visit = |seen: &crate::pipeline::Seen<'_, '_>, an: &mut Analyzer| {
            if let Err(e) = opts.stopped() {
                failed = Some(e);
                return ControlFlow::Break(());
            }
            if let Some(ios) = ios.as_mut()
                && let Some(done) = an.nvme_done()
            {
                for io in done.drain(..) {
                    tables::push_io(&mut ios.cols, &io);
                }
                if let Err(e) = ios.flush(BATCH_ROWS) {
                    failed = Some(e.into());
                    return ControlFlow::Break(());
                }
            }
            let Some((batch, full_tx, empty_rx, _)) = packets.as_mut() else {
                return ControlFlow::Continue(());
            };
            let flow = numbers.number(seen);
            if let Some(f) = &opts.filter
                && !f.matches(&seen.ctx(flow))
            {
                return ControlFlow::Continue(());
            }
            batch.push(seen, flow);
            if batch.full() {
                // The next batch: one the encoder is done with.
                let next = empty_rx.recv().unwrap_or_default();
                if full_tx.send(std::mem::replace(batch, next)).is_err() {
                    failed = Some(Failed::Write("the Parquet writer stopped".into()));
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        };
        let read = crate::pipeline::visit_with(
            &mut source,
            &opts.dissect,
            &mut an,
            progress,
            &mut visit,
            None,
        );
        let packet_rows = packets
            .map(|(batch, full_tx, _, encoder)| {
                let sent = match batch.is_empty() {
                    true => Ok(()),
                    false => full_tx
                        .send(batch)
                        .map_err(|_| "the Parquet writer stopped".to_string()),
                };
                drop(full_tx);
                let rows = encoder
                    .join()
                    .unwrap_or_else(|_| Err("the Parquet writer failed".into()));
                rows.and_then(|r| sent.map(|()| r))
            })
            .transpose();
        let io_rows = ios.map(Stream::finish).transpose();
        read.map_err(|e| Failed::Read(e.to_string()))?;
        // A writer's own error says why the frame loop could not hand it
        // a batch ("the Parquet writer stopped").
        let (packet_rows, io_rows) = (packet_rows?, io_rows?);
        if let Some(e) = failed {
            return Err(e);
        }
        Ok((packet_rows, io_rows))
    })
}

/// The bytes of the files under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}
