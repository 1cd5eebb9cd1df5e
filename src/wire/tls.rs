//! TLS over TCP (RFC 5246, RFC 8446): the HTTPS, RDP, LDAPS and API-server
//! sessions a mirror of a fabric's hosts carries beside RoCE. Without keys
//! a capture shows the record layer (content type, version, length), the
//! handshake in the clear up to the change of cipher (Client Hello with
//! its server name, Server Hello with the version it chose), alerts and
//! heartbeats, and how long the encrypted records are.
//!
//! Records do not follow TCP's segments: one segment holds several, and a
//! record of 16 KiB spans a dozen. As tshark does, a record is shown in the
//! segment that completes it, and the segments before are "a segment of a
//! reassembled PDU". The analysis follows that from a [`Digest`] of each
//! segment (a few dozen bytes, made where the frame is decoded); the frame
//! loops that show frames then read the segment's bytes with what the
//! analysis said came before them ([`Seen`], [`read`]).

use super::{be16, be24};

pub const CHANGE_CIPHER_SPEC: u8 = 20;
pub const ALERT: u8 = 21;
pub const HANDSHAKE: u8 = 22;
pub const APPLICATION_DATA: u8 = 23;
pub const HEARTBEAT: u8 = 24;
/// A TLS 1.2 record with a connection ID (RFC 9146).
pub const TLS12_CID: u8 = 25;

pub const SSL3: u16 = 0x0300;
pub const TLS10: u16 = 0x0301;
pub const TLS11: u16 = 0x0302;
pub const TLS12: u16 = 0x0303;
pub const TLS13: u16 = 0x0304;
/// China's TLCP (GM/T 0024), tshark's `GMTLSv1`.
pub const TLCP: u16 = 0x0101;

/// A record's length may be at most 2^14 + 2048 (an encrypted one).
pub const MAX_RECORD: u16 = 16384 + 2048;

pub const CLIENT_HELLO: u8 = 1;
pub const SERVER_HELLO: u8 = 2;

/// TCP ports tshark hands to TLS whatever the segment holds (HTTPS,
/// IMAPS, LDAPS, DNS over TLS, SIPS, AMQPS, MQTT over TLS, ...), sorted.
pub const PORTS: [u16; 25] = [
    143, 324, 443, 465, 636, 802, 853, 993, 995, 1300, 2221, 2443, 3249, 3250, 3251, 3252, 3496,
    5061, 5671, 5684, 5868, 8883, 11207, 19999, 27017,
];

/// What tshark says the application data of a TLS conversation on a
/// port is (its TLS ports', and RDP's), by port.
const APPLICATIONS: [(u16, &str); 26] = [
    (143, "Internet Message Access Protocol"),
    (324, "RPKI-Router Protocol"),
    (443, "Hypertext Transfer Protocol"),
    (465, "Simple Mail Transfer Protocol"),
    (636, "Lightweight Directory Access Protocol"),
    (802, "Modbus/TCP"),
    (853, "Domain Name System"),
    (993, "Internet Message Access Protocol"),
    (995, "Post Office Protocol"),
    (1300, "Q.931"),
    (2221, "EtherNet/IP (Industrial Protocol)"),
    (2443, "Skinny Client Control Protocol"),
    (
        3249,
        "Intel Omni-Path FE Header - Omni-Path Fabric Executive Header",
    ),
    (
        3250,
        "Intel Omni-Path FE Header - Omni-Path Fabric Executive Header",
    ),
    (
        3251,
        "Intel Omni-Path FE Header - Omni-Path Fabric Executive Header",
    ),
    (
        3252,
        "Intel Omni-Path FE Header - Omni-Path Fabric Executive Header",
    ),
    (3389, "TPKT - ISO on TCP - RFC1006"),
    (3496, "DoIP (ISO13400) Protocol"),
    (5061, "Session Initiation Protocol"),
    (5671, "Advanced Message Queuing Protocol"),
    (5684, "Constrained Application Protocol"),
    (5868, "Diameter Protocol"),
    (8883, "MQ Telemetry Transport Protocol"),
    (11207, "Couchbase Protocol"),
    (19999, "Distributed Network Protocol 3.0"),
    (27017, "Mongo Wire Protocol"),
];

/// The protocol tshark takes a conversation's application data for, by
/// the source port first.
pub fn application(sport: u16, dport: u16) -> Option<&'static str> {
    [sport, dport].into_iter().find_map(|p| {
        APPLICATIONS
            .binary_search_by_key(&p, |(port, _)| *port)
            .ok()
            .and_then(|i| APPLICATIONS.get(i))
            .map(|(_, name)| *name)
    })
}

/// TCP ports another of tshark's dissectors takes first (HTTP, SSH, SMB,
/// X11, VNC, NVMe/TCP, ...), sorted: on them a segment is never tried as
/// TLS. On every other port, a conversation is TLS from the first segment
/// that starts with a record header (tshark's heuristic): RDP on 3389,
/// Kubernetes on 6443, anything on a port of its own.
const OTHER_PORTS: [u16; 286] = [
    7, 13, 19, 20, 21, 22, 23, 25, 37, 42, 43, 49, 53, 70, 79, 80, 88, 102, 110, 111, 119, 123,
    139, 161, 162, 179, 210, 323, 389, 427, 445, 464, 512, 513, 514, 515, 524, 547, 548, 554, 564,
    587, 631, 639, 647, 705, 854, 862, 873, 925, 988, 1080, 1090, 1099, 1102, 1153, 1194, 1213,
    1344, 1533, 1547, 1723, 1861, 1863, 1883, 1900, 1935, 2099, 2123, 2126, 2152, 2234, 2240, 2269,
    2321, 2322, 2345, 2401, 2404, 2502, 2571, 2575, 2600, 2710, 2812, 2869, 2944, 2945, 3002, 3003,
    3006, 3014, 3016, 3017, 3018, 3019, 3128, 3132, 3245, 3246, 3247, 3248, 3268, 3288, 3306, 3357,
    3369, 3386, 3452, 3478, 3632, 3671, 3689, 3724, 3804, 3860, 3863, 3868, 3918, 4002, 4155, 4189,
    4222, 4223, 4249, 4250, 4342, 4420, 4551, 4555, 4556, 4712, 4730, 4739, 4788, 4840, 4880, 5000,
    5010, 5060, 5084, 5094, 5222, 5253, 5353, 5432, 5445, 5500, 5501, 5534, 5672, 5683, 5701, 5900,
    5901, 5985, 5997, 6000, 6001, 6002, 6003, 6004, 6005, 6006, 6007, 6008, 6009, 6010, 6011, 6012,
    6013, 6014, 6015, 6016, 6017, 6018, 6019, 6020, 6021, 6022, 6023, 6024, 6025, 6026, 6027, 6028,
    6029, 6030, 6031, 6032, 6033, 6034, 6035, 6036, 6037, 6038, 6039, 6040, 6041, 6042, 6043, 6044,
    6045, 6046, 6047, 6048, 6049, 6050, 6051, 6052, 6053, 6054, 6055, 6056, 6057, 6058, 6059, 6060,
    6061, 6062, 6063, 6068, 6084, 6121, 6160, 6346, 6379, 6417, 6653, 6667, 6668, 6881, 6882, 6883,
    6884, 6885, 6886, 6887, 6888, 6889, 7000, 7075, 7171, 7172, 7236, 7275, 7276, 7871, 7911, 8009,
    8023, 8074, 8080, 8085, 8088, 8554, 8567, 9009, 9092, 9300, 9418, 9956, 10288, 11211, 11371,
    13400, 14001, 15740, 17500, 17755, 17756, 19006, 19042, 19043, 19506, 19543, 21064, 24800,
    29418, 34980, 44321, 44322, 44818, 48049, 48898, 57000,
];

/// How a TCP conversation comes to be read as TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// By its port: every segment, from the first.
    Port,
    /// From the first segment that starts with a record header on.
    Heuristic,
}

impl Selection {
    /// How a conversation between these ports is read as TLS, trying the
    /// lower port first as tshark does; `None` when another protocol has
    /// one of them.
    pub fn of_ports(a: u16, b: u16) -> Option<Selection> {
        for p in [a.min(b), a.max(b)] {
            if PORTS.binary_search(&p).is_ok() {
                return Some(Selection::Port);
            }
            if OTHER_PORTS.binary_search(&p).is_ok() {
                return None;
            }
        }
        Some(Selection::Heuristic)
    }
}

/// A port TLS or another protocol of tshark's has, so that no
/// heuristic (TLS's or HTTP's) is tried on it.
pub fn port_claimed(port: u16) -> bool {
    PORTS.binary_search(&port).is_ok() || OTHER_PORTS.binary_search(&port).is_ok()
}

/// A content type tshark takes as one (20 to 25).
pub fn valid_content_type(t: u8) -> bool {
    (CHANGE_CIPHER_SPEC..=TLS12_CID).contains(&t)
}

/// A record version the record layer is read with when the session's is
/// not known yet.
fn classic_version(v: u16) -> bool {
    matches!(v, SSL3 | TLS10 | TLS11 | TLS12 | TLCP)
}

/// A version a session can be known by.
fn session_version(v: u16) -> bool {
    matches!(v, SSL3 | TLS10 | TLS11 | TLS12 | TLS13 | TLCP)
}

/// The five bytes of a record header at `at`: content type, version,
/// length.
fn header(payload: &[u8], at: usize) -> Option<(u8, u16, u16)> {
    let h: &[u8; 5] = payload.get(at..)?.first_chunk()?;
    let [t, v0, v1, l0, l1] = *h;
    Some((t, be16([v0, v1]), be16([l0, l1])))
}

/// tshark's heuristic: the payload starts with a Handshake or Application
/// Data record header of SSL 3.0 to TLS 1.2 with a sane length.
pub fn looks_like_record(payload: &[u8]) -> bool {
    header(payload, 0).is_some_and(|(t, v, len)| {
        (t == HANDSHAKE || t == APPLICATION_DATA)
            && classic_version(v)
            && len > 0
            && len < MAX_RECORD
    })
}

/// A record header as the record layer reads one when the session's
/// version is not known (or is TLS 1.3): a valid type and an SSL 3.0 to
/// TLS 1.2 version.
fn looks_like_sslv3(payload: &[u8], at: usize) -> bool {
    header(payload, at).is_some_and(|(t, v, _)| valid_content_type(t) && classic_version(v))
}

/// A header that a record of real traffic would have: where a record
/// that continues from earlier segments may end. A valid type, an SSL 3.0
/// to TLS 1.2 version (TLS 1.3's records say 1.2) or TLCP's, and a length
/// its type has: a change of cipher, an alert or a heartbeat is short.
fn plausible(payload: &[u8], at: usize) -> bool {
    header(payload, at).is_some_and(|(t, v, len)| {
        let version = (SSL3..=TLS12).contains(&v) || v == TLCP;
        let length = match t {
            HANDSHAKE | APPLICATION_DATA => (1..=MAX_RECORD).contains(&len),
            CHANGE_CIPHER_SPEC | ALERT | HEARTBEAT => (1..=256).contains(&len),
            _ => false,
        };
        version && length
    })
}

/// The Protocol column's name of a version (tshark's short names); `SSL`
/// for one it does not know, and for a session whose version is not known
/// yet.
pub fn version_label(v: u16) -> &'static str {
    match v {
        0x0002 => "SSLv2",
        SSL3 => "SSLv3",
        TLS10 => "TLSv1",
        TLS11 => "TLSv1.1",
        TLS12 => "TLSv1.2",
        TLS13 => "TLSv1.3",
        TLCP => "GMTLSv1",
        0xfeff => "DTLSv1.0",
        0xfefd => "DTLSv1.2",
        0xfefc => "DTLSv1.3",
        _ => "SSL",
    }
}

/// A version's name in the record tree (`TLS 1.2 (0x0303)`).
pub fn version_name(v: u16) -> &'static str {
    match v {
        0x0002 => "SSL 2.0",
        SSL3 => "SSL 3.0",
        TLS10 => "TLS 1.0",
        TLS11 => "TLS 1.1",
        TLS12 => "TLS 1.2",
        TLS13 => "TLS 1.3",
        TLCP => "GMTLS",
        0xfeff => "DTLS 1.0",
        0xfefd => "DTLS 1.2",
        0xfefc => "DTLS 1.3",
        _ => "Unknown",
    }
}

/// A content type's name.
pub fn content_type_name(t: u8) -> &'static str {
    match t {
        CHANGE_CIPHER_SPEC => "Change Cipher Spec",
        ALERT => "Alert",
        HANDSHAKE => "Handshake",
        APPLICATION_DATA => "Application Data",
        HEARTBEAT => "Heartbeat",
        TLS12_CID => "Connection ID",
        _ => "Unknown",
    }
}

/// A handshake message's name, for the types tshark knows.
pub fn handshake_name(t: u8) -> Option<&'static str> {
    Some(match t {
        0 => "Hello Request",
        1 => "Client Hello",
        2 => "Server Hello",
        3 => "Hello Verify Request",
        4 => "New Session Ticket",
        5 => "End of Early Data",
        6 => "Hello Retry Request",
        8 => "Encrypted Extensions",
        11 => "Certificate",
        12 => "Server Key Exchange",
        13 => "Certificate Request",
        14 => "Server Hello Done",
        15 => "Certificate Verify",
        16 => "Client Key Exchange",
        20 => "Finished",
        21 => "Client Certificate URL",
        22 => "Certificate Status",
        23 => "Supplemental Data",
        24 => "Key Update",
        25 => "Compressed Certificate",
        67 => "Encrypted Extensions",
        254 => "Message Hash",
        _ => return None,
    })
}

/// A handshake message that tells the session's version when it is not
/// known yet: any but a Client Hello (and DTLS's Hello Verify Request).
fn authoritative(content_type: u8, first: Option<u8>) -> bool {
    if content_type == HANDSHAKE {
        first.is_some_and(|t| t != CLIENT_HELLO && t != 3 && handshake_name(t).is_some())
    } else {
        valid_content_type(content_type)
    }
}

pub fn alert_level_name(l: u8) -> &'static str {
    match l {
        1 => "Warning",
        2 => "Fatal",
        _ => "Unknown",
    }
}

pub fn alert_description_name(d: u8) -> &'static str {
    match d {
        0 => "Close Notify",
        10 => "Unexpected Message",
        20 => "Bad Record MAC",
        21 => "Decryption Failed",
        22 => "Record Overflow",
        30 => "Decompression Failure",
        40 => "Handshake Failure",
        41 => "No Certificate",
        42 => "Bad Certificate",
        43 => "Unsupported Certificate",
        44 => "Certificate Revoked",
        45 => "Certificate Expired",
        46 => "Certificate Unknown",
        47 => "Illegal Parameter",
        48 => "Unknown CA",
        49 => "Access Denied",
        50 => "Decode Error",
        51 => "Decrypt Error",
        60 => "Export Restriction",
        70 => "Protocol Version",
        71 => "Insufficient Security",
        80 => "Internal Error",
        86 => "Inappropriate Fallback",
        90 => "User Canceled",
        100 => "No Renegotiation",
        109 => "Missing Extension",
        110 => "Unsupported Extension",
        111 => "Certificate Unobtainable",
        112 => "Unrecognized Name",
        113 => "Bad Certificate Status Response",
        114 => "Bad Certificate Hash Value",
        115 => "Unknown PSK Identity",
        116 => "Certificate Required",
        120 => "No application Protocol",
        _ => "Unknown",
    }
}

/// The handshake messages of a record body that are there in full or
/// begin in it: type, where the message starts in `body`, its length.
pub fn handshake_messages(body: &[u8]) -> impl Iterator<Item = (u8, usize, u32)> + '_ {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let h: &[u8; 4] = body.get(at..)?.first_chunk()?;
        let [t, a, b, c] = *h;
        let len = be24([a, b, c]);
        let here = at;
        at = at
            .saturating_add(4)
            .saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
        Some((t, here, len))
    })
}

/// Whether tshark takes a handshake record's body for an encrypted one
/// (a Finished after the change of cipher): 16 bytes or more, and either
/// an explicit nonce of zeros first, a change of cipher from its sender
/// in an earlier frame, an unknown message type or a length of 64 KiB or
/// more.
pub fn encrypted_handshake(body_head: &[u8], record_len: u16, ccs_before: bool) -> bool {
    if record_len < 16 {
        return false;
    }
    let nonce = body_head
        .get(..5)
        .is_some_and(|b| b.iter().all(|&x| x == 0));
    if nonce || ccs_before {
        return true;
    }
    match body_head.first_chunk::<4>() {
        Some(&[t, a, b, c]) => handshake_name(t).is_none() || be24([a, b, c]) >= 0x1_0000,
        None => false,
    }
}

/// The version a Server Hello chose in its `supported_versions` extension
/// (TLS 1.3's), from the message's body.
pub fn server_hello_version(body: &[u8]) -> Option<u16> {
    let sid = usize::from(*body.get(34)?);
    let mut at = 35usize.checked_add(sid)?.checked_add(3)?;
    let ext_len = usize::from(be16(*body.get(at..)?.first_chunk()?));
    at = at.checked_add(2)?;
    let exts = body.get(at..at.checked_add(ext_len)?)?;
    extensions(exts).find_map(|(t, d)| {
        (t == 43)
            .then(|| d.first_chunk().map(|b| be16(*b)))
            .flatten()
    })
}

/// A Client Hello's server name (SNI), from the message's body.
pub fn client_hello_server_name(body: &[u8]) -> Option<&[u8]> {
    let sid = usize::from(*body.get(34)?);
    let mut at = 35usize.checked_add(sid)?;
    let suites = usize::from(be16(*body.get(at..)?.first_chunk()?));
    at = at.checked_add(2)?.checked_add(suites)?;
    let comps = usize::from(*body.get(at)?);
    at = at.checked_add(1)?.checked_add(comps)?;
    let ext_len = usize::from(be16(*body.get(at..)?.first_chunk()?));
    at = at.checked_add(2)?;
    let exts = body.get(at..at.checked_add(ext_len)?)?;
    let (_, sni) = extensions(exts).find(|(t, _)| *t == 0)?;
    // A list of (type, length, name); the first host name.
    let list = sni.get(2..)?;
    let [kind, a, b] = *list.first_chunk::<3>()?;
    let len = usize::from(be16([a, b]));
    (kind == 0)
        .then(|| list.get(3..3usize.checked_add(len)?))
        .flatten()
}

/// The extensions of a hello: type and data.
fn extensions(mut exts: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let [a, b, c, d] = *exts.first_chunk::<4>()?;
        let len = usize::from(be16([c, d]));
        let data = exts.get(4..4usize.checked_add(len)?)?;
        exts = exts.get(4usize.saturating_add(len)..).unwrap_or_default();
        Some((be16([a, b]), data))
    })
}

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
    counts: u8,
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

    fn of(payload: &[u8], at: usize, t: u8, v: u16, length: u16) -> Begun {
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
    fn sets(&self) -> u16 {
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
    end_low: u16,
    end_high: u8,
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

    fn set_end(&mut self, end: usize) {
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
fn walk(payload: &[u8], start: usize) -> Walk {
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
    end_low: u16,
    end_high: u8,
    pub change_cipher: bool,
    pub sets: u16,
    begun_type: u8,
    begun_first: u8,
    begun_version: u16,
    begun_length: u16,
}

impl Resumed {
    fn of(w: &Walk) -> Resumed {
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
    fn walk(&self) -> Walk {
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
    flags: u8,
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

    fn first_looks(&self) -> bool {
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
    fn known(kind: u8) -> Message {
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
enum Layer {
    /// TLS 1.0-1.2 and TLCP: a record of an unknown type ignores the rest.
    Classic,
    /// SSL 3.0: a record of an unknown type is continuation data, and the
    /// next one read after its length.
    Ssl3,
    /// An unknown version, or TLS 1.3: each record must look like one,
    /// else the rest is continuation data.
    Checked,
}

fn layer(v: u16) -> Layer {
    match v {
        TLS10 | TLS11 | TLS12 | TLCP => Layer::Classic,
        SSL3 => Layer::Ssl3,
        _ => Layer::Checked,
    }
}

/// What a whole record says: from its type, body and the session.
fn says_of(t: u8, length: u16, body: &[u8], ccs_before: bool, base: Option<usize>) -> Says {
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
fn handshake_says(body: &[u8], base: Option<usize>) -> Says {
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
fn heartbeat(body: &[u8], length: u16) -> Says {
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
fn label_after(session: u16, r: &Record<'_>) -> &'static str {
    version_label(if session != 0 { session } else { r.version })
}

fn stretch(from: usize, to: usize, says: Says, version: u16) -> Record<'static> {
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
fn record_at<'a>(
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
fn reassembled<'a>(
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

/// One side of a TLS conversation, as the analysis follows its records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Side {
    /// What the next segment in order continues.
    pending: Option<Pending>,
    /// The sequence number after the highest segment seen.
    next: Option<u32>,
    /// The last record shown reassembled: from and to sequence numbers.
    last_reassembled: Option<(u32, u32)>,
    /// A record whose end came after a gap: shown when a segment sent
    /// again fills the gap up to its end.
    orphan: Option<Orphan>,
    /// It sent a Change Cipher Spec in an earlier frame.
    pub change_cipher: bool,
}

/// A record cut by a gap in the sender's segments: from `start` to `end`,
/// all seen but the bytes from `hole_from` to `hole_to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Orphan {
    begun: Begun,
    start: u32,
    end: u32,
    hole_from: u32,
    hole_to: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
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
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `x` in `[from, to)` in sequence space.
fn within(x: u32, from: u32, to: u32) -> bool {
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
struct Start {
    continues: Continues,
    at: Option<u32>,
    /// The record it ends: what it tells of the session.
    sets: u16,
    chosen: u16,
    change_cipher: bool,
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
    fn start(s: &mut Side, seq: u32, len: u32, gap_from: Option<u32>, d: &Digest) -> Start {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: u8, body: &[u8]) -> Vec<u8> {
        let mut r = vec![t, 3, 3];
        r.extend((body.len() as u16).to_be_bytes());
        r.extend(body);
        r
    }

    #[test]
    fn ports_choose_as_tshark_does() {
        assert_eq!(Selection::of_ports(40000, 443), Some(Selection::Port));
        assert_eq!(Selection::of_ports(3389, 51195), Some(Selection::Heuristic));
        assert_eq!(Selection::of_ports(80, 443), None);
        assert_eq!(Selection::of_ports(22, 50000), None);
        assert!(PORTS.windows(2).all(|w| w[0] < w[1]));
        assert!(OTHER_PORTS.windows(2).all(|w| w[0] < w[1]));
        assert!(APPLICATIONS.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(application(443, 50000), Some("Hypertext Transfer Protocol"));
        assert_eq!(application(50000, 5001), None);
    }

    #[test]
    fn a_record_across_segments_is_followed() {
        let a = rec(23, &[0; 3000]);
        let b = rec(23, &[0; 30]);
        let stream: Vec<u8> = [&a[..], &b, &a, &b].concat();
        let cuts = [0, 1000, 2000, 3050, 6070, stream.len()];
        let mut c = Conversation::default();
        let mut said = Vec::new();
        for w in cuts.windows(2) {
            let p = &stream[w[0]..w[1]];
            let seen = c.segment(
                0,
                1 + w[0] as u32,
                p.len() as u32,
                false,
                &Digest::of(p, Selection::Port).unwrap(),
            );
            let r = read(p, &seen);
            let mut s = String::new();
            for (i, x) in r.records.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                x.says.write(&mut s);
            }
            said.push((r.protocol, r.shown, s));
        }
        assert_eq!(
            said,
            [
                ("TCP", Shown::RecordStarts, String::new()),
                ("TCP", Shown::PartOfRecord, String::new()),
                (
                    "TLSv1.2",
                    Shown::Records,
                    "Application Data, Application Data".into()
                ),
                ("TLSv1.2", Shown::Records, "Application Data".into()),
                ("TLSv1.2", Shown::Records, "Application Data".into()),
            ]
        );
    }

    #[test]
    fn hellos_are_read() {
        assert_eq!(handshake_name(2), Some("Server Hello"));
        assert_eq!(version_label(0), "SSL");
        assert!(looks_like_record(&rec(23, &[1])));
        assert!(!looks_like_record(&rec(20, &[1])));
    }
}
