//! How far splitting the analysis by host pair could go:
//! `cargo run --release --example partition_bound FILE [FRAMES]`.
//!
//! The analysis observes frames on one thread, in file order, while the
//! other cores decode. Every frame of one connection (its requests, ACKs,
//! NAKs, CNPs and CM messages) travels between one pair of hosts, so
//! analyses of disjoint sets of host pairs could run on separate cores,
//! pause frames going to all of them. This measures what that would gain
//! before anyone builds it: the facts are built once (timed, the ICRC
//! included), then for P = 1, 2 and 4 parts each part's analysis observes
//! on one core either a copy of its own frames (as if the decoders sorted
//! them into a buffer per part) or every frame, skipping the others' (as a
//! thread reading one shared buffer would). Parts run one after another,
//! so the figures are one core's; the longest part bounds the wall time of
//! P analysing threads. Configurations alternate within each pass
//! (`PASSES`, default 5) and each keeps its best; `PARTS=N` runs only N.
//! Nothing is merged: the bound leaves out what joining the parts' reports
//! would cost.
use std::hash::BuildHasher;
use std::time::Instant;

use roce_dissect::analysis::{AnalysisOptions, Analyzer, Body, CaptureInfo, Facts};
use roce_dissect::dissect::DissectOptions;

mod common;

const PARTS: [u64; 3] = [1, 2, 4];

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: partition_bound FILE [FRAMES]");
        std::process::exit(2);
    };
    let limit: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let passes = env("PASSES").unwrap_or(5).max(1);
    let only = env("PARTS");
    let file = common::open("partition_bound", &path);
    let frames = common::frames("partition_bound", &path, &file, limit);
    let n = frames.len();
    let opts = DissectOptions::default();
    let build = |keep: Option<&mut Vec<Facts>>| common::build_facts(&frames, &opts, keep);
    let mut facts = Vec::with_capacity(n);
    build(Some(&mut facts));

    // A frame's part among `parts`, or None for a pause frame (every part's).
    let hasher = foldhash::fast::FixedState::with_seed(7);
    let part_of = |f: &Facts, parts: u64| -> Option<u64> {
        match &f.body {
            Body::Roce(r) => {
                let pair = (r.key.src.min(r.key.dst), r.key.src.max(r.key.dst));
                Some(hasher.hash_one(pair) % parts)
            }
            Body::Pause { .. } => None,
            Body::Other => Some(0),
        }
    };
    let configs: Vec<u64> = PARTS
        .into_iter()
        .filter(|p| only.is_none_or(|o| o == *p))
        .collect();
    if configs.is_empty() {
        eprintln!("partition_bound: PARTS is one of {PARTS:?}");
        std::process::exit(2);
    }
    let tags: Vec<Vec<Option<u64>>> = configs
        .iter()
        .map(|&p| facts.iter().map(|f| part_of(f, p)).collect())
        .collect();
    let own = |c: usize, p: u64| -> Vec<Facts> {
        facts
            .iter()
            .zip(&tags[c])
            .filter(|(_, t)| t.is_none_or(|t| t == p))
            .map(|(f, _)| *f)
            .collect()
    };

    let mut decode = f64::MAX;
    let mut copy_best: Vec<Vec<f64>> = configs
        .iter()
        .map(|&p| vec![f64::MAX; p as usize])
        .collect();
    let mut skip_best = copy_best.clone();
    let mut flows: Vec<Vec<usize>> = configs.iter().map(|&p| vec![0; p as usize]).collect();
    for pass in 0..passes {
        decode = decode.min(build(None));
        for (c, &parts) in configs.iter().enumerate() {
            for p in 0..parts {
                let mine = own(c, p);
                let mut an = Analyzer::new(AnalysisOptions::default());
                let t = Instant::now();
                for f in &mine {
                    an.observe(f);
                }
                let secs = t.elapsed().as_secs_f64();
                copy_best[c][p as usize] = copy_best[c][p as usize].min(secs);
                if pass == 0 {
                    flows[c][p as usize] = an.finish(CaptureInfo::default()).flows.len();
                } else {
                    drop(std::hint::black_box(an));
                }
                drop(mine);

                let mut an = Analyzer::new(AnalysisOptions::default());
                let t = Instant::now();
                for (f, tag) in facts.iter().zip(&tags[c]) {
                    if tag.is_none_or(|t| t == p) {
                        an.observe(f);
                    }
                }
                let secs = t.elapsed().as_secs_f64();
                skip_best[c][p as usize] = skip_best[c][p as usize].min(secs);
                drop(std::hint::black_box(an));
            }
        }
    }

    let ns = |s: f64| s / n as f64 * 1e9;
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    println!(
        "{path}: {n} frames, {passes} passes, best of each; nanoseconds per frame of the capture, one core"
    );
    println!("decode to facts (ICRC included): {:.1}", ns(decode));
    println!(
        "{:>5} {:>9} {:>9} {:>9} {:>9}  flows per part",
        "parts", "sum", "longest", "skip sum", "skip max"
    );
    for (c, parts) in configs.iter().enumerate() {
        println!(
            "{parts:>5} {:>9.1} {:>9.1} {:>9.1} {:>9.1}  {:?}",
            ns(copy_best[c].iter().sum()),
            ns(max(&copy_best[c])),
            ns(skip_best[c].iter().sum()),
            ns(max(&skip_best[c])),
            flows[c],
        );
    }
}
