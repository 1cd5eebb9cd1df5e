//! What UDP carries: DNS (and mDNS, LLMNR), NBNS, DHCP and SSDP.

use super::*;

/// Walks a DNS-layout message's records (DNS's, NBNS's), titling each
/// section where it starts and saying where the message ends before its
/// counts do; `each` shows a record, and stops the walk with `false`.
pub(super) fn records_tree<'m>(
    t: &mut Tree<'_>,
    m: &crate::wire::dns::Message<'m>,
    mut each: impl FnMut(&mut Tree<'_>, crate::wire::dns::Record<'m>) -> bool,
) {
    let mut section = None;
    for r in m.records() {
        let Ok(r) = r else {
            t.text(
                1,
                "[Malformed Packet: a record runs past the end of the message]",
            );
            return;
        };
        if section != Some(r.section) {
            section = Some(r.section);
            t.text(1, r.section.title());
        }
        if !each(t, r) {
            return;
        }
    }
}

/// The flags of a DNS-layout message (DNS's, NBNS's) under its Flags
/// line: query or response, the operation, a response's reply code.
pub(super) fn flag_lines(
    t: &mut Tree<'_>,
    m: &crate::wire::dns::Message<'_>,
    op: &str,
    rcode: &str,
) {
    t.text(
        2,
        format_args!(
            "Response: Message is a {}",
            if m.is_response() { "response" } else { "query" }
        ),
    );
    t.text(2, format_args!("Opcode: {op} ({})", m.opcode()));
    if m.is_response() {
        t.text(2, format_args!("Reply code: {rcode} ({})", m.rcode()));
    }
}

/// A DNS, mDNS or LLMNR message: its header, then each section's records
/// with tshark's one-line summary of each (`example.com: type A, class IN,
/// addr 93.184.216.34`) and their fields under it.
pub(super) fn dns_tree(t: &mut Tree<'_>, d: &crate::dissect::Dns<'_>) {
    use crate::wire::dns::{self, Flavour, MDNS_CLASS_BIT, Section};
    let base = d.offset;
    let Some(m) = d.message else {
        t.text(0, format_args!("{}", d.flavour.title()));
        t.text(1, "[Malformed Packet: shorter than a DNS header]");
        return;
    };
    let len = m.bytes().len();
    t.add(
        0,
        base,
        len,
        format_args!(
            "{} ({})",
            d.flavour.title(),
            if m.is_response() { "response" } else { "query" }
        ),
    );
    t.add(1, base, 2, format_args!("Transaction ID: 0x{:04x}", m.id()));
    let op = dns::opcode_name(m.opcode()).unwrap_or("Unknown operation");
    if m.is_response() {
        let rc = dns::rcode_name(m.rcode()).unwrap_or("Unknown error");
        t.add(
            1,
            base + 2,
            2,
            format_args!("Flags: 0x{:04x} {op} response, {rc}", m.flags()),
        );
    } else {
        t.add(
            1,
            base + 2,
            2,
            format_args!("Flags: 0x{:04x} {op}", m.flags()),
        );
    }
    flag_lines(
        t,
        &m,
        op,
        dns::rcode_name(m.rcode()).unwrap_or("Unknown error"),
    );
    let titles = if m.opcode() == 5 {
        ["Zones", "Prerequisites", "Updates", "Additional RRs"]
    } else {
        ["Questions", "Answer RRs", "Authority RRs", "Additional RRs"]
    };
    for (i, (title, n)) in titles.iter().zip(m.counts()).enumerate() {
        t.add(1, base + 4 + 2 * i, 2, format_args!("{title}: {n}"));
    }
    let mdns = d.flavour == Flavour::Mdns;
    records_tree(t, &m, |t, r| {
        let owner = m.name(r.at).map(|n| n.text).unwrap_or_default();
        let type_name = dns::type_name(r.rtype)
            .map_or_else(|| format!("Unknown ({})", r.rtype), str::to_string);
        // `A (1)`; an unknown type's name has its number already.
        let type_line = if dns::type_name(r.rtype).is_some() {
            format!("Type: {type_name} ({})", r.rtype)
        } else {
            format!("Type: {type_name}")
        };
        let flagged = mdns && r.class & MDNS_CLASS_BIT != 0;
        let class = if mdns {
            r.class & !MDNS_CLASS_BIT
        } else {
            r.class
        };
        let mut line = format!("{owner}: type {type_name}");
        if r.rtype != dns::T_OPT || r.section == Section::Question {
            line.push_str(", class ");
            line.push_str(dns::class_name(class));
        }
        let at = base + r.at;
        if r.section == Section::Question {
            if mdns {
                line.push_str(if flagged {
                    ", \"QU\" question"
                } else {
                    ", \"QM\" question"
                });
            }
            t.add(2, at, r.len, line);
            t.text(3, format_args!("Name: {owner}"));
            t.text(3, type_line.as_str());
            t.text(
                3,
                format_args!("Class: {} (0x{class:04x})", dns::class_name(class)),
            );
            return true;
        }
        if flagged {
            line.push_str(", cache flush");
        }
        let name_at = |off: usize| m.name(r.rdata_at + off).map(|n| n.text).ok();
        let word = |i: usize| match r.rdata.get(i..i + 2) {
            Some(&[a, b]) => Some(u16::from_be_bytes([a, b])),
            _ => None,
        };
        // What the record says, as tshark's line ends and the field under it.
        let said: Option<(String, String)> = match r.rtype {
            dns::T_A => r
                .ipv4()
                .map(|a| (format!(", addr {a}"), format!("Address: {a}"))),
            dns::T_AAAA => r
                .ipv6()
                .map(|a| (format!(", addr {a}"), format!("AAAA Address: {a}"))),
            dns::T_CNAME => name_at(0).map(|n| (format!(", cname {n}"), format!("CNAME: {n}"))),
            dns::T_NS => name_at(0).map(|n| (format!(", ns {n}"), format!("Name Server: {n}"))),
            dns::T_PTR => name_at(0).map(|n| (format!(", {n}"), format!("Domain Name: {n}"))),
            dns::T_DNAME => name_at(0).map(|n| (format!(", dname {n}"), format!("Dname: {n}"))),
            dns::T_SOA => {
                name_at(0).map(|n| (format!(", mname {n}"), format!("Primary name server: {n}")))
            }
            dns::T_NSEC => name_at(0).map(|n| {
                (
                    format!(", next domain name {n}"),
                    format!("Next Domain Name: {n}"),
                )
            }),
            dns::T_MX => match (word(0), name_at(2)) {
                (Some(pref), Some(n)) => Some((
                    format!(", preference {pref}, mx {n}"),
                    format!("Mail Exchange: {n}"),
                )),
                _ => None,
            },
            dns::T_SRV => match (word(0), word(2), word(4), name_at(6)) {
                (Some(prio), Some(weight), Some(port), Some(n)) => Some((
                    format!(", priority {prio}, weight {weight}, port {port}, target {n}"),
                    format!("Target: {n}"),
                )),
                _ => None,
            },
            _ => None,
        };
        if let Some((end, _)) = &said
            && !r.rdata.is_empty()
        {
            line.push_str(end);
        }
        // A record cut short spans what there is of it.
        t.add(2, at, r.len.min(len.saturating_sub(r.at)), line);
        t.text(3, format_args!("Name: {owner}"));
        t.text(3, type_line.as_str());
        if r.rtype == dns::T_OPT {
            t.text(3, format_args!("UDP payload size: {}", r.class));
        } else {
            t.text(
                3,
                format_args!("Class: {} (0x{class:04x})", dns::class_name(class)),
            );
            t.text(3, format_args!("Time to live: {}", r.ttl));
        }
        t.text(3, format_args!("Data length: {}", r.rdata.len()));
        if let Some((_, field)) = said {
            t.add(3, base + r.rdata_at, r.rdata.len(), field);
        }
        if !r.whole {
            t.text(
                3,
                "[Malformed Packet: the record's data runs past the end of the message]",
            );
            return false;
        }
        true
    });
}

/// An NBNS message: its header, then each section's records with their
/// NetBIOS names (`INDEL1RES01<00>: type NB, class IN`) and, for answers,
/// what they say.
pub(super) fn nbns_tree(t: &mut Tree<'_>, u: &crate::dissect::UdpPayload<'_>) {
    use crate::wire::dns::{self, Message, Section};
    use crate::wire::nbns;
    let base = u.offset;
    let Some(m) = Message::new(u.bytes) else {
        t.text(0, "NetBIOS Name Service");
        t.text(1, "[Malformed Packet: shorter than an NBNS header]");
        return;
    };
    let len = m.bytes().len();
    t.add(0, base, len, "NetBIOS Name Service");
    t.add(1, base, 2, format_args!("Transaction ID: 0x{:04x}", m.id()));
    let op = nbns::opcode_name(m.opcode()).unwrap_or("Unknown operation");
    t.add(1, base + 2, 2, format_args!("Flags: 0x{:04x}", m.flags()));
    flag_lines(t, &m, op, nbns::rcode_name(m.rcode()));
    let titles = ["Questions", "Answer RRs", "Authority RRs", "Additional RRs"];
    for (i, (title, n)) in titles.iter().zip(m.counts()).enumerate() {
        t.add(1, base + 4 + 2 * i, 2, format_args!("{title}: {n}"));
    }
    records_tree(t, &m, |t, r| {
        let name = nbns::name(&m, r.at).unwrap_or_default();
        let kind = nbns::type_name(r.rtype);
        let class = dns::class_name(r.class);
        t.add(
            2,
            base + r.at,
            r.len.min(len.saturating_sub(r.at)),
            format_args!("{name}: type {kind}, class {class}"),
        );
        t.text(3, format_args!("Name: {name}"));
        t.text(3, format_args!("Type: {kind} ({})", r.rtype));
        t.text(3, format_args!("Class: {class} ({})", r.class));
        if r.section == Section::Question {
            return true;
        }
        t.text(3, format_args!("Time to live: {} seconds", r.ttl));
        t.text(3, format_args!("Data length: {}", r.rdata.len()));
        if r.rtype == nbns::T_NB && m.opcode() != nbns::OPCODE_WACK {
            for entry in r.rdata.chunks_exact(6) {
                if let [f0, f1, a, b, c, d] = *entry {
                    t.text(
                        3,
                        format_args!("Name flags: 0x{:04x}", u16::from_be_bytes([f0, f1])),
                    );
                    t.text(
                        3,
                        format_args!("Addr: {}", std::net::Ipv4Addr::new(a, b, c, d)),
                    );
                }
            }
        }
        if !r.whole {
            t.text(
                3,
                "[Malformed Packet: the record's data runs past the end of the message]",
            );
            return false;
        }
        true
    });
}

/// A BOOTP or DHCP message: its fixed header, then the message type the
/// options give.
pub(super) fn dhcp_tree(t: &mut Tree<'_>, u: &crate::dissect::UdpPayload<'_>) {
    use crate::wire::dhcp;
    let base = u.offset;
    let Some(m) = dhcp::Message::new(u.bytes) else {
        return;
    };
    let opts = m.options();
    let kind = opts.message_type.map(|t| {
        dhcp::message_type_name(t).map_or_else(|| format!("Unknown ({t})"), str::to_string)
    });
    match &kind {
        Some(k) => t.add(
            0,
            base,
            u.bytes.len(),
            format_args!("Dynamic Host Configuration Protocol ({k})"),
        ),
        None => t.add(
            0,
            base,
            u.bytes.len(),
            format_args!(
                "Dynamic Host Configuration Protocol ({})",
                if m.op() == 2 {
                    "Boot Reply"
                } else {
                    "Boot Request"
                }
            ),
        ),
    }
    let op = match m.op() {
        1 => "Boot Request",
        2 => "Boot Reply",
        _ => "Unknown",
    };
    t.add(1, base, 1, format_args!("Message type: {op} ({})", m.op()));
    if let Some(h) = m.htype() {
        t.add(1, base + 1, 1, format_args!("Hardware type: 0x{h:02x}"));
    }
    if let Some(h) = m.hlen() {
        t.add(1, base + 2, 1, format_args!("Hardware address length: {h}"));
    }
    if let Some(x) = m.xid() {
        t.add(1, base + 4, 4, format_args!("Transaction ID: 0x{x:08x}"));
    }
    if let Some(f) = m.flags() {
        let broadcast = if f & 0x8000 != 0 {
            ", Broadcast flag (Broadcast)"
        } else {
            ""
        };
        t.add(
            1,
            base + 10,
            2,
            format_args!("Bootp flags: 0x{f:04x}{broadcast}"),
        );
    }
    for (i, title) in [
        "Client IP address",
        "Your (client) IP address",
        "Next server IP address",
        "Relay agent IP address",
    ]
    .into_iter()
    .enumerate()
    {
        if let Some(a) = m.address(i) {
            t.add(1, base + 12 + 4 * i, 4, format_args!("{title}: {a}"));
        }
    }
    if let Some(mac) = m.mac() {
        t.add(
            1,
            base + 28,
            6,
            format_args!("Client MAC address: {}", MacText(&mac)),
        );
    }
    if let Some(k) = &kind {
        t.text(1, format_args!("Option: (53) DHCP Message Type ({k})"));
        for v in m.message_types() {
            let name = dhcp::message_type_name(v).unwrap_or("Unknown");
            t.text(2, format_args!("DHCP: {name} ({v})"));
        }
    }
    for (htype, mac) in m.option_data(61).into_iter().filter_map(|d| match d {
        &[h, a, b, c, d, e, f] => Some((h, [a, b, c, d, e, f])),
        _ => None,
    }) {
        t.text(1, "Option: (61) Client identifier");
        t.text(2, format_args!("Hardware type: 0x{htype:02x}"));
        t.text(2, format_args!("Client MAC address: {}", MacText(&mac)));
    }
    if opts.malformed {
        t.text(
            1,
            "[Malformed Packet: the message ends before its options do]",
        );
    }
}

/// An SSDP message: its first line and header lines (see
/// [`http_head_nodes`]).
pub(super) fn ssdp_tree(t: &mut Tree<'_>, u: &crate::dissect::UdpPayload<'_>) {
    t.add(
        0,
        u.offset,
        u.bytes.len(),
        "Simple Service Discovery Protocol",
    );
    http_head_nodes(t, u.bytes, Some(u.offset));
}

/// An HTTP message's head, under its protocol's node: its first line with
/// what it says, then the header lines up to the blank one, each with its
/// line end shown as tshark shows it. Returns the head's length. The
/// lines' bytes are in the frame from `base` on, when it is given (an
/// HTTP message that ends in a later segment is shown there with the head
/// its first segment had).
pub(super) fn http_head_nodes(t: &mut Tree<'_>, bytes: &[u8], base: Option<usize>) -> usize {
    use crate::wire::http::{StartLine, is_notification};
    let mut at = 0usize;
    let mut first = true;
    while at < bytes.len() {
        let rest = bytes.get(at..).unwrap_or_default();
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            break;
        };
        let line = rest.get(..end).unwrap_or_default();
        let (line, ending) = match line.strip_suffix(b"\r") {
            Some(l) => (l, "\\r\\n"),
            None => (line, "\\n"),
        };
        let mut text = String::with_capacity(line.len() + 4);
        crate::wire::push_text(&mut text, line);
        text.push_str(ending);
        match base {
            Some(base) => t.add(1, base + at, end + 1, text),
            None => t.text(1, text),
        }
        if first {
            first = false;
            match StartLine::parse(bytes) {
                StartLine::Request { method, line } => {
                    let method = String::from_utf8_lossy(method);
                    let mut parts = line.split(|&b| b == b' ').skip(1);
                    if is_notification(method.as_bytes()) {
                        t.text(2, format_args!("Notification: {method}"));
                    }
                    t.text(2, format_args!("Request Method: {method}"));
                    if let Some(uri) = parts.next() {
                        t.text(
                            2,
                            format_args!("Request URI: {}", String::from_utf8_lossy(uri)),
                        );
                    }
                    if let Some(v) = parts.next() {
                        t.text(
                            2,
                            format_args!("Request Version: {}", String::from_utf8_lossy(v)),
                        );
                    }
                }
                StartLine::Response { code, line } => {
                    let mut parts = line.splitn(3, |&b| b == b' ');
                    if let Some(v) = parts.next() {
                        t.text(
                            2,
                            format_args!("Response Version: {}", String::from_utf8_lossy(v)),
                        );
                    }
                    if let Some(code) = code {
                        t.text(2, format_args!("Status Code: {code}"));
                    }
                    if let Some(phrase) = parts.nth(1) {
                        t.text(
                            2,
                            format_args!("Response Phrase: {}", String::from_utf8_lossy(phrase)),
                        );
                    }
                }
                StartLine::Continuation => {}
            }
        }
        at += end + 1;
        if line.is_empty() {
            break;
        }
    }
    at
}
