//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use roce_dissect::capture::CaptureFile;
use roce_dissect::dissect::{DissectOptions, dissect};
use roce_dissect::output::packets::write_json_line;

/// Each frame's number, Protocol and Info columns as `packets -T fields`
/// writes them, of the frames `filter` passes (every frame without one).
pub fn column_lines(capture: &Path, filter: Option<&str>) -> String {
    let mut cmd = bin();
    cmd.arg("packets").arg(capture);
    if let Some(f) = filter {
        cmd.args(["-Y", f]);
    }
    stdout_of(cmd.args([
        "-T",
        "fields",
        "-e",
        "frame.number",
        "-e",
        "_ws.col.Protocol",
        "-e",
        "_ws.col.Info",
    ]))
}

/// Says that (part of) a test is skipped, and why, where `cargo test`
/// shows it: written to the process's standard error directly, past the
/// test harness's capture (which only takes `print!` and `eprint!`), so the
/// line appears in the run's output even when the test passes.
pub fn skip(what: &str, why: &str) {
    use std::io::Write;
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {what}: {why}");
}

/// `../shared/captures-external`, when this checkout has it.
pub fn external_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures-external");
    if d.is_dir() {
        Some(d)
    } else {
        skip(
            "the external captures",
            "../shared/captures-external is absent",
        );
        None
    }
}

/// Every capture file in the external folder, sorted.
pub fn external_captures() -> Vec<PathBuf> {
    match external_dir() {
        Some(d) => captures_in(&d),
        None => Vec::new(),
    }
}

/// The `.pcap` and `.pcapng` files in `dir`, sorted.
pub fn captures_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".pcap") || n.ends_with(".pcapng")
        })
        .collect();
    v.sort();
    v
}

/// Whether tshark can be run; prints why a test is skipped when not.
pub fn have_tshark() -> bool {
    let ok = Command::new("tshark")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        skip(
            "the comparison with tshark",
            "tshark is not installed (apt-get install tshark)",
        );
    }
    ok
}

/// `../shared/tools/contract-check`, when present.
pub fn contract_check(kind: &str, file: &Path) -> Option<String> {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/contract-check");
    if !tool.exists() {
        skip("contract-check", "../shared/tools/contract-check is absent");
        return None;
    }
    let out = Command::new("python3")
        .arg(&tool)
        .arg(kind)
        .arg(file)
        .output()
        .expect("run contract-check");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "contract-check {kind} failed:\n{text}"
    );
    Some(text)
}

/// Whether GNU time is there to measure peak memory; says so when not.
pub fn have_gnu_time() -> bool {
    let ok = Path::new("/usr/bin/time").exists();
    if !ok {
        skip(
            "the peak memory check",
            "/usr/bin/time is absent (apt-get install time)",
        );
    }
    ok
}

/// Decodes a capture into the JSON objects of `packets --json`.
pub fn json_packets(path: &Path) -> Vec<serde_json::Value> {
    let file = CaptureFile::open(path).unwrap();
    let opts = DissectOptions::default();
    let mut out = Vec::new();
    for f in file.frames().unwrap() {
        let f = f.unwrap();
        let mut line = Vec::new();
        write_json_line(&mut line, &dissect(&f, &opts));
        out.push(serde_json::from_slice(&line).expect("valid JSON line"));
    }
    out
}

pub fn bin() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("roce-dissect").unwrap()
}

/// Writes frames to a pcap (µs) in a temp dir and returns its path.
pub fn write_pcap(dir: &Path, name: &str, frames: &[Vec<u8>]) -> PathBuf {
    use roce_dissect::synth::{CaptureWriter, OutFormat};
    let p = dir.join(name);
    let mut w =
        CaptureWriter::new(std::fs::File::create(&p).unwrap(), OutFormat::from_path(&p)).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write(1_700_000_000_000_000_000 + i as u64 * 1000, f)
            .unwrap();
    }
    w.flush().unwrap();
    p
}

/// Waits (a minute at most) until `done`.
pub fn until(what: &str, mut done: impl FnMut() -> bool) {
    let t = std::time::Instant::now();
    while !done() {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(60),
            "never: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Sends SIGINT (a Ctrl-C) to process `pid`.
pub fn sigint(pid: u32) {
    let sent = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
    assert!(sent.is_ok_and(|s| s.success()), "kill -INT {pid}");
}

/// Waits for `child` to end: its exit status's code and what it wrote to
/// its standard error (piped).
pub fn ended(mut child: std::process::Child) -> (Option<i32>, String) {
    let status = child.wait().unwrap();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut err).unwrap();
    }
    (status.code(), err)
}

/// The names in folder `dir`, sorted (none when it is not there).
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The standard output of `cmd`, which must succeed (its stderr is the
/// message if not).
pub fn stdout_of(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Compares `packets -T fields` with tshark's, frame by frame, for the
/// `fields` given (`frame.number` first, then `_ws.col.Protocol`): every
/// frame whose tshark row, from its Protocol column on, starts with one
/// of `protocols` must be ours to the byte. Returns how many were.
pub fn rows_equal_tsharks(captures: &[PathBuf], fields: &[&str], protocols: &[&str]) -> usize {
    assert_eq!(
        fields.get(..2),
        Some(&["frame.number", "_ws.col.Protocol"][..])
    );
    let cols: Vec<&str> = fields.iter().flat_map(|f| ["-e", *f]).collect();
    let mut compared = 0;
    for c in captures {
        let theirs = Command::new("tshark")
            .args(["-n", "-r"])
            .arg(c)
            .args(["-T", "fields"])
            .args(&cols)
            .output()
            .unwrap();
        let ours = stdout_of(
            bin()
                .arg("packets")
                .arg(c)
                .args(["-T", "fields"])
                .args(&cols),
        );
        let ours: std::collections::HashMap<&str, &str> =
            ours.lines().filter_map(|l| l.split_once('\t')).collect();
        for line in String::from_utf8_lossy(&theirs.stdout).lines() {
            let Some((n, rest)) = line.split_once('\t') else {
                continue;
            };
            if protocols.iter().any(|p| rest.starts_with(p)) {
                assert_eq!(ours.get(n), Some(&rest), "{} frame {n}", c.display());
                compared += 1;
            }
        }
    }
    compared
}

/// `packets -Y FILTER` selects the frames of `capture` tshark's `-Y`
/// does.
pub fn filter_selects_tsharks(capture: &Path, filter: &str) {
    let args = ["-Y", filter, "-T", "fields", "-e", "frame.number"];
    let theirs = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(capture)
        .args(args)
        .output()
        .unwrap();
    let ours = stdout_of(bin().arg("packets").arg(capture).args(args));
    assert_eq!(
        ours,
        String::from_utf8_lossy(&theirs.stdout),
        "{} -Y {filter}",
        capture.display()
    );
}

/// The kinds of a JSON report's hints, in their order.
pub fn hint_kinds(r: &serde_json::Value) -> Vec<&str> {
    r["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect()
}

/// Whether `program` runs (asked its version with `version_arg`); if not,
/// the test says it is skipped, as needing it for `what`.
pub fn have(program: &str, version_arg: &str, what: &str) -> bool {
    if Command::new(program).arg(version_arg).output().is_ok() {
        return true;
    }
    skip(what, &format!("{program} is not installed"));
    false
}

/// Asserts that `child`, sent a Ctrl-C while writing `out`, ended with
/// exit 130 and said `out` was not written (a file of that name as it was).
pub fn interrupted_leaving(child: std::process::Child, out: &Path) {
    let (code, err) = ended(child);
    assert_eq!(code, Some(130), "{err}");
    assert_eq!(
        err,
        format!(
            "roce-dissect: interrupted (Ctrl-C): {} was not written (a file of that name is as it was)\n",
            out.display()
        )
    );
}

/// The frames of a sample Ethernet capture of RoCE v2, as they are and
/// with their UDP destination port moved to `port` (each ICRC computed
/// again, since it covers the UDP header).
pub fn moved_to_port(capture: &Path, port: u16) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    use roce_dissect::capture::{Frame, FrameReader, LinkType};
    let bytes = std::fs::read(capture).unwrap();
    let at_port = DissectOptions {
        roce_port: port,
        ..DissectOptions::default()
    };
    let frames: Vec<Vec<u8>> = FrameReader::new(&bytes)
        .unwrap()
        .map(|f| f.unwrap().data.to_vec())
        .collect();
    let moved = frames
        .iter()
        .map(|f| {
            let mut data = f.clone();
            let udp = dissect(
                &Frame::whole(&data, LinkType::Ethernet),
                &DissectOptions::default(),
            )
            .udp
            .unwrap();
            let at = usize::from(udp.offset) + 2;
            data[at..at + 2].copy_from_slice(&port.to_be_bytes());
            let icrc = dissect(&Frame::whole(&data, LinkType::Ethernet), &at_port)
                .icrc
                .unwrap()
                .expected
                .unwrap();
            let end = data.len();
            data[end - 4..].copy_from_slice(&icrc.to_be_bytes());
            data
        })
        .collect();
    (frames, moved)
}

/// A screen's text as one line: borders, quotes and the spaces around each
/// line taken off, lines joined by a space (wrapped text whole again).
pub fn flat_screen(screen: &str) -> String {
    screen
        .lines()
        .map(|l| l.trim_matches(|c| c == '│' || c == ' ' || c == '"'))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
