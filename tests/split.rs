//! An analysis split by host pair and joined reports what one analysis of
//! every frame reports, byte for byte, or says why it cannot be joined:
//! every `gen` scenario over several seeds and shapes, with and without the
//! throughput series, the samples in `captures/`, and the external captures
//! when they are there.

mod common;

use std::path::Path;

use roce_dissect::analysis::split::{Unsplit, analyze_split};
use roce_dissect::analysis::{AnalysisOptions, Analyzer, CaptureInfo, Facts, Limits};
use roce_dissect::capture::CaptureFile;
use roce_dissect::dissect::{DissectOptions, dissect};
use roce_dissect::synth::scenario::{GenOptions, Scenario, generate};
use roce_dissect::synth::{CaptureWriter, OutFormat};

fn facts_of(file: &CaptureFile) -> Vec<Facts> {
    let opts = DissectOptions::default();
    let frames = file.frames().expect("a capture");
    frames
        .flatten()
        .map(|f| Facts::of(&dissect(&f, &opts)))
        .collect()
}

fn json(an: Analyzer) -> String {
    let r = an.finish(CaptureInfo {
        file: "x".into(),
        ..CaptureInfo::default()
    });
    serde_json::to_string_pretty(&r).unwrap()
}

fn whole(opts: &AnalysisOptions, facts: &[Facts]) -> String {
    let mut an = Analyzer::new(opts.clone());
    for f in facts {
        an.observe(f);
    }
    json(an)
}

/// The split analysis in 2, 3 and 4 parts against the whole: equal when
/// joined. Returns why it was not, if it was not (the same for every
/// number of parts).
fn compare(what: &str, opts: &AnalysisOptions, facts: &[Facts]) -> Option<Unsplit> {
    let want = whole(opts, facts);
    let mut why = None;
    for parts in [1, 2, 3, 4] {
        match analyze_split(opts.clone(), facts, parts) {
            Ok(an) => {
                let got = json(an);
                if got != want {
                    let line = (want.lines().zip(got.lines()))
                        .position(|(a, b)| a != b)
                        .unwrap_or(0);
                    let around = |s: &str| {
                        let l: Vec<&str> = s.lines().collect();
                        l[line.saturating_sub(12)..(line + 6).min(l.len())].join("\n")
                    };
                    panic!(
                        "{what}, {parts} parts: the joined report differs at line {line}:\n\
                         --- one analysis\n{}\n--- split\n{}",
                        around(&want),
                        around(&got)
                    );
                }
                assert!(
                    why.is_none(),
                    "{what}: joined in {parts} parts, not in fewer"
                );
            }
            Err(e) => {
                assert!(
                    why.is_none_or(|w| w == e),
                    "{what}: {parts} parts: {e}, fewer: {why:?}"
                );
                why = Some(e);
            }
        }
    }
    why
}

fn gen_facts(opts: GenOptions) -> Vec<Facts> {
    let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapNg).unwrap();
    generate(opts, &mut |ts, f| w.write(ts, f)).unwrap();
    facts_of(&CaptureFile::from_bytes(w.into_inner()))
}

fn shapes(scenario: Scenario, seed: u64) -> GenOptions {
    GenOptions {
        scenario,
        seed,
        qps: [6, 2, 17, 40][seed as usize % 4],
        messages: 30,
        size: [8192, 3000, 700, 20_000][seed as usize % 4],
        pmtu: [4096, 1024, 2048, 1024][seed as usize % 4],
        loss: 0.02,
        reorder: 0.02,
        ecn: 0.1,
        ack_every: [None, Some(2), None, Some(3), Some(1)][seed as usize % 5],
        ..GenOptions::default()
    }
}

#[test]
fn every_scenario_joins_to_the_whole_report() {
    let series = AnalysisOptions {
        timeline_series: true,
        ..AnalysisOptions::default()
    };
    let fine = AnalysisOptions {
        timeline_bin_ns: Some(1_000),
        ..AnalysisOptions::default()
    };
    let mut joined = 0;
    let mut unsplit = Vec::new();
    for scenario in Scenario::EVERY {
        for seed in 0..6 {
            let facts = gen_facts(shapes(scenario, seed));
            for (name, opts) in [
                ("default", &AnalysisOptions::default()),
                ("series", &series),
                ("fixed bins", &fine),
            ] {
                let what = format!("{scenario:?} seed {seed} {name}");
                match compare(&what, opts, &facts) {
                    None => joined += 1,
                    Some(why) => unsplit.push((what, why)),
                }
            }
        }
    }
    // NVMe-oF is not split; every other scenario is.
    for (what, why) in &unsplit {
        assert!(
            what.starts_with("Nvme") && *why == Unsplit::Nvme,
            "{what}: not joined: {why}"
        );
    }
    assert!(joined >= 8 * 6 * 3, "joined {joined}, not: {unsplit:?}");
}

#[test]
fn budgets_spent_across_parts_are_applied_or_refused() {
    let few = |limits: Limits| AnalysisOptions {
        limits,
        ..AnalysisOptions::default()
    };
    let events = |total: u64, per_flow: usize| Limits {
        events_total: total,
        events_per_flow: per_flow,
        ..Limits::default()
    };
    // Events and episodes are applied in file order when the parts join:
    // the budget runs out in one part or another, before or after a
    // flow's own list is full.
    let joined = [
        events(0, 1000),
        events(1, 1000),
        events(3, 1000),
        events(40, 1000),
        events(40, 2),
        events(7, 3),
        events(1000, 1),
    ];
    let refused = [
        (
            Limits {
                flows: 2,
                ..Limits::default()
            },
            Unsplit::Flows,
        ),
        (
            Limits {
                timing_samples: 2,
                ..Limits::default()
            },
            Unsplit::TimingSamples,
        ),
    ];
    for seed in 0..4 {
        for scenario in [Scenario::Mixed, Scenario::Loss, Scenario::Incast] {
            let facts = gen_facts(shapes(scenario, seed));
            for limits in joined {
                let what = format!("{scenario:?} seed {seed} {limits:?}");
                assert_eq!(compare(&what, &few(limits), &facts), None, "{what}");
            }
            for (limits, want) in refused {
                let what = format!("{scenario:?} seed {seed} {want:?}");
                assert_eq!(compare(&what, &few(limits), &facts), Some(want));
            }
        }
    }
}

fn compare_file(path: &Path) -> Option<Unsplit> {
    let file = CaptureFile::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let facts = facts_of(&file);
    compare(
        &path.display().to_string(),
        &AnalysisOptions::default(),
        &facts,
    )
}

#[test]
fn the_sample_captures_join_to_the_whole_report() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut joined = 0;
    for path in common::captures_in(&dir) {
        if compare_file(&path).is_none() {
            joined += 1;
        }
    }
    assert!(joined >= 4, "only {joined} samples joined");
}

#[test]
fn external_captures_join_or_say_why() {
    for path in common::external_captures() {
        if let Some(why) = compare_file(&path) {
            eprintln!("{}: analysed on one thread: {why}", path.display());
        }
    }
}

/// Flows of several host pairs sending to a paused port: the pause
/// intervals name the same flows in the same order once joined, and a
/// frame loop that would note more flows than `--max-flows` stops noting
/// them and refuses the join at once.
#[test]
fn flows_sent_while_paused_are_named_as_one_analysis_names_them() {
    use roce_dissect::analysis::split::FrameLoop;
    use roce_dissect::synth::conn::{Conn, bytes};
    use roce_dissect::synth::frame::{NetSpec, build_pfc};
    use std::net::Ipv4Addr;

    const SWITCH: [u8; 6] = [0x02, 0xee, 0, 0, 0, 1];
    let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapNg).unwrap();
    let t0 = 1_700_000_000_000_000_000u64;
    let mut pfc = Vec::new();
    build_pfc(SWITCH, 0x08, [0, 0, 0, 65535, 0, 0, 0, 0], &mut pfc);
    w.write(t0, &pfc).unwrap();
    // 24 flows from 8 hosts (DSCP 26: priority 3), 3 frames each.
    for round in 0..3u32 {
        for i in 0..24u32 {
            let c = Conn {
                mac_a: [2, 0, 0, 0, 0, 0x10 + (i % 8) as u8],
                mac_b: SWITCH,
                net: NetSpec::V2Ipv4 {
                    src: Ipv4Addr::new(10, 0, 0, 10 + (i % 8) as u8),
                    dst: Ipv4Addr::new(10, 0, 1, 1),
                    dscp: 26,
                    ecn: 2,
                    ttl: 64,
                    sport: 0xc001,
                },
                qp_a: 0x11,
                qp_b: 0x100 + i,
                vlan: None,
            };
            let ts = t0 + 1_000 * u64::from(1 + round * 24 + i);
            w.write(ts, &bytes(&c.req(0x04, 1 + round, 64))).unwrap();
        }
    }
    let mut xon = Vec::new();
    build_pfc(SWITCH, 0x08, [0; 8], &mut xon);
    w.write(t0 + 200_000, &xon).unwrap();
    let facts = facts_of(&CaptureFile::from_bytes(w.into_inner()));

    let opts = AnalysisOptions::default();
    assert_eq!(compare("paused flows", &opts, &facts), None);
    let r = whole(&opts, &facts);
    let r: serde_json::Value = serde_json::from_str(&r).unwrap();
    let iv = &r["pfc"]["intervals"][0];
    assert_eq!(iv["flows_total"], 24, "{iv:#}");
    assert_eq!(iv["flows"].as_array().unwrap().len(), 16);

    let few = AnalysisOptions {
        limits: Limits {
            flows: 10,
            ..Limits::default()
        },
        ..AnalysisOptions::default()
    };
    let mut frames = FrameLoop::new(few, 2);
    for f in &facts {
        let mut f = *f;
        frames.frame(&mut f);
    }
    assert_eq!(frames.unjoinable(), Some(Unsplit::Flows));
}
