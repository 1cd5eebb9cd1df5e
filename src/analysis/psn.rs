//! PSN tracking for one sequence: 24-bit wrap, gaps, late arrivals and
//! replays, in O(1) per packet with a fixed sliding window of PSN state.

/// PSNs are 24 bits.
pub const PSN_MOD: u32 = 1 << 24;
const PSN_MASK: u32 = PSN_MOD - 1;
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
    seen: Box<[u64; WORDS]>,
    missing_bits: Box<[u64; WORDS]>,
}

impl Default for PsnTracker {
    fn default() -> Self {
        PsnTracker {
            started: false,
            next: 0,
            missing: 0,
            seen: Box::new([0; WORDS]),
            missing_bits: Box::new([0; WORDS]),
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

    fn is_set(bits: &[u64; WORDS], psn: u32) -> bool {
        let (w, m) = slot(psn);
        bits[w] & m != 0
    }

    fn set(bits: &mut [u64; WORDS], psn: u32) {
        let (w, m) = slot(psn);
        bits[w] |= m;
    }

    fn clear(bits: &mut [u64; WORDS], psn: u32) {
        let (w, m) = slot(psn);
        bits[w] &= !m;
    }

    /// Moves `next` forward to `to`; the PSNs in between enter the window
    /// as `missing` (a gap) or merely unseen.
    fn advance(&mut self, to: u32, as_missing: bool) {
        let n = psn_diff(to, self.next).max(0) as u32;
        if n >= WINDOW {
            // Everything in the window is replaced; what was still missing
            // there stays counted.
            self.seen.fill(0);
            self.missing_bits.fill(0);
            if as_missing {
                // Only the last WINDOW PSNs can still be filled in.
                let start = psn_add(to, PSN_MOD - WINDOW);
                for i in 0..WINDOW {
                    Self::set(&mut self.missing_bits, psn_add(start, i));
                }
            }
        } else {
            let mut p = self.next;
            for _ in 0..n {
                Self::clear(&mut self.seen, p);
                if as_missing {
                    Self::set(&mut self.missing_bits, p);
                } else {
                    Self::clear(&mut self.missing_bits, p);
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
            if Self::is_set(&self.missing_bits, p) {
                Self::clear(&mut self.missing_bits, p);
                self.missing = self.missing.saturating_sub(1);
            }
            Self::set(&mut self.seen, p);
        }
    }

    /// A request packet (or READ response MIDDLE/LAST) with `psn` that
    /// consumes `span` PSNs (1, or ceil(len/PMTU) for a READ request).
    pub fn observe(&mut self, psn: u32, span: u32) -> Verdict {
        let span = span.max(1);
        let psn = psn & PSN_MASK;
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
        } else if (-d) as u32 >= WINDOW || Self::is_set(&self.seen, psn) {
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
}
