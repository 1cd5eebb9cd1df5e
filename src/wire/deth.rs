//! Datagram Extended Transport Header (8 bytes): Q_Key(32) resv(8) SrcQP(24).

use super::{Truncated, be24, be32, fixed, fixed_mut, put, take, to_be24};

pub const LEN: usize = 8;

mod field {
    pub const Q_KEY: usize = 0;
    pub const SRC_QP: usize = 5;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DethRepr {
    pub q_key: u32,
    pub src_qp: u32,
}

impl DethRepr {
    pub const LEN: usize = LEN;

    pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
        let b = fixed::<LEN>("DETH", buf)?;
        Ok(DethRepr {
            q_key: be32(take(b, field::Q_KEY)),
            src_qp: be24(take(b, field::SRC_QP)),
        })
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
        let b = fixed_mut::<LEN>("DETH", buf)?;
        put(b, field::Q_KEY, &self.q_key.to_be_bytes());
        b[4] = 0;
        put(b, field::SRC_QP, &to_be24(self.src_qp));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_gsi_qkey() {
        let r = DethRepr::parse(&[0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01]).unwrap();
        assert_eq!((r.q_key, r.src_qp), (0x8001_0000, 1));
    }

    proptest! {
        #[test]
        fn round_trip(q_key in any::<u32>(), src_qp in 0u32..1 << 24) {
            let r = DethRepr { q_key, src_qp };
            let mut b = [0u8; LEN];
            r.emit(&mut b).unwrap();
            prop_assert_eq!(DethRepr::parse(&b).unwrap(), r);
        }
    }
}
