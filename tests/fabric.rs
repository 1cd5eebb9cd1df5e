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
        // The same links as one pcapng, an interface each: the same
        // report, the links named by file and interface.
        let links: Vec<(&str, &[u8])> = run
            .captures
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let one = d.path().join("one.pcapng");
        std::fs::write(
            &one,
            roce_dissect::synth::pcap::pcapng_of_links(&links).unwrap(),
        )
        .unwrap();
        let out = common::bin()
            .arg("fabric")
            .arg(&one)
            .arg("--topology")
            .arg(&topo)
            .arg("--json")
            .output()
            .unwrap();
        let mut w: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let names: Vec<String> = (0..3).map(|i| format!("{}#if{i}", one.display())).collect();
        assert_eq!(w["fabric"]["links"].as_array().map(Vec::len), Some(3));
        let mut expected = f.clone();
        // Rename the per-file links to the interfaces they became.
        let text = serde_json::to_string(&expected).unwrap();
        let mut text = text;
        for (i, p) in paths.iter().enumerate() {
            text = text.replace(&p.display().to_string(), &names[i]);
        }
        expected = serde_json::from_str(&text).unwrap();
        w["fabric"]["links"] = serde_json::Value::Null;
        expected["links"] = serde_json::Value::Null;
        assert_eq!(w["fabric"], expected, "seed {seed}");
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

/// A capture cut mid-record: fabric reads what is there and says so, the
/// file named (as the report does).
#[test]
fn a_cut_capture_is_read_and_said() {
    let d = tempfile::tempdir().unwrap();
    let whole =
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/loss.pcap"))
            .unwrap();
    let cut = d.path().join("cut.pcap");
    std::fs::write(&cut, &whole[..5000]).unwrap();
    let out = common::bin().arg("fabric").arg(&cut).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    let want = format!(
        "roce-dissect: warning: {}: capture cut mid-record at byte 4522",
        cut.display()
    );
    assert!(stderr.starts_with(&want), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("Fabric: 1 link, ")
    );
}

/// The pause graph of `gen --scenario deadlock --seed SEED`, links named
/// by file.
fn fabric_report(seed: u64) -> roce_dissect::fabric::FabricReport {
    let run = generate(seed, OutFormat::PcapNg).unwrap();
    let d = tempfile::tempdir().unwrap();
    let mut links = Vec::new();
    for (name, bytes) in &run.captures {
        let p = d.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let read =
            roce_dissect::cli::fabric_cmd::read_links(&p, &Default::default(), Default::default())
                .unwrap();
        for mut l in read {
            l.name = name.clone();
            links.push(l);
        }
    }
    let topo = roce_dissect::fabric::Topology::parse(&run.topology).unwrap();
    roce_dissect::fabric::analyse(&links, &topo, 100_000_000)
}

fn draw(v: &roce_dissect::tui::fabric_view::FabricView, w: u16, h: u16) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    t.draw(|f| v.render(f)).unwrap();
    t.backend().to_string()
}

#[test]
fn the_tui_draws_the_pause_graph_with_the_deadlock_in_red() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use roce_dissect::tui::fabric_view::FabricView;
    let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
    let mut v = FabricView::new(fabric_report(2));
    insta::assert_snapshot!("fabric_tui_80x24", draw(&v, 80, 24));
    assert!(!v.handle_key(key(KeyCode::Down)));
    assert_eq!(v.selected, 1);
    let big = draw(&v, 160, 45);
    insta::assert_snapshot!("fabric_tui_160x45", big);
    assert!(big.contains("Seen in: link-bc.pcapng"), "{big}");
    // Every edge of the ring is in the deadlock: drawn red.
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    t.draw(|f| v.render(f)).unwrap();
    let buf = t.backend().buffer();
    let red = (0..buf.area.height)
        .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
        .filter(|&(x, y)| buf[(x, y)].fg == ratatui::style::Color::Red)
        .count();
    assert!(red > 20, "{red} red cells");
    // The selection stops at the ends; q and Esc quit.
    for _ in 0..5 {
        v.handle_key(key(KeyCode::Down));
    }
    assert_eq!(v.selected, 2);
    assert!(v.handle_key(key(KeyCode::Char('q'))));
    assert!(v.handle_key(key(KeyCode::Esc)));
    // No deadlock on odd seeds: no red, "No deadlock".
    let v = FabricView::new(fabric_report(3));
    let s = draw(&v, 100, 30);
    assert!(
        s.contains("no deadlock") && s.contains("No deadlock"),
        "{s}"
    );
    // Nothing paused: a sentence, not an empty frame.
    let empty = roce_dissect::fabric::analyse(&[], &Default::default(), 100_000_000);
    let s = draw(&FabricView::new(empty), 80, 24);
    assert!(s.contains("No device paused another"), "{s}");
}
