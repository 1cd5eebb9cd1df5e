//! The Info column of the applications on UDP beside RoCE: DNS (and mDNS,
//! LLMNR), NetBIOS name service, DHCP, SSDP.

use std::fmt::Write as _;

use crate::output::json::mac_string;

/// A DNS, mDNS or LLMNR message's summary, as tshark words it: the
/// operation and ID, then each question's type and name and each record's
/// type and what it says (`Standard query response 0x1234 A example.com A
/// 93.184.216.34`); mDNS adds `"QM"`/`"QU"` to questions and `cache flush`
/// to records. A message that ends early ends with tshark's
/// `[Malformed Packet]` (or `[Packet size limited during capture]`).
pub(super) fn write_dns(s: &mut String, d: &crate::dissect::Dns<'_>) {
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

/// The summary of an NBNS, DHCP or SSDP datagram (DNS has its own).
pub(super) fn write_udp_app(s: &mut String, u: &crate::dissect::UdpPayload<'_>) {
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
pub(super) fn write_nbns(s: &mut String, bytes: &[u8]) {
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
pub(super) fn write_dhcp(s: &mut String, bytes: &[u8]) {
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
pub(super) fn write_rdata(
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
