//! DCQCN reaction: did a sender slow down after its CNPs? For each CNP a
//! data flow's sender received, its payload rate in a window before the
//! CNP against a window of the same length starting 5 µs after it. The
//! payload of a flow is binned (window / 50 per bin, 256 bins kept) from
//! its first CE mark on: flows that never see congestion pay nothing.
//!
//! After a CNP the sender reacted to, the flow is followed until its rate
//! is back: the first window (of the same length, from 5 µs after the
//! last CNP received so far) with payload in every bin, nothing replayed
//! or paused, and at least 0.97 of the bytes of the window before the
//! first CNP of the train. Its start, less that last CNP, is a recovery.

use serde::Serialize;

/// Bins per window.
const BINS_PER_WINDOW: u64 = 50;
/// Bins kept: two windows and the 5 µs between them, with room.
const RING: usize = 256;
/// The after window starts this long after the CNP.
pub const AFTER_DELAY_NS: u64 = 5_000;
/// CNPs waiting for their after window, per flow.
const MAX_WAITING: usize = 64;
/// Reacted: the rate after is at most this share of the rate before.
pub const REACTED: f64 = 0.9;
/// Ignored: at least this share, while backlogged.
pub const IGNORED: f64 = 0.97;

const REPLAY: u8 = 1;
const PAUSED: u8 = 2;

/// One flow's payload history and the CNPs waiting to be judged.
#[derive(Debug, Clone)]
pub struct CcState {
    bin_ns: u64,
    /// The first bin's time.
    origin: u64,
    /// The newest bin written.
    last: u64,
    /// Bin `last`, kept here while frames add to it; it goes to the ring
    /// when a later bin starts.
    cur: Bin,
    /// The bins before this one hold nothing (the history starts here, or
    /// after a gap longer than the ring).
    fresh: u64,
    /// The older bins: slot `k % RING` holds bin `k` for every `k` from
    /// `fresh` (and `last - RING + 1`) up to `last` (the bins a later one
    /// skips over are cleared as it starts).
    ring: Box<Ring>,
    /// [`AFTER_DELAY_NS`] in bins.
    delay_bins: u64,
    waiting: Vec<u64>,
    /// The bin by which the first waiting CNP can be judged (its after
    /// window's end), `u64::MAX` with none waiting.
    due: u64,
    pub report: CcReport,
    ratio_sum: f64,
    recovering: Option<Recovering>,
    recovery_sum: u128,
}

/// One bin of a flow's history.
#[derive(Debug, Clone, Copy, Default)]
struct Bin {
    bytes: u32,
    flags: u8,
}

/// The older bins' bytes and flags, apart: 1.25 KiB a flow (with each
/// bin's number in its slot they took 4 KiB: on an incast of 4 096 QPs the
/// report peaked at 67 MiB against 56, in 198 ms against 174 at best;
/// bench/README).
#[derive(Debug, Clone)]
struct Ring {
    bytes: [u32; RING],
    flags: [u8; RING],
}

impl Ring {
    fn get(&self, k: u64) -> (u32, u8) {
        let i = k as usize % RING;
        (self.bytes[i], self.flags[i])
    }

    fn set(&mut self, k: u64, bin: Bin) {
        let i = k as usize % RING;
        self.bytes[i] = bin.bytes;
        self.flags[i] = bin.flags;
    }

    /// Empties bins `from..to` (at most [`RING`] of them).
    fn clear(&mut self, from: u64, to: u64) {
        debug_assert!(to - from <= RING as u64);
        let (a, n) = (from as usize % RING, (to - from) as usize);
        let (first, wrapped) = if a + n > RING {
            (a..RING, 0..a + n - RING)
        } else {
            (a..a + n, 0..0)
        };
        for r in [first, wrapped] {
            self.bytes[r.clone()].fill(0);
            self.flags[r].fill(0);
        }
    }
}

impl Bin {
    fn add(&mut self, payload: u32, replay: bool, paused: bool) {
        if replay {
            self.flags |= REPLAY;
        } else {
            self.bytes = self.bytes.saturating_add(payload);
        }
        if paused {
            self.flags |= PAUSED;
        }
    }
}

/// A reacted train of CNPs, waiting for the rate to come back.
#[derive(Debug, Clone, Copy)]
struct Recovering {
    /// The last CNP received, ns.
    from: u64,
    /// The bytes of the window before the train's first reacted CNP.
    target: u64,
    /// The next window start to try, in bins.
    next: u64,
}

/// A window of bins being slid over: its bytes, and how many of its bins
/// are empty or flagged.
#[derive(Debug, Clone, Copy, Default)]
struct Sliding {
    start: u64,
    bytes: u64,
    empty: u32,
    flagged: u32,
}

impl Sliding {
    /// Adds (`sign` 1) or takes out (`sign` -1) a bin.
    fn add(&mut self, (bytes, flags): (u32, u8), sign: i32) {
        let d = |c: bool| u32::from(c);
        if sign > 0 {
            self.bytes += u64::from(bytes);
            self.empty += d(bytes == 0);
            self.flagged += d(flags != 0);
        } else {
            self.bytes -= u64::from(bytes);
            self.empty -= d(bytes == 0);
            self.flagged -= d(flags != 0);
        }
    }

    /// One bin on: `out` leaves at the start, `into` comes in at the end.
    fn step(&mut self, out: (u32, u8), into: (u32, u8)) {
        self.add(out, -1);
        self.add(into, 1);
        self.start += 1;
    }
}

/// `flows[].cc`: the CNPs of a flow's sender and what followed each.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct CcReport {
    pub cnps: u64,
    /// The rate after was at most 0.9 of the rate before.
    pub reacted: u64,
    /// At least 0.97 of it, the sender sending all along.
    pub ignored: u64,
    pub indeterminate: u64,
    pub reasons: Reasons,
    /// The mean of after / before over the CNPs judged by rate.
    pub mean_ratio: Option<f64>,
    /// Reacted trains of CNPs after which the rate came back.
    pub recoveries: u64,
    /// The mean and the longest time from a train's last CNP to the start
    /// of the first window back at the rate before it.
    pub recovery_ns: Option<u64>,
    pub recovery_max_ns: Option<u64>,
}

/// Why CNPs could not be judged.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Reasons {
    /// The history starts at the flow's first CE mark, after the window
    /// before this CNP began.
    pub no_history: u64,
    /// Replayed packets in a window.
    pub replays: u64,
    /// A window had frames sent while their priority was paused.
    pub paused: u64,
    /// The sender was idle in a window (a bin with no payload).
    pub idle: u64,
    /// A ratio between 0.9 and 0.97.
    pub unclear: u64,
    /// The capture ended before the window after.
    pub capture_end: u64,
}

impl CcState {
    /// History from `ts` on, in bins of `window_ns / 50`.
    pub fn new(ts: u64, window_ns: u64) -> Self {
        let bin_ns = (window_ns / BINS_PER_WINDOW).max(1);
        CcState {
            bin_ns,
            origin: ts,
            last: 0,
            cur: Bin::default(),
            fresh: 0,
            ring: Box::new(Ring {
                bytes: [0; RING],
                flags: [0; RING],
            }),
            delay_bins: AFTER_DELAY_NS.div_ceil(bin_ns),
            waiting: Vec::new(),
            due: u64::MAX,
            report: CcReport::default(),
            ratio_sum: 0.0,
            recovering: None,
            recovery_sum: 0,
        }
    }

    fn bin(&self, ts: u64) -> u64 {
        ts.saturating_sub(self.origin) / self.bin_ns
    }

    /// Sets [`CcState::due`] after `waiting` changed.
    fn set_due(&mut self) {
        self.due = self.waiting.first().map_or(u64::MAX, |&c| {
            self.bin(c)
                .saturating_add(self.delay_bins)
                .saturating_add(BINS_PER_WINDOW)
        });
    }

    /// A frame of the flow: `payload` bytes (a replay's are flagged, not
    /// counted), sent while paused or not.
    pub fn frame(&mut self, ts: u64, payload: u32, replay: bool, paused: bool) {
        let b = self.bin(ts);
        if b >= self.due {
            self.judge_until(b);
        }
        if b > self.last {
            self.recover_until(b);
            self.ring.set(self.last, self.cur);
            if b - self.last < RING as u64 {
                self.ring.clear(self.last + 1, b);
            } else {
                // Nothing the ring holds is recent enough to keep.
                self.fresh = b;
            }
            self.cur = Bin::default();
            self.last = b;
        }
        if b == self.last {
            self.cur.add(payload, replay, paused);
            return;
        }
        // An older bin (a frame stamped earlier than the one before).
        if self.last - b >= RING as u64 {
            return;
        }
        if b < self.fresh {
            self.ring.clear(b, self.fresh);
            self.fresh = b;
        }
        let (bytes, flags) = self.ring.get(b);
        let mut bin = Bin { bytes, flags };
        bin.add(payload, replay, paused);
        self.ring.set(b, bin);
    }

    /// A CNP to the flow's sender at `ts`.
    pub fn cnp(&mut self, ts: u64) {
        self.report.cnps += 1;
        // The windows that ended before this CNP come first.
        self.recover_until(self.bin(ts));
        if let Some(r) = &mut self.recovering {
            r.from = r.from.max(ts);
        }
        if ts < self.origin.saturating_add(BINS_PER_WINDOW * self.bin_ns) {
            self.report.indeterminate += 1;
            self.report.reasons.no_history += 1;
            return;
        }
        if self.waiting.len() >= MAX_WAITING {
            self.waiting.remove(0);
            self.report.indeterminate += 1;
            self.report.reasons.unclear += 1;
        }
        self.waiting.push(ts);
        self.set_due();
    }

    /// Judges the CNPs whose after window ends before bin `now`.
    fn judge_until(&mut self, now: u64) {
        while let Some(&c) = self.waiting.first() {
            if self.due > now {
                break;
            }
            self.waiting.remove(0);
            self.judge(c);
            self.set_due();
        }
    }

    /// The CNPs still waiting at the end of the capture (at `end_ts`).
    pub fn finish(&mut self, end_ts: u64) {
        let now = self.bin(end_ts);
        self.judge_until(now);
        self.recover_until(now);
        let left = self.waiting.len() as u64;
        self.report.indeterminate += left;
        self.report.reasons.capture_end += left;
        self.waiting.clear();
        self.set_due();
        let judged = self.report.reacted + self.report.ignored + self.report.reasons.unclear;
        self.report.mean_ratio = (judged > 0).then(|| self.ratio_sum / judged as f64);
        let n = self.report.recoveries;
        self.report.recovery_ns = (n > 0).then(|| (self.recovery_sum / u128::from(n)) as u64);
    }

    /// Tries the windows a recovery may start at that end before bin
    /// `now` (the bins before it are complete).
    fn recover_until(&mut self, now: u64) {
        let Some(mut r) = self.recovering else {
            return;
        };
        // The windows tried start one bin apart: the first is summed, the
        // next ones slide (a bin in, a bin out).
        let mut window: Option<Sliding> = None;
        loop {
            let start = r
                .next
                .max(self.bin(r.from).saturating_add(self.delay_bins))
                .max(self.last.saturating_sub(RING as u64 - 1));
            let end = start.saturating_add(BINS_PER_WINDOW);
            if end > now {
                r.next = start;
                self.recovering = Some(r);
                return;
            }
            let w = match window {
                Some(mut w) if w.start + 1 == start => {
                    w.step(self.at(w.start), self.at(end - 1));
                    w
                }
                _ => {
                    let mut w = Sliding {
                        start,
                        ..Sliding::default()
                    };
                    for k in start..end {
                        w.add(self.at(k), 1);
                    }
                    w
                }
            };
            window = Some(w);
            if w.flagged == 0 && w.empty == 0 && w.bytes as f64 >= IGNORED * r.target as f64 {
                let at = self
                    .origin
                    .saturating_add(start.saturating_mul(self.bin_ns));
                let took = at.saturating_sub(r.from);
                let rep = &mut self.report;
                rep.recoveries += 1;
                rep.recovery_max_ns = Some(rep.recovery_max_ns.unwrap_or(0).max(took));
                self.recovery_sum += u128::from(took);
                self.recovering = None;
                return;
            }
            r.next = start.saturating_add(1);
        }
    }

    /// The oldest bin the ring holds.
    fn oldest(&self) -> u64 {
        self.last.saturating_sub(RING as u64 - 1).max(self.fresh)
    }

    /// Bin `k`'s bytes and flags (empty past the newest, or older than
    /// the ring holds).
    #[inline]
    fn at(&self, k: u64) -> (u32, u8) {
        if k > self.last || k < self.oldest() {
            (0, 0)
        } else if k == self.last {
            (self.cur.bytes, self.cur.flags)
        } else {
            self.ring.get(k)
        }
    }

    /// Bytes and flags of bins `from..to`, and whether one of them is
    /// empty; bins past the newest, or older than the ring holds, are.
    /// (The same as adding up [`at`](Self::at) bin by bin, which was 3-4 %
    /// of the analysing thread on the incast shape: the bins the ring can
    /// hold are read straight from it here.)
    fn window(&self, from: u64, to: u64) -> (u64, u8, bool) {
        if from >= to {
            return (0, 0, false);
        }
        // Bins `lo..hi` are in the ring; the others are empty.
        let hi = to.min(self.last);
        let lo = from.max(self.oldest()).min(hi);
        let mut gap = lo > from || to > self.last.saturating_add(1);
        let (mut bytes, mut flags) = (0u64, 0u8);
        for k in lo..hi {
            let (b, f) = self.ring.get(k);
            bytes += u64::from(b);
            flags |= f;
            gap |= b == 0;
        }
        // The newest bin is kept out of the ring until the next starts.
        if (from..to).contains(&self.last) {
            let (b, f) = self.at(self.last);
            bytes += u64::from(b);
            flags |= f;
            gap |= b == 0;
        }
        (bytes, flags, gap)
    }

    fn judge(&mut self, cnp: u64) {
        let cb = self.bin(cnp);
        let (before, fb, gap_b) = self.window(cb - BINS_PER_WINDOW, cb);
        let a0 = cb.saturating_add(self.delay_bins);
        let (after, fa, gap_a) = self.window(a0, a0.saturating_add(BINS_PER_WINDOW));
        let r = &mut self.report;
        let flags = fb | fa;
        if flags & REPLAY != 0 {
            r.indeterminate += 1;
            r.reasons.replays += 1;
            return;
        }
        if flags & PAUSED != 0 {
            r.indeterminate += 1;
            r.reasons.paused += 1;
            return;
        }
        if gap_b || before == 0 {
            r.indeterminate += 1;
            r.reasons.idle += 1;
            return;
        }
        let ratio = after as f64 / before as f64;
        if ratio <= REACTED {
            r.reacted += 1;
            // Measured from the last CNP received so far.
            let from = self.waiting.last().copied().unwrap_or(cnp);
            match &mut self.recovering {
                Some(rec) => rec.from = rec.from.max(from),
                None => {
                    self.recovering = Some(Recovering {
                        from,
                        target: before,
                        next: 0,
                    })
                }
            }
        } else if ratio >= IGNORED && !gap_a {
            r.ignored += 1;
        } else if gap_a {
            r.indeterminate += 1;
            r.reasons.idle += 1;
            return;
        } else {
            r.indeterminate += 1;
            r.reasons.unclear += 1;
        }
        self.ratio_sum += ratio;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A window's sums are those of its bins one by one, wherever it
        /// lies against the newest bin and the ring: frames at random
        /// times (some earlier than the one before, some far apart).
        #[test]
        fn a_window_adds_up_its_bins(
            frames in proptest::collection::vec((0u64..3_000, 0u32..3, proptest::bool::ANY, proptest::bool::ANY), 1..300),
            windows in proptest::collection::vec((0u64..400, 0u64..120), 1..40),
        ) {
            let mut s = CcState::new(1_000, 50_000);
            let mut t = 1_000u64;
            // Every bin as frames fill it: the ring's bins must read the same.
            let mut model = std::collections::BTreeMap::<u64, Bin>::new();
            let mut newest = 0u64;
            for (step, payload, replay, paused) in frames {
                // Mostly forward by up to 3 bins; a step over 2 900 goes
                // back up to 300 bins, one from 2 850 forward by 285-290
                // (past what the ring holds).
                t = if step > 2_900 {
                    t.saturating_sub((step - 2_900) * 3_000)
                } else if step > 2_850 {
                    t + step * 100
                } else {
                    t + step
                };
                s.frame(t, payload * 700, replay, paused);
                let b = s.bin(t);
                newest = newest.max(b);
                if newest - b < RING as u64 {
                    model.entry(b).or_default().add(payload * 700, replay, paused);
                }
            }
            for k in s.last.saturating_sub(RING as u64 - 1)..=s.last {
                let m = model.get(&k).copied().unwrap_or_default();
                proptest::prop_assert_eq!(s.at(k), (m.bytes, m.flags), "bin {}", k);
            }
            for (back, len) in windows {
                // From past the newest bin to older than the ring holds.
                let from = (s.last + 20).saturating_sub(back);
                let (mut bytes, mut flags, mut gap) = (0u64, 0u8, false);
                for k in from..from + len {
                    let (b, f) = s.at(k);
                    bytes += u64::from(b);
                    flags |= f;
                    gap |= b == 0;
                }
                proptest::prop_assert_eq!(s.window(from, from + len), (bytes, flags, gap));
            }
        }
    }

    /// A sender at `bytes_per_us` until `cut_at`, then at `after`.
    fn run(cut: Option<f64>, replay_at: Option<u64>) -> CcReport {
        let mut s = CcState::new(0, 50_000);
        let mut t = 0;
        let cnp = 100_000;
        while t < 200_000 {
            let slow = cut.is_some() && t > cnp + 2_000;
            let step = if slow {
                (100.0 / cut.unwrap()) as u64
            } else {
                100
            };
            s.frame(
                t,
                1000,
                replay_at.is_some_and(|r| t >= r && t < r + 100),
                false,
            );
            if t <= cnp && t + step > cnp {
                s.cnp(cnp);
            }
            t += step;
        }
        s.finish(t);
        s.report
    }

    #[test]
    fn a_sender_that_halves_reacted_one_that_goes_on_ignored() {
        let r = run(Some(0.5), None);
        assert_eq!((r.cnps, r.reacted, r.ignored), (1, 1, 0));
        assert!((r.mean_ratio.unwrap() - 0.5).abs() < 0.02, "{r:?}");
        let r = run(None, None);
        assert_eq!((r.cnps, r.reacted, r.ignored), (1, 0, 1));
        let r = run(Some(0.95), None);
        assert_eq!(r.reasons.unclear, 1);
        let r = run(Some(0.5), Some(80_000));
        assert_eq!(r.reasons.replays, 1);
    }

    #[test]
    fn a_sender_back_at_its_rate_80_us_after_a_cnp_recovered_in_80_us() {
        // 1000 bytes every 100 ns; half that rate from 2 µs to 80 µs after
        // the CNP at 100 µs, and a second CNP at 140 µs that cuts 40 µs more
        // (the train's recovery counts from it).
        let mut s = CcState::new(0, 50_000);
        let mut t = 0;
        let (mut c1, mut c2) = (false, false);
        while t < 600_000 {
            s.frame(t, 1000, false, false);
            if !c1 && t >= 100_000 {
                s.cnp(100_000);
                c1 = true;
            }
            if !c2 && t >= 140_000 {
                s.cnp(140_000);
                c2 = true;
            }
            let slow = (102_000..220_000).contains(&t);
            t += if slow { 200 } else { 100 };
        }
        s.finish(t);
        let r = s.report;
        assert_eq!((r.cnps, r.reacted, r.recoveries), (2, 2, 1), "{r:?}");
        // 0.97 of the rate lets a window start with 3 half-rate bins: 3 µs
        // early.
        assert_eq!(r.recovery_ns, Some(77_000));
        assert_eq!(r.recovery_max_ns, Some(77_000));
        // A sender that never comes back: no recovery.
        let r = run(Some(0.5), None);
        assert_eq!((r.recoveries, r.recovery_ns), (0, None));
    }

    #[test]
    fn no_history_idle_and_the_end_of_the_capture() {
        let mut s = CcState::new(0, 50_000);
        s.cnp(10_000);
        assert_eq!(s.report.reasons.no_history, 1);
        // Idle before the CNP.
        s.frame(60_000, 1000, false, false);
        s.cnp(100_000);
        s.frame(200_000, 1000, false, false);
        // Waiting at the end.
        s.cnp(190_000);
        s.finish(200_000);
        let r = s.report;
        assert_eq!((r.reasons.idle, r.reasons.capture_end), (1, 1));
        assert_eq!(r.indeterminate, 3);
        assert_eq!(r.mean_ratio, None);
    }
}
