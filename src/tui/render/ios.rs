//! An NVMe-oF queue's I/Os.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::output::report::grouped;
use crate::tui::app::App;
use crate::units::human_ns;

use super::SELECTED;
use super::flows::ellipsize;

/// An NVMe-oF queue's I/Os: slowest first (or in command order).
pub(super) fn ios(app: &App, f: &mut Frame, area: Rect, queue: usize) {
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
