//! Compressed captures (gzip, zstd, xz) read like the plain files: the same
//! report and the same packets, from a file or from standard input; a
//! stream cut short is read up to the cut (with a warning, as a plain
//! capture cut short is), and a corrupt one ends in a one-line error
//! (exit 2).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Gzip,
    Zstd,
    Xz,
}

const KINDS: [Kind; 3] = [Kind::Gzip, Kind::Zstd, Kind::Xz];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Gzip => "gzip",
            Kind::Zstd => "zstd",
            Kind::Xz => "xz",
        }
    }

    fn compress(self, data: &[u8]) -> Vec<u8> {
        match self {
            Kind::Gzip => {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Kind::Zstd => zstd::encode_all(data, 3).unwrap(),
            Kind::Xz => {
                let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
        }
    }
}

fn samples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    v.sort();
    v
}

/// The report with what names the input taken out.
fn report(args: &[&str], path: &Path, stdin: Option<&[u8]>) -> Value {
    let mut cmd = common::bin();
    cmd.args(args).arg("--json");
    match stdin {
        Some(bytes) => cmd.arg("-").write_stdin(bytes.to_vec()),
        None => cmd.arg(path),
    };
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cap = v["capture"].as_object_mut().unwrap();
    cap.remove("file");
    let format = cap.remove("format").unwrap();
    cap.insert(
        "format".into(),
        Value::String(
            format
                .as_str()
                .unwrap()
                .split(" (")
                .next()
                .unwrap()
                .to_string(),
        ),
    );
    v
}

fn packets(path: &Path) -> String {
    let out = common::bin()
        .args(["packets", "--json"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", path.display());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn compressed_samples_and_external_captures_give_the_plain_reports() {
    let mut files = samples();
    files.extend(common::external_captures());
    let d = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for plain in &files {
        let bytes = std::fs::read(plain).unwrap();
        let want = report(&[], plain, None);
        let want_packets = packets(plain);
        for kind in KINDS {
            let packed = kind.compress(&bytes);
            // A name that says nothing: the magic decides.
            let p = d.path().join(format!("capture-{checked}"));
            std::fs::write(&p, &packed).unwrap();
            assert_eq!(report(&[], &p, None), want, "{} {kind:?}", plain.display());
            assert_eq!(
                report(&[], &p, Some(&packed)),
                want,
                "{} {kind:?} on stdin",
                plain.display()
            );
            // One thread, and the pipelined reader.
            assert_eq!(report(&["-j1"], &p, None), want, "{kind:?} -j1");
            assert_eq!(packets(&p), want_packets, "{} {kind:?}", plain.display());
            checked += 1;
        }
    }
    assert!(checked >= 15, "{checked}");
}

#[test]
fn the_report_names_the_compression() {
    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/loss.pcap");
    let d = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let p = d.path().join("c.pcap.x");
        std::fs::write(&p, kind.compress(&std::fs::read(&plain).unwrap())).unwrap();
        let out = common::bin().arg(&p).arg("--json").output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["capture"]["format"],
            format!("pcap ({})", kind.name()),
            "{kind:?}"
        );
        let text = common::bin().arg(&p).output().unwrap();
        let text = String::from_utf8(text.stdout).unwrap();
        assert!(
            text.lines()
                .next()
                .unwrap()
                .contains(&format!("pcap ({})", kind.name())),
            "{text}"
        );
    }
}

/// Runs `args` on `file`, expecting a one-line error (exit 2) containing
/// every one of `needles`.
fn fails(args: &[&str], file: &Path, needles: &[&str]) {
    let out = common::bin().args(args).arg(file).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?} {}: {err}",
        file.display()
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} lacks {n:?}");
    }
}

/// A compressed capture cut short (as `tcpdump -w - | gzip > F` leaves it
/// when stopped) reads like the plain capture cut short: every frame
/// before the cut, a warning naming the format, exit 0; from a file, from
/// standard input, on one thread and in the TUI.
#[test]
fn a_cut_compressed_stream_is_read_up_to_the_cut() {
    let plain =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng")).unwrap();
    let d = tempfile::tempdir().unwrap();
    let all: Vec<String> =
        packets(&Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng"))
            .lines()
            .map(str::to_string)
            .collect();
    for kind in KINDS {
        let packed = kind.compress(&plain);
        let p = d.path().join(format!("cut.pcapng.{}", kind.name()));
        std::fs::write(&p, &packed[..packed.len() * 2 / 3]).unwrap();
        let warned = |err: &str| {
            assert!(
                err.contains(&format!(
                    "warning: the {} stream ends early (the file was cut)",
                    kind.name()
                )),
                "{kind:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        };
        // The frames before the cut, each as the plain file has it.
        let out = common::bin()
            .args(["packets", "--json"])
            .arg(&p)
            .output()
            .unwrap();
        assert!(out.status.success(), "{kind:?}");
        warned(&String::from_utf8_lossy(&out.stderr));
        let got: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
        assert!(
            got.len() > all.len() / 4 && got.len() < all.len(),
            "{kind:?}: {} of {} frames",
            got.len(),
            all.len()
        );
        // (The analysis' flow numbers are those of the report, which has
        // fewer flows before the cut.)
        let decoded = |line: &str| {
            let mut v: Value = serde_json::from_str(line).unwrap();
            v.as_object_mut().unwrap().remove("analysis");
            v
        };
        for (g, a) in got.iter().zip(&all) {
            assert_eq!(decoded(g), decoded(a), "{kind:?}");
        }
        // The report of those frames, the cut among its warnings.
        for args in [&[][..], &["-j1"]] {
            let out = common::bin()
                .args(args)
                .arg("--json")
                .arg(&p)
                .output()
                .unwrap();
            assert!(out.status.success(), "{kind:?} {args:?}");
            warned(&String::from_utf8_lossy(&out.stderr));
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                v["capture"]["frames"],
                got.len() as u64,
                "{kind:?} {args:?}"
            );
            let w = v["capture"]["warnings"].as_array().unwrap();
            assert!(
                w.iter()
                    .any(|w| w.as_str().unwrap().contains("stream ends early")),
                "{w:?}"
            );
        }
        let piped = report(&[], &p, Some(&std::fs::read(&p).unwrap()));
        assert_eq!(
            piped["capture"]["frames"],
            got.len() as u64,
            "{kind:?} from a pipe"
        );
        // The TUI: the frames up to the cut, the cut in its title.
        let app =
            roce_dissect::tui::load(&p, &Default::default(), Default::default(), &mut |_, _| {})
                .unwrap();
        assert_eq!(app.report.capture.frames, got.len() as u64, "{kind:?} TUI");
        assert!(app.title.contains("stream ends early"), "{}", app.title);
    }
}

#[test]
fn cut_headers_and_corrupt_compressed_streams_are_one_line_errors() {
    let plain =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng")).unwrap();
    let d = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let packed = kind.compress(&plain);
        for (what, bytes, needle) in [
            (
                "header only",
                packed[..8.min(packed.len())].to_vec(),
                "ends early",
            ),
            (
                "corrupt",
                {
                    let mut b = packed.clone();
                    // Past the stream headers, into the compressed data.
                    let from = b.len() / 2;
                    for x in &mut b[from..from + 32] {
                        *x ^= 0xa5;
                    }
                    b
                },
                "",
            ),
        ] {
            let p = d.path().join(format!("{what}.{}", kind.name()));
            std::fs::write(&p, &bytes).unwrap();
            for args in [&[][..], &["-j1"], &["packets"]] {
                let out = common::bin().args(args).arg(&p).output().unwrap();
                let err = String::from_utf8_lossy(&out.stderr);
                // zstd frames carry no checksum by default: data changed in
                // the middle may decode (as other bytes, then read as a
                // capture); it must never panic, and an error is one line.
                if kind == Kind::Zstd && what == "corrupt" && out.status.success() {
                    continue;
                }
                assert_eq!(
                    out.status.code(),
                    Some(2),
                    "{what} {kind:?} {args:?}: {err}"
                );
                let last = err.lines().last().unwrap_or_default();
                assert!(
                    !err.contains("panicked") && last.starts_with("roce-dissect: "),
                    "{err}"
                );
                if what != "corrupt" || kind != Kind::Zstd {
                    assert!(
                        last.contains(kind.name()) || last.contains("corrupt"),
                        "{last}"
                    );
                }
                assert!(last.contains(needle), "{what} {kind:?}: {last}");
            }
            // The report: one line only.
            if what != "corrupt" {
                fails(&[], &p, &[kind.name(), needle]);
            }
        }
    }
}

#[test]
fn formats_not_read_and_double_compression_are_named() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("a.bz2");
    std::fs::write(&p, b"BZh91AY&SY\x00\x00\x00\x00").unwrap();
    fails(&[], &p, &["bzip2", "decompress it first"]);
    let p = d.path().join("a.lz4");
    std::fs::write(&p, [0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7]).unwrap();
    fails(&["packets"], &p, &["lz4"]);
    let plain =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/loss.pcap")).unwrap();
    let p = d.path().join("twice.gz.gz");
    std::fs::write(&p, Kind::Gzip.compress(&Kind::Gzip.compress(&plain))).unwrap();
    fails(&[], &p, &["gzip", "compressed twice"]);
    // Compressed garbage: decompresses, then is no capture.
    let p = d.path().join("text.gz");
    std::fs::write(&p, Kind::Gzip.compress(b"not a capture at all, just text")).unwrap();
    fails(&[], &p, &["not a pcap or pcapng file"]);
}

#[test]
fn the_tui_reads_a_compressed_capture_through_a_temporary_copy() {
    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/incast.pcapng");
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("incast.pcapng.zst");
    std::fs::write(&p, Kind::Zstd.compress(&std::fs::read(&plain).unwrap())).unwrap();
    let load = |p: &Path| {
        roce_dissect::tui::load(p, &Default::default(), Default::default(), &mut |_, _| {}).unwrap()
    };
    let (mut a, mut b) = (load(&plain), load(&p));
    assert!(
        b.title.contains("zstd, decompressed to a temporary file"),
        "{}",
        b.title
    );
    assert_eq!(a.report.flows.len(), b.report.flows.len());
    // Every frame read again by offset is the same.
    let n = a.report.capture.frames;
    assert!(n > 100);
    for i in [0, 1, n / 2, n - 1] {
        let i = i as u32;
        let (x, y) = (a.read(i).unwrap(), b.read(i).unwrap());
        assert_eq!(x.as_frame().data, y.as_frame().data, "frame {i}");
        assert_eq!(x.as_frame().ts_ns, y.as_frame().ts_ns, "frame {i}");
    }
}
