//! Entry points shared by the cargo-fuzz targets (`fuzz/`) and the replay
//! test (`tests/fuzz_replay.rs`), so `cargo test` exercises every input the
//! fuzzers ever kept.

use crate::analysis::AnalysisOptions;
use crate::capture::{CaptureFile, Frame, LinkType};
use crate::dissect::{DissectOptions, dissect};
use crate::output::packets::{summary_line, write_json_line};
use crate::output::tree::{header_tree, hex_dump, render_tree, write_header_tree};

const LINKS: [LinkType; 6] = [
    LinkType::Ethernet,
    LinkType::LinuxSll,
    LinkType::LinuxSll2,
    LinkType::RawIp,
    LinkType::Ipv4,
    LinkType::Ipv6,
];

/// NVMe-oF capsules and what the RDMA CM carries for them: every view
/// parses or says it is short, every Repr comes back the same through its
/// emit, every name is found.
pub fn nvme_capsule(data: &[u8]) {
    use crate::wire::nvme::*;
    for q in [QueueKind::Admin, QueueKind::Io] {
        if let Ok(s) = SqeRepr::parse(data) {
            let _ = (
                s.name(q),
                s.has_lba(q),
                s.slba(),
                s.nlb(),
                s.fuse(),
                s.psdt(),
            );
            let _ = (
                s.connect(),
                s.property(),
                s.sgl.type_name(),
                s.sgl.in_capsule(),
            );
            let mut out = [0u8; SQE_LEN];
            s.emit(&mut out).expect("an SQE fits 64 bytes");
            assert_eq!(SqeRepr::parse(&out), Ok(s), "SQE round trip");
        }
    }
    if let Ok(c) = CqeRepr::parse(data) {
        let _ = (
            c.status_name(),
            sct_name(c.sct()),
            c.failed(),
            c.dnr(),
            c.crd(),
        );
        let mut out = [0u8; CQE_LEN];
        c.emit(&mut out).expect("a CQE fits 16 bytes");
        assert_eq!(CqeRepr::parse(&out), Ok(c), "CQE round trip");
    }
    if let Ok(h) = CmIpHeader::parse(data) {
        let mut out = [0u8; CM_IP_HEADER_LEN];
        h.emit(&mut out).expect("fits");
        assert_eq!(CmIpHeader::parse(&out), Ok(h), "CM IP header round trip");
        let _ = Ulp::of_port(h.port).name();
        if let Ok(d) = CmReqData::parse(data.get(CM_IP_HEADER_LEN..).unwrap_or_default()) {
            let mut out = [0u8; CmReqData::LEN];
            d.emit(&mut out).expect("fits");
            assert_eq!(CmReqData::parse(&out), Ok(d), "CM REQ data round trip");
        }
    }
    if let Ok(c) = ConnectData::new(data) {
        let _ = (c.hostid(), c.cntlid(), c.subnqn(), c.hostnqn());
    }
    let sid = data
        .first_chunk::<8>()
        .map_or(0, |b| u64::from_be_bytes(*b));
    if let Some(p) = service_port(sid) {
        assert_eq!(service_id(p), sid, "ServiceID round trip");
    }
    let _ = rej_status_name(data.len() as u16);
}

/// A DNS message, as itself and carried in UDP to the DNS, mDNS and
/// LLMNR ports: its records are walked (each inside the message, names
/// read through pointers that may loop), and the frame is shown every way
/// with every field's values printed.
pub fn dns_message(data: &[u8]) {
    use crate::wire::dns::Message;
    if let Some(m) = Message::new(data) {
        for r in m.records() {
            let Ok(r) = r else { break };
            assert!(
                r.at + r.len <= data.len() || !r.whole,
                "a whole record inside"
            );
            assert!(r.rdata_at + r.rdata.len() <= data.len());
            let _ = (m.name(r.at), m.nsec_types(&r), r.ipv4(), r.ipv6());
            let _ = m.character_string(r.rdata_at);
        }
    }
    udp_payload_everywhere(data, &[(40000, 53), (40000, 5353), (40000, 5355)], &["dns"]);
}

/// `data` as the payload of a UDP datagram between each pair of ports,
/// whole and cut one byte short as a snap length would: its summary line,
/// its header tree (whose byte ranges stay inside the frame, and whose
/// two renderings agree) and the fields whose names start with one of
/// `prefixes`.
fn udp_payload_everywhere(data: &[u8], ports: &[(u16, u16)], prefixes: &[&str]) {
    use crate::fields::{Ctx, FIELDS};
    let payload = data.get(..data.len().min(1400)).unwrap_or_default();
    for &(sport, dport) in ports {
        let mut bytes = Vec::new();
        let built = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .udp(sport, dport)
            .write(&mut bytes, payload);
        if built.is_err() {
            return;
        }
        for cut in [0, 1] {
            let frame = bytes.get(..bytes.len() - cut).unwrap_or_default();
            let f = Frame {
                len: bytes.len() as u32,
                ..Frame::whole(frame, LinkType::Ethernet)
            };
            let p = dissect(&f, &DissectOptions::default());
            let _ = summary_line(&p, 0, 9, 100_000_000_000, None);
            let nodes = header_tree(&p, 100_000_000_000, None);
            for n in &nodes {
                if let Some(r) = &n.bytes {
                    assert!(r.end <= frame.len(), "{} past the frame", n.text);
                }
            }
            let mut lines = Vec::new();
            write_header_tree(&p, 100_000_000_000, None, &mut lines);
            assert_eq!(lines, render_tree(&nodes).into_bytes());
            let mut s = String::new();
            for field in FIELDS.iter().filter(|f| {
                prefixes.iter().any(|x| f.name.starts_with(x)) || f.name == "frame.protocols"
            }) {
                for v in field.values(&Ctx::alone(&p)) {
                    field.format(&v, &mut s);
                }
            }
        }
    }
}

/// An NBNS, BOOTP/DHCP or SSDP message, or an SSH segment: each parser on
/// its own (NetBIOS names of every record, the DHCP options, the HTTP
/// first line, SSH's version line and packets in the clear), then as the
/// payload of a datagram to each protocol's port and of a TCP segment to
/// port 22 after a version line.
pub fn discovery_message(data: &[u8]) {
    use crate::wire::{dhcp, dns, http, nbns, ssh};
    for (version, encrypted) in [(None, false), (Some(2), false), (Some(2), true)] {
        let r = ssh::read(data, version, encrypted);
        let plain: usize = r.plain.iter().map(|p| p.size()).sum();
        assert!(r.encrypted_at + r.encrypted.len() == data.len());
        assert!(plain <= r.encrypted_at);
        assert!(!encrypted || r.plain.is_empty());
    }
    ssh_segments(data);
    if let Some(m) = dns::Message::new(data) {
        for r in m.records().map_while(Result::ok) {
            if let Ok(name) = nbns::name(&m, r.at) {
                assert!(!name.is_empty());
            }
        }
    }
    if let Some(m) = dhcp::Message::new(data) {
        let o = m.options();
        let types = m.message_types();
        assert!(types.last().is_none() || o.message_type.is_some());
        for d in m.option_data(61) {
            assert!(d.len() <= data.len());
        }
        let _ = (m.mac(), m.chaddr(), m.xid(), m.address(3));
    }
    match http::StartLine::parse(data) {
        http::StartLine::Request { method, line } => {
            assert!(line.starts_with(method));
            assert!(!line.contains(&b'\n'));
        }
        http::StartLine::Response { line, .. } => assert!(!line.contains(&b'\r')),
        http::StartLine::Continuation => {}
    }
    udp_payload_everywhere(
        data,
        &[(137, 137), (68, 67), (67, 68), (50000, 1900), (1900, 5353)],
        &["nbns", "dhcp", "http", "ssdp"],
    );
}

/// `data` as the payload of an SSH client's segment after its version
/// line, followed as a conversation: its line, tree and SSH fields.
fn ssh_segments(data: &[u8]) {
    let payload = data.get(..data.len().min(1400)).unwrap_or_default();
    let mut tracker = crate::analysis::tcp::TcpTracker::new();
    let mut seq = 1u32;
    for p in [&b"SSH-2.0-OpenSSH_9.2\r\n"[..], payload] {
        let mut bytes = Vec::new();
        let built = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .tcp(40000, 22, seq, 512)
            .write(&mut bytes, p);
        if built.is_err() {
            return;
        }
        seq = seq.wrapping_add(p.len() as u32);
        show_followed(&bytes, &mut tracker, "ssh");
    }
}

/// A TCP segment's frame, followed in its conversation by `tracker`: its
/// summary line, its tree (within the frame) and the fields whose names
/// start with `fields`, and `frame.protocols`.
fn show_followed(bytes: &[u8], tracker: &mut crate::analysis::tcp::TcpTracker, fields: &str) {
    use crate::fields::{Ctx, FIELDS};
    let f = Frame::whole(bytes, LinkType::Ethernet);
    let pkt = dissect(&f, &DissectOptions::default());
    let tcp = tracker.see(&pkt);
    // As the frame loops that show frames do: an HTTP message's head is
    // kept for the segment that ends it.
    if crate::analysis::Analyzer::frame_bytes_wanted(tcp.as_ref()) {
        tracker.keep_http_head(&pkt);
    }
    let _ = summary_line(&pkt, 0, 9, 100_000_000_000, tcp.as_ref());
    for n in &header_tree(&pkt, 100_000_000_000, tcp.as_ref()) {
        if let Some(r) = &n.bytes {
            assert!(r.end <= bytes.len(), "{} past the frame", n.text);
        }
    }
    let ctx = Ctx {
        tcp: tcp.as_ref(),
        ..Ctx::alone(&pkt)
    };
    let mut s = String::new();
    for field in FIELDS
        .iter()
        .filter(|f| f.name.starts_with(fields) || f.name == "frame.protocols")
    {
        for v in field.values(&ctx) {
            field.format(&v, &mut s);
        }
    }
}

/// TLS records: `data` read alone as a TLS segment from every state the
/// analysis can leave it in (a session of each version, after a cut
/// header, inside and at the end of a record, sent again), its digest's
/// walks; then `data` cut into segments (each piece's first byte says how
/// long it is) sent on port 443 and on a port of its own (tshark's
/// heuristic), followed as a conversation: each segment's line, tree and
/// TLS fields.
pub fn tls_records(data: &[u8]) {
    use crate::wire::tls::{self, Begun, Continues, Digest, Seen, Selection};
    let data = data.get(..data.len().min(4096)).unwrap_or_default();
    let half = u32::try_from(data.len() / 2).unwrap_or(0);
    for version in [0, tls::SSL3, tls::TLS12, tls::TLS13, tls::TLCP] {
        for continues in [
            Continues::Nothing,
            Continues::Header {
                bytes: [22, 3, 3, 0],
                len: 4,
            },
            Continues::Header {
                bytes: [23, 0, 0, 0],
                len: 1,
            },
            Continues::Record {
                begun: Begun::new(tls::HANDSHAKE, tls::TLS12, 300),
                bytes: half,
                ends: true,
                broken: false,
            },
            Continues::Record {
                begun: Begun::default(),
                bytes: half,
                ends: false,
                broken: true,
            },
            Continues::Resent { overlaps: true },
        ] {
            let seen = Seen {
                version,
                change_cipher_before: version == tls::TLS12,
                continues,
                protocol: "TLS",
            };
            let r = tls::read(data, &seen);
            for rec in &r.records {
                assert!(rec.span.0 <= rec.span.1 && rec.span.1 <= data.len());
                assert!(rec.at.is_none_or(|a| a < data.len()));
                let mut s = String::new();
                rec.says.write(&mut s);
            }
        }
    }
    if let Some(d) = Digest::of(data, Selection::Port) {
        assert!(d.walk_from(0).is_some());
        if d.from_next.start != 0 {
            assert!(usize::from(d.from_next.start) < data.len());
        }
    }
    tls_segments(data, 443);
    tls_segments(data, 5001);
}

/// `data` cut into segments of a server on `port`, followed as a
/// conversation: line, tree and TLS fields of each.
fn tls_segments(data: &[u8], port: u16) {
    segments(data, port, "tls");
}

/// `data` cut into segments (each piece's first byte says how long it
/// is, and whether it is sent again or carries a FIN) from `port` to
/// port 40000, followed as a conversation: each segment's line, tree and
/// the fields whose names start with `fields`.
fn segments(data: &[u8], port: u16, fields: &str) {
    let mut tracker = crate::analysis::tcp::TcpTracker::new();
    let mut seq = 1u32;
    let mut rest = data;
    while let Some((&n, tail)) = rest.split_first() {
        // At least 16 bytes: a run of zeros is not 4 000 segments.
        let take = (usize::from(n) * 8 + 16).min(tail.len());
        let (piece, after) = tail.split_at(take);
        rest = after;
        if piece.is_empty() {
            break;
        }
        let mut bytes = Vec::new();
        let tcp = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([10, 0, 0, 2], [10, 0, 0, 1], 64)
            .tcp(port, 40000, seq, 512);
        let tcp = if n % 11 == 5 { tcp.fin() } else { tcp };
        if tcp.write(&mut bytes, piece).is_err() {
            return;
        }
        // Now and then a piece is sent again.
        if n % 7 != 3 {
            seq = seq.wrapping_add(piece.len() as u32);
        }
        show_followed(&bytes, &mut tracker, fields);
    }
}

/// HTTP messages: `data` read as a message's head (its length, lines,
/// headers, body and digest agree with the bytes, and its last bytes rolled
/// over any three segments are the whole's), then cut into segments
/// (as [`tls_records`] cuts them, some with a FIN) sent on HTTP's port 80
/// and on a port of its own (tshark's heuristic), followed as a
/// conversation: each segment's line, tree and HTTP fields.
pub fn http_messages(data: &[u8]) {
    use crate::wire::http::{BodyLen, Digest, Head, Tail};
    use crate::wire::tls::Selection;
    let data = data.get(..data.len().min(4096)).unwrap_or_default();
    let head = Head::parse(data);
    assert!(head.len.is_none_or(|n| n <= data.len()));
    for line in head.lines() {
        assert!(!line.contains(&b'\n'));
    }
    let _ = (
        head.media(),
        head.header("content-type"),
        head.content_length(),
    );
    for selection in [Selection::Port, Selection::Heuristic] {
        let d = Digest::of(data, selection);
        assert!(d.head_len as usize <= data.len());
        assert!(!d.starts || d.line_end);
        assert!(d.starts || d.body() == BodyLen::Empty);
        assert_eq!(
            d.body() == head.body(),
            d.starts || head.body() == BodyLen::Empty
        );
    }
    // The last bytes, rolled over any cut into three segments, are the
    // whole's (how a last chunk is found across segments).
    let cut = |i: usize| usize::from(data.get(i).copied().unwrap_or(0)) % (data.len() + 1);
    let (a, b) = (cut(0).min(cut(1)), cut(0).max(cut(1)));
    let parts = [data.get(..a), data.get(a..b), data.get(b..)];
    let rolled = parts
        .iter()
        .flatten()
        .fold(Tail::default(), |t, p| t.then(Tail::of(p), p.len() as u32));
    assert_eq!(rolled, Tail::of(data));
    segments(data, 80, "http");
    segments(data, 40541, "http");
}

/// A display filter: parsed (or refused with an error that prints), and
/// when it parses, evaluated on one frame of each opcode and on PFC and
/// PAUSE frames, with `not (F)` the negation of `F` and `(F) or (F)` the
/// same as `F` on every one; every field's values print.
pub fn display_filter(data: &[u8]) {
    use crate::fields::{Ctx, FIELDS};
    use crate::filter::Filter;
    use std::sync::OnceLock;
    static FRAMES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    let frames = FRAMES.get_or_init(|| {
        let mut f: Vec<Vec<u8>> = crate::synth::samples::every_opcode(1)
            .into_iter()
            .step_by(7)
            .collect();
        f.extend(crate::synth::samples::other_traffic());
        f
    });
    let text = String::from_utf8_lossy(data);
    let f = match Filter::parse(&text) {
        Ok(f) => f,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let not = Filter::parse(&format!("not ({text})")).expect("the negation of a filter parses");
    let twice = Filter::parse(&format!("({text}) or ({text})")).expect("F or F parses");
    for (i, bytes) in frames.iter().enumerate() {
        let fr = Frame {
            number: i as u64 + 1,
            ts_ns: i as u64 * 1000,
            ..Frame::whole(bytes, LinkType::Ethernet)
        };
        let p = dissect(&fr, &DissectOptions::default());
        let ctx = Ctx::alone(&p);
        let m = f.matches(&ctx);
        assert_eq!(not.matches(&ctx), !m, "not ({text})");
        assert_eq!(twice.matches(&ctx), m, "({text}) or ({text})");
    }
    if let Some(bytes) = frames.last() {
        let fr = Frame::whole(bytes, LinkType::Ethernet);
        let p = dissect(&fr, &DissectOptions::default());
        let mut s = String::new();
        for field in FIELDS {
            for v in field.values(&Ctx::alone(&p)) {
                field.format(&v, &mut s);
            }
        }
    }
}

/// `frame` of `link` as a fuzz input gives it: whole, or one byte short
/// of its wire length when the selector's top bit is set.
fn fuzz_frame(frame: &[u8], sel: u8, link: LinkType) -> Frame<'_> {
    Frame {
        len: (frame.len() as u32).saturating_add(u32::from(sel >> 7)),
        ..Frame::whole(frame, link)
    }
}

/// A native InfiniBand packet (even first byte) or an ERF record (odd),
/// the rest of the input: decoded and shown every way, and the
/// InfiniBand-specific promises checked: the VCRC judged only over a whole
/// packet, the LRH where it says, an ERF record's frame inside it.
pub fn native_frame(data: &[u8]) {
    let Some((&sel, frame)) = data.split_first() else {
        return;
    };
    let link = if sel & 1 == 0 {
        LinkType::InfiniBand
    } else {
        LinkType::Erf
    };
    let f = fuzz_frame(frame, sel, link);
    let p = dissect(&f, &DissectOptions::default());
    let mut out = Vec::new();
    write_json_line(&mut out, &p);
    let _ = summary_line(&p, 0, 9, 100_000_000_000, None);
    let _ = header_tree(&p, 100_000_000_000, None);
    assert!(usize::from(p.frame_start) <= frame.len());
    if let (Some(l), Some(at)) = (p.lrh, p.offsets.lrh) {
        let at = usize::from(at);
        if let Some(true | false) = p.vcrc.and_then(|v| v.valid) {
            assert!(at + l.packet_bytes() + 2 <= frame.len());
        }
    }
    if p.erf.is_some() {
        assert!(p.caplen as usize + usize::from(p.frame_start) <= frame.len());
    }
}

/// One frame: the first byte picks the link type, the rest is the frame.
/// Every view of the packet is rendered.
pub fn dissect_frame(data: &[u8]) {
    let Some((&sel, frame)) = data.split_first() else {
        return;
    };
    let link = LINKS[usize::from(sel) % LINKS.len()];
    let f = fuzz_frame(frame, sel, link);
    for port in [crate::dissect::ROCE_V2_PORT, u16::from(sel)] {
        let opts = DissectOptions {
            roce_port: port,
            check_icrc: true,
        };
        let p = dissect(&f, &opts);
        let mut out = Vec::new();
        write_json_line(&mut out, &p);
        // A TCP segment seen twice: the second time its conversation has
        // bases and a scale (the relative numbers may wrap).
        let mut conversations = crate::analysis::tcp::TcpTracker::new();
        let _ = conversations.see(&p);
        let tcp = conversations.see(&p);
        let _ = summary_line(&p, 0, 9, 100_000_000_000, tcp.as_ref());
        let nodes = header_tree(&p, 100_000_000_000, tcp.as_ref());
        for n in &nodes {
            if let Some(r) = &n.bytes {
                // Byte ranges in the tree must lie inside the frame.
                let _ = frame.get(r.start.min(frame.len())..r.end.min(frame.len()));
            }
        }
        // `packets -V` writes the same tree straight out.
        let mut lines = Vec::new();
        write_header_tree(&p, 100_000_000_000, tcp.as_ref(), &mut lines);
        assert_eq!(lines, render_tree(&nodes).into_bytes());
        let _ = hex_dump(frame);
    }
}

/// A capture file from arbitrary bytes: read every frame, from memory and
/// as a stream; both readers must agree.
pub fn read_capture(data: &[u8]) {
    let file = CaptureFile::from_bytes(data.to_vec());
    let mut from_memory = Vec::new();
    let mut copy = crate::capture::write::FrameWriter::new(
        Vec::new(),
        crate::capture::write::OutFormat::PcapNg,
        1,
    )
    .ok();
    let mut links = Vec::new();
    if let Ok(reader) = file.frames() {
        for f in reader {
            match f {
                Ok(f) => {
                    assert!(f.data.len() == f.caplen as usize);
                    from_memory.push((f.number, f.ts_ns, f.len, f.offset, f.data.to_vec()));
                    links.push((f.link, f.if_speed));
                    if let Some(w) = copy.as_mut() {
                        assert!(
                            w.write(f.ts_ns, f.data, f.len, f.link.number(), f.if_speed)
                                .is_ok(),
                            "pcapng takes every frame"
                        );
                    }
                }
                Err(_) => break,
            }
        }
    }
    // Written as `packets -w` writes (pcapng), every frame reads back.
    if let Some(w) = copy {
        let written = w.into_inner();
        let back: Vec<_> = crate::capture::FrameReader::new(&written)
            .map(|r| r.map_while(Result::ok).collect())
            .unwrap_or_default();
        assert_eq!(back.len(), from_memory.len(), "a copy lost frames");
        for ((b, m), (link, speed)) in back.iter().zip(&from_memory).zip(&links) {
            assert!(
                (b.ts_ns, b.len, b.data, b.link)
                    == (m.1, m.2.max(m.4.len() as u32), &m.4[..], *link),
                "a copy's frame differs"
            );
            // Past 256 interfaces a copy's new ones state no speed.
            assert!(
                b.if_speed == *speed || b.if_speed.is_none(),
                "a copy's speed differs"
            );
        }
    }
    let cursor = std::io::Cursor::new(data.to_vec());
    let mut from_stream = Vec::new();
    if let Ok(mut reader) = crate::capture::StreamReader::new(Box::new(cursor), None) {
        while let Some(f) = crate::capture::FrameSource::next_frame(&mut reader) {
            match f {
                Ok(f) => from_stream.push((f.number, f.ts_ns, f.len, f.offset, f.data.to_vec())),
                Err(_) => break,
            }
        }
    }
    assert_eq!(
        from_memory, from_stream,
        "the memory and stream readers disagree"
    );
    chunk_records(data, &from_memory);
    chunk_blocks(data, &from_memory);
}

/// A record walk's frames: (timestamp, length, offset, data).
type Walked = Vec<(u64, u32, usize, Vec<u8>)>;

/// The chunked reader's record walk (a classic pcap file) must see the
/// frames the sequential reader sees, and its resync guess must never
/// panic nor point outside the range it was given.
fn chunk_records(data: &[u8], frames: &[(u64, u64, u32, usize, Vec<u8>)]) {
    use crate::capture::{PCAP_HEADER_LEN, PcapLayout, Record};
    let Ok(Some(layout)) = PcapLayout::parse(data) else {
        return;
    };
    let mut at = PCAP_HEADER_LEN;
    let mut walked = Vec::new();
    while at < data.len() {
        match layout.record(data, at) {
            Record::Frame {
                ts_ns,
                len,
                data: bytes,
                next,
            } => {
                walked.push((ts_ns, len, at, data[bytes].to_vec()));
                at = next;
            }
            Record::Incomplete { .. } | Record::Absurd { .. } => break,
        }
    }
    walk_agrees(walked, frames, "record");
    guesses_in_range(data.len(), 1, |from, limit| {
        layout.resync(data, from, limit, true)
    });
}

/// The chunked reader's pcapng block walk (section header and interface
/// blocks applied, the others read) must see the frames the sequential
/// reader sees, and its resync guess must stay aligned and in range.
fn chunk_blocks(data: &[u8], frames: &[(u64, u64, u32, usize, Vec<u8>)]) {
    use crate::capture::{Item, NgCursor};
    let Some(Ok((mut cursor, mut at))) = NgCursor::open(data) else {
        return;
    };
    let mut walked = Vec::new();
    while let Some(input) = data.get(at..).filter(|i| !i.is_empty()) {
        let item = match cursor.block(input, at as u64) {
            Some(item) => item,
            None => cursor.apply(input, at as u64),
        };
        match item {
            Item::Frame {
                meta,
                data: bytes,
                next,
            } => {
                walked.push((meta.ts_ns, meta.len, at, input[bytes].to_vec()));
                at += next;
            }
            Item::Skip { next } => at += next,
            Item::Incomplete { .. } | Item::Failed(_) => break,
        }
    }
    walk_agrees(walked, frames, "block");
    guesses_in_range(data.len(), 4, |from, limit| {
        cursor.resync(data, 0, from, limit, true)
    });
}

fn walk_agrees(walked: Walked, frames: &[(u64, u64, u32, usize, Vec<u8>)], what: &str) {
    let seq: Walked = frames
        .iter()
        .map(|(_, ts, len, offset, bytes)| (*ts, *len, *offset, bytes.clone()))
        .collect();
    assert!(
        walked == seq,
        "the chunked and sequential {what} walks disagree"
    );
}

/// Guesses from 16 offsets spread over a file of `len` bytes, each scanning
/// 1 KiB, land in their range on a multiple of `align`.
fn guesses_in_range(len: usize, align: usize, guess: impl Fn(usize, usize) -> Option<usize>) {
    for i in 0..16 {
        let from = len * i / 16;
        let limit = (from + 1024).min(len);
        if let Some(found) = guess(from, limit) {
            assert!(found >= from && found < limit && found % align == 0);
        }
    }
}

/// The chunked reader on arbitrary bytes: the first two bytes pick the
/// chunk size (16 to 4111 bytes), the threads (2 to 4) and whether the
/// frame loop runs with a filter (and which), the rest is the capture
/// file. Its report, or its error, and the frames it passes must be the
/// sequential one's.
pub fn chunked(data: &[u8]) {
    use crate::pipeline::chunked::{ChunkedFile, Plan, analyze_file};
    use std::sync::atomic::{AtomicU64, Ordering};
    static FILES: AtomicU64 = AtomicU64::new(0);
    let Some(([a, b], capture)) = data.split_first_chunk::<2>() else {
        return;
    };
    let plan = Plan {
        threads: 2 + usize::from(b & 3) % 3,
        chunk: 16 + (u64::from(*a) << 4 | u64::from(b >> 4)),
        // Split by host pair into 1 to 3 analyses, or one.
        parts: 1 + usize::from(b >> 2 & 3) % 3,
    };
    // The reader maps a file: a temporary one, unlinked once open.
    let path = std::env::temp_dir().join(format!(
        "roce-dissect-fuzz-{}-{}",
        std::process::id(),
        FILES.fetch_add(1, Ordering::Relaxed)
    ));
    if std::fs::write(&path, capture).is_err() {
        return;
    }
    let opened = std::fs::File::open(&path);
    let _ = std::fs::remove_file(&path);
    let Ok(file) = opened else {
        return;
    };
    let Some(input) = ChunkedFile::new(&file) else {
        return;
    };
    let (dissect, analysis) = (DissectOptions::default(), AnalysisOptions::default());
    if b & 4 != 0 {
        return visited(capture, input, plan, b & 8 != 0);
    }
    let got = outcome(analyze_file(
        input,
        "fuzz",
        &dissect,
        analysis.clone(),
        plan,
        None,
    ));
    let want = match crate::capture::FrameReader::new(capture) {
        Ok(mut reader) => outcome(crate::pipeline::analyze_sequential(
            &mut reader,
            "fuzz",
            &dissect,
            analysis,
            None,
        )),
        Err(e) => format!("error: {e}"),
    };
    assert!(
        got == want,
        "the chunked reader ({plan:?}) and the sequential one disagree:\n{got}\n{want}"
    );
}

/// A report, or its error, as text to compare.
fn outcome(r: Result<crate::analysis::Report, crate::capture::CaptureError>) -> String {
    match r {
        Ok(report) => serde_json::to_string(&report).unwrap_or_default(),
        Err(e) => format!("error: {e}"),
    }
}

/// The frame loop with a filter, by the chunked reader and by one thread:
/// the same frames passed, with the same analysis, and the same report.
fn visited(
    capture: &[u8],
    input: crate::pipeline::chunked::ChunkedFile<'_>,
    plan: crate::pipeline::chunked::Plan,
    on_analysis: bool,
) {
    use crate::pipeline::Seen;
    use std::ops::ControlFlow;
    let text = if on_analysis {
        "roce.analysis.flow == 1 || frame.number == 3 || roce.analysis.gap"
    } else {
        "bth.opcode == 0x81 or macc or frame.time_delta > 0.001"
    };
    let Ok(filter) = crate::filter::Filter::parse(text) else {
        return;
    };
    let (dissect, analysis) = (DissectOptions::default(), AnalysisOptions::default());
    let line = |seen: &Seen<'_, '_>| {
        let flow = seen.analysis.flow().map(|f| u64::from(f) + 1);
        filter.matches(&seen.ctx(flow)).then(|| {
            format!(
                "{} {} {} {:?}\n",
                seen.pkt.number, seen.first_ts_ns, seen.prev_ts_ns, seen.analysis
            )
        })
    };
    let mut got = String::new();
    let r = crate::pipeline::chunked::visit_file(
        input,
        "fuzz",
        &dissect,
        analysis.clone(),
        plan,
        None,
        Some((&filter, &mut |seen| {
            got.extend(line(seen));
            ControlFlow::Continue(())
        })),
    );
    got += &outcome(r);
    let mut want = String::new();
    match crate::capture::FrameReader::new(capture) {
        Ok(mut reader) => {
            let r = crate::pipeline::visit_source(
                &mut reader,
                "fuzz",
                &dissect,
                analysis,
                None,
                &mut |seen| {
                    want.extend(line(seen));
                    ControlFlow::Continue(())
                },
                None,
            );
            want += &outcome(r);
        }
        Err(e) => want = format!("error: {e}"),
    }
    assert!(
        got == want,
        "the chunked frame loop ({plan:?}) and the sequential one disagree:\n{got}\n{want}"
    );
}

/// Analysis options with small budgets, so that fuzzing reaches what
/// happens past them (split parts overspend them together), and the
/// throughput series for half the inputs.
fn small_budgets(data: &[u8]) -> AnalysisOptions {
    AnalysisOptions {
        limits: crate::analysis::Limits {
            flows: 48,
            ud_sources: 16,
            pause_sources: 8,
            intervals: 16,
            cm_pending: 8,
            events_per_flow: 64,
            events_total: 256,
            timing_samples: 64,
        },
        timeline_series: data.len() % 2 == 1,
        ..AnalysisOptions::default()
    }
}

/// The whole pipeline: capture bytes to report, JSON, text and the HTML
/// page (with the throughput series, as `--html` asks for them).
pub fn pipeline(data: &[u8]) {
    // The second look of a report with no RoCE: where RoCE v2 went.
    if let Ok(mut frames) = crate::capture::FrameReader::new(data) {
        let _ =
            crate::dissect::probe::other_roce_port(&mut frames, &DissectOptions::default(), 4096);
    }
    let file = CaptureFile::from_bytes(data.to_vec());
    let opts = small_budgets(data);
    if let Ok(r) = crate::pipeline::analyze(&file, &DissectOptions::default(), opts, None) {
        let page = crate::output::html::page(std::slice::from_ref(&r));
        assert_eq!(page.matches("<svg").count(), page.matches("</svg>").count());
        let _ = serde_json::to_vec(&r);
        let options = |width| crate::output::report::TextOptions {
            style: crate::output::report::Style { color: false },
            events: true,
            all: true,
            width,
        };
        let _ = crate::output::report::render(&r, &options(None));
        // Laid out for a terminal: every line fits, but a word too wide
        // for any line, and the command to copy at the end.
        let width = 20 + usize::from(data.first().copied().unwrap_or(0) % 100);
        let text = crate::output::report::render(&r, &options(Some(width)));
        let body = text.split("\nPackets of flow #1").next().unwrap_or("");
        for line in body.lines() {
            assert!(
                crate::output::fit::fits(line, width),
                "{line:?} is wider than {width}"
            );
        }
    }
}

/// The analysis split by host pair in 2 to 4 parts and joined against
/// one analysis of every frame: the same report, or a reason it could not
/// be joined. Budgets are small, so that parts together overspend them.
pub fn split(data: &[u8]) {
    use crate::analysis::{Analyzer, CaptureInfo, Facts};
    let file = CaptureFile::from_bytes(data.to_vec());
    let Ok(frames) = file.frames() else { return };
    let dissect_opts = DissectOptions::default();
    let facts: Vec<Facts> = frames
        .flatten()
        .map(|f| Facts::of(&crate::dissect::dissect(&f, &dissect_opts)))
        .collect();
    let opts = small_budgets(data);
    let report = |an: Analyzer| {
        let r = an.finish(CaptureInfo::default());
        serde_json::to_string(&r).unwrap_or_default()
    };
    let mut whole = Analyzer::new(opts.clone());
    for f in &facts {
        whole.observe(f);
    }
    let want = report(whole);
    let parts = 2 + data.len() % 3;
    if let Ok(an) = crate::analysis::split::analyze_split(opts, &facts, parts) {
        let got = report(an);
        assert!(
            got == want,
            "split in {parts} parts and joined:\n{got}\none analysis:\n{want}"
        );
    }
}

/// A compressed capture: the first byte picks gzip, zstd or xz and
/// whether the rest is a compressed stream as it is (corrupt, cut, a
/// decompression bomb of a sort) or a capture to compress first, whose
/// frames read through the decompressor must be those read plain.
pub fn read_compressed(data: &[u8]) {
    use crate::capture::compress::Compression;
    use crate::capture::{FrameSource, StreamReader};
    use std::io::Write;
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let kind = [Compression::Gzip, Compression::Zstd, Compression::Xz][usize::from(sel % 3)];
    let frames = |reader: Result<StreamReader, _>| {
        let mut out = Vec::new();
        let Ok(mut reader) = reader else {
            return (out, false);
        };
        while let Some(f) = reader.next_frame() {
            match f {
                Ok(f) => out.push((f.number, f.ts_ns, f.len, f.data.to_vec())),
                Err(_) => return (out, true),
            }
        }
        (out, false)
    };
    if sel & 0x80 == 0 {
        let _ = frames(StreamReader::decompressing(
            kind,
            Box::new(std::io::Cursor::new(rest.to_vec())),
            None,
        ));
        return;
    }
    let packed = match kind {
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            let _ = e.write_all(rest);
            e.finish().unwrap_or_default()
        }
        Compression::Zstd => zstd::encode_all(rest, 1).unwrap_or_default(),
        _ => {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 0);
            let _ = e.write_all(rest);
            e.finish().unwrap_or_default()
        }
    };
    let (plain, plain_failed) = frames(StreamReader::new(
        Box::new(std::io::Cursor::new(rest.to_vec())),
        None,
    ));
    let (unpacked, unpacked_failed) = frames(StreamReader::decompressing(
        kind,
        Box::new(std::io::Cursor::new(packed)),
        None,
    ));
    assert_eq!(plain, unpacked, "frames differ through {}", kind.name());
    assert_eq!(plain_failed, unpacked_failed);
}

/// `fabric`'s inputs: a topology file (JSON naming devices' MACs) and
/// the pauses of links, as bytes say: the parse accepts or says why, and
/// the pause graph, its cycles and spreads come out whole.
pub fn fabric(data: &[u8]) {
    use crate::fabric::{Link, Pause, Topology, analyse, parse_mac};
    let text = String::from_utf8_lossy(data);
    let topo = Topology::parse(&text).unwrap_or_default();
    for w in text.split_whitespace().take(64) {
        if let Some(m) = parse_mac(w) {
            assert_eq!(parse_mac(&crate::output::json::mac_string(&m)), Some(m));
        }
    }
    // Links of pauses: each 8 bytes a pause (pausing MAC, sender MAC,
    // priority, start and length in ms), a link per 64 bytes.
    let links: Vec<Link> = data
        .chunks(64)
        .take(16)
        .enumerate()
        .map(|(i, c)| {
            let mut l = Link {
                name: format!("l{i}"),
                ..Link::default()
            };
            for p in c.chunks_exact(8) {
                let by = [2, 0, 0, 0, 0, p[0] % 8];
                let from = [2, 0, 0, 0, 0, p[1] % 8];
                l.macs.insert(by);
                l.macs.insert(from);
                l.pairs.insert((from, by));
                let start = u64::from(u16::from_le_bytes([p[3], p[4]])) * 1_000_000;
                let len = u64::from(u16::from_le_bytes([p[5], p[6]])) * 1_000_000;
                l.pauses.push(Pause {
                    mac: by,
                    priority: (p[2] < 8).then_some(p[2]),
                    start_ns: start,
                    end_ns: start + len,
                });
            }
            l
        })
        .collect();
    let r = analyse(&links, &topo, 100_000_000);
    for d in &r.deadlocks {
        assert!(d.end_ns - d.start_ns > 100_000_000 && d.devices.len() >= 2);
    }
    for s in &r.propagation {
        assert!(s.then.start_ns >= s.first.start_ns && s.then.by == s.first.paused);
    }
    assert!(r.propagation.len() as u64 <= r.propagation_total);
}
