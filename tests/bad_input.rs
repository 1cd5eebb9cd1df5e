//! Bad input: one-line errors, exit code 2 for unreadable captures, never a
//! panic, and what can be read is read.

mod common;

use std::path::Path;

use roce_dissect::synth::samples::Rng;
use roce_dissect::synth::{CaptureWriter, OutFormat};

fn run(args: &[&str], file: &Path) -> (i32, String, String) {
    let out = common::bin().args(args).arg(file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stderr.contains("panicked"),
        "panic on {}: {stderr}",
        file.display()
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn pcap_header(linktype: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    v.extend_from_slice(&2u16.to_le_bytes());
    v.extend_from_slice(&4u16.to_le_bytes());
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&65535u32.to_le_bytes());
    v.extend_from_slice(&linktype.to_le_bytes());
    v
}

/// A pcap record of `frame` (what was captured) from a frame of `orig_len` bytes.
fn record(v: &mut Vec<u8>, ts: u32, frame: &[u8], orig_len: u32) {
    v.extend_from_slice(&ts.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes());
    v.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    v.extend_from_slice(&orig_len.max(frame.len() as u32).to_le_bytes());
    v.extend_from_slice(frame);
}

fn assert_unreadable(file: &Path, needle: &str) {
    for args in [
        &[][..],
        &["--json"][..],
        &["packets"][..],
        &["packets", "--json"][..],
    ] {
        let (code, stdout, stderr) = run(args, file);
        assert_eq!(code, 2, "{args:?} {}: {stderr}", file.display());
        assert_eq!(stderr.lines().count(), 1, "one-line error: {stderr}");
        assert!(stderr.contains(needle), "{stderr:?} lacks {needle:?}");
        assert!(stdout.is_empty() || args.contains(&"packets"));
    }
}

#[test]
fn unreadable_files_exit_2_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    assert_unreadable(&write(d.path(), "empty.pcap", &[]), "empty file");
    let mut rng = Rng::new(7);
    let random: Vec<u8> = (0..4096).map(|_| rng.next_u32() as u8 | 1).collect();
    assert_unreadable(
        &write(d.path(), "random.bin", &random),
        "not a pcap or pcapng file",
    );
    assert_unreadable(
        &write(d.path(), "magic.pcap", b"GIF89a........................"),
        "magic 0x47494638",
    );
    assert_unreadable(
        &write(d.path(), "short.pcap", &pcap_header(1)[..10]),
        "too short",
    );
    assert_unreadable(
        &write(d.path(), "gz.pcap", &[0x1f, 0x8b, 8, 0, 0, 0]),
        "gzip",
    );
    assert_unreadable(
        &write(d.path(), "wifi.pcap", &pcap_header(105)),
        "unsupported link type 105 (IEEE 802.11)",
    );
    let (code, _, stderr) = run(&[], Path::new("/nonexistent/x.pcap"));
    assert_eq!(code, 2);
    assert!(stderr.contains("No such file"), "{stderr}");
}

#[test]
fn four_gib_record_is_an_error_without_allocating() {
    let d = tempfile::tempdir().unwrap();
    let mut v = pcap_header(1);
    let frame = roce_dissect::synth::samples::every_opcode(1).remove(0);
    record(&mut v, 1, &frame, frame.len() as u32);
    // Claims 4 GiB - 1.
    v.extend_from_slice(&[
        1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    ]);
    v.extend_from_slice(&[0u8; 64]);
    let p = write(d.path(), "huge.pcap", &v);
    let (code, stdout, stderr) = run(&["packets"], &p);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("claims 4294967295 bytes"), "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "the frame before it is shown");
    // Peak memory, where GNU time is available.
    if common::have_gnu_time() {
        let out = std::process::Command::new("/usr/bin/time")
            .args(["-f", "%M"])
            .arg(env!("CARGO_BIN_EXE_roce-dissect"))
            .arg(&p)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let kib: u64 = err.lines().last().unwrap().trim().parse().unwrap();
        assert!(kib < 50 * 1024, "peak RSS {kib} KiB");
        eprintln!("peak RSS on the 4 GiB claim: {kib} KiB");
    }
}

#[test]
fn cut_mid_record_keeps_whole_frames_and_warns() {
    let d = tempfile::tempdir().unwrap();
    let frames = roce_dissect::synth::samples::every_opcode(3);
    for fmt in [OutFormat::PcapMicros, OutFormat::PcapNg] {
        let mut w = CaptureWriter::new(Vec::new(), fmt).unwrap();
        for (i, f) in frames.iter().take(10).enumerate() {
            w.write(1_000_000_000 + i as u64, f).unwrap();
        }
        let mut bytes = w.into_inner();
        bytes.truncate(bytes.len() - 30);
        let p = write(d.path(), "cut.cap", &bytes);
        let (code, stdout, stderr) = run(&["packets"], &p);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(stdout.lines().count(), 9);
        assert!(
            stderr.contains("warning: capture cut mid-record"),
            "{stderr}"
        );
        assert!(stderr.contains("read 9 whole frames"), "{stderr}");
        let (code, stdout, _) = run(&["--json"], &p);
        assert_eq!(code, 0);
        let r: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(r["capture"]["frames"], 9);
        assert_eq!(r["capture"]["warnings"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn pcapng_unknown_and_corrupt_blocks_are_skipped() {
    let d = tempfile::tempdir().unwrap();
    let frames = roce_dissect::synth::samples::every_opcode(4);
    let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapNg).unwrap();
    w.write(1, &frames[0]).unwrap();
    let mut bytes = w.into_inner();
    // An unknown block type 0x1234 of 16 bytes.
    bytes.extend_from_slice(&0x1234u32.to_le_bytes());
    bytes.extend_from_slice(&16u32.to_le_bytes());
    bytes.extend_from_slice(&[0xaa; 4]);
    bytes.extend_from_slice(&16u32.to_le_bytes());
    // An EPB naming interface 9, which does not exist.
    let mut epb = Vec::new();
    epb.extend_from_slice(&6u32.to_le_bytes());
    epb.extend_from_slice(&36u32.to_le_bytes());
    epb.extend_from_slice(&9u32.to_le_bytes());
    epb.extend_from_slice(&[0; 8]);
    epb.extend_from_slice(&4u32.to_le_bytes());
    epb.extend_from_slice(&4u32.to_le_bytes());
    epb.extend_from_slice(&[1, 2, 3, 4]);
    epb.extend_from_slice(&36u32.to_le_bytes());
    bytes.extend_from_slice(&epb);
    // A good frame after them.
    let mut w2 = CaptureWriter::new(Vec::new(), OutFormat::PcapNg).unwrap();
    w2.write(2, &frames[1]).unwrap();
    let tail = w2.into_inner();
    bytes.extend_from_slice(&tail[28 + 32..]); // skip SHB and IDB
    let p = write(d.path(), "blocks.pcapng", &bytes);
    let (code, stdout, stderr) = run(&["packets"], &p);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.lines().count(), 2);
    assert!(
        stderr.contains("unknown pcapng block type 0x1234"),
        "{stderr}"
    );
    assert!(stderr.contains("skipped corrupt packet block"), "{stderr}");
}

#[test]
fn random_frames_to_4791_decode_with_errors() {
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(42);
    let base = roce_dissect::synth::samples::every_opcode(5).remove(0);
    let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapMicros).unwrap();
    for i in 0..3000u64 {
        // Ethernet + IPv4 + UDP to 4791 kept, then random bytes of random length.
        let mut f = base[..42].to_vec();
        let n = rng.below(120) as usize;
        f.extend((0..n).map(|_| rng.next_u32() as u8));
        let total = (f.len() - 14) as u16;
        f[16..18].copy_from_slice(&total.to_be_bytes());
        let udp_len = (f.len() - 34) as u16;
        f[38..40].copy_from_slice(&udp_len.to_be_bytes());
        w.write(1_000_000_000 + i * 1000, &f).unwrap();
    }
    let p = write(d.path(), "random4791.pcap", &w.into_inner());
    let (code, stdout, stderr) = run(&["packets", "--json"], &p);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3000);
    let errors = lines.iter().filter(|l| l.get("error").is_some()).count();
    let bad_icrc = lines.iter().filter(|l| l["icrc"]["valid"] == false).count();
    assert!(errors > 500, "{errors} frames with errors");
    assert!(bad_icrc > 500, "{bad_icrc} frames with a bad ICRC");
    assert!(lines.iter().all(|l| l["roce"] == "v2"));
    let tmp = d.path().join("out.jsonl");
    std::fs::write(&tmp, &stdout).unwrap();
    common::contract_check("packets", &tmp);
    let (code, _, stderr) = run(&["--json"], &p);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn frames_shorter_than_their_headers_claim() {
    let d = tempfile::tempdir().unwrap();
    let frames = roce_dissect::synth::samples::every_opcode(6);
    let mut v = pcap_header(1);
    // Captured length shorter than the frame, as a 64-byte snaplen would cut it.
    for (i, f) in frames.iter().enumerate().take(40) {
        let cut = 64.min(f.len());
        record(&mut v, i as u32, &f[..cut], f.len() as u32);
        // And records that are whole but lie about their UDP/GRH length.
        let mut g = f.clone();
        if g[12..14] == [0x08, 0x00] {
            g[38..40].copy_from_slice(&2000u16.to_be_bytes());
        }
        record(&mut v, i as u32, &g, g.len() as u32);
    }
    let p = write(d.path(), "short.pcap", &v);
    let (code, stdout, stderr) = run(&["packets", "--json"], &p);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 80);
    for l in &lines {
        if l["caplen"].as_u64() < l["len"].as_u64() && l.get("bth").is_some() {
            assert_eq!(l["icrc"]["valid"], serde_json::Value::Null, "{l}");
        }
    }
    assert!(lines.iter().any(|l| l.get("error").is_some()));
}

#[test]
fn impossible_lengths_and_too_many_tags_are_reported_not_skipped() {
    // IHL 4; a total length past the end of a frame captured whole; four
    // VLAN tags (three are decoded).
    let d = tempfile::tempdir().unwrap();
    let eth = [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    let ipv4 = |ihl: u8, total: u16| {
        let mut v = vec![0x40 | ihl, 0];
        v.extend_from_slice(&total.to_be_bytes());
        v.extend_from_slice(&[0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        v.extend_from_slice(&[0x04, 0xd2, 0x12, 0xb7, 0, 48, 0, 0]);
        v.extend_from_slice(&[0; 40]);
        v
    };
    let mut frames = Vec::new();
    frames.push([&eth[..], &[8, 0], &ipv4(4, 68)].concat());
    frames.push([&eth[..], &[8, 0], &ipv4(5, 1500)].concat());
    let mut tagged = eth.to_vec();
    for i in 0..4u8 {
        tagged.extend_from_slice(&[0x81, 0x00, 0x60, i]);
    }
    tagged.extend_from_slice(&[8, 0]);
    tagged.extend_from_slice(&ipv4(5, 68));
    frames.push(tagged);
    let mut v = pcap_header(1);
    for (i, f) in frames.iter().enumerate() {
        record(&mut v, i as u32, f, f.len() as u32);
    }
    let p = write(d.path(), "lengths.pcap", &v);
    let (code, out, err) = run(&["packets", "--json"], &p);
    assert_eq!(code, 0, "{err}");
    let errors: Vec<String> = out
        .lines()
        .map(|l| {
            let j: serde_json::Value = serde_json::from_str(l).unwrap();
            j["error"].as_str().unwrap_or("").to_string()
        })
        .collect();
    assert_eq!(
        errors,
        [
            "IPv4 at offset 14: header length below 20 bytes (IHL < 5)",
            "IPv4 total length at offset 14 claims 1500 bytes, the frame has 68 from there",
            "802.1Q at offset 26: more than 3 VLAN tags: the rest of the frame is not decoded",
        ]
    );
    let (_, json, _) = run(&["--json"], &p);
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(r["capture"]["malformed_frames"], 3);
}

#[test]
fn named_pipes_and_process_substitution_are_read_as_streams() {
    let d = tempfile::tempdir().unwrap();
    let cap = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/loss.pcap");
    let fifo = d.path().join("fifo");
    let ok = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !ok.is_ok_and(|s| s.success()) {
        common::skip("the named pipe", "mkfifo failed");
        return;
    }
    let (_, want, _) = run(&["--json"], &cap);
    let writer = {
        let (cap, fifo) = (cap.clone(), fifo.clone());
        std::thread::spawn(move || std::fs::write(&fifo, std::fs::read(cap).unwrap()))
    };
    let (code, got, err) = run(&["--json"], &fifo);
    writer.join().unwrap().unwrap();
    assert_eq!(code, 0, "{err}");
    let strip = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
        v["capture"]["file"] = "x".into();
        v
    };
    assert_eq!(strip(&got), strip(&want));
    // <(cat FILE) and /dev/stdin on a pipe, through bash.
    let bin = env!("CARGO_BIN_EXE_roce-dissect");
    for how in [
        format!("{bin} --json <(cat {})", cap.display()),
        format!("cat {} | {bin} --json /dev/stdin", cap.display()),
    ] {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&how)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{how}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            strip(&String::from_utf8_lossy(&out.stdout)),
            strip(&want),
            "{how}"
        );
    }
    // The TUI says it needs a regular file.
    let (code, _, err) = run(&["tui"], Path::new("/dev/stdin"));
    assert_eq!(code, 2);
    assert!(
        err.contains("needs a regular file") || err.contains("terminal"),
        "{err}"
    );
}

#[test]
fn the_threads_variable_is_checked_like_the_option() {
    let cap = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/loss.pcap");
    for bad in ["0", "1000000", "18446744073709551615", "many"] {
        let out = common::bin()
            .env("ROCE_DISSECT_THREADS", bad)
            .arg(&cap)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("must be 1 to 1024"), "{err}");
    }
    let out = common::bin()
        .env("ROCE_DISSECT_THREADS", "3")
        .arg(&cap)
        .output()
        .unwrap();
    assert!(out.status.success());
}

/// A full disk (`/dev/full`) is one line that names the output and exit 1,
/// whatever the command; a reader that goes away early is no error at all.
#[test]
fn a_full_disk_names_the_output_and_a_closed_pipe_is_quiet() {
    let capture = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/loss.pcap");
    let capture = capture.to_str().unwrap();
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full");
    if let Err(e) = full() {
        common::skip("/dev/full", &e.to_string());
        return;
    }
    let commands: [&[&str]; 9] = [
        &[capture],
        &["--json", capture],
        &["packets", capture],
        &["packets", "-T", "json", capture],
        &["fields"],
        &["gen", "--scenario", "loss", "-o", "-"],
        &["--help"],
        &["--html", "-", capture],
        &["export", "--schema"],
    ];
    let bin = assert_cmd::cargo::cargo_bin("roce-dissect");
    for args in commands {
        let out = std::process::Command::new(&bin)
            .args(args)
            .stdout(full().unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("roce-dissect: cannot write the standard output: "),
            "{args:?}: {stderr}"
        );
    }
    // A file named on the command line is named in the error.
    let out = common::bin()
        .args(["gen", "--scenario", "loss", "-o", "/dev/full"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("roce-dissect: cannot write /dev/full: "),
        "{stderr}"
    );

    // Megabytes of output (more than a pipe holds), one byte of it read,
    // then the pipe closed.
    let mixed = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng");
    for args in [
        &["gen", "--scenario", "mixed", "--qps", "64", "-o", "-"][..],
        &["packets", "-V", mixed.to_str().unwrap()],
        &["--json", "--timeline", "1us", mixed.to_str().unwrap()],
    ] {
        use std::io::Read;
        let mut child = std::process::Command::new(&bin)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut one = [0u8; 1];
        child.stdout.take().unwrap().read_exact(&mut one).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("cannot write") && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
}
