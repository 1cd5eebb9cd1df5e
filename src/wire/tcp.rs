//! TCP (RFC 9293), as a view over a segment etherparse has found: the
//! header's numbers, its flags and its options, for the summary line, the
//! header tree and the fields. A mirror of a RoCE fabric carries TCP
//! beside RoCE (rdma_cm's out-of-band exchange, NCCL's bootstrap, ssh).

use super::{be16, be32};

pub const FIN: u16 = 0x001;
pub const SYN: u16 = 0x002;
pub const RST: u16 = 0x004;
pub const PSH: u16 = 0x008;
pub const ACK: u16 = 0x010;
pub const URG: u16 = 0x020;
pub const ECE: u16 = 0x040;
pub const CWR: u16 = 0x080;
pub const NS: u16 = 0x100;
/// The three reserved bits above NS.
pub const RESERVED: u16 = 0xe00;

/// The flags' names in the summary line, lowest bit first (tshark 4.0's:
/// NS is "AE", Accurate ECN, RFC 9768).
const FLAG_NAMES: [(u16, &str); 9] = [
    (FIN, "FIN"),
    (SYN, "SYN"),
    (RST, "RST"),
    (PSH, "PSH"),
    (ACK, "ACK"),
    (URG, "URG"),
    (ECE, "ECE"),
    (CWR, "CWR"),
    (NS, "AE"),
];

/// The largest window scale shift a receiver uses (RFC 7323 section 2.3:
/// a larger one is taken as 14).
pub const MAX_WINDOW_SHIFT: u8 = 14;

/// A TCP segment: its 20-byte header at least, then options and payload.
#[derive(Debug, Clone, Copy)]
pub struct Tcp<'a> {
    bytes: &'a [u8],
}

/// One TCP option, as it appears in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpOption<'a> {
    End,
    Nop,
    Mss(u16),
    /// The shift as sent (may exceed [`MAX_WINDOW_SHIFT`]).
    WindowScale(u8),
    SackPermitted,
    /// The SACK blocks' bytes (8 per block: left and right edge).
    Sack(&'a [u8]),
    Timestamps {
        value: u32,
        echo: u32,
    },
    /// Any other kind, with its data (after kind and length).
    Other {
        kind: u8,
        data: &'a [u8],
    },
    /// An option whose length runs past the header or is below 2: the
    /// walk stops there.
    Malformed {
        kind: u8,
    },
}

impl<'a> Tcp<'a> {
    /// The segment in `bytes`, if its 20-byte fixed header is there.
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        (bytes.len() >= 20).then_some(Self { bytes })
    }

    fn array<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut out = [0; N];
        if let Some(b) = self.bytes.get(at..at.saturating_add(N)) {
            out.copy_from_slice(b);
        }
        out
    }

    pub fn src_port(&self) -> u16 {
        be16(self.array(0))
    }

    pub fn dst_port(&self) -> u16 {
        be16(self.array(2))
    }

    pub fn seq(&self) -> u32 {
        be32(self.array(4))
    }

    pub fn ack(&self) -> u32 {
        be32(self.array(8))
    }

    /// The header's length in bytes (data offset × 4), as it says.
    pub fn header_len(&self) -> usize {
        usize::from(self.array::<1>(12)[0] >> 4).saturating_mul(4)
    }

    /// The 12 bits of flags: the 9 named ones and the 3 reserved.
    pub fn flags(&self) -> u16 {
        be16(self.array(12)) & 0x0fff
    }

    pub fn has(&self, flag: u16) -> bool {
        self.flags() & flag != 0
    }

    pub fn window(&self) -> u16 {
        be16(self.array(14))
    }

    pub fn checksum(&self) -> u16 {
        be16(self.array(16))
    }

    pub fn urgent(&self) -> u16 {
        be16(self.array(18))
    }

    /// The sequence number after this segment's, from its own `seq` (as
    /// sent or relative) and payload length: a SYN or FIN counts one (one,
    /// if both are set, as tshark counts).
    pub fn next_seq(&self, seq: u32, payload_len: u32) -> u32 {
        let extra = u32::from(self.has(SYN | FIN));
        seq.wrapping_add(payload_len).wrapping_add(extra)
    }

    /// The options' bytes (between the fixed header and the data), as far
    /// as captured.
    pub fn option_bytes(&self) -> &'a [u8] {
        let end = self.header_len().min(self.bytes.len());
        self.bytes.get(20..end).unwrap_or_default()
    }

    /// The options in header order, up to the end-of-list option or one
    /// that does not fit.
    pub fn options(&self) -> Options<'a> {
        Options {
            rest: self.option_bytes(),
        }
    }

    /// The window scale option's shift, capped at [`MAX_WINDOW_SHIFT`].
    pub fn window_shift(&self) -> Option<u8> {
        self.options().find_map(|o| match o {
            TcpOption::WindowScale(s) => Some(s.min(MAX_WINDOW_SHIFT)),
            _ => None,
        })
    }
}

/// The flags as the summary line lists them: `SYN, ACK`, `Reserved` for
/// any reserved bit, `<None>` for none.
pub fn flag_names(flags: u16) -> String {
    let mut out = String::new();
    let named = FLAG_NAMES.iter().filter(|(bit, _)| flags & bit != 0);
    let reserved = (flags & RESERVED != 0).then_some("Reserved");
    for name in named.map(|(_, n)| *n).chain(reserved) {
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(name);
    }
    if out.is_empty() {
        out.push_str("<None>");
    }
    out
}

/// Walks a segment's options.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Options<'a> {
    type Item = TcpOption<'a>;

    fn next(&mut self) -> Option<TcpOption<'a>> {
        let (&kind, after) = self.rest.split_first()?;
        match kind {
            0 => {
                self.rest = &[];
                return Some(TcpOption::End);
            }
            1 => {
                self.rest = after;
                return Some(TcpOption::Nop);
            }
            _ => {}
        }
        let len = usize::from(after.first().copied().unwrap_or(0));
        let Some(data) = self.rest.get(2..len.max(2)).filter(|_| len >= 2) else {
            self.rest = &[];
            return Some(TcpOption::Malformed { kind });
        };
        self.rest = self.rest.get(len..).unwrap_or_default();
        let word = |at: usize| {
            data.get(at..at.saturating_add(4))
                .and_then(|b| b.try_into().ok())
        };
        let option = match (kind, data.len()) {
            (2, 2) => TcpOption::Mss(be16(data.try_into().unwrap_or_default())),
            (3, 1) => TcpOption::WindowScale(data.first().copied().unwrap_or(0)),
            (4, 0) => TcpOption::SackPermitted,
            (5, n) if n % 8 == 0 => TcpOption::Sack(data),
            (8, 8) => match (word(0), word(4)) {
                (Some(v), Some(e)) => TcpOption::Timestamps {
                    value: be32(v),
                    echo: be32(e),
                },
                _ => TcpOption::Other { kind, data },
            },
            _ => TcpOption::Other { kind, data },
        };
        Some(option)
    }
}

/// A SACK option's blocks: (left edge, right edge) pairs.
pub fn sack_blocks(data: &[u8]) -> impl Iterator<Item = (u32, u32)> + '_ {
    data.chunks_exact(8).map(|b| {
        let mut l = [0; 4];
        let mut r = [0; 4];
        l.copy_from_slice(b.get(..4).unwrap_or(&[0; 4]));
        r.copy_from_slice(b.get(4..8).unwrap_or(&[0; 4]));
        (be32(l), be32(r))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(flags: u16, options: &[u8]) -> Vec<u8> {
        let hlen = 20 + options.len();
        let mut b = vec![0u8; hlen];
        b[0..2].copy_from_slice(&47378u16.to_be_bytes());
        b[2..4].copy_from_slice(&9000u16.to_be_bytes());
        b[4..8].copy_from_slice(&0x1000u32.to_be_bytes());
        b[8..12].copy_from_slice(&0x2000u32.to_be_bytes());
        b[12] = ((hlen / 4) as u8) << 4 | (flags >> 8) as u8;
        b[13] = flags as u8;
        b[14..16].copy_from_slice(&29200u16.to_be_bytes());
        b[20..].copy_from_slice(options);
        b
    }

    #[test]
    fn header_numbers_and_flags() {
        let b = segment(SYN | ACK | NS, &[]);
        let t = Tcp::new(&b).unwrap();
        assert_eq!((t.src_port(), t.dst_port()), (47378, 9000));
        assert_eq!((t.seq(), t.ack(), t.window()), (0x1000, 0x2000, 29200));
        assert_eq!(t.header_len(), 20);
        assert_eq!(flag_names(t.flags()), "SYN, ACK, AE");
        assert_eq!(flag_names(0), "<None>");
        assert_eq!(flag_names(ECE | 0x200), "ECE, Reserved");
        assert!(Tcp::new(&b[..19]).is_none());
    }

    #[test]
    fn options_in_order() {
        // Linux's SYN: MSS, SACK permitted, timestamps, NOP, window scale.
        let opts = [
            2, 4, 5, 180, 4, 2, 8, 10, 0, 0, 0, 7, 0, 0, 0, 9, 1, 3, 3, 7,
        ];
        let b = segment(SYN, &opts);
        let t = Tcp::new(&b).unwrap();
        let got: Vec<_> = t.options().collect();
        assert_eq!(
            got,
            [
                TcpOption::Mss(1460),
                TcpOption::SackPermitted,
                TcpOption::Timestamps { value: 7, echo: 9 },
                TcpOption::Nop,
                TcpOption::WindowScale(7),
            ]
        );
        assert_eq!(t.window_shift(), Some(7));
    }

    #[test]
    fn sack_blocks_and_a_capped_shift() {
        let opts = [1, 1, 5, 10, 0, 0, 0, 5, 0, 0, 0, 9, 3, 3, 20, 0];
        let b = segment(ACK, &opts);
        let t = Tcp::new(&b).unwrap();
        let sack = t.options().find_map(|o| match o {
            TcpOption::Sack(d) => Some(d),
            _ => None,
        });
        assert_eq!(sack_blocks(sack.unwrap()).collect::<Vec<_>>(), [(5, 9)]);
        assert_eq!(t.window_shift(), Some(MAX_WINDOW_SHIFT));
    }

    #[test]
    fn a_bad_length_stops_the_walk() {
        for bad in [[2u8, 0, 0, 0], [2, 9, 0, 0], [2, 1, 0, 0]] {
            let b = segment(ACK, &bad);
            let got: Vec<_> = Tcp::new(&b).unwrap().options().collect();
            assert_eq!(got, [TcpOption::Malformed { kind: 2 }]);
        }
        // A header length past the captured bytes: the options captured.
        let mut b = segment(ACK, &[1, 1, 1, 1]);
        b[12] = 15 << 4;
        assert_eq!(Tcp::new(&b).unwrap().options().count(), 4);
        // The end of the list ends it.
        let b = segment(ACK, &[0, 2, 4, 5]);
        assert_eq!(Tcp::new(&b).unwrap().options().count(), 1);
    }
}
