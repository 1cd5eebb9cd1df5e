//! The first line of an HTTP message, as SSDP (UPnP discovery, HTTP over
//! UDP port 1900) sends them: `M-SEARCH * HTTP/1.1`, `NOTIFY * HTTP/1.1`,
//! `HTTP/1.1 200 OK`. tshark tells a request by its method (from a closed
//! list), a response by its version, and calls anything else a
//! continuation of an earlier message.
//!
//! And HTTP over TCP: which conversations tshark reads as HTTP (by port,
//! or from a segment whose first line its heuristic takes), a message's
//! head (its header lines, how long its body is) and the digest of a
//! segment by which the analysis follows messages across segments.

use crate::wire::tls::Selection;

/// The port SSDP is known by.
pub const SSDP_PORT: u16 = 1900;

/// The methods tshark knows a request by (WebDAV, RFC 3253 and UPnP's
/// among them); any other word starts no request.
const METHODS: &[&[u8]] = &[
    b"GET",
    b"PUT",
    b"COPY",
    b"HEAD",
    b"LOCK",
    b"MOVE",
    b"POLL",
    b"POST",
    b"BCOPY",
    b"BMOVE",
    b"MKCOL",
    b"TRACE",
    b"LABEL",
    b"MERGE",
    b"DELETE",
    b"SEARCH",
    b"UNLOCK",
    b"REPORT",
    b"UPDATE",
    b"NOTIFY",
    b"BDELETE",
    b"CONNECT",
    b"OPTIONS",
    b"CHECKIN",
    b"PROPFIND",
    b"CHECKOUT",
    b"CCM_POST",
    b"M-SEARCH",
    b"SUBSCRIBE",
    b"PROPPATCH",
    b"BPROPFIND",
    b"BPROPPATCH",
    b"UNCHECKOUT",
    b"MKACTIVITY",
    b"MKWORKSPACE",
    b"UNSUBSCRIBE",
    b"RPC_CONNECT",
    b"VERSION-CONTROL",
    b"BASELINE-CONTROL",
    b"PATCH",
    b"M-POST",
];

/// The longest of [`METHODS`].
const MAX_METHOD: usize = 16;

/// Where the first line of `payload` ends (its first `\r` or `\n`).
fn line_end(payload: &[u8]) -> Option<usize> {
    memchr::memchr2(b'\r', b'\n', payload)
}

/// The methods tshark files as notifications (GENA's, for UPnP events)
/// rather than requests.
pub fn is_notification(method: &[u8]) -> bool {
    matches!(method, b"NOTIFY" | b"SUBSCRIBE" | b"UNSUBSCRIBE")
}

/// What a message's first line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartLine<'a> {
    /// `METHOD URI VERSION`: the method, and the line (without its end).
    Request { method: &'a [u8], line: &'a [u8] },
    /// `VERSION CODE PHRASE`: the status code (0 when its three places
    /// are not digits, none when the line is too short for it), and the
    /// line.
    Response { code: Option<u16>, line: &'a [u8] },
    /// Not a first line tshark knows (or no whole line): the body of an
    /// earlier message, as it says.
    Continuation,
}

impl<'a> StartLine<'a> {
    /// The first line of `payload`: it ends at the first CR or LF, and a
    /// payload with neither has no whole line.
    pub fn parse(payload: &'a [u8]) -> Self {
        // The first word (up to a space or a line end) says whether the
        // line may be one, before the line's end is looked for: a body's
        // segment is not scanned to its first line end.
        let response = payload.starts_with(b"HTTP/") || payload.starts_with(b"ICY ");
        if !response {
            let word_end = payload
                .iter()
                .take(MAX_METHOD.saturating_add(1))
                .position(|&b| b == b' ' || b == b'\r' || b == b'\n');
            let word = word_end.and_then(|n| payload.get(..n));
            if !word.is_some_and(|w| METHODS.contains(&w)) {
                return Self::Continuation;
            }
        }
        let Some(end) = line_end(payload) else {
            return Self::Continuation;
        };
        let line = payload.get(..end).unwrap_or_default();
        let word_end = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
        let word = line.get(..word_end).unwrap_or_default();
        if response {
            let code = line
                .get(word_end.saturating_add(1)..word_end.saturating_add(4))
                .map(|d| {
                    if !d.iter().all(u8::is_ascii_digit) {
                        return 0;
                    }
                    d.iter().fold(0u16, |n, &c| {
                        n.saturating_mul(10)
                            .saturating_add(u16::from(c.wrapping_sub(b'0')))
                    })
                });
            return Self::Response { code, line };
        }
        if METHODS.contains(&word) {
            return Self::Request { method: word, line };
        }
        Self::Continuation
    }

    /// The line, if the message starts with one tshark knows.
    pub fn line(&self) -> Option<&'a [u8]> {
        match *self {
            Self::Request { line, .. } | Self::Response { line, .. } => Some(line),
            Self::Continuation => None,
        }
    }
}

/// The TCP ports tshark's HTTP has (its `http.tcp.port` range), sorted.
pub const TCP_PORTS: [u16; 10] = [80, 1900, 2710, 2869, 3128, 3132, 5985, 8080, 8088, 11371];

/// How a TCP conversation between these ports comes to be read as HTTP
/// (the lower port first, as tshark tries them): by an HTTP port, by the
/// heuristic on ports no protocol has, or not at all.
pub fn selection(a: u16, b: u16) -> Option<Selection> {
    for p in [a.min(b), a.max(b)] {
        if TCP_PORTS.binary_search(&p).is_ok() {
            return Some(Selection::Port);
        }
        if crate::wire::tls::port_claimed(p) {
            return None;
        }
    }
    Some(Selection::Heuristic)
}

/// tshark's heuristic for HTTP on a port no protocol has (as tshark 4.0
/// behaves): the payload's first line (ended by CR or LF) is a request or
/// a response (see [`StartLine`]), is not 8 bytes long, and starts or
/// ends with an HTTP/1 version (`HTTP/1.` and any character, in any
/// case).
pub fn looks_like_http(payload: &[u8]) -> bool {
    StartLine::parse(payload).line().is_some() && has_version(payload)
}

/// The part of tshark's heuristic that looks at the version alone: a
/// payload it takes that is no request or response is shown as nothing
/// at all (not even as data).
pub fn has_version(payload: &[u8]) -> bool {
    const TOKEN: &[u8] = b"HTTP/1.";
    const VERSION_LEN: usize = 8;
    let Some(end) = line_end(payload) else {
        return false;
    };
    if end == VERSION_LEN {
        return false;
    }
    let version_at = |from: usize| {
        payload
            .get(from..from.saturating_add(TOKEN.len()))
            .is_some_and(|w| w.eq_ignore_ascii_case(TOKEN))
    };
    version_at(0) || end.checked_sub(VERSION_LEN).is_some_and(version_at)
}

/// A byte that glib's `g_ascii_isprint` takes: a space to a tilde.
fn is_printable(b: u8) -> bool {
    (0x20..=0x7e).contains(&b)
}

/// The byte tshark's HTTP looks at to tell text from binary, in a segment
/// of `len` bytes that starts with `start`: its first, or its third when
/// it starts with CRLF and is longer than 3 bytes (a request may follow a
/// blank line).
fn checked_first(start: &[u8], len: usize) -> Option<u8> {
    let at = if len > 3 && start.starts_with(b"\r\n") {
        2
    } else {
        0
    };
    start.get(at).copied()
}

/// A message's head: its first line and header lines, up to the blank
/// line that ends it (lines end with CRLF or a lone LF).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head<'a> {
    pub start: StartLine<'a>,
    /// The header lines, from the one after the first line up to the
    /// blank line (or the end of the bytes given).
    headers: &'a [u8],
    /// The head's length through its blank line; none when it goes on
    /// past the bytes given.
    pub len: Option<usize>,
}

/// How long a message's body is, as its head says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyLen {
    /// No body: a request without a length, a 1xx, 204 or 304 response,
    /// or a response that says neither a length nor chunks.
    Empty,
    /// `Content-Length` bytes.
    Bytes(u64),
    /// `Transfer-Encoding: chunked`: up to the last (empty) chunk.
    Chunked,
    /// A response that says neither: up to its side's FIN.
    UntilClose,
}

/// What tshark hands a message's body to, by its `Content-Type`: XML's
/// and JSON's dissectors (which name the Protocol column after HTTP's:
/// `HTTP/XML`), line-based text, plain data (octets, or a head that says
/// no type), or the generic media dissector for any other type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Media {
    /// No body.
    #[default]
    None,
    /// A body without `Content-Type`, or of `application/octet-stream`.
    Data,
    Xml,
    Json,
    /// Line-based text: `text/plain`, `text/html`, `text/css`.
    Text,
    /// A type no dissector of tshark's reads.
    Other,
}

/// A `Content-Type` value's type and subtype, in lower case (without its
/// parameters), as tshark names a body's media.
pub fn media_type(content_type: &[u8]) -> String {
    let end = content_type
        .iter()
        .position(|&b| b == b';')
        .unwrap_or(content_type.len());
    String::from_utf8_lossy(content_type.get(..end).unwrap_or_default().trim_ascii())
        .to_ascii_lowercase()
}

impl Media {
    /// Of a `Content-Type` value.
    pub fn of(content_type: &[u8]) -> Media {
        match media_type(content_type).as_str() {
            "text/xml" | "application/xml" => Media::Xml,
            "application/json" => Media::Json,
            "text/plain" | "text/html" | "text/css" => Media::Text,
            "application/octet-stream" => Media::Data,
            _ => Media::Other,
        }
    }

    /// The Protocol column, when the body's dissector names it.
    pub fn protocol(self) -> Option<&'static str> {
        match self {
            Media::Xml => Some("HTTP/XML"),
            Media::Json => Some("HTTP/JSON"),
            _ => None,
        }
    }

    /// What the body's dissector adds to the Info column, for a body of
    /// `Content-Type` `content_type`: JSON's name, or the media type.
    pub fn info(self, content_type: &[u8]) -> Option<String> {
        match self {
            Media::Json => Some(", JavaScript Object Notation (application/json)".into()),
            Media::Text | Media::Other => Some(format!(" ({})", media_type(content_type))),
            _ => None,
        }
    }

    /// The body's dissector in `frame.protocols`.
    pub fn layer(self) -> Option<&'static str> {
        match self {
            Media::None => None,
            Media::Data => Some("data"),
            Media::Xml => Some("xml"),
            Media::Json => Some("json"),
            Media::Text => Some("data-text-lines"),
            Media::Other => Some("media"),
        }
    }
}

impl<'a> Head<'a> {
    /// The head at the start of `bytes`.
    pub fn parse(bytes: &'a [u8]) -> Head<'a> {
        let start = StartLine::parse(bytes);
        let Some(first_end) = bytes.iter().position(|&b| b == b'\n') else {
            return Head {
                start,
                headers: &[],
                len: None,
            };
        };
        let from = first_end.saturating_add(1);
        let rest = bytes.get(from..).unwrap_or_default();
        let mut at = 0usize;
        loop {
            let Some(nl) = rest
                .get(at..)
                .and_then(|r| r.iter().position(|&b| b == b'\n'))
            else {
                return Head {
                    start,
                    headers: rest,
                    len: None,
                };
            };
            let line = rest.get(at..at.saturating_add(nl)).unwrap_or_default();
            if line.is_empty() || line == b"\r" {
                return Head {
                    start,
                    headers: rest.get(..at).unwrap_or_default(),
                    len: Some(from.saturating_add(at).saturating_add(nl).saturating_add(1)),
                };
            }
            at = at.saturating_add(nl).saturating_add(1);
        }
    }

    /// The header lines, each without its line end.
    pub fn lines(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .filter(|l| !l.is_empty())
    }

    /// The value of the first header named `name` (in any case), without
    /// the spaces around it.
    pub fn header(&self, name: &str) -> Option<&'a [u8]> {
        self.lines().find_map(|l| {
            let colon = l.iter().position(|&b| b == b':')?;
            let (n, v) = (l.get(..colon)?, l.get(colon.checked_add(1)?..)?);
            n.trim_ascii()
                .eq_ignore_ascii_case(name.as_bytes())
                .then(|| v.trim_ascii())
        })
    }

    /// `Content-Length`, when it is a number.
    pub fn content_length(&self) -> Option<u64> {
        std::str::from_utf8(self.header("content-length")?)
            .ok()?
            .parse()
            .ok()
    }

    /// How long the body is.
    pub fn body(&self) -> BodyLen {
        if let StartLine::Response { code: Some(c), .. } = self.start
            && ((100..200).contains(&c) || c == 204 || c == 304)
        {
            return BodyLen::Empty;
        }
        let chunked = self
            .header("transfer-encoding")
            .is_some_and(|v| v.windows(7).any(|w| w.eq_ignore_ascii_case(b"chunked")));
        if chunked {
            return BodyLen::Chunked;
        }
        match (self.content_length(), self.start) {
            (Some(n), _) => BodyLen::Bytes(n),
            (None, StartLine::Response { .. }) => BodyLen::UntilClose,
            (None, _) => BodyLen::Empty,
        }
    }

    /// The body's media, by `Content-Type` (were there a body).
    pub fn media(&self) -> Media {
        self.header("content-type").map_or(Media::Data, Media::of)
    }
}

/// Whether `payload` ends a chunked body: it ends with the last chunk
/// (`0` and two line ends, no trailers).
pub fn ends_last_chunk(payload: &[u8]) -> bool {
    payload == b"0\r\n\r\n" || payload.ends_with(LAST_CHUNK)
}

/// The end of a chunked body after the chunk before it: the line end of
/// that chunk's data, `0` and two line ends.
const LAST_CHUNK: &[u8; TAIL] = b"\n0\r\n\r\n";

/// Bytes of a segment's end its digest keeps: enough to find a last
/// chunk split over segments ([`Tail::then`]).
pub const TAIL: usize = 6;

/// The last [`TAIL`] bytes a side sent, right-aligned (zeros before the
/// first byte of a shorter stream, or where they are not known).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tail(pub [u8; TAIL]);

impl Tail {
    /// The last bytes of `payload`.
    pub fn of(payload: &[u8]) -> Tail {
        let mut t = [0; TAIL];
        let from = payload.len().saturating_sub(TAIL);
        let bytes = payload.get(from..).unwrap_or_default();
        if let Some(slot) = t.get_mut(TAIL.saturating_sub(bytes.len())..) {
            slot.copy_from_slice(bytes);
        }
        Tail(t)
    }

    /// The last bytes of a segment of `len` bytes known by its first 4
    /// and last 4 (a TLS digest's, whose arrays hold a shorter segment's
    /// bytes from their start). Of a longer segment only the last 4 are
    /// known: one that ends with two line ends is taken to end with a
    /// last chunk.
    pub fn of_ends(head: [u8; 4], tail: [u8; 4], len: u32) -> Tail {
        match len {
            0..=4 => Tail::of(tail.get(..len as usize).unwrap_or_default()),
            5 => Tail::of(&[head[0], tail[0], tail[1], tail[2], tail[3]]),
            _ if tail == *b"\r\n\r\n" => Tail(*LAST_CHUNK),
            _ => Tail::of(&tail),
        }
    }

    /// The last bytes after a segment of `len` bytes that ends with
    /// `next` (a segment of [`TAIL`] bytes or more holds them all).
    pub fn then(self, next: Tail, len: u32) -> Tail {
        let len = (len as usize).min(TAIL);
        let new = next.0.get(TAIL.saturating_sub(len)..).unwrap_or_default();
        let mut t = [0; TAIL];
        // The last `TAIL - len` bytes before, then the segment's `len`.
        for (slot, b) in t.iter_mut().zip(self.0.iter().skip(len).chain(new)) {
            *slot = *b;
        }
        Tail(t)
    }

    /// The bytes end with a last chunk whose final line end is cut after
    /// its `\r` (tshark then takes the `\r` for the line end, ends the
    /// message there and finds it malformed).
    pub fn ends_last_chunk_but_lf(self) -> bool {
        self.0.get(1..) == LAST_CHUNK.get(..TAIL - 1)
    }

    /// The bytes end a chunked body (see [`ends_last_chunk`]).
    pub fn ends_last_chunk(self) -> bool {
        self.0 == *LAST_CHUNK
    }
}

/// What the analysis needs of a segment of a conversation that may be
/// HTTP: how it may be read as HTTP, whether it starts a message and
/// how long that message's head and body are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    /// The conversation is HTTP's by its port.
    pub by_port: bool,
    /// The segment's first line is one tshark's heuristic takes.
    pub looks: bool,
    /// The segment starts a request or a response.
    pub starts: bool,
    /// The message it starts is a request.
    pub request: bool,
    /// Its first byte (after a line end it starts with, when it is longer
    /// than 3 bytes) is printable ASCII: tshark's HTTP reads a segment
    /// that starts no message as text only then.
    pub printable: bool,
    /// The segment has a line end (tshark waits for one before it reads
    /// a first line).
    pub line_end: bool,
    /// The segment ends a head begun earlier: it has a blank line (or
    /// starts with a line end, after the line end of the segment before).
    pub head_ends: bool,
    /// Its head's length through the blank line (0: the head does not
    /// end in the segment).
    pub head_len: u32,
    /// How long its body is (see [`Digest::body`]): kept in words of 32
    /// bits, so that the digest fits beside TLS's in a frame's facts.
    body_kind: u8,
    body_len: [u32; 2],
    pub media: Media,
    /// The segment ends with a chunked body's last chunk.
    pub last_chunk: bool,
    /// Its last bytes: a last chunk may end in it that began in the
    /// segment before.
    pub tail: Tail,
}

impl Digest {
    /// The digest of a segment's `payload`.
    pub fn of(payload: &[u8], selection: Selection) -> Digest {
        // A message's head is read only where one starts: most segments
        // of a conversation are its bodies'.
        let head = (StartLine::parse(payload).line().is_some()).then(|| Head::parse(payload));
        let starts = head.is_some();
        Digest {
            by_port: selection == Selection::Port,
            looks: starts && has_version(payload),
            starts,
            request: head.is_some_and(|h| matches!(h.start, StartLine::Request { .. })),
            printable: checked_first(payload, payload.len()).is_some_and(is_printable),
            line_end: line_end(payload).is_some(),
            head_ends: payload.starts_with(b"\r\n")
                || payload.starts_with(b"\n")
                || memchr::memmem::find(payload, b"\r\n\r\n").is_some()
                || memchr::memmem::find(payload, b"\n\n").is_some(),
            head_len: head
                .and_then(|h| h.len)
                .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
            body_kind: 0,
            body_len: [0; 2],
            media: head.map_or(Media::None, |h| h.media()),
            last_chunk: ends_last_chunk(payload),
            tail: Tail::of(payload),
        }
        .with_body(head.map_or(BodyLen::Empty, |h| h.body()))
    }

    fn with_body(mut self, body: BodyLen) -> Digest {
        let (kind, n) = match body {
            BodyLen::Empty => (0, 0),
            BodyLen::Bytes(n) => (1, n),
            BodyLen::Chunked => (2, 0),
            BodyLen::UntilClose => (3, 0),
        };
        self.body_kind = kind;
        self.body_len = [(n >> 32) as u32, n as u32];
        self
    }

    /// How long the body of the message it starts is.
    pub fn body(&self) -> BodyLen {
        let [high, low] = self.body_len;
        match self.body_kind {
            1 => BodyLen::Bytes(u64::from(high) << 32 | u64::from(low)),
            2 => BodyLen::Chunked,
            3 => BodyLen::UntilClose,
            _ => BodyLen::Empty,
        }
    }

    /// The digest of a segment of `len` bytes known by the 4 bytes it
    /// starts with and the 4 it ends with only (a TLS digest's, on a port
    /// no protocol has): no message starts in it.
    pub fn of_ends(head: [u8; 4], tail: [u8; 4], len: u32) -> Digest {
        Digest {
            by_port: false,
            looks: false,
            starts: false,
            request: false,
            printable: checked_first(&head, len as usize).is_some_and(is_printable),
            line_end: true,
            head_ends: tail == *b"\r\n\r\n",
            head_len: 0,
            body_kind: 0,
            body_len: [0; 2],
            media: Media::None,
            last_chunk: tail == *b"\r\n\r\n",
            tail: Tail::of_ends(head, tail, len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_lines_are_told_apart_as_tshark_does() {
        let r = StartLine::parse(b"M-SEARCH * HTTP/1.1\r\nHOST: x\r\n\r\n");
        assert_eq!(
            r,
            StartLine::Request {
                method: b"M-SEARCH",
                line: b"M-SEARCH * HTTP/1.1"
            }
        );
        assert_eq!(
            StartLine::parse(b"HTTP/1.1 200 OK\r\n"),
            StartLine::Response {
                code: Some(200),
                line: b"HTTP/1.1 200 OK"
            }
        );
        // Three digits are read, whatever follows; letters are no code.
        assert!(matches!(
            StartLine::parse(b"HTTP/1.1 2000 OK\n"),
            StartLine::Response {
                code: Some(200),
                ..
            }
        ));
        assert!(matches!(
            StartLine::parse(b"HTTP/1.1 abc\n"),
            StartLine::Response { code: Some(0), .. }
        ));
        assert!(matches!(
            StartLine::parse(b"HTTP/1.1 \r\n"),
            StartLine::Response { code: None, .. }
        ));
        // No line end, an unknown or lower-case method, a tab: none.
        for p in [
            &b"M-SEARCH * HTTP/1.1"[..],
            b"FOO * HTTP/1.1\r\n",
            b"get / HTTP/1.1\r\n",
            b"NOTIFY\t* HTTP/1.1\r\n",
            b"RTSP/1.0 200 OK\r\n",
            b"",
        ] {
            assert_eq!(StartLine::parse(p), StartLine::Continuation, "{p:?}");
        }
        // A method alone is a request; a lone CR ends the line.
        assert!(matches!(
            StartLine::parse(b"GET\r\n"),
            StartLine::Request { line: b"GET", .. }
        ));
        assert_eq!(
            StartLine::parse(b"GET / HTTP/1.1\r\r\n").line(),
            Some(&b"GET / HTTP/1.1"[..])
        );
    }

    #[test]
    fn tsharks_heuristic_takes_first_lines_that_start_or_end_with_http_1() {
        assert!(looks_like_http(b"GET /x.xml HTTP/1.1\r\nHost: a\r\n\r\n"));
        assert!(looks_like_http(b"HTTP/1.1 200 OK\r\n"));
        assert!(looks_like_http(b"HTTP/1.0 200 OK\r\n"));
        assert!(looks_like_http(b"GET / http/1.0\n"));
        assert!(looks_like_http(b"GET / HTTP/1.2\n"));
        // Not HTTP/2, not an unknown method, no line end, a line of
        // exactly the version, no version.
        assert!(!looks_like_http(b"GET / HTTP/2.0\r\n"));
        assert!(!looks_like_http(b"FOO / HTTP/1.1\n"));
        assert!(!looks_like_http(b"GET / HTTP/1.1"));
        assert!(!looks_like_http(b"GET /\r\n"));
        assert!(!looks_like_http(b"HTTP/1.1\r\n"));
        assert!(!looks_like_http(b""));
    }

    #[test]
    fn conversations_are_https_by_port_or_heuristic() {
        assert_eq!(selection(80, 46568), Some(Selection::Port));
        assert_eq!(selection(40541, 46568), Some(Selection::Heuristic));
        // SSH's and TLS's ports are theirs, the lower port first.
        assert_eq!(selection(22, 8080), None);
        assert_eq!(selection(443, 50000), None);
        assert_eq!(selection(80, 443), Some(Selection::Port));
    }

    #[test]
    fn a_head_says_how_long_its_body_is() {
        let h = Head::parse(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=\"utf-8\"\r\ncontent-length:  2404 \r\n\r\n<?xml",
        );
        assert_eq!(h.len, Some(84));
        assert_eq!(h.body(), BodyLen::Bytes(2404));
        assert_eq!(h.media(), Media::Xml);
        assert_eq!(h.lines().count(), 2);
        let h = Head::parse(b"POST /a HTTP/1.1\nTransfer-Encoding: gzip, Chunked\n\n5\r\nhello");
        assert_eq!(h.len, Some(51));
        assert_eq!(h.body(), BodyLen::Chunked);
        // 304 has no body whatever it says; a request without a length
        // none; a head cut short no length.
        let h = Head::parse(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n");
        assert_eq!(h.body(), BodyLen::Empty);
        assert_eq!(
            Head::parse(b"GET / HTTP/1.1\r\n\r\n").body(),
            BodyLen::Empty
        );
        assert_eq!(Head::parse(b"GET / HTTP/1.1\r\nHost: a\r\n").len, None);
        assert_eq!(Head::parse(b"GET / HTTP/1.1").len, None);
        // A response that says no length (or none that is a number) goes
        // on up to its side's FIN.
        assert_eq!(
            Head::parse(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").body(),
            BodyLen::UntilClose
        );
    }

    #[test]
    fn a_digest_keeps_a_bodys_length_whole() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 6000000000\r\n\r\n";
        let d = Digest::of(head, Selection::Port);
        assert_eq!(d.body(), BodyLen::Bytes(6_000_000_000));
        assert_eq!(d.head_len as usize, head.len());
        assert!(d.starts && d.by_port && d.looks && d.line_end && d.head_ends);
        let d = Digest::of(b"5\r\nhello", Selection::Heuristic);
        assert!(!d.starts && !d.by_port && !d.looks && !d.head_ends);
        assert_eq!(d.body(), BodyLen::Empty);
    }

    #[test]
    fn a_chunked_body_ends_with_its_last_chunk() {
        assert!(ends_last_chunk(b"0\r\n\r\n"));
        assert!(ends_last_chunk(b"5\r\nhello\r\n0\r\n\r\n"));
        assert!(!ends_last_chunk(b"5\r\nhello\r\n10\r\n\r\n"));
        assert!(!ends_last_chunk(b"5\r\nhello\r\n"));
    }

    #[test]
    fn a_method_is_no_longer_than_the_longest() {
        assert_eq!(METHODS.iter().map(|m| m.len()).max(), Some(MAX_METHOD));
        // A method's word ends at a space or at the line's end.
        assert!(matches!(
            StartLine::parse(b"BASELINE-CONTROL\r\n"),
            StartLine::Request { .. }
        ));
        assert_eq!(
            StartLine::parse(b"BASELINE-CONTROLS / HTTP/1.1\r\n"),
            StartLine::Continuation
        );
        assert_eq!(StartLine::parse(b"GET / HTTP/1.1"), StartLine::Continuation);
        assert_eq!(
            StartLine::parse(b"HTTP/1.1 200 OK"),
            StartLine::Continuation
        );
        assert!(matches!(
            StartLine::parse(b"HTTP/1.1 200 OK\n"),
            StartLine::Response {
                code: Some(200),
                ..
            }
        ));
    }

    #[test]
    fn a_last_chunk_is_found_across_segments() {
        let body = b"5\r\nhello\r\n0\r\n\r\n";
        // Cut anywhere, the segments' tails end as the whole body does.
        for cut in 0..=body.len() {
            for second in cut..=body.len() {
                let parts = [&body[..cut], &body[cut..second], &body[second..]];
                let t = parts
                    .iter()
                    .fold(Tail::default(), |t, p| t.then(Tail::of(p), p.len() as u32));
                assert_eq!(t, Tail::of(body), "cut at {cut} and {second}");
                assert!(t.ends_last_chunk());
            }
        }
        assert_eq!(Tail::of(b"ab"), Tail(*b"\0\0\0\0ab"));
        assert!(!Tail::of(b"5\r\nhello\r\n10\r\n\r\n").ends_last_chunk());
        assert!(Tail::of(b"5\r\nhello\r\n0\r\n\r").ends_last_chunk_but_lf());
        assert!(!Tail::of(b"5\r\nhello\r\n0\r\n\r\n").ends_last_chunk_but_lf());
        assert!(!Tail::of(b"5\r\nhello\r\n10\r\n\r").ends_last_chunk_but_lf());
        // What a TLS digest's 4 bytes say of a short segment.
        let d = Digest::of_ends(*b"\r\n\0\0", *b"\r\n\0\0", 2);
        assert_eq!(d.tail, Tail::of(b"\r\n"));
        let d = Digest::of_ends(*b"0abc", *b"abc\n", 5);
        assert_eq!(d.tail, Tail::of(b"0abc\n"));
        let d = Digest::of_ends(*b"abcd", *b"\r\n\r\n", 9);
        assert!(d.tail.ends_last_chunk());
        let d = Digest::of_ends(*b"abcd", *b"x\r\n\r", 9);
        assert_eq!(d.tail, Tail(*b"\0\0x\r\n\r"));
    }
}
