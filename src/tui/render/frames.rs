//! A packet list and a frame's header tree with its bytes.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::output::report::grouped;
use crate::output::text::terminal_safe;
use crate::tui::app::{App, Scope};
use crate::units::human_ns;

use super::{
    SELECTED, TREE_MIN, block_title, elide_middle, hex_pane_width, row_style, width_of, with_marks,
};

pub(super) fn packets(app: &App, f: &mut Frame, area: Rect, scope: Scope) {
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

pub(super) fn detail(app: &App, f: &mut Frame, area: Rect) {
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
