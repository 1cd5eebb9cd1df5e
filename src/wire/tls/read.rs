//! A segment read with what the analysis said came before it: the
//! records the frame loops show, and what each says.

use super::digest::Begun;
use super::{
    ALERT, APPLICATION_DATA, CHANGE_CIPHER_SPEC, HANDSHAKE, HEARTBEAT, SERVER_HELLO, SSL3, TLCP,
    TLS10, TLS11, TLS12, alert_description_name, alert_level_name, authoritative,
    encrypted_handshake, handshake_messages, handshake_name, header, looks_like_sslv3,
    server_hello_version, session_version, valid_content_type, version_label,
};
use crate::wire::{be16, be24};

/// What a segment's start continues, as the analysis followed the
/// sender's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Continues {
    /// Nothing: records start at the segment's first byte.
    Nothing,
    /// A record header cut short at the end of the sender's previous
    /// segment: its first bytes.
    Header { bytes: [u8; 4], len: u8 },
    /// A record begun in an earlier segment: its first `bytes` bytes of
    /// this segment belong to it, and it ends in this segment (`ends`;
    /// else it goes on past it). `broken`: bytes of it were never seen.
    Record {
        begun: Begun,
        bytes: u32,
        ends: bool,
        broken: bool,
    },
    /// Sent again (a retransmission, or out of order): tshark hands it to
    /// no protocol above TCP; `overlaps` when it falls inside a record
    /// already put together (tshark then notes a reassembly error).
    Resent { overlaps: bool },
}

/// What the analysis says of a TLS segment: the session's version before
/// it, whether its sender changed cipher in an earlier frame, and what its
/// start continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub version: u16,
    pub change_cipher_before: bool,
    pub continues: Continues,
    /// The Protocol column the segment has (what [`read`] says, from the
    /// digest: the report counts frames by it).
    pub protocol: &'static str,
}

/// A handshake message of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    pub kind: u8,
    /// Where it starts in the payload, when this segment has it.
    pub at: Option<usize>,
    /// Its length (0 when not known: a record put together from earlier
    /// segments).
    pub len: u32,
    /// It goes on past its record (tshark's `[Certificate Fragment]`).
    pub fragment: bool,
}

impl Message {
    pub(super) fn known(kind: u8) -> Message {
        Message {
            kind,
            at: None,
            len: 0,
            fragment: false,
        }
    }
}

/// What a record or a stretch of a segment says, in the Info column's
/// words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Says {
    ChangeCipherSpec,
    Alert {
        level: u8,
        description: u8,
    },
    EncryptedAlert,
    /// Handshake messages.
    Handshake(Vec<Message>),
    EncryptedHandshake,
    ApplicationData,
    Heartbeat {
        request: bool,
    },
    EncryptedHeartbeat,
    /// A TLS 1.2 record with a connection ID: nothing in the column.
    ConnectionId,
    /// Bytes that do not read as records.
    ContinuationData,
    /// A record of an unknown type in a TLS 1.0-1.2 session: the rest.
    IgnoredUnknown,
}

impl Says {
    /// What it adds to the Info column (nothing for a connection ID).
    pub fn write(&self, s: &mut String) {
        use std::fmt::Write as _;
        match self {
            Says::ChangeCipherSpec => s.push_str("Change Cipher Spec"),
            Says::Alert { level, description } => {
                let _ = write!(
                    s,
                    "Alert (Level: {}, Description: {})",
                    alert_level_name(*level),
                    alert_description_name(*description)
                );
            }
            Says::EncryptedAlert => s.push_str("Encrypted Alert"),
            Says::Handshake(m) => {
                for (i, msg) in m.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    let name = handshake_name(msg.kind).unwrap_or("Unknown");
                    if msg.fragment {
                        let _ = write!(s, "[{name} Fragment]");
                    } else {
                        s.push_str(name);
                    }
                }
            }
            Says::EncryptedHandshake => s.push_str("Encrypted Handshake Message"),
            Says::ApplicationData => s.push_str("Application Data"),
            Says::Heartbeat { request: true } => s.push_str("Heartbeat Request"),
            Says::Heartbeat { request: false } => s.push_str("Heartbeat Response"),
            Says::EncryptedHeartbeat => s.push_str("Encrypted Heartbeat"),
            Says::ConnectionId => {}
            Says::ContinuationData => s.push_str("Continuation Data"),
            Says::IgnoredUnknown => s.push_str("Ignored Unknown Record"),
        }
    }

    /// It adds nothing to the Info column.
    pub fn is_silent(&self) -> bool {
        matches!(self, Says::ConnectionId) || matches!(self, Says::Handshake(m) if m.is_empty())
    }
}

/// A record shown in a segment, or a stretch of bytes read as none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    /// Where its header starts in the payload (`None`: it began in an
    /// earlier segment and is shown reassembled).
    pub at: Option<usize>,
    /// Where the bytes it spans in this segment start and end.
    pub span: (usize, usize),
    pub content_type: u8,
    pub version: u16,
    pub length: u16,
    /// Its body, when this segment holds all of it.
    pub body: Option<&'a [u8]>,
    /// The session's version as the record layer is shown with (the
    /// record's own while the session's is unknown; before a Server
    /// Hello in it chooses one).
    pub shown_version: u16,
    pub says: Says,
}

impl Record<'_> {
    /// A record of the record layer (not bytes read as none).
    pub fn is_record(&self) -> bool {
        !matches!(self.says, Says::ContinuationData | Says::IgnoredUnknown)
    }
}

impl Reading<'_> {
    /// TLS read some of it (tshark lists it in `frame.protocols`): not a
    /// segment inside a record, not one sent again.
    pub fn read_as_tls(&self) -> bool {
        match self.shown {
            Shown::Records | Shown::RecordStarts => true,
            Shown::PartOfRecord => !self.records.is_empty() || self.read_after,
            Shown::Resent(_) => false,
        }
    }
}

/// How a TLS segment is shown beside its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// As TLS: its records.
    Records,
    /// As TCP: it only carries the start of a record (tshark's Info
    /// column is then `[TCP segment of a reassembled PDU]` alone).
    RecordStarts,
    /// As TCP: its TCP summary and `[TCP segment of a reassembled PDU]`,
    /// it carries part of a record (and, after it, the records listed:
    /// when bytes of that record were never seen).
    PartOfRecord,
    /// As TCP: sent again, not read as TLS (and tshark's note of a
    /// reassembly error, when `true`).
    Resent(bool),
}

/// What a TLS segment shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading<'a> {
    /// The Protocol column.
    pub protocol: &'static str,
    pub records: Vec<Record<'a>>,
    /// How much of it is shown as TLS ([`Shown`]).
    pub shown: Shown,
    /// The session's version after the segment.
    pub version: u16,
    /// TLS read bytes after a record that ended here (tshark lists it in
    /// `frame.protocols` even when they hold no whole record).
    pub read_after: bool,
}

/// How the record layer reads bytes in a session of a version.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Layer {
    /// TLS 1.0-1.2 and TLCP: a record of an unknown type ignores the rest.
    Classic,
    /// SSL 3.0: a record of an unknown type is continuation data, and the
    /// next one read after its length.
    Ssl3,
    /// An unknown version, or TLS 1.3: each record must look like one,
    /// else the rest is continuation data.
    Checked,
}

pub(super) fn layer(v: u16) -> Layer {
    match v {
        TLS10 | TLS11 | TLS12 | TLCP => Layer::Classic,
        SSL3 => Layer::Ssl3,
        _ => Layer::Checked,
    }
}

/// What a whole record says: from its type, body and the session.
pub(super) fn says_of(
    t: u8,
    length: u16,
    body: &[u8],
    ccs_before: bool,
    base: Option<usize>,
) -> Says {
    match t {
        CHANGE_CIPHER_SPEC => Says::ChangeCipherSpec,
        ALERT => match body {
            [level, description] => Says::Alert {
                level: *level,
                description: *description,
            },
            _ => Says::EncryptedAlert,
        },
        HANDSHAKE => {
            if encrypted_handshake(body, length, ccs_before) {
                Says::EncryptedHandshake
            } else {
                handshake_says(body, base)
            }
        }
        APPLICATION_DATA => Says::ApplicationData,
        HEARTBEAT => heartbeat(body, length),
        _ => Says::ConnectionId,
    }
}

/// A handshake record's body in the clear: its messages, up to the first
/// of an unknown type (one first taken for encrypted, as tshark does);
/// one that goes on past the record is a fragment.
pub(super) fn handshake_says(body: &[u8], base: Option<usize>) -> Says {
    let mut m = Vec::new();
    for (kind, at, len) in handshake_messages(body) {
        if handshake_name(kind).is_none() {
            if m.is_empty() {
                return Says::EncryptedHandshake;
            }
            break;
        }
        let end = at
            .saturating_add(4)
            .saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
        m.push(Message {
            kind,
            at: base.and_then(|b| b.checked_add(at)),
            len,
            fragment: end > body.len(),
        });
    }
    Says::Handshake(m)
}

/// A heartbeat in the clear: a request or response whose payload length
/// leaves 16 bytes of padding at least; else taken for encrypted.
pub(super) fn heartbeat(body: &[u8], length: u16) -> Says {
    if let Some(&[t, a, b]) = body.first_chunk::<3>() {
        let payload = be16([a, b]);
        let padding = i32::from(length)
            .saturating_sub(3)
            .saturating_sub(i32::from(payload));
        if (t == 1 || t == 2) && padding >= 16 {
            return Says::Heartbeat { request: t == 1 };
        }
    }
    Says::EncryptedHeartbeat
}

/// Reads a TLS segment's payload with what the analysis said came before
/// it.
pub fn read<'a>(payload: &'a [u8], seen: &Seen) -> Reading<'a> {
    let mut version = seen.version;
    let mut shown = version_label(version);
    let mut records = Vec::new();
    let ccs_before = seen.change_cipher_before;
    let len = payload.len();
    let mut at = 0usize;
    match seen.continues {
        Continues::Nothing => {}
        Continues::Resent { overlaps } => {
            return Reading {
                protocol: "TCP",
                records,
                shown: Shown::Resent(overlaps),
                version,
                read_after: false,
            };
        }
        Continues::Header { bytes, len: n } => {
            // The header's first bytes came before; the rest is here.
            let n = usize::from(n).min(4);
            let mut h = [0u8; 5];
            for (slot, b) in h.iter_mut().zip(bytes.iter().take(n).chain(payload.iter())) {
                *slot = *b;
            }
            let need = 5usize.saturating_sub(n);
            if len >= need {
                let [t, v0, v1, l0, l1] = h;
                let (v, rlen) = (be16([v0, v1]), be16([l0, l1]));
                let end = need.saturating_add(usize::from(rlen));
                if valid_content_type(t) && end <= len {
                    let body = payload.get(need..end).unwrap_or_default();
                    let r = record_at(None, (0, end), t, v, rlen, body, &mut version, ccs_before);
                    shown = label_after(version, &r);
                    records.push(r);
                    at = end;
                } else if valid_content_type(t) {
                    return Reading {
                        protocol: "TCP",
                        records,
                        shown: Shown::RecordStarts,
                        version,
                        read_after: false,
                    };
                }
            }
        }
        Continues::Record {
            begun,
            bytes,
            ends,
            broken,
        } => {
            let k = usize::try_from(bytes).unwrap_or(usize::MAX).min(len);
            if !ends {
                return Reading {
                    protocol: "TCP",
                    records,
                    shown: Shown::PartOfRecord,
                    version,
                    read_after: false,
                };
            }
            if !broken {
                // The body's end is in this segment; its start maybe not.
                let body_len = usize::from(begun.length);
                let mut body = [0u8; 5];
                let known = usize::from(begun.head_len()).min(5);
                // Its first five bytes: those kept, the rest from here
                // when they are here.
                let here_from = body_len.saturating_sub(k);
                for (i, slot) in body.iter_mut().enumerate() {
                    let b = if i < known {
                        begun.head.get(i)
                    } else {
                        i.checked_sub(here_from).and_then(|j| payload.get(j))
                    };
                    *slot = b.copied().unwrap_or(0);
                }
                let whole_here =
                    (body_len <= k).then(|| payload.get(k.saturating_sub(body_len)..k));
                let head = body.get(..5.min(body_len)).unwrap_or_default();
                let here = payload.get(..k).unwrap_or_default();
                let r = reassembled(
                    &begun,
                    (0, k),
                    head,
                    here,
                    whole_here.flatten(),
                    &mut version,
                    ccs_before,
                );
                shown = label_after(version, &r);
                records.push(r);
            }
            at = k;
        }
    }
    // Whole records from here; a change of cipher in this frame does not
    // count for this frame's handshake records.
    while at < len {
        let rest = len.saturating_sub(at);
        if rest < 5 {
            break;
        }
        let l = layer(version);
        let Some((t, v, rlen)) = header(payload, at) else {
            break;
        };
        if l == Layer::Classic && !valid_content_type(t) {
            records.push(stretch(at, len, Says::IgnoredUnknown, version));
            break;
        }
        if l == Layer::Checked && !looks_like_sslv3(payload, at) {
            records.push(stretch(at, len, Says::ContinuationData, version));
            shown = version_label(version);
            break;
        }
        let end = at.saturating_add(5).saturating_add(usize::from(rlen));
        if !valid_content_type(t) {
            // SSL 3.0: read on after it.
            records.push(stretch(at, end.min(len), Says::ContinuationData, version));
            at = end;
            continue;
        }
        if end > len {
            break;
        }
        let body = payload.get(at.saturating_add(5)..end).unwrap_or_default();
        let r = record_at(
            Some(at),
            (at, end),
            t,
            v,
            rlen,
            body,
            &mut version,
            ccs_before,
        );
        shown = label_after(version, &r);
        records.push(r);
        at = end;
    }
    if records.is_empty() && at < len && matches!(seen.continues, Continues::Nothing) {
        return Reading {
            protocol: "TCP",
            records,
            shown: Shown::RecordStarts,
            version,
            read_after: false,
        };
    }
    // A record completed with bytes never seen is not shown; what follows
    // it is, after TCP's summary.
    if let Continues::Record {
        broken: true,
        bytes,
        ..
    } = seen.continues
    {
        return Reading {
            protocol: "TCP",
            records,
            shown: Shown::PartOfRecord,
            version,
            read_after: usize::try_from(bytes).is_ok_and(|b| b < len),
        };
    }
    Reading {
        protocol: shown,
        records,
        shown: Shown::Records,
        version,
        read_after: false,
    }
}

/// The Protocol column after a record: the session's version once known
/// (a Server Hello's choice included), else the record's.
pub(super) fn label_after(session: u16, r: &Record<'_>) -> &'static str {
    version_label(if session != 0 { session } else { r.version })
}

pub(super) fn stretch(from: usize, to: usize, says: Says, version: u16) -> Record<'static> {
    Record {
        at: None,
        span: (from, to),
        content_type: 0,
        version: 0,
        length: 0,
        body: None,
        shown_version: version,
        says,
    }
}

/// A whole record of this segment, shown with the session at `version`
/// (which it may set).
#[allow(clippy::too_many_arguments)]
pub(super) fn record_at<'a>(
    at: Option<usize>,
    span: (usize, usize),
    t: u8,
    v: u16,
    length: u16,
    body: &'a [u8],
    version: &mut u16,
    ccs_before: bool,
) -> Record<'a> {
    let base = at.map(|a| a.saturating_add(5));
    let says = says_of(t, length, body, ccs_before, base);
    let mut shown = *version;
    if *version == 0 {
        shown = v;
        if authoritative(t, body.first().copied()) && session_version(v) {
            *version = v;
        }
    }
    if let Says::Handshake(m) = &says {
        for msg in m.iter().filter(|m| !m.fragment) {
            if msg.kind == SERVER_HELLO
                && let Some(sh) = msg.at.and_then(|s| {
                    let s = s.checked_sub(base?)?.checked_add(4)?;
                    body.get(s..s.checked_add(usize::try_from(msg.len).ok()?)?)
                })
                && let Some(chosen) = server_hello_version(sh)
            {
                *version = chosen;
            }
        }
    }
    Record {
        at,
        span,
        content_type: t,
        version: v,
        length,
        body: Some(body),
        shown_version: shown,
        says,
    }
}

/// A record begun in earlier segments and ended in this one, shown from
/// what the analysis kept of its start (`head`: its body's first bytes)
/// and, when this segment holds all of its body, the body.
pub(super) fn reassembled<'a>(
    b: &Begun,
    span: (usize, usize),
    head: &[u8],
    here: &'a [u8],
    body: Option<&'a [u8]>,
    version: &mut u16,
    ccs_before: bool,
) -> Record<'a> {
    let says = match body {
        Some(whole) => says_of(b.content_type, b.length, whole, ccs_before, None),
        None => match b.content_type {
            HANDSHAKE if encrypted_handshake(head, b.length, ccs_before) => {
                Says::EncryptedHandshake
            }
            HANDSHAKE => {
                let mut m: Vec<Message> = b.messages().iter().map(|&t| Message::known(t)).collect();
                // The messages that begin in this segment (before `span.1`,
                // where the record ends), when the chain reaches it.
                let body_len = usize::from(b.length);
                let here_from = body_len.saturating_sub(span.1);
                let mut at = usize::from(b.next_message);
                while at >= here_from && at < body_len {
                    let Some(&[t, x, y, z]) = here
                        .get(at.saturating_sub(here_from)..)
                        .and_then(|h| h.first_chunk::<4>())
                    else {
                        break;
                    };
                    let len = be24([x, y, z]);
                    m.push(Message {
                        kind: t,
                        at: Some(at.saturating_sub(here_from)),
                        len,
                        fragment: false,
                    });
                    at = at
                        .saturating_add(4)
                        .saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
                }
                Says::Handshake(m)
            }
            t => says_of(t, b.length, head, ccs_before, None),
        },
    };
    let mut shown = *version;
    if *version == 0 {
        shown = b.version;
        let first = head.first().copied();
        if authoritative(b.content_type, first) && session_version(b.version) {
            *version = b.version;
        }
    }
    if b.chosen != 0 {
        *version = b.chosen;
    }
    Record {
        at: None,
        span,
        content_type: b.content_type,
        version: b.version,
        length: b.length,
        body,
        shown_version: shown,
        says,
    }
}
