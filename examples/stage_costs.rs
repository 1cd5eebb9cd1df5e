//! Where a frame's time goes, stage by stage, on one core with the capture
//! in memory: `cargo run --release --example stage_costs FILE [FRAMES]`.
//!
//! Builds every frame's facts into a buffer (as the chunked reader does,
//! with and without the ICRC), then has the analysis observe them with
//! every stage on, with each stage off in turn, and with none (the base:
//! flow lookup, counters, PSN tracking, events). A stage's cost is the
//! time with everything less the time without it. Runs the configurations
//! in rounds (`PASSES`, default 7) and keeps each one's best; then times
//! building the report from the full analysis, on one thread and on every
//! core as the command does (a thread for each 4 096 flows, up to the
//! cores). At most FRAMES frames (default 1 000 000) are read, so memory
//! stays bounded.
use std::time::Instant;

use roce_dissect::analysis::{AnalysisOptions, Analyzer, CaptureInfo, Facts, Stage, Stages};
use roce_dissect::dissect::DissectOptions;

mod common;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: stage_costs FILE [FRAMES]");
        std::process::exit(2);
    };
    let limit: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let passes: usize = std::env::var("PASSES")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(7);
    let file = common::open("stage_costs", &path);
    let frames = common::frames("stage_costs", &path, &file, limit);
    let n = frames.len();
    let per_frame = |s: f64| s / n as f64 * 1e9;

    // Decoding, with and without the ICRC, into chunk-sized buffers.
    // (Timed into one reused buffer; then kept, untimed, for observing.)
    let build = |opts: &DissectOptions, keep: Option<&mut Vec<Facts>>| {
        common::build_facts(&frames, opts, keep)
    };
    let no_icrc = DissectOptions {
        check_icrc: false,
        ..DissectOptions::default()
    };
    let (mut decode, mut decode_no_icrc) = (f64::MAX, f64::MAX);
    for _ in 0..passes {
        // The machine kind this runs on gives back page cache left idle
        // for seconds: a first walk brings the capture back untimed.
        build(&no_icrc, None);
        decode_no_icrc = decode_no_icrc.min(build(&no_icrc, None));
        decode = decode.min(build(&DissectOptions::default(), None));
    }
    let mut facts: Vec<Facts> = Vec::with_capacity(n);
    build(&DissectOptions::default(), Some(&mut facts));

    // Observing, per set of stages.
    let mut configs = vec![("every stage".to_string(), Stages::all())];
    for s in Stage::ALL {
        configs.push((format!("without {s}"), Stages::all().without(s)));
    }
    configs.push(("base (no stage)".to_string(), Stages::none()));
    let mut observe = |stages: Stages| {
        let mut an = Analyzer::new(AnalysisOptions {
            stages,
            ..AnalysisOptions::default()
        });
        let t = Instant::now();
        // As the chunked reader does (with its cache hints on thousands
        // of flows).
        an.observe_run(&mut facts, 0);
        let secs = t.elapsed().as_secs_f64();
        (secs, an)
    };
    let mut best = vec![f64::MAX; configs.len()];
    for _ in 0..passes {
        for (i, (_, stages)) in configs.iter().enumerate() {
            let (secs, an) = observe(*stages);
            best[i] = best[i].min(secs);
            drop(std::hint::black_box(an));
        }
    }
    // The report, on one thread and on every core (as the command builds
    // it), best of up to 3 each: each needs an analysis of its own.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut finish = [f64::MAX; 2];
    let mut flows = 0;
    for _ in 0..passes.min(3) {
        for (i, threads) in [1, cores].into_iter().enumerate() {
            let (_, mut an) = observe(Stages::all());
            an.set_report_threads(threads);
            let t = Instant::now();
            let report = an.finish(CaptureInfo::default());
            finish[i] = finish[i].min(t.elapsed().as_secs_f64());
            flows = report.flows.len();
        }
    }

    println!("{path}: {n} frames, {flows} flows, {passes} passes, best of each");
    println!("{:<34} {:>9}", "step", "ns/frame");
    println!(
        "{:<34} {:>9.1}",
        "decode to facts, ICRC included",
        per_frame(decode)
    );
    println!(
        "{:<34} {:>9.1}",
        "decode to facts, --no-icrc",
        per_frame(decode_no_icrc)
    );
    println!("{:<34} {:>9.1}", "observe, every stage", per_frame(best[0]));
    let base = best[best.len() - 1];
    println!("{:<34} {:>9.1}", "  base (no stage)", per_frame(base));
    for (i, s) in Stage::ALL.iter().enumerate() {
        println!(
            "{:<34} {:>9.1}",
            format!("  {s}"),
            per_frame(best[0] - best[i + 1])
        );
    }
    println!(
        "{:<34} {:>9.1}   ({:.1} ms)",
        "report from the analysis",
        per_frame(finish[0]),
        finish[0] * 1e3
    );
    println!(
        "{:<34} {:>9.1}   ({:.1} ms; up to {cores} threads, one a 4 096 flows)",
        "  on every core",
        per_frame(finish[1]),
        finish[1] * 1e3
    );
}
