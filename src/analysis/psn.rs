//! PSN tracking for one sequence: 24-bit wrap, gaps, late arrivals and
//! replays, in O(1) per packet with a fixed sliding window of PSN state.

use crate::wire::Psn;

/// How far behind the highest PSN we remember what was seen. Older PSNs
/// are assumed seen (a replay that far back is a retransmission).
pub const WINDOW: u32 = 8192;
const WORDS: usize = (WINDOW / 64) as usize;

/// A PSN or none, in four bytes where an `Option<u32>` takes eight: PSNs
/// are 24 bits, so `u32::MAX` is free to mean none (a flow's state keeps
/// three of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaybePsn(u32);

impl MaybePsn {
    pub const NONE: Self = MaybePsn(u32::MAX);

    pub fn some(psn: Psn) -> Self {
        MaybePsn(psn.get())
    }

    pub fn get(self) -> Option<Psn> {
        (self != Self::NONE).then_some(Psn::new(self.0))
    }

    pub fn is_none(self) -> bool {
        self == Self::NONE
    }

    pub fn is_some(self) -> bool {
        !self.is_none()
    }
}

impl Default for MaybePsn {
    fn default() -> Self {
        Self::NONE
    }
}

/// What one packet did to the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The first packet of the sequence.
    First,
    InOrder,
    /// Ahead of `next`: `count` PSNs starting at `first` were skipped.
    Gap {
        first: Psn,
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
///
/// While a sequence has only gone forward in order (the usual case), what
/// was seen is implied: the PSNs between its first and `next`. The window
/// of seen and missing bits (2 KiB) is made only when a packet breaks that
/// (a gap, a late packet, a READ response message starting ahead), so an
/// idle or orderly flow costs a few words, not a window (5 M flows of one
/// frame each took 3.7 KB a flow).
#[derive(Debug, Clone, Default)]
pub struct PsnTracker {
    started: bool,
    /// PSN expected after the highest one seen.
    next: Psn,
    /// Without a window: how many PSNs just behind `next` were seen (all
    /// of them since the first, at most [`WINDOW`]); older ones were not.
    run: u32,
    /// PSNs skipped and not arrived since, including those slid out of the
    /// window.
    missing: u64,
    /// Per 64 PSNs of the window: (seen, missing) bits side by side, so a
    /// packet touches one cache line of them. `None` while implied.
    bits: Option<Box<[[u64; 2]; WORDS]>>,
}

/// Index of the seen and the missing word in a `bits` entry.
const SEEN: usize = 0;
const MISSING: usize = 1;

fn slot(psn: Psn) -> (usize, u64) {
    let i = psn.get() % WINDOW;
    ((i / 64) as usize, 1u64 << (i % 64))
}

/// PSNs behind `next` from `p` (1 for the PSN just before it).
fn back(next: Psn, p: Psn) -> u32 {
    next.forward_from(p)
}

impl PsnTracker {
    /// A tracker that keeps its window from the start (the reference the
    /// implied state is tested against).
    #[cfg(test)]
    fn explicit() -> Self {
        PsnTracker {
            bits: Some(Box::new([[0; 2]; WORDS])),
            ..Self::default()
        }
    }

    pub fn next(&self) -> Option<Psn> {
        self.started.then_some(self.next)
    }

    pub fn missing(&self) -> u64 {
        self.missing
    }

    /// Whether the window is kept (for tests and memory accounting).
    pub fn has_window(&self) -> bool {
        self.bits.is_some()
    }

    /// Makes the window from the implied state: the `run` PSNs behind
    /// `next` seen, nothing missing.
    #[cold]
    #[inline(never)]
    fn materialize(&mut self) -> &mut [[u64; 2]; WORDS] {
        let (next, run) = (self.next, self.run.min(WINDOW));
        self.bits.get_or_insert_with(|| {
            let mut bits = Box::new([[0u64; 2]; WORDS]);
            for k in 1..=run {
                let (w, m) = slot(next - k);
                bits[w][SEEN] |= m;
            }
            bits
        })
    }

    fn is_set(&self, which: usize, psn: Psn) -> bool {
        match &self.bits {
            Some(bits) => {
                let (w, m) = slot(psn);
                bits[w][which] & m != 0
            }
            // Implied: seen just behind `next`, nothing missing.
            None => which == SEEN && (1..=self.run).contains(&back(self.next, psn)),
        }
    }

    /// Moves `next` forward by `n` PSNs; they enter the window as `missing`
    /// (a gap) or merely unseen.
    fn advance_by(&mut self, n: u32, as_missing: bool) {
        if n == 0 {
            return;
        }
        if self.bits.is_none() && !as_missing {
            // Still implied: the new PSNs are covered by the caller.
            self.next = self.next + n;
            return;
        }
        let next = self.next;
        let bits = self.materialize();
        if n >= WINDOW {
            // Everything in the window is replaced; what was still missing
            // there stays counted. Only the last WINDOW PSNs can still be
            // filled in.
            let fill = if as_missing { [0, u64::MAX] } else { [0, 0] };
            bits.fill(fill);
        } else {
            let mut p = next;
            for _ in 0..n {
                let (w, m) = slot(p);
                bits[w][SEEN] &= !m;
                if as_missing {
                    bits[w][MISSING] |= m;
                } else {
                    bits[w][MISSING] &= !m;
                }
                p = p + 1;
            }
        }
        if as_missing {
            self.missing += u64::from(n);
        }
        self.next = next + n;
    }

    /// Marks the `count` PSNs from `psn` as covered by one packet (a READ
    /// request covers several): those still in the window, the last ones.
    fn cover(&mut self, psn: Psn, count: u32) {
        let Some(bits) = self.bits.as_mut() else {
            // Implied: they are the ones just behind `next`.
            self.run = self.run.saturating_add(count).min(WINDOW);
            return;
        };
        let inside = count.min(WINDOW);
        let from = psn + (count - inside);
        for i in 0..inside {
            let (w, m) = slot(from + i);
            let e = &mut bits[w];
            if e[MISSING] & m != 0 {
                e[MISSING] &= !m;
                self.missing = self.missing.saturating_sub(1);
            }
            e[SEEN] |= m;
        }
    }

    /// A request packet (or READ response MIDDLE/LAST) with `psn` that
    /// consumes `span` PSNs (1, or ceil(len/PMTU) for a READ request, at
    /// most 2^23). Its shortcut inlines into the analysis's per-packet code.
    #[inline]
    pub fn observe(&mut self, psn: Psn, span: u32) -> Verdict {
        if self.started && psn == self.next && span <= 1 {
            // The common case, `advance` and `cover` by one PSN in one go:
            // it enters the window seen and not missing.
            self.next = psn + 1;
            match self.bits.as_mut() {
                None => self.run = (self.run + 1).min(WINDOW),
                Some(bits) => {
                    let (w, m) = slot(psn);
                    let e = &mut bits[w];
                    e[SEEN] |= m;
                    e[MISSING] &= !m;
                }
            }
            return Verdict::InOrder;
        }
        self.observe_general(psn, span)
    }

    /// [`observe`](Self::observe) without its shortcut for the next PSN.
    #[inline(never)]
    fn observe_general(&mut self, psn: Psn, span: u32) -> Verdict {
        let span = span.clamp(1, MAX_SPAN);
        if !self.started {
            self.started = true;
            self.next = psn;
            self.advance_by(span, false);
            self.cover(psn, span);
            return Verdict::First;
        }
        let d = psn - self.next;
        if d == 0 {
            self.advance_by(span, false);
            self.cover(psn, span);
            Verdict::InOrder
        } else if d > 0 {
            let first = self.next;
            self.advance_by(d as u32, true);
            self.advance_by(span, false);
            self.cover(psn, span);
            Verdict::Gap {
                first,
                count: d as u32,
            }
        } else if (-d) as u32 >= WINDOW || self.is_set(SEEN, psn) {
            Verdict::Retransmit
        } else {
            self.materialize();
            self.cover(psn, span);
            Verdict::OutOfOrder
        }
    }

    /// A READ response FIRST or ONLY: may start ahead without a gap.
    pub fn observe_message_start(&mut self, psn: Psn) -> Verdict {
        if self.started {
            let d = psn - self.next;
            if d > 0 {
                // The PSNs skipped are unseen (they belong to requests that
                // get no response): the window says so.
                self.materialize();
                self.advance_by(d as u32, false);
                self.advance_by(1, false);
                self.cover(psn, 1);
                return Verdict::NewMessage;
            }
        }
        self.observe(psn, 1)
    }

    /// Extends the span of the packet just before `next` (a READ request
    /// whose PSN count became known once the PMTU was): the extra PSNs are
    /// consumed, not missing.
    pub fn extend_last(&mut self, psn: Psn, span: u32) {
        if !self.started || span <= 1 {
            return;
        }
        let span = span.min(MAX_SPAN);
        let end = psn + span;
        let d = end - self.next;
        if d > 0 {
            self.advance_by(d as u32, false);
            self.cover(psn + (span - d as u32), d as u32);
        }
        if self.bits.is_some() {
            self.cover(psn, span);
        }
    }
}

/// The most PSNs one packet can consume: a READ of 2^31 bytes at a 256-byte
/// PMTU, half the PSN space (beyond it "ahead" and "behind" lose meaning).
pub const MAX_SPAN: u32 = Psn::MOD / 2;

#[cfg(test)]
mod tests {
    use super::*;

    fn run(psns: &[u32]) -> (Vec<Verdict>, PsnTracker) {
        let mut t = PsnTracker::default();
        let v = psns.iter().map(|&p| t.observe(Psn::new(p), 1)).collect();
        (v, t)
    }

    #[test]
    fn in_order_and_wrap() {
        let (v, t) = run(&[0xfffffe, 0xffffff, 0, 1]);
        assert_eq!(v[1..], [Verdict::InOrder; 3]);
        assert_eq!(t.next(), Some(Psn::new(2)));
        assert_eq!(t.missing(), 0);
    }

    #[test]
    fn gap_filled_late_is_out_of_order() {
        let (v, t) = run(&[10, 11, 14, 12, 13, 15]);
        assert_eq!(
            v[2],
            Verdict::Gap {
                first: Psn::new(12),
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
        assert_eq!(
            v[2],
            Verdict::Gap {
                first: Psn::new(3),
                count: 1
            }
        );
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
                first: Psn::new(0xffffff),
                count: 2
            }
        );
        assert_eq!(t.missing(), 2);
    }

    #[test]
    fn read_request_spans_psns() {
        let mut t = PsnTracker::default();
        t.observe(Psn::new(100), 1);
        assert_eq!(t.observe(Psn::new(101), 3), Verdict::InOrder);
        assert_eq!(t.observe(Psn::new(104), 1), Verdict::InOrder);
        t.extend_last(Psn::new(104), 1);
        let mut t = PsnTracker::default();
        t.observe(Psn::new(200), 1);
        t.extend_last(Psn::new(200), 4);
        assert_eq!(t.observe(Psn::new(204), 1), Verdict::InOrder);
        assert_eq!(t.missing(), 0);
    }

    #[test]
    fn huge_gap_counts_every_psn() {
        let (v, t) = run(&[0, 20_000]);
        assert_eq!(
            v[1],
            Verdict::Gap {
                first: Psn::new(1),
                count: 19_999
            }
        );
        assert_eq!(t.missing(), 19_999);
        let mut t = t;
        assert_eq!(t.observe(Psn::new(19_999), 1), Verdict::OutOfOrder);
        assert_eq!(t.missing(), 19_998);
        assert_eq!(
            t.observe(Psn::new(5), 1),
            Verdict::Retransmit,
            "beyond the window"
        );
    }

    #[test]
    fn read_response_messages_start_anywhere_ahead() {
        let mut t = PsnTracker::default();
        assert_eq!(t.observe_message_start(Psn::new(10)), Verdict::First);
        assert_eq!(t.observe(Psn::new(11), 1), Verdict::InOrder);
        assert_eq!(t.observe_message_start(Psn::new(20)), Verdict::NewMessage);
        assert_eq!(
            t.observe(Psn::new(22), 1),
            Verdict::Gap {
                first: Psn::new(21),
                count: 1
            }
        );
        assert_eq!(t.observe_message_start(Psn::new(20)), Verdict::Retransmit);
        assert_eq!(t.missing(), 1);
    }

    #[test]
    fn an_orderly_sequence_keeps_no_window() {
        let mut t = PsnTracker::default();
        for p in 0..20_000u32 {
            t.observe(Psn::new(p), 1);
        }
        assert!(!t.has_window());
        assert_eq!(t.observe(Psn::new(19_990), 1), Verdict::Retransmit);
        assert!(!t.has_window(), "a replay needs no window");
        assert_eq!(
            t.observe(Psn::new(20_002), 1),
            Verdict::Gap {
                first: Psn::new(20_000),
                count: 2
            }
        );
        assert!(t.has_window());
        assert!(std::mem::size_of::<PsnTracker>() <= 32);
    }

    #[test]
    fn a_read_of_2_to_the_23_psns_is_exact() {
        // 2^31 bytes at a 256-byte PMTU: the next request follows it.
        let mut t = PsnTracker::default();
        assert_eq!(t.observe(Psn::new(10), 1), Verdict::First);
        assert_eq!(t.observe(Psn::new(11), MAX_SPAN), Verdict::InOrder);
        assert_eq!(t.observe(Psn::new(11) + MAX_SPAN, 1), Verdict::InOrder);
        assert_eq!(t.missing(), 0);
        // The same with a window kept, and with the span settled late.
        let mut t = PsnTracker::explicit();
        t.observe(Psn::new(10), 1);
        t.observe(Psn::new(11), 1);
        t.extend_last(Psn::new(11), MAX_SPAN);
        assert_eq!(t.observe(Psn::new(11) + MAX_SPAN, 1), Verdict::InOrder);
        assert_eq!(t.missing(), 0);
        // The last PSNs of the span are in the window, seen.
        assert_eq!(
            t.observe(Psn::new(11) + (MAX_SPAN - 5), 1),
            Verdict::Retransmit
        );
    }

    /// A sequence of packets for the property tests: mostly the next PSN,
    /// sometimes a jump either way, spans of one to three PSNs, READ
    /// response message starts.
    fn drive(
        trackers: &mut [&mut PsnTracker],
        start: u32,
        steps: &[(i32, u32, u8)],
        general: Option<usize>,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut psn = Psn::new(start);
        for &(jump, span, kind) in steps {
            psn = match (kind % 4, trackers[0].next()) {
                (0 | 1, Some(next)) => next,
                _ => psn + jump as u32,
            };
            let verdicts: Vec<Verdict> = trackers
                .iter_mut()
                .enumerate()
                .map(|(i, t)| {
                    if kind >= 8 {
                        t.observe_message_start(psn)
                    } else if Some(i) == general {
                        t.observe_general(psn, span)
                    } else {
                        t.observe(psn, span)
                    }
                })
                .collect();
            for (t, v) in trackers.iter().zip(&verdicts).skip(1) {
                proptest::prop_assert_eq!(*v, verdicts[0]);
                proptest::prop_assert_eq!(t.next, trackers[0].next);
                proptest::prop_assert_eq!(t.missing, trackers[0].missing);
            }
        }
        Ok(())
    }

    proptest::proptest! {
        /// The shortcut for the next PSN leaves the same state and verdicts
        /// as the general path, over sequences with gaps, replays, late
        /// packets, multi-PSN spans and the 24-bit wrap.
        #[test]
        fn shortcut_matches_general_path(
            start in 0u32..Psn::MOD,
            steps in proptest::collection::vec((-40i32..40, 0u32..4, 0u8..8), 1..300),
        ) {
            let (mut fast, mut general) = (PsnTracker::explicit(), PsnTracker::explicit());
            drive(&mut [&mut fast, &mut general], start, &steps, Some(1))?;
            proptest::prop_assert!(fast.bits == general.bits);
        }

        /// The implied state (no window until a packet breaks the order)
        /// gives exactly the verdicts of a window kept from the start.
        #[test]
        fn implied_state_matches_a_window_kept_from_the_start(
            start in 0u32..Psn::MOD,
            steps in proptest::collection::vec((-12_000i32..12_000, 0u32..4, 0u8..12), 1..200),
        ) {
            let (mut lazy, mut kept) = (PsnTracker::default(), PsnTracker::explicit());
            drive(&mut [&mut kept, &mut lazy], start, &steps, None)?;
        }
    }
}
