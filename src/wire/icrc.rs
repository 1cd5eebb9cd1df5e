//! Invariant CRC: CRC-32 over the fields that do not change hop by hop.
//!
//! Covered, in order: eight 0xFF bytes (standing in for the InfiniBand LRH),
//! the network header with its variant fields set to ones, the UDP header
//! with its checksum set to ones (v2), the BTH with byte 4 set to ones, then
//! extended headers, payload and pad. The CRC is stored little-endian in the
//! last four bytes.

use super::bth;
use crc32fold::crc32_split;

/// Length of the ICRC trailer.
pub const LEN: usize = 4;

/// The network header that precedes the BTH.
#[derive(Debug, Clone, Copy)]
pub enum NetHeader<'a> {
    /// RoCE v2 over IPv4: the IPv4 header (with options) and the UDP header.
    Ipv4 { ip: &'a [u8], udp: &'a [u8] },
    /// RoCE v2 over IPv6: the fixed IPv6 header and the UDP header.
    Ipv6 { ip: &'a [u8], udp: &'a [u8] },
    /// RoCE v1: the GRH. Native InfiniBand with a GRH too: there the
    /// whole LRH is variant (a router rewrites it), and the eight 0xFF
    /// bytes stand in for it just as for RoCE.
    Grh(&'a [u8]),
    /// Native InfiniBand without a GRH: the LRH itself is covered, its
    /// virtual lane set to ones.
    Lrh(&'a [u8]),
}

/// CRC-32 of the eight 0xFF bytes that stand in for the LRH; the Linux rxe
/// driver starts from the same state (0xdebb20e3 before the final XOR).
const LRH_CRC: u32 = 0x2144_df1c;

/// Length of the LRH stand-in.
const LRH_LEN: usize = 8;

/// Longest masked prefix: IPv4 with options (60) + UDP (8) + BTH (12).
const MAX_PREFIX: usize = 60 + 8 + bth::LEN;

/// The bytes of the common headers that the ICRC covers as ones, counted
/// from the start of the network header: IPv4 (TOS, TTL, checksum), then
/// UDP's checksum and the BTH's variant byte.
const IPV4_ONES: [usize; 7] = [1, 8, 10, 11, 26, 27, 28 + bth::VARIANT_BYTE];
/// The same for IPv6 (traffic class and flow label, hop limit; the first
/// byte's low half too, set apart).
const IPV6_ONES: [usize; 7] = [1, 2, 3, 7, 46, 47, 48 + bth::VARIANT_BYTE];
/// The same for the GRH of RoCE v1 (no UDP).
const GRH_ONES: [usize; 5] = [1, 2, 3, 7, 40 + bth::VARIANT_BYTE];

/// The network header of a packet whose ICRC [`compute_in_place`] reads
/// from the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InPlace {
    /// IPv4 without options, then UDP.
    Ipv4,
    /// IPv6, then UDP.
    Ipv6,
    /// RoCE v1: the GRH.
    Grh,
}

/// The bytes set to ones in the first 64 of an ICRC's message (the LRH
/// stand-in, then the header from `net`): `ones` are offsets into the
/// header; `class` adds the low half of its first byte (the traffic class
/// of IPv6 and the GRH).
// Only ever evaluated at compile time (for `IN_PLACE_MASKS`), where an
// index past the array or an overflow fails the build instead of panicking.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const fn in_place_mask(ones: &[usize], class: bool) -> [u8; 64] {
    let mut m = [0u8; 64];
    let mut i = 0;
    while i < LRH_LEN {
        m[i] = 0xff;
        i += 1;
    }
    let mut j = 0;
    while j < ones.len() {
        m[LRH_LEN + ones[j]] = 0xff;
        j += 1;
    }
    if class {
        m[LRH_LEN] = 0x0f;
    }
    m
}

/// [`in_place_mask`] for each [`InPlace`], in order.
const IN_PLACE_MASKS: [[u8; 64]; 3] = [
    in_place_mask(&IPV4_ONES, false),
    in_place_mask(&IPV6_ONES, true),
    in_place_mask(&GRH_ONES, true),
];

/// The ICRC of the packet whose network header (`kind`) starts at
/// `net_at` in `frame` and whose ICRC starts at `icrc_at`, read in place:
/// the eight bytes before the header (link-layer bytes) stand in for the
/// LRH, and they and the variant fields are set to ones on the way into
/// the CRC, with no copy. The same value as [`compute`] (tested); `None`
/// when the frame has no eight bytes before the header or `icrc_at` is
/// out of range.
pub fn compute_in_place(frame: &[u8], net_at: usize, icrc_at: usize, kind: InPlace) -> Option<u32> {
    let msg = frame.get(net_at.checked_sub(LRH_LEN)?..icrc_at)?;
    let mask = match kind {
        InPlace::Ipv4 => &IN_PLACE_MASKS[0],
        InPlace::Ipv6 => &IN_PLACE_MASKS[1],
        InPlace::Grh => &IN_PLACE_MASKS[2],
    };
    Some(crc32fold::crc32_or_masked(msg, mask))
}

/// Computes the ICRC of a packet: `net` is the network (and UDP) header,
/// `transport` runs from the BTH to the byte before the ICRC.
///
/// Packets with the usual header sizes take one carry-less-multiply pass
/// over a stack copy of the masked headers and then the payload
/// (`compute_common`); others (IPv4 options, cut headers) the general way.
pub fn compute(net: NetHeader<'_>, transport: &[u8]) -> u32 {
    compute_common(net, transport).unwrap_or_else(|| compute_any(net, transport))
}

/// [`compute`] for any header sizes (IPv4 options, cut headers).
fn compute_any(net: NetHeader<'_>, transport: &[u8]) -> u32 {
    let mut b = [0u8; MAX_PREFIX];
    let mut n = 0usize;
    let mut push = |src: &[u8], max: usize, ones: &[usize], v6: bool| {
        let start = n;
        let len = src.len().min(max).min(b.len().saturating_sub(start));
        if let (Some(d), Some(s)) = (b.get_mut(start..start.saturating_add(len)), src.get(..len)) {
            d.copy_from_slice(s);
        }
        for &i in ones {
            if i < len
                && let Some(d) = b.get_mut(start.saturating_add(i))
            {
                *d = 0xff;
            }
        }
        if v6
            && len > 0
            && let Some(d) = b.get_mut(start)
        {
            *d |= 0x0f;
        }
        n = n.saturating_add(len);
    };
    match net {
        NetHeader::Ipv4 { ip, udp } => {
            push(ip, 60, &[1, 8, 10, 11], false);
            push(udp, 8, &[6, 7], false);
        }
        NetHeader::Ipv6 { ip, udp } => {
            push(ip, 40, &[1, 2, 3, 7], true);
            push(udp, 8, &[6, 7], false);
        }
        NetHeader::Grh(grh) => push(grh, 40, &[1, 2, 3, 7], true),
        NetHeader::Lrh(_) => {}
    }
    push(transport, bth::LEN, &[bth::VARIANT_BYTE], false);
    let mut h = match net {
        NetHeader::Lrh(lrh) => {
            let mut l = [0u8; LRH_LEN];
            let n = lrh.len().min(LRH_LEN);
            if let (Some(d), Some(s)) = (l.get_mut(..n), lrh.get(..n)) {
                d.copy_from_slice(s);
            }
            // The virtual lane: the high half of the first byte.
            l[0] |= 0xf0;
            let mut h = crc32fast::Hasher::new();
            h.update(l.get(..n).unwrap_or_default());
            h
        }
        _ => crc32fast::Hasher::new_with_initial(LRH_CRC),
    };
    h.update(b.get(..n).unwrap_or_default());
    h.update(transport.get(bth::LEN..).unwrap_or_default());
    h.finalize()
}

/// [`compute`] for the usual header sizes (IPv4 without options, IPv6, GRH,
/// a whole LRH; whole UDP and BTH); `None` otherwise.
///
/// The LRH stand-in and the masked headers are copied to the stack with
/// the first few bytes after the BTH, up to a multiple of 16 bytes, so the
/// CRC folds the copy and the rest of the packet in one pass
/// ([`crc32_split`]); a packet with fewer than 16 bytes after its BTH (an
/// ACK) is copied whole.
fn compute_common(net: NetHeader<'_>, transport: &[u8]) -> Option<u32> {
    let (bth, after) = transport.split_first_chunk::<{ bth::LEN }>()?;
    let mut b = [0xffu8; 96];
    // Fixed-size copies at fixed offsets (moves, no copy calls); the LRH
    // stand-in is the buffer's first eight 0xff bytes.
    fn put<const N: usize>(b: &mut [u8; 96], at: usize, src: &[u8; N]) -> Option<()> {
        b.get_mut(at..at.checked_add(N)?)?.copy_from_slice(src);
        Some(())
    }
    // Sets the variant bytes (offsets from the network header) to ones.
    fn ones<const K: usize>(b: &mut [u8; 96], at: [usize; K]) -> Option<()> {
        for i in at {
            *b.get_mut(LRH_LEN.checked_add(i)?)? = 0xff;
        }
        Some(())
    }
    // Where the bytes after the BTH go.
    let at: usize = match net {
        NetHeader::Ipv4 { ip, udp } => {
            let ip: &[u8; 20] = ip.first_chunk().filter(|_| ip.len() == 20)?;
            put(&mut b, LRH_LEN, ip)?;
            put(&mut b, LRH_LEN + 20, udp.first_chunk::<8>()?)?;
            put(&mut b, LRH_LEN + 28, bth)?;
            ones(&mut b, IPV4_ONES)?;
            48
        }
        NetHeader::Ipv6 { ip, udp } => {
            put(&mut b, LRH_LEN, ip.first_chunk::<40>()?)?;
            put(&mut b, LRH_LEN + 40, udp.first_chunk::<8>()?)?;
            put(&mut b, LRH_LEN + 48, bth)?;
            ones(&mut b, IPV6_ONES)?;
            *b.get_mut(LRH_LEN)? |= 0x0f;
            68
        }
        NetHeader::Lrh(lrh) => {
            // The LRH itself in place of the stand-in, its virtual lane
            // (the first byte's high half) set to ones.
            put(&mut b, 0, lrh.first_chunk::<LRH_LEN>()?)?;
            *b.first_mut()? |= 0xf0;
            put(&mut b, LRH_LEN, bth)?;
            *b.get_mut(LRH_LEN + bth::VARIANT_BYTE)? = 0xff;
            20
        }
        NetHeader::Grh(grh) => {
            put(&mut b, LRH_LEN, grh.first_chunk::<40>()?)?;
            put(&mut b, LRH_LEN + 40, bth)?;
            ones(&mut b, GRH_ONES)?;
            *b.get_mut(LRH_LEN)? |= 0x0f;
            60
        }
    };
    // Whole 16-byte blocks on the stack: the first bytes after the BTH fill
    // the last one (16 are copied, fewer count), when at least 16 remain
    // (the CRC's last step reads 16 bytes of what follows the blocks).
    let end = at.next_multiple_of(16);
    if let (Some(first), Some(rest)) =
        (after.first_chunk::<16>(), after.get(end.checked_sub(at)?..))
        && rest.len() >= 16
    {
        put(&mut b, at, first)?;
        Some(crc32_split(b.get(..end)?, rest))
    } else {
        // All of it on the stack (at most 95 bytes): whole blocks, then at
        // least 16 bytes.
        let total = at.checked_add(after.len())?;
        b.get_mut(at..total)?.copy_from_slice(after);
        let head = total.checked_sub(16)? & !15;
        if head == 0 {
            // Under 32 bytes in all (an ACK without a GRH): no whole
            // block before the last 16.
            return Some(crc32fast::hash(b.get(..total)?));
        }
        Some(crc32_split(b.get(..head)?, b.get(head..total)?))
    }
}

/// The ICRC as stored in its four trailer bytes.
pub fn stored(trailer: [u8; LEN]) -> u32 {
    u32::from_le_bytes(trailer)
}

/// The trailer bytes for a computed ICRC.
pub fn to_trailer(crc: u32) -> [u8; LEN] {
    crc.to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::wire::test_hex as hex;

    /// Native InfiniBand packets of Wireshark's `infiniband.pcap` sample
    /// (an Endace ERF capture, 2008), from the LRH to the VCRC.
    /// Frame 10: RC SEND Only (IPoIB ping), LRH only.
    const IB_LOCAL: &str = concat!(
        "00020001001c00040440ffff00fc040780d40a5508000000",
        "45000054000040004001254e0a0001220a00003a08008576",
        "17020001f7412b48000000007229080000000000",
        "101112131415161718191a1b1c1d1e1f202122232425262728292a2b",
        "2c2d2e2f3031323334353637",
        "0acca5df24a8"
    );
    /// Frame 5: UD SEND Only to a multicast GID (IPoIB ARP), LRH + GRH.
    const IB_GLOBAL: &str = concat!(
        "0003c000002100046000000000541b00fe800000000000000002c9020024f636",
        "ff12401bffff000000000000ffffffff6440ffff00ffffff000020af00000b1b",
        "0000040508060000002008001404000180000405fe800000000000000002c902",
        "0024f6360a00012200000000000000000000000000000000000000000a00003a",
        "bd6bd6a88883"
    );

    #[test]
    fn native_infiniband_icrcs_of_real_packets() {
        // LRH only: the LRH is covered with its VL set to ones.
        let f = hex(IB_LOCAL);
        let (lrh, rest) = f.split_at(8);
        let transport = &rest[..rest.len() - 6];
        let crc = compute(NetHeader::Lrh(lrh), transport);
        assert_eq!(to_trailer(crc), [0x0a, 0xcc, 0xa5, 0xdf]);
        // The VL is variant (a switch may move the packet to another lane)...
        let mut moved = f.clone();
        moved[0] = 0x30;
        assert_eq!(compute(NetHeader::Lrh(&moved[..8]), transport), crc);
        // ... the rest of the LRH is not.
        let mut other = f.clone();
        other[3] ^= 1; // DLID
        assert_ne!(compute(NetHeader::Lrh(&other[..8]), transport), crc);
        // With a GRH, the whole LRH is replaced by ones, as for RoCE v1.
        let g = hex(IB_GLOBAL);
        let grh = &g[8..48];
        let transport = &g[48..g.len() - 6];
        let crc = compute(NetHeader::Grh(grh), transport);
        assert_eq!(to_trailer(crc), [0xbd, 0x6b, 0xd6, 0xa8]);
        // The LRH's bits are not covered at all (DLID changed: same CRC).
        let mut routed = g.clone();
        routed[2] = 0x12;
        assert_eq!(
            compute(NetHeader::Grh(&routed[8..48]), &routed[48..g.len() - 6]),
            crc
        );
    }

    // Golden frames from ../shared/spec/roce-facts.md (captured on real NICs).
    const CNP: &str = "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a";
    const V1_WRITE: &str = "7cfe90753cd87cfe90753cd889156020000000281b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000020a70ffff0000010a80a788bc000055d4c0726000000047b3000000050000000001000000e3d856bb";
    const V1_ACK: &str = "7cfe90753cd87cfe90753cd889156020000000141b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000021140ffff0000010900a788c00000000525f0c038";

    #[test]
    fn lrh_prefix_state() {
        assert_eq!(crc32fast::hash(&[0xff; 8]), LRH_CRC);
    }

    #[test]
    fn connectx4lx_cnp_golden() {
        let f = hex(CNP);
        let crc = compute(
            NetHeader::Ipv4 {
                ip: &f[14..34],
                udp: &f[34..42],
            },
            &f[42..f.len() - 4],
        );
        assert_eq!(to_trailer(crc), [0x82, 0xfd, 0x00, 0x2a]);
        assert_eq!(stored([0x82, 0xfd, 0x00, 0x2a]), crc);
    }

    #[test]
    fn connectx_v1_golden() {
        for (frame, trailer) in [
            (V1_WRITE, [0xe3, 0xd8, 0x56, 0xbb]),
            (V1_ACK, [0x25, 0xf0, 0xc0, 0x38]),
        ] {
            let f = hex(frame);
            let crc = compute(NetHeader::Grh(&f[14..54]), &f[54..f.len() - 4]);
            assert_eq!(to_trailer(crc), trailer);
        }
    }

    #[test]
    fn variant_fields_do_not_matter_but_others_do() {
        let f = hex(CNP);
        let base = compute(
            NetHeader::Ipv4 {
                ip: &f[14..34],
                udp: &f[34..42],
            },
            &f[42..f.len() - 4],
        );
        let mut g = f.clone();
        g[15] ^= 0x03; // ECN bits: variant
        g[22] = 1; // TTL: variant
        g[46] |= 0x80; // FECN: variant
        let same = compute(
            NetHeader::Ipv4 {
                ip: &g[14..34],
                udp: &g[34..42],
            },
            &g[42..g.len() - 4],
        );
        assert_eq!(base, same);
        g[50] ^= 1; // PSN: invariant
        let other = compute(
            NetHeader::Ipv4 {
                ip: &g[14..34],
                udp: &g[34..42],
            },
            &g[42..g.len() - 4],
        );
        assert_ne!(base, other);
    }

    /// The four network headers with the usual sizes, from 40 bytes of
    /// IP (the first 20 for IPv4, the first 8 for the LRH) and a UDP header.
    fn every_net<'a>(ip: &'a [u8], udp: &'a [u8]) -> [NetHeader<'a>; 4] {
        [
            NetHeader::Ipv4 { ip: &ip[..20], udp },
            NetHeader::Ipv6 { ip, udp },
            NetHeader::Grh(ip),
            NetHeader::Lrh(&ip[..8]),
        ]
    }

    #[test]
    fn every_short_packet_agrees_with_the_general_way() {
        // ACKs and other packets with 0 to 40 bytes after the BTH: the
        // copied-whole way and the borrowed-block way, every length.
        let ip: Vec<u8> = (0..40u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(5))
            .collect();
        let udp = [0x12, 0xb7, 0x12, 0xb7, 0, 40, 0xaa, 0x55];
        let transport: Vec<u8> = (0..52u8).map(|i| i.wrapping_mul(91) ^ 0x3c).collect();
        for len in bth::LEN..=transport.len() {
            let t = &transport[..len];
            for net in every_net(&ip, &udp) {
                assert_eq!(
                    compute_common(net, t),
                    Some(compute_any(net, t)),
                    "{len} bytes"
                );
            }
        }
    }

    /// A frame laid out as the fast path sees it: `link` bytes before the
    /// network header, then the header (`net` bytes of `ip`, and `udp`
    /// unless `kind` is the GRH), the transport and a zero ICRC; with the
    /// header's offset and the ICRC's.
    fn framed(
        link: &[u8],
        ip: &[u8],
        udp: &[u8],
        transport: &[u8],
        kind: InPlace,
    ) -> (Vec<u8>, usize, usize) {
        let mut f = link.to_vec();
        match kind {
            InPlace::Ipv4 => f.extend_from_slice(&ip[..20]),
            InPlace::Ipv6 | InPlace::Grh => f.extend_from_slice(ip),
        }
        if kind != InPlace::Grh {
            f.extend_from_slice(udp);
        }
        f.extend_from_slice(transport);
        let icrc_at = f.len();
        f.extend_from_slice(&[0; LEN]);
        (f, link.len(), icrc_at)
    }

    #[test]
    fn in_place_agrees_with_the_copy() {
        use proptest::prelude::*;
        let mut runner = proptest::test_runner::TestRunner::default();
        runner
            .run(
                &(
                    proptest::collection::vec(any::<u8>(), 8..30),
                    proptest::collection::vec(any::<u8>(), 40),
                    proptest::collection::vec(any::<u8>(), 8),
                    proptest::collection::vec(any::<u8>(), 12..1200),
                ),
                |(link, ip, udp, transport)| {
                    for (kind, net) in [InPlace::Ipv4, InPlace::Ipv6, InPlace::Grh]
                        .into_iter()
                        .zip(every_net(&ip, &udp))
                    {
                        let (f, net_at, icrc_at) = framed(&link, &ip, &udp, &transport, kind);
                        prop_assert_eq!(
                            compute_in_place(&f, net_at, icrc_at, kind),
                            Some(compute(net, &transport)),
                            "{:?}",
                            kind
                        );
                    }
                    Ok(())
                },
            )
            .unwrap();
    }

    #[test]
    fn in_place_golden_and_out_of_range() {
        let f = hex(CNP);
        assert_eq!(
            compute_in_place(&f, 14, f.len() - 4, InPlace::Ipv4).map(to_trailer),
            Some([0x82, 0xfd, 0x00, 0x2a])
        );
        for (frame, trailer) in [
            (V1_WRITE, [0xe3, 0xd8, 0x56, 0xbb]),
            (V1_ACK, [0x25, 0xf0, 0xc0, 0x38]),
        ] {
            let f = hex(frame);
            assert_eq!(
                compute_in_place(&f, 14, f.len() - 4, InPlace::Grh).map(to_trailer),
                Some(trailer)
            );
        }
        // No room for the LRH stand-in, or an ICRC past the frame.
        assert_eq!(
            compute_in_place(&f[6..], 7, f.len() - 10, InPlace::Grh),
            None
        );
        assert_eq!(compute_in_place(&f, 14, f.len() + 1, InPlace::Grh), None);
    }

    #[test]
    fn common_sizes_agree_with_the_general_way() {
        use proptest::prelude::*;
        let mut runner = proptest::test_runner::TestRunner::default();
        runner
            .run(
                &(
                    proptest::collection::vec(any::<u8>(), 40),
                    proptest::collection::vec(any::<u8>(), 8),
                    proptest::collection::vec(any::<u8>(), 12..200),
                ),
                |(ip, udp, transport)| {
                    for net in every_net(&ip, &udp) {
                        // The one-pass way takes every whole packet.
                        let common = compute_common(net, &transport);
                        prop_assert_eq!(common, Some(compute_any(net, &transport)));
                    }
                    Ok(())
                },
            )
            .unwrap();
    }
}
