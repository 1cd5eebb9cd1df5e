//! A minimal JSON writer for the per-packet hot path: appends to a byte
//! buffer, no intermediate values, no allocation once the buffer is warm.

use std::net::IpAddr;

/// A JSON object key as written: `q!("frame")` is `"frame":`.
#[macro_export]
macro_rules! q {
    ($k:literal) => {
        concat!("\"", $k, "\":")
    };
}

pub struct JsonWriter<'a> {
    out: &'a mut Vec<u8>,
    /// Whether the next member of the current object needs a comma.
    comma: bool,
}

impl<'a> JsonWriter<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        JsonWriter { out, comma: false }
    }

    /// `k` is the quoted key with its colon, as `q!` makes it.
    #[inline(always)]
    fn key(&mut self, k: &str) {
        if self.comma {
            self.out.push(b',');
        }
        self.comma = true;
        self.out.extend_from_slice(k.as_bytes());
    }

    #[inline(always)]
    pub fn begin(&mut self) {
        self.out.push(b'{');
        self.comma = false;
    }

    #[inline(always)]
    pub fn end(&mut self) {
        self.out.push(b'}');
        self.comma = true;
    }

    #[inline(always)]
    pub fn object(&mut self, k: &str) {
        self.key(k);
        self.begin();
    }

    pub fn array(&mut self, k: &str) {
        self.key(k);
        self.out.push(b'[');
        self.comma = false;
    }

    pub fn end_array(&mut self) {
        self.out.push(b']');
        self.comma = true;
    }

    /// Starts an object as an array element.
    pub fn element_object(&mut self) {
        if self.comma {
            self.out.push(b',');
        }
        self.begin();
    }

    pub fn element_u64(&mut self, v: u64) {
        if self.comma {
            self.out.push(b',');
        }
        self.comma = true;
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }

    #[inline(always)]
    pub fn u64(&mut self, k: &str, v: u64) {
        self.key(k);
        push_u64(self.out, v);
    }

    #[inline(always)]
    pub fn opt_u64(&mut self, k: &str, v: Option<u64>) {
        match v {
            Some(v) => self.u64(k, v),
            None => self.null(k),
        }
    }

    #[inline(always)]
    pub fn bool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
    }

    #[inline(always)]
    pub fn opt_bool(&mut self, k: &str, v: Option<bool>) {
        match v {
            Some(v) => self.bool(k, v),
            None => self.null(k),
        }
    }

    #[inline(always)]
    pub fn null(&mut self, k: &str) {
        self.key(k);
        self.out.extend_from_slice(b"null");
    }

    /// A string known to need no escaping (names, numbers, addresses).
    #[inline(always)]
    pub fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        self.out.push(b'"');
        self.out.extend_from_slice(v.as_bytes());
        self.out.push(b'"');
    }

    /// A string that may contain quotes, backslashes or control characters.
    pub fn escaped(&mut self, k: &str, v: &str) {
        self.key(k);
        let s = serde_json::to_string(v).unwrap_or_else(|_| "\"\"".into());
        self.out.extend_from_slice(s.as_bytes());
    }

    #[inline(always)]
    pub fn mac(&mut self, k: &str, m: &[u8; 6]) {
        self.key(k);
        let mut b = [0u8; 19];
        b[0] = b'"';
        for (i, x) in m.iter().enumerate() {
            b[1 + i * 3] = HEX[usize::from(x >> 4)];
            b[2 + i * 3] = HEX[usize::from(x & 0xf)];
            b[3 + i * 3] = b':';
        }
        b[18] = b'"';
        self.out.extend_from_slice(&b);
    }

    pub fn ip(&mut self, k: &str, ip: &IpAddr) {
        self.key(k);
        self.out.push(b'"');
        match ip {
            IpAddr::V4(v4) => push_ipv4(self.out, v4),
            IpAddr::V6(v6) => push_ipv6(self.out, v6),
        }
        self.out.push(b'"');
    }
}

/// `ip` as its `Display` writes it (RFC 5952: lower-case hexadecimal
/// groups without leading zeros, the first longest run of two or more zero
/// groups as `::`, an IPv4-mapped address as `::ffff:a.b.c.d`), without
/// the formatting machinery: GIDs and IPv6 addresses are in most lines of
/// `packets --json`, and `write!` took 7 % of it.
pub fn push_ipv6(out: &mut impl AsciiOut, ip: &std::net::Ipv6Addr) {
    if let Some(v4) = ip.to_ipv4_mapped() {
        out.put_all(b"::ffff:");
        push_ipv4(out, &v4);
        return;
    }
    let groups = ip.segments();
    // The first longest run of zero groups: (start, length).
    let (mut best, mut run) = ((0, 0), (0, 0));
    for (i, &g) in groups.iter().enumerate() {
        if g == 0 {
            if run.1 == 0 {
                run.0 = i;
            }
            run.1 += 1;
            if run.1 > best.1 {
                best = run;
            }
        } else {
            run = (0, 0);
        }
    }
    fn hex(out: &mut impl AsciiOut, part: &[u16]) {
        for (i, &g) in part.iter().enumerate() {
            if i > 0 {
                out.put(b':');
            }
            let digits = (16 - g.leading_zeros()).div_ceil(4).max(1);
            for d in (0..digits).rev() {
                out.put(HEX[usize::from((g >> (4 * d)) & 0xf)]);
            }
        }
    }
    if best.1 > 1 {
        hex(out, &groups[..best.0]);
        out.put_all(b"::");
        hex(out, &groups[best.0 + best.1..]);
    } else {
        hex(out, &groups);
    }
}

/// `ip` as its `Display` writes it (`10.0.0.1`), without the formatting
/// machinery.
pub fn push_ipv4(out: &mut impl AsciiOut, ip: &std::net::Ipv4Addr) {
    let mut b = itoa::Buffer::new();
    for (i, o) in ip.octets().iter().enumerate() {
        if i > 0 {
            out.put(b'.');
        }
        out.put_all(b.format(*o).as_bytes());
    }
}

/// Where text made only of ASCII is appended: the bytes of JSON Lines,
/// the string of a summary line.
pub trait AsciiOut {
    fn put(&mut self, b: u8);
    fn put_all(&mut self, bytes: &[u8]);
}

impl AsciiOut for Vec<u8> {
    #[inline]
    fn put(&mut self, b: u8) {
        self.push(b);
    }
    #[inline]
    fn put_all(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl AsciiOut for String {
    /// `b` as the character of that code point: itself, for ASCII.
    #[inline]
    fn put(&mut self, b: u8) {
        self.push(char::from(b));
    }
    #[inline]
    fn put_all(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push(char::from(b));
        }
    }
}

#[cfg(test)]
mod ipv6_tests {
    use proptest::prelude::*;
    use std::net::Ipv6Addr;

    fn text(ip: Ipv6Addr) -> String {
        let mut out = Vec::new();
        super::push_ipv6(&mut out, &ip);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn as_display_writes_them() {
        for s in [
            "::",
            "::1",
            "1::",
            "fe80::1",
            "fe80::202:c9ff:fe00:1",
            "2001:db8::1:0:0:1",
            "2001:db8:0:1:1:1:1:1",
            "1:0:0:2:0:0:0:3",
            "1:0:0:2:0:0:3:4",
            "::ffff:10.0.0.1",
            "::10.0.0.1",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            "0:1:0:1:0:1:0:1",
        ] {
            let ip: Ipv6Addr = s.parse().unwrap();
            assert_eq!(text(ip), ip.to_string(), "{s}");
        }
        assert_eq!(
            text("2001:db8::1:0:0:1".parse().unwrap()),
            "2001:db8::1:0:0:1"
        );
        assert_eq!(text("::ffff:10.0.0.1".parse().unwrap()), "::ffff:10.0.0.1");
    }

    proptest! {
        // Groups drawn mostly from 0 and a few values, so that runs of
        // zeros of every length and position come up.
        #[test]
        fn same_as_display(groups in proptest::array::uniform8(prop_oneof![
            4 => Just(0u16), 1 => Just(0xffffu16), 1 => 1u16..16, 2 => any::<u16>()
        ])) {
            let ip = Ipv6Addr::from(groups);
            prop_assert_eq!(text(ip), ip.to_string());
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Decimal digits of `v`; one-digit values (flags, small fields) skip itoa.
#[inline(always)]
pub fn push_u64(out: &mut Vec<u8>, v: u64) {
    if v < 10 {
        out.push(b'0' + v as u8);
    } else {
        out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }
}

pub fn push_mac(out: &mut Vec<u8>, m: &[u8; 6]) {
    for (i, b) in m.iter().enumerate() {
        if i > 0 {
            out.push(b':');
        }
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 0xf)]);
    }
}

/// A MAC address as text where it is formatted (`format_args!`), with no
/// `String` made for it (`packets -V` writes three a frame).
pub struct MacText<'a>(pub &'a [u8; 6]);

impl std::fmt::Display for MacText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::wire::MacAddr(*self.0).fmt(f)
    }
}

pub fn mac_string(m: &[u8; 6]) -> String {
    let mut v = Vec::with_capacity(17);
    push_mac(&mut v, m);
    String::from_utf8(v).unwrap_or_default()
}

/// Indented JSON for the report, except that objects and arrays nested
/// `flat_from` levels deep or more sit on one line: each event, episode and
/// per-interval flow list is one greppable line, and the document is about
/// a third of its fully indented size (and as much faster to write).
pub struct ReportFormatter {
    depth: usize,
    flat_from: usize,
    has_value: bool,
}

impl ReportFormatter {
    /// Objects inside the report's lists of events, episodes and flows are
    /// five levels deep.
    pub const FLAT_FROM: usize = 5;

    pub fn new(flat_from: usize) -> Self {
        Self::at_depth(flat_from, 0)
    }

    /// For a value that sits `depth` containers deep in the document.
    pub fn at_depth(flat_from: usize, depth: usize) -> Self {
        ReportFormatter {
            depth,
            flat_from,
            has_value: false,
        }
    }

    fn flat(&self) -> bool {
        self.depth >= self.flat_from
    }

    fn indent<W: ?Sized + std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn begin<W: ?Sized + std::io::Write>(&mut self, w: &mut W, open: &[u8]) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(open)
    }

    fn end<W: ?Sized + std::io::Write>(&mut self, w: &mut W, close: &[u8]) -> std::io::Result<()> {
        let was_flat = self.flat();
        self.depth -= 1;
        if self.has_value && !was_flat {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        self.has_value = true;
        w.write_all(close)
    }

    fn item<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if self.flat() {
            if !first {
                w.write_all(b",")?;
            }
            return Ok(());
        }
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }
}

impl serde_json::ser::Formatter for ReportFormatter {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"[")
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"]")
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.begin(w, b"{")
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.end(w, b"}")
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(if self.flat() { b":" } else { b": " })
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes the report (or any value) as [`ReportFormatter`] lays it out,
/// with a final newline.
pub fn write_report<W: std::io::Write, T: serde::Serialize>(
    w: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser =
        serde_json::Serializer::with_formatter(w, ReportFormatter::new(ReportFormatter::FLAT_FROM));
    value.serialize(&mut ser)?;
    ser.into_inner()
        .write_all(b"\n")
        .map_err(serde_json::Error::io)
}

#[cfg(test)]
mod mac_tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn mac_text_is_the_mac_string(m in any::<[u8; 6]>()) {
            let s = super::mac_string(&m);
            prop_assert_eq!(super::MacText(&m).to_string(), s.clone());
            let want = m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":");
            prop_assert_eq!(s, want);
        }
    }
}

#[cfg(test)]
mod report_formatter_tests {
    use super::*;

    #[test]
    fn same_value_as_pretty_with_deep_containers_on_one_line() {
        let v = serde_json::json!({
            "a": 1,
            "empty": [],
            "flows": [{
                "naks": {"rnr": 0},
                "events": [{"kind": "gap", "psn": 5, "list": [1, 2]}, {"kind": "cnp"}],
                "none": {}
            }]
        });
        let mut out = Vec::new();
        write_report(&mut out, &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        assert!(text.ends_with("}\n"));
        assert!(text.contains("\n        {\"kind\":\"gap\",\"list\":[1,2],\"psn\":5},\n"));
        assert!(text.contains("\n        {\"kind\":\"cnp\"}\n"));
        assert!(text.contains("\"naks\": {\n        \"rnr\": 0\n      },"));
        assert!(text.contains("\"empty\": [],"));
        assert!(text.contains("\"none\": {}"));
    }
}

/// `doc` (valid JSON) without the whitespace between tokens: one line, as
/// JSON Lines wants. Strings are copied as they are (escapes included).
pub fn minify(doc: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(doc.len());
    let mut in_string = false;
    let mut escaped = false;
    for &b in doc {
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
            if b == b'"' {
                in_string = true;
            }
            out.push(b);
        }
    }
    out
}

#[cfg(test)]
mod minify_tests {
    #[test]
    fn whitespace_goes_strings_stay() {
        let doc = b"{\n  \"a b\": [1, 2],\n  \"c\": \"x \\\" y\\\\\",\n  \"d\": {}\n}\n";
        let m = super::minify(doc);
        assert_eq!(
            m,
            b"{\"a b\":[1,2],\"c\":\"x \\\" y\\\\\",\"d\":{}}".to_vec()
        );
        let v: serde_json::Value = serde_json::from_slice(&m).unwrap();
        assert_eq!(v, serde_json::from_slice::<serde_json::Value>(doc).unwrap());
    }
}
