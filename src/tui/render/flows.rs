//! The flows table and the verdict below it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState};

use crate::output::report::grouped;
use crate::output::text::terminal_safe;
use crate::tui::app::App;
use crate::units::human_ns;

use super::{SELECTED, block_title, elide_middle, fit, width_of};

/// A column of the flows table.
pub(super) struct Column {
    title: &'static str,
    width: u16,
    /// Lower shows first: columns drop from the highest when the terminal
    /// is too narrow for all of them.
    rank: u8,
}

/// The flows table's columns, in display order.
pub(super) const COLUMNS: [Column; 14] = [
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
pub(super) fn visible_columns(width: u16, width_of: impl Fn(usize) -> u16) -> Vec<usize> {
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
pub(super) fn ellipsize(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

pub(super) fn flows(app: &App, f: &mut Frame, area: Rect) {
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
pub(super) fn verdict_block(
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
pub(super) fn verdict(app: &App, f: &mut Frame, area: Rect) {
    let title = format!(
        " Verdict: {} ",
        crate::output::text::count(app.report.hints.len() as u64, "hint", "hints")
    );
    verdict_block(&app.report, f, area, &title, app.verdict_top);
}
