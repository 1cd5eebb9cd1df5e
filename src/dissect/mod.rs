//! A frame to a [`Packet`]: L2-L4 through etherparse (lax slicing), RoCE
//! through `wire`. Pure functions; a truncated or inconsistent frame decodes
//! as far as its bytes go and carries a [`DecodeError`].
// Wire data must never panic the decoder; tests may unwrap freely.
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::arithmetic_side_effects
    )
)]

mod fast;
mod ib;
mod link;
pub mod probe;
pub mod protocol;
mod roce;

use std::fmt;
use std::net::IpAddr;

use crate::capture::{Frame, LinkType};
use crate::wire::{
    AethRepr, AtomicAckEthRepr, AtomicEthRepr, BthRepr, DethRepr, ErfRepr, GrhRepr, IethRepr,
    ImmDtRepr, LrhRepr, PauseRepr, RdethRepr, RethRepr, XrcethRepr, mad,
};

/// The UDP destination port that marks RoCE v2.
pub const ROCE_V2_PORT: u16 = 4791;
pub const ETHERTYPE_ROCE_V1: u16 = 0x8915;

/// Settings that change how frames are recognised.
#[derive(Debug, Clone, Copy)]
pub struct DissectOptions {
    /// UDP destination port for RoCE v2 (`--roce-port`).
    pub roce_port: u16,
    /// Verify the ICRC (costs a CRC over every RoCE frame).
    pub check_icrc: bool,
}

impl Default for DissectOptions {
    fn default() -> Self {
        DissectOptions {
            roce_port: ROCE_V2_PORT,
            check_icrc: true,
        }
    }
}

/// What went wrong while decoding, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// A header needed more bytes than were captured.
    Truncated {
        layer: &'static str,
        offset: usize,
        needed: usize,
        got: usize,
    },
    /// The opcode has no known header layout.
    UnknownOpcode { opcode: u8, offset: usize },
    /// Length fields disagree (e.g. headers + pad + ICRC longer than the packet).
    BadLength {
        layer: &'static str,
        offset: usize,
        claimed: usize,
        needed: usize,
    },
    /// The GRH does not announce a BTH.
    NotBth { next_header: u8, offset: usize },
    /// A header field no valid frame has (an IPv4 header length below 20,
    /// more VLAN tags than are decoded).
    Invalid {
        layer: &'static str,
        offset: usize,
        what: &'static str,
    },
    /// A length field claims more bytes than the whole frame (captured in
    /// full) holds.
    Beyond {
        layer: &'static str,
        offset: usize,
        claimed: usize,
        available: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::Truncated {
                layer,
                offset,
                needed,
                got,
            } => write!(
                f,
                "{layer} truncated at offset {offset}: needs {needed} bytes, {got} captured"
            ),
            DecodeError::UnknownOpcode { opcode, offset } => write!(
                f,
                "unknown opcode {opcode:#04x} at offset {offset}: headers after BTH not decoded"
            ),
            DecodeError::BadLength {
                layer,
                offset,
                claimed,
                needed,
            } => write!(
                f,
                "bad length at offset {offset}: {layer} length {claimed} is shorter than the {needed} bytes its headers, pad and ICRC need"
            ),
            DecodeError::NotBth {
                next_header,
                offset,
            } => write!(
                f,
                "GRH at offset {offset} has next header {next_header:#04x}, not BTH (0x1b)"
            ),
            DecodeError::Invalid {
                layer,
                offset,
                what,
            } => write!(f, "{layer} at offset {offset}: {what}"),
            DecodeError::Beyond {
                layer,
                offset,
                claimed,
                available,
            } => write!(
                f,
                "{layer} at offset {offset} claims {claimed} bytes, the frame has {available} from there"
            ),
        }
    }
}

impl DecodeError {
    /// True when the only problem is that the capture stopped early.
    pub fn is_truncation(&self) -> bool {
        matches!(self, DecodeError::Truncated { .. })
    }
}

/// Ethernet II header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eth {
    pub src: [u8; 6],
    pub dst: [u8; 6],
    /// The EtherType field of the Ethernet header itself (0x8100 when tagged).
    pub ethertype: u16,
}

/// Linux cooked capture (SLL/SLL2) pseudo-header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sll {
    pub packet_type: u16,
    pub addr: [u8; 8],
    pub addr_len: u8,
    pub protocol: u16,
}

impl Sll {
    /// The sender's MAC when the address is an Ethernet one.
    pub fn src_mac(&self) -> Option<[u8; 6]> {
        if self.addr_len == 6 {
            let a = self.addr;
            Some([a[0], a[1], a[2], a[3], a[4], a[5]])
        } else {
            None
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanTag {
    pub tpid: u16,
    pub id: u16,
    pub pcp: u8,
    pub dei: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ip {
    pub version: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub dscp: u8,
    pub ecn: u8,
    /// TTL or hop limit.
    pub ttl: u8,
    /// IP protocol / next header of the payload.
    pub protocol: u8,
    /// Total length (IPv4) or payload length + 40 (IPv6) as claimed.
    pub total_len: u32,
    pub header_len: u16,
    pub offset: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Udp {
    pub sport: u16,
    pub dport: u16,
    pub length: u16,
    pub checksum: u16,
    pub offset: u16,
}

/// Other transport protocols, named in the summary line only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtherL4 {
    /// TCP: its ports, and where its segment starts in the frame and how
    /// much of it was captured (its numbers, flags and options are read
    /// from the frame's bytes).
    Tcp {
        sport: u16,
        dport: u16,
        offset: u16,
        len: u16,
    },
    Icmp {
        kind: u8,
        code: u8,
    },
    /// ICMPv6, with where its message starts in the frame and how long
    /// it is (neighbour discovery's target and options are read from it).
    Icmpv6 {
        kind: u8,
        code: u8,
        offset: u16,
        len: u16,
    },
    /// IGMP: where its message starts in the frame and how long it is
    /// (its type, group and records are read from the frame's bytes).
    Igmp {
        offset: u16,
        len: u16,
    },
    Other(u8),
}

impl OtherL4 {
    /// TCP's source and destination ports.
    pub fn tcp(self) -> Option<(u16, u16)> {
        match self {
            Self::Tcp { sport, dport, .. } => Some((sport, dport)),
            _ => None,
        }
    }

    /// ICMP's type and code.
    pub fn icmp(self) -> Option<(u8, u8)> {
        match self {
            Self::Icmp { kind, code } => Some((kind, code)),
            _ => None,
        }
    }

    /// ICMPv6's type and code.
    pub fn icmpv6(self) -> Option<(u8, u8)> {
        match self {
            Self::Icmpv6 { kind, code, .. } => Some((kind, code)),
            _ => None,
        }
    }
}

/// A name service message a frame carries over UDP.
#[derive(Debug, Clone, Copy)]
pub struct Dns<'a> {
    pub flavour: crate::wire::dns::Flavour,
    /// `None` when the datagram is shorter than a DNS header.
    pub message: Option<crate::wire::dns::Message<'a>>,
    /// The capture kept less of the datagram than UDP says it holds.
    pub cut: bool,
    /// Where the message starts in the frame.
    pub offset: usize,
}

/// A TCP segment of an SSH connection with a payload.
#[derive(Debug, Clone, Copy)]
pub struct Ssh<'a> {
    pub payload: &'a [u8],
    /// Where the payload starts in the frame.
    pub offset: usize,
    /// Sent to port 22 (tshark's `Client:`), else from it (`Server:`).
    pub from_client: bool,
}

/// A TCP segment's payload that an application protocol may be read
/// from ([`Packet::tls`], [`Packet::http`]), and how its conversation
/// comes to be read as that protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppPayload<'a> {
    pub payload: &'a [u8],
    /// Where the payload starts in the frame.
    pub offset: usize,
    pub selection: crate::wire::tls::Selection,
}

/// The application protocols roce-dissect reads in UDP datagrams beside
/// RoCE: the name services, address configuration and discovery a
/// mirror of a fabric's management network carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UdpApp {
    Dns(crate::wire::dns::Flavour),
    /// NetBIOS Name Service (port 137).
    Nbns,
    /// BOOTP and DHCP (ports 67 and 68).
    Dhcp,
    /// SSDP: HTTP over UDP port 1900.
    Ssdp,
}

impl UdpApp {
    /// The protocol known by `port`, as tshark's port table has it.
    pub fn of_port(port: u16) -> Option<Self> {
        use crate::wire::{dhcp, http, nbns};
        match port {
            nbns::PORT => Some(Self::Nbns),
            dhcp::SERVER_PORT | dhcp::CLIENT_PORT => Some(Self::Dhcp),
            http::SSDP_PORT => Some(Self::Ssdp),
            _ => crate::wire::dns::Flavour::of_port(port).map(Self::Dns),
        }
    }
}

/// A UDP datagram's payload and the protocol it is read as.
#[derive(Debug, Clone, Copy)]
pub struct UdpPayload<'a> {
    pub app: UdpApp,
    pub bytes: &'a [u8],
    /// Where the payload starts in the frame.
    pub offset: usize,
    /// The capture kept less of the datagram than UDP says it holds.
    pub cut: bool,
}

/// An IPv6 extension header (Hop-by-Hop, Routing, Fragment, Destination
/// Options, Authentication), in the order of the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ip6Ext {
    /// Its own IP protocol number (0 Hop-by-Hop, 43, 44, 60, 51).
    pub header: u8,
    /// The next header it announces.
    pub next: u8,
    /// Where it starts in the frame, and its length in bytes.
    pub offset: u16,
    pub len: u16,
}

/// Extension headers kept per frame; a longer chain is still walked (the
/// UDP behind it is found) but only the first ones are shown.
pub const MAX_IP6_EXT: usize = 4;

/// An ARP request or reply for IPv4 over Ethernet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arp {
    /// 1 request, 2 reply.
    pub operation: u16,
    pub sender_mac: [u8; 6],
    pub sender_ip: std::net::Ipv4Addr,
    pub target_mac: [u8; 6],
    pub target_ip: std::net::Ipv4Addr,
}

/// How the transport headers travel: RoCE v1 (Ethernet + GRH), v2
/// (Ethernet + IP + UDP) or native InfiniBand (LRH [+ GRH]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoceVersion {
    V1,
    V2,
    /// Native InfiniBand (`"ib"` in JSON).
    Ib,
}

impl RoceVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            RoceVersion::V1 => "v1",
            RoceVersion::V2 => "v2",
            RoceVersion::Ib => "ib",
        }
    }
}

/// An end of a flow: an IP address (RoCE v2), a GID shown as IPv6 (RoCE v1,
/// and native InfiniBand with a GRH), or a LID (native InfiniBand without
/// a GRH, routed inside one subnet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Addr {
    Ip(IpAddr),
    Lid(u16),
}

impl From<IpAddr> for Addr {
    fn from(ip: IpAddr) -> Addr {
        Addr::Ip(ip)
    }
}

impl From<std::net::Ipv4Addr> for Addr {
    fn from(ip: std::net::Ipv4Addr) -> Addr {
        Addr::Ip(ip.into())
    }
}

impl From<std::net::Ipv6Addr> for Addr {
    fn from(ip: std::net::Ipv6Addr) -> Addr {
        Addr::Ip(ip.into())
    }
}

impl fmt::Display for Addr {
    /// An IP or GID as usual; a LID as `lid:4` (decimal, as Wireshark
    /// shows LIDs).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Addr::Ip(ip) => ip.fmt(f),
            Addr::Lid(l) => write!(f, "lid:{l}"),
        }
    }
}

impl std::str::FromStr for Addr {
    type Err = String;

    /// An IP address, a GID, or a LID as `lid:4` (`LID:4`, `lid:0x4`).
    fn from_str(s: &str) -> Result<Addr, String> {
        let s = s.trim();
        let lid = s
            .strip_prefix("lid:")
            .or_else(|| s.strip_prefix("LID:"))
            .or_else(|| s.strip_prefix("Lid:"));
        if let Some(n) = lid {
            let n = n.trim();
            let v = match n.strip_prefix("0x").or_else(|| n.strip_prefix("0X")) {
                Some(h) => u16::from_str_radix(h, 16),
                None => n.parse(),
            };
            return v
                .map(Addr::Lid)
                .map_err(|_| format!("'{s}': a LID is 0 to 65535 (lid:4, lid:0x4)"));
        }
        s.parse::<IpAddr>()
            .map(Addr::Ip)
            .map_err(|_| format!("'{s}' is not an IP address, a GID or a LID (lid:4)"))
    }
}

/// The ICRC trailer and its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Icrc {
    /// The four trailer bytes read big-endian, as Wireshark shows them
    /// (`0x82fd002a` for bytes `82 fd 00 2a`); `None` when not captured.
    pub value: Option<u32>,
    /// The trailer that a correct ICRC would have, same byte order as `value`.
    pub expected: Option<u32>,
    /// `None` when the frame was truncated or the check was not run.
    pub valid: Option<bool>,
}

/// The VCRC trailer of a native InfiniBand packet and its verdict (like
/// [`Icrc`], read big-endian as Wireshark shows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Vcrc {
    pub value: Option<u16>,
    pub expected: Option<u16>,
    pub valid: Option<bool>,
}

/// Where each RoCE header starts in the frame (for the header tree and the
/// TUI's byte highlighting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoceOffsets {
    /// Native InfiniBand: the LRH (after the ERF header, if any).
    pub lrh: Option<u16>,
    pub grh: Option<u16>,
    pub bth: u16,
    pub rdeth: Option<u16>,
    pub deth: Option<u16>,
    pub xrceth: Option<u16>,
    pub reth: Option<u16>,
    pub atomiceth: Option<u16>,
    pub aeth: Option<u16>,
    pub atomicacketh: Option<u16>,
    pub immdt: Option<u16>,
    pub ieth: Option<u16>,
    pub cnp_reserved: Option<u16>,
    pub payload: Option<u16>,
    pub pad: Option<u16>,
    pub icrc: Option<u16>,
    pub vcrc: Option<u16>,
}

/// Everything decoded from one frame. Plain values, no allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<'a> {
    pub number: u64,
    pub ts_ns: u64,
    pub len: u32,
    pub caplen: u32,
    pub link: LinkType,
    /// The link speed the frame's interface states (pcapng `if_speed`).
    pub if_speed: Option<std::num::NonZeroU64>,
    pub data: &'a [u8],
    /// The record's length on the wire as the capture states it (`len`
    /// before an ERF record's header is read): what a copy writes.
    pub record_len: u32,
    /// Where the frame itself starts in `data`: after an ERF record's
    /// header (0 for every other link type).
    pub frame_start: u16,

    pub eth: Option<Eth>,
    pub sll: Option<Sll>,
    pub vlans: [Option<VlanTag>; 3],
    /// The EtherType of what follows the link layer and VLAN tags.
    pub ethertype: Option<u16>,
    pub ip: Option<Ip>,
    /// IPv6 extension headers between the IPv6 header and its payload.
    pub ip6_ext: [Option<Ip6Ext>; MAX_IP6_EXT],
    pub arp: Option<Arp>,
    pub udp: Option<Udp>,
    pub other_l4: Option<OtherL4>,

    /// The ERF record header of a `DLT_ERF` frame.
    pub erf: Option<ErfRepr>,
    /// Native InfiniBand: the Local Route Header.
    pub lrh: Option<LrhRepr>,
    pub roce: Option<RoceVersion>,
    pub grh: Option<GrhRepr>,
    pub bth: Option<BthRepr>,
    pub rdeth: Option<RdethRepr>,
    pub deth: Option<DethRepr>,
    pub xrceth: Option<XrcethRepr>,
    pub reth: Option<RethRepr>,
    pub atomiceth: Option<AtomicEthRepr>,
    pub aeth: Option<AethRepr>,
    pub atomicacketh: Option<AtomicAckEthRepr>,
    pub immdt: Option<ImmDtRepr>,
    pub ieth: Option<IethRepr>,
    pub mad: Option<mad::MadHeader>,
    pub cm: Option<mad::CmMessage>,
    /// RDMA payload bytes (pad excluded), from the length fields; present
    /// for every RoCE frame whose headers were decoded.
    pub payload_len: Option<u32>,
    pub icrc: Option<Icrc>,
    /// Native InfiniBand: the VCRC trailer and its verdict.
    pub vcrc: Option<Vcrc>,
    pub offsets: RoceOffsets,

    pub pause: Option<PauseRepr>,
    pub error: Option<DecodeError>,
}

impl<'a> Packet<'a> {
    /// The transport payload's bytes (after the headers, before pad and
    /// ICRC), when the frame was captured that far.
    pub fn payload(&self) -> Option<&'a [u8]> {
        let at = usize::from(self.offsets.payload?);
        let n = usize::try_from(self.payload_len?).ok()?;
        self.data.get(at..at.checked_add(n)?)
    }

    fn empty(frame: &Frame<'a>) -> Self {
        Packet {
            number: frame.number,
            ts_ns: frame.ts_ns,
            len: frame.len,
            caplen: frame.caplen,
            link: frame.link,
            if_speed: frame.if_speed,
            data: frame.data,
            record_len: frame.len,
            frame_start: 0,
            eth: None,
            sll: None,
            vlans: [None; 3],
            ethertype: None,
            ip: None,
            ip6_ext: [None; MAX_IP6_EXT],
            arp: None,
            udp: None,
            other_l4: None,
            erf: None,
            lrh: None,
            roce: None,
            grh: None,
            bth: None,
            rdeth: None,
            deth: None,
            xrceth: None,
            reth: None,
            atomiceth: None,
            aeth: None,
            atomicacketh: None,
            immdt: None,
            ieth: None,
            mad: None,
            cm: None,
            payload_len: None,
            icrc: None,
            vcrc: None,
            offsets: RoceOffsets::default(),
            pause: None,
            error: None,
        }
    }

    /// The IPv6 extension headers present, in chain order.
    pub fn ip6_exts(&self) -> impl Iterator<Item = &Ip6Ext> {
        self.ip6_ext.iter().flatten()
    }

    /// The VLAN tags present, outermost first.
    pub fn vlan_tags(&self) -> impl Iterator<Item = &VlanTag> {
        self.vlans.iter().flatten()
    }

    /// Priority of the frame from its outermost 802.1Q tag; for native
    /// InfiniBand, the LRH's service level.
    pub fn pcp(&self) -> Option<u8> {
        self.vlan_tags()
            .next()
            .map(|t| t.pcp)
            .or_else(|| self.lrh.map(|l| l.sl))
    }

    /// The bytes of the frame itself (after an ERF record header).
    pub fn frame_bytes(&self) -> &'a [u8] {
        self.data
            .get(usize::from(self.frame_start)..)
            .unwrap_or_default()
    }

    /// Source MAC from Ethernet or a cooked header.
    pub fn src_mac(&self) -> Option<[u8; 6]> {
        self.eth
            .map(|e| e.src)
            .or_else(|| self.sll.and_then(|s| s.src_mac()))
    }

    /// Network source and destination: IPs for v2, GIDs for v1 and for
    /// InfiniBand with a GRH, LIDs for InfiniBand without one.
    pub fn endpoints(&self) -> Option<(Addr, Addr)> {
        if let Some(g) = &self.grh {
            return Some((
                Addr::Ip(IpAddr::V6(g.sgid_addr())),
                Addr::Ip(IpAddr::V6(g.dgid_addr())),
            ));
        }
        if let Some(l) = &self.lrh {
            return Some((Addr::Lid(l.slid), Addr::Lid(l.dlid)));
        }
        self.ip.map(|ip| (Addr::Ip(ip.src), Addr::Ip(ip.dst)))
    }

    /// The ECN field, from IP or (v1) the low two bits of the GRH class;
    /// for native InfiniBand the BTH's FECN, the congestion mark of IB
    /// congestion control, as CE (3).
    pub fn ecn(&self) -> Option<u8> {
        if self.roce == Some(RoceVersion::Ib) {
            return self.bth.map(|b| if b.fecn { 3 } else { 0 });
        }
        if let Some(ip) = &self.ip {
            return Some(ip.ecn);
        }
        self.grh.map(|g| g.tclass & 0x3)
    }

    /// The DSCP, from IP or (v1) the GRH traffic class (none for native
    /// InfiniBand, whose service level is [`Packet::pcp`]'s stand-in).
    pub fn dscp(&self) -> Option<u8> {
        if self.roce == Some(RoceVersion::Ib) {
            return None;
        }
        if let Some(ip) = &self.ip {
            return Some(ip.dscp);
        }
        self.grh.map(|g| g.tclass >> 2)
    }

    /// The application protocol of a UDP datagram that is not RoCE, by its
    /// ports as tshark picks it (the lower port's protocol first, then the
    /// higher's), with the datagram's payload (as much of what UDP's
    /// length claims as was captured), where it starts in the frame, and
    /// whether the capture cut it short. An SSDP datagram that does not
    /// start with an HTTP line is none (tshark takes it for the
    /// continuation of an earlier message in a conversation that had one,
    /// which a frame alone cannot tell).
    pub fn udp_app(&self) -> Option<UdpPayload<'a>> {
        let u = self.udp?;
        if self.roce.is_some() {
            return None;
        }
        let start = usize::from(u.offset).checked_add(8)?;
        let claimed = usize::from(u.length).saturating_sub(8);
        let rest = self.data.get(start..)?;
        let bytes = rest.get(..claimed).unwrap_or(rest);
        let (low, high) = if u.sport <= u.dport {
            (u.sport, u.dport)
        } else {
            (u.dport, u.sport)
        };
        let app = UdpApp::of_port(low).or_else(|| UdpApp::of_port(high))?;
        // Nothing to dissect: the line says UDP; and so it does for SSDP
        // without a first line (not passed on to the other port).
        if bytes.is_empty()
            || app == UdpApp::Ssdp && crate::wire::http::StartLine::parse(bytes).line().is_none()
        {
            return None;
        }
        Some(UdpPayload {
            app,
            bytes,
            offset: start,
            cut: bytes.len() < claimed,
        })
    }

    /// A DNS, mDNS or LLMNR message (by its UDP ports, as tshark tells
    /// them), with whether the capture cut it short of the length UDP
    /// gives it. `None` for RoCE and for other protocols; a datagram too
    /// short for a DNS header has no message (the summary line says
    /// `[Malformed Packet]`).
    pub fn dns(&self) -> Option<Dns<'a>> {
        let u = self.udp_app()?;
        let UdpApp::Dns(flavour) = u.app else {
            return None;
        };
        Some(Dns {
            flavour,
            message: crate::wire::dns::Message::new(u.bytes),
            cut: u.cut,
            offset: u.offset,
        })
    }

    /// An 802.3 frame (a length where the EtherType would be) whose LLC
    /// header says spanning tree (DSAP and SSAP 0x42), untagged: where its
    /// BPDU starts in the frame, and the BPDU when it is whole for its
    /// type (`None`: tshark's `[Malformed Packet]`).
    pub fn stp(&self) -> Option<(usize, Option<crate::wire::stp::Bpdu<'a>>)> {
        let e = self.eth.as_ref()?;
        if e.ethertype >= 0x0600 || self.vlan_tags().next().is_some() {
            return None;
        }
        let llc = usize::from(self.frame_start).checked_add(14)?;
        if self.data.get(llc..llc.checked_add(2)?)? != [0x42, 0x42] {
            return None;
        }
        let at = llc.checked_add(crate::wire::stp::LLC_LEN)?;
        // The BPDU ends where the 802.3 length says (padding after it).
        let end = llc
            .saturating_add(usize::from(e.ethertype))
            .min(self.data.len());
        let bytes = self.data.get(at..end.max(at)).unwrap_or_default();
        Some((at, crate::wire::stp::Bpdu::new(bytes)))
    }

    /// The IGMP message, where the decoder found it.
    pub fn igmp(&self) -> Option<crate::wire::igmp::Igmp<'a>> {
        match self.other_l4? {
            OtherL4::Igmp { offset, len } => {
                crate::wire::igmp::Igmp::new(self.bytes_at(offset, len)?)
            }
            _ => None,
        }
    }

    /// The ICMPv6 message's bytes (type and code first), where the decoder
    /// found it.
    pub fn icmpv6_message(&self) -> Option<&'a [u8]> {
        match self.other_l4? {
            OtherL4::Icmpv6 { offset, len, .. } => self.bytes_at(offset, len),
            _ => None,
        }
    }

    /// The TCP segment, where the decoder found it (20 bytes of header at
    /// least).
    pub fn tcp(&self) -> Option<crate::wire::tcp::Tcp<'a>> {
        match self.other_l4? {
            OtherL4::Tcp { offset, len, .. } => {
                crate::wire::tcp::Tcp::new(self.bytes_at(offset, len)?)
            }
            _ => None,
        }
    }

    /// The TCP segment's payload length as the IP header gives it (the
    /// bytes after the TCP header up to the IP packet's claimed end;
    /// Ethernet padding is not counted), as tshark's `tcp.len`.
    pub fn tcp_payload_len(&self) -> Option<u32> {
        let (ip, tcp) = (self.ip?, self.tcp()?);
        let OtherL4::Tcp { offset, .. } = self.other_l4? else {
            return None;
        };
        let end = u32::from(ip.offset).saturating_add(ip.total_len);
        let start =
            u32::from(offset).saturating_add(u32::try_from(tcp.header_len()).unwrap_or(u32::MAX));
        Some(end.saturating_sub(start))
    }

    /// The TCP segment's payload as captured (up to the IP packet's
    /// claimed end: Ethernet padding is not part of it), and where it
    /// starts in the frame.
    pub fn tcp_payload(&self) -> Option<(&'a [u8], usize)> {
        let OtherL4::Tcp { offset, .. } = self.other_l4? else {
            return None;
        };
        let start = usize::from(offset).checked_add(self.tcp()?.header_len())?;
        let len = usize::try_from(self.tcp_payload_len()?).ok()?;
        let rest = self.data.get(start..)?;
        Some((rest.get(..len).unwrap_or(rest), start))
    }

    /// A TCP segment to or from SSH's port with a payload: the payload,
    /// where it starts in the frame, and whether the client sent it (to
    /// port 22, as tshark tells the sides).
    pub fn ssh(&self) -> Option<Ssh<'a>> {
        let (sport, dport) = self.other_l4?.tcp()?;
        if sport != crate::wire::ssh::PORT && dport != crate::wire::ssh::PORT {
            return None;
        }
        let (payload, offset) = self.tcp_payload()?;
        (!payload.is_empty()).then_some(Ssh {
            payload,
            offset,
            from_client: dport == crate::wire::ssh::PORT,
        })
    }

    /// A TCP segment with a payload that TLS may be read from: on a port
    /// tshark hands to TLS, or on one no other protocol has (where the
    /// conversation is TLS once a segment starts with a record header).
    /// Not SSH's, and not cut short by the capture.
    pub fn tls(&self) -> Option<AppPayload<'a>> {
        let (sport, dport) = self.other_l4?.tcp()?;
        let selection = crate::wire::tls::Selection::of_ports(sport, dport)?;
        let (payload, offset) = self.tcp_payload()?;
        let whole = u32::try_from(payload.len()).ok() == self.tcp_payload_len();
        (!payload.is_empty() && whole).then_some(AppPayload {
            payload,
            offset,
            selection,
        })
    }

    /// A TCP segment with a payload that HTTP may be read from: on one of
    /// HTTP's ports, or on one no protocol has (where the conversation is
    /// HTTP once a segment's first line looks like HTTP/1.1's). Not cut
    /// short by the capture.
    pub fn http(&self) -> Option<AppPayload<'a>> {
        let (sport, dport) = self.other_l4?.tcp()?;
        let selection = crate::wire::http::selection(sport, dport)?;
        let (payload, offset) = self.tcp_payload()?;
        let whole = u32::try_from(payload.len()).ok() == self.tcp_payload_len();
        (!payload.is_empty() && whole).then_some(AppPayload {
            payload,
            offset,
            selection,
        })
    }

    /// `len` bytes of the frame from `offset`, if captured.
    fn bytes_at(&self, offset: u16, len: u16) -> Option<&'a [u8]> {
        let at = usize::from(offset);
        self.data.get(at..at.checked_add(usize::from(len))?)
    }

    pub fn is_cnp(&self) -> bool {
        self.bth
            .is_some_and(|b| b.opcode == crate::wire::Opcode::CNP)
    }

    /// Captured fewer bytes than were on the wire.
    pub fn is_truncated(&self) -> bool {
        self.caplen < self.len
    }
}

/// Decodes one frame.
pub fn dissect<'a>(frame: &Frame<'a>, opts: &DissectOptions) -> Packet<'a> {
    let mut pkt = Packet::empty(frame);
    if !fast::dissect_common(&mut pkt, opts) {
        link::dissect_link(&mut pkt, opts);
    }
    check_ip_length(&mut pkt);
    pkt
}

/// Decodes one frame through etherparse only, skipping the fixed-offset
/// fast path (the reference the fast path is tested against).
pub fn dissect_reference<'a>(frame: &Frame<'a>, opts: &DissectOptions) -> Packet<'a> {
    let mut pkt = Packet::empty(frame);
    link::dissect_link(&mut pkt, opts);
    check_ip_length(&mut pkt);
    pkt
}

/// An IP header whose length field runs past the end of a frame that was
/// captured whole is malformed (not truncated by the snap length): said in
/// `error`, the layers decoded as far as the bytes go.
fn check_ip_length(pkt: &mut Packet<'_>) {
    let Some(ip) = pkt.ip else { return };
    if pkt.error.is_some() || pkt.caplen < pkt.len {
        return;
    }
    let at = usize::from(ip.offset);
    let available = pkt.data.len().saturating_sub(at);
    let claimed = ip.total_len as usize;
    if claimed > available {
        pkt.error = Some(DecodeError::Beyond {
            layer: if ip.version == 4 {
                "IPv4 total length"
            } else {
                "IPv6 payload length"
            },
            offset: at,
            claimed,
            available,
        });
    }
}

/// Offset of `part` inside `whole` (both borrowed from the same frame).
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize)
}

fn to_u16(v: usize) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX)
}
