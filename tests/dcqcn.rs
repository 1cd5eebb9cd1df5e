//! `gen --scenario dcqcn` against its truth: for each flow whose sender got
//! CNPs, every CNP judged as the README says (`flows[].cc`), for 20 seeds
//! and three formats; the text report and the hint name the sender that
//! ignores its CNPs.

mod common;

use roce_dissect::analysis::AnalysisOptions;
use roce_dissect::capture::CaptureFile;
use roce_dissect::synth::scenario::{GenOptions, Scenario, generate};
use roce_dissect::synth::{CaptureWriter, OutFormat};

#[test]
fn every_cnp_is_judged_as_the_truth_says_for_20_seeds() {
    let (mut reacted, mut ignored, mut recoveries) = (0, 0, 0);
    for seed in 1..=20u64 {
        let fmt = [
            OutFormat::PcapMicros,
            OutFormat::PcapNanos,
            OutFormat::PcapNg,
        ][seed as usize % 3];
        let mut w = CaptureWriter::new(Vec::new(), fmt).unwrap();
        let opts = GenOptions {
            scenario: Scenario::Dcqcn,
            seed,
            messages: 6,
            pmtu: [4096, 1024, 2048][seed as usize % 3],
            ts_resolution_ns: fmt.ts_resolution_ns(),
            ..GenOptions::default()
        };
        let truth = generate(opts, &mut |ts, f| w.write(ts, f)).unwrap();
        let file = CaptureFile::from_bytes(w.into_inner());
        let r = roce_dissect::pipeline::analyze(
            &file,
            &Default::default(),
            AnalysisOptions::default(),
            None,
        )
        .unwrap();
        let what = format!("seed {seed} ({fmt:?})");
        assert_eq!(r.capture.frames, truth.frames, "{what}");
        for t in truth.cc.as_ref().unwrap() {
            let f = r
                .flows
                .iter()
                .find(|f| *f.src == *t.src && *f.dst == *t.dst && f.destqp == t.destqp)
                .unwrap();
            assert_eq!(
                f.cc.as_deref(),
                Some(&t.cc),
                "{what}: {} → {}",
                t.src,
                t.dst
            );
            reacted += t.cc.reacted;
            ignored += t.cc.ignored;
            // The first sender is back at line rate 60-120 µs after each
            // CNP (give or take a window's start); the second never slowed
            // down; the third follows DCQCN (checked by plan dcqcn --from).
            if t.src == "10.0.2.1" {
                assert!(2 * t.cc.recoveries >= t.cc.reacted, "{what}: {:?}", t.cc);
                let (mean, max) = (t.cc.recovery_ns.unwrap(), t.cc.recovery_max_ns.unwrap());
                assert!((55_000..=125_000).contains(&mean), "{what}: {mean}");
                assert!(max <= 125_000, "{what}: {max}");
                recoveries += t.cc.recoveries;
            } else if t.src == "10.0.2.2" {
                assert_eq!((t.cc.recoveries, t.cc.recovery_ns), (0, None), "{what}");
            }
        }
        for t in &truth.flows {
            let f = r
                .flows
                .iter()
                .find(|f| *f.src == *t.src && *f.dst == *t.dst && f.destqp == t.destqp)
                .unwrap();
            assert_eq!(
                (f.packets, f.ecn_ce, f.cnps, f.retransmits),
                (t.packets, t.ecn_ce, t.cnps, t.retransmits),
                "{what}"
            );
        }
        // Flows without CNPs have no cc.
        assert_eq!(
            r.flows.iter().filter(|f| f.cc.is_some()).count(),
            3,
            "{what}"
        );
    }
    assert!(reacted >= 80 && ignored >= 80, "{reacted} {ignored}");
    assert!(recoveries >= 70, "{recoveries}");
}

#[test]
fn the_text_report_and_the_hint_name_the_sender_that_ignores_cnps() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("dcqcn.pcap");
    let out = common::bin()
        .args([
            "gen",
            "--scenario",
            "dcqcn",
            "--seed",
            "4",
            "--messages",
            "5",
            "-o",
        ])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = common::bin().arg(&p).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Congestion control: CE → CNP → rate cut"),
        "{text}"
    );
    assert!(text.contains("CNPs ignored"), "{text}");
    let json = common::bin().arg(&p).arg("--json").output().unwrap();
    let r: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let hint = r["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "cnp_ignored")
        .unwrap();
    assert_eq!(hint["count"], 4, "the first CNP has no history");
}

/// `plan dcqcn --from`'s JSON for a flow of `capture`.
fn replay(capture: &std::path::Path, flow: &str, params: &str) -> serde_json::Value {
    let out = common::bin()
        .args(["plan", "dcqcn", "--from"])
        .arg(capture)
        .args(["--flow", flow, "--params", params, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn plan_dcqcn_from_a_capture_tells_the_sender_that_follows_dcqcn_from_the_others() {
    let d = tempfile::tempdir().unwrap();
    for seed in [2u64, 7, 11] {
        let p = d.path().join(format!("dcqcn-{seed}.pcapng"));
        let out = common::bin()
            .args(["gen", "--scenario", "dcqcn", "--messages", "12", "--seed"])
            .arg(seed.to_string())
            .arg("-o")
            .arg(&p)
            .output()
            .unwrap();
        assert!(out.status.success());
        // The third sender runs the paper's reaction point from its CNPs:
        // the replay expects what it sent, row by row.
        let r = replay(&p, "10.0.2.3,10.0.3.1,0x5005", "paper");
        assert_eq!(r["cnps"], 12, "seed {seed}");
        assert_eq!(r["line_from"], "observed");
        let (m, within, rows) = (
            r["mean_ratio"].as_f64().unwrap(),
            r["rows_within_10pct"].as_u64().unwrap(),
            r["rows_compared"].as_u64().unwrap(),
        );
        assert!((m - 1.0).abs() < 0.05, "seed {seed}: {m}");
        assert!(
            rows >= 20 && within * 10 >= rows * 9,
            "seed {seed}: {within}/{rows}"
        );
        // Each row's CNPs add up to the flow's.
        let n: u64 = r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["cnps"].as_u64().unwrap())
            .sum();
        assert_eq!(n, 12);
        assert_eq!(r["cc"]["cnps"], 12);
        // The sender that ignores its CNPs sends far above the controller;
        // the one that halves for 60-120 us comes back much faster than
        // the paper's timer lets it.
        let ignores = replay(&p, "10.0.2.2,10.0.3.1,0x5003", "paper");
        assert!(ignores["mean_ratio"].as_f64().unwrap() > 1.5, "seed {seed}");
        let steps = replay(&p, "10.0.2.1,10.0.3.1,0x5001", "paper");
        assert!(steps["mean_ratio"].as_f64().unwrap() > 1.2, "seed {seed}");
        // --speed sets the start rate.
        let out = common::bin()
            .args(["plan", "dcqcn", "--from"])
            .arg(&p)
            .args([
                "--flow",
                "10.0.2.3,10.0.3.1,0x5005",
                "--speed",
                "25G",
                "--json",
            ])
            .output()
            .unwrap();
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (r["line_bps"].as_f64(), &r["line_from"]),
            (Some(25e9), &serde_json::json!("--speed"))
        );
    }
    // The text names the verdict; a flow that is not there is a one-line
    // error naming the flows whose senders got CNPs.
    let p = d.path().join("dcqcn-2.pcapng");
    let out = common::bin()
        .args(["plan", "dcqcn", "--params", "paper", "--from"])
        .arg(&p)
        .args(["--flow", "10.0.2.3,10.0.3.1,0x5005"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("The flow followed the controller."), "{text}");
    assert!(text.contains("█ observed  ─ expected"), "{text}");
    let out = common::bin()
        .args(["plan", "dcqcn", "--from"])
        .arg(&p)
        .args(["--flow", "10.0.2.9,10.0.3.1,1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("10.0.2.3,10.0.3.1,0x5005"), "{err}");
    // --cnp and --from do not go together; --from needs --flow.
    let out = common::bin()
        .args(["plan", "dcqcn", "--cnp", "0us", "--from"])
        .arg(&p)
        .args(["--flow", "10.0.2.3,10.0.3.1,0x5005"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = common::bin()
        .args(["plan", "dcqcn", "--from"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
