//! The packet sequence number: 24 bits that wrap (IBTA 9.7.1), compared
//! and counted modulo 2^24. As smoltcp's `TcpSeqNumber`: a PSN plus a
//! count is a PSN, and a PSN less another is a signed distance (`to -
//! from`), so the order of the operands reads as it is written.

use std::fmt;
use std::ops::{Add, Sub};

/// A 24-bit packet sequence number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Psn(u32);

impl Psn {
    /// How many PSNs there are.
    pub const MOD: u32 = 1 << 24;
    /// The bits of a PSN.
    pub const MASK: u32 = Self::MOD - 1;

    /// The PSN `v` is (its low 24 bits).
    #[inline]
    pub const fn new(v: u32) -> Psn {
        Psn(v & Self::MASK)
    }

    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// How far ahead of `earlier` this PSN is, modulo 2^24: in
    /// -2^23..2^23, negative when it is behind.
    #[inline]
    pub const fn since(self, earlier: Psn) -> i32 {
        let d = self.0.wrapping_sub(earlier.0) & Self::MASK;
        // Bit 23 is the sign of a 24-bit two's complement distance.
        ((d << 8) as i32) >> 8
    }

    /// How many PSNs from `earlier` forward to this one (0..2^24).
    #[inline]
    pub const fn forward_from(self, earlier: Psn) -> u32 {
        self.0.wrapping_sub(earlier.0) & Self::MASK
    }
}

/// `n` PSNs later.
impl Add<u32> for Psn {
    type Output = Psn;
    #[inline]
    fn add(self, n: u32) -> Psn {
        Psn::new(self.0.wrapping_add(n))
    }
}

/// `n` PSNs earlier.
impl Sub<u32> for Psn {
    type Output = Psn;
    #[inline]
    fn sub(self, n: u32) -> Psn {
        Psn::new(self.0.wrapping_sub(n))
    }
}

/// The signed distance from `rhs` to `self` ([`Psn::since`]).
impl Sub<Psn> for Psn {
    type Output = i32;
    #[inline]
    fn sub(self, rhs: Psn) -> i32 {
        self.since(rhs)
    }
}

/// The PSN a number is (its low 24 bits), as [`Psn::new`].
impl From<u32> for Psn {
    #[inline]
    fn from(v: u32) -> Psn {
        Psn::new(v)
    }
}

impl From<Psn> for u32 {
    #[inline]
    fn from(p: Psn) -> u32 {
        p.0
    }
}

impl From<Psn> for u64 {
    #[inline]
    fn from(p: Psn) -> u64 {
        u64::from(p.0)
    }
}

impl fmt::Display for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::LowerHex for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

impl serde::Serialize for Psn {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::Psn;
    use proptest::prelude::*;

    #[test]
    fn wraps_at_24_bits() {
        assert_eq!(Psn::new(0xff_ffff) + 1, Psn::new(0));
        assert_eq!(Psn::new(0) - 1, Psn::new(0xff_ffff));
        assert_eq!(Psn::new(0x1ff_ffff).get(), 0xff_ffff);
        assert_eq!(Psn::new(2) - Psn::new(0xff_fffe), 4);
        assert_eq!(Psn::new(0xff_fffe) - Psn::new(2), -4);
        assert_eq!(Psn::new(5).forward_from(Psn::new(7)), 0xff_fffe);
    }

    proptest! {
        /// Counting forward then measuring gives the count back, both ways
        /// round, across the wrap.
        #[test]
        fn distances_undo_counts(p in 0u32..1 << 24, n in 0u32..1 << 23) {
            let p = Psn::new(p);
            prop_assert_eq!((p + n) - p, n as i32);
            prop_assert_eq!(p - (p + n), -(n as i32));
            prop_assert_eq!((p + n).forward_from(p), n);
            prop_assert_eq!((p + n) - n, p);
        }
    }
}
