//! Link, network and UDP layers, through etherparse's lax slicing.

use etherparse::{
    EtherType, LaxLinkExtSlice, LaxNetSlice, LaxSlicedPacket, LinkSlice, TransportSlice,
};

use super::ib;
use super::roce::{self, Net};
use super::{
    Arp, DecodeError, DissectOptions, ETHERTYPE_ROCE_V1, Eth, Ip, Ip6Ext, OtherL4, Packet, Sll,
    Udp, VlanTag, offset_in, to_u16,
};
use crate::capture::LinkType;
use crate::wire::{PauseRepr, pause};

const SLL_LEN: usize = 16;
const SLL2_LEN: usize = 20;

pub(super) fn dissect_link(pkt: &mut Packet<'_>, opts: &DissectOptions) {
    match pkt.link {
        LinkType::Erf => ib::dissect_erf(pkt, opts),
        LinkType::InfiniBand => ib::dissect_ib(pkt, opts, 0),
        link => dissect_link_at(pkt, opts, link, 0),
    }
}

/// The frame from `start` on (after an ERF header, or 0), as `link`.
pub(super) fn dissect_link_at(
    pkt: &mut Packet<'_>,
    opts: &DissectOptions,
    link: LinkType,
    start: usize,
) {
    let data = pkt.data;
    let wire = data.get(start..).unwrap_or_default();
    let sliced = match link {
        LinkType::Erf | LinkType::InfiniBand => return,
        LinkType::Ethernet => match LaxSlicedPacket::from_ethernet(wire) {
            Ok(s) => s,
            Err(e) => {
                pkt.error = Some(DecodeError::Truncated {
                    layer: "Ethernet",
                    offset: start,
                    needed: e.required_len,
                    got: e.len,
                });
                return;
            }
        },
        LinkType::LinuxSll | LinkType::LinuxSll2 => {
            let Some((sll, hdr_len)) = cooked(wire, link) else {
                pkt.error = Some(DecodeError::Truncated {
                    layer: "Linux cooked header",
                    offset: 0,
                    needed: if link == LinkType::LinuxSll {
                        SLL_LEN
                    } else {
                        SLL2_LEN
                    },
                    got: data.len(),
                });
                return;
            };
            pkt.sll = Some(sll);
            let rest = wire.get(hdr_len..).unwrap_or_default();
            LaxSlicedPacket::from_ether_type(EtherType(sll.protocol), rest)
        }
        LinkType::RawIp | LinkType::Ipv4 | LinkType::Ipv6 => match LaxSlicedPacket::from_ip(wire) {
            Ok(s) => s,
            Err(_) => {
                pkt.error = Some(DecodeError::Truncated {
                    layer: "IP",
                    offset: start,
                    needed: 20,
                    got: wire.len(),
                });
                return;
            }
        },
    };

    if let Some(LinkSlice::Ethernet2(e)) = &sliced.link {
        pkt.eth = Some(Eth {
            src: e.source(),
            dst: e.destination(),
            ethertype: e.ether_type().0,
        });
    }
    let mut tags = 0usize;
    for ext in &sliced.link_exts {
        if let LaxLinkExtSlice::Vlan(v) = ext
            && let Some(slot) = pkt.vlans.get_mut(tags)
        {
            *slot = Some(VlanTag {
                tpid: 0,
                id: v.vlan_identifier().value(),
                pcp: v.priority_code_point().value(),
                dei: v.drop_eligible_indicator(),
            });
            tags = tags.saturating_add(1);
        }
    }
    fill_tpids(pkt, start);

    let ether_payload = sliced.ether_payload();
    if let Some(ep) = &ether_payload {
        let off = offset_in(data, ep.payload);
        match ep.ether_type.0 {
            // A tag etherparse did not open: more than it decodes.
            0x8100 | 0x88a8 | 0x9100 if tags >= pkt.vlans.len() => {
                pkt.error = Some(DecodeError::Invalid {
                    layer: "802.1Q",
                    offset: off,
                    what: "more than 3 VLAN tags: the rest of the frame is not decoded",
                });
            }
            0x0800 if sliced.net.is_none() && ep.payload.first().is_some_and(|b| b & 0x0f < 5) => {
                pkt.error = Some(DecodeError::Invalid {
                    layer: "IPv4",
                    offset: off,
                    what: "header length below 20 bytes (IHL < 5)",
                });
            }
            _ => {}
        }
    }
    if let Some(ep) = &ether_payload {
        pkt.ethertype = Some(ep.ether_type.0);
    }
    if link == LinkType::RawIp || link == LinkType::Ipv4 || link == LinkType::Ipv6 {
        pkt.ethertype = None;
    }

    match ether_payload.as_ref().map(|p| p.ether_type.0) {
        Some(ETHERTYPE_ROCE_V1) => {
            if let Some(ep) = ether_payload {
                let off = offset_in(data, ep.payload);
                let complete = !ep.incomplete;
                roce::dissect_v1(pkt, ep.payload, off, complete, opts);
            }
            return;
        }
        Some(pause::ETHERTYPE) => {
            if let Some(ep) = ether_payload {
                let off = offset_in(data, ep.payload);
                match PauseRepr::parse(ep.payload) {
                    Ok(p) => pkt.pause = Some(p),
                    Err(t) => {
                        pkt.error = Some(DecodeError::Truncated {
                            layer: t.layer,
                            offset: off,
                            needed: t.needed,
                            got: t.got,
                        })
                    }
                }
            }
            return;
        }
        _ => {}
    }

    let Some(net) = &sliced.net else {
        return;
    };
    let (ip_hdr, ip_payload) = match net {
        LaxNetSlice::Ipv4(v4) => {
            let h = v4.header();
            let hs = h.slice();
            pkt.ip = Some(Ip {
                version: 4,
                src: h.source_addr().into(),
                dst: h.destination_addr().into(),
                dscp: h.dcp().value(),
                ecn: h.ecn().value(),
                ttl: h.ttl(),
                protocol: h.protocol().0,
                total_len: u32::from(h.total_len()),
                header_len: to_u16(hs.len()),
                offset: to_u16(offset_in(data, hs)),
            });
            (hs, v4.payload())
        }
        LaxNetSlice::Ipv6(v6) => {
            let h = v6.header();
            let hs = h.slice();
            let tc = h.traffic_class();
            pkt.ip = Some(Ip {
                version: 6,
                src: h.source_addr().into(),
                dst: h.destination_addr().into(),
                dscp: tc >> 2,
                ecn: tc & 0x3,
                ttl: h.hop_limit(),
                protocol: v6.payload().ip_number.0,
                total_len: u32::from(h.payload_length()).saturating_add(40),
                header_len: to_u16(hs.len()),
                offset: to_u16(offset_in(data, hs)),
            });
            // The chain is walked here, on the captured bytes: etherparse's
            // own walk over a cut chain reads past it (found by fuzzing).
            let start = offset_in(data, hs).saturating_add(hs.len());
            ip6_chain(pkt, data, start, h.next_header().0);
            (hs, v6.payload())
        }
        LaxNetSlice::Arp(a) => {
            let ip4 = |b: &[u8]| -> Option<std::net::Ipv4Addr> {
                Some(<[u8; 4]>::try_from(b).ok()?.into())
            };
            let mac = |b: &[u8]| <[u8; 6]>::try_from(b).ok();
            if let (Some(sender_mac), Some(sender_ip), Some(target_mac), Some(target_ip)) = (
                mac(a.sender_hw_addr()),
                ip4(a.sender_protocol_addr()),
                mac(a.target_hw_addr()),
                ip4(a.target_protocol_addr()),
            ) {
                pkt.arp = Some(Arp {
                    operation: a.operation().0,
                    sender_mac,
                    sender_ip,
                    target_mac,
                    target_ip,
                });
            }
            return;
        }
    };

    match &sliced.transport {
        Some(TransportSlice::Udp(u)) => {
            let hdr = u.header_slice();
            let udp = Udp {
                sport: u.source_port(),
                dport: u.destination_port(),
                length: u.length(),
                checksum: u.checksum(),
                offset: to_u16(offset_in(data, hdr)),
            };
            pkt.udp = Some(udp);
            if udp.dport == opts.roce_port {
                let payload = u.payload();
                let claimed = usize::from(udp.length).saturating_sub(8);
                let complete = !ip_payload.incomplete && payload.len() >= claimed && claimed > 0;
                let net = match pkt.ip.map(|i| i.version) {
                    Some(4) => Net::Ipv4 {
                        ip: ip_hdr,
                        udp: hdr,
                    },
                    _ => Net::Ipv6 {
                        ip: ip_hdr,
                        udp: hdr,
                    },
                };
                let off = offset_in(data, payload);
                roce::dissect_v2(pkt, payload, claimed, off, complete, net, opts);
            }
        }
        Some(TransportSlice::Tcp(t)) => {
            let bytes = t.slice();
            pkt.other_l4 = Some(OtherL4::Tcp {
                sport: t.source_port(),
                dport: t.destination_port(),
                offset: to_u16(offset_in(data, bytes)),
                len: to_u16(bytes.len()),
            })
        }
        Some(TransportSlice::Icmpv4(i)) => {
            pkt.other_l4 = Some(OtherL4::Icmp {
                kind: i.type_u8(),
                code: i.code_u8(),
            })
        }
        Some(TransportSlice::Icmpv6(i)) => {
            let bytes = i.slice();
            pkt.other_l4 = Some(OtherL4::Icmpv6 {
                kind: i.type_u8(),
                code: i.code_u8(),
                offset: to_u16(offset_in(data, bytes)),
                len: to_u16(bytes.len()),
            })
        }
        Some(TransportSlice::Igmp(g)) => {
            let bytes = g.slice();
            pkt.other_l4 = Some(OtherL4::Igmp {
                offset: to_u16(offset_in(data, bytes)),
                len: to_u16(bytes.len()),
            })
        }
        None => {
            let proto = ip_payload.ip_number.0;
            pkt.other_l4 = Some(OtherL4::Other(proto));
            // A UDP header cut short on a frame that may be RoCE: say so.
            if proto == 17 && ip_payload.payload.len() < 8 {
                pkt.error = Some(DecodeError::Truncated {
                    layer: "UDP",
                    offset: offset_in(data, ip_payload.payload),
                    needed: 8,
                    got: ip_payload.payload.len(),
                });
            }
        }
    }
}

/// Records the IPv6 extension headers from `at` on, the first announced
/// as `next`: as many as are captured whole, up to [`MAX_IP6_EXT`].
fn ip6_chain(pkt: &mut Packet<'_>, data: &[u8], mut at: usize, mut next: u8) {
    for slot in &mut pkt.ip6_ext {
        // Hop-by-Hop, Routing, Fragment, Destination Options, AH, and the
        // mobility and HIP/shim6 headers, which share the layout.
        if !matches!(next, 0 | 43 | 44 | 60 | 51 | 135 | 139 | 140) {
            return;
        }
        let (Some(&n), Some(&l)) = (data.get(at), data.get(at.saturating_add(1))) else {
            return;
        };
        let len = match next {
            44 => 8,
            51 => (usize::from(l).saturating_add(2)).saturating_mul(4),
            _ => (usize::from(l).saturating_add(1)).saturating_mul(8),
        };
        if data.len() < at.saturating_add(len) {
            return;
        }
        *slot = Some(Ip6Ext {
            header: next,
            next: n,
            offset: to_u16(at),
            len: to_u16(len),
        });
        at = at.saturating_add(len);
        next = n;
    }
}

/// The TPID of each tag: the EtherType field that announced it.
fn fill_tpids(pkt: &mut Packet<'_>, start: usize) {
    let Some(eth) = pkt.eth else {
        return;
    };
    let mut tpid = eth.ethertype;
    let mut at = start.saturating_add(12);
    for slot in pkt.vlans.iter_mut().flatten() {
        slot.tpid = tpid;
        at = at.saturating_add(4);
        let next = pkt
            .data
            .get(at..at.saturating_add(2))
            .and_then(|b| b.first_chunk::<2>())
            .map(|b| u16::from_be_bytes(*b))
            .unwrap_or(0);
        tpid = next;
    }
}

fn cooked(data: &[u8], link: LinkType) -> Option<(Sll, usize)> {
    let be16 = |at: usize| -> Option<u16> {
        let b = data.get(at..at.checked_add(2)?)?;
        Some(u16::from_be_bytes(b.try_into().ok()?))
    };
    let addr_at = |at: usize| -> Option<[u8; 8]> {
        let b = data.get(at..at.checked_add(8)?)?;
        b.try_into().ok()
    };
    if link == LinkType::LinuxSll {
        // pkttype(2) hatype(2) halen(2) addr(8) protocol(2)
        let addr = addr_at(6)?;
        Some((
            Sll {
                packet_type: be16(0)?,
                addr_len: u8::try_from(be16(4)?.min(8)).unwrap_or(8),
                addr,
                protocol: be16(14)?,
            },
            SLL_LEN,
        ))
    } else {
        // protocol(2) resv(2) ifindex(4) hatype(2) pkttype(1) halen(1) addr(8)
        let addr = addr_at(12)?;
        Some((
            Sll {
                packet_type: u16::from(*data.get(10)?),
                addr_len: (*data.get(11)?).min(8),
                addr,
                protocol: be16(0)?,
            },
            SLL2_LEN,
        ))
    }
}
