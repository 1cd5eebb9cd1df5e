//! The TUI through ratatui's TestBackend: every view as a snapshot, driven
//! by scripted key events, and the event loop itself.

use std::path::Path;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use roce_dissect::tui::app::View;
use roce_dissect::tui::{self, App};

fn app(name: &str) -> App {
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
    let mut t = Terminal::new(TestBackend::new(120, 32)).unwrap();
    app.prepare(tui::render::list_height(t.get_frame().area()));
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
    assert!(matches!(a.view(), View::Packets(Some(0))));
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
    press(&mut a, "jjjjjjjjjjj"); // down to the PSN field
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
    assert!(matches!(a.view(), View::Packets(None)));
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
                (g.ts_ns, g.len, &g.data[..]),
                (f.ts_ns, f.len, f.data),
                "{name} frame {}",
                i + 1
            );
        }
    }
}
