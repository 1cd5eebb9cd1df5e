//! `gen --scenario pfc-headroom` against its truth: every pause's
//! reaction (what the paused sender still sent, when it stopped, the
//! verdict) and each port's summary, for 20 seeds and three formats.

mod common;

use roce_dissect::analysis::AnalysisOptions;
use roce_dissect::analysis::pfc::ReactionLimits;
use roce_dissect::capture::CaptureFile;
use roce_dissect::synth::scenario::{GenOptions, Scenario, Truth, generate};
use roce_dissect::synth::{CaptureWriter, OutFormat};
use serde_json::Value;

fn generated(seed: u64, fmt: OutFormat) -> (Vec<u8>, Truth) {
    let mut w = CaptureWriter::new(Vec::new(), fmt).unwrap();
    let opts = GenOptions {
        scenario: Scenario::PfcHeadroom,
        seed,
        messages: 12,
        pmtu: [4096, 1024, 2048][seed as usize % 3],
        ts_resolution_ns: fmt.ts_resolution_ns(),
        ..GenOptions::default()
    };
    let truth = generate(opts, &mut |ts, f| w.write(ts, f)).unwrap();
    (w.into_inner(), truth)
}

fn report(bytes: Vec<u8>, reaction: ReactionLimits) -> Value {
    let file = CaptureFile::from_bytes(bytes);
    let opts = AnalysisOptions {
        reaction,
        ..AnalysisOptions::default()
    };
    let r = roce_dissect::pipeline::analyze(&file, &Default::default(), opts, None).unwrap();
    serde_json::to_value(&r).unwrap()
}

#[test]
fn every_pause_reaction_agrees_with_the_truth_for_20_seeds() {
    let (mut ok, mut late, mut none) = (0, 0, 0);
    for seed in 1..=20u64 {
        let fmt = [
            OutFormat::PcapMicros,
            OutFormat::PcapNanos,
            OutFormat::PcapNg,
        ][seed as usize % 3];
        let (bytes, truth) = generated(seed, fmt);
        let what = format!("seed {seed} ({fmt:?})");
        let r = report(bytes.clone(), ReactionLimits::default());
        assert_eq!(r["capture"]["frames"], truth.frames, "{what}");
        let got = r["pfc"]["intervals"].as_array().unwrap();
        let want = &truth.pfc.intervals;
        let reactions = truth.reactions.as_ref().unwrap();
        assert_eq!(got.len(), want.len(), "{what}");
        for (k, (g, (w, re))) in got
            .iter()
            .zip(want.iter().zip(&reactions.intervals))
            .enumerate()
        {
            let w = serde_json::to_value(w).unwrap();
            for key in ["src_mac", "priority", "start_ns", "end_ns", "ended_by"] {
                assert_eq!(g[key], w[key], "{what}: interval {k} {key}");
            }
            assert_eq!(
                g["reaction"],
                serde_json::to_value(re).unwrap(),
                "{what}: interval {k}"
            );
            match re.verdict.as_str() {
                "ok" => ok += 1,
                "late" => late += 1,
                _ => none += 1,
            }
        }
        for (mac, s) in &reactions.summary {
            let row = r["pfc"]["summary"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["src_mac"] == mac.as_str())
                .unwrap();
            assert_eq!(
                row["reaction"],
                serde_json::to_value(s).unwrap(),
                "{what}: {mac}"
            );
        }
        // A configured headroom: exceeded where the bytes were more.
        let h = ReactionLimits {
            headroom_bytes: Some(20_000),
            ..ReactionLimits::default()
        };
        let r = report(bytes, h);
        for g in r["pfc"]["intervals"].as_array().unwrap() {
            let bytes = g["reaction"]["bytes"].as_u64().unwrap();
            assert_eq!(g["reaction"]["exceeded"], bytes > 20_000, "{what}");
        }
    }
    assert!(ok > 100 && late > 100 && none >= 20, "{ok} {late} {none}");
}

#[test]
fn the_text_report_names_the_late_sender() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("hr.pcap");
    let out = common::bin()
        .args(["gen", "--scenario", "pfc-headroom", "--seed", "2", "-o"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = common::bin().arg(&p).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("kept sending"), "{text}");
}
