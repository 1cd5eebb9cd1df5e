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
        // reuses the last PSN of a READ that spans three PMTUs.
        let retx = total(&r, "retransmits");
        if name.contains("2400_stall") || name.contains("3072_faillire") {
            assert_eq!(retx, 1, "{name}");
            let ep = r["flows"][0]["episodes"][0].clone();
            assert_eq!(ep["trigger"], "timeout", "{name}");
        } else {
            assert_eq!(retx, 0, "{name}");
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
