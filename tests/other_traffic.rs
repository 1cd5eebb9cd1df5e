//! The report's other traffic: frames beside RoCE and pauses by protocol,
//! TCP conversations with tshark's analysis of them (checked against
//! tshark in `tshark_diff`), the hint of TCP retransmissions between RoCE
//! hosts, `-Y`, the conversation budget, both analyses of several
//! threads, the text report and the HTML page.

mod common;

use std::net::Ipv4Addr;

use roce_dissect::synth::conn::{Conn, bytes};
use roce_dissect::synth::frame::NetSpec;
use roce_dissect::synth::samples;
use serde_json::Value;

/// RoCE between 10.0.0.11 and 10.0.0.12: the hosts of the first TCP
/// conversation of `tcp_analysis_cases` (its second is 10.0.0.13 to .14).
fn roce_frames() -> Vec<Vec<u8>> {
    let c = Conn {
        mac_a: samples::MAC_A,
        mac_b: samples::MAC_B,
        net: NetSpec::V2Ipv4 {
            src: Ipv4Addr::new(10, 0, 0, 11),
            dst: Ipv4Addr::new(10, 0, 0, 12),
            dscp: 26,
            ecn: 2,
            ttl: 64,
            sport: 0xc001,
        },
        qp_a: 0x11,
        qp_b: 0x22,
        vlan: None,
    };
    (0..4)
        .map(|psn| bytes(&c.send(true, psn, &[7; 64])))
        .collect()
}

/// The TCP cases, then RoCE between the first conversation's hosts (after
/// them, so the TCP frames keep their microsecond spacing).
fn capture(dir: &std::path::Path, with_roce: bool) -> std::path::PathBuf {
    let mut frames = samples::tcp_analysis_cases();
    if with_roce {
        frames.extend(roce_frames());
    }
    common::write_pcap(
        dir,
        if with_roce { "mixed.pcap" } else { "tcp.pcap" },
        &frames,
    )
}

fn report(args: &[&str]) -> Value {
    serde_json::from_str(&common::stdout_of(common::bin().args(args).arg("--json"))).unwrap()
}

fn streams(r: &Value) -> Vec<u64> {
    r["other"]["tcp_conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["stream"].as_u64().unwrap())
        .collect()
}

#[test]
fn tcp_conversations_and_their_trouble() {
    let tmp = tempfile::tempdir().unwrap();
    let p = capture(tmp.path(), true);
    let path = p.to_str().unwrap();
    let r = report(&[path]);
    let tmp_json = tmp.path().join("r.json");
    std::fs::write(&tmp_json, serde_json::to_vec(&r).unwrap()).unwrap();
    common::contract_check("report", &tmp_json);
    let o = &r["other"];
    let tcp = samples::tcp_analysis_cases().len() as u64;
    assert_eq!(o["frames"], tcp);
    assert_eq!(
        o["protocols"],
        serde_json::json!([{"protocol": "TCP", "frames": tcp}])
    );
    let convs = o["tcp_conversations"].as_array().unwrap();
    assert_eq!(streams(&r), [0, 1]);
    let c = &convs[0];
    assert_eq!(
        (c["a"].as_str(), c["b"].as_str()),
        (Some("10.0.0.11:50000"), Some("10.0.0.12:5201"))
    );
    assert_eq!(c["syns"], 2);
    // The handshake: the SYN, 1 µs to the SYN/ACK, 1 µs to the ACK.
    assert_eq!(c["handshake_rtt_ns"], 2000);
    let a = &c["analysis"];
    assert_eq!(a["fast_retransmission"], 1);
    assert_eq!(a["spurious_retransmission"], 1);
    assert!(a["retransmission"].as_u64().unwrap() >= 2, "{a}");
    assert_eq!(a["duplicate_ack"], 2);
    assert_eq!(a["out_of_order"], 1);
    assert_eq!(a["lost_segment"], 1);
    // Its ACKs that end a segment, a microsecond or more after it.
    assert_eq!(
        c["ack_rtt"],
        serde_json::json!({"count": 4, "min_ns": 1000, "mean_ns": 2250, "max_ns": 5000})
    );
    // Frames and bytes each way add up.
    for k in ["frames", "bytes"] {
        let sum =
            c[format!("{k}_a_to_b")].as_u64().unwrap() + c[format!("{k}_b_to_a")].as_u64().unwrap();
        assert_eq!(c[k].as_u64(), Some(sum), "{k}");
    }
    // Retransmissions between the RoCE hosts: the hint, with their count;
    // the second conversation's hosts carry no RoCE.
    let hint = r["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "tcp_retransmission")
        .unwrap_or_else(|| panic!("{}", r["hints"]));
    assert_eq!(hint["count"], a["retransmission"]);
    // Without the RoCE, no such hint: the capture has no RoCE at all.
    let alone = report(&[capture(tmp.path(), false).to_str().unwrap()]);
    assert_eq!(common::hint_kinds(&alone), ["no_roce"]);
    assert_eq!(alone["other"]["tcp_conversations"], o["tcp_conversations"]);
}

#[test]
fn filters_budgets_and_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let p = capture(tmp.path(), true);
    let path = p.to_str().unwrap();
    let whole = report(&[path]);
    // -Y keeps the conversations with a matching frame; the protocol
    // counts stay the capture's.
    let one = report(&[path, "-Y", "tcp.stream == 1"]);
    assert_eq!(streams(&one), [1]);
    assert_eq!(one["other"]["protocols"], whole["other"]["protocols"]);
    assert_eq!(
        one["other"]["tcp_conversations"][0],
        whole["other"]["tcp_conversations"][1]
    );
    assert_eq!(streams(&report(&[path, "-Y", "bth"])), Vec::<u64>::new());
    // --max-flows 1: one conversation followed, the other counted.
    let capped = report(&[path, "--max-flows", "1"]);
    assert_eq!(streams(&capped), [0]);
    assert_eq!(capped["other"]["tcp_conversations_dropped"], 1);
    assert!(capped["other"]["tcp_untracked_frames"].as_u64().unwrap() > 0);
    let warnings = capped["capture"]["warnings"].to_string();
    assert!(
        warnings.contains("1 TCP conversations beyond --max-flows 1"),
        "{warnings}"
    );
    // Read by every core, analysed by two threads: the same report.
    for args in [["-j", "2"], ["--analysis-threads", "2"]] {
        let r = report(&[path, args[0], args[1]]);
        assert_eq!(r["other"], whole["other"], "{args:?}");
        assert_eq!(r["hints"], whole["hints"], "{args:?}");
    }
    // A capture with RoCE only has no `other`.
    let roce = common::write_pcap(tmp.path(), "roce.pcap", &roce_frames());
    let r = report(&[roce.to_str().unwrap()]);
    assert!(r.get("other").is_none(), "{}", r["other"]);
}

#[test]
fn text_and_html() {
    let tmp = tempfile::tempdir().unwrap();
    let p = capture(tmp.path(), true);
    let text = common::stdout_of(common::bin().arg(&p));
    let n = samples::tcp_analysis_cases().len();
    let section: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Other traffic"))
        .take(6)
        .collect();
    assert_eq!(
        section[0],
        format!("Other traffic ({n} frames beside RoCE and pauses)")
    );
    assert_eq!(section[1], format!("  TCP {n}"));
    assert_eq!(
        section[2],
        "  2 TCP conversations (most trouble first; A: the first frame's sender)"
    );
    assert!(section[3].starts_with("  stream  frames"), "{}", section[3]);
    // Stream 0 has the trouble: first, with its handshake of 2 µs.
    let row: Vec<&str> = section[4].split_whitespace().collect();
    assert_eq!(row[0], "0");
    // Its handshake of 2 µs, its ACKs' mean round trip, A → B.
    assert_eq!(
        &row[row.len() - 7..],
        [
            "2.0",
            "µs",
            "2.2",
            "µs",
            "10.0.0.11:50000",
            "→",
            "10.0.0.12:5201"
        ]
    );
    assert!(section[5].starts_with("       1 "), "{}", section[5]);
    // 80 columns: the endpoints wrap under the figures, nothing is cut.
    let narrow = common::stdout_of(common::bin().arg(&p).args(["--width", "80"]));
    assert!(
        narrow
            .lines()
            .all(|l| l.chars().count() <= 80 || !l.contains(' '))
    );
    assert!(narrow.contains("10.0.0.12:5201"));
    // The page has the section and a row per conversation.
    let html = tmp.path().join("r.html");
    common::stdout_of(common::bin().arg(&p).arg("--html").arg(&html));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Other traffic</h2>"));
    assert_eq!(page.matches("10.0.0.12:5201</td>").count(), 1);
    assert_eq!(page.matches("10.0.0.14:5201</td>").count(), 1);
}

/// A switch port's BPDUs read as tshark words them, without tshark: the
/// root, its cost and the port, a topology change, a TCN, and one cut
/// short; the tree has the LLC header and the BPDU.
#[test]
fn spanning_tree_bpdus_are_named() {
    let frame = |bpdu: &[u8]| {
        let mut f = vec![1, 0x80, 0xc2, 0, 0, 0, 0, 0x0e, 0x58, 0xc3, 0x34, 0x82];
        f.extend(((bpdu.len() + 3) as u16).to_be_bytes());
        f.extend([0x42, 0x42, 0x03]);
        f.extend(bpdu);
        f.resize(f.len().max(60), 0);
        f
    };
    let mut conf = vec![
        0, 0, 0, 0, 0x01, 0x90, 0x00, 0, 0x0e, 0x58, 0xc3, 0x34, 0x82,
    ];
    conf.extend([0, 0, 0, 4]);
    conf.extend([0x90, 0x00, 0, 0x0e, 0x58, 0xc3, 0x34, 0x82, 0x80, 0x01]);
    conf.extend([0, 0, 6, 0, 1, 0, 4, 0]);
    let tmp = tempfile::tempdir().unwrap();
    let cap = common::write_pcap(
        tmp.path(),
        "stp.pcap",
        &[frame(&conf), frame(&[0, 0, 0, 0x80]), frame(&conf[..20])],
    );
    let out = common::stdout_of(
        common::bin()
            .arg("packets")
            .arg(&cap)
            .args([
                "-T",
                "fields",
                "-e",
                "_ws.col.Protocol",
                "-e",
                "_ws.col.Info",
            ])
            .args(["-e", "frame.protocols", "-e", "stp.root.cost"]),
    );
    assert_eq!(
        out,
        "STP\tConf. TC + Root = 36864/0/00:0e:58:c3:34:82  Cost = 4  Port = 0x8001\teth:llc:stp\t4\n\
         STP\tTopology Change Notification\teth:llc:stp\t\n\
         STP\t[Malformed Packet]\teth:llc:stp\t\n"
    );
    let tree = common::stdout_of(
        common::bin()
            .arg("packets")
            .arg(&cap)
            .args(["-V", "-c", "1"]),
    );
    for line in [
        "IEEE 802.3 Ethernet, Src: 00:0e:58:c3:34:82, Dst: 01:80:c2:00:00:00",
        "    Length: 38",
        "Logical-Link Control",
        "Spanning Tree Protocol",
        "    Root Identifier: 36864 / 0 / 00:0e:58:c3:34:82",
        "    Max Age: 6",
    ] {
        assert!(tree.lines().any(|l| l == line), "{line:?} in\n{tree}");
    }
}
