//! The kinds of request that consumed a flow's recent PSNs: a replay
//! repeats the same kind, another kind on a consumed PSN is a PSN reuse.

use crate::wire::{Operation, Psn};

/// The kind of request that consumed a PSN: a replay repeats the same
/// kind, a request of another kind on a consumed PSN breaks the PSN rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum ReqKind {
    #[default]
    Send,
    Write,
    Read,
    Atomic,
}

impl ReqKind {
    pub fn of(op: Operation) -> ReqKind {
        use Operation::*;
        match op {
            WriteFirst | WriteMiddle | WriteLast | WriteLastImm | WriteOnly | WriteOnlyImm => {
                ReqKind::Write
            }
            ReadRequest => ReqKind::Read,
            CompareSwap | FetchAdd => ReqKind::Atomic,
            _ => ReqKind::Send,
        }
    }

    fn from_bits(b: u32) -> ReqKind {
        match b {
            1 => ReqKind::Write,
            2 => ReqKind::Read,
            3 => ReqKind::Atomic,
            _ => ReqKind::Send,
        }
    }
}

/// A run of consecutive PSNs consumed by requests of one kind: its first
/// PSN in the low 24 bits and its kind above them, and its length.
#[derive(Debug, Clone, Copy, Default)]
pub struct Run {
    first_kind: u32,
    span: u32,
}

impl Run {
    fn new(first: Psn, span: u32, kind: ReqKind) -> Run {
        Run {
            first_kind: first.get() | (kind as u32) << 24,
            span,
        }
    }

    fn first(&self) -> Psn {
        Psn::new(self.first_kind)
    }

    fn kind(&self) -> ReqKind {
        ReqKind::from_bits(self.first_kind >> 24)
    }
}

const RUNS: usize = 8;
/// Replayed READ requests remembered per flow.
/// Longest run remembered: any PSN that far back is of the run's kind.
const MAX_RUN: u32 = 1 << 23;

/// The last few runs of a request sequence, so that a PSN behind the one
/// expected can be told apart: the same kind of request again (a replay)
/// or another kind (a reuse). A replay goes back at most a window of
/// outstanding requests, a few messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecentRequests {
    runs: [Run; RUNS],
    last: u8,
    len: u8,
}

impl RecentRequests {
    /// `span` PSNs from `psn` consumed by a request of `kind`, in order.
    #[inline]
    pub fn note(&mut self, psn: Psn, span: u32, kind: ReqKind) {
        let r = &mut self.runs[usize::from(self.last) % RUNS];
        if self.len > 0 && r.kind() == kind && psn == r.first() + r.span {
            r.span = r.span.saturating_add(span).min(MAX_RUN);
            return;
        }
        self.push(psn, span, kind);
    }

    #[inline(never)]
    fn push(&mut self, psn: Psn, span: u32, kind: ReqKind) {
        self.last = ((usize::from(self.last) + 1) % RUNS) as u8;
        self.runs[usize::from(self.last)] = Run::new(psn, span.min(MAX_RUN), kind);
        self.len = (self.len + 1).min(RUNS as u8);
    }

    /// The READ at `psn` turned out to span `span` PSNs.
    pub fn widen(&mut self, psn: Psn, span: u32) {
        let r = &mut self.runs[usize::from(self.last) % RUNS];
        if self.len > 0 && r.kind() == ReqKind::Read && psn - r.first() >= 0 {
            let end = (psn - r.first()) as u32 + span;
            r.span = r.span.max(end).min(MAX_RUN);
        }
    }

    /// The kind of request that consumed `psn`, if it is in a recent run.
    pub fn kind_at(&self, psn: Psn) -> Option<ReqKind> {
        let n = usize::from(self.len);
        (0..n)
            .map(|i| &self.runs[(usize::from(self.last) + RUNS - i) % RUNS])
            .find(|r| {
                let d = psn - r.first();
                d >= 0 && (d as u32) < r.span
            })
            .map(|r| r.kind())
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_remember_the_kind_of_each_psn() {
        let mut r = RecentRequests::default();
        r.note(Psn::new(0xff_fffe), 1, ReqKind::Send);
        r.note(Psn::new(0xff_ffff), 1, ReqKind::Send); // one run across the wrap
        r.note(Psn::new(0), 3, ReqKind::Read);
        r.note(Psn::new(3), 1, ReqKind::Write);
        assert_eq!(r.kind_at(Psn::new(0xff_fffe)), Some(ReqKind::Send));
        assert_eq!(r.kind_at(Psn::new(0xff_ffff)), Some(ReqKind::Send));
        assert_eq!(r.kind_at(Psn::new(2)), Some(ReqKind::Read));
        assert_eq!(r.kind_at(Psn::new(3)), Some(ReqKind::Write));
        assert_eq!(r.kind_at(Psn::new(4)), None);
        r.widen(Psn::new(3), 1);
        for k in 0..20 {
            r.note(Psn::new(4 + 2 * k), 1, ReqKind::Atomic);
            r.note(Psn::new(5 + 2 * k), 1, ReqKind::Send);
        }
        assert_eq!(r.kind_at(Psn::new(2)), None, "older runs are forgotten");
        assert_eq!(r.kind_at(Psn::new(43)), Some(ReqKind::Send));
        assert_eq!(r.kind_at(Psn::new(42)), Some(ReqKind::Atomic));
        assert!(std::mem::size_of::<RecentRequests>() <= 68);
    }
}
