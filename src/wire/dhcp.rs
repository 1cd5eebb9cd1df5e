//! BOOTP and DHCP (RFC 951, RFC 2131, UDP ports 67 and 68): how the hosts
//! and switches of a fabric get their management addresses. A view over
//! the fixed 236-byte header and a walk of the options for the message
//! type (option 53), enough for tshark's summary line and a few fields.

use super::{be16, be32};

/// The server's and the client's ports.
pub const SERVER_PORT: u16 = 67;
pub const CLIENT_PORT: u16 = 68;

/// The fixed header: op, htype, hlen, hops, xid, secs, flags, four
/// addresses, chaddr (16), sname (64), file (128).
pub const HEADER_LEN: usize = 236;
/// Where the client's hardware address starts.
const CHADDR: usize = 28;
/// The magic cookie that says DHCP options follow (99.130.83.99).
pub const MAGIC: u32 = 0x6382_5363;
/// BOOTP's vendor area when there is no cookie: 64 bytes (RFC 951).
const VENDOR_LEN: usize = 64;

pub const OPT_PAD: u8 = 0;
pub const OPT_MESSAGE_TYPE: u8 = 53;
pub const OPT_END: u8 = 255;

/// A BOOTP or DHCP message: at least its first byte.
#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    bytes: &'a [u8],
}

/// What the options say, as far as they could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// The DHCP message type (the last option 53 read): `None` for plain
    /// BOOTP.
    pub message_type: Option<u8>,
    /// The options (or the header before them) end before they should:
    /// tshark's `[Malformed Packet]`.
    pub malformed: bool,
}

impl<'a> Message<'a> {
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        (!bytes.is_empty()).then_some(Self { bytes })
    }

    fn byte(&self, at: usize) -> Option<u8> {
        self.bytes.get(at).copied()
    }

    /// 1: a request, 2: a reply.
    pub fn op(&self) -> u8 {
        self.byte(0).unwrap_or(0)
    }

    pub fn htype(&self) -> Option<u8> {
        self.byte(1)
    }

    pub fn hlen(&self) -> Option<u8> {
        self.byte(2)
    }

    /// The transaction ID.
    pub fn xid(&self) -> Option<u32> {
        let b = self.bytes.get(4..8)?;
        Some(be32(b.try_into().ok()?))
    }

    pub fn flags(&self) -> Option<u16> {
        let b = self.bytes.get(10..12)?;
        Some(be16(b.try_into().ok()?))
    }

    /// One of the four addresses: 0 client, 1 "your", 2 next server,
    /// 3 relay agent.
    pub fn address(&self, i: usize) -> Option<std::net::Ipv4Addr> {
        let at = i.checked_mul(4)?.checked_add(12)?;
        let b: [u8; 4] = self.bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(b.into())
    }

    /// The client's hardware address, as long as `hlen` says (at most 16).
    pub fn chaddr(&self) -> Option<&'a [u8]> {
        let n = usize::from(self.hlen()?).min(16);
        self.bytes.get(CHADDR..CHADDR.checked_add(n)?)
    }

    /// An Ethernet MAC (a hardware address of six bytes).
    pub fn mac(&self) -> Option<[u8; 6]> {
        if self.hlen()? != 6 {
            return None;
        }
        self.chaddr()?.try_into().ok()
    }

    /// Walks the options for the message type, as tshark reads them: after
    /// the magic cookie, pads skipped, up to the end option; an option
    /// that runs past the message ends the walk as malformed. Without the
    /// cookie it is BOOTP, whose 64-byte vendor area must be there.
    pub fn options(&self) -> Options {
        self.walk(|_, _| {})
    }

    /// Every message type the options give (tshark's `dhcp.option.dhcp`),
    /// in order.
    pub fn message_types(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.walk(|code, data| {
            if code == OPT_MESSAGE_TYPE {
                v.extend(data.first());
            }
        });
        v
    }

    /// The data of every option `code` that is whole, in order.
    pub fn option_data(&self, code: u8) -> Vec<&'a [u8]> {
        let mut v = Vec::new();
        self.walk(|c, data| {
            if c == code {
                v.push(data);
            }
        });
        v
    }

    /// [`options`](Self::options), handing each whole option read to
    /// `each` (its code and data).
    fn walk(&self, mut each: impl FnMut(u8, &'a [u8])) -> Options {
        let mut o = Options::default();
        let cookie = self
            .bytes
            .get(HEADER_LEN..HEADER_LEN.saturating_add(4))
            .and_then(|b| b.try_into().ok())
            .map(be32);
        match cookie {
            None => {
                o.malformed = true;
                return o;
            }
            Some(c) if c != MAGIC => {
                o.malformed = self.bytes.len() < HEADER_LEN.saturating_add(VENDOR_LEN);
                return o;
            }
            Some(_) => {}
        }
        let mut at = HEADER_LEN.saturating_add(4);
        while let Some(code) = self.byte(at) {
            match code {
                OPT_END => break,
                OPT_PAD => {
                    at = at.saturating_add(1);
                    continue;
                }
                _ => {}
            }
            let Some(len) = self.byte(at.saturating_add(1)) else {
                o.malformed = true;
                break;
            };
            let data = at.saturating_add(2);
            let end = data.saturating_add(usize::from(len));
            if code == OPT_MESSAGE_TYPE {
                // tshark reads the type byte whatever the length says (a
                // length of 0 reads the next option's code), then finds
                // the length wrong.
                o.message_type = self.byte(data).or(o.message_type);
                if len == 0 || self.byte(data).is_none() {
                    o.malformed = true;
                    break;
                }
            }
            let Some(bytes) = self.bytes.get(data..end) else {
                o.malformed = true;
                break;
            };
            each(code, bytes);
            at = end;
        }
        o
    }
}

/// A DHCP message type's name, as tshark's summary line gives it.
pub fn message_type_name(t: u8) -> Option<&'static str> {
    Some(match t {
        1 => "Discover",
        2 => "Offer",
        3 => "Request",
        4 => "Decline",
        5 => "ACK",
        6 => "NAK",
        7 => "Release",
        8 => "Inform",
        9 => "Force Renew",
        10 => "Lease query",
        11 => "Lease Unassigned",
        12 => "Lease Unknown",
        13 => "Lease Active",
        14 => "Bulk Lease Query",
        15 => "Lease Query Done",
        16 => "Active LeaseQuery",
        17 => "Lease Query Status",
        18 => "TLS",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(op: u8, options: &[u8]) -> Vec<u8> {
        let mut m = vec![0u8; HEADER_LEN];
        m[0] = op;
        m[1] = 1;
        m[2] = 6;
        m[4..8].copy_from_slice(&0xd18f_1a96u32.to_be_bytes());
        m[28..34].copy_from_slice(&[0xcc, 0x98, 0x91, 0x36, 0xf6, 0xa7]);
        m.extend_from_slice(&MAGIC.to_be_bytes());
        m.extend_from_slice(options);
        m
    }

    #[test]
    fn the_message_type_is_read_as_tshark_reads_it() {
        let m = message(1, &[53, 1, 1, 255]);
        let v = Message::new(&m).unwrap();
        assert_eq!(v.xid(), Some(0xd18f_1a96));
        assert_eq!(v.mac(), Some([0xcc, 0x98, 0x91, 0x36, 0xf6, 0xa7]));
        assert_eq!(
            v.options(),
            Options {
                message_type: Some(1),
                malformed: false
            }
        );
        // Pads first, two types (the last wins), a length of 2.
        let m = message(1, &[0, 0, 53, 1, 1, 53, 2, 3, 9, 255]);
        assert_eq!(Message::new(&m).unwrap().options().message_type, Some(3));
        assert_eq!(Message::new(&m).unwrap().message_types(), [1, 3]);
        // A length of 0 reads the next code and is malformed.
        let m = message(1, &[53, 0, 255]);
        assert_eq!(
            Message::new(&m).unwrap().options(),
            Options {
                message_type: Some(255),
                malformed: true
            }
        );
        // An option that runs past the end, before any type: BOOTP.
        let m = message(1, &[12, 200, b'x']);
        assert_eq!(
            Message::new(&m).unwrap().options(),
            Options {
                message_type: None,
                malformed: true
            }
        );
        // No end option is no error.
        let m = message(1, &[53, 1, 3]);
        assert!(!Message::new(&m).unwrap().options().malformed);
        // No cookie: BOOTP, malformed without its vendor area.
        let m = &message(1, &[])[..HEADER_LEN];
        assert!(Message::new(m).unwrap().options().malformed);
        assert_eq!(message_type_name(16), Some("Active LeaseQuery"));
        assert_eq!(message_type_name(19), None);
    }
}
