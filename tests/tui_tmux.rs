//! A real terminal: run `roce-dissect tui` in tmux, look at the screen,
//! drill into a flow, see its packets with PSNs, go back, quit with 0.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux").args(args).output().expect("tmux");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The screen once `done` holds for it (it may be caught half drawn: the
/// first run after the tmux server starts showed the flows' title before
/// their rows).
fn wait_until(session: &str, what: &str, done: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let screen = tmux(&["capture-pane", "-t", session, "-p"]);
        if done(&screen) {
            return screen;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never saw {what}:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_for(session: &str, needle: &str) -> String {
    wait_until(session, &format!("{needle:?}"), |s| s.contains(needle))
}

/// Rows of flows on the screen (QPs 0x0040.. and 0x0001).
fn flow_rows(screen: &str) -> usize {
    screen.matches("0x0040").count() + screen.matches("0x0001").count()
}

/// A detached tmux session of `cols` by `rows` running `cmd`.
fn start(session: &str, cols: u16, rows: u16, cmd: &str) {
    let (cols, rows) = (cols.to_string(), rows.to_string());
    tmux(&[
        "new-session",
        "-d",
        "-s",
        session,
        "-x",
        &cols,
        "-y",
        &rows,
        cmd,
    ]);
}

fn keys(session: &str, k: &str) {
    tmux(&["send-keys", "-t", session, k]);
    // Separate keys, or the terminal reads Esc + key as Alt+key.
    std::thread::sleep(Duration::from_millis(150));
}

#[test]
fn browse_in_a_real_terminal() {
    if !common::have("tmux", "-V", "the TUI in a real terminal") {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_roce-dissect");
    let cap = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/loss-receiver.ns.pcap");
    let session = format!("roce-dissect-test-{}", std::process::id());
    let status = std::env::temp_dir().join(format!("{session}.status"));
    let cmd = format!(
        "{bin} tui {}; echo $? > {}",
        cap.display(),
        status.display()
    );
    start(&session, 140, 40, &cmd);
    // Every flow is on the screen (and never more than eight rows).
    let screen = wait_until(&session, "the eight flows", |s| {
        s.contains("Flows (8 shown)") && flow_rows(s) >= 8
    });
    assert_eq!(flow_rows(&screen), 8, "{screen}");
    keys(&session, "Enter");
    wait_until(
        &session,
        "flow #1's packets with PSNs and a retransmit",
        |s| s.contains("Packets of flow #1") && s.contains("PSN=") && s.contains("[retransmit]"),
    );
    keys(&session, "Escape");
    wait_for(&session, "Flows (8 shown)");
    keys(&session, "q");
    let start = Instant::now();
    while !status.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "tui did not exit"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(100));
    let code = std::fs::read_to_string(&status).unwrap();
    tmux(&["kill-session", "-t", &session]);
    let _ = std::fs::remove_file(&status);
    assert_eq!(code.trim(), "0");
}

#[test]
fn a_signal_gives_the_terminal_back() {
    if !common::have("tmux", "-V", "the TUI in a real terminal") {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_roce-dissect");
    let cap = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng");
    let session = format!("roce-dissect-signal-{}", std::process::id());
    let out = std::env::temp_dir().join(format!("{session}.out"));
    // After the TUI: its exit status and whether the terminal is back in
    // canonical mode with echo (raw mode turns both off).
    let cmd = format!(
        "{bin} tui {}; echo $? > {out}.tmp; stty -a >> {out}.tmp; mv {out}.tmp {out}",
        cap.display(),
        out = out.display()
    );
    start(&session, 100, 30, &cmd);
    wait_for(&session, "Flows (");
    // The TUI itself (argv: the binary, tui, the capture), not the shell
    // around it.
    let want = [bin.to_string(), "tui".into(), cap.display().to_string()];
    let pid = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let argv = std::fs::read(e.path().join("cmdline")).ok()?;
            let argv: Vec<String> = argv
                .split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            (argv == want).then(|| e.file_name().to_string_lossy().into_owned())
        })
        .next()
        .expect("the tui's pid");
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let start = Instant::now();
    while !out.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "tui did not exit"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&out).unwrap();
    tmux(&["kill-session", "-t", &session]);
    let _ = std::fs::remove_file(&out);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("143"), "128 + SIGTERM");
    let stty = lines.collect::<Vec<_>>().join(" ");
    assert!(
        stty.contains(" icanon") && stty.contains(" echo "),
        "the terminal is still raw: {stty}"
    );
}

/// RoCE v2 on another UDP port: the TUI, like the report, reads the file
/// again and says which port to name (`--roce-port`), where the flows
/// would be.
#[test]
fn roce_on_another_port_is_named_in_place_of_the_flows() {
    if !common::have("tmux", "-V", "the TUI in a real terminal") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let loss = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/loss.pcap");
    let (_, moved) = common::moved_to_port(&loss, 4792);
    let cap = common::write_pcap(dir.path(), "at-4792.pcap", &moved);
    let bin = env!("CARGO_BIN_EXE_roce-dissect");
    let session = format!("roce-dissect-port-{}", std::process::id());
    let cmd = format!("{bin} tui {}", cap.display());
    start(&session, 100, 30, &cmd);
    let screen = wait_for(&session, "No RoCE flows");
    keys(&session, "q");
    tmux(&["kill-session", "-t", &session]);
    let flat = common::flat_screen(&screen);
    assert!(flat.contains("UDP port 4792 are RoCE v2"), "{screen}");
    assert!(flat.contains("--roce-port 4792"), "{screen}");
}
