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
        for (j, name) in roce_dissect::synth::scenario::Scenario::ALL
            .into_iter()
            .enumerate()
        {
            let fmt = [
                OutFormat::PcapMicros,
                OutFormat::PcapNanos,
                OutFormat::PcapNg,
            ][j % 3];
            let mut w = CaptureWriter::new(Vec::new(), fmt)?;
            let opts = GenOptions {
                scenario: name,
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
            fs::write(dir.join(format!("{name}.cap")), &bytes)?;
            if target == "pipeline" {
                // The chunked reader's: two bytes of plan (here 16 + 0x201
                // bytes a chunk, 2 threads) before the capture.
                let chunked = root.join("chunked");
                fs::create_dir_all(&chunked)?;
                let mut v = vec![0x20, 0x10];
                v.extend_from_slice(&bytes);
                fs::write(chunked.join(format!("{name}.cap")), v)?;
            }
        }
    }
    // pcapng files whose state changes after their first packets: three
    // sections, the second in microseconds; an interface declared between
    // packets, then used.
    let small = |seed: u64| -> std::io::Result<Vec<u8>> {
        let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapNg)?;
        let opts = GenOptions {
            scenario: roce_dissect::synth::scenario::Scenario::Loss,
            seed,
            qps: 1,
            messages: 3,
            size: 1500,
            pmtu: 1024,
            ..GenOptions::default()
        };
        generate(opts, &mut |ts, f| w.write(ts, f))?;
        Ok(w.into_inner())
    };
    // The SHB is 28 bytes; the IDB's if_tsresol value is its 21st byte.
    const TSRESOL: usize = 28 + 20;
    let mut sections = small(1)?;
    let mut micro = small(2)?;
    micro[TSRESOL] = 6;
    sections.extend(micro);
    sections.extend(small(3)?);
    let mut interfaces = Vec::new();
    let one = small(4)?;
    let idb_len = u32::from_le_bytes([one[32], one[33], one[34], one[35]]) as usize;
    let mut idb = one[28..28 + idb_len].to_vec();
    idb[20] = 6;
    let mut at = 0;
    let mut packets = 0;
    while at + 8 <= one.len() {
        let len = u32::from_le_bytes([one[at + 4], one[at + 5], one[at + 6], one[at + 7]]) as usize;
        let mut block = one[at..at + len].to_vec();
        if block[0] == 6 {
            packets += 1;
            if packets > 6 && packets % 2 == 0 {
                block[8] = 1; // interface 1
            }
        }
        interfaces.extend(&block);
        if packets == 6 && block[0] == 6 {
            interfaces.extend(&idb);
        }
        at += len;
    }
    let chunked = root.join("chunked");
    for (name, bytes) in [("sections.cap", sections), ("interfaces.cap", interfaces)] {
        let mut v = vec![0x20, 0x10];
        v.extend_from_slice(&bytes);
        fs::write(chunked.join(name), v)?;
    }
    Ok(())
}
