//! The Info column of TCP and what it carries: TLS records, HTTP messages,
//! SSH packets, and the segment's own flags, numbers and options.

use std::fmt::Write as _;

use crate::analysis::http::Reading;
use crate::analysis::tcp::TcpSeen;
use crate::dissect::{OtherL4, Packet};
use crate::wire::tcp::{Tcp, TcpOption};

/// A TLS segment's Info column: its records (`Application Data,
/// Application Data`, `Server Hello, Change Cipher Spec, Application
/// Data`), after the TCP analysis's notes as tshark writes them
/// (`[TCP Fast Retransmission] , Application Data`); or, for a segment
/// that only carries part of a record, tshark's note of that: alone when
/// the record begins in it, after the TCP summary when it goes on
/// through it.
pub(super) fn write_tls(
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
pub(super) fn write_http(s: &mut String, p: &Packet<'_>, h: &Reading, tcp: &TcpSeen) {
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
pub(super) fn write_http_lines(
    s: &mut String,
    p: &Packet<'_>,
    h: &Reading,
    tcp: &TcpSeen,
    payload: &[u8],
) {
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
pub(super) fn write_ssh(s: &mut String, ssh: &crate::dissect::Ssh<'_>, tcp: Option<&TcpSeen>) {
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

/// An IEEE 802.3 frame with an LLC header for the spanning tree (DSAP and
/// SSAP 0x42).
/// A TCP segment's info after its ports, as tshark's: `[SYN, ACK] Seq=0
/// Ack=1 Win=65160 Len=0 MSS=1460 SACK_PERM WS=128`.
pub(super) fn write_tcp(s: &mut String, p: &Packet<'_>, t: &Tcp<'_>, seen: Option<&TcpSeen>) {
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
pub(super) fn write_tcp_options(s: &mut String, tcp: &Tcp<'_>, seen: Option<&TcpSeen>) {
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
