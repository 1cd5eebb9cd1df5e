//! Snapshots of the per-packet views: summary lines, the -V header tree
//! with hex, and JSON Lines, over generated frames covering every opcode,
//! PFC and PAUSE; plus the golden ICRC verdicts of the external captures.

mod common;

use roce_dissect::synth::frame::{cm_frame, cm_mad};
use roce_dissect::synth::samples::{self, MAC_A, MAC_B, networks};
use roce_dissect::wire::mad::CmMessage;

fn sample_capture(dir: &std::path::Path) -> std::path::PathBuf {
    let mut frames = samples::every_opcode(1);
    let mad = cm_mad(
        9,
        &CmMessage::Req {
            local_comm_id: 0x1111,
            service_id: 0x0106_0000_0000_4791,
            local_qpn: 0x42,
            starting_psn: 777,
            mtu: 5,
            nvme: None,
        },
    );
    frames.push(roce_dissect::synth::conn::bytes(&cm_frame(
        MAC_A,
        MAC_B,
        networks(0xc000)[0],
        3,
        &mad,
    )));
    common::write_pcap(dir, "views.pcap", &frames)
}

#[test]
fn summary_lines() {
    let d = tempfile::tempdir().unwrap();
    let p = sample_capture(d.path());
    let out = common::bin().arg("packets").arg(&p).output().unwrap();
    assert!(out.status.success());
    insta::assert_snapshot!("summary_lines", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn header_trees_and_hex() {
    let d = tempfile::tempdir().unwrap();
    let p = sample_capture(d.path());
    let out = common::bin()
        // The Arrival Time is in the local zone: this snapshot in UTC.
        .env("TZ", "UTC")
        .args(["packets", "-V", "-x"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // A representative set: RC WRITE First, READ response with AETH, UD
    // with DETH + ImmDt over IPv6, v1 ACK, CNP, PFC, PAUSE, CM REQ.
    let blocks: Vec<&str> = text.split("\n\n").collect();
    let pick = |needle: &str| {
        blocks
            .iter()
            .find(|b| b.lines().next().is_some_and(|l| l.contains(needle)))
            .unwrap_or_else(|| panic!("no frame matching {needle}"))
            .to_string()
    };
    let chosen = [
        pick("RoCEv2 190 RC RDMA WRITE First"),
        pick("RC RDMA READ Response First"),
        pick("fd00::1 → fd00::2 RoCEv2").to_string(),
        pick("RoCEv1 74 RC Acknowledge"),
        pick(" CNP QP="),
        pick("PFC enable"),
        pick("PAUSE 1616"),
        pick("CM ConnectRequest"),
    ];
    insta::assert_snapshot!("header_trees", chosen.join("\n\n"));
}

#[test]
fn json_lines() {
    let d = tempfile::tempdir().unwrap();
    let p = sample_capture(d.path());
    let out = common::bin()
        .args(["packets", "--json"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let tmp = d.path().join("o.jsonl");
    std::fs::write(&tmp, &text).unwrap();
    common::contract_check("packets", &tmp);
    let every_8th: Vec<&str> = text.lines().step_by(8).collect();
    insta::assert_snapshot!("json_lines", every_8th.join("\n"));
}

#[test]
fn external_icrc_golden_values() {
    // The golden ICRCs of roce-facts.md, and every RoCE frame of the
    // external captures verifies; one flipped bit does not.
    let Some(dir) = common::external_dir() else {
        return;
    };
    let cnp = common::json_packets(&dir.join("hex__scapy-roce-uts__cnp_connectx4lx.pcap"));
    assert_eq!(cnp[0]["icrc"]["value"], 0x82fd002au64);
    assert_eq!(cnp[0]["icrc"]["valid"], true);
    assert_eq!(cnp[0]["bth"]["becn"], true);
    assert_eq!(cnp[0]["bth"]["transport"], "CNP");
    let v1 = common::json_packets(&dir.join("hex__scapy-roce-uts__rocev1_connectx_write_ack.pcap"));
    assert_eq!(v1[0]["icrc"]["value"], 0xe3d856bbu64);
    assert_eq!(v1[1]["icrc"]["value"], 0x25f0c038u64);
    assert_eq!(v1[0]["roce"], "v1");
    assert_eq!(v1[0]["payload_len"], 5);
    assert_eq!(v1[0]["bth"]["padcnt"], 3);
    let mut total = 0;
    let mut flipped_checked = 0;
    for cap in common::external_captures() {
        let file = roce_dissect::capture::CaptureFile::open(&cap).unwrap();
        for f in file.frames().unwrap() {
            let f = f.unwrap();
            let p = roce_dissect::dissect::dissect(&f, &Default::default());
            let Some(icrc) = p.icrc else { continue };
            total += 1;
            assert_eq!(
                icrc.valid,
                Some(true),
                "{} frame {}",
                cap.display(),
                f.number
            );
            // Flip one bit in the payload or headers (not a variant field).
            let mut bytes = f.data.to_vec();
            let at = usize::from(p.offsets.bth) + 9; // a PSN byte
            bytes[at] ^= 0x10;
            let g = roce_dissect::capture::Frame { data: &bytes, ..f };
            let q = roce_dissect::dissect::dissect(&g, &Default::default());
            assert_eq!(
                q.icrc.unwrap().valid,
                Some(false),
                "{} frame {}",
                cap.display(),
                f.number
            );
            flipped_checked += 1;
        }
    }
    assert_eq!(total, 420);
    assert_eq!(flipped_checked, 420);
}

#[test]
fn ipv6_extension_headers_and_other_protocols_are_named() {
    let Some(dir) = common::external_dir() else {
        return;
    };
    let cap = dir.join("oferby-proxy__roce.pcap");
    let out = common::bin()
        .args(["packets", "-V", "-c", "3"])
        .arg(&cap)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "ICMPv6 90 Multicast Listener Report Message v2",
        "Next Header: IPv6 Hop-by-Hop Option (0)",
        "    IPv6 Hop-by-Hop Option\n        Next Header: ICMPv6 (58)",
        "Router Alert (0x05), length 2: MLD (0)",
        "ICMPv6 62 Router Solicitation",
    ] {
        assert!(text.contains(needle), "{needle}\n{text}");
    }
    assert!(!text.contains("EtherType 0x86dd"), "{text}");
    // IPv4 identification, flags and checksum, and the BTH's reserved bits.
    let out = common::bin()
        .args(["packets", "-V", "--roce-only", "-c", "1"])
        .arg(&cap)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "Identification: 0x",
        "Flags: 0x40, Don't fragment",
        "Header Checksum: 0x",
        "Reserved (6 bits): 16",
        "Reserved (7 bits): 0",
    ] {
        assert!(text.contains(needle), "{needle}\n{text}");
    }
    // ARP and the spanning tree in the rxe captures.
    let out = common::bin()
        .arg("packets")
        .arg(dir.join("sanderw71-SoftRoce__FirstSuccesfullRping.pcapng"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("ARP 42 Who has 192.168.178.117? Tell 192.168.178.121"),
        "{text}"
    );
    assert!(
        text.contains("STP 60 Conf. Root = 36864/0/00:0e:58:c3:34:82  Cost = 0  Port = 0x8001"),
        "{text}"
    );
    assert!(
        !text.contains("EtherType 0x"),
        "every frame's protocol is named"
    );
}

#[test]
fn roce_behind_an_ipv6_hop_by_hop_header_is_decoded() {
    use roce_dissect::capture::{Frame, LinkType};
    // A RoCE v2 frame over IPv6, then a Hop-by-Hop header (PadN) spliced in
    // after the IPv6 header.
    let frames = samples::every_opcode(2);
    let f = frames
        .iter()
        .find(|f| f[12..14] == [0x86, 0xdd] && f[20] == 17)
        .expect("an IPv6 RoCE frame");
    let mut g = f[..54].to_vec();
    g[20] = 0; // next header: Hop-by-Hop
    let plen = u16::from_be_bytes([g[18], g[19]]) + 8;
    g[18..20].copy_from_slice(&plen.to_be_bytes());
    g.extend_from_slice(&[17, 0, 1, 4, 0, 0, 0, 0]); // next UDP, PadN of 4
    g.extend_from_slice(&f[54..]);
    let frame = Frame {
        number: 1,
        ts_ns: 0,
        len: g.len() as u32,
        caplen: g.len() as u32,
        link: LinkType::Ethernet,
        if_speed: None,
        interface: 0,
        data: &g,
        offset: 0,
    };
    let p = roce_dissect::dissect::dissect(&frame, &Default::default());
    assert!(p.bth.is_some(), "{p:?}");
    assert_eq!(p.udp.unwrap().dport, 4791);
    let ext: Vec<_> = p.ip6_exts().collect();
    assert_eq!(
        (ext.len(), ext[0].header, ext[0].next, ext[0].len),
        (1, 0, 17, 8)
    );
    let tree = roce_dissect::output::tree::render_tree(&roce_dissect::output::tree::header_tree(
        &p,
        100_000_000_000,
        None,
    ));
    assert!(tree.contains("IPv6 Hop-by-Hop Option"), "{tree}");
    assert!(tree.contains("PadN (0x01), length 4"), "{tree}");
    assert!(tree.contains("Base Transport Header"), "{tree}");
}

/// `packets -V` writes each frame's tree straight to its output; the TUI
/// keeps the nodes. Both must be the same tree, line for line, on every
/// frame of the sample captures and of an NVMe-oF capture (with each kind
/// of capsule role).
#[test]
fn written_trees_are_the_nodes_rendered() {
    use roce_dissect::analysis::marks::NvmeRole;
    use roce_dissect::capture::CaptureFile;
    use roce_dissect::dissect::{DissectOptions, dissect};
    use roce_dissect::output::tree::{
        header_tree, nvme_tree, render_tree, write_header_tree, write_nvme_tree,
    };
    let d = tempfile::tempdir().unwrap();
    let nvme = d.path().join("nvme.pcap");
    common::bin()
        .args(["gen", "--scenario", "nvme", "--seed", "3", "-o"])
        .arg(&nvme)
        .assert()
        .success();
    let mut paths = common::captures_in(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/captures"
    )));
    paths.push(sample_capture(d.path()));
    paths.push(nvme);
    let roles = [
        NvmeRole::Command {
            qid: Some(0),
            fabrics: true,
        },
        NvmeRole::Command {
            qid: None,
            fabrics: false,
        },
        NvmeRole::Response {
            qid: Some(1),
            latency_ns: Some(12_345),
            fabrics: true,
        },
        NvmeRole::Response {
            qid: None,
            latency_ns: None,
            fabrics: false,
        },
        NvmeRole::Data {
            qid: Some(3),
            cid: 9,
            code: 0x02,
            offset: Some(4096),
        },
        NvmeRole::Data {
            qid: None,
            cid: 9,
            code: 0x101,
            offset: None,
        },
        NvmeRole::DataRequest {
            qid: Some(1),
            cid: 4,
            code: 0x01,
        },
        NvmeRole::Queue { qid: None },
    ];
    let (mut frames, mut nvme_nodes) = (0, 0);
    for p in &paths {
        let file = CaptureFile::open(p).unwrap();
        for f in file.frames().unwrap() {
            let f = f.unwrap();
            let pkt = dissect(&f, &DissectOptions::default());
            let mut lines = Vec::new();
            write_header_tree(&pkt, 25_000_000_000, None, &mut lines);
            let nodes = header_tree(&pkt, 25_000_000_000, None);
            assert!(!nodes.is_empty());
            assert_eq!(
                String::from_utf8(lines).unwrap(),
                render_tree(&nodes),
                "{}: frame {}",
                p.display(),
                f.number
            );
            for role in roles {
                let mut lines = Vec::new();
                write_nvme_tree(&pkt, role, &mut lines);
                let nodes = nvme_tree(&pkt, role);
                nvme_nodes += nodes.len();
                assert_eq!(String::from_utf8(lines).unwrap(), render_tree(&nodes));
            }
            frames += 1;
        }
    }
    assert!(frames > 2_000, "{frames}");
    assert!(nvme_nodes > 1_000, "{nvme_nodes}");
}
