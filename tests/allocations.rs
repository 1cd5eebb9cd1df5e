//! The analysis allocates per flow, never per frame: four times the frames
//! on the same flows cost a few more allocations (vectors that double, one
//! entry per pause interval or event kept), not four times as many. A
//! counting allocator counts what the analysing thread asks for while it
//! observes each scenario's frames.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use roce_dissect::analysis::{AnalysisOptions, Analyzer, Facts};
use roce_dissect::capture::CaptureFile;
use roce_dissect::dissect::DissectOptions;
use roce_dissect::synth::pcap::{CaptureWriter, OutFormat};
use roce_dissect::synth::scenario::{GenOptions, Scenario, generate};

thread_local! {
    /// Allocations and reallocations by this thread.
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

struct Counting;

fn count() {
    // `try_with`: a thread being torn down has no counter, and allocates.
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn capture(opts: GenOptions) -> Vec<u8> {
    let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapNanos).unwrap();
    generate(opts, &mut |ts, f| w.write(ts, f)).unwrap();
    w.into_inner()
}

/// Frames, and the allocations observing them took (the frames are read
/// and their facts built first, as the pipeline's workers do).
fn observe_counting(bytes: Vec<u8>) -> (u64, u64) {
    let file = CaptureFile::from_bytes(bytes);
    let frames: Vec<_> = file.frames().unwrap().flatten().collect();
    let opts = DissectOptions::default();
    let mut facts = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        Facts::put_from_frame(&mut facts, i, f, &opts);
    }
    facts.truncate(frames.len());
    let mut an = Analyzer::new(AnalysisOptions::default());
    let before = ALLOCS.with(Cell::get);
    for f in &facts {
        an.observe(f);
    }
    let after = ALLOCS.with(Cell::get);
    (frames.len() as u64, after - before)
}

#[test]
fn observing_allocates_per_flow_not_per_frame() {
    let scenarios: [(&str, GenOptions); 5] = [
        (
            "mixed",
            GenOptions {
                scenario: Scenario::Mixed,
                qps: 16,
                size: 4096,
                pmtu: 1024,
                ..GenOptions::default()
            },
        ),
        (
            "incast, an ACK every 4",
            GenOptions {
                scenario: Scenario::Incast,
                qps: 16,
                size: 2048,
                pmtu: 512,
                ack_every: Some(4),
                ..GenOptions::default()
            },
        ),
        (
            "nvme",
            GenOptions {
                scenario: Scenario::Nvme,
                qps: 4,
                ..GenOptions::default()
            },
        ),
        (
            "pfc-headroom",
            GenOptions {
                scenario: Scenario::PfcHeadroom,
                ..GenOptions::default()
            },
        ),
        (
            "loss",
            GenOptions {
                scenario: Scenario::Loss,
                qps: 8,
                ..GenOptions::default()
            },
        ),
    ];
    for (name, opts) in scenarios {
        let at = |messages: u32| {
            observe_counting(capture(GenOptions {
                seed: 3,
                messages,
                ..opts.clone()
            }))
        };
        let (n1, a1) = at(50);
        let (n4, a4) = at(200);
        assert!(n4 > 3 * n1, "{name}: {n1} then {n4} frames");
        // A per-frame allocation, even on one frame in ten, would add
        // more than this; doubling vectors and kept intervals add less.
        let extra = a4.saturating_sub(a1);
        let bound = (n4 - n1) / 16;
        assert!(
            extra <= bound,
            "{name}: {a1} allocations for {n1} frames, {a4} for {n4}: {extra} more, above {bound}"
        );
        eprintln!("{name}: {a1} allocations for {n1} frames, {a4} for {n4}");
    }
}
