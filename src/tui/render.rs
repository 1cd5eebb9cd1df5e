//! Pure drawing: `render(&App, &mut Frame)` and one function per view.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Cell, Chart, Clear, Dataset, GraphType, LegendPosition, Paragraph, Row,
    Table, TableState, Wrap,
};

use super::app::{App, Scope, View};
use crate::analysis::{Mark, Marks};
use crate::output::report::grouped;
use crate::output::text::terminal_safe;
use crate::units::human_ns;

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

/// A column of the flows table.
struct Column {
    title: &'static str,
    width: u16,
    /// Lower shows first: columns drop from the highest when the terminal
    /// is too narrow for all of them.
    rank: u8,
}

/// The flows table's columns, in display order.
const COLUMNS: [Column; 14] = [
    Column {
        title: "#",
        width: 4,
        rank: 0,
    },
    Column {
        title: "source → destination",
        width: 20,
        rank: 0,
    },
    Column {
        title: "QP",
        width: 8,
        rank: 1,
    },
    Column {
        title: "v",
        width: 2,
        rank: 9,
    },
    Column {
        title: "tr",
        width: 3,
        rank: 8,
    },
    Column {
        title: "packets",
        width: 7,
        rank: 2,
    },
    Column {
        title: "bytes",
        width: 7,
        rank: 6,
    },
    Column {
        title: "retx",
        width: 5,
        rank: 3,
    },
    Column {
        title: "ooo",
        width: 5,
        rank: 3,
    },
    Column {
        title: "miss",
        width: 5,
        rank: 3,
    },
    Column {
        title: "NAK",
        width: 4,
        rank: 4,
    },
    Column {
        title: "CE",
        width: 4,
        rank: 5,
    },
    Column {
        title: "CNP",
        width: 4,
        rank: 5,
    },
    Column {
        title: "paused",
        width: 8,
        rank: 7,
    },
];

/// Which of [`COLUMNS`] fit in `width` (inside the borders and the
/// highlight symbol).
fn visible_columns(width: u16, width_of: impl Fn(usize) -> u16) -> Vec<usize> {
    let room = width.saturating_sub(4);
    let mut shown: Vec<usize> = Vec::new();
    for rank in 0..=9 {
        for (i, c) in COLUMNS.iter().enumerate().filter(|(_, c)| c.rank == rank) {
            let used: u16 = shown.iter().map(|&j| width_of(j) + 1).sum();
            if used + width_of(i) < room || c.rank == 0 {
                shown.push(i);
            }
        }
    }
    shown.sort_unstable();
    shown
}

/// `s` cut to `width` characters with an ellipsis, so a cut shows.
fn ellipsize(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn flows(app: &App, f: &mut Frame, area: Rect) {
    // No flow at all: the verdict says why (no RoCE, another port).
    if app.report.flows.is_empty() {
        verdict_block(&app.report, f, area, " No RoCE flows: the verdict ", 0);
        return;
    }
    // The # column is as wide as the largest flow number.
    let number_w = (app.report.flows.len().to_string().len() as u16 + 1).max(4);
    let column_width = |i: usize| {
        if i == 0 { number_w } else { COLUMNS[i].width }
    };
    let cols = visible_columns(area.width, column_width);
    // What the other columns leave to the addresses (borders, highlight
    // symbol and one space between columns taken off).
    let name_w = usize::from(
        area.width.saturating_sub(4).saturating_sub(
            cols.iter()
                .filter(|&&i| i != 1)
                .map(|&i| column_width(i) + 1)
                .sum::<u16>(),
        ),
    )
    .max(usize::from(COLUMNS[1].width));
    let header = Row::new(cols.iter().map(|&i| COLUMNS[i].title))
        .style(Style::new().add_modifier(Modifier::BOLD));
    let num = |n: u64, w: u16| {
        let c = Cell::from(fit(n, usize::from(w)));
        if n > 0 {
            c.style(Style::new().fg(Color::Red))
        } else {
            c
        }
    };
    // Only the rows on screen are built.
    let top = app.flow_top.min(app.flow_rows.len());
    let mut prev_peer: Option<usize> = top
        .checked_sub(1)
        .and_then(|p| app.flow_rows.get(p))
        .and_then(|&p| app.peers[p]);
    let visible = &app.flow_rows[top..(top + usize::from(area.height)).min(app.flow_rows.len())];
    let rows = visible.iter().map(|&i| {
        let fl = &app.report.flows[i];
        let is_peer = prev_peer == Some(i);
        prev_peer = app.peers[i];
        let paused = app.paused_ns[i];
        let cells = cols.iter().map(|&c| {
            let w = column_width(c);
            match c {
                0 => Cell::from((i + 1).to_string()),
                1 => Cell::from(ellipsize(
                    &format!("{}{} → {}", if is_peer { "└ " } else { "" }, fl.src, fl.dst),
                    name_w,
                )),
                2 => Cell::from(format!("0x{:06x}", fl.destqp)),
                3 => Cell::from(fl.version.as_str()),
                4 => Cell::from(crate::analysis::report::transport_name(fl.transport)),
                5 => Cell::from(fit(fl.packets, usize::from(w))),
                6 => Cell::from(fit(fl.bytes, usize::from(w))),
                7 => num(fl.retransmits, w),
                8 => num(fl.out_of_order, w),
                9 => num(fl.missing, w),
                10 => num(fl.naks.total(), w),
                11 => num(fl.ecn_ce, w),
                12 => num(fl.cnps, w),
                _ => Cell::from(if paused > 0 {
                    human_ns(paused)
                } else {
                    "-".into()
                }),
            }
        });
        Row::new(cells.collect::<Vec<_>>())
    });
    // The addresses take what the other columns leave, up to the widest
    // flow's: on a large terminal the figures stay beside them.
    let widths: Vec<Constraint> = cols
        .iter()
        .map(|&i| {
            if i == 1 {
                let w = name_w
                    .min(app.name_width)
                    .max(usize::from(COLUMNS[1].width));
                Constraint::Length(u16::try_from(w).unwrap_or(u16::MAX))
            } else {
                Constraint::Length(column_width(i))
            }
        })
        .collect();
    let order = if app.reverse { " ↑" } else { "" };
    let lead = format!(
        " Flows ({} shown) sorted by {}{order}",
        grouped(app.flow_rows.len() as u64),
        app.sort.label()
    );
    // The filter's text is what gives way when the title is too long.
    let (before, text, after) = match &app.display {
        Some(d) => (
            " display filter ",
            terminal_safe(d.filter.text()),
            format!(
                " ({}) ",
                crate::output::text::count(d.matched, "frame", "frames")
            ),
        ),
        None if app.filter.is_empty() => ("", String::new(), " ".to_string()),
        None => (" filter \"", terminal_safe(&app.filter), "\" ".to_string()),
    };
    let fixed = width_of(&lead) + width_of(before) + width_of(&after);
    let room = usize::from(area.width).saturating_sub(2 + fixed).max(1);
    let title = format!("{lead}{before}{}{after}", elide_middle(&text, room, 0));
    let table = Table::new(rows, widths)
        .header(header)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(block_title(&title, area.width)),
        )
        .row_highlight_style(SELECTED)
        .highlight_symbol("▶ ");
    let mut state = TableState::default().with_selected(Some(app.flow_sel.saturating_sub(top)));
    f.render_stateful_widget(table, area, &mut state);
}

/// The verdict's lines for a block `width` columns wide: each hint of the
/// report as the text report writes it (`! [3×] ...`), wrapped, a blank
/// line between them.
pub fn verdict_text(report: &crate::analysis::Report, width: u16) -> Vec<String> {
    let inner = usize::from(width.saturating_sub(2)).max(20);
    if report.hints.is_empty() {
        return crate::output::fit::wrap(crate::analysis::hints::NOTHING_WRONG, inner)
            .lines()
            .map(String::from)
            .collect();
    }
    let mut lines = Vec::new();
    for (i, h) in report.hints.iter().enumerate() {
        if i > 0 {
            lines.push(String::new());
        }
        let text = format!("! [{}×] {}", grouped(h.count), terminal_safe(&h.text));
        lines.extend(
            crate::output::fit::wrap(&text, inner)
                .lines()
                .map(String::from),
        );
    }
    lines
}

/// The verdict in a block, from line `top` on.
fn verdict_block(
    report: &crate::analysis::Report,
    f: &mut Frame,
    area: Rect,
    title: &str,
    top: usize,
) {
    let lines: Vec<Line> = verdict_text(report, area.width)
        .into_iter()
        .skip(top)
        .map(|l| match l.strip_prefix('!') {
            Some(rest) => Line::from(vec![
                Span::styled("!", Style::new().fg(Color::Yellow)),
                Span::raw(rest.to_string()),
            ]),
            None => Line::from(l),
        })
        .collect();
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .title(block_title(title, area.width)),
        ),
        area,
    );
}

/// What the report's hints say, scrolled to the app's line.
fn verdict(app: &App, f: &mut Frame, area: Rect) {
    let title = format!(
        " Verdict: {} ",
        crate::output::text::count(app.report.hints.len() as u64, "hint", "hints")
    );
    verdict_block(&app.report, f, area, &title, app.verdict_top);
}

fn packets(app: &App, f: &mut Frame, area: Rect, scope: Scope) {
    let lead = match scope {
        Scope::Flow(i) => {
            let fl = &app.report.flows[i];
            format!(
                " Packets of flow #{} {} → {} QP 0x{:06x}",
                i + 1,
                fl.src,
                fl.dst,
                fl.destqp,
            )
        }
        Scope::All => " All frames".to_string(),
        Scope::Io(i) => {
            let io = app.ios.as_ref().and_then(|l| l.rows.get(i));
            format!(
                " Frames of NVMe {} CID {}",
                io.map_or("?", |r| r.name),
                io.map_or(0, |r| r.cid),
            )
        }
        Scope::Pause(i) => {
            let iv = &app.report.pfc.intervals[i];
            format!(
                " Frames during the pause of {} prio {}, {} from +{}",
                iv.src_mac,
                iv.priority.map_or("all".into(), |p| p.to_string()),
                human_ns(iv.duration_ns),
                human_ns(iv.start_ns.saturating_sub(app.report.capture.first_ts_ns)),
            )
        }
    };
    let listed = grouped(app.packet_list.len() as u64);
    let title = match &app.display {
        // The filter's text is what gives way when the title is too long.
        Some(d) => {
            let counts = format!(" ({listed} of {}) ", grouped(app.packet_scope_len as u64));
            let before = "display filter ";
            let fixed = width_of(&lead) + width_of(&counts) + width_of(before) + 1;
            let room = usize::from(area.width).saturating_sub(2 + fixed).max(20);
            let text = elide_middle(&terminal_safe(d.filter.text()), room, 0);
            format!("{lead}{counts}{before}{text} ")
        }
        None => format!("{lead} ({listed}) "),
    };
    let lines: Vec<Line> = app
        .packet_rows
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let mut style = row_style(r.marks, r.pause);
            if app.packet_top + k == app.packet_sel {
                style = style.patch(SELECTED);
            }
            Line::from(vec![Span::styled(with_marks(&r.text, r.marks), style)])
        })
        .collect();
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .title(block_title(&title, area.width)),
        ),
        area,
    );
}

fn detail(app: &App, f: &mut Frame, area: Rect) {
    let Some(d) = &app.detail else { return };
    // The hex pane takes what its bytes a row need; the tree the rest.
    let per_row = app.hex_bytes.max(1);
    let [left, right] = Layout::horizontal([
        Constraint::Min(TREE_MIN),
        Constraint::Length(hex_pane_width(per_row)),
    ])
    .areas(area);
    let inner_h = left.height.saturating_sub(2) as usize;
    let top = d.selected.saturating_sub(inner_h.saturating_sub(1));
    let tree: Vec<Line> = d
        .tree
        .iter()
        .enumerate()
        .skip(top)
        .take(inner_h)
        .map(|(i, n)| {
            let text = format!("{}{}", "  ".repeat(n.depth as usize), n.text);
            if i == d.selected {
                Line::styled(text, SELECTED)
            } else {
                Line::raw(text)
            }
        })
        .collect();
    let border = |focus: bool| {
        if focus {
            Style::new().fg(Color::Yellow)
        } else {
            Style::new()
        }
    };
    f.render_widget(
        Paragraph::new(tree).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(border(!d.hex_focus))
                .title(format!(" Frame {} ", d.frame.number)),
        ),
        left,
    );
    let sel = d.tree.get(d.selected).and_then(|n| n.bytes.clone());
    let data = &d.frame.data;
    let hex: Vec<Line> = data
        .chunks(per_row)
        .enumerate()
        .skip(d.hex_scroll)
        .map(|(row, chunk)| {
            let mut spans = vec![Span::styled(
                format!("{:04x}  ", row * per_row),
                Style::new().fg(Color::Gray),
            )];
            for (j, b) in chunk.iter().enumerate() {
                let at = row * per_row + j;
                let on = sel.as_ref().is_some_and(|r| r.contains(&at));
                let style = if on {
                    Style::new().fg(Color::Black).bg(Color::Yellow)
                } else {
                    Style::new()
                };
                spans.push(Span::styled(format!("{b:02x}"), style));
                spans.push(Span::raw(if j == 7 { "  " } else { " " }));
            }
            Line::from(spans)
        })
        .collect();
    let range = sel
        .map(|r| format!(" bytes {}..{} ", r.start, r.end))
        .unwrap_or_default();
    f.render_widget(
        Paragraph::new(hex).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(border(d.hex_focus))
                .title(format!(" Hex{range}")),
        ),
        right,
    );
}

fn chart(app: &App, f: &mut Frame, area: Rect, flow: usize) {
    let Some(c) = &app.chart else { return };
    let fl = &app.report.flows[flow];
    let all = c
        .normal
        .iter()
        .chain(&c.retransmit)
        .chain(&c.out_of_order)
        .chain(&c.gap);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in all {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(*y);
        y1 = y1.max(*y);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if x1 - x0 < 1e-9 {
        x1 = x0 + 1e-6;
    }
    if y1 - y0 < 1.0 {
        y1 = y0 + 1.0;
    }
    let datasets = vec![
        Dataset::default()
            .name(format!("in order ({})", c.normal.len()))
            .marker(Marker::Braille)
            .graph_type(GraphType::Scatter)
            .style(Style::new().fg(Color::Green))
            .data(&c.normal),
        Dataset::default()
            .name(format!("retransmit ({})", c.retransmit.len()))
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(Style::new().fg(Color::Yellow))
            .data(&c.retransmit),
        Dataset::default()
            .name(format!("out of order ({})", c.out_of_order.len()))
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(Style::new().fg(Color::Magenta))
            .data(&c.out_of_order),
        Dataset::default()
            .name(format!("after a gap ({})", c.gap.len()))
            .marker(Marker::Block)
            .graph_type(GraphType::Scatter)
            .style(Style::new().fg(Color::Red))
            .data(&c.gap),
    ];
    let title = format!(
        " PSN over time: flow #{} {} → {} QP 0x{:06x}{} ",
        flow + 1,
        fl.src,
        fl.dst,
        fl.destqp,
        if c.sampled { " (sampled)" } else { "" }
    );
    // The legend top left: PSNs climb to the right, so the curve's end is
    // top right and its start bottom left.
    let chart = Chart::new(datasets)
        .legend_position(Some(LegendPosition::TopLeft))
        // Shown on an 80x24 terminal too (by default it hides below a
        // quarter of the chart's height).
        .hidden_legend_constraints((Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)))
        .block(Block::default().borders(Borders::ALL).title(title))
        .x_axis(
            Axis::default()
                .title("seconds")
                .bounds([x0, x1])
                .labels([format!("{x0:.6}"), format!("{x1:.6}")]),
        )
        .y_axis(
            Axis::default()
                .title("PSN (from first)")
                .bounds([y0, y1])
                .labels([format!("{y0:.0}"), format!("{y1:.0}")]),
        );
    f.render_widget(chart, area);
}

/// A histogram of durations as horizontal bars, one row per bucket.
fn duration_bars(f: &mut Frame, area: Rect, title: &str, samples: &[u64], color: Color) {
    use crate::units::human_ns;
    let block = Block::default().borders(Borders::ALL).title(format!(
        " {title} ({}) ",
        crate::output::text::count(samples.len() as u64, "sample", "samples")
    ));
    let rows = usize::from(area.height.saturating_sub(2)).clamp(1, 12);
    let buckets = super::app::histogram(samples, rows);
    if buckets.is_empty() {
        f.render_widget(
            Paragraph::new(" no samples: nothing answered this flow").block(block),
            area,
        );
        return;
    }
    let most = buckets.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    // Bounds closer than the rounding shows are given in nanoseconds.
    let mut labels: Vec<String> = buckets
        .iter()
        .map(|b| format!("≤{}", human_ns(b.0)))
        .collect();
    if labels.windows(2).any(|w| w[0] == w[1]) {
        labels = buckets
            .iter()
            .map(|b| format!("≤{} ns", grouped(b.0)))
            .collect();
    }
    let label_w = labels.iter().map(|l| l.chars().count()).max().unwrap_or(9);
    let count_w = 7usize;
    let bar_w = usize::from(area.width.saturating_sub(2)).saturating_sub(label_w + count_w + 2);
    let lines: Vec<Line> = buckets
        .iter()
        .zip(&labels)
        .map(|(&(_, n), label)| {
            let len = (n as usize * bar_w).div_ceil(most as usize);
            Line::from(vec![
                Span::raw(format!("{label:>label_w$} ")),
                Span::styled("█".repeat(len), Style::new().fg(color)),
                Span::raw(format!(" {}", fit(n, count_w))),
            ])
        })
        .collect();
    f.render_widget(Paragraph::new(lines).block(block), area);
}

/// Where the time went on one flow: its throughput over time (replays in
/// their own colour) above its round trip and completion histograms.
fn timing(app: &App, f: &mut Frame, area: Rect, flow: usize) {
    let Some(t) = &app.timing else { return };
    let fl = &app.report.flows[flow];
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(bottom);
    let title = format!(
        " Throughput: flow #{} {} → {} QP 0x{:06x} (bins of {}) ",
        flow + 1,
        fl.src,
        fl.dst,
        fl.destqp,
        crate::units::human_ns(t.bin_ns)
    );
    if t.first_sends.is_empty() {
        f.render_widget(
            Paragraph::new(" no payload on this flow")
                .block(Block::default().borders(Borders::ALL).title(title)),
            top,
        );
    } else {
        let (x0, x1) = (
            t.first_sends.first().map_or(0.0, |p| p.0),
            t.first_sends.last().map_or(1.0, |p| p.0),
        );
        let x1 = if x1 - x0 < 1e-9 { x0 + 1e-6 } else { x1 };
        let y1 = t
            .first_sends
            .iter()
            .zip(&t.replays)
            .map(|(a, b)| a.1.max(b.1))
            .fold(0.0f64, f64::max)
            .max(1e-3);
        let replayed: f64 = t.replays.iter().map(|p| p.1).sum();
        let mut datasets = vec![
            Dataset::default()
                .name("first sends")
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(Style::new().fg(Color::Cyan))
                .data(&t.first_sends),
        ];
        if replayed > 0.0 {
            datasets.push(
                Dataset::default()
                    .name("replays")
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Line)
                    .style(Style::new().fg(Color::Red))
                    .data(&t.replays),
            );
        }
        let chart = Chart::new(datasets)
            .legend_position(Some(LegendPosition::TopRight))
            .hidden_legend_constraints((Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)))
            .block(Block::default().borders(Borders::ALL).title(title))
            .x_axis(
                Axis::default()
                    .title("seconds")
                    .bounds([x0, x1])
                    .labels([format!("{x0:.6}"), format!("{x1:.6}")]),
            )
            .y_axis(
                Axis::default()
                    .title("Gb/s")
                    .bounds([0.0, y1])
                    .labels(["0".to_string(), format!("{y1:.1}")]),
            );
        f.render_widget(chart, top);
    }
    duration_bars(f, left, "RTT", &t.rtt, Color::Green);
    duration_bars(f, right, "completion", &t.completion, Color::Yellow);
}

fn pauses(app: &App, f: &mut Frame, area: Rect) {
    let pfc = &app.report.pfc;
    let c = &app.report.capture;
    let rows = pfc.summary.len().max(1) as u16 + 2;
    let [top, bottom] =
        Layout::vertical([Constraint::Length(rows), Constraint::Min(3)]).areas(area);
    let width = top.width.saturating_sub(32).max(10) as usize;
    let span = c.duration_ns.max(1);
    let lines: Vec<Line> = if pfc.summary.is_empty() {
        vec![Line::raw("no PFC or PAUSE frames in this capture")]
    } else {
        pfc.summary
            .iter()
            .map(|s| {
                let mut bar = vec![' '; width];
                for iv in pfc
                    .intervals
                    .iter()
                    .filter(|i| i.src_mac == s.src_mac && i.priority == s.priority)
                {
                    let a = ((iv.start_ns.saturating_sub(c.first_ts_ns)) as u128 * width as u128
                        / span as u128) as usize;
                    let b = ((iv.end_ns.saturating_sub(c.first_ts_ns)) as u128 * width as u128
                        / span as u128) as usize;
                    for x in bar
                        .iter_mut()
                        .take(b.min(width - 1) + 1)
                        .skip(a.min(width - 1))
                    {
                        *x = '█';
                    }
                }
                let prio = s.priority.map_or("all".into(), |p| p.to_string());
                let style = if s.storm {
                    Style::new().fg(Color::Red)
                } else {
                    Style::new().fg(Color::Blue)
                };
                Line::from(vec![
                    Span::raw(format!("{} p{:<3} ", s.src_mac, prio)),
                    Span::styled(bar.into_iter().collect::<String>(), style),
                    Span::raw(format!(" {:>5.1}%", s.fraction * 100.0)),
                ])
            })
            .collect()
    };
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .title(format!(" PFC timeline over {} ", human_ns(c.duration_ns))),
        ),
        top,
    );
    let header = Row::new([
        "start",
        "MAC",
        "prio",
        "duration",
        "ended by",
        "flows that sent meanwhile",
    ])
    .style(Style::new().add_modifier(Modifier::BOLD));
    let rows = pfc.intervals.iter().map(|iv| {
        let flows: Vec<String> = iv.flows.iter().map(|i| format!("#{}", i + 1)).collect();
        let style = if iv.storm {
            Style::new().fg(Color::Red)
        } else {
            Style::new()
        };
        Row::new([
            format!("+{}", human_ns(iv.start_ns.saturating_sub(c.first_ts_ns))),
            iv.src_mac.clone(),
            iv.priority.map_or("all".into(), |p| p.to_string()),
            human_ns(iv.duration_ns),
            iv.ended_by.as_str().to_string(),
            flows.join(" "),
        ])
        .style(style)
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(12),
            Constraint::Length(18),
            Constraint::Length(4),
            Constraint::Length(10),
            Constraint::Length(8),
            Constraint::Min(10),
        ],
    )
    .header(header)
    .block(
        Block::default()
            .borders(Borders::ALL)
            .title(" Pause intervals "),
    )
    .row_highlight_style(SELECTED);
    let mut state = TableState::default().with_selected(Some(app.pause_sel));
    f.render_stateful_widget(table, bottom, &mut state);
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

/// An NVMe-oF queue's I/Os: slowest first (or in command order).
fn ios(app: &App, f: &mut Frame, area: Rect, queue: usize) {
    let Some(l) = &app.ios else { return };
    let q = app.report.nvme.as_ref().and_then(|n| n.queues.get(queue));
    let title = format!(
        " NVMe-oF queue {} {} → {}: {} I/Os, {} ",
        q.and_then(|q| q.qid)
            .map_or("?".to_string(), |i| i.to_string()),
        q.map_or("", |q| q.host.as_str()),
        q.map_or("", |q| q.controller.as_str()),
        grouped(l.rows.len() as u64),
        if l.by_latency {
            "slowest first"
        } else {
            "in command order"
        }
    );
    let height = area.height.saturating_sub(3) as usize;
    let top = l.sel.saturating_sub(height.saturating_sub(1));
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{:>5} {:<12} {:>11} {:>9} {:>9} {:>7} {:>7}  {}",
            "CID", "command", "LBA", "bytes", "latency", "cmd", "cqe", "status"
        ),
        Style::new().add_modifier(Modifier::BOLD),
    ))];
    for (k, r) in l.rows.iter().enumerate().skip(top).take(height) {
        let failed = r.status.is_some_and(|s| s != "Successful Completion");
        let mut style = if failed {
            Style::new().fg(Color::Red)
        } else if r.response.is_none() {
            Style::new().fg(Color::Yellow)
        } else {
            Style::new()
        };
        if k == l.sel {
            style = style.patch(SELECTED);
        }
        let text = format!(
            "{:>5} {:<12} {:>11} {:>9} {:>9} {:>7} {:>7}  {}",
            r.cid,
            ellipsize(r.name, 12),
            r.lba.map_or("-".to_string(), |x| x.to_string()),
            crate::output::report::human_bytes(u64::from(r.bytes)),
            r.latency_ns.map_or("-".to_string(), human_ns),
            r.command + 1,
            r.response.map_or("-".to_string(), |p| (p + 1).to_string()),
            match r.status {
                Some("Successful Completion") => "ok",
                Some(s) => s,
                None => "never answered",
            },
        );
        lines.push(Line::from(Span::styled(text, style)));
    }
    f.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(title)),
        area,
    );
}

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
