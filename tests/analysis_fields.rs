//! The `roce.analysis.*` fields agree with the report, flow by flow: as
//! many frames flagged `retransmission` in a flow as the report counts
//! retransmits for it, and so on, on every sample capture and on
//! generated ones; and filtering on them selects the flagged frames.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn samples(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        "clean.pcapng",
        "loss.pcap",
        "loss-receiver.ns.pcap",
        "incast.pcapng",
        "mixed.pcapng",
        "pfc-storm.pcapng",
    ]
    .iter()
    .map(|n| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("captures")
            .join(n)
    })
    .collect();
    for (scenario, seed) in [("loss", 3), ("reorder", 4), ("mixed", 5), ("incast", 6)] {
        let out = dir.join(format!("{scenario}-{seed}.pcapng"));
        common::bin()
            .args([
                "gen",
                "--scenario",
                scenario,
                "--seed",
                &seed.to_string(),
                "--qps",
                "8",
                "--messages",
                "30",
                "-o",
            ])
            .arg(&out)
            .assert()
            .success();
        v.push(out);
    }
    v
}

#[test]
fn analysis_fields_add_up_to_the_report() {
    let dir = tempfile::tempdir().unwrap();
    for path in samples(dir.path()) {
        let what = path.file_name().unwrap().to_string_lossy().to_string();
        let r: Value = serde_json::from_slice(
            &common::bin()
                .arg(&path)
                .arg("--json")
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        let lines = common::bin()
            .args(["packets", "--json"])
            .arg(&path)
            .output()
            .unwrap()
            .stdout;
        // Per flow (by src, dst, destqp as the report names them): the
        // counts of each flag.
        let mut counts: HashMap<(String, String, u64), HashMap<String, u64>> = HashMap::new();
        let mut numbers: HashMap<u64, (String, String, u64)> = HashMap::new();
        // Per flow number: each episode's PSNs.
        let mut episodes: HashMap<u64, HashMap<u64, Vec<u64>>> = HashMap::new();
        // Every round-trip and completion sample the answers carry.
        let (mut rtts, mut completions) = (Vec::new(), 0u64);
        for l in String::from_utf8_lossy(&lines).lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            let Some(a) = v.get("analysis") else { continue };
            rtts.extend(a.get("ack_rtt_ns").and_then(Value::as_u64));
            completions += u64::from(a.get("message_completion_ns").is_some());
            let Some(n) = a["flow"].as_u64() else {
                continue;
            };
            let key = numbers.entry(n).or_insert_with(|| {
                let (src, dst) = match (&v["ip"], &v["grh"]) {
                    (ip, _) if ip.is_object() => (
                        ip["src"].as_str().unwrap().to_string(),
                        ip["dst"].as_str().unwrap().to_string(),
                    ),
                    (_, g) => (
                        g["sgid"].as_str().unwrap().to_string(),
                        g["dgid"].as_str().unwrap().to_string(),
                    ),
                };
                (src, dst, v["bth"]["destqp"].as_u64().unwrap())
            });
            // The number is the report's: flows[n - 1] is this flow.
            let f = &r["flows"][(n - 1) as usize];
            assert_eq!(
                (
                    f["src"].as_str().unwrap(),
                    f["dst"].as_str().unwrap(),
                    f["destqp"].as_u64().unwrap()
                ),
                (key.0.as_str(), key.1.as_str(), key.2),
                "{what}: flow {n}"
            );
            if let Some(e) = a.get("episode").and_then(Value::as_u64) {
                assert_eq!(
                    a["retransmission"], true,
                    "{what}: an episode on a replay only"
                );
                episodes
                    .entry(n)
                    .or_default()
                    .entry(e)
                    .or_default()
                    .push(v["bth"]["psn"].as_u64().unwrap());
            }
            let c = counts.entry(key.clone()).or_default();
            for (k, val) in a.as_object().unwrap() {
                if val == &Value::Bool(true) {
                    *c.entry(k.clone()).or_default() += 1;
                }
            }
            *c.entry("packets".into()).or_default() += 1;
        }
        let flows = r["flows"].as_array().unwrap();
        assert_eq!(flows.len(), numbers.len(), "{what}: flows");
        // The answers' samples are the report's round trips, all flows
        // together: as many, the same least and greatest; and at most one
        // completion per answer.
        let timing: Vec<&Value> = flows
            .iter()
            .map(|f| &f["timing"])
            .filter(|t| t.is_object())
            .collect();
        let stat = |k: &'static str, s: &'static str| -> Vec<u64> {
            timing.iter().filter_map(|t| t[k][s].as_u64()).collect()
        };
        assert_eq!(
            rtts.len() as u64,
            stat("rtt", "count").iter().sum::<u64>(),
            "{what}: RTT samples"
        );
        assert_eq!(
            rtts.iter().min().copied(),
            stat("rtt", "min_ns").into_iter().min(),
            "{what}"
        );
        assert_eq!(
            rtts.iter().max().copied(),
            stat("rtt", "max_ns").into_iter().max(),
            "{what}"
        );
        assert!(
            completions <= stat("completion", "count").iter().sum::<u64>(),
            "{what}"
        );
        if what == "loss.pcap" {
            assert!(!rtts.is_empty() && completions > 0, "{what}: no timing");
        }
        for f in flows {
            let key = (
                f["src"].as_str().unwrap().to_string(),
                f["dst"].as_str().unwrap().to_string(),
                f["destqp"].as_u64().unwrap(),
            );
            let c = counts
                .get(&key)
                .unwrap_or_else(|| panic!("{what}: no frames of {key:?}"));
            let get = |k: &str| c.get(k).copied().unwrap_or(0);
            assert_eq!(
                get("packets"),
                f["packets"].as_u64().unwrap(),
                "{what} {key:?}: packets"
            );
            for (flag, figure) in [
                ("retransmission", "retransmits"),
                ("out_of_order", "out_of_order"),
                ("duplicate", "duplicates"),
                ("psn_reuse", "psn_reuse"),
                ("ce", "ecn_ce"),
                ("cnp", "cnps"),
                ("bad_icrc", "bad_icrc"),
            ] {
                assert_eq!(
                    get(flag),
                    f[figure].as_u64().unwrap(),
                    "{what} {key:?}: {flag} vs {figure}"
                );
            }
            let naks = f["naks"].as_object().unwrap();
            let rnr = naks.get("rnr").and_then(Value::as_u64).unwrap_or(0);
            let all: u64 = naks.values().filter_map(Value::as_u64).sum();
            assert_eq!(get("rnr_nak"), rnr, "{what} {key:?}: RNR NAKs");
            assert_eq!(get("nak"), all - rnr, "{what} {key:?}: NAKs");
        }
        // Episode numbers: 1..=retransmit_episodes in each flow, each
        // episode's replayed PSNs within the PSNs the report gives it.
        for (i, f) in flows.iter().enumerate() {
            let eps = episodes.remove(&(i as u64 + 1)).unwrap_or_default();
            let count = f["retransmit_episodes"].as_u64().unwrap();
            let mut seen: Vec<u64> = eps.keys().copied().collect();
            seen.sort();
            assert_eq!(
                seen,
                (1..=count).collect::<Vec<_>>(),
                "{what}: flow {}",
                i + 1
            );
            for (e, psns) in eps {
                let Some(ep) = f["episodes"].get((e - 1) as usize) else {
                    continue;
                };
                let (lo, hi) = (
                    ep["first_psn"].as_u64().unwrap(),
                    ep["last_psn"].as_u64().unwrap(),
                );
                for p in psns {
                    let within = if lo <= hi {
                        (lo..=hi).contains(&p)
                    } else {
                        p >= lo || p <= hi
                    };
                    assert!(
                        within,
                        "{what}: flow {} episode {e}: PSN {p} outside {lo}..{hi}",
                        i + 1
                    );
                }
            }
        }
        // A filter on a flag selects exactly the flagged frames.
        let flagged = String::from_utf8_lossy(&lines)
            .lines()
            .filter(|l| l.contains("\"retransmission\":true"))
            .count();
        let sel = common::bin()
            .args([
                "packets",
                "-Y",
                "roce.analysis.retransmission",
                "-T",
                "fields",
                "-e",
                "frame.number",
            ])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&sel.stdout).lines().count(),
            flagged,
            "{what}"
        );
    }
}

/// `roce.analysis.flags` (as `tcp.analysis.flags`) selects exactly the
/// frames with at least one analysis flag, on every sample.
#[test]
fn analysis_flags_is_any_flag() {
    let dir = tempfile::tempdir().unwrap();
    let every = roce_dissect::fields::FIELDS
        .iter()
        .filter(|f| {
            f.name.starts_with("roce.analysis.")
                && f.name != "roce.analysis.flags"
                && f.ty == roce_dissect::fields::FieldType::Presence
        })
        .map(|f| f.name)
        .collect::<Vec<_>>();
    assert!(every.len() >= 11, "{every:?}");
    let any = every.join(" || ");
    let frames = |path: &Path, filter: &str| {
        let out = common::bin()
            .args([
                "packets",
                "-T",
                "fields",
                "-e",
                "frame.number",
                "-Y",
                filter,
            ])
            .arg(path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{filter}");
        String::from_utf8(out.stdout).unwrap()
    };
    let mut flagged = 0;
    for path in samples(dir.path()) {
        let got = frames(&path, "roce.analysis.flags");
        assert_eq!(got, frames(&path, &any), "{}", path.display());
        flagged += got.lines().count();
    }
    assert!(flagged > 100, "{flagged} frames flagged in all");
}
