//! Global Route Header (40 bytes, IPv6 layout), the network header of RoCE v1.
//!
//! ```text
//! 0: IPVer(4) TClass(8) FlowLabel(20) | 4: PayLen(16) NxtHdr(8) HopLmt(8)
//! 8: SGID(128) | 24: DGID(128)
//! ```

use super::{Truncated, be16, be32, fixed, fixed_mut, put, take};

pub const LEN: usize = 40;
/// NxtHdr value announcing a BTH.
pub const NEXT_HEADER_BTH: u8 = 0x1b;

mod field {
    pub const VERSION_CLASS_FLOW: usize = 0;
    pub const PAY_LEN: usize = 4;
    pub const NXT_HDR: usize = 6;
    pub const HOP_LMT: usize = 7;
    pub const SGID: usize = 8;
    pub const DGID: usize = 24;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GrhRepr {
    pub ip_ver: u8,
    pub tclass: u8,
    pub flow_label: u32,
    pub pay_len: u16,
    pub nxt_hdr: u8,
    pub hop_lmt: u8,
    pub sgid: [u8; 16],
    pub dgid: [u8; 16],
}

impl GrhRepr {
    pub const LEN: usize = LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<LEN>("GRH", buf)?;
        let w0 = be32(take(b, field::VERSION_CLASS_FLOW));
        Ok(GrhRepr {
            ip_ver: (w0 >> 28) as u8,
            tclass: ((w0 >> 20) & 0xff) as u8,
            flow_label: w0 & 0x000f_ffff,
            pay_len: be16(take(b, field::PAY_LEN)),
            nxt_hdr: b[field::NXT_HDR],
            hop_lmt: b[field::HOP_LMT],
            sgid: take(b, field::SGID),
            dgid: take(b, field::DGID),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<LEN>("GRH", buf)?;
        let w0 = (u32::from(self.ip_ver & 0xf) << 28)
            | (u32::from(self.tclass) << 20)
            | (self.flow_label & 0x000f_ffff);
        put(b, field::VERSION_CLASS_FLOW, &w0.to_be_bytes());
        put(b, field::PAY_LEN, &self.pay_len.to_be_bytes());
        b[field::NXT_HDR] = self.nxt_hdr;
        b[field::HOP_LMT] = self.hop_lmt;
        put(b, field::SGID, &self.sgid);
        put(b, field::DGID, &self.dgid);
        Ok(())
    }

    pub fn sgid_addr(&self) -> std::net::Ipv6Addr {
        std::net::Ipv6Addr::from(self.sgid)
    }

    pub fn dgid_addr(&self) -> std::net::Ipv6Addr {
        std::net::Ipv6Addr::from(self.dgid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_connectx_v1_grh() {
        // GRH of the RoCE v1 WRITE Only in ../shared/captures-external (scapy roce.uts).
        let hex =
            "6020000000281b4000000000000000000000ffff0f00000200000000000000000000ffff0f000002";
        let b: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let g = GrhRepr::parse(&b).unwrap();
        assert_eq!((g.ip_ver, g.tclass, g.flow_label), (6, 2, 0));
        assert_eq!((g.pay_len, g.nxt_hdr, g.hop_lmt), (40, NEXT_HEADER_BTH, 64));
        assert_eq!(g.sgid_addr().to_string(), "::ffff:15.0.0.2");
    }

    proptest! {
        #[test]
        fn round_trip(ip_ver in 0u8..16, tclass in any::<u8>(), flow_label in 0u32..1 << 20,
                      pay_len in any::<u16>(), nxt_hdr in any::<u8>(), hop_lmt in any::<u8>(),
                      sgid in any::<[u8; 16]>(), dgid in any::<[u8; 16]>()) {
            let g = GrhRepr { ip_ver, tclass, flow_label, pay_len, nxt_hdr, hop_lmt, sgid, dgid };
            let mut b = [0u8; LEN];
            g.emit(&mut b).unwrap();
            prop_assert_eq!(GrhRepr::parse(&b).unwrap(), g);
        }
    }
}
