//! The report of thousands of flows is built on several threads (`-j`):
//! the flows' reports, and the timing logs sorted while the flows are
//! paired. Whatever the threads, the report is the same, byte for byte.

mod common;

fn run(args: &[&str]) -> String {
    let out = common::bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn thousands_of_flows_report_the_same_on_any_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("mixed-4200.pcap");
    let cap = cap.to_str().unwrap();
    // 4 200 connections of WRITEs, SENDs and READs (9 600 flows with the
    // CM's): past 8 192 flows the report is built on two threads with
    // -j2 and more, on one with -j1. Round trips, completions, READ
    // latencies, a few timeout replays, CE marks and CNPs.
    run(&[
        "gen",
        "--scenario",
        "mixed",
        "--seed",
        "3",
        "--qps",
        "4200",
        "--messages",
        "1",
        "--size",
        "512",
        "-o",
        cap,
    ]);
    let one = run(&[cap, "--json", "-j1"]);
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    let flows = v["flows"].as_array().unwrap();
    assert!(flows.len() >= 8192, "{} flows", flows.len());
    let has = |part: &str| flows.iter().any(|f| !f["timing"][part].is_null());
    for part in ["rtt", "completion", "read_latency", "timeout"] {
        assert!(has(part), "no flow has timing.{part}");
    }
    assert!(v["connections"].as_array().unwrap().len() >= 4096);
    for j in ["-j2", "-j3"] {
        assert!(
            run(&[cap, "--json", j]) == one,
            "--json {j} differs from -j1"
        );
    }
    assert!(run(&[cap, "-j2"]) == run(&[cap, "-j1"]), "text -j2 differs");
}
