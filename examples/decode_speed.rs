//! Decoding throughput on one core: `cargo run --release --example decode_speed FILE`.
//! Prints frames/s for dissection with and without the ICRC check, and for
//! dissection plus JSON Lines rendering into memory.
use std::time::Instant;

use roce_dissect::capture::CaptureFile;
use roce_dissect::dissect::{DissectOptions, dissect};
use roce_dissect::output::packets::write_json_line;

fn main() {
    let path = std::env::args().nth(1).expect("usage: decode_speed FILE");
    let file = CaptureFile::open(&path).expect("open");
    let n = file.frames().unwrap().count() as f64;
    let bytes = file.bytes().len() as f64;
    for (name, check_icrc, json) in [
        ("read frames only", None, false),
        ("dissect, no ICRC", Some(false), false),
        ("dissect + ICRC", Some(true), false),
        ("dissect + ICRC + JSON", Some(true), true),
    ] {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            let mut sink = 0u64;
            let mut buf = Vec::with_capacity(1 << 16);
            for f in file.frames().unwrap().flatten() {
                match check_icrc {
                    None => sink += f.data.len() as u64,
                    Some(c) => {
                        let p = dissect(
                            &f,
                            &DissectOptions {
                                check_icrc: c,
                                ..Default::default()
                            },
                        );
                        sink += u64::from(p.bth.map_or(0, |b| b.psn.get()));
                        if json {
                            write_json_line(&mut buf, &p);
                            if buf.len() > 1 << 15 {
                                sink += buf.len() as u64;
                                buf.clear();
                            }
                        }
                    }
                }
            }
            std::hint::black_box(sink);
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{name:<24} {:>7.2} M frames/s  {:>6.2} GB/s",
            n / best / 1e6,
            bytes / best / 1e9
        );
    }
}
