//! A capture file analysed by every core: the file is mapped once and cut
//! into chunks that worker threads read and dissect (with the ICRC, the
//! costly part) in any order, while the calling thread feeds the chunks to
//! the one [`Analyzer`] in file order, and dissects chunks itself when it
//! would otherwise wait. Classic pcap and pcapng files are read this way.
//!
//! A chunk's first record is found by a guess ([`PcapLayout::resync`],
//! [`NgCursor::resync`]); the calling thread accepts a chunk only when its
//! guessed start is where the previous chunk's last record ended, and
//! otherwise dissects it again from the right offset. A pcapng chunk is
//! also read in the state (section, interfaces) the file was in when the
//! chunk was taken: a worker stops at a section header or interface block,
//! the calling thread reads that block, and chunks read in an older state
//! are read again. The report is therefore the sequential one, frame for
//! frame (tested, including files built to fool the guess).

mod feed;
mod schedule;
mod split_sink;
mod walk;

use std::fs::File;
use std::sync::{Condvar, Mutex};

use super::{Progress, Visit};
use crate::analysis::split;
use crate::analysis::{AnalysisOptions, Analyzer, CaptureInfo, Facts, Report};
use crate::capture::{
    CaptureError, Format, Item, NgCursor, PCAP_HEADER_LEN, PcapLayout, warning_list,
};
use crate::dissect::DissectOptions;
use crate::filter::Filter;
use feed::Feed;
use schedule::{Shared, State};
use split_sink::SplitSink;
use walk::{Job, Walker, Warnings};

/// Bytes per chunk: large enough that per-chunk costs (a populate call, a
/// hand-over) vanish, small enough that the chunks in flight stay a few MiB.
pub const CHUNK: u64 = 2 << 20;
/// Chunks whose pages are given back together, once all of them are
/// dissected: one release (and one TLB flush of the other cores) per this
/// many chunks, for up to this many chunks' pages resident per group in
/// progress. 8 was no faster than 4 (a 2-core VM), with 5 MiB more peak RSS.
const RELEASE_GROUP: usize = 4;
/// Frames a chunk's walk hands over at most: a chunk of tiny records (16
/// bytes each: 65 536 of them in 2 MiB) would otherwise hold 12 MiB of
/// facts, times every chunk in flight. The rest of such a chunk is read
/// again from where the walk stopped.
pub const MAX_FACTS_PER_CHUNK: usize = 16_384;
/// Bytes in flight (a chunk's pages and its facts at most), all chunks
/// together, whatever the number of threads: the window of chunks taken
/// ahead is cut to fit, so memory does not grow with `-j`.
const IN_FLIGHT: usize = 32 << 20;

/// How the chunked reader is set up.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Threads in all, the calling one included (at least 2).
    pub threads: usize,
    /// Bytes per chunk.
    pub chunk: u64,
    /// Analyses side by side, each of some host pairs ([`split`]): 1 for
    /// one analysis of every frame.
    pub parts: usize,
}

impl Plan {
    /// `threads` threads, chunks of [`CHUNK`] bytes, one analysis.
    pub fn new(threads: usize) -> Plan {
        Plan {
            threads,
            chunk: CHUNK,
            parts: 1,
        }
    }
}

type Packets = Vec<Facts>;

/// pcapng section header and interface blocks after the first packet,
/// beyond one per chunk, past which the workers stop and the calling
/// thread reads the rest of the file alone. Capture tools write a file's
/// interfaces before its packets, and files one after another (`cat`)
/// add a few blocks each; a file that keeps changing its state would have
/// the workers rebuild their state and the calling thread reread their
/// chunks again and again (a 15 MB file of 300 000 interface blocks took
/// minutes; alone, this thread reads it in 50 ms).
const MAX_STATE_CHANGES: usize = 64;

/// What kind of capture a [`ChunkedFile`] holds.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Pcap(PcapLayout),
    PcapNg,
}

/// A regular capture file opened for the chunked reader.
#[derive(Debug, Clone, Copy)]
pub struct ChunkedFile<'a> {
    pub file: &'a File,
    pub size: u64,
    layout: Layout,
}

impl<'a> ChunkedFile<'a> {
    /// `None` when `file` is not a regular file that starts with a classic
    /// pcap header or a pcapng section header (a pipe, a bad header: the
    /// sequential reader's cases).
    pub fn new(file: &'a File) -> Option<ChunkedFile<'a>> {
        use std::os::unix::fs::FileExt;
        let meta = file.metadata().ok()?;
        if !meta.is_file() {
            return None;
        }
        let mut head = [0u8; PCAP_HEADER_LEN];
        file.read_exact_at(&mut head, 0).ok()?;
        let layout = match PcapLayout::parse(&head).ok()? {
            Some(layout) => Layout::Pcap(layout),
            None if head[..4] == [0x0A, 0x0D, 0x0D, 0x0A] => Layout::PcapNg,
            None => return None,
        };
        Some(ChunkedFile {
            file,
            size: meta.len(),
            layout,
        })
    }
}

impl<'a> ChunkedFile<'a> {
    /// [`ChunkedFile::new`] for a file of more than two chunks (a smaller
    /// one is read faster by the pipelined reader).
    pub fn large(file: &'a File) -> Option<ChunkedFile<'a>> {
        ChunkedFile::new(file).filter(|f| f.size > 2 * CHUNK)
    }
}

/// Analyses a pcap or pcapng file with `plan.threads` threads.
pub fn analyze_file(
    input: ChunkedFile<'_>,
    name: &str,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    plan: Plan,
    progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    visit_file(input, name, dissect_opts, opts, plan, progress, None)
}

/// [`analyze_file`], and each frame `select`'s filter may pass (in file
/// order, dissected in full, with what the analysis concluded of it) to
/// its visitor, until that says to stop. The workers dissect every frame
/// in full and test the filter on what the frame alone says
/// ([`Filter::may_match`]); the analysis thread dissects again only the
/// frames that may pass, so a filter that selects few frames costs little
/// more than the report.
pub fn visit_file(
    input: ChunkedFile<'_>,
    name: &str,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    plan: Plan,
    mut progress: Option<Progress<'_>>,
    select: Option<(&Filter, Visit<'_>)>,
) -> Result<Report, CaptureError> {
    let (prefilter, visit) = match select {
        Some((f, v)) => (Some(f), Some(v)),
        None => (None, None),
    };
    let map = mapwin::FileMap::map(input.file).map_err(|source| CaptureError::Io {
        path: "<input>".into(),
        source,
    })?;
    let mut warnings = Warnings::default();
    // The calling thread's walker, and where records start.
    let (mut walker, data_start) = match input.layout {
        Layout::Pcap(layout) => (Walker::Pcap(layout), PCAP_HEADER_LEN),
        Layout::PcapNg => {
            let (mut cursor, mut pos) = NgCursor::open(&map).ok_or(CaptureError::TooShort(0))??;
            // The interface blocks before the first packet, read here so
            // that the workers start in their state; their pages go back as
            // the reading moves on (a file can begin with hundreds of MiB of
            // interface options).
            let mut released = 0;
            while let Some(block) = map.get(pos..).filter(|b| cursor.is_state(b)) {
                match cursor.apply(block, pos as u64) {
                    Item::Skip { next } => pos += next,
                    _ => break,
                }
                if pos - released >= 4 << 20 {
                    map.release(released, pos - released);
                    released = pos;
                }
            }
            warnings.add(cursor.take_warnings());
            (Walker::PcapNg(cursor), pos)
        }
    };
    let job = Job {
        map: &map,
        size: map.len() as u64,
        data_start: data_start as u64,
        chunk: plan.chunk.max(1),
        opts: dissect_opts,
        prefilter,
    };
    // Chunks in flight beyond the one being analysed. The calling thread
    // takes chunks far ahead when its next one is still being decoded, so
    // with only two per thread the workers found the window full and
    // waited (5-21 ms of a 150 ms run on 2 cores, an older VM). Four more
    // remove that; a dozen more (16 on 2 cores) cost more than they saved
    // on the Zen 4 VM: workers ran ahead while the host held the main
    // thread up, each chunk's facts ~0.5 MB of fresh memory at 2 µs a page
    // fault (16 against 8: 2.4-3.3 % more CPU time at 500 k frames, three
    // rounds of 60-100 alternating runs; no difference at 5 M).
    let per_chunk = job.chunk as usize + MAX_FACTS_PER_CHUNK * std::mem::size_of::<Facts>();
    let ahead = (2 * plan.threads.max(2) + 4).min((IN_FLIGHT / per_chunk).max(4));
    let shared = Shared {
        state: Mutex::new(State {
            next: 0,
            consumed: 0,
            done: (0..ahead).map(|_| None).collect(),
            spare: Vec::new(),
            dissected: vec![0; job.chunks().div_ceil(RELEASE_GROUP)],
            published: None,
            solo: false,
            stop: false,
            waiting: 0,
        }),
        changed: Condvar::new(),
        ahead,
        total: job.chunks(),
        facts_per_chunk: (job.chunk / 256) as usize,
    };
    shared.publish(&walker);
    // A pcapng cursor that cannot be copied leaves the work to this thread.
    let workers: Vec<Walker> = (1..plan.threads.max(2))
        .filter_map(|_| match &walker {
            Walker::Pcap(layout) => Some(Walker::Pcap(*layout)),
            Walker::PcapNg(c) => c.copy(&map).ok().map(Walker::PcapNg),
        })
        .collect();
    // The section and interface blocks were read (and copied for each
    // worker): their pages go back, or a file whose first hundreds of MiB
    // are interface options would keep them resident to the end.
    map.release(0, data_start);
    let parts = if visit.is_none() {
        plan.parts.clamp(1, split::MAX_PARTS)
    } else {
        1
    };
    let mut an = Analyzer::new(opts.clone());
    an.set_report_threads(plan.threads);
    let doomed = std::sync::atomic::AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        for w in workers {
            let (shared, job) = (&shared, &job);
            scope.spawn(move || shared.work(job, w));
        }
        let mut sink = (parts > 1).then(|| SplitSink::start(scope, &opts, parts, &doomed));
        let mut feed = Feed {
            file: input.file,
            job: &job,
            shared: &shared,
            walker: &mut walker,
            warnings: &mut warnings,
            progress: &mut progress,
            state_changes: 0,
            visit,
            times: None,
        };
        let result = feed.run(&mut an, sink.as_mut());
        shared.stop();
        result.map(|()| sink.map(SplitSink::end))
    });
    if let Some(ended) = result? {
        match ended.and_then(|(frames, parts)| split::join(frames, parts)) {
            Ok(joined) => an = joined,
            Err(why) => {
                // What the parts met is not per host pair: one analysis
                // of every frame, from the start.
                let again = Plan { parts: 1, ..plan };
                let mut r = visit_file(input, name, dissect_opts, opts, again, progress, None)?;
                r.notes.push(format!(
                    "analysed on one thread, not {parts} (--analysis-threads): {why}"
                ));
                return Ok(r);
            }
        }
        an.set_report_threads(plan.threads);
    }
    let (format, ts_resolution_ns) = match (&input.layout, &walker) {
        (Layout::Pcap(layout), _) => (
            Format::Pcap {
                nanos: layout.nanos,
                big_endian: layout.big_endian,
            },
            layout.ts_resolution_ns(),
        ),
        (_, Walker::PcapNg(c)) => (Format::PcapNg, c.ts_resolution_ns()),
        (_, Walker::Pcap(_)) => (Format::PcapNg, 0),
    };
    Ok(an.finish(CaptureInfo {
        file: name.to_string(),
        files: Vec::new(),
        format: format.to_string(),
        ts_resolution_ns,
        warnings: warning_list(&warnings.kept, warnings.count),
    }))
}

#[cfg(test)]
mod tests;
