//! CRC-32 (IEEE 802.3, the polynomial of the ICRC) by carry-less
//! multiplication, for a message given as a short head and the rest.
//!
//! The ICRC covers a few masked header bytes (a copy on the stack) followed
//! by the payload (in the frame). Folding both through one state, four
//! 128-bit lanes at a time, costs one reduction per packet instead of two
//! calls with their own set-up, tails and reductions; ICRC checking is the
//! largest single cost of an analysis.
//!
//! The method is the one of Intel's "Fast CRC Computation for Generic
//! Polynomials Using PCLMULQDQ Instruction" (2009) for bit-reflected CRCs:
//! the constants are derived below from the polynomial, at compile time.
//!
//! # Safety argument
//! roce-dissect is `#![forbid(unsafe_code)]`; the SIMD intrinsics live here.
//! They run only after the CPU is found to have PCLMULQDQ, SSSE3 and SSE4.1,
//! and every 16-byte load is at an offset checked against the slice length
//! (`load` asserts it in debug builds); the tests compare the result with
//! `crc32fast` for every length up to 300 bytes and random messages.

/// The CRC-32 polynomial without its x^32 term, most significant bit first.
const POLY: u64 = 0x04C1_1DB7;

/// x^n mod P, most significant bit first.
const fn xpow_mod(n: u32) -> u64 {
    let mut r: u64 = 1;
    let mut i = 0;
    while i < n {
        r <<= 1;
        if r & (1 << 32) != 0 {
            r ^= (1 << 32) | POLY;
        }
        i += 1;
    }
    r
}

/// A 32-bit remainder bit-reflected and shifted into a 33-bit constant.
const fn reflect33(v: u64) -> u64 {
    ((v as u32).reverse_bits() as u64) << 1
}

/// floor(x^64 / P), the Barrett constant, most significant bit first.
const fn barrett_mu() -> u64 {
    let p: u64 = (1 << 32) | POLY;
    // Long division of x^64 (held as 65 bits split across the loop).
    let mut q: u64 = 0;
    let mut rem: u128 = 1 << 64;
    let mut shift = 32i32;
    while shift >= 0 {
        if rem & (1u128 << (32 + shift)) != 0 {
            rem ^= (p as u128) << shift;
            q |= 1 << shift;
        }
        shift -= 1;
    }
    q
}

/// Folding constants for a distance of `bits`: (low, high) lane multipliers.
const fn fold_by(bits: u32) -> (u64, u64) {
    (
        reflect33(xpow_mod(bits + 32)),
        reflect33(xpow_mod(bits - 32)),
    )
}

const FOLD_128: (u64, u64) = fold_by(128);
const FOLD_256: (u64, u64) = fold_by(256);
const FOLD_384: (u64, u64) = fold_by(384);
const FOLD_512: (u64, u64) = fold_by(512);
/// 64 bits to 32: x^64 mod P.
const FOLD_64: u64 = reflect33(xpow_mod(64));
/// Barrett reduction: the reflected quotient x^64 / P and P itself.
const MU: u64 = (barrett_mu() as u32).reverse_bits() as u64 * 2 + 1;
const P_REFLECTED: u64 = ((POLY as u32).reverse_bits() as u64) << 1 | 1;

/// The CRC-32 of `head` followed by `rest` (the value `crc32fast::hash`
/// gives for the two joined). `head.len()` must be a non-zero multiple of 16.
pub fn crc32_split(head: &[u8], rest: &[u8]) -> u32 {
    debug_assert!(!head.is_empty() && head.len().is_multiple_of(16));
    #[cfg(target_arch = "x86_64")]
    if clmul::available() && !head.is_empty() && head.len().is_multiple_of(16) {
        // SAFETY: the CPU has the features `split` is compiled for, and the
        // head is whole 16-byte blocks.
        return unsafe { clmul::split(head, rest) };
    }
    let mut h = crc32fast::Hasher::new();
    h.update(head);
    h.update(rest);
    h.finalize()
}

#[cfg(target_arch = "x86_64")]
mod clmul {
    use std::arch::x86_64::*;
    use std::sync::LazyLock;

    use super::{FOLD_64, FOLD_128, FOLD_256, FOLD_384, FOLD_512, MU, P_REFLECTED};

    static AVAILABLE: LazyLock<bool> = LazyLock::new(|| {
        is_x86_feature_detected!("pclmulqdq")
            && is_x86_feature_detected!("ssse3")
            && is_x86_feature_detected!("sse4.1")
    });

    pub fn available() -> bool {
        *AVAILABLE
    }

    /// Shuffle indices: from offset `r`, the bytes of a register moved up by
    /// `16 - r` places; from offset `16 + r`, moved down by `r` places
    /// (0x80 clears a byte).
    static SHIFTS: [u8; 48] = {
        let mut t = [0x80u8; 48];
        let mut i = 0;
        while i < 16 {
            t[16 + i] = i as u8;
            i += 1;
        }
        t
    };
    /// From offset `r`: ones in the top `r` bytes.
    static TOP: [u8; 32] = {
        let mut t = [0u8; 32];
        let mut i = 16;
        while i < 32 {
            t[i] = 0xff;
            i += 1;
        }
        t
    };

    const fn pair(k: (u64, u64)) -> (i64, i64) {
        (k.1 as i64, k.0 as i64)
    }

    /// `x` carried `bits` further along the message (the constants' distance).
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse2")]
    fn fold(x: __m128i, k: __m128i) -> __m128i {
        _mm_xor_si128(
            _mm_clmulepi64_si128(x, k, 0x00),
            _mm_clmulepi64_si128(x, k, 0x11),
        )
    }

    /// The 16 bytes of `s` at `at`; the caller guarantees `at + 16 <= len`.
    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn load(s: &[u8], at: usize) -> __m128i {
        debug_assert!(at + 16 <= s.len());
        // SAFETY: in bounds by the caller's guarantee; unaligned load.
        unsafe { _mm_loadu_si128(s.as_ptr().add(at).cast()) }
    }

    /// See [`super::crc32_split`]; `head.len()` is a non-zero multiple of 16.
    #[target_feature(enable = "pclmulqdq,sse2,ssse3,sse4.1")]
    pub unsafe fn split(head: &[u8], rest: &[u8]) -> u32 {
        let (h, l) = pair(FOLD_128);
        let k128 = _mm_set_epi64x(h, l);
        let (h, l) = pair(FOLD_512);
        let k512 = _mm_set_epi64x(h, l);
        // SAFETY (loads below): every offset is checked against the length.
        unsafe {
            // The standard initial value, all ones, enters the first block.
            let mut x = _mm_xor_si128(load(head, 0), _mm_cvtsi32_si128(-1));
            let mut at = 16;
            while at + 16 <= head.len() {
                x = _mm_xor_si128(fold(x, k128), load(head, at));
                at += 16;
            }
            let n = rest.len();
            let mut p = 0;
            if n >= 64 {
                let mut l0 = _mm_xor_si128(fold(x, k128), load(rest, 0));
                let mut l1 = load(rest, 16);
                let mut l2 = load(rest, 32);
                let mut l3 = load(rest, 48);
                p = 64;
                while p + 64 <= n {
                    l0 = _mm_xor_si128(fold(l0, k512), load(rest, p));
                    l1 = _mm_xor_si128(fold(l1, k512), load(rest, p + 16));
                    l2 = _mm_xor_si128(fold(l2, k512), load(rest, p + 32));
                    l3 = _mm_xor_si128(fold(l3, k512), load(rest, p + 48));
                    p += 64;
                }
                // The lanes fold onto the last one side by side, each by
                // its own distance, rather than one after another (a
                // clmul's latency instead of three: about 5 % of the time
                // of a 1 KiB packet).
                let (h, l) = pair(FOLD_384);
                let k384 = _mm_set_epi64x(h, l);
                let (h, l) = pair(FOLD_256);
                let k256 = _mm_set_epi64x(h, l);
                x = _mm_xor_si128(
                    _mm_xor_si128(fold(l0, k384), fold(l1, k256)),
                    _mm_xor_si128(fold(l2, k128), l3),
                );
            }
            while p + 16 <= n {
                x = _mm_xor_si128(fold(x, k128), load(rest, p));
                p += 16;
            }
            let r = n - p;
            if r > 0 && n >= 16 {
                // The last r bytes: the message ends `x ‖ tail`, the same as
                // (x's first r bytes, zero-padded in front) folded onto (x's
                // other bytes ‖ tail).
                let last = load(rest, n - 16);
                let up = _mm_loadu_si128(SHIFTS.as_ptr().add(r).cast());
                let down = _mm_loadu_si128(SHIFTS.as_ptr().add(16 + r).cast());
                let top = _mm_loadu_si128(TOP.as_ptr().add(r).cast());
                let high = _mm_shuffle_epi8(x, up);
                let low = _mm_or_si128(_mm_shuffle_epi8(x, down), _mm_and_si128(last, top));
                x = _mm_xor_si128(fold(high, k128), low);
                p = n;
            }
            let crc = !reduce(x, k128);
            match rest.get(p..) {
                Some(tail) if !tail.is_empty() => {
                    let mut h = crc32fast::Hasher::new_with_initial(crc);
                    h.update(tail);
                    h.finalize()
                }
                _ => crc,
            }
        }
    }

    /// The 32-bit remainder of a folded 128-bit state (before the final
    /// inversion).
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse2,sse4.1")]
    fn reduce(x: __m128i, k128: __m128i) -> u32 {
        let low32 = _mm_set_epi32(0, 0, 0, -1);
        // 128 -> 96 bits.
        let x = _mm_xor_si128(_mm_clmulepi64_si128(x, k128, 0x10), _mm_srli_si128(x, 8));
        // 96 -> 64 bits.
        let x = _mm_xor_si128(
            _mm_clmulepi64_si128(
                _mm_and_si128(x, low32),
                _mm_set_epi64x(0, FOLD_64 as i64),
                0x00,
            ),
            _mm_srli_si128(x, 4),
        );
        // Barrett: q = floor(x * mu), remainder = x - q * P.
        let pu = _mm_set_epi64x(MU as i64, P_REFLECTED as i64);
        let t1 = _mm_clmulepi64_si128(_mm_and_si128(x, low32), pu, 0x10);
        let t2 = _mm_clmulepi64_si128(_mm_and_si128(t1, low32), pu, 0x00);
        _mm_extract_epi32(_mm_xor_si128(x, t2), 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn constants_are_the_published_ones() {
        // Intel's white paper, reflected CRC-32 (also in the Linux kernel).
        assert_eq!(FOLD_512, (0x1_5444_2bd4, 0x1_c6e4_1596));
        assert_eq!(FOLD_128, (0x1_7519_97d0, 0x0_ccaa_009e));
        assert_eq!(FOLD_64, 0x1_63cd_6124);
        assert_eq!(MU, 0x1_f701_1641);
        assert_eq!(P_REFLECTED, 0x1_db71_0641);
    }

    #[test]
    fn check_value() {
        // The CRC-32 check value: "123456789" -> 0xcbf43926, padded to a
        // whole head block by moving bytes from the rest.
        let msg = b"123456789abcdefghijklmnopqrstuvwxyz";
        assert_eq!(crc32fast::hash(b"123456789"), 0xcbf4_3926);
        for split in [16, 32] {
            assert_eq!(
                crc32_split(&msg[..split], &msg[split..]),
                crc32fast::hash(msg)
            );
        }
    }

    #[test]
    fn every_length_up_to_300() {
        let data: Vec<u8> = (0..450u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for head in (16..=144).step_by(16) {
            for n in 0..300 {
                let all = &data[..head + n];
                assert_eq!(
                    crc32_split(&all[..head], &all[head..]),
                    crc32fast::hash(all),
                    "head {head} rest {n}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn equals_crc32fast(blocks in 1usize..10, data in proptest::collection::vec(any::<u8>(), 96..3000)) {
            let head = (blocks * 16).min(data.len() / 16 * 16);
            prop_assert_eq!(
                crc32_split(&data[..head], &data[head..]),
                crc32fast::hash(&data)
            );
        }
    }
}
