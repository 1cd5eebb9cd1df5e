//! The link and network layers' nodes: Ethernet, Linux cooked capture,
//! VLAN tags, ERF, STP, IPv4, IPv6 and its extension headers, ARP, ICMP,
//! IGMP, UDP, PAUSE and PFC.

use super::udp_apps::{dhcp_tree, dns_tree, nbns_tree, ssdp_tree};
use super::*;

/// The LLC header of a spanning tree BPDU at `at` and the BPDU, as
/// tshark's tree has them.
pub(super) fn stp_tree(t: &mut Tree<'_>, at: usize, bpdu: Option<&crate::wire::stp::Bpdu<'_>>) {
    let llc = at - crate::wire::stp::LLC_LEN;
    t.add(0, llc, 3, "Logical-Link Control");
    t.add(1, llc, 1, "DSAP: Spanning Tree BPDU (0x42)");
    t.add(1, llc + 1, 1, "SSAP: Spanning Tree BPDU (0x42)");
    t.add(1, llc + 2, 1, "Control field: U, func=UI (0x03)");
    let Some(b) = bpdu else {
        t.text(0, "Spanning Tree Protocol");
        t.text(1, "[Malformed Packet: the BPDU is cut short]");
        return;
    };
    let len = if b.is_tcn() { 4 } else { 35 };
    t.add(0, at, len, "Spanning Tree Protocol");
    t.add(
        1,
        at,
        2,
        format_args!(
            "Protocol Identifier: {} (0x{:04x})",
            if b.protocol() == 0 {
                "Spanning Tree Protocol"
            } else {
                "Unknown"
            },
            b.protocol()
        ),
    );
    let version = match b.version() {
        0 => "Spanning Tree",
        2 => "Rapid Spanning Tree",
        3 => "Multiple Spanning Tree",
        _ => "Unknown",
    };
    t.add(
        1,
        at + 2,
        1,
        format_args!("Protocol Version Identifier: {version} ({})", b.version()),
    );
    t.add(
        1,
        at + 3,
        1,
        format_args!("BPDU Type: {} (0x{:02x})", b.kind_name(), b.kind()),
    );
    if let Some(flags) = b.flags() {
        t.add(1, at + 4, 1, format_args!("BPDU flags: 0x{flags:02x}"));
        t.text(
            2,
            format_args!(
                "Topology Change Acknowledgment: {}",
                if flags & 0x80 != 0 { "Yes" } else { "No" }
            ),
        );
        t.text(
            2,
            format_args!(
                "Topology Change: {}",
                if flags & 1 != 0 { "Yes" } else { "No" }
            ),
        );
    }
    let id = |t: &mut Tree<'_>, off: usize, what: &str, id: crate::wire::stp::BridgeId| {
        t.add(
            1,
            at + off,
            8,
            format_args!(
                "{what} Identifier: {} / {} / {}",
                id.priority,
                id.ext,
                MacText(&id.mac)
            ),
        );
    };
    if let Some(r) = b.root() {
        id(t, 5, "Root", r);
    }
    if let Some(c) = b.root_cost() {
        t.add(1, at + 13, 4, format_args!("Root Path Cost: {c}"));
    }
    if let Some(r) = b.bridge() {
        id(t, 17, "Bridge", r);
    }
    if let Some(port) = b.port() {
        t.add(1, at + 25, 2, format_args!("Port identifier: 0x{port:04x}"));
    }
    if let Some(timers) = b.timers() {
        let names = ["Message Age", "Max Age", "Hello Time", "Forward Delay"];
        for (i, (name, v)) in names.iter().zip(timers).enumerate() {
            t.add(
                1,
                at + 27 + 2 * i,
                2,
                format_args!("{name}: {}", f64::from(v) / 256.0),
            );
        }
    }
}

/// An IPv6 extension header and, for Hop-by-Hop and Destination Options,
/// its options.
pub(super) fn ip6_extension(t: &mut Tree, p: &Packet<'_>, e: &Ip6Ext) {
    let at = usize::from(e.offset);
    let len = usize::from(e.len);
    t.add(1, at, len, names::ip_protocol(e.header));
    t.add(
        2,
        at,
        1,
        format_args!("Next Header: {} ({})", names::ip_protocol(e.next), e.next),
    );
    if let Some(&l) = p.data.get(at + 1) {
        t.add(2, at + 1, 1, format_args!("Length: {l} ({len} bytes)"));
    }
    if !matches!(e.header, 0 | 60) {
        return;
    }
    // Type-length-value options after the two first bytes.
    let end = at + len;
    let mut o = at + 2;
    while o < end {
        let Some(&kind) = p.data.get(o) else { break };
        if kind == 0 {
            t.add(2, o, 1, "Pad1");
            o += 1;
            continue;
        }
        let Some(&olen) = p.data.get(o + 1) else {
            break;
        };
        let olen = usize::from(olen);
        let mut text = format!("{} (0x{kind:02x}), length {olen}", names::ip6_option(kind));
        if kind == 5
            && olen == 2
            && let Some(v) = be16(p, o + 2)
        {
            let _ = write!(
                text,
                ": {}",
                if v == 0 {
                    "MLD (0)".to_string()
                } else {
                    v.to_string()
                }
            );
        }
        t.add(2, o, 2 + olen, text);
        o += 2 + olen;
    }
}

/// The ERF record header, as Wireshark shows it.
pub(super) fn erf_node(t: &mut Tree, e: &crate::wire::ErfRepr, frame_at: usize) {
    t.add(0, 0, frame_at, "Extensible Record Format");
    t.add(1, 0, 8, format_args!("Timestamp: 0x{:016x}", e.ts));
    t.add(
        1,
        8,
        1,
        format_args!(
            "Record type: 0x{:02x} (Type {}: {})",
            e.kind | if e.has_ext { 0x80 } else { 0 },
            e.kind,
            e.type_name()
        ),
    );
    t.add(
        2,
        8,
        1,
        format_args!("Extension header present: {}", u8::from(e.has_ext)),
    );
    t.add(
        1,
        9,
        1,
        format_args!("Flags: 0x{:02x} (Capture Interface: {})", e.flags, e.port()),
    );
    t.add(
        2,
        9,
        1,
        format_args!("Varying record length: {}", (e.flags >> 2) & 1),
    );
    t.add(
        2,
        9,
        1,
        format_args!("Truncated: {}", u8::from(e.truncated())),
    );
    t.add(
        2,
        9,
        1,
        format_args!("RX error: {}", u8::from(e.rx_error())),
    );
    t.add(
        2,
        9,
        1,
        format_args!("DS error: {}", u8::from(e.ds_error())),
    );
    t.add(1, 10, 2, format_args!("Record length: {}", e.rlen));
    t.add(
        1,
        12,
        2,
        if e.counts_losses() {
            format!("Loss counter: {}", e.lctr)
        } else {
            format!("Color: {}", e.lctr)
        },
    );
    t.add(1, 14, 2, format_args!("Wire length: {}", e.wlen));
}

/// Ethernet (with a BPDU) or Linux cooked capture, then VLAN tags, from
/// `base`: where they end.
pub(super) fn link_nodes(t: &mut Tree<'_>, p: &Packet<'_>, base: usize) -> usize {
    let mut l2_end = base;
    if let Some(e) = &p.eth {
        // A length where the EtherType would be: IEEE 802.3, with LLC.
        let ieee = e.ethertype < 0x0600;
        t.add(
            0,
            base,
            14,
            format_args!(
                "{}, Src: {}, Dst: {}",
                if ieee {
                    "IEEE 802.3 Ethernet"
                } else {
                    "Ethernet II"
                },
                MacText(&e.src),
                MacText(&e.dst)
            ),
        );
        t.add(1, base, 6, format_args!("Destination: {}", MacText(&e.dst)));
        t.add(1, base + 6, 6, format_args!("Source: {}", MacText(&e.src)));
        if ieee {
            t.add(1, base + 12, 2, format_args!("Length: {}", e.ethertype));
        } else {
            t.add(1, base + 12, 2, format_args!("Type: 0x{:04x}", e.ethertype));
        }
        l2_end = base + 14;
        if let Some((at, bpdu)) = p.stp() {
            stp_tree(t, at, bpdu.as_ref());
        }
    }
    if let Some(s) = &p.sll {
        let n = if p.link == crate::capture::LinkType::LinuxSll {
            16
        } else {
            20
        };
        t.add(0, 0, n, "Linux cooked capture");
        t.text(1, format_args!("Packet type: {}", s.packet_type));
        if let Some(m) = s.src_mac() {
            t.text(1, format_args!("Source: {}", MacText(&m)));
        }
        t.text(1, format_args!("Protocol: 0x{:04x}", s.protocol));
        l2_end = n;
    }
    for tag in p.vlan_tags() {
        t.add(
            0,
            l2_end,
            4,
            format_args!(
                "802.1Q Virtual LAN, PRI: {}, DEI: {}, ID: {}",
                tag.pcp,
                u8::from(tag.dei),
                tag.id
            ),
        );
        t.add(1, l2_end, 1, format_args!("Priority: {}", tag.pcp));
        t.add(1, l2_end, 1, format_args!("DEI: {}", u8::from(tag.dei)));
        t.add(1, l2_end, 2, format_args!("ID: {}", tag.id));
        t.add(
            1,
            l2_end + 2,
            2,
            format_args!("Type: 0x{:04x}", p.ethertype.unwrap_or(0)),
        );
        l2_end += 4;
    }
    l2_end
}

/// An IPv4 header at `at`.
pub(super) fn ipv4_node(t: &mut Tree<'_>, p: &Packet<'_>, ip: &crate::dissect::Ip, at: usize) {
    let hl = usize::from(ip.header_len);
    t.add(
        0,
        at,
        hl,
        format_args!(
            "Internet Protocol Version 4, Src: {}, Dst: {}",
            ip.src, ip.dst
        ),
    );
    t.add(
        1,
        at + 1,
        1,
        format_args!(
            "Differentiated Services Field: DSCP {} ({}), ECN {} ({})",
            ip.dscp,
            names::dscp(ip.dscp).unwrap_or("-"),
            ip.ecn,
            names::ecn(ip.ecn)
        ),
    );
    t.add(1, at + 2, 2, format_args!("Total Length: {}", ip.total_len));
    if let (Some(id), Some(frag), Some(sum)) = (be16(p, at + 4), be16(p, at + 6), be16(p, at + 10))
    {
        t.add(
            1,
            at + 4,
            2,
            format_args!("Identification: 0x{id:04x} ({id})"),
        );
        let flags = (frag >> 8) as u8 & 0xe0;
        let mut names = Vec::new();
        if flags & 0x40 != 0 {
            names.push("Don't fragment");
        }
        if flags & 0x20 != 0 {
            names.push("More fragments");
        }
        t.add(
            1,
            at + 6,
            1,
            format_args!(
                "Flags: 0x{:02x}{}{}",
                flags,
                if names.is_empty() { "" } else { ", " },
                names.join(", ")
            ),
        );
        t.add(
            1,
            at + 6,
            2,
            format_args!("Fragment Offset: {}", (frag & 0x1fff) * 8),
        );
        t.add(1, at + 8, 1, format_args!("Time to Live: {}", ip.ttl));
        t.add(
            1,
            at + 9,
            1,
            format_args!(
                "Protocol: {} ({})",
                names::ip_protocol(ip.protocol),
                ip.protocol
            ),
        );
        t.add(
            1,
            at + 10,
            2,
            format_args!("Header Checksum: 0x{sum:04x} [validation disabled]"),
        );
    } else {
        t.add(1, at + 8, 1, format_args!("Time to Live: {}", ip.ttl));
        t.add(1, at + 9, 1, format_args!("Protocol: {}", ip.protocol));
    }
    t.add(1, at + 12, 4, format_args!("Source Address: {}", ip.src));
    t.add(
        1,
        at + 16,
        4,
        format_args!("Destination Address: {}", ip.dst),
    );
}

/// An IPv6 header at `at`, and its extension headers.
pub(super) fn ipv6_node(t: &mut Tree<'_>, p: &Packet<'_>, ip: &crate::dissect::Ip, at: usize) {
    let hl = usize::from(ip.header_len);
    t.add(
        0,
        at,
        hl,
        format_args!(
            "Internet Protocol Version 6, Src: {}, Dst: {}",
            ip.src, ip.dst
        ),
    );
    t.add(
        1,
        at,
        2,
        format_args!(
            "Traffic Class: DSCP {} ({}), ECN {} ({})",
            ip.dscp,
            names::dscp(ip.dscp).unwrap_or("-"),
            ip.ecn,
            names::ecn(ip.ecn)
        ),
    );
    if let Some(w) = be32(p, at) {
        t.add(
            1,
            at + 1,
            3,
            format_args!("Flow Label: 0x{:05x}", w & 0xf_ffff),
        );
    }
    t.add(
        1,
        at + 4,
        2,
        format_args!("Payload Length: {}", ip.total_len.saturating_sub(40)),
    );
    let next = p.data.get(at + 6).copied().unwrap_or(ip.protocol);
    t.add(
        1,
        at + 6,
        1,
        format_args!("Next Header: {} ({next})", names::ip_protocol(next)),
    );
    t.add(1, at + 7, 1, format_args!("Hop Limit: {}", ip.ttl));
    t.add(1, at + 8, 16, format_args!("Source Address: {}", ip.src));
    t.add(
        1,
        at + 24,
        16,
        format_args!("Destination Address: {}", ip.dst),
    );
    for e in p.ip6_exts() {
        ip6_extension(t, p, e);
    }
}

/// An ARP message after the link layer (at `at`).
pub(super) fn arp_node(t: &mut Tree<'_>, a: &crate::dissect::Arp, at: usize) {
    t.add(
        0,
        at,
        28,
        format_args!(
            "Address Resolution Protocol ({})",
            match a.operation {
                1 => "request",
                2 => "reply",
                _ => "other",
            }
        ),
    );
    t.add(1, at + 6, 2, format_args!("Opcode: {}", a.operation));
    t.add(
        1,
        at + 8,
        6,
        format_args!("Sender MAC address: {}", MacText(&a.sender_mac)),
    );
    t.add(
        1,
        at + 14,
        4,
        format_args!("Sender IP address: {}", a.sender_ip),
    );
    t.add(
        1,
        at + 18,
        6,
        format_args!("Target MAC address: {}", MacText(&a.target_mac)),
    );
    t.add(
        1,
        at + 24,
        4,
        format_args!("Target IP address: {}", a.target_ip),
    );
}

/// ICMP or ICMPv6 (`title`): what the type and code mean (`meaning`),
/// then each of them.
pub(super) fn icmp_node(t: &mut Tree<'_>, title: &str, meaning: &str, kind: u8, code: u8) {
    t.text(0, format_args!("{title}: {meaning}"));
    t.text(1, format_args!("Type: {kind}"));
    t.text(1, format_args!("Code: {code}"));
}

/// IGMP at `offset`, `len` bytes.
pub(super) fn igmp_node(t: &mut Tree<'_>, p: &Packet<'_>, offset: u16, len: u16) {
    if let Some(m) = p.igmp() {
        let at = usize::from(offset);
        let version = m.version().map_or("?".to_string(), |v| v.to_string());
        t.add(
            0,
            at,
            usize::from(len),
            format_args!("Internet Group Management Protocol"),
        );
        // Generated, as tshark brackets it.
        t.text(1, format_args!("[IGMP Version: {version}]"));
        t.add(
            1,
            at,
            1,
            format_args!(
                "Type: {} (0x{:02x})",
                m.kind_name().unwrap_or("Unknown"),
                m.kind()
            ),
        );
        if let Some(tenths) = m.max_resp_time() {
            t.add(
                1,
                at + 1,
                1,
                format_args!(
                    "Max Resp Time: {}.{} sec (0x{:02x})",
                    tenths / 10,
                    tenths % 10,
                    m.max_resp()
                ),
            );
        }
        t.add(
            1,
            at + 2,
            2,
            format_args!("Checksum: 0x{:04x}", m.checksum()),
        );
        if m.kind() == crate::wire::igmp::V3_REPORT {
            t.add(
                1,
                at + 6,
                2,
                format_args!("Num Group Records: {}", m.record_count()),
            );
            for r in m.records() {
                t.text(
                    1,
                    format_args!(
                        "Group Record : {}  {}",
                        r.group,
                        r.kind_name().unwrap_or("")
                    ),
                );
                t.text(
                    2,
                    format_args!(
                        "Record Type: {} ({})",
                        r.kind_name().unwrap_or("Unknown"),
                        r.kind
                    ),
                );
                t.text(2, format_args!("Num Src: {}", r.source_count()));
                t.text(2, format_args!("Multicast Address: {}", r.group));
                for a in r.sources() {
                    t.text(2, format_args!("Source Address: {a}"));
                }
            }
        } else if m.version().is_some() {
            t.add(
                1,
                at + 4,
                4,
                format_args!("Multicast Address: {}", m.group()),
            );
            for a in m.query_sources() {
                t.text(1, format_args!("Source Address: {a}"));
            }
        }
    }
}

/// UDP, and what it carries (DNS, NBNS, DHCP, SSDP).
pub(super) fn udp_node(t: &mut Tree<'_>, p: &Packet<'_>, u: &crate::dissect::Udp) {
    let at = usize::from(u.offset);
    t.add(
        0,
        at,
        8,
        format_args!(
            "User Datagram Protocol, Src Port: {}, Dst Port: {}",
            u.sport, u.dport
        ),
    );
    t.add(1, at, 2, format_args!("Source Port: {}", u.sport));
    t.add(1, at + 2, 2, format_args!("Destination Port: {}", u.dport));
    t.add(1, at + 4, 2, format_args!("Length: {}", u.length));
    t.add(1, at + 6, 2, format_args!("Checksum: 0x{:04x}", u.checksum));
    if let Some(d) = p.dns() {
        dns_tree(t, &d);
    } else if let Some(u) = p.udp_app() {
        match u.app {
            crate::dissect::UdpApp::Nbns => nbns_tree(t, &u),
            crate::dissect::UdpApp::Dhcp => dhcp_tree(t, &u),
            crate::dissect::UdpApp::Ssdp => ssdp_tree(t, &u),
            crate::dissect::UdpApp::Dns(_) => {}
        }
    }
}

/// A PAUSE or PFC frame after the link layer (at `at`), its quanta in
/// time at `link_bps`.
pub(super) fn pause_node(t: &mut Tree<'_>, pause: &PauseRepr, at: usize, link_bps: u64) {
    match pause {
        PauseRepr::Pfc(pfc) => {
            t.add(
                0,
                at,
                20,
                "MAC Control: Priority-based Flow Control (802.1Qbb)",
            );
            t.add(1, at, 2, "Opcode: Class Based Flow Control (0x0101)");
            t.add(
                1,
                at + 2,
                2,
                format_args!("Class Enable Vector: 0x{:04x}", pfc.class_enable),
            );
            for (i, q) in pfc.times.iter().enumerate() {
                let on = if pfc.enabled(i as u8) {
                    ""
                } else {
                    " (disabled)"
                };
                t.add(
                    1,
                    at + 4 + 2 * i,
                    2,
                    format_args!(
                        "C{i} Pause Time: {q} quanta ({}){on}",
                        human_ns(quanta_to_ns(*q, link_bps))
                    ),
                );
            }
        }
        PauseRepr::Pause { time } => {
            t.add(0, at, 4, "MAC Control: Pause (802.3x)");
            t.add(1, at, 2, "Opcode: Pause (0x0001)");
            t.add(
                1,
                at + 2,
                2,
                format_args!(
                    "Pause Time: {time} quanta ({})",
                    human_ns(quanta_to_ns(*time, link_bps))
                ),
            );
        }
        PauseRepr::Other { opcode } => {
            t.add(0, at, 2, format_args!("MAC Control: opcode 0x{opcode:04x}"));
        }
    }
}
