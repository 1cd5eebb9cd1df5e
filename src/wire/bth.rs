//! Base Transport Header (12 bytes).
//!
//! ```text
//! 0: opcode | 1: SE M PadCnt(2) TVer(4) | 2-3: P_Key
//! 4: FECN BECN resv6 | 5-7: DestQP | 8: AckReq resv7 | 9-11: PSN
//! ```

use super::{Opcode, Psn, Truncated, be16, be24, fixed, fixed_mut, to_be24};

pub const LEN: usize = 12;

mod field {
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const P_KEY: usize = 2;
    pub const FECN_BECN: usize = 4;
    pub const DEST_QP: usize = 5;
    pub const ACK_REQ: usize = 8;
    pub const PSN: usize = 9;
}

/// Offset of the FECN/BECN byte, which the ICRC treats as variant.
pub const VARIANT_BYTE: usize = field::FECN_BECN;

/// A checked view of a BTH.
#[derive(Debug, Clone, Copy)]
pub struct Bth<'a> {
    b: &'a [u8; LEN],
}

impl<'a> Bth<'a> {
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, Truncated> {
        Ok(Bth {
            b: fixed("BTH", buf)?,
        })
    }

    pub fn opcode(&self) -> Opcode {
        Opcode(self.b[field::OPCODE])
    }
    pub fn se(&self) -> bool {
        self.b[field::FLAGS] & 0x80 != 0
    }
    pub fn m(&self) -> bool {
        self.b[field::FLAGS] & 0x40 != 0
    }
    pub fn padcnt(&self) -> u8 {
        (self.b[field::FLAGS] >> 4) & 0x3
    }
    pub fn tver(&self) -> u8 {
        self.b[field::FLAGS] & 0x0f
    }
    pub fn p_key(&self) -> u16 {
        be16([self.b[field::P_KEY], self.b[3]])
    }
    pub fn fecn(&self) -> bool {
        self.b[field::FECN_BECN] & 0x80 != 0
    }
    pub fn becn(&self) -> bool {
        self.b[field::FECN_BECN] & 0x40 != 0
    }
    pub fn resv6(&self) -> u8 {
        self.b[field::FECN_BECN] & 0x3f
    }
    pub fn dest_qp(&self) -> u32 {
        be24([self.b[field::DEST_QP], self.b[6], self.b[7]])
    }
    pub fn ack_req(&self) -> bool {
        self.b[field::ACK_REQ] & 0x80 != 0
    }
    pub fn resv7(&self) -> u8 {
        self.b[field::ACK_REQ] & 0x7f
    }
    pub fn psn(&self) -> Psn {
        Psn::new(be24([self.b[field::PSN], self.b[10], self.b[11]]))
    }
}

/// The BTH as plain values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BthRepr {
    pub opcode: Opcode,
    pub se: bool,
    pub m: bool,
    pub padcnt: u8,
    pub tver: u8,
    pub p_key: u16,
    pub fecn: bool,
    pub becn: bool,
    pub dest_qp: u32,
    pub ack_req: bool,
    pub psn: Psn,
}

impl BthRepr {
    pub const LEN: usize = LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        Ok(Self::from_bytes(fixed("BTH", buf)?))
    }

    /// The header in `b`, read as three big-endian words (the analysis
    /// reads a BTH per frame).
    #[inline(always)]
    pub fn from_bytes(b: &[u8; LEN]) -> Self {
        let [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11] = *b;
        let w0 = u32::from_be_bytes([b0, b1, b2, b3]);
        let w1 = u32::from_be_bytes([b4, b5, b6, b7]);
        let w2 = u32::from_be_bytes([b8, b9, b10, b11]);
        BthRepr {
            opcode: Opcode((w0 >> 24) as u8),
            se: w0 & 0x0080_0000 != 0,
            m: w0 & 0x0040_0000 != 0,
            padcnt: ((w0 >> 20) & 0x3) as u8,
            tver: ((w0 >> 16) & 0x0f) as u8,
            p_key: w0 as u16,
            fecn: w1 & 0x8000_0000 != 0,
            becn: w1 & 0x4000_0000 != 0,
            dest_qp: w1 & 0x00ff_ffff,
            ack_req: w2 & 0x8000_0000 != 0,
            psn: Psn::new(w2),
        }
    }

    /// Writes the header into the first [`LEN`] bytes of `buf`. Values wider
    /// than their field are masked.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<LEN>("BTH", buf)?;
        b[field::OPCODE] = self.opcode.0;
        b[field::FLAGS] = (u8::from(self.se) << 7)
            | (u8::from(self.m) << 6)
            | ((self.padcnt & 0x3) << 4)
            | (self.tver & 0x0f);
        let [p0, p1] = self.p_key.to_be_bytes();
        b[field::P_KEY] = p0;
        b[3] = p1;
        b[field::FECN_BECN] = (u8::from(self.fecn) << 7) | (u8::from(self.becn) << 6);
        let [q0, q1, q2] = to_be24(self.dest_qp);
        b[field::DEST_QP] = q0;
        b[6] = q1;
        b[7] = q2;
        b[field::ACK_REQ] = u8::from(self.ack_req) << 7;
        let [s0, s1, s2] = to_be24(self.psn.get());
        b[field::PSN] = s0;
        b[10] = s1;
        b[11] = s2;
        Ok(())
    }

    pub fn buffer_len(&self) -> usize {
        LEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // BTH of the ConnectX-4 Lx CNP in ../shared/captures-external (scapy roce.uts).
    const CNP_BTH: [u8; 12] = [
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn parses_a_captured_cnp() {
        let r = BthRepr::parse(&CNP_BTH).unwrap();
        assert_eq!(r.opcode, Opcode::CNP);
        assert!(r.becn && !r.fecn);
        assert_eq!(r.p_key, 0xffff);
        assert_eq!(r.dest_qp, 0x118);
        assert_eq!(r.psn, Psn::new(0));
        let mut out = [0u8; 12];
        r.emit(&mut out).unwrap();
        assert_eq!(out, CNP_BTH);
    }

    #[test]
    fn short_buffer_is_an_error_not_a_panic() {
        let e = BthRepr::parse(&CNP_BTH[..7]).unwrap_err();
        assert_eq!((e.layer, e.needed, e.got), ("BTH", 12, 7));
        assert!(BthRepr::default().emit(&mut [0u8; 11]).is_err());
    }

    proptest! {
        #[test]
        fn emit_then_parse_round_trips(
            opcode in any::<u8>(), se in any::<bool>(), m in any::<bool>(), padcnt in 0u8..4,
            tver in 0u8..16, p_key in any::<u16>(), fecn in any::<bool>(), becn in any::<bool>(),
            dest_qp in 0u32..1 << 24, ack_req in any::<bool>(), psn in 0u32..1 << 24,
        ) {
            let r = BthRepr { opcode: Opcode(opcode), se, m, padcnt, tver, p_key, fecn, becn, dest_qp, ack_req, psn: Psn::new(psn) };
            let mut buf = [0u8; 12];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(BthRepr::parse(&buf).unwrap(), r);
        }

        #[test]
        fn words_read_like_the_view(b in any::<[u8; 12]>()) {
            let v = Bth::new_checked(&b).unwrap();
            let r = BthRepr::from_bytes(&b);
            prop_assert_eq!(
                (r.opcode, r.se, r.m, r.padcnt, r.tver, r.p_key),
                (v.opcode(), v.se(), v.m(), v.padcnt(), v.tver(), v.p_key())
            );
            prop_assert_eq!(
                (r.fecn, r.becn, r.dest_qp, r.ack_req, r.psn),
                (v.fecn(), v.becn(), v.dest_qp(), v.ack_req(), v.psn())
            );
        }
    }
}
