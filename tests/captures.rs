//! The sample captures in `captures/`: each report agrees with its truth
//! file, and the text report of one is a snapshot.

mod common;

use std::path::Path;

use serde_json::Value;

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("captures")
}

#[test]
fn every_sample_matches_its_truth() {
    let mut n = 0;
    for e in std::fs::read_dir(dir()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.ends_with(".pcap") || name.ends_with(".pcapng")) {
            continue;
        }
        let stem = name.split('.').next().unwrap();
        let truth: Value = serde_json::from_slice(
            &std::fs::read(dir().join(format!("{stem}.truth.json"))).unwrap(),
        )
        .unwrap();
        let out = common::bin().arg(&p).arg("--json").output().unwrap();
        assert!(out.status.success(), "{name}");
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["capture"]["frames"], truth["frames"], "{name}");
        let flows = r["flows"].as_array().unwrap();
        assert_eq!(
            flows.len(),
            truth["flows"].as_array().unwrap().len(),
            "{name}"
        );
        for t in truth["flows"].as_array().unwrap() {
            let f = flows
                .iter()
                .find(|f| {
                    f["src"] == t["src"] && f["dst"] == t["dst"] && f["destqp"] == t["destqp"]
                })
                .unwrap();
            for k in [
                "packets",
                "retransmits",
                "out_of_order",
                "missing",
                "ecn_ce",
                "cnps",
                "naks",
            ] {
                assert_eq!(f[k], t[k], "{name}: {k}");
            }
        }
        let iv: Vec<(Value, Value, Value, Value)> = r["pfc"]["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["priority"].clone(),
                    i["start_ns"].clone(),
                    i["end_ns"].clone(),
                    i["ended_by"].clone(),
                )
            })
            .collect();
        let mut want: Vec<(Value, Value, Value, Value)> = truth["pfc"]["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["priority"].clone(),
                    i["start_ns"].clone(),
                    i["end_ns"].clone(),
                    i["ended_by"].clone(),
                )
            })
            .collect();
        want.sort_by_key(|w| (w.1.as_u64(), w.0.as_u64()));
        assert_eq!(iv, want, "{name}");
        // And the shapes of the contract.
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), &out.stdout).unwrap();
        common::contract_check("report", tmp.path());
        n += 1;
    }
    assert_eq!(n, 6);
}

#[test]
fn text_report_snapshot() {
    let out = common::bin()
        .arg(dir().join("loss-receiver.ns.pcap"))
        .arg("--events")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let text = text.replace(env!("CARGO_MANIFEST_DIR"), "<repo>");
    insta::assert_snapshot!("loss_receiver_report", text);
}

#[test]
fn json_report_snapshot() {
    let out = common::bin()
        .arg(dir().join("pfc-storm.pcapng"))
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut r: Value = serde_json::from_slice(&out.stdout).unwrap();
    r["capture"]["file"] = "pfc-storm.pcapng".into();
    insta::assert_json_snapshot!("pfc_storm_report", r);
}
