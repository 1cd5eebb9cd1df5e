//! CRC-32 (IEEE 802.3, the polynomial of the ICRC) by carry-less
//! multiplication, for a message given as a short head and the rest
//! ([`crc32_split`]), or read in place with its first 64 bytes masked
//! ([`crc32_or_masked`]).
//!
//! The ICRC covers a few masked header bytes followed by the payload: a
//! patched copy of the headers on the stack and the payload in the frame,
//! or, where the frame has the bytes, all of it in the frame with the
//! variant fields set to ones as the first 64 bytes are loaded. Folding
//! headers and payload through one state, four 128-bit lanes at a time,
//! costs one reduction per packet instead of two calls with their own
//! set-up, tails and reductions; ICRC checking is one of the largest costs
//! of an analysis.
//!
//! The method is the one of Intel's "Fast CRC Computation for Generic
//! Polynomials Using PCLMULQDQ Instruction" (2009) for bit-reflected CRCs:
//! the constants are derived below from the polynomial, at compile time.
//!
//! The fold is compiled five times, for SSE, AVX (three-operand forms,
//! loads folded into the XORs), AVX2 with VPCLMULQDQ but no AVX-512 (AMD
//! Zen 3: the four lanes in two 256-bit registers, two such pairs side by
//! side), AVX-512VL (each fold's two products and the next block XORed in
//! one instruction) and VPCLMULQDQ with AVX-512 (the four lanes in one
//! 512-bit register, two such registers side by side); the best the CPU
//! has runs. On a Zen 3 the 256-bit fold takes a 1118-byte message read in
//! place in 75 ns, where the 128-bit one, through a stack copy of its
//! masked head, took 137 ns. A packet's header blocks enter the four lanes directly,
//! each multiplied by its own distance, so the head costs one multiply's
//! latency rather than one per block (a 1 KiB packet: 65 ns instead of 71
//! on a Xeon without VPCLMULQDQ). On an AMD EPYC (Zen 4), where a 128-bit
//! PCLMULQDQ is slow, the 512-bit fold takes a 1 KiB packet in 32 ns
//! instead of 93-119 ns. There the head's blocks also enter the lanes, and
//! the lanes fold onto the packet's last whole block, in one 512-bit
//! multiply each rather than four 128-bit ones: a 300-byte packet 24 %
//! faster, a 1 KiB one 11 % (best of 8 runs, old and new alternating).
//!
//! # Safety argument
//! roce-dissect is `#![forbid(unsafe_code)]`; the SIMD intrinsics live here.
//! They run only after the CPU is found to have PCLMULQDQ, SSSE3 and SSE4.1
//! (and AVX, AVX2, AVX-512F, AVX-512VL and VPCLMULQDQ for the levels that
//! use them), and every 16- or 64-byte load is at an offset checked against
//! the slice length (the loads assert it in debug builds); the tests
//! compare the result of every level the CPU has with `crc32fast` for
//! every length up to 600 bytes after heads of 1 to 9 blocks, and for
//! random messages.

/// The CRC-32 polynomial without its x^32 term, most significant bit first.
const POLY: u64 = 0x04C1_1DB7;

/// x^n mod P, most significant bit first (`poly`: P without its x^32 term).
const fn xpow_mod(poly: u64, n: u32) -> u64 {
    let mut r: u64 = 1;
    let mut i = 0;
    while i < n {
        r <<= 1;
        if r & (1 << 32) != 0 {
            r ^= (1 << 32) | poly;
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
const fn barrett_mu(poly: u64) -> u64 {
    let p: u64 = (1 << 32) | poly;
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
const fn fold_by(poly: u64, bits: u32) -> (u64, u64) {
    (
        reflect33(xpow_mod(poly, bits + 32)),
        reflect33(xpow_mod(poly, bits - 32)),
    )
}

/// The constants of the degree-32 polynomial `P` (without its x^32 term,
/// most significant bit first), derived at compile time.
struct K<const P: u64>;

impl<const P: u64> K<P> {
    const FOLD_128: (u64, u64) = fold_by(P, 128);
    const FOLD_512: (u64, u64) = fold_by(P, 512);
    const FOLD_1024: (u64, u64) = fold_by(P, 1024);
    /// Folding constants for 1 to 6 blocks of 128 bits (entry 0 unused).
    const FOLD_BY_BLOCKS: [(u64, u64); 7] = [
        (0, 0),
        fold_by(P, 128),
        fold_by(P, 256),
        fold_by(P, 384),
        fold_by(P, 512),
        fold_by(P, 640),
        fold_by(P, 768),
    ];
    /// 64 bits to 32: x^64 mod P.
    const FOLD_64: u64 = reflect33(xpow_mod(P, 64));
    /// Barrett reduction: the reflected quotient x^64 / P and P itself.
    const MU: u64 = (barrett_mu(P) as u32).reverse_bits() as u64 * 2 + 1;
    const P_REFLECTED: u64 = ((P as u32).reverse_bits() as u64) << 1 | 1;
    /// The constants that fold the four lanes onto the last of `m` whole
    /// blocks after them (lane `t` by `3 - t + m` blocks), for `m` of 0 to
    /// 3, as 512-bit registers (low quadword first; lane 3 unused for 0).
    const TAIL_FOLDS: [[u64; 8]; 4] = {
        let mut t = [[0u64; 8]; 4];
        let mut m = 0;
        while m < 4 {
            let mut lane = 0;
            while lane < 4 {
                let blocks = 3 - lane + m;
                if blocks > 0 {
                    t[m][2 * lane] = Self::FOLD_BY_BLOCKS[blocks].0;
                    t[m][2 * lane + 1] = Self::FOLD_BY_BLOCKS[blocks].1;
                }
                lane += 1;
            }
            m += 1;
        }
        t
    };
}

#[cfg(test)]
const FOLD_128: (u64, u64) = K::<POLY>::FOLD_128;
#[cfg(test)]
const FOLD_512: (u64, u64) = K::<POLY>::FOLD_512;
#[cfg(test)]
const FOLD_64: u64 = K::<POLY>::FOLD_64;
#[cfg(test)]
const MU: u64 = K::<POLY>::MU;
#[cfg(test)]
const P_REFLECTED: u64 = K::<POLY>::P_REFLECTED;

/// The CRC-32 of `head` followed by `rest` (the value `crc32fast::hash`
/// gives for the two joined). `head.len()` must be a non-zero multiple of 16.
pub fn crc32_split(head: &[u8], rest: &[u8]) -> u32 {
    debug_assert!(!head.is_empty() && head.len().is_multiple_of(16));
    #[cfg(target_arch = "x86_64")]
    {
        let level = clmul::level();
        if level != clmul::Level::None && !head.is_empty() && head.len().is_multiple_of(16) {
            // SAFETY: the CPU has the features of `level`, and the head is
            // whole 16-byte blocks.
            return unsafe { clmul::split::<POLY>(level, head, rest) };
        }
    }
    let mut h = crc32fast::Hasher::new();
    h.update(head);
    h.update(rest);
    h.finalize()
}

/// A reflected CRC-16 whose initial value and final XOR are all ones (the
/// InfiniBand VCRC's kind) by the same fold. `POLY_X16` is the CRC-16's
/// polynomial without its x^16 term, shifted up 16 bits: that is the
/// polynomial P(x)·x^16 of degree 32, whose remainders are the CRC-16's
/// times x^16, so that reflected, the CRC-16 is the low half of the CRC-32
/// (with its register started at ones in those 16 bits only). `None` with
/// no carry-less multiply, or for fewer than 32 bytes: the caller's table
/// does those.
pub fn crc16_ones<const POLY_X16: u64>(msg: &[u8]) -> Option<u16> {
    #[cfg(target_arch = "x86_64")]
    {
        let level = clmul::level();
        if level != clmul::Level::None {
            return crc16_at::<POLY_X16>(level, msg);
        }
    }
    let _ = msg;
    None
}

/// [`crc16_ones`] at `level`, which the CPU has (not `Level::None`).
#[cfg(target_arch = "x86_64")]
fn crc16_at<const POLY_X16: u64>(level: clmul::Level, msg: &[u8]) -> Option<u16> {
    const { assert!(POLY_X16 & 0xffff == 0 && POLY_X16 >> 32 == 0) };
    let (first, rest) = msg.split_first_chunk::<16>()?;
    if rest.len() < 16 {
        return None;
    }
    // The fold starts with its 32-bit register at ones; the CRC-16 with
    // ones in the low 16 only (reflected: the first two bytes). The other
    // two bytes' ones are taken back out of the message.
    let mut head = *first;
    head[2] ^= 0xff;
    head[3] ^= 0xff;
    // SAFETY: the CPU has the features of `level`; the head is one whole
    // block and the rest at least 16 bytes (so the fold's tail never
    // falls back to the CRC-32 table).
    let crc = unsafe { clmul::split::<POLY_X16>(level, &head, rest) };
    Some(crc as u16)
}

/// The CRC-32 of `msg` with its first 64 bytes (or all of it, if shorter)
/// ORed with `mask`: the ICRC's header with its variant fields set to ones,
/// read in place from the frame rather than copied out and patched byte by
/// byte first (byte stores that the fold's wide loads then waited for).
pub fn crc32_or_masked(msg: &[u8], mask: &[u8; 64]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if msg.len() >= 64 {
        // SAFETY: the CPU has the level's features, and `msg` holds the
        // 64 bytes the first loads read.
        match clmul::level() {
            clmul::Level::Vpclmul => return unsafe { clmul::or_masked_vpclmul(msg, mask) },
            clmul::Level::Vpclmul256 => return unsafe { clmul::or_masked_vpclmul256(msg, mask) },
            _ => {}
        }
    }
    or_masked_copy(msg, mask)
}

/// [`crc32_or_masked`] through a masked copy of the first 64 bytes.
fn or_masked_copy(msg: &[u8], mask: &[u8; 64]) -> u32 {
    let mut head = [0u8; 64];
    for (h, (m, k)) in head.iter_mut().zip(msg.iter().zip(mask)) {
        *h = m | k;
    }
    match msg.len() {
        64.. => crc32_split(&head, msg.get(64..).unwrap_or_default()),
        // At least 16 bytes after the whole blocks of the head, for the
        // fold's tail step.
        n @ 32.. => {
            let at = (n - 16) & !15;
            crc32_split(&head[..at], &head[at..n])
        }
        n => crc32fast::hash(&head[..n]),
    }
}

#[cfg(target_arch = "x86_64")]
mod clmul {
    use std::arch::x86_64::*;
    use std::sync::LazyLock;

    use super::{K, POLY};

    /// The instructions the fold is compiled for.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Level {
        /// No PCLMULQDQ (or SSSE3, SSE4.1): `crc32fast` does the work.
        None,
        /// SSE encodings (two operands: copies before each multiply).
        Sse,
        /// AVX encodings (three operands, loads folded into the XORs).
        Avx,
        /// AVX2 and VPCLMULQDQ without AVX-512 (AMD Zen 3): the four
        /// lanes in two 256-bit registers, two such pairs side by side.
        Vpclmul256,
        /// AVX-512VL as well: three-way XORs in one instruction.
        Avx512,
        /// VPCLMULQDQ on 512-bit registers as well: the four lanes fold in
        /// one register, two registers side by side.
        Vpclmul,
    }

    static LEVEL: LazyLock<Level> = LazyLock::new(|| {
        if !(is_x86_feature_detected!("pclmulqdq")
            && is_x86_feature_detected!("ssse3")
            && is_x86_feature_detected!("sse4.1"))
        {
            Level::None
        } else if !is_x86_feature_detected!("avx") {
            Level::Sse
        } else if !(is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vl")) {
            if is_x86_feature_detected!("vpclmulqdq") && is_x86_feature_detected!("avx2") {
                Level::Vpclmul256
            } else {
                Level::Avx
            }
        } else if is_x86_feature_detected!("vpclmulqdq") && is_x86_feature_detected!("avx2") {
            Level::Vpclmul
        } else {
            Level::Avx512
        }
    });

    pub fn level() -> Level {
        *LEVEL
    }

    /// Whether this CPU has the instructions of `level` (the levels are not
    /// one ladder: an AVX-512 CPU may lack VPCLMULQDQ, and a VPCLMULQDQ
    /// one AVX-512).
    #[cfg(test)]
    pub fn runs(level: Level) -> bool {
        let clmul = is_x86_feature_detected!("pclmulqdq")
            && is_x86_feature_detected!("ssse3")
            && is_x86_feature_detected!("sse4.1");
        let avx = clmul && is_x86_feature_detected!("avx");
        let avx512 =
            avx && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vl");
        let vpclmul =
            avx && is_x86_feature_detected!("vpclmulqdq") && is_x86_feature_detected!("avx2");
        match level {
            Level::None => true,
            Level::Sse => clmul,
            Level::Avx => avx,
            Level::Vpclmul256 => vpclmul,
            Level::Avx512 => avx512,
            Level::Vpclmul => avx512 && vpclmul,
        }
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

    /// See [`super::crc32_split`]; `head.len()` is a non-zero multiple of
    /// 16 and the CPU has the features of `level` (not `Level::None`).
    pub unsafe fn split<const P: u64>(level: Level, head: &[u8], rest: &[u8]) -> u32 {
        // SAFETY: the caller's guarantees, passed on.
        unsafe {
            match level {
                Level::Vpclmul => split_vpclmul::<P>(head, rest),
                Level::Avx512 => split_avx512::<P>(head, rest),
                Level::Vpclmul256 => split_vpclmul256::<P>(head, rest),
                Level::Avx => split_avx::<P>(head, rest),
                _ => split_sse::<P>(head, rest),
            }
        }
    }

    #[target_feature(enable = "pclmulqdq,sse2,ssse3,sse4.1")]
    unsafe fn split_sse<const P: u64>(head: &[u8], rest: &[u8]) -> u32 {
        // SAFETY: the caller's guarantees, passed on.
        unsafe { body::<false, 128, P>(head, rest) }
    }

    #[target_feature(enable = "pclmulqdq,avx,ssse3,sse4.1")]
    unsafe fn split_avx<const P: u64>(head: &[u8], rest: &[u8]) -> u32 {
        // SAFETY: the caller's guarantees, passed on.
        unsafe { body::<false, 128, P>(head, rest) }
    }

    #[target_feature(enable = "pclmulqdq,vpclmulqdq,avx,avx2,ssse3,sse4.1")]
    unsafe fn split_vpclmul256<const P: u64>(head: &[u8], rest: &[u8]) -> u32 {
        // SAFETY: the caller's guarantees, passed on.
        unsafe { body::<false, 256, P>(head, rest) }
    }

    #[target_feature(enable = "pclmulqdq,avx,avx512f,avx512vl,ssse3,sse4.1")]
    unsafe fn split_avx512<const P: u64>(head: &[u8], rest: &[u8]) -> u32 {
        // SAFETY: the caller's guarantees, passed on.
        unsafe { body::<true, 128, P>(head, rest) }
    }

    #[target_feature(enable = "pclmulqdq,vpclmulqdq,avx,avx2,avx512f,avx512vl,ssse3,sse4.1")]
    unsafe fn split_vpclmul<const P: u64>(head: &[u8], rest: &[u8]) -> u32 {
        // SAFETY: the caller's guarantees, passed on.
        unsafe { body::<true, 512, P>(head, rest) }
    }

    /// `a ^ b ^ c`; in one instruction with `TERN` (AVX-512VL).
    #[inline(always)]
    unsafe fn xor3<const TERN: bool>(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
        // SAFETY: `TERN` only where the caller runs with AVX-512VL.
        unsafe {
            if TERN {
                _mm_ternarylogic_epi64::<0x96>(a, b, c)
            } else {
                _mm_xor_si128(_mm_xor_si128(a, b), c)
            }
        }
    }

    /// `x` carried `k`'s distance further along the message, plus `d`.
    #[inline(always)]
    unsafe fn fold<const TERN: bool>(x: __m128i, k: __m128i, d: __m128i) -> __m128i {
        // SAFETY: PCLMULQDQ is present (the caller's guarantee).
        unsafe {
            xor3::<TERN>(
                _mm_clmulepi64_si128(x, k, 0x00),
                _mm_clmulepi64_si128(x, k, 0x11),
                d,
            )
        }
    }

    /// The 16 bytes of `s` at `at`; the caller guarantees `at + 16 <= len`.
    #[inline(always)]
    unsafe fn load(s: &[u8], at: usize) -> __m128i {
        debug_assert!(at + 16 <= s.len());
        // SAFETY: in bounds by the caller's guarantee; unaligned load.
        unsafe { _mm_loadu_si128(s.as_ptr().add(at).cast()) }
    }

    /// A folding constant in a register.
    #[inline(always)]
    unsafe fn constant(k: (u64, u64)) -> __m128i {
        let (h, l) = pair(k);
        // SAFETY: SSE2 is present (the caller's guarantee).
        unsafe { _mm_set_epi64x(h, l) }
    }

    /// The CRC: compiled once per [`Level`] by the functions above, the
    /// lanes in registers of `WIDTH` bits (128, 256 or 512).
    #[inline(always)]
    unsafe fn body<const TERN: bool, const WIDTH: usize, const P: u64>(
        head: &[u8],
        rest: &[u8],
    ) -> u32 {
        // SAFETY (loads below): every offset is checked against the length;
        // the instructions are those of the caller's level.
        unsafe {
            let k128 = constant(K::<P>::FOLD_128);
            // The standard initial value, all ones, enters the first block.
            let init = _mm_cvtsi32_si128(-1);
            let blocks = head.len() / 16;
            let n = rest.len();
            let mut p = 0;
            let mut x;
            if n >= 64 && blocks <= 8 {
                // Four lanes over the rest; the head's blocks go straight
                // into them, each folded by its own distance, side by side
                // (head block `j` from the end lands on lane `4 - j`, or
                // `8 - j` for the fifth to eighth), not one after another:
                // one multiply's latency instead of one per block. (Longer
                // heads than the callers use take the way below.)
                let k512 = constant(K::<P>::FOLD_512);
                let k1024 = constant(K::<P>::FOLD_1024);
                // Head block `j` from the end (1-based).
                let block = |j: usize| -> Option<__m128i> {
                    let i = blocks.checked_sub(j)?;
                    let b = load(head, i * 16);
                    Some(if i == 0 { _mm_xor_si128(b, init) } else { b })
                };
                let lane = |t: usize| -> __m128i {
                    let mut l = load(rest, 16 * t);
                    if let Some(b) = block(4 - t) {
                        l = fold::<TERN>(b, k512, l);
                    }
                    if let Some(b) = block(8 - t) {
                        l = fold::<TERN>(b, k1024, l);
                    }
                    l
                };
                if WIDTH == 256 {
                    // The same in two 256-bit registers: lanes 0 and 1,
                    // then 2 and 3.
                    let gather = |last: usize| -> (__m256i, __m256i) {
                        let b = |t: usize| block(last - t).unwrap_or_else(|| _mm_setzero_si128());
                        (_mm256_set_m128i(b(1), b(0)), _mm256_set_m128i(b(3), b(2)))
                    };
                    let k = _mm256_broadcastsi128_si256(k512);
                    let (h0, h1) = gather(4);
                    let mut z0 = fold256(h0, k, load256(rest, 0));
                    let mut z1 = fold256(h1, k, load256(rest, 32));
                    if blocks > 4 {
                        let k = _mm256_broadcastsi128_si256(k1024);
                        let (h0, h1) = gather(8);
                        z0 = fold256(h0, k, z0);
                        z1 = fold256(h1, k, z1);
                    }
                    p = 64;
                    x = wide256::<P>(z0, z1, rest, &mut p);
                    return finish::<TERN, P>(x, rest, p);
                }
                if WIDTH == 512 {
                    // The same in 512-bit registers: head block `4 - t`
                    // (`8 - t`) in lane `t`, zero where there is none.
                    let gather = |last: usize| -> __m512i {
                        let b = |t: usize| block(last - t).unwrap_or_else(|| _mm_setzero_si128());
                        let mut h = _mm512_castsi128_si512(b(0));
                        h = _mm512_inserti32x4::<1>(h, b(1));
                        h = _mm512_inserti32x4::<2>(h, b(2));
                        _mm512_inserti32x4::<3>(h, b(3))
                    };
                    let k512 = _mm512_broadcast_i32x4(k512);
                    let mut z = fold512(gather(4), k512, _mm512_loadu_si512(rest.as_ptr().cast()));
                    if blocks > 4 {
                        z = fold512(gather(8), _mm512_broadcast_i32x4(k1024), z);
                    }
                    p = 64;
                    x = wide::<P>(z, rest, &mut p);
                    return finish::<TERN, P>(x, rest, p);
                }
                let (mut l0, mut l1, mut l2, mut l3) = (lane(0), lane(1), lane(2), lane(3));
                p = 64;
                while p + 64 <= n {
                    l0 = fold::<TERN>(l0, k512, load(rest, p));
                    l1 = fold::<TERN>(l1, k512, load(rest, p + 16));
                    l2 = fold::<TERN>(l2, k512, load(rest, p + 32));
                    l3 = fold::<TERN>(l3, k512, load(rest, p + 48));
                    p += 64;
                }
                // The lanes and the whole blocks after them (up to three)
                // fold onto the last block side by side, each by its own
                // distance, rather than one after another: the products
                // are independent, only the XORs chain.
                let m = (n - p) / 16;
                let by = |blocks: usize| constant(K::<P>::FOLD_BY_BLOCKS[blocks]);
                x = if m == 0 {
                    l3
                } else {
                    fold::<TERN>(l3, by(m), load(rest, p + 16 * (m - 1)))
                };
                x = fold::<TERN>(l2, by(m + 1), x);
                x = fold::<TERN>(l1, by(m + 2), x);
                x = fold::<TERN>(l0, by(m + 3), x);
                for j in 0..m.saturating_sub(1) {
                    x = fold::<TERN>(load(rest, p + 16 * j), by(m - 1 - j), x);
                }
                p += 16 * m;
            } else {
                x = _mm_xor_si128(load(head, 0), init);
                let mut at = 16;
                while at + 16 <= head.len() {
                    x = fold::<TERN>(x, k128, load(head, at));
                    at += 16;
                }
            }
            finish::<TERN, P>(x, rest, p)
        }
    }

    /// See [`super::crc32_or_masked`]; `msg.len()` is at least 64 and the
    /// CPU has the features of [`Level::Vpclmul`].
    #[target_feature(enable = "pclmulqdq,vpclmulqdq,avx,avx2,avx512f,avx512vl,ssse3,sse4.1")]
    pub unsafe fn or_masked_vpclmul(msg: &[u8], mask: &[u8; 64]) -> u32 {
        debug_assert!(msg.len() >= 64);
        // SAFETY: the first load reads `msg[..64]`, in bounds by the
        // caller's guarantee; `wide` and `finish` check their offsets.
        unsafe {
            let first = _mm512_or_si512(
                _mm512_loadu_si512(msg.as_ptr().cast()),
                _mm512_loadu_si512(mask.as_ptr().cast()),
            );
            // The standard initial value, all ones, enters the first block.
            let z = _mm512_xor_si512(first, _mm512_zextsi128_si512(_mm_cvtsi32_si128(-1)));
            let mut p = 64;
            let x = wide::<POLY>(z, msg, &mut p);
            finish::<true, POLY>(x, msg, p)
        }
    }

    /// See [`super::crc32_or_masked`]; `msg.len()` is at least 64 and the
    /// CPU has the features of [`Level::Vpclmul256`].
    #[target_feature(enable = "pclmulqdq,vpclmulqdq,avx,avx2,ssse3,sse4.1")]
    pub unsafe fn or_masked_vpclmul256(msg: &[u8], mask: &[u8; 64]) -> u32 {
        debug_assert!(msg.len() >= 64);
        // SAFETY: the loads read `msg[..64]` and `mask`, in bounds by the
        // caller's guarantee; `wide256` and `finish` check their offsets.
        unsafe {
            let masked = |at: usize| {
                _mm256_or_si256(
                    _mm256_loadu_si256(msg.as_ptr().add(at).cast()),
                    _mm256_loadu_si256(mask.as_ptr().add(at).cast()),
                )
            };
            // The standard initial value, all ones, enters the first block.
            let init = _mm256_set_m128i(_mm_setzero_si128(), _mm_cvtsi32_si128(-1));
            let z0 = _mm256_xor_si256(masked(0), init);
            let mut p = 64;
            let x = wide256::<POLY>(z0, masked(32), msg, &mut p);
            finish::<false, POLY>(x, msg, p)
        }
    }

    /// The 32 bytes of `s` at `at`; the caller guarantees `at + 32 <= len`.
    #[inline(always)]
    unsafe fn load256(s: &[u8], at: usize) -> __m256i {
        debug_assert!(at + 32 <= s.len());
        // SAFETY: in bounds by the caller's guarantee; unaligned load.
        unsafe { _mm256_loadu_si256(s.as_ptr().add(at).cast()) }
    }

    /// [`fold`] on two lanes at once. Needs VPCLMULQDQ and AVX2.
    #[inline(always)]
    unsafe fn fold256(x: __m256i, k: __m256i, d: __m256i) -> __m256i {
        // SAFETY: the caller's level has the instructions.
        unsafe {
            _mm256_xor_si256(
                _mm256_xor_si256(
                    _mm256_clmulepi64_epi128::<0x00>(x, k),
                    _mm256_clmulepi64_epi128::<0x11>(x, k),
                ),
                d,
            )
        }
    }

    /// [`wide`] with the four lanes in two 256-bit registers, `z0` (lanes
    /// 0 and 1) and `z1` (2 and 3): two such pairs side by side, each
    /// folding 128 bytes further per step, then one. Needs VPCLMULQDQ and
    /// AVX2 (the caller's level).
    #[inline(always)]
    unsafe fn wide256<const P: u64>(
        mut z0: __m256i,
        mut z1: __m256i,
        rest: &[u8],
        p: &mut usize,
    ) -> __m128i {
        // SAFETY: loads at offsets checked against the length; the
        // instructions are those of the caller's level.
        unsafe {
            let n = rest.len();
            let load32 = |at: usize| load256(rest, at);
            let product = |x: __m256i, k: __m256i| -> __m256i {
                _mm256_xor_si256(
                    _mm256_clmulepi64_epi128::<0x00>(x, k),
                    _mm256_clmulepi64_epi128::<0x11>(x, k),
                )
            };
            let k512 = _mm256_broadcastsi128_si256(constant(K::<P>::FOLD_512));
            let k1024 = _mm256_broadcastsi128_si256(constant(K::<P>::FOLD_1024));
            if *p + 64 <= n {
                let (mut y0, mut y1) = (load32(*p), load32(*p + 32));
                *p += 64;
                while *p + 128 <= n {
                    z0 = fold256(z0, k1024, load32(*p));
                    z1 = fold256(z1, k1024, load32(*p + 32));
                    y0 = fold256(y0, k1024, load32(*p + 64));
                    y1 = fold256(y1, k1024, load32(*p + 96));
                    *p += 128;
                }
                z0 = fold256(z0, k512, y0);
                z1 = fold256(z1, k512, y1);
            }
            if *p + 64 <= n {
                z0 = fold256(z0, k512, load32(*p));
                z1 = fold256(z1, k512, load32(*p + 32));
                *p += 64;
            }
            // As in `wide`: lane t folds by 3 - t + m blocks onto the last
            // of the m whole blocks left; with none left, lane 3 is that
            // block itself.
            let m = (n - *p) / 16;
            let folds: &'static [[u64; 8]; 4] = &K::<P>::TAIL_FOLDS;
            let tail = folds[m].as_ptr();
            let f0 = product(z0, _mm256_loadu_si256(tail.cast()));
            let mut f1 = product(z1, _mm256_loadu_si256(tail.add(4).cast()));
            if m == 0 {
                f1 = _mm256_blend_epi32::<0xf0>(f1, z1);
            }
            let half = _mm256_xor_si256(f0, f1);
            let mut x = _mm_xor_si128(
                _mm256_castsi256_si128(half),
                _mm256_extracti128_si256::<1>(half),
            );
            if m > 0 {
                let block = |j: usize| load(rest, *p + 16 * j);
                debug_assert!(*p + 16 * m <= n);
                x = _mm_xor_si128(x, block(m - 1));
                for j in 0..m - 1 {
                    x = fold::<false>(block(j), constant(K::<P>::FOLD_BY_BLOCKS[m - 1 - j]), x);
                }
                *p += 16 * m;
            }
            x
        }
    }

    /// `x` carried `k`'s distance further along the message (lane by
    /// lane), plus `d`. Needs VPCLMULQDQ and AVX-512F.
    #[inline(always)]
    unsafe fn fold512(x: __m512i, k: __m512i, d: __m512i) -> __m512i {
        // SAFETY: the caller's level has the instructions.
        unsafe {
            _mm512_ternarylogic_epi64::<0x96>(
                _mm512_clmulepi64_epi128::<0x00>(x, k),
                _mm512_clmulepi64_epi128::<0x11>(x, k),
                d,
            )
        }
    }

    /// Carries the four lanes `z` (the state over `rest[p - 64..p]`, `p`
    /// being 64 or more) over the whole 64-byte groups of `rest` from `p`
    /// on in 512-bit registers: two registers side by side, each folding
    /// 128 bytes further per step (the multiplies of one step are
    /// independent), then one. Then, as in [`body`], the lanes fold onto the
    /// last whole block after them (up to three), each by its own distance,
    /// here in one 512-bit multiply; the 16-byte state is returned, with `p`
    /// past that block. Needs VPCLMULQDQ, AVX-512F and AVX2 (the caller's
    /// level).
    #[inline(always)]
    unsafe fn wide<const P: u64>(mut z: __m512i, rest: &[u8], p: &mut usize) -> __m128i {
        // SAFETY: loads at offsets checked against the length; the
        // instructions are those of the caller's level.
        unsafe {
            let n = rest.len();
            let load = |at: usize| -> __m512i {
                debug_assert!(at + 64 <= n);
                _mm512_loadu_si512(rest.as_ptr().add(at).cast())
            };
            let product = |x: __m512i, k: __m512i| -> __m512i {
                _mm512_xor_si512(
                    _mm512_clmulepi64_epi128::<0x00>(x, k),
                    _mm512_clmulepi64_epi128::<0x11>(x, k),
                )
            };
            let k512 = _mm512_broadcast_i32x4(constant(K::<P>::FOLD_512));
            let k1024 = _mm512_broadcast_i32x4(constant(K::<P>::FOLD_1024));
            if *p + 64 <= n {
                let mut z1 = load(*p);
                *p += 64;
                while *p + 128 <= n {
                    z = fold512(z, k1024, load(*p));
                    z1 = fold512(z1, k1024, load(*p + 64));
                    *p += 128;
                }
                z = fold512(z, k512, z1);
            }
            if *p + 64 <= n {
                z = fold512(z, k512, load(*p));
                *p += 64;
            }
            // Lane t folds by 3 - t + m blocks onto the last of the m whole
            // blocks left; with none left, lane 3 is that block itself.
            let m = (n - *p) / 16;
            let folds: &'static [[u64; 8]; 4] = &K::<P>::TAIL_FOLDS;
            let k = _mm512_loadu_si512(folds[m].as_ptr().cast());
            let mut f = product(z, k);
            if m == 0 {
                f = _mm512_mask_blend_epi64(0xc0, f, z);
            }
            let half =
                _mm256_xor_si256(_mm512_castsi512_si256(f), _mm512_extracti64x4_epi64::<1>(f));
            let mut x = _mm_xor_si128(
                _mm256_castsi256_si128(half),
                _mm256_extracti128_si256::<1>(half),
            );
            if m > 0 {
                let block = |j: usize| _mm_loadu_si128(rest.as_ptr().add(*p + 16 * j).cast());
                debug_assert!(*p + 16 * m <= n);
                x = _mm_xor_si128(x, block(m - 1));
                for j in 0..m - 1 {
                    x = fold::<true>(block(j), constant(K::<P>::FOLD_BY_BLOCKS[m - 1 - j]), x);
                }
                *p += 16 * m;
            }
            x
        }
    }

    /// Folds `rest[p..]` onto the state `x` and reduces it to the CRC.
    #[inline(always)]
    unsafe fn finish<const TERN: bool, const P: u64>(
        mut x: __m128i,
        rest: &[u8],
        mut p: usize,
    ) -> u32 {
        // SAFETY: offsets checked against the length.
        unsafe {
            let k128 = constant(K::<P>::FOLD_128);
            let n = rest.len();
            while p + 16 <= n {
                x = fold::<TERN>(x, k128, load(rest, p));
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
                x = fold::<TERN>(high, k128, low);
                p = n;
            }
            let crc = !reduce::<P>(x, k128);
            match rest.get(p..) {
                // Only with fewer than 16 bytes in all, which callers of
                // other polynomials than the CRC-32's never pass.
                Some(tail) if !tail.is_empty() => {
                    debug_assert_eq!(P, POLY);
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
    #[inline(always)]
    unsafe fn reduce<const P: u64>(x: __m128i, k128: __m128i) -> u32 {
        // SAFETY: PCLMULQDQ and SSE4.1 are present (the caller's guarantee).
        unsafe {
            let low32 = _mm_set_epi32(0, 0, 0, -1);
            // 128 -> 96 bits.
            let x = _mm_xor_si128(_mm_clmulepi64_si128(x, k128, 0x10), _mm_srli_si128(x, 8));
            // 96 -> 64 bits.
            let x = _mm_xor_si128(
                _mm_clmulepi64_si128(
                    _mm_and_si128(x, low32),
                    _mm_set_epi64x(0, K::<P>::FOLD_64 as i64),
                    0x00,
                ),
                _mm_srli_si128(x, 4),
            );
            // Barrett: q = floor(x * mu), remainder = x - q * P.
            let pu = _mm_set_epi64x(K::<P>::MU as i64, K::<P>::P_REFLECTED as i64);
            let t1 = _mm_clmulepi64_si128(_mm_and_si128(x, low32), pu, 0x10);
            let t2 = _mm_clmulepi64_si128(_mm_and_si128(t1, low32), pu, 0x00);
            _mm_extract_epi32(_mm_xor_si128(x, t2), 1) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every instruction level the fold is compiled for.
    #[cfg(target_arch = "x86_64")]
    const LEVELS: [clmul::Level; 5] = [
        clmul::Level::Sse,
        clmul::Level::Avx,
        clmul::Level::Vpclmul256,
        clmul::Level::Avx512,
        clmul::Level::Vpclmul,
    ];

    /// The CRC of `head ‖ rest` by `crc32_split` and by every instruction
    /// level this CPU runs, each named.
    fn every_way(head: &[u8], rest: &[u8]) -> Vec<(String, u32)> {
        let mut ways = vec![("crc32_split".to_string(), crc32_split(head, rest))];
        #[cfg(target_arch = "x86_64")]
        for level in LEVELS {
            if clmul::runs(level) {
                // SAFETY: the CPU has this level's features, and callers
                // pass whole-block heads.
                let crc = unsafe { clmul::split::<POLY>(level, head, rest) };
                ways.push((format!("{level:?}"), crc));
            }
        }
        ways
    }

    /// Asserts that every way gives `want`.
    fn check(head: &[u8], rest: &[u8], want: u32, what: &str) {
        for (way, got) in every_way(head, rest) {
            assert_eq!(got, want, "{way}: {what}");
        }
    }

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
            check(
                &msg[..split],
                &msg[split..],
                crc32fast::hash(msg),
                "check value",
            );
        }
    }

    /// `crc32_or_masked` both ways (in place where the CPU allows, and
    /// through the copy) against `crc32fast` of a patched copy.
    fn check_masked(msg: &[u8], mask: &[u8; 64], what: &str) {
        let mut patched = msg.to_vec();
        for (b, k) in patched.iter_mut().zip(mask) {
            *b |= k;
        }
        let want = crc32fast::hash(&patched);
        assert_eq!(crc32_or_masked(msg, mask), want, "{what}");
        assert_eq!(or_masked_copy(msg, mask), want, "{what}: copy");
        #[cfg(target_arch = "x86_64")]
        if msg.len() >= 64 {
            if clmul::runs(clmul::Level::Vpclmul) {
                // SAFETY: the CPU has the level's features; 64 bytes or more.
                let crc = unsafe { clmul::or_masked_vpclmul(msg, mask) };
                assert_eq!(crc, want, "{what}: in place");
            }
            if clmul::runs(clmul::Level::Vpclmul256) {
                // SAFETY: the CPU has the level's features; 64 bytes or more.
                let crc = unsafe { clmul::or_masked_vpclmul256(msg, mask) };
                assert_eq!(crc, want, "{what}: in place, 256 bits");
            }
        }
    }

    #[test]
    fn masked_every_length_up_to_600() {
        let data: Vec<u8> = (0..600u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        // The ICRC's IPv6 mask: an LRH of ones, the traffic class and flow
        // label, the hop limit, the UDP checksum and the BTH's variant byte.
        let mut icrc = [0u8; 64];
        icrc[..8].fill(0xff);
        icrc[8] = 0x0f;
        for i in [9, 10, 11, 15, 54, 55, 60] {
            icrc[i] = 0xff;
        }
        let mut stripes = [0u8; 64];
        for (i, b) in stripes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37) & 0x5a;
        }
        for mask in [[0u8; 64], [0xff; 64], icrc, stripes] {
            for n in 0..600 {
                check_masked(&data[..n], &mask, &format!("length {n}"));
            }
        }
    }

    #[test]
    fn every_length_up_to_600() {
        let data: Vec<u8> = (0..750u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for head in (16..=144).step_by(16) {
            for n in 0..600 {
                let all = &data[..head + n];
                check(
                    &all[..head],
                    &all[head..],
                    crc32fast::hash(all),
                    &format!("head {head} rest {n}"),
                );
            }
        }
    }

    proptest! {
        #[test]
        fn masked_equals_crc32fast(
            mask in proptest::collection::vec(any::<u8>(), 64),
            data in proptest::collection::vec(any::<u8>(), 0..3000),
        ) {
            let mask: [u8; 64] = mask.try_into().unwrap();
            check_masked(&data, &mask, "random");
        }

        #[test]
        fn equals_crc32fast(blocks in 1usize..10, data in proptest::collection::vec(any::<u8>(), 96..3000)) {
            let head = (blocks * 16).min(data.len() / 16 * 16);
            let want = crc32fast::hash(&data);
            for (way, got) in every_way(&data[..head], &data[head..]) {
                prop_assert_eq!(got, want, "{}", way);
            }
        }
    }

    /// The InfiniBand VCRC's polynomial (0x100B) times x^16.
    const VCRC_X16: u64 = 0x100b_0000;

    /// A reflected CRC-16 with ones in and out, a bit at a time.
    fn crc16_bitwise(msg: &[u8]) -> u16 {
        let mut crc = 0xffffu16;
        for &b in msg {
            crc ^= u16::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xd008
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn crc16_every_level_and_length_up_to_600() {
        let data: Vec<u8> = (0..700u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        // The catalogue's check value of the VCRC's CRC-16 ("123456789"
        // is too short for the fold: padded, against the reference).
        assert_eq!(crc16_bitwise(b"123456789"), 0x0a3d);
        assert_eq!(crc16_ones::<VCRC_X16>(b"123456789"), None);
        for len in 0..600 {
            let msg = &data[len % 7..len % 7 + len];
            let want = crc16_bitwise(msg);
            let got = crc16_ones::<VCRC_X16>(msg);
            if len < 32 {
                assert_eq!(got, None, "{len} bytes");
                continue;
            }
            #[cfg(target_arch = "x86_64")]
            if clmul::level() != clmul::Level::None {
                assert_eq!(got, Some(want), "{len} bytes");
            }
            #[cfg(target_arch = "x86_64")]
            for level in LEVELS {
                if clmul::runs(level) {
                    assert_eq!(
                        crc16_at::<VCRC_X16>(level, msg),
                        Some(want),
                        "{len} bytes, {level:?}"
                    );
                }
            }
        }
    }
}
