//! TCP (its header, options and sequence analysis) and what it carries:
//! SSH and TLS.

use super::*;

/// An SSH segment: its version line, the key exchange's packets in the
/// clear (lengths and message code), and the encrypted rest (split into
/// its length and packet, as tshark shows it, when no version line was
/// seen; its length after New Keys).
pub(super) fn ssh_tree(t: &mut Tree<'_>, ssh: &crate::dissect::Ssh<'_>, tcp: Option<&TcpSeen>) {
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
pub(super) fn tls_tree(
    t: &mut Tree<'_>,
    p: &Packet<'_>,
    tls: &crate::dissect::AppPayload<'_>,
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

/// A TCP segment's header, as tshark's tree has it; the numbers relative
/// when the frame loop followed the conversation (`tcp`).
pub(super) fn tcp_tree(
    t: &mut Tree<'_>,
    p: &Packet<'_>,
    at: usize,
    seg: &Tcp<'_>,
    tcp: Option<&TcpSeen>,
) {
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
pub(super) struct RelSecs(i64);

impl std::fmt::Display for RelSecs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
    }
}

/// The flags' bit lines, highest first, titled as Wireshark's.
pub(super) const TCP_FLAGS: [(u16, &str); 10] = [
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
pub(super) fn bit_pattern(value: u16, mask: u16, bits: u32) -> String {
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
pub(super) fn tcp_option(
    t: &mut Tree<'_>,
    at: usize,
    o: &TcpOption<'_>,
    tcp: Option<&TcpSeen>,
) -> usize {
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

/// TCP at `offset`, and what it carries (SSH, TLS).
pub(super) fn tcp_nodes(t: &mut Tree<'_>, p: &Packet<'_>, offset: u16, tcp: Option<&TcpSeen>) {
    if let Some(seg) = p.tcp() {
        tcp_tree(t, p, usize::from(offset), &seg, tcp);
    }
    if let Some(ssh) = p.ssh() {
        ssh_tree(t, &ssh, tcp);
    }
    if let Some((tls, r)) = crate::output::packets::tls_reading(p, tcp) {
        tls_tree(t, p, &tls, &r);
    }
    if let Some(h) = tcp.and_then(|c| c.http.as_ref())
        && h.is_http()
        && let Some((payload, offset)) = p.tcp_payload()
    {
        http_tree(t, h, payload, offset);
    }
}

/// An HTTP segment: the head of the message it starts (or, for one that
/// ends a message begun earlier, the head that segment had) and how many
/// bytes of body follow it; or a continuation's bytes.
fn http_tree(t: &mut Tree<'_>, h: &crate::analysis::http::Reading, payload: &[u8], offset: usize) {
    use crate::analysis::http::Reading;
    if let Reading::Malformed { .. } = h {
        t.text(0, "[Malformed Packet: HTTP]");
        return;
    }
    t.add(0, offset, payload.len(), "Hypertext Transfer Protocol");
    let body = match h {
        Reading::Whole { .. } => {
            let head = super::udp_apps::http_head_nodes(t, payload, Some(offset));
            payload.len().saturating_sub(head) as u64
        }
        Reading::Ends(e) => {
            if let Some(head) = &e.head {
                super::udp_apps::http_head_nodes(t, head, None);
            }
            let head = e.head.as_ref().map_or(0, |h| h.len() as u64);
            t.text(
                1,
                format_args!(
                    "[{} Reassembled TCP Segments ({} bytes), from frame {}]",
                    e.segments, e.bytes, e.first_frame
                ),
            );
            e.bytes.saturating_sub(head)
        }
        _ => payload.len() as u64,
    };
    if body > 0 {
        t.text(1, format_args!("File Data: {body} bytes"));
    }
}
