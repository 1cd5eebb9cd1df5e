//! A frame's fingerprint, to tell a capture duplicate without keeping the
//! frame.

use crate::dissect::Packet;

/// Enough of a frame to tell a byte-identical copy: its length, a 64-bit
/// hash of its first bytes (every header, variant fields included) and its
/// last eight bytes (the ICRC, which covers the rest). The two are kept
/// as bytes so that the whole takes 20 (a frame's facts carry one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fingerprint {
    len: u32,
    head: [u8; 8],
    tail: [u8; 8],
}

impl Fingerprint {
    /// Whether this is the fingerprint of no frame (a flow's before its first).
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }
}

const FINGERPRINT_HEAD: usize = 128;

impl Fingerprint {
    /// Of the frame itself: an ERF record header (with its timestamp)
    /// is no part of it.
    pub fn of(pkt: &Packet<'_>) -> Self {
        Self::of_bytes(pkt.frame_bytes())
    }

    /// The fingerprint of a frame's bytes `d`.
    #[inline(always)]
    pub fn of_bytes(d: &[u8]) -> Self {
        let head = &d[..d.len().min(FINGERPRINT_HEAD)];
        // Four independent lanes, word i in lane i % 4: the multiplies
        // overlap instead of waiting on each other.
        const K: u64 = 0x0000_0100_0000_01b3;
        let mut lanes = [
            0xcbf2_9ce4_8422_2325u64,
            0x9e37_79b9_7f4a_7c15,
            0xc2b2_ae3d_27d4_eb4f,
            0x1656_67b1_9e37_79f9,
        ];
        let word = |w: &[u8]| w.first_chunk::<8>().map_or(0, |w| u64::from_le_bytes(*w));
        let mix = |lane: u64, w: u64| (lane ^ w).wrapping_mul(K).rotate_left(29);
        let block = |lanes: [u64; 4], b: &[u8; 32]| {
            let w = |i: usize| u64::from_le_bytes(*b[i..].first_chunk::<8>().unwrap_or(&[0; 8]));
            [
                mix(lanes[0], w(0)),
                mix(lanes[1], w(8)),
                mix(lanes[2], w(16)),
                mix(lanes[3], w(24)),
            ]
        };
        // A whole head (the usual case) is four blocks known at compile
        // time: the loop unrolls.
        let rest: &[u8] = match head.first_chunk::<FINGERPRINT_HEAD>() {
            Some(whole) => {
                for b in whole.as_chunks::<32>().0 {
                    lanes = block(lanes, b);
                }
                &[]
            }
            None => {
                let (blocks, rest) = head.as_chunks::<32>();
                for b in blocks {
                    lanes = block(lanes, b);
                }
                rest
            }
        };
        let mut words = rest.chunks_exact(8);
        for (lane, w) in lanes.iter_mut().zip(&mut words) {
            *lane = mix(*lane, word(w));
        }
        let mut h = lanes[0]
            ^ lanes[1].rotate_left(16)
            ^ lanes[2].rotate_left(32)
            ^ lanes[3].rotate_left(48);
        for &b in words.remainder() {
            h = (h ^ u64::from(b)).wrapping_mul(K);
        }
        let tail = match d.last_chunk::<8>() {
            Some(t) => *t,
            None => {
                let mut tail = [0u8; 8];
                tail[8 - d.len()..].copy_from_slice(d);
                tail
            }
        };
        Fingerprint {
            len: d.len() as u32,
            head: h.to_le_bytes(),
            tail,
        }
    }
}
