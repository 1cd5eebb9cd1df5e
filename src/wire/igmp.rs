//! IGMP (RFC 1112, 2236, 3376), as a view over a message etherparse has
//! found: enough to name it in the summary line and the header tree. RoCE
//! fabrics carry it beside RoCE when multicast groups are joined (UD
//! multicast, PTP, mDNS on the management side of a mirror).

use std::net::Ipv4Addr;

use super::be16;

pub const MEMBERSHIP_QUERY: u8 = 0x11;
pub const V1_REPORT: u8 = 0x12;
pub const V2_REPORT: u8 = 0x16;
pub const LEAVE_GROUP: u8 = 0x17;
pub const V3_REPORT: u8 = 0x22;

/// An IGMP message: its first 8 bytes are type, max response code,
/// checksum and group (a version 3 report has its record count there).
#[derive(Debug, Clone, Copy)]
pub struct Igmp<'a> {
    bytes: &'a [u8],
}

impl<'a> Igmp<'a> {
    /// The message in `bytes`, if its 8-byte header is there.
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        (bytes.len() >= 8).then_some(Self { bytes })
    }

    fn byte(&self, at: usize) -> u8 {
        self.bytes.get(at).copied().unwrap_or(0)
    }

    pub fn kind(&self) -> u8 {
        self.byte(0)
    }

    pub fn max_resp(&self) -> u8 {
        self.byte(1)
    }

    /// A query's maximum response time in tenths of a second (version 2
    /// and 3 queries; a version 3 code of 128 or more is a floating-point
    /// one, RFC 3376 section 4.1.1), or a version 2 report's or leave's
    /// byte as it is.
    pub fn max_resp_time(&self) -> Option<u16> {
        let code = self.max_resp();
        match (self.kind(), self.version()) {
            (MEMBERSHIP_QUERY, Some(3)) if code >= 128 => {
                let mant = u16::from(code & 0x0f) | 0x10;
                let exp = u32::from((code >> 4) & 0x07).saturating_add(3);
                Some(mant << exp)
            }
            (MEMBERSHIP_QUERY, Some(2 | 3)) | (V2_REPORT | LEAVE_GROUP, _) => Some(u16::from(code)),
            _ => None,
        }
    }

    pub fn checksum(&self) -> u16 {
        be16([self.byte(2), self.byte(3)])
    }

    /// The group address (queries, version 1 and 2 reports, leaves).
    pub fn group(&self) -> Ipv4Addr {
        Ipv4Addr::new(self.byte(4), self.byte(5), self.byte(6), self.byte(7))
    }

    /// The protocol's version, as the message's type and length tell it
    /// (RFC 3376 section 7.1); `None` for a type IGMP does not define.
    pub fn version(&self) -> Option<u8> {
        match self.kind() {
            MEMBERSHIP_QUERY if self.bytes.len() >= 12 => Some(3),
            MEMBERSHIP_QUERY if self.max_resp() == 0 => Some(1),
            MEMBERSHIP_QUERY => Some(2),
            V1_REPORT => Some(1),
            V2_REPORT | LEAVE_GROUP => Some(2),
            V3_REPORT => Some(3),
            _ => None,
        }
    }

    /// The name of the message's type (`None` for a type IGMP does not
    /// define).
    pub fn kind_name(&self) -> Option<&'static str> {
        match self.kind() {
            MEMBERSHIP_QUERY => Some("Membership Query"),
            V1_REPORT | V2_REPORT | V3_REPORT => Some("Membership Report"),
            LEAVE_GROUP => Some("Leave Group"),
            _ => None,
        }
    }

    /// A version 3 report's number of group records, as it says.
    pub fn record_count(&self) -> u16 {
        be16([self.byte(6), self.byte(7)])
    }

    /// A version 3 query's source addresses, those captured.
    pub fn query_sources(&self) -> impl Iterator<Item = Ipv4Addr> + 'a {
        let n = if self.kind() == MEMBERSHIP_QUERY && self.version() == Some(3) {
            usize::from(be16([self.byte(10), self.byte(11)]))
        } else {
            0
        };
        addresses(self.bytes.get(12..).unwrap_or_default(), n)
    }

    /// A version 3 report's group records, those captured whole (all of
    /// them, as tshark lists them: the frame bounds them).
    pub fn records(&self) -> impl Iterator<Item = Record<'a>> + 'a {
        let bytes = self.bytes;
        let n = if self.kind() == V3_REPORT {
            usize::from(self.record_count())
        } else {
            0
        };
        let mut at = 8usize;
        std::iter::from_fn(move || {
            let r = bytes.get(at..)?.first_chunk::<8>()?;
            let sources = usize::from(be16([r[2], r[3]])).saturating_mul(4);
            // Auxiliary data is counted in 32-bit words.
            let len = usize::from(r[1])
                .saturating_mul(4)
                .saturating_add(sources)
                .saturating_add(8);
            let whole = bytes.get(at..at.checked_add(len)?)?;
            at = at.checked_add(len)?;
            Some(Record {
                kind: r[0],
                group: Ipv4Addr::new(r[4], r[5], r[6], r[7]),
                sources: whole.get(8..8usize.saturating_add(sources))?,
            })
        })
        .take(n)
    }
}

/// The first `n` IPv4 addresses of `b` (those there).
fn addresses(b: &[u8], n: usize) -> impl Iterator<Item = Ipv4Addr> + '_ {
    b.chunks_exact(4)
        .take(n)
        .filter_map(|a| <[u8; 4]>::try_from(a).ok().map(Ipv4Addr::from))
}

/// One group record of a version 3 report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: u8,
    pub group: Ipv4Addr,
    sources: &'a [u8],
}

impl<'a> Record<'a> {
    /// The record type's name (RFC 3376 section 4.2.12).
    pub fn kind_name(&self) -> Option<&'static str> {
        Some(match self.kind {
            1 => "Mode Is Include",
            2 => "Mode Is Exclude",
            3 => "Change To Include Mode",
            4 => "Change To Exclude Mode",
            5 => "Allow New Sources",
            6 => "Block Old Sources",
            _ => return None,
        })
    }

    pub fn source_count(&self) -> usize {
        self.sources.len() / 4
    }

    pub fn sources(&self) -> impl Iterator<Item = Ipv4Addr> + 'a {
        addresses(self.sources, usize::MAX)
    }

    /// What the record asks for, as tshark's summary line words it:
    /// `Join group G for any sources`, `Leave group G`, `Join group G for
    /// sources in {S1, S2}`, `Group G, block source {S}`.
    pub fn describe(&self) -> String {
        let g = self.group;
        let n = self.source_count();
        let one = n == 1;
        let head = match (self.kind, n) {
            (1 | 3, 0) => return format!("Leave group {g}"),
            (2 | 4, 0) => return format!("Join group {g} for any sources"),
            (5, 0) => return format!("Group {g}, ALLOW_NEW_SOURCES but no source specified (?)"),
            (6, 0) => return format!("Group {g}, BLOCK_OLD_SOURCES but no source specified (?)"),
            (_, 0) => return format!("Group {g}, unknown record type (?)"),
            (1 | 3, _) if one => format!("Join group {g} for source"),
            (1 | 3, _) => format!("Join group {g} for sources in"),
            (2 | 4, _) if one => format!("Join group {g}, for source not"),
            (2 | 4, _) => format!("Join group {g}, for sources not in"),
            (5, _) if one => format!("Group {g}, new source"),
            (5, _) => format!("Group {g}, new sources"),
            (6, _) if one => format!("Group {g}, block source"),
            (6, _) => format!("Group {g}, block sources"),
            _ => format!("Group {g}, unknown record type (?), sources"),
        };
        format!("{head} {{{}}}", join(self.sources()))
    }
}

/// Addresses joined by `, `.
pub fn join(a: impl Iterator<Item = Ipv4Addr>) -> String {
    a.map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_records() {
        let v2 = [0x16, 0, 0x09, 0x04, 224, 0, 0, 251];
        let m = Igmp::new(&v2).unwrap();
        assert_eq!(m.version(), Some(2));
        assert_eq!(m.kind_name(), Some("Membership Report"));
        assert_eq!(m.group(), Ipv4Addr::new(224, 0, 0, 251));
        assert_eq!(m.records().count(), 0);
        let query_v1 = [0x11, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(Igmp::new(&query_v1).unwrap().version(), Some(1));
        // A version 3 report of two records, the second cut short.
        let mut v3 = vec![0x22, 0, 0, 0, 0, 0, 0, 3];
        v3.extend([4, 0, 0, 0, 224, 1, 1, 50]);
        v3.extend([1, 0, 0, 2, 239, 0, 0, 1, 10, 0, 0, 1]);
        let m = Igmp::new(&v3).unwrap();
        let r: Vec<String> = m.records().map(|r| r.describe()).collect();
        assert_eq!(r, ["Join group 224.1.1.50 for any sources"]);
        v3.extend([10, 0, 0, 2]);
        v3.extend([
            6, 1, 0, 1, 239, 0, 0, 2, 10, 0, 0, 3, 0xaa, 0xbb, 0xcc, 0xdd,
        ]);
        let m = Igmp::new(&v3).unwrap();
        let r: Vec<String> = m.records().map(|r| r.describe()).collect();
        assert_eq!(
            r[1..],
            [
                "Join group 239.0.0.1 for sources in {10.0.0.1, 10.0.0.2}",
                "Group 239.0.0.2, block source {10.0.0.3}"
            ]
        );
        assert!(Igmp::new(&[0x11; 7]).is_none());
        // Every record, however many (a frame holds hundreds).
        let mut many = vec![0x22, 0, 0, 0, 0, 0, 0, 12];
        for i in 0..12 {
            many.extend([4, 0, 0, 0, 239, 0, 0, i]);
        }
        let m = Igmp::new(&many).unwrap();
        assert_eq!(m.records().count(), 12);
        assert_eq!(
            m.records().last().unwrap().group,
            Ipv4Addr::new(239, 0, 0, 11)
        );
        // A count larger than the records there stops at the bytes.
        let huge = [0x22, 0, 0, 0, 0, 0, 0xff, 0xff];
        assert_eq!(Igmp::new(&huge).unwrap().records().count(), 0);
        // A version 3 query's floating-point response time and sources.
        let q3 = [0x11, 0x90, 0, 0, 224, 1, 1, 50, 0, 0x7d, 0, 9, 10, 0, 0, 9];
        let m = Igmp::new(&q3).unwrap();
        assert_eq!((m.version(), m.max_resp_time()), (Some(3), Some(256)));
        assert_eq!(join(m.query_sources()), "10.0.0.9");
    }
}
