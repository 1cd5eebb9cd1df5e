//! Pause quanta are timed at the link speed of the frame's interface when
//! the pcapng interface block states one (`if_speed`), at `--link-speed`
//! when given (whatever the file says), else at 100G; the report says
//! which.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let len = 12 + body.len().div_ceil(4) * 4;
    let mut b = Vec::new();
    b.extend_from_slice(&kind.to_le_bytes());
    b.extend_from_slice(&(len as u32).to_le_bytes());
    b.extend_from_slice(body);
    b.resize(len - 4, 0);
    b.extend_from_slice(&(len as u32).to_le_bytes());
    b
}

/// An interface block: Ethernet, nanosecond timestamps, `if_speed` when
/// given.
fn idb(speed: Option<u64>) -> Vec<u8> {
    let mut body = vec![1, 0, 0, 0, 0, 0, 4, 0]; // linktype 1, snaplen 262144
    body.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0]); // if_tsresol = 9
    if let Some(s) = speed {
        body.extend_from_slice(&[8, 0, 8, 0]);
        body.extend_from_slice(&s.to_le_bytes());
    }
    body.extend_from_slice(&[0, 0, 0, 0]);
    block(1, &body)
}

fn epb(iface: u32, ts_ns: u64, frame: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&iface.to_le_bytes());
    body.extend_from_slice(&((ts_ns >> 32) as u32).to_le_bytes());
    body.extend_from_slice(&(ts_ns as u32).to_le_bytes());
    body.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    body.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    body.extend_from_slice(frame);
    block(6, &body)
}

fn pfc(mac_last: u8, quanta: u16) -> Vec<u8> {
    let mut f = Vec::new();
    let mut times = [0u16; 8];
    times[3] = quanta;
    roce_dissect::synth::frame::build_pfc([2, 0, 0, 0, 0, mac_last], 1 << 3, times, &mut f);
    f
}

/// Interface 0 states 25G, interface 1 states nothing; one XOFF of 1000
/// quanta on each, from MACs ..:01 and ..:02, left to expire.
fn capture(dir: &Path) -> PathBuf {
    let mut v = block(
        0x0A0D_0D0A,
        &[
            0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        ],
    );
    v.extend(idb(Some(25_000_000_000)));
    v.extend(idb(None));
    v.extend(epb(0, 1_000_000_000, &pfc(1, 1000)));
    v.extend(epb(1, 1_000_000_100, &pfc(2, 1000)));
    v.extend(epb(1, 1_000_100_000, &pfc(2, 0)));
    let p = dir.join("speeds.pcapng");
    std::fs::write(&p, v).unwrap();
    p
}

fn report(p: &Path, args: &[&str]) -> Value {
    let out = common::bin()
        .arg(p)
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// (source MAC's last byte, duration) of each interval.
fn durations(r: &Value) -> Vec<(String, u64)> {
    r["pfc"]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["src_mac"].as_str().unwrap().to_string(),
                i["end_ns"].as_u64().unwrap() - i["start_ns"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn each_interface_times_its_pauses_at_its_if_speed() {
    let d = tempfile::tempdir().unwrap();
    let p = capture(d.path());
    for j in ["-j1", "-j2"] {
        let r = report(&p, &[j]);
        // 1000 quanta x 512 bits at 25 Gb/s = 20.48 µs; at 100 Gb/s 5.12 µs
        // (the second interval is ended by expiry too: its XON came later).
        assert_eq!(
            durations(&r),
            vec![
                ("02:00:00:00:00:01".to_string(), 20_480),
                ("02:00:00:00:00:02".to_string(), 5_120),
            ],
            "{j}"
        );
        let speeds = &r["pfc"]["link_speeds"];
        assert_eq!(speeds.as_array().unwrap().len(), 2, "{speeds}");
        // Two frames at 100G (default), one at 25G (if_speed).
        assert_eq!(r["pfc"]["link_speed_bps"], 100_000_000_000u64);
        assert_eq!(r["pfc"]["link_speed_from"], "default");
        assert_eq!(speeds[1]["bps"], 25_000_000_000u64);
        assert_eq!(speeds[1]["from"], "if_speed");
        assert_eq!(speeds[1]["frames"], 1);
    }
    let f = d.path().join("r.json");
    std::fs::write(&f, report(&p, &[]).to_string()).unwrap();
    common::contract_check("report", &f);
}

#[test]
fn the_option_overrides_what_the_file_says() {
    let d = tempfile::tempdir().unwrap();
    let p = capture(d.path());
    let r = report(&p, &["--link-speed", "50G"]);
    assert_eq!(
        durations(&r),
        vec![
            ("02:00:00:00:00:01".to_string(), 10_240),
            ("02:00:00:00:00:02".to_string(), 10_240),
        ]
    );
    assert_eq!(r["pfc"]["link_speed_from"], "option");
    assert_eq!(r["pfc"]["link_speeds"].as_array().unwrap().len(), 1);
}

#[test]
fn the_text_report_and_the_packet_lines_use_the_frames_speed() {
    let d = tempfile::tempdir().unwrap();
    let p = capture(d.path());
    let text = String::from_utf8(common::bin().arg(&p).output().unwrap().stdout).unwrap();
    assert!(
        text.contains("quanta at 100 Gb/s (default) for 2 frames, 25 Gb/s (if_speed) for 1 frame"),
        "{text}"
    );
    let lines = String::from_utf8(
        common::bin()
            .arg("packets")
            .arg(&p)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let l: Vec<&str> = lines.lines().collect();
    assert!(l[0].ends_with("P3=1000 (20.5 µs)"), "{}", l[0]);
    assert!(l[1].ends_with("P3=1000 (5.1 µs)"), "{}", l[1]);
    let tree = String::from_utf8(
        common::bin()
            .args(["packets", "-V", "-c", "1", "--link-speed", "10G"])
            .arg(&p)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(tree.contains("51.2 µs"), "{tree}");
    let one = String::from_utf8(
        common::bin()
            .arg(&p)
            .args(["--link-speed", "25G"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        one.contains("quanta at 25 Gb/s, from --link-speed"),
        "{one}"
    );
}
