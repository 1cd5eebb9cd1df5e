//! The Info column of the network's own control traffic: IGMP, IPv6
//! neighbour discovery, spanning tree, ARP.

use std::fmt::Write as _;

use crate::output::json::mac_string;
use crate::wire::igmp::{self, Igmp};

/// An IGMP message's summary, as tshark words it: `Membership Report group
/// 224.0.0.251`, `Membership Query, general`, `Membership Report / Join
/// group 224.1.1.50 for any sources`.
pub(super) fn write_igmp(s: &mut String, m: &Igmp<'_>) {
    let Some(name) = m.kind_name() else {
        let _ = write!(s, "Unknown Type:0x{:02x}", m.kind());
        return;
    };
    s.push_str(name);
    let group = m.group();
    match m.version() {
        Some(2) if group.is_unspecified() => s.push_str(", general"),
        Some(2) if m.kind() == igmp::LEAVE_GROUP => {
            let _ = write!(s, " {group}");
        }
        Some(2) if m.kind() == igmp::MEMBERSHIP_QUERY => {
            let _ = write!(s, ", specific for group {group}");
        }
        Some(2) => {
            let _ = write!(s, " group {group}");
        }
        Some(3) if m.kind() == igmp::MEMBERSHIP_QUERY => {
            if group.is_unspecified() {
                s.push_str(", general");
            } else {
                let _ = write!(s, ", specific for group {group}");
            }
            let sources: Vec<_> = m.query_sources().collect();
            if !sources.is_empty() {
                let _ = write!(
                    s,
                    ", source{} {{{}}}",
                    if sources.len() > 1 { "s" } else { "" },
                    igmp::join(sources.into_iter())
                );
            }
        }
        Some(3) => {
            if m.record_count() == 0 {
                s.push_str(" - General query");
            }
            for r in m.records() {
                s.push_str(" / ");
                s.push_str(&r.describe());
            }
        }
        // Version 1 names the message only.
        _ => {}
    }
}

/// What tshark adds to a neighbour discovery message's name: the target
/// (`for fe80::1`; an advertisement's flags, `fe80::1 (rtr, sol)`) and the
/// link-layer address its options give (`from 02:00:..`, `is at 02:00:..`).
pub(super) fn write_nd(s: &mut String, kind: u8, msg: &[u8]) {
    use crate::wire::ndp;
    match kind {
        ndp::NEIGHBOR_SOLICIT => {
            if let Some(t) = ndp::target(msg) {
                let _ = write!(s, " for {t}");
            }
        }
        ndp::NEIGHBOR_ADVERT => {
            if let Some(t) = ndp::target(msg) {
                let _ = write!(s, " {t} ({})", ndp::advert_flags(msg));
            }
        }
        ndp::ROUTER_SOLICIT | ndp::ROUTER_ADVERT | ndp::REDIRECT => {}
        _ => return,
    }
    for (kind, mac) in ndp::link_addresses(kind, msg) {
        let _ = match kind {
            ndp::SOURCE_LINK_ADDR => write!(s, " from {}", mac_string(&mac)),
            _ => write!(s, " is at {}", mac_string(&mac)),
        };
    }
}

/// A BPDU's summary, as tshark words it: `Conf. Root = 32768/1/00:11:..
/// Cost = 20000  Port = 0x8002` (`TC + ` before `Root` when the topology
/// changes; `RST.`, `MST.`), `Topology Change Notification`, or tshark's
/// `[Malformed Packet]` for one cut short.
pub(super) fn write_stp(s: &mut String, bpdu: Option<&crate::wire::stp::Bpdu<'_>>) {
    let Some(b) = bpdu else {
        s.push_str("[Malformed Packet]");
        return;
    };
    if b.is_tcn() {
        s.push_str("Topology Change Notification");
        return;
    }
    if let (Some(flags), Some(root), Some(cost), Some(port)) =
        (b.flags(), b.root(), b.root_cost(), b.port())
    {
        let _ = write!(
            s,
            "{} {}Root = {}/{}/{}  Cost = {cost}  Port = 0x{port:04x}",
            b.kind_label(),
            if flags & 1 != 0 { "TC + " } else { "" },
            root.priority,
            root.ext,
            mac_string(&root.mac)
        );
    }
}

/// An ARP message's Info: gratuitous ARP, announcements and probes
/// (RFC 5227) as tshark names them.
pub(super) fn write_arp_info(s: &mut String, a: &crate::dissect::Arp) {
    // Gratuitous ARP, announcements and probes (RFC 5227) as tshark
    // names them.
    let gratuitous = a.sender_ip == a.target_ip;
    let no_target_mac = a.target_mac == [0; 6];
    match a.operation {
        1 if gratuitous && no_target_mac => {
            let _ = write!(s, "ARP Announcement for {}", a.target_ip);
        }
        1 if gratuitous => {
            let _ = write!(s, "Gratuitous ARP for {} (Request)", a.target_ip);
        }
        1 if no_target_mac && a.sender_ip.is_unspecified() => {
            let _ = write!(s, "Who has {}? (ARP Probe)", a.target_ip);
        }
        1 => {
            let _ = write!(s, "Who has {}? Tell {}", a.target_ip, a.sender_ip);
        }
        2 if gratuitous => {
            let _ = write!(s, "Gratuitous ARP for {} (Reply)", a.sender_ip);
        }
        2 => {
            let _ = write!(s, "{} is at {}", a.sender_ip, mac_string(&a.sender_mac));
        }
        op => {
            let _ = write!(s, "ARP operation {op}");
        }
    }
}
