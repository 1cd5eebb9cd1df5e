//! Native InfiniBand (LRH, optional GRH, then the transport headers RoCE
//! shares) and the Endace ERF records that carry it (and Ethernet or IP)
//! in `DLT_ERF` captures, as ibdump writes them on InfiniBand ports.

use super::roce::{self};
use super::{DecodeError, DissectOptions, Packet, RoceVersion, Vcrc, link, to_u16};
use crate::capture::LinkType;
use crate::wire::erf::{self, ErfPayload};
use crate::wire::icrc::NetHeader;
use crate::wire::lrh::{self, Lnh};
use crate::wire::{ErfRepr, GrhRepr, LrhRepr, grh, vcrc};

/// An ERF record: its header, then the frame by the record's type.
pub(super) fn dissect_erf(pkt: &mut Packet<'_>, opts: &DissectOptions) {
    let data = pkt.data;
    let hdr = match ErfRepr::parse(data) {
        Ok(h) => h,
        Err(t) => {
            pkt.error = Some(DecodeError::Truncated {
                layer: t.layer,
                offset: 0,
                needed: t.needed,
                got: t.got,
            });
            return;
        }
    };
    pkt.erf = Some(hdr);
    let start = match erf::frame_offset(&hdr, data) {
        Ok(s) => s,
        Err(t) => {
            pkt.error = Some(DecodeError::Truncated {
                layer: t.layer,
                offset: erf::LEN,
                needed: t.needed,
                got: t.got,
            });
            return;
        }
    };
    pkt.frame_start = to_u16(start);
    // The frame's own lengths: what the wire carried (wlen) and what was
    // kept of it, as Wireshark counts them.
    let kept = data.len().saturating_sub(start);
    pkt.caplen = u32::try_from(kept).unwrap_or(u32::MAX);
    pkt.len = u32::from(hdr.wlen).max(pkt.caplen);
    match hdr.payload() {
        ErfPayload::InfiniBand
            if ethernet_inside(data.get(start..).unwrap_or_default(), hdr.wlen) =>
        {
            link::dissect_link_at(pkt, opts, LinkType::Ethernet, start)
        }
        ErfPayload::InfiniBand => dissect_ib(pkt, opts, start),
        ErfPayload::Ethernet => link::dissect_link_at(pkt, opts, LinkType::Ethernet, start),
        ErfPayload::Ipv4 | ErfPayload::Ipv6 => {
            link::dissect_link_at(pkt, opts, LinkType::RawIp, start)
        }
        ErfPayload::Other => {}
    }
}

/// Whether a record typed InfiniBand holds an Ethernet frame, as ibdump
/// writes with `--erf 1` on an Ethernet (RoCE) port: its LRH's length
/// does not match the record's wire length `wlen` (a native packet is
/// PktLen words and the VCRC, however much of it was captured) and an
/// EtherType of RoCE traffic sits where Ethernet has it.
fn ethernet_inside(frame: &[u8], wlen: u16) -> bool {
    let Ok(l) = LrhRepr::parse(frame) else {
        return false;
    };
    let fits = l.packet_bytes().saturating_add(vcrc::LEN) == usize::from(wlen);
    let ethertype = frame
        .get(12..14)
        .and_then(|b| b.first_chunk::<2>())
        .map(|b| u16::from_be_bytes(*b));
    !fits
        && matches!(
            ethertype,
            Some(0x0800 | 0x86dd | 0x8915 | 0x8100 | 0x88a8 | 0x8808 | 0x0806)
        )
}

/// A native InfiniBand packet whose LRH starts at `at` in the frame.
pub(super) fn dissect_ib(pkt: &mut Packet<'_>, opts: &DissectOptions, at: usize) {
    let data = pkt.data;
    let bytes = data.get(at..).unwrap_or_default();
    let l = match LrhRepr::parse(bytes) {
        Ok(l) => l,
        Err(t) => {
            pkt.error = Some(DecodeError::Truncated {
                layer: t.layer,
                offset: at,
                needed: t.needed,
                got: t.got,
            });
            return;
        }
    };
    pkt.lrh = Some(l);
    pkt.offsets.lrh = Some(to_u16(at));
    pkt.frame_start = to_u16(at);
    let packet_len = l.packet_bytes();
    // The VCRC covers the whole packet, variant fields included.
    if bytes.len() >= packet_len.saturating_add(vcrc::LEN) && packet_len > 0 {
        if let (Some(covered), Some(trailer)) = (
            bytes.get(..packet_len),
            bytes
                .get(packet_len..packet_len.saturating_add(vcrc::LEN))
                .and_then(|t| t.first_chunk::<2>()),
        ) {
            let expected = opts
                .check_icrc
                .then(|| u16::from_be_bytes(vcrc::to_trailer(vcrc::compute(covered))));
            let value = u16::from_be_bytes(*trailer);
            pkt.vcrc = Some(Vcrc {
                value: Some(value),
                expected,
                valid: expected.map(|e| e == value),
            });
            pkt.offsets.vcrc = Some(to_u16(at.saturating_add(packet_len)));
        }
    } else {
        pkt.vcrc = Some(Vcrc::default());
    }
    let after = at.saturating_add(lrh::LEN);
    match l.lnh {
        Lnh::Local => {
            pkt.roce = Some(RoceVersion::Ib);
            let transport = data.get(after..).unwrap_or_default();
            let claimed = packet_len.saturating_sub(lrh::LEN);
            let lrh_bytes = bytes.get(..lrh::LEN).unwrap_or_default();
            roce::dissect_ib_transport(
                pkt,
                transport,
                claimed,
                after,
                NetHeader::Lrh(lrh_bytes),
                opts,
            );
        }
        Lnh::Global => {
            pkt.roce = Some(RoceVersion::Ib);
            let rest = data.get(after..).unwrap_or_default();
            let g = match GrhRepr::parse(rest) {
                Ok(g) => g,
                Err(t) => {
                    pkt.error = Some(DecodeError::Truncated {
                        layer: t.layer,
                        offset: after,
                        needed: t.needed,
                        got: t.got,
                    });
                    return;
                }
            };
            pkt.grh = Some(g);
            pkt.offsets.grh = Some(to_u16(after));
            if g.nxt_hdr != grh::NEXT_HEADER_BTH {
                pkt.error = Some(DecodeError::NotBth {
                    next_header: g.nxt_hdr,
                    offset: after,
                });
                return;
            }
            let grh_bytes = rest.get(..grh::LEN).unwrap_or_default();
            let transport = rest.get(grh::LEN..).unwrap_or_default();
            let claimed = packet_len.saturating_sub(lrh::LEN + grh::LEN);
            roce::dissect_ib_transport(
                pkt,
                transport,
                claimed,
                after.saturating_add(grh::LEN),
                NetHeader::Grh(grh_bytes),
                opts,
            );
        }
        Lnh::Raw => {
            // A raw packet: a 4-byte raw header whose last two bytes are an
            // EtherType (IPv4, ARP... carried natively).
            if let Some(t) = data
                .get(after.saturating_add(2)..after.saturating_add(4))
                .and_then(|b| b.first_chunk::<2>())
            {
                pkt.ethertype = Some(u16::from_be_bytes(*t));
            }
        }
        Lnh::Ipv6 => pkt.ethertype = Some(0x86dd),
    }
}
