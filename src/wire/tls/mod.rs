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

mod conversation;
mod digest;
mod read;

use super::{be16, be24};
pub use conversation::{Conversation, Side};
pub use digest::{Begun, Digest, Resumed, Walk};
pub use read::{Continues, Message, Reading, Record, Says, Seen, Shown, read};

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

#[cfg(test)]
mod tests;
