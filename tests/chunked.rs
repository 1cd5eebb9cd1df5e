//! The multi-threaded reader must give the sequential report exactly, for
//! pcap and pcapng: on the sample and external captures, on generated
//! scenarios, and on files built to defeat its guesses (payloads full of
//! fake record headers, records longer than a chunk, cut and corrupt files,
//! pcapng sections one after another), with chunk sizes from a few bytes up
//! and 2 to 4 threads.

mod common;

use std::io::Write;
use std::path::Path;

use roce_dissect::analysis::{AnalysisOptions, Report};
use roce_dissect::capture::{CaptureError, CaptureFile, PCAP_HEADER_LEN, PcapLayout};
use roce_dissect::dissect::DissectOptions;
use roce_dissect::pipeline::analyze_sequential;
use roce_dissect::pipeline::chunked::{ChunkedFile, Plan, analyze_file};
use roce_dissect::synth::pcap::{CaptureWriter, OutFormat};
use roce_dissect::synth::scenario::{GenOptions, generate};

fn outcome(r: Result<Report, CaptureError>) -> String {
    match r {
        Ok(report) => serde_json::to_string_pretty(&report).unwrap(),
        Err(e) => format!("error: {e}"),
    }
}

fn sequential(bytes: &[u8]) -> String {
    let file = CaptureFile::from_bytes(bytes.to_vec());
    let mut reader = file.frames().unwrap();
    outcome(analyze_sequential(
        &mut reader,
        "capture",
        &DissectOptions::default(),
        AnalysisOptions::default(),
        None,
    ))
}

fn chunked(path: &Path, plan: Plan) -> String {
    let file = std::fs::File::open(path).unwrap();
    outcome(analyze_file(
        ChunkedFile::new(&file).expect("a pcap or pcapng file"),
        "capture",
        &DissectOptions::default(),
        AnalysisOptions::default(),
        plan,
        None,
    ))
}

/// Asserts that every plan agrees with the sequential reader on `bytes`.
fn agree(bytes: &[u8], what: &str, chunks: &[u64]) {
    let want = sequential(bytes);
    let mut tmp = tempfile::NamedTempFile::new().unwrap();
    tmp.write_all(bytes).unwrap();
    tmp.flush().unwrap();
    for &chunk in chunks {
        // One analysis, and the analysis split by host pair in as many
        // parts as threads, or one fewer.
        for (threads, parts) in [(2, 1), (3, 1), (4, 1), (2, 2), (3, 2), (4, 4)] {
            let got = chunked(
                tmp.path(),
                Plan {
                    threads,
                    chunk,
                    parts,
                },
            );
            assert!(
                got == want,
                "{what}: chunk {chunk}, {threads} threads, {parts} parts: report differs from the sequential one\n{}",
                first_difference(&want, &got)
            );
        }
    }
}

fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}: sequential {x:?}, chunked {y:?}", i + 1);
        }
    }
    format!("lengths {} and {}", a.len(), b.len())
}

fn pcap_header(nanos: bool) -> Vec<u8> {
    let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
    let mut f = magic.to_le_bytes().to_vec();
    f.extend(2u16.to_le_bytes());
    f.extend(4u16.to_le_bytes());
    f.extend([0; 8]);
    f.extend(262_144u32.to_le_bytes());
    f.extend(1u32.to_le_bytes());
    f
}

fn record(f: &mut Vec<u8>, sec: u32, frac: u32, data: &[u8], orig: u32) {
    f.extend(sec.to_le_bytes());
    f.extend(frac.to_le_bytes());
    f.extend((data.len() as u32).to_le_bytes());
    f.extend(orig.to_le_bytes());
    f.extend(data);
}

fn scenario(name: &str, seed: u64, format: OutFormat) -> Vec<u8> {
    let mut w = CaptureWriter::new(Vec::new(), format).unwrap();
    let opts = GenOptions {
        scenario: roce_dissect::synth::scenario::Scenario::from_name(name).unwrap(),
        seed,
        qps: 6,
        messages: 12,
        size: 5000,
        pmtu: 1024,
        loss: 0.03,
        ..GenOptions::default()
    };
    generate(opts, &mut |ts, f| w.write(ts, f)).unwrap();
    w.into_inner()
}

#[test]
fn sample_and_external_pcaps() {
    let mut paths = common::external_captures();
    for e in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/captures")).unwrap() {
        paths.push(e.unwrap().path());
    }
    let mut n = 0;
    for p in paths {
        let bytes = std::fs::read(&p).unwrap();
        let pcapng = bytes.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]);
        if !pcapng && !matches!(PcapLayout::parse(&bytes), Ok(Some(_))) {
            continue;
        }
        agree(&bytes, &p.display().to_string(), &[97, 4096, 1 << 20]);
        n += usize::from(pcapng);
    }
    assert!(n >= 3, "captures/ holds three pcapng files");
}

#[test]
fn generated_scenarios_in_both_resolutions() {
    // NVMe-oF is not split: its parts stop early and it is analysed again.
    for (name, seed) in [
        ("mixed", 3),
        ("loss", 4),
        ("pfc-storm", 5),
        ("incast", 6),
        ("nvme", 7),
    ] {
        for format in [
            OutFormat::PcapMicros,
            OutFormat::PcapNanos,
            OutFormat::PcapNg,
        ] {
            let bytes = scenario(name, seed, format);
            agree(&bytes, name, &[333, 65_536]);
        }
    }
}

/// pcapng files one after another (`cat a.pcapng b.pcapng`): every section
/// header starts the interfaces afresh, so chunks read before the reader
/// reached it are read again.
#[test]
fn pcapng_sections_one_after_another() {
    let mut f = scenario("loss", 21, OutFormat::PcapNg);
    f.extend(scenario("pfc-storm", 22, OutFormat::PcapNg));
    f.extend(scenario("mixed", 23, OutFormat::PcapNg));
    agree(&f, "three sections", &[200, 4096, 65_536]);
}

/// Payloads made of records that chain plausibly: a guess that lands in
/// them is wrong, and the reader must notice and reread.
#[test]
fn payloads_that_look_like_records() {
    let mut inner = Vec::new();
    for i in 0..40u32 {
        record(&mut inner, 1_700_000_000, i, &[0xab; 20], 20);
    }
    let real = scenario("loss", 9, OutFormat::PcapMicros);
    let frames = roce_dissect::capture::CaptureFile::from_bytes(real.clone());
    let mut f = pcap_header(false);
    for (i, fr) in frames.frames().unwrap().enumerate() {
        let fr = fr.unwrap();
        let sec = 1_700_000_000 + i as u32;
        record(&mut f, sec, 0, fr.data, fr.len);
        if i % 3 == 0 {
            // A non-RoCE frame whose bytes are a run of fake records.
            let mut fake = vec![0u8; 14];
            fake[12] = 0x88;
            fake[13] = 0xb5;
            fake.extend(&inner);
            record(&mut f, sec, 1, &fake, fake.len() as u32);
        }
    }
    agree(&f, "fake records", &[50, 700, 3000]);
}

#[test]
fn records_longer_than_a_chunk() {
    let mut f = pcap_header(true);
    for i in 0..30u32 {
        let len = if i % 7 == 0 { 20_000 } else { 100 + i as usize };
        record(&mut f, 10, i, &vec![i as u8; len], len as u32);
    }
    agree(&f, "long records", &[64, 5000, 30_000]);
}

#[test]
fn cut_and_corrupt_files() {
    let good = scenario("mixed", 12, OutFormat::PcapMicros);
    for cut in [good.len() - 1, good.len() - 17, good.len() / 2, 40, 30, 24] {
        agree(&good[..cut], &format!("cut at {cut}"), &[100, 4096]);
    }
    // A record claiming 4 GiB in the middle.
    let file = CaptureFile::from_bytes(good.clone());
    let middle = file.frames().unwrap().nth(300).unwrap().unwrap().offset;
    let mut bad = good.clone();
    bad[middle + 8..middle + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    agree(&bad, "absurd length", &[100, 4096, 1 << 20]);
    assert!(sequential(&bad).starts_with("error: record 301"));
    // Garbage after the last record.
    let mut tail = good.clone();
    tail.extend([0x55; 37]);
    agree(&tail, "garbage tail", &[100, 4096]);
}

#[test]
fn cut_and_corrupt_pcapng_files() {
    let good = scenario("mixed", 13, OutFormat::PcapNg);
    for cut in [good.len() - 1, good.len() - 20, good.len() / 2, 100, 40, 28] {
        agree(&good[..cut], &format!("cut at {cut}"), &[100, 4096]);
    }
    let file = CaptureFile::from_bytes(good.clone());
    let middle = file.frames().unwrap().nth(300).unwrap().unwrap().offset;
    // A block claiming 4 GiB in the middle.
    let mut bad = good.clone();
    bad[middle + 4..middle + 8].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    agree(&bad, "absurd length", &[100, 4096, 1 << 20]);
    assert!(sequential(&bad).starts_with("error: record 301"));
    // Blocks whose two lengths disagree: skipped with a warning each.
    let mut skipped = good.clone();
    for k in [100, 200, 250] {
        let at = file.frames().unwrap().nth(k).unwrap().unwrap().offset;
        skipped[at + 8..at + 12].copy_from_slice(&7u32.to_le_bytes());
    }
    agree(&skipped, "bad interface ids", &[100, 4096, 1 << 20]);
    assert!(sequential(&skipped).contains("skipped"));
    let mut tail = good.clone();
    tail.extend([0x55; 37]);
    agree(&tail, "garbage tail", &[100, 4096]);
}

/// `roce-dissect gen ARGS -o PATH`, which must succeed.
fn gen_file(args: &[&str], path: &Path) {
    let out = common::bin()
        .arg("gen")
        .args(args)
        .arg("-o")
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "gen {args:?}: {out:?}");
}

/// Mixed traffic on 16 QPs in 8 KiB messages: several 2 MiB chunks.
const MIXED_16: &[&str] = &[
    "--scenario",
    "mixed",
    "--seed",
    "5",
    "--qps",
    "16",
    "--messages",
    "60",
    "--size",
    "8192",
    "--pmtu",
    "1024",
];

/// The command line picks the chunked reader for a pcap of several chunks;
/// `--threads` and the other readers agree with it, and so do pcapng and a
/// pipe of the same frames.
#[test]
fn command_line_readers_agree() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("big.pcap");
    gen_file(MIXED_16, &pcap);
    assert!(
        std::fs::metadata(&pcap).unwrap().len() > 5 << 20,
        "several 2 MiB chunks"
    );
    let report = |args: &[&str], input: Option<&Path>| {
        let mut cmd = common::bin();
        cmd.args(args);
        if let Some(p) = input {
            cmd.pipe_stdin(p).unwrap();
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // The file name differs between a path and standard input.
        v["capture"]["file"] = serde_json::Value::Null;
        v
    };
    let p = pcap.to_str().unwrap();
    let want = report(&[p, "--json", "--threads", "1"], None);
    assert!(want["capture"]["frames"].as_u64().unwrap() > 5000);
    for threads in ["2", "3", "8"] {
        assert_eq!(
            report(&[p, "--json", "-j", threads], None),
            want,
            "-j {threads}"
        );
    }
    // Host pairs analysed side by side: the same report (and one thread
    // reads sequentially whatever the analysis threads).
    for (threads, split) in [("2", "2"), ("3", "2"), ("2", "3"), ("8", "4"), ("1", "2")] {
        assert_eq!(
            report(
                &[p, "--json", "-j", threads, "--analysis-threads", split],
                None
            ),
            want,
            "-j {threads} --analysis-threads {split}"
        );
    }
    assert_eq!(
        report(&["-", "--json"], Some(&pcap)),
        want,
        "standard input"
    );
    // The same frames as pcapng (in ns, where the pcap has µs): chunked
    // too, and the sequential report.
    let ng = dir.path().join("big.pcapng");
    gen_file(MIXED_16, &ng);
    let n = ng.to_str().unwrap();
    let want_ng = report(&[n, "--json", "-j", "1"], None);
    assert_eq!(want_ng["capture"]["format"], "pcapng");
    assert_eq!(want_ng["capture"]["frames"], want["capture"]["frames"]);
    for threads in ["2", "3"] {
        assert!(
            report(&[n, "--json", "-j", threads], None) == want_ng,
            "pcapng, -j {threads}: the report differs from -j 1"
        );
        assert!(
            report(
                &[n, "--json", "-j", threads, "--analysis-threads", "2"],
                None
            ) == want_ng,
            "pcapng, -j {threads} --analysis-threads 2: the report differs from -j 1"
        );
    }
}

#[test]
fn resident_set_stays_bounded_on_a_large_file() {
    // The reader maps the whole file and gives each group of chunks back
    // once dissected: a 192 MiB capture must not become resident. Without
    // the releases the peak is above the file's size.
    if !common::have_gnu_time() {
        return;
    }
    let one = scenario("clean", 1, OutFormat::PcapNanos);
    let records = &one[PCAP_HEADER_LEN..];
    let mut tmp = tempfile::NamedTempFile::new().unwrap();
    tmp.write_all(&one[..PCAP_HEADER_LEN]).unwrap();
    let mut size = 0;
    while size < 192 << 20 {
        tmp.write_all(records).unwrap();
        size += records.len();
    }
    tmp.flush().unwrap();
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_roce-dissect"))
        .args(["--json", "--threads", "2"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let kib: u64 = err.lines().last().unwrap().trim().parse().unwrap();
    eprintln!("peak RSS on {} MiB: {kib} KiB", size >> 20);
    assert!(kib < 96 * 1024, "peak RSS {kib} KiB");
}

/// A capture of about `mib` MiB: the clean scenario repeated.
fn big_capture(dir: &Path, mib: usize) -> std::path::PathBuf {
    let one = scenario("clean", 1, OutFormat::PcapNanos);
    let records = &one[PCAP_HEADER_LEN..];
    let p = dir.join("big.pcap");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    f.write_all(&one[..PCAP_HEADER_LEN]).unwrap();
    let mut size = 0;
    while size < mib << 20 {
        f.write_all(records).unwrap();
        size += records.len();
    }
    f.flush().unwrap();
    p
}

#[test]
fn a_file_cut_while_being_read_gives_a_warning_and_a_partial_report() {
    use roce_dissect::capture::{FrameSource, StreamReader};
    let dir = tempfile::tempdir().unwrap();
    let p = big_capture(dir.path(), 24);
    let full = std::fs::metadata(&p).unwrap().len();
    let cut = |len: u64| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(len)
            .unwrap()
    };
    // Every core: the file is cut to a third when the first chunk is done.
    let file = std::fs::File::open(&p).unwrap();
    let input = ChunkedFile::new(&file).unwrap();
    let mut done = false;
    let mut progress = |_: usize, _: usize, _: u64| {
        if !done {
            done = true;
            cut(full / 3);
        }
        std::ops::ControlFlow::Continue(())
    };
    let plan = Plan {
        threads: 2,
        chunk: 1 << 20,
        parts: 2,
    };
    let r = analyze_file(
        input,
        "cut",
        &DissectOptions::default(),
        AnalysisOptions::default(),
        plan,
        Some(&mut progress),
    )
    .expect("a partial report, not an error");
    let w = &r.capture.warnings;
    assert!(w.iter().any(|w| w.contains("the file shrank")), "{w:?}");
    assert!(r.capture.frames > 0);
    assert_eq!(r.capture.malformed_frames, 0, "no frame read from zeros");
    // One thread, through mapped windows: cut after the first frames.
    let p2 = big_capture(dir.path(), 24);
    let mut s = StreamReader::mapped(std::fs::File::open(&p2).unwrap(), 1 << 20).unwrap();
    let mut n = 0u64;
    while let Some(f) = s.next_frame() {
        f.unwrap();
        n += 1;
        if n == 1000 {
            let len = std::fs::metadata(&p2).unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(&p2)
                .unwrap()
                .set_len(len / 4)
                .unwrap();
        }
    }
    assert!(n > 1000);
    assert_eq!(s.warnings().len(), 1, "{:?}", s.warnings());
    assert!(
        s.warnings()[0].contains("the file shrank"),
        "{:?}",
        s.warnings()
    );
}

/// `packets -Y` and `CAPTURE -Y` read a file of several chunks with every
/// core (the workers test the filter on the bytes, the analysis thread
/// decodes again the frames it may pass): the output is the one thread's,
/// byte for byte, for filters on the bytes, on the frame's place and on
/// the analysis, in every output format, with `-c`.
#[test]
fn filtered_output_is_the_same_on_every_core() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("mixed.pcap");
    gen_file(&["--scenario", "mixed", "--qps", "16"], &cap);
    // More than the two chunks the multi-threaded reader needs.
    assert!(std::fs::metadata(&cap).unwrap().len() > 4 << 20);
    let filters = [
        "bth.opcode == 0x81 or macc",
        "roce.analysis.retransmission || roce.analysis.gap",
        "frame.number in {5 700 1800} || (udp && frame.time_delta > 0.0005)",
        "roce.analysis.flow == 3 and not aeth",
        "ipv6 and bth.psn > 100",
    ];
    let run = |threads: &str, args: &[&str]| {
        let out = common::bin()
            .env("ROCE_DISSECT_THREADS", threads)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.stdout, out.stderr)
    };
    let path = cap.to_str().unwrap();
    for f in filters {
        let fields = [
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "frame.time_relative",
            "-e",
            "frame.time_delta",
            "-e",
            "roce.analysis.flow",
            "-e",
            "bth.psn",
        ];
        let cases: Vec<Vec<&str>> = vec![
            vec!["packets", path, "-Y", f],
            vec!["packets", path, "-Y", f, "-T", "json"],
            [&["packets", path, "-Y", f][..], &fields[..]].concat(),
            vec!["packets", path, "-Y", f, "-c", "7", "-V"],
            vec![path, "-Y", f, "--json"],
        ];
        for args in cases {
            let one = run("1", &args);
            assert!(!one.0.is_empty(), "{args:?} selects nothing");
            for threads in ["2", "4"] {
                assert!(run(threads, &args) == one, "{args:?}, {threads} threads");
            }
        }
    }
}

/// A capture of thousands of flows is observed with the caches hinted
/// ahead (past 4 096 flows, on the chunked reader) and has its flows'
/// reports built and their JSON formatted on several threads: the bytes
/// are those of one thread (read in sequence, with no hints), and every
/// flow is there; read from a pipe (the batches of the streamed path,
/// hinted too), the same report.
#[test]
fn many_flows_report_the_same_on_every_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("qps.pcap");
    const QPS_8192: &[&str] = &[
        "--scenario",
        "clean",
        "--seed",
        "3",
        "--qps",
        "8192",
        "--messages",
        "1",
        "--size",
        "1024",
        "--pmtu",
        "1024",
    ];
    gen_file(QPS_8192, &pcap);
    let run = |threads: &str| {
        let out = common::bin()
            .arg(&pcap)
            .args(["--json", "-j", threads])
            .output()
            .unwrap();
        assert!(out.status.success(), "-j {threads}");
        out.stdout
    };
    let one = run("1");
    let v: serde_json::Value = serde_json::from_slice(&one).unwrap();
    let flows = v["flows"].as_array().unwrap();
    // Past 3 × 4096 flows: three threads build and format them.
    assert!(flows.len() > 3 * 4096, "{} flows", flows.len());
    assert_eq!(v["capture"]["flows"].as_u64(), Some(flows.len() as u64));
    assert_eq!(v["connections"].as_array().unwrap().len(), 8192);
    for threads in ["2", "3", "8"] {
        let other = run(threads);
        assert!(one == other, "-j {threads}: the report's bytes differ");
    }
    // Read from a pipe: decoded on one thread, analysed (with the same
    // hints) on another. The same report but for the file's name.
    let piped = common::bin()
        .args(["-", "--json", "-j", "2"])
        .pipe_stdin(&pcap)
        .unwrap()
        .output()
        .unwrap();
    assert!(piped.status.success());
    let mut p: serde_json::Value = serde_json::from_slice(&piped.stdout).unwrap();
    assert_eq!(p["capture"]["file"], "-");
    p["capture"]["file"] = v["capture"]["file"].clone();
    assert!(p == v, "read from a pipe: the report differs");
}

/// `--analysis-threads` on a capture whose analysis does not split
/// (NVMe-oF): the same report, and a note on stderr saying why it was
/// analysed on one thread; none when it splits.
#[test]
fn analysis_threads_say_when_they_could_not_split() {
    let dir = tempfile::tempdir().unwrap();
    let run = |path: &Path, extra: &[&str]| {
        let out = common::bin()
            .arg(path)
            .arg("--json")
            .args(["-j", "2"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        (
            out.stdout,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let nvme = dir.path().join("nvme.pcap");
    gen_file(
        &[
            "--scenario",
            "nvme",
            "--seed",
            "2",
            "--qps",
            "4",
            "--messages",
            "200",
        ],
        &nvme,
    );
    assert!(
        std::fs::metadata(&nvme).unwrap().len() > 5 << 20,
        "several chunks"
    );
    let (want, quiet) = run(&nvme, &[]);
    assert!(!quiet.contains("note:"), "{quiet}");
    let (got, said) = run(&nvme, &["--analysis-threads", "2"]);
    assert!(got == want, "the report differs");
    assert!(
        said.contains(
            "roce-dissect: note: analysed on one thread, not 2 (--analysis-threads): it carries NVMe-oF"
        ),
        "{said}"
    );
    let mixed = dir.path().join("mixed.pcap");
    gen_file(MIXED_16, &mixed);
    let (want, _) = run(&mixed, &[]);
    let (got, said) = run(&mixed, &["--analysis-threads", "2"]);
    assert!(got == want, "the report differs");
    assert!(!said.contains("note:"), "{said}");
}

/// A progress callback that breaks stops the reading there (`export`
/// stops its first pass so on Ctrl-C, at the next chunk of the file): the
/// report is that of the frames read, fewer than the file's.
#[test]
fn progress_that_breaks_stops_the_reading() {
    use std::ops::ControlFlow;
    let dir = tempfile::tempdir().unwrap();
    let path = big_capture(dir.path(), 24);
    let analyse = |progress| {
        roce_dissect::pipeline::analyze_path(
            &path,
            &DissectOptions::default(),
            AnalysisOptions::default(),
            2,
            progress,
        )
        .unwrap()
        .capture
        .frames
    };
    let all = analyse(None);
    let mut calls = 0;
    let mut stop = |_: usize, _: usize, _: u64| {
        calls += 1;
        match calls {
            1 => ControlFlow::Continue(()),
            _ => ControlFlow::Break(()),
        }
    };
    let read = analyse(Some(&mut stop));
    assert!(read > 0 && read < all / 2, "{read} of {all} frames");
    assert_eq!(calls, 2);
}
