//! What analysing host pairs side by side gives, once decoding keeps up:
//! `cargo run --release --example split_analysis FILE [FRAMES]`.
//!
//! The facts are built once (timed, the ICRC included), then analysed as
//! one analysis of every frame and split by host pair in 2, 3 and 4 parts
//! (`roce_dissect::analysis::split`), each configuration after the other,
//! `PASSES` times (default 5), the best of each kept:
//!
//! - on one core, piece by piece: the frame loop (which counts every frame,
//!   follows the pauses and sorts the RoCE frames into a list per part, as
//!   the pipeline does), each part's analysis of its list, and joining the
//!   parts; what the longest piece takes bounds a run whose decoders keep
//!   up (many cores);
//! - side by side: the frame loop and the first part on this thread, each
//!   other part on a thread of its own fed a chunk's frames at a time, as
//!   the pipeline feeds them (wall time; meaningful while the parts are no
//!   more than the cores).
//!
//! Every split analysis is joined and its report checked against the one
//! analysis's; one that cannot be joined says why.
use std::sync::Arc;
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use roce_dissect::analysis::split::{self, FrameLoop};
use roce_dissect::analysis::{AnalysisOptions, Analyzer, CaptureInfo, Facts};
use roce_dissect::dissect::DissectOptions;

mod common;

/// Frames handed to a part's thread at a time (a chunk of small frames).
const BATCH: usize = 4096;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: split_analysis FILE [FRAMES]");
        std::process::exit(2);
    };
    let limit: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let passes = std::env::var("PASSES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(5)
        .max(1);
    let file = common::open("split_analysis", &path);
    let frames = common::frames("split_analysis", &path, &file, limit);
    let n = frames.len();
    let dissect = DissectOptions::default();
    let mut facts = Vec::with_capacity(n);
    common::build_facts(&frames, &dissect, Some(&mut facts));
    for (i, f) in facts.iter_mut().enumerate() {
        f.number = i as u64 + 1;
    }
    let opts = AnalysisOptions::default();
    let report = |an: Analyzer| serde_json::to_string(&an.finish(CaptureInfo::default())).ok();

    let mut decode = f64::MAX;
    let mut whole = f64::MAX;
    let mut want = None;
    // Per number of parts: frame loop, each part, join, side by side.
    let mut best: Vec<Pieces> = (2..=4).map(Pieces::new).collect();
    for pass in 0..passes {
        decode = decode.min(common::build_facts(&frames, &dissect, None));
        let mut an = Analyzer::new(opts.clone());
        let t = Instant::now();
        for f in &facts {
            an.observe(f);
        }
        whole = whole.min(t.elapsed().as_secs_f64());
        if pass == 0 {
            want = report(an);
        }
        for b in &mut best {
            if let Some(why) = b.piece_by_piece(&opts, &facts, &want, pass == 0) {
                println!("{path}: in {} parts: not joined: {why}", b.parts);
                return;
            }
            b.side_by_side(&opts, &facts);
        }
    }

    let ns = |s: f64| s / n as f64 * 1e9;
    println!("{path}: {n} frames, best of {passes}; nanoseconds per frame of the capture");
    println!(
        "decode to facts (ICRC included), one core: {:.1}",
        ns(decode)
    );
    println!("one analysis of every frame, one core: {:.1}", ns(whole));
    println!(
        "{:>5} {:>10} {:>22} {:>8} {:>8} {:>13}  RoCE frames per part",
        "parts", "frame loop", "each part", "join", "longest", "side by side"
    );
    for b in &best {
        let each: Vec<String> = b.part.iter().map(|&s| format!("{:.1}", ns(s))).collect();
        let longest = b.part.iter().copied().fold(b.frame_loop, f64::max);
        println!(
            "{:>5} {:>10.1} {:>22} {:>8.1} {:>8.1} {:>13.1}  {:?}",
            b.parts,
            ns(b.frame_loop),
            each.join(" "),
            ns(b.join),
            ns(longest),
            ns(b.together),
            b.frames
        );
    }
}

/// The best times of a split in `parts` parts.
struct Pieces {
    parts: usize,
    frame_loop: f64,
    part: Vec<f64>,
    join: f64,
    together: f64,
    /// The RoCE frames of each part.
    frames: Vec<usize>,
    lists: Vec<Vec<u32>>,
    work: Vec<Facts>,
}

impl Pieces {
    fn new(parts: usize) -> Self {
        Pieces {
            parts,
            frame_loop: f64::MAX,
            part: vec![f64::MAX; parts],
            join: f64::MAX,
            together: f64::MAX,
            frames: vec![0; parts],
            lists: vec![Vec::new(); parts],
            work: Vec::new(),
        }
    }

    /// Each piece on this core; checks the joined report against `want`
    /// once. Why it could not be joined, if it could not.
    fn piece_by_piece(
        &mut self,
        opts: &AnalysisOptions,
        facts: &[Facts],
        want: &Option<String>,
        check: bool,
    ) -> Option<split::Unsplit> {
        // Kept from pass to pass, as the pipeline keeps its buffers: the
        // first pass's page faults are not the frame loop's. The frame loop
        // marks the facts in place and lists where each part's frames are.
        let (work, lists) = (&mut self.work, &mut self.lists);
        work.clear();
        work.extend_from_slice(facts);
        lists.iter_mut().for_each(Vec::clear);
        let mut frames = FrameLoop::new(opts.clone(), self.parts);
        let t = Instant::now();
        for (i, f) in work.iter_mut().enumerate() {
            if let Some(p) = frames.frame(f) {
                lists[p].push(i as u32);
            }
        }
        self.frame_loop = self.frame_loop.min(t.elapsed().as_secs_f64());
        let origin = frames.origin().unwrap_or(0);
        let mut analyses = Vec::new();
        for (p, list) in lists.iter().enumerate() {
            let mut an = split::part(opts.clone(), origin);
            let t = Instant::now();
            for &i in list {
                an.observe_part(&work[i as usize]);
            }
            self.part[p] = self.part[p].min(t.elapsed().as_secs_f64());
            analyses.push(an);
        }
        self.frames = lists.iter().map(Vec::len).collect();
        let t = Instant::now();
        let joined = split::join(frames, analyses);
        self.join = self.join.min(t.elapsed().as_secs_f64());
        let joined = match joined {
            Ok(an) => an,
            Err(why) => return Some(why),
        };
        if check {
            let got = serde_json::to_string(&joined.finish(CaptureInfo::default())).ok();
            assert!(got == *want, "the joined report is not the whole one's");
        }
        None
    }

    /// The frame loop and the first part here, the others on threads of
    /// their own, each reading its frames of a chunk where the frame loop
    /// left them: the wall time to the last part's end.
    fn side_by_side(&mut self, opts: &AnalysisOptions, facts: &[Facts]) {
        // The chunks as the decoders would hand them over.
        let mut chunks: Vec<Vec<Facts>> = facts.chunks(BATCH).map(<[Facts]>::to_vec).collect();
        let t = Instant::now();
        std::thread::scope(|scope| {
            let mut to = Vec::new();
            let mut frames = FrameLoop::new(opts.clone(), self.parts);
            for _ in 1..self.parts {
                let (tx, rx) = sync_channel::<(Arc<Vec<Facts>>, Vec<u32>, u64)>(4);
                to.push(tx);
                scope.spawn(move || {
                    let mut an = None;
                    while let Ok((chunk, picks, origin)) = rx.recv() {
                        let an = an.get_or_insert_with(|| split::part(opts.clone(), origin));
                        for &i in &picks {
                            an.observe_part(&chunk[i as usize]);
                        }
                    }
                    std::hint::black_box(an);
                });
            }
            let mut mine: Option<Analyzer> = None;
            for mut chunk in chunks.drain(..) {
                let mut picks: Vec<Vec<u32>> = vec![Vec::new(); self.parts];
                for (i, f) in chunk.iter_mut().enumerate() {
                    if let Some(p) = frames.frame(f) {
                        picks[p].push(i as u32);
                    }
                }
                let origin = frames.origin().unwrap_or(0);
                let chunk = Arc::new(chunk);
                for (p, tx) in to.iter().enumerate() {
                    let _ = tx.send((
                        Arc::clone(&chunk),
                        std::mem::take(&mut picks[p + 1]),
                        origin,
                    ));
                }
                let an = mine.get_or_insert_with(|| split::part(opts.clone(), origin));
                for &i in &picks[0] {
                    an.observe_part(&chunk[i as usize]);
                }
            }
            drop(to);
            std::hint::black_box(mine);
        });
        self.together = self.together.min(t.elapsed().as_secs_f64());
    }
}
