//! `packets` formats frames on every core and writes them in capture
//! order: whatever `-j` says, the output is byte for byte what one thread
//! writes, in every format, with filters, `-c` and a pipe closed early.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Mixed traffic (drops, replays, CNPs, PFC) on 8 QPs: 2 458 frames,
/// several of `packets`' batches (512 frames, 512 KiB) and of the chunked
/// reader's chunks.
fn capture(dir: &Path) -> PathBuf {
    let path = dir.join("mixed.pcap");
    let out = common::bin()
        .args(["gen", "--scenario", "mixed", "--seed", "7", "--qps", "8"])
        .args(["--messages", "60", "--size", "4096", "--pmtu", "1024", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "gen: {out:?}");
    path
}

fn packets(path: &Path, threads: u32, args: &[&str]) -> Vec<u8> {
    let out = common::bin()
        .arg("packets")
        .arg(path)
        .arg("-j")
        .arg(threads.to_string())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "packets -j {threads} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn every_thread_count_writes_what_one_thread_writes() {
    let dir = tempfile::tempdir().unwrap();
    let cap = capture(dir.path());
    let modes: &[&[&str]] = &[
        &[],
        &["-V", "-x"],
        &["--json"],
        &[
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "bth.psn",
            "-e",
            "roce.analysis.flow",
            "-e",
            "roce.analysis.ack_rtt",
            "-e",
            "infiniband.icrc.status",
        ],
        &["-Y", "roce.analysis.retransmission || bth.opcode == 0x81"],
        &["-c", "1500"],
        &["--roce-only", "--json", "-c", "2000"],
        &["--no-icrc"],
    ];
    for mode in modes {
        let one = packets(&cap, 1, mode);
        assert!(!one.is_empty(), "{mode:?}: nothing written");
        for threads in [2, 3, 8] {
            let many = packets(&cap, threads, mode);
            assert!(
                one == many,
                "packets -j {threads} {mode:?} differs from -j 1 ({} against {} bytes)",
                many.len(),
                one.len()
            );
        }
    }
}

/// The lines come out in frame order, one per frame, all of them.
#[test]
fn lines_are_in_frame_order() {
    let dir = tempfile::tempdir().unwrap();
    let cap = capture(dir.path());
    let text = String::from_utf8(packets(&cap, 4, &[])).unwrap();
    let numbers: Vec<u64> = text
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(numbers, (1..=2458).collect::<Vec<u64>>());
    // The analysis's marks reach the lines formatted on other threads.
    assert!(text.contains("[retransmit]"), "no retransmission marked");
    let counted = packets(&cap, 4, &["-c", "700"]);
    assert_eq!(counted.iter().filter(|&&b| b == b'\n').count(), 700);
}

/// A reader that stops early (`| head`) ends the command quietly, with
/// the formatting threads stopped.
#[test]
fn a_closed_pipe_ends_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let cap = capture(dir.path());
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("roce-dissect"))
        .arg("packets")
        .arg(&cap)
        .args(["-j", "4", "-V", "-x"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    assert!(
        first.starts_with(b"     1 "),
        "{:?}",
        String::from_utf8_lossy(&first)
    );
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// TCP conversations are followed in frame order on every path: the
/// chunked reader (a file of more than two chunks, `-j 2`) hands every
/// TCP frame to the analysis thread, whatever the filter passes, so the
/// numbers relative to a conversation's first are those of one thread.
#[test]
fn tcp_conversations_read_by_every_core_are_one_threads() {
    use roce_dissect::synth::samples::{Segment, every_opcode, tcp_frame};
    let dir = tempfile::tempdir().unwrap();
    let payload = [7u8; 1400];
    let mut frames = Vec::new();
    for round in 0..40u32 {
        frames.extend(every_opcode(u64::from(round % 4) + 1));
        for k in 0..100u16 {
            let client = (1 + (k % 7) as u8, 40000 + k);
            let server = (100, 22);
            let (cs, ss) = (1000 * u32::from(k) + 1, 77 * u32::from(k) + 1);
            let seg = |from, to, seq, ack, flags, payload| Segment {
                from,
                to,
                seq,
                ack,
                flags,
                window: 500,
                urgent: 0,
                options: &[],
                payload,
            };
            let sent = 1400 * round;
            frames.push(tcp_frame(&seg(
                client,
                server,
                cs + sent,
                ss,
                0x018,
                &payload[..],
            )));
            frames.push(tcp_frame(&seg(
                server,
                client,
                ss,
                cs + sent + 1400,
                0x010,
                &[][..],
            )));
        }
    }
    let cap = common::write_pcap(dir.path(), "tcp.pcap", &frames);
    assert!(std::fs::metadata(&cap).unwrap().len() > 5 << 20);
    for args in [
        &["-Y", "tcp.srcport == 22"][..],
        &[
            "-T",
            "fields",
            "-e",
            "tcp.stream",
            "-e",
            "tcp.seq",
            "-e",
            "tcp.ack",
        ],
        &["-Y", "tcp.ack > 20000 && tcp.dstport == 40007", "-V"],
    ] {
        let one = packets(&cap, 1, args);
        assert!(one.len() > 1000, "{args:?}");
        assert_eq!(one, packets(&cap, 2, args), "{args:?}");
    }
    // Relative: the server's first ACK of client 40003 acknowledges 1401.
    let lines = String::from_utf8(packets(&cap, 2, &["-Y", "tcp.dstport == 40003"])).unwrap();
    assert!(
        lines
            .lines()
            .next()
            .unwrap()
            .contains("Seq=1 Ack=1401 Win=500 Len=0"),
        "{lines}"
    );
}
