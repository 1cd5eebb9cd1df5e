//! Throughput of decoding alone and of the full analysis on a capture
//! (`captures/mixed.pcapng`, or `ROCE_BENCH_CAPTURE=FILE cargo bench`).
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use roce_dissect::capture::CaptureFile;
use roce_dissect::dissect::{DissectOptions, dissect};

/// The capture benchmarked: `ROCE_BENCH_CAPTURE`, else the mixed sample
/// (`None`, said on standard error, when it cannot be opened).
fn bench_capture() -> Option<CaptureFile> {
    let path = std::env::var("ROCE_BENCH_CAPTURE")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/captures/mixed.pcapng").into());
    let file = CaptureFile::open(&path).ok();
    if file.is_none() {
        eprintln!("bench: {path} not found; set ROCE_BENCH_CAPTURE");
    }
    file
}

fn bench_decode(c: &mut Criterion) {
    let Some(file) = bench_capture() else {
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
                n += u64::from(p.bth.map(|b| b.psn.get()).unwrap_or(0) & 1);
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

/// The analysis alone on facts built beforehand: with every stage, with
/// none (the base: flows, counters, PSN tracking) and without each stage
/// in turn, so that a change that slows one stage shows up by its name
/// (`cargo bench -- stages/`).
fn bench_stages(c: &mut Criterion) {
    use roce_dissect::analysis::{AnalysisOptions, Analyzer, Facts, Stage, Stages};
    let Some(file) = bench_capture() else {
        return;
    };
    let opts = DissectOptions::default();
    let facts: Vec<Facts> = file
        .frames()
        .map(|r| {
            r.flatten()
                .map(|f| Facts::of(&dissect(&f, &opts)))
                .collect()
        })
        .unwrap_or_default();
    let mut g = c.benchmark_group("stages");
    g.throughput(Throughput::Elements(facts.len() as u64));
    let mut configs = vec![
        ("all".to_string(), Stages::all()),
        ("base".into(), Stages::none()),
    ];
    for s in Stage::ALL {
        configs.push((format!("without_{s}"), Stages::all().without(s)));
    }
    for (name, stages) in configs {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut an = Analyzer::new(AnalysisOptions {
                    stages,
                    ..AnalysisOptions::default()
                });
                for f in &facts {
                    an.observe(f);
                }
                an
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_decode, bench_stages);
criterion_main!(benches);
