//! File → frames → packets → report, for the CLI, the TUI and the tests.

pub mod chunked;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::analysis::report::Text;
use crate::analysis::tcp::TcpSeen;
use crate::analysis::{
    AnalysisOptions, Analyzer, CaptureInfo, Facts, FlowKey, FrameAnalysis, Report,
};
use crate::capture::merge::MergedSource;
use crate::capture::{CaptureError, CaptureFile, FrameSource, open_stream, warning_list};
use crate::dissect::DissectOptions;
use crate::dissect::Packet;
use crate::fields::Ctx;
use crate::filter::Filter;

/// Called now and then with (bytes read, file size, frames so far).
/// Breaking stops the reading there, as if the input ended (`export`
/// stops so on Ctrl-C): the report is that of the frames read.
pub type Progress<'p> = &'p mut dyn FnMut(usize, usize, u64) -> ControlFlow<()>;

/// A frame the frame loop hands on: decoded in full, with what the
/// analysis (which has seen every frame up to this one) concluded of it.
pub struct Seen<'s, 'a> {
    pub pkt: &'s Packet<'a>,
    pub analysis: &'s FrameAnalysis,
    /// A TCP frame's conversation, as followed up to it.
    pub tcp: Option<TcpSeen>,
    /// The capture's first frame's timestamp and the previous frame's
    /// (this one's for the first frame).
    pub first_ts_ns: u64,
    pub prev_ts_ns: u64,
    /// The run's link speed (`--link-speed`).
    pub link: crate::analysis::LinkSpeed,
}

impl<'s, 'a> Seen<'s, 'a> {
    /// What the field registry reads of the frame, its flow numbered
    /// `flow_number`.
    pub fn ctx(&self, flow_number: Option<u64>) -> Ctx<'_, 'a> {
        Ctx {
            pkt: self.pkt,
            analysis: Some(self.analysis),
            tcp: self.tcp.as_ref(),
            flow_number,
            first_ts_ns: self.first_ts_ns,
            prev_ts_ns: self.prev_ts_ns,
            link: self.link,
        }
    }
}

/// Hears the frames of the frame loop; [`ControlFlow::Break`] ends the
/// loop (the report then covers the frames read so far).
pub type Visit<'v> = &'v mut dyn FnMut(&Seen<'_, '_>) -> ControlFlow<()>;

/// Told that the input has no frame for now (a pipe whose writer has sent
/// nothing more yet), before the frame loop waits for one: what is held
/// back (lines not yet written) can go out. Breaking ends the loop.
pub type Waiting<'w> = &'w mut dyn FnMut() -> ControlFlow<()>;

/// Whether to tell `progress` (if any) where the reading is, `n` frames
/// in: every 65 536 frames, and whenever a stream has nothing more for now
/// (so that a live capture's count moves as it grows).
fn progress_due(progress: &Option<Progress<'_>>, source: &mut dyn FrameSource, n: u64) -> bool {
    progress.is_some() && (n.is_multiple_of(1 << 16) || !source.ready())
}

/// The frame loop of `packets` and `-Y`: every frame of `source` through
/// the analysis, in order, one thread, each frame handed to `visit`
/// (which stops it by breaking), and `waiting` (if any) told whenever the
/// input has no frame ready and the loop is about to wait for one. The
/// report is that of the frames read.
pub fn visit_source(
    source: &mut dyn FrameSource,
    name: &str,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    progress: Option<Progress<'_>>,
    visit: Visit<'_>,
    waiting: Option<Waiting<'_>>,
) -> Result<Report, CaptureError> {
    let mut an = Analyzer::new(opts);
    visit_with(
        source,
        dissect_opts,
        &mut an,
        progress,
        &mut |seen, _| visit(seen),
        waiting,
    )?;
    Ok(an.finish(capture_info(source, name)))
}

/// [`visit_source`]'s loop with the analyzer given, and handed to `visit`
/// after each frame (to take what it gathered, e.g.
/// [`Analyzer::nvme_done`]), and `waiting` (if any) told when the input
/// has nothing ready. Returns the number of frames read.
pub fn visit_with(
    source: &mut dyn FrameSource,
    dissect_opts: &DissectOptions,
    an: &mut Analyzer,
    mut progress: Option<Progress<'_>>,
    visit: &mut dyn FnMut(&Seen<'_, '_>, &mut Analyzer) -> ControlFlow<()>,
    mut waiting: Option<Waiting<'_>>,
) -> Result<u64, CaptureError> {
    let (mut first, mut prev) = (None, 0u64);
    let mut n = 0u64;
    loop {
        // Asked once: on a stream with no whole frame buffered, it polls.
        let waits = (progress.is_some() || waiting.is_some()) && !source.ready();
        if (waits || n.is_multiple_of(1 << 16))
            && let Some(p) = progress.as_mut()
        {
            let (done, total) = source.progress();
            if p(done as usize, total.unwrap_or(0) as usize, n).is_break() {
                break;
            }
        }
        if waits
            && let Some(w) = waiting.as_mut()
            && w().is_break()
        {
            break;
        }
        let frame = match source.next_frame() {
            None => break,
            Some(f) => f?,
        };
        let pkt = crate::dissect::dissect(&frame, dissect_opts);
        let found = an.packet(&pkt);
        let tcp = an.tcp_seen(pkt.number);
        if Analyzer::frame_bytes_wanted(tcp.as_ref()) {
            an.keep_frame_bytes(&pkt);
        }
        n += 1;
        let first_ts = *first.get_or_insert(pkt.ts_ns);
        let seen = Seen {
            pkt: &pkt,
            analysis: &found,
            tcp,
            first_ts_ns: first_ts,
            prev_ts_ns: if n == 1 { pkt.ts_ns } else { prev },
            link: an.link_speed(),
        };
        prev = pkt.ts_ns;
        if visit(&seen, an).is_break() {
            break;
        }
    }
    Ok(n)
}

/// The frame loop over the capture at `path` with a filter: the frames
/// `filter` may pass (at least every one it passes; see
/// [`Filter::may_match`]) are handed to `visit`, which tests it again with
/// the analysis. A pcap or pcapng file of several chunks is read by every
/// core ([`chunked::visit_file`]), anything else by [`visit_source`].
pub fn visit_path(
    path: &Path,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    threads: usize,
    filter: &Filter,
    progress: Option<Progress<'_>>,
    visit: Visit<'_>,
) -> Result<Report, CaptureError> {
    let name = path.display().to_string();
    let mut source = open_stream(path)?;
    if threads >= 2
        && let Some(file) = reopen(path)
        && let Some(input) = chunked::ChunkedFile::large(&file)
    {
        drop(source);
        let plan = chunked::Plan::new(threads);
        let select = Some((filter, visit));
        return chunked::visit_file(input, &name, dissect_opts, opts, plan, progress, select);
    }
    visit_source(
        &mut source,
        &name,
        dissect_opts,
        opts,
        progress,
        &mut |seen| {
            if filter.may_match(seen.pkt) {
                visit(seen)
            } else {
                ControlFlow::Continue(())
            }
        },
        None,
    )
}

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

/// The most threads `-j` or `ROCE_DISSECT_THREADS` may ask for.
pub const MAX_THREADS: usize = 1024;

/// Threads to use: `ROCE_DISSECT_THREADS` when set (1 to [`MAX_THREADS`],
/// checked like `-j`), else one per core.
pub fn threads() -> Result<usize, String> {
    match std::env::var("ROCE_DISSECT_THREADS") {
        Ok(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_THREADS).contains(n))
            .ok_or_else(|| {
                format!(
                    "ROCE_DISSECT_THREADS={}: the number of threads must be 1 to {MAX_THREADS}",
                    crate::output::text::terminal_safe(&v)
                )
            }),
        Err(_) => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// Threads to use: `given` (a command's `-j`) when set, else [`threads`].
pub fn threads_or(given: Option<u16>) -> Result<usize, String> {
    match given {
        Some(n) => Ok(usize::from(n)),
        None => threads(),
    }
}

/// Analyses the capture at `path` (`-` for standard input) with `threads`
/// threads, the fastest way the file allows: a pcap or pcapng file of
/// several chunks goes to [`chunked::analyze_file`], anything else (a pipe,
/// a small file) through the two-stage pipeline, and one thread reads
/// sequentially.
pub fn analyze_path(
    path: &Path,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    threads: usize,
    progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    let name = path.display().to_string();
    // Opening for the sequential reader first gives its errors (missing
    // file, bad header) whichever reader then runs.
    let mut source = open_stream(path)?;
    if threads < 2 {
        return analyze_sequential(&mut source, &name, dissect_opts, opts, progress);
    }
    if let Some(file) = reopen(path)
        && let Some(input) = chunked::ChunkedFile::large(&file)
    {
        drop(source);
        let plan = chunked::Plan {
            parts: opts.split,
            ..chunked::Plan::new(threads)
        };
        return chunked::analyze_file(input, &name, dissect_opts, opts, plan, progress);
    }
    analyze_pipelined(&mut source, &name, dissect_opts, opts, threads, progress)
}

/// `path` opened again for the chunked reader: only a regular file
/// (opening a named pipe a second time would wait for a writer that is
/// gone).
fn reopen(path: &Path) -> Option<std::fs::File> {
    if path.as_os_str() == "-" || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    std::fs::File::open(path).ok()
}

/// Analyses several captures as one, frames in timestamp order (see
/// [`MergedSource`]); `capture.files` names them.
pub fn analyze_merged(
    paths: &[PathBuf],
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    filter: Option<&crate::filter::Filter>,
    threads: usize,
    progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    let mut source = MergedSource::open(paths)?;
    let names = source.names();
    let name = names.join(" + ");
    let mut report = if let Some(f) = filter {
        analyze_filtered(&mut source, &name, dissect_opts, opts, f, progress)
    } else if threads < 2 {
        analyze_sequential(&mut source, &name, dissect_opts, opts, progress)
    } else {
        analyze_pipelined(&mut source, &name, dissect_opts, opts, threads, progress)
    }?;
    report.capture.files = names;
    Ok(report)
}

/// Reports handed over at most this many places ahead of the one being
/// waited for, per worker: a slow capture holds back a bounded number.
const AHEAD_PER_WORKER: usize = 2;

/// Analyses each of `paths` on its own, several at once: with `threads`
/// threads in all, `min(threads, paths)` captures are read at a time, each
/// with its share of the threads. `done` hears each capture's result in
/// the order of `paths`, as soon as it and those before it are done.
pub fn analyze_many(
    paths: &[PathBuf],
    dissect_opts: &DissectOptions,
    opts: &AnalysisOptions,
    filter: Option<&crate::filter::Filter>,
    threads: usize,
    done: &mut dyn FnMut(usize, Result<Report, CaptureError>),
) {
    use std::sync::mpsc::channel;
    use std::sync::{Arc, Mutex};
    let n = paths.len();
    if n == 0 {
        return;
    }
    let workers = threads.clamp(1, n);
    let per = (threads / workers).max(1);
    let (jobs_tx, jobs_rx) = channel::<usize>();
    let jobs_rx = Arc::new(Mutex::new(jobs_rx));
    let (results_tx, results) = channel::<(usize, Result<Report, CaptureError>)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let jobs = Arc::clone(&jobs_rx);
            let results = results_tx.clone();
            let opts = opts.clone();
            scope.spawn(move || {
                loop {
                    let next = match jobs.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(i) = next else { return };
                    let r = match filter {
                        None => analyze_path(&paths[i], dissect_opts, opts.clone(), per, None),
                        Some(f) => analyze_path_filtered(
                            &paths[i],
                            dissect_opts,
                            opts.clone(),
                            per,
                            f,
                            None,
                        ),
                    };
                    if results.send((i, r)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(results_tx);
        let window = workers * AHEAD_PER_WORKER;
        let mut handed = 0;
        while handed < n.min(window) {
            let _ = jobs_tx.send(handed);
            handed += 1;
        }
        let mut waiting = std::collections::BTreeMap::new();
        let mut next_out = 0;
        for (i, r) in results.iter() {
            waiting.insert(i, r);
            while let Some(r) = waiting.remove(&next_out) {
                done(next_out, r);
                next_out += 1;
                if handed < n {
                    let _ = jobs_tx.send(handed);
                    handed += 1;
                }
            }
            if next_out == n {
                break;
            }
        }
        drop(jobs_tx);
    });
}

/// Analyses every frame of `source`. Warnings (a cut file, skipped blocks)
/// are in `report.capture.warnings`.
///
/// With two or more cores, dissection (with its ICRC) and the analysis run
/// as a two-stage pipeline: this thread reads and dissects, a second thread
/// analyses batches of packets in order. The result is the same as
/// [`analyze_sequential`] (tested).
pub fn analyze_source(
    source: &mut dyn FrameSource,
    name: &str,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    let threads = threads().unwrap_or(1);
    if threads >= 2 {
        analyze_pipelined(source, name, dissect_opts, opts, threads, progress)
    } else {
        analyze_sequential(source, name, dissect_opts, opts, progress)
    }
}

/// What the report says of the input.
pub fn capture_info(source: &dyn FrameSource, name: &str) -> CaptureInfo {
    let warnings = warning_list(source.warnings(), source.warning_count());
    CaptureInfo {
        file: name.to_string(),
        files: Vec::new(),
        format: source.description(),
        ts_resolution_ns: source.ts_resolution_ns(),
        warnings,
    }
}

/// One thread: read, dissect, analyse, frame after frame.
pub fn analyze_sequential(
    source: &mut dyn FrameSource,
    name: &str,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    let mut an = Analyzer::new(opts);
    observe_source(source, dissect_opts, &mut an, progress, |_, _, _, _| {})?;
    Ok(an.finish(capture_info(source, name)))
}

/// The frame loop of the report read by one thread and of the TUI's first
/// pass: every frame of `source` through `an`, in order, each frame's
/// facts taken the quick way ([`Facts::put_from_frame`]); `each` hears
/// every frame with what the analysis concluded of it (and a TCP frame's
/// conversation of it). Returns the number of frames read.
pub fn observe_source(
    source: &mut dyn FrameSource,
    dissect_opts: &DissectOptions,
    an: &mut Analyzer,
    mut progress: Option<Progress<'_>>,
    mut each: impl FnMut(&crate::capture::Frame<'_>, &Facts, &FrameAnalysis, Option<TcpSeen>),
) -> Result<u64, CaptureError> {
    let mut n = 0u64;
    // One frame's facts at a time, built in place: returned by value they
    // were copied, three cache lines a frame (1 % more instructions in all,
    // callgrind), and overwritten (see `Facts::put_from_frame`).
    let mut one: Vec<Facts> = Vec::with_capacity(1);
    loop {
        let frame = match source.next_frame() {
            None => break,
            Some(f) => f?,
        };
        Facts::put_from_frame(&mut one, 0, &frame, dissect_opts);
        if let Some(facts) = one.first() {
            let found = an.observe(facts);
            let tcp = an.tcp_seen(facts.number);
            if Analyzer::frame_bytes_wanted(tcp.as_ref()) {
                an.keep_frame_bytes(&crate::dissect::dissect(&frame, dissect_opts));
            }
            each(&frame, facts, &found, tcp);
        }
        n += 1;
        if progress_due(&progress, source, n)
            && let Some(p) = progress.as_mut()
        {
            let (done, total) = source.progress();
            if p(done as usize, total.unwrap_or(0) as usize, n).is_break() {
                break;
            }
        }
    }
    Ok(n)
}

/// What `-Y` keeps of a report: the flows and pause intervals with a
/// frame the filter passes, gathered frame by frame.
struct Selecting<'f> {
    filter: &'f Filter,
    sel: crate::analysis::Selection,
}

impl<'f> Selecting<'f> {
    fn new(filter: &'f Filter) -> Self {
        Selecting {
            filter,
            sel: crate::analysis::Selection {
                filter: filter.text().to_string(),
                ..Default::default()
            },
        }
    }

    fn see(&mut self, seen: &Seen<'_, '_>) -> ControlFlow<()> {
        let pkt = seen.pkt;
        let flow_number = seen.analysis.flow().map(|f| u64::from(f) + 1);
        if self.filter.matches(&seen.ctx(flow_number)) {
            let sel = &mut self.sel;
            sel.frames += 1;
            if let Some(k) = Analyzer::flow_key(pkt) {
                sel.flows
                    .insert((k.src.to_string(), k.dst.to_string(), k.dest_qp));
            }
            if let Some(t) = &seen.tcp {
                sel.tcp_streams.insert(t.stream);
            }
            if let (Some(p), Some(eth)) = (&pkt.pause, &pkt.eth) {
                let prios = match p {
                    crate::wire::PauseRepr::Pfc(f) => Some(f.class_enable as u8),
                    _ => None,
                };
                sel.add_pause(crate::wire::MacAddr(eth.src).to_string(), pkt.ts_ns, prios);
            }
        }
        ControlFlow::Continue(())
    }
}

/// The report of `source` with only the flows and pause intervals that
/// have a frame `filter` matches (`roce-dissect CAPTURE -Y FILTER`): one
/// thread reads, dissects in full (the filter may read any field),
/// analyses every frame, then tests the filter with what the analysis
/// concluded about the frame.
pub fn analyze_filtered(
    source: &mut dyn FrameSource,
    name: &str,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    filter: &Filter,
    progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    let mut selecting = Selecting::new(filter);
    let mut report = visit_source(
        source,
        name,
        dissect_opts,
        opts,
        progress,
        &mut |seen| selecting.see(seen),
        None,
    )?;
    report.select(&selecting.sel);
    Ok(report)
}

/// [`analyze_filtered`] of the capture at `path`, read by every core when
/// it is a pcap or pcapng file (see [`visit_path`]).
pub fn analyze_path_filtered(
    path: &Path,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    threads: usize,
    filter: &Filter,
    progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    let mut selecting = Selecting::new(filter);
    let mut report = visit_path(
        path,
        dissect_opts,
        opts,
        threads,
        filter,
        progress,
        &mut |seen| selecting.see(seen),
    )?;
    report.select(&selecting.sel);
    Ok(report)
}

/// Packets handed to the analysis thread at a time.
const BATCH: usize = 1024;

fn analyze_pipelined(
    source: &mut dyn FrameSource,
    name: &str,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    threads: usize,
    mut progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    use std::sync::mpsc::sync_channel;
    type Batch = Vec<Facts>;
    let (to_analysis, batches) = sync_channel::<Batch>(2);
    let (recycle, recycled) = sync_channel::<Batch>(4);
    std::thread::scope(|scope| {
        let analysis = scope.spawn(move || {
            let mut an = Analyzer::new(opts);
            an.set_report_threads(threads);
            for mut batch in batches {
                an.observe_run(&mut batch, 0);
                // Sent back full, to be overwritten.
                let _ = recycle.try_send(batch);
            }
            an
        });
        let mut batch: Batch = Vec::with_capacity(BATCH);
        // Facts put in `batch` (a recycled one arrives with its old ones).
        let mut filled = 0;
        let mut n = 0u64;
        let mut failed = None;
        loop {
            let frame = match source.next_frame() {
                None => break,
                Some(Ok(f)) => f,
                Some(Err(e)) => {
                    failed = Some(e);
                    break;
                }
            };
            Facts::put_from_frame(&mut batch, filled, &frame, dissect_opts);
            filled += 1;
            n += 1;
            if filled == BATCH {
                filled = 0;
                let next = recycled
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                if to_analysis
                    .send(std::mem::replace(&mut batch, next))
                    .is_err()
                {
                    break;
                }
            }
            if progress_due(&progress, source, n)
                && let Some(p) = progress.as_mut()
            {
                let (done, total) = source.progress();
                if p(done as usize, total.unwrap_or(0) as usize, n).is_break() {
                    break;
                }
            }
        }
        if filled > 0 {
            batch.truncate(filled);
            let _ = to_analysis.send(batch);
        }
        drop(to_analysis);
        let an = match analysis.join() {
            Ok(an) => an,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        match failed {
            Some(e) => Err(e),
            None => Ok(an.finish(capture_info(source, name))),
        }
    })
}

/// Parses a `--flow SRC,DST,QP` filter (QP decimal or 0x-hex).
pub fn parse_flow(s: &str) -> Result<FlowKey, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let [src, dst, qp] = parts[..] else {
        return Err(format!(
            "'{s}': expected SRC,DST,QP (e.g. 10.0.0.1,10.0.0.2,0x11 or lid:4,lid:1,0x11)"
        ));
    };
    let src: crate::dissect::Addr = src.parse()?;
    let dst: crate::dissect::Addr = dst.parse()?;
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

/// The report's number of each frame's flow (1-based, as the report, the
/// TUI and `roce.analysis.flow` number them), looked up once per flow
/// from a report of the same capture (a first pass).
#[derive(Debug, Default)]
pub struct FlowNumbers {
    by_key: std::collections::HashMap<(Text, Text, u32), u64>,
    /// By the analysis's flow id: the number, once looked up (0: none).
    by_id: Vec<Option<u64>>,
}

impl FlowNumbers {
    pub fn of(report: &Report) -> FlowNumbers {
        FlowNumbers {
            by_key: report
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| ((f.src.clone(), f.dst.clone(), f.destqp), i as u64 + 1))
                .collect(),
            by_id: Vec::new(),
        }
    }

    /// The number of the flow of `seen`'s frame, if it has one the
    /// report lists.
    pub fn number(&mut self, seen: &Seen<'_, '_>) -> Option<u64> {
        let id = seen.analysis.flow()? as usize;
        if self.by_id.len() <= id {
            self.by_id.resize(id + 1, None);
        }
        let by_key = &self.by_key;
        let n = *self.by_id[id].get_or_insert_with(|| {
            Analyzer::flow_key(seen.pkt)
                .and_then(|k| {
                    by_key.get(&(
                        k.src.to_string().into(),
                        k.dst.to_string().into(),
                        k.dest_qp,
                    ))
                })
                .copied()
                .unwrap_or(0)
        });
        (n > 0).then_some(n)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod live_tests {
    use super::*;
    use crate::capture::StreamReader;
    use std::io::Write;
    use std::time::Duration;

    /// Whether `run`'s progress heard of the first 3 frames of a pipe
    /// that had given only those (and the header) and waited to give the
    /// rest until it did (or 20 s had passed); and the frames `run` read.
    fn told_while_waiting(
        run: impl FnOnce(&mut dyn FrameSource, Progress<'_>) -> Result<Report, CaptureError>,
    ) -> (bool, u64) {
        let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/captures/loss.pcap"))
            .expect("captures/loss.pcap");
        let mut three = 24;
        for _ in 0..3 {
            let incl = u32::from_le_bytes(bytes[three + 8..three + 12].try_into().unwrap());
            three += 16 + incl as usize;
        }
        let (reader, mut writer) = std::io::pipe().expect("a pipe");
        let fd = reader.try_clone().ok().map(std::os::fd::OwnedFd::from);
        writer.write_all(&bytes[..three]).unwrap();
        let (told_tx, told) = std::sync::mpsc::channel();
        let rest = bytes[three..].to_vec();
        let feeder = std::thread::spawn(move || {
            let heard = told.recv_timeout(Duration::from_secs(20)).is_ok();
            writer.write_all(&rest).unwrap();
            heard
        });
        let mut source = StreamReader::pipe(Box::new(reader), Vec::new(), fd, None).unwrap();
        let mut progress = |_: usize, _: usize, frames: u64| {
            if frames == 3 {
                let _ = told_tx.send(());
            }
            ControlFlow::Continue(())
        };
        let report = run(&mut source, &mut progress).unwrap();
        (feeder.join().unwrap(), report.capture.frames)
    }

    /// A live capture's count moves as it grows, on each of the loops a
    /// stream goes through (not only every 65 536 frames).
    #[test]
    fn progress_is_told_whenever_a_stream_waits() {
        let d = DissectOptions::default();
        let whole = 326;
        let pipelined = told_while_waiting(|s, p| {
            analyze_pipelined(s, "live", &d, AnalysisOptions::default(), 2, Some(p))
        });
        assert_eq!(pipelined, (true, whole), "two threads");
        let sequential = told_while_waiting(|s, p| {
            analyze_sequential(s, "live", &d, AnalysisOptions::default(), Some(p))
        });
        assert_eq!(sequential, (true, whole), "one thread");
        let visited = told_while_waiting(|s, p| {
            visit_source(
                s,
                "live",
                &d,
                AnalysisOptions::default(),
                Some(p),
                &mut |_| ControlFlow::Continue(()),
                None,
            )
        });
        assert_eq!(visited, (true, whole), "the frame loop");
    }
}
