//! The first line of an HTTP message, as SSDP (UPnP discovery, HTTP over
//! UDP port 1900) sends them: `M-SEARCH * HTTP/1.1`, `NOTIFY * HTTP/1.1`,
//! `HTTP/1.1 200 OK`. tshark tells a request by its method (from a closed
//! list), a response by its version, and calls anything else a
//! continuation of an earlier message.

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
        let Some(end) = payload.iter().position(|&b| b == b'\r' || b == b'\n') else {
            return Self::Continuation;
        };
        let line = payload.get(..end).unwrap_or_default();
        let word_end = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
        let word = line.get(..word_end).unwrap_or_default();
        if line.starts_with(b"HTTP/") || line.starts_with(b"ICY ") {
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
}
