//! Atomic Extended Transport Header (28 bytes) and Atomic ACK ETH (8 bytes).

use super::{Truncated, be32, be64, fixed, fixed_mut, put, take};

pub const ATOMIC_LEN: usize = 28;
pub const ATOMIC_ACK_LEN: usize = 8;

mod field {
    pub const VA: usize = 0;
    pub const R_KEY: usize = 8;
    pub const SWAP_ADD: usize = 12;
    pub const COMPARE: usize = 20;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AtomicEthRepr {
    pub va: u64,
    pub r_key: u32,
    /// Swap (CmpSwap) or add (FetchAdd) data.
    pub swap_add: u64,
    pub compare: u64,
}

impl AtomicEthRepr {
    pub const LEN: usize = ATOMIC_LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<ATOMIC_LEN>("AtomicETH", buf)?;
        Ok(AtomicEthRepr {
            va: be64(take(b, field::VA)),
            r_key: be32(take(b, field::R_KEY)),
            swap_add: be64(take(b, field::SWAP_ADD)),
            compare: be64(take(b, field::COMPARE)),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<ATOMIC_LEN>("AtomicETH", buf)?;
        put(b, field::VA, &self.va.to_be_bytes());
        put(b, field::R_KEY, &self.r_key.to_be_bytes());
        put(b, field::SWAP_ADD, &self.swap_add.to_be_bytes());
        put(b, field::COMPARE, &self.compare.to_be_bytes());
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AtomicAckEthRepr {
    pub orig_rem_dt: u64,
}

impl AtomicAckEthRepr {
    pub const LEN: usize = ATOMIC_ACK_LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<ATOMIC_ACK_LEN>("AtomicAckETH", buf)?;
        Ok(AtomicAckEthRepr {
            orig_rem_dt: be64(*b),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<ATOMIC_ACK_LEN>("AtomicAckETH", buf)?;
        *b = self.orig_rem_dt.to_be_bytes();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn atomic_round_trip(va in any::<u64>(), r_key in any::<u32>(), swap_add in any::<u64>(), compare in any::<u64>()) {
            let r = AtomicEthRepr { va, r_key, swap_add, compare };
            let mut b = [0u8; ATOMIC_LEN];
            r.emit(&mut b).unwrap();
            prop_assert_eq!(AtomicEthRepr::parse(&b).unwrap(), r);
        }

        #[test]
        fn atomic_ack_round_trip(orig_rem_dt in any::<u64>()) {
            let r = AtomicAckEthRepr { orig_rem_dt };
            let mut b = [0u8; ATOMIC_ACK_LEN];
            r.emit(&mut b).unwrap();
            prop_assert_eq!(AtomicAckEthRepr::parse(&b).unwrap(), r);
        }
    }

    #[test]
    fn field_offsets() {
        let mut b = [0u8; ATOMIC_LEN];
        b[8..12].copy_from_slice(&[0, 0, 0x12, 0x34]);
        b[27] = 7;
        let r = AtomicEthRepr::parse(&b).unwrap();
        assert_eq!((r.r_key, r.compare), (0x1234, 7));
        assert!(AtomicEthRepr::parse(&b[..27]).is_err());
    }
}
