//! The TUI through ratatui's TestBackend: every view as a snapshot, driven
//! by scripted key events, and the event loop itself.

mod common;

use std::path::Path;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use roce_dissect::tui::app::{Scope, View};
use roce_dissect::tui::{self, App};

fn app(name: &str) -> App {
    // The tree's Arrival Time is in the local zone: these snapshots in UTC.
    assert!(roce_dissect::fields::use_utc());
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name);
    let mut app = tui::load(&p, &Default::default(), Default::default(), &mut |_, _| {}).unwrap();
    app.title = name.to_string();
    app
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn press(app: &mut App, keys: &str) {
    for ch in keys.chars() {
        let code = match ch {
            '⏎' => KeyCode::Enter,
            '⎋' => KeyCode::Esc,
            '⇥' => KeyCode::Tab,
            '↓' => KeyCode::Down,
            '↑' => KeyCode::Up,
            c => KeyCode::Char(c),
        };
        app.handle_key(key(code));
    }
}

fn screen(app: &mut App) -> String {
    screen_of(app, 120, 32)
}

fn screen_of(app: &mut App, width: u16, height: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
    app.prepare(t.get_frame().area());
    t.draw(|f| tui::render::render(app, f)).unwrap();
    t.backend().to_string()
}

#[test]
fn flows_view() {
    let mut a = app("mixed.pcapng");
    insta::assert_snapshot!("tui_flows", screen(&mut a));
}

#[test]
fn filter_and_sort() {
    let mut a = app("mixed.pcapng");
    press(&mut a, "/fd00::2⏎");
    assert_eq!(a.filter, "fd00::2");
    assert!(a.flow_rows.iter().all(|&i| {
        let f = &a.report.flows[i];
        f.src.contains("fd00::2") || f.dst.contains("fd00::2") || a.report.flows[i].peer.is_some()
    }));
    press(&mut a, "ss"); // by #, then by packets
    insta::assert_snapshot!("tui_flows_filtered_sorted", screen(&mut a));
}

#[test]
fn packets_of_a_flow_with_anomalies() {
    let mut a = app("loss-receiver.ns.pcap");
    press(&mut a, "⏎");
    assert!(matches!(a.view(), View::Packets(Scope::Flow(0))));
    let s = screen(&mut a);
    assert!(s.contains("PSN="), "{s}");
    assert!(
        s.contains("[gap]") && s.contains("[out of order]") && s.contains("[retransmit]"),
        "{s}"
    );
    insta::assert_snapshot!("tui_packets", s);
}

#[test]
fn detail_tree_and_hex() {
    let mut a = app("loss.pcap");
    press(&mut a, "⏎⏎");
    assert_eq!(a.view(), View::Detail);
    let d = a.detail.as_ref().unwrap();
    assert!(d.tree[d.selected].text.starts_with("Base Transport Header"));
    insta::assert_snapshot!("tui_detail_bth", screen(&mut a));
    press(&mut a, "jjjjjjjjjjjjj"); // down to the PSN field
    let d = a.detail.as_ref().unwrap();
    assert!(
        d.tree[d.selected]
            .text
            .starts_with("Packet Sequence Number"),
        "{}",
        d.tree[d.selected].text
    );
    assert_eq!(d.tree[d.selected].bytes, Some(51..54));
    press(&mut a, "⇥");
    assert!(a.detail.as_ref().unwrap().hex_focus);
    insta::assert_snapshot!("tui_detail_psn_hex", screen(&mut a));
    // The PSN's three bytes (51..54: row 3, columns 3..5) are highlighted.
    let mut t = Terminal::new(TestBackend::new(120, 32)).unwrap();
    t.draw(|f| tui::render::render(&a, f)).unwrap();
    let buf = t.backend().buffer();
    let hex_x = 120 - 58 + 1 + 6; // pane start, border, "0030  "
    let row_y = 2 + 3; // title, border, row 0x30
    let highlighted = |col: u16| buf[(hex_x + col * 3, row_y)].bg == ratatui::style::Color::Yellow;
    assert!(
        !highlighted(2) && highlighted(3) && highlighted(4) && highlighted(5) && !highlighted(6)
    );
}

#[test]
fn psn_chart() {
    let mut a = app("loss-receiver.ns.pcap");
    press(&mut a, "p");
    assert!(matches!(a.view(), View::Chart(0)));
    let c = a.chart.as_ref().unwrap();
    assert_eq!(c.retransmit.len() as u64, a.report.flows[0].retransmits);
    assert_eq!(c.out_of_order.len() as u64, a.report.flows[0].out_of_order);
    insta::assert_snapshot!("tui_chart", screen(&mut a));
}

#[test]
fn timing_view_of_a_flow() {
    let mut a = app("loss-receiver.ns.pcap");
    press(&mut a, "w");
    assert!(matches!(a.view(), View::Timing(0)));
    let t = a.timing.as_ref().unwrap();
    let report = a.report.flows[0].timing.as_ref().unwrap();
    // The histograms hold the report's samples; the chart its throughput.
    assert_eq!(t.rtt.len() as u64, report.rtt.unwrap().count);
    assert_eq!(t.completion.len() as u64, report.completion.unwrap().count);
    let tp = report.throughput.as_ref().unwrap();
    let bits: f64 = t
        .first_sends
        .iter()
        .chain(&t.replays)
        .map(|p| p.1 * tp.bin_ns as f64)
        .sum();
    assert!((bits / 8.0 - tp.payload_bytes as f64).abs() < 1.0, "{bits}");
    assert!(t.replays.iter().any(|p| p.1 > 0.0));
    insta::assert_snapshot!("tui_timing", screen(&mut a));
    let small = screen_of(&mut a, 80, 24);
    for want in ["Throughput: flow #1", "RTT (", "completion (", "replays"] {
        assert!(small.contains(want), "80x24 lacks {want}:\n{small}");
    }
    press(&mut a, "⎋");
    assert!(matches!(a.view(), View::Flows));
}

#[test]
fn histogram_buckets_hold_every_sample() {
    let s: Vec<u64> = (1..=1000).collect();
    let h = tui::app::histogram(&s, 8);
    assert_eq!(h.len(), 8);
    assert_eq!(h.iter().map(|b| b.1).sum::<u64>(), 1000);
    assert_eq!(h.last().unwrap().0, 1000);
    assert!(h.windows(2).all(|w| w[0].0 < w[1].0));
    assert_eq!(tui::app::histogram(&[5, 5], 8), vec![(5, 2)]);
    assert!(tui::app::histogram(&[], 8).is_empty());
}

#[test]
fn pfc_timeline() {
    let mut a = app("pfc-storm.pcapng");
    press(&mut a, "t");
    assert_eq!(a.view(), View::Pauses);
    insta::assert_snapshot!("tui_pauses", screen(&mut a));
}

#[test]
fn all_frames_and_help() {
    let mut a = app("incast.pcapng");
    press(&mut a, "a");
    assert!(matches!(a.view(), View::Packets(Scope::All)));
    assert_eq!(a.packet_list.len() as u64, a.report.capture.frames);
    press(&mut a, "G");
    assert_eq!(a.packet_sel, a.packet_list.len() - 1);
    press(&mut a, "?");
    insta::assert_snapshot!("tui_help", screen(&mut a));
    press(&mut a, "⎋⎋");
    assert_eq!(a.view(), View::Flows);
}

#[test]
fn event_loop_quits_on_q_and_ctrl_c() {
    let mut a = app("clean.pcapng");
    let mut t = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let mut script = vec![
        Event::Key(key(KeyCode::Down)),
        Event::Key(key(KeyCode::Enter)),
        Event::Key(key(KeyCode::Enter)),
        Event::Key(key(KeyCode::Char('q'))), // back, not quit: not at the top
        Event::Key(key(KeyCode::Backspace)),
        Event::Key(key(KeyCode::Char('q'))),
    ]
    .into_iter();
    tui::event_loop(&mut t, &mut a, &mut || Ok(script.next())).unwrap();
    assert_eq!(a.view(), View::Flows);
    assert!(script.next().is_none(), "quit on the last key");
    let mut a = app("clean.pcapng");
    let mut script = vec![
        Event::Key(key(KeyCode::Enter)),
        Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
    ]
    .into_iter();
    tui::event_loop(&mut t, &mut a, &mut || Ok(script.next())).unwrap();
}

#[test]
fn random_access_reads_every_frame_again() {
    use roce_dissect::capture::{CaptureFile, FrameSource, RandomAccess, open_stream};
    for name in [
        "clean.pcapng",
        "loss.pcap",
        "mixed.pcapng",
        "loss-receiver.ns.pcap",
    ] {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("captures")
            .join(name);
        let mut s = open_stream(&p).unwrap();
        let mut offsets = Vec::new();
        while let Some(f) = s.next_frame() {
            offsets.push(f.unwrap().offset as u64);
        }
        let mut ra =
            RandomAccess::new(std::fs::File::open(&p).unwrap(), s.sections().to_vec()).unwrap();
        let file = CaptureFile::open(&p).unwrap();
        // Backwards, to defeat the window cache.
        let frames: Vec<_> = file.frames().unwrap().map(|f| f.unwrap()).collect();
        for (i, f) in frames.iter().enumerate().rev() {
            let g = ra.read(offsets[i], i as u64 + 1).unwrap();
            assert_eq!(
                (g.meta.ts_ns, g.meta.len, &g.data[..]),
                (f.ts_ns, f.len, f.data),
                "{name} frame {}",
                i + 1
            );
        }
    }
}

#[test]
fn an_80_by_24_terminal_shows_readable_headers_and_whole_numbers() {
    let mut a = app("mixed.pcapng");
    let s = screen_of(&mut a, 80, 24);
    let header = s.lines().nth(2).unwrap();
    for col in [
        "#",
        "source → destination",
        "QP",
        "packets",
        "retx",
        "ooo",
        "miss",
        "NAK",
        "CE",
        "CNP",
    ] {
        assert!(header.contains(col), "{col} missing from {header}");
    }
    // The key hints keep `? help` however narrow the terminal, dropping
    // whole hints before it rather than cutting one.
    let foot = s.lines().nth(23).unwrap().trim_matches('"').trim_end();
    assert!(foot.ends_with("? help"), "{foot}");
    assert!(!foot.contains("/ filter  s s"), "{foot}");
    insta::assert_snapshot!("tui_flows_80x24", s);
    // Wide counts are shortened, never cut.
    use roce_dissect::tui::render::fit;
    assert_eq!(fit(1_999_998, 5), "2.00M");
    assert_eq!(fit(1_999_998, 9), "1,999,998");
    assert_eq!(fit(12_345, 5), "12.3k");
    assert_eq!(fit(999, 5), "999");
    assert_eq!(fit(123_456_789, 5), "123M");
    for n in [0u64, 9, 99_999, 1_000_000, 45_678_901, u64::MAX] {
        for w in 4..10 {
            assert!(
                fit(n, w).chars().count() <= w.max(4),
                "{n} in {w}: {}",
                fit(n, w)
            );
        }
    }
}

#[test]
fn the_hex_pane_shows_every_byte_at_80_columns() {
    let mut a = app("loss.pcap");
    press(&mut a, "⏎⏎");
    let s = screen_of(&mut a, 80, 24);
    assert_eq!(a.hex_bytes, 8, "8 bytes a row beside the tree");
    // The frame's first bytes, all eight of the first row.
    let frame = a.detail.as_ref().unwrap().frame.data.clone();
    let row: Vec<String> = frame[..8].iter().map(|b| format!("{b:02x}")).collect();
    assert!(s.contains(&format!("0000  {}", row.join(" "))), "{s}");
    let row: Vec<String> = frame[8..16].iter().map(|b| format!("{b:02x}")).collect();
    assert!(s.contains(&format!("0008  {}", row.join(" "))), "{s}");
    insta::assert_snapshot!("tui_detail_80x24", s);
    let s = screen_of(&mut a, 120, 32);
    assert_eq!(a.hex_bytes, 16);
    let row: Vec<String> = frame[..16].iter().map(|b| format!("{b:02x}")).collect();
    assert!(
        s.contains(&format!(
            "0000  {}  {}",
            row[..8].join(" "),
            row[8..].join(" ")
        )),
        "{s}"
    );
}

#[test]
fn the_filter_takes_a_qp_in_any_form_and_starts_afresh() {
    let mut a = app("mixed.pcapng");
    let qp = a.report.flows[0].destqp;
    for typed in [format!("0x{qp:x}"), format!("0x{qp:06x}"), qp.to_string()] {
        press(&mut a, &format!("/{typed}⏎"));
        assert_eq!(a.filter, typed);
        let shown: Vec<u32> = a
            .flow_rows
            .iter()
            .map(|&i| a.report.flows[i].destqp)
            .collect();
        assert!(shown.contains(&qp), "{typed}: {shown:?}");
        // Only the flow and its peer.
        assert!(shown.len() <= 2, "{typed}: {shown:?}");
    }
    // `/` again starts a new filter, it does not append to the old one.
    press(&mut a, "/fd00⏎");
    assert_eq!(a.filter, "fd00");
    press(&mut a, "/⏎");
    assert_eq!(a.filter, "");
    assert_eq!(a.flow_rows.len(), a.report.flows.len());
}

#[test]
fn enter_on_a_pause_interval_lists_its_frames() {
    let mut a = app("pfc-storm.pcapng");
    press(&mut a, "tj"); // the second interval: priority 4, frames 4..25
    let iv = a.report.pfc.intervals[1].clone();
    assert_eq!((iv.start_frame, iv.end_frame), (4, Some(25)));
    press(&mut a, "⏎");
    assert!(matches!(a.view(), View::Packets(Scope::Pause(1))));
    assert_eq!(a.packet_list.first(), Some(&3));
    assert_eq!(a.packet_list.last(), Some(&24));
    let s = screen(&mut a);
    assert!(
        s.contains("Frames during the pause of 02:5e:00:00:00:01 prio 4"),
        "{s}"
    );
    // The first interval ended by expiry: its frames run to the last one
    // captured before the expiry.
    press(&mut a, "⎋k⏎");
    let iv = &a.report.pfc.intervals[0];
    let last = *a.packet_list.last().unwrap();
    // It expires after the last frame of the capture.
    assert_eq!(u64::from(last) + 1, a.report.capture.frames);
    assert_eq!(a.packet_list.first(), Some(&(iv.start_frame as u32 - 1)));
}

#[test]
fn the_filter_bar_takes_display_filters() {
    let mut a = app("mixed.pcapng");
    press(&mut a, "/roce.analysis.nak⏎");
    let d = a.display.as_ref().expect("a display filter");
    assert_eq!(d.matched, 6);
    assert!(a.status.contains("6 of 438 frames match"), "{}", a.status);
    // The flows with a NAK, their other directions beside them.
    let naks: Vec<usize> = (0..a.report.flows.len())
        .filter(|&i| a.report.flows[i].naks.total() > 0)
        .collect();
    assert_eq!(naks.len(), 3);
    for i in &naks {
        assert!(a.flow_rows.contains(i));
    }
    assert!(a.flow_rows.len() <= 6);
    let s = screen(&mut a);
    assert!(
        s.contains("display filter roce.analysis.nak (6 frames)"),
        "{s}"
    );
    insta::assert_snapshot!("tui_display_filter", s);
    // All packets: only the matching ones.
    press(&mut a, "a");
    assert_eq!(a.packet_list.len(), 6);
    let s = screen(&mut a);
    assert_eq!(s.matches("NAK: ").count(), 6, "{s}");
    press(&mut a, "⎋");
    // A bad filter says why and keeps the one applied.
    press(&mut a, "/bth.psn == ==⏎");
    assert!(a.status.contains("was unexpected"), "{}", a.status);
    assert!(a.display.is_some());
    // Words are still a search; empty clears.
    press(&mut a, "/10.0.0.7⏎");
    assert!(a.display.is_none());
    assert_eq!(a.filter, "10.0.0.7");
    press(&mut a, "/⏎");
    assert_eq!(a.flow_rows.len(), a.report.flows.len());
    // Analysis fields and header fields together.
    press(&mut a, "/bth.opcode == 0x81 || ip.dst == 10.0.1.4⏎");
    assert!(a.display.as_ref().unwrap().matched > 0);
    // One frame is one frame; a regular expression with the analysis'
    // flags.
    press(&mut a, "/frame.number == 7⏎");
    let s = screen(&mut a);
    assert!(
        s.contains("display filter frame.number == 7 (1 frame)"),
        "{s}"
    );
    press(
        &mut a,
        "/bth.opcode_name ~ \"(?-i)only$\" || roce.analysis.flags⏎",
    );
    assert!(a.display.as_ref().unwrap().matched > 0, "{}", a.status);
    // Counts kept by the first pass: episodes and skipped PSNs, as
    // `packets` finds them.
    for filter in ["roce.analysis.episode == 2", "roce.analysis.missing > 0"] {
        press(&mut a, &format!("/{filter}⏎"));
        let cap = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
            .arg("packets")
            .arg(&cap)
            .args(["-Y", filter])
            .output()
            .unwrap();
        let lines = String::from_utf8_lossy(&out.stdout).lines().count() as u64;
        assert!(lines > 0, "{filter}");
        assert_eq!(a.display.as_ref().unwrap().matched, lines, "{filter}");
    }
}

#[test]
fn a_filter_in_a_flows_list_counts_the_list_and_the_capture() {
    let mut a = app("mixed.pcapng");
    press(&mut a, "⏎");
    assert!(matches!(a.view(), View::Packets(Scope::Flow(0))));
    // Flow #1 sends requests: none of its frames is an ACK, 76 of the
    // capture's are. The bar says both, so an empty list does not read as
    // a list that failed to show the 76.
    press(&mut a, "/bth.opcode == 0x11⏎");
    assert!(a.packet_list.is_empty());
    assert_eq!(
        a.status,
        "0 of 39 frames here (76 of 438 in the capture) match display filter bth.opcode == 0x11"
    );
    // At 80 columns the filter's middle gives way, not the counts.
    let s = screen_of(&mut a, 80, 24);
    let bar = s.lines().last().unwrap();
    assert!(
        bar.starts_with("\" 0 of 39 frames here (76 of 438 in the capture) match"),
        "{s}"
    );
    assert!(bar.ends_with("bth.opcode == 0x11\""), "{s}");
    press(&mut a, "/roce.analysis.retransmission⏎");
    assert_eq!(a.packet_list.len(), 7);
    assert!(
        a.status.starts_with("7 of 39 frames here (")
            && a.status
                .ends_with(" in the capture) match display filter roce.analysis.retransmission"),
        "{}",
        a.status
    );
    // The list of every frame says the capture's count alone.
    press(&mut a, "⎋");
    assert_eq!(a.view(), View::Flows);
    press(&mut a, "a");
    assert!(matches!(a.view(), View::Packets(Scope::All)));
    press(&mut a, "/bth.opcode == 0x11⏎");
    assert_eq!(
        a.status,
        "76 of 438 frames match display filter bth.opcode == 0x11"
    );
}

#[test]
fn a_filter_selects_the_first_flow_it_matches_and_its_list_says_so() {
    // loss.pcap's one NAK is the responder's (#4), listed under the
    // requester (#1) as a connection is: the selection goes to #4.
    let mut a = app("loss.pcap");
    a.start_with_filter("roce.analysis.nak");
    assert_eq!(
        a.status,
        "1 of 326 frames match display filter roce.analysis.nak"
    );
    assert_eq!(a.flow_rows, vec![0, 3]);
    assert_eq!(a.selected_flow(), Some(3));
    press(&mut a, "⏎");
    assert!(matches!(a.view(), View::Packets(Scope::Flow(3))));
    assert_eq!(a.packet_list.len(), 1);
    assert_eq!(
        a.status,
        "1 of 32 frames here (1 of 326 in the capture) match display filter roce.analysis.nak"
    );
    // The requester's list is empty, and says why.
    press(&mut a, "⎋↑⏎");
    assert!(matches!(a.view(), View::Packets(Scope::Flow(0))));
    assert!(a.packet_list.is_empty());
    assert_eq!(
        a.status,
        "0 of 52 frames here (1 of 326 in the capture) match display filter roce.analysis.nak"
    );
}

#[test]
fn a_frame_list_takes_a_display_filter_and_keeps_its_place() {
    let mut a = app("mixed.pcapng");
    // Flow #1's frames, the eleventh selected.
    press(&mut a, "⏎");
    assert!(matches!(a.view(), View::Packets(Scope::Flow(0))));
    assert_eq!(a.packet_list.len(), 39);
    press(&mut a, "↓↓↓↓↓↓↓↓↓↓");
    let selected = a.packet_list[a.packet_sel];
    press(&mut a, "/roce.analysis.retransmission⏎");
    // The list is the flow's retransmissions, as `packets` lists them,
    // and stays on screen.
    assert!(matches!(a.view(), View::Packets(Scope::Flow(0))));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
        .args(["packets", "-T", "fields", "-e", "frame.number", "-Y"])
        .arg("roce.analysis.flow == 1 && roce.analysis.retransmission")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng"))
        .output()
        .unwrap();
    let numbers: Vec<u32> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().parse::<u32>().unwrap() - 1)
        .collect();
    assert_eq!(numbers.len(), 7);
    assert_eq!(a.packet_list, numbers);
    // The selection on the frame it was on, or the next one listed.
    let at = a.packet_list[a.packet_sel];
    assert!(at >= selected, "{at} < {selected}");
    assert!(a.packet_sel == 0 || a.packet_list[a.packet_sel - 1] < selected);
    let s = screen(&mut a);
    assert!(
        s.contains("(7 of 39) display filter roce.analysis.retransmission"),
        "{s}"
    );
    // At 80 columns the title keeps the counts and the filter's ends.
    let s = screen_of(&mut a, 80, 24);
    let title = s.lines().nth(1).unwrap();
    assert!(title.contains("(7 of 39) display filter roce.a"), "{s}");
    assert!(title.contains("transmission"), "{s}");
    // Words are not a search here: the bar says which filter was meant,
    // and the list stays as it was.
    press(&mut a, "/10.0.0.7⏎");
    assert!(
        a.status
            .contains("not a display filter; a frame list takes one: ip.addr == 10.0.0.7"),
        "{}",
        a.status
    );
    assert_eq!(a.packet_list, numbers);
    press(&mut a, "/0x4003⏎");
    assert!(a.status.ends_with("bth.destqp == 0x4003"), "{}", a.status);
    // Empty clears: every frame of the flow again, the selection still on
    // the frame selected.
    let at = a.packet_list[a.packet_sel];
    press(&mut a, "/⏎");
    assert!(a.display.is_none());
    assert_eq!(a.packet_list.len(), 39);
    assert_eq!(a.packet_list[a.packet_sel], at);
    // Back in the flows table the filter applied from the list holds.
    press(&mut a, "/bth.opcode == 0x81⏎⎋");
    assert_eq!(a.view(), View::Flows);
    assert!(a.display.is_some());
    assert!(a.flow_rows.len() < a.report.flows.len());
}

#[test]
fn the_first_pass_shows_the_captures_warnings() {
    let d = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/loss.pcap");
    let bytes = std::fs::read(&src).unwrap();
    let cut = d.path().join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
    let mut a = tui::load(
        &cut,
        &Default::default(),
        Default::default(),
        &mut |_, _| {},
    )
    .unwrap();
    assert!(a.status.starts_with("warning: "), "{}", a.status);
    let s = screen(&mut a);
    assert!(s.contains("warning: "), "{s}");
    // The same report as the report command's, by the quick path.
    let whole = app("loss.pcap");
    assert_eq!(whole.status, "");
}

#[test]
fn the_top_and_bottom_lines_fit_the_terminal_by_whole_parts() {
    use roce_dissect::tui::render::{header_line, key_line};
    let counts: Vec<String> = ["326 frames", "326 RoCE", "8 flows", "0 pause intervals"]
        .map(String::from)
        .to_vec();
    let cols = |s: &str| s.chars().count();
    // Wide enough: everything, as it was.
    assert_eq!(
        header_line("captures/loss.pcap", &counts, 120),
        " roce-dissect  captures/loss.pcap  326 frames, 326 RoCE, 8 flows, 0 pause intervals"
    );
    // A long path loses its middle, keeps its file name and every count.
    let long = "/home/someone/traces/cluster-a/rack-7/host-19/loss.pcap";
    let h = header_line(long, &counts, 80);
    assert!(cols(&h) <= 80, "{h}");
    assert!(
        h.contains("…") && h.contains("loss.pcap  326 frames"),
        "{h}"
    );
    assert!(h.ends_with("0 pause intervals"), "{h}");
    // A short relative path keeps its file name whole.
    let h = header_line("captures/mixed.pcapng", &counts, 80);
    assert!(h.contains("…s/mixed.pcapng  326 frames"), "{h}");
    assert_eq!(h.chars().count(), 80, "{h}");
    // Narrower still: whole counts go from the end, none is cut, and the
    // file name stays whole while it fits at all.
    for width in 45..80 {
        let h = header_line(long, &counts, width);
        assert!(h.contains("loss.pcap"), "{width}: {h}");
    }
    for width in 30..80 {
        let h = header_line(long, &counts, width);
        assert!(cols(&h) <= width, "{width}: {h}");
        let tail = h.rsplit("  ").next().unwrap();
        assert!(
            tail.split(", ").all(|c| counts.iter().any(|k| k == c)) || !tail.contains(' '),
            "{width}: {h}"
        );
    }
    // Names in wide characters are measured in columns, not characters.
    let wide = "/数据/集群/机架七/主机十九/丢包捕获文件.pcap";
    for width in 30..90 {
        let h = header_line(wide, &counts, width);
        let w = ratatui::text::Line::raw(h.as_str()).width();
        assert!(w <= width, "{width}: {h} is {w} columns");
    }
    // Key hints: whole ones in order, `? help` always last.
    let keys = ["↑↓ move", "Enter packets", "a all", "/ filter", "s sort"];
    assert_eq!(
        key_line(&keys, 200),
        " ↑↓ move  Enter packets  a all  / filter  s sort  ? help"
    );
    assert_eq!(
        key_line(&keys, 40),
        " ↑↓ move  Enter packets  a all  ? help"
    );
    assert_eq!(key_line(&keys, 5), " ? help");
    for width in 8..60 {
        let k = key_line(&keys, width);
        assert!(cols(&k) <= width, "{width}: {k}");
        assert!(k.ends_with("? help"));
    }
}

#[test]
fn a_long_filter_and_its_count_stay_in_sight_at_80_columns() {
    use roce_dissect::tui::render::{edit_line, status_line};
    let cols = |s: &str| ratatui::text::Line::raw(s).width();
    // Short: the text, the cursor and how to apply it.
    assert_eq!(
        edit_line("bth.psn > 3", 80),
        " filter: bth.psn > 3▏ (Enter apply, Esc cancel)"
    );
    // Longer than the line: its end, where the cursor is, after an
    // ellipsis; the hint goes first, then the text's start.
    let long = "infiniband.bth.opcode == 4 && infiniband.bth.destqp == 0x12 && frame.len > 100 && ip.src == 10.0.0.1";
    let e = edit_line(long, 80);
    assert!(e.starts_with(" filter: …"), "{e}");
    assert!(e.ends_with("ip.src == 10.0.0.1▏"), "{e}");
    assert_eq!(cols(&e), 80, "{e}");
    let fits = &long[..60];
    assert_eq!(edit_line(fits, 75), format!(" filter: {fits}▏"));
    for width in 3..130 {
        let e = edit_line(long, width);
        assert!(cols(&e) <= width, "{width}: {e}");
        assert!(e.ends_with("1▏"), "{width}: {e}");
    }
    // Wide characters count by columns; control characters are shown.
    let e = edit_line(
        "ip.src == 数据数据数据数据数据数据数据数据数据数据数据数据数据数据数据数据数据数据数据",
        40,
    );
    assert!(cols(&e) <= 40, "{e}");
    assert_eq!(
        edit_line("a\u{1b}b", 80),
        " filter: a\\u{1b}b▏ (Enter apply, Esc cancel)"
    );
    // A status: whole when it fits, else its start and its end, where the
    // count is.
    let status = format!("1,234 of 514,598 frames match display filter {long}");
    let s = status_line(&status, 80);
    assert_eq!(cols(&s), 80, "{s}");
    assert!(
        s.starts_with(" 1,234 of 514,598 frames match display filter infini"),
        "{s}"
    );
    assert!(s.ends_with("10.0.0.1"), "{s}");
    assert!(s.contains('…'), "{s}");
    // A filter's error: what is wrong and where come first.
    let bad =
        format!("display filter: \"10.0.0.999\" is not a valid IPv4 address (column 11): {long}");
    let s = status_line(&bad, 100);
    assert!(
        s.starts_with(" display filter: \"10.0.0.999\" is not a valid IPv4 address (column 11)"),
        "{s}"
    );
    assert_eq!(status_line("short", 80), " short");
    for width in 2..200 {
        assert!(cols(&status_line(&status, width)) <= width, "{width}");
    }

    // In the TUI, 80x24: typing, then the count once applied.
    let mut a = app("mixed.pcapng");
    press(&mut a, "/");
    let typed = "roce.analysis.nak || roce.analysis.nak || roce.analysis.nak || roce.analysis.nak";
    press(&mut a, typed);
    let s = screen_of(&mut a, 80, 24);
    let last = s.lines().nth(23).unwrap();
    assert!(last.contains("…"), "{s}");
    assert!(last.contains("roce.analysis.nak▏"), "{s}");
    press(&mut a, "⏎");
    assert!(a.status.contains("6 of 438 frames match"), "{}", a.status);
    let s = screen_of(&mut a, 80, 24);
    let last = s.lines().nth(23).unwrap();
    assert!(last.contains("6 of 438 frames match"), "{s}");
    // The box's title gives way in the filter's text, not in its counts.
    let top = s.lines().nth(1).unwrap();
    assert!(
        top.contains("Flows (6 shown) sorted by trouble display filter roce."),
        "{s}"
    );
    assert!(top.contains("(6 frames) ┐"), "{s}");
    insta::assert_snapshot!("tui_long_filter_80x24", s);
}

#[test]
fn up_brings_back_the_last_filter_and_ctrl_u_clears_the_line() {
    let mut a = app("mixed.pcapng");
    // A refused filter is not lost: `/` then ↑ gives it back to mend.
    press(&mut a, "/roce.analysis.nak || bth.psn == ==⏎");
    assert!(a.status.contains("was unexpected"), "{}", a.status);
    assert!(a.display.is_none());
    press(&mut a, "/↑");
    assert_eq!(
        a.editing.as_deref(),
        Some("roce.analysis.nak || bth.psn == ==")
    );
    for _ in 0.." || bth.psn == ==".len() {
        a.handle_key(key(KeyCode::Backspace));
    }
    press(&mut a, "⏎");
    assert_eq!(a.display.as_ref().map(|d| d.matched), Some(6));
    // The space left at the end is not kept, nor shown.
    assert_eq!(
        a.display.as_ref().unwrap().filter.text(),
        "roce.analysis.nak"
    );
    assert!(screen(&mut a).contains("display filter roce.analysis.nak (6 frames)"));
    // Ctrl-U empties what is typed; Esc leaves the filter applied.
    press(&mut a, "/↑");
    assert_eq!(a.editing.as_deref(), Some("roce.analysis.nak"));
    a.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    assert_eq!(a.editing.as_deref(), Some(""));
    press(&mut a, "x⎋");
    assert_eq!(a.editing, None);
    assert_eq!(a.display.as_ref().map(|d| d.matched), Some(6));
    // An empty filter clears, and is not what ↑ brings back.
    press(&mut a, "/⏎/↑");
    assert_eq!(a.editing.as_deref(), Some("roce.analysis.nak"));
    // The help lists both keys, and still fits 80x24.
    press(&mut a, "⎋?");
    let s = screen_of(&mut a, 80, 24);
    assert!(s.contains("Ctrl-U"), "{s}");
    assert!(s.contains("mouse wheel"), "{s}");
}

/// `tui -Y FILTER` starts as if the filter were typed after `/`; filters
/// that begin with `not`, `any` or `all` are display filters in the bar,
/// not words to look for.
#[test]
fn a_display_filter_from_the_command_line_or_a_quantifier_in_the_bar() {
    let count = |filter: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_roce-dissect"))
            .args(["packets", "-Y", filter])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).lines().count()
    };
    let filter = "ip.proto == \"UDP\" && all ip.addr != 10.0.0.1";
    let mut a = app("mixed.pcapng");
    a.start_with_filter(filter);
    let n = count(filter);
    assert!(n > 0 && n < 438, "{n}");
    assert!(
        a.status.starts_with(&format!("{n} of 438 frames match")),
        "{}",
        a.status
    );
    assert!(a.flow_rows.len() < a.report.flows.len());
    // ↑ in the bar brings it back.
    press(&mut a, "/↑");
    assert_eq!(a.editing.as_deref(), Some(filter));
    press(&mut a, "⎋");
    for typed in [
        "all ip.addr == 10.0.0.7",
        "not bth",
        "any eth.addr matches \"^\\\\x02\\\\x5e\"",
    ] {
        press(&mut a, &format!("/{typed}⏎"));
        let n = count(typed);
        assert!(a.filter.is_empty(), "{typed}: read as words");
        assert!(
            a.status.starts_with(&format!("{n} of 438 frames match")),
            "{typed}: {}",
            a.status
        );
    }
}

#[test]
fn w_writes_the_frames_listed_to_a_capture() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = app("mixed.pcapng");
    // In the flows table W does nothing; in a flow's packets it asks
    // for a name, the capture's and the flow's by default.
    press(&mut a, "W");
    assert!(a.saving.is_none());
    press(&mut a, "⏎W");
    assert_eq!(a.saving.as_deref(), Some("mixed-flow1.pcapng"));
    let line = screen_of(&mut a, 80, 24);
    assert!(
        line.contains("write 39 frames to: mixed-flow1.pcapng▏ (Enter write, Esc cancel)"),
        "{line}"
    );
    let ctrl_u = || KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL);
    // Esc writes nothing.
    press(&mut a, "⎋");
    assert!(a.saving.is_none());
    let out = dir.path().join("flow.pcapng");
    press(&mut a, "W");
    a.handle_key(ctrl_u());
    press(&mut a, &format!("{}⏎", out.display()));
    assert_eq!(a.status, format!("39 frames written to {}", out.display()));
    // The same file `packets --flow -w` writes.
    let cli = dir.path().join("cli.pcapng");
    let capture = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mixed.pcapng");
    assert_cmd::Command::cargo_bin("roce-dissect")
        .unwrap()
        .arg("packets")
        .arg(&capture)
        .args(["--flow", "10.0.0.7,10.0.1.3,0x00400d", "-w"])
        .arg(&cli)
        .assert()
        .success();
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&cli).unwrap());
    // The capture being read is not written over.
    let before = std::fs::read(&capture).unwrap();
    press(&mut a, "W");
    a.handle_key(ctrl_u());
    press(&mut a, &format!("{}⏎", capture.display()));
    assert!(
        a.status.starts_with("not written: ") && a.status.contains("is the capture being read"),
        "{}",
        a.status
    );
    assert_eq!(std::fs::read(&capture).unwrap(), before);
    // Every frame a display filter leaves, from all frames.
    press(&mut a, "⎋/");
    press(&mut a, "roce.analysis.retransmission⏎a");
    let out = dir.path().join("replays.pcap");
    press(&mut a, "W");
    assert_eq!(a.saving.as_deref(), Some("mixed-filtered.pcapng"));
    a.handle_key(ctrl_u());
    press(&mut a, &format!("{}⏎", out.display()));
    assert_eq!(a.status, format!("17 frames written to {}", out.display()));
    // A classic pcap, as the name says: its magic, and 17 records.
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(bytes[..4], 0xa1b2_3c4du32.to_le_bytes());
    let n = roce_dissect::capture::FrameReader::new(&bytes)
        .unwrap()
        .count();
    assert_eq!(n, 17);
}

#[test]
fn the_verdict_says_what_the_hints_say() {
    let mut a = app("incast.pcapng");
    assert!(!a.report.hints.is_empty());
    press(&mut a, "v");
    assert_eq!(a.view(), View::Verdict);
    let s = screen_of(&mut a, 80, 24);
    insta::assert_snapshot!("tui_verdict_80x24", s);
    // Every hint is there, with its count.
    let text = common::flat_screen(&s);
    for h in &a.report.hints {
        assert!(
            text.contains(&format!("! [{}×] {}", h.count, h.text)),
            "{text}"
        );
    }
    // A short screen scrolls, to the last line and no further.
    let short = screen_of(&mut a, 80, 10);
    press(&mut a, &"j".repeat(100));
    let end = screen_of(&mut a, 80, 10);
    assert_ne!(short, end);
    assert_eq!(a.verdict_top, a.verdict_lines - a.page);
    assert!(end.contains("head-of-line blocking"), "{end}");
    press(&mut a, "v");
    assert_eq!(a.view(), View::Flows);
    // A capture with nothing wrong says so.
    let mut clean = app("clean.pcapng");
    press(&mut clean, "v");
    assert!(screen(&mut clean).contains("Nothing wrong found"));
}

#[test]
fn a_capture_without_roce_says_why_in_place_of_the_flows() {
    let dir = tempfile::tempdir().unwrap();
    // ARP only: no RoCE.
    let mut arp = vec![0xff; 6];
    arp.extend([2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend([0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
    arp.extend([0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
    let p = common::write_pcap(dir.path(), "arp.pcap", &[arp.clone(), arp]);
    let mut a = tui::load(&p, &Default::default(), Default::default(), &mut |_, _| {}).unwrap();
    a.title = "arp.pcap".into();
    let s = common::flat_screen(&screen_of(&mut a, 80, 24));
    assert!(s.contains("No RoCE flows"), "{s}");
    assert!(s.contains("No RoCE frame in this capture"), "{s}");
    assert!(s.contains("tcpdump -i mlx5_0"), "{s}");
}

/// On a large terminal the addresses take no more than the widest flow's
/// (`└ ::ffff:10.0.1.2 → ::ffff:10.0.0.6`), so each flow's figures stay
/// beside them, and the room left is at the end of the rows.
#[test]
fn a_large_terminal_keeps_the_figures_beside_the_addresses() {
    let mut a = app("mixed.pcapng");
    let s = screen_of(&mut a, 250, 40);
    let row = s
        .lines()
        .find(|l| l.contains("└ ::ffff:10.0.1.2 → ::ffff:10.0.0.6"))
        .unwrap();
    // The widest flow: one space between its addresses and its QP.
    assert!(row.contains("::ffff:10.0.0.6 0x00010a v1 RC"), "{row}");
    // The row ends in blanks, past the paused column.
    assert!(row.contains("-    "), "{row}");
    assert!(
        row.trim_end_matches(['│', '"']).ends_with(&" ".repeat(100)),
        "{row}"
    );
    // At 80 columns the addresses are cut to what is left, as before.
    let s = screen_of(&mut a, 80, 24);
    assert!(s.contains("fd00::2 → fd00:0:0:1… 0x004003"), "{s}");
}
