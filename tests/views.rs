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
