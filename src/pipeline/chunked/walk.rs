//! A chunk's records walked and dissected to facts, in the pcap or
//! pcapng state it was taken in.

use std::sync::Arc;

use super::MAX_FACTS_PER_CHUNK;
use super::Packets;
use super::RELEASE_GROUP;
use crate::analysis::Facts;
use crate::capture::CaptureError;
use crate::capture::FrameMeta;
use crate::capture::Item;
use crate::capture::MAX_WARNINGS;
use crate::capture::NgCursor;
use crate::capture::NgStateId;
use crate::capture::PREFETCH_AHEAD;
use crate::capture::PcapLayout;
use crate::capture::Section;
use crate::dissect::DissectOptions;
use crate::dissect::dissect;
use crate::filter::Filter;
/// How a thread reads records: each thread has its own.
pub(super) enum Walker {
    Pcap(PcapLayout),
    /// A pcapng cursor in the state that [`Walker::id`] names.
    PcapNg(NgCursor),
}

impl Walker {
    /// The pcapng state the walker reads in (always the same for pcap).
    pub(super) fn id(&self) -> NgStateId {
        match self {
            Walker::Pcap(_) => (0, 0),
            Walker::PcapNg(c) => c.id(),
        }
    }

    /// The record at `buf[at..]` (file offset `offset`), its ranges and
    /// offsets in `buf`; `None` for a pcapng section header or interface
    /// block.
    pub(super) fn item(&mut self, buf: &[u8], at: usize, offset: u64) -> Option<Item> {
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
    pub(super) fn resync(&self, buf: &[u8], base: u64, limit: usize) -> Option<usize> {
        match self {
            Walker::Pcap(layout) => layout.resync(buf, 0, limit, true),
            Walker::PcapNg(c) => c.resync(buf, base, 0, limit, true),
        }
    }

    pub(super) fn take_warnings(&mut self) -> (Vec<String>, u64) {
        match self {
            Walker::Pcap(_) => (Vec::new(), 0),
            Walker::PcapNg(c) => c.take_warnings(),
        }
    }

    /// Brings a worker's walker to the pcapng state the calling thread
    /// published. A walker that cannot be rebuilt keeps its old state: its
    /// chunks are then read again by the calling thread.
    pub(super) fn sync(&mut self, map: &[u8], published: &Published) {
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
pub(super) type Published = Option<(NgStateId, Arc<Section>)>;

/// Warnings in file order: the first [`MAX_WARNINGS`] kept, all counted.
#[derive(Default)]
pub(super) struct Warnings {
    pub(super) kept: Vec<String>,
    pub(super) count: u64,
}

impl Warnings {
    pub(super) fn push(&mut self, w: String) {
        self.count += 1;
        if self.kept.len() < MAX_WARNINGS {
            self.kept.push(w);
        }
    }

    /// Adds warnings made elsewhere: kept ones, and how many more.
    pub(super) fn add(&mut self, (kept, more): (Vec<String>, u64)) {
        for w in kept {
            self.push(w);
        }
        self.count += more;
    }
}

/// How a chunk's walk over its records ended.
#[derive(Debug)]
pub(super) enum End {
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
pub(super) struct Chunk {
    /// Where its first record was taken to be (`None`: no record found).
    pub(super) start: Option<u64>,
    /// The pcapng state it was read in.
    pub(super) state: NgStateId,
    pub(super) end: End,
    /// Frame numbers count from 1 within the chunk.
    pub(super) packets: Packets,
    /// Warnings about its records: kept ones, and how many more.
    pub(super) warnings: (Vec<String>, u64),
    /// The frames the selecting filter may pass, in order (none without
    /// a filter).
    pub(super) candidates: Vec<Candidate>,
}

/// A frame a worker found the filter may pass: enough to build its
/// [`Frame`] again from the map, for the analysis thread to dissect it
/// once more with what the analysis says of it.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    /// Its place among the chunk's facts.
    pub(super) index: usize,
    pub(super) meta: FrameMeta,
    /// Where its record starts and its data lie, in the file.
    pub(super) offset: u64,
    pub(super) data: std::ops::Range<usize>,
}

/// The file and what every chunk job needs.
pub(super) struct Job<'a> {
    pub(super) map: &'a mapwin::FileMap,
    pub(super) size: u64,
    /// Where the first record (after the file's header) starts.
    pub(super) data_start: u64,
    pub(super) chunk: u64,
    pub(super) opts: &'a DissectOptions,
    /// With a filter, workers dissect every frame in full and note the
    /// ones it may pass ([`Filter::may_match`]).
    pub(super) prefilter: Option<&'a Filter>,
}

impl Job<'_> {
    pub(super) fn chunks(&self) -> usize {
        self.size.div_ceil(self.chunk).max(1) as usize
    }

    /// Gives back the pages of the chunks of release group `g`.
    pub(super) fn release_group(&self, g: usize) {
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
    pub(super) fn bounds(&self, k: usize) -> (u64, u64) {
        let hi = ((k as u64 + 1) * self.chunk).min(self.size);
        ((k as u64 * self.chunk).max(self.data_start).min(hi), hi)
    }

    /// Dissects chunk `k` with `walker`, from `known_start` when the caller
    /// knows where its first record is, else from a guess. The chunk's
    /// pages are filled in first (if `populate`); the record that runs past
    /// its end is read from the map like the others.
    pub(super) fn run(
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
