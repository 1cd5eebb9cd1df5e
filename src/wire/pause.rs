//! MAC Control frames (EtherType 0x8808): 802.3x PAUSE (opcode 0x0001) and
//! 802.1Qbb PFC (opcode 0x0101). The body starts right after the EtherType.

use super::{Truncated, be16, fixed, fixed_mut, put, take};

pub const ETHERTYPE: u16 = 0x8808;
pub const OPCODE_PAUSE: u16 = 0x0001;
pub const OPCODE_PFC: u16 = 0x0101;
/// Destination MAC of MAC Control frames.
pub const DST_MAC: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
pub const PAUSE_LEN: usize = 4;
pub const PFC_LEN: usize = 20;

mod field {
    pub const OPCODE: usize = 0;
    pub const PAUSE_TIME: usize = 2;
    pub const CLASS_ENABLE: usize = 2;
    pub const PFC_TIMES: usize = 4;
}

/// Priority-based Flow Control: a class-enable vector and eight pause times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PfcRepr {
    pub class_enable: u16,
    /// Quanta per priority, priority 0 first.
    pub times: [u16; 8],
}

impl PfcRepr {
    pub fn enabled(&self, priority: u8) -> bool {
        priority < 8 && self.class_enable & (1u16 << priority) != 0
    }
}

/// A MAC Control frame this crate understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseRepr {
    /// 802.3x: one pause time for the whole link.
    Pause {
        time: u16,
    },
    Pfc(PfcRepr),
    /// Another MAC Control opcode (e.g. EPON MPCP); carried, not interpreted.
    Other {
        opcode: u16,
    },
}

impl PauseRepr {
    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let op = be16(*fixed::<2>("MAC Control", buf)?);
        match op {
            OPCODE_PAUSE => {
                let b = fixed::<PAUSE_LEN>("PAUSE", buf)?;
                Ok(PauseRepr::Pause {
                    time: be16(take(b, field::PAUSE_TIME)),
                })
            }
            OPCODE_PFC => {
                let b = fixed::<PFC_LEN>("PFC", buf)?;
                let mut times = [0u16; 8];
                for (i, t) in times.iter_mut().enumerate() {
                    let at = field::PFC_TIMES.saturating_add(i.saturating_mul(2));
                    *t = be16(take(b, at));
                }
                Ok(PauseRepr::Pfc(PfcRepr {
                    class_enable: be16(take(b, field::CLASS_ENABLE)),
                    times,
                }))
            }
            opcode => Ok(PauseRepr::Other { opcode }),
        }
    }

    pub fn opcode(&self) -> u16 {
        match self {
            PauseRepr::Pause { .. } => OPCODE_PAUSE,
            PauseRepr::Pfc(_) => OPCODE_PFC,
            PauseRepr::Other { opcode } => *opcode,
        }
    }

    pub fn buffer_len(&self) -> usize {
        match self {
            PauseRepr::Pause { .. } => PAUSE_LEN,
            PauseRepr::Pfc(_) => PFC_LEN,
            PauseRepr::Other { .. } => 2,
        }
    }

    /// Writes the MAC Control body (opcode onwards, without the padding to
    /// the 60-byte minimum frame).
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        match self {
            PauseRepr::Pause { time } => {
                let b = fixed_mut::<PAUSE_LEN>("PAUSE", buf)?;
                put(b, field::OPCODE, &OPCODE_PAUSE.to_be_bytes());
                put(b, field::PAUSE_TIME, &time.to_be_bytes());
            }
            PauseRepr::Pfc(p) => {
                let b = fixed_mut::<PFC_LEN>("PFC", buf)?;
                put(b, field::OPCODE, &OPCODE_PFC.to_be_bytes());
                put(b, field::CLASS_ENABLE, &p.class_enable.to_be_bytes());
                for (i, t) in p.times.iter().enumerate() {
                    let at = field::PFC_TIMES.saturating_add(i.saturating_mul(2));
                    put(b, at, &t.to_be_bytes());
                }
            }
            PauseRepr::Other { opcode } => {
                *fixed_mut::<2>("MAC Control", buf)? = opcode.to_be_bytes();
            }
        }
        Ok(())
    }
}

/// Nanoseconds of `quanta` pause quanta (512 bit times each) at `link_bps`,
/// rounded down.
pub fn quanta_to_ns(quanta: u16, link_bps: u64) -> u64 {
    if link_bps == 0 {
        return 0;
    }
    let bits = u128::from(quanta).saturating_mul(512);
    let ns = bits
        .saturating_mul(1_000_000_000)
        .checked_div(u128::from(link_bps))
        .unwrap_or(0);
    u64::try_from(ns).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_ax88772_pause() {
        // Frame 2 of hex__netdev-list__ax88772_8023x_pause.pcap, after the EtherType.
        let body = [0x00, 0x01, 0xff, 0xff, 0, 0];
        assert_eq!(
            PauseRepr::parse(&body).unwrap(),
            PauseRepr::Pause { time: 0xffff }
        );
    }

    #[test]
    fn quanta_at_link_speeds() {
        assert_eq!(quanta_to_ns(65535, 100_000_000_000), 335_539);
        assert_eq!(quanta_to_ns(1, 10_000_000_000), 51);
        assert_eq!(quanta_to_ns(100, 25_000_000_000), 2048);
    }

    proptest! {
        #[test]
        fn pfc_round_trip(class_enable in 0u16..256, times in any::<[u16; 8]>()) {
            let p = PauseRepr::Pfc(PfcRepr { class_enable, times });
            let mut b = [0u8; PFC_LEN];
            p.emit(&mut b).unwrap();
            prop_assert_eq!(PauseRepr::parse(&b).unwrap(), p);
        }

        #[test]
        fn pause_round_trip(time in any::<u16>()) {
            let p = PauseRepr::Pause { time };
            let mut b = [0u8; PAUSE_LEN];
            p.emit(&mut b).unwrap();
            prop_assert_eq!(PauseRepr::parse(&b).unwrap(), p);
        }
    }
}
