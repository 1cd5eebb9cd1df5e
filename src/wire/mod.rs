//! Typed views over protocol headers: parse and emit, no allocation, no I/O.
//!
//! Every header follows one pattern (after smoltcp's `wire`): a view type
//! (`Bth<'a>`) that checks its length once and then has infallible getters, and
//! a representation (`BthRepr`) with `parse`, `emit` and `LEN`. Field offsets
//! are named constants in each file.
// Wire data must never panic the decoder; tests may unwrap freely.
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::arithmetic_side_effects
    )
)]

pub mod aeth;
pub mod atomic;
pub mod bth;
pub mod deth;
pub mod dhcp;
pub mod dns;
pub mod erf;
pub mod grh;
pub mod http;
pub mod icrc;
pub mod igmp;
pub mod lrh;
pub mod mac;
pub mod mad;
pub mod nbns;
pub mod ndp;
pub mod nvme;
pub mod opcode;
pub mod pause;
pub mod psn;
pub mod reth;
pub mod small;
pub mod ssh;
pub mod stp;
pub mod tcp;
pub mod tls;
pub mod vcrc;

pub use aeth::{AckKind, Aeth, AethRepr};
pub use atomic::{AtomicAckEthRepr, AtomicEthRepr};
pub use bth::{Bth, BthRepr};
pub use deth::DethRepr;
pub use erf::ErfRepr;
pub use grh::GrhRepr;
pub use lrh::{Lnh, LrhRepr};
pub use mac::MacAddr;
pub use opcode::{Headers, Opcode, Operation, Transport};
pub use pause::{PauseRepr, PfcRepr};
pub use psn::Psn;
pub use reth::RethRepr;
pub use small::{IethRepr, ImmDtRepr, RdethRepr, XrcethRepr};

/// A header needed more bytes than the frame had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{layer} truncated: needs {needed} bytes, {got} captured")]
pub struct Truncated {
    /// The header that did not fit (`"BTH"`, `"RETH"`, ...).
    pub layer: &'static str,
    /// Bytes the header needs.
    pub needed: usize,
    /// Bytes that were left in the frame.
    pub got: usize,
}

/// Borrows the first `N` bytes of `buf` as an array, or says how short it is.
#[inline]
pub(crate) fn fixed<'a, const N: usize>(
    layer: &'static str,
    buf: &'a [u8],
) -> Result<&'a [u8; N], Truncated> {
    buf.first_chunk::<N>().ok_or(Truncated {
        layer,
        needed: N,
        got: buf.len(),
    })
}

/// Mutable counterpart of [`fixed`] for the emit side.
#[inline]
pub(crate) fn fixed_mut<'a, const N: usize>(
    layer: &'static str,
    buf: &'a mut [u8],
) -> Result<&'a mut [u8; N], Truncated> {
    let got = buf.len();
    buf.first_chunk_mut::<N>().ok_or(Truncated {
        layer,
        needed: N,
        got,
    })
}

#[inline]
pub(crate) fn be16(b: [u8; 2]) -> u16 {
    u16::from_be_bytes(b)
}

#[inline]
pub(crate) fn be24(b: [u8; 3]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}

#[inline]
pub(crate) fn be32(b: [u8; 4]) -> u32 {
    u32::from_be_bytes(b)
}

#[inline]
pub(crate) fn be64(b: [u8; 8]) -> u64 {
    u64::from_be_bytes(b)
}

/// The low 24 bits of `v` as three big-endian bytes.
#[inline]
pub(crate) fn to_be24(v: u32) -> [u8; 3] {
    let [_, a, b, c] = v.to_be_bytes();
    [a, b, c]
}

/// Copies `N` bytes starting at the constant offset `AT` out of a fixed array.
#[inline]
pub(crate) fn take<const LEN: usize, const N: usize>(buf: &[u8; LEN], at: usize) -> [u8; N] {
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = buf.get(at.wrapping_add(i)).copied().unwrap_or(0);
    }
    out
}

/// Writes `src` into `buf` at `at` (bounded by `buf`).
#[inline]
pub(crate) fn put<const LEN: usize>(buf: &mut [u8; LEN], at: usize, src: &[u8]) {
    for (i, s) in src.iter().enumerate() {
        if let Some(d) = buf.get_mut(at.wrapping_add(i)) {
            *d = *s;
        }
    }
}

/// Bytes of text as tshark's `format_text` shows them: printable text
/// (UTF-8 too) as it is, control characters and bytes that are not UTF-8
/// as `\ooo`.
pub fn push_text(out: &mut String, bytes: &[u8]) {
    use std::fmt::Write as _;
    if bytes.iter().all(|b| (0x20..0x7f).contains(b))
        && let Ok(text) = std::str::from_utf8(bytes)
    {
        out.push_str(text);
        return;
    }
    for chunk in bytes.utf8_chunks() {
        for ch in chunk.valid().chars() {
            if ch.is_control() {
                let _ = write!(out, "\\{:03o}", u32::from(ch));
            } else {
                out.push(ch);
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\{b:03o}");
        }
    }
}

/// Bytes from hex digits, for the golden frames of the tests.
#[cfg(test)]
pub(crate) fn test_hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
