//! What a segment's records are, made where its frame is decoded: a
//! few dozen bytes ([`Digest`]) the analysis follows the records with.

use super::{
    APPLICATION_DATA, CHANGE_CIPHER_SPEC, HANDSHAKE, SERVER_HELLO, Selection, TLS12, authoritative,
    handshake_messages, header, looks_like_record, looks_like_sslv3, plausible,
    server_hello_version, session_version, valid_content_type,
};

/// A record begun in a segment and not ended in it: what showing it in
/// the segment that ends it takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Begun {
    pub content_type: u8,
    pub version: u16,
    pub length: u16,
    /// The first bytes of its body.
    pub head: [u8; 5],
    /// How many of them were there (low four bits), and how many of the
    /// handshake messages (high four bits).
    pub(super) counts: u8,
    /// The handshake messages that begin in that segment (a handshake
    /// record's).
    pub messages: [u8; 4],
    /// A Server Hello's chosen version, when the segment held all of it.
    pub chosen: u16,
    /// Where in its body the first handshake message that did not begin
    /// in that segment begins.
    pub next_message: u16,
}

impl Begun {
    /// A record's header alone: nothing known of its body.
    pub fn new(content_type: u8, version: u16, length: u16) -> Begun {
        Begun {
            content_type,
            version,
            length,
            ..Begun::default()
        }
    }

    pub(super) fn of(payload: &[u8], at: usize, t: u8, v: u16, length: u16) -> Begun {
        let body = payload.get(at.saturating_add(5)..).unwrap_or_default();
        let mut b = Begun {
            content_type: t,
            version: v,
            length,
            ..Begun::default()
        };
        let mut head_len = 0u8;
        for (slot, x) in b.head.iter_mut().zip(body) {
            *slot = *x;
            head_len = head_len.saturating_add(1);
        }
        let mut count = 0u8;
        if t == HANDSHAKE {
            for (ht, m_at, len) in handshake_messages(body) {
                if let Some(slot) = b.messages.get_mut(usize::from(count)) {
                    *slot = ht;
                    count = count.saturating_add(1);
                }
                let next = m_at
                    .saturating_add(4)
                    .saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
                b.next_message = u16::try_from(next).unwrap_or(u16::MAX);
                let whole = m_at
                    .checked_add(4)
                    .and_then(|s| Some((s, s.checked_add(usize::try_from(len).ok()?)?)))
                    .and_then(|(s, e)| body.get(s..e));
                if ht == SERVER_HELLO
                    && let Some(sh) = whole
                {
                    b.chosen = server_hello_version(sh).unwrap_or(0);
                }
            }
        }
        b.counts = count << 4 | head_len;
        b
    }

    /// How many of its body's first bytes were there.
    pub fn head_len(&self) -> u8 {
        self.counts & 0xf
    }

    /// The handshake messages that begin in the segment it begins in.
    pub fn messages(&self) -> &[u8] {
        self.messages
            .get(..usize::from(self.counts >> 4))
            .unwrap_or_default()
    }

    /// The version an unknown session takes when this record is shown.
    pub(super) fn sets(&self) -> u16 {
        let first = self.head.first().copied().filter(|_| self.head_len() > 0);
        let mut v = 0;
        if authoritative(self.content_type, first) && session_version(self.version) {
            v = self.version;
        }
        if self.chosen != 0 {
            v = self.chosen;
        }
        v
    }
}

/// The records read from one place in a segment to its end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Walk {
    /// Where the next record would begin (past the segment's end when the
    /// last record goes on in later segments; before it when a header is
    /// cut short; the segment's length when all is read): low and high
    /// parts, two bytes lighter than a `u32` in every TCP segment's facts.
    pub(super) end_low: u16,
    pub(super) end_high: u8,
    /// Where it starts in the segment.
    pub start: u16,
    /// The session version it leaves an unknown session at (0: unknown).
    pub sets: u16,
    /// The last record, when it goes on past the segment (a content type
    /// of 0: none does).
    pub begun: Begun,
    /// A Change Cipher Spec among its whole records.
    pub change_cipher: bool,
}

impl Walk {
    pub fn end(&self) -> u32 {
        u32::from(self.end_high) << 16 | u32::from(self.end_low)
    }

    pub(super) fn set_end(&mut self, end: usize) {
        let end = u32::try_from(end).unwrap_or(u32::MAX).min(0xff_ffff);
        self.end_low = (end & 0xffff) as u16;
        self.end_high = (end >> 16) as u8;
    }

    pub fn begun(&self) -> Option<&Begun> {
        (self.begun.content_type != 0).then_some(&self.begun)
    }
}

/// The records of `payload` from `start`, as a session of TLS 1.2 reads
/// them (a record of an unknown type: the rest is ignored).
pub(super) fn walk(payload: &[u8], start: usize) -> Walk {
    let mut w = Walk {
        start: u16::try_from(start).unwrap_or(u16::MAX),
        ..Walk::default()
    };
    let mut at = start;
    let len = payload.len();
    while at < len {
        let Some((t, v, rlen)) = header(payload, at) else {
            break; // a header cut short
        };
        if !valid_content_type(t) {
            at = len;
            break;
        }
        let end = at.saturating_add(5).saturating_add(usize::from(rlen));
        let b = Begun::of(payload, at, t, v, rlen);
        if end > len {
            w.begun = b;
            at = end;
            break;
        }
        if b.chosen != 0 {
            w.sets = b.chosen;
        } else if w.sets == 0 {
            w.sets = b.sets();
        }
        w.change_cipher |= t == CHANGE_CIPHER_SPEC;
        at = end;
    }
    w.set_end(at);
    w
}

/// The records read from the first plausible record header after a
/// segment's first byte, kept small (every TCP segment's facts have room
/// for a digest): where they start and end, what they set, and the type,
/// version, length and first body byte of the record that goes on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resumed {
    /// 0: no plausible header after the first byte.
    pub start: u16,
    pub(super) end_low: u16,
    pub(super) end_high: u8,
    pub change_cipher: bool,
    pub sets: u16,
    pub(super) begun_type: u8,
    pub(super) begun_first: u8,
    pub(super) begun_version: u16,
    pub(super) begun_length: u16,
}

impl Resumed {
    pub(super) fn of(w: &Walk) -> Resumed {
        let b = w.begun;
        Resumed {
            start: w.start,
            end_low: w.end_low,
            end_high: w.end_high,
            change_cipher: w.change_cipher,
            sets: w.sets,
            begun_type: b.content_type,
            begun_first: b.head.first().copied().unwrap_or(0),
            begun_version: b.version,
            begun_length: b.length,
        }
    }

    /// As a walk (the record that goes on with its first body byte only).
    pub(super) fn walk(&self) -> Walk {
        let mut begun = Begun {
            content_type: self.begun_type,
            version: self.begun_version,
            length: self.begun_length,
            ..Begun::default()
        };
        if let Some(h) = begun.head.first_mut() {
            *h = self.begun_first;
        }
        begun.counts = 1;
        Walk {
            end_low: self.end_low,
            end_high: self.end_high,
            start: self.start,
            sets: self.sets,
            begun,
            change_cipher: self.change_cipher,
        }
    }
}

/// What the analysis needs of a TLS segment to follow the records across
/// segments: its length, first and last bytes, and the records read from
/// its start and from the first place after it that holds a plausible
/// record header (where a record begun earlier most likely ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    pub from_start: Walk,
    pub from_next: Resumed,
    pub head: [u8; 4],
    pub tail: [u8; 4],
    /// How its conversation may be read as TLS (low bit: by its port),
    /// whether the payload starts with a record header that tshark's
    /// heuristic takes (second bit), and with one of an SSL 3.0 to TLS 1.2
    /// version (third bit: how a session of unknown version reads its
    /// first record).
    pub(super) flags: u8,
}

impl Digest {
    /// The digest of a segment's payload; `None` for one longer than 64 KiB.
    pub fn of(payload: &[u8], selection: Selection) -> Option<Digest> {
        u16::try_from(payload.len()).ok()?;
        let mut head = [0; 4];
        for (h, b) in head.iter_mut().zip(payload) {
            *h = *b;
        }
        let mut tail = [0; 4];
        let from = payload.len().saturating_sub(4);
        for (t, b) in tail.iter_mut().zip(payload.get(from..).unwrap_or_default()) {
            *t = *b;
        }
        // The next plausible header, found by its version's first byte:
        // the first of application data in TLS 1.2's (or TLS 1.3's)
        // records, what nearly every record past a handshake is, else the
        // first of any (encrypted bytes look like one about once in 7
        // million bytes, like one of TLS 1.2's application data once in
        // 60 million).
        let mut candidates = memchr::memchr2_iter(3, 1, payload.get(2..).unwrap_or_default())
            .map(|i| i.saturating_add(1))
            .filter(|&i| plausible(payload, i));
        let first = candidates.next();
        let next = first
            .into_iter()
            .chain(candidates)
            .find(|&i| {
                header(payload, i).is_some_and(|(t, v, _)| t == APPLICATION_DATA && v == TLS12)
            })
            .or(first);
        let flags = u8::from(selection == Selection::Port)
            | u8::from(looks_like_record(payload)) << 1
            | u8::from(looks_like_sslv3(payload, 0)) << 2;
        Some(Digest {
            from_start: walk(payload, 0),
            from_next: next
                .map(|i| Resumed::of(&walk(payload, i)))
                .unwrap_or_default(),
            head,
            tail,
            flags,
        })
    }

    pub fn selection(&self) -> Selection {
        if self.flags & 1 != 0 {
            Selection::Port
        } else {
            Selection::Heuristic
        }
    }

    /// The payload starts with a record header tshark's heuristic takes.
    pub fn looks(&self) -> bool {
        self.flags & 2 != 0
    }

    pub(super) fn first_looks(&self) -> bool {
        self.flags & 4 != 0
    }

    /// The walk from `at`, when the digest has it.
    pub fn walk_from(&self, at: u32) -> Option<Walk> {
        if at == 0 {
            return Some(self.from_start);
        }
        let n = &self.from_next;
        (n.start != 0 && u32::from(n.start) == at).then(|| n.walk())
    }
}
