//! Variant CRC: the CRC-16 that ends every native InfiniBand packet, over
//! every byte from the LRH through the ICRC (recomputed at each hop, so it
//! covers the variant fields too).
//!
//! Polynomial 0x100B, bits taken least significant first (reflected, so
//! 0xD008), initial value 0xFFFF, complemented at the end, stored
//! little-endian. Checked against every frame of Wireshark's
//! `infiniband.pcap` sample (43 of 43).

/// Length of the VCRC trailer.
pub const LEN: usize = 2;

const POLY_REFLECTED: u16 = 0xd008;

/// One byte's step of the CRC, for each byte value.
const TABLE: [u16; 256] = table();

// Only evaluated at compile time.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const fn table() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u16;
        let mut k = 0;
        while k < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY_REFLECTED
            } else {
                crc >> 1
            };
            k += 1;
        }
        t[i] = crc;
        i += 1;
    }
    t
}

/// The VCRC of `bytes` (the LRH through the ICRC).
pub fn compute(bytes: &[u8]) -> u16 {
    let mut crc = 0xffffu16;
    for &b in bytes {
        let i = usize::from((crc as u8) ^ b);
        crc = (crc >> 8) ^ TABLE.get(i).copied().unwrap_or(0);
    }
    !crc
}

/// The VCRC as stored in its two trailer bytes.
pub fn stored(trailer: [u8; LEN]) -> u16 {
    u16::from_le_bytes(trailer)
}

/// The trailer bytes for a computed VCRC.
pub fn to_trailer(crc: u16) -> [u8; LEN] {
    crc.to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::wire::test_hex as hex;

    #[test]
    fn the_vcrc_of_a_real_packet() {
        // Frame 10 of Wireshark's infiniband.pcap sample (an RC SEND Only
        // carrying an IPoIB ping), LRH through ICRC, then its VCRC 24 a8.
        let f = hex(concat!(
            "000200010",
            "01c0004",
            "0440ffff00fc040780d40a5508000000",
            "450000540000400040012",
            "54e0a0001220a00003a08008576",
            "17020001f7412b48000000007229080000000000",
            "101112131415161718191a1b1c1d1e1f202122232425262728292a2b",
            "2c2d2e2f3031323334353637",
            "0acca5df"
        ));
        assert_eq!(f.len(), 112);
        assert_eq!(to_trailer(compute(&f)), [0x24, 0xa8]);
        assert_eq!(stored([0x24, 0xa8]), compute(&f));
        // One bit flipped anywhere changes it.
        for at in [0, 5, 60, 111] {
            let mut g = f.clone();
            g[at] ^= 0x10;
            assert_ne!(compute(&g), compute(&f), "bit at byte {at}");
        }
    }
}
