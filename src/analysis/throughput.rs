//! Payload throughput per flow over time (README, "Timing": `throughput`).
//!
//! The bin width is not known until the capture ends (by default the
//! capture is split in at most [`AUTO_BINS`] bins), so the frame loop
//! counts in bins of `base × 2^k` ns from the capture's first frame, with
//! `k` raised whenever the capture grows past the bins allowed (each flow
//! merges its own bins by pairs when it next sees a frame, or at the end):
//! every figure is exact. Each flow keeps only its non-empty bins, at most
//! [`AUTO_BINS`] (or [`MAX_FIXED_BINS`] with `--timeline BIN`).

use crate::wire::Psn;
use serde::Serialize;

/// Bins the capture is split in by default, at most: their width doubles
/// as the capture grows, so there are between 101 and 200 (fewer for a
/// capture shorter than 200 of the shortest bins).
pub const AUTO_BINS: u64 = 200;
/// The shortest bin by default (2^10 ns): narrower bins would hold a part
/// of one frame.
pub const MIN_AUTO_BIN_NS: u64 = 1 << 10;
/// Bins a capture spans at most with `--timeline BIN`: past it the bin is
/// doubled (with a warning).
pub const MAX_FIXED_BINS: u64 = 1 << 16;

/// The grain every flow counts in, for the whole capture.
#[derive(Debug, Clone)]
pub struct Timeline {
    origin: Option<u64>,
    /// [`MIN_AUTO_BIN_NS`], or the bin `--timeline BIN` asked for.
    base: u64,
    fixed: bool,
    shift: u32,
    /// The grain now: `base << shift`.
    grain: u64,
    limit: u64,
    max_ts: u64,
    /// Whether the report lists the series (`--timeline`).
    pub series: bool,
}

impl Timeline {
    /// `bin`: `--timeline BIN`; `series`: whether `--timeline` was given.
    pub fn new(bin: Option<u64>, series: bool) -> Self {
        let (base, fixed, limit) = match bin {
            Some(b) if b > 0 => (b, true, MAX_FIXED_BINS),
            _ => (MIN_AUTO_BIN_NS, false, AUTO_BINS),
        };
        Timeline {
            origin: None,
            base,
            fixed,
            shift: 0,
            grain: base,
            limit,
            max_ts: 0,
            series,
        }
    }

    /// The capture's first frame: where bin 0 starts.
    #[inline]
    pub fn start(&mut self, ts: u64) {
        if self.origin.is_none() {
            self.origin = Some(ts);
            self.max_ts = ts;
        }
    }

    /// The capture's last frame: the bins span the whole capture.
    pub fn end(&mut self, last: u64) {
        let origin = *self.origin.get_or_insert(last);
        let off = last.saturating_sub(origin);
        if off / self.grain >= self.limit {
            self.widen(off);
        }
        self.max_ts = self.max_ts.max(last);
    }

    /// Makes the grain what it would be had this timeline also placed
    /// what `other` (of the same capture and origin) placed: the grain
    /// follows the latest time placed.
    pub fn join(&mut self, other: &Timeline) {
        // Without a frame, neither placed anything.
        if self.origin.is_none() || other.origin != self.origin {
            return;
        }
        if other.max_ts > self.max_ts {
            let off = other
                .max_ts
                .saturating_sub(self.origin.unwrap_or(other.max_ts));
            if off / self.grain >= self.limit {
                self.widen(off);
            }
            self.max_ts = other.max_ts;
        }
    }

    /// The grain index of `ts` and the grain's exponent.
    #[inline]
    fn place(&mut self, ts: u64) -> (u32, u32) {
        let origin = *self.origin.get_or_insert(ts);
        let off = ts.saturating_sub(origin);
        // By default the grain is a power of two: a shift, not a division.
        let idx = if self.fixed {
            off / self.grain
        } else {
            off >> (self.shift + MIN_AUTO_BIN_NS.trailing_zeros())
        };
        if idx >= self.limit {
            self.widen(off);
            return self.place(ts);
        }
        self.max_ts = self.max_ts.max(ts);
        (idx as u32, self.shift)
    }

    #[cold]
    fn widen(&mut self, off: u64) {
        while off / self.grain >= self.limit && self.shift < 63 {
            self.shift += 1;
            self.grain = self.base.saturating_mul(1 << self.shift);
        }
    }

    /// The report's bin width: `--timeline BIN` (doubled as often as the
    /// capture needed), else the shortest 2^k ns, at least
    /// [`MIN_AUTO_BIN_NS`], that splits the capture in at most
    /// [`AUTO_BINS`] bins.
    pub fn bin_ns(&self) -> u64 {
        self.grain
    }

    /// The bin `--timeline BIN` asked for, when the capture made it wider.
    pub fn widened(&self) -> Option<(u64, u64)> {
        (self.fixed && self.shift > 0).then_some((self.base, self.grain))
    }

    /// The bin width that [`bin_ns`](Self::bin_ns) gives a capture from
    /// `first` to `last`, for those who build captures (`gen`'s truth).
    pub fn bin_for(first: u64, last: u64, bin: Option<u64>) -> u64 {
        let mut t = Timeline::new(bin, false);
        t.start(first);
        t.end(last);
        t.bin_ns()
    }

    /// The capture's first frame's time, once it was seen.
    pub fn started(&self) -> Option<u64> {
        self.origin
    }

    /// Where bin 0 starts.
    pub fn origin(&self) -> u64 {
        self.origin.unwrap_or(0)
    }
}

/// One grain of one flow: 16 bytes.
#[derive(Debug, Clone, Copy, Default)]
struct Grain {
    idx: u32,
    packets: u32,
    bytes: u64,
}

/// Non-empty grains in time order: the latest in `cur` (a frame touches
/// only it until its grain ends), the others in `list`.
#[derive(Debug, Default)]
struct Grains {
    cur: Option<Grain>,
    list: Vec<Grain>,
}

impl Grains {
    #[inline]
    fn add(&mut self, idx: u32, bytes: u64) {
        match &mut self.cur {
            Some(g) if g.idx == idx => {
                g.packets += 1;
                g.bytes += bytes;
            }
            Some(g) if g.idx > idx => self.insert(idx, bytes),
            None if self.list.last().is_some_and(|g| g.idx >= idx) => self.insert(idx, bytes),
            cur => {
                let new = Grain {
                    idx,
                    packets: 1,
                    bytes,
                };
                if let Some(done) = cur.replace(new) {
                    self.list.push(done);
                }
            }
        }
    }

    /// A frame earlier than the latest (time went backwards).
    #[cold]
    fn insert(&mut self, idx: u32, bytes: u64) {
        self.list.extend(self.cur.take());
        match self.list.binary_search_by_key(&idx, |g| g.idx) {
            Ok(i) => {
                self.list[i].packets += 1;
                self.list[i].bytes += bytes;
            }
            Err(i) => self.list.insert(
                i,
                Grain {
                    idx,
                    packets: 1,
                    bytes,
                },
            ),
        }
    }

    /// Merges the grains into grains `2^by` times wider.
    #[cold]
    fn coarsen(&mut self, by: u32) {
        self.list.extend(self.cur.take());
        let mut out = 0usize;
        for i in 0..self.list.len() {
            let mut g = self.list[i];
            g.idx = g.idx.checked_shr(by).unwrap_or(0);
            if out > 0 && self.list[out - 1].idx == g.idx {
                self.list[out - 1].packets += g.packets;
                self.list[out - 1].bytes += g.bytes;
            } else {
                self.list[out] = g;
                out += 1;
            }
        }
        self.list.truncate(out);
    }

    /// The report's bins: (bin, bytes, packets).
    fn bins(&mut self) -> Vec<(u64, u64, u64)> {
        self.list.extend(self.cur.take());
        self.list
            .iter()
            .map(|g| (u64::from(g.idx), g.bytes, u64::from(g.packets)))
            .collect()
    }
}

/// One flow's payload over time: all of it, and the replays' apart (they
/// are rare).
#[derive(Debug, Default)]
pub struct Rate {
    shift: u32,
    all: Grains,
    replays: Grains,
    /// With the series (`--timeline`, `--html`): the PSNs of each grain,
    /// from the flow's first.
    psns: Option<Box<PsnGrains>>,
}

/// The lowest and highest PSN (from the flow's first, modulo 2^24) of each
/// non-empty grain, in grain order.
#[derive(Debug, Default)]
struct PsnGrains {
    first: Psn,
    /// (grain, lowest, highest).
    list: Vec<(u32, u32, u32)>,
}

impl PsnGrains {
    fn add(&mut self, idx: u32, psn: Psn) {
        let rel = psn.forward_from(self.first);
        match self.list.last_mut() {
            Some(g) if g.0 == idx => {
                g.1 = g.1.min(rel);
                g.2 = g.2.max(rel);
            }
            Some(g) if g.0 > idx => match self.list.binary_search_by_key(&idx, |g| g.0) {
                Ok(i) => {
                    let g = &mut self.list[i];
                    g.1 = g.1.min(rel);
                    g.2 = g.2.max(rel);
                }
                Err(i) => self.list.insert(i, (idx, rel, rel)),
            },
            _ => self.list.push((idx, rel, rel)),
        }
    }

    fn coarsen(&mut self, by: u32) {
        let mut out: Vec<(u32, u32, u32)> = Vec::with_capacity(self.list.len());
        for &(idx, lo, hi) in &self.list {
            let idx = idx.checked_shr(by).unwrap_or(0);
            match out.last_mut() {
                Some(g) if g.0 == idx => {
                    g.1 = g.1.min(lo);
                    g.2 = g.2.max(hi);
                }
                _ => out.push((idx, lo, hi)),
            }
        }
        self.list = out;
    }
}

/// `flows[].timing.throughput`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Throughput {
    pub bin_ns: u64,
    /// Payload bits per second over the bins from the flow's first to its
    /// last with payload.
    pub mean_bps: u64,
    /// Payload bits per second of the busiest bin.
    pub peak_bps: u64,
    pub payload_bytes: u64,
    /// Payload bytes of replays (retransmissions).
    pub replayed_bytes: u64,
    /// `--timeline`: every bin from the flow's first to its last with
    /// payload (empty ones too, so that a chart can be drawn from it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Vec<Point>>,
    /// With the series: the flow's first PSN, which the series' PSNs count
    /// from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub psn_first: Option<u32>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    /// Where the bin starts.
    pub t_ns: u64,
    pub bytes: u64,
    pub replayed_bytes: u64,
    pub packets: u64,
    /// The lowest and highest PSN sent in the bin, counted from the flow's
    /// first PSN (modulo 2^24); null in a bin without payload.
    pub psn_min: Option<u32>,
    pub psn_max: Option<u32>,
}

/// Bits per second of `bytes` over `ns` (a span of up to 200 bins can
/// pass 2^64 ns when the capture's timestamps do).
fn bps(bytes: u64, ns: u128) -> u64 {
    (u128::from(bytes) * 8 * 1_000_000_000 / ns.max(1)) as u64
}

impl Rate {
    /// A frame of the flow at `ts` carrying `payload` bytes (a replay's
    /// when `replayed`).
    #[inline]
    pub fn add(&mut self, tl: &mut Timeline, ts: u64, payload: u64, replayed: bool, psn: Psn) {
        let (idx, shift) = tl.place(ts);
        if self.shift < shift {
            self.coarsen(shift);
        }
        if tl.series {
            self.psns
                .get_or_insert_with(|| {
                    Box::new(PsnGrains {
                        first: psn,
                        list: Vec::new(),
                    })
                })
                .add(idx, psn);
        }
        self.all.add(idx, payload);
        if replayed {
            self.replays.add(idx, payload);
        }
    }

    /// Hints the caches with the end of the flow's grain list, where a
    /// frame that starts a grain puts the one before (the line past the
    /// last grain too: the next goes there).
    #[inline]
    pub fn hint_end(&self) {
        if let Some(g) = self.all.list.last() {
            mapwin::prefetch_span(g, 2 * std::mem::size_of::<Grain>());
        }
    }

    #[cold]
    fn coarsen(&mut self, shift: u32) {
        let by = shift - self.shift;
        self.shift = shift;
        self.all.coarsen(by);
        self.replays.coarsen(by);
        if let Some(p) = &mut self.psns {
            p.coarsen(by);
        }
    }

    /// The flow's throughput in the capture's final bins.
    pub fn report(&mut self, tl: &Timeline) -> Option<Throughput> {
        if self.shift < tl.shift {
            self.coarsen(tl.shift);
        }
        let bin_ns = tl.bin_ns();
        let bins = self.all.bins();
        let replays = self.replays.bins();
        let (first, last) = (bins.first()?.0, bins.last()?.0);
        let payload: u64 = bins.iter().map(|b| b.1).sum();
        if payload == 0 {
            return None;
        }
        let peak = bins.iter().map(|b| b.1).max().unwrap_or(0);
        let span = u128::from(last - first + 1) * u128::from(bin_ns);
        let series = tl.series.then(|| {
            let mut out = Vec::with_capacity((last - first + 1) as usize);
            let mut it = bins.iter().peekable();
            let mut re = replays.iter().peekable();
            let psns: &[(u32, u32, u32)] = self.psns.as_ref().map_or(&[], |p| &p.list);
            let mut ps = psns.iter().peekable();
            for b in first..=last {
                let (bytes, packets) = it.next_if(|x| x.0 == b).map_or((0, 0), |x| (x.1, x.2));
                let psn = ps.next_if(|x| u64::from(x.0) == b);
                out.push(Point {
                    t_ns: tl.origin() + b * bin_ns,
                    bytes,
                    replayed_bytes: re.next_if(|x| x.0 == b).map_or(0, |x| x.1),
                    packets,
                    psn_min: psn.map(|x| x.1),
                    psn_max: psn.map(|x| x.2),
                });
            }
            out
        });
        Some(Throughput {
            bin_ns,
            mean_bps: bps(payload, span),
            peak_bps: bps(peak, u128::from(bin_ns)),
            payload_bytes: payload,
            replayed_bytes: replays.iter().map(|b| b.1).sum(),
            psn_first: series
                .as_ref()
                .and(self.psns.as_ref())
                .map(|p| p.first.get()),
            series,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grains_widen_and_bins_stay_exact() {
        let mut tl = Timeline::new(None, true);
        tl.start(1_000);
        let mut r = Rate::default();
        // 10 000 frames of 100 bytes, 1 µs apart: 10 ms.
        for k in 0..10_000u64 {
            r.add(
                &mut tl,
                1_000 + k * 1_000,
                100,
                k % 10 == 0,
                Psn::new(k as u32),
            );
        }
        let t = r.report(&tl).unwrap();
        assert_eq!(t.payload_bytes, 1_000_000);
        assert_eq!(t.replayed_bytes, 100_000);
        let s = t.series.as_ref().unwrap();
        assert!((101..=200).contains(&s.len()), "{} bins", s.len());
        assert_eq!(s.iter().map(|p| p.bytes).sum::<u64>(), 1_000_000);
        assert_eq!(s.iter().map(|p| p.packets).sum::<u64>(), 10_000);
        assert_eq!(t.bin_ns, Timeline::bin_for(1_000, 1_000 + 9_999_000, None));
        // 800 kbit per ms, whatever the bin.
        assert!((t.mean_bps as i64 - 800_000_000).abs() < 800_000_000 / 100);
        assert!(t.peak_bps >= t.mean_bps);
        for (a, b) in s.iter().zip(s.iter().skip(1)) {
            assert_eq!(b.t_ns - a.t_ns, t.bin_ns);
        }
    }

    #[test]
    fn a_fixed_bin_is_kept_and_empty_bins_listed() {
        let mut tl = Timeline::new(Some(10_000), true);
        tl.start(0);
        let mut r = Rate::default();
        r.add(&mut tl, 5_000, 10, false, Psn::new(7));
        r.add(&mut tl, 35_000, 20, true, Psn::new(9));
        // Backwards in time: into its bin all the same.
        r.add(&mut tl, 1_000, 5, false, Psn::new(8));
        let t = r.report(&tl).unwrap();
        assert_eq!(t.bin_ns, 10_000);
        let s = t.series.unwrap();
        let bytes: Vec<u64> = s.iter().map(|p| p.bytes).collect();
        assert_eq!(bytes, [15, 0, 0, 20]);
        assert_eq!(s[3].replayed_bytes, 20);
        // PSNs from the flow's first (7): 8 came late into the first bin.
        let psns: Vec<_> = s.iter().map(|p| (p.psn_min, p.psn_max)).collect();
        assert_eq!(
            psns,
            [
                (Some(0), Some(1)),
                (None, None),
                (None, None),
                (Some(2), Some(2))
            ]
        );
        assert_eq!(t.peak_bps, 20 * 8 * 100_000);
        assert_eq!(t.mean_bps, 35 * 8 * 1_000_000_000 / 40_000);
        assert_eq!(tl.widened(), None);
    }

    #[test]
    fn a_capture_spanning_nearly_2_pow_64_ns() {
        // Found by the chunked fuzz target in CI: 128 bins of 2^57 ns
        // are 2^64 ns, and the span overflowed.
        let mut tl = Timeline::new(None, false);
        tl.start(0);
        let mut r = Rate::default();
        let tb = 1_000_000_000_000;
        r.add(&mut tl, 0, tb, false, Psn::new(0));
        r.add(&mut tl, u64::MAX - 5, tb, false, Psn::new(1));
        tl.end(u64::MAX - 5);
        let t = r.report(&tl).unwrap();
        assert_eq!(t.bin_ns, 1 << 57);
        // Bins 0 to 127: 2^64 ns, 2 TB.
        assert_eq!(t.mean_bps, ((2 * tb as u128 * 8_000_000_000) >> 64) as u64);
        assert_eq!(t.peak_bps, ((tb as u128 * 8_000_000_000) >> 57) as u64);
    }

    #[test]
    fn a_fixed_bin_too_fine_is_widened() {
        let mut tl = Timeline::new(Some(1), false);
        tl.start(0);
        let mut r = Rate::default();
        r.add(&mut tl, 0, 1, false, Psn::new(0));
        r.add(&mut tl, 1_000_000, 1, false, Psn::new(1));
        assert_eq!(tl.widened(), Some((1, 16)));
        assert_eq!(r.report(&tl).unwrap().bin_ns, 16);
    }
}
