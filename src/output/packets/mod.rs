//! Per-packet views: the tshark-style summary line (its Info column here
//! for RoCE, InfiniBand and pauses; in `tcp`, `udp_apps` and `network`
//! for the traffic beside them) and JSON Lines (`json_lines`).

mod json_lines;
mod network;
mod tcp;
mod udp_apps;

use std::fmt::Write as _;

use super::json::mac_string;
use crate::analysis::http::Reading;
use crate::analysis::tcp::TcpSeen;
use crate::dissect::{OtherL4, Packet};
use crate::units::human_ns;
use crate::wire::aeth::{AckKind, nak, rnr_timer_us};
use crate::wire::mad::CmMessage;
use crate::wire::pause::{PauseRepr, quanta_to_ns};
pub use json_lines::{write_json_line, write_json_line_analysed};
use network::{write_arp_info, write_igmp, write_nd, write_stp};
use tcp::{write_http, write_ssh, write_tcp, write_tls};
use udp_apps::{write_dns, write_udp_app};

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
