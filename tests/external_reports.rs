//! What the report says about each external capture (real NICs, rxe, a
//! home-made stack). Skipped when ../shared/captures-external is absent.

mod common;

use serde_json::Value;

fn report(name: &str) -> Option<Value> {
    let dir = common::external_dir()?;
    let out = common::bin()
        .arg(dir.join(name))
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}");
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

fn total(r: &Value, k: &str) -> u64 {
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f[k].as_u64().unwrap())
        .sum()
}

#[test]
fn every_external_capture_reports_sensibly() {
    let Some(dir) = common::external_dir() else {
        return;
    };
    for p in common::external_captures() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let r = report(&name).unwrap();
        assert_eq!(r["capture"]["icrc_errors"], 0, "{name}");
        assert_eq!(r["capture"]["malformed_frames"], 0, "{name}");
        assert_eq!(total(&r, "missing"), 0, "{name}");
        assert_eq!(total(&r, "out_of_order"), 0, "{name}");
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), serde_json::to_vec(&r).unwrap()).unwrap();
        common::contract_check("report", tmp.path());
        // The rxe/home-made stack's "stall" and "faillire" cases: a SEND
        // takes the last PSN of a READ that spans three 1024-byte PMTUs (the
        // requester counted two: it assumed 2048). Not a retransmission: a
        // PSN reuse, with the hint that says so.
        assert_eq!(total(&r, "retransmits"), 0, "{name}");
        let hint_kinds = common::hint_kinds(&r);
        if name.contains("2400_stall") || name.contains("3072_faillire") {
            assert_eq!(total(&r, "psn_reuse"), 1, "{name}");
            let f = &r["flows"][0];
            assert_eq!(f["psn_reuse"], 1, "{name}");
            assert_eq!(f["retransmit_episodes"], 0, "{name}");
            let ev = &f["events"][0];
            assert_eq!(ev["kind"], "psn_reuse", "{name}");
            let (frame, psn) = if name.contains("2400") {
                (147, 7_488_513)
            } else {
                (70, 4_445_928)
            };
            assert_eq!(
                (ev["frame"].as_u64(), ev["psn"].as_u64()),
                (Some(frame), Some(psn)),
                "{name}"
            );
            assert_eq!(hint_kinds, ["psn_reuse"], "{name}");
        } else {
            assert_eq!(total(&r, "psn_reuse"), 0, "{name}");
            assert!(!hint_kinds.contains(&"timeout"), "{name}: {hint_kinds:?}");
        }
        // CM captures pair their connection by CM.
        if r["capture"]["cm_messages"].as_u64().unwrap() >= 3 {
            assert!(
                r["connections"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|c| c["paired_by"] == "cm"),
                "{name}"
            );
            assert_eq!(r["capture"]["one_way_flows"], 0, "{name}");
        }
    }
    let _ = dir;
    // The Huawei capture has no CM: the connection is paired from ACK PSNs.
    let r = report("oferby-proxy__roce.pcap").unwrap();
    assert_eq!(r["connections"][0]["paired_by"], "traffic");
    assert_eq!(r["capture"]["roce_frames"], 105);
    // The ConnectX CNP is counted on its own flow.
    let r = report("hex__scapy-roce-uts__cnp_connectx4lx.pcap").unwrap();
    assert_eq!(total(&r, "cnps"), 1);
    // 802.3x PAUSE: 65535 quanta at 100G expire after 335.539 µs.
    let r = report("hex__netdev-list__ax88772_8023x_pause.pcap").unwrap();
    let iv = &r["pfc"]["intervals"][0];
    assert_eq!(
        (
            iv["priority"].clone(),
            iv["duration_ns"].clone(),
            iv["ended_by"].clone()
        ),
        (Value::Null, 335_539.into(), "expiry".into())
    );
    assert_eq!(iv["src_mac"], "00:00:00:00:00:00");
    // The pause starts with the last frame: none of it lies inside the
    // capture, so its share of the capture is 0 (it was 33 553.9 %).
    assert_eq!(r["pfc"]["summary"][0]["fraction"], 0.0);
    assert_eq!(r["pfc"]["summary"][0]["paused_ns"], 335_539);
}
