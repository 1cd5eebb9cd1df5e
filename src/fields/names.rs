//! The names of field values that filters may use in place of numbers
//! (Wireshark's value strings): `ip.proto == "UDP"`, `eth.type == "IPv4"`,
//! `infiniband.bth.opcode == "Reliable Connection (RC) - RDMA WRITE
//! First"`. tshark's name of each value comes first; where roce-dissect
//! prints a value under another name (its summary lines, its trees), that
//! name is accepted too. `tests/fields_tshark.rs` holds these tables to
//! `tshark -G values`.
//!
//! The EtherTypes and IP protocols are those a RoCE fabric's captures
//! carry, not every one Wireshark knows; `roce-dissect fields --values`
//! lists them all.

use std::sync::OnceLock;

use crate::wire::{Opcode, Operation, Transport};

/// EtherTypes (`eth.type`, `vlan.etype`): tshark's names, then the
/// summary line's (`RoCE`, `LLDP`).
pub fn ethertype() -> &'static [(u64, &'static str)] {
    const TSHARK: [(u16, &str); 16] = [
        (0x0800, "IPv4"),
        (0x0806, "ARP"),
        (0x86dd, "IPv6"),
        (0x8100, "802.1Q Virtual LAN"),
        (0x88a8, "802.1ad Provider Bridge (Q-in-Q)"),
        (0x8808, "MAC Control"),
        (0x8809, "Slow Protocols"),
        (0x888e, "802.1X Authentication"),
        (0x88cc, "802.1 Link Layer Discovery Protocol (LLDP)"),
        (0x88f7, "PTPv2 over Ethernet (IEEE1588)"),
        (0x8915, "RDMA over Converged Ethernet"),
        (0x8906, "Fibre Channel over Ethernet"),
        (0x8914, "FCoE Initialization Protocol"),
        (0x8847, "MPLS label switched packet"),
        (
            0x893a,
            "1905.1a Convergent Digital Home Network for Heterogenous Technologies",
        ),
        (0x9100, "QinQ: old non-standard 802.1ad"),
    ];
    static NAMES: OnceLock<Vec<(u64, &'static str)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        with_ours(TSHARK.map(|(v, n)| (u64::from(v), n)), |v| {
            crate::output::names::ethertype(v as u16)
        })
    })
}

/// IP protocols and IPv6 next headers (`ip.proto`, `ipv6.nxt`): tshark's
/// names, then the summary line's where they differ.
pub fn ip_protocol() -> &'static [(u64, &'static str)] {
    const TSHARK: [(u8, &str); 19] = [
        (0, "IPv6 Hop-by-Hop Option"),
        (1, "ICMP"),
        (2, "IGMP"),
        (4, "IPIP"),
        (6, "TCP"),
        (17, "UDP"),
        (41, "IPv6"),
        (43, "Routing Header for IPv6"),
        (44, "Fragment Header for IPv6"),
        (47, "Generic Routing Encapsulation"),
        (50, "Encap Security Payload"),
        (51, "Authentication Header"),
        (58, "ICMPv6"),
        (59, "No Next Header for IPv6"),
        (60, "Destination Options for IPv6"),
        (89, "OSPF IGP"),
        (103, "PIM"),
        (112, "VRRP"),
        (132, "SCTP"),
    ];
    static NAMES: OnceLock<Vec<(u64, &'static str)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        with_ours(TSHARK.map(|(v, n)| (u64::from(v), n)), |v| {
            Some(crate::output::names::ip_protocol(v as u8)).filter(|n| *n != "unknown")
        })
    })
}

/// Each of tshark's names, followed by roce-dissect's for the same value
/// where it is another word.
fn with_ours(
    tshark: impl IntoIterator<Item = (u64, &'static str)>,
    ours: impl Fn(u64) -> Option<&'static str>,
) -> Vec<(u64, &'static str)> {
    let mut v = Vec::new();
    for (value, name) in tshark {
        v.push((value, name));
        if let Some(o) = ours(value).filter(|o| !o.eq_ignore_ascii_case(name)) {
            v.push((value, o));
        }
    }
    v
}

/// The ECN codepoint (`ip.dsfield.ecn`, `ipv6.tclass.ecn`): tshark's
/// words, then RFC 3168's (`ECT(0)`, `CE`), as the tree writes them.
pub fn ecn() -> &'static [(u64, &'static str)] {
    const TSHARK: [(u64, &str); 4] = [
        (0, "Not ECN-Capable Transport"),
        (1, "ECN-Capable Transport codepoint '01'"),
        (2, "ECN-Capable Transport codepoint '10'"),
        (3, "Congestion Experienced"),
    ];
    static NAMES: OnceLock<Vec<(u64, &'static str)>> = OnceLock::new();
    NAMES.get_or_init(|| with_ours(TSHARK, |v| Some(crate::output::names::ecn(v as u8))))
}

/// DiffServ codepoints (`ip.dsfield.dscp`, `ipv6.tclass.dscp`): tshark's
/// words, then the short names the tree writes (`CS3`, `AF41`).
pub fn dscp() -> &'static [(u64, &'static str)] {
    const TSHARK: [(u64, &str); 23] = [
        (0, "Default"),
        (1, "Lower Effort"),
        (8, "Class Selector 1"),
        (10, "Assured Forwarding 11"),
        (12, "Assured Forwarding 12"),
        (14, "Assured Forwarding 13"),
        (16, "Class Selector 2"),
        (18, "Assured Forwarding 21"),
        (20, "Assured Forwarding 22"),
        (22, "Assured Forwarding 23"),
        (24, "Class Selector 3"),
        (26, "Assured Forwarding 31"),
        (28, "Assured Forwarding 32"),
        (30, "Assured Forwarding 33"),
        (32, "Class Selector 4"),
        (34, "Assured Forwarding 41"),
        (36, "Assured Forwarding 42"),
        (38, "Assured Forwarding 43"),
        (40, "Class Selector 5"),
        (44, "Voice Admit"),
        (46, "Expedited Forwarding"),
        (48, "Class Selector 6"),
        (56, "Class Selector 7"),
    ];
    static NAMES: OnceLock<Vec<(u64, &'static str)>> = OnceLock::new();
    NAMES.get_or_init(|| with_ours(TSHARK, |v| crate::output::names::dscp(v as u8)))
}

/// `ip.flags.*`.
pub fn set_not_set() -> &'static [(u64, &'static str)] {
    &[(1, "Set"), (0, "Not set")]
}

/// `vlan.dei`.
pub fn eligible() -> &'static [(u64, &'static str)] {
    &[(1, "Eligible"), (0, "Ineligible")]
}

/// The AETH syndrome's kind (`infiniband.aeth.syndrome.opcode`).
pub fn aeth_kind() -> &'static [(u64, &'static str)] {
    &[(0, "Ack"), (1, "RNR Nak"), (2, "Reserved"), (3, "Nak")]
}

/// A NAK's code (`infiniband.aeth.syndrome.error_code`).
pub fn nak_code() -> &'static [(u64, &'static str)] {
    &[
        (0, "PSN Sequence Error"),
        (1, "Invalid Request"),
        (2, "Remote Access Error"),
        (3, "Remote Operational Error"),
        (4, "Invalid RD Request"),
    ]
}

/// An RNR NAK's timer (`infiniband.aeth.syndrome.timer`), as tshark
/// words it: `"0.01 ms"`.
pub fn rnr_timer() -> &'static [(u64, &'static str)] {
    static NAMES: OnceLock<Vec<(u64, &'static str)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        (0..32u8)
            .map(|code| {
                let ms = crate::wire::aeth::rnr_timer_us(code) / 1000.0;
                let text: &'static str = Box::leak(format!("{ms:.2} ms").into_boxed_str());
                (u64::from(code), text)
            })
            .collect()
    })
}

/// A MAD's method (`infiniband.mad.method`): tshark's `Get()` and the
/// IBA's `Get`.
pub fn mad_method() -> &'static [(u64, &'static str)] {
    static NAMES: OnceLock<Vec<(u64, &'static str)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut v = Vec::new();
        for m in 0..=u8::MAX {
            let name = crate::wire::mad::method_name(m);
            if name != "Method" {
                v.push((
                    u64::from(m),
                    &*Box::leak(format!("{name}()").into_boxed_str()),
                ));
                v.push((u64::from(m), name));
            }
        }
        v
    })
}

/// MAC Control opcodes (`macc.opcode`).
pub fn mac_control() -> &'static [(u64, &'static str)] {
    &[
        (0x0001, "Pause"),
        (0x0002, "Gate"),
        (0x0003, "Report"),
        (0x0004, "Register Req"),
        (0x0005, "Register"),
        (0x0006, "Register Ack"),
        (0x0101, "Class Based Flow Control [CBFC] Pause"),
        (0x0101, "PFC"),
    ]
}

/// NVMe-oF Fabrics command types (`nvme.fabrics.cmd.fctype`).
pub fn fabrics_type() -> &'static [(u64, &'static str)] {
    use crate::wire::nvme::fctype as f;
    static NAMES: OnceLock<Vec<(u64, &'static str)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut v = Vec::new();
        for t in [
            f::PROPERTY_SET,
            f::CONNECT,
            f::PROPERTY_GET,
            f::AUTH_SEND,
            f::AUTH_RECEIVE,
            f::DISCONNECT,
        ] {
            if t == f::AUTH_RECEIVE {
                // tshark's word first.
                v.push((u64::from(t), "Authentication Recv"));
            }
            v.push((u64::from(t), f::name(t)));
        }
        v
    })
}

/// BTH opcodes (`infiniband.bth.opcode`): tshark's long names
/// (`Reliable Connection (RC) - RDMA WRITE First`) and the short ones of
/// the summary lines and `bth.opcode_name` (`RC RDMA WRITE First`).
/// `"CNP"` is 0x81, the opcode RoCE v2 CNPs carry (tshark's table puts it
/// at 0x80, where no CNP is).
pub fn bth_opcode() -> &'static [(u64, &'static str)] {
    static NAMES: OnceLock<Vec<(u64, &'static str)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut v = Vec::new();
        for code in 0..=u8::MAX {
            let op = Opcode(code);
            let Some(operation) = op.operation() else {
                // tshark names RC's reserved 0x15 too.
                if code == 0x15 {
                    v.push((0x15, "Reliable Connection (RC) - Reserved"));
                }
                continue;
            };
            let short = op.name();
            let service = match op.transport() {
                Transport::Rc => "Reliable Connection (RC)",
                Transport::Uc => "Unreliable Connection (UC)",
                Transport::Rd => "Reliable Datagram (RD)",
                Transport::Ud => "Unreliable Datagram (UD)",
                Transport::Xrc => "Extended Reliable Connection (XRC)",
                _ => {
                    v.push((u64::from(code), short));
                    continue;
                }
            };
            let what = short.split_once(' ').map_or(short, |(_, w)| w);
            // RESYNC is the RD service's alone.
            if operation == Operation::Resync && op.transport() != Transport::Rd {
                continue;
            }
            let long: &'static str = Box::leak(format!("{service} - {what}").into_boxed_str());
            v.push((u64::from(code), long));
            v.push((u64::from(code), short));
        }
        v
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_read_as_their_values() {
        let opcode = crate::fields::lookup("infiniband.bth.opcode").unwrap();
        assert_eq!(
            opcode.value_named("Reliable Connection (RC) - RDMA WRITE First"),
            Some(6)
        );
        assert_eq!(
            opcode.value_named("reliable connection (rc) - rdma read response only"),
            Some(16)
        );
        assert_eq!(opcode.value_named("RC RDMA WRITE First"), Some(6));
        assert_eq!(opcode.value_named("UD SEND only"), Some(100));
        assert_eq!(opcode.value_named("CNP"), Some(0x81));
        assert_eq!(
            opcode.value_named("Reliable Connection (RC) - Reserved"),
            Some(21)
        );
        assert_eq!(opcode.value_named("RD RESYNC"), Some(85));
        assert_eq!(opcode.value_named("Writes"), None);
        let timer = crate::fields::lookup("infiniband.aeth.syndrome.timer").unwrap();
        assert_eq!(timer.value_named("655.36 ms"), Some(0));
        assert_eq!(timer.value_named("0.01 ms"), Some(1));
        assert_eq!(timer.value_named("491.52 ms"), Some(31));
        let method = crate::fields::lookup("infiniband.mad.method").unwrap();
        assert_eq!(method.value_named("GetResp()"), Some(0x81));
        assert_eq!(method.value_named("getresp"), Some(0x81));
        let ecn = crate::fields::lookup("ip.dsfield.ecn").unwrap();
        assert_eq!(ecn.value_named("ce"), Some(3));
        assert_eq!(ecn.value_named("ECT(0)"), Some(2));
        let dscp = crate::fields::lookup("ip.dsfield.dscp").unwrap();
        assert_eq!(dscp.value_named("af31"), Some(26));
        assert_eq!(dscp.value_named("Assured Forwarding 31"), Some(26));
        let ethertype = crate::fields::lookup("eth.type").unwrap();
        assert_eq!(ethertype.value_named("RoCE"), Some(0x8915));
        assert_eq!(ethertype.value_named("IPv4"), Some(0x0800));
        let proto = crate::fields::lookup("ip.proto").unwrap();
        assert_eq!(proto.value_named("gre"), Some(47));
        assert!(crate::fields::lookup("bth.psn").unwrap().names.is_none());
    }

    #[test]
    fn every_table_names_values_its_field_can_hold() {
        for f in crate::fields::FIELDS {
            let Some(names) = f.names else { continue };
            let max = match f.ty {
                crate::fields::FieldType::Uint(bits) => (1u128 << bits) - 1,
                crate::fields::FieldType::Bool => 1,
                t => panic!("{} is {t:?} and has value names", f.name),
            };
            assert!(!names().is_empty(), "{}", f.name);
            for (v, n) in names() {
                assert!(u128::from(*v) <= max, "{}: {n} is {v}", f.name);
                assert!(!n.trim().is_empty() && n.trim() == *n, "{}: {n:?}", f.name);
                // The first value a name reads as is the one it stands
                // for: no name may stand for two values.
                assert_eq!(f.value_named(n), Some(*v), "{}: {n} twice", f.name);
            }
        }
    }
}
