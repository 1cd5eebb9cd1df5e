//! RDMA Extended Transport Header (16 bytes): VA(64) R_Key(32) DMA length(32).

use super::{Truncated, be32, be64, fixed, fixed_mut, put, take};

pub const LEN: usize = 16;

mod field {
    pub const VA: usize = 0;
    pub const R_KEY: usize = 8;
    pub const DMA_LEN: usize = 12;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RethRepr {
    pub va: u64,
    pub r_key: u32,
    pub dma_len: u32,
}

impl RethRepr {
    pub const LEN: usize = LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<LEN>("RETH", buf)?;
        Ok(RethRepr {
            va: be64(take(b, field::VA)),
            r_key: be32(take(b, field::R_KEY)),
            dma_len: be32(take(b, field::DMA_LEN)),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<LEN>("RETH", buf)?;
        put(b, field::VA, &self.va.to_be_bytes());
        put(b, field::R_KEY, &self.r_key.to_be_bytes());
        put(b, field::DMA_LEN, &self.dma_len.to_be_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_rxe_read_request_reth() {
        // RETH of the PcapPlusPlus rxe READ request (../shared/captures-external).
        let b = [
            0x00, 0x00, 0x7f, 0xee, 0x26, 0x0f, 0xb0, 0x00, 0x00, 0x00, 0x02, 0xb8, 0x00, 0x01,
            0x00, 0x00,
        ];
        let r = RethRepr::parse(&b).unwrap();
        assert_eq!(r.va, 0x7fee260fb000);
        assert_eq!(r.r_key, 0x2b8);
        assert_eq!(r.dma_len, 65536);
    }

    proptest! {
        #[test]
        fn round_trip(va in any::<u64>(), r_key in any::<u32>(), dma_len in any::<u32>()) {
            let r = RethRepr { va, r_key, dma_len };
            let mut b = [0u8; LEN];
            r.emit(&mut b).unwrap();
            prop_assert_eq!(RethRepr::parse(&b).unwrap(), r);
        }
    }
}
