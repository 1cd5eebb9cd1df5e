//! The command line as a user meets it.

mod common;

use std::path::Path;

use common::until;

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
    // With a display filter: a bad one is said first, a good one changes
    // nothing here.
    let (code, _, err) = run(&["tui", cap.to_str().unwrap(), "-Y", "ip.proto == \"XYZ\""]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("-Y: \"XYZ\" is neither a valid integer nor the name"),
        "{err}"
    );
    let (code, _, err) = run(&["tui", cap.to_str().unwrap(), "-Y", "ip.proto == \"UDP\""]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("tui draws on a terminal"), "{err}");
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

#[test]
fn version_is_lowercase_v_and_capital_v_is_verbose() {
    for flag in ["-v", "--version"] {
        let (code, out, _) = run(&[flag]);
        assert_eq!(code, 0);
        assert!(out.starts_with("roce-dissect 0."), "{out}");
    }
    // tshark users mean verbose: the report with every flow's events.
    let cap = capture("loss-receiver.ns.pcap");
    let cap = cap.to_str().unwrap();
    let (code, out, err) = run(&["-V", cap]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Events of flow #1"), "{out}");
    let (_, plain, _) = run(&[cap]);
    assert!(!plain.contains("Events of flow #1"));
    assert_eq!(run(&["--verbose", cap]).1, out);
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(
            out.contains("packets") && out.contains("link-speed"),
            "{shell}"
        );
    }
    let (code, _, _) = run(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    let (code, out, _) = run(&["man"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(".TH roce-dissect 1") && out.contains("packets"),
        "{out}"
    );
    let (code, out, _) = run(&["man", "packets"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(".TH roce-dissect-packets") && out.contains("roce\\-only"),
        "{out}"
    );
    let (code, _, err) = run(&["man", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("no command 'nope'"), "{err}");
}

#[test]
fn each_command_offers_only_the_options_it_uses() {
    let help = |cmd: &str| run(&[cmd, "--help"]).1;
    let tui = help("tui");
    for absent in ["--json", "--events", "--no-color", "--threads"] {
        assert!(!tui.contains(absent), "tui --help offers {absent}");
    }
    assert!(tui.contains("--link-speed") && tui.contains("--pmtu"));
    let gen_help = help("gen");
    for absent in ["--no-icrc", "--roce-port", "--json", "--dscp-map"] {
        assert!(!gen_help.contains(absent), "gen --help offers {absent}");
    }
    assert!(gen_help.contains("--link-speed"));
    let packets = help("packets");
    assert!(packets.contains("--no-icrc") && packets.contains("--dup-window"));
    assert!(!packets.contains("--no-color"));
    // An option of one command given to another is refused, not ignored.
    let cap = capture("loss.pcap");
    let (code, _, err) = run(&["tui", "--json", cap.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_mistyped_command_gets_a_suggestion() {
    let cap = capture("loss.pcap");
    let cap = cap.to_str().unwrap();
    for (typed, meant) in [
        ("packet", "packets"),
        ("pakcets", "packets"),
        ("tiu", "tui"),
    ] {
        let (code, _, err) = run(&[typed, cap]);
        assert_eq!(code, 2, "{typed}");
        assert!(
            err.contains(&format!("did you mean `roce-dissect {meant}`")),
            "{typed}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        // Alone, it is taken for a capture that does not exist.
        let (code, _, err) = run(&[typed]);
        assert_eq!(code, 2);
        assert!(err.contains(&format!("roce-dissect {meant}")), "{err}");
    }
    let (code, _, err) = run(&["no-such-file.pcap"]);
    assert_eq!(code, 2);
    assert!(!err.contains("did you mean"), "{err}");
}

#[test]
fn a_flow_filter_that_matches_nothing_says_so() {
    let cap = capture("loss.pcap");
    let (code, out, err) = run(&[
        "packets",
        "--flow",
        "10.9.9.9,10.0.1.1,0x4001",
        cap.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(
        err.contains("no frame of flow 10.9.9.9,10.0.1.1,0x004001"),
        "{err}"
    );
    assert!(err.contains("326 frames read"), "{err}");

    // With -w, an existing file is left as it was and no new one is made:
    // the error is the answer, not an empty capture.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.pcap");
    std::fs::write(&old, b"earlier").unwrap();
    let new = dir.path().join("new.pcap");
    for w in [&old, &new] {
        let (code, _, err) = run(&[
            "packets",
            "--flow",
            "10.9.9.9,10.0.1.1,0x4001",
            "-w",
            w.to_str().unwrap(),
            cap.to_str().unwrap(),
        ]);
        assert_eq!(code, 1);
        assert!(err.contains("no frame of flow"), "{err}");
        assert!(err.contains("was not written"), "{err}");
    }
    assert_eq!(std::fs::read(&old).unwrap(), b"earlier");
    assert!(!new.exists());
    assert_eq!(common::names_in(dir.path()), ["old.pcap"]);
}

#[test]
fn packets_lines_carry_what_the_analysis_found() {
    let cap = capture("loss-receiver.ns.pcap");
    let (code, out, err) = run(&["packets", cap.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let count = |tag: &str| {
        out.lines()
            .filter(|l| l.ends_with(tag) || l.contains(&format!("{tag} [")))
            .count()
    };
    // Each tag as often as the report counts its anomaly.
    let (_, json, _) = run(&[cap.to_str().unwrap(), "--json"]);
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    let sum = |k: &str| -> u64 {
        r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f[k].as_u64().unwrap())
            .sum()
    };
    assert_eq!(count("[retransmit]") as u64, sum("retransmits"));
    assert_eq!(count("[out of order]") as u64, sum("out_of_order"));
    let naks: u64 = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["naks"]["psn_seq_err"].as_u64().unwrap())
        .sum();
    assert_eq!(count("[NAK]") as u64, naks);
    let gaps = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["events"].as_array().unwrap())
        .filter(|e| e["kind"] == "gap")
        .count();
    assert_eq!((count("[gap]"), gaps), (8, 8));
}

#[test]
fn names_are_quoted_for_the_shell_and_safe_for_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let name = "x;touch PWNED;\u{1b}[31m.pcap";
    let p = dir.path().join(name);
    std::fs::copy(capture("loss.pcap"), &p).unwrap();
    let out = common::bin()
        .current_dir(dir.path())
        .arg(name)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains('\u{1b}'),
        "a raw escape reached the terminal"
    );
    let footer = text.lines().last().unwrap();
    assert!(
        footer.contains(r"roce-dissect packets $'x;touch PWNED;\x1b[31m.pcap' --flow"),
        "{footer}"
    );
    // One frame is one frame.
    let frames = roce_dissect::synth::samples::every_opcode(1);
    let one = common::write_pcap(dir.path(), "one.pcap", &frames[..1]);
    let (_, text, _) = run(&[one.to_str().unwrap()]);
    assert!(text.contains("(pcap, 1 frame, 1 RoCE"), "{text}");
}

/// The command a report ends with lists flow #1's frames: as many lines
/// as the report counts packets in it, for one capture and for captures
/// merged into one report (`packets --merge`), names needing quotes too.
#[test]
fn the_command_the_report_ends_with_runs() {
    let dir = tempfile::tempdir().unwrap();
    let spaced = dir.path().join("two words.pcapng");
    std::fs::copy(capture("incast.pcapng"), &spaced).unwrap();
    let loss = capture("loss.pcap");
    let (loss, spaced) = (loss.to_str().unwrap(), spaced.to_str().unwrap());
    for captures in [vec![loss], vec![spaced], vec!["--merge", loss, spaced]] {
        let (code, text, _) = run(&captures);
        assert_eq!(code, 0);
        let command = text.lines().last().unwrap();
        let at = command.find("roce-dissect packets ").unwrap();
        let command = command[at..].split("   (events").next().unwrap();
        let (_, json, _) = run(&[&captures[..], &["--json"]].concat());
        let r: serde_json::Value = serde_json::from_str(&json).unwrap();
        let packets = r["flows"][0]["packets"].as_u64().unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(command.replacen("roce-dissect", env!("CARGO_BIN_EXE_roce-dissect"), 1))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = String::from_utf8(out.stdout).unwrap().lines().count() as u64;
        assert_eq!(lines, packets, "{command}");
    }
}

/// RoCE v2 on a UDP port other than 4791 shows no RoCE frame: the report
/// names the port its frames went to (their ICRCs check there), and
/// `--roce-port` reads them as the capture on 4791 is read. A capture of
/// no RoCE at all says where RoCE is captured.
#[test]
fn roce_on_another_port_is_named() {
    let (frames, moved) = common::moved_to_port(&capture("loss.pcap"), 4792);
    let dir = tempfile::tempdir().unwrap();
    let moved = common::write_pcap(dir.path(), "at-4792.pcap", &moved);
    let moved = moved.to_str().unwrap();
    let json = |args: &[&str]| -> serde_json::Value {
        let (code, out, err) = run(&[args, &["--json"]].concat());
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let r = json(&[moved]);
    assert_eq!(r["capture"]["roce_frames"], 0);
    let hints = r["hints"].as_array().unwrap();
    assert_eq!(hints.len(), 1, "{hints:?}");
    assert_eq!(hints[0]["kind"], "roce_on_other_port");
    assert_eq!(hints[0]["count"], 326);
    let (_, text, _) = run(&[moved]);
    assert!(
        text.contains("frames to UDP port 4792 are RoCE v2 (their ICRCs check): run again with --roce-port 4792"),
        "{text}"
    );
    // Read at that port, the capture is the one on 4791.
    let at_port = json(&[moved, "--roce-port", "4792"]);
    // (The same frames at the same times, on 4791.)
    let original = common::write_pcap(dir.path(), "at-4791.pcap", &frames);
    let original = json(&[original.to_str().unwrap()]);
    assert_eq!(at_port["capture"]["roce_frames"], 326);
    assert_eq!(at_port["flows"], original["flows"]);
    assert_eq!(at_port["hints"], original["hints"]);
    // No RoCE anywhere: where to capture it.
    let tcp = roce_dissect::synth::samples::every_opcode(1)
        .into_iter()
        .map(|mut f| {
            // IPv4's protocol to TCP: no UDP, no RoCE.
            if f.len() > 23 && f[12..14] == [0x08, 0x00] {
                f[23] = 6;
            }
            f
        })
        .filter(|f| f[12..14] == [0x08, 0x00])
        .collect::<Vec<_>>();
    let tcp = common::write_pcap(dir.path(), "tcp.pcap", &tcp);
    let r = json(&[tcp.to_str().unwrap()]);
    assert_eq!(r["capture"]["roce_frames"], 0);
    assert_eq!(common::hint_kinds(&r), ["no_roce"]);
    assert!(
        r["hints"][0]["text"]
            .as_str()
            .unwrap()
            .contains("capture on the RDMA device (tcpdump -i mlx5_0, ibdump)")
    );
}

#[test]
fn gen_limits_and_standard_output() {
    let (code, _, err) = run(&[
        "gen",
        "--scenario",
        "loss",
        "--qps",
        "16777217",
        "-o",
        "/dev/null",
    ]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&[
        "gen",
        "--scenario",
        "loss",
        "--messages",
        "1000000000",
        "-o",
        "/dev/null",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("more than --max-frames"), "{err}");
    let out = common::bin()
        .args([
            "gen",
            "--scenario",
            "clean",
            "--qps",
            "1",
            "--messages",
            "3",
            "-o",
            "-",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        &out.stdout[..4],
        &[0x0a, 0x0d, 0x0d, 0x0a],
        "pcapng on standard output"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("to standard output"), "{err}");
}

/// The report of `captures/incast.pcapng` with `extra` options, as JSON.
fn incast_report(extra: &[&str]) -> serde_json::Value {
    let out = common::bin()
        .arg(capture("incast.pcapng"))
        .arg("--json")
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{extra:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn skipped_stages_leave_out_their_part_only() {
    let full = incast_report(&[]);
    // Flows with a value at `path` (keys).
    let flows = |r: &serde_json::Value, path: &[&str]| {
        r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| !path.iter().fold(*f, |v, k| &v[*k]).is_null())
            .count()
    };
    let rtt = &["timing", "rtt"][..];
    let cc = &["cc"][..];
    assert!(flows(&full, rtt) > 0 && flows(&full, cc) > 0);
    assert_eq!(full["capture"]["warnings"], serde_json::json!([]));

    let no_timing = incast_report(&["--skip", "timing"]);
    assert_eq!(flows(&no_timing, rtt), 0);
    assert_eq!(flows(&no_timing, cc), flows(&full, cc));
    let no_cc = incast_report(&["--skip", "cc"]);
    assert_eq!(flows(&no_cc, cc), 0);
    assert_eq!(flows(&no_cc, rtt), flows(&full, rtt));
    // Packets, bytes and PSN verdicts do not depend on any stage.
    for r in [&no_timing, &no_cc] {
        for (a, b) in r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .zip(full["flows"].as_array().unwrap())
        {
            for k in [
                "src",
                "dst",
                "destqp",
                "packets",
                "bytes",
                "retransmits",
                "ecn_ce",
                "cnps",
            ] {
                assert_eq!(a[k], b[k], "{k}");
            }
        }
    }
    let warnings = no_timing["capture"]["warnings"].to_string();
    assert!(
        warnings.contains("stages skipped (--skip): timing: no round trips"),
        "{warnings}"
    );

    // Stages with nothing to do here change nothing but the warning.
    let mut quiet = incast_report(&["--skip", "nvme,duplicates"]);
    assert_eq!(quiet["capture"]["warnings"].as_array().unwrap().len(), 1);
    quiet["capture"]["warnings"] = serde_json::json!([]);
    assert_eq!(quiet, full);

    let (code, _, err) = run(&["--skip", "psn", capture("incast.pcapng").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "unknown stage 'psn' (one of: duplicates, throughput, timing, pauses, cc, nvme)"
        ),
        "{err}"
    );
}

/// Whether process `pid` catches SIGINT (its `SigCgt` mask in /proc).
#[cfg(target_os = "linux")]
fn catches_sigint(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            let mask = s.lines().find_map(|l| l.strip_prefix("SigCgt:"))?;
            u64::from_str_radix(mask.trim(), 16).ok()
        })
        .is_some_and(|m| m & (1 << (2 - 1)) != 0)
}

/// `tcpdump -w - | roce-dissect -` stopped with Ctrl-C: the report covers
/// the frames read, says it was interrupted, and calls no record cut; a
/// second Ctrl-C ends it at once (exit status 130).
#[test]
#[cfg(target_os = "linux")]
fn ctrl_c_on_a_stream_reports_what_was_read() {
    use std::io::Write;
    use std::time::Duration;

    let bytes = std::fs::read(capture("loss.pcap")).unwrap();
    // The header and the first 40 records whole, then half of the 41st.
    let cut = end_of_records(&bytes, 40) + 20;
    use common::sigint;
    // `args` given the capture up to `cut` through a pipe held open, once
    // it catches SIGINT and has read all it was given: then SIGINT once.
    let interrupted_once = |args: &[&str]| {
        let (child, mut stdin) = on_a_pipe(args);
        stdin.write_all(&bytes[..cut]).unwrap();
        until("the child read its input", || {
            catches_sigint(child.id()) && rustix::io::ioctl_fionread(&stdin).ok() == Some(0)
        });
        sigint(child.id());
        (child, stdin)
    };

    // The report ends at once, though the writer sends nothing more and
    // keeps the pipe open (the Ctrl-C ends the wait for input).
    let (mut child, stdin) = interrupted_once(&["--json", "-"]);
    until("the first Ctrl-C ended the wait for input", || {
        child.try_wait().unwrap().is_some()
    });
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["capture"]["frames"], 40, "{stderr}");
    let warnings = report["capture"]["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = warnings[0].as_str().unwrap();
    assert!(
        w.starts_with("interrupted (Ctrl-C): stopped reading after frame 40"),
        "{w}"
    );
    assert!(stderr.contains(w), "{stderr}");

    // Twice: the program ends at the second, even where the first cannot
    // take effect (here, its output is not read: it waits to write).
    let (mut child, stdin) = interrupted_once(&["packets", "-V", "-x", "-"]);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the child should be waiting to write"
    );
    sigint(child.id());
    let status = child.wait().unwrap();
    drop(stdin);
    assert_eq!(status.code(), Some(130));

    // Before anything came: one line saying so, exit 2, the pipe still
    // open.
    let (mut child, stdin) = on_a_pipe(&["-"]);
    until("a SIGINT handler", || catches_sigint(child.id()));
    sigint(child.id());
    until("the Ctrl-C ended the wait for the header", || {
        child.try_wait().unwrap().is_some()
    });
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "roce-dissect: -: interrupted (Ctrl-C) before the capture's header came\n"
    );
}

/// Ctrl-C during `gen` leaves the output as it was (the capture is written
/// beside it and moved in place when whole) and exits 130; what a killed
/// `gen` left beside it, the next one removes.
#[test]
#[cfg(target_os = "linux")]
fn an_interrupted_gen_leaves_the_file_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("x.pcap");
    std::fs::write(&out, b"old").unwrap();
    let names = || common::names_in(tmp.path());
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
        .args([
            "gen",
            "--scenario",
            "mixed",
            "--qps",
            "256",
            "--messages",
            "20000",
        ])
        .arg("-o")
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    until("gen began writing", || {
        names()
            .iter()
            .any(|n| n.starts_with(".x.pcap.roce-dissect-"))
    });
    common::sigint(child.id());
    common::interrupted_leaving(child, &out);
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    assert_eq!(names(), ["x.pcap"]);

    // A named pipe is written as it is, and stays.
    let fifo = tmp.path().join("live.pcap");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
        .args(["gen", "--scenario", "mixed", "--qps", "256"])
        .args(["--messages", "20000", "-o"])
        .arg(&fifo)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let read = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reader = {
        let (fifo, read) = (fifo.clone(), std::sync::Arc::clone(&read));
        std::thread::spawn(move || {
            let mut f = std::fs::File::open(fifo).unwrap();
            let mut buf = vec![0u8; 1 << 16];
            while let Ok(n @ 1..) = std::io::Read::read(&mut f, &mut buf) {
                read.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            }
        })
    };
    until("gen wrote to the pipe", || {
        read.load(std::sync::atomic::Ordering::Relaxed) > 0
    });
    common::sigint(child.id());
    let (code, err) = common::ended(child);
    reader.join().unwrap();
    assert_eq!(code, Some(130), "{err}");
    assert_eq!(
        err,
        format!(
            "roce-dissect: interrupted (Ctrl-C): what went to {} is cut short\n",
            fifo.display()
        )
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    std::fs::remove_file(&fifo).unwrap();

    // A killed gen's file (its process gone) is removed by the next one.
    let dead = ".x.pcap.roce-dissect-4294967294.partial";
    std::fs::write(tmp.path().join(dead), b"cut").unwrap();
    // `gen` of the clean scenario to `path`: its standard error, once it
    // succeeded.
    let gen_clean = |path: &std::path::Path| {
        let done = std::process::Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
            .args(["gen", "--scenario", "clean", "-o"])
            .arg(path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&done.stderr).into_owned();
        assert!(done.status.success(), "{err}");
        err
    };
    let err = gen_clean(&out);
    assert!(
        err.starts_with(&format!(
            "roce-dissect: removed {dead}, left in {} by a run that was stopped\n",
            tmp.path().display()
        )),
        "{err}"
    );
    assert_eq!(names(), ["x.pcap"]);
    assert_ne!(std::fs::read(&out).unwrap(), b"old");

    // Through a link, the file it names is replaced and the link stays;
    // the file keeps its permissions.
    use std::os::unix::fs::PermissionsExt;
    let link = tmp.path().join("link.pcap");
    std::os::unix::fs::symlink("x.pcap", &link).unwrap();
    std::fs::write(&out, b"old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    gen_clean(&link);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(names(), ["link.pcap", "x.pcap"]);
    assert!(std::fs::read(&out).unwrap().len() > 1000);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    // A link to nothing yet: the capture is made where it points.
    let dangling = tmp.path().join("next.pcap");
    std::os::unix::fs::symlink("new.pcap", &dangling).unwrap();
    gen_clean(&dangling);
    assert!(std::fs::symlink_metadata(&dangling).unwrap().is_symlink());
    assert!(std::fs::read(tmp.path().join("new.pcap")).unwrap().len() > 1000);
}

/// Where the first `n` records of a little-endian pcap end.
fn end_of_records(pcap: &[u8], n: usize) -> usize {
    let mut at = 24;
    for _ in 0..n {
        let incl = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + incl;
    }
    at
}

/// The command with `args`, its standard input a pipe (returned), its
/// outputs piped.
fn on_a_pipe(args: &[&str]) -> (std::process::Child, std::process::ChildStdin) {
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

/// `tcpdump -w - | roce-dissect packets -`: each frame's line comes out
/// while the writer is still writing, as tshark's do, with and without
/// `-l`; and the same lines as from the file.
#[test]
#[cfg(target_os = "linux")]
fn packets_of_a_live_pipe_come_out_as_the_frames_come() {
    use std::io::{BufRead, Write};
    use std::time::Duration;

    let bytes = std::fs::read(capture("loss.pcap")).unwrap();
    let three = end_of_records(&bytes, 3);
    let whole = common::bin()
        .args(["packets"])
        .arg(capture("loss.pcap"))
        .output()
        .unwrap();
    let whole: Vec<String> = String::from_utf8(whole.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    for args in [&["packets", "-"][..], &["packets", "-l", "-"][..]] {
        let (mut child, mut stdin) = on_a_pipe(args);
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                if tx.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        // The header and three frames, then the writer waits: three lines.
        stdin.write_all(&bytes[..three]).unwrap();
        stdin.flush().unwrap();
        let mut got = Vec::new();
        for _ in 0..3 {
            match lines.recv_timeout(Duration::from_secs(30)) {
                Ok(line) => got.push(line),
                Err(e) => panic!("{args:?}: after {} lines, none more came: {e}", got.len()),
            }
        }
        assert_eq!(got, whole[..3], "{args:?}");
        // The rest, and the end of the input.
        stdin.write_all(&bytes[three..]).unwrap();
        drop(stdin);
        assert!(child.wait().unwrap().success(), "{args:?}");
        reader.join().unwrap();
        got.extend(lines.try_iter());
        assert_eq!(got, whole, "{args:?}");
    }
}

/// tshark's habits: `-r FILE` names the capture (in every command that
/// reads one), and `-n` (never look names up) is accepted by `packets`,
/// which never does; the output is what naming the file gives.
#[test]
fn tshark_style_read_file_and_numeric() {
    let (loss, clean) = (capture("loss.pcap"), capture("clean.pcapng"));
    let (l, c) = (loss.to_str().unwrap(), clean.to_str().unwrap());
    for (named, tshark_style) in [
        (vec!["packets", l], vec!["packets", "-n", "-r", l]),
        (vec!["packets", l], vec!["packets", "-nr", l]),
        (
            vec!["packets", "-T", "fields", "-e", "bth.psn", l],
            vec!["packets", "-T", "fields", "-e", "bth.psn", "--read-file", l],
        ),
        (vec![l, "--json"], vec!["-r", l, "--json"]),
        // -r first among the captures named.
        (vec![l, c, "--json"], vec![c, "-r", l, "--json"]),
        (
            vec!["packets", "--merge", l, c],
            vec!["packets", "--merge", "-r", l, c],
        ),
        (vec!["fabric", l], vec!["fabric", "-r", l]),
    ] {
        let (code, want, _) = run(&named);
        assert_eq!(code, 0, "{named:?}");
        assert!(!want.is_empty());
        let (code, got, err) = run(&tshark_style);
        assert_eq!(code, 0, "{tshark_style:?}: {err}");
        assert_eq!(got, want, "{tshark_style:?}");
    }
    // Without a capture, either way, clap says what is missing.
    let (code, _, err) = run(&["packets", "-n"]);
    assert_eq!(code, 2);
    assert!(err.contains("<CAPTURE>"), "{err}");
    let (code, _, err) = run(&["packets", "-r"]);
    assert_eq!(code, 2);
    assert!(err.contains("--read-file <CAPTURE>"), "{err}");
}
