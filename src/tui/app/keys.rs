//! Keys and the mouse: what each does in the view on top.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};

use super::open::sort_ios;
use super::{Action, App, Scope, View};
use crate::tui::index::NO_FLOW;

impl App {
    pub(super) fn move_sel(&mut self, delta: isize) {
        let step = |sel: usize, len: usize| -> usize {
            if len == 0 {
                return 0;
            }
            (sel as isize + delta).clamp(0, len as isize - 1) as usize
        };
        match self.view() {
            View::Flows => self.flow_sel = step(self.flow_sel, self.flow_rows.len()),
            View::Packets(_) => self.packet_sel = step(self.packet_sel, self.packet_list.len()),
            View::Detail => {
                if let Some(d) = self.detail.as_mut() {
                    if d.hex_focus {
                        let lines = d.frame.data.len().div_ceil(self.hex_bytes.max(1));
                        d.hex_scroll = step(d.hex_scroll, lines);
                    } else {
                        d.selected = step(d.selected, d.tree.len());
                    }
                }
            }
            View::Pauses => self.pause_sel = step(self.pause_sel, self.report.pfc.intervals.len()),
            View::Ios(_) => {
                if let Some(l) = self.ios.as_mut() {
                    l.sel = step(l.sel, l.rows.len());
                }
            }
            View::Verdict => {
                let last = self.verdict_lines.saturating_sub(self.page);
                self.verdict_top = step(self.verdict_top, last + 1);
            }
            View::Chart(_) | View::Timing(_) => {}
        }
    }

    pub(super) fn jump(&mut self, end: bool) {
        self.move_sel(if end { isize::MAX / 2 } else { isize::MIN / 2 });
    }

    pub(super) fn back(&mut self) -> Action {
        if self.stack.len() > 1 {
            self.stack.pop();
            if self.view() == View::Flows {
                self.packet_rows.clear();
            }
        }
        Action::None
    }

    pub fn handle_mouse(&mut self, m: MouseEvent) -> Action {
        match m.kind {
            MouseEventKind::ScrollDown => self.move_sel(3),
            MouseEventKind::ScrollUp => self.move_sel(-3),
            _ => {}
        }
        Action::None
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> Action {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Action::Quit;
        }
        if let Some(text) = self.editing.as_mut() {
            match key.code {
                KeyCode::Enter => {
                    let text = self.editing.take().unwrap_or_default();
                    if !text.trim().is_empty() {
                        self.last_filter.clone_from(&text);
                    }
                    self.apply_filter(text);
                }
                KeyCode::Esc => self.editing = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Up => text.clone_from(&self.last_filter),
                // Ctrl-U: the line cleared, as in a shell.
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => text.clear(),
                KeyCode::Char(c) => text.push(c),
                _ => {}
            }
            return Action::None;
        }
        if let Some(text) = self.saving.as_mut() {
            match key.code {
                KeyCode::Enter => {
                    let text = self.saving.take().unwrap_or_default();
                    self.write_listed(text.trim());
                }
                KeyCode::Esc => self.saving = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => text.clear(),
                KeyCode::Char(c) => text.push(c),
                _ => {}
            }
            return Action::None;
        }
        if self.help {
            if matches!(
                key.code,
                KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') | KeyCode::Backspace
            ) {
                self.help = false;
            }
            return Action::None;
        }
        self.status.clear();
        let page = self.page as isize;
        match key.code {
            KeyCode::Char('?') => self.help = true,
            KeyCode::Char('q') => {
                if self.stack.len() == 1 {
                    return Action::Quit;
                }
                return self.back();
            }
            KeyCode::Esc | KeyCode::Backspace => return self.back(),
            KeyCode::Down | KeyCode::Char('j') => self.move_sel(1),
            KeyCode::Up | KeyCode::Char('k') => self.move_sel(-1),
            KeyCode::PageDown => self.move_sel(page),
            KeyCode::PageUp => self.move_sel(-page),
            KeyCode::Char('g') | KeyCode::Home => self.jump(false),
            KeyCode::Char('G') | KeyCode::End => self.jump(true),
            KeyCode::Tab => match self.view() {
                View::Detail => {
                    if let Some(d) = self.detail.as_mut() {
                        d.hex_focus = !d.hex_focus;
                    }
                }
                View::Flows => self.stack.push(View::Pauses),
                View::Pauses => return self.back(),
                _ => {}
            },
            KeyCode::Left | KeyCode::Char('h') => {
                if let Some(d) = self.detail.as_mut() {
                    d.hex_focus = false;
                }
            }
            KeyCode::Right | KeyCode::Char('l') => {
                if let (View::Detail, Some(d)) = (self.view(), self.detail.as_mut()) {
                    d.hex_focus = true;
                } else if self.view() == View::Flows
                    && let Some(f) = self.selected_flow()
                {
                    self.open_packets(Scope::Flow(f));
                }
            }
            KeyCode::Enter => match self.view() {
                View::Flows => {
                    if let Some(f) = self.selected_flow() {
                        self.open_packets(Scope::Flow(f));
                    }
                }
                View::Packets(_) => self.open_detail(),
                View::Pauses if !self.report.pfc.intervals.is_empty() => {
                    self.open_packets(Scope::Pause(self.pause_sel))
                }
                View::Ios(_) => {
                    if let Some(sel) = self
                        .ios
                        .as_ref()
                        .filter(|l| !l.rows.is_empty())
                        .map(|l| l.sel)
                    {
                        self.open_packets(Scope::Io(sel))
                    }
                }
                _ => {}
            },
            KeyCode::Char('a') if self.view() == View::Flows => self.open_packets(Scope::All),
            KeyCode::Char('p') | KeyCode::Char('w') => {
                let flow = match self.view() {
                    View::Flows => self.selected_flow(),
                    View::Packets(Scope::Flow(f)) => Some(f),
                    View::Packets(_) => self
                        .packet_list
                        .get(self.packet_sel)
                        .and_then(|&p| self.index.flows.get(p as usize))
                        .filter(|&&f| f != NO_FLOW)
                        .map(|&f| f as usize),
                    _ => None,
                };
                match (flow, key.code) {
                    (Some(f), KeyCode::Char('p')) => self.open_chart(f),
                    (Some(f), _) => self.open_timing(f),
                    _ => {}
                }
            }
            KeyCode::Char('W') => {
                if let View::Packets(scope) = self.view() {
                    if self.packet_list.is_empty() {
                        self.status = "no frames listed to write".into();
                    } else {
                        self.saving = Some(self.capture_name(scope));
                    }
                }
            }
            KeyCode::Char('t') if self.view() != View::Pauses => self.stack.push(View::Pauses),
            KeyCode::Char('v') if self.view() == View::Verdict => return self.back(),
            KeyCode::Char('v') => {
                self.verdict_top = 0;
                self.stack.push(View::Verdict);
            }
            KeyCode::Char('n') if matches!(self.view(), View::Flows | View::Packets(_)) => {
                self.open_ios()
            }
            KeyCode::Char('s') if matches!(self.view(), View::Ios(_)) => {
                if let Some(l) = self.ios.as_mut() {
                    l.by_latency = !l.by_latency;
                    sort_ios(l);
                }
            }
            // A new filter each time (Enter on an empty one clears it).
            KeyCode::Char('/') if matches!(self.view(), View::Flows | View::Packets(_)) => {
                self.editing = Some(String::new());
            }
            KeyCode::Char('s') if self.view() == View::Flows => {
                self.sort = self.sort.next();
                self.rebuild_flow_rows();
            }
            KeyCode::Char('S') if self.view() == View::Flows => {
                self.reverse = !self.reverse;
                self.rebuild_flow_rows();
            }
            _ => {}
        }
        Action::None
    }
}
