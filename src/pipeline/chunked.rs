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

use std::fs::File;
use std::sync::{Arc, Condvar, Mutex};

use std::ops::ControlFlow;

use super::{Progress, Seen, Visit};
use crate::analysis::split::{self, FrameLoop};
use crate::analysis::{AnalysisOptions, Analyzer, CaptureInfo, Facts, Report};
use crate::capture::{
    CaptureError, Format, FrameMeta, Item, MAX_WARNINGS, NgCursor, NgStateId, PCAP_HEADER_LEN,
    PREFETCH_AHEAD, PcapLayout, Section, cut_warning, shrank_warning, warning_list,
};
use crate::dissect::{DissectOptions, dissect};
use crate::filter::Filter;

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

/// How a thread reads records: each thread has its own.
enum Walker {
    Pcap(PcapLayout),
    /// A pcapng cursor in the state that [`Walker::id`] names.
    PcapNg(NgCursor),
}

impl Walker {
    /// The pcapng state the walker reads in (always the same for pcap).
    fn id(&self) -> NgStateId {
        match self {
            Walker::Pcap(_) => (0, 0),
            Walker::PcapNg(c) => c.id(),
        }
    }

    /// The record at `buf[at..]` (file offset `offset`), its ranges and
    /// offsets in `buf`; `None` for a pcapng section header or interface
    /// block.
    fn item(&mut self, buf: &[u8], at: usize, offset: u64) -> Option<Item> {
        Some(match self {
            // Frame numbers count within the chunk: see `renumbered`.
            Walker::Pcap(layout) => layout.item(buf, at, offset, 0),
            Walker::PcapNg(c) => c
                .block(buf.get(at..).unwrap_or_default(), offset)?
                .shifted(at),
        })
    }

    /// The guessed first record of `buf[..limit]`, whose first byte is at
    /// file offset `base`.
    fn resync(&self, buf: &[u8], base: u64, limit: usize) -> Option<usize> {
        match self {
            Walker::Pcap(layout) => layout.resync(buf, 0, limit, true),
            Walker::PcapNg(c) => c.resync(buf, base, 0, limit, true),
        }
    }

    fn take_warnings(&mut self) -> (Vec<String>, u64) {
        match self {
            Walker::Pcap(_) => (Vec::new(), 0),
            Walker::PcapNg(c) => c.take_warnings(),
        }
    }

    /// Brings a worker's walker to the pcapng state the calling thread
    /// published. A walker that cannot be rebuilt keeps its old state: its
    /// chunks are then read again by the calling thread.
    fn sync(&mut self, map: &[u8], published: &Published) {
        if let (Walker::PcapNg(c), Some((id, section))) = (&mut *self, published)
            && c.id() != *id
            && let Ok(fresh) = NgCursor::rebuild(map, section, *id)
        {
            *c = fresh;
        }
    }
}

/// The pcapng state chunks are taken in, and where its section's header
/// and interface blocks are; `None` for pcap.
type Published = Option<(NgStateId, Arc<Section>)>;

/// Warnings in file order: the first [`MAX_WARNINGS`] kept, all counted.
#[derive(Default)]
struct Warnings {
    kept: Vec<String>,
    count: u64,
}

impl Warnings {
    fn push(&mut self, w: String) {
        self.count += 1;
        if self.kept.len() < MAX_WARNINGS {
            self.kept.push(w);
        }
    }

    /// Adds warnings made elsewhere: kept ones, and how many more.
    fn add(&mut self, (kept, more): (Vec<String>, u64)) {
        for w in kept {
            self.push(w);
        }
        self.count += more;
    }
}

/// How a chunk's walk over its records ended.
#[derive(Debug)]
enum End {
    /// The next record starts here, at or after the chunk's end.
    Next(u64),
    /// The last record ended exactly at the end of the file.
    Eof,
    /// A pcapng section header or interface block starts here.
    State(u64),
    /// The file ends inside the record at `at`.
    Cut { at: u64, needed: usize, have: usize },
    /// The record cannot be read (frame numbers count within the chunk).
    Failed(CaptureError),
}

/// One chunk, dissected.
struct Chunk {
    /// Where its first record was taken to be (`None`: no record found).
    start: Option<u64>,
    /// The pcapng state it was read in.
    state: NgStateId,
    end: End,
    /// Frame numbers count from 1 within the chunk.
    packets: Packets,
    /// Warnings about its records: kept ones, and how many more.
    warnings: (Vec<String>, u64),
    /// The frames the selecting filter may pass, in order (none without
    /// a filter).
    candidates: Vec<Candidate>,
}

/// A frame a worker found the filter may pass: enough to build its
/// [`Frame`] again from the map, for the analysis thread to dissect it
/// once more with what the analysis says of it.
#[derive(Debug, Clone)]
struct Candidate {
    /// Its place among the chunk's facts.
    index: usize,
    meta: FrameMeta,
    /// Where its record starts and its data lie, in the file.
    offset: u64,
    data: std::ops::Range<usize>,
}

/// The file and what every chunk job needs.
struct Job<'a> {
    map: &'a mapwin::FileMap,
    size: u64,
    /// Where the first record (after the file's header) starts.
    data_start: u64,
    chunk: u64,
    opts: &'a DissectOptions,
    /// With a filter, workers dissect every frame in full and note the
    /// ones it may pass ([`Filter::may_match`]).
    prefilter: Option<&'a Filter>,
}

impl Job<'_> {
    fn chunks(&self) -> usize {
        self.size.div_ceil(self.chunk).max(1) as usize
    }

    /// Gives back the pages of the chunks of release group `g`.
    fn release_group(&self, g: usize) {
        let lo = (g * RELEASE_GROUP) as u64 * self.chunk;
        let hi = (lo + RELEASE_GROUP as u64 * self.chunk).min(self.size);
        self.map
            .release(lo as usize, hi.saturating_sub(lo) as usize);
    }

    /// Byte range `[lo, hi)` whose record starts belong to chunk `k`.
    ///
    /// Chunks are whole multiples of the chunk size in the file (the first
    /// one less the file header), so that with the default size a chunk is
    /// one 2 MiB block of the file: where the file is cached in 2 MiB folios
    /// a chunk is one whole folio, populated in batches, with no
    /// part-folios at its edges.
    fn bounds(&self, k: usize) -> (u64, u64) {
        let hi = ((k as u64 + 1) * self.chunk).min(self.size);
        ((k as u64 * self.chunk).max(self.data_start).min(hi), hi)
    }

    /// Dissects chunk `k` with `walker`, from `known_start` when the caller
    /// knows where its first record is, else from a guess. The chunk's
    /// pages are filled in first (if `populate`); the record that runs past
    /// its end is read from the map like the others.
    fn run(
        &self,
        k: usize,
        known_start: Option<u64>,
        walker: &mut Walker,
        mut packets: Packets,
        populate: bool,
    ) -> Chunk {
        // Frames so far. `packets` still holds the facts of its last use:
        // they are overwritten, and the rest cut off at the end.
        let mut n = 0usize;
        let (lo, hi) = self.bounds(k);
        let from = known_start.unwrap_or(lo).min(self.size);
        let limit = (hi - from.min(hi)) as usize;
        if populate {
            self.map.populate(from as usize, limit);
        }
        // From the chunk's start to the end of the file.
        let buf: &[u8] = self.map.get(from as usize..).unwrap_or_default();
        let state = walker.id();
        let first = match known_start {
            Some(_) => Some(0),
            None => walker.resync(buf, from, limit),
        };
        let Some(mut at) = first else {
            packets.clear();
            return Chunk {
                start: None,
                state,
                end: End::Next(hi),
                packets,
                warnings: (Vec::new(), 0),
                candidates: Vec::new(),
            };
        };
        let start = Some(from + at as u64);
        let mut hinted = at;
        let mut candidates = Vec::new();
        let end = loop {
            if n >= MAX_FACTS_PER_CHUNK && at < limit {
                break End::Next(from + at as u64);
            }
            if at >= limit {
                break if at == buf.len() {
                    End::Eof
                } else {
                    End::Next(from + at as u64)
                };
            }
            let Some(item) = walker.item(buf, at, from + at as u64) else {
                break End::State(from + at as u64);
            };
            match item {
                Item::Frame { meta, data, next } => {
                    // Hint the bytes up to PREFETCH_AHEAD past this frame
                    // that earlier frames have not hinted.
                    let ahead = next + PREFETCH_AHEAD;
                    if ahead > hinted {
                        mapwin::prefetch(buf, hinted.max(next), ahead - hinted.max(next));
                        hinted = ahead;
                    }
                    let range = data.clone();
                    let data = buf.get(data).unwrap_or_default();
                    let frame = meta.frame(n as u64 + 1, data, (from + at as u64) as usize);
                    match self.prefilter {
                        None => Facts::put_from_frame(&mut packets, n, &frame, self.opts),
                        Some(filter) => {
                            let pkt = dissect(&frame, self.opts);
                            let facts = Facts::of(&pkt);
                            match packets.get_mut(n) {
                                Some(slot) => *slot = facts,
                                None => packets.push(facts),
                            }
                            // (A frame that may begin an HTTP message is
                            // read again too: the segment that ends it
                            // shows its first line.)
                            if filter.may_match(&pkt) || facts.may_begin_http_message() {
                                let base = from as usize;
                                candidates.push(Candidate {
                                    index: n,
                                    meta,
                                    offset: from + at as u64,
                                    data: base + range.start..base + range.end,
                                });
                            }
                        }
                    }
                    n += 1;
                    at = next;
                }
                Item::Skip { next } => at = next.max(at + 1),
                Item::Incomplete { needed } => {
                    break End::Cut {
                        at: from + at as u64,
                        needed,
                        have: buf.len() - at,
                    };
                }
                Item::Failed(e) => break End::Failed(e),
            }
        };
        packets.truncate(n);
        Chunk {
            start,
            state,
            end,
            packets,
            warnings: walker.take_warnings(),
            candidates,
        }
    }
}

/// Chunks done and waiting, and who does what next.
struct State {
    /// The next chunk nobody has taken yet.
    next: usize,
    /// Chunks the analysis has finished with.
    consumed: usize,
    /// Finished chunks, chunk `k` in slot `k % ahead`.
    done: Vec<Option<Chunk>>,
    /// Packet buffers to reuse.
    spare: Vec<Packets>,
    /// Chunks dissected in each release group.
    dissected: Vec<u32>,
    /// The state new chunks are read in.
    published: Published,
    /// Workers take no more chunks: the calling thread reads the rest.
    solo: bool,
    stop: bool,
    /// Threads waiting on `changed`: with none, nothing is notified (a
    /// notification is a system call whether or not anyone waits).
    waiting: u32,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    /// Chunks that may be taken beyond the one being analysed.
    ahead: usize,
    total: usize,
    /// Room in a new buffer: the frames of a chunk whose records average
    /// 256 bytes or more, so filling it copies nothing (pages are touched
    /// only as facts are written).
    facts_per_chunk: usize,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a change, counted in `waiting` while it waits.
    fn wait<'a>(
        &self,
        mut st: std::sync::MutexGuard<'a, State>,
    ) -> std::sync::MutexGuard<'a, State> {
        st.waiting += 1;
        let mut st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        st.waiting -= 1;
        st
    }

    /// Releases the lock, then wakes the threads waiting, if any.
    fn notify(&self, st: std::sync::MutexGuard<'_, State>) {
        let waiting = st.waiting > 0;
        drop(st);
        if waiting {
            self.changed.notify_all();
        }
    }

    /// Takes the next chunk if the window allows; with a buffer to fill.
    fn claim(&self, st: &mut State) -> Option<(usize, Packets)> {
        if st.stop || st.next >= self.total || st.next >= st.consumed + self.ahead {
            return None;
        }
        let k = st.next;
        st.next += 1;
        let buf = st
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.facts_per_chunk));
        Some((k, buf))
    }

    /// Counts chunk `k` as dissected; the release group to give back when
    /// that completes it.
    fn dissected(&self, st: &mut State, k: usize) -> Option<usize> {
        let g = k / RELEASE_GROUP;
        let in_group = (self.total - g * RELEASE_GROUP).min(RELEASE_GROUP) as u32;
        let n = st.dissected.get_mut(g)?;
        *n += 1;
        (*n == in_group).then_some(g)
    }

    fn finished(&self, k: usize, chunk: Chunk, job: &Job<'_>) {
        let mut st = self.lock();
        st.done[k % self.ahead] = Some(chunk);
        let release = self.dissected(&mut st, k);
        self.notify(st);
        if let Some(g) = release {
            job.release_group(g);
        }
    }

    /// A worker: dissects chunks until there are none left.
    fn work(&self, job: &Job<'_>, mut walker: Walker) {
        loop {
            let (k, buf, published) = {
                let mut st = self.lock();
                loop {
                    if st.stop || st.solo || st.next >= self.total {
                        // No chunk is left to fill a buffer: the spare ones
                        // are freed here, while the analysis finishes,
                        // rather than after it.
                        let spare = std::mem::take(&mut st.spare);
                        drop(st);
                        drop(spare);
                        return;
                    }
                    if let Some((k, buf)) = self.claim(&mut st) {
                        break (k, buf, st.published.clone());
                    }
                    st = self.wait(st);
                }
            };
            walker.sync(job.map, &published);
            let chunk = job.run(k, None, &mut walker, buf, true);
            self.finished(k, chunk, job);
        }
    }

    /// Chunk `k` for the analysis, dissecting others (with `walker`, in the
    /// published state) while it is not ready.
    fn take(&self, k: usize, job: &Job<'_>, walker: &mut Walker) -> Chunk {
        let mut st = self.lock();
        loop {
            if let Some(c) = st.done[k % self.ahead].take() {
                return c;
            }
            if let Some((j, buf)) = self.claim(&mut st) {
                drop(st);
                let chunk = job.run(j, None, walker, buf, true);
                if j == k {
                    let release = self.dissected(&mut self.lock(), k);
                    if let Some(g) = release {
                        job.release_group(g);
                    }
                    return chunk;
                }
                self.finished(j, chunk, job);
                st = self.lock();
                continue;
            }
            st = self.wait(st);
        }
    }

    /// Chunk `k` is analysed: its buffer goes back, and one more chunk may
    /// be taken.
    fn consumed(&self, k: usize, packets: Packets) {
        let mut st = self.lock();
        st.consumed = k + 1;
        st.spare.push(packets);
        self.notify(st);
    }

    /// Chunks taken from now on are read in `walker`'s state.
    fn publish(&self, walker: &Walker) {
        if let Walker::PcapNg(c) = walker {
            self.lock().published = Some((c.id(), Arc::new(c.section())));
        }
    }

    /// The workers stop taking chunks.
    fn solo(&self) {
        let mut st = self.lock();
        st.solo = true;
        self.notify(st);
    }

    fn stop(&self) {
        let mut st = self.lock();
        st.stop = true;
        self.notify(st);
    }
}

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

/// A chunk's facts for a split analysis's part (shared by every part),
/// the places of the part's frames among them, and the capture's first
/// frame's time.
type Batch = (Arc<Vec<Facts>>, Vec<u32>, u64);

/// Batches on their way to a part's thread: enough that a part that is
/// behind for a moment does not hold the frame loop up.
const BATCHES_AHEAD: usize = 4;

/// The analysis split by host pair ([`split`]): this thread runs the frame
/// loop and analyses the first part; each other part has a thread of its
/// own. A chunk's facts are not copied: every part reads its frames from
/// them, and the last part done hands them back.
struct SplitSink<'s, 'scope> {
    frames: FrameLoop,
    opts: &'s AnalysisOptions,
    mine: Option<Analyzer>,
    /// Each part's frames in the chunk in hand.
    picks: Vec<Vec<u32>>,
    to: Vec<std::sync::mpsc::SyncSender<Batch>>,
    /// Emptied lists of places, and chunks' facts, back from the threads.
    spare: std::sync::mpsc::Receiver<Vec<u32>>,
    returned: std::sync::mpsc::Receiver<Vec<Facts>>,
    threads: Vec<std::thread::ScopedJoinHandle<'scope, Option<Analyzer>>>,
    /// Set when a part can no longer be joined: the analysis starts again
    /// on one thread.
    doomed: &'s std::sync::atomic::AtomicBool,
}

impl<'s, 'scope> SplitSink<'s, 'scope> {
    fn start<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        opts: &'s AnalysisOptions,
        parts: usize,
        doomed: &'s std::sync::atomic::AtomicBool,
    ) -> Self
    where
        's: 'scope,
    {
        let room = parts * (BATCHES_AHEAD + 2);
        let (back, spare) = std::sync::mpsc::sync_channel(room);
        let (give, returned) = std::sync::mpsc::sync_channel(room);
        let (mut to, mut threads) = (Vec::new(), Vec::new());
        for _ in 1..parts {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(BATCHES_AHEAD);
            let (back, give) = (back.clone(), give.clone());
            to.push(tx);
            threads.push(scope.spawn(move || part_thread(rx, back, give, opts, doomed)));
        }
        SplitSink {
            frames: FrameLoop::new(opts.clone(), parts),
            opts,
            mine: None,
            picks: vec![Vec::new(); parts],
            to,
            spare,
            returned,
            threads,
            doomed,
        }
    }

    /// A chunk's facts (`frames` frames came before them): whether the
    /// parts can still be joined, and an empty buffer for the next chunk's.
    fn chunk(&mut self, mut packets: Vec<Facts>, frames: u64) -> (bool, Vec<Facts>) {
        use std::sync::atomic::Ordering::Relaxed;
        for (i, facts) in packets.iter_mut().enumerate() {
            facts.number += frames;
            if let Some(p) = self.frames.frame(facts) {
                self.picks[p].push(i as u32);
            }
        }
        let origin = self.frames.origin().unwrap_or(0);
        let packets = Arc::new(packets);
        for (p, to) in self.to.iter().enumerate() {
            let picks = &mut self.picks[p + 1];
            if picks.is_empty() {
                continue;
            }
            let next = self.spare.try_recv().unwrap_or_default();
            let batch = (Arc::clone(&packets), std::mem::replace(picks, next), origin);
            if to.send(batch).is_err() {
                self.doomed.store(true, Relaxed);
            }
        }
        if !self.picks[0].is_empty() {
            let opts = self.opts;
            let mine = self
                .mine
                .get_or_insert_with(|| split::part(opts.clone(), origin));
            for &i in &self.picks[0] {
                mine.observe_part(&packets[i as usize]);
            }
            self.picks[0].clear();
        }
        let mut buf = Arc::into_inner(packets)
            .or_else(|| self.returned.try_recv().ok())
            .unwrap_or_default();
        buf.clear();
        let mine = self.mine.as_ref().and_then(Analyzer::unjoinable);
        if mine.or(self.frames.unjoinable()).is_some() {
            self.doomed.store(true, Relaxed);
        }
        (!self.doomed.load(Relaxed), buf)
    }

    /// The frame loop and every part, once their threads are done; why
    /// they cannot be joined, if they cannot.
    fn end(self) -> Result<(FrameLoop, Vec<Analyzer>), split::Unsplit> {
        use std::sync::atomic::Ordering::Relaxed;
        let SplitSink {
            frames,
            opts,
            mine,
            to,
            threads,
            doomed,
            ..
        } = self;
        drop(to);
        let mut parts = Vec::with_capacity(threads.len() + 1);
        let origin = frames.origin().unwrap_or(0);
        parts.push(mine.unwrap_or_else(|| split::part(opts.clone(), origin)));
        for t in threads {
            match t.join() {
                Ok(Some(an)) => parts.push(an),
                Ok(None) => parts.push(split::part(opts.clone(), origin)),
                Err(_) => doomed.store(true, Relaxed),
            }
        }
        if doomed.load(Relaxed) {
            let why = parts.iter().find_map(Analyzer::unjoinable);
            return Err(why
                .or(frames.unjoinable())
                .unwrap_or(split::Unsplit::Stopped));
        }
        Ok((frames, parts))
    }
}

/// A part's thread: its frames of each chunk, in file order, until the
/// frame loop ends.
fn part_thread(
    rx: std::sync::mpsc::Receiver<Batch>,
    back: std::sync::mpsc::SyncSender<Vec<u32>>,
    give: std::sync::mpsc::SyncSender<Vec<Facts>>,
    opts: &AnalysisOptions,
    doomed: &std::sync::atomic::AtomicBool,
) -> Option<Analyzer> {
    use std::sync::atomic::Ordering::Relaxed;
    let mut an: Option<Analyzer> = None;
    while let Ok((packets, mut picks, origin)) = rx.recv() {
        // Once doomed, batches are only taken (the frame loop stops soon).
        if !doomed.load(Relaxed) {
            let a = an.get_or_insert_with(|| split::part(opts.clone(), origin));
            for &i in &picks {
                a.observe_part(&packets[i as usize]);
            }
            if a.unjoinable().is_some() {
                doomed.store(true, Relaxed);
            }
        }
        picks.clear();
        let _ = back.try_send(picks);
        if let Some(buf) = Arc::into_inner(packets) {
            let _ = give.try_send(buf);
        }
    }
    an
}

/// Analyses a chunk's facts (`frames` frames came before them) and hands
/// its candidates to `visit`, dissected again, with the analysis of each.
fn visit_chunk(
    chunk: &mut Chunk,
    frames: u64,
    an: &mut Analyzer,
    job: &Job<'_>,
    times: &mut Option<(u64, u64)>,
    visit: &mut dyn FnMut(&Seen<'_, '_>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let mut next = chunk.candidates.iter().peekable();
    for (i, facts) in chunk.packets.iter_mut().enumerate() {
        facts.number += frames;
        let found = an.observe(facts);
        let tcp = an.tcp_seen(facts.number);
        let (first, prev) = *times.get_or_insert((facts.ts_ns, facts.ts_ns));
        *times = Some((first, facts.ts_ns));
        let Some(c) = next.next_if(|c| c.index == i) else {
            continue;
        };
        let data = job.map.get(c.data.clone()).unwrap_or_default();
        let frame = c.meta.frame(facts.number, data, c.offset as usize);
        let pkt = dissect(&frame, job.opts);
        if Analyzer::frame_bytes_wanted(tcp.as_ref()) {
            an.keep_frame_bytes(&pkt);
        }
        visit(&Seen {
            pkt: &pkt,
            analysis: &found,
            tcp,
            first_ts_ns: first,
            prev_ts_ns: prev,
            link: an.link_speed(),
        })?;
    }
    ControlFlow::Continue(())
}

/// The analysis side: chunks in file order, each checked against where the
/// previous one ended and the state the file is in.
struct Feed<'f, 'a, 'p, 'v> {
    /// The file, to ask its size if it shrinks while being read.
    file: &'f File,
    job: &'f Job<'a>,
    shared: &'f Shared,
    walker: &'f mut Walker,
    warnings: &'f mut Warnings,
    progress: &'f mut Option<Progress<'p>>,
    /// Section header and interface blocks read after the first packet.
    state_changes: usize,
    visit: Option<Visit<'v>>,
    /// The first frame's timestamp and the last one's, once there is one.
    times: Option<(u64, u64)>,
}

impl Feed<'_, '_, '_, '_> {
    fn run(
        &mut self,
        an: &mut Analyzer,
        mut split: Option<&mut SplitSink<'_, '_>>,
    ) -> Result<(), CaptureError> {
        let job = self.job;
        // Where the next record really starts.
        let mut pos = job.data_start;
        let mut frames = 0u64;
        for k in 0..self.shared.total {
            let (_, hi) = job.bounds(k);
            let mut chunk = self.shared.take(k, job, self.walker);
            // A file cut while being read: its pages past the new end read
            // as zeros (see mapwin), so no chunk reaching past it is used.
            if mapwin::shrank() {
                let now = self.file.metadata().map_or(0, |m| m.len());
                if hi > now {
                    self.warnings.push(shrank_warning(now, pos));
                    return Ok(());
                }
            }
            // Where this thread began to read the chunk again, if it did.
            let mut reread: Option<u64> = None;
            let state = self.walker.id();
            // Until the chunk's records are all analysed.
            while pos < hi {
                if chunk.start != Some(pos) || chunk.state != self.walker.id() {
                    // A wrong guess, or an older state: again from the
                    // right offset, whose pages are populated once and
                    // given back on their own below (the group may be
                    // given back already).
                    let populate = reread.is_none();
                    chunk = job.run(k, Some(pos), self.walker, chunk.packets, populate);
                    reread.get_or_insert(pos);
                }
                let count = chunk.packets.len() as u64;
                match self.visit.as_mut() {
                    None if split.is_some() => {
                        if let Some(sink) = split.as_deref_mut() {
                            let packets = std::mem::take(&mut chunk.packets);
                            let (go_on, buf) = sink.chunk(packets, frames);
                            chunk.packets = buf;
                            if !go_on {
                                return Ok(());
                            }
                        }
                    }
                    None => an.observe_run(&mut chunk.packets, frames),
                    Some(visit) => {
                        let stop =
                            visit_chunk(&mut chunk, frames, an, job, &mut self.times, &mut **visit);
                        if stop.is_break() {
                            return Ok(());
                        }
                        // Dissecting the candidates again mapped their
                        // pages back (a whole 2 MiB folio each, where the
                        // file is cached so), after the group of the
                        // chunk may have been given back: again now.
                        if !chunk.candidates.is_empty() {
                            let (lo, _) = job.bounds(k);
                            let end = chunk.candidates.iter().map(|c| c.data.end).max();
                            let end = end.unwrap_or(0) as u64;
                            job.map
                                .release(lo as usize, end.saturating_sub(lo) as usize);
                        }
                    }
                }
                frames += count;
                self.warnings.add(std::mem::take(&mut chunk.warnings));
                match std::mem::replace(&mut chunk.end, End::Eof) {
                    End::Next(next) => {
                        pos = next;
                        if let Some(p) = self.progress.as_mut()
                            && p(pos.min(job.size) as usize, job.size as usize, frames).is_break()
                        {
                            return Ok(());
                        }
                    }
                    End::State(at) => {
                        pos = match self.state_block(at, frames)? {
                            Some(next) => next,
                            None => return Ok(()),
                        };
                        // The rest of the chunk is read again.
                        chunk.start = None;
                        self.state_changes += 1;
                    }
                    End::Eof => return Ok(()),
                    End::Cut { at, needed, have } => {
                        self.warnings.push(cut_warning(at, needed, have, frames));
                        return Ok(());
                    }
                    End::Failed(e) => return Err(renumbered(e, frames + 1)),
                }
            }
            if reread.is_some() {
                // From the chunk's start, not the reread's: where the file
                // is mapped in 2 MiB folios, populating the reread maps the
                // whole folio again, the part read first included.
                let (lo, _) = job.bounds(k);
                job.map.release(lo as usize, hi.saturating_sub(lo) as usize);
            }
            // The chunk's last record ran into the next chunk, whose pages
            // may have been given back already (it was dissected first):
            // those it touched again go back too, or they would stay.
            if pos > hi && pos < job.size {
                job.map.release(hi as usize, (pos - hi) as usize);
            }
            if self.walker.id() != state {
                if self.state_changes > MAX_STATE_CHANGES + k {
                    self.shared.solo();
                } else {
                    self.shared.publish(self.walker);
                }
            }
            self.shared.consumed(k, chunk.packets);
        }
        Ok(())
    }

    /// Reads the section header or interface block at `at`; where the next
    /// block starts, or `None` at the end of the file.
    fn state_block(&mut self, at: u64, frames: u64) -> Result<Option<u64>, CaptureError> {
        let Walker::PcapNg(cursor) = &mut *self.walker else {
            return Ok(None);
        };
        let input = self.job.map.get(at as usize..).unwrap_or_default();
        let next = match cursor.apply(input, at) {
            Item::Skip { next } | Item::Frame { next, .. } => Some(at + next as u64),
            Item::Incomplete { needed } => {
                self.warnings
                    .push(cut_warning(at, needed, input.len(), frames));
                None
            }
            Item::Failed(e) => return Err(renumbered(e, frames + 1)),
        };
        self.warnings.add(cursor.take_warnings());
        Ok(next)
    }
}

/// `e` with the frame number the whole file gives it.
fn renumbered(e: CaptureError, frame: u64) -> CaptureError {
    match e {
        CaptureError::AbsurdLength { offset, len, .. } => {
            CaptureError::AbsurdLength { frame, offset, len }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use proptest::prelude::*;

    use super::*;
    use crate::capture::CaptureFile;
    use crate::capture::testfile::{Item, Ng, build_with, damage_and_cut, item};

    /// The report (or the error) as JSON text.
    fn outcome(r: Result<Report, CaptureError>) -> String {
        match r {
            Ok(report) => serde_json::to_string_pretty(&report).unwrap_or_default(),
            Err(e) => format!("error: {e}"),
        }
    }

    fn sequential(bytes: &[u8]) -> String {
        let file = CaptureFile::from_bytes(bytes.to_vec());
        let mut reader = match file.frames() {
            Ok(r) => r,
            Err(e) => return format!("error: {e}"),
        };
        outcome(super::super::analyze_sequential(
            &mut reader,
            "capture",
            &DissectOptions::default(),
            AnalysisOptions::default(),
            None,
        ))
    }

    /// `None` when the chunked reader does not take the file.
    fn chunked(bytes: &[u8], plan: Plan) -> Option<String> {
        let mut tmp = tempfile::NamedTempFile::new().expect("temporary file");
        tmp.write_all(bytes).expect("write");
        let file = tmp.reopen().expect("reopen");
        let input = ChunkedFile::new(&file)?;
        Some(outcome(analyze_file(
            input,
            "capture",
            &DissectOptions::default(),
            AnalysisOptions::default(),
            plan,
            None,
        )))
    }

    /// Filters that read the bytes, the frame's place and the analysis.
    const FILTERS: &[&str] = &[
        "bth.opcode == 0x81 || frame.number in {3 50 77}",
        "roce.analysis.flow == 1 && frame.time_delta > 0",
        "not roce.analysis.gap and frame.time_relative >= 0.00001",
        "eth",
    ];

    /// One line per frame `filter` passes: what the frame loop said of it.
    fn line(filter: &Filter, seen: &Seen<'_, '_>) -> Option<String> {
        let flow = seen.analysis.flow().map(|f| u64::from(f) + 1);
        filter.matches(&seen.ctx(flow)).then(|| {
            let p = seen.pkt;
            format!(
                "{} {} {} {} {} {:?} {:?}\n",
                p.number, p.ts_ns, seen.first_ts_ns, seen.prev_ts_ns, p.len, seen.analysis, p.bth
            )
        })
    }

    /// The frames `filter` passes, read by the sequential frame loop, then
    /// its report.
    fn visited_sequentially(bytes: &[u8], filter: &Filter) -> String {
        let file = CaptureFile::from_bytes(bytes.to_vec());
        let mut reader = match file.frames() {
            Ok(r) => r,
            Err(e) => return format!("error: {e}"),
        };
        let mut lines = String::new();
        let r = super::super::visit_source(
            &mut reader,
            "capture",
            &DissectOptions::default(),
            AnalysisOptions::default(),
            None,
            &mut |seen| {
                lines.extend(line(filter, seen));
                ControlFlow::Continue(())
            },
            None,
        );
        lines + &outcome(r)
    }

    /// The same from the chunked reader (`None` when it does not take
    /// the file).
    fn visited_chunked(bytes: &[u8], plan: Plan, filter: &Filter) -> Option<String> {
        let mut tmp = tempfile::NamedTempFile::new().expect("temporary file");
        tmp.write_all(bytes).expect("write");
        let file = tmp.reopen().expect("reopen");
        let input = ChunkedFile::new(&file)?;
        let mut lines = String::new();
        let mut visit = |seen: &Seen<'_, '_>| {
            lines.extend(line(filter, seen));
            ControlFlow::Continue(())
        };
        let r = visit_file(
            input,
            "capture",
            &DissectOptions::default(),
            AnalysisOptions::default(),
            plan,
            None,
            Some((filter, &mut visit)),
        );
        Some(lines + &outcome(r))
    }

    /// Packet `k`'s data: one of the sample RoCE frames, or `len` counting
    /// bytes for even `len`.
    fn frame(samples: &[Vec<u8>]) -> impl Fn(usize, usize) -> Vec<u8> + '_ {
        move |k, len| {
            if len % 2 == 0 {
                (0..len).map(|i| (i + k) as u8).collect()
            } else {
                samples[(k + len) % samples.len()].clone()
            }
        }
    }

    #[test]
    fn a_pcapng_file_is_read_like_the_sequential_reader() {
        let samples = crate::synth::samples::every_opcode(7);
        // Two interfaces first, one more and a second section (big
        // endian) later, with skipped blocks and an unknown interface.
        let mut items = vec![Item::Idb(1, Some(9), None), Item::Idb(1, None, None)];
        for i in 0..120u64 {
            items.push(Item::Epb {
                iface: (i % 3) as u32,
                ts: 1_700_000_000_000_000 + i * 1000,
                extra: 0,
                short: false,
                len: 1,
                flags: i % 10 == 0,
            });
            match i {
                30 => items.push(Item::Idb(1, Some(6), None)),
                50 => items.push(Item::Other { kind: 5, len: 12 }),
                70 => items.push(Item::Section(true)),
                71 => items.push(Item::Idb(1, Some(9), None)),
                90 => items.push(Item::Other {
                    kind: 0x1234,
                    len: 3,
                }),
                _ => {}
            }
        }
        let bytes = build_with(&items, frame(&samples));
        let want = sequential(&bytes);
        assert!(want.contains("\"frames\": 77"), "{want}");
        assert!(want.contains("24 more warnings not shown"), "{want}");
        for chunk in [64, 333, 4096, 1 << 20] {
            for threads in [2, 3] {
                let got = chunked(
                    &bytes,
                    Plan {
                        threads,
                        chunk,
                        parts: threads - 1,
                    },
                );
                assert_eq!(got.as_ref(), Some(&want), "chunk {chunk}");
            }
        }
        // The frame loop with a filter: the same frames, with the same
        // analysis and times, and the same report.
        for text in FILTERS {
            let filter = Filter::parse(text).unwrap();
            let want = visited_sequentially(&bytes, &filter);
            assert!(want.lines().count() > 2, "{text}: {want}");
            for chunk in [64, 333, 4096] {
                let got = visited_chunked(
                    &bytes,
                    Plan {
                        threads: 2,
                        chunk,
                        parts: 2,
                    },
                    &filter,
                );
                assert_eq!(got.as_ref(), Some(&want), "{text}, chunk {chunk}");
            }
        }
    }

    /// A visitor that stops the loop: frames up to there, none after.
    #[test]
    fn a_visitor_stops_the_chunked_loop() {
        let samples = crate::synth::samples::every_opcode(4);
        let mut items = vec![Item::Idb(1, Some(9), None)];
        for i in 0..400u64 {
            items.push(Item::Epb {
                iface: 0,
                ts: 1_700_000_000_000_000 + i * 1000,
                extra: 0,
                short: false,
                len: 1,
                flags: false,
            });
        }
        let bytes = build_with(&items, frame(&samples));
        let mut tmp = tempfile::NamedTempFile::new().expect("temporary file");
        tmp.write_all(&bytes).expect("write");
        let file = tmp.reopen().expect("reopen");
        let input = ChunkedFile::new(&file).unwrap();
        let filter = Filter::parse("frame").unwrap();
        let mut seen = Vec::new();
        let mut visit = |s: &Seen<'_, '_>| {
            seen.push(s.pkt.number);
            if seen.len() == 150 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let plan = Plan {
            threads: 3,
            chunk: 1000,
            parts: 2,
        };
        let opts = DissectOptions::default();
        let select = Some((&filter, &mut visit as Visit<'_>));
        let r = visit_file(input, "c", &opts, Default::default(), plan, None, select);
        assert!(r.is_ok());
        assert_eq!(seen, (1..=150).collect::<Vec<u64>>());
    }

    /// Interface blocks among the packets and then sections one after
    /// another, thousands of each: the same report, in about the time the
    /// calling thread alone takes.
    #[test]
    fn files_that_keep_changing_state() {
        let samples = crate::synth::samples::every_opcode(5);
        let mut n = Ng {
            bytes: Vec::new(),
            big: false,
        };
        n.shb(false);
        for i in 0..20_000usize {
            n.idb(1, None, None);
            if i % 3 == 0 {
                n.epb(0, i as u64, 2000, &samples[i % samples.len()], false);
            }
        }
        for i in 0..5_000usize {
            n.shb(i % 2 == 1);
            n.idb(1, Some(9), None);
            n.epb(0, i as u64, 2000, &samples[i % samples.len()], false);
        }
        let want = sequential(&n.bytes);
        assert!(want.contains("\"frames\": 11667"), "{want}");
        for chunk in [4096, 65_536] {
            for threads in [2, 4] {
                let got = chunked(
                    &n.bytes,
                    Plan {
                        threads,
                        chunk,
                        parts: threads - 1,
                    },
                );
                assert_eq!(
                    got.as_ref(),
                    Some(&want),
                    "chunk {chunk}, {threads} threads"
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]

        /// Built pcapng files (sections in both byte orders, interfaces
        /// appearing mid-file, options, skipped and unknown blocks), then
        /// damaged and cut: the chunked reader's report is the sequential
        /// one, with any chunk size and thread count.
        #[test]
        fn chunked_pcapng_agrees_with_the_sequential_reader(
            items in prop::collection::vec(item(), 1..120),
            damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
            cut in prop::option::of(any::<prop::sample::Index>()),
            chunk in 16u64..3000,
            threads in 2usize..4,
        ) {
            let samples = crate::synth::samples::every_opcode(3);
            let mut items = items;
            items.insert(0, Item::Idb(1, None, None));
            let mut bytes = build_with(&items, frame(&samples));
            damage_and_cut(&mut bytes, &damage, cut);
            let want = sequential(&bytes);
            let filter = Filter::parse(FILTERS[chunk as usize % FILTERS.len()]).unwrap();
            let visited = visited_sequentially(&bytes, &filter);
            if let Some(got) = visited_chunked(&bytes, Plan { threads, chunk, parts: threads }, &filter) {
                prop_assert_eq!(got, visited);
            }
            if let Some(got) = chunked(&bytes, Plan { threads, chunk, parts: threads - 1 }) {
                prop_assert_eq!(got, want);
            }
        }
    }
}
