//! TLS beside RoCE: the HTTPS, RDP and API-server sessions of the hosts a
//! fabric's mirror sees. Generated conversations cover what tshark does
//! with records across TCP's segments (a record shown in the segment that
//! completes it, "[TCP segment of a reassembled PDU]" before), header cut
//! short, lost, resent and out-of-order segments, handshakes of TLS 1.2
//! and 1.3, alerts, heartbeats, unknown record types and versions, and the
//! ports and heuristic that make a conversation TLS: each line, field and
//! `frame.protocols` is tshark's. So are the external captures' 530 TLS
//! frames.

mod common;

use std::path::{Path, PathBuf};

use roce_dissect::synth::samples::{Segment, tcp_frame};

/// A record of `content_type`, version 0x0303 unless given.
fn rec(content_type: u8, body: &[u8]) -> Vec<u8> {
    rec_v(content_type, 0x0303, body)
}

fn rec_v(content_type: u8, version: u16, body: &[u8]) -> Vec<u8> {
    let mut r = vec![content_type];
    r.extend(version.to_be_bytes());
    r.extend((body.len() as u16).to_be_bytes());
    r.extend(body);
    r
}

/// A handshake message.
fn hs(t: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![t];
    m.extend(&(body.len() as u32).to_be_bytes()[1..]);
    m.extend(body);
    m
}

fn ext(t: u16, body: &[u8]) -> Vec<u8> {
    let mut e = t.to_be_bytes().to_vec();
    e.extend((body.len() as u16).to_be_bytes());
    e.extend(body);
    e
}

/// A Client Hello naming `sni`, offering `versions`.
fn client_hello(sni: &[u8], versions: &[u16]) -> Vec<u8> {
    let mut name = ((sni.len() + 3) as u16).to_be_bytes().to_vec();
    name.push(0);
    name.extend((sni.len() as u16).to_be_bytes());
    name.extend(sni);
    let mut exts = ext(0, &name);
    let mut v = vec![(2 * versions.len()) as u8];
    for x in versions {
        v.extend(x.to_be_bytes());
    }
    exts.extend(ext(43, &v));
    let mut body = vec![3, 3];
    body.extend([0; 32]);
    body.push(32);
    body.extend([0; 32]);
    body.extend([0, 4, 0x13, 0x01, 0x13, 0x02, 1, 0]);
    body.extend((exts.len() as u16).to_be_bytes());
    body.extend(exts);
    hs(1, &body)
}

/// A Server Hello, choosing TLS 1.3 in `supported_versions` or not.
fn server_hello(tls13: bool) -> Vec<u8> {
    let exts = if tls13 { ext(43, &[3, 4]) } else { Vec::new() };
    let mut body = vec![3, 3];
    body.extend([0; 32]);
    body.push(32);
    body.extend([0; 32]);
    body.extend([0x13, 0x01, 0]);
    body.extend((exts.len() as u16).to_be_bytes());
    body.extend(exts);
    hs(2, &body)
}

/// A conversation between 10.0.0.1:40000 (the client) and 10.0.0.2 on
/// `port`: a handshake when `open`, then each segment (from the client
/// when `true`) at the sequence number after the side's previous one,
/// unless a segment gives its own (relative, from 0).
fn conversation(port: u16, open: bool, segments: &[(bool, Option<u32>, Vec<u8>)]) -> Vec<Vec<u8>> {
    let client = (1, 40000);
    let server = (2, port);
    let seg = |from_client: bool, seq: u32, ack: u32, flags: u16, payload: &[u8]| {
        let (from, to) = if from_client {
            (client, server)
        } else {
            (server, client)
        };
        tcp_frame(&Segment {
            from,
            to,
            seq,
            ack,
            flags,
            window: 64240,
            urgent: 0,
            options: &[],
            payload,
        })
    };
    let mut frames = Vec::new();
    if open {
        frames.push(seg(true, 1000, 0, 0x002, &[]));
        frames.push(seg(false, 5000, 1001, 0x012, &[]));
        frames.push(seg(true, 1001, 5001, 0x010, &[]));
    }
    let mut next = [1001u32, 5001u32];
    for (from_client, at, payload) in segments {
        let side = usize::from(!from_client);
        let base = [1001, 5001][side];
        let seq = at.map_or(next[side], |a| base + a);
        let ack = next[1 - side];
        frames.push(seg(*from_client, seq, ack, 0x018, payload));
        next[side] = next[side].max(seq + payload.len() as u32);
    }
    frames
}

fn server(payload: Vec<u8>) -> (bool, Option<u32>, Vec<u8>) {
    (false, None, payload)
}

fn client(payload: Vec<u8>) -> (bool, Option<u32>, Vec<u8>) {
    (true, None, payload)
}

/// A server's stream cut into segments of `cut` bytes, the `lost`-th
/// never captured: the client acknowledges up to it three times after
/// the segments that follow, and the server sends it again (a fast
/// retransmission) after `after` of them.
fn fast_retransmission(stream: &[u8], cut: usize, lost: usize, after: usize) -> Vec<Vec<u8>> {
    let seg = |from_client: bool, seq: u32, ack: u32, flags: u16, payload: &[u8]| {
        let (from, to) = if from_client {
            ((1, 40000), (2, 443))
        } else {
            ((2, 443), (1, 40000))
        };
        tcp_frame(&Segment {
            from,
            to,
            seq,
            ack,
            flags,
            window: 64240,
            urgent: 0,
            options: &[],
            payload,
        })
    };
    let mut frames = vec![
        seg(true, 1000, 0, 0x002, &[]),
        seg(false, 5000, 1001, 0x012, &[]),
        seg(true, 1001, 5001, 0x010, &[]),
    ];
    let pieces: Vec<(u32, &[u8])> = stream
        .chunks(cut)
        .enumerate()
        .map(|(i, p)| (5001 + (i * cut) as u32, p))
        .collect();
    let (lost_seq, lost_payload) = pieces[lost];
    for (i, (seq, p)) in pieces.iter().enumerate() {
        if i != lost {
            frames.push(seg(false, *seq, 1001, 0x018, p));
        }
        if i > lost && i <= lost + 3 {
            frames.push(seg(true, 1001, lost_seq, 0x010, &[]));
        }
        if i == lost + after {
            frames.push(seg(false, lost_seq, 1001, 0x018, lost_payload));
        }
    }
    frames
}

/// The generated conversations, by name.
fn scenarios() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let a = rec(23, &[0; 3000]);
    let b = rec(23, &[0; 30]);
    let app = rec(23, &[0; 100]);
    let ccs = rec(20, &[1]);
    let mut v = Vec::new();
    // A record across three segments, records after it, a header cut
    // short.
    let s = [&a[..], &b, &a, &b, &b].concat();
    let cuts = [0, 1000, 2000, 3050, 6070, 6080, s.len()];
    let span: Vec<_> = cuts
        .windows(2)
        .map(|w| server(s[w[0]..w[1]].to_vec()))
        .collect();
    v.push(("span", conversation(443, true, &span)));
    // The same stream with segments lost, resent and out of order.
    let s = [&a[..], &b, &a, &b].concat();
    let cuts = [0, 1000, 2000, 3050, 4050, 5000, s.len()];
    let at: Vec<_> = cuts
        .windows(2)
        .map(|w| (false, Some(w[0] as u32), s[w[0]..w[1]].to_vec()))
        .collect();
    let pick = |order: &[usize]| order.iter().map(|&i| at[i].clone()).collect::<Vec<_>>();
    v.push((
        "resent inside a record put together",
        conversation(443, true, &pick(&[0, 1, 2, 1, 3, 4, 5])),
    ));
    v.push((
        "resent first segment",
        conversation(443, true, &pick(&[0, 0, 1, 2, 3, 4, 5])),
    ));
    v.push((
        "resent before the record ends",
        conversation(443, true, &pick(&[0, 1, 1, 2, 3, 4, 5])),
    ));
    v.push((
        "resent segment that ended a record",
        conversation(443, true, &pick(&[0, 1, 2, 2, 3, 4, 5])),
    ));
    v.push((
        "resent first segment at the end",
        conversation(443, true, &pick(&[0, 1, 2, 3, 4, 5, 0])),
    ));
    v.push(("lost", conversation(443, true, &pick(&[0, 2, 3, 4, 5]))));
    v.push((
        "out of order",
        conversation(443, true, &pick(&[0, 2, 1, 3, 4, 5])),
    ));
    v.push((
        "capture starts inside a record",
        conversation(443, true, &pick(&[1, 2, 3, 4, 5])),
    ));
    let c = rec(23, &[0; 200]);
    let aligned: Vec<_> = (0..4).map(|i| (false, Some(i * 205), c.clone())).collect();
    v.push((
        "whole record resent",
        conversation(
            443,
            true,
            &[
                aligned[0].clone(),
                aligned[1].clone(),
                aligned[2].clone(),
                aligned[1].clone(),
                aligned[3].clone(),
            ],
        ),
    ));
    // Lost segments sent again after duplicate ACKs: inside a record whose
    // end comes before the gap is filled, and where a record ends.
    let s = [&a[..], &a, &a].concat();
    v.push((
        "gap filled after the record's end",
        fast_retransmission(&s, 500, 2, 5),
    ));
    v.push((
        "gap where a record ends",
        fast_retransmission(&s, 500, 6, 4),
    ));
    // Mid-stream on 443: bytes that are no record, then records.
    let mut junk: Vec<u8> = (1..=20).collect();
    junk.extend(&b);
    v.push((
        "starts with continuation data",
        conversation(443, false, &[server(junk), server(b.clone())]),
    ));
    // The heuristic on a port of its own (and RDP's, Kubernetes').
    let s = [&a[..], &b].concat();
    v.push((
        "heuristic",
        conversation(
            5001,
            true,
            &[
                client(s[..1000].to_vec()),
                client(s[1000..2000].to_vec()),
                client(s[2000..].to_vec()),
            ],
        ),
    ));
    v.push((
        "heuristic after other bytes",
        conversation(
            5001,
            true,
            &[client(vec![0; 10]), client(b.clone()), client(vec![0; 10])],
        ),
    ));
    v.push((
        "rdp",
        conversation(3389, false, &[server(app.clone()), client(app.clone())]),
    ));
    v.push((
        "kubernetes",
        conversation(6443, true, &[client(app.clone()), server(app.clone())]),
    ));
    v.push((
        "another protocol's port",
        conversation(5432, true, &[client(app.clone())]),
    ));
    let s = [&b[..], &b].concat();
    v.push((
        "header cut short",
        conversation(
            443,
            true,
            &[client(s[..37].to_vec()), client(s[37..].to_vec())],
        ),
    ));
    // Handshakes.
    let hello = rec_v(22, 0x0301, &client_hello(b"example.com", &[0x0304, 0x0303]));
    v.push((
        "tls 1.3",
        conversation(
            443,
            true,
            &[
                client(hello.clone()),
                server(
                    [
                        rec(22, &server_hello(true)),
                        ccs.clone(),
                        app.clone(),
                        app.clone(),
                    ]
                    .concat(),
                ),
                client([ccs.clone(), app.clone()].concat()),
                client(app.clone()),
                server(app.clone()),
                client(vec![0; 10]),
                client(rec(21, &[1, 0])),
            ],
        ),
    ));
    let cert = hs(11, &[0; 2003]);
    let ske = hs(12, &[0; 300]);
    let shd = hs(14, &[]);
    let flight = rec(
        22,
        &[server_hello(false), cert.clone(), ske.clone(), shd.clone()].concat(),
    );
    let hello12 = rec_v(22, 0x0301, &client_hello(b"fabric.example", &[0x0303]));
    v.push((
        "tls 1.2",
        conversation(
            443,
            true,
            &[
                client(hello12.clone()),
                server(flight[..1448].to_vec()),
                server(flight[1448..].to_vec()),
                client([rec(22, &hs(16, &[0; 66])), ccs.clone(), rec(22, &[0; 40])].concat()),
                server([ccs.clone(), rec(22, &[0; 40])].concat()),
                client(app.clone()),
                server(rec(21, &[0; 26])),
                server(rec(21, &[2, 40])),
                client(rec(24, &[0; 30])),
                client(rec(22, &[[1, 2, 3, 4].as_slice(), &[0; 30]].concat())),
            ],
        ),
    ));
    v.push((
        "tls 1.2, a record per message",
        conversation(
            443,
            true,
            &[
                client(hello12),
                server(
                    [
                        rec(22, &server_hello(false)),
                        rec(22, &cert),
                        rec(22, &ske),
                        rec(22, &shd),
                    ]
                    .concat(),
                ),
            ],
        ),
    ));
    v.push((
        "handshake messages of unknown types and cut short",
        conversation(
            443,
            true,
            &[
                client(app.clone()),
                client(rec(22, &[0x63, 0, 0, 2, 1, 2])),
                client(rec(22, &[hs(14, &[]), vec![0x63, 0, 0, 0]].concat())),
                client(rec(22, &[[2, 0, 0, 20].as_slice(), &[0; 4]].concat())),
            ],
        ),
    ));
    // Versions and types tshark treats apart.
    let mut bogus13 = vec![0, 3, 3, 0, 2, 9, 9];
    bogus13.extend(&app);
    v.push((
        "tls 1.3 and bytes that are no record",
        conversation(
            443,
            true,
            &[
                client(hello),
                server(rec(22, &server_hello(true))),
                client(bogus13),
                client(vec![0; 12]),
            ],
        ),
    ));
    v.push((
        "unknown record version",
        conversation(
            443,
            true,
            &[client(rec_v(23, 0x0305, &[0; 30])), client(app.clone())],
        ),
    ));
    v.push((
        "tlcp",
        conversation(
            443,
            true,
            &[client(rec_v(23, 0x0101, &[0; 30])), client(app.clone())],
        ),
    ));
    v.push((
        "connection id and unknown types",
        conversation(
            443,
            true,
            &[
                client(app.clone()),
                client(rec(25, &[0; 30])),
                client([rec(26, &[0; 30]), app.clone()].concat()),
            ],
        ),
    ));
    let mut hb_req = vec![1, 0, 5];
    hb_req.extend(b"hello");
    hb_req.extend([0; 16]);
    let mut hb_resp = hb_req.clone();
    hb_resp[0] = 2;
    v.push((
        "ssl 3.0 and heartbeats",
        conversation(
            443,
            true,
            &[
                client(rec_v(23, 0x0300, &[0; 30])),
                client([rec(26, &[0; 3]), app.clone()].concat()),
                client(rec(24, &hb_req)),
                client(rec(24, &hb_resp)),
                client(rec(24, &[0; 3])),
            ],
        ),
    ));
    v.push((
        "no session version",
        conversation(
            443,
            true,
            &[
                client(rec_v(21, 0x0203, &[0; 2])),
                client([ccs.clone(), rec(22, &[0; 40])].concat()),
                client(rec(22, &[0; 40])),
            ],
        ),
    ));
    v
}

fn write_all(dir: &Path) -> Vec<PathBuf> {
    scenarios()
        .into_iter()
        .map(|(name, frames)| {
            common::write_pcap(
                dir,
                &format!("{}.pcap", name.replace([' ', ','], "-")),
                &frames,
            )
        })
        .collect()
}

/// The capture of the scenario `name`, in a temporary folder.
fn scenario(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let frames = scenarios().into_iter().find(|(n, _)| *n == name).unwrap().1;
    let p = common::write_pcap(dir.path(), "c.pcap", &frames);
    (dir, p)
}

#[test]
fn a_record_across_segments_is_shown_where_it_ends() {
    let (_d, p) = scenario("span");
    assert_eq!(
        common::column_lines(&p, None),
        "1\tTCP\t40000 → 443 [SYN] Seq=0 Win=64240 Len=0\n\
         2\tTCP\t443 → 40000 [SYN, ACK] Seq=0 Ack=1 Win=64240 Len=0\n\
         3\tTCP\t40000 → 443 [ACK] Seq=1 Ack=1 Win=64240 Len=0\n\
         4\tTCP\t[TCP segment of a reassembled PDU]\n\
         5\tTCP\t443 → 40000 [PSH, ACK] Seq=1001 Ack=1 Win=64240 Len=1000 [TCP segment of a reassembled PDU]\n\
         6\tTLSv1.2\tApplication Data, Application Data\n\
         7\tTLSv1.2\tApplication Data\n\
         8\tTLSv1.2\tApplication Data\n\
         9\tTLSv1.2\tApplication Data\n"
    );
    let out = common::stdout_of(common::bin().arg("packets").arg(&p).args([
        "-T",
        "fields",
        "-e",
        "frame.protocols",
        "-e",
        "tls.record.length",
    ]));
    let rows: Vec<&str> = out.lines().skip(3).collect();
    assert_eq!(
        rows,
        [
            "eth:ethertype:ip:tcp:tls\t",
            "eth:ethertype:ip:tcp\t",
            "eth:ethertype:ip:tcp:tls:tls\t3000,30",
            "eth:ethertype:ip:tcp:tls:tls\t3000",
            "eth:ethertype:ip:tcp:tls\t30",
            "eth:ethertype:ip:tcp:tls\t30",
        ]
    );
}

#[test]
fn handshakes_name_their_messages_and_the_version_they_choose() {
    let (_d, p) = scenario("tls 1.3");
    let out = common::column_lines(&p, None);
    let got: Vec<&str> = out.lines().skip(3).collect();
    assert_eq!(
        got,
        [
            "4\tTLSv1\tClient Hello",
            "5\tTLSv1.3\tServer Hello, Change Cipher Spec, Application Data, Application Data",
            "6\tTLSv1.3\tChange Cipher Spec, Application Data",
            "7\tTLSv1.3\tApplication Data",
            "8\tTLSv1.3\tApplication Data",
            "9\tTLSv1.3\tContinuation Data",
            "10\tTLSv1.3\tAlert (Level: Warning, Description: Close Notify)",
        ]
    );
    let sni = common::stdout_of(common::bin().arg("packets").arg(&p).args([
        "-Y",
        "tls.handshake.extensions_server_name == \"example.com\"",
        "-T",
        "fields",
        "-e",
        "frame.number",
        "-e",
        "tls.handshake.type",
        "-e",
        "tls.record.opaque_type",
    ]));
    assert_eq!(sni, "4\t1\t\n");
    // A TLS 1.2 server's flight in one record over two segments.
    let (_d, p) = scenario("tls 1.2");
    let out = common::column_lines(&p, None);
    assert!(
        out.contains("\n5\tTCP\t[TCP segment of a reassembled PDU]\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "\n6\tTLSv1.2\tServer Hello, Certificate, Server Key Exchange, Server Hello Done\n"
        ),
        "{out}"
    );
    assert!(out.contains(
        "\n7\tTLSv1.2\tClient Key Exchange, Change Cipher Spec, Encrypted Handshake Message\n"
    ));
    assert!(out.contains("\n11\tTLSv1.2\tAlert (Level: Fatal, Description: Handshake Failure)\n"));
    let tree = common::stdout_of(common::bin().args(["packets", "-V", "-c", "6"]).arg(&p));
    for want in [
        "Transport Layer Security",
        "    TLSv1.2 Record Layer: Handshake Protocol: Multiple Handshake Messages",
        "        Content Type: Handshake (22)",
        "        Version: TLS 1.2 (0x0303)",
        "        Length: 2391",
        "        Handshake Protocol: Server Key Exchange",
        "            Handshake Type: Server Hello Done (14)",
    ] {
        assert!(tree.lines().any(|l| l == want), "{want:?} not in\n{tree}");
    }
}

#[test]
fn the_report_counts_frames_by_their_protocol_column() {
    let (_d, p) = scenario("tls 1.3");
    let out = common::stdout_of(common::bin().arg(&p));
    assert!(out.contains("TLSv1.3 6 · TCP 3 · TLSv1 1"), "{out}");
}

#[test]
fn generated_conversations_read_as_tsharks() {
    if !common::have_tshark() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let captures = write_all(dir.path());
    let fields = [
        "frame.number",
        "_ws.col.Protocol",
        "_ws.col.Info",
        "tls.record.content_type",
        "tls.record.opaque_type",
        "tls.record.version",
        "tls.record.length",
        "tls.handshake.type",
        "tls.handshake.extensions_server_name",
        "tls.alert_message.level",
        "tls.alert_message.desc",
    ];
    // Every row but those PostgreSQL's dissector takes on its port (which
    // roce-dissect does not read: a TCP line).
    let tcp_lines = ["TCP\t[", "TCP\t3", "TCP\t4", "TCP\t5", "TCP\t6"];
    let protocols: Vec<&str> = ["TLS", "SSL", "GMTLS"]
        .into_iter()
        .chain(tcp_lines)
        .collect();
    let n = common::rows_equal_tsharks(&captures, &fields, &protocols);
    assert!(n > 150, "{n} rows");
    let pg = common::column_lines(&dir.path().join("another-protocol's-port.pcap"), None);
    assert!(
        pg.ends_with("4\tTCP\t40000 → 5432 [PSH, ACK] Seq=1 Ack=1 Win=64240 Len=105\n"),
        "{pg}"
    );
    // frame.protocols, but for the segments tshark hands to its `data`
    // (roce-dissect lists no `data` under TCP).
    for c in &captures {
        let args = [
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "frame.protocols",
        ];
        let theirs = std::process::Command::new("tshark")
            .args(["-n", "-r"])
            .arg(c)
            .args(args)
            .output()
            .unwrap();
        let theirs = String::from_utf8_lossy(&theirs.stdout).into_owned();
        let ours = common::stdout_of(common::bin().arg("packets").arg(c).args(args));
        for (t, o) in theirs.lines().zip(ours.lines()) {
            if !t.ends_with(":data") {
                assert_eq!(o, t, "{}", c.display());
            }
        }
    }
    for (capture, filter) in [
        ("tls-1.3.pcap", "tls.handshake.type == 2"),
        ("tls-1.3.pcap", "tls.record.opaque_type == 23"),
        (
            "tls-1.2.pcap",
            "tls.record.content_type == 22 && tls.handshake.type == 16",
        ),
        ("tls-1.2.pcap", "tls.alert_message.desc == 40"),
        ("span.pcap", "tls"),
        ("span.pcap", "tls.record.length > 100"),
        ("lost.pcap", "tls"),
    ] {
        common::filter_selects_tsharks(&dir.path().join(capture), filter);
    }
}

#[test]
fn external_tls_frames_read_as_tsharks() {
    let captures = common::external_captures();
    if captures.is_empty() || !common::have_tshark() {
        return;
    }
    let n = common::rows_equal_tsharks(
        &captures,
        &[
            "frame.number",
            "_ws.col.Protocol",
            "_ws.col.Info",
            "frame.protocols",
            "tls.record.content_type",
            "tls.record.opaque_type",
            "tls.record.version",
            "tls.record.length",
            "tls.handshake.type",
        ],
        &["TLS", "SSL", "TCP\t[TCP segment of a reassembled PDU]"],
    );
    assert!(n >= 530, "{n} TLS frames compared");
}
