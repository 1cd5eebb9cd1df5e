//! The text report laid out for a terminal's width (`--width`, or the
//! terminal's own): every line fits, nothing is lost, and a pipe still
//! gets whole lines.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use roce_dissect::output::fit::{display_width, fits};

fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("captures")
}

fn report(capture: &Path, args: &[&str]) -> String {
    common::stdout_of(common::bin().arg(capture).args(args).env_remove("COLUMNS"))
}

/// The report up to the command it ends with (a command to copy is never
/// broken).
fn body(text: &str) -> &str {
    text.split("\nPackets of flow #1").next().unwrap()
}

/// The lines of the flows table's rows (between its heading line and its
/// legend), and the report without them.
fn split_flows(text: &str) -> (Vec<&str>, Vec<&str>) {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| l.starts_with("Flows (")) else {
        return (Vec::new(), lines);
    };
    // The legend: its first word is a column's name or "no" (a row's
    // second line starts with its DestQP, 0x...).
    let end = start
        + lines[start..]
            .iter()
            .position(|l| {
                l.strip_prefix("      ")
                    .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_alphabetic()))
            })
            .unwrap();
    // It ends the section, maybe on several lines.
    let after = end
        + lines[end..]
            .iter()
            .position(|l| l.is_empty())
            .unwrap_or(lines.len() - end);
    // The column headings (one or two lines) end with "peer".
    let rows_from = start
        + 1
        + lines[start + 1..end]
            .iter()
            .position(|l| l.ends_with("peer"))
            .unwrap()
        + 1;
    let rows = lines[rows_from..end].to_vec();
    let rest = lines[..start]
        .iter()
        .chain(&lines[after..])
        .copied()
        .collect();
    (rows, rest)
}

fn words<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    lines.into_iter().flat_map(str::split_whitespace).collect()
}

/// At 80 columns (and 60 and 120) every line of every sample's report
/// fits, but the command at the end; the report says the same: the same
/// words outside the flows table, and in it the same figures (a column
/// left out is one of zeros).
#[test]
fn every_sample_fits_and_says_the_same() {
    let mut samples: Vec<PathBuf> = std::fs::read_dir(captures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
        .collect();
    samples.sort();
    assert!(samples.len() >= 6);
    let mut narrowed = 0;
    for capture in &samples {
        let wide = report(capture, &["--events", "--all"]);
        assert_eq!(
            report(capture, &["--events", "--all", "--width", "0"]),
            wide,
            "--width 0 is the pipe's layout"
        );
        for width in [60, 80, 120] {
            let fitted = report(
                capture,
                &["--events", "--all", "--width", &width.to_string()],
            );
            let name = format!("{} at {width}", capture.display());
            for line in body(&fitted).lines() {
                assert!(fits(line, width), "{name}: {line:?}");
            }
            if wide.lines().all(|l| display_width(l) <= width) {
                assert_eq!(fitted, wide, "{name}: it fits as it is");
                continue;
            }
            narrowed += 1;
            let (wide_rows, wide_rest) = split_flows(body(&wide));
            let (rows, rest) = split_flows(body(&fitted));
            assert_eq!(words(rest), words(wide_rest), "{name}");
            fn figures(rows: Vec<&str>) -> Vec<&str> {
                let mut w: Vec<&str> = words(rows).into_iter().filter(|w| *w != "0").collect();
                w.sort_unstable();
                w
            }
            assert_eq!(figures(rows), figures(wide_rows), "{name}");
            // The command is whole, on a line of its own.
            if let Some(tail) = fitted.split("\nPackets of flow #1").nth(1) {
                let wide_tail = wide.split("\nPackets of flow #1").nth(1).unwrap();
                let command = |t: &str| {
                    let at = t.find("roce-dissect packets").unwrap();
                    t[at..].lines().next().unwrap().trim_end().to_string()
                };
                let command_line = command(tail);
                assert!(command(wide_tail).starts_with(&command_line), "{name}");
            }
        }
    }
    assert!(narrowed >= 6, "{narrowed} reports narrowed");
}

/// The mixed sample at 80 columns, as a terminal of that width shows it.
#[test]
fn mixed_at_80_columns() {
    // Named from the repository, so that where it is cloned (a longer or
    // shorter path on the first line) does not move the breaks.
    let text = common::stdout_of(
        common::bin()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["captures/mixed.pcapng", "--width", "80"])
            .env_remove("COLUMNS"),
    );
    insta::assert_snapshot!("mixed_80_columns", text);
}

/// On a terminal the report takes the terminal's width (`COLUMNS` first,
/// as `ls` reads it); `--width` overrides both. Run under `script`, a
/// pseudo-terminal, with its columns set by `stty`.
#[test]
fn a_terminal_s_width_is_taken() {
    if !common::have("script", "--version", "a pseudo-terminal") {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_roce-dissect");
    let mixed = captures().join("mixed.pcapng");
    let on_terminal = |columns: Option<&str>, args: &str| {
        let mut cmd = Command::new("script");
        cmd.args([
            "-qec",
            // After `stty` (a command), bash sets COLUMNS to the
            // terminal's width, as the shell a user types in does: unset,
            // the width is asked of the terminal.
            &format!(
                "stty cols 80 rows 24; {} {bin} {args} '{}' 2>/dev/null",
                columns.map_or("unset COLUMNS;".to_string(), |c| format!("COLUMNS={c}")),
                mixed.display()
            ),
            "/dev/null",
        ]);
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n")
    };
    let widest = |t: &str| body(t).lines().map(display_width).max().unwrap();
    let wide = report(&mixed, &[]);
    assert!(widest(&wide) > 120, "a pipe gets whole lines");
    let at_80 = report(&mixed, &["--width", "80"]);
    assert_eq!(on_terminal(None, "--no-color"), at_80);
    assert_eq!(
        on_terminal(Some("100"), "--no-color"),
        report(&mixed, &["--width", "100"])
    );
    assert_eq!(on_terminal(None, "--no-color --width 0"), wide);
    // In colour, the same lines: colour takes no room.
    let coloured = on_terminal(None, "");
    assert!(coloured.contains("\x1b["));
    assert_eq!(strip_colour(&coloured), at_80);
}

/// `text` without its colour sequences (`ESC [ ... m`).
fn strip_colour(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 2..];
        let end = tail.find('m').map_or(tail.len(), |m| m + 1);
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `fabric` and `plan` lay their text out the same way: every line fits
/// at 80 columns and the words are those of the whole lines; JSON is never
/// touched.
#[test]
fn fabric_and_plan_fit_too() {
    let run = |args: &[&str]| common::stdout_of(common::bin().args(args).env_remove("COLUMNS"));
    let storm = captures().join("pfc-storm.pcapng");
    let incast = captures().join("incast.pcapng");
    let (storm, incast) = (storm.to_str().unwrap(), incast.to_str().unwrap());
    for args in [
        vec!["fabric", storm, incast],
        vec!["plan", "headroom"],
        vec![
            "plan",
            "pfc",
            "--buffer",
            "32MiB",
            "--ports",
            "32",
            "--lossless",
            "3,4",
        ],
        vec!["plan", "dcqcn", "--cnp", "0us,100us"],
    ] {
        let wide = run(&args);
        assert!(
            wide.lines().any(|l| display_width(l) > 80),
            "{args:?} has a line to break"
        );
        let fitted = run(&[&args[..], &["--width", "80"]].concat());
        for line in fitted.lines() {
            assert!(fits(line, 80), "{args:?}: {line:?}");
        }
        assert_eq!(words(fitted.lines()), words(wide.lines()), "{args:?}");
        let json = |extra: &[&str]| run(&[&args[..], &["--json"], extra].concat());
        assert_eq!(json(&["--width", "30"]), json(&[]), "{args:?}");
    }
}

/// Commands whose output is not laid out (frames' lines, a capture, a
/// dataset, the TUI) do not take --width: a mistake, not a silent no-op.
#[test]
fn only_laid_out_text_takes_a_width() {
    let loss = captures().join("loss.pcap");
    let loss = loss.to_str().unwrap();
    for args in [
        vec!["packets", loss],
        vec!["tui", loss],
        vec!["export", loss, "-o", "x"],
        vec!["gen", "--scenario", "clean", "-o", "x.pcap"],
        vec!["fields"],
    ] {
        let out = common::bin()
            .args(&args)
            .args(["--width", "80"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("unexpected argument '--width'"),
            "{args:?}: {stderr}"
        );
    }
}
