//! The command line as a user meets it.

mod common;

use std::path::Path;

fn capture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

#[test]
fn help_and_version() {
    let out = common::bin().arg("--help").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    for needle in [
        "packets",
        "gen",
        "--json",
        "--link-speed",
        "--dscp-map",
        "--storm-threshold",
        "Examples",
    ] {
        assert!(text.contains(needle), "--help lacks {needle}");
    }
    let out = common::bin().args(["packets", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in ["-V", "--hex", "--flow", "--count", "--roce-only"] {
        assert!(text.contains(needle), "packets --help lacks {needle}");
    }
    assert!(
        common::bin()
            .arg("--version")
            .output()
            .unwrap()
            .status
            .success()
    );
    // No capture at all is a usage error, not a crash.
    let out = common::bin().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn flow_filter_lists_one_flow() {
    let out = common::bin()
        .args(["packets", "--flow", "10.0.0.1,10.0.1.1,0x4001"])
        .arg(capture("loss-receiver.ns.pcap"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().count(),
        67,
        "the report counts 67 packets on this flow"
    );
    assert!(
        text.lines()
            .all(|l| l.contains("10.0.0.1 → 10.0.1.1") && l.contains("QP=0x004001"))
    );
    let bad = common::bin()
        .args(["packets", "--flow", "nonsense"])
        .arg(capture("loss.pcap"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected SRC,DST,QP"));
}

#[test]
fn count_and_roce_only_and_stdin() {
    let out = common::bin()
        .args(["packets", "-c", "5"])
        .arg(capture("clean.pcapng"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 5);
    let out = common::bin()
        .args(["packets", "--roce-only", "--json"])
        .arg(capture("pfc-storm.pcapng"))
        .output()
        .unwrap();
    let n = String::from_utf8(out.stdout).unwrap().lines().count();
    assert_eq!(n, 775);
    let bytes = std::fs::read(capture("loss.pcap")).unwrap();
    let out = common::bin()
        .args(["--json", "-"])
        .write_stdin(bytes)
        .output()
        .unwrap();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["capture"]["frames"], 326);
}

#[test]
fn options_are_validated() {
    for (flag, val) in [
        ("--link-speed", "fast"),
        ("--dup-window", "2 parsecs"),
        ("--dscp-map", "99:3"),
        ("--roce-port", "70000"),
    ] {
        let out = common::bin()
            .arg(flag)
            .arg(val)
            .arg(capture("loss.pcap"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag} {val}");
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    }
    // 25G PFC quanta in the packets view.
    let out = common::bin()
        .args(["packets", "--link-speed", "25G", "--roce-only"])
        .arg(capture("pfc-storm.pcapng"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let pfc = text.lines().find(|l| l.contains("PFC enable")).unwrap();
    assert!(
        pfc.ends_with("PFC 60 PFC enable=0x08 P3=65535 (1.34 ms)"),
        "{pfc}"
    );
}

#[test]
fn report_colour_follows_no_color() {
    let out = common::bin()
        .arg(capture("loss.pcap"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stdout).unwrap().contains('\x1b'));
}

#[test]
fn other_roce_port() {
    let d = tempfile::tempdir().unwrap();
    let mut frames = roce_dissect::synth::samples::every_opcode(1);
    frames.truncate(3);
    for f in &mut frames {
        f[36..38].copy_from_slice(&4792u16.to_be_bytes());
    }
    let p = common::write_pcap(d.path(), "port.pcap", &frames);
    let out = common::bin()
        .args(["packets", "--json"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stdout).unwrap().contains("\"bth\""));
    let out = common::bin()
        .args(["packets", "--json", "--roce-port", "4792"])
        .arg(&p)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("\"bth\"").count(), 3);
    // The ICRC covers the UDP header, so the changed port makes it invalid.
    assert_eq!(text.matches("\"valid\":false").count(), 3);
}

/// Runs the binary; (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = common::bin().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn tui_without_a_terminal_is_one_line_and_exit_2() {
    // Standard output is a pipe here: the screen would go into it.
    let cap = capture("loss.pcap");
    let (code, out, err) = run(&["tui", cap.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "nothing drawn into the pipe");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("tui draws on a terminal"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn pmtu_is_a_fallback_that_does_not_override_what_the_capture_shows() {
    let cap = capture("loss.pcap");
    let cap = cap.to_str().unwrap();
    let summary = |extra: &[&str]| {
        let mut args = vec![cap, "--json"];
        args.extend_from_slice(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let r: serde_json::Value = serde_json::from_str(&out).unwrap();
        let retx: u64 = r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["retransmits"].as_u64().unwrap())
            .sum();
        let pmtus: Vec<u64> = r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["pmtu"].as_u64())
            .collect();
        (retx, pmtus)
    };
    let (retx, pmtus) = summary(&[]);
    assert_eq!(retx, 5);
    assert!(pmtus.iter().all(|&m| m == 1024), "{pmtus:?}");
    // The READs come before any FIRST/MIDDLE shows the PMTU of 1024; a
    // fallback of 512 or 4096 must not size them.
    for fallback in ["256", "512", "2048", "4096"] {
        assert_eq!(
            summary(&["--pmtu", fallback]),
            (5, pmtus.clone()),
            "{fallback}"
        );
    }
    for bad in ["1000", "64", "8192", "x"] {
        let (code, _, err) = run(&[cap, "--pmtu", bad]);
        assert_eq!(code, 2, "--pmtu {bad}");
        assert!(err.contains("256, 512, 1024, 2048 or 4096"), "{err}");
    }
    let (_, help, _) = run(&["--help"]);
    assert!(help.contains("256, 512, 1024, 2048 or"), "{help}");
}

#[test]
fn a_bare_duration_needs_its_unit() {
    let cap = capture("pfc-storm.pcapng");
    let cap = cap.to_str().unwrap();
    let (code, _, err) = run(&[cap, "--storm-threshold", "50"]);
    assert_eq!(code, 2);
    assert!(err.contains("'50' needs a unit"), "{err}");
    for ok in ["0", "50ms", "1.5s", "2us", "500ns"] {
        let (code, _, err) = run(&[cap, "--storm-threshold", ok]);
        assert_eq!(code, 0, "{ok}: {err}");
    }
}

#[test]
fn pause_intervals_name_the_xon_that_ended_them_and_shares_stay_within_the_capture() {
    let cap = capture("pfc-storm.pcapng");
    let (code, out, err) = run(&[cap.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // Priority 4: XOFF in frame 4, ended by the XON in frame 25.
    assert!(out.contains("frames 4..25, ended by XON"), "{out}");
    assert!(out.contains("from frame 3, expired"), "{out}");
    let (_, json, _) = run(&[cap.to_str().unwrap(), "--json"]);
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    for s in r["pfc"]["summary"].as_array().unwrap() {
        let f = s["fraction"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&f), "{s}");
    }
    // The storm lasts the whole capture but for its first microsecond, and
    // its last expiry lies past the last frame.
    let storm = &r["pfc"]["summary"][0];
    assert!(storm["fraction"].as_f64().unwrap() > 0.9999, "{storm}");
    assert!(storm["paused_ns"].as_u64().unwrap() > r["capture"]["duration_ns"].as_u64().unwrap());
}
