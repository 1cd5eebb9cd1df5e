//! Several captures at once: a report for each (in the order given,
//! whatever the threads), folders, and `--merge`, which reads them as one
//! capture in timestamp order (like mergecap).

mod common;

use std::path::{Path, PathBuf};

use roce_dissect::capture::{CaptureFile, FrameSource, open_stream};
use roce_dissect::synth::{CaptureWriter, OutFormat};
use serde_json::Value;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

/// Every frame of a capture: (timestamp, original length, bytes).
fn frames(path: &Path) -> Vec<(u64, u32, Vec<u8>)> {
    let mut s = open_stream(path).unwrap();
    let mut v = Vec::new();
    while let Some(f) = s.next_frame() {
        let f = f.unwrap();
        v.push((f.ts_ns, f.len, f.data.to_vec()));
    }
    v
}

fn write(path: &Path, frames: &[(u64, u32, Vec<u8>)]) {
    let mut w = CaptureWriter::new(
        std::fs::File::create(path).unwrap(),
        OutFormat::from_path(path),
    )
    .unwrap();
    for (ts, len, data) in frames {
        w.write_truncated(*ts, data, *len as usize).unwrap();
    }
    w.flush().unwrap();
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = common::bin().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A report without what names its input.
fn anonymous(mut v: Value) -> Value {
    let c = v["capture"].as_object_mut().unwrap();
    for k in ["file", "format", "files"] {
        c.remove(k);
    }
    v
}

fn report(args: &[&str]) -> Value {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn merging_two_halves_split_by_time_gives_the_whole() {
    let d = tempfile::tempdir().unwrap();
    for name in ["mixed.pcapng", "loss.pcap", "pfc-storm.pcapng"] {
        let all = frames(&sample(name));
        let mid = all[all.len() / 2].0;
        let (a, b): (Vec<_>, Vec<_>) = all.iter().cloned().partition(|f| f.0 < mid);
        assert!(!a.is_empty() && !b.is_empty());
        // Halves in the format of the whole (a µs pcap stays µs).
        let ext = if name.ends_with(".pcapng") {
            "pcapng"
        } else {
            "pcap"
        };
        let (pa, pb) = (
            d.path().join(format!("a.{ext}")),
            d.path().join(format!("b.{ext}")),
        );
        write(&pa, &a);
        write(&pb, &b);
        let whole = anonymous(report(&[sample(name).to_str().unwrap(), "--json"]));
        for order in [[&pa, &pb], [&pb, &pa]] {
            for j in ["-j1", "-j2"] {
                let merged = report(&[
                    "--merge",
                    order[0].to_str().unwrap(),
                    order[1].to_str().unwrap(),
                    "--json",
                    j,
                ]);
                assert_eq!(
                    merged["capture"]["files"].as_array().unwrap().len(),
                    2,
                    "{name}"
                );
                assert_eq!(anonymous(merged), whole, "{name} {j}");
            }
        }
    }
}

#[test]
fn merging_interleaved_captures_restores_the_order() {
    // Every other frame in each file, timestamps strictly increasing: the
    // merge must interleave them back frame by frame.
    let d = tempfile::tempdir().unwrap();
    let mut all = frames(&sample("mixed.pcapng"));
    for (i, f) in all.iter_mut().enumerate() {
        // Whole microseconds apart: the µs pcap half keeps them exactly.
        f.0 = 1_700_000_000_000_000_000 + i as u64 * 2000;
    }
    let whole = d.path().join("whole.pcapng");
    write(&whole, &all);
    let odd: Vec<_> = all.iter().step_by(2).cloned().collect();
    let even: Vec<_> = all.iter().skip(1).step_by(2).cloned().collect();
    let (po, pe) = (d.path().join("odd.pcap"), d.path().join("even.pcapng.gz"));
    write(&po, &odd);
    let plain = d.path().join("even.pcapng");
    write(&plain, &even);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &std::fs::read(&plain).unwrap()).unwrap();
    std::fs::write(&pe, gz.finish().unwrap()).unwrap();
    let (_, lines_whole, _) = run(&["packets", "--json", whole.to_str().unwrap()]);
    let (code, lines_merged, err) = run(&[
        "packets",
        "--merge",
        "--json",
        pe.to_str().unwrap(),
        po.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let a: Vec<Value> = lines_whole
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let b: Vec<Value> = lines_merged
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x["frame"], y["frame"]);
        assert_eq!(x["ts_ns"], y["ts_ns"], "frame {}", x["frame"]);
        assert_eq!(x["bth"], y["bth"], "frame {}", x["frame"]);
        assert_eq!(x["len"], y["len"]);
    }
    // Several captures without --merge: packets says what to do.
    let (code, _, err) = run(&["packets", po.to_str().unwrap(), pe.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("--merge"), "{err}");
}

#[test]
fn several_captures_give_a_report_each_in_the_order_given() {
    let names = [
        "pfc-storm.pcapng",
        "loss.pcap",
        "clean.pcapng",
        "mixed.pcapng",
        "incast.pcapng",
        "loss-receiver.ns.pcap",
    ];
    let paths: Vec<String> = names
        .iter()
        .map(|n| sample(n).to_str().unwrap().to_string())
        .collect();
    let singles: Vec<Value> = paths.iter().map(|p| report(&[p, "--json"])).collect();
    for j in ["-j1", "-j2", "-j3", "-j16"] {
        let mut args: Vec<&str> = paths.iter().map(String::as_str).collect();
        args.extend(["--json", j]);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), names.len(), "JSON Lines, one report each");
        for (line, want) in lines.iter().zip(&singles) {
            let got: Value = serde_json::from_str(line).unwrap();
            assert_eq!(&got, want, "{j}");
        }
    }
    // Text: the reports one after the other, each naming its capture.
    let mut args: Vec<&str> = paths.iter().map(String::as_str).collect();
    args.push("-j2");
    let (_, text, _) = run(&args);
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("roce-dissect: "))
        .collect();
    assert_eq!(heads.len(), names.len());
    for (h, n) in heads.iter().zip(names) {
        assert!(h.contains(n), "{h} {n}");
    }
}

#[test]
fn a_folder_is_its_captures_and_a_bad_one_does_not_stop_the_others() {
    let d = tempfile::tempdir().unwrap();
    for n in ["loss.pcap", "clean.pcapng"] {
        std::fs::copy(sample(n), d.path().join(n)).unwrap();
    }
    std::fs::write(d.path().join("notes.txt"), "not a capture").unwrap();
    // Looks like a pcap by its magic, but is cut inside its header.
    std::fs::write(d.path().join("broken.pcap"), [0xd4, 0xc3, 0xb2, 0xa1, 2, 0]).unwrap();
    let (code, out, err) = run(&[d.path().to_str().unwrap(), "--json"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("skipped 1 file that is not a capture (notes.txt)"),
        "{err}"
    );
    assert!(err.contains("broken.pcap: file too short"), "{err}");
    assert!(err.contains("1 of 3 captures could not be read"), "{err}");
    let files: Vec<String> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["capture"]["file"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(files.len(), 2);
    assert!(files[0].ends_with("clean.pcapng") && files[1].ends_with("loss.pcap"));
    // An empty folder says so.
    let e = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&[e.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("no capture file in this folder"), "{err}");
    // A whole folder merged.
    std::fs::remove_file(d.path().join("broken.pcap")).unwrap();
    let merged = report(&["--merge", d.path().to_str().unwrap(), "--json"]);
    assert_eq!(
        merged["capture"]["frames"].as_u64().unwrap(),
        177 + 326,
        "{}",
        merged["capture"]
    );
    let f = d.path().join("merged.json");
    std::fs::write(&f, merged.to_string()).unwrap();
    common::contract_check("report", &f);
}

#[test]
fn the_tui_browses_merged_captures_through_a_copy() {
    let d = tempfile::tempdir().unwrap();
    let all = frames(&sample("mixed.pcapng"));
    let mid = all[all.len() / 2].0;
    let (a, b): (Vec<_>, Vec<_>) = all.iter().cloned().partition(|f| f.0 < mid);
    let (pa, pb) = (d.path().join("a.pcapng"), d.path().join("b.pcap"));
    write(&pa, &a);
    write(&pb, &b);
    let input =
        roce_dissect::tui::Input::merged(&[pb.clone(), pa.clone()], &mut |_, _| {}).unwrap();
    let mut app = roce_dissect::tui::load_input(
        input,
        &Default::default(),
        Default::default(),
        &mut |_, _| {},
    )
    .unwrap();
    assert!(app.title.contains("2 captures merged"), "{}", app.title);
    assert_eq!(app.report.capture.frames as usize, all.len());
    let whole = CaptureFile::open(sample("mixed.pcapng")).unwrap();
    for (i, f) in whole.frames().unwrap().enumerate() {
        let f = f.unwrap();
        let again = app.read(i as u32).unwrap();
        assert_eq!(again.as_frame().data, f.data, "frame {}", i + 1);
        // The µs pcap half keeps microseconds.
        assert_eq!(again.as_frame().ts_ns / 1000, f.ts_ns / 1000);
    }
}

/// With several captures, a warning or note on standard error names the
/// capture it is about (each report names its file; the messages beside
/// them did not): text, JSON Lines, one HTML page, and `export`.
#[test]
fn warnings_of_several_captures_name_their_capture() {
    let d = tempfile::tempdir().unwrap();
    let whole = std::fs::read(sample("loss.pcap")).unwrap();
    let (a, b) = (d.path().join("a.pcap"), d.path().join("b.pcap"));
    std::fs::write(&a, &whole[..20_000]).unwrap();
    std::fs::copy(sample("clean.pcapng"), &b).unwrap();
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    let html = d.path().join("r.html");
    let dataset = d.path().join("ds");
    for args in [
        vec![a_s, b_s],
        vec![a_s, b_s, "--json"],
        vec![a_s, b_s, "--html", html.to_str().unwrap()],
        vec!["export", a_s, b_s, "-o", dataset.to_str().unwrap()],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning:")).collect();
        assert_eq!(warnings.len(), 1, "{args:?}: {err}");
        assert!(
            warnings[0].starts_with(&format!(
                "roce-dissect: warning: {a_s}: capture cut mid-record"
            )),
            "{args:?}: {err}"
        );
    }
    // One capture: the message needs no name.
    let (code, _, err) = run(&[a_s]);
    assert_eq!(code, 0);
    assert!(
        err.starts_with("roce-dissect: warning: capture cut mid-record"),
        "{err}"
    );
    // Merged: one report, the --html page's warnings said too.
    let (code, _, err) = run(&["--merge", a_s, b_s, "--html", html.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("capture cut mid-record"), "{err}");
}
