//! A pcap file analysed by every core: the file is mapped once and cut into
//! chunks that worker threads read and dissect (with the ICRC, the costly part) in
//! any order, while the calling thread feeds the chunks to the one
//! [`Analyzer`] in file order, and dissects chunks itself when it would
//! otherwise wait.
//!
//! A chunk's first record is found by a guess ([`PcapLayout::resync`]); the
//! calling thread accepts a chunk only when its guessed start is where the
//! previous chunk's last record ended, and otherwise dissects it again from
//! the right offset. The report is therefore the sequential one, frame for
//! frame (tested, including files built to fool the guess).

use std::fs::File;
use std::sync::{Condvar, Mutex};

use super::Progress;
use crate::analysis::{AnalysisOptions, Analyzer, CaptureInfo, Facts, Report};
use crate::capture::{
    CaptureError, Format, Frame, PCAP_HEADER_LEN, PREFETCH_AHEAD, PcapLayout, Record, cut_warning,
};
use crate::dissect::DissectOptions;

/// Bytes per chunk: large enough that per-chunk costs (a populate call, a
/// hand-over) vanish, small enough that the chunks in flight stay a few MiB.
pub const CHUNK: u64 = 2 << 20;
/// Chunks whose pages are given back together, once all of them are
/// dissected: one release (and one TLB flush of the other cores) per this
/// many chunks, for up to this many chunks' pages resident per group in
/// progress. 8 was no faster than 4 (a 2-core VM), with 5 MiB more peak RSS.
const RELEASE_GROUP: usize = 4;

/// How the chunked reader is set up.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Threads in all, the calling one included (at least 2).
    pub threads: usize,
    /// Bytes per chunk.
    pub chunk: u64,
}

type Packets = Vec<Facts>;

/// How a chunk's walk over its records ended.
#[derive(Debug)]
enum End {
    /// The next record starts here, at or after the chunk's end.
    Next(u64),
    /// The last record ended exactly at the end of the file.
    Eof,
    /// The file ends inside the record at `at`.
    Cut { at: u64, needed: usize, have: usize },
    /// The record at `at` claims more than [`MAX_RECORD_LEN`] bytes.
    Absurd { at: u64, len: u32 },
}

/// One chunk, dissected.
struct Chunk {
    /// Where its first record was taken to be (`None`: no record found).
    start: Option<u64>,
    end: End,
    /// Frame numbers count from 1 within the chunk.
    packets: Packets,
}

/// The file and what every chunk job needs.
struct Job<'a> {
    map: &'a mapwin::FileMap,
    size: u64,
    layout: PcapLayout,
    chunk: u64,
    opts: &'a DissectOptions,
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
        let lo = (k as u64 * self.chunk).max(PCAP_HEADER_LEN as u64);
        (lo, ((k as u64 + 1) * self.chunk).min(self.size))
    }

    /// Dissects chunk `k`, from `known_start` when the caller knows where
    /// its first record is, else from a guess. The chunk's pages are filled
    /// in first; the record that runs past its end is read from the map
    /// like the others.
    fn run(&self, k: usize, known_start: Option<u64>, mut packets: Packets) -> Chunk {
        // Frames so far. `packets` still holds the facts of its last use:
        // they are overwritten, and the rest cut off at the end.
        let mut n = 0usize;
        let (lo, hi) = self.bounds(k);
        let from = known_start.unwrap_or(lo).min(self.size);
        let limit = (hi - from.min(hi)) as usize;
        self.map.populate(from as usize, limit);
        // From the chunk's start to the end of the file.
        let buf: &[u8] = self.map.get(from as usize..).unwrap_or_default();
        let first = match known_start {
            Some(_) => Some(0),
            None => self.layout.resync(buf, 0, limit, true),
        };
        let Some(mut at) = first else {
            packets.clear();
            return Chunk {
                start: None,
                end: End::Next(hi),
                packets,
            };
        };
        let start = Some(from + at as u64);
        let mut hinted = at;
        let end = loop {
            if at >= limit {
                break if at == buf.len() {
                    End::Eof
                } else {
                    End::Next(from + at as u64)
                };
            }
            match self.layout.record(buf, at) {
                Record::Frame {
                    ts_ns,
                    len,
                    data,
                    next,
                } => {
                    // Hint the bytes up to PREFETCH_AHEAD past this frame
                    // that earlier frames have not hinted.
                    let ahead = next + PREFETCH_AHEAD;
                    if ahead > hinted {
                        mapwin::prefetch(buf, hinted.max(next), ahead - hinted.max(next));
                        hinted = ahead;
                    }
                    let data = buf.get(data).unwrap_or_default();
                    self.put(&mut packets, n, ts_ns, len, data, from + at as u64);
                    n += 1;
                    at = next;
                }
                Record::Incomplete { needed } => {
                    break End::Cut {
                        at: from + at as u64,
                        needed,
                        have: buf.len() - at,
                    };
                }
                Record::Absurd { len } => {
                    break End::Absurd {
                        at: from + at as u64,
                        len,
                    };
                }
            }
        };
        packets.truncate(n);
        Chunk {
            start,
            end,
            packets,
        }
    }

    /// The facts of the chunk's `n`th frame (from 0), numbered from 1
    /// within its chunk.
    fn put(&self, packets: &mut Packets, n: usize, ts_ns: u64, len: u32, data: &[u8], offset: u64) {
        let frame = Frame {
            number: n as u64 + 1,
            ts_ns,
            len,
            caplen: data.len() as u32,
            link: self.layout.link,
            data,
            offset: offset as usize,
        };
        Facts::put_from_frame(packets, n, &frame, self.opts);
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
    stop: bool,
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
        drop(st);
        self.changed.notify_all();
        if let Some(g) = release {
            job.release_group(g);
        }
    }

    /// A worker: dissects chunks until there are none left.
    fn work(&self, job: &Job<'_>) {
        loop {
            let (k, buf) = {
                let mut st = self.lock();
                loop {
                    if st.stop || st.next >= self.total {
                        // No chunk is left to fill a buffer: the spare ones
                        // are freed here, while the analysis finishes,
                        // rather than after it.
                        let spare = std::mem::take(&mut st.spare);
                        drop(st);
                        drop(spare);
                        return;
                    }
                    if let Some(c) = self.claim(&mut st) {
                        break c;
                    }
                    st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
                }
            };
            let chunk = job.run(k, None, buf);
            self.finished(k, chunk, job);
        }
    }

    /// Chunk `k` for the analysis, dissecting others while it is not ready.
    fn take(&self, k: usize, job: &Job<'_>) -> Chunk {
        let mut st = self.lock();
        loop {
            if let Some(c) = st.done[k % self.ahead].take() {
                return c;
            }
            if let Some((j, buf)) = self.claim(&mut st) {
                drop(st);
                let chunk = job.run(j, None, buf);
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
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Chunk `k` is analysed: its buffer goes back, and one more chunk may
    /// be taken.
    fn consumed(&self, k: usize, packets: Packets) {
        let mut st = self.lock();
        st.consumed = k + 1;
        st.spare.push(packets);
        drop(st);
        self.changed.notify_all();
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// A classic pcap file opened for the chunked reader.
#[derive(Debug, Clone, Copy)]
pub struct PcapFile<'a> {
    pub file: &'a File,
    pub size: u64,
    pub layout: PcapLayout,
}

impl<'a> PcapFile<'a> {
    /// `None` when `file` is not a regular file holding a classic pcap
    /// header (pcapng, a pipe, a bad header: the sequential reader's cases).
    pub fn new(file: &'a File) -> Option<PcapFile<'a>> {
        use std::os::unix::fs::FileExt;
        let meta = file.metadata().ok()?;
        if !meta.is_file() {
            return None;
        }
        let mut head = [0u8; PCAP_HEADER_LEN];
        file.read_exact_at(&mut head, 0).ok()?;
        let layout = PcapLayout::parse(&head).ok().flatten()?;
        Some(PcapFile {
            file,
            size: meta.len(),
            layout,
        })
    }
}

/// Analyses a pcap file with `plan.threads` threads.
pub fn analyze_pcap(
    pcap: PcapFile<'_>,
    name: &str,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    plan: Plan,
    mut progress: Option<Progress<'_>>,
) -> Result<Report, CaptureError> {
    let PcapFile { file, layout, .. } = pcap;
    let map = mapwin::FileMap::map(file).map_err(|source| CaptureError::Io {
        path: "<input>".into(),
        source,
    })?;
    let job = Job {
        map: &map,
        size: map.len() as u64,
        layout,
        chunk: plan.chunk.max(1),
        opts: dissect_opts,
    };
    // Chunks in flight beyond the one being analysed. The calling thread
    // takes chunks far ahead when its next one is still being decoded, so
    // with only two per thread the workers found the window full and
    // waited (5-21 ms of a 150 ms run on 2 cores); a dozen more removes
    // that, at ~0.5 MB of facts each.
    let ahead = 2 * plan.threads.max(2) + 12;
    let shared = Shared {
        state: Mutex::new(State {
            next: 0,
            consumed: 0,
            done: (0..ahead).map(|_| None).collect(),
            spare: Vec::new(),
            dissected: vec![0; job.chunks().div_ceil(RELEASE_GROUP)],
            stop: false,
        }),
        changed: Condvar::new(),
        ahead,
        total: job.chunks(),
        facts_per_chunk: (job.chunk / 256) as usize,
    };
    let mut an = Analyzer::new(opts);
    let mut warnings = Vec::new();
    let result = std::thread::scope(|scope| {
        for _ in 1..plan.threads.max(2) {
            scope.spawn(|| shared.work(&job));
        }
        let result = feed(&job, &shared, &mut an, &mut warnings, &mut progress);
        shared.stop();
        result
    });
    result?;
    Ok(an.finish(CaptureInfo {
        file: name.to_string(),
        format: Format::Pcap {
            nanos: layout.nanos,
            big_endian: layout.big_endian,
        }
        .to_string(),
        ts_resolution_ns: if layout.nanos { 1 } else { 1000 },
        warnings,
    }))
}

/// The analysis side: chunks in file order, each checked against where the
/// previous one ended.
fn feed(
    job: &Job<'_>,
    shared: &Shared,
    an: &mut Analyzer,
    warnings: &mut Vec<String>,
    progress: &mut Option<Progress<'_>>,
) -> Result<(), CaptureError> {
    // Where the next record really starts.
    let mut pos = PCAP_HEADER_LEN as u64;
    let mut frames = 0u64;
    for k in 0..shared.total {
        let (_, hi) = job.bounds(k);
        let mut chunk = shared.take(k, job);
        if pos >= hi {
            // A record from an earlier chunk covers all of this one.
            shared.consumed(k, chunk.packets);
            continue;
        }
        if chunk.start != Some(pos) {
            // The guess was wrong: again from the right offset, whose pages
            // are then given back on their own (the group may be given
            // back already).
            chunk = job.run(k, Some(pos), chunk.packets);
            job.map
                .release(pos as usize, hi.saturating_sub(pos) as usize);
        }
        for facts in &mut chunk.packets {
            facts.number += frames;
            an.observe(facts);
        }
        frames += chunk.packets.len() as u64;
        let end = chunk.end;
        shared.consumed(k, chunk.packets);
        match end {
            End::Next(next) => {
                pos = next;
                if let Some(p) = progress.as_mut() {
                    p(pos.min(job.size) as usize, job.size as usize, frames);
                }
            }
            End::Eof => break,
            End::Cut { at, needed, have } => {
                warnings.push(cut_warning(at, needed, have, frames));
                break;
            }
            End::Absurd { at, len } => {
                return Err(CaptureError::AbsurdLength {
                    frame: frames + 1,
                    offset: at as usize,
                    len: u64::from(len),
                });
            }
        }
    }
    Ok(())
}
