//! Local Route Header (8 bytes): the link-layer header of native
//! InfiniBand, where RoCE has Ethernet.
//!
//! ```text
//! 0: VL(4) LVer(4) | 1: SL(4) Rsv(2) LNH(2) | 2: DLID(16)
//! 4: Rsv(5) PktLen(11) | 6: SLID(16)
//! ```
//!
//! PktLen counts 4-byte words from the LRH through the ICRC (the VCRC
//! after it is not counted).

use super::{Truncated, be16, fixed, fixed_mut, put, take};

pub const LEN: usize = 8;
/// The VCRC after the ICRC.
pub const VCRC_LEN: usize = 2;

mod field {
    pub const VL_LVER: usize = 0;
    pub const SL_LNH: usize = 1;
    pub const DLID: usize = 2;
    pub const PKT_LEN: usize = 4;
    pub const SLID: usize = 6;
}

/// What follows the LRH (its two LNH bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lnh {
    /// 0: raw, a raw header with an EtherType (RWH) follows.
    Raw,
    /// 1: raw IPv6.
    Ipv6,
    /// 2: IBA local: the BTH follows.
    #[default]
    Local,
    /// 3: IBA global: a GRH, then the BTH.
    Global,
}

impl Lnh {
    pub fn from_bits(v: u8) -> Lnh {
        match v & 3 {
            0 => Lnh::Raw,
            1 => Lnh::Ipv6,
            2 => Lnh::Local,
            _ => Lnh::Global,
        }
    }

    pub fn bits(self) -> u8 {
        match self {
            Lnh::Raw => 0,
            Lnh::Ipv6 => 1,
            Lnh::Local => 2,
            Lnh::Global => 3,
        }
    }

    /// As Wireshark names it.
    pub fn name(self) -> &'static str {
        match self {
            Lnh::Raw => "Raw (RWH)",
            Lnh::Ipv6 => "Raw IPv6",
            Lnh::Local => "IBA local (BTH follows)",
            Lnh::Global => "IBA global (GRH follows)",
        }
    }
}

/// The permissive LID: every port answers to it.
pub const PERMISSIVE_LID: u16 = 0xffff;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LrhRepr {
    /// Virtual lane (15 carries subnet management).
    pub vl: u8,
    pub lver: u8,
    pub sl: u8,
    /// The two reserved bits after SL.
    pub resv2: u8,
    pub lnh: Lnh,
    pub dlid: u16,
    /// The five reserved bits before PktLen.
    pub resv5: u8,
    /// Words (4 bytes) from the LRH through the ICRC.
    pub pkt_len: u16,
    pub slid: u16,
}

impl LrhRepr {
    pub const LEN: usize = LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<LEN>("LRH", buf)?;
        let (vl_lver, sl_lnh) = (b[field::VL_LVER], b[field::SL_LNH]);
        let len = be16(take(b, field::PKT_LEN));
        Ok(LrhRepr {
            vl: vl_lver >> 4,
            lver: vl_lver & 0xf,
            sl: sl_lnh >> 4,
            resv2: (sl_lnh >> 2) & 3,
            lnh: Lnh::from_bits(sl_lnh),
            dlid: be16(take(b, field::DLID)),
            resv5: (len >> 11) as u8,
            pkt_len: len & 0x7ff,
            slid: be16(take(b, field::SLID)),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<LEN>("LRH", buf)?;
        b[field::VL_LVER] = (self.vl << 4) | (self.lver & 0xf);
        b[field::SL_LNH] = (self.sl << 4) | ((self.resv2 & 3) << 2) | self.lnh.bits();
        put(b, field::DLID, &self.dlid.to_be_bytes());
        let len = (u16::from(self.resv5 & 0x1f) << 11) | (self.pkt_len & 0x7ff);
        put(b, field::PKT_LEN, &len.to_be_bytes());
        put(b, field::SLID, &self.slid.to_be_bytes());
        Ok(())
    }

    /// Bytes from the LRH through the ICRC, as PktLen says.
    pub fn packet_bytes(&self) -> usize {
        usize::from(self.pkt_len) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_a_real_lrh() {
        // Frame 10 of Wireshark's infiniband.pcap sample (an ERF capture of
        // an IPoIB ping over RC): LID 4 to LID 1, 28 words.
        let b = [0x00, 0x02, 0x00, 0x01, 0x00, 0x1c, 0x00, 0x04];
        let l = LrhRepr::parse(&b).unwrap();
        assert_eq!((l.vl, l.lver, l.sl, l.lnh), (0, 0, 0, Lnh::Local));
        assert_eq!((l.dlid, l.slid, l.pkt_len), (1, 4, 28));
        assert_eq!(l.packet_bytes(), 112);
        // A subnet management packet: VL 15, permissive DLID.
        let smp = LrhRepr::parse(&[0xf0, 0x02, 0xff, 0xff, 0x00, 0x48, 0xff, 0xff]).unwrap();
        assert_eq!((smp.vl, smp.dlid, smp.pkt_len), (15, PERMISSIVE_LID, 72));
        assert!(LrhRepr::parse(&b[..7]).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(vl in 0u8..16, lver in 0u8..16, sl in 0u8..16, resv2 in 0u8..4,
                      lnh in 0u8..4, dlid in any::<u16>(), resv5 in 0u8..32,
                      pkt_len in 0u16..2048, slid in any::<u16>()) {
            let l = LrhRepr { vl, lver, sl, resv2, lnh: Lnh::from_bits(lnh), dlid, resv5, pkt_len, slid };
            let mut b = [0u8; LEN];
            l.emit(&mut b).unwrap();
            prop_assert_eq!(LrhRepr::parse(&b).unwrap(), l);
        }
    }
}
