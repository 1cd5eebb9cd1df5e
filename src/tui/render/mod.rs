//! Pure drawing: `render(&App, &mut Frame)` and one function per view.

mod charts;
mod flows;
mod frames;
mod ios;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::app::{App, View};
use crate::analysis::{Mark, Marks};
use crate::output::report::grouped;
use crate::output::text::terminal_safe;
use charts::{chart, pauses, timing};
pub use flows::verdict_text;
use flows::{flows, verdict};
use frames::{detail, packets};
use ios::ios;

const SELECTED: Style = Style::new()
    .bg(Color::DarkGray)
    .add_modifier(Modifier::BOLD);

/// Colour of a frame: its most telling mark, else blue for pause frames.
pub fn row_style(marks: Marks, pause: bool) -> Style {
    match marks.first() {
        Some(Mark::Retransmission | Mark::PsnReuse) => Style::new().fg(Color::Yellow),
        Some(Mark::Gap | Mark::OutOfOrder) => Style::new().fg(Color::Magenta),
        Some(Mark::Nak | Mark::RnrNak | Mark::BadIcrc) => Style::new().fg(Color::Red),
        Some(Mark::Cnp | Mark::Ce) => Style::new().fg(Color::Cyan),
        Some(Mark::Duplicate | Mark::Paused) => Style::new().fg(Color::DarkGray),
        None if pause => Style::new().fg(Color::Blue),
        None => Style::new(),
    }
}

/// A packet row's text with the tags of its marks: `... [retransmit] [CE]`.
pub fn with_marks(text: &str, marks: Marks) -> String {
    let mut s = text.to_string();
    crate::output::packets::push_marks(&mut s, marks);
    s
}

/// Bytes per row of the hex pane: 16 when the terminal leaves room for
/// them beside a readable tree, else 8.
pub fn hex_row_bytes(width: u16) -> usize {
    if width >= TREE_MIN + hex_pane_width(16) {
        16
    } else {
        8
    }
}

/// The narrowest the header tree pane gets.
const TREE_MIN: u16 = 30;

/// Width of the hex pane for `bytes` a row: the offset, the bytes with a
/// gap after each eight, and the borders.
fn hex_pane_width(bytes: usize) -> u16 {
    (6 + bytes * 3 + bytes / 8 + 2) as u16
}

/// Height of the list area for a terminal of `area` (for `App::prepare`).
pub fn list_height(area: Rect) -> usize {
    area.height.saturating_sub(4) as usize
}

pub fn render(app: &App, f: &mut Frame) {
    let area = f.area();
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    let c = &app.report.capture;
    let counts = [
        crate::output::text::count(c.frames, "frame", "frames"),
        format!("{} RoCE", grouped(c.roce_frames)),
        crate::output::text::count(app.report.flows.len() as u64, "flow", "flows"),
        crate::output::text::count(
            app.report.pfc.intervals.len() as u64,
            "pause interval",
            "pause intervals",
        ),
    ];
    let title = header_line(&terminal_safe(&app.title), &counts, usize::from(head.width));
    f.render_widget(
        Paragraph::new(title).style(Style::new().add_modifier(Modifier::REVERSED)),
        head,
    );
    match app.view() {
        View::Flows => flows(app, f, body),
        View::Packets(scope) => packets(app, f, body, scope),
        View::Detail => detail(app, f, body),
        View::Chart(flow) => chart(app, f, body, flow),
        View::Timing(flow) => timing(app, f, body, flow),
        View::Pauses => pauses(app, f, body),
        View::Ios(q) => ios(app, f, body, q),
        View::Verdict => verdict(app, f, body),
    }
    let keys: &[&str] = match app.view() {
        View::Flows => &[
            "↑↓ move",
            "Enter packets",
            "v verdict",
            "a all",
            "p PSN",
            "w timing",
            "n NVMe",
            "t pauses",
            "/ filter",
            "s sort",
        ],
        View::Packets(_) => &[
            "↑↓ move",
            "Enter detail",
            "/ filter",
            "p PSN chart",
            "w timing",
            "g/G top/end",
            "W write",
            "Esc back",
        ],
        View::Detail => &["↑↓ field", "Tab tree/hex", "Esc back"],
        View::Chart(_) | View::Timing(_) => &["Esc back"],
        View::Pauses => &["↑↓ move", "Enter frames", "Esc back"],
        View::Ios(_) => &["↑↓ move", "Enter its frames", "s sort", "Esc back"],
        View::Verdict => &["↑↓ scroll", "Esc back"],
    };
    let foot_width = usize::from(foot.width);
    let foot_text = if let Some(t) = &app.saving {
        prompt_line(
            &format!(
                " write {} to: ",
                crate::output::text::count(app.packet_list.len() as u64, "frame", "frames")
            ),
            " (Enter write, Esc cancel)",
            t,
            foot_width,
        )
    } else if let Some(t) = &app.editing {
        edit_line(t, foot_width)
    } else if !app.status.is_empty() {
        status_line(&app.status, foot_width)
    } else {
        key_line(keys, foot_width)
    };
    f.render_widget(
        Paragraph::new(foot_text).style(Style::new().fg(Color::Gray)),
        foot,
    );
    if app.help {
        help(f, area);
    }
}

/// Columns `s` takes on a terminal.
fn width_of(s: &str) -> usize {
    Line::raw(s).width()
}

/// The top line in `width` columns: the capture's name, then its counts.
/// A name too long for the line loses the middle of its path, never its
/// file name: counts go first, whole, from the end; only when the file
/// name alone does not fit is it cut too.
pub fn header_line(name: &str, counts: &[String], width: usize) -> String {
    const LEAD: &str = " roce-dissect  ";
    let file = width_of(name.rsplit('/').next().unwrap_or(name));
    let line = |shown: String, tail: &str| {
        if tail.is_empty() {
            format!("{LEAD}{shown}")
        } else {
            format!("{LEAD}{shown}  {tail}")
        }
    };
    for kept in (0..=counts.len()).rev() {
        let tail = counts[..kept].join(", ");
        let fixed = width_of(LEAD) + if kept == 0 { 0 } else { 2 + width_of(&tail) };
        let room = width.saturating_sub(fixed);
        if width_of(name) <= room || room > file {
            return line(elide_middle(name, room, file), &tail);
        }
    }
    line(
        elide_middle(name, width.saturating_sub(width_of(LEAD)).max(1), 0),
        "",
    )
}

/// `s` in at most `room` columns: whole if it fits, else its start and its
/// last `keep_end` columns or more around an ellipsis (a start shorter than
/// four columns is left out).
fn elide_middle(s: &str, room: usize, keep_end: usize) -> String {
    if width_of(s) <= room {
        return s.to_string();
    }
    let budget = room.saturating_sub(1);
    let head_cols = (budget / 3).min(budget.saturating_sub(keep_end));
    elide(s, room, head_cols)
}

/// `s` in `room` columns or fewer, which it does not fit in: its first
/// `head_cols` columns or fewer (none if fewer than four), an ellipsis,
/// and as much of its end as the rest holds.
fn elide(s: &str, room: usize, head_cols: usize) -> String {
    let char_width = |ch: char| width_of(ch.encode_utf8(&mut [0; 4]));
    // The longest run of `chars` within `cols` columns, and its columns.
    let take = |chars: &mut dyn Iterator<Item = char>, cols: usize| {
        let (mut run, mut used) = (Vec::new(), 0);
        for ch in chars {
            let w = char_width(ch);
            if used + w > cols {
                break;
            }
            used += w;
            run.push(ch);
        }
        (run, used)
    };
    let budget = room.saturating_sub(1);
    let head_cols = if head_cols < 4 {
        0
    } else {
        head_cols.min(budget)
    };
    let (head, used) = take(&mut s.chars(), head_cols);
    let (mut tail, _) = take(&mut s.chars().rev(), budget - used);
    tail.reverse();
    let (head, tail): (String, String) = (head.into_iter().collect(), tail.into_iter().collect());
    format!("{head}…{tail}")
}

/// The bottom line's key hints in `width` columns: as many as fit, in
/// order, and always the last, `? help` (which lists them all).
pub fn key_line(keys: &[&str], width: usize) -> String {
    const HELP: &str = "? help";
    let mut line = String::from(" ");
    for k in keys {
        if width_of(&line) + width_of(k) + 2 + width_of(HELP) > width {
            break;
        }
        line.push_str(k);
        line.push_str("  ");
    }
    line.push_str(HELP);
    line
}

/// The bottom line while a filter is typed, in `width` columns: the text
/// and a cursor, then how to apply or cancel when that fits too. A text
/// too long for the line shows its end (where the cursor is) after an
/// ellipsis, so what is typed stays in sight.
pub fn edit_line(text: &str, width: usize) -> String {
    prompt_line(" filter: ", " (Enter apply, Esc cancel)", text, width)
}

/// A line being typed after `lead`, with `hint` (how to end it) when
/// there is room, as [`edit_line`] shows a filter.
pub fn prompt_line(lead: &str, hint: &str, text: &str, width: usize) -> String {
    const CURSOR: &str = "▏";
    let text = terminal_safe(text);
    let whole = width_of(lead) + width_of(&text) + width_of(CURSOR);
    if whole + width_of(hint) <= width {
        return format!("{lead}{text}{CURSOR}{hint}");
    }
    if whole <= width {
        return format!("{lead}{text}{CURSOR}");
    }
    // The lead goes too when it would leave fewer than 8 columns of text.
    let shown_lead = if width >= width_of(lead) + width_of(CURSOR) + 8 {
        lead
    } else {
        ""
    };
    let room = width.saturating_sub(width_of(shown_lead) + width_of(CURSOR));
    format!("{shown_lead}{}{CURSOR}", elide(&text, room, 0))
}

/// A box's title within its top border (`width` columns with the
/// corners): whole if it fits, else its start and its end around an
/// ellipsis (the end holds the counts).
fn block_title(title: &str, width: u16) -> String {
    let room = usize::from(width).saturating_sub(2).max(1);
    elide_middle(title, room, 0)
}

/// A status message (a warning, a filter's count or error) in `width`
/// columns: whole if it fits, else mostly its start (what happened, how
/// many frames match, what is wrong and in which column), an ellipsis and
/// its last 20 columns or fewer.
pub fn status_line(status: &str, width: usize) -> String {
    let status = terminal_safe(status);
    let room = width.saturating_sub(1).max(1);
    if width_of(&status) <= room {
        return format!(" {status}");
    }
    let tail = (room / 4).min(20);
    format!(" {}", elide(&status, room, room.saturating_sub(1 + tail)))
}

/// `n` in at most `width` characters: with thousands separators when they
/// fit, else to three significant digits with k, M or G (never cut).
pub fn fit(n: u64, width: usize) -> String {
    let g = grouped(n);
    if g.chars().count() <= width {
        return g;
    }
    let mut v = n as f64;
    let mut unit = "";
    for u in ["k", "M", "G", "T", "P", "E"] {
        if v < 999.5 {
            break;
        }
        v /= 1e3;
        unit = u;
    }
    let s = if v >= 100.0 {
        format!("{v:.0}{unit}")
    } else if v >= 10.0 {
        format!("{v:.1}{unit}")
    } else {
        format!("{v:.2}{unit}")
    };
    if s.chars().count() <= width {
        s
    } else {
        format!("{v:.0}{unit}")
    }
}

const HELP: &[(&str, &str)] = &[
    ("↑ ↓  j k", "move"),
    ("PgUp PgDn", "move a page"),
    ("g  G", "first / last"),
    ("Enter  → l", "drill in: flow → packets → packet detail"),
    ("Esc  Backspace", "back"),
    ("Tab", "detail: tree ↔ hex; flows ↔ PFC timeline"),
    ("a", "all frames (from the flows table)"),
    ("p", "PSN chart of the selected flow"),
    ("w", "where the time went (RTT, completion, rate)"),
    ("t", "PFC timeline"),
    ("v", "the verdict: what the report's hints say"),
    ("W", "write the frames listed to a capture file"),
    ("n", "NVMe-oF I/Os of the flow's queue (s: sort)"),
    ("/", "display filter; in flows, address or QP too"),
    ("↑  Ctrl-U", "typing a filter: the last one / clear"),
    ("s  S", "sort by the next column / reverse"),
    ("?", "this help"),
    ("q", "quit (back, below the top level)"),
    ("Ctrl-C", "quit from anywhere"),
    ("mouse wheel", "scroll"),
];

fn help(f: &mut Frame, area: Rect) {
    let w = 64.min(area.width);
    let h = (HELP.len() as u16 + 4).min(area.height);
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    let lines: Vec<Line> = HELP
        .iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!("{k:>16}  "), Style::new().fg(Color::Yellow)),
                Span::raw(*v),
            ])
        })
        .collect();
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .title(" Keys (Esc closes) "),
        ),
        r,
    );
}
