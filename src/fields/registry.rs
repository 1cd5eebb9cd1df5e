//! The fields themselves. Names, types and bases of the fields tshark 4.0
//! also has are Wireshark's (`tshark -G fields`; the differential test
//! checks them); the others are named in the same style.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::net::IpAddr;

use super::Ctx;
use super::names;
use super::{Base, Field, FieldType, Value};
use crate::analysis::Mark;
use crate::analysis::marks::NvmeRole;
use crate::analysis::tcp::{NOTE_FIELDS, Notes};
use crate::dissect::{OtherL4, Packet, RoceVersion};
use crate::output::packets as out;
use crate::wire::PauseRepr;
use crate::wire::aeth::AckKind;
use crate::wire::http::StartLine;
use crate::wire::mad::CmMessage;
use crate::wire::nvme::{CqeRepr, QueueKind, SqeRepr};
use crate::wire::tcp::{self, TcpOption};

use Base::{Dec, DecHex, Hex, HexDec};
use FieldType::{Bool, Bytes, Ether, FrameNum, Ipv4, Ipv6, Millis, Presence, RelTime, Str, Uint};

/// An integer field read from the packet; `$e` gives an `Option` of any
/// unsigned integer type.
macro_rules! uint {
    ($name:literal, $title:literal, $bits:literal, $base:expr, |$p:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Uint($bits),
            base: $base,
            in_tshark: true,
            names: None,
            get: |c, o| {
                let $p = c.pkt;
                if let Some(v) = $e {
                    o.push(Value::Uint(u64::from(v)));
                }
            },
        }
    };
}

/// A boolean field read from the packet.
macro_rules! boolean {
    ($name:literal, $title:literal, |$p:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Bool,
            base: Base::None,
            in_tshark: true,
            names: None,
            get: |c, o| {
                let $p = c.pkt;
                if let Some(v) = $e {
                    o.push(Value::Bool(v));
                }
            },
        }
    };
}

/// A MAC address field read from the packet; `$e` gives an `Option` of
/// the six bytes.
macro_rules! ether {
    ($name:literal, $title:literal, |$p:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Ether,
            base: Base::None,
            in_tshark: true,
            names: None,
            get: |c, o| {
                let $p = c.pkt;
                o.extend($e.map(Value::Ether));
            },
        }
    };
}

/// An integer field with any number of values: `$e` gives them (any
/// iterable of unsigned integers) from the frame's context.
macro_rules! uints {
    ($name:literal, $title:literal, $bits:literal, $base:expr, |$c:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Uint($bits),
            base: $base,
            in_tshark: true,
            names: None,
            get: |$c, o| o.extend($e.into_iter().map(|v| Value::Uint(u64::from(v)))),
        }
    };
}

/// An IPv4 address field read from the packet; `$e` gives an `Option`.
macro_rules! ipv4 {
    ($name:literal, $title:literal, |$p:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Ipv4,
            base: Base::None,
            in_tshark: true,
            names: None,
            get: |c, o| {
                let $p = c.pkt;
                o.extend($e.map(Value::Ipv4));
            },
        }
    };
}

/// A header that is there or not.
macro_rules! presence {
    // Read from the frame and what the analysis said of it.
    ($name:literal, $title:literal, ctx |$c:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Presence,
            base: Base::None,
            in_tshark: true,
            names: None,
            get: |c, o| {
                let $c = c;
                if $e {
                    o.push(Value::Present);
                }
            },
        }
    };
    ($name:literal, $title:literal, |$p:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Presence,
            base: Base::None,
            in_tshark: true,
            names: None,
            get: |c, o| {
                let $p = c.pkt;
                if $e {
                    o.push(Value::Present);
                }
            },
        }
    };
}

/// A text of an HTTP message's head (`$e` of the [`http_head`] `$h`).
macro_rules! http_str {
    ($name:literal, $title:literal, |$h:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Str,
            base: Base::None,
            in_tshark: true,
            names: None,
            get: |c, o| {
                // (Owned: a head kept from an earlier frame lives no
                // longer than the frame loop's step.)
                if let Some($h) = http_head(c)
                    && let Some(v) = $e
                {
                    o.push(Value::Str(String::from_utf8_lossy(v).into_owned().into()));
                }
            },
        }
    };
}

/// A DNS-family message's header field (`None` when the frame has none).
fn dns_message<'a>(p: &Packet<'a>) -> Option<crate::wire::dns::Message<'a>> {
    p.dns().and_then(|d| d.message)
}

/// An NBNS message (`None` when the frame has none, or one too short
/// for its header).
fn nbns_message<'a>(p: &Packet<'a>) -> Option<crate::wire::dns::Message<'a>> {
    p.udp_app()
        .filter(|u| u.app == crate::dissect::UdpApp::Nbns)
        .and_then(|u| crate::wire::dns::Message::new(u.bytes))
}

/// A BOOTP or DHCP message. tshark reads a request's client address
/// before anything else: a request cut short of it has no fields.
fn dhcp_message<'a>(p: &Packet<'a>) -> Option<crate::wire::dhcp::Message<'a>> {
    p.udp_app()
        .filter(|u| u.app == crate::dissect::UdpApp::Dhcp)
        .and_then(|u| crate::wire::dhcp::Message::new(u.bytes))
        .filter(|m| m.op() != 1 || m.chaddr().is_some())
}

/// The client identifiers (option 61) that are a hardware type and an
/// Ethernet MAC, as tshark shows them: under the header's own fields.
fn dhcp_client_ids(m: &crate::wire::dhcp::Message<'_>) -> Vec<(u8, [u8; 6])> {
    m.option_data(61)
        .into_iter()
        .filter_map(|d| match d {
            &[1, a, b, c, d, e, f] => Some((1, [a, b, c, d, e, f])),
            _ => None,
        })
        .collect()
}

/// An NBNS message's flags: the header's, and those a "wait for
/// acknowledgement" response's NB records carry (tshark shows both under
/// the same fields).
fn nbns_flags(p: &Packet<'_>) -> Vec<u16> {
    let Some(m) = nbns_message(p) else {
        return Vec::new();
    };
    let mut v = vec![m.flags()];
    if m.is_response() && m.opcode() == crate::wire::nbns::OPCODE_WACK {
        for r in m.records().map_while(Result::ok) {
            if r.section == crate::wire::dns::Section::Answer
                && r.rtype == crate::wire::nbns::T_NB
                && let Some(&[a, b]) = r.rdata.get(..2)
            {
                v.push(u16::from_be_bytes([a, b]));
            }
        }
    }
    v
}

/// An SSDP datagram's first line.
fn ssdp_line<'a>(p: &Packet<'a>) -> Option<StartLine<'a>> {
    p.udp_app()
        .filter(|u| u.app == crate::dissect::UdpApp::Ssdp)
        .map(|u| StartLine::parse(u.bytes))
}

/// The head of the HTTP message in the frame: an SSDP datagram's, or that
/// of the message a TCP segment of an HTTP conversation holds whole or
/// ends (the head its first segment had, as the frame loop kept it).
fn http_head<'p>(c: &Ctx<'p, '_>) -> Option<crate::wire::http::Head<'p>> {
    use crate::analysis::http::Reading;
    use crate::wire::http::Head;
    if let Some(u) = c
        .pkt
        .udp_app()
        .filter(|u| u.app == crate::dissect::UdpApp::Ssdp)
    {
        return Some(Head::parse(u.bytes));
    }
    match c.tcp?.http.as_ref()? {
        Reading::Whole { .. } => Some(Head::parse(c.pkt.tcp_payload()?.0)),
        Reading::Ends(e) => Some(Head::parse(e.head.as_deref()?)),
        _ => None,
    }
}

/// An SSH segment and what its payload holds, read with what its
/// connection said before it (when the frame loop followed it).
fn ssh_reading<'a>(
    c: &Ctx<'_, 'a>,
) -> Option<(crate::dissect::Ssh<'a>, crate::wire::ssh::Reading<'a>)> {
    let ssh = c.pkt.ssh()?;
    let (version, encrypted) = c
        .tcp
        .as_ref()
        .map_or((None, false), |t| (t.ssh_version, t.ssh_encrypted));
    Some((ssh, crate::wire::ssh::read(ssh.payload, version, encrypted)))
}

/// The SSH packets in the clear of the frame's segment.
fn ssh_plain(c: &Ctx<'_, '_>) -> impl Iterator<Item = crate::wire::ssh::Plain> {
    ssh_reading(c)
        .map(|(_, r)| r.plain)
        .unwrap_or_default()
        .into_iter()
}

/// The encrypted part of an SSH segment sent before any version line was
/// seen (tshark splits it into the length and the packet; after New Keys
/// it tries to decrypt instead and shows neither).
fn ssh_encrypted_unknown<'a>(c: &Ctx<'_, 'a>) -> Option<&'a [u8]> {
    let (_, r) = ssh_reading(c)?;
    let known = c.tcp.and_then(|t| t.ssh_version).is_some() || r.version_line.is_some();
    (!known && !r.encrypted.is_empty()).then_some(r.encrypted)
}

/// How many times TLS reads a segment (`frame.protocols` lists it that
/// often): once for a record it completes that began earlier, once for
/// the bytes after it; never for a segment inside a record.
fn tls_layers(
    r: &crate::wire::tls::Reading<'_>,
    len: usize,
    tcp: Option<&crate::analysis::tcp::TcpSeen>,
) -> usize {
    use crate::wire::tls::Continues;
    if !r.read_as_tls() {
        return 0;
    }
    match tcp.and_then(|t| t.tls).map(|s| s.continues) {
        Some(Continues::Record {
            bytes,
            ends: true,
            broken: false,
            ..
        }) => 1 + usize::from(usize::try_from(bytes).is_ok_and(|b| b < len)),
        _ => 1,
    }
}

/// A TLS 1.3 record of application data: its type is the opaque one.
fn tls_opaque(r: &crate::wire::tls::Record<'_>) -> bool {
    r.shown_version == crate::wire::tls::TLS13
        && r.content_type == crate::wire::tls::APPLICATION_DATA
}

/// The records of a TLS segment (not the bytes read as none), read with
/// what its conversation said before it, when the frame loop followed it.
fn tls_records<'a>(c: &Ctx<'_, 'a>) -> Vec<crate::wire::tls::Record<'a>> {
    crate::output::packets::tls_reading(c.pkt, c.tcp)
        .map(|(_, r)| r.records.into_iter().filter(|x| x.is_record()).collect())
        .unwrap_or_default()
}

/// The whole handshake messages of a TLS segment's records (not the
/// fragments of one that goes on in the next record).
fn tls_messages(c: &Ctx<'_, '_>) -> Vec<crate::wire::tls::Message> {
    tls_records(c)
        .into_iter()
        .filter_map(|r| match r.says {
            crate::wire::tls::Says::Handshake(m) => Some(m),
            _ => None,
        })
        .flatten()
        .filter(|m| !m.fragment)
        .collect()
}

/// A field with a value for each of a DNS-family message's records that
/// has one: `$e` pushes them, given the message, whether it is mDNS (whose
/// classes lose their top bit) and the record.
macro_rules! dns_records {
    ($name:literal, $title:literal, $ty:expr, $base:expr, |$m:ident, $mdns:ident, $r:ident, $o:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: $ty,
            base: $base,
            in_tshark: true,
            names: None,
            get: |c, $o| {
                let Some(d) = c.pkt.dns() else { return };
                let Some($m) = d.message else { return };
                let $mdns = d.flavour == crate::wire::dns::Flavour::Mdns;
                for $r in $m.records().map_while(Result::ok) {
                    $e
                }
            },
        }
    };
}

/// A record's class as tshark's fields give it: mDNS's top bit (unicast
/// response, cache flush) apart.
fn dns_class(mdns: bool, class: u16) -> u16 {
    if mdns {
        class & !crate::wire::dns::MDNS_CLASS_BIT
    } else {
        class
    }
}

/// A record's name field, as a string value.
fn dns_name(m: &crate::wire::dns::Message<'_>, at: usize) -> Option<Value<'static>> {
    m.name(at).ok().map(|n| Value::Str(n.text.into()))
}

/// A frame's whole spanning tree BPDU.
fn stp_bpdu<'a>(p: &Packet<'a>) -> Option<crate::wire::stp::Bpdu<'a>> {
    p.stp().and_then(|(_, b)| b)
}

/// A field whose values have names a filter may use.
const fn named(names: super::ValueNames, f: Field) -> Field {
    Field {
        names: Some(names),
        ..f
    }
}

/// A field tshark 4.0 does not have.
const fn ours(f: Field) -> Field {
    Field {
        in_tshark: false,
        names: None,
        ..f
    }
}

/// An analysis flag: there when the analysis marked the frame so.
macro_rules! flag {
    ($name:literal, $title:literal, $mark:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Presence,
            base: Base::None,
            in_tshark: false,
            names: None,
            get: |c, o| {
                if c.marked($mark) {
                    o.push(Value::Present);
                }
            },
        }
    };
}

/// A TCP field that reads the frame loop's view of the conversation
/// (`c.tcp`, relative numbers) as well as the segment (`$t`).
macro_rules! tcp_conv {
    ($name:literal, $title:literal, $bits:literal, |$c:ident, $t:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Uint($bits),
            base: Dec,
            in_tshark: true,
            names: None,
            get: |c, o| {
                let $c = c;
                if let Some($t) = c.pkt.tcp()
                    && let Some(v) = $e
                {
                    o.push(Value::Uint(u64::from(v)));
                }
            },
        }
    };
}

/// One of TCP's flag bits.
macro_rules! tcp_flag {
    ($name:literal, $title:literal, $bit:expr) => {
        named(
            names::set_not_set,
            boolean!($name, $title, |p| p.tcp().map(|t| t.flags() & $bit != 0)),
        )
    };
}

/// One of the notes of tshark's TCP analysis, `NOTE_FIELDS[$i]`: there
/// when the frame loop noted it of the segment.
macro_rules! tcp_note {
    ($i:literal) => {
        Field {
            name: NOTE_FIELDS[$i].name,
            title: NOTE_FIELDS[$i].title,
            ty: Presence,
            base: Base::None,
            in_tshark: true,
            names: None,
            get: |c, o| {
                if c.tcp.is_some_and(|t| t.notes.has(NOTE_FIELDS[$i].notes)) {
                    o.push(Value::Present);
                }
            },
        }
    };
}

/// A value of each of a TCP segment's options (`$e` gives a `Vec` of
/// them for the option `$op`; `$seen` is the conversation, for relative
/// SACK edges).
macro_rules! tcp_option {
    ($name:literal, $title:literal, $bits:literal, |$op:ident, $seen:ident| $e:expr) => {
        Field {
            name: $name,
            title: $title,
            ty: Uint($bits),
            base: Dec,
            in_tshark: true,
            names: None,
            get: |c, o| tcp_options(c, o, |$op, $seen| $e),
        }
    };
}

/// A value of what the TCP conversation says of the segment (`$e` of the
/// frame's `TcpSeen` `$t`, if any): a number in decimal, a frame, a time.
macro_rules! tcp_measure {
    ($name:literal, $title:literal, $ty:expr, |$t:ident| $e:expr $(,)?) => {
        Field {
            name: $name,
            title: $title,
            ty: $ty,
            base: match $ty {
                Uint(_) => Dec,
                _ => Base::None,
            },
            in_tshark: true,
            names: None,
            get: |c, o| {
                if let Some($t) = c.tcp
                    && let Some(v) = $e
                {
                    o.push(v);
                }
            },
        }
    };
}

/// A column of the summary line: a string the body writes into `$s`.
macro_rules! column {
    ($name:literal, $title:literal, |$c:ident, $s:ident| $body:expr $(,)?) => {
        Field {
            name: $name,
            title: $title,
            ty: Str,
            base: Base::None,
            in_tshark: false,
            names: None,
            get: |$c, o| {
                let mut text = String::new();
                let $s = &mut text;
                $body;
                o.push(Value::Str(Cow::Owned(text)));
            },
        }
    };
}

fn ipv4_header<'a>(p: &Packet<'a>) -> Option<&'a [u8]> {
    let ip = p.ip.filter(|ip| ip.version == 4)?;
    let at = usize::from(ip.offset);
    p.data.get(at..at.checked_add(20)?)
}

fn ipv6_header<'a>(p: &Packet<'a>) -> Option<&'a [u8]> {
    let ip = p.ip.filter(|ip| ip.version == 6)?;
    let at = usize::from(ip.offset);
    p.data.get(at..at.checked_add(40)?)
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(*b.get(at..)?.first_chunk()?))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(*b.get(at..)?.first_chunk()?))
}

fn v4(ip: IpAddr) -> Option<Value<'static>> {
    match ip {
        IpAddr::V4(a) => Some(Value::Ipv4(a)),
        IpAddr::V6(_) => None,
    }
}

fn v6(ip: IpAddr) -> Option<Value<'static>> {
    match ip {
        IpAddr::V6(a) => Some(Value::Ipv6(a)),
        IpAddr::V4(_) => None,
    }
}

/// The EtherType after VLAN tag `i`: the next tag's TPID, or what the
/// tags carry.
fn vlan_etype(p: &Packet<'_>, i: usize) -> Option<u16> {
    p.vlans
        .get(i + 1)
        .copied()
        .flatten()
        .map(|t| t.tpid)
        .or(p.ethertype)
}

/// The AETH syndrome's parts, for the field of `kind` (tshark shows the
/// credit count, the timer or the error code according to the opcode).
fn syndrome_part(p: &Packet<'_>, kind: AckKind) -> Option<u8> {
    p.aeth.filter(|a| a.kind() == kind).map(|a| a.value())
}

fn cm_ids(cm: &CmMessage) -> Option<(u32, u32)> {
    match *cm {
        CmMessage::Rep {
            local_comm_id,
            remote_comm_id,
            ..
        }
        | CmMessage::Rtu {
            local_comm_id,
            remote_comm_id,
        }
        | CmMessage::Rej {
            local_comm_id,
            remote_comm_id,
            ..
        }
        | CmMessage::Dreq {
            local_comm_id,
            remote_comm_id,
            ..
        }
        | CmMessage::Drep {
            local_comm_id,
            remote_comm_id,
        } => Some((local_comm_id, remote_comm_id)),
        CmMessage::Req { .. } | CmMessage::Other { .. } => None,
    }
}

/// The name of a UDP application's layer in `frame.protocols` and
/// display filters: `dns`, `nbns`, `dhcp` (`bootp` before an option says
/// DHCP), `ssdp`.
fn udp_app_filter_name(u: &crate::dissect::UdpPayload<'_>) -> &'static str {
    use crate::dissect::UdpApp;
    match u.app {
        UdpApp::Dns(f) => f.filter_name(),
        UdpApp::Nbns => "nbns",
        UdpApp::Ssdp => "ssdp",
        UdpApp::Dhcp => "dhcp",
    }
}

/// `frame.protocols`: the layers tshark would list for what roce-dissect
/// decodes (RoCE, PFC and the layers below them).
fn protocols(c: &Ctx<'_, '_>) -> String {
    let p = c.pkt;
    let mut parts: Vec<&str> = Vec::with_capacity(8);
    if p.erf.is_some() {
        parts.push("erf");
    }
    if p.eth.is_some() && p.ethertype.is_some_and(|t| t < 0x0600) && p.vlan_tags().next().is_none()
    {
        // 802.3 with a length: LLC, and the spanning tree behind it.
        parts.extend(["eth", "llc"]);
        if p.stp().is_some() {
            parts.push("stp");
        }
    } else if p.eth.is_some() {
        parts.extend(["eth", "ethertype"]);
        for _ in p.vlan_tags() {
            parts.extend(["vlan", "ethertype"]);
        }
    } else if p.sll.is_some() {
        parts.extend(["sll", "ethertype"]);
    }
    if p.pause.is_some() {
        parts.push("macc");
    } else if p.arp.is_some() {
        parts.push("arp");
    } else {
        match p.ip.map(|i| i.version) {
            Some(4) => parts.push("ip"),
            Some(6) => {
                parts.push("ipv6");
                parts.extend(p.ip6_exts().filter_map(|e| match e.header {
                    0 => Some("ipv6.hopopts"),
                    43 => Some("ipv6.routing"),
                    44 => Some("ipv6.fraghdr"),
                    60 => Some("ipv6.dstopts"),
                    51 => Some("ah"),
                    _ => None,
                }));
            }
            _ => {}
        }
        if p.udp.is_some() {
            parts.push("udp");
        }
        if let Some(u) = p.udp_app() {
            parts.push(udp_app_filter_name(&u));
        } else if p.roce.is_none()
            && p.udp.is_some_and(|u| {
                u.length > 8
                    && u.sport != crate::wire::http::SSDP_PORT
                    && u.dport != crate::wire::http::SSDP_PORT
            })
        {
            // A payload no dissector takes: tshark's `data` (not after
            // SSDP's port turned it down).
            parts.push("data");
        }
        match p.other_l4 {
            Some(OtherL4::Tcp { .. }) => {
                parts.push("tcp");
                if p.ssh().is_some() {
                    parts.push("ssh");
                }
                // tshark lists TLS once for a record completed from earlier
                // segments and once for the records that start here.
                if let Some((t, r)) = crate::output::packets::tls_reading(p, c.tcp) {
                    // IMAP's port: IMAP hands the conversation to TLS.
                    if p.other_l4
                        .and_then(|l| l.tcp())
                        .is_some_and(|(s, d)| s.min(d) == 143)
                    {
                        parts.push("imap");
                    }
                    parts.extend(std::iter::repeat_n(
                        "tls",
                        tls_layers(&r, t.payload.len(), c.tcp),
                    ));
                }
                // HTTP, and the dissector of its body's media.
                let http = c.tcp.and_then(|t| t.http.as_ref());
                if let Some(h) = http.filter(|h| h.is_http()) {
                    parts.push("http");
                    if let Some(media) = h.media().layer() {
                        parts.push(media);
                    }
                }
                // A payload on ports no protocol has that no heuristic
                // took: tshark's `data`.
                if http.is_none()
                    && let Some(h) = p.http()
                    && h.selection == crate::wire::tls::Selection::Heuristic
                    && !crate::wire::http::has_version(h.payload)
                    && crate::output::packets::tls_reading(p, c.tcp).is_none()
                {
                    parts.push("data");
                }
            }
            Some(OtherL4::Icmp { .. }) => parts.push("icmp"),
            Some(OtherL4::Icmpv6 { .. }) => parts.push("icmpv6"),
            // tshark 4.0 lists IGMP twice (its version's dissector is
            // the same protocol again).
            Some(OtherL4::Igmp { .. }) => parts.extend(["igmp", "igmp"]),
            _ => {}
        }
        if p.roce.is_some() {
            parts.push("infiniband");
            // What an NVMe-oF queue's QPs carry is tshark's `nvme-rdma`
            // (NVMe itself below it is not listed), the rest `data`.
            if c.analysis.is_some_and(|a| a.nvme.is_some()) {
                parts.push("nvme-rdma");
            } else if p.mad.is_none() && p.payload_len.is_some_and(|n| n > 0) {
                parts.push("data");
            }
        }
    }
    parts.join(":")
}

pub static FIELDS: &[Field] = &[
    // frame
    // Every frame: `-Y frame` passes them all, as in tshark.
    Field {
        name: "frame",
        title: "Frame",
        ty: Presence,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |_, o| o.push(Value::Present),
    },
    uint!("frame.number", "Frame Number", 32, Dec, |p| Some(p.number)),
    uint!("frame.len", "Frame length on the wire", 32, Dec, |p| Some(
        p.len
    )),
    uint!(
        "frame.cap_len",
        "Frame length stored into the capture file",
        32,
        Dec,
        |p| Some(p.caplen)
    ),
    Field {
        name: "frame.time",
        title: "Arrival Time",
        ty: FieldType::AbsTime,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.push(Value::Time(i128::from(c.pkt.ts_ns))),
    },
    Field {
        name: "frame.time_epoch",
        title: "Epoch Time",
        ty: RelTime,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.push(Value::Time(i128::from(c.pkt.ts_ns))),
    },
    Field {
        name: "frame.time_relative",
        title: "Time since reference or first frame",
        ty: RelTime,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.push(Value::Time(
                i128::from(c.pkt.ts_ns) - i128::from(c.first_ts_ns),
            ))
        },
    },
    Field {
        name: "frame.time_delta",
        title: "Time delta from previous captured frame",
        ty: RelTime,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.push(Value::Time(
                i128::from(c.pkt.ts_ns) - i128::from(c.prev_ts_ns),
            ))
        },
    },
    Field {
        name: "frame.protocols",
        title: "Protocols in frame",
        ty: Str,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.push(Value::Str(Cow::Owned(protocols(c)))),
    },
    // The summary line's columns, for `-e _ws.col.Info` as in tshark: the
    // texts are roce-dissect's own (`RoCEv2` where tshark says `RRoCE`,
    // the Info with PSNs and the analysis' tags), so no test holds them
    // to tshark's.
    column!("_ws.col.No.", "No. column: the frame number", |c, s| {
        let _ = write!(s, "{}", c.pkt.number);
    },),
    column!(
        "_ws.col.Source",
        "Source column: the sender's IP address or GID, else MAC",
        |c, s| out::write_source(s, c.pkt),
    ),
    column!(
        "_ws.col.Destination",
        "Destination column: the receiver's IP address or GID, else MAC",
        |c, s| out::write_destination(s, c.pkt),
    ),
    column!(
        "_ws.col.Protocol",
        "Protocol column (RoCEv1, RoCEv2, InfiniBand, PFC, ...)",
        |c, s| s.push_str(out::protocol_in(c.pkt, c.tcp)),
    ),
    column!(
        "_ws.col.Length",
        "Length column: the frame's length on the wire",
        |c, s| {
            let _ = write!(s, "{}", c.pkt.len);
        },
    ),
    column!(
        "_ws.col.Info",
        "Info column, as the summary line has it (the analysis' tags included)",
        |c, s| {
            out::write_info(s, c.pkt, c.link.bps(c.pkt.if_speed), c.tcp);
            if let Some(a) = c.analysis {
                out::push_nvme(s, c.pkt, a.nvme);
                out::push_marks(s, a.marks);
            }
        },
    ),
    // erf
    presence!("erf", "Extensible Record Format", |p| p.erf.is_some()),
    uint!("erf.types.type", "Type", 8, Dec, |p| p.erf.map(|e| e.kind)),
    uint!("erf.flags", "Flags", 8, Hex, |p| p.erf.map(|e| e.flags)),
    uint!("erf.flags.cap", "Capture interface", 8, Dec, |p| p
        .erf
        .map(|e| e.port())),
    uint!("erf.rlen", "Record length", 16, Dec, |p| p
        .erf
        .map(|e| e.rlen)),
    uint!("erf.lctr", "Loss counter", 16, Dec, |p| p
        .erf
        .map(|e| e.lctr)),
    uint!("erf.wlen", "Wire length", 16, Dec, |p| p
        .erf
        .map(|e| e.wlen)),
    // eth
    presence!("eth", "Ethernet", |p| p.eth.is_some()),
    ether!("eth.dst", "Destination", |p| p.eth.map(|e| e.dst)),
    ether!("eth.src", "Source", |p| p.eth.map(|e| e.src)),
    Field {
        name: "eth.addr",
        title: "Address",
        ty: Ether,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some(e) = c.pkt.eth {
                o.push(Value::Ether(e.dst));
                o.push(Value::Ether(e.src));
            }
        },
    },
    // An 802.3 frame has a length where Ethernet II has its type.
    named(
        names::ethertype,
        uint!("eth.type", "Type", 16, Hex, |p| p
            .eth
            .map(|e| e.ethertype)
            .filter(|t| *t >= 0x0600)),
    ),
    uint!("eth.len", "Length", 16, Dec, |p| p
        .eth
        .map(|e| e.ethertype)
        .filter(|t| *t < 0x0600)),
    // vlan
    presence!("vlan", "802.1Q Virtual LAN", |p| p.vlans[0].is_some()),
    Field {
        name: "vlan.priority",
        title: "Priority",
        ty: Uint(16),
        base: Dec,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(c.pkt.vlan_tags().map(|t| Value::Uint(u64::from(t.pcp)))),
    },
    named(
        names::eligible,
        Field {
            name: "vlan.dei",
            title: "DEI",
            ty: Bool,
            base: Base::None,
            in_tshark: true,
            names: None,
            get: |c, o| o.extend(c.pkt.vlan_tags().map(|t| Value::Bool(t.dei))),
        },
    ),
    Field {
        name: "vlan.id",
        title: "ID",
        ty: Uint(16),
        base: Dec,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(c.pkt.vlan_tags().map(|t| Value::Uint(u64::from(t.id)))),
    },
    named(
        names::ethertype,
        Field {
            name: "vlan.etype",
            title: "Type",
            ty: Uint(16),
            base: Hex,
            in_tshark: true,
            names: None,
            get: |c, o| {
                let n = c.pkt.vlan_tags().count();
                o.extend(
                    (0..n).filter_map(|i| vlan_etype(c.pkt, i).map(|t| Value::Uint(u64::from(t)))),
                );
            },
        },
    ),
    // ip
    presence!("ip", "Internet Protocol Version 4", |p| p
        .ip
        .is_some_and(|i| i.version == 4)),
    // tshark's IPv6 dissector fills ip.version too.
    uint!("ip.version", "Version", 8, Dec, |p| p.ip.map(|i| i.version)),
    uint!("ip.hdr_len", "Header Length", 8, Dec, |p| ipv4_header(p)
        .map(|h| (h[0] & 0x0f) * 4)),
    uint!("ip.dsfield", "Differentiated Services Field", 8, Hex, |p| {
        ipv4_header(p).map(|h| h[1])
    }),
    named(
        names::dscp,
        uint!(
            "ip.dsfield.dscp",
            "Differentiated Services Codepoint",
            8,
            Dec,
            |p| ipv4_header(p).map(|h| h[1] >> 2)
        ),
    ),
    named(
        names::ecn,
        uint!(
            "ip.dsfield.ecn",
            "Explicit Congestion Notification",
            8,
            Dec,
            |p| ipv4_header(p).map(|h| h[1] & 3)
        ),
    ),
    uint!("ip.len", "Total Length", 16, Dec, |p| ipv4_header(p)
        .and_then(|h| be16(h, 2))),
    uint!("ip.id", "Identification", 16, HexDec, |p| ipv4_header(p)
        .and_then(|h| be16(h, 4))),
    uint!("ip.flags", "Flags", 8, Hex, |p| ipv4_header(p)
        .map(|h| h[6] >> 5)),
    named(
        names::set_not_set,
        boolean!("ip.flags.rb", "Reserved bit", |p| ipv4_header(p)
            .map(|h| h[6] & 0x80 != 0)),
    ),
    named(
        names::set_not_set,
        boolean!("ip.flags.df", "Don't fragment", |p| ipv4_header(p)
            .map(|h| h[6] & 0x40 != 0)),
    ),
    named(
        names::set_not_set,
        boolean!("ip.flags.mf", "More fragments", |p| ipv4_header(p)
            .map(|h| h[6] & 0x20 != 0)),
    ),
    uint!("ip.frag_offset", "Fragment Offset", 16, Dec, |p| {
        ipv4_header(p)
            .and_then(|h| be16(h, 6))
            .map(|v| (v & 0x1fff) * 8)
    }),
    uint!("ip.ttl", "Time to Live", 8, Dec, |p| ipv4_header(p)
        .map(|h| h[8])),
    named(
        names::ip_protocol,
        uint!("ip.proto", "Protocol", 8, Dec, |p| ipv4_header(p)
            .map(|h| h[9])),
    ),
    uint!("ip.checksum", "Header Checksum", 16, Hex, |p| ipv4_header(
        p
    )
    .and_then(|h| be16(h, 10))),
    Field {
        name: "ip.src",
        title: "Source Address",
        ty: Ipv4,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(c.pkt.ip.and_then(|i| v4(i.src))),
    },
    Field {
        name: "ip.dst",
        title: "Destination Address",
        ty: Ipv4,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(c.pkt.ip.and_then(|i| v4(i.dst))),
    },
    Field {
        name: "ip.addr",
        title: "Source or Destination Address",
        ty: Ipv4,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some(i) = c.pkt.ip {
                o.extend(v4(i.src));
                o.extend(v4(i.dst));
            }
        },
    },
    // ipv6
    presence!("ipv6", "Internet Protocol Version 6", |p| p
        .ip
        .is_some_and(|i| i.version == 6)),
    uint!("ipv6.version", "Version", 8, Dec, |p| ipv6_header(p)
        .map(|h| h[0] >> 4)),
    uint!("ipv6.tclass", "Traffic Class", 32, Hex, |p| ipv6_header(p)
        .and_then(|h| be16(h, 0))
        .map(|v| (v >> 4) & 0xff)),
    named(
        names::dscp,
        uint!(
            "ipv6.tclass.dscp",
            "Differentiated Services Codepoint",
            32,
            Dec,
            |p| ipv6_header(p)
                .and_then(|h| be16(h, 0))
                .map(|v| (v >> 6) & 0x3f)
        ),
    ),
    named(
        names::ecn,
        uint!(
            "ipv6.tclass.ecn",
            "Explicit Congestion Notification",
            32,
            Dec,
            |p| ipv6_header(p)
                .and_then(|h| be16(h, 0))
                .map(|v| (v >> 4) & 0x3)
        ),
    ),
    uint!("ipv6.flow", "Flow Label", 24, Hex, |p| ipv6_header(p)
        .and_then(|h| be32(h, 0))
        .map(|v| v & 0xfffff)),
    uint!("ipv6.plen", "Payload Length", 16, Dec, |p| ipv6_header(p)
        .and_then(|h| be16(h, 4))),
    named(
        names::ip_protocol,
        uint!("ipv6.nxt", "Next Header", 8, Dec, |p| ipv6_header(p)
            .map(|h| h[6])),
    ),
    uint!("ipv6.hlim", "Hop Limit", 8, Dec, |p| ipv6_header(p)
        .map(|h| h[7])),
    Field {
        name: "ipv6.src",
        title: "Source Address",
        ty: Ipv6,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(c.pkt.ip.and_then(|i| v6(i.src))),
    },
    Field {
        name: "ipv6.dst",
        title: "Destination Address",
        ty: Ipv6,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(c.pkt.ip.and_then(|i| v6(i.dst))),
    },
    Field {
        name: "ipv6.addr",
        title: "Source or Destination Address",
        ty: Ipv6,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some(i) = c.pkt.ip {
                o.extend(v6(i.src));
                o.extend(v6(i.dst));
            }
        },
    },
    // udp
    presence!("udp", "User Datagram Protocol", |p| p.udp.is_some()),
    uint!("udp.srcport", "Source Port", 16, Dec, |p| p
        .udp
        .map(|u| u.sport)),
    uint!("udp.dstport", "Destination Port", 16, Dec, |p| p
        .udp
        .map(|u| u.dport)),
    Field {
        name: "udp.port",
        title: "Source or Destination Port",
        ty: Uint(16),
        base: Dec,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some(u) = c.pkt.udp {
                o.push(Value::Uint(u64::from(u.sport)));
                o.push(Value::Uint(u64::from(u.dport)));
            }
        },
    },
    uint!("udp.length", "Length", 16, Dec, |p| p.udp.map(|u| u.length)),
    uint!("udp.checksum", "Checksum", 16, Hex, |p| p
        .udp
        .map(|u| u.checksum)),
    // tcp, icmp, icmpv6, igmp, arp: what a mirror carries beside RoCE,
    // named so that a filter can keep it out (`-Y '!tcp && !arp'`).
    presence!("tcp", "Transmission Control Protocol", |p| p
        .other_l4
        .and_then(OtherL4::tcp)
        .is_some()),
    uint!("tcp.srcport", "Source Port", 16, Dec, |p| p
        .other_l4
        .and_then(OtherL4::tcp)
        .map(|t| t.0)),
    uint!("tcp.dstport", "Destination Port", 16, Dec, |p| p
        .other_l4
        .and_then(OtherL4::tcp)
        .map(|t| t.1)),
    Field {
        name: "tcp.port",
        title: "Source or Destination Port",
        ty: Uint(16),
        base: Dec,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some((sport, dport)) = c.pkt.other_l4.and_then(OtherL4::tcp) {
                o.push(Value::Uint(u64::from(sport)));
                o.push(Value::Uint(u64::from(dport)));
            }
        },
    },
    tcp_conv!("tcp.stream", "Stream index", 32, |c, _t| c
        .tcp
        .map(|t| t.stream)),
    uint!("tcp.len", "TCP Segment Len", 32, Dec, |p| p
        .tcp_payload_len()),
    tcp_conv!("tcp.seq", "Sequence Number", 32, |c, t| Some(
        c.tcp.map_or(t.seq(), |s| s.seq(&t))
    )),
    uint!("tcp.seq_raw", "Sequence Number (raw)", 32, Dec, |p| p
        .tcp()
        .map(|t| t.seq())),
    tcp_conv!("tcp.nxtseq", "Next Sequence Number", 32, |c, t| {
        let seq = c.tcp.map_or(t.seq(), |s| s.seq(&t));
        let len = c.pkt.tcp_payload_len().unwrap_or(0);
        Some(t.next_seq(seq, len))
    }),
    tcp_conv!("tcp.ack", "Acknowledgment Number", 32, |c, t| Some(
        match c.tcp {
            Some(s) if t.has(tcp::ACK) => s.acked(t.ack()),
            _ => t.ack(),
        }
    )),
    uint!("tcp.ack_raw", "Acknowledgment number (raw)", 32, Dec, |p| p
        .tcp()
        .map(|t| t.ack())),
    uint!("tcp.hdr_len", "Header Length", 8, Dec, |p| p
        .tcp()
        .map(|t| t.header_len() as u64)),
    uint!("tcp.flags", "Flags", 16, Hex, |p| p
        .tcp()
        .map(|t| t.flags())),
    tcp_flag!("tcp.flags.res", "Reserved", tcp::RESERVED),
    tcp_flag!("tcp.flags.ae", "Accurate ECN", tcp::NS),
    tcp_flag!("tcp.flags.cwr", "Congestion Window Reduced", tcp::CWR),
    tcp_flag!("tcp.flags.ece", "ECN-Echo", tcp::ECE),
    tcp_flag!("tcp.flags.urg", "Urgent", tcp::URG),
    tcp_flag!("tcp.flags.ack", "Acknowledgment", tcp::ACK),
    tcp_flag!("tcp.flags.push", "Push", tcp::PSH),
    tcp_flag!("tcp.flags.reset", "Reset", tcp::RST),
    tcp_flag!("tcp.flags.syn", "Syn", tcp::SYN),
    tcp_flag!("tcp.flags.fin", "Fin", tcp::FIN),
    uint!("tcp.window_size_value", "Window", 16, Dec, |p| p
        .tcp()
        .map(|t| t.window())),
    tcp_conv!(
        "tcp.window_size",
        "Calculated window size",
        32,
        |c, t| Some(c.tcp.map_or(u32::from(t.window()), |s| s.window(&t)))
    ),
    uint!("tcp.checksum", "Checksum", 16, Hex, |p| p
        .tcp()
        .map(|t| t.checksum())),
    uint!("tcp.urgent_pointer", "Urgent Pointer", 16, Dec, |p| p
        .tcp()
        .map(|t| t.urgent())),
    tcp_option!(
        "tcp.options.mss_val",
        "MSS Value",
        16,
        |op, _seen| match op {
            TcpOption::Mss(v) => vec![u64::from(v)],
            _ => vec![],
        }
    ),
    tcp_option!(
        "tcp.options.wscale.shift",
        "Shift count",
        8,
        |op, _seen| match op {
            TcpOption::WindowScale(s) => vec![u64::from(s)],
            _ => vec![],
        }
    ),
    tcp_option!(
        "tcp.options.wscale.multiplier",
        "Multiplier",
        16,
        |op, _seen| match op {
            TcpOption::WindowScale(s) => vec![1u64 << s.min(tcp::MAX_WINDOW_SHIFT)],
            _ => vec![],
        }
    ),
    tcp_option!(
        "tcp.options.timestamp.tsval",
        "Timestamp value",
        32,
        |op, _seen| match op {
            TcpOption::Timestamps { value, .. } => vec![u64::from(value)],
            _ => vec![],
        }
    ),
    tcp_option!(
        "tcp.options.timestamp.tsecr",
        "Timestamp echo reply",
        32,
        |op, _seen| match op {
            TcpOption::Timestamps { echo, .. } => vec![u64::from(echo)],
            _ => vec![],
        }
    ),
    tcp_option!(
        "tcp.options.sack_le",
        "TCP SACK Left Edge",
        32,
        |op, seen| match op {
            TcpOption::Sack(d) => tcp::sack_blocks(d)
                .map(|(l, _)| u64::from(seen.map_or(l, |s| s.acked(l))))
                .collect(),
            _ => vec![],
        }
    ),
    tcp_option!(
        "tcp.options.sack_re",
        "TCP SACK Right Edge",
        32,
        |op, seen| match op {
            TcpOption::Sack(d) => tcp::sack_blocks(d)
                .map(|(_, r)| u64::from(seen.map_or(r, |s| s.acked(r))))
                .collect(),
            _ => vec![],
        }
    ),
    Field {
        name: "tcp.analysis.flags",
        title: "TCP Analysis Flags",
        ty: Presence,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if c.tcp.is_some_and(|t| t.notes.has(Notes::ANY)) {
                o.push(Value::Present);
            }
        },
    },
    tcp_note!(0),
    tcp_note!(1),
    tcp_note!(2),
    tcp_note!(3),
    tcp_note!(4),
    tcp_note!(5),
    tcp_note!(6),
    tcp_note!(7),
    tcp_note!(8),
    tcp_note!(9),
    tcp_note!(10),
    tcp_note!(11),
    tcp_note!(12),
    tcp_note!(13),
    tcp_note!(14),
    Field {
        name: "tcp.analysis.duplicate_ack_num",
        title: "Duplicate ACK #",
        ty: Uint(32),
        base: Dec,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some((_, n)) = c.tcp.and_then(|t| t.dup_ack) {
                o.push(Value::Uint(u64::from(n)));
            }
        },
    },
    tcp_measure!(
        "tcp.analysis.duplicate_ack_frame",
        "Duplicate to the ACK in frame",
        FrameNum,
        |t| t.dup_ack.map(|(frame, _)| Value::Uint(frame))
    ),
    tcp_measure!("tcp.analysis", "SEQ/ACK analysis", Presence, |t| t
        .measured
        .shown
        .then_some(Value::Present)),
    tcp_measure!(
        "tcp.analysis.acks_frame",
        "This is an ACK to the segment in frame",
        FrameNum,
        |t| t.measured.acks.map(|(frame, _)| Value::Uint(frame))
    ),
    tcp_measure!(
        "tcp.analysis.ack_rtt",
        "The RTT to ACK the segment was",
        RelTime,
        |t| t
            .measured
            .acks
            .filter(|a| a.1 != 0)
            .map(|(_, ns)| Value::Time(i128::from(ns)))
    ),
    // Shown under the analysis, so only where there is one.
    tcp_measure!("tcp.analysis.initial_rtt", "iRTT", RelTime, |t| t
        .handshake_ns
        .filter(|&ns| ns != 0 && t.measured.shown)
        .map(|ns| Value::Time(i128::from(ns)))),
    tcp_measure!(
        "tcp.analysis.bytes_in_flight",
        "Bytes in flight",
        Uint(32),
        |t| t.measured.in_flight.map(|(n, _)| Value::Uint(u64::from(n)))
    ),
    tcp_measure!(
        "tcp.analysis.push_bytes_sent",
        "Bytes sent since last PSH flag",
        Uint(32),
        |t| t.measured.in_flight.map(|(_, n)| Value::Uint(u64::from(n)))
    ),
    tcp_measure!(
        "tcp.analysis.rto",
        "The RTO for this segment was",
        RelTime,
        |t| t.measured.rto.map(|(ns, _)| Value::Time(i128::from(ns)))
    ),
    tcp_measure!(
        "tcp.analysis.rto_frame",
        "RTO based on delta from frame",
        FrameNum,
        |t| t.measured.rto.map(|(_, frame)| Value::Uint(frame))
    ),
    tcp_measure!(
        "tcp.time_relative",
        "Time since first frame in this TCP stream",
        RelTime,
        |t| Some(Value::Time(i128::from(t.since_first_ns)))
    ),
    tcp_measure!(
        "tcp.time_delta",
        "Time since previous frame in this TCP stream",
        RelTime,
        |t| Some(Value::Time(i128::from(t.since_prev_ns)))
    ),
    presence!("icmp", "Internet Control Message Protocol", |p| p
        .other_l4
        .and_then(OtherL4::icmp)
        .is_some()),
    uint!("icmp.type", "Type", 8, Dec, |p| p
        .other_l4
        .and_then(OtherL4::icmp)
        .map(|t| t.0)),
    uint!("icmp.code", "Code", 8, Dec, |p| p
        .other_l4
        .and_then(OtherL4::icmp)
        .map(|t| t.1)),
    presence!("icmpv6", "Internet Control Message Protocol v6", |p| p
        .other_l4
        .and_then(OtherL4::icmpv6)
        .is_some()),
    uint!("icmpv6.type", "Type", 8, Dec, |p| p
        .other_l4
        .and_then(OtherL4::icmpv6)
        .map(|t| t.0)),
    uint!("icmpv6.code", "Code", 8, Dec, |p| p
        .other_l4
        .and_then(OtherL4::icmpv6)
        .map(|t| t.1)),
    presence!("igmp", "Internet Group Management Protocol", |p| matches!(
        p.other_l4,
        Some(OtherL4::Igmp { .. })
    )),
    uint!("igmp.version", "IGMP Version", 8, Dec, |p| p
        .igmp()
        .and_then(|m| m.version())),
    uint!("igmp.type", "Type", 8, Hex, |p| p.igmp().map(|m| m.kind())),
    uint!("igmp.max_resp", "Max Resp Time", 8, Dec, |p| p
        .igmp()
        .and_then(|m| m.max_resp_time())),
    uint!("igmp.checksum", "Checksum", 16, Hex, |p| p
        .igmp()
        .map(|m| m.checksum())),
    uint!("igmp.num_grp_recs", "Num Group Records", 16, Dec, |p| p
        .igmp()
        .filter(|m| m.kind() == crate::wire::igmp::V3_REPORT)
        .map(|m| m.record_count())),
    Field {
        name: "igmp.maddr",
        title: "Multicast Address",
        ty: Ipv4,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            let Some(m) = c.pkt.igmp() else { return };
            if m.kind() == crate::wire::igmp::V3_REPORT {
                o.extend(m.records().map(|r| Value::Ipv4(r.group)));
            } else if m.version().is_some() {
                o.push(Value::Ipv4(m.group()));
            }
        },
    },
    // DNS, mDNS and LLMNR: the name service a mirror of a fabric's hosts
    // carries beside RoCE. The fields are tshark's `dns.*` for all three;
    // a datagram too short for a header is named DNS but matches none.
    presence!("dns", "Domain Name System", |p| p
        .dns()
        .is_some_and(
            |d| d.flavour == crate::wire::dns::Flavour::Dns && d.message.is_some()
        )),
    presence!("mdns", "Multicast Domain Name System", |p| p
        .dns()
        .is_some_and(
            |d| d.flavour == crate::wire::dns::Flavour::Mdns && d.message.is_some()
        )),
    presence!("llmnr", "Link-local Multicast Name Resolution", |p| p
        .dns()
        .is_some_and(
            |d| d.flavour == crate::wire::dns::Flavour::Llmnr && d.message.is_some()
        )),
    // SSH: the version exchange, the key exchange's packets in the clear
    // and the encrypted rest.
    presence!("ssh", "SSH Protocol", |p| p.ssh().is_some()),
    Field {
        name: "ssh.protocol",
        title: "Protocol",
        ty: Str,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some(line) = c
                .pkt
                .ssh()
                .and_then(|s| crate::wire::ssh::version_line(s.payload))
            {
                let mut text = String::new();
                crate::wire::push_text(&mut text, line);
                o.push(Value::Str(Cow::Owned(text)));
            }
        },
    },
    boolean!("ssh.direction", "Direction", |p| p
        .ssh()
        .map(|s| !s.from_client)),
    uints!("ssh.packet_length", "Packet Length", 32, Dec, |c| {
        ssh_plain(c).map(|p| p.packet_length)
    }),
    uints!("ssh.padding_length", "Padding Length", 8, Dec, |c| {
        ssh_plain(c).map(|p| p.padding_length)
    }),
    uints!("ssh.message_code", "Message Code", 8, Dec, |c| ssh_plain(c)
        .map(|p| p.code)),
    Field {
        name: "ssh.packet_length_encrypted",
        title: "Packet Length (encrypted)",
        ty: Bytes,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some(e) = ssh_encrypted_unknown(c) {
                o.push(Value::Bytes(Cow::Borrowed(e.get(..4).unwrap_or(e))));
            }
        },
    },
    Field {
        name: "ssh.encrypted_packet",
        title: "Encrypted Packet",
        ty: Bytes,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some(e) = ssh_encrypted_unknown(c).and_then(|e| e.get(4..)) {
                o.push(Value::Bytes(Cow::Borrowed(e)));
            }
        },
    },
    // TLS: the record layer of each record a segment shows (completed
    // here from earlier segments too), handshake messages in the clear,
    // alerts.
    Field {
        name: "tls",
        title: "Transport Layer Security",
        ty: Presence,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some((_, r)) = crate::output::packets::tls_reading(c.pkt, c.tcp)
                && r.read_as_tls()
            {
                o.push(Value::Present);
            }
        },
    },
    uints!("tls.record.content_type", "Content Type", 8, Dec, |c| {
        tls_records(c)
            .into_iter()
            .filter(|r| !tls_opaque(r))
            .map(|r| r.content_type)
    }),
    uints!("tls.record.opaque_type", "Opaque Type", 8, Dec, |c| {
        tls_records(c)
            .into_iter()
            .filter(tls_opaque)
            .map(|r| r.content_type)
    }),
    uints!("tls.record.version", "Version", 16, Hex, |c| tls_records(c)
        .into_iter()
        .map(|r| r.version)),
    uints!("tls.record.length", "Length", 16, Dec, |c| tls_records(c)
        .into_iter()
        .map(|r| r.length)),
    uints!("tls.handshake.type", "Handshake Type", 8, Dec, |c| {
        tls_messages(c).into_iter().map(|m| m.kind)
    }),
    Field {
        name: "tls.handshake.extensions_server_name",
        title: "Server Name",
        ty: Str,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            let Some(tls) = c.pkt.tls() else {
                return;
            };
            for crate::wire::tls::Message {
                kind: t, at, len, ..
            } in tls_messages(c)
            {
                let body = at.and_then(|a| {
                    let s = a.checked_add(4)?;
                    tls.payload
                        .get(s..s.checked_add(usize::try_from(len).ok()?)?)
                });
                if t == crate::wire::tls::CLIENT_HELLO
                    && let Some(name) = body.and_then(crate::wire::tls::client_hello_server_name)
                {
                    let mut text = String::new();
                    crate::wire::push_text(&mut text, name);
                    o.push(Value::Str(Cow::Owned(text)));
                }
            }
        },
    },
    uints!("tls.alert_message.level", "Level", 8, Dec, |c| {
        tls_records(c).into_iter().filter_map(|r| match r.says {
            crate::wire::tls::Says::Alert { level, .. } => Some(level),
            _ => None,
        })
    }),
    uints!("tls.alert_message.desc", "Description", 8, Dec, |c| {
        tls_records(c).into_iter().filter_map(|r| match r.says {
            crate::wire::tls::Says::Alert { description, .. } => Some(description),
            _ => None,
        })
    }),
    // NetBIOS Name Service: its header's fields (the message is laid out
    // as DNS's).
    presence!("nbns", "NetBIOS Name Service", |p| nbns_message(p)
        .is_some()),
    uint!("nbns.id", "Transaction ID", 16, Hex, |p| nbns_message(p)
        .map(|m| m.id())),
    uints!("nbns.flags", "Flags", 16, Hex, |c| nbns_flags(c.pkt)),
    Field {
        name: "nbns.flags.response",
        title: "Response",
        ty: Bool,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.extend(
                nbns_flags(c.pkt)
                    .into_iter()
                    .map(|f| Value::Bool(f & 0x8000 != 0)),
            )
        },
    },
    uints!("nbns.flags.opcode", "Opcode", 16, Dec, |c| nbns_flags(
        c.pkt
    )
    .into_iter()
    .map(|f| (f >> 11) & 0xf)),
    uint!("nbns.flags.rcode", "Reply code", 16, Dec, |p| nbns_message(
        p
    )
    .filter(|m| m.is_response())
    .map(|m| m.rcode())),
    uint!("nbns.count.queries", "Questions", 16, Dec, |p| {
        nbns_message(p).map(|m| m.counts()[0])
    }),
    uint!("nbns.count.answers", "Answer RRs", 16, Dec, |p| {
        nbns_message(p).map(|m| m.counts()[1])
    }),
    uint!("nbns.count.auth_rr", "Authority RRs", 16, Dec, |p| {
        nbns_message(p).map(|m| m.counts()[2])
    }),
    uint!("nbns.count.add_rr", "Additional RRs", 16, Dec, |p| {
        nbns_message(p).map(|m| m.counts()[3])
    }),
    // BOOTP and DHCP: one protocol to tshark's filters (`dhcp`), whichever
    // its summary line names.
    presence!("dhcp", "Dynamic Host Configuration Protocol", |p| {
        dhcp_message(p).is_some()
    }),
    uint!("dhcp.type", "Message type", 8, Dec, |p| dhcp_message(p)
        .map(|m| m.op())),
    uints!("dhcp.hw.type", "Hardware type", 8, Hex, |c| {
        dhcp_message(c.pkt).into_iter().flat_map(|m| {
            m.htype()
                .into_iter()
                .chain(dhcp_client_ids(&m).into_iter().map(|(t, _)| t))
        })
    }),
    uint!("dhcp.hw.len", "Hardware address length", 8, Dec, |p| {
        dhcp_message(p).and_then(|m| m.hlen())
    }),
    uint!("dhcp.id", "Transaction ID", 32, Hex, |p| dhcp_message(p)
        .and_then(|m| m.xid())),
    uint!("dhcp.flags", "Bootp flags", 16, Hex, |p| dhcp_message(p)
        .and_then(|m| m.flags())),
    ipv4!("dhcp.ip.client", "Client IP address", |p| dhcp_message(p)
        .and_then(|m| m.address(0))),
    ipv4!("dhcp.ip.your", "Your (client) IP address", |p| {
        dhcp_message(p).and_then(|m| m.address(1))
    }),
    Field {
        name: "dhcp.hw.mac_addr",
        title: "Client MAC address",
        ty: Ether,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some(m) = dhcp_message(c.pkt) {
                o.extend(m.mac().map(Value::Ether));
                o.extend(
                    dhcp_client_ids(&m)
                        .into_iter()
                        .map(|(_, mac)| Value::Ether(mac)),
                );
            }
        },
    },
    uints!("dhcp.option.dhcp", "DHCP", 8, Dec, |c| dhcp_message(c.pkt)
        .map(|m| m.message_types())
        .unwrap_or_default()),
    // SSDP: HTTP's first line, in HTTP's fields.
    presence!("ssdp", "Simple Service Discovery Protocol", |p| ssdp_line(
        p
    )
    .is_some()),
    // HTTP, over TCP, and SSDP's in HTTP's fields.
    presence!(
        "http",
        "Hypertext Transfer Protocol",
        ctx | c
            | c.tcp
                .and_then(|t| t.http.as_ref())
                .is_some_and(crate::analysis::http::Reading::has_item)
    ),
    presence!(
        "http.request",
        "Request",
        ctx | c
            | matches!(
                http_head(c).map(|h| h.start),
                Some(StartLine::Request { method, .. }) if !crate::wire::http::is_notification(method)
            )
    ),
    presence!(
        "http.notification",
        "Notification",
        ctx | c
            | matches!(
                http_head(c).map(|h| h.start),
                Some(StartLine::Request { method, .. }) if crate::wire::http::is_notification(method)
            )
    ),
    presence!(
        "http.response",
        "Response",
        ctx | c
            | matches!(
                http_head(c).map(|h| h.start),
                Some(StartLine::Response { .. })
            )
    ),
    http_str!("http.request.method", "Request Method", |h| match h.start {
        StartLine::Request { method, .. } => Some(method),
        _ => None,
    }),
    http_str!("http.request.uri", "Request URI", |h| match h.start {
        StartLine::Request { line, .. } => line.split(|&b| b == b' ').nth(1),
        _ => None,
    }),
    http_str!(
        "http.request.version",
        "Request Version",
        |h| match h.start {
            StartLine::Request { line, .. } => line.split(|&b| b == b' ').nth(2),
            _ => None,
        }
    ),
    http_str!(
        "http.response.version",
        "Response Version",
        |h| match h.start {
            StartLine::Response { line, .. } => line.split(|&b| b == b' ').next(),
            _ => None,
        }
    ),
    Field {
        name: "http.response.code",
        title: "Status Code",
        ty: Uint(16),
        base: Dec,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some(StartLine::Response {
                code: Some(code), ..
            }) = http_head(c).map(|h| h.start)
            {
                o.push(Value::Uint(u64::from(code)));
            }
        },
    },
    http_str!(
        "http.response.phrase",
        "Response Phrase",
        |h| match h.start {
            StartLine::Response { line, .. } => line.splitn(3, |&b| b == b' ').nth(2),
            _ => None,
        }
    ),
    http_str!("http.host", "Host", |h| h.header("host")),
    http_str!("http.user_agent", "User-Agent", |h| h.header("user-agent")),
    http_str!("http.server", "Server", |h| h.header("server")),
    http_str!("http.content_type", "Content-Type", |h| h
        .header("content-type")),
    Field {
        name: "http.content_length",
        title: "Content length",
        ty: Uint(64),
        base: Dec,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if let Some(n) = http_head(c).and_then(|h| h.content_length()) {
                o.push(Value::Uint(n));
            }
        },
    },
    uint!("dns.id", "Transaction ID", 16, Hex, |p| dns_message(p)
        .map(|m| m.id())),
    uint!("dns.flags", "Flags", 16, Hex, |p| dns_message(p)
        .map(|m| m.flags())),
    boolean!("dns.flags.response", "Response", |p| dns_message(p)
        .map(|m| m.is_response())),
    uint!("dns.flags.opcode", "Opcode", 16, Dec, |p| dns_message(p)
        .map(|m| m.opcode())),
    uint!("dns.flags.rcode", "Reply code", 16, Dec, |p| dns_message(p)
        .filter(|m| m.is_response())
        .map(|m| m.rcode())),
    // A dynamic update counts zones, prerequisites and updates instead.
    uint!("dns.count.queries", "Questions", 16, Dec, |p| dns_message(
        p
    )
    .filter(|m| m.opcode() != 5)
    .map(|m| m.counts()[0])),
    uint!("dns.count.answers", "Answer RRs", 16, Dec, |p| dns_message(
        p
    )
    .filter(|m| m.opcode() != 5)
    .map(|m| m.counts()[1])),
    uint!("dns.count.auth_rr", "Authority RRs", 16, Dec, |p| {
        dns_message(p)
            .filter(|m| m.opcode() != 5)
            .map(|m| m.counts()[2])
    }),
    uint!("dns.count.add_rr", "Additional RRs", 16, Dec, |p| {
        dns_message(p).map(|m| m.counts()[3])
    }),
    dns_records!("dns.qry.name", "Name", Str, Base::None, |m, _mdns, r, o| {
        if r.section == crate::wire::dns::Section::Question {
            o.extend(dns_name(&m, r.at));
        }
    }),
    dns_records!("dns.qry.type", "Type", Uint(16), Dec, |_m, _mdns, r, o| {
        if r.section == crate::wire::dns::Section::Question {
            o.push(Value::Uint(u64::from(r.rtype)));
        }
    }),
    dns_records!("dns.qry.class", "Class", Uint(16), Hex, |_m, mdns, r, o| {
        if r.section == crate::wire::dns::Section::Question {
            o.push(Value::Uint(u64::from(dns_class(mdns, r.class))));
        }
    }),
    // An SRV record's name is split into service, protocol and name.
    dns_records!(
        "dns.resp.name",
        "Name",
        Str,
        Base::None,
        |m, _mdns, r, o| {
            if r.section != crate::wire::dns::Section::Question
                && r.rtype != crate::wire::dns::T_SRV
            {
                o.extend(dns_name(&m, r.at));
            }
        }
    ),
    // With the types an NSEC record's bit map lists, as tshark's tree has
    // them under the same field.
    dns_records!("dns.resp.type", "Type", Uint(16), Dec, |m, _mdns, r, o| {
        if r.section != crate::wire::dns::Section::Question {
            o.push(Value::Uint(u64::from(r.rtype)));
            if r.rtype == crate::wire::dns::T_NSEC {
                o.extend(
                    m.nsec_types(&r)
                        .into_iter()
                        .map(|t| Value::Uint(u64::from(t))),
                );
            }
        }
    }),
    dns_records!(
        "dns.resp.class",
        "Class",
        Uint(16),
        Hex,
        |_m, mdns, r, o| {
            if r.section != crate::wire::dns::Section::Question
                && r.rtype != crate::wire::dns::T_OPT
            {
                o.push(Value::Uint(u64::from(dns_class(mdns, r.class))));
            }
        }
    ),
    dns_records!(
        "dns.resp.ttl",
        "Time to live",
        Uint(32),
        Dec,
        |_m, _mdns, r, o| {
            if r.section != crate::wire::dns::Section::Question
                && r.rtype != crate::wire::dns::T_OPT
            {
                o.push(Value::Uint(u64::from(r.ttl)));
            }
        }
    ),
    dns_records!("dns.a", "Address", Ipv4, Base::None, |_m, _mdns, r, o| {
        o.extend(r.ipv4().map(Value::Ipv4));
    }),
    dns_records!(
        "dns.aaaa",
        "AAAA Address",
        Ipv6,
        Base::None,
        |_m, _mdns, r, o| {
            o.extend(r.ipv6().map(Value::Ipv6));
        }
    ),
    dns_records!("dns.cname", "CNAME", Str, Base::None, |m, _mdns, r, o| {
        if r.rtype == crate::wire::dns::T_CNAME && !r.rdata.is_empty() {
            o.extend(dns_name(&m, r.rdata_at));
        }
    }),
    dns_records!(
        "dns.ptr.domain_name",
        "Domain Name",
        Str,
        Base::None,
        |m, _mdns, r, o| {
            if r.rtype == crate::wire::dns::T_PTR && !r.rdata.is_empty() {
                o.extend(dns_name(&m, r.rdata_at));
            }
        }
    ),
    dns_records!(
        "dns.ns",
        "Name Server",
        Str,
        Base::None,
        |m, _mdns, r, o| {
            if r.rtype == crate::wire::dns::T_NS && !r.rdata.is_empty() {
                o.extend(dns_name(&m, r.rdata_at));
            }
        }
    ),
    dns_records!("dns.srv.port", "Port", Uint(16), Dec, |_m, _mdns, r, o| {
        if r.rtype == crate::wire::dns::T_SRV
            && let Some(&[a, b]) = r.rdata.get(4..6)
        {
            o.push(Value::Uint(u64::from(u16::from_be_bytes([a, b]))));
        }
    }),
    dns_records!(
        "dns.srv.target",
        "Target",
        Str,
        Base::None,
        |m, _mdns, r, o| {
            if r.rtype == crate::wire::dns::T_SRV && r.rdata.len() > 6 {
                o.extend(dns_name(&m, r.rdata_at + 6));
            }
        }
    ),
    // The spanning tree: tshark's `stp.*` of a whole BPDU (none of a cut
    // one; a TCN has its first four only).
    presence!("stp", "Spanning Tree Protocol", |p| p
        .stp()
        .is_some_and(|(_, b)| b.is_some())),
    uint!("stp.protocol", "Protocol Identifier", 16, Hex, |p| {
        stp_bpdu(p).map(|b| b.protocol())
    }),
    uint!("stp.version", "Protocol Version Identifier", 8, Dec, |p| {
        stp_bpdu(p).map(|b| b.version())
    }),
    uint!("stp.type", "BPDU Type", 8, Hex, |p| stp_bpdu(p)
        .map(|b| b.kind())),
    uint!("stp.flags", "BPDU flags", 8, Hex, |p| stp_bpdu(p)
        .and_then(|b| b.flags())),
    uint!("stp.root.prio", "Root Bridge Priority", 16, Dec, |p| {
        stp_bpdu(p).and_then(|b| b.root()).map(|r| r.priority)
    }),
    uint!(
        "stp.root.ext",
        "Root Bridge System ID Extension",
        16,
        Dec,
        |p| stp_bpdu(p).and_then(|b| b.root()).map(|r| r.ext)
    ),
    ether!("stp.root.hw", "Root Bridge System ID", |p| stp_bpdu(p)
        .and_then(|b| b.root())
        .map(|r| r.mac)),
    uint!("stp.root.cost", "Root Path Cost", 32, Dec, |p| stp_bpdu(p)
        .and_then(|b| b.root_cost())),
    uint!("stp.bridge.prio", "Bridge Priority", 16, Dec, |p| stp_bpdu(
        p
    )
    .and_then(|b| b.bridge())
    .map(|r| r.priority)),
    uint!(
        "stp.bridge.ext",
        "Bridge System ID Extension",
        16,
        Dec,
        |p| stp_bpdu(p).and_then(|b| b.bridge()).map(|r| r.ext)
    ),
    ether!("stp.bridge.hw", "Bridge System ID", |p| stp_bpdu(p)
        .and_then(|b| b.bridge())
        .map(|r| r.mac)),
    uint!("stp.port", "Port identifier", 16, Hex, |p| stp_bpdu(p)
        .and_then(|b| b.port())),
    presence!("arp", "Address Resolution Protocol", |p| p.arp.is_some()),
    uint!("arp.opcode", "Opcode", 16, Dec, |p| p
        .arp
        .map(|a| a.operation)),
    ether!("arp.src.hw_mac", "Sender MAC address", |p| p
        .arp
        .map(|a| a.sender_mac)),
    Field {
        name: "arp.src.proto_ipv4",
        title: "Sender IP address",
        ty: Ipv4,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(c.pkt.arp.map(|a| Value::Ipv4(a.sender_ip))),
    },
    ether!("arp.dst.hw_mac", "Target MAC address", |p| p
        .arp
        .map(|a| a.target_mac)),
    Field {
        name: "arp.dst.proto_ipv4",
        title: "Target IP address",
        ty: Ipv4,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(c.pkt.arp.map(|a| Value::Ipv4(a.target_ip))),
    },
    // MAC control: 802.3x PAUSE and PFC
    presence!("macc", "MAC Control", |p| p.pause.is_some()),
    named(
        names::mac_control,
        uint!("macc.opcode", "Opcode", 16, Hex, |p| p
            .pause
            .map(|x| x.opcode())),
    ),
    uint!(
        "macc.pause_time",
        "pause_time",
        16,
        Dec,
        |p| match p.pause {
            Some(PauseRepr::Pause { time }) => Some(time),
            _ => None,
        }
    ),
    uint!(
        "macc.cbfc.enbv",
        "CBFC Class Enable Vector",
        16,
        Hex,
        |p| match p.pause {
            Some(PauseRepr::Pfc(f)) => Some(f.class_enable),
            _ => None,
        }
    ),
    boolean!("macc.cbfc.enbv.c0", "C0", |p| pfc_enabled(p, 0)),
    boolean!("macc.cbfc.enbv.c1", "C1", |p| pfc_enabled(p, 1)),
    boolean!("macc.cbfc.enbv.c2", "C2", |p| pfc_enabled(p, 2)),
    boolean!("macc.cbfc.enbv.c3", "C3", |p| pfc_enabled(p, 3)),
    boolean!("macc.cbfc.enbv.c4", "C4", |p| pfc_enabled(p, 4)),
    boolean!("macc.cbfc.enbv.c5", "C5", |p| pfc_enabled(p, 5)),
    boolean!("macc.cbfc.enbv.c6", "C6", |p| pfc_enabled(p, 6)),
    boolean!("macc.cbfc.enbv.c7", "C7", |p| pfc_enabled(p, 7)),
    uint!("macc.cbfc.pause_time.c0", "C0", 16, Dec, |p| pfc_time(p, 0)),
    uint!("macc.cbfc.pause_time.c1", "C1", 16, Dec, |p| pfc_time(p, 1)),
    uint!("macc.cbfc.pause_time.c2", "C2", 16, Dec, |p| pfc_time(p, 2)),
    uint!("macc.cbfc.pause_time.c3", "C3", 16, Dec, |p| pfc_time(p, 3)),
    uint!("macc.cbfc.pause_time.c4", "C4", 16, Dec, |p| pfc_time(p, 4)),
    uint!("macc.cbfc.pause_time.c5", "C5", 16, Dec, |p| pfc_time(p, 5)),
    uint!("macc.cbfc.pause_time.c6", "C6", 16, Dec, |p| pfc_time(p, 6)),
    uint!("macc.cbfc.pause_time.c7", "C7", 16, Dec, |p| pfc_time(p, 7)),
    // InfiniBand: LRH
    presence!("infiniband", "InfiniBand", |p| p.roce.is_some()),
    presence!("infiniband.lrh", "Local Route Header", |p| p.lrh.is_some()),
    uint!("infiniband.lrh.vl", "Virtual Lane", 8, Hex, |p| p
        .lrh
        .map(|l| l.vl)),
    uint!("infiniband.lrh.lver", "Link Version", 8, Dec, |p| p
        .lrh
        .map(|l| l.lver)),
    uint!("infiniband.lrh.sl", "Service Level", 8, Dec, |p| p
        .lrh
        .map(|l| l.sl)),
    uint!(
        "infiniband.lrh.reserved2",
        "Reserved (2 bits)",
        8,
        Dec,
        |p| p.lrh.map(|l| l.resv2)
    ),
    uint!("infiniband.lrh.lnh", "Link Next Header", 8, Hex, |p| p
        .lrh
        .map(|l| l.lnh.bits())),
    uint!(
        "infiniband.lrh.dlid",
        "Destination Local ID",
        16,
        Dec,
        |p| p.lrh.map(|l| l.dlid)
    ),
    uint!(
        "infiniband.lrh.reserved5",
        "Reserved (5 bits)",
        16,
        Dec,
        |p| p.lrh.map(|l| l.resv5)
    ),
    uint!("infiniband.lrh.pktlen", "Packet Length", 16, Dec, |p| p
        .lrh
        .map(|l| l.pkt_len)),
    uint!("infiniband.lrh.slid", "Source Local ID", 16, Dec, |p| p
        .lrh
        .map(|l| l.slid)),
    // GRH
    presence!("infiniband.grh", "Global Route Header", |p| p.grh.is_some()),
    uint!("infiniband.grh.ipver", "IP Version", 8, Dec, |p| p
        .grh
        .map(|g| g.ip_ver)),
    uint!("infiniband.grh.tclass", "Traffic Class", 16, Dec, |p| p
        .grh
        .map(|g| g.tclass)),
    uint!("infiniband.grh.flowlabel", "Flow Label", 32, Dec, |p| p
        .grh
        .map(|g| g.flow_label)),
    uint!("infiniband.grh.paylen", "Payload Length", 16, Dec, |p| p
        .grh
        .map(|g| g.pay_len)),
    uint!("infiniband.grh.nxthdr", "Next Header", 8, Dec, |p| p
        .grh
        .map(|g| g.nxt_hdr)),
    uint!("infiniband.grh.hoplmt", "Hop Limit", 8, Dec, |p| p
        .grh
        .map(|g| g.hop_lmt)),
    Field {
        name: "infiniband.grh.sgid",
        title: "Source GID",
        ty: Ipv6,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(c.pkt.grh.map(|g| Value::Ipv6(g.sgid_addr()))),
    },
    Field {
        name: "infiniband.grh.dgid",
        title: "Destination GID",
        ty: Ipv6,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(c.pkt.grh.map(|g| Value::Ipv6(g.dgid_addr()))),
    },
    // BTH
    presence!("infiniband.bth", "Base Transport Header", |p| p
        .bth
        .is_some()),
    named(
        names::bth_opcode,
        uint!("infiniband.bth.opcode", "Opcode", 8, Dec, |p| p
            .bth
            .map(|b| b.opcode.0)),
    ),
    ours(Field {
        name: "infiniband.bth.opcode_name",
        title: "Opcode name (RC SEND First, CNP, ...)",
        ty: Str,
        base: Base::None,
        in_tshark: false,
        names: None,
        get: |c, o| {
            o.extend(
                c.pkt
                    .bth
                    .map(|b| Value::Str(Cow::Borrowed(b.opcode.name()))),
            )
        },
    }),
    boolean!("infiniband.bth.se", "Solicited Event", |p| p
        .bth
        .map(|b| b.se)),
    boolean!("infiniband.bth.m", "MigReq", |p| p.bth.map(|b| b.m)),
    uint!("infiniband.bth.padcnt", "Pad Count", 8, Dec, |p| p
        .bth
        .map(|b| b.padcnt)),
    uint!("infiniband.bth.tver", "Header Version", 8, Dec, |p| p
        .bth
        .map(|b| b.tver)),
    uint!("infiniband.bth.p_key", "Partition Key", 16, Dec, |p| p
        .bth
        .map(|b| b.p_key)),
    ours(boolean!(
        "infiniband.bth.fecn",
        "Forward Explicit Congestion Notification",
        |p| p.bth.map(|b| b.fecn)
    )),
    ours(boolean!(
        "infiniband.bth.becn",
        "Backward Explicit Congestion Notification",
        |p| p.bth.map(|b| b.becn)
    )),
    uint!(
        "infiniband.bth.destqp",
        "Destination Queue Pair",
        24,
        Hex,
        |p| p.bth.map(|b| b.dest_qp)
    ),
    boolean!("infiniband.bth.a", "Acknowledge Request", |p| p
        .bth
        .map(|b| b.ack_req)),
    uint!(
        "infiniband.bth.reserved7",
        "Reserved (7 bits)",
        8,
        Dec,
        |p| bth_byte(p, 8).map(|b| b & 0x7f)
    ),
    uint!(
        "infiniband.bth.psn",
        "Packet Sequence Number",
        24,
        Dec,
        |p| p.bth.map(|b| b.psn)
    ),
    ours(presence!(
        "infiniband.cnp",
        "Congestion Notification Packet (RoCE v2 annex A17)",
        |p| p.bth.is_some_and(|b| b.opcode == crate::wire::Opcode::CNP)
    )),
    // Extended transport headers
    presence!(
        "infiniband.rdeth",
        "Reliable Datagram Extended Transport Header",
        |p| p.rdeth.is_some()
    ),
    uint!("infiniband.rdeth.eecnxt", "E2E Context", 24, Dec, |p| p
        .rdeth
        .map(|r| r.ee_context)),
    presence!(
        "infiniband.deth",
        "Datagram Extended Transport Header",
        |p| p.deth.is_some()
    ),
    uint!("infiniband.deth.q_key", "Queue Key", 64, Hex, |p| p
        .deth
        .map(|d| d.q_key)),
    uint!("infiniband.deth.srcqp", "Source Queue Pair", 32, Hex, |p| p
        .deth
        .map(|d| d.src_qp)),
    ours(presence!(
        "infiniband.xrceth",
        "XRC Extended Transport Header",
        |p| p.xrceth.is_some()
    )),
    ours(uint!("infiniband.xrceth.xrcsrq", "XRC SRQ", 24, Hex, |p| p
        .xrceth
        .map(|x| x.xrc_srq))),
    presence!("infiniband.reth", "RDMA Extended Transport Header", |p| p
        .reth
        .is_some()),
    Field {
        name: "infiniband.reth.va",
        title: "Virtual Address",
        ty: Uint(64),
        base: Hex,
        in_tshark: true,
        names: None,
        // tshark shows the AtomicETH's address under the same name.
        get: |c, o| {
            o.extend(c.pkt.reth.map(|r| Value::Uint(r.va)));
            o.extend(c.pkt.atomiceth.map(|a| Value::Uint(a.va)));
        },
    },
    Field {
        name: "infiniband.reth.r_key",
        title: "Remote Key",
        ty: Uint(32),
        base: Hex,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.extend(c.pkt.reth.map(|r| Value::Uint(u64::from(r.r_key))));
            o.extend(c.pkt.atomiceth.map(|a| Value::Uint(u64::from(a.r_key))));
        },
    },
    uint!("infiniband.reth.dmalen", "DMA Length", 32, DecHex, |p| p
        .reth
        .map(|r| r.dma_len)),
    presence!(
        "infiniband.atomiceth",
        "Atomic Extended Transport Header",
        |p| p.atomiceth.is_some()
    ),
    uint!(
        "infiniband.atomiceth.swapdt",
        "Swap (Or Add) Data",
        64,
        Dec,
        |p| p.atomiceth.map(|a| a.swap_add)
    ),
    uint!("infiniband.atomiceth.cmpdt", "Compare Data", 64, Dec, |p| p
        .atomiceth
        .map(|a| a.compare)),
    presence!("infiniband.aeth", "ACK Extended Transport Header", |p| p
        .aeth
        .is_some()),
    uint!("infiniband.aeth.syndrome", "Syndrome", 8, Dec, |p| p
        .aeth
        .map(|a| a.syndrome)),
    uint!(
        "infiniband.aeth.syndrome.reserved",
        "Reserved",
        8,
        Dec,
        |p| p.aeth.map(|a| a.syndrome >> 7)
    ),
    named(
        names::aeth_kind,
        uint!("infiniband.aeth.syndrome.opcode", "OpCode", 8, Dec, |p| p
            .aeth
            .map(|a| (a.syndrome >> 5) & 3)),
    ),
    uint!(
        "infiniband.aeth.syndrome.credit_count",
        "Credit Count",
        8,
        Dec,
        |p| syndrome_part(p, AckKind::Ack)
    ),
    named(
        names::rnr_timer,
        uint!("infiniband.aeth.syndrome.timer", "Timer", 8, Dec, |p| {
            syndrome_part(p, AckKind::RnrNak)
        }),
    ),
    uint!(
        "infiniband.aeth.syndrome.reserved_value",
        "Reserved",
        8,
        Dec,
        |p| syndrome_part(p, AckKind::Reserved)
    ),
    named(
        names::nak_code,
        uint!(
            "infiniband.aeth.syndrome.error_code",
            "Error Code",
            8,
            Dec,
            |p| syndrome_part(p, AckKind::Nak)
        ),
    ),
    uint!(
        "infiniband.aeth.msn",
        "Message Sequence Number",
        24,
        Dec,
        |p| p.aeth.map(|a| a.msn)
    ),
    presence!(
        "infiniband.atomicacketh",
        "Atomic ACK Extended Transport Header",
        |p| p.atomicacketh.is_some()
    ),
    uint!(
        "infiniband.atomicacketh.origremdt",
        "Original Remote Data",
        64,
        Dec,
        |p| p.atomicacketh.map(|a| a.orig_rem_dt)
    ),
    Field {
        name: "infiniband.immdt",
        title: "Immediate Data",
        ty: Bytes,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.extend(
                c.pkt
                    .immdt
                    .map(|i| Value::Bytes(Cow::Owned(i.value.to_be_bytes().to_vec()))),
            )
        },
    },
    Field {
        name: "infiniband.ieth",
        title: "RKey",
        ty: Bytes,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.extend(
                c.pkt
                    .ieth
                    .map(|i| Value::Bytes(Cow::Owned(i.r_key.to_be_bytes().to_vec()))),
            )
        },
    },
    ours(uint!(
        "infiniband.payload_len",
        "RDMA payload bytes (pad excluded)",
        32,
        Dec,
        |p| p.payload_len
    )),
    uint!("infiniband.invariant.crc", "Invariant CRC", 32, Hex, |p| p
        .icrc
        .and_then(|i| i.value)),
    ours(Field {
        name: "infiniband.icrc.status",
        title: "ICRC verdict: good, bad or unverified",
        ty: Str,
        base: Base::None,
        in_tshark: false,
        names: None,
        get: |c, o| {
            o.extend(
                c.pkt
                    .icrc
                    .map(|i| Value::Str(Cow::Borrowed(crc_status(i.valid)))),
            )
        },
    }),
    uint!("infiniband.variant.crc", "Variant CRC", 16, Hex, |p| p
        .vcrc
        .and_then(|v| v.value)),
    ours(Field {
        name: "infiniband.vcrc.status",
        title: "VCRC verdict: good, bad or unverified",
        ty: Str,
        base: Base::None,
        in_tshark: false,
        names: None,
        get: |c, o| {
            o.extend(
                c.pkt
                    .vcrc
                    .map(|v| Value::Str(Cow::Borrowed(crc_status(v.valid)))),
            )
        },
    }),
    // MADs and CM
    presence!(
        "infiniband.mad",
        "MAD (Management Datagram) Common Header",
        |p| p.mad.is_some()
    ),
    uint!("infiniband.mad.baseversion", "Base Version", 8, Hex, |p| p
        .mad
        .map(|m| m.base_version)),
    uint!(
        "infiniband.mad.mgmtclass",
        "Management Class",
        8,
        Hex,
        |p| p.mad.map(|m| m.mgmt_class)
    ),
    uint!(
        "infiniband.mad.classversion",
        "Class Version",
        8,
        Hex,
        |p| p.mad.map(|m| m.class_version)
    ),
    named(
        names::mad_method,
        uint!("infiniband.mad.method", "Method", 8, Hex, |p| p
            .mad
            .map(|m| m.method)),
    ),
    uint!("infiniband.mad.status", "Status", 16, Hex, |p| p
        .mad
        .map(|m| m.status)),
    uint!(
        "infiniband.mad.classspecific",
        "Class Specific",
        16,
        Hex,
        |p| p.mad.map(|m| m.class_specific)
    ),
    uint!(
        "infiniband.mad.transactionid",
        "Transaction ID",
        64,
        Hex,
        |p| p.mad.map(|m| m.transaction_id)
    ),
    uint!("infiniband.mad.attributeid", "Attribute ID", 16, Hex, |p| p
        .mad
        .map(|m| m.attribute_id)),
    uint!(
        "infiniband.mad.attributemodifier",
        "Attribute Modifier",
        32,
        Hex,
        |p| p.mad.map(|m| m.attribute_modifier)
    ),
    uint!(
        "infiniband.cm.req",
        "Local Communication ID",
        32,
        Hex,
        |p| match p.cm {
            Some(CmMessage::Req { local_comm_id, .. }) => Some(local_comm_id),
            _ => None,
        }
    ),
    uint!(
        "infiniband.cm.req.serviceid",
        "ServiceID",
        64,
        Hex,
        |p| match p.cm {
            Some(CmMessage::Req { service_id, .. }) => Some(service_id),
            _ => None,
        }
    ),
    uint!(
        "infiniband.cm.req.localqpn",
        "Local QPN",
        24,
        Hex,
        |p| match p.cm {
            Some(CmMessage::Req { local_qpn, .. }) => Some(local_qpn),
            _ => None,
        }
    ),
    uint!(
        "infiniband.cm.req.startpsn",
        "Starting PSN",
        24,
        Hex,
        |p| match p.cm {
            Some(CmMessage::Req { starting_psn, .. }) => Some(starting_psn),
            _ => None,
        }
    ),
    uint!(
        "infiniband.cm.req.pppmtu",
        "Path Packet Payload MTU",
        8,
        Hex,
        |p| {
            match p.cm {
                Some(CmMessage::Req { mtu, .. }) => Some(mtu),
                _ => None,
            }
        }
    ),
    uint!(
        "infiniband.cm.rep.localqpn",
        "Local QPN",
        24,
        Hex,
        |p| match p.cm {
            Some(CmMessage::Rep { local_qpn, .. }) => Some(local_qpn),
            _ => None,
        }
    ),
    uint!(
        "infiniband.cm.rep.startpsn",
        "Starting PSN",
        24,
        Hex,
        |p| match p.cm {
            Some(CmMessage::Rep { starting_psn, .. }) => Some(starting_psn),
            _ => None,
        }
    ),
    uint!(
        "infiniband.cm.rep.remotecommid",
        "Remote Communication ID",
        32,
        Hex,
        |p| match p.cm {
            Some(CmMessage::Rep { remote_comm_id, .. }) => Some(remote_comm_id),
            _ => None,
        }
    ),
    uint!(
        "infiniband.cm.rej.reason",
        "Reason",
        16,
        Hex,
        |p| match p.cm {
            Some(CmMessage::Rej { reason, .. }) => Some(reason),
            _ => None,
        }
    ),
    ours(Field {
        name: "infiniband.cm.message",
        title: "CM message (ConnectRequest, ConnectReply, ...)",
        ty: Str,
        base: Base::None,
        in_tshark: false,
        names: None,
        get: |c, o| o.extend(c.pkt.cm.map(|m| Value::Str(Cow::Borrowed(m.name())))),
    }),
    ours(uint!(
        "infiniband.cm.localcommid",
        "Local Communication ID (any CM message)",
        32,
        Hex,
        |p| p.cm.as_ref().and_then(|m| match *m {
            CmMessage::Req { local_comm_id, .. } => Some(local_comm_id),
            ref other => cm_ids(other).map(|(l, _)| l),
        })
    )),
    ours(uint!(
        "infiniband.cm.remotecommid",
        "Remote Communication ID (any CM message)",
        32,
        Hex,
        |p| p.cm.as_ref().and_then(cm_ids).map(|(_, r)| r)
    )),
    // roce-dissect's own
    ours(Field {
        name: "roce.version",
        title: "RoCE version: v1, v2 or ib (native InfiniBand)",
        ty: Str,
        base: Base::None,
        in_tshark: false,
        names: None,
        get: |c, o| {
            o.extend(c.pkt.roce.map(|v| {
                Value::Str(Cow::Borrowed(match v {
                    RoceVersion::V1 => "v1",
                    RoceVersion::V2 => "v2",
                    RoceVersion::Ib => "ib",
                }))
            }))
        },
    }),
    ours(boolean!(
        "roce.malformed",
        "The frame could not be decoded in full",
        |p| Some(p.error.is_some())
    )),
    // analysis
    Field {
        name: "roce.analysis.flags",
        title: "Any analysis flag below (as tcp.analysis.flags): a frame worth a look",
        ty: Presence,
        base: Base::None,
        in_tshark: false,
        names: None,
        get: |c, o| {
            if c.analysis.is_some_and(|a| !a.marks.is_empty()) {
                o.push(Value::Present);
            }
        },
    },
    flag!(
        "roce.analysis.retransmission",
        "A request or READ response PSN seen before on its flow",
        Mark::Retransmission
    ),
    flag!(
        "roce.analysis.out_of_order",
        "A PSN behind the one expected, not seen before",
        Mark::OutOfOrder
    ),
    flag!(
        "roce.analysis.gap",
        "PSNs were skipped just before this one",
        Mark::Gap
    ),
    Field {
        name: "roce.analysis.missing",
        title: "PSNs skipped just before this one",
        ty: Uint(32),
        base: Dec,
        in_tshark: false,
        names: None,
        get: |c, o| {
            if let Some(a) = c.analysis.filter(|a| a.marks.has(Mark::Gap)) {
                o.push(Value::Uint(u64::from(a.missing)));
            }
        },
    },
    flag!(
        "roce.analysis.duplicate",
        "A capture duplicate of the flow's previous frame",
        Mark::Duplicate
    ),
    flag!(
        "roce.analysis.psn_reuse",
        "A PSN already consumed by a request of another kind",
        Mark::PsnReuse
    ),
    flag!("roce.analysis.nak", "A NAK (any code but RNR)", Mark::Nak),
    flag!("roce.analysis.rnr_nak", "An RNR NAK", Mark::RnrNak),
    flag!(
        "roce.analysis.bad_icrc",
        "The ICRC does not match the frame",
        Mark::BadIcrc
    ),
    flag!(
        "roce.analysis.ce",
        "Congestion Experienced (IP ECN, GRH class or FECN)",
        Mark::Ce
    ),
    flag!(
        "roce.analysis.cnp",
        "A congestion notification (CNP or BECN)",
        Mark::Cnp
    ),
    flag!(
        "roce.analysis.paused",
        "Sent on a priority the destination MAC had paused",
        Mark::Paused
    ),
    Field {
        name: "roce.analysis.episode",
        title: "The retransmission episode a replayed frame belongs to (its flow's episodes[n - 1])",
        ty: Uint(32),
        base: Dec,
        in_tshark: false,
        names: None,
        get: |c, o| {
            if let Some(a) = c.analysis.filter(|a| a.episode > 0) {
                o.push(Value::Uint(u64::from(a.episode)));
            }
        },
    },
    Field {
        name: "roce.analysis.ack_rtt",
        title: "The round trip this ACK, NAK or READ response samples: from the request of its PSN (sent once) to it",
        ty: RelTime,
        base: Base::None,
        in_tshark: false,
        names: None,
        get: |c, o| {
            if let Some(ns) = c.analysis.and_then(|a| a.ack_rtt_ns) {
                o.push(Value::Time(i128::from(ns)));
            }
        },
    },
    Field {
        name: "roce.analysis.message_completion",
        title: "On the answer that completes a message: from its first packet (a READ: its request) to this answer",
        ty: RelTime,
        base: Base::None,
        in_tshark: false,
        names: None,
        get: |c, o| {
            if let Some(ns) = c.analysis.and_then(|a| a.completion_ns) {
                o.push(Value::Time(i128::from(ns)));
            }
        },
    },
    Field {
        name: "roce.analysis.flow",
        title: "The number of the frame's flow in the report (its # column)",
        ty: Uint(32),
        base: Dec,
        in_tshark: false,
        names: None,
        get: |c, o| o.extend(c.flow_number.map(Value::Uint)),
    },
    // Protocols, as tshark names them: NVMe itself (commands of the NVMe
    // command sets, their matched responses, the I/Os' data), and the
    // NVMe-oF RDMA layer under it (every frame of a queue's QPs that
    // carries something, and the CM reply that connects it).
    Field {
        name: "nvme",
        title: "NVM Express",
        ty: Presence,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if c.analysis.and_then(|a| a.nvme).is_some_and(|r| r.is_nvme()) {
                o.push(Value::Present);
            }
        },
    },
    Field {
        name: "nvme-rdma",
        title: "NVM Express Fabrics RDMA",
        ty: Presence,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            if c.analysis.is_some_and(|a| a.nvme.is_some()) {
                o.push(Value::Present);
            }
        },
    },
    Field {
        name: "nvme.cmd.opc",
        title: "Opcode",
        ty: Uint(8),
        base: Hex,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.extend(
                nvme_sqe(c)
                    .map(|(s, _)| u64::from(s.opcode))
                    .map(Value::Uint),
            )
        },
    },
    Field {
        name: "nvme.cmd.cid",
        title: "Command ID",
        ty: Uint(16),
        base: Hex,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(nvme_sqe(c).map(|(s, _)| u64::from(s.cid)).map(Value::Uint)),
    },
    Field {
        name: "nvme.cmd.nsid",
        title: "Namespace Id",
        ty: Uint(32),
        base: Hex,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.extend(
                nvme_sqe(c)
                    .filter(|(s, _)| !s.is_fabrics())
                    .map(|(s, _)| u64::from(s.nsid))
                    .map(Value::Uint),
            )
        },
    },
    Field {
        name: "nvme.cmd.slba",
        title: "Start LBA",
        ty: Uint(64),
        base: Hex,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.extend(
                nvme_sqe(c)
                    .filter(|(s, q)| s.has_lba(*q))
                    .map(|(s, _)| s.slba())
                    .map(Value::Uint),
            )
        },
    },
    Field {
        name: "nvme.cmd.nlb",
        title: "Absolute Number of Logical Blocks",
        ty: Uint(16),
        base: DecHex,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.extend(
                nvme_sqe(c)
                    .filter(|(s, q)| s.has_lba(*q))
                    .map(|(s, _)| u64::from(s.nlb()) + 1)
                    .map(Value::Uint),
            )
        },
    },
    Field {
        name: "nvme.cqe.sqhd",
        title: "SQ Head Pointer",
        ty: Uint(16),
        base: Hex,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(nvme_cqe(c).map(|q| u64::from(q.sqhd)).map(Value::Uint)),
    },
    Field {
        name: "nvme.cqe.sqid",
        title: "SQ Identifier",
        ty: Uint(16),
        base: Hex,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(nvme_cqe(c).map(|q| u64::from(q.sqid)).map(Value::Uint)),
    },
    Field {
        name: "nvme.cqe.cid",
        title: "Command Identifier",
        ty: Uint(16),
        base: Hex,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(nvme_cqe(c).map(|q| u64::from(q.cid)).map(Value::Uint)),
    },
    Field {
        name: "nvme.cqe.status",
        title: "Status Field",
        ty: Uint(16),
        base: Hex,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(nvme_cqe(c).map(|q| u64::from(q.status)).map(Value::Uint)),
    },
    Field {
        name: "nvme.cmd_latency",
        title: "Cmd Latency",
        ty: Millis,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(nvme_latency(c, false)),
    },
    ours(Field {
        name: "nvme.data.cid",
        // As the tree's Data section shows it (the I/O the data is of).
        title: "Command Identifier",
        ty: Uint(16),
        base: Hex,
        in_tshark: false,
        names: None,
        get: |c, o| {
            if let Some(NvmeRole::Data { cid, .. } | NvmeRole::DataRequest { cid, .. }) =
                c.analysis.and_then(|a| a.nvme)
            {
                o.push(Value::Uint(u64::from(cid)));
            }
        },
    }),
    ours(Field {
        name: "nvme.data.offset",
        title: "Data Offset",
        ty: Uint(32),
        base: Dec,
        in_tshark: false,
        names: None,
        get: |c, o| {
            if let Some(NvmeRole::Data {
                offset: Some(at), ..
            }) = c.analysis.and_then(|a| a.nvme)
            {
                o.push(Value::Uint(u64::from(at)));
            }
        },
    }),
    Field {
        name: "nvme.fabrics.cmd.opc",
        title: "Opcode",
        ty: Bytes,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| {
            o.extend(nvme_fabrics(c).map(|s| Value::Bytes(std::borrow::Cow::Owned(vec![s.opcode]))))
        },
    },
    Field {
        name: "nvme.fabrics.cmd.cid",
        title: "Command Identifier",
        ty: Uint(16),
        base: Hex,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(nvme_fabrics(c).map(|s| Value::Uint(u64::from(s.cid)))),
    },
    named(
        names::fabrics_type,
        Field {
            name: "nvme.fabrics.cmd.fctype",
            title: "Fabric Command Type",
            ty: Uint(8),
            base: Hex,
            in_tshark: true,
            names: None,
            get: |c, o| {
                o.extend(
                    nvme_fabrics(c)
                        .and_then(|s| s.fctype())
                        .map(|t| Value::Uint(u64::from(t))),
                )
            },
        },
    ),
    Field {
        name: "nvme.fabrics.cmd_latency",
        title: "Cmd Latency",
        ty: Millis,
        base: Base::None,
        in_tshark: true,
        names: None,
        get: |c, o| o.extend(nvme_latency(c, true)),
    },
];

/// A response's latency, for a command of the I/O or admin set (else a
/// Fabrics command).
fn nvme_latency<'a>(c: &Ctx<'_, '_>, fabrics: bool) -> Option<Value<'a>> {
    match c.analysis?.nvme? {
        NvmeRole::Response {
            latency_ns: Some(ns),
            fabrics: f,
            ..
        } if f == fabrics => Some(Value::Time(i128::from(ns))),
        _ => None,
    }
}

/// A Fabrics command's SQE.
fn nvme_fabrics(c: &Ctx<'_, '_>) -> Option<SqeRepr> {
    match nvme_capsule(c)? {
        (NvmeRole::Command { .. }, b) => SqeRepr::parse(b).ok().filter(SqeRepr::is_fabrics),
        _ => None,
    }
}

/// The capsule's bytes, when the analysis says the frame carries one.
fn nvme_capsule<'p>(c: &Ctx<'p, '_>) -> Option<(crate::analysis::marks::NvmeRole, &'p [u8])> {
    let role = c.analysis?.nvme?;
    Some((role, c.pkt.payload()?))
}

/// A command capsule's SQE and the command set it is read in.
fn nvme_sqe(c: &Ctx<'_, '_>) -> Option<(SqeRepr, QueueKind)> {
    match nvme_capsule(c)? {
        // Fabrics commands have fields of their own (nvme.fabrics.cmd.*).
        (NvmeRole::Command { qid, .. }, b) => Some((
            SqeRepr::parse(b).ok().filter(|s| !s.is_fabrics())?,
            QueueKind::of_qid(qid.unwrap_or(1)),
        )),
        _ => None,
    }
}

/// A response capsule's CQE.
fn nvme_cqe(c: &Ctx<'_, '_>) -> Option<CqeRepr> {
    match nvme_capsule(c)? {
        (NvmeRole::Response { .. }, b) => CqeRepr::parse(b).ok(),
        _ => None,
    }
}

fn pfc_enabled(p: &Packet<'_>, c: u8) -> Option<bool> {
    match p.pause {
        Some(PauseRepr::Pfc(f)) => Some(f.class_enable & (1 << c) != 0),
        _ => None,
    }
}

fn pfc_time(p: &Packet<'_>, c: usize) -> Option<u16> {
    match p.pause {
        Some(PauseRepr::Pfc(f)) => f.times.get(c).copied(),
        _ => None,
    }
}

fn bth_byte(p: &Packet<'_>, i: usize) -> Option<u8> {
    p.bth?;
    p.data
        .get(usize::from(p.offsets.bth).checked_add(i)?)
        .copied()
}

fn crc_status(valid: Option<bool>) -> &'static str {
    match valid {
        Some(true) => "good",
        Some(false) => "bad",
        None => "unverified",
    }
}

/// The values `pick` takes from each of a TCP segment's options, the
/// conversation's view given for relative SACK edges.
fn tcp_options(
    c: &Ctx<'_, '_>,
    o: &mut Vec<Value<'_>>,
    pick: impl Fn(TcpOption<'_>, Option<&crate::analysis::tcp::TcpSeen>) -> Vec<u64>,
) {
    if let Some(t) = c.pkt.tcp() {
        for op in t.options() {
            o.extend(pick(op, c.tcp).into_iter().map(Value::Uint));
        }
    }
}
