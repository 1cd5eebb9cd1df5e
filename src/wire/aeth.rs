//! ACK Extended Transport Header (4 bytes): syndrome(8) MSN(24).
//!
//! Syndrome bits 6-5 select ACK (00), RNR NAK (01), reserved (10) or NAK (11);
//! bits 4-0 are the credit count, RNR timer code or NAK code.

use super::{Truncated, be24, fixed, fixed_mut, to_be24};

pub const LEN: usize = 4;

/// A checked view of an AETH.
#[derive(Debug, Clone, Copy)]
pub struct Aeth<'a> {
    b: &'a [u8; LEN],
}

impl<'a> Aeth<'a> {
    pub fn new_checked(buf: &'a [u8]) -> Result<Self, Truncated> {
        Ok(Aeth {
            b: fixed("AETH", buf)?,
        })
    }
    pub fn syndrome(&self) -> u8 {
        self.b[0]
    }
    pub fn msn(&self) -> u32 {
        be24([self.b[1], self.b[2], self.b[3]])
    }
}

/// What the syndrome says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AckKind {
    /// Positive ACK with a credit count (31 = invalid/unlimited).
    Ack,
    /// Receiver not ready; value is the RNR timer code.
    RnrNak,
    Reserved,
    /// NAK; value is the NAK code.
    Nak,
}

impl AckKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AckKind::Ack => "ack",
            AckKind::RnrNak => "rnr_nak",
            AckKind::Reserved => "reserved",
            AckKind::Nak => "nak",
        }
    }
}

/// NAK codes (syndrome bits 4-0 when bits 6-5 are 11).
pub mod nak {
    pub const PSN_SEQUENCE_ERROR: u8 = 0;
    pub const INVALID_REQUEST: u8 = 1;
    pub const REMOTE_ACCESS_ERROR: u8 = 2;
    pub const REMOTE_OPERATIONAL_ERROR: u8 = 3;
    pub const INVALID_RD_REQUEST: u8 = 4;

    pub fn name(code: u8) -> &'static str {
        match code {
            PSN_SEQUENCE_ERROR => "PSN sequence error",
            INVALID_REQUEST => "invalid request",
            REMOTE_ACCESS_ERROR => "remote access error",
            REMOTE_OPERATIONAL_ERROR => "remote operational error",
            INVALID_RD_REQUEST => "invalid RD request",
            _ => "reserved NAK code",
        }
    }
}

/// RNR NAK timer codes in microseconds (IBA table 45).
pub fn rnr_timer_us(code: u8) -> f64 {
    const US: [f64; 32] = [
        655_360.0, 10.0, 20.0, 30.0, 40.0, 60.0, 80.0, 120.0, 160.0, 240.0, 320.0, 480.0, 640.0,
        960.0, 1_280.0, 1_920.0, 2_560.0, 3_840.0, 5_120.0, 7_680.0, 10_240.0, 15_360.0, 20_480.0,
        30_720.0, 40_960.0, 61_440.0, 81_920.0, 122_880.0, 163_840.0, 245_760.0, 327_680.0,
        491_520.0,
    ];
    US.get(usize::from(code & 0x1f)).copied().unwrap_or(0.0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AethRepr {
    pub syndrome: u8,
    pub msn: u32,
}

impl AethRepr {
    pub const LEN: usize = LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let v = Aeth::new_checked(buf)?;
        Ok(AethRepr {
            syndrome: v.syndrome(),
            msn: v.msn(),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<LEN>("AETH", buf)?;
        b[0] = self.syndrome;
        let [m0, m1, m2] = to_be24(self.msn);
        b[1] = m0;
        b[2] = m1;
        b[3] = m2;
        Ok(())
    }

    /// Builds the syndrome for a kind and its 5-bit value.
    pub fn syndrome_for(kind: AckKind, value: u8) -> u8 {
        let top = match kind {
            AckKind::Ack => 0b00,
            AckKind::RnrNak => 0b01,
            AckKind::Reserved => 0b10,
            AckKind::Nak => 0b11,
        };
        (top << 5) | (value & 0x1f)
    }

    pub fn kind(&self) -> AckKind {
        match (self.syndrome >> 5) & 0x3 {
            0 => AckKind::Ack,
            1 => AckKind::RnrNak,
            2 => AckKind::Reserved,
            _ => AckKind::Nak,
        }
    }

    /// Credit count, RNR timer code or NAK code.
    pub fn value(&self) -> u8 {
        self.syndrome & 0x1f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn decodes_syndromes() {
        let ack = AethRepr {
            syndrome: 0x1f,
            msn: 5,
        };
        assert_eq!((ack.kind(), ack.value()), (AckKind::Ack, 31));
        let rnr = AethRepr {
            syndrome: 0x2e,
            msn: 0,
        };
        assert_eq!((rnr.kind(), rnr.value()), (AckKind::RnrNak, 14));
        let nak = AethRepr {
            syndrome: 0x62,
            msn: 0,
        };
        assert_eq!(
            (nak.kind(), nak.value()),
            (AckKind::Nak, nak::REMOTE_ACCESS_ERROR)
        );
        assert_eq!(AethRepr::syndrome_for(AckKind::Nak, 0), 0x60);
        assert_eq!(rnr_timer_us(13), 960.0);
        assert_eq!(rnr_timer_us(14), 1_280.0);
        assert_eq!(rnr_timer_us(31), 491_520.0);
        assert_eq!(rnr_timer_us(0), 655_360.0);
    }

    proptest! {
        #[test]
        fn round_trip(syndrome in any::<u8>(), msn in 0u32..1 << 24) {
            let r = AethRepr { syndrome, msn };
            let mut b = [0u8; LEN];
            r.emit(&mut b).unwrap();
            prop_assert_eq!(AethRepr::parse(&b).unwrap(), r);
        }
    }
}
