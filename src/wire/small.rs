//! The 4-byte extended headers: ImmDt, IETH, RDETH and XRCETH.

use super::{Truncated, be24, be32, fixed, fixed_mut, to_be24};

pub const LEN: usize = 4;

/// Immediate data (4 bytes, opaque to the transport).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImmDtRepr {
    pub value: u32,
}

/// Invalidate ETH: the R_Key to invalidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IethRepr {
    pub r_key: u32,
}

/// Reliable Datagram ETH: resv(8) EE context(24).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RdethRepr {
    pub ee_context: u32,
}

/// XRC ETH: resv(8) XRC SRQ(24).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct XrcethRepr {
    pub xrc_srq: u32,
}

macro_rules! word_header {
    ($ty:ident, $name:literal, $field:ident, u32) => {
        impl $ty {
            pub const LEN: usize = LEN;
            pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
                let b = fixed::<LEN>($name, buf)?;
                Ok($ty { $field: be32(*b) })
            }
            pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
                *fixed_mut::<LEN>($name, buf)? = self.$field.to_be_bytes();
                Ok(())
            }
        }
    };
    ($ty:ident, $name:literal, $field:ident, u24) => {
        impl $ty {
            pub const LEN: usize = LEN;
            pub fn parse(buf: &[u8]) -> Result<Self, Truncated> {
                let b = fixed::<LEN>($name, buf)?;
                Ok($ty {
                    $field: be24([b[1], b[2], b[3]]),
                })
            }
            pub fn emit(&self, buf: &mut [u8]) -> Result<(), Truncated> {
                let [x, y, z] = to_be24(self.$field);
                *fixed_mut::<LEN>($name, buf)? = [0, x, y, z];
                Ok(())
            }
        }
    };
}

word_header!(ImmDtRepr, "ImmDt", value, u32);
word_header!(IethRepr, "IETH", r_key, u32);
word_header!(RdethRepr, "RDETH", ee_context, u24);
word_header!(XrcethRepr, "XRCETH", xrc_srq, u24);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips(v in any::<u32>(), q in 0u32..1 << 24) {
            let mut b = [0u8; 4];
            ImmDtRepr { value: v }.emit(&mut b).unwrap();
            prop_assert_eq!(ImmDtRepr::parse(&b).unwrap().value, v);
            IethRepr { r_key: v }.emit(&mut b).unwrap();
            prop_assert_eq!(IethRepr::parse(&b).unwrap().r_key, v);
            RdethRepr { ee_context: q }.emit(&mut b).unwrap();
            prop_assert_eq!(RdethRepr::parse(&b).unwrap().ee_context, q);
            XrcethRepr { xrc_srq: q }.emit(&mut b).unwrap();
            prop_assert_eq!(XrcethRepr::parse(&b).unwrap().xrc_srq, q);
        }
    }

    #[test]
    fn short_input() {
        let e = ImmDtRepr::parse(&[1, 2]).unwrap_err();
        assert_eq!(e.layer, "ImmDt");
        assert_eq!(XrcethRepr::parse(&[0, 0, 0, 9]).unwrap().xrc_srq, 9);
    }
}
