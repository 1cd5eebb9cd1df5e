//! Replays the fuzz corpora and every minimised crash in
//! `fuzz/regressions/`, so `cargo test` catches regressions without
//! libFuzzer.

use std::path::Path;

fn replay(target: &str, f: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut n = 0;
    for kind in ["corpus", "regressions"] {
        let dir = root.join(kind).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep") {
                f(&std::fs::read(&p).unwrap());
                n += 1;
            }
        }
    }
    n
}

#[test]
fn dissect_frame_inputs() {
    assert!(replay("dissect_frame", roce_dissect::fuzzing::dissect_frame) >= 249);
}

#[test]
fn capture_reader_inputs() {
    assert!(replay("capture_reader", roce_dissect::fuzzing::read_capture) >= 6);
}

#[test]
fn pipeline_inputs() {
    assert!(replay("pipeline", roce_dissect::fuzzing::pipeline) >= 6);
}

/// The split analysis's target starts from the pipeline's seeds (and keeps
/// its own regressions).
#[test]
fn split_inputs() {
    assert!(replay("pipeline", roce_dissect::fuzzing::split) >= 6);
    replay("split", roce_dissect::fuzzing::split);
}

#[test]
fn chunked_inputs() {
    assert!(replay("chunked", roce_dissect::fuzzing::chunked) >= 6);
}

#[test]
fn truncations_of_every_seed_frame() {
    // Every prefix of every opcode frame: the lax paths at each length.
    for f in roce_dissect::synth::samples::every_opcode(2) {
        for cut in 0..f.len() {
            let mut v = vec![0u8];
            v.extend_from_slice(&f[..cut]);
            roce_dissect::fuzzing::dissect_frame(&v);
        }
    }
}

#[test]
fn compressed_inputs() {
    assert!(replay("compressed", roce_dissect::fuzzing::read_compressed) >= 12);
}

#[test]
fn native_frame_inputs() {
    assert!(replay("native_frame", roce_dissect::fuzzing::native_frame) >= 8);
}

#[test]
fn display_filter_inputs() {
    assert!(replay("display_filter", roce_dissect::fuzzing::display_filter) >= 20);
}

#[test]
fn nvme_capsule_inputs() {
    assert!(replay("nvme_capsule", roce_dissect::fuzzing::nvme_capsule) >= 5);
}

#[test]
fn fabric_inputs() {
    assert!(replay("fabric", roce_dissect::fuzzing::fabric) >= 5);
}

#[test]
fn dns_message_inputs() {
    assert!(replay("dns_message", roce_dissect::fuzzing::dns_message) >= 22);
}

#[test]
fn discovery_message_inputs() {
    assert!(
        replay(
            "discovery_message",
            roce_dissect::fuzzing::discovery_message
        ) >= 37
    );
}

#[test]
fn tls_records_inputs() {
    assert!(replay("tls_records", roce_dissect::fuzzing::tls_records) >= 20);
}

#[test]
fn http_messages_inputs() {
    assert!(replay("http_messages", roce_dissect::fuzzing::http_messages) >= 10);
}
