//! Both sides of a TLS conversation, as the analysis follows their
//! records from segment to segment.

use super::digest::{Begun, Digest};
use super::read::{Continues, Layer, Seen, layer};
use super::{CHANGE_CIPHER_SPEC, valid_content_type, version_label};
use crate::wire::be16;

/// One side of a TLS conversation, as the analysis follows its records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Side {
    /// What the next segment in order continues.
    pub(super) pending: Option<Pending>,
    /// The sequence number after the highest segment seen.
    pub(super) next: Option<u32>,
    /// The last record shown reassembled: from and to sequence numbers.
    pub(super) last_reassembled: Option<(u32, u32)>,
    /// A record whose end came after a gap: shown when a segment sent
    /// again fills the gap up to its end.
    pub(super) orphan: Option<Orphan>,
    /// It sent a Change Cipher Spec in an earlier frame.
    pub change_cipher: bool,
}

/// A record cut by a gap in the sender's segments: from `start` to `end`,
/// all seen but the bytes from `hole_from` to `hole_to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Orphan {
    pub(super) begun: Begun,
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) hole_from: u32,
    pub(super) hole_to: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pending {
    /// A header cut short: its first bytes, at sequence number `seq`.
    Header { seq: u32, bytes: [u8; 4], len: u8 },
    /// A record from sequence number `start` to `end`; `hole`: bytes of it
    /// not seen (yet: a segment sent again may fill it); `broken`: more
    /// than one such gap.
    Record {
        begun: Begun,
        start: u32,
        end: u32,
        hole: Option<(u32, u32)>,
        broken: bool,
    },
}

/// `a` before `b` in sequence space.
pub(super) fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `x` in `[from, to)` in sequence space.
pub(super) fn within(x: u32, from: u32, to: u32) -> bool {
    !before(x, from) && before(x, to)
}

/// A TLS conversation as the analysis follows it: the session's version
/// and each side's records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Conversation {
    pub version: u16,
    pub sides: [Side; 2],
}

/// What a segment's start continues, and where its own records start
/// (`None`: it has none).
pub(super) struct Start {
    pub(super) continues: Continues,
    pub(super) at: Option<u32>,
    /// The record it ends: what it tells of the session.
    pub(super) sets: u16,
    pub(super) chosen: u16,
    pub(super) change_cipher: bool,
}

impl Conversation {
    /// Follows a segment of `side` (0 or 1) at sequence number `seq`, of
    /// `len` bytes (`resent`: TCP's analysis calls it a retransmission or
    /// out of order): what it continues, and the state after it.
    pub fn segment(&mut self, side: usize, seq: u32, len: u32, resent: bool, d: &Digest) -> Seen {
        let version = self.version;
        let Some(s) = self.sides.get_mut(side) else {
            return Seen {
                version,
                change_cipher_before: false,
                continues: Continues::Nothing,
                protocol: "TCP",
            };
        };
        let seg_end = seq.wrapping_add(len);
        let change_cipher_before = s.change_cipher;
        if resent {
            let overlaps = s.last_reassembled.is_some_and(|(from, to)| {
                before(from, seq) && before(seq, to) && !before(to, seg_end)
            });
            return Seen {
                version,
                change_cipher_before,
                continues: Continues::Resent { overlaps },
                protocol: "TCP",
            };
        }
        // Other bytes sent before (a fast retransmission, a keep-alive):
        // shown as part of the record they belong to, filling its gap; one
        // that ends a record cut by a gap shows it, and the records after
        // it are followed from there.
        // A record begun in a segment sent again is missing what came
        // after it in the segments seen before (tshark shows it never).
        let mut stale = false;
        let st = if s.next.is_some_and(|n| before(seq, n)) {
            stale = s.next.is_some_and(|n| before(seg_end, n));
            let inside = |(from, to): (u32, u32)| before(from, seq) && before(seq, to);
            let fills = |(from, to): (u32, u32)| !before(from, seq) && !before(seg_end, to);
            if let Some(o) = s.orphan
                && before(o.start, seq)
                && fills((o.hole_from, o.hole_to))
            {
                s.orphan = None;
                s.last_reassembled = Some((o.start, o.end));
                let b = o.begun;
                let bytes = o.end.wrapping_sub(seq).min(len);
                Start {
                    continues: Continues::Record {
                        begun: b,
                        bytes,
                        ends: true,
                        broken: false,
                    },
                    at: Some(bytes),
                    sets: b.sets(),
                    chosen: b.chosen,
                    change_cipher: b.content_type == CHANGE_CIPHER_SPEC,
                }
            } else {
                let mut part_of = None;
                if let Some(Pending::Record {
                    begun,
                    start,
                    end,
                    hole,
                    ..
                }) = &mut s.pending
                    && inside((*start, *end))
                {
                    if hole.is_some_and(fills) {
                        *hole = None;
                    }
                    part_of = Some(*begun);
                }
                let continues = match part_of {
                    Some(begun) => Continues::Record {
                        begun,
                        bytes: len,
                        ends: false,
                        broken: false,
                    },
                    None => Continues::Nothing,
                };
                let protocol = match continues {
                    Continues::Record { .. } => "TCP",
                    _ => version_label(version),
                };
                return Seen {
                    version,
                    change_cipher_before,
                    continues,
                    protocol,
                };
            }
        } else {
            let gap_from = s.next.filter(|&n| before(n, seq));
            s.next = Some(seg_end);
            Self::start(s, seq, len, gap_from, d)
        };
        if self.version == 0 && st.sets != 0 {
            self.version = st.sets;
        }
        if st.chosen != 0 {
            self.version = st.chosen;
        }
        let mut change_cipher = st.change_cipher;
        // Nothing shown as TLS: the segment carries part of a record only.
        let mut part_only = st.at.is_none();
        if let Some(k) = st.at
            && k < len
        {
            let unknown_first = k == 0 && layer(self.version) == Layer::Checked && !d.first_looks();
            s.pending = None;
            match d.walk_from(k) {
                Some(w) if !unknown_first => {
                    let at_start = w.end() == k
                        || w.begun().is_some_and(|b| {
                            w.end() == k.saturating_add(5).saturating_add(u32::from(b.length))
                        });
                    part_only = at_start && matches!(st.continues, Continues::Nothing);
                    if self.version == 0 && w.sets != 0 {
                        self.version = w.sets;
                    }
                    change_cipher |= w.change_cipher;
                    let end = seq.wrapping_add(w.end());
                    if let Some(&b) = w.begun() {
                        s.pending = Some(Pending::Record {
                            begun: b,
                            start: end.wrapping_sub(5).wrapping_sub(u32::from(b.length)),
                            end,
                            hole: None,
                            broken: stale,
                        });
                    } else if w.end() < len {
                        let n = len.saturating_sub(w.end()).min(4);
                        let mut bytes = [0u8; 4];
                        let skip = 4usize.saturating_sub(usize::try_from(n).unwrap_or(4));
                        for (slot, b) in bytes.iter_mut().zip(d.tail.iter().skip(skip)) {
                            *slot = *b;
                        }
                        s.pending = Some(Pending::Header {
                            seq: end,
                            bytes,
                            len: u8::try_from(n).unwrap_or(4),
                        });
                    }
                }
                // The records do not go on where the digest can follow
                // them: the next segment starts afresh.
                _ => {}
            }
        }
        if change_cipher {
            s.change_cipher = true;
        }
        let broken = matches!(st.continues, Continues::Record { broken: true, .. });
        let protocol = if part_only || broken {
            "TCP"
        } else if self.version != 0 {
            version_label(self.version)
        } else if matches!(st.continues, Continues::Nothing) && d.first_looks() {
            // Hellos only: shown with their record's version.
            let [_, a, b, _] = d.head;
            version_label(be16([a, b]))
        } else {
            "SSL"
        };
        Seen {
            version,
            change_cipher_before,
            continues: st.continues,
            protocol,
        }
    }

    /// What a segment in order (after a gap from `gap_from`, when there
    /// is one) continues.
    pub(super) fn start(
        s: &mut Side,
        seq: u32,
        len: u32,
        gap_from: Option<u32>,
        d: &Digest,
    ) -> Start {
        let seg_end = seq.wrapping_add(len);
        let mut st = Start {
            continues: Continues::Nothing,
            at: Some(0),
            sets: 0,
            chosen: 0,
            change_cipher: false,
        };
        match s.pending {
            Some(Pending::Header {
                seq: at,
                bytes,
                len: n,
            }) if seq == at.wrapping_add(u32::from(n)) => {
                st.continues = Continues::Header { bytes, len: n };
                let need = 5u8.saturating_sub(n);
                if len < u32::from(need) {
                    // Still cut short.
                    let mut more = bytes;
                    let mut m = n;
                    for b in d.head.iter().take(usize::try_from(len).unwrap_or(4)) {
                        if let Some(slot) = more.get_mut(usize::from(m)) {
                            *slot = *b;
                            m = m.saturating_add(1);
                        }
                    }
                    s.pending = Some(Pending::Header {
                        seq: at,
                        bytes: more,
                        len: m,
                    });
                    st.at = None;
                    return st;
                }
                let mut h = [0u8; 5];
                for (slot, b) in h
                    .iter_mut()
                    .zip(bytes.iter().take(usize::from(n)).chain(d.head.iter()))
                {
                    *slot = *b;
                }
                let [t, v0, v1, l0, l1] = h;
                let rlen = be16([l0, l1]);
                let end = u32::from(need).saturating_add(u32::from(rlen));
                let begun = Begun {
                    content_type: t,
                    version: be16([v0, v1]),
                    length: rlen,
                    ..Begun::default()
                };
                s.pending = None;
                if !valid_content_type(t) {
                    st.at = None;
                } else if end <= len {
                    st.sets = begun.sets();
                    st.change_cipher = t == CHANGE_CIPHER_SPEC;
                    st.at = Some(end);
                } else {
                    s.pending = Some(Pending::Record {
                        begun,
                        start: at,
                        end: at.wrapping_add(5).wrapping_add(u32::from(rlen)),
                        hole: None,
                        broken: false,
                    });
                    st.at = None;
                }
            }
            Some(Pending::Record {
                begun,
                start,
                end,
                mut hole,
                mut broken,
            }) if within(seq, start, end) && seq != start => {
                if let Some(from) = gap_from {
                    if hole.is_some() {
                        broken = true;
                    }
                    hole = Some((from, seq));
                }
                let missing = broken || hole.is_some();
                let bytes = end.wrapping_sub(seq);
                let ends = !before(seg_end, end);
                st.continues = Continues::Record {
                    begun,
                    bytes,
                    ends,
                    broken: missing,
                };
                if ends {
                    if !missing {
                        st.sets = begun.sets();
                        st.chosen = begun.chosen;
                        st.change_cipher = begun.content_type == CHANGE_CIPHER_SPEC;
                        s.last_reassembled = Some((start, end));
                    } else if let (Some((hole_from, hole_to)), false) = (hole, broken) {
                        // Shown when a segment sent again fills the gap.
                        s.orphan = Some(Orphan {
                            begun,
                            start,
                            end,
                            hole_from,
                            hole_to,
                        });
                    }
                    s.pending = None;
                    st.at = Some(bytes);
                } else {
                    s.pending = Some(Pending::Record {
                        begun,
                        start,
                        end,
                        hole,
                        broken,
                    });
                    st.at = None;
                }
            }
            // A gap past where the record ends: a segment sent again may
            // end it yet.
            Some(Pending::Record {
                begun, start, end, ..
            }) if gap_from.is_some() && !before(seq, end) => {
                s.orphan = gap_from.map(|hole_from| Orphan {
                    begun,
                    start,
                    end,
                    hole_from,
                    hole_to: end,
                });
                s.pending = None;
            }
            // Past where the record ended: it never does.
            Some(_) | None => s.pending = None,
        }
        st
    }
}
