//! Endace Extensible Record Format header: the 16 bytes before each frame
//! of a `DLT_ERF` (197) capture, as ibdump writes on InfiniBand ports and
//! DAG cards write for any link.
//!
//! ```text
//! 0: timestamp (64, little-endian, seconds in the high 32 bits, binary
//!    fraction in the low 32)
//! 8: type (bit 7: extension headers follow; 7 bits: record type)
//! 9: flags (bits 0-1 capture interface, 2 varying length, 3 truncated,
//!    4 receive error, 5 data-stream error)
//! 10: rlen (16, record length, header and padding included)
//! 12: lctr (16, loss counter; a colour in the colour types)
//! 14: wlen (16, length on the wire)
//! ```
//!
//! Extension headers are 8 bytes each; the top bit of each one's first
//! byte says another follows. Ethernet records then have two bytes
//! (offset, pad) before the frame.

use super::{Truncated, be16, fixed, fixed_mut, put, take};

pub const LEN: usize = 16;
/// Each extension header.
pub const EXT_LEN: usize = 8;
/// Extension headers read at most (a record could claim more).
pub const MAX_EXT: usize = 32;
/// The offset/pad bytes before an Ethernet frame.
pub const ETH_PAD: usize = 2;

mod field {
    pub const TS: usize = 0;
    pub const TYPE: usize = 8;
    pub const FLAGS: usize = 9;
    pub const RLEN: usize = 10;
    pub const LCTR: usize = 12;
    pub const WLEN: usize = 14;
}

/// Record types this tool decodes the frame of (others are named only).
pub mod types {
    pub const ETH: u8 = 2;
    pub const COLOR_ETH: u8 = 11;
    pub const DSM_COLOR_ETH: u8 = 16;
    pub const COLOR_HASH_ETH: u8 = 20;
    pub const INFINIBAND: u8 = 21;
    pub const IPV4: u8 = 22;
    pub const IPV6: u8 = 23;
    pub const INFINIBAND_LINK: u8 = 25;
    pub const META: u8 = 27;
    pub const PAD: u8 = 48;
}

/// What an ERF record carries, for the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErfPayload {
    /// An Ethernet frame, after the two offset/pad bytes.
    Ethernet,
    /// A native InfiniBand packet, from its LRH.
    InfiniBand,
    Ipv4,
    Ipv6,
    /// Anything else (HDLC, ATM, InfiniBand link packets, padding, ...).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ErfRepr {
    /// Seconds in the high 32 bits, binary fraction in the low 32.
    pub ts: u64,
    /// The record type (7 bits).
    pub kind: u8,
    /// Bit 7 of the type byte.
    pub has_ext: bool,
    pub flags: u8,
    pub rlen: u16,
    pub lctr: u16,
    pub wlen: u16,
}

impl ErfRepr {
    pub const LEN: usize = LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<LEN>("ERF header", buf)?;
        let t = b[field::TYPE];
        Ok(ErfRepr {
            ts: u64::from_le_bytes(take(b, field::TS)),
            kind: t & 0x7f,
            has_ext: t & 0x80 != 0,
            flags: b[field::FLAGS],
            rlen: be16(take(b, field::RLEN)),
            lctr: be16(take(b, field::LCTR)),
            wlen: be16(take(b, field::WLEN)),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<LEN>("ERF header", buf)?;
        put(b, field::TS, &self.ts.to_le_bytes());
        b[field::TYPE] = (self.kind & 0x7f) | if self.has_ext { 0x80 } else { 0 };
        b[field::FLAGS] = self.flags;
        put(b, field::RLEN, &self.rlen.to_be_bytes());
        put(b, field::LCTR, &self.lctr.to_be_bytes());
        put(b, field::WLEN, &self.wlen.to_be_bytes());
        Ok(())
    }

    /// Nanoseconds since the epoch (the binary fraction rounded to the
    /// nearest nanosecond, as Wireshark does).
    pub fn ts_ns(&self) -> u64 {
        let secs = self.ts >> 32;
        let frac = self.ts & 0xffff_ffff;
        // frac < 2^32: the product stays below 2^62.
        let ns = frac.saturating_mul(1_000_000_000).saturating_add(1 << 31) >> 32;
        secs.saturating_mul(1_000_000_000).saturating_add(ns)
    }

    /// The ERF timestamp of `ns` nanoseconds since the epoch (seconds past
    /// 2^32, in 2106, are cut to 32 bits).
    pub fn ts_from_ns(ns: u64) -> u64 {
        let secs = (ns / 1_000_000_000) & 0xffff_ffff;
        let sub = ns % 1_000_000_000;
        (secs << 32) | ((sub << 32).saturating_add(500_000_000) / 1_000_000_000)
    }

    pub fn payload(&self) -> ErfPayload {
        match self.kind {
            types::ETH | types::COLOR_ETH | types::DSM_COLOR_ETH | types::COLOR_HASH_ETH => {
                ErfPayload::Ethernet
            }
            types::INFINIBAND => ErfPayload::InfiniBand,
            types::IPV4 => ErfPayload::Ipv4,
            types::IPV6 => ErfPayload::Ipv6,
            _ => ErfPayload::Other,
        }
    }

    /// Whether `lctr` is a loss counter (in the colour types it is a
    /// colour).
    pub fn counts_losses(&self) -> bool {
        !matches!(
            self.kind,
            types::COLOR_ETH | types::DSM_COLOR_ETH | types::COLOR_HASH_ETH | 10 | 15 | 17 | 19
        )
    }

    pub fn port(&self) -> u8 {
        self.flags & 3
    }
    pub fn truncated(&self) -> bool {
        self.flags & 0x08 != 0
    }
    pub fn rx_error(&self) -> bool {
        self.flags & 0x10 != 0
    }
    pub fn ds_error(&self) -> bool {
        self.flags & 0x20 != 0
    }

    pub fn type_name(&self) -> &'static str {
        match self.kind {
            0 => "LEGACY",
            1 => "HDLC_POS",
            types::ETH => "ETH",
            3 => "ATM",
            4 => "AAL5",
            5 => "MC_HDLC",
            6 => "MC_RAW",
            7 => "MC_ATM",
            8 => "MC_RAW_CHANNEL",
            9 => "MC_AAL5",
            10 => "COLOR_HDLC_POS",
            types::COLOR_ETH => "COLOR_ETH",
            12 => "MC_AAL2",
            13 => "IP_COUNTER",
            14 => "TCP_FLOW_COUNTER",
            15 => "DSM_COLOR_HDLC_POS",
            types::DSM_COLOR_ETH => "DSM_COLOR_ETH",
            17 => "COLOR_MC_HDLC_POS",
            18 => "AAL2",
            19 => "COLOR_HASH_POS",
            types::COLOR_HASH_ETH => "COLOR_HASH_ETH",
            types::INFINIBAND => "INFINIBAND",
            types::IPV4 => "IPV4",
            types::IPV6 => "IPV6",
            24 => "RAW_LINK",
            types::INFINIBAND_LINK => "INFINIBAND_LINK",
            types::META => "META",
            28 => "OMNI-PATH_SNC",
            29 => "OMNI-PATH",
            types::PAD => "PAD",
            _ => "unknown",
        }
    }
}

/// The timestamp of the ERF record at the start of `record`, in
/// nanoseconds (what a capture's own record header says is coarser: ibdump
/// writes microseconds there).
pub fn timestamp_ns(record: &[u8]) -> Option<u64> {
    let ts = u64::from_le_bytes(*record.first_chunk::<8>()?);
    Some(
        ErfRepr {
            ts,
            ..Default::default()
        }
        .ts_ns(),
    )
}

/// Where the frame of the record at the start of `buf` begins: after the
/// header, its extension headers (at most [`MAX_EXT`]) and, for Ethernet,
/// the offset/pad bytes.
pub fn frame_offset(hdr: &ErfRepr, buf: &[u8]) -> Result<usize, Truncated> {
    let mut at = LEN;
    let mut more = hdr.has_ext;
    let mut n = 0usize;
    while more {
        let first = *buf.get(at).ok_or(Truncated {
            layer: "ERF extension header",
            needed: at.saturating_add(EXT_LEN),
            got: buf.len(),
        })?;
        if buf.len() < at.saturating_add(EXT_LEN) {
            return Err(Truncated {
                layer: "ERF extension header",
                needed: at.saturating_add(EXT_LEN),
                got: buf.len(),
            });
        }
        more = first & 0x80 != 0;
        at = at.saturating_add(EXT_LEN);
        n = n.saturating_add(1);
        if n >= MAX_EXT {
            break;
        }
    }
    if hdr.payload() == ErfPayload::Ethernet {
        at = at.saturating_add(ETH_PAD);
    }
    if at > buf.len() {
        return Err(Truncated {
            layer: if hdr.payload() == ErfPayload::Ethernet {
                "ERF Ethernet header"
            } else {
                "ERF header"
            },
            needed: at,
            got: buf.len(),
        });
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_a_real_erf_header() {
        // Frame 10 of Wireshark's infiniband.pcap sample.
        let b = [
            0xc0, 0x41, 0x30, 0xae, 0xf8, 0x41, 0x2b, 0x48, 0x15, 0x05, 0x00, 0x88, 0x00, 0x00,
            0x00, 0x72,
        ];
        let e = ErfRepr::parse(&b).unwrap();
        assert_eq!(e.ts, 0x482b_41f8_ae30_41c0);
        assert_eq!((e.kind, e.has_ext, e.port()), (types::INFINIBAND, false, 1));
        assert_eq!((e.rlen, e.lctr, e.wlen), (136, 0, 114));
        assert_eq!(e.payload(), ErfPayload::InfiniBand);
        // tshark: 19:48:08.680423841 UTC, May 14, 2008.
        assert_eq!(e.ts_ns(), 1_210_794_488_680_423_841);
        assert_eq!(frame_offset(&e, &b).unwrap(), 16);
    }

    #[test]
    fn extension_headers_and_ethernet_padding() {
        let mut b = vec![0u8; 16 + 16 + 2];
        let e = ErfRepr {
            kind: types::ETH,
            has_ext: true,
            ..Default::default()
        };
        e.emit(&mut b).unwrap();
        b[16] = 0x80 | 3; // another follows
        b[24] = 4;
        assert_eq!(frame_offset(&e, &b).unwrap(), 16 + 16 + 2);
        assert!(frame_offset(&e, &b[..20]).is_err());
        // An endless chain stops at MAX_EXT.
        let mut c = vec![0x80u8; 16 + 8 * 40];
        e.emit(&mut c).unwrap();
        assert_eq!(frame_offset(&e, &c).unwrap(), 16 + 8 * MAX_EXT + 2);
    }

    proptest! {
        #[test]
        fn round_trip(ts in any::<u64>(), kind in 0u8..128, has_ext in any::<bool>(),
                      flags in any::<u8>(), rlen in any::<u16>(), lctr in any::<u16>(),
                      wlen in any::<u16>()) {
            let e = ErfRepr { ts, kind, has_ext, flags, rlen, lctr, wlen };
            let mut b = [0u8; LEN];
            e.emit(&mut b).unwrap();
            prop_assert_eq!(ErfRepr::parse(&b).unwrap(), e);
        }

        #[test]
        fn timestamps_round_trip_to_the_nanosecond(ns in 0u64..4_294_967_296_000_000_000) {
            prop_assert_eq!(ErfRepr { ts: ErfRepr::ts_from_ns(ns), ..Default::default() }.ts_ns(), ns);
        }
    }
}
