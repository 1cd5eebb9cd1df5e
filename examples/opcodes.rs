//! Writes one frame per opcode to a pcap: `cargo run --example opcodes OUT.pcap [SEED]`.
use roce_dissect::synth::{CaptureWriter, OutFormat, samples};

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let out = args.next().unwrap_or_else(|| "opcodes.pcap".into());
    let seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut w = CaptureWriter::new(
        std::fs::File::create(&out)?,
        OutFormat::from_path(out.as_ref()),
    )?;
    for (i, f) in samples::every_opcode(seed).iter().enumerate() {
        w.write(1_000_000_000 + i as u64 * 1000, f)?;
    }
    w.flush()
}
