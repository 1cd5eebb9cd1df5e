//! `crc32_split` on the shapes the ICRC gives it: a 48-byte head (the
//! masked IPv4, UDP and BTH headers) and rests from an ACK's to a 4 KiB
//! payload's, and `crc32_or_masked` on the frames' spans, with the
//! instruction level this CPU has.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn bench_split(c: &mut Criterion) {
    let data: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let head = [0x5au8; 48];
    let mut g = c.benchmark_group("crc32_split");
    for rest in [32usize, 300, 1070, 4150] {
        g.throughput(Throughput::Bytes((head.len() + rest) as u64));
        g.bench_function(format!("head 48 + rest {rest}"), |b| {
            let mut at = 0;
            b.iter(|| {
                // A different alignment each time, as in a capture.
                at = (at + 1) % 64;
                crc32fold::crc32_split(black_box(&head), black_box(&data[at..at + rest]))
            })
        });
    }
    g.finish();
}

/// `crc32_or_masked` on whole frames' ICRC spans (the way the analysis
/// calls it): the first 64 bytes masked, read in place.
fn bench_or_masked(c: &mut Criterion) {
    let data: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut mask = [0u8; 64];
    mask[..8].fill(0xff);
    let mut g = c.benchmark_group("crc32_or_masked");
    for len in [80usize, 348, 1118, 4198] {
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_function(format!("{len} bytes"), |b| {
            let mut at = 0;
            b.iter(|| {
                at = (at + 1) % 64;
                crc32fold::crc32_or_masked(black_box(&data[at..at + len]), black_box(&mask))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_split, bench_or_masked);
criterion_main!(benches);
