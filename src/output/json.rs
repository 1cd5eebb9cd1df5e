//! A minimal JSON writer for the per-packet hot path: appends to a byte
//! buffer, no intermediate values, no allocation once the buffer is warm.

use std::io::Write as _;
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
            IpAddr::V4(v4) => {
                let mut b = itoa::Buffer::new();
                for (i, o) in v4.octets().iter().enumerate() {
                    if i > 0 {
                        self.out.push(b'.');
                    }
                    self.out.extend_from_slice(b.format(*o).as_bytes());
                }
            }
            IpAddr::V6(v6) => {
                let _ = write!(self.out, "{v6}");
            }
        }
        self.out.push(b'"');
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

pub fn mac_string(m: &[u8; 6]) -> String {
    let mut v = Vec::with_capacity(17);
    push_mac(&mut v, m);
    String::from_utf8(v).unwrap_or_default()
}
