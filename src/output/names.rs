//! Names of the protocol numbers a RoCE capture also carries (ARP, ICMP,
//! the IP protocols, IPv6 extension headers), as tshark shows them.

pub use crate::dissect::protocol::ethertype_name as ethertype;

/// The ECN codepoint's name (RFC 3168).
pub fn ecn(ecn: u8) -> &'static str {
    match ecn & 3 {
        0 => "Not-ECT",
        1 => "ECT(1)",
        2 => "ECT(0)",
        _ => "CE",
    }
}

/// A DiffServ codepoint's name, as switch configurations write them
/// (RFC 2474, 2597, 3246, 5865, 8622).
pub fn dscp(d: u8) -> Option<&'static str> {
    Some(match d {
        0 => "CS0",
        1 => "LE",
        8 => "CS1",
        10 => "AF11",
        12 => "AF12",
        14 => "AF13",
        16 => "CS2",
        18 => "AF21",
        20 => "AF22",
        22 => "AF23",
        24 => "CS3",
        26 => "AF31",
        28 => "AF32",
        30 => "AF33",
        32 => "CS4",
        34 => "AF41",
        36 => "AF42",
        38 => "AF43",
        40 => "CS5",
        44 => "VA",
        46 => "EF",
        48 => "CS6",
        56 => "CS7",
        _ => return None,
    })
}

/// An IP protocol (or IPv6 next header) name.
pub fn ip_protocol(p: u8) -> &'static str {
    match p {
        0 => "IPv6 Hop-by-Hop Option",
        1 => "ICMP",
        2 => "IGMP",
        4 => "IPIP",
        6 => "TCP",
        17 => "UDP",
        41 => "IPv6",
        43 => "Routing Header for IPv6",
        44 => "Fragment Header for IPv6",
        47 => "GRE",
        50 => "ESP",
        51 => "AH",
        58 => "ICMPv6",
        59 => "IPv6 No Next Header",
        60 => "Destination Options for IPv6",
        89 => "OSPF",
        103 => "PIM",
        112 => "VRRP",
        132 => "SCTP",
        _ => "unknown",
    }
}

/// The summary of an ICMP message.
pub fn icmp(kind: u8, code: u8) -> String {
    let name = match kind {
        0 => "Echo (ping) reply",
        3 => "Destination unreachable",
        5 => "Redirect",
        8 => "Echo (ping) request",
        11 => "Time-to-live exceeded",
        12 => "Parameter problem",
        13 => "Timestamp request",
        14 => "Timestamp reply",
        _ => return format!("Type {kind}, code {code}"),
    };
    if code == 0 || matches!(kind, 0 | 8) {
        name.to_string()
    } else {
        format!("{name} (code {code})")
    }
}

/// The summary of an ICMPv6 message.
pub fn icmpv6(kind: u8, code: u8) -> String {
    let name = match kind {
        1 => "Destination Unreachable",
        2 => "Packet Too Big",
        3 => "Time Exceeded",
        4 => "Parameter Problem",
        128 => "Echo (ping) request",
        129 => "Echo (ping) reply",
        130 => "Multicast Listener Query",
        131 => "Multicast Listener Report",
        132 => "Multicast Listener Done",
        133 => "Router Solicitation",
        134 => "Router Advertisement",
        135 => "Neighbor Solicitation",
        136 => "Neighbor Advertisement",
        137 => "Redirect",
        143 => "Multicast Listener Report Message v2",
        _ => return format!("Type {kind}, code {code}"),
    };
    if code == 0 {
        name.to_string()
    } else {
        format!("{name} (code {code})")
    }
}

/// An IPv6 Hop-by-Hop or Destination option's name.
pub fn ip6_option(kind: u8) -> &'static str {
    match kind {
        0 => "Pad1",
        1 => "PadN",
        4 => "Tunnel Encapsulation Limit",
        5 => "Router Alert",
        0xc2 => "Jumbo Payload",
        0xc9 => "Home Address",
        _ => "Unknown option",
    }
}
