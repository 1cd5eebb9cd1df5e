//! PSN tracking for one sequence: 24-bit wrap, gaps, late arrivals and
//! replays, in O(1) per packet with a fixed sliding window of PSN state.

/// PSNs are 24 bits.
pub const PSN_MOD: u32 = 1 << 24;
pub(crate) const PSN_MASK: u32 = PSN_MOD - 1;
/// How far behind the highest PSN we remember what was seen. Older PSNs
/// are assumed seen (a replay that far back is a retransmission).
pub const WINDOW: u32 = 8192;
const WORDS: usize = (WINDOW / 64) as usize;

/// Signed distance from `from` to `to` modulo 2^24, in -2^23..2^23.
pub fn psn_diff(to: u32, from: u32) -> i32 {
    let d = to.wrapping_sub(from) & PSN_MASK;
    if d >= PSN_MOD / 2 {
        d as i32 - PSN_MOD as i32
    } else {
        d as i32
    }
}

pub fn psn_add(p: u32, n: u32) -> u32 {
    p.wrapping_add(n) & PSN_MASK
}

/// What one packet did to the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The first packet of the sequence.
    First,
    InOrder,
    /// Ahead of `next`: `count` PSNs starting at `first` were skipped.
    Gap {
        first: u32,
        count: u32,
    },
    /// Behind `next`, never seen: a late arrival.
    OutOfOrder,
    /// Behind `next`, already seen: a replay.
    Retransmit,
    /// A READ response FIRST/ONLY that started a new response message ahead.
    NewMessage,
    /// A request on a PSN that a request of another kind had consumed (the
    /// flow's verdict; the tracker itself never gives it).
    PsnReuse,
}

/// State of one PSN sequence.
#[derive(Debug, Clone)]
pub struct PsnTracker {
    started: bool,
    /// PSN expected after the highest one seen.
    next: u32,
    /// PSNs skipped and not arrived since, including those slid out of the
    /// window.
    missing: u64,
    /// Per 64 PSNs of the window: (seen, missing) bits side by side, so a
    /// packet touches one cache line of them.
    bits: Box<[[u64; 2]; WORDS]>,
}

/// Index of the seen and the missing word in a `bits` entry.
const SEEN: usize = 0;
const MISSING: usize = 1;

impl Default for PsnTracker {
    fn default() -> Self {
        PsnTracker {
            started: false,
            next: 0,
            missing: 0,
            bits: Box::new([[0; 2]; WORDS]),
        }
    }
}

fn slot(psn: u32) -> (usize, u64) {
    let i = psn % WINDOW;
    ((i / 64) as usize, 1u64 << (i % 64))
}

impl PsnTracker {
    pub fn next(&self) -> Option<u32> {
        self.started.then_some(self.next)
    }

    pub fn missing(&self) -> u64 {
        self.missing
    }

    fn is_set(&self, which: usize, psn: u32) -> bool {
        let (w, m) = slot(psn);
        self.bits[w][which] & m != 0
    }

    fn set(&mut self, which: usize, psn: u32) {
        let (w, m) = slot(psn);
        self.bits[w][which] |= m;
    }

    fn clear(&mut self, which: usize, psn: u32) {
        let (w, m) = slot(psn);
        self.bits[w][which] &= !m;
    }

    /// Moves `next` forward to `to`; the PSNs in between enter the window
    /// as `missing` (a gap) or merely unseen.
    fn advance(&mut self, to: u32, as_missing: bool) {
        let n = psn_diff(to, self.next).max(0) as u32;
        if n >= WINDOW {
            // Everything in the window is replaced; what was still missing
            // there stays counted.
            self.bits.fill([0; 2]);
            if as_missing {
                // Only the last WINDOW PSNs can still be filled in.
                let start = psn_add(to, PSN_MOD - WINDOW);
                for i in 0..WINDOW {
                    self.set(MISSING, psn_add(start, i));
                }
            }
        } else {
            let mut p = self.next;
            for _ in 0..n {
                self.clear(SEEN, p);
                if as_missing {
                    self.set(MISSING, p);
                } else {
                    self.clear(MISSING, p);
                }
                p = psn_add(p, 1);
            }
        }
        if as_missing {
            self.missing += u64::from(n);
        }
        self.next = to & PSN_MASK;
    }

    /// Marks `count` PSNs from `psn` as covered by one packet (a READ
    /// request covers several).
    fn cover(&mut self, psn: u32, count: u32) {
        for i in 0..count.min(WINDOW) {
            let p = psn_add(psn, i);
            if self.is_set(MISSING, p) {
                self.clear(MISSING, p);
                self.missing = self.missing.saturating_sub(1);
            }
            self.set(SEEN, p);
        }
    }

    /// A request packet (or READ response MIDDLE/LAST) with `psn` that
    /// consumes `span` PSNs (1, or ceil(len/PMTU) for a READ request).
    /// Its shortcut inlines into the analysis's per-packet code.
    #[inline]
    pub fn observe(&mut self, psn: u32, span: u32) -> Verdict {
        let psn = psn & PSN_MASK;
        if self.started && psn == self.next && span <= 1 {
            // The common case, `advance` and `cover` by one PSN in one go:
            // it enters the window seen and not missing.
            let (w, m) = slot(psn);
            let e = &mut self.bits[w];
            e[SEEN] |= m;
            e[MISSING] &= !m;
            self.next = psn_add(psn, 1);
            return Verdict::InOrder;
        }
        self.observe_general(psn, span)
    }

    /// [`observe`](Self::observe) without its shortcut for the next PSN.
    #[inline(never)]
    fn observe_general(&mut self, psn: u32, span: u32) -> Verdict {
        let span = span.max(1);
        if !self.started {
            self.started = true;
            self.next = psn;
            self.advance(psn_add(psn, span), false);
            self.cover(psn, span);
            return Verdict::First;
        }
        let d = psn_diff(psn, self.next);
        if d == 0 {
            self.advance(psn_add(psn, span), false);
            self.cover(psn, span);
            Verdict::InOrder
        } else if d > 0 {
            let first = self.next;
            self.advance(psn, true);
            self.advance(psn_add(psn, span), false);
            self.cover(psn, span);
            Verdict::Gap {
                first,
                count: d as u32,
            }
        } else if (-d) as u32 >= WINDOW || self.is_set(SEEN, psn) {
            Verdict::Retransmit
        } else {
            self.cover(psn, span);
            Verdict::OutOfOrder
        }
    }

    /// A READ response FIRST or ONLY: may start ahead without a gap.
    pub fn observe_message_start(&mut self, psn: u32) -> Verdict {
        let psn = psn & PSN_MASK;
        if self.started && psn_diff(psn, self.next) > 0 {
            self.advance(psn, false);
            self.advance(psn_add(psn, 1), false);
            self.cover(psn, 1);
            return Verdict::NewMessage;
        }
        self.observe(psn, 1)
    }

    /// Extends the span of the packet just before `next` (a READ request
    /// whose PSN count became known once the PMTU was): the extra PSNs are
    /// consumed, not missing.
    pub fn extend_last(&mut self, psn: u32, span: u32) {
        if !self.started || span <= 1 {
            return;
        }
        let end = psn_add(psn, span);
        if psn_diff(end, self.next) > 0 {
            self.advance(end, false);
        }
        self.cover(psn, span);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(psns: &[u32]) -> (Vec<Verdict>, PsnTracker) {
        let mut t = PsnTracker::default();
        let v = psns.iter().map(|&p| t.observe(p, 1)).collect();
        (v, t)
    }

    #[test]
    fn in_order_and_wrap() {
        let (v, t) = run(&[0xfffffe, 0xffffff, 0, 1]);
        assert_eq!(v[1..], [Verdict::InOrder; 3]);
        assert_eq!(t.next(), Some(2));
        assert_eq!(t.missing(), 0);
    }

    #[test]
    fn gap_filled_late_is_out_of_order() {
        let (v, t) = run(&[10, 11, 14, 12, 13, 15]);
        assert_eq!(
            v[2],
            Verdict::Gap {
                first: 12,
                count: 2
            }
        );
        assert_eq!(v[3], Verdict::OutOfOrder);
        assert_eq!(v[4], Verdict::OutOfOrder);
        assert_eq!(v[5], Verdict::InOrder);
        assert_eq!(t.missing(), 0);
    }

    #[test]
    fn go_back_n_replay_is_retransmit() {
        let (v, t) = run(&[1, 2, 4, 5, 3, 4, 5, 6]);
        assert_eq!(v[2], Verdict::Gap { first: 3, count: 1 });
        assert_eq!(v[4], Verdict::OutOfOrder);
        assert_eq!(v[5], Verdict::Retransmit);
        assert_eq!(v[6], Verdict::Retransmit);
        assert_eq!(v[7], Verdict::InOrder);
        assert_eq!(t.missing(), 0);
    }

    #[test]
    fn permanent_hole_across_wrap() {
        let (v, t) = run(&[0xfffffd, 0xfffffe, 1, 2]);
        assert_eq!(
            v[2],
            Verdict::Gap {
                first: 0xffffff,
                count: 2
            }
        );
        assert_eq!(t.missing(), 2);
    }

    #[test]
    fn read_request_spans_psns() {
        let mut t = PsnTracker::default();
        t.observe(100, 1);
        assert_eq!(t.observe(101, 3), Verdict::InOrder);
        assert_eq!(t.observe(104, 1), Verdict::InOrder);
        t.extend_last(104, 1);
        let mut t = PsnTracker::default();
        t.observe(200, 1);
        t.extend_last(200, 4);
        assert_eq!(t.observe(204, 1), Verdict::InOrder);
        assert_eq!(t.missing(), 0);
    }

    #[test]
    fn huge_gap_counts_every_psn() {
        let (v, t) = run(&[0, 20_000]);
        assert_eq!(
            v[1],
            Verdict::Gap {
                first: 1,
                count: 19_999
            }
        );
        assert_eq!(t.missing(), 19_999);
        let mut t = t;
        assert_eq!(t.observe(19_999, 1), Verdict::OutOfOrder);
        assert_eq!(t.missing(), 19_998);
        assert_eq!(t.observe(5, 1), Verdict::Retransmit, "beyond the window");
    }

    #[test]
    fn read_response_messages_start_anywhere_ahead() {
        let mut t = PsnTracker::default();
        assert_eq!(t.observe_message_start(10), Verdict::First);
        assert_eq!(t.observe(11, 1), Verdict::InOrder);
        assert_eq!(t.observe_message_start(20), Verdict::NewMessage);
        assert_eq!(
            t.observe(22, 1),
            Verdict::Gap {
                first: 21,
                count: 1
            }
        );
        assert_eq!(t.observe_message_start(20), Verdict::Retransmit);
        assert_eq!(t.missing(), 1);
    }

    proptest::proptest! {
        /// The shortcut for the next PSN leaves the same state and verdicts
        /// as the general path, over sequences with gaps, replays, late
        /// packets, multi-PSN spans and the 24-bit wrap.
        #[test]
        fn shortcut_matches_general_path(
            start in 0u32..PSN_MOD,
            steps in proptest::collection::vec((-40i32..40, 0u32..4, 0u8..4), 1..300),
        ) {
            let (mut fast, mut general) = (PsnTracker::default(), PsnTracker::default());
            let mut psn = start;
            for (jump, span, kind) in steps {
                // Mostly the next PSN, sometimes a jump either way.
                psn = match (kind, fast.next()) {
                    (0 | 1, Some(next)) => next,
                    _ => psn_add(psn, jump as u32),
                };
                let a = fast.observe(psn, span);
                let b = general.observe_general(psn, span);
                proptest::prop_assert_eq!(a, b);
                proptest::prop_assert_eq!(fast.next, general.next);
                proptest::prop_assert_eq!(fast.missing, general.missing);
                proptest::prop_assert!(fast.bits == general.bits);
            }
        }
    }
}
