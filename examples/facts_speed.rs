//! The hot path's two halves on one core, the capture in memory:
//! `cargo run --release --example facts_speed FILE`. Builds the facts of
//! each 2000 frames into a reused buffer, as the chunked reader does, and
//! then has the analysis observe them; prints ns per frame for each half
//! (best of 7 passes; `PASSES=1` for one, e.g. to count instructions with
//! `valgrind --tool=callgrind`).
use std::time::Instant;

use roce_dissect::analysis::{AnalysisOptions, Analyzer, Facts};
use roce_dissect::capture::CaptureFile;
use roce_dissect::dissect::DissectOptions;

fn main() {
    let path = std::env::args().nth(1).expect("usage: facts_speed FILE");
    let file = CaptureFile::open(&path).expect("open");
    let frames: Vec<_> = file.frames().unwrap().flatten().collect();
    let n = frames.len() as f64;
    let opts = DissectOptions::default();
    let (mut best_facts, mut best_observe) = (f64::MAX, f64::MAX);
    let passes: usize = std::env::var("PASSES")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(7);
    for _ in 0..passes {
        let mut an = Analyzer::new(AnalysisOptions::default());
        let mut buf = Vec::new();
        let (mut facts_s, mut observe_s) = (0.0, 0.0);
        for chunk in frames.chunks(2000) {
            let t = Instant::now();
            for (i, f) in chunk.iter().enumerate() {
                Facts::put_from_frame(&mut buf, i, f, &opts);
            }
            buf.truncate(chunk.len());
            let t2 = Instant::now();
            for f in &buf {
                an.observe(f);
            }
            observe_s += t2.elapsed().as_secs_f64();
            facts_s += (t2 - t).as_secs_f64();
        }
        std::hint::black_box(&an);
        best_facts = best_facts.min(facts_s);
        best_observe = best_observe.min(observe_s);
    }
    println!(
        "facts {:5.1} ns/frame, observe {:5.1} ns/frame",
        best_facts / n * 1e9,
        best_observe / n * 1e9
    );
}
