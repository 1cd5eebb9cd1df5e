//! Throughput of decoding alone and of the full analysis on a capture
//! (`captures/mixed.pcapng`, or `ROCE_BENCH_CAPTURE=FILE cargo bench`).
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use roce_dissect::capture::CaptureFile;
use roce_dissect::dissect::{DissectOptions, dissect};

fn bench_decode(c: &mut Criterion) {
    let path = std::env::var("ROCE_BENCH_CAPTURE")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/captures/mixed.pcapng").into());
    let Ok(file) = CaptureFile::open(&path) else {
        eprintln!("bench: {path} not found; set ROCE_BENCH_CAPTURE");
        return;
    };
    let frames = file.frames().map(|r| r.count()).unwrap_or(0) as u64;
    let opts = DissectOptions::default();
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(frames));
    g.bench_function("dissect_all", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for f in file.frames().unwrap().flatten() {
                let p = dissect(&f, &opts);
                n += u64::from(p.bth.map(|b| b.psn).unwrap_or(0) & 1);
            }
            n
        })
    });
    g.bench_function("full_analysis", |b| {
        b.iter(|| {
            let mut frames = file.frames().unwrap();
            roce_dissect::pipeline::analyze_sequential(
                &mut frames,
                "bench",
                &opts,
                Default::default(),
                None,
            )
            .unwrap()
            .flows
            .len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench_decode);
criterion_main!(benches);
