//! Payload throughput per flow over time (README, "Timing": `throughput`).
//!
//! The bin width is not known until the capture ends (by default the
//! capture is split in about [`AUTO_BINS`] bins), so the frame loop counts
//! in a finer grain: `base × 2^k` ns from the capture's first frame, with
//! `k` raised whenever the capture grows past [`AUTO_GRAIN_BINS`] grains
//! (each flow merges its own bins by pairs when it next sees a frame, or
//! at the end). The report's bins are a whole number of grains, so every
//! figure is exact. Each flow keeps only its non-empty grains, at most
//! [`AUTO_GRAIN_BINS`] (or [`MAX_FIXED_BINS`] with `--timeline BIN`).

use serde::Serialize;

/// Bins the capture is split in by default, at most: each is a whole
/// number of grains, so there are between 144 and 200.
pub const AUTO_BINS: u64 = 200;
/// The shortest bin by default (a whole number of grains): narrower bins
/// would hold a part of one frame.
pub const MIN_AUTO_BIN_NS: u64 = 1_000;
/// Grains a capture spans at most by default.
pub const AUTO_GRAIN_BINS: u64 = 1024;
/// Bins a capture spans at most with `--timeline BIN`: past it the bin is
/// doubled (with a warning).
pub const MAX_FIXED_BINS: u64 = 1 << 16;

/// The grain every flow counts in, for the whole capture.
#[derive(Debug, Clone)]
pub struct Timeline {
    origin: Option<u64>,
    /// 1 ns, or the bin `--timeline BIN` asked for.
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
            _ => (1, false, AUTO_GRAIN_BINS),
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

    /// The grain index of `ts` and the grain's exponent.
    #[inline]
    fn place(&mut self, ts: u64) -> (u32, u32) {
        let origin = *self.origin.get_or_insert(ts);
        let off = ts.saturating_sub(origin);
        if off / self.grain >= self.limit {
            self.widen(off);
        }
        self.max_ts = self.max_ts.max(ts);
        ((off / self.grain) as u32, self.shift)
    }

    #[cold]
    fn widen(&mut self, off: u64) {
        while off / self.grain >= self.limit && self.shift < 63 {
            self.shift += 1;
            self.grain = self.base.saturating_mul(1 << self.shift);
        }
    }

    /// The report's bin width: `--timeline BIN` (doubled as often as the
    /// capture needed), else the smallest whole number of grains that
    /// splits the capture in at most [`AUTO_BINS`] bins, and at least
    /// [`MIN_AUTO_BIN_NS`].
    pub fn bin_ns(&self) -> u64 {
        if self.fixed {
            return self.grain;
        }
        let span = self.max_ts.saturating_sub(self.origin.unwrap_or(0)) / self.grain + 1;
        let floor = MIN_AUTO_BIN_NS.div_ceil(self.grain);
        self.grain * span.div_ceil(AUTO_BINS).max(floor)
    }

    /// Grains per report bin.
    fn per_bin(&self) -> u64 {
        self.bin_ns() / self.grain
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

    /// Where bin 0 starts.
    pub fn origin(&self) -> u64 {
        self.origin.unwrap_or(0)
    }
}

/// One grain of one flow.
#[derive(Debug, Clone, Copy, Default)]
struct Grain {
    idx: u32,
    packets: u32,
    bytes: u64,
    replayed: u64,
}

/// One flow's non-empty grains, in time order.
#[derive(Debug, Default)]
pub struct Rate {
    shift: u32,
    grains: Vec<Grain>,
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
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    /// Where the bin starts.
    pub t_ns: u64,
    pub bytes: u64,
    pub replayed_bytes: u64,
    pub packets: u64,
}

fn bps(bytes: u64, ns: u64) -> u64 {
    (u128::from(bytes) * 8 * 1_000_000_000 / u128::from(ns.max(1))) as u64
}

impl Rate {
    /// A frame of the flow at `ts` carrying `payload` bytes (a replay's
    /// when `replayed`).
    #[inline]
    pub fn add(&mut self, tl: &mut Timeline, ts: u64, payload: u64, replayed: bool) {
        let (idx, shift) = tl.place(ts);
        if self.shift < shift {
            self.coarsen(shift);
        }
        let replayed = if replayed { payload } else { 0 };
        match self.grains.last_mut() {
            Some(g) if g.idx == idx => {
                g.packets += 1;
                g.bytes += payload;
                g.replayed += replayed;
            }
            Some(g) if g.idx > idx => self.insert(idx, payload, replayed),
            _ => self.grains.push(Grain {
                idx,
                packets: 1,
                bytes: payload,
                replayed,
            }),
        }
    }

    /// A frame earlier than the flow's latest (time went backwards).
    #[cold]
    fn insert(&mut self, idx: u32, payload: u64, replayed: u64) {
        match self.grains.binary_search_by_key(&idx, |g| g.idx) {
            Ok(i) => {
                let g = &mut self.grains[i];
                g.packets += 1;
                g.bytes += payload;
                g.replayed += replayed;
            }
            Err(i) => self.grains.insert(
                i,
                Grain {
                    idx,
                    packets: 1,
                    bytes: payload,
                    replayed,
                },
            ),
        }
    }

    /// Merges the grains into grains `2^(shift - self.shift)` times wider.
    #[cold]
    fn coarsen(&mut self, shift: u32) {
        let by = shift - self.shift;
        self.shift = shift;
        let mut out = 0usize;
        for i in 0..self.grains.len() {
            let mut g = self.grains[i];
            g.idx = g.idx.checked_shr(by).unwrap_or(0);
            if out > 0 && self.grains[out - 1].idx == g.idx {
                let o = &mut self.grains[out - 1];
                o.packets += g.packets;
                o.bytes += g.bytes;
                o.replayed += g.replayed;
            } else {
                self.grains[out] = g;
                out += 1;
            }
        }
        self.grains.truncate(out);
    }

    /// The flow's throughput in the capture's final bins.
    pub fn report(&mut self, tl: &Timeline) -> Option<Throughput> {
        if self.shift < tl.shift {
            self.coarsen(tl.shift);
        }
        let per = tl.per_bin().max(1);
        let bin_ns = tl.bin_ns();
        // The report's bins: (index, bytes, replayed, packets).
        let mut bins: Vec<(u64, u64, u64, u64)> = Vec::new();
        for g in &self.grains {
            let b = u64::from(g.idx) / per;
            match bins.last_mut() {
                Some(last) if last.0 == b => {
                    last.1 += g.bytes;
                    last.2 += g.replayed;
                    last.3 += u64::from(g.packets);
                }
                _ => bins.push((b, g.bytes, g.replayed, u64::from(g.packets))),
            }
        }
        let (first, last) = (bins.first()?.0, bins.last()?.0);
        let payload: u64 = bins.iter().map(|b| b.1).sum();
        if payload == 0 {
            return None;
        }
        let peak = bins.iter().map(|b| b.1).max().unwrap_or(0);
        let span = (last - first + 1) * bin_ns;
        let series = tl.series.then(|| {
            let mut out = Vec::with_capacity((last - first + 1) as usize);
            let mut it = bins.iter().peekable();
            for b in first..=last {
                let t_ns = tl.origin() + b * bin_ns;
                match it.next_if(|x| x.0 == b) {
                    Some(&(_, bytes, replayed_bytes, packets)) => out.push(Point {
                        t_ns,
                        bytes,
                        replayed_bytes,
                        packets,
                    }),
                    None => out.push(Point {
                        t_ns,
                        bytes: 0,
                        replayed_bytes: 0,
                        packets: 0,
                    }),
                }
            }
            out
        });
        Some(Throughput {
            bin_ns,
            mean_bps: bps(payload, span),
            peak_bps: bps(peak, bin_ns),
            payload_bytes: payload,
            replayed_bytes: bins.iter().map(|b| b.2).sum(),
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
            r.add(&mut tl, 1_000 + k * 1_000, 100, k % 10 == 0);
        }
        let t = r.report(&tl).unwrap();
        assert_eq!(t.payload_bytes, 1_000_000);
        assert_eq!(t.replayed_bytes, 100_000);
        let s = t.series.as_ref().unwrap();
        assert!((144..=200).contains(&s.len()), "{} bins", s.len());
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
        r.add(&mut tl, 5_000, 10, false);
        r.add(&mut tl, 35_000, 20, true);
        // Backwards in time: into its bin all the same.
        r.add(&mut tl, 1_000, 5, false);
        let t = r.report(&tl).unwrap();
        assert_eq!(t.bin_ns, 10_000);
        let s = t.series.unwrap();
        let bytes: Vec<u64> = s.iter().map(|p| p.bytes).collect();
        assert_eq!(bytes, [15, 0, 0, 20]);
        assert_eq!(s[3].replayed_bytes, 20);
        assert_eq!(t.peak_bps, 20 * 8 * 100_000);
        assert_eq!(t.mean_bps, 35 * 8 * 1_000_000_000 / 40_000);
        assert_eq!(tl.widened(), None);
    }

    #[test]
    fn a_fixed_bin_too_fine_is_widened() {
        let mut tl = Timeline::new(Some(1), false);
        tl.start(0);
        let mut r = Rate::default();
        r.add(&mut tl, 0, 1, false);
        r.add(&mut tl, 1_000_000, 1, false);
        assert_eq!(tl.widened(), Some((1, 16)));
        assert_eq!(r.report(&tl).unwrap().bin_ns, 16);
    }
}
