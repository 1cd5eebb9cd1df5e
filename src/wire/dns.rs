//! DNS messages (RFC 1035), and the same format as multicast DNS (RFC 6762)
//! and LLMNR (RFC 4795) carry it: the name service chatter a mirror of a
//! fabric's hosts picks up beside RoCE. A view over the UDP payload: the
//! header's fields, then its questions and resource records one by one,
//! names read through their compression pointers. Nothing is kept: the
//! records are read again each time they are walked, and a count in the
//! header larger than the message holds ends at the message's end.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::be16;

pub const HEADER_LEN: usize = 12;

pub const T_A: u16 = 1;
pub const T_NS: u16 = 2;
pub const T_MD: u16 = 3;
pub const T_MF: u16 = 4;
pub const T_CNAME: u16 = 5;
pub const T_SOA: u16 = 6;
pub const T_PTR: u16 = 12;
pub const T_HINFO: u16 = 13;
pub const T_MX: u16 = 15;
pub const T_AAAA: u16 = 28;
pub const T_SRV: u16 = 33;
pub const T_DNAME: u16 = 39;
pub const T_OPT: u16 = 41;
pub const T_NSEC: u16 = 47;

/// mDNS's top bit of a question's class (unicast response wanted) and of
/// a record's (the cache flush bit).
pub const MDNS_CLASS_BIT: u16 = 0x8000;

/// Which of the three protocols a message is, as tshark tells them apart:
/// by port, the lower of the two first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Dns,
    Mdns,
    Llmnr,
}

impl Flavour {
    /// The protocol known by `port`, if one of the three is.
    pub fn of_port(port: u16) -> Option<Self> {
        match port {
            53 => Some(Self::Dns),
            5353 => Some(Self::Mdns),
            5355 => Some(Self::Llmnr),
            _ => None,
        }
    }

    /// The protocol of a UDP datagram between these ports, if it is one
    /// of the three.
    pub fn by_ports(sport: u16, dport: u16) -> Option<Self> {
        let (low, high) = if sport <= dport {
            (sport, dport)
        } else {
            (dport, sport)
        };
        Self::of_port(low).or_else(|| Self::of_port(high))
    }

    /// The Protocol column's name.
    pub const fn protocol(self) -> &'static str {
        match self {
            Self::Dns => "DNS",
            Self::Mdns => "MDNS",
            Self::Llmnr => "LLMNR",
        }
    }

    /// Its name in display filters and `frame.protocols`.
    pub const fn filter_name(self) -> &'static str {
        match self {
            Self::Dns => "dns",
            Self::Mdns => "mdns",
            Self::Llmnr => "llmnr",
        }
    }

    /// The header tree's title.
    pub const fn title(self) -> &'static str {
        match self {
            Self::Dns => "Domain Name System",
            Self::Mdns => "Multicast Domain Name System",
            Self::Llmnr => "Link-local Multicast Name Resolution",
        }
    }
}

/// The four parts of a message after its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Question,
    Answer,
    Authority,
    Additional,
}

impl Section {
    /// Its title in the header tree, as tshark's.
    pub const fn title(self) -> &'static str {
        match self {
            Self::Question => "Queries",
            Self::Answer => "Answers",
            Self::Authority => "Authoritative nameservers",
            Self::Additional => "Additional records",
        }
    }
}

/// A DNS message: a 12-byte header, then its records.
#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    bytes: &'a [u8],
}

/// One question or resource record, where it is in the message.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    pub section: Section,
    /// Where its owner name starts, and its whole length in the message.
    pub at: usize,
    pub len: usize,
    pub rtype: u16,
    pub class: u16,
    /// A question has no TTL and no data.
    pub ttl: u32,
    pub rdata: &'a [u8],
    /// Where its data starts in the message.
    pub rdata_at: usize,
    /// Its data is all there; when not, `rdata` is what there is, and the
    /// records end with it.
    pub whole: bool,
}

/// A message's records end before its counts do: a record runs past the
/// end of the message (or uses an obsolete label type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Short;

/// What a name whose compression pointers go round in a loop reads as
/// (tshark's words); the record goes on after its first pointer.
pub const LOOP_TEXT: &str = "<Name contains a pointer that loops>";

/// A name read from a message: its text as tshark shows it, and the bytes
/// it takes where it starts (a pointer counts two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub used: usize,
}

/// The longest name text kept (a valid name is at most 255 bytes; escapes
/// can make its text up to four times longer).
const MAX_TEXT: usize = 1024;

impl<'a> Message<'a> {
    /// The message in `bytes`, if its header is there.
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        (bytes.len() >= HEADER_LEN).then_some(Self { bytes })
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    fn word(&self, at: usize) -> u16 {
        match self.bytes.get(at..at.saturating_add(2)) {
            Some(&[a, b]) => be16([a, b]),
            _ => 0,
        }
    }

    pub fn id(&self) -> u16 {
        self.word(0)
    }

    pub fn flags(&self) -> u16 {
        self.word(2)
    }

    pub fn is_response(&self) -> bool {
        self.flags() & 0x8000 != 0
    }

    pub fn opcode(&self) -> u8 {
        ((self.flags() >> 11) & 0xf) as u8
    }

    pub fn rcode(&self) -> u8 {
        (self.flags() & 0xf) as u8
    }

    /// Questions, answers, authority and additional records, as the header
    /// counts them.
    pub fn counts(&self) -> [u16; 4] {
        [self.word(4), self.word(6), self.word(8), self.word(10)]
    }

    /// The records in order, each section after the other; the last item
    /// is an error when the message ends before its counts do.
    pub fn records(&self) -> Records<'a> {
        Records {
            msg: *self,
            at: HEADER_LEN,
            section: 0,
            left: self.word(4),
            done: false,
        }
    }

    /// The name at `at`, read through compression pointers.
    pub fn name(&self, at: usize) -> Result<Name, Short> {
        let mut text = String::new();
        let used = self.write_name(at, &mut text)?;
        Ok(Name { text, used })
    }

    /// Appends the name at `at` to `out` as tshark shows it, and returns
    /// the bytes it takes where it starts; on an error `out` is as it was.
    pub fn write_name(&self, at: usize, out: &mut String) -> Result<usize, Short> {
        let start = out.len();
        let walked = self.walk_name(at, |label| {
            if out.len().saturating_sub(start) < MAX_TEXT {
                if out.len() > start {
                    out.push('.');
                }
                super::push_text(out, label);
            }
        });
        match walked {
            Ok((used, looped)) => {
                if looped {
                    out.truncate(start);
                    out.push_str(LOOP_TEXT);
                } else if out.len() == start {
                    out.push_str("<Root>");
                }
                Ok(used)
            }
            Err(e) => {
                out.truncate(start);
                Err(e)
            }
        }
    }

    /// The bytes the name at `at` takes there (a pointer counts two).
    pub fn name_len(&self, at: usize) -> Result<usize, Short> {
        self.walk_name(at, |_| {}).map(|(used, _)| used)
    }

    /// Walks the name at `at` through its pointers, handing each label to
    /// `label`: the bytes it takes where it starts, and whether its
    /// pointers went round in a loop (it ends at the first repeat then).
    fn walk_name(&self, at: usize, mut label: impl FnMut(&[u8])) -> Result<(usize, bool), Short> {
        let mut pos = at;
        let mut used = None;
        let mut jumps = 0usize;
        loop {
            let len = *self.bytes.get(pos).ok_or(Short)?;
            match len & 0xc0 {
                0x00 if len == 0 => {
                    let used = used.unwrap_or(pos.saturating_add(1).saturating_sub(at));
                    return Ok((used, false));
                }
                0x00 => {
                    let start = pos.saturating_add(1);
                    let bytes = self
                        .bytes
                        .get(start..start.saturating_add(usize::from(len)))
                        .ok_or(Short)?;
                    label(bytes);
                    pos = start.saturating_add(usize::from(len));
                }
                0xc0 => {
                    let low = *self.bytes.get(pos.saturating_add(1)).ok_or(Short)?;
                    if used.is_none() {
                        used = Some(pos.saturating_add(2).saturating_sub(at));
                    }
                    jumps = jumps.saturating_add(1);
                    // A name of labels takes two bytes a label at least:
                    // more pointers than that go round.
                    if jumps > self.bytes.len() / 2 {
                        return Ok((used.unwrap_or(2), true));
                    }
                    pos = usize::from(u16::from(len & 0x3f) << 8 | u16::from(low));
                }
                // Extended and binary labels (RFC 2671, 2673): obsolete.
                _ => return Err(Short),
            }
        }
    }

    /// The record types an NSEC record's bit map lists (RFC 4034 4.1.2),
    /// after its next domain name.
    pub fn nsec_types(&self, r: &Record<'_>) -> Vec<u16> {
        let used = self.name_len(r.rdata_at).unwrap_or(r.rdata.len());
        let mut map = r.rdata.get(used..).unwrap_or(&[]);
        let mut types = Vec::new();
        while let [window, len, rest @ ..] = map {
            let len = usize::from(*len).min(32).min(rest.len());
            for (i, byte) in rest.iter().take(len).enumerate() {
                for bit in 0..8u16 {
                    if byte & (0x80 >> bit) != 0 {
                        // window < 256, i < 32: at most 65535.
                        types.push(u16::from(*window) << 8 | (i as u16) << 3 | bit);
                    }
                }
            }
            map = rest.get(len..).unwrap_or(&[]);
        }
        types
    }

    /// The character-string (a length byte, then text) at `at`, and what
    /// follows it.
    pub fn character_string(&self, at: usize) -> Option<(String, usize)> {
        let len = usize::from(*self.bytes.get(at)?);
        let start = at.checked_add(1)?;
        let s = self.bytes.get(start..start.checked_add(len)?)?;
        let mut text = String::new();
        super::push_text(&mut text, s);
        Some((text, start.saturating_add(len)))
    }
}

/// The records of a message, one section after another.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    msg: Message<'a>,
    at: usize,
    /// 0 questions, 1 answers, 2 authority, 3 additional.
    section: usize,
    left: u16,
    done: bool,
}

const SECTIONS: [Section; 4] = [
    Section::Question,
    Section::Answer,
    Section::Authority,
    Section::Additional,
];

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, Short>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        while self.left == 0 {
            self.section = self.section.saturating_add(1);
            let counts = self.msg.counts();
            self.left = *counts.get(self.section)?;
        }
        let section = *SECTIONS.get(self.section)?;
        self.left = self.left.saturating_sub(1);
        match self.read(section) {
            Ok(r) => {
                self.at = r.at.saturating_add(r.len);
                self.done = !r.whole;
                Some(Ok(r))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<'a> Records<'a> {
    fn read(&self, section: Section) -> Result<Record<'a>, Short> {
        let m = &self.msg;
        let name_len = m.name_len(self.at)?;
        let fixed = self.at.saturating_add(name_len);
        let need = if section == Section::Question { 4 } else { 10 };
        let head = m
            .bytes
            .get(fixed..fixed.saturating_add(need))
            .ok_or(Short)?;
        let word = |i: usize| match head.get(i..i.saturating_add(2)) {
            Some(&[a, b]) => be16([a, b]),
            _ => 0,
        };
        let (rtype, class) = (word(0), word(2));
        if section == Section::Question {
            return Ok(Record {
                whole: true,
                section,
                at: self.at,
                len: name_len.saturating_add(4),
                rtype,
                class,
                ttl: 0,
                rdata: &[],
                rdata_at: fixed.saturating_add(4),
            });
        }
        let ttl = u32::from(word(4)) << 16 | u32::from(word(6));
        let rdlen = usize::from(word(8));
        let rdata_at = fixed.saturating_add(10);
        let end = rdata_at.saturating_add(rdlen);
        let whole = end <= m.bytes.len();
        let rdata = m.bytes.get(rdata_at..end.min(m.bytes.len())).unwrap_or(&[]);
        Ok(Record {
            whole,
            section,
            at: self.at,
            len: name_len.saturating_add(10).saturating_add(rdlen),
            rtype,
            class,
            ttl,
            rdata,
            rdata_at,
        })
    }
}

impl Record<'_> {
    /// An A record's address.
    pub fn ipv4(&self) -> Option<Ipv4Addr> {
        let b: [u8; 4] = self.rdata.get(..4)?.try_into().ok()?;
        (self.rtype == T_A).then_some(Ipv4Addr::from(b))
    }

    /// An AAAA record's address.
    pub fn ipv6(&self) -> Option<Ipv6Addr> {
        let b: [u8; 16] = self.rdata.get(..16)?.try_into().ok()?;
        (self.rtype == T_AAAA).then_some(Ipv6Addr::from(b))
    }
}

/// A record type's mnemonic (IANA's DNS parameters), as tshark names it.
pub fn type_name(t: u16) -> Option<&'static str> {
    const LOW: [&str; 66] = [
        "Unused",
        "A",
        "NS",
        "MD",
        "MF",
        "CNAME",
        "SOA",
        "MB",
        "MG",
        "MR",
        "NULL",
        "WKS",
        "PTR",
        "HINFO",
        "MINFO",
        "MX",
        "TXT",
        "RP",
        "AFSDB",
        "X25",
        "ISDN",
        "RT",
        "NSAP",
        "NSAP-PTR",
        "SIG",
        "KEY",
        "PX",
        "GPOS",
        "AAAA",
        "LOC",
        "NXT",
        "EID",
        "NIMLOC",
        "SRV",
        "ATMA",
        "NAPTR",
        "KX",
        "CERT",
        "A6",
        "DNAME",
        "SINK",
        "OPT",
        "APL",
        "DS",
        "SSHFP",
        "IPSECKEY",
        "RRSIG",
        "NSEC",
        "DNSKEY",
        "DHCID",
        "NSEC3",
        "NSEC3PARAM",
        "TLSA",
        "",
        "",
        "HIP",
        "",
        "RKEY",
        "TALINK",
        "CDS",
        "CDNSKEY",
        "OPENPGPKEY",
        "CSYNC",
        "ZONEMD",
        "SVCB",
        "HTTPS",
    ];
    let name = match t {
        0..=65 => LOW.get(usize::from(t)).copied().unwrap_or(""),
        99 => "SPF",
        100 => "UINFO",
        101 => "UID",
        102 => "GID",
        103 => "UNSPEC",
        104 => "NID",
        105 => "L32",
        106 => "L64",
        107 => "LP",
        108 => "EUI48",
        109 => "EUI64",
        249 => "TKEY",
        250 => "TSIG",
        251 => "IXFR",
        252 => "AXFR",
        // tshark's names for 253 and 254 are each other's (IANA: MAILB
        // is 253); the summary lines are tshark's.
        253 => "MAILA",
        254 => "MAILB",
        255 => "ANY",
        256 => "URI",
        257 => "CAA",
        32768 => "TA",
        32769 => "DLV",
        _ => "",
    };
    (!name.is_empty()).then_some(name)
}

/// A class's name, as tshark's tree gives it.
pub fn class_name(c: u16) -> &'static str {
    match c {
        1 => "IN",
        2 => "CS",
        3 => "CH",
        4 => "HS",
        254 => "NONE",
        255 => "ANY",
        _ => "Unknown",
    }
}

/// An operation's name, as the summary line starts.
pub fn opcode_name(op: u8) -> Option<&'static str> {
    Some(match op {
        0 => "Standard query",
        1 => "Inverse query",
        2 => "Server status request",
        4 => "Zone change notification",
        5 => "Dynamic update",
        6 => "DNS Stateful operations (DSO)",
        _ => return None,
    })
}

/// A reply code's name.
pub fn rcode_name(rc: u8) -> Option<&'static str> {
    Some(match rc {
        0 => "No error",
        1 => "Format error",
        2 => "Server failure",
        3 => "No such name",
        4 => "Not implemented",
        5 => "Refused",
        6 => "Name exists",
        7 => "RRset exists",
        8 => "RRset does not exist",
        9 => "Not authoritative",
        10 => "Name out of zone",
        11 => "DSO-Type not implemented",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for l in n.split('.').filter(|l| !l.is_empty()) {
            out.push(l.len() as u8);
            out.extend_from_slice(l.as_bytes());
        }
        out.push(0);
        out
    }

    fn header(id: u16, flags: u16, counts: [u16; 4]) -> Vec<u8> {
        let mut h = Vec::new();
        for w in [id, flags, counts[0], counts[1], counts[2], counts[3]] {
            h.extend_from_slice(&w.to_be_bytes());
        }
        h
    }

    #[test]
    fn a_response_with_a_compressed_answer() {
        let mut m = header(0x1234, 0x8180, [1, 1, 0, 0]);
        m.extend(name("foo.example.com"));
        m.extend([0, 1, 0, 1]);
        m.extend([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 1, 2, 3, 4]);
        let msg = Message::new(&m).unwrap();
        assert_eq!(msg.id(), 0x1234);
        assert!(msg.is_response());
        assert_eq!((msg.opcode(), msg.rcode()), (0, 0));
        let recs: Vec<_> = msg.records().collect();
        assert_eq!(recs.len(), 2);
        let q = recs[0].unwrap();
        assert_eq!(q.section, Section::Question);
        assert_eq!(msg.name(q.at).unwrap().text, "foo.example.com");
        let a = recs[1].unwrap();
        assert_eq!(a.section, Section::Answer);
        assert_eq!(a.ttl, 60);
        let n = msg.name(a.at).unwrap();
        assert_eq!((n.text.as_str(), n.used), ("foo.example.com", 2));
        assert_eq!(a.ipv4(), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(a.at + a.len, m.len());
    }

    #[test]
    fn loops_short_messages_and_huge_counts_end() {
        // A pointer to itself.
        let mut m = header(9, 0x8180, [1, 0, 0, 0]);
        m.extend([0xc0, 12, 0, 1, 0, 1]);
        let msg = Message::new(&m).unwrap();
        let n = msg.name(12).unwrap();
        assert_eq!((n.text.as_str(), n.used), (LOOP_TEXT, 2));
        let recs: Vec<_> = msg.records().collect();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].unwrap().rtype, 1);
        // Counts far beyond what the message holds: one error, the end.
        let mut m = header(1, 0, [65535, 65535, 65535, 65535]);
        m.extend(name("a"));
        m.extend([0, 1, 0, 1]);
        let msg = Message::new(&m).unwrap();
        let recs: Vec<_> = msg.records().collect();
        assert_eq!(recs.len(), 2);
        assert!(recs[0].is_ok());
        assert_eq!(recs[1].unwrap_err(), Short);
        assert!(Message::new(&[0; 11]).is_none());
        // An answer whose data runs past the end: what there is, the end.
        let mut m = header(1, 0x8180, [0, 2, 0, 0]);
        m.extend([0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 10, 0]);
        let msg = Message::new(&m).unwrap();
        let recs: Vec<_> = msg.records().collect();
        assert_eq!(recs.len(), 1);
        let r = recs[0].unwrap();
        assert!(!r.whole);
        assert_eq!(r.rdata, &[10, 0]);
        assert_eq!(r.ipv4(), None);
    }

    #[test]
    fn names_as_tshark_shows_them() {
        let mut m = header(1, 0, [0, 0, 0, 0]);
        m.extend([4, b'w', b'e', 1, b'x', 0]);
        m.extend([5, b'c', b'a', b'f', 0xc3, 0xa9, 0]);
        m.extend([2, 0xff, b'a', 0]);
        m.push(0);
        let msg = Message::new(&m).unwrap();
        assert_eq!(msg.name(12).unwrap().text, "we\\001x");
        assert_eq!(msg.name(18).unwrap().text, "café");
        assert_eq!(msg.name(25).unwrap().text, "\\377a");
        assert_eq!(msg.name(29).unwrap().text, "<Root>");
    }

    #[test]
    fn flavours_by_port() {
        assert_eq!(Flavour::by_ports(40000, 53), Some(Flavour::Dns));
        assert_eq!(Flavour::by_ports(5353, 5353), Some(Flavour::Mdns));
        assert_eq!(Flavour::by_ports(53, 5353), Some(Flavour::Dns));
        assert_eq!(Flavour::by_ports(5355, 50000), Some(Flavour::Llmnr));
        assert_eq!(Flavour::by_ports(4791, 4791), None);
        assert_eq!(type_name(28), Some("AAAA"));
        assert_eq!(type_name(53), None);
        assert_eq!(type_name(1234), None);
    }
}
