//! `--html`: the page names every flow, has the charts the capture calls
//! for and nothing from the network; each chart kind as an SVG snapshot;
//! in headless Chromium (when installed) it loads without a console
//! message and looks like the stored screenshot.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use roce_dissect::output::html::svg::{self, Anomaly, Lane};

fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("captures")
}

/// The page for a sample capture, run from `captures/` so that the page
/// names it without a path.
fn page(name: &str, dir: &Path) -> (PathBuf, String) {
    let out = dir.join(format!("{name}.html"));
    let run = common::bin()
        .current_dir(captures())
        .arg(name)
        .arg("--html")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("wrote") && err.contains("open it in a browser"),
        "{err}"
    );
    assert!(run.stdout.is_empty());
    let html = std::fs::read_to_string(&out).unwrap();
    (out, html)
}

/// The report's flows as the page writes them (`src → dst`, escaped).
fn flow_names(name: &str) -> Vec<String> {
    let out = common::bin()
        .arg(captures().join(name))
        .arg("--json")
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} → {}",
                f["src"].as_str().unwrap(),
                f["dst"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn every_sample_page_names_its_flows_and_draws_its_charts_offline() {
    let d = tempfile::tempdir().unwrap();
    for name in [
        "mixed.pcapng",
        "pfc-storm.pcapng",
        "loss.pcap",
        "incast.pcapng",
        "clean.pcapng",
        "loss-receiver.ns.pcap",
    ] {
        let (_, html) = page(name, d.path());
        for f in flow_names(name) {
            assert!(html.contains(&f), "{name}: {f} not in the page");
        }
        // Nothing fetched: no external script, style, font or image.
        for bad in ["<link", " src=", "url(", "@import", "https://"] {
            assert!(!html.contains(bad), "{name}: {bad}");
        }
        assert_eq!(
            html.matches("<svg").count(),
            html.matches("</svg>").count(),
            "{name}"
        );
        assert!(html.contains("prefers-color-scheme:dark"), "{name}");
    }
    let (_, mixed) = page("mixed.pcapng", d.path());
    for chart in [
        "PSN sequence of flow 1",
        "Throughput of flow 1",
        "Timing of flow 1",
        "PFC pause intervals",
        "CE marks and CNPs",
    ] {
        assert!(
            mixed.contains(&format!("aria-label=\"{chart}\"")),
            "{chart}"
        );
    }
    // The flows with trouble link to their section.
    assert!(mixed.contains("href=\"#c0-flow-1\"") && mixed.contains("id=\"c0-flow-1\""));
    // Its replays, late packets and NAKs are marked, each with a tooltip.
    for what in ["retransmit · frame", "out of order · frame", "NAK · frame"] {
        assert!(
            mixed.to_lowercase().contains(&what.to_lowercase()),
            "{what}"
        );
    }
    // Round trip and completion histograms, from the samples the report
    // keeps (with --html the report carries them).
    assert!(mixed.contains("aria-label=\"Round trip histogram of flow 1\""));
    assert!(mixed.contains("aria-label=\"Completion histogram of flow 1\""));
    let (_, storm) = page("pfc-storm.pcapng", d.path());
    assert!(storm.contains("aria-label=\"PFC pause intervals\""));
    assert!(storm.contains("class=\"storm\""), "storms drawn as storms");
    // The flows that sent through the pauses: their throughput with the
    // pause shaded.
    assert!(storm.contains("aria-label=\"Throughput of flow 1\""));
    assert!(storm.contains("class=\"paused\""));
    // Counts of one in the singular, as the text report has them.
    let (_, loss) = page("loss.pcap", d.path());
    assert!(loss.contains("1 retransmit in 1 episode"));
    let (_, incast) = page("incast.pcapng", d.path());
    assert!(incast.contains("1 pause interval from 1 sender of pauses"));
    let (_, clean) = page("clean.pcapng", d.path());
    assert!(clean.contains("Nothing wrong found"));
    assert!(!clean.contains("aria-label=\"PSN sequence"));
}

/// The SVG whose label is `label` in `html`.
fn svg_labelled<'h>(html: &'h str, label: &str) -> &'h str {
    let at = html
        .find(&format!("aria-label=\"{label}\""))
        .unwrap_or_else(|| panic!("no chart {label:?}"));
    let end = at + html[at..].find("</svg>").unwrap();
    &html[at..end]
}

/// The tick labels of a chart's axis: `end` for the y axis (right-aligned
/// beside it), `middle` for the x axis.
fn ticks<'h>(svg: &'h str, anchor: &str) -> Vec<&'h str> {
    let open = format!("text-anchor=\"{anchor}\">");
    svg.split("<text class=\"tick\"")
        .skip(1)
        .filter_map(|t| {
            let rest = &t[t.find(&open)? + open.len()..];
            Some(&rest[..rest.find("</text>")?])
        })
        .collect()
}

/// The incast sample: each sender gets one CNP, whose own PSN (0, in the
/// receiver's CNP sequence) meant nothing on the sender's PSN axis. It
/// was drawn there anyway, 16.7 million PSNs up (0 counted from the
/// sender's first), so the axis ran to 1.5e7 and the 12 packets sent
/// lay flat on it. Now the CNP sits at the PSN the sender had reached
/// when it came (by its payload and its events), and the axis is the
/// flow's. Its samples of 2.0-2.4 µs
/// fall in one histogram bin (1.78-3.16 µs), whose axis had no label.
#[test]
fn a_cnp_sits_on_its_flows_psns_and_a_one_bin_histogram_has_its_decades() {
    let d = tempfile::tempdir().unwrap();
    let (_, html) = page("incast.pcapng", d.path());
    let psn = svg_labelled(&html, "PSN sequence of flow 1");
    let y: Vec<f64> = ticks(psn, "end")
        .iter()
        .map(|t| t.parse().unwrap_or_else(|_| panic!("tick {t:?}")))
        .collect();
    assert!(
        !y.is_empty() && y.iter().all(|&v| v <= 12.0),
        "y ticks {y:?}"
    );
    let cnp = psn.find("<title>CNP · frame").expect("the CNP's mark");
    let title = &psn[cnp..cnp + psn[cnp..].find("</title>").unwrap()];
    assert!(!title.contains("PSN"), "{title}");
    // Flow 4 sends READ requests (no payload, so no throughput bins) up to
    // PSN 9 before its CNP comes at 28.5 µs: the mark goes above PSN 5,
    // as its CE mark at PSN 7 places the flow, not at its last payload
    // bin's PSN 0.
    let psn4 = svg_labelled(&html, "PSN sequence of flow 4");
    let five = psn4
        .split("<text class=\"tick\" x=\"60\" y=\"")
        .skip(1)
        .find_map(|t| {
            let (y, rest) = t.split_once('"')?;
            rest.contains(">5</text>")
                .then(|| y.parse::<f64>().unwrap() - 4.0)
        })
        .expect("a y tick 5");
    let cnp4 = psn4
        .split("<path d=\"M")
        .find(|p| p.contains("<title>CNP"))
        .expect("flow 4's CNP");
    let y4: f64 = cnp4.split([' ', 'l']).nth(1).unwrap().parse().unwrap();
    assert!(y4 < five, "CNP at y {y4}, PSN 5 at {five}");
    let hist = svg_labelled(&html, "Round trip histogram of flow 1");
    // The last decade's label is right-aligned at the axis' end.
    let x: Vec<&str> = [ticks(hist, "middle"), ticks(hist, "end")]
        .concat()
        .into_iter()
        .filter(|t| t.ends_with('s'))
        .collect();
    assert_eq!(x, ["1 µs", "10 µs"], "{hist}");
}

/// The pfc-storm sample: flow 1's payload (4 434 bytes) all falls in one
/// 1.05 ms bin, whose line (from the bin's value to itself) had no
/// length: the chart said "peak 31.2 Mb/s" and showed nothing. And the
/// pause it sent through was drawn, then painted over.
#[test]
fn a_flow_whose_payload_fits_one_bin_still_draws_its_rate() {
    let d = tempfile::tempdir().unwrap();
    let (_, html) = page("pfc-storm.pcapng", d.path());
    let chart = svg_labelled(&html, "Throughput of flow 1");
    let path = chart
        .split("<path class=\"series\" d=\"")
        .nth(1)
        .and_then(|p| p.split('"').next())
        .expect("the rate's line");
    let points: Vec<(f64, f64)> = path
        .split(['M', 'L'])
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (x, y) = p.split_once(' ').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    let first = points[0];
    assert!(
        points.iter().any(|&p| p != first),
        "a line of no length: {path}"
    );
    // The storm it sent through (150 ms paused) shades the plot: drawn
    // over its background, not under it, where it was never seen.
    let plot = chart.find("class=\"plot\"").expect("the plot");
    let band = chart.find("class=\"paused\"").expect("the pause's band");
    assert!(band > plot, "the band is under the plot's background");
    // Its one READ's latency: a histogram of one sample counts 0 and 1,
    // not 0.5.
    let hist = svg_labelled(&html, "READ latency histogram of flow 1");
    // (The y axis' labels, right-aligned; the last time label is too.)
    let y: Vec<&str> = ticks(hist, "end")
        .into_iter()
        .filter(|t| !t.ends_with('s'))
        .collect();
    assert!(y.contains(&"1"), "{y:?}");
    assert!(y.iter().all(|t| !t.contains('.')), "{y:?}");
}

/// The mixed sample's congestion lanes: a CE mark and a CNP, whose
/// legend said "paused" and "storm" (the PFC timeline's).
#[test]
fn the_congestion_lanes_name_ce_marks_and_cnps() {
    let d = tempfile::tempdir().unwrap();
    let (_, html) = page("mixed.pcapng", d.path());
    let legend = |chart: &str| -> Vec<String> {
        svg_labelled(&html, chart)
            .split("<text class=\"legend\"")
            .skip(1)
            .filter_map(|t| {
                let t = &t[t.find('>')? + 1..];
                Some(t[..t.find("</text>")?].to_string())
            })
            .collect()
    };
    assert_eq!(legend("CE marks and CNPs"), ["CE mark", "CNP"]);
    assert_eq!(legend("PFC pause intervals"), ["paused"]);
}

#[test]
fn several_captures_make_one_page_and_a_bad_path_is_one_line() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("two.html");
    let run = common::bin()
        .arg(captures().join("loss.pcap"))
        .arg(captures().join("mixed.pcapng"))
        .arg("--html")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success());
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("2 captures"));
    assert!(html.contains("id=\"c0\"") && html.contains("id=\"c1\""));
    assert!(html.contains("href=\"#c1-flow-1\""));
    // To standard output with -.
    let run = common::bin()
        .arg(captures().join("loss.pcap"))
        .args(["--html", "-"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&run.stdout).starts_with("<!doctype html>"));
    // A folder that does not exist: one line, exit 2; --json and --html
    // do not go together.
    let run = common::bin()
        .arg(captures().join("loss.pcap"))
        .arg("--html")
        .arg(d.path().join("no/such/dir/x.html"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&run.stderr).lines().count(), 1);
    let run = common::bin()
        .arg(captures().join("loss.pcap"))
        .args(["--html", "x.html", "--json"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
}

#[test]
fn each_chart_kind_as_svg() {
    let bins: Vec<svg::PsnBin> = (0..20u64)
        .map(|k| (k * 1000, k as u32 * 4, k as u32 * 4 + 3))
        .collect();
    let anomalies = vec![
        (
            Anomaly::Retransmit,
            9_500,
            30,
            "retransmit · frame 40".to_string(),
        ),
        (
            Anomaly::OutOfOrder,
            12_000,
            44,
            "out of order · frame 50".to_string(),
        ),
        (Anomaly::Gap, 3_000, 12, "gap · frame 10".to_string()),
        (Anomaly::Nak, 9_000, 30, "NAK · frame 38".to_string()),
        (Anomaly::Cnp, 15_000, 60, "CNP · frame 60".to_string()),
        (Anomaly::Ce, 14_000, 56, "CE · frame 58".to_string()),
    ];
    insta::assert_snapshot!(
        "svg_psn",
        svg::psn_chart("PSN", 0, (0, 20_000), 1000, &bins, &anomalies)
    );
    let points: Vec<(u64, u64, u64)> = (0..20u64)
        .map(|k| {
            (
                k * 1000,
                if (8..11).contains(&k) { 0 } else { 12_500 },
                if k == 11 { 2_000 } else { 0 },
            )
        })
        .collect();
    insta::assert_snapshot!(
        "svg_throughput",
        svg::throughput_chart(
            "Throughput",
            0,
            (0, 20_000),
            1000,
            &points,
            &[(8_000, 11_000, "paused by 02:00:00:00:00:01".to_string())]
        )
    );
    let lanes = vec![
        Lane {
            name: "02:00:00:00:00:01 p3".into(),
            bars: vec![
                (1_000, 4_000, false, "a".into()),
                (9_000, 19_000, true, "storm".into()),
            ],
        },
        Lane {
            name: "02:00:00:00:00:02 p*".into(),
            // Two pauses closer than a pixel: one bar.
            bars: vec![
                (5_000, 5_001, false, "b".into()),
                (5_002, 5_003, false, "c".into()),
            ],
        },
    ];
    let l = svg::lanes_chart("PFC", 0, (0, 20_000), &lanes, ["paused", "storm"]);
    assert!(l.contains("2 intervals closer than a pixel"));
    insta::assert_snapshot!("svg_lanes", l);
    insta::assert_snapshot!(
        "svg_histogram",
        svg::histogram_chart(
            "RTT",
            &[1000, 1778, 3162, 5623, 10000],
            &[3, 10, 4, 1],
            &[("p50", 2000), ("p99", 6000)]
        )
    );
    insta::assert_snapshot!(
        "svg_percentiles",
        svg::percentiles_chart(
            "Timing",
            &[
                ("round trip".into(), [2_000, 3_000, 9_000, 40_000, 3_500]),
                (
                    "completion".into(),
                    [5_000, 80_000, 900_000, 2_000_000, 120_000]
                ),
            ]
        )
    );
}

/// Headless Chromium, when installed.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

fn headless(browser: &str, profile: &Path) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// Reads a PNG as RGBA-ish bytes: (width, height, channels, pixels).
fn png_pixels(p: &Path) -> (u32, u32, usize, Vec<u8>) {
    let decoder = png::Decoder::new(std::fs::File::open(p).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, info.color_type.samples(), buf)
}

#[test]
fn chromium_renders_the_page_without_console_messages_and_as_stored() {
    let Some(browser) = chromium() else {
        eprintln!("SKIPPED: no chromium (install it to test the HTML report in a browser)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let (file, _) = page("mixed.pcapng", d.path());
    let url = format!("file://{}", file.display());
    let out = headless(browser, &d.path().join("p1"))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console: {console:?}");
    for f in flow_names("mixed.pcapng") {
        assert!(dom.contains(&f), "{f} not in the rendered page");
    }
    assert_eq!(dom.matches("<svg").count(), dom.matches("</svg>").count());
    assert!(dom.matches("class=\"chart\"").count() >= 10);
    // The top of the page against the stored screenshot: at most 2 % of
    // the pixels may differ (fonts and anti-aliasing move a little).
    let shot = d.path().join("shot.png");
    let out = headless(browser, &d.path().join("p2"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1100,1400")
        .arg(&url)
        .output()
        .unwrap();
    assert!(shot.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    let stored = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/html_mixed.png");
    if !stored.exists() || std::env::var_os("UPDATE_SCREENSHOTS").is_some() {
        std::fs::copy(&shot, &stored).unwrap();
        eprintln!("wrote {}", stored.display());
        return;
    }
    let (w, h, ch, got) = png_pixels(&shot);
    let (w0, h0, ch0, want) = png_pixels(&stored);
    assert_eq!((w, h, ch), (w0, h0, ch0));
    let differ = got
        .chunks(ch)
        .zip(want.chunks(ch))
        .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > 48))
        .count();
    let share = differ as f64 / (w as f64 * h as f64);
    if share > 0.02 {
        let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/html_mixed.actual.png");
        let _ = std::fs::copy(&shot, &keep);
        panic!(
            "{:.1} % of the pixels differ from {} (this run's: {}; UPDATE_SCREENSHOTS=1 to accept)",
            share * 100.0,
            stored.display(),
            keep.display()
        );
    }
}

#[test]
fn an_nvme_capture_gets_its_latencies_and_slowest_ios() {
    let d = tempfile::tempdir().unwrap();
    let cap = d.path().join("nvme.pcapng");
    let run = common::bin()
        .args([
            "gen",
            "--scenario",
            "nvme",
            "--seed",
            "3",
            "--qps",
            "2",
            "-o",
        ])
        .arg(&cap)
        .output()
        .unwrap();
    assert!(run.status.success());
    let out = d.path().join("nvme.html");
    let run = common::bin()
        .arg(&cap)
        .arg("--html")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success());
    let html = std::fs::read_to_string(&out).unwrap();
    for want in [
        "NVMe-oF I/O",
        "aria-label=\"NVMe-oF command latency per queue\"",
        "aria-label=\"NVMe-oF command latency histogram\"",
        "Slowest I/Os",
        "Unrecovered Read Error",
    ] {
        assert!(html.contains(want), "{want}");
    }
    // The histogram's samples are the commands answered.
    let json = common::bin()
        .arg(&cap)
        .args(["--json", "--timeline"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let completed = r["nvme"]["completed"].as_u64().unwrap();
    let in_hist: u64 = r["nvme"]["queues"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|q| q["latency_histogram"]["counts"].as_array())
        .flatten()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(in_hist, completed);
}
