//! The `-V` header tree (Wireshark-like field names, each node with the
//! bytes it covers) and the `-x` hex dump.

use std::fmt::Write as _;
use std::ops::Range;

use super::json::MacText;
use super::names;
use super::packets::human_ns;
use crate::analysis::tcp::{NOTE_FIELDS, Notes, TcpSeen};
use crate::dissect::{Ip6Ext, OtherL4, Packet, RoceVersion};
use crate::wire::aeth::{AckKind, nak, rnr_timer_us};
use crate::wire::mad::CmMessage;
use crate::wire::pause::{PauseRepr, quanta_to_ns};
use crate::wire::tcp::{Tcp, TcpOption};
use crate::wire::{bth, grh};

/// One line of the header tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    pub depth: u8,
    pub text: String,
    /// Bytes of the frame this node describes.
    pub bytes: Option<Range<usize>>,
}

/// Where a tree goes: nodes kept (the TUI, tests), or lines written
/// straight to the output (`packets -V`: no string per node).
enum Sink<'o> {
    Nodes(Vec<TreeNode>),
    Lines(&'o mut Vec<u8>),
}

struct Tree<'o> {
    sink: Sink<'o>,
}

/// A node's text: formatted where the tree goes, once.
trait NodeText {
    fn into_string(self) -> String;
    fn write_to(self, out: &mut Vec<u8>);
}

impl NodeText for String {
    fn into_string(self) -> String {
        self
    }
    fn write_to(self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
}

impl NodeText for &str {
    fn into_string(self) -> String {
        self.to_string()
    }
    fn write_to(self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
}

impl NodeText for std::fmt::Arguments<'_> {
    fn into_string(self) -> String {
        std::fmt::format(self)
    }
    fn write_to(self, out: &mut Vec<u8>) {
        match self.as_str() {
            Some(s) => out.extend_from_slice(s.as_bytes()),
            // Writing to a vector cannot fail.
            None => {
                let _ = std::fmt::Write::write_fmt(&mut Bytes(out), self);
            }
        }
    }
}

/// A byte vector as a `fmt::Write`, without `io::Write`'s adapter (which
/// keeps an error a vector never gives).
struct Bytes<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

impl<'o> Tree<'o> {
    fn nodes() -> Self {
        Tree {
            sink: Sink::Nodes(Vec::new()),
        }
    }
    fn lines(out: &'o mut Vec<u8>) -> Self {
        Tree {
            sink: Sink::Lines(out),
        }
    }
    fn into_nodes(self) -> Vec<TreeNode> {
        match self.sink {
            Sink::Nodes(n) => n,
            Sink::Lines(_) => Vec::new(),
        }
    }
    fn node(&mut self, depth: u8, bytes: Option<Range<usize>>, text: impl NodeText) {
        match &mut self.sink {
            Sink::Nodes(n) => n.push(TreeNode {
                depth,
                text: text.into_string(),
                bytes,
            }),
            Sink::Lines(out) => {
                for _ in 0..depth {
                    out.extend_from_slice(b"    ");
                }
                text.write_to(out);
                out.push(b'\n');
            }
        }
    }
    fn add(&mut self, depth: u8, at: usize, len: usize, text: impl NodeText) {
        self.node(depth, Some(at..at.saturating_add(len)), text);
    }
    fn text(&mut self, depth: u8, text: impl NodeText) {
        self.node(depth, None, text);
    }
}

/// Walks a DNS-layout message's records (DNS's, NBNS's), titling each
/// section where it starts and saying where the message ends before its
/// counts do; `each` shows a record, and stops the walk with `false`.
fn records_tree<'m>(
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
fn flag_lines(t: &mut Tree<'_>, m: &crate::wire::dns::Message<'_>, op: &str, rcode: &str) {
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
fn dns_tree(t: &mut Tree<'_>, d: &crate::dissect::Dns<'_>) {
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

/// An SSH segment: its version line, the key exchange's packets in the
/// clear (lengths and message code), and the encrypted rest (split into
/// its length and packet, as tshark shows it, when no version line was
/// seen; its length after New Keys).
fn ssh_tree(t: &mut Tree<'_>, ssh: &crate::dissect::Ssh<'_>, tcp: Option<&TcpSeen>) {
    use crate::wire::ssh;
    let (version, encrypted) = tcp.map_or((None, false), |c| (c.ssh_version, c.ssh_encrypted));
    let r = ssh::read(ssh.payload, version, encrypted);
    let base = ssh.offset;
    t.add(0, base, ssh.payload.len(), "SSH Protocol");
    if let Some(line) = r.version_line {
        let mut text = String::from("Protocol: ");
        crate::wire::push_text(&mut text, line);
        t.add(1, base, line.len(), text);
    }
    for pk in &r.plain {
        let at = base + pk.at;
        t.add(1, at, pk.size(), "SSH Version 2");
        t.add(
            2,
            at,
            4,
            format_args!("Packet Length: {}", pk.packet_length),
        );
        t.add(
            2,
            at + 4,
            1,
            format_args!("Padding Length: {}", pk.padding_length),
        );
        let name = ssh::message_name(pk.code).unwrap_or("Unknown");
        t.add(
            2,
            at + 5,
            1,
            format_args!("Message Code: {name} ({})", pk.code),
        );
    }
    let e = r.encrypted;
    if !e.is_empty() {
        let at = base + r.encrypted_at;
        if version.is_none() && r.version_line.is_none() {
            let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
            let (len, rest) = e.split_at(e.len().min(4));
            t.add(
                1,
                at,
                len.len(),
                format_args!("Packet Length (encrypted): {}", hex(len)),
            );
            if !rest.is_empty() {
                t.add(
                    1,
                    at + 4,
                    rest.len(),
                    format_args!("Encrypted Packet: {}", hex(rest)),
                );
            }
        } else {
            t.add(
                1,
                at,
                e.len(),
                format_args!("[Encrypted: {} bytes]", e.len()),
            );
        }
    }
    t.text(
        1,
        format_args!(
            "Direction: {}",
            if ssh.from_client {
                "client-to-server"
            } else {
                "server-to-client"
            }
        ),
    );
}

/// A TLS segment's records: each record layer's type, version and
/// length, and what it holds (handshake messages, an alert, encrypted
/// data), as tshark's tree names them. A record begun in earlier segments
/// is shown without bytes of its own.
fn tls_tree(
    t: &mut Tree<'_>,
    p: &Packet<'_>,
    tls: &crate::dissect::Tls<'_>,
    r: &crate::wire::tls::Reading<'_>,
) {
    use crate::wire::tls::{self, Says};
    if !r.read_as_tls() {
        return;
    }
    let base = tls.offset;
    let app = p
        .other_l4
        .and_then(|l| l.tcp())
        .and_then(|(s, d)| tls::application(s, d));
    t.add(0, base, tls.payload.len(), "Transport Layer Security");
    for rec in &r.records {
        let (at, len) = (base + rec.span.0, rec.span.1 - rec.span.0);
        // A line of the record, over its bytes when this segment has them.
        let line = |t: &mut Tree<'_>, depth: u8, off: usize, n: usize, text: String| match rec.at {
            Some(h) => t.add(depth, base + h + off, n, text),
            None => t.text(depth, text),
        };
        let label = tls::version_label(rec.shown_version);
        let head = match &rec.says {
            // Only the Info column says so.
            Says::ContinuationData => continue,
            Says::IgnoredUnknown => {
                t.add(1, at, len, "Ignored Unknown Record");
                continue;
            }
            Says::ChangeCipherSpec => "Change Cipher Spec Protocol: Change Cipher Spec".to_string(),
            Says::Alert { .. } => {
                let mut s = String::new();
                rec.says.write(&mut s);
                s
            }
            Says::EncryptedAlert => "Encrypted Alert".to_string(),
            Says::Handshake(m) if m.len() > 1 => {
                "Handshake Protocol: Multiple Handshake Messages".to_string()
            }
            Says::Handshake(m) => format!(
                "Handshake Protocol: {}",
                m.first()
                    .and_then(|msg| tls::handshake_name(msg.kind))
                    .unwrap_or("Unknown")
            ),
            Says::EncryptedHandshake => {
                "Handshake Protocol: Encrypted Handshake Message".to_string()
            }
            Says::ApplicationData => format!(
                "Application Data Protocol: {}",
                app.unwrap_or("Application Data")
            ),
            Says::Heartbeat { request } => {
                format!(
                    "Heartbeat {}",
                    if *request { "Request" } else { "Response" }
                )
            }
            Says::EncryptedHeartbeat => "Encrypted Heartbeat".to_string(),
            Says::ConnectionId => String::new(),
        };
        let title = if head.is_empty() {
            "Record Layer".to_string()
        } else {
            format!("{label} Record Layer: {head}")
        };
        match rec.at {
            Some(_) => t.add(1, at, len, title),
            None => t.text(1, title),
        }
        let opaque = rec.shown_version == tls::TLS13 && rec.content_type == tls::APPLICATION_DATA;
        line(
            t,
            2,
            0,
            1,
            format!(
                "{}: {} ({})",
                if opaque {
                    "Opaque Type"
                } else {
                    "Content Type"
                },
                tls::content_type_name(rec.content_type),
                rec.content_type
            ),
        );
        line(
            t,
            2,
            1,
            2,
            format!(
                "Version: {} (0x{:04x})",
                tls::version_name(rec.version),
                rec.version
            ),
        );
        line(t, 2, 3, 2, format!("Length: {}", rec.length));
        let body = usize::from(rec.length);
        match &rec.says {
            Says::ChangeCipherSpec => line(t, 2, 5, body, "Change Cipher Spec Message".into()),
            Says::Alert { level, description } => {
                line(t, 2, 5, body, "Alert Message".into());
                line(
                    t,
                    3,
                    5,
                    1,
                    format!("Level: {} ({level})", tls::alert_level_name(*level)),
                );
                line(
                    t,
                    3,
                    6,
                    1,
                    format!(
                        "Description: {} ({description})",
                        tls::alert_description_name(*description)
                    ),
                );
            }
            Says::EncryptedAlert => line(t, 2, 5, body, "Alert Message: Encrypted Alert".into()),
            Says::Handshake(m) => {
                for msg in m {
                    let (ty, m_at, mlen) = (&msg.kind, &msg.at, &msg.len);
                    let name = tls::handshake_name(*ty).unwrap_or("Unknown");
                    let text = format!("Handshake Protocol: {name}");
                    match m_at {
                        Some(a) => {
                            let n = usize::try_from(*mlen).unwrap_or(0).saturating_add(4);
                            let n = n.min(tls.payload.len().saturating_sub(*a));
                            t.add(2, base + a, n, text);
                            t.add(
                                3,
                                base + a,
                                1,
                                format_args!("Handshake Type: {name} ({ty})"),
                            );
                            t.add(3, base + a + 1, 3, format_args!("Length: {mlen}"));
                        }
                        None => {
                            t.text(2, text);
                            t.text(3, format_args!("Handshake Type: {name} ({ty})"));
                        }
                    }
                }
            }
            Says::EncryptedHandshake => line(
                t,
                2,
                5,
                body,
                "Handshake Protocol: Encrypted Handshake Message".into(),
            ),
            Says::ApplicationData => {
                // Its bytes, when this segment has them all.
                if let Some(data) = rec.body {
                    let mut text = String::from("Encrypted Application Data: ");
                    for b in data.iter().take(36) {
                        let _ = write!(text, "{b:02x}");
                    }
                    if data.len() > 36 {
                        text.push('…');
                    }
                    line(t, 2, 5, body, text);
                }
                if let Some(a) = app {
                    t.text(2, format_args!("[Application Data Protocol: {a}]"));
                }
            }
            Says::Heartbeat { .. } | Says::EncryptedHeartbeat | Says::ConnectionId => {}
            Says::ContinuationData | Says::IgnoredUnknown => {}
        }
        // tshark reads what follows a record completed here from earlier
        // segments as a TLS layer of its own.
        let rest = tls.payload.len().saturating_sub(rec.span.1);
        if rec.at.is_none() && rec.is_record() && rest > 0 {
            t.add(0, base + rec.span.1, rest, "Transport Layer Security");
        }
    }
}

/// An NBNS message: its header, then each section's records with their
/// NetBIOS names (`INDEL1RES01<00>: type NB, class IN`) and, for answers,
/// what they say.
fn nbns_tree(t: &mut Tree<'_>, u: &crate::dissect::UdpPayload<'_>) {
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
fn dhcp_tree(t: &mut Tree<'_>, u: &crate::dissect::UdpPayload<'_>) {
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

/// An SSDP message: its first line with what it says, then the header
/// lines up to the blank one, each with its line end shown as tshark
/// shows it.
fn ssdp_tree(t: &mut Tree<'_>, u: &crate::dissect::UdpPayload<'_>) {
    use crate::wire::http::{StartLine, is_notification};
    let base = u.offset;
    t.add(0, base, u.bytes.len(), "Simple Service Discovery Protocol");
    let mut at = 0usize;
    let mut first = true;
    while at < u.bytes.len() {
        let rest = u.bytes.get(at..).unwrap_or_default();
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
        t.add(1, base + at, end + 1, text);
        if first {
            first = false;
            match StartLine::parse(u.bytes) {
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
}

/// The LLC header of a spanning tree BPDU at `at` and the BPDU, as
/// tshark's tree has them.
fn stp_tree(t: &mut Tree<'_>, at: usize, bpdu: Option<&crate::wire::stp::Bpdu<'_>>) {
    let llc = at - crate::wire::stp::LLC_LEN;
    t.add(0, llc, 3, "Logical-Link Control");
    t.add(1, llc, 1, "DSAP: Spanning Tree BPDU (0x42)");
    t.add(1, llc + 1, 1, "SSAP: Spanning Tree BPDU (0x42)");
    t.add(1, llc + 2, 1, "Control field: U, func=UI (0x03)");
    let Some(b) = bpdu else {
        t.text(0, "Spanning Tree Protocol");
        t.text(1, "[Malformed Packet: the BPDU is cut short]");
        return;
    };
    let len = if b.is_tcn() { 4 } else { 35 };
    t.add(0, at, len, "Spanning Tree Protocol");
    t.add(
        1,
        at,
        2,
        format_args!(
            "Protocol Identifier: {} (0x{:04x})",
            if b.protocol() == 0 {
                "Spanning Tree Protocol"
            } else {
                "Unknown"
            },
            b.protocol()
        ),
    );
    let version = match b.version() {
        0 => "Spanning Tree",
        2 => "Rapid Spanning Tree",
        3 => "Multiple Spanning Tree",
        _ => "Unknown",
    };
    t.add(
        1,
        at + 2,
        1,
        format_args!("Protocol Version Identifier: {version} ({})", b.version()),
    );
    t.add(
        1,
        at + 3,
        1,
        format_args!("BPDU Type: {} (0x{:02x})", b.kind_name(), b.kind()),
    );
    if let Some(flags) = b.flags() {
        t.add(1, at + 4, 1, format_args!("BPDU flags: 0x{flags:02x}"));
        t.text(
            2,
            format_args!(
                "Topology Change Acknowledgment: {}",
                if flags & 0x80 != 0 { "Yes" } else { "No" }
            ),
        );
        t.text(
            2,
            format_args!(
                "Topology Change: {}",
                if flags & 1 != 0 { "Yes" } else { "No" }
            ),
        );
    }
    let id = |t: &mut Tree<'_>, off: usize, what: &str, id: crate::wire::stp::BridgeId| {
        t.add(
            1,
            at + off,
            8,
            format_args!(
                "{what} Identifier: {} / {} / {}",
                id.priority,
                id.ext,
                MacText(&id.mac)
            ),
        );
    };
    if let Some(r) = b.root() {
        id(t, 5, "Root", r);
    }
    if let Some(c) = b.root_cost() {
        t.add(1, at + 13, 4, format_args!("Root Path Cost: {c}"));
    }
    if let Some(r) = b.bridge() {
        id(t, 17, "Bridge", r);
    }
    if let Some(port) = b.port() {
        t.add(1, at + 25, 2, format_args!("Port identifier: 0x{port:04x}"));
    }
    if let Some(timers) = b.timers() {
        let names = ["Message Age", "Max Age", "Hello Time", "Forward Delay"];
        for (i, (name, v)) in names.iter().zip(timers).enumerate() {
            t.add(
                1,
                at + 27 + 2 * i,
                2,
                format_args!("{name}: {}", f64::from(v) / 256.0),
            );
        }
    }
}

/// The big-endian 16-bit word at `at` in the frame, if captured.
fn be16(p: &Packet<'_>, at: usize) -> Option<u16> {
    let b = p.data.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([*b.first()?, *b.get(1)?]))
}

fn be32(p: &Packet<'_>, at: usize) -> Option<u32> {
    let b = p.data.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes(b.try_into().ok()?))
}

/// An IPv6 extension header and, for Hop-by-Hop and Destination Options,
/// its options.
fn ip6_extension(t: &mut Tree, p: &Packet<'_>, e: &Ip6Ext) {
    let at = usize::from(e.offset);
    let len = usize::from(e.len);
    t.add(1, at, len, names::ip_protocol(e.header));
    t.add(
        2,
        at,
        1,
        format_args!("Next Header: {} ({})", names::ip_protocol(e.next), e.next),
    );
    if let Some(&l) = p.data.get(at + 1) {
        t.add(2, at + 1, 1, format_args!("Length: {l} ({len} bytes)"));
    }
    if !matches!(e.header, 0 | 60) {
        return;
    }
    // Type-length-value options after the two first bytes.
    let end = at + len;
    let mut o = at + 2;
    while o < end {
        let Some(&kind) = p.data.get(o) else { break };
        if kind == 0 {
            t.add(2, o, 1, "Pad1");
            o += 1;
            continue;
        }
        let Some(&olen) = p.data.get(o + 1) else {
            break;
        };
        let olen = usize::from(olen);
        let mut text = format!("{} (0x{kind:02x}), length {olen}", names::ip6_option(kind));
        if kind == 5
            && olen == 2
            && let Some(v) = be16(p, o + 2)
        {
            let _ = write!(
                text,
                ": {}",
                if v == 0 {
                    "MLD (0)".to_string()
                } else {
                    v.to_string()
                }
            );
        }
        t.add(2, o, 2 + olen, text);
        o += 2 + olen;
    }
}

fn yes(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

/// The ERF record header, as Wireshark shows it.
fn erf_node(t: &mut Tree, e: &crate::wire::ErfRepr, frame_at: usize) {
    t.add(0, 0, frame_at, "Extensible Record Format");
    t.add(1, 0, 8, format_args!("Timestamp: 0x{:016x}", e.ts));
    t.add(
        1,
        8,
        1,
        format_args!(
            "Record type: 0x{:02x} (Type {}: {})",
            e.kind | if e.has_ext { 0x80 } else { 0 },
            e.kind,
            e.type_name()
        ),
    );
    t.add(
        2,
        8,
        1,
        format_args!("Extension header present: {}", u8::from(e.has_ext)),
    );
    t.add(
        1,
        9,
        1,
        format_args!("Flags: 0x{:02x} (Capture Interface: {})", e.flags, e.port()),
    );
    t.add(
        2,
        9,
        1,
        format_args!("Varying record length: {}", (e.flags >> 2) & 1),
    );
    t.add(
        2,
        9,
        1,
        format_args!("Truncated: {}", u8::from(e.truncated())),
    );
    t.add(
        2,
        9,
        1,
        format_args!("RX error: {}", u8::from(e.rx_error())),
    );
    t.add(
        2,
        9,
        1,
        format_args!("DS error: {}", u8::from(e.ds_error())),
    );
    t.add(1, 10, 2, format_args!("Record length: {}", e.rlen));
    t.add(
        1,
        12,
        2,
        if e.counts_losses() {
            format!("Loss counter: {}", e.lctr)
        } else {
            format!("Color: {}", e.lctr)
        },
    );
    t.add(1, 14, 2, format_args!("Wire length: {}", e.wlen));
}

/// The Local Route Header of a native InfiniBand packet.
fn lrh_node(t: &mut Tree, l: &crate::wire::LrhRepr, at: usize) {
    t.add(
        0,
        at,
        crate::wire::lrh::LEN,
        format_args!(
            "InfiniBand Local Route Header, SLID: {}, DLID: {}",
            l.slid, l.dlid
        ),
    );
    t.add(1, at, 1, format_args!("Virtual Lane: {}", l.vl));
    t.add(1, at, 1, format_args!("Link Version: {}", l.lver));
    t.add(1, at + 1, 1, format_args!("Service Level: {}", l.sl));
    t.add(1, at + 1, 1, format_args!("Reserved (2 bits): {}", l.resv2));
    t.add(
        1,
        at + 1,
        1,
        format_args!("Link Next Header: {} ({})", l.lnh.bits(), l.lnh.name()),
    );
    t.add(
        1,
        at + 2,
        2,
        format_args!("Destination Local ID: {}", l.dlid),
    );
    t.add(1, at + 4, 1, format_args!("Reserved (5 bits): {}", l.resv5));
    t.add(
        1,
        at + 4,
        2,
        format_args!(
            "Packet Length: {} ({} bytes, LRH through ICRC)",
            l.pkt_len,
            l.packet_bytes()
        ),
    );
    t.add(1, at + 6, 2, format_args!("Source Local ID: {}", l.slid));
}

/// The VCRC trailer and its verdict, at `level`.
fn vcrc_line(t: &mut Tree, p: &Packet<'_>, level: u8) {
    let Some(v) = &p.vcrc else { return };
    let verdict = match (v.valid, v.expected) {
        (Some(true), _) => "[correct]".to_string(),
        (Some(false), Some(e)) => format!("[incorrect, should be 0x{e:04x}]"),
        (None, Some(_)) | (None, None) if v.value.is_some() => "[not checked]".to_string(),
        _ => "[not checked: frame truncated]".to_string(),
    };
    match (v.value, p.offsets.vcrc) {
        (Some(x), Some(at)) => t.add(
            level,
            usize::from(at),
            2,
            format_args!("Variant CRC: 0x{x:04x} {verdict}"),
        ),
        _ => t.text(level, format_args!("Variant CRC: not captured {verdict}")),
    }
}

pub fn header_tree(p: &Packet<'_>, link_bps: u64, tcp: Option<&TcpSeen>) -> Vec<TreeNode> {
    let mut t = Tree::nodes();
    header_nodes(&mut t, p, link_bps, tcp);
    t.into_nodes()
}

/// [`header_tree`] written as `packets -V` prints it (four spaces a
/// level, a line a node), straight to `out`.
pub fn write_header_tree(p: &Packet<'_>, link_bps: u64, tcp: Option<&TcpSeen>, out: &mut Vec<u8>) {
    header_nodes(&mut Tree::lines(out), p, link_bps, tcp);
}

/// A TCP segment's header, as tshark's tree has it; the numbers relative
/// when the frame loop followed the conversation (`tcp`).
fn tcp_tree(t: &mut Tree<'_>, p: &Packet<'_>, at: usize, seg: &Tcp<'_>, tcp: Option<&TcpSeen>) {
    use crate::wire::tcp::{ACK, SYN};
    let len = p.tcp_payload_len().unwrap_or(0);
    let seq = tcp.map_or(seg.seq(), |c| c.seq(seg));
    let acks = seg.has(ACK);
    let ack = match tcp {
        Some(c) if acks => c.acked(seg.ack()),
        _ => seg.ack(),
    };
    let hlen = seg.header_len();
    let mut head = format!(
        "Transmission Control Protocol, Src Port: {}, Dst Port: {}, Seq: {seq}",
        seg.src_port(),
        seg.dst_port()
    );
    if acks {
        let _ = write!(head, ", Ack: {ack}");
    }
    let _ = write!(head, ", Len: {len}");
    t.add(0, at, hlen, head);
    t.add(1, at, 2, format_args!("Source Port: {}", seg.src_port()));
    t.add(
        1,
        at + 2,
        2,
        format_args!("Destination Port: {}", seg.dst_port()),
    );
    let relative = if tcp.is_some() {
        "    (relative sequence number)"
    } else {
        ""
    };
    if let Some(c) = tcp {
        t.text(1, format_args!("[Stream index: {}]", c.stream));
    }
    t.text(1, format_args!("[TCP Segment Len: {len}]"));
    t.add(
        1,
        at + 4,
        4,
        format_args!("Sequence Number: {seq}{relative}"),
    );
    t.add(
        1,
        at + 4,
        4,
        format_args!("Sequence Number (raw): {}", seg.seq()),
    );
    let next = seg.next_seq(seq, len);
    t.text(1, format_args!("[Next Sequence Number: {next}{relative}]"));
    let ack_note = if tcp.is_some() && acks {
        "    (relative ack number)"
    } else {
        ""
    };
    t.add(
        1,
        at + 8,
        4,
        format_args!("Acknowledgment Number: {ack}{ack_note}"),
    );
    t.add(
        1,
        at + 8,
        4,
        format_args!("Acknowledgment number (raw): {}", seg.ack()),
    );
    let words = hlen / 4;
    t.add(
        1,
        at + 12,
        1,
        format_args!(
            "{}{}{}{} .... = Header Length: {hlen} bytes ({words})",
            words >> 3 & 1,
            words >> 2 & 1,
            words >> 1 & 1,
            words & 1
        ),
    );
    let flags = seg.flags();
    t.add(
        1,
        at + 12,
        2,
        format_args!(
            "Flags: 0x{flags:03x} ({})",
            crate::wire::tcp::flag_names(flags)
        ),
    );
    for (mask, title) in TCP_FLAGS {
        let set = if flags & mask != 0 { "Set" } else { "Not set" };
        t.add(
            2,
            at + 12,
            2,
            format_args!("{} = {title}: {set}", bit_pattern(flags, mask, 12)),
        );
    }
    let window = seg.window();
    t.add(1, at + 14, 2, format_args!("Window: {window}"));
    if let Some(c) = tcp {
        t.text(
            1,
            format_args!("[Calculated window size: {}]", c.window(seg)),
        );
        if !seg.has(SYN) {
            let f = c.scale.factor();
            let note = match f {
                -1 => " (unknown)",
                -2 => " (no window scaling used)",
                _ => "",
            };
            t.text(1, format_args!("[Window size scaling factor: {f}{note}]"));
        }
    }
    t.add(
        1,
        at + 16,
        2,
        format_args!("Checksum: 0x{:04x} [unverified]", seg.checksum()),
    );
    t.add(
        1,
        at + 18,
        2,
        format_args!("Urgent Pointer: {}", seg.urgent()),
    );
    let options = seg.option_bytes();
    if !options.is_empty() {
        let mut line = format!("Options: ({} bytes)", options.len());
        for o in seg.options() {
            line.push_str(", ");
            line.push_str(match o {
                TcpOption::End => "End of Option List (EOL)",
                TcpOption::Nop => "No-Operation (NOP)",
                TcpOption::Mss(_) => "Maximum segment size",
                TcpOption::WindowScale(_) => "Window scale",
                TcpOption::SackPermitted => "SACK permitted",
                TcpOption::Sack(_) => "SACK",
                TcpOption::Timestamps { .. } => "Timestamps",
                TcpOption::Other { .. } | TcpOption::Malformed { .. } => "Unknown",
            });
        }
        t.add(1, at + 20, options.len(), line);
        let mut pos = at + 20;
        for o in seg.options() {
            pos = tcp_option(t, pos, &o, tcp);
        }
    }
    if let Some(c) = tcp {
        t.text(1, "[Timestamps]");
        t.text(
            2,
            format_args!(
                "[Time since first frame in this TCP stream: {} seconds]",
                RelSecs(c.since_first_ns)
            ),
        );
        t.text(
            2,
            format_args!(
                "[Time since previous frame in this TCP stream: {} seconds]",
                RelSecs(c.since_prev_ns)
            ),
        );
    }
    if let Some(c) = tcp.filter(|c| c.measured.shown) {
        let m = &c.measured;
        t.text(1, "[SEQ/ACK analysis]");
        if let Some((frame, rtt)) = m.acks {
            t.text(
                2,
                format_args!("[This is an ACK to the segment in frame: {frame}]"),
            );
            if rtt != 0 {
                t.text(
                    2,
                    format_args!("[The RTT to ACK the segment was: {} seconds]", RelSecs(rtt)),
                );
            }
        }
        if let Some(ns) = c.handshake_ns.filter(|&ns| ns != 0) {
            let ns = i64::try_from(ns).unwrap_or(i64::MAX);
            t.text(2, format_args!("[iRTT: {} seconds]", RelSecs(ns)));
        }
        if let Some((bytes, pushed)) = m.in_flight {
            t.text(2, format_args!("[Bytes in flight: {bytes}]"));
            t.text(
                2,
                format_args!("[Bytes sent since last PSH flag: {pushed}]"),
            );
        }
    }
    if let Some(c) = tcp.filter(|c| c.notes.has(Notes::ANY)) {
        t.text(2, "[TCP Analysis Flags]");
        for f in NOTE_FIELDS.iter().filter(|f| c.notes.has(f.notes)) {
            t.text(3, format_args!("[{}]", f.title));
            if let Some((rto, frame)) = c.measured.rto
                && f.name == "tcp.analysis.retransmission"
            {
                t.text(
                    3,
                    format_args!("[The RTO for this segment was: {} seconds]", RelSecs(rto)),
                );
                t.text(3, format_args!("[RTO based on delta from frame: {frame}]"));
            }
        }
        if let Some((frame, count)) = c.dup_ack {
            t.text(2, format_args!("[Duplicate ACK #: {count}]"));
            t.text(2, format_args!("[Duplicate to the ACK in frame: {frame}]"));
        }
    }
    if len > 0 {
        t.text(
            1,
            format_args!(
                "TCP payload ({len} byte{})",
                if len == 1 { "" } else { "s" }
            ),
        );
    }
}

/// Nanoseconds as a relative time in seconds, as Wireshark writes one:
/// `0.000072128`, `-0.000037788`.
struct RelSecs(i64);

impl std::fmt::Display for RelSecs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
    }
}

/// The flags' bit lines, highest first, titled as Wireshark's.
const TCP_FLAGS: [(u16, &str); 10] = [
    (crate::wire::tcp::RESERVED, "Reserved"),
    (crate::wire::tcp::NS, "Accurate ECN"),
    (crate::wire::tcp::CWR, "Congestion Window Reduced"),
    (crate::wire::tcp::ECE, "ECN-Echo"),
    (crate::wire::tcp::URG, "Urgent"),
    (crate::wire::tcp::ACK, "Acknowledgment"),
    (crate::wire::tcp::PSH, "Push"),
    (crate::wire::tcp::RST, "Reset"),
    (crate::wire::tcp::SYN, "Syn"),
    (crate::wire::tcp::FIN, "Fin"),
];

/// `000. .... ....`: the bits of `value` under `mask` of a `bits`-wide
/// field, dots elsewhere, a space every four.
fn bit_pattern(value: u16, mask: u16, bits: u32) -> String {
    let mut out = String::new();
    for i in (0..bits).rev() {
        let bit = 1u16 << i;
        out.push(match (mask & bit != 0, value & bit != 0) {
            (false, _) => '.',
            (true, true) => '1',
            (true, false) => '0',
        });
        if i % 4 == 0 && i > 0 {
            out.push(' ');
        }
    }
    out
}

/// One TCP option's lines; returns where the next one starts.
fn tcp_option(t: &mut Tree<'_>, at: usize, o: &TcpOption<'_>, tcp: Option<&TcpSeen>) -> usize {
    let len = match o {
        TcpOption::End | TcpOption::Nop => 1,
        TcpOption::Mss(_) => 4,
        TcpOption::WindowScale(_) => 3,
        TcpOption::SackPermitted => 2,
        TcpOption::Sack(d) => 2 + d.len(),
        TcpOption::Timestamps { .. } => 10,
        TcpOption::Other { data, .. } => 2 + data.len(),
        TcpOption::Malformed { .. } => 1,
    };
    match *o {
        TcpOption::End => t.add(2, at, 1, "TCP Option - End of Option List (EOL)"),
        TcpOption::Nop => t.add(2, at, 1, "TCP Option - No-Operation (NOP)"),
        TcpOption::Mss(v) => {
            t.add(
                2,
                at,
                len,
                format_args!("TCP Option - Maximum segment size: {v} bytes"),
            );
            t.add(3, at + 2, 2, format_args!("MSS Value: {v}"));
        }
        TcpOption::WindowScale(shift) => {
            let m = 1u32 << shift.min(crate::wire::tcp::MAX_WINDOW_SHIFT);
            t.add(
                2,
                at,
                len,
                format_args!("TCP Option - Window scale: {shift} (multiply by {m})"),
            );
            t.add(3, at + 2, 1, format_args!("Shift count: {shift}"));
            t.text(3, format_args!("[Multiplier: {m}]"));
        }
        TcpOption::SackPermitted => t.add(2, at, len, "TCP Option - SACK permitted"),
        TcpOption::Sack(blocks) => {
            t.add(2, at, len, "TCP Option - SACK");
            for (i, (l, r)) in crate::wire::tcp::sack_blocks(blocks).enumerate() {
                let (l, r) = tcp.map_or((l, r), |c| (c.acked(l), c.acked(r)));
                let b = at + 2 + 8 * i;
                t.add(3, b, 4, format_args!("TCP SACK Left Edge: {l}"));
                t.add(3, b + 4, 4, format_args!("TCP SACK Right Edge: {r}"));
            }
        }
        TcpOption::Timestamps { value, echo } => {
            t.add(
                2,
                at,
                len,
                format_args!("TCP Option - Timestamps: TSval {value}, TSecr {echo}"),
            );
            t.add(3, at + 2, 4, format_args!("Timestamp value: {value}"));
            t.add(3, at + 6, 4, format_args!("Timestamp echo reply: {echo}"));
        }
        TcpOption::Other { kind, .. } => {
            t.add(2, at, len, format_args!("TCP Option - Unknown ({kind})"));
        }
        TcpOption::Malformed { kind } => {
            t.add(
                2,
                at,
                1,
                format_args!("TCP Option - kind {kind}, with a bad length"),
            );
        }
    }
    at + len
}

fn header_nodes(t: &mut Tree<'_>, p: &Packet<'_>, link_bps: u64, tcp: Option<&TcpSeen>) {
    frame_node(t, p);
    let base = usize::from(p.frame_start);
    if let Some(e) = &p.erf {
        erf_node(t, e, base);
    }
    let l2_end = link_nodes(t, p, base);
    if let Some(ip) = &p.ip {
        let at = usize::from(ip.offset);
        if ip.version == 4 {
            ipv4_node(t, p, ip, at);
        } else {
            ipv6_node(t, p, ip, at);
        }
    }
    if let Some(a) = &p.arp {
        arp_node(t, a, l2_end);
    }
    match p.other_l4 {
        Some(OtherL4::Icmp { kind, code }) => icmp_node(t, kind, code),
        Some(OtherL4::Icmpv6 { kind, code, .. }) => icmpv6_node(t, kind, code),
        Some(OtherL4::Igmp { offset, len }) => igmp_node(t, p, offset, len),
        Some(OtherL4::Tcp { offset, .. }) => tcp_nodes(t, p, offset, tcp),
        _ => {}
    }
    if let Some(u) = &p.udp {
        udp_node(t, p, u);
    }
    if let (Some(l), Some(at)) = (&p.lrh, p.offsets.lrh) {
        lrh_node(t, l, usize::from(at));
    }
    if let Some(g) = &p.grh {
        grh_node(t, p, g);
    }
    if let Some(b) = &p.bth {
        roce_nodes(t, p, b);
    } else if p.lrh.is_some() {
        vcrc_line(t, p, 0);
    }
    if let Some(pause) = &p.pause {
        pause_node(t, pause, l2_end, link_bps);
    }
    if let Some(e) = &p.error {
        t.text(0, format_args!("[Malformed Packet: {e}]"));
    }
}

/// The frame: its lengths and times.
fn frame_node(t: &mut Tree<'_>, p: &Packet<'_>) {
    t.add(
        0,
        0,
        p.caplen as usize,
        format_args!(
            "Frame {}: {} bytes on wire, {} bytes captured",
            p.number, p.len, p.caplen
        ),
    );
    let mut arrival = String::new();
    crate::fields::write_local_time(i128::from(p.ts_ns), &mut arrival);
    t.text(1, format_args!("Arrival Time: {arrival}"));
    t.text(
        1,
        format_args!(
            "Epoch Time: {}.{:09} seconds",
            p.ts_ns / 1_000_000_000,
            p.ts_ns % 1_000_000_000
        ),
    );
}

/// Ethernet (with a BPDU) or Linux cooked capture, then VLAN tags, from
/// `base`: where they end.
fn link_nodes(t: &mut Tree<'_>, p: &Packet<'_>, base: usize) -> usize {
    let mut l2_end = base;
    if let Some(e) = &p.eth {
        // A length where the EtherType would be: IEEE 802.3, with LLC.
        let ieee = e.ethertype < 0x0600;
        t.add(
            0,
            base,
            14,
            format_args!(
                "{}, Src: {}, Dst: {}",
                if ieee {
                    "IEEE 802.3 Ethernet"
                } else {
                    "Ethernet II"
                },
                MacText(&e.src),
                MacText(&e.dst)
            ),
        );
        t.add(1, base, 6, format_args!("Destination: {}", MacText(&e.dst)));
        t.add(1, base + 6, 6, format_args!("Source: {}", MacText(&e.src)));
        if ieee {
            t.add(1, base + 12, 2, format_args!("Length: {}", e.ethertype));
        } else {
            t.add(1, base + 12, 2, format_args!("Type: 0x{:04x}", e.ethertype));
        }
        l2_end = base + 14;
        if let Some((at, bpdu)) = p.stp() {
            stp_tree(t, at, bpdu.as_ref());
        }
    }
    if let Some(s) = &p.sll {
        let n = if p.link == crate::capture::LinkType::LinuxSll {
            16
        } else {
            20
        };
        t.add(0, 0, n, "Linux cooked capture");
        t.text(1, format_args!("Packet type: {}", s.packet_type));
        if let Some(m) = s.src_mac() {
            t.text(1, format_args!("Source: {}", MacText(&m)));
        }
        t.text(1, format_args!("Protocol: 0x{:04x}", s.protocol));
        l2_end = n;
    }
    for tag in p.vlan_tags() {
        t.add(
            0,
            l2_end,
            4,
            format_args!(
                "802.1Q Virtual LAN, PRI: {}, DEI: {}, ID: {}",
                tag.pcp,
                u8::from(tag.dei),
                tag.id
            ),
        );
        t.add(1, l2_end, 1, format_args!("Priority: {}", tag.pcp));
        t.add(1, l2_end, 1, format_args!("DEI: {}", u8::from(tag.dei)));
        t.add(1, l2_end, 2, format_args!("ID: {}", tag.id));
        t.add(
            1,
            l2_end + 2,
            2,
            format_args!("Type: 0x{:04x}", p.ethertype.unwrap_or(0)),
        );
        l2_end += 4;
    }
    l2_end
}

/// An IPv4 header at `at`.
fn ipv4_node(t: &mut Tree<'_>, p: &Packet<'_>, ip: &crate::dissect::Ip, at: usize) {
    let hl = usize::from(ip.header_len);
    t.add(
        0,
        at,
        hl,
        format_args!(
            "Internet Protocol Version 4, Src: {}, Dst: {}",
            ip.src, ip.dst
        ),
    );
    t.add(
        1,
        at + 1,
        1,
        format_args!(
            "Differentiated Services Field: DSCP {} ({}), ECN {} ({})",
            ip.dscp,
            names::dscp(ip.dscp).unwrap_or("-"),
            ip.ecn,
            names::ecn(ip.ecn)
        ),
    );
    t.add(1, at + 2, 2, format_args!("Total Length: {}", ip.total_len));
    if let (Some(id), Some(frag), Some(sum)) = (be16(p, at + 4), be16(p, at + 6), be16(p, at + 10))
    {
        t.add(
            1,
            at + 4,
            2,
            format_args!("Identification: 0x{id:04x} ({id})"),
        );
        let flags = (frag >> 8) as u8 & 0xe0;
        let mut names = Vec::new();
        if flags & 0x40 != 0 {
            names.push("Don't fragment");
        }
        if flags & 0x20 != 0 {
            names.push("More fragments");
        }
        t.add(
            1,
            at + 6,
            1,
            format_args!(
                "Flags: 0x{:02x}{}{}",
                flags,
                if names.is_empty() { "" } else { ", " },
                names.join(", ")
            ),
        );
        t.add(
            1,
            at + 6,
            2,
            format_args!("Fragment Offset: {}", (frag & 0x1fff) * 8),
        );
        t.add(1, at + 8, 1, format_args!("Time to Live: {}", ip.ttl));
        t.add(
            1,
            at + 9,
            1,
            format_args!(
                "Protocol: {} ({})",
                names::ip_protocol(ip.protocol),
                ip.protocol
            ),
        );
        t.add(
            1,
            at + 10,
            2,
            format_args!("Header Checksum: 0x{sum:04x} [validation disabled]"),
        );
    } else {
        t.add(1, at + 8, 1, format_args!("Time to Live: {}", ip.ttl));
        t.add(1, at + 9, 1, format_args!("Protocol: {}", ip.protocol));
    }
    t.add(1, at + 12, 4, format_args!("Source Address: {}", ip.src));
    t.add(
        1,
        at + 16,
        4,
        format_args!("Destination Address: {}", ip.dst),
    );
}

/// An IPv6 header at `at`, and its extension headers.
fn ipv6_node(t: &mut Tree<'_>, p: &Packet<'_>, ip: &crate::dissect::Ip, at: usize) {
    let hl = usize::from(ip.header_len);
    t.add(
        0,
        at,
        hl,
        format_args!(
            "Internet Protocol Version 6, Src: {}, Dst: {}",
            ip.src, ip.dst
        ),
    );
    t.add(
        1,
        at,
        2,
        format_args!(
            "Traffic Class: DSCP {} ({}), ECN {} ({})",
            ip.dscp,
            names::dscp(ip.dscp).unwrap_or("-"),
            ip.ecn,
            names::ecn(ip.ecn)
        ),
    );
    if let Some(w) = be32(p, at) {
        t.add(
            1,
            at + 1,
            3,
            format_args!("Flow Label: 0x{:05x}", w & 0xf_ffff),
        );
    }
    t.add(
        1,
        at + 4,
        2,
        format_args!("Payload Length: {}", ip.total_len.saturating_sub(40)),
    );
    let next = p.data.get(at + 6).copied().unwrap_or(ip.protocol);
    t.add(
        1,
        at + 6,
        1,
        format_args!("Next Header: {} ({next})", names::ip_protocol(next)),
    );
    t.add(1, at + 7, 1, format_args!("Hop Limit: {}", ip.ttl));
    t.add(1, at + 8, 16, format_args!("Source Address: {}", ip.src));
    t.add(
        1,
        at + 24,
        16,
        format_args!("Destination Address: {}", ip.dst),
    );
    for e in p.ip6_exts() {
        ip6_extension(t, p, e);
    }
}

/// An ARP message after the link layer (at `at`).
fn arp_node(t: &mut Tree<'_>, a: &crate::dissect::Arp, at: usize) {
    t.add(
        0,
        at,
        28,
        format_args!(
            "Address Resolution Protocol ({})",
            match a.operation {
                1 => "request",
                2 => "reply",
                _ => "other",
            }
        ),
    );
    t.add(1, at + 6, 2, format_args!("Opcode: {}", a.operation));
    t.add(
        1,
        at + 8,
        6,
        format_args!("Sender MAC address: {}", MacText(&a.sender_mac)),
    );
    t.add(
        1,
        at + 14,
        4,
        format_args!("Sender IP address: {}", a.sender_ip),
    );
    t.add(
        1,
        at + 18,
        6,
        format_args!("Target MAC address: {}", MacText(&a.target_mac)),
    );
    t.add(
        1,
        at + 24,
        4,
        format_args!("Target IP address: {}", a.target_ip),
    );
}

/// ICMP: the type and code.
fn icmp_node(t: &mut Tree<'_>, kind: u8, code: u8) {
    t.text(
        0,
        format_args!(
            "Internet Control Message Protocol: {}",
            names::icmp(kind, code)
        ),
    );
    t.text(1, format_args!("Type: {kind}"));
    t.text(1, format_args!("Code: {code}"));
}

/// ICMPv6: the type and code.
fn icmpv6_node(t: &mut Tree<'_>, kind: u8, code: u8) {
    t.text(
        0,
        format_args!(
            "Internet Control Message Protocol v6: {}",
            names::icmpv6(kind, code)
        ),
    );
    t.text(1, format_args!("Type: {kind}"));
    t.text(1, format_args!("Code: {code}"));
}

/// IGMP at `offset`, `len` bytes.
fn igmp_node(t: &mut Tree<'_>, p: &Packet<'_>, offset: u16, len: u16) {
    if let Some(m) = p.igmp() {
        let at = usize::from(offset);
        let version = m.version().map_or("?".to_string(), |v| v.to_string());
        t.add(
            0,
            at,
            usize::from(len),
            format_args!("Internet Group Management Protocol"),
        );
        // Generated, as tshark brackets it.
        t.text(1, format_args!("[IGMP Version: {version}]"));
        t.add(
            1,
            at,
            1,
            format_args!(
                "Type: {} (0x{:02x})",
                m.kind_name().unwrap_or("Unknown"),
                m.kind()
            ),
        );
        if let Some(tenths) = m.max_resp_time() {
            t.add(
                1,
                at + 1,
                1,
                format_args!(
                    "Max Resp Time: {}.{} sec (0x{:02x})",
                    tenths / 10,
                    tenths % 10,
                    m.max_resp()
                ),
            );
        }
        t.add(
            1,
            at + 2,
            2,
            format_args!("Checksum: 0x{:04x}", m.checksum()),
        );
        if m.kind() == crate::wire::igmp::V3_REPORT {
            t.add(
                1,
                at + 6,
                2,
                format_args!("Num Group Records: {}", m.record_count()),
            );
            for r in m.records() {
                t.text(
                    1,
                    format_args!(
                        "Group Record : {}  {}",
                        r.group,
                        r.kind_name().unwrap_or("")
                    ),
                );
                t.text(
                    2,
                    format_args!(
                        "Record Type: {} ({})",
                        r.kind_name().unwrap_or("Unknown"),
                        r.kind
                    ),
                );
                t.text(2, format_args!("Num Src: {}", r.source_count()));
                t.text(2, format_args!("Multicast Address: {}", r.group));
                for a in r.sources() {
                    t.text(2, format_args!("Source Address: {a}"));
                }
            }
        } else if m.version().is_some() {
            t.add(
                1,
                at + 4,
                4,
                format_args!("Multicast Address: {}", m.group()),
            );
            for a in m.query_sources() {
                t.text(1, format_args!("Source Address: {a}"));
            }
        }
    }
}

/// TCP at `offset`, and what it carries (SSH, TLS).
fn tcp_nodes(t: &mut Tree<'_>, p: &Packet<'_>, offset: u16, tcp: Option<&TcpSeen>) {
    if let Some(seg) = p.tcp() {
        tcp_tree(t, p, usize::from(offset), &seg, tcp);
    }
    if let Some(ssh) = p.ssh() {
        ssh_tree(t, &ssh, tcp);
    }
    if let Some((tls, r)) = crate::output::packets::tls_reading(p, tcp) {
        tls_tree(t, p, &tls, &r);
    }
}

/// UDP, and what it carries (DNS, NBNS, DHCP, SSDP).
fn udp_node(t: &mut Tree<'_>, p: &Packet<'_>, u: &crate::dissect::Udp) {
    let at = usize::from(u.offset);
    t.add(
        0,
        at,
        8,
        format_args!(
            "User Datagram Protocol, Src Port: {}, Dst Port: {}",
            u.sport, u.dport
        ),
    );
    t.add(1, at, 2, format_args!("Source Port: {}", u.sport));
    t.add(1, at + 2, 2, format_args!("Destination Port: {}", u.dport));
    t.add(1, at + 4, 2, format_args!("Length: {}", u.length));
    t.add(1, at + 6, 2, format_args!("Checksum: 0x{:04x}", u.checksum));
    if let Some(d) = p.dns() {
        dns_tree(t, &d);
    } else if let Some(u) = p.udp_app() {
        match u.app {
            crate::dissect::UdpApp::Nbns => nbns_tree(t, &u),
            crate::dissect::UdpApp::Dhcp => dhcp_tree(t, &u),
            crate::dissect::UdpApp::Ssdp => ssdp_tree(t, &u),
            crate::dissect::UdpApp::Dns(_) => {}
        }
    }
}

/// RoCE v1's (or native InfiniBand's) Global Route Header.
fn grh_node(t: &mut Tree<'_>, p: &Packet<'_>, g: &crate::wire::GrhRepr) {
    let at = usize::from(p.offsets.grh.unwrap_or(0));
    t.add(
        0,
        at,
        grh::LEN,
        if p.roce == Some(RoceVersion::Ib) {
            "InfiniBand Global Route Header"
        } else {
            "InfiniBand Global Route Header (RoCE v1)"
        },
    );
    t.add(1, at, 1, format_args!("IP Version: {}", g.ip_ver));
    t.add(1, at, 2, format_args!("Traffic Class: 0x{:02x}", g.tclass));
    t.add(
        1,
        at + 1,
        3,
        format_args!("Flow Label: 0x{:05x}", g.flow_label),
    );
    t.add(1, at + 4, 2, format_args!("Payload Length: {}", g.pay_len));
    t.add(
        1,
        at + 6,
        1,
        format_args!("Next Header: 0x{:02x}", g.nxt_hdr),
    );
    t.add(1, at + 7, 1, format_args!("Hop Limit: {}", g.hop_lmt));
    t.add(1, at + 8, 16, format_args!("Source GID: {}", g.sgid_addr()));
    t.add(
        1,
        at + 24,
        16,
        format_args!("Destination GID: {}", g.dgid_addr()),
    );
}

/// The InfiniBand transport: the BTH, the extended headers, the payload,
/// the pad, the ICRC and the VCRC.
fn roce_nodes(t: &mut Tree<'_>, p: &Packet<'_>, b: &crate::wire::BthRepr) {
    let title = match p.roce {
        Some(RoceVersion::V1) => "InfiniBand (RoCE v1)",
        Some(RoceVersion::Ib) => "InfiniBand",
        _ => "InfiniBand (RoCE v2)",
    };
    t.text(0, title);
    bth_node(t, p, b);
    extended_header_nodes(t, p);
    let o = &p.offsets;
    if let (Some(n), Some(x)) = (p.payload_len, o.payload) {
        let (x, n) = (usize::from(x), n as usize);
        if let Some(cm) = &p.cm {
            cm_payload_node(t, cm, x, n);
        } else if let Some(m) = &p.mad {
            mad_payload_node(t, m, x, n);
        } else {
            t.add(1, x, n, format_args!("Payload: {n} bytes"));
        }
    }
    if let Some(x) = o.pad {
        t.add(
            1,
            usize::from(x),
            usize::from(b.padcnt),
            format_args!("Pad: {} bytes", b.padcnt),
        );
    }
    if let (Some(i), Some(x)) = (&p.icrc, o.icrc) {
        let verdict = match (i.valid, i.expected) {
            (Some(true), _) => "[correct]".to_string(),
            (Some(false), Some(e)) => format!("[incorrect, should be 0x{e:08x}]"),
            _ => "[not checked: frame truncated]".to_string(),
        };
        match i.value {
            Some(v) => t.add(
                1,
                usize::from(x),
                4,
                format_args!("Invariant CRC: 0x{v:08x} {verdict}"),
            ),
            None => t.text(1, format_args!("Invariant CRC: not captured {verdict}")),
        }
    }
    vcrc_line(t, p, 1);
}

/// The Base Transport Header.
fn bth_node(t: &mut Tree<'_>, p: &Packet<'_>, b: &crate::wire::BthRepr) {
    let at = usize::from(p.offsets.bth);
    t.add(1, at, bth::LEN, "Base Transport Header");
    t.add(
        2,
        at,
        1,
        format_args!("Opcode: {} ({})", b.opcode.name(), b.opcode.0),
    );
    t.add(2, at + 1, 1, format_args!("Solicited Event: {}", yes(b.se)));
    t.add(2, at + 1, 1, format_args!("MigReq: {}", yes(b.m)));
    t.add(2, at + 1, 1, format_args!("Pad Count: {}", b.padcnt));
    t.add(2, at + 1, 1, format_args!("Header Version: {}", b.tver));
    t.add(
        2,
        at + 2,
        2,
        format_args!("Partition Key: 0x{:04x}", b.p_key),
    );
    t.add(2, at + 4, 1, format_args!("FECN: {}", yes(b.fecn)));
    t.add(2, at + 4, 1, format_args!("BECN: {}", yes(b.becn)));
    if let Some(&r) = p.data.get(at + 4) {
        t.add(
            2,
            at + 4,
            1,
            format_args!("Reserved (6 bits): {}", r & 0x3f),
        );
    }
    t.add(
        2,
        at + 5,
        3,
        format_args!("Destination Queue Pair: 0x{:06x}", b.dest_qp),
    );
    t.add(
        2,
        at + 8,
        1,
        format_args!("Acknowledge Request: {}", yes(b.ack_req)),
    );
    if let Some(&r) = p.data.get(at + 8) {
        t.add(
            2,
            at + 8,
            1,
            format_args!("Reserved (7 bits): {}", r & 0x7f),
        );
    }
    t.add(
        2,
        at + 9,
        3,
        format_args!("Packet Sequence Number: {}", b.psn),
    );
}

/// The extended transport headers the opcode has (RDETH, DETH, XRCETH,
/// RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH) and a CNP's
/// reserved bytes.
fn extended_header_nodes(t: &mut Tree<'_>, p: &Packet<'_>) {
    let o = &p.offsets;
    if let (Some(r), Some(x)) = (&p.rdeth, o.rdeth) {
        let x = usize::from(x);
        t.add(1, x, 4, "Reliable Datagram Extended Transport Header");
        t.add(
            2,
            x + 1,
            3,
            format_args!("EE Context: 0x{:06x}", r.ee_context),
        );
    }
    if let (Some(d), Some(x)) = (&p.deth, o.deth) {
        let x = usize::from(x);
        t.add(1, x, 8, "Datagram Extended Transport Header");
        t.add(2, x, 4, format_args!("Queue Key: 0x{:08x}", d.q_key));
        t.add(
            2,
            x + 5,
            3,
            format_args!("Source Queue Pair: 0x{:06x}", d.src_qp),
        );
    }
    if let (Some(r), Some(x)) = (&p.xrceth, o.xrceth) {
        let x = usize::from(x);
        t.add(1, x, 4, "XRC Extended Transport Header");
        t.add(2, x + 1, 3, format_args!("XRC SRQ: 0x{:06x}", r.xrc_srq));
    }
    if let (Some(r), Some(x)) = (&p.reth, o.reth) {
        let x = usize::from(x);
        t.add(1, x, 16, "RDMA Extended Transport Header");
        t.add(2, x, 8, format_args!("Virtual Address: 0x{:016x}", r.va));
        t.add(2, x + 8, 4, format_args!("Remote Key: 0x{:08x}", r.r_key));
        t.add(2, x + 12, 4, format_args!("DMA Length: {}", r.dma_len));
    }
    if let (Some(a), Some(x)) = (&p.atomiceth, o.atomiceth) {
        let x = usize::from(x);
        t.add(1, x, 28, "Atomic Extended Transport Header");
        t.add(2, x, 8, format_args!("Virtual Address: 0x{:016x}", a.va));
        t.add(2, x + 8, 4, format_args!("Remote Key: 0x{:08x}", a.r_key));
        t.add(
            2,
            x + 12,
            8,
            format_args!("Swap (Or Add) Data: 0x{:016x}", a.swap_add),
        );
        t.add(
            2,
            x + 20,
            8,
            format_args!("Compare Data: 0x{:016x}", a.compare),
        );
    }
    if let (Some(a), Some(x)) = (&p.aeth, o.aeth) {
        let x = usize::from(x);
        t.add(1, x, 4, "ACK Extended Transport Header");
        let meaning = match a.kind() {
            AckKind::Ack => format!("ACK, credits {}", a.value()),
            AckKind::RnrNak => format!(
                "RNR NAK, timer {} ({})",
                a.value(),
                human_ns((rnr_timer_us(a.value()) * 1000.0) as u64)
            ),
            AckKind::Nak => format!("NAK, {} ({})", nak::name(a.value()), a.value()),
            AckKind::Reserved => "reserved".into(),
        };
        t.add(
            2,
            x,
            1,
            format_args!("Syndrome: 0x{:02x} ({meaning})", a.syndrome),
        );
        t.add(
            2,
            x + 1,
            3,
            format_args!("Message Sequence Number: {}", a.msn),
        );
    }
    if let (Some(a), Some(x)) = (&p.atomicacketh, o.atomicacketh) {
        t.add(1, usize::from(x), 8, "Atomic ACK Extended Transport Header");
        t.add(
            2,
            usize::from(x),
            8,
            format_args!("Original Remote Data: 0x{:016x}", a.orig_rem_dt),
        );
    }
    if let (Some(i), Some(x)) = (&p.immdt, o.immdt) {
        t.add(
            1,
            usize::from(x),
            4,
            format_args!("Immediate Data: 0x{:08x}", i.value),
        );
    }
    if let (Some(i), Some(x)) = (&p.ieth, o.ieth) {
        t.add(
            1,
            usize::from(x),
            4,
            format_args!(
                "Invalidate Extended Transport Header: R_Key 0x{:08x}",
                i.r_key
            ),
        );
    }
    if let Some(x) = o.cnp_reserved {
        t.add(1, usize::from(x), 16, "CNP Reserved (16 bytes)");
    }
}

/// A CM MAD at `x`, `n` bytes: the message and its fields.
fn cm_payload_node(t: &mut Tree<'_>, cm: &CmMessage, x: usize, n: usize) {
    t.add(
        1,
        x,
        n,
        format_args!("MAD: Communication Management, {}", cm.name()),
    );
    match cm {
        CmMessage::Req {
            local_comm_id,
            service_id,
            local_qpn,
            starting_psn,
            mtu,
            ..
        } => {
            t.text(
                2,
                format_args!("Local Communication ID: 0x{local_comm_id:08x}"),
            );
            t.text(2, format_args!("Service ID: 0x{service_id:016x}"));
            t.add(
                2,
                x + 24 + 32,
                3,
                format_args!("Local QPN: 0x{local_qpn:06x}"),
            );
            t.add(
                2,
                x + 24 + 44,
                3,
                format_args!("Starting PSN: {starting_psn}"),
            );
            t.text(2, format_args!("Path MTU: {}", 128u32 << mtu));
        }
        CmMessage::Rep {
            local_comm_id,
            remote_comm_id,
            local_qpn,
            starting_psn,
        } => {
            t.text(
                2,
                format_args!("Local Communication ID: 0x{local_comm_id:08x}"),
            );
            t.text(
                2,
                format_args!("Remote Communication ID: 0x{remote_comm_id:08x}"),
            );
            t.add(
                2,
                x + 24 + 12,
                3,
                format_args!("Local QPN: 0x{local_qpn:06x}"),
            );
            t.add(
                2,
                x + 24 + 20,
                3,
                format_args!("Starting PSN: {starting_psn}"),
            );
        }
        CmMessage::Rej { reason, .. } => t.text(2, format_args!("Reason: {reason}")),
        CmMessage::Dreq { remote_qpn, .. } => {
            t.text(2, format_args!("Remote QPN: 0x{remote_qpn:06x}"))
        }
        _ => {}
    }
}

/// Any other MAD at `x`, `n` bytes: its common header.
fn mad_payload_node(t: &mut Tree<'_>, m: &crate::wire::mad::MadHeader, x: usize, n: usize) {
    t.add(
        1,
        x,
        n,
        format_args!("MAD: {}", crate::wire::mad::describe(m)),
    );
    t.add(2, x, 1, format_args!("Base Version: {}", m.base_version));
    t.add(
        2,
        x + 1,
        1,
        format_args!("Management Class: 0x{:02x}", m.mgmt_class),
    );
    t.add(
        2,
        x + 2,
        1,
        format_args!("Class Version: {}", m.class_version),
    );
    t.add(
        2,
        x + 3,
        1,
        format_args!(
            "Method: {} (0x{:02x})",
            crate::wire::mad::method_name(m.method),
            m.method
        ),
    );
    t.add(2, x + 4, 2, format_args!("Status: 0x{:04x}", m.status));
    t.add(
        2,
        x + 8,
        8,
        format_args!("Transaction ID: 0x{:016x}", m.transaction_id),
    );
    t.add(
        2,
        x + 16,
        2,
        format_args!("Attribute ID: 0x{:04x}", m.attribute_id),
    );
    t.add(
        2,
        x + 20,
        4,
        format_args!("Attribute Modifier: 0x{:08x}", m.attribute_modifier),
    );
}

/// A PAUSE or PFC frame after the link layer (at `at`), its quanta in
/// time at `link_bps`.
fn pause_node(t: &mut Tree<'_>, pause: &PauseRepr, at: usize, link_bps: u64) {
    match pause {
        PauseRepr::Pfc(pfc) => {
            t.add(
                0,
                at,
                20,
                "MAC Control: Priority-based Flow Control (802.1Qbb)",
            );
            t.add(1, at, 2, "Opcode: Class Based Flow Control (0x0101)");
            t.add(
                1,
                at + 2,
                2,
                format_args!("Class Enable Vector: 0x{:04x}", pfc.class_enable),
            );
            for (i, q) in pfc.times.iter().enumerate() {
                let on = if pfc.enabled(i as u8) {
                    ""
                } else {
                    " (disabled)"
                };
                t.add(
                    1,
                    at + 4 + 2 * i,
                    2,
                    format_args!(
                        "C{i} Pause Time: {q} quanta ({}){on}",
                        human_ns(quanta_to_ns(*q, link_bps))
                    ),
                );
            }
        }
        PauseRepr::Pause { time } => {
            t.add(0, at, 4, "MAC Control: Pause (802.3x)");
            t.add(1, at, 2, "Opcode: Pause (0x0001)");
            t.add(
                1,
                at + 2,
                2,
                format_args!(
                    "Pause Time: {time} quanta ({})",
                    human_ns(quanta_to_ns(*time, link_bps))
                ),
            );
        }
        PauseRepr::Other { opcode } => {
            t.add(0, at, 2, format_args!("MAC Control: opcode 0x{opcode:04x}"));
        }
    }
}

/// Renders kept nodes as indented text, as [`write_header_tree`] writes
/// them (the fuzz target and tests hold the two to the same lines).
pub fn render_tree(nodes: &[TreeNode]) -> String {
    let mut s = String::new();
    for n in nodes {
        for _ in 0..n.depth {
            s.push_str("    ");
        }
        s.push_str(&n.text);
        s.push('\n');
    }
    s
}

/// tshark-style hex dump: offset, 16 bytes in hex, ASCII.
pub fn hex_dump(data: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hex = |s: &mut String, v: usize| {
        s.push(char::from(HEX[v & 0xf]));
    };
    // 16 bytes a line: offset, 16 hex pairs in two groups, the ASCII.
    let mut s = String::with_capacity(data.len().div_ceil(16) * 76);
    for (i, chunk) in data.chunks(16).enumerate() {
        // `{:04x}`: four digits, more when the offset needs them.
        let offset = i * 16;
        let digits = ((usize::BITS - offset.leading_zeros()).div_ceil(4) as usize).max(4);
        for d in (0..digits).rev() {
            hex(&mut s, offset >> (4 * d));
        }
        s.push_str("  ");
        for j in 0..16 {
            match chunk.get(j) {
                Some(&b) => {
                    hex(&mut s, usize::from(b >> 4));
                    hex(&mut s, usize::from(b));
                    s.push(' ');
                }
                None => s.push_str("   "),
            }
            if j == 7 {
                s.push(' ');
            }
        }
        s.push_str("  ");
        for &b in chunk {
            s.push(if b.is_ascii_graphic() || b == b' ' {
                char::from(b)
            } else {
                '.'
            });
        }
        s.push('\n');
    }
    s
}

/// The NVMe-oF capsule a frame carries, as the analysis read it (its
/// `role`): `NVM Express` with the command's or the response's fields,
/// titled as Wireshark titles them.
pub fn nvme_tree(p: &Packet<'_>, role: crate::analysis::marks::NvmeRole) -> Vec<TreeNode> {
    let mut t = Tree::nodes();
    nvme_nodes(&mut t, p, role);
    t.into_nodes()
}

/// [`nvme_tree`] written as `packets -V` prints it, straight to `out`.
pub fn write_nvme_tree(p: &Packet<'_>, role: crate::analysis::marks::NvmeRole, out: &mut Vec<u8>) {
    nvme_nodes(&mut Tree::lines(out), p, role);
}

fn nvme_nodes(t: &mut Tree<'_>, p: &Packet<'_>, role: crate::analysis::marks::NvmeRole) {
    use crate::analysis::marks::NvmeRole;
    use crate::wire::nvme::{CqeRepr, QueueKind, SqeRepr, fctype, sct_name};
    let queue =
        |qid: Option<u16>| qid.map_or("queue unknown".to_string(), |q| format!("queue {q}"));
    // The two roles that need no payload (a READ request has none).
    match role {
        NvmeRole::DataRequest { qid, cid, code } => {
            let name = crate::wire::nvme::code_name(code, qid);
            t.text(
                0,
                format_args!(
                    "NVM Express Fabrics RDMA, Data Request ({}): {name}",
                    queue(qid)
                ),
            );
            t.text(1, format_args!("Command Identifier: {cid:#06x}"));
            return;
        }
        NvmeRole::Queue { qid } => {
            t.text(0, format_args!("NVM Express Fabrics RDMA ({})", queue(qid)));
            return;
        }
        _ => {}
    }
    let Some(at) = p.offsets.payload.map(usize::from) else {
        return;
    };
    let n = p.payload_len.unwrap_or(0) as usize;
    let Some(payload) = p.data.get(at..at.saturating_add(n)) else {
        return;
    };
    match role {
        NvmeRole::Command { qid, .. } => {
            let Ok(s) = SqeRepr::parse(payload) else {
                return;
            };
            let q = QueueKind::of_qid(qid.unwrap_or(1));
            t.add(
                0,
                at,
                payload.len(),
                format_args!(
                    "NVM Express Fabrics RDMA, Cmd ({}): {}",
                    queue(qid),
                    s.name(q)
                ),
            );
            if let Some(ft) = s.fctype() {
                t.add(
                    1,
                    at,
                    1,
                    format_args!("Opcode: {:02x} (Fabric Command)", s.opcode),
                );
                t.add(
                    1,
                    at + 2,
                    2,
                    format_args!("Command Identifier: {:#06x}", s.cid),
                );
                t.add(
                    1,
                    at + 4,
                    1,
                    format_args!("Fabric Command Type: {} ({ft:#04x})", fctype::name(ft)),
                );
                if let Some(pr) = s.property() {
                    let set = s.fctype() == Some(crate::wire::nvme::fctype::PROPERTY_SET);
                    t.add(
                        1,
                        at + 40,
                        16,
                        format_args!(
                            "Property {}: Offset {:#010x} ({}), Size {} bytes{}",
                            if set { "Set" } else { "Get" },
                            pr.offset,
                            crate::wire::nvme::property_name(pr.offset),
                            if pr.attrib & 7 == 1 { 8 } else { 4 },
                            if set {
                                format!(", Value {:#x}", pr.value)
                            } else {
                                String::new()
                            }
                        ),
                    );
                }
                if let Some(c) = s.connect() {
                    t.add(
                        1,
                        at + 40,
                        12,
                        format_args!(
                            "Connect: Record Format {}, Queue ID {}, Submission Queue Size {}, Connect Attributes {:#04x}, Keep Alive Timeout {} ms",
                            c.recfmt,
                            c.qid,
                            u32::from(c.sqsize) + 1,
                            c.cattr,
                            c.kato
                        ),
                    );
                    // The Connect data, when the capsule is in this packet.
                    if let Some(d) = payload
                        .get(64..64 + crate::wire::nvme::CONNECT_DATA_LEN)
                        .and_then(|b| crate::wire::nvme::ConnectData::new(b).ok())
                    {
                        let text = |b: &[u8]| {
                            crate::output::text::terminal_safe(&String::from_utf8_lossy(b))
                        };
                        t.add(
                            1,
                            at + 64 + 16,
                            2,
                            format_args!("Controller ID: {:#06x}", d.cntlid()),
                        );
                        t.add(
                            1,
                            at + 64 + 256,
                            256,
                            format_args!("Subsystem NQN: {}", text(d.subnqn())),
                        );
                        t.add(
                            1,
                            at + 64 + 512,
                            256,
                            format_args!("Host NQN: {}", text(d.hostnqn())),
                        );
                    }
                }
            } else {
                t.add(
                    1,
                    at,
                    1,
                    format_args!("Opcode: {:#04x} ({})", s.opcode, s.name(q)),
                );
                t.add(1, at + 2, 2, format_args!("Command ID: {:#06x}", s.cid));
                t.add(1, at + 4, 4, format_args!("Namespace Id: {:#010x}", s.nsid));
                if s.has_lba(q) {
                    t.add(1, at + 40, 8, format_args!("Start LBA: {:#018x}", s.slba()));
                    t.add(
                        1,
                        at + 48,
                        2,
                        format_args!(
                            "Absolute Number of Logical Blocks: {}",
                            u32::from(s.nlb()) + 1
                        ),
                    );
                }
            }
            let g = s.sgl;
            t.add(
                1,
                at + 24,
                16,
                format_args!(
                    "SGL1: {}, Address {:#018x}, Length {}{}",
                    g.type_name(),
                    g.address,
                    g.length,
                    if g.keyed() {
                        format!(", Key {:#010x}", g.key)
                    } else {
                        String::new()
                    }
                ),
            );
        }
        NvmeRole::Response {
            qid,
            latency_ns,
            fabrics,
        } => {
            let Ok(c) = CqeRepr::parse(payload) else {
                return;
            };
            t.add(
                0,
                at,
                payload.len(),
                format_args!(
                    "NVM Express Fabrics RDMA, Cqe ({}): {}",
                    queue(qid),
                    c.status_name()
                ),
            );
            if let Some(ns) = latency_ns {
                t.text(
                    1,
                    format_args!(
                        "Cmd Latency: {} ms{}",
                        crate::fields::double_g15(crate::fields::millis(i128::from(ns))),
                        if fabrics { " (a Fabrics command)" } else { "" }
                    ),
                );
            }
            t.add(
                1,
                at + 8,
                2,
                format_args!("SQ Head Pointer: {:#06x}", c.sqhd),
            );
            t.add(
                1,
                at + 10,
                2,
                format_args!("SQ Identifier: {:#06x}", c.sqid),
            );
            t.add(
                1,
                at + 12,
                2,
                format_args!("Command Identifier: {:#06x}", c.cid),
            );
            t.add(
                1,
                at + 14,
                2,
                format_args!(
                    "Status Field: {:#06x} ({}, {}{})",
                    c.status,
                    c.status_name(),
                    sct_name(c.sct()),
                    if c.dnr() { ", Do Not Retry" } else { "" }
                ),
            );
        }
        NvmeRole::Data {
            qid,
            cid,
            code,
            offset,
        } => {
            let name = crate::wire::nvme::code_name(code, qid);
            t.add(
                0,
                at,
                payload.len(),
                format_args!("NVM Express Fabrics RDMA, Data ({}): {name}", queue(qid)),
            );
            t.text(1, format_args!("Command Identifier: {cid:#06x}"));
            if let Some(o) = offset {
                t.text(1, format_args!("Data Offset: {o}"));
            }
            t.text(1, format_args!("Data Length: {}", payload.len()));
        }
        NvmeRole::DataRequest { .. } | NvmeRole::Queue { .. } => {}
    }
}

#[cfg(test)]
mod hex_dump_tests {
    use proptest::prelude::*;
    use std::fmt::Write as _;

    /// The dump as `core::fmt` writes it.
    fn reference(data: &[u8]) -> String {
        let mut s = String::new();
        for (i, chunk) in data.chunks(16).enumerate() {
            let _ = write!(s, "{:04x}  ", i * 16);
            for j in 0..16 {
                match chunk.get(j) {
                    Some(b) => {
                        let _ = write!(s, "{b:02x} ");
                    }
                    None => s.push_str("   "),
                }
                if j == 7 {
                    s.push(' ');
                }
            }
            s.push_str("  ");
            for b in chunk {
                s.push(if b.is_ascii_graphic() || *b == b' ' {
                    *b as char
                } else {
                    '.'
                });
            }
            s.push('\n');
        }
        s
    }

    proptest! {
        #[test]
        fn as_format_writes_it(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(super::hex_dump(&data), reference(&data));
        }
    }

    #[test]
    fn offsets_past_four_digits() {
        let data = vec![0x41u8; 70_000];
        assert_eq!(super::hex_dump(&data), reference(&data));
    }
}
