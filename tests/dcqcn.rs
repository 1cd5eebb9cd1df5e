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
                .find(|f| f.src == t.src && f.dst == t.dst && f.destqp == t.destqp)
                .unwrap();
            assert_eq!(f.cc, Some(t.cc), "{what}: {} → {}", t.src, t.dst);
            reacted += t.cc.reacted;
            ignored += t.cc.ignored;
            // The sender that reacts is back at line rate 60-120 µs after
            // each CNP (give or take a window's start); the other one
            // never slowed down.
            if t.cc.reacted > 0 {
                assert!(t.cc.recoveries >= t.cc.reacted - 1, "{what}: {:?}", t.cc);
                let (mean, max) = (t.cc.recovery_ns.unwrap(), t.cc.recovery_max_ns.unwrap());
                assert!((55_000..=125_000).contains(&mean), "{what}: {mean}");
                assert!(max <= 125_000, "{what}: {max}");
                recoveries += t.cc.recoveries;
            } else {
                assert_eq!((t.cc.recoveries, t.cc.recovery_ns), (0, None), "{what}");
            }
        }
        for t in &truth.flows {
            let f = r
                .flows
                .iter()
                .find(|f| f.src == t.src && f.dst == t.dst && f.destqp == t.destqp)
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
            2,
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
