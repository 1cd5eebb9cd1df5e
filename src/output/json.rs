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
    #[inline]
    fn key(&mut self, k: &str) {
        if self.comma {
            self.out.push(b',');
        }
        self.comma = true;
        self.out.extend_from_slice(k.as_bytes());
    }

    pub fn begin(&mut self) {
        self.out.push(b'{');
        self.comma = false;
    }

    pub fn end(&mut self) {
        self.out.push(b'}');
        self.comma = true;
    }

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

    pub fn u64(&mut self, k: &str, v: u64) {
        self.key(k);
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }

    pub fn opt_u64(&mut self, k: &str, v: Option<u64>) {
        match v {
            Some(v) => self.u64(k, v),
            None => self.null(k),
        }
    }

    pub fn bool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
    }

    pub fn opt_bool(&mut self, k: &str, v: Option<bool>) {
        match v {
            Some(v) => self.bool(k, v),
            None => self.null(k),
        }
    }

    pub fn null(&mut self, k: &str) {
        self.key(k);
        self.out.extend_from_slice(b"null");
    }

    /// A string known to need no escaping (names, numbers, addresses).
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

    pub fn mac(&mut self, k: &str, m: &[u8; 6]) {
        self.key(k);
        self.out.push(b'"');
        push_mac(self.out, m);
        self.out.push(b'"');
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
