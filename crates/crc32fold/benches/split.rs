//! `crc32_split` on the shapes the ICRC gives it: a 48-byte head (the
//! masked IPv4, UDP and BTH headers) and rests from an ACK's to a 4 KiB
//! payload's, with the instruction level this CPU has.
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

criterion_group!(benches, bench_split);
criterion_main!(benches);
