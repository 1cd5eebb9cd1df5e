//! Writes the fuzz seed corpora: `cargo run --example fuzz_seeds`.
use std::fs;
use std::path::Path;

use roce_dissect::synth::scenario::{GenOptions, generate};
use roce_dissect::synth::{CaptureWriter, OutFormat, samples};

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let frames = root.join("dissect_frame");
    fs::create_dir_all(&frames)?;
    // One frame per opcode and network layer, Ethernet link (selector 0).
    for (i, f) in samples::every_opcode(1).iter().enumerate() {
        let mut v = vec![0u8];
        v.extend_from_slice(f);
        fs::write(frames.join(format!("opcode-{i:03}")), v)?;
    }
    // Small captures of each scenario in each container.
    for target in ["capture_reader", "pipeline"] {
        let dir = root.join(target);
        fs::create_dir_all(&dir)?;
        for (j, (name, _)) in roce_dissect::synth::scenario::SCENARIOS.iter().enumerate() {
            let fmt = [
                OutFormat::PcapMicros,
                OutFormat::PcapNanos,
                OutFormat::PcapNg,
            ][j % 3];
            let mut w = CaptureWriter::new(Vec::new(), fmt)?;
            let opts = GenOptions {
                scenario: name.to_string(),
                qps: 2,
                messages: 3,
                size: 2000,
                pmtu: 1024,
                loss: 0.2,
                reorder: 0.2,
                ecn: 0.3,
                duration_ns: Some(200_000),
                ..GenOptions::default()
            };
            generate(opts, &mut |ts, f| w.write(ts, f))?;
            let mut bytes = w.into_inner();
            bytes.truncate(16 * 1024);
            fs::write(dir.join(format!("{name}.cap")), bytes)?;
        }
    }
    Ok(())
}
