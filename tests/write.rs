//! `packets -w FILE`: the frames selected written as a capture, read back
//! frame for frame, and compared with what `tshark -w` writes.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use roce_dissect::capture::FrameReader;

/// A frame as read: time, length on the wire, bytes, link type, speed.
type Rec = (u64, u32, Vec<u8>, u32, Option<u64>);

fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("captures")
}

/// Every frame of the capture at `path` (gzip, zstd or xz by its name).
fn frames(path: &Path) -> Vec<Rec> {
    let raw = std::fs::read(path).unwrap();
    let name = path.to_string_lossy();
    let mut bytes = Vec::new();
    if name.ends_with(".gz") {
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut bytes)
            .unwrap();
    } else if name.ends_with(".zst") {
        bytes = zstd::decode_all(&raw[..]).unwrap();
    } else if name.ends_with(".xz") {
        liblzma::read::XzDecoder::new(&raw[..])
            .read_to_end(&mut bytes)
            .unwrap();
    } else {
        bytes = raw;
    }
    FrameReader::new(&bytes)
        .unwrap()
        .map(|f| {
            let f = f.unwrap();
            (
                f.ts_ns,
                f.len,
                f.data.to_vec(),
                f.link.number(),
                f.if_speed.map(|s| s.get()),
            )
        })
        .collect()
}

/// Runs `packets` with `args`; its standard output.
fn packets(args: &[&str]) -> String {
    let out = common::bin().arg("packets").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "packets {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Frame numbers `packets CAPTURE SELECTION...` shows.
fn selected(capture: &Path, selection: &[&str]) -> Vec<usize> {
    let mut args = vec![s(capture)];
    args.extend(selection);
    args.extend(["-T", "fields", "-e", "frame.number"]);
    packets(&args).lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
fn a_copy_holds_every_frame_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = common::captures_in(&captures());
    inputs.extend(common::external_captures());
    // Native InfiniBand and ERF records (ibdump), from `gen`.
    for (link, name) in [("infiniband", "ib.pcapng"), ("erf", "erf.pcap")] {
        let p = dir.path().join(name);
        common::bin()
            .args(["gen", "--scenario", "loss", "--link", link, "-o", s(&p)])
            .assert()
            .success();
        inputs.push(p);
    }
    assert!(inputs.len() >= 8);
    for input in &inputs {
        let want = frames(input);
        for ext in ["pcapng", "pcap", "pcapng.gz", "pcap.zst", "pcapng.xz"] {
            let out = dir.path().join(format!("copy.{ext}"));
            packets(&[s(input), "-w", s(&out)]);
            let got = frames(&out);
            assert_eq!(got.len(), want.len(), "{} as {ext}", input.display());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                // A pcap has no interface speed.
                let speed = if ext.starts_with("pcapng") { w.4 } else { None };
                assert_eq!(
                    *g,
                    (w.0, w.1, w.2.clone(), w.3, speed),
                    "{} as {ext}: frame {}",
                    input.display(),
                    i + 1
                );
            }
        }
    }
}

#[test]
fn a_pcap_copied_to_a_pcap_is_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    // Microseconds, then nanoseconds: each kept in its own resolution.
    for name in ["loss.pcap", "loss-receiver.ns.pcap"] {
        let input = captures().join(name);
        let out = dir.path().join(name);
        packets(&[s(&input), "-w", s(&out)]);
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(&input).unwrap(),
            "{name}"
        );
    }
}

/// A microsecond pcap through pcapng and back: the same file, and its
/// times printed to the microsecond, as tshark prints them.
#[test]
fn microseconds_stay_microseconds_through_pcapng() {
    let dir = tempfile::tempdir().unwrap();
    let loss = captures().join("loss.pcap");
    let ng = dir.path().join("us.pcapng");
    let back = dir.path().join("back.pcap");
    packets(&[s(&loss), "-w", s(&ng)]);
    packets(&[s(&ng), "-w", s(&back)]);
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&loss).unwrap());
    let lines = packets(&[s(&ng)]);
    assert_eq!(lines, packets(&[s(&loss)]));
    assert!(
        lines.lines().next().unwrap().contains(" 0.000000 "),
        "{lines}"
    );
    if !common::have_tshark() {
        return;
    }
    let theirs = Command::new("tshark")
        .args(["-r", s(&ng)])
        .output()
        .unwrap();
    let times = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
            .collect()
    };
    assert_eq!(
        times(&lines),
        times(&String::from_utf8_lossy(&theirs.stdout))
    );
}

#[test]
fn what_is_written_is_what_would_be_shown() {
    let dir = tempfile::tempdir().unwrap();
    let mixed = captures().join("mixed.pcapng");
    let all = frames(&mixed);
    let out = dir.path().join("out.pcapng");
    let pick =
        |numbers: &[usize]| -> Vec<Rec> { numbers.iter().map(|&n| all[n - 1].clone()).collect() };
    // Filters on the analysis (which sees every frame) and on headers.
    for filter in [
        "roce.analysis.retransmission",
        "roce.analysis.nak || roce.analysis.out_of_order",
        "ip.addr == 10.0.0.7 && bth",
        "macc.opcode == 0x0101",
    ] {
        let numbers = selected(&mixed, &["-Y", filter]);
        assert!(!numbers.is_empty(), "{filter} selects nothing");
        packets(&[s(&mixed), "-Y", filter, "-w", s(&out)]);
        assert_eq!(frames(&out), pick(&numbers), "-Y {filter}");
    }
    // -c, --flow, --roce-only.
    packets(&[s(&mixed), "-c", "7", "-w", s(&out)]);
    assert_eq!(frames(&out), all[..7].to_vec());
    let flow = "10.0.0.7,10.0.1.3,0x00400d";
    let numbers = selected(&mixed, &["--flow", flow]);
    assert_eq!(numbers.len(), 39);
    packets(&[s(&mixed), "--flow", flow, "-w", s(&out)]);
    assert_eq!(frames(&out), pick(&numbers));
    // A filter that selects nothing writes a capture of no frames.
    packets(&[s(&mixed), "-Y", "frame.number > 100000", "-w", s(&out)]);
    assert_eq!(frames(&out), Vec::<Rec>::new());
    let empty_pcap = dir.path().join("none.pcap");
    packets(&[
        s(&mixed),
        "-Y",
        "frame.number > 100000",
        "-w",
        s(&empty_pcap),
    ]);
    assert_eq!(std::fs::metadata(&empty_pcap).unwrap().len(), 24);
}

#[test]
fn printing_too_and_the_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let loss = captures().join("loss.pcap");
    let out = dir.path().join("out.pcapng");
    // Without -P, nothing is printed.
    assert_eq!(
        packets(&[s(&loss), "-Y", "roce.analysis.nak", "-w", s(&out)]),
        ""
    );
    // With it, the lines packets prints.
    let lines = packets(&[s(&loss), "-Y", "roce.analysis.nak"]);
    assert!(!lines.is_empty());
    assert_eq!(
        packets(&[s(&loss), "-Y", "roce.analysis.nak", "-w", s(&out), "-P"]),
        lines
    );
    let fields = ["-T", "fields", "-e", "frame.number", "-e", "bth.psn"];
    let mut args = vec![s(&loss), "-Y", "roce.analysis.nak"];
    args.extend(fields);
    let want = packets(&args);
    args.extend(["-w", s(&out), "-P"]);
    assert_eq!(packets(&args), want);
    // -w - writes the capture to the standard output (a pipe).
    let piped = common::bin()
        .args(["packets", s(&loss), "-w", "-"])
        .output()
        .unwrap();
    assert!(piped.status.success());
    // pcapng, as tshark writes to a pipe.
    let copy = dir.path().join("piped.pcapng");
    std::fs::write(&copy, &piped.stdout).unwrap();
    assert_eq!(frames(&copy), frames(&loss));
    // ... and reads back from one.
    let back = common::bin()
        .args(["packets", "-", "-T", "fields", "-e", "frame.number"])
        .write_stdin(piped.stdout)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&back.stdout).lines().count(), 326);
}

#[test]
fn mistakes_are_one_line_and_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pcap");
    std::fs::copy(captures().join("loss.pcap"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let fails = |args: &[&str], code: i32, says: &str| {
        let out = common::bin().arg("packets").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    };
    fails(
        &[s(&input), "-w", s(&input)],
        2,
        "is the capture being read",
    );
    let other_name = dir.path().join(".").join("in.pcap");
    fails(
        &[s(&input), "-w", s(&other_name)],
        2,
        "is the capture being read",
    );
    assert_eq!(std::fs::read(&input).unwrap(), before);
    fails(&[s(&input), "-w", s(dir.path())], 2, "is a folder");
    let bz = dir.path().join("x.pcap.bz2");
    fails(&[s(&input), "-w", s(&bz)], 2, "bzip2 is not written");
    let out = dir.path().join("x.pcapng");
    fails(&[s(&input), "-w", s(&out), "-V"], 2, "add -P");
    fails(
        &[
            s(&input),
            "-w",
            s(&out),
            "-T",
            "fields",
            "-e",
            "frame.number",
        ],
        2,
        "add -P",
    );
    fails(&[s(&input), "-w", "-", "-P"], 2, "-w - writes the capture");
    let nowhere = dir.path().join("no/such/folder/x.pcapng");
    fails(
        &[s(&input), "-w", s(&nowhere)],
        2,
        "No such file or directory",
    );
    // A classic pcap holds one link type: Ethernet and InfiniBand frames
    // merged go to pcapng only.
    let ib = dir.path().join("ib.pcap");
    common::bin()
        .args([
            "gen",
            "--scenario",
            "loss",
            "--link",
            "infiniband",
            "-o",
            s(&ib),
        ])
        .assert()
        .success();
    let mixed_pcap = dir.path().join("both.pcap");
    fails(
        &["--merge", s(&input), s(&ib), "-w", s(&mixed_pcap)],
        2,
        "holds frames of one link type",
    );
    let both = dir.path().join("both.pcapng");
    packets(&["--merge", s(&input), s(&ib), "-w", s(&both)]);
    let links: std::collections::BTreeSet<u32> = frames(&both).iter().map(|f| f.3).collect();
    assert_eq!(links, [1, 247].into());
    // Nothing half-written was left behind.
    let mut names = common::names_in(dir.path());
    names.sort();
    assert_eq!(names, ["both.pcapng", "ib.pcap", "in.pcap"]);
}

/// tshark's -w and ours write the same frames for the same filter.
#[test]
fn the_frames_tshark_writes() {
    if !common::have_tshark() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = common::captures_in(&captures());
    inputs.extend(common::external_captures());
    // (ours, tshark's)
    let filters = [
        ("udp.dstport == 4791", "udp.dstport == 4791"),
        (
            "bth.opcode == 0x81 || ip.dsfield.ecn == 3",
            "infiniband.bth.opcode == 0x81 || ip.dsfield.ecn == 3",
        ),
        (
            "frame.number >= 5 && frame.number <= 60 && eth.type != 0x0806",
            "frame.number >= 5 && frame.number <= 60 && eth.type != 0x0806",
        ),
    ];
    // What tshark reads of a file: times and lengths.
    let seen = |p: &Path| -> String {
        let out = Command::new("tshark")
            .args([
                "-r",
                s(p),
                "-T",
                "fields",
                "-e",
                "frame.time_epoch",
                "-e",
                "frame.len",
            ])
            .args(["-e", "frame.cap_len", "-e", "frame.encap_type"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Times, lengths, bytes and link types, as read here (tshark keeps
    // the interfaces' other options, which roce-dissect does not read).
    let frames_of = |p: &Path| -> Vec<(u64, u32, Vec<u8>, u32)> {
        frames(p)
            .into_iter()
            .map(|(t, l, d, k, _)| (t, l, d, k))
            .collect()
    };
    let mut compared = 0;
    for input in &inputs {
        // tshark reads a whole copy as it reads the original.
        let copy = dir.path().join("copy.pcapng");
        packets(&[s(input), "-w", s(&copy)]);
        assert_eq!(seen(&copy), seen(input), "{}", input.display());
        for (ours, theirs) in filters {
            let a = dir.path().join("ours.pcapng");
            let b = dir.path().join("tshark.pcapng");
            packets(&[s(input), "-Y", ours, "-w", s(&a)]);
            let t = Command::new("tshark")
                .args(["-r", s(input), "-Y", theirs, "-w", s(&b)])
                .output()
                .unwrap();
            assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
            let (x, y) = (frames_of(&a), frames_of(&b));
            assert_eq!(x, y, "{} -Y {ours}", input.display());
            compared += x.len();
        }
    }
    assert!(compared > 500, "{compared} frames compared");
}

/// Ctrl-C while a capture file is read: the file being written goes, and
/// a file of that name stays as it was (exit status 130). What a killed
/// run leaves is removed by the next run in that folder.
#[test]
#[cfg(target_os = "linux")]
fn ctrl_c_leaves_the_old_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.pcap");
    common::bin()
        .args(["gen", "--scenario", "mixed", "--seed", "1", "--qps", "64"])
        .args(["--messages", "400", "-o", s(&big)])
        .assert()
        .success();
    let out = dir.path().join("out.pcapng");
    std::fs::write(&out, "as it was\n").unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
        .args(["packets", s(&big), "-w", s(&out)])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let partial = format!(".out.pcapng.roce-dissect-{}.partial", child.id());
    common::until("the capture is being written", || {
        common::names_in(dir.path()).contains(&partial)
    });
    common::sigint(child.id());
    common::interrupted_leaving(child, &out);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "as it was\n");
    assert_eq!(common::names_in(dir.path()), ["big.pcap", "out.pcapng"]);
    // A killed run's file (its process gone) goes at the next run.
    let dead = dir
        .path()
        .join(".out.pcapng.roce-dissect-4294967294.partial");
    std::fs::write(&dead, "half").unwrap();
    let small = captures().join("loss.pcap");
    let run = common::bin()
        .args(["packets", s(&small), "-c", "3", "-w", s(&out)])
        .output()
        .unwrap();
    assert!(run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("left in"));
    assert!(!dead.exists());
    assert_eq!(frames(&out).len(), 3);
}

/// A binary capture is never written to a terminal: `packets -w -` and
/// `gen -o -` say so (exit 2) and write nothing (run under `script`, a
/// pseudo-terminal).
#[test]
fn no_capture_on_a_terminal() {
    if !common::have("script", "--version", "a pseudo-terminal") {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_roce-dissect");
    let loss = captures().join("loss.pcap");
    for (args, option) in [
        (format!("packets {} -w -", s(&loss)), "-w"),
        ("gen --scenario clean -o -".to_string(), "-o"),
    ] {
        let out = Command::new("script")
            .args(["-qec", &format!("{bin} {args}"), "/dev/null"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{args}: {text}");
        assert!(
            text.contains(&format!(
                "{option} - writes a binary capture to the standard output, which is a terminal"
            )),
            "{args}: {text}"
        );
        // No pcap or pcapng magic reached the terminal.
        assert!(
            !out.stdout
                .windows(4)
                .any(|w| w == [0x0a, 0x0d, 0x0d, 0x0a] || w == [0xd4, 0xc3, 0xb2, 0xa1]),
            "{args}"
        );
    }
}

/// A capture that cannot be written whole (here a file size limit, as a
/// full disk would) is one line, exit 1, and leaves a file of that name as
/// it was: `packets -w` and `gen` alike, no partial file behind.
#[test]
fn a_write_that_fails_leaves_the_old_file() {
    if !common::have("bash", "--version", "a file size limit") {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_roce-dissect");
    let dir = tempfile::tempdir().unwrap();
    let mixed = captures().join("mixed.pcapng");
    for (name, args) in [
        ("x.pcapng", format!("packets '{}' -w x.pcapng", s(&mixed))),
        (
            "x.pcap",
            "gen --scenario clean --qps 64 -o x.pcap".to_string(),
        ),
    ] {
        std::fs::write(dir.path().join(name), b"old").unwrap();
        // SIGXFSZ ignored: a write past the limit fails with EFBIG.
        let out = Command::new("bash")
            .current_dir(dir.path())
            .args([
                "-c",
                &format!("trap '' XFSZ; ulimit -f 16; exec {bin} {args}"),
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args}: {stderr}");
        assert_eq!(
            stderr.lines().collect::<Vec<_>>(),
            [format!(
                "roce-dissect: cannot write {name}: File too large (os error 27)"
            )],
            "{args}"
        );
        assert_eq!(
            std::fs::read(dir.path().join(name)).unwrap(),
            b"old",
            "{args}"
        );
        assert_eq!(common::names_in(dir.path()), [name], "{args}");
        std::fs::remove_file(dir.path().join(name)).unwrap();
    }
}
