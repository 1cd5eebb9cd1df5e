//! A flow's PSN chart and timing histograms, the PFC timeline.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Chart, Dataset, GraphType, LegendPosition, Paragraph, Row, Table,
    TableState,
};

use crate::output::report::grouped;
use crate::tui::app::App;
use crate::units::human_ns;

use super::{SELECTED, fit};

pub(super) fn chart(app: &App, f: &mut Frame, area: Rect, flow: usize) {
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
pub(super) fn duration_bars(f: &mut Frame, area: Rect, title: &str, samples: &[u64], color: Color) {
    use crate::units::human_ns;
    let block = Block::default().borders(Borders::ALL).title(format!(
        " {title} ({}) ",
        crate::output::text::count(samples.len() as u64, "sample", "samples")
    ));
    let rows = usize::from(area.height.saturating_sub(2)).clamp(1, 12);
    let buckets = crate::tui::app::histogram(samples, rows);
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
pub(super) fn timing(app: &App, f: &mut Frame, area: Rect, flow: usize) {
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

pub(super) fn pauses(app: &App, f: &mut Frame, area: Rect) {
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
