//! The least any analysis of a capture must spend: every byte of the file
//! read once, from its page-cache pages, on every core.
//! `cargo run --release --example read_floor FILE [THREADS]`
//!
//! The file is mapped and cut into 2 MiB chunks as the report's reader does
//! (same map, same huge-page advice, same populate step, pages given back
//! four chunks at a time so that the resident set stays small); each thread
//! takes the next chunk and folds its bytes into a checksum with wide
//! loads, which is nothing next to the memory traffic. `bench/compare.sh` times
//! one run of this as its memory-floor row: the analysis cannot be faster
//! than reading the bytes its ICRC check covers.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const CHUNK: usize = 2 << 20;
/// Chunks whose pages are given back together, as in the report's reader.
const GROUP: usize = 4;

/// XOR of the bytes' 64-byte blocks, as eight words (the tail ignored):
/// the compiler keeps this in vector registers.
fn fold(bytes: &[u8]) -> [u64; 8] {
    let mut acc = [0u64; 8];
    for block in bytes.chunks_exact(64) {
        for (a, w) in acc.iter_mut().zip(block.chunks_exact(8)) {
            *a ^= u64::from_ne_bytes(w.try_into().unwrap_or_default());
        }
    }
    acc
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: read_floor FILE [THREADS]");
        std::process::exit(2);
    };
    let threads = args
        .next()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let file = std::fs::File::open(&path).unwrap_or_else(|e| {
        eprintln!("read_floor: {path}: {e}");
        std::process::exit(1);
    });
    let t = Instant::now();
    let map = mapwin::FileMap::map(&file).unwrap_or_else(|e| {
        eprintln!("read_floor: {path}: {e}");
        std::process::exit(1);
    });
    let len = map.len();
    let next = AtomicUsize::new(0);
    let chunks = len.div_ceil(CHUNK);
    let read: Vec<AtomicUsize> = (0..chunks.div_ceil(GROUP))
        .map(|_| AtomicUsize::new(0))
        .collect();
    let sum = std::thread::scope(|s| {
        let work = || {
            let mut acc = [0u64; 8];
            loop {
                let at = next.fetch_add(CHUNK, Ordering::Relaxed);
                if at >= len {
                    break acc;
                }
                map.populate(at, CHUNK);
                let bytes = map.get(at..(at + CHUNK).min(len)).unwrap_or_default();
                for (a, f) in acc.iter_mut().zip(fold(bytes)) {
                    *a ^= f;
                }
                let g = at / CHUNK / GROUP;
                let in_group = (chunks - g * GROUP).min(GROUP);
                if read[g].fetch_add(1, Ordering::AcqRel) + 1 == in_group {
                    map.release(g * GROUP * CHUNK, GROUP * CHUNK);
                }
            }
        };
        let others: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        let mut acc = work();
        for h in others {
            for (a, f) in acc.iter_mut().zip(h.join().unwrap_or_default()) {
                *a ^= f;
            }
        }
        acc
    });
    let secs = t.elapsed().as_secs_f64();
    println!(
        "read {:.0} MiB on {threads} threads in {:.1} ms ({:.1} GB/s; checksum {:016x})",
        len as f64 / (1 << 20) as f64,
        secs * 1e3,
        len as f64 / secs / 1e9,
        sum.iter().fold(0, |a, w| a ^ w)
    );
}
