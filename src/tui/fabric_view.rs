//! `fabric --tui`: the pause graph drawn in the terminal. Devices sit on a
//! circle; an arrow X → Y is X's egress paused by Y (on a priority), red
//! when it is part of a deadlock. Beside it the edges (↑/↓ selects one,
//! which is drawn on top with its label), the deadlocks and the spreads.

use std::f64::consts::PI;
use std::io::{self, IsTerminal};
use std::time::Duration;

use ratatui::Frame;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Context, Line as Segment};
use ratatui::widgets::{Block, Borders, List, ListItem, ListState, Paragraph, Wrap};

use crate::fabric::FabricReport;
use crate::units::human_ns;

/// Edge labels drawn on the graph for every edge up to this many (else
/// the selected edge's only).
const LABEL_ALL_UP_TO: usize = 8;

/// The pause graph and the selected edge.
pub struct FabricView {
    pub report: FabricReport,
    pub selected: usize,
    /// Per edge: part of a deadlock's cycle.
    in_deadlock: Vec<bool>,
}

impl FabricView {
    pub fn new(report: FabricReport) -> Self {
        let in_deadlock = report
            .edges
            .iter()
            .map(|e| {
                report.deadlocks.iter().any(|d| {
                    d.priority == e.priority
                        && (0..d.devices.len()).any(|i| {
                            d.devices[i] == e.paused && d.devices[(i + 1) % d.devices.len()] == e.by
                        })
                })
            })
            .collect();
        FabricView {
            report,
            selected: 0,
            in_deadlock,
        }
    }

    /// Moves the selection or says to quit (`true`).
    pub fn handle_key(&mut self, k: KeyEvent) -> bool {
        let last = self.report.edges.len().saturating_sub(1);
        match k.code {
            KeyCode::Char('q') | KeyCode::Esc => return true,
            KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => return true,
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(10),
            KeyCode::PageDown => self.selected = (self.selected + 10).min(last),
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = last,
            _ => {}
        }
        false
    }

    pub fn render(&self, f: &mut Frame) {
        let area = f.area();
        let [body, help] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(area);
        let wide = body.width >= 100;
        let parts = Layout::default()
            .direction(if wide {
                Direction::Horizontal
            } else {
                Direction::Vertical
            })
            .constraints([Constraint::Percentage(55), Constraint::Percentage(45)])
            .split(body);
        self.graph(f, parts[0]);
        self.side(f, parts[1]);
        f.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled(" ↑↓", Style::new().add_modifier(Modifier::BOLD)),
                Span::raw(" select an edge  "),
                Span::styled("q", Style::new().add_modifier(Modifier::BOLD)),
                Span::raw(" quit   X → Y: X's egress paused by Y"),
            ])),
            help,
        );
    }

    /// Where each device sits: on a circle from the top, clockwise.
    fn positions(&self) -> Vec<(f64, f64)> {
        let n = self.report.devices.len();
        (0..n)
            .map(|i| {
                if n == 1 {
                    return (0.0, 0.0);
                }
                let a = 2.0 * PI * i as f64 / n as f64;
                (a.sin(), a.cos())
            })
            .collect()
    }

    fn graph(&self, f: &mut Frame, area: Rect) {
        let r = &self.report;
        let title = format!(
            " Pause graph: {}, {}, {} ",
            crate::output::text::count(r.devices.len() as u64, "device", "devices"),
            crate::output::text::count(r.edges.len() as u64, "edge", "edges"),
            match r.deadlocks.len() {
                0 => "no deadlock".to_string(),
                1 => "1 DEADLOCK".to_string(),
                n => format!("{n} DEADLOCKS"),
            }
        );
        let block = Block::default().borders(Borders::ALL).title(title);
        if r.edges.is_empty() {
            f.render_widget(
                Paragraph::new("No device paused another: nothing to draw.").block(block),
                area,
            );
            return;
        }
        // The circle fills the area (an ellipse on a wide one): names and
        // labels need the width more than the circle needs to be round.
        let pos = self.positions();
        // The devices' bounding box with a margin (a triangle has no bottom
        // half to draw).
        let span = |f: fn(&(f64, f64)) -> f64| {
            let lo = pos.iter().map(f).fold(f64::INFINITY, f64::min);
            let hi = pos.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
            [lo.min(0.0) - 0.35, hi.max(0.0) + 0.35]
        };
        let (xb, yb) = (span(|p| p.0), span(|p| p.1));
        let w = f64::from(area.width.saturating_sub(2).max(1));
        // Canvas units a cell wide.
        let cell = (xb[1] - xb[0]) / w;
        let index = |name: &str| r.devices.iter().position(|d| d == name);
        let canvas = Canvas::default()
            .block(block)
            .x_bounds(xb)
            .y_bounds(yb)
            .paint(|ctx| {
                let order = (0..r.edges.len())
                    .filter(|&i| i != self.selected)
                    .chain((self.selected < r.edges.len()).then_some(self.selected));
                for i in order {
                    let e = &r.edges[i];
                    let (Some(a), Some(b)) = (index(&e.paused), index(&e.by)) else {
                        continue;
                    };
                    if a == b {
                        continue;
                    }
                    // Both ways between two devices: each beside the other.
                    let both = r.edges.iter().any(|o| o.paused == e.by && o.by == e.paused);
                    let color = if i == self.selected {
                        Color::Yellow
                    } else if self.in_deadlock[i] {
                        Color::Red
                    } else {
                        Color::Cyan
                    };
                    let label =
                        (r.edges.len() <= LABEL_ALL_UP_TO || i == self.selected).then(|| {
                            format!(
                                "p{} {}",
                                e.priority.map_or("*".to_string(), |p| p.to_string()),
                                human_ns(e.paused_ns)
                            )
                        });
                    arrow(ctx, pos[a], pos[b], both, color, label, cell);
                }
                for (i, d) in r.devices.iter().enumerate() {
                    let (x, y) = pos[i];
                    let x = x - d.chars().count() as f64 * 0.5 * cell;
                    ctx.print(
                        x,
                        y,
                        Line::styled(d.clone(), Style::new().add_modifier(Modifier::BOLD)),
                    );
                }
            });
        f.render_widget(canvas, area);
    }

    fn side(&self, f: &mut Frame, area: Rect) {
        let r = &self.report;
        // Deadlocks (or none), one more line past 4, the spreads, the
        // selected edge's captures.
        let lines_below =
            2 + r.deadlocks.len().clamp(1, 4) as u16 + u16::from(r.deadlocks.len() > 4);
        let [list_area, info] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(lines_below + 2)]).areas(area);
        let items: Vec<ListItem> = r
            .edges
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let style = if self.in_deadlock[i] {
                    Style::new().fg(Color::Red)
                } else {
                    Style::new()
                };
                ListItem::new(Line::styled(
                    format!(
                        "{} {} → {}  p{}  {}×  {}",
                        if self.in_deadlock[i] { "⚠" } else { " " },
                        e.paused,
                        e.by,
                        e.priority.map_or("*".to_string(), |p| p.to_string()),
                        e.pauses,
                        human_ns(e.paused_ns)
                    ),
                    style,
                ))
            })
            .collect();
        let mut state = ListState::default().with_selected(Some(self.selected));
        f.render_stateful_widget(
            List::new(items)
                .block(
                    Block::default()
                        .borders(Borders::ALL)
                        .title(" Edges (paused → by, priority, pauses, time paused) "),
                )
                .highlight_style(Style::new().add_modifier(Modifier::REVERSED)),
            list_area,
            &mut state,
        );
        let mut text: Vec<Line> = Vec::new();
        if r.deadlocks.is_empty() {
            text.push(Line::raw(format!(
                "No deadlock: no cycle paused at once for more than {}.",
                human_ns(r.threshold_ns)
            )));
        }
        for d in r.deadlocks.iter().take(4) {
            text.push(Line::styled(
                format!(
                    "DEADLOCK p{}: {} → {} for {}",
                    d.priority.map_or("*".to_string(), |p| p.to_string()),
                    d.devices.join(" → "),
                    d.devices.first().map_or("", String::as_str),
                    human_ns(d.end_ns.saturating_sub(d.start_ns))
                ),
                Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            ));
        }
        if r.deadlocks.len() > 4 {
            text.push(Line::raw(format!(
                "... {} more (--json lists them)",
                r.deadlocks.len() - 4
            )));
        }
        text.push(Line::raw(format!(
            "{} spread within {}.",
            crate::output::text::count(r.propagation_total, "pause", "pauses"),
            human_ns(r.threshold_ns)
        )));
        if let Some(e) = r.edges.get(self.selected) {
            text.push(Line::raw(format!("Seen in: {}", e.links.join(", "))));
        }
        f.render_widget(
            Paragraph::new(text)
                .wrap(Wrap { trim: true })
                .block(Block::default().borders(Borders::ALL).title(" Fabric ")),
            info,
        );
    }
}

/// A line from `a` towards `b`, stopping short of both names, with an
/// arrowhead at `b`; `beside`: shifted to one side (the edge back is on
/// the other).
fn arrow(
    ctx: &mut Context,
    a: (f64, f64),
    b: (f64, f64),
    beside: bool,
    color: Color,
    label: Option<String>,
    cell: f64,
) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt().max(1e-9);
    let (ux, uy) = (dx / len, dy / len);
    let (px, py) = if beside {
        (-uy * 0.06, ux * 0.06)
    } else {
        (0.0, 0.0)
    };
    let short = 0.18f64.min(len / 3.0);
    let from = (a.0 + ux * short + px, a.1 + uy * short + py);
    let to = (b.0 - ux * short + px, b.1 - uy * short + py);
    ctx.draw(&Segment::new(from.0, from.1, to.0, to.1, color));
    for side in [-1.0, 1.0] {
        let (c, s) = ((0.45f64).cos(), side * (0.45f64).sin());
        let (hx, hy) = (-(ux * c - uy * s), -(ux * s + uy * c));
        ctx.draw(&Segment::new(
            to.0,
            to.1,
            to.0 + hx * 0.1,
            to.1 + hy * 0.1,
            color,
        ));
    }
    if let Some(l) = label {
        let (mx, my) = ((from.0 + to.0) / 2.0 + px, (from.1 + to.1) / 2.0 + py);
        let mx = mx - l.chars().count() as f64 * 0.5 * cell;
        ctx.print(mx, my, Line::styled(l, Style::new().fg(color)));
    }
}

/// Why `fabric --tui` cannot draw.
pub const NOT_A_TERMINAL: &str =
    "--tui draws on a terminal and standard output is not one; drop --tui for text or use --json";

/// `fabric --tui` on the real terminal.
pub fn run(report: FabricReport) -> Result<(), crate::cli::RunError> {
    if !io::stdout().is_terminal() {
        return Err(crate::cli::RunError::Usage(NOT_A_TERMINAL.into()));
    }
    let mut view = FabricView::new(report);
    let mut terminal = super::terminal()?;
    let bail_if_signalled = super::signal_watch();
    let result = (|| -> io::Result<()> {
        loop {
            terminal.draw(|f| view.render(f))?;
            bail_if_signalled();
            if !event::poll(Duration::from_millis(250))? {
                continue;
            }
            if let Event::Key(k) = event::read()?
                && k.kind != KeyEventKind::Release
                && view.handle_key(k)
            {
                return Ok(());
            }
        }
    })();
    ratatui::restore();
    result.map_err(crate::cli::RunError::Io)
}
