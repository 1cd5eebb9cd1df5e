//! Per-packet views: the tshark-style summary line and JSON Lines.

use std::fmt::Write as _;

use super::json::{JsonWriter, mac_string};
use crate::analysis::http::Reading;
use crate::analysis::tcp::TcpSeen;
use crate::dissect::{OtherL4, Packet};
use crate::q;
pub use crate::units::human_ns;
use crate::wire::aeth::{AckKind, nak, rnr_timer_us};
use crate::wire::igmp::{self, Igmp};
use crate::wire::mad::CmMessage;
use crate::wire::pause::{PauseRepr, quanta_to_ns};
use crate::wire::tcp::{Tcp, TcpOption};

/// The protocol column, of a frame alone: an SSH segment reads as `SSH`
/// (see [`protocol_in`] for what its connection says).
pub fn protocol(p: &Packet<'_>) -> &'static str {
    p.protocol()
}

/// The protocol column of a frame in its TCP conversation (`tcp`, when the
/// frame loop followed it): an SSH connection's segments are `SSHv2` once
/// a version line said so.
pub fn protocol_in(p: &Packet<'_>, tcp: Option<&TcpSeen>) -> &'static str {
    if p.ssh().is_some() {
        return crate::wire::ssh::protocol(tcp.and_then(|t| t.ssh_version));
    }
    if let Some(h) = tcp.and_then(|t| t.http.as_ref()) {
        return h.protocol();
    }
    if let Some((_, r)) = tls_reading(p, tcp) {
        return r.protocol;
    }
    p.top_protocol()
}

/// A segment of a TLS conversation (as the frame loop followed it) and
/// what its payload shows, read with what came before it.
pub fn tls_reading<'a>(
    p: &Packet<'a>,
    tcp: Option<&TcpSeen>,
) -> Option<(
    crate::dissect::AppPayload<'a>,
    crate::wire::tls::Reading<'a>,
)> {
    let seen = tcp?.tls?;
    let t = p.tls()?;
    Some((t, crate::wire::tls::read(t.payload, &seen)))
}

/// A TLS segment's Info column: its records (`Application Data,
/// Application Data`, `Server Hello, Change Cipher Spec, Application
/// Data`), after the TCP analysis's notes as tshark writes them
/// (`[TCP Fast Retransmission] , Application Data`); or, for a segment
/// that only carries part of a record, tshark's note of that: alone when
/// the record begins in it, after the TCP summary when it goes on
/// through it.
fn write_tls(
    s: &mut String,
    p: &Packet<'_>,
    r: &crate::wire::tls::Reading<'_>,
    tcp: Option<&TcpSeen>,
) {
    use crate::wire::tls::Shown;
    const PART: &str = "[TCP segment of a reassembled PDU]";
    let before = s.len();
    if let Some(t) = tcp {
        t.write_notes(s);
    }
    let tcp_line = |s: &mut String| {
        if let Some(OtherL4::Tcp { sport, dport, .. }) = p.other_l4 {
            let _ = write!(s, "{sport} → {dport}");
        }
        if let Some(t) = p.tcp() {
            write_tcp(s, p, &t, tcp);
        }
    };
    let mut sep = if s.len() > before { ", " } else { "" };
    match r.shown {
        Shown::RecordStarts => s.push_str(PART),
        Shown::Resent(overlaps) => {
            tcp_line(s);
            if overlaps {
                s.push_str(
                    "[Reassembly error, protocol TCP: New fragment overlaps old data (retransmission?)]",
                );
            }
        }
        Shown::PartOfRecord | Shown::Records => {
            if r.shown == Shown::PartOfRecord {
                tcp_line(s);
                s.push(' ');
                s.push_str(PART);
                sep = ", ";
            }
            for rec in r.records.iter().filter(|r| !r.says.is_silent()) {
                s.push_str(sep);
                rec.says.write(s);
                sep = ", ";
            }
        }
    }
}

/// An HTTP segment's Info column, as tshark's: the first line of the
/// message it starts or ends (after the TCP analysis's notes), or the
/// note that it is a segment of a message that goes on.
fn write_http(s: &mut String, p: &Packet<'_>, h: &Reading, tcp: &TcpSeen) {
    let payload = p.tcp_payload().map_or(&[][..], |(b, _)| b);
    write_http_lines(s, p, h, tcp, payload);
    // The body's dissector names itself after the first line (JSON,
    // line-based text, media).
    let head = match h {
        Reading::Whole { .. } => Some(payload),
        Reading::Ends(e) => e.head.as_deref(),
        _ => None,
    };
    if let Some(ct) = head.and_then(|h| crate::wire::http::Head::parse(h).header("content-type"))
        && let Some(info) = h.media().info(ct)
    {
        s.push_str(&info);
    }
}

/// [`write_http`] but for what a body's media adds.
fn write_http_lines(s: &mut String, p: &Packet<'_>, h: &Reading, tcp: &TcpSeen, payload: &[u8]) {
    const PART: &str = "[TCP segment of a reassembled PDU]";
    let first_line = |s: &mut String, bytes: &[u8]| {
        let end = bytes
            .iter()
            .position(|&b| b == b'\r' || b == b'\n')
            .unwrap_or(bytes.len());
        crate::wire::push_text(s, bytes.get(..end).unwrap_or_default());
        s.push(' ');
    };
    match h {
        Reading::Whole { .. } => {
            tcp.write_notes(s);
            first_line(s, payload);
        }
        Reading::Begins => {
            first_line(s, payload);
            s.push(' ');
            s.push_str(PART);
        }
        Reading::Ends(e) => {
            tcp.write_notes(s);
            match &e.head {
                Some(head) => first_line(s, head),
                None => {
                    let _ = write!(s, "[HTTP message begun in frame {}] ", e.first_frame);
                }
            }
        }
        Reading::Continuation => {
            tcp.write_notes(s);
            s.push_str("Continuation");
        }
        Reading::Grows { head: Some(head) } => {
            first_line(s, head);
            s.push(' ');
            s.push_str(PART);
        }
        Reading::Malformed { head: Some(head) } => {
            first_line(s, head);
            s.push_str("[Malformed Packet]");
        }
        Reading::Middle
        | Reading::Grows { head: None }
        | Reading::Malformed { head: None }
        | Reading::Resent => {
            tcp.write_notes(s);
            if let Some(OtherL4::Tcp { sport, dport, .. }) = p.other_l4 {
                let _ = write!(s, "{sport} → {dport}");
            }
            if let Some(t) = p.tcp() {
                write_tcp(s, p, &t, Some(tcp));
            }
            s.push(' ');
            s.push_str(match h {
                Reading::Malformed { .. } => "[Malformed Packet]",
                _ => PART,
            });
        }
    }
}

/// An IGMP message's summary, as tshark words it: `Membership Report group
/// 224.0.0.251`, `Membership Query, general`, `Membership Report / Join
/// group 224.1.1.50 for any sources`.
fn write_igmp(s: &mut String, m: &Igmp<'_>) {
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

/// A DNS, mDNS or LLMNR message's summary, as tshark words it: the
/// operation and ID, then each question's type and name and each record's
/// type and what it says (`Standard query response 0x1234 A example.com A
/// 93.184.216.34`); mDNS adds `"QM"`/`"QU"` to questions and `cache flush`
/// to records. A message that ends early ends with tshark's
/// `[Malformed Packet]` (or `[Packet size limited during capture]`).
fn write_dns(s: &mut String, d: &crate::dissect::Dns<'_>) {
    use crate::wire::dns::{self, Flavour, MDNS_CLASS_BIT};
    let end = if d.cut {
        "[Packet size limited during capture]"
    } else {
        "[Malformed Packet]"
    };
    let Some(m) = d.message else {
        s.push_str(end);
        return;
    };
    match dns::opcode_name(m.opcode()) {
        Some(n) => s.push_str(n),
        None => {
            let _ = write!(s, "Unknown operation ({})", m.opcode());
        }
    }
    if m.is_response() {
        s.push_str(" response");
    }
    let _ = write!(s, " 0x{:04x}", m.id());
    if m.is_response() && m.rcode() != 0 {
        match dns::rcode_name(m.rcode()) {
            Some(n) => {
                let _ = write!(s, " {n}");
            }
            None => {
                let _ = write!(s, " Unknown error ({})", m.rcode());
            }
        }
    }
    let mdns = d.flavour == Flavour::Mdns;
    let type_name = |s: &mut String, t: u16| match dns::type_name(t) {
        Some(n) => s.push_str(n),
        None => {
            let _ = write!(s, "Unknown ({t})");
        }
    };
    for r in m.records() {
        let Ok(r) = r else {
            s.push_str(end);
            return;
        };
        s.push(' ');
        type_name(s, r.rtype);
        let flagged = mdns && r.class & MDNS_CLASS_BIT != 0;
        if r.section == dns::Section::Question {
            s.push(' ');
            let _ = m.write_name(r.at, s);
            if mdns {
                let _ = write!(s, ", \"{}\" question", if flagged { "QU" } else { "QM" });
            }
            continue;
        }
        if flagged {
            s.push_str(", cache flush");
        }
        if !r.rdata.is_empty() {
            write_rdata(s, &m, &r);
        }
        if !r.whole {
            s.push_str(end);
            return;
        }
    }
}

/// An SSH segment's summary, as tshark words it: `Client: ` or `Server: `,
/// then the version line (`Protocol (SSH-2.0-OpenSSH_9.2p1)`), the
/// messages of the key exchange's packets in the clear (`Key Exchange
/// Init`, `New Keys`), or `Encrypted packet (len=36)` for the rest. The
/// key exchange is read only once a version line was seen (the
/// connection's state in `tcp`): in a capture that starts inside a
/// session, every payload is encrypted; and only until the sender's New
/// Keys (in an earlier segment). tshark 4.0 tries to decrypt what follows New Keys without
/// the keys and shows nothing, or misread messages; this says how long it
/// is.
///
/// The TCP analysis's notes come first, as tshark's column has them when
/// the protocol inside writes after TCP: `Client: [TCP Fast
/// Retransmission] , Encrypted packet (len=200)`.
fn write_ssh(s: &mut String, ssh: &crate::dissect::Ssh<'_>, tcp: Option<&TcpSeen>) {
    use crate::wire::ssh;
    s.push_str(if ssh.from_client {
        "Client: "
    } else {
        "Server: "
    });
    let mut sep = "";
    if let Some(t) = tcp {
        let before = s.len();
        t.write_notes(s);
        if s.len() > before {
            sep = ", ";
        }
    }
    let (version, encrypted) = tcp.map_or((None, false), |t| (t.ssh_version, t.ssh_encrypted));
    let r = ssh::read(ssh.payload, version, encrypted);
    if let Some(line) = r.version_line {
        s.push_str("Protocol (");
        crate::wire::push_text(s, line);
        s.push(')');
        sep = ", ";
    }
    for pk in &r.plain {
        s.push_str(sep);
        match ssh::message_name(pk.code) {
            Some(n) => s.push_str(n),
            None => {
                let _ = write!(s, "Unknown ({})", pk.code);
            }
        }
        sep = ", ";
    }
    if !r.encrypted.is_empty() {
        let _ = write!(s, "{sep}Encrypted packet (len={})", r.encrypted.len());
    }
}

/// The summary of an NBNS, DHCP or SSDP datagram (DNS has its own).
fn write_udp_app(s: &mut String, u: &crate::dissect::UdpPayload<'_>) {
    use crate::dissect::UdpApp;
    match u.app {
        UdpApp::Dns(_) => {}
        UdpApp::Nbns => write_nbns(s, u.bytes),
        UdpApp::Dhcp => write_dhcp(s, u.bytes),
        // The request or status line, as tshark shows it.
        UdpApp::Ssdp => {
            if let Some(line) = crate::wire::http::StartLine::parse(u.bytes).line() {
                crate::wire::push_text(s, line);
                s.push(' ');
            }
        }
    }
}

/// An NBNS message's summary, as tshark words it: the operation (`Name
/// query response`), a response's error, then a request's questions
/// (`NB INDEL1RES01<00>`) or a response's answers (`NB 10.0.0.5`); a
/// message that ends early ends with `[Malformed Packet]`.
fn write_nbns(s: &mut String, bytes: &[u8]) {
    use crate::wire::dns::{Message, Section};
    use crate::wire::nbns;
    const MALFORMED: &str = "[Malformed Packet]";
    let Some(m) = Message::new(bytes) else {
        s.push_str(MALFORMED);
        return;
    };
    match nbns::opcode_name(m.opcode()) {
        Some(n) => s.push_str(n),
        None => {
            let _ = write!(s, "Unknown operation ({})", m.opcode());
        }
    }
    let response = m.is_response();
    if response {
        s.push_str(" response");
        if m.rcode() != 0 {
            let _ = write!(s, ", {}", nbns::rcode_name(m.rcode()));
        }
    }
    for r in m.records() {
        let Ok(r) = r else {
            s.push_str(MALFORMED);
            return;
        };
        let name = nbns::name(&m, r.at);
        let shown = match r.section {
            Section::Question => !response,
            Section::Answer => response,
            _ => false,
        };
        // A node status record is read whole (its names, the unit ID and
        // the statistics) from the message, whatever its length says.
        let status_cut = r.section != Section::Question
            && r.rtype == nbns::T_NBSTAT
            && !r.rdata.is_empty()
            && m.bytes().len().saturating_sub(r.rdata_at)
                < nbns::status_len(r.rdata.first().copied().unwrap_or(0));
        if !shown {
            // Later records are read for the tree only, and a cut one
            // ends the message there too.
            if !r.whole || status_cut {
                s.push_str(MALFORMED);
                return;
            }
            continue;
        }
        let wack = m.opcode() == nbns::OPCODE_WACK;
        if !(r.rtype == nbns::T_NB && wack && r.section == Section::Answer) {
            let _ = write!(s, " {}", nbns::type_name(r.rtype));
        }
        if r.section == Section::Question {
            match name {
                Ok(n) => {
                    let _ = write!(s, " {n}");
                }
                Err(_) => {
                    s.push_str(MALFORMED);
                    return;
                }
            }
            continue;
        }
        if r.rtype == nbns::T_NB && !wack {
            // The address after the first entry's flags (read wherever
            // it is, as tshark does).
            let at = r.rdata_at + 2;
            match m.bytes().get(at..at + 4) {
                Some(&[a, b, c, d]) => {
                    let _ = write!(s, " {}", std::net::Ipv4Addr::new(a, b, c, d));
                }
                _ => {
                    s.truncate(s.len() - " NB".len());
                    s.push_str(MALFORMED);
                    return;
                }
            }
        }
        if !r.whole || status_cut {
            s.push_str(MALFORMED);
            return;
        }
    }
}

/// A BOOTP or DHCP message's summary, as tshark words it: `DHCP Request  -
/// Transaction ID 0x1234` (the type padded to eight places), or for BOOTP
/// `Boot Request from 02:00:5e:10:00:01 (02:00:5e:10:00:01)`, `Boot
/// Reply`.
fn write_dhcp(s: &mut String, bytes: &[u8]) {
    use crate::wire::dhcp;
    const MALFORMED: &str = "[Malformed Packet]";
    let Some(m) = dhcp::Message::new(bytes) else {
        s.push_str(MALFORMED);
        return;
    };
    let opts = m.options();
    match opts.message_type {
        Some(t) => {
            let xid = m.xid().unwrap_or(0);
            match dhcp::message_type_name(t) {
                Some(n) => {
                    let _ = write!(s, "DHCP {n:<8}");
                }
                None => {
                    let _ = write!(s, "DHCP Unknown Message Type (0x{t:02x})");
                }
            }
            let _ = write!(s, " - Transaction ID 0x{xid:x}");
        }
        None => match m.op() {
            // The client's address, when the capture has it.
            1 => match (m.mac(), m.chaddr()) {
                (Some(mac), _) => {
                    let mac = mac_string(&mac);
                    let _ = write!(s, "Boot Request from {mac} ({mac})");
                }
                (None, Some([])) => s.push_str("Boot Request from <No address>"),
                (None, Some(hw)) => {
                    s.push_str("Boot Request from ");
                    for b in hw {
                        let _ = write!(s, "{b:02x}");
                    }
                }
                (None, None) => {}
            },
            2 => s.push_str("Boot Reply"),
            op => {
                let _ = write!(s, "Unknown BOOTP message type ({op})");
            }
        },
    }
    if opts.malformed {
        s.push_str(MALFORMED);
    }
}

/// What tshark's summary line says of a record's data, by its type.
fn write_rdata(
    s: &mut String,
    m: &crate::wire::dns::Message<'_>,
    r: &crate::wire::dns::Record<'_>,
) {
    use crate::wire::dns::*;
    // A name from the message appended after a space, or nothing.
    let put_name = |s: &mut String, at: usize| {
        let mark = s.len();
        s.push(' ');
        if m.write_name(at, s).is_err() {
            s.truncate(mark);
        }
    };
    let word = |i: usize| match r.rdata.get(i..i + 2) {
        Some(&[a, b]) => Some(u16::from_be_bytes([a, b])),
        _ => None,
    };
    match r.rtype {
        T_A => {
            if let Some(a) = r.ipv4() {
                let _ = write!(s, " {a}");
            }
        }
        T_AAAA => {
            if let Some(a) = r.ipv6() {
                let _ = write!(s, " {a}");
            }
        }
        T_NS | T_CNAME | T_SOA | T_PTR | T_DNAME | T_NSEC => put_name(s, r.rdata_at),
        // tshark names the record's owner for these (their data's
        // layouts are not summed up).
        T_MD | T_MF | 7..=10 | 14 | 17..=27 | 42 | 49 | 51 | 52 | 55 => put_name(s, r.at),
        // WKS: its address.
        11 => {
            if let Some(b) = r.rdata.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()) {
                let _ = write!(s, " {}", std::net::Ipv4Addr::from(b));
            }
        }
        // NXT: the next name.
        30 => put_name(s, r.rdata_at),
        // KX is laid out as MX is.
        T_MX | 36 => {
            if let Some(pref) = word(0) {
                let mark = s.len();
                let _ = write!(s, " {pref}");
                let numbers = s.len();
                put_name(s, r.rdata_at + 2);
                if s.len() == numbers {
                    s.truncate(mark);
                }
            }
        }
        T_HINFO => {
            if let Some((cpu, next)) = m.character_string(r.rdata_at)
                && let Some((os, _)) = m.character_string(next)
            {
                let _ = write!(s, " {cpu} {os}");
            }
        }
        T_SRV => {
            if let (Some(prio), Some(weight), Some(port)) = (word(0), word(2), word(4)) {
                let mark = s.len();
                let _ = write!(s, " {prio} {weight} {port}");
                let numbers = s.len();
                put_name(s, r.rdata_at + 6);
                // No target name: nothing, as tshark's line would not.
                if s.len() == numbers {
                    s.truncate(mark);
                }
            }
        }
        _ => {}
    }
}

/// What tshark adds to a neighbour discovery message's name: the target
/// (`for fe80::1`; an advertisement's flags, `fe80::1 (rtr, sol)`) and the
/// link-layer address its options give (`from 02:00:..`, `is at 02:00:..`).
fn write_nd(s: &mut String, kind: u8, msg: &[u8]) {
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

/// An IEEE 802.3 frame with an LLC header for the spanning tree (DSAP and
/// SSAP 0x42).
/// A TCP segment's info after its ports, as tshark's: `[SYN, ACK] Seq=0
/// Ack=1 Win=65160 Len=0 MSS=1460 SACK_PERM WS=128`.
fn write_tcp(s: &mut String, p: &Packet<'_>, t: &Tcp<'_>, seen: Option<&TcpSeen>) {
    let _ = write!(s, " [{}]", crate::wire::tcp::flag_names(t.flags()));
    let (seq, window) = match seen {
        Some(c) => (c.seq(t), c.window(t)),
        None => (t.seq(), u32::from(t.window())),
    };
    let _ = write!(s, " Seq={seq}");
    if t.has(crate::wire::tcp::ACK) {
        let ack = seen.map_or(t.ack(), |c| c.acked(t.ack()));
        let _ = write!(s, " Ack={ack}");
    }
    let _ = write!(s, " Win={window}");
    if t.has(crate::wire::tcp::URG) {
        let _ = write!(s, " Urg={}", t.urgent());
    }
    if let Some(len) = p.tcp_payload_len() {
        let _ = write!(s, " Len={len}");
    }
    write_tcp_options(s, t, seen);
}

/// The options as the summary line lists them after `Len=`: `MSS=1460
/// SACK_PERM TSval=.. TSecr=.. WS=128`, SACK blocks relative.
fn write_tcp_options(s: &mut String, tcp: &Tcp<'_>, seen: Option<&TcpSeen>) {
    for option in tcp.options() {
        let _ = match option {
            TcpOption::Mss(v) => write!(s, " MSS={v}"),
            TcpOption::WindowScale(shift) => {
                let shift = shift.min(crate::wire::tcp::MAX_WINDOW_SHIFT);
                write!(s, " WS={}", 1u32 << shift)
            }
            TcpOption::SackPermitted => write!(s, " SACK_PERM"),
            TcpOption::Timestamps { value, echo } => write!(s, " TSval={value} TSecr={echo}"),
            TcpOption::Sack(blocks) => {
                for (l, r) in crate::wire::tcp::sack_blocks(blocks) {
                    let (l, r) = match seen {
                        Some(t) => (t.acked(l), t.acked(r)),
                        None => (l, r),
                    };
                    let _ = write!(s, " SLE={l} SRE={r}");
                }
                Ok(())
            }
            _ => Ok(()),
        };
    }
}

/// A BPDU's summary, as tshark words it: `Conf. Root = 32768/1/00:11:..
/// Cost = 20000  Port = 0x8002` (`TC + ` before `Root` when the topology
/// changes; `RST.`, `MST.`), `Topology Change Notification`, or tshark's
/// `[Malformed Packet]` for one cut short.
fn write_stp(s: &mut String, bpdu: Option<&crate::wire::stp::Bpdu<'_>>) {
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

/// The info column.
pub fn info(p: &Packet<'_>, link_bps: u64, tcp: Option<&TcpSeen>) -> String {
    let mut s = String::with_capacity(96);
    write_info(&mut s, p, link_bps, tcp);
    s
}

/// [`info`], appended to `s`. A TCP frame's numbers are relative to its
/// conversation's (`tcp`, when the frame loop followed it), else as sent.
pub fn write_info(s: &mut String, p: &Packet<'_>, link_bps: u64, tcp: Option<&TcpSeen>) {
    if let Some(b) = &p.bth {
        write_roce_info(s, p, b);
    } else if let Some(l) = &p.lrh {
        let _ = write!(s, "LRH {}", l.lnh.name());
        if let Some(t) = p.ethertype {
            let _ = write!(
                s,
                ", EtherType 0x{t:04x}{}",
                super::names::ethertype(t)
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            );
        }
        if let Some(v) = &p.vcrc
            && v.valid == Some(false)
        {
            s.push_str(" [bad VCRC]");
        }
    } else if let Some(e) = p
        .erf
        .filter(|e| e.payload() == crate::wire::erf::ErfPayload::Other)
    {
        let _ = write!(s, "ERF record type {} ({})", e.kind, e.type_name());
    } else if let Some(pause) = &p.pause {
        write_pause_info(s, pause, link_bps);
    } else if let Some(d) = p.dns() {
        write_dns(s, &d);
    } else if let Some(app) = p.udp_app() {
        write_udp_app(s, &app);
    } else if let Some(u) = &p.udp {
        let _ = write!(
            s,
            "{} → {} Len={}",
            u.sport,
            u.dport,
            u.length.saturating_sub(8)
        );
    } else if let Some(l4) = p.other_l4 {
        write_l4_info(s, p, l4, tcp);
    } else if let Some(a) = &p.arp {
        write_arp_info(s, a);
    } else if let Some(len) = p.ethertype.filter(|&t| t < 0x0600) {
        if let Some((_, bpdu)) = p.stp() {
            write_stp(s, bpdu.as_ref());
        } else {
            let _ = write!(s, "IEEE 802.3 frame, LLC, length {len}");
        }
    } else if let Some(t) = p.ethertype {
        match super::names::ethertype(t) {
            Some(name) => s.push_str(name),
            None => {
                let _ = write!(s, "EtherType 0x{t:04x}");
            }
        }
    }
    if let Some(e) = &p.error {
        let _ = write!(s, " [Malformed: {e}]");
    }
}

/// A RoCE (or InfiniBand) frame's Info: the opcode, QP and PSN, then what
/// its headers and the analysis add.
#[inline]
fn write_roce_info(s: &mut String, p: &Packet<'_>, b: &crate::wire::BthRepr) {
    if p.is_cnp() {
        let _ = write!(s, "CNP QP=0x{:06x}", b.dest_qp);
        if b.becn {
            s.push_str(" BECN");
        }
        if b.fecn {
            s.push_str(" FECN");
        }
    } else {
        // `{} QP=0x{:06x} PSN={}`.
        s.push_str(b.opcode.name());
        s.push_str(" QP=0x");
        push_hex(s, u64::from(b.dest_qp), 6);
        s.push_str(" PSN=");
        push_dec(s, u64::from(b.psn), 0);
        if b.opcode.operation().is_none() {
            let _ = write!(s, " (opcode 0x{:02x})", b.opcode.0);
        }
    }
    if let Some(a) = &p.aeth {
        match a.kind() {
            AckKind::Ack => {
                s.push_str(" ACK MSN=");
                push_dec(s, u64::from(a.msn), 0);
            }
            AckKind::RnrNak => {
                let _ = write!(
                    s,
                    " RNR NAK timer={} ({}) MSN={}",
                    a.value(),
                    human_ns((rnr_timer_us(a.value()) * 1000.0) as u64),
                    a.msn
                );
            }
            AckKind::Nak => {
                let _ = write!(s, " NAK: {} MSN={}", nak::name(a.value()), a.msn);
            }
            AckKind::Reserved => {
                let _ = write!(s, " reserved syndrome 0x{:02x}", a.syndrome);
            }
        }
    }
    if let Some(r) = &p.reth {
        let _ = write!(
            s,
            " VA=0x{:x} R_Key=0x{:08x} DMALen={}",
            r.va, r.r_key, r.dma_len
        );
    }
    if let Some(a) = &p.atomiceth {
        let _ = write!(s, " VA=0x{:x} R_Key=0x{:08x}", a.va, a.r_key);
    }
    if let Some(d) = &p.deth {
        let _ = write!(s, " SrcQP=0x{:06x}", d.src_qp);
    }
    if let Some(i) = &p.immdt {
        let _ = write!(s, " Imm=0x{:08x}", i.value);
    }
    if let Some(i) = &p.ieth {
        let _ = write!(s, " Inv R_Key=0x{:08x}", i.r_key);
    }
    if let (Some(m), None) = (&p.mad, &p.cm) {
        let _ = write!(s, " {}", crate::wire::mad::describe(m));
    }
    if let Some(cm) = &p.cm {
        let _ = write!(s, " CM {}", cm.name());
        match cm {
            CmMessage::Req {
                local_qpn,
                starting_psn,
                ..
            }
            | CmMessage::Rep {
                local_qpn,
                starting_psn,
                ..
            } => {
                let _ = write!(s, " QPN=0x{local_qpn:06x} StartPSN={starting_psn}");
            }
            CmMessage::Rej { reason, .. } => {
                let _ = write!(s, " reason={reason}");
            }
            _ => {}
        }
    }
    if let Some(n) = p.payload_len
        && n > 0
    {
        s.push_str(" len=");
        push_dec(s, u64::from(n), 0);
    }
    if p.ecn() == Some(3) {
        s.push_str(" [CE]");
    }
    if let Some(i) = &p.icrc
        && i.valid == Some(false)
    {
        s.push_str(" [bad ICRC]");
    }
    if let Some(v) = &p.vcrc
        && v.valid == Some(false)
    {
        s.push_str(" [bad VCRC]");
    }
}

/// A PAUSE or PFC frame's Info, its quanta in time at `link_bps`.
fn write_pause_info(s: &mut String, pause: &PauseRepr, link_bps: u64) {
    match pause {
        PauseRepr::Pfc(pfc) => {
            let _ = write!(s, "PFC enable=0x{:02x}", pfc.class_enable);
            for (prio, q) in pfc.times.iter().enumerate() {
                if pfc.class_enable & (1 << prio) == 0 {
                    continue;
                }
                if *q == 0 {
                    let _ = write!(s, " P{prio}=XON");
                } else {
                    let _ = write!(s, " P{prio}={q} ({})", human_ns(quanta_to_ns(*q, link_bps)));
                }
            }
        }
        PauseRepr::Pause { time } => {
            if *time == 0 {
                s.push_str("PAUSE 0 quanta (XON)");
            } else {
                let _ = write!(
                    s,
                    "PAUSE {time} quanta ({})",
                    human_ns(quanta_to_ns(*time, link_bps))
                );
            }
        }
        PauseRepr::Other { opcode } => {
            let _ = write!(s, "MAC Control opcode 0x{opcode:04x}");
        }
    }
}

/// The Info of TCP (or what it carries), ICMP, ICMPv6, IGMP or another IP
/// protocol.
fn write_l4_info(s: &mut String, p: &Packet<'_>, l4: OtherL4, tcp: Option<&TcpSeen>) {
    match l4 {
        OtherL4::Tcp { .. } if p.ssh().is_some() => {
            if let Some(ssh) = p.ssh() {
                write_ssh(s, &ssh, tcp);
            }
        }
        OtherL4::Tcp { sport, dport, .. } => {
            if let Some((_, r)) = tls_reading(p, tcp) {
                write_tls(s, p, &r, tcp);
            } else if let Some(t) = tcp
                && let Some(h) = t.http.as_ref().filter(|h| **h != Reading::Resent)
            {
                write_http(s, p, h, t);
            } else {
                if let Some(t) = tcp {
                    t.write_notes(s);
                }
                let _ = write!(s, "{sport} → {dport}");
                if let Some(t) = p.tcp() {
                    write_tcp(s, p, &t, tcp);
                }
            }
        }
        OtherL4::Icmp { kind, code } => s.push_str(&super::names::icmp(kind, code)),
        OtherL4::Icmpv6 { kind, code, .. } => {
            s.push_str(&super::names::icmpv6(kind, code));
            if let Some(msg) = p.icmpv6_message() {
                write_nd(s, kind, msg);
            }
        }
        OtherL4::Igmp { .. } => match p.igmp() {
            Some(m) => write_igmp(s, &m),
            None => s.push_str("IGMP, cut short"),
        },
        OtherL4::Other(proto) => {
            let _ = write!(
                s,
                "IP protocol {proto} ({})",
                super::names::ip_protocol(proto)
            );
        }
    }
}

/// An ARP message's Info: gratuitous ARP, announcements and probes
/// (RFC 5227) as tshark names them.
fn write_arp_info(s: &mut String, a: &crate::dissect::Arp) {
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

/// Appends what an NVMe-oF capsule says (`NVMe Read CID=17 NSID=1
/// LBA=2048 len=8`, `NVMe CQE CID=17 SQHD=5 Successful Completion`) to its
/// summary line, when the analysis knows the frame carries one.
pub fn push_nvme(
    line: &mut String,
    p: &Packet<'_>,
    role: Option<crate::analysis::marks::NvmeRole>,
) {
    use crate::analysis::marks::NvmeRole;
    use crate::wire::nvme::{CqeRepr, QueueKind, SqeRepr};
    let Some(role) = role else { return };
    let payload = p.payload().unwrap_or_default();
    match role {
        NvmeRole::Command { qid, .. } => {
            let Ok(s) = SqeRepr::parse(payload) else {
                line.push_str(" NVMe [short command capsule]");
                return;
            };
            let q = QueueKind::of_qid(qid.unwrap_or(1));
            let _ = write!(line, " NVMe {} CID={}", s.name(q), s.cid);
            if s.has_lba(q) {
                let _ = write!(
                    line,
                    " NSID={} LBA={} len={}",
                    s.nsid,
                    s.slba(),
                    u32::from(s.nlb()) + 1
                );
            }
            if let Some(pr) = s.property() {
                let _ = write!(line, " {}", crate::wire::nvme::property_name(pr.offset));
            }
            if let Some(c) = s.connect() {
                let _ = write!(line, " qid={} sqsize={}", c.qid, u32::from(c.sqsize) + 1);
            }
        }
        NvmeRole::Response { .. } => {
            let Ok(c) = CqeRepr::parse(payload) else {
                line.push_str(" NVMe [short response capsule]");
                return;
            };
            let _ = write!(
                line,
                " NVMe CQE CID={} SQHD={} {}",
                c.cid,
                c.sqhd,
                c.status_name()
            );
            if c.dnr() {
                line.push_str(" DNR");
            }
        }
        NvmeRole::Data {
            qid,
            cid,
            code,
            offset,
        } => {
            let name = crate::wire::nvme::code_name(code, qid);
            let _ = write!(line, " NVMe Data for {name} CID={cid}");
            if let Some(o) = offset {
                let _ = write!(line, " offset={o}");
            }
        }
        NvmeRole::DataRequest { qid, cid, code } => {
            let name = crate::wire::nvme::code_name(code, qid);
            let _ = write!(line, " NVMe Data Request for {name} CID={cid}");
        }
        NvmeRole::Queue { .. } => {}
    }
}

/// The `nvme` object of a frame that carries a capsule: its role and
/// queue, then the command's fields (`cmd`, or `fabrics` for a Fabrics
/// command) or the response's (`cqe`, with its command's latency).
fn nvme_json(w: &mut JsonWriter<'_>, p: &Packet<'_>, role: crate::analysis::marks::NvmeRole) {
    use crate::analysis::marks::NvmeRole;
    use crate::wire::nvme::{CqeRepr, QueueKind, SqeRepr};
    let payload = p.payload().unwrap_or_default();
    w.object(q!("nvme"));
    match role {
        NvmeRole::Command { qid, .. } => {
            w.str(q!("role"), "command");
            w.opt_u64(q!("qid"), qid.map(u64::from));
            if let Ok(s) = SqeRepr::parse(payload) {
                let q = QueueKind::of_qid(qid.unwrap_or(1));
                w.str(q!("name"), s.name(q));
                if let Some(t) = s.fctype() {
                    w.object(q!("fabrics"));
                    w.u64(q!("opc"), u64::from(s.opcode));
                    w.u64(q!("cid"), u64::from(s.cid));
                    w.u64(q!("fctype"), u64::from(t));
                    w.end();
                } else {
                    w.object(q!("cmd"));
                    w.u64(q!("opc"), u64::from(s.opcode));
                    w.u64(q!("cid"), u64::from(s.cid));
                    w.u64(q!("nsid"), u64::from(s.nsid));
                    if s.has_lba(q) {
                        w.u64(q!("slba"), s.slba());
                        w.u64(q!("nlb"), u64::from(s.nlb()) + 1);
                    }
                    w.end();
                }
                w.object(q!("sgl"));
                w.str(q!("type"), s.sgl.type_name());
                w.u64(q!("address"), s.sgl.address);
                w.u64(q!("length"), u64::from(s.sgl.length));
                if s.sgl.keyed() {
                    w.u64(q!("key"), u64::from(s.sgl.key));
                }
                w.end();
            }
        }
        NvmeRole::Response {
            qid, latency_ns, ..
        } => {
            w.str(q!("role"), "response");
            w.opt_u64(q!("qid"), qid.map(u64::from));
            if let Ok(c) = CqeRepr::parse(payload) {
                w.object(q!("cqe"));
                w.u64(q!("cid"), u64::from(c.cid));
                w.u64(q!("sqhd"), u64::from(c.sqhd));
                w.u64(q!("sqid"), u64::from(c.sqid));
                w.u64(q!("status"), u64::from(c.status));
                w.str(q!("status_name"), c.status_name());
                w.bool(q!("dnr"), c.dnr());
                w.end();
            }
            w.opt_u64(q!("latency_ns"), latency_ns);
        }
        NvmeRole::Data {
            qid,
            cid,
            code,
            offset,
        } => {
            w.str(q!("role"), "data");
            w.opt_u64(q!("qid"), qid.map(u64::from));
            w.str(q!("name"), crate::wire::nvme::code_name(code, qid));
            w.object(q!("data"));
            w.u64(q!("cid"), u64::from(cid));
            if let Some(o) = offset {
                w.u64(q!("offset"), u64::from(o));
            }
            w.end();
        }
        NvmeRole::DataRequest { qid, cid, code } => {
            w.str(q!("role"), "data_request");
            w.opt_u64(q!("qid"), qid.map(u64::from));
            w.str(q!("name"), crate::wire::nvme::code_name(code, qid));
            w.object(q!("data"));
            w.u64(q!("cid"), u64::from(cid));
            w.end();
        }
        NvmeRole::Queue { qid } => {
            w.str(q!("role"), "queue");
            w.opt_u64(q!("qid"), qid.map(u64::from));
        }
    }
    w.end();
}

/// Appends the tags of what the analysis found in a frame (`[retransmit]
/// [gap]`) to its summary line; a tag the line already carries (the
/// header's own `[CE]` or `[bad ICRC]`) is not repeated.
pub fn push_marks(line: &mut String, marks: crate::analysis::Marks) {
    for m in marks.iter() {
        let tag = format!(" [{}]", m.label());
        if !line.contains(&tag) {
            line.push_str(&tag);
        }
    }
}

/// One summary line, tshark style: number, relative time, source →
/// destination, protocol, length, info.
pub fn summary_line(
    p: &Packet<'_>,
    first_ts_ns: u64,
    ts_digits: usize,
    link_bps: u64,
    tcp: Option<&TcpSeen>,
) -> String {
    let mut line = String::with_capacity(160);
    write_summary_line(&mut line, p, first_ts_ns, ts_digits, link_bps, tcp);
    line
}

/// [`summary_line`], appended to `line` (without building each column
/// as a string of its own first).
pub fn write_summary_line(
    line: &mut String,
    p: &Packet<'_>,
    first_ts_ns: u64,
    ts_digits: usize,
    link_bps: u64,
    tcp: Option<&TcpSeen>,
) {
    let rel = p.ts_ns.saturating_sub(first_ts_ns);
    let secs = rel / 1_000_000_000;
    let frac = rel % 1_000_000_000;
    // As `{:>6} {:>4}.{:06} ` (or `{:09}`) would write them, without the
    // formatting machinery: most of a line's cost was `core::fmt`.
    push_dec(line, p.number, 6);
    line.push(' ');
    push_dec(line, secs, 4);
    line.push('.');
    match ts_digits {
        6 => push_dec0(line, frac / 1000, 6),
        _ => push_dec0(line, frac, 9),
    }
    line.push(' ');
    write_source(line, p);
    line.push_str(" → ");
    write_destination(line, p);
    line.push(' ');
    line.push_str(protocol_in(p, tcp));
    line.push(' ');
    push_dec(line, u64::from(p.len), 0);
    line.push(' ');
    write_info(line, p, link_bps, tcp);
}

/// The Source column: the sending endpoint's address (IP or GID), else
/// its MAC; nothing when the frame names none.
pub fn write_source(s: &mut String, p: &Packet<'_>) {
    if let Some((a, _)) = p.endpoints() {
        push_addr(s, &a);
    } else if let Some(e) = &p.eth {
        s.push_str(&mac_string(&e.src));
    } else if let Some(m) = p.sll.and_then(|l| l.src_mac()) {
        s.push_str(&mac_string(&m));
    }
}

/// The Destination column, as [`write_source`].
pub fn write_destination(s: &mut String, p: &Packet<'_>) {
    if let Some((_, a)) = p.endpoints() {
        push_addr(s, &a);
    } else if let Some(e) = &p.eth {
        s.push_str(&mac_string(&e.dst));
    }
}

/// `v` in decimal, right-aligned in `width` columns (`{:>width$}`).
fn push_dec(s: &mut String, v: u64, width: usize) {
    push_decimal(s, v, width, ' ');
}

/// `v` in decimal, zero-padded to `width` digits (`{:0width$}`).
fn push_dec0(s: &mut String, v: u64, width: usize) {
    push_decimal(s, v, width, '0');
}

fn push_decimal(s: &mut String, v: u64, width: usize, pad: char) {
    let mut b = itoa::Buffer::new();
    let digits = b.format(v);
    for _ in digits.len()..width {
        s.push(pad);
    }
    s.push_str(digits);
}

/// `v` in lower-case hexadecimal, zero-padded to `width` digits
/// (`{:0width$x}`).
fn push_hex(s: &mut String, v: u64, width: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digits = ((64 - v.leading_zeros()).div_ceil(4) as usize).max(1);
    for _ in digits..width {
        s.push('0');
    }
    for d in (0..digits).rev() {
        s.push(char::from(HEX[((v >> (4 * d)) & 0xf) as usize]));
    }
}

/// An address as its `Display` writes it.
fn push_addr(s: &mut String, a: &crate::dissect::Addr) {
    use crate::dissect::Addr;
    use std::net::IpAddr;
    match a {
        Addr::Ip(IpAddr::V4(v4)) => super::json::push_ipv4(s, v4),
        Addr::Ip(IpAddr::V6(v6)) => super::json::push_ipv6(s, v6),
        Addr::Lid(_) => {
            let _ = write!(s, "{a}");
        }
    }
}

/// Appends one JSON Lines object (with the trailing newline) to `out`.
pub fn write_json_line(out: &mut Vec<u8>, p: &Packet<'_>) {
    json_line(out, p, None);
}

/// [`write_json_line`] with what the analysis concluded about the frame:
/// an `analysis` object holding its flow's number (in order of first
/// appearance) and the `roce.analysis.*` flags that are set (`missing`
/// with a gap), left out when there is none of them.
pub fn write_json_line_analysed(
    out: &mut Vec<u8>,
    p: &Packet<'_>,
    a: &crate::analysis::FrameAnalysis,
    flow_number: Option<u64>,
) {
    json_line(out, p, Some((a, flow_number)));
}

fn json_line(
    out: &mut Vec<u8>,
    p: &Packet<'_>,
    analysis: Option<(&crate::analysis::FrameAnalysis, Option<u64>)>,
) {
    out.reserve(768);
    let mut w = JsonWriter::new(out);
    w.begin();
    w.u64(q!("frame"), p.number);
    w.u64(q!("ts_ns"), p.ts_ns);
    w.u64(q!("len"), u64::from(p.len));
    w.u64(q!("caplen"), u64::from(p.caplen));
    link_json(&mut w, p);
    infiniband_json(&mut w, p);
    if let Some(cm) = &p.cm {
        cm_json(&mut w, cm);
    }
    if let Some(n) = p.payload_len {
        w.u64(q!("payload_len"), u64::from(n));
    }
    if let Some(i) = &p.icrc {
        w.object(q!("icrc"));
        w.opt_u64(q!("value"), i.value.map(u64::from));
        w.opt_bool(q!("valid"), i.valid);
        if let Some(e) = i.expected {
            w.u64(q!("expected"), u64::from(e));
        }
        w.end();
    }
    if let Some(v) = &p.vcrc {
        w.object(q!("vcrc"));
        w.opt_u64(q!("value"), v.value.map(u64::from));
        w.opt_bool(q!("valid"), v.valid);
        if let Some(e) = v.expected {
            w.u64(q!("expected"), u64::from(e));
        }
        w.end();
    }
    if let Some(PauseRepr::Other { opcode }) = &p.pause {
        w.object(q!("mac_control"));
        w.u64(q!("opcode"), u64::from(*opcode));
        w.end();
    } else if let Some(pause) = &p.pause {
        w.object(q!("pause"));
        w.u64(q!("opcode"), u64::from(pause.opcode()));
        match pause {
            PauseRepr::Pfc(pfc) => {
                w.u64(q!("enbv"), u64::from(pfc.class_enable));
                w.array(q!("pause_time"));
                for t in pfc.times {
                    w.element_u64(u64::from(t));
                }
                w.end_array();
            }
            PauseRepr::Pause { time } => w.u64(q!("pause_time"), u64::from(*time)),
            PauseRepr::Other { .. } => {}
        }
        w.end();
    }
    if let Some(e) = &p.error {
        w.escaped(q!("error"), &e.to_string());
    }
    if let Some((a, flow)) = analysis {
        analysis_json(&mut w, a, flow);
    }
    if let Some(role) = analysis.and_then(|(a, _)| a.nvme) {
        nvme_json(&mut w, p, role);
    }
    w.end();
    out.push(b'\n');
}

/// The link and network layers' members: Ethernet or Linux cooked
/// capture, VLAN tags, IP, UDP, ERF.
#[inline]
fn link_json(w: &mut JsonWriter<'_>, p: &Packet<'_>) {
    if let Some(e) = &p.eth {
        w.object(q!("eth"));
        w.mac(q!("src"), &e.src);
        w.mac(q!("dst"), &e.dst);
        w.u64(q!("type"), u64::from(e.ethertype));
        w.end();
    }
    if let Some(sll) = &p.sll {
        w.object(q!("sll"));
        w.u64(q!("pkttype"), u64::from(sll.packet_type));
        if let Some(m) = sll.src_mac() {
            w.mac(q!("src"), &m);
        }
        w.u64(q!("protocol"), u64::from(sll.protocol));
        w.end();
    }
    if p.vlans[0].is_some() {
        w.array(q!("vlan"));
        for t in p.vlan_tags() {
            w.element_object();
            w.u64(q!("id"), u64::from(t.id));
            w.u64(q!("pcp"), u64::from(t.pcp));
            w.bool(q!("dei"), t.dei);
            w.u64(q!("tpid"), u64::from(t.tpid));
            w.end();
        }
        w.end_array();
    }
    if let Some(ip) = &p.ip {
        w.object(q!("ip"));
        w.u64(q!("version"), u64::from(ip.version));
        w.ip(q!("src"), &ip.src);
        w.ip(q!("dst"), &ip.dst);
        w.u64(q!("dscp"), u64::from(ip.dscp));
        w.u64(q!("ecn"), u64::from(ip.ecn));
        w.u64(q!("ttl"), u64::from(ip.ttl));
        w.u64(q!("proto"), u64::from(ip.protocol));
        w.end();
    }
    if let Some(u) = &p.udp {
        w.object(q!("udp"));
        w.u64(q!("sport"), u64::from(u.sport));
        w.u64(q!("dport"), u64::from(u.dport));
        w.u64(q!("length"), u64::from(u.length));
        w.end();
    }
    if let Some(e) = &p.erf {
        w.object(q!("erf"));
        w.u64(q!("type"), u64::from(e.kind));
        w.str(q!("type_name"), e.type_name());
        w.u64(q!("flags"), u64::from(e.flags));
        w.u64(q!("port"), u64::from(e.port()));
        w.u64(q!("rlen"), u64::from(e.rlen));
        w.u64(q!("lctr"), u64::from(e.lctr));
        w.u64(q!("wlen"), u64::from(e.wlen));
        w.end();
    }
}

/// The InfiniBand layers' members: LRH, the RoCE version, GRH, BTH, the
/// extended headers and a MAD's common header.
#[inline]
fn infiniband_json(w: &mut JsonWriter<'_>, p: &Packet<'_>) {
    if let Some(l) = &p.lrh {
        w.object(q!("lrh"));
        w.u64(q!("vl"), u64::from(l.vl));
        w.u64(q!("lver"), u64::from(l.lver));
        w.u64(q!("sl"), u64::from(l.sl));
        w.u64(q!("lnh"), u64::from(l.lnh.bits()));
        w.u64(q!("dlid"), u64::from(l.dlid));
        w.u64(q!("slid"), u64::from(l.slid));
        w.u64(q!("pktlen"), u64::from(l.pkt_len));
        w.end();
    }
    if let Some(v) = p.roce {
        w.str(q!("roce"), v.as_str());
    }
    if let Some(g) = &p.grh {
        w.object(q!("grh"));
        w.u64(q!("ipver"), u64::from(g.ip_ver));
        w.u64(q!("tclass"), u64::from(g.tclass));
        w.u64(q!("flowlabel"), u64::from(g.flow_label));
        w.u64(q!("paylen"), u64::from(g.pay_len));
        w.u64(q!("nxthdr"), u64::from(g.nxt_hdr));
        w.u64(q!("hoplmt"), u64::from(g.hop_lmt));
        w.ip(q!("sgid"), &g.sgid_addr().into());
        w.ip(q!("dgid"), &g.dgid_addr().into());
        w.end();
    }
    if let Some(b) = &p.bth {
        w.object(q!("bth"));
        w.u64(q!("opcode"), u64::from(b.opcode.0));
        w.str(q!("opcode_name"), b.opcode.name());
        w.str(q!("transport"), b.opcode.transport().as_str());
        w.bool(q!("se"), b.se);
        w.bool(q!("m"), b.m);
        w.u64(q!("padcnt"), u64::from(b.padcnt));
        w.u64(q!("tver"), u64::from(b.tver));
        w.u64(q!("p_key"), u64::from(b.p_key));
        w.bool(q!("fecn"), b.fecn);
        w.bool(q!("becn"), b.becn);
        w.u64(q!("destqp"), u64::from(b.dest_qp));
        w.bool(q!("a"), b.ack_req);
        w.u64(q!("psn"), u64::from(b.psn));
        w.end();
    }
    if let Some(r) = &p.rdeth {
        w.object(q!("rdeth"));
        w.u64(q!("eecnxt"), u64::from(r.ee_context));
        w.end();
    }
    if let Some(d) = &p.deth {
        w.object(q!("deth"));
        w.u64(q!("q_key"), u64::from(d.q_key));
        w.u64(q!("srcqp"), u64::from(d.src_qp));
        w.end();
    }
    if let Some(x) = &p.xrceth {
        w.object(q!("xrceth"));
        w.u64(q!("xrcsrq"), u64::from(x.xrc_srq));
        w.end();
    }
    if let Some(r) = &p.reth {
        w.object(q!("reth"));
        w.u64(q!("va"), r.va);
        w.u64(q!("r_key"), u64::from(r.r_key));
        w.u64(q!("dmalen"), u64::from(r.dma_len));
        w.end();
    }
    if let Some(a) = &p.atomiceth {
        w.object(q!("atomiceth"));
        w.u64(q!("va"), a.va);
        w.u64(q!("r_key"), u64::from(a.r_key));
        w.u64(q!("swapdt"), a.swap_add);
        w.u64(q!("cmpdt"), a.compare);
        w.end();
    }
    if let Some(a) = &p.aeth {
        w.object(q!("aeth"));
        w.u64(q!("syndrome"), u64::from(a.syndrome));
        w.u64(q!("msn"), u64::from(a.msn));
        w.str(q!("kind"), a.kind().as_str());
        w.u64(q!("value"), u64::from(a.value()));
        w.end();
    }
    if let Some(a) = &p.atomicacketh {
        w.object(q!("atomicacketh"));
        w.u64(q!("origremdt"), a.orig_rem_dt);
        w.end();
    }
    if let Some(i) = &p.immdt {
        w.object(q!("immdt"));
        w.u64(q!("value"), u64::from(i.value));
        w.end();
    }
    if let Some(i) = &p.ieth {
        w.object(q!("ieth"));
        w.u64(q!("r_key"), u64::from(i.r_key));
        w.end();
    }
    if let Some(m) = &p.mad {
        w.object(q!("mad"));
        w.u64(q!("mgmt_class"), u64::from(m.mgmt_class));
        w.u64(q!("method"), u64::from(m.method));
        w.u64(q!("attribute_id"), u64::from(m.attribute_id));
        w.u64(q!("transaction_id"), m.transaction_id);
        w.end();
    }
}

/// A CM message's members.
fn cm_json(w: &mut JsonWriter<'_>, cm: &CmMessage) {
    w.object(q!("cm"));
    w.str(q!("msg"), cm.short_name());
    match *cm {
        CmMessage::Req {
            local_comm_id,
            service_id,
            local_qpn,
            starting_psn,
            mtu,
            ..
        } => {
            w.u64(q!("local_comm_id"), u64::from(local_comm_id));
            w.u64(q!("service_id"), service_id);
            w.u64(q!("local_qpn"), u64::from(local_qpn));
            w.u64(q!("starting_psn"), u64::from(starting_psn));
            w.u64(q!("mtu"), u64::from(mtu));
        }
        CmMessage::Rep {
            local_comm_id,
            remote_comm_id,
            local_qpn,
            starting_psn,
        } => {
            w.u64(q!("local_comm_id"), u64::from(local_comm_id));
            w.u64(q!("remote_comm_id"), u64::from(remote_comm_id));
            w.u64(q!("local_qpn"), u64::from(local_qpn));
            w.u64(q!("starting_psn"), u64::from(starting_psn));
        }
        CmMessage::Rtu {
            local_comm_id,
            remote_comm_id,
        }
        | CmMessage::Drep {
            local_comm_id,
            remote_comm_id,
        } => {
            w.u64(q!("local_comm_id"), u64::from(local_comm_id));
            w.u64(q!("remote_comm_id"), u64::from(remote_comm_id));
        }
        CmMessage::Rej {
            local_comm_id,
            remote_comm_id,
            reason,
        } => {
            w.u64(q!("local_comm_id"), u64::from(local_comm_id));
            w.u64(q!("remote_comm_id"), u64::from(remote_comm_id));
            w.u64(q!("reason"), u64::from(reason));
        }
        CmMessage::Dreq {
            local_comm_id,
            remote_comm_id,
            remote_qpn,
        } => {
            w.u64(q!("local_comm_id"), u64::from(local_comm_id));
            w.u64(q!("remote_comm_id"), u64::from(remote_comm_id));
            w.u64(q!("remote_qpn"), u64::from(remote_qpn));
        }
        CmMessage::Other { attribute_id } => {
            w.u64(q!("attribute_id"), u64::from(attribute_id));
        }
    }
    w.end();
}

/// The analysis of the frame: its flow and the `roce.analysis.*` flags
/// that are set, left out when there is none of them.
fn analysis_json(w: &mut JsonWriter<'_>, a: &crate::analysis::FrameAnalysis, flow: Option<u64>) {
    if flow.is_none() && a.marks.is_empty() && a.completion_ns.is_none() {
        return;
    }
    w.object(q!("analysis"));
    if let Some(n) = flow {
        w.u64(q!("flow"), n);
    }
    for m in a.marks.iter() {
        w.bool(&format!("\"{}\":", m.as_str()), true);
    }
    if a.marks.has(crate::analysis::Mark::Gap) {
        w.u64(q!("missing"), u64::from(a.missing));
    }
    if a.episode > 0 {
        w.u64(q!("episode"), u64::from(a.episode));
    }
    if let Some(ns) = a.ack_rtt_ns {
        w.u64(q!("ack_rtt_ns"), ns);
    }
    if let Some(ns) = a.completion_ns {
        w.u64(q!("message_completion_ns"), ns);
    }
    w.end();
}

#[cfg(test)]
mod number_tests {
    use super::{push_addr, push_dec, push_dec0, push_hex};
    use crate::dissect::Addr;
    use proptest::prelude::*;

    proptest! {
        /// The hand-written columns are what `format!` writes.
        #[test]
        fn columns_as_format_writes_them(v in prop_oneof![
            0u64..20, 0u64..1_000_000_000, any::<u32>().prop_map(u64::from), any::<u64>()
        ], width in 0usize..12) {
            let run = |f: fn(&mut String, u64, usize)| {
                let mut s = String::from("x");
                f(&mut s, v, width);
                s
            };
            prop_assert_eq!(run(push_dec), format!("x{v:>width$}"));
            prop_assert_eq!(run(push_dec0), format!("x{v:0width$}"));
            prop_assert_eq!(run(push_hex), format!("x{v:0width$x}"));
        }

        #[test]
        fn addresses_as_display_writes_them(
            v4 in any::<[u8; 4]>(),
            v6 in proptest::array::uniform8(prop_oneof![Just(0u16), any::<u16>()]),
            lid in any::<u16>(),
        ) {
            for a in [
                Addr::Ip(std::net::Ipv4Addr::from(v4).into()),
                Addr::Ip(std::net::Ipv6Addr::from(v6).into()),
                Addr::Lid(lid),
            ] {
                let mut s = String::new();
                push_addr(&mut s, &a);
                prop_assert_eq!(s, a.to_string());
            }
        }
    }
}
