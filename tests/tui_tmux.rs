//! A real terminal: run `roce-dissect tui` in tmux, look at the screen,
//! drill into a flow, see its packets with PSNs, go back, quit with 0.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux").args(args).output().expect("tmux");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn wait_for(session: &str, needle: &str) -> String {
    let start = Instant::now();
    loop {
        let screen = tmux(&["capture-pane", "-t", session, "-p"]);
        if screen.contains(needle) {
            return screen;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never saw {needle:?}:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn keys(session: &str, k: &str) {
    tmux(&["send-keys", "-t", session, k]);
    // Separate keys, or the terminal reads Esc + key as Alt+key.
    std::thread::sleep(Duration::from_millis(150));
}

#[test]
fn browse_in_a_real_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipping: tmux is not installed");
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
    tmux(&[
        "new-session",
        "-d",
        "-s",
        &session,
        "-x",
        "140",
        "-y",
        "40",
        &cmd,
    ]);
    let screen = wait_for(&session, "Flows (8 shown)");
    // Every flow is on the screen.
    assert_eq!(
        screen.matches("0x0040").count() + screen.matches("0x0001").count(),
        8,
        "{screen}"
    );
    keys(&session, "Enter");
    let screen = wait_for(&session, "Packets of flow #1");
    assert!(
        screen.contains("PSN=") && screen.contains("[retransmit]"),
        "{screen}"
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
