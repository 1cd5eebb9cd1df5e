//! The Protocol column of a frame alone: tshark's name for its top layer
//! (what the conversations say, an SSH version or TLS records, is the
//! output's, which reads the frame loop's analysis too).

use super::{OtherL4, Packet, RoceVersion};
use crate::wire::PauseRepr;

impl Packet<'_> {
    /// The Protocol column of the frame alone: an SSH segment reads as
    /// `SSH` (its connection may say `SSHv2`).
    pub fn protocol(&self) -> &'static str {
        if self.ssh().is_some() {
            return crate::wire::ssh::protocol(None);
        }
        self.top_protocol()
    }

    /// The Protocol column of the frame's top layer, as tshark names it
    /// (`RoCEv2`, `CNP`, `PFC`, `DNS`, `TCP`, `ARP`, ...), what a TCP
    /// payload carries left aside.
    pub fn top_protocol(&self) -> &'static str {
        let p = self;
        if let Some(v) = p.roce {
            if p.is_cnp() {
                return "CNP";
            }
            return match v {
                RoceVersion::V1 => "RoCEv1",
                RoceVersion::V2 => "RoCEv2",
                RoceVersion::Ib => "InfiniBand",
            };
        }
        if p.lrh.is_some() {
            return "InfiniBand";
        }
        if let Some(e) = &p.erf
            && e.payload() == crate::wire::erf::ErfPayload::Other
        {
            return "ERF";
        }
        if let Some(pause) = &p.pause {
            return match pause {
                PauseRepr::Pfc(_) => "PFC",
                PauseRepr::Pause { .. } => "PAUSE",
                PauseRepr::Other { .. } => "MAC Control",
            };
        }
        if p.udp.is_some() {
            return p.udp_app().map_or("UDP", |u| udp_app_protocol(&u));
        }
        match p.other_l4 {
            Some(OtherL4::Tcp { .. }) => return "TCP",
            Some(OtherL4::Icmp { .. }) => return "ICMP",
            Some(OtherL4::Icmpv6 { .. }) => return "ICMPv6",
            Some(OtherL4::Igmp { .. }) => {
                return match p.igmp().and_then(|m| m.version()) {
                    Some(1) => "IGMPv1",
                    Some(2) => "IGMPv2",
                    Some(3) => "IGMPv3",
                    _ => "IGMP",
                };
            }
            _ => {}
        }
        if let Some(ip) = &p.ip {
            return if ip.version == 4 { "IPv4" } else { "IPv6" };
        }
        match p.ethertype {
            Some(len) if len < 0x0600 => {
                if p.stp().is_some() {
                    "STP"
                } else {
                    "LLC"
                }
            }
            Some(t) => ethertype_name(t).unwrap_or("Ethernet"),
            None => "Ethernet",
        }
    }
}

/// The Protocol column of a UDP application's datagram.
fn udp_app_protocol(u: &super::UdpPayload<'_>) -> &'static str {
    use super::UdpApp;
    match u.app {
        UdpApp::Dns(f) => f.protocol(),
        UdpApp::Nbns => "NBNS",
        UdpApp::Ssdp => "SSDP",
        // DHCP once an option says which message it is; BOOTP before.
        UdpApp::Dhcp => {
            match crate::wire::dhcp::Message::new(u.bytes).and_then(|m| m.options().message_type) {
                Some(_) => "DHCP",
                None => "BOOTP",
            }
        }
    }
}

/// An EtherType's protocol name.
pub fn ethertype_name(t: u16) -> Option<&'static str> {
    Some(match t {
        0x0800 => "IPv4",
        0x0806 => "ARP",
        0x86dd => "IPv6",
        0x8100 => "802.1Q",
        0x88a8 => "802.1ad",
        0x8808 => "MAC Control",
        0x8809 => "Slow Protocols",
        0x888e => "EAPOL",
        0x88cc => "LLDP",
        0x88f7 => "PTP",
        0x8915 => "RoCE",
        0x8906 => "FCoE",
        0x8914 => "FIP",
        0x8847 => "MPLS",
        0x893a => "IEEE 1905.1",
        _ => return None,
    })
}
