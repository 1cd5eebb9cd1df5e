//! `roce-dissect fabric` on `gen --scenario deadlock` links: the pause
//! graph, the deadlock (even seeds) or none (odd seeds) and the pause
//! propagation equal the truth, for 20 seeds and three formats.

mod common;

use roce_dissect::synth::OutFormat;
use roce_dissect::synth::deadlock::generate;

#[test]
fn deadlocks_and_propagation_agree_with_the_truth_for_20_seeds() {
    let mut found = 0;
    for seed in 1..=20u64 {
        let fmt = [
            OutFormat::PcapMicros,
            OutFormat::PcapNanos,
            OutFormat::PcapNg,
        ][seed as usize % 3];
        let run = generate(seed, fmt).unwrap();
        let d = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        for (name, bytes) in &run.captures {
            let p = d.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            paths.push(p);
        }
        let topo = d.path().join("topology.json");
        std::fs::write(&topo, &run.topology).unwrap();
        let out = common::bin()
            .arg("fabric")
            .args(&paths)
            .arg("--topology")
            .arg(&topo)
            .arg("--json")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let f = &v["fabric"];
        let t = serde_json::to_value(&run.truth).unwrap();
        assert_eq!(f["deadlocks"], t["deadlocks"], "seed {seed}");
        assert_eq!(f["propagation"], t["propagation"], "seed {seed}");
        let mut edges: Vec<serde_json::Value> = f["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| serde_json::json!([e["paused"], e["by"], e["paused_ns"]]))
            .collect();
        edges.sort_by_key(|e| e.to_string());
        assert_eq!(serde_json::Value::Array(edges), t["edges"], "seed {seed}");
        assert_eq!(
            run.truth.deadlocks.len(),
            usize::from(seed % 2 == 0),
            "seed {seed}"
        );
        found += run.truth.deadlocks.len();
        // Without the topology each MAC is a device: no ring closes.
        let out = common::bin()
            .arg("fabric")
            .args(&paths)
            .arg("--json")
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["fabric"]["deadlocks"],
            serde_json::json!([]),
            "seed {seed}"
        );
    }
    assert_eq!(found, 10);
}

#[test]
fn gen_writes_the_links_and_fabric_says_deadlock_in_text() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("ring");
    let out = common::bin()
        .args(["gen", "--scenario", "deadlock", "--seed", "4", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut links: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("link-"))
        .collect();
    links.sort();
    assert_eq!(links.len(), 3);
    let out = common::bin()
        .arg("fabric")
        .args(&links)
        .arg("--topology")
        .arg(dir.join("topology.json"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("DEADLOCK prio 3: A → B → C → A"), "{text}");
    // A bad topology is one line and exit 2.
    std::fs::write(dir.join("bad.json"), "{\"devices\": 3}").unwrap();
    let out = common::bin()
        .arg("fabric")
        .args(&links)
        .arg("--topology")
        .arg(dir.join("bad.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
}
