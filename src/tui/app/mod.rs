//! TUI state and key handling. No terminal here: `handle_key` changes
//! state (`keys`), opening the views it asks for (`open`), `prepare`
//! reads what the next frame shows, `render` draws it.

mod filter;
mod keys;
mod open;
mod write;

use super::index::{FrameIndex, NO_FLOW};
use crate::analysis::Marks;
use crate::analysis::report::{FlowReport, Report};
use crate::capture::{OwnedFrame, RandomAccess};
use crate::dissect::{DissectOptions, dissect};
use crate::output::packets::summary_line;
use crate::output::tree::TreeNode;

/// What the event loop should do after a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    None,
    Quit,
}

/// Which frames a packet list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every frame of the capture.
    All,
    /// The frames of one flow (its index in the report).
    Flow(usize),
    /// The frames captured during one pause interval (its index).
    Pause(usize),
    /// The frames of an NVMe-oF I/O's queue from its command to its
    /// response (its row in the I/O list).
    Io(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Flows,
    Packets(Scope),
    Detail,
    Chart(usize),
    /// Where the time went: round trips, completions, throughput.
    Timing(usize),
    Pauses,
    /// The I/Os of an NVMe-oF queue (its index in the report's `nvme`).
    Ios(usize),
    /// What the report's hints say (the text report's "Hints", the HTML
    /// page's "Verdict").
    Verdict,
}

/// One NVMe-oF I/O of the queue on screen, read from its capsules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoRow {
    pub cid: u16,
    pub name: &'static str,
    pub lba: Option<u64>,
    pub bytes: u32,
    pub latency_ns: Option<u64>,
    pub status: Option<&'static str>,
    /// Frame positions (0-based) of its command and its response.
    pub command: u32,
    pub response: Option<u32>,
}

/// The I/O list of one queue.
#[derive(Debug, Clone, Default)]
pub struct IoList {
    /// The queue's two flows (report indexes).
    pub flows: Vec<usize>,
    pub rows: Vec<IoRow>,
    /// Slowest first, else in command order (`s`).
    pub by_latency: bool,
    pub sel: usize,
}

/// What the flows table is sorted by (`s` moves to the next).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    Trouble,
    Number,
    Packets,
    Bytes,
    Retransmits,
    OutOfOrder,
    Missing,
    Naks,
    Ce,
    Cnps,
    Paused,
    Qp,
}

impl SortBy {
    pub const ALL: [SortBy; 12] = [
        SortBy::Trouble,
        SortBy::Number,
        SortBy::Packets,
        SortBy::Bytes,
        SortBy::Retransmits,
        SortBy::OutOfOrder,
        SortBy::Missing,
        SortBy::Naks,
        SortBy::Ce,
        SortBy::Cnps,
        SortBy::Paused,
        SortBy::Qp,
    ];

    /// Its name in the table's title (the column's header).
    pub const fn label(self) -> &'static str {
        match self {
            SortBy::Trouble => "trouble",
            SortBy::Number => "#",
            SortBy::Packets => "packets",
            SortBy::Bytes => "bytes",
            SortBy::Retransmits => "retx",
            SortBy::OutOfOrder => "ooo",
            SortBy::Missing => "miss",
            SortBy::Naks => "nak",
            SortBy::Ce => "ce",
            SortBy::Cnps => "cnp",
            SortBy::Paused => "paused",
            SortBy::Qp => "qp",
        }
    }

    fn next(self) -> SortBy {
        let at = SortBy::ALL.iter().position(|&s| s == self).unwrap_or(0);
        SortBy::ALL[(at + 1) % SortBy::ALL.len()]
    }
}

/// A packet row ready to draw.
#[derive(Debug, Clone)]
pub struct PacketRow {
    pub number: u64,
    pub text: String,
    /// What the analysis found in the frame (coloured and tagged).
    pub marks: Marks,
    /// A PFC or PAUSE frame.
    pub pause: bool,
}

/// The packet under the cursor, decoded for the detail view.
#[derive(Debug, Clone)]
pub struct Detail {
    pub frame: OwnedFrame,
    pub tree: Vec<TreeNode>,
    pub selected: usize,
    /// Focus on the hex pane (Tab switches).
    pub hex_focus: bool,
    pub hex_scroll: usize,
}

/// PSN against time for one flow.
#[derive(Debug, Clone, Default)]
pub struct ChartData {
    pub flow: usize,
    /// (seconds since capture start, unwrapped PSN) by kind.
    pub normal: Vec<(f64, f64)>,
    pub retransmit: Vec<(f64, f64)>,
    pub out_of_order: Vec<(f64, f64)>,
    pub gap: Vec<(f64, f64)>,
    pub sampled: bool,
}

/// One flow's timing: the samples its answers gave and its throughput.
#[derive(Debug, Clone, Default)]
pub struct TimingData {
    pub flow: usize,
    pub rtt: Vec<u64>,
    pub completion: Vec<u64>,
    /// (seconds since capture start, Gb/s) per bin: first sends, replays.
    pub first_sends: Vec<(f64, f64)>,
    pub replays: Vec<(f64, f64)>,
    pub bin_ns: u64,
}

/// Up to `rows` buckets of `samples`, spaced evenly on a log scale from
/// the smallest to the largest: (upper bound, count).
pub fn histogram(samples: &[u64], rows: usize) -> Vec<(u64, u64)> {
    let (Some(&lo), Some(&hi)) = (samples.iter().min(), samples.iter().max()) else {
        return Vec::new();
    };
    let rows = rows.max(1);
    let (l, h) = ((lo.max(1) as f64).ln(), (hi.max(1) as f64).ln());
    let n = if hi == lo { 1 } else { rows };
    let bounds: Vec<u64> = (1..=n)
        .map(|i| {
            if i == n {
                hi
            } else {
                (l + (h - l) * i as f64 / n as f64).exp().round() as u64
            }
        })
        .collect();
    let mut out: Vec<(u64, u64)> = bounds.iter().map(|&b| (b, 0)).collect();
    for &v in samples {
        let i = bounds.partition_point(|&b| b < v).min(n - 1);
        out[i].1 += 1;
    }
    out
}

/// A display filter applied in the TUI: the frames it matches (by
/// position) and the flows with at least one of them.
pub struct DisplayFilter {
    pub filter: crate::filter::Filter,
    pub frames: Vec<bool>,
    pub flows: Vec<bool>,
    pub matched: u64,
}

pub struct App {
    pub title: String,
    pub report: Report,
    pub index: FrameIndex,
    access: Option<RandomAccess>,
    pub dissect_opts: DissectOptions,
    /// Turns pause quanta into time in the packet views.
    pub link_speed: crate::analysis::LinkSpeed,
    pub stack: Vec<View>,
    pub help: bool,
    /// Typing a filter (`/`).
    pub editing: Option<String>,
    /// Typing the name of a capture file to write the listed frames to
    /// (`W` in a packet list).
    pub saving: Option<String>,
    /// The captures read (refused as names to write to), and the
    /// resolution of their timestamps (a copy keeps it).
    pub reading: Vec<std::path::PathBuf>,
    pub ts_resolution_ns: u64,
    /// The last filter entered, applied or refused (`↑` while typing
    /// brings it back, to mend or extend).
    pub last_filter: String,
    /// The `/` text when it is a plain search (addresses, QPs).
    pub filter: String,
    /// The `/` text when it is a display filter, and what it matched.
    pub display: Option<DisplayFilter>,
    pub sort: SortBy,
    pub reverse: bool,
    /// Rows of the flows table: report flow indexes, peers after their flow.
    pub flow_rows: Vec<usize>,
    pub flow_sel: usize,
    pub paused_ns: Vec<u64>,
    /// Each flow's other direction (an index into the report's flows).
    pub peers: Vec<Option<usize>>,
    /// Characters of the widest flow's addresses (`└ src → dst`): the
    /// flows table's address column is no wider on a large terminal.
    pub name_width: usize,
    /// Frame positions (0-based) of the current packet list.
    pub packet_list: Vec<u32>,
    /// The frames of the list's scope before the display filter took
    /// those it does not match.
    pub packet_scope_len: usize,
    pub packet_sel: usize,
    pub packet_top: usize,
    /// Rows visible in the packet list, read on demand by `prepare`.
    pub packet_rows: Vec<PacketRow>,
    pub detail: Option<Detail>,
    pub chart: Option<ChartData>,
    pub timing: Option<TimingData>,
    pub ios: Option<IoList>,
    pub pause_sel: usize,
    /// The first line of the verdict on screen, and its lines at the last
    /// draw's width.
    pub verdict_top: usize,
    pub verdict_lines: usize,
    pub status: String,
    /// Height of the list area at the last draw.
    pub page: usize,
    /// Bytes per row of the hex pane at the last draw (16, or 8 when the
    /// terminal is narrow).
    pub hex_bytes: usize,
    /// The first row of the flows table on screen: only the rows shown are
    /// built at each draw (a capture can have a million flows).
    pub flow_top: usize,
}

impl App {
    pub fn new(
        title: String,
        report: Report,
        index: FrameIndex,
        access: Option<RandomAccess>,
    ) -> Self {
        let mut paused_ns = vec![0u64; report.flows.len()];
        for iv in &report.pfc.intervals {
            for &f in &iv.flows {
                if let Some(p) = paused_ns.get_mut(f) {
                    *p += iv.duration_ns;
                }
            }
        }
        let peers = report.peer_indexes();
        let name_width = report
            .flows
            .iter()
            .map(|fl| format!("└ {} → {}", fl.src, fl.dst).chars().count())
            .max()
            .unwrap_or(0);
        let mut app = App {
            title,
            report,
            index,
            access,
            dissect_opts: DissectOptions::default(),
            link_speed: Default::default(),
            stack: vec![View::Flows],
            help: false,
            editing: None,
            saving: None,
            reading: Vec::new(),
            ts_resolution_ns: 1,
            last_filter: String::new(),
            filter: String::new(),
            display: None,
            sort: SortBy::Trouble,
            reverse: false,
            flow_rows: Vec::new(),
            flow_sel: 0,
            paused_ns,
            peers,
            name_width,
            packet_list: Vec::new(),
            packet_scope_len: 0,
            packet_sel: 0,
            packet_top: 0,
            packet_rows: Vec::new(),
            detail: None,
            chart: None,
            timing: None,
            ios: None,
            pause_sel: 0,
            verdict_top: 0,
            verdict_lines: 0,
            status: String::new(),
            page: 20,
            hex_bytes: 16,
            flow_top: 0,
        };
        app.rebuild_flow_rows();
        app
    }

    pub fn view(&self) -> View {
        self.stack.last().copied().unwrap_or(View::Flows)
    }

    /// The figure flow `i` is sorted by (most first).
    fn sort_key(&self, i: usize) -> u64 {
        let f = &self.report.flows[i];
        match self.sort {
            SortBy::Trouble => f.trouble(),
            SortBy::Number => u64::MAX - i as u64,
            SortBy::Packets => f.packets,
            SortBy::Bytes => f.bytes,
            SortBy::Retransmits => f.retransmits,
            SortBy::OutOfOrder => f.out_of_order,
            SortBy::Missing => f.missing,
            SortBy::Naks => f.naks.total(),
            SortBy::Ce => f.ecn_ce,
            SortBy::Cnps => f.cnps,
            SortBy::Paused => self.paused_ns[i],
            SortBy::Qp => u64::from(f.destqp),
        }
    }

    /// Whether a flow matches the filter: every word is part of its
    /// addresses, or is its QP (`0x4005`, `0x004005` and `16389` alike).
    fn matches(&self, i: usize, f: &FlowReport) -> bool {
        if let Some(d) = &self.display {
            return d.flows.get(i).copied().unwrap_or(false);
        }
        if self.filter.is_empty() {
            return true;
        }
        let hay = format!("{} {}", f.src, f.dst).to_lowercase();
        self.filter.to_lowercase().split_whitespace().all(|w| {
            let qp = match w.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16).ok(),
                None => w.parse::<u32>().ok(),
            };
            qp == Some(f.destqp) || hay.contains(w)
        })
    }

    /// Orders the flows table: connections stay together, sorted by the
    /// column chosen (most first), trouble first by default.
    pub fn rebuild_flow_rows(&mut self) {
        let n = self.report.flows.len();
        let mut seen = vec![false; n];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in 0..n {
            if seen[i] {
                continue;
            }
            seen[i] = true;
            let mut g = vec![i];
            if let Some(j) = self.peers[i]
                && !seen[j]
            {
                seen[j] = true;
                g.push(j);
            }
            if g.iter().any(|&x| self.matches(x, &self.report.flows[x])) {
                groups.push(g);
            }
        }
        if self.sort != SortBy::Trouble || self.reverse {
            // Each group's key once (a figure, then the report's order):
            // sorting 100 000 connections by comparing formatted addresses
            // took a second a key.
            let reverse = self.reverse;
            groups.sort_by_cached_key(|g| {
                let k = g.iter().map(|&x| self.sort_key(x)).max().unwrap_or(0);
                let first = g.iter().copied().min().unwrap_or(0);
                if reverse {
                    (k, usize::MAX - first)
                } else {
                    (u64::MAX - k, first)
                }
            });
        }
        self.flow_rows = groups.into_iter().flatten().collect();
        self.flow_sel = self.flow_sel.min(self.flow_rows.len().saturating_sub(1));
    }

    pub fn selected_flow(&self) -> Option<usize> {
        self.flow_rows.get(self.flow_sel).copied()
    }

    fn open_packets(&mut self, scope: Scope) {
        self.packet_list = self.scope_positions(scope);
        self.packet_sel = 0;
        self.packet_top = 0;
        self.packet_rows.clear();
        self.stack.push(View::Packets(scope));
        self.say_list_matches();
    }

    /// The positions (0-based) of flow `flow`'s frames, in capture order.
    fn flow_positions(&self, flow: usize) -> Vec<u32> {
        self.index
            .flows
            .iter()
            .enumerate()
            .filter(|(_, x)| **x == flow as u32)
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// The frames a packet list of `scope` shows (positions, 0-based):
    /// those the display filter matches, when one is applied.
    fn scope_positions(&mut self, scope: Scope) -> Vec<u32> {
        let mut list: Vec<u32> = match scope {
            Scope::Flow(f) => self.flow_positions(f),
            Scope::All => (0..self.index.len() as u32).collect(),
            Scope::Io(i) => match &self.ios {
                Some(l) if i < l.rows.len() => {
                    let io = &l.rows[i];
                    let last = io.response.unwrap_or(self.index.len() as u32 - 1);
                    (io.command..=last)
                        .filter(|&p| {
                            let f = self.index.flows.get(p as usize).copied().unwrap_or(NO_FLOW);
                            l.flows.iter().any(|&q| q as u32 == f)
                        })
                        .collect()
                }
                _ => Vec::new(),
            },
            Scope::Pause(i) => match self.report.pfc.intervals.get(i) {
                Some(iv) => {
                    // From the frame that paused to the last one before the
                    // pause ended (its XON, or its expiry).
                    let end = iv.end_ns;
                    let first = (iv.start_frame.saturating_sub(1)) as u32;
                    let last = match iv.end_frame {
                        Some(x) => x.saturating_sub(1) as u32,
                        None => self.last_frame_before(first, end),
                    };
                    (first..=last.max(first)).collect()
                }
                None => Vec::new(),
            },
        };
        self.packet_scope_len = list.len();
        if let Some(d) = &self.display {
            list.retain(|&p| d.frames.get(p as usize).copied().unwrap_or(false));
        }
        list
    }

    /// Lists the packet list on screen again (after a filter changed what
    /// it matches), its selection on the frame selected before or, when
    /// that one is gone, the first listed after it.
    fn relist_packets(&mut self) {
        let View::Packets(scope) = self.view() else {
            return;
        };
        let was = self.packet_list.get(self.packet_sel).copied().unwrap_or(0);
        self.packet_list = self.scope_positions(scope);
        self.packet_sel = self
            .packet_list
            .partition_point(|&p| p < was)
            .min(self.packet_list.len().saturating_sub(1));
        // The selection shown about where it was on screen.
        self.packet_top = self.packet_sel.saturating_sub(self.page / 2);
        self.packet_rows.clear();
    }

    /// The position of the last frame from `from` on captured at or before
    /// `ts`: a binary search that reads a frame per step, so no timestamp
    /// is kept per frame (captures are in time order but for jitter).
    fn last_frame_before(&mut self, from: u32, ts: u64) -> u32 {
        let (mut lo, mut hi) = (from, self.index.len() as u32);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match self.read(mid) {
                Some(f) if f.meta.ts_ns <= ts => lo = mid,
                Some(_) => hi = mid,
                None => break,
            }
        }
        lo
    }

    /// Frame `pos` (0-based), read again from the file.
    pub fn read(&mut self, pos: u32) -> Option<OwnedFrame> {
        let offset = *self.index.offsets.get(pos as usize)?;
        let access = self.access.as_mut()?;
        match access.read(offset, u64::from(pos) + 1) {
            Ok(f) => Some(f),
            Err(e) => {
                self.status = format!("cannot read frame {}: {e}", pos + 1);
                None
            }
        }
    }

    /// Loads the visible packet rows from the capture, for a screen of
    /// `size`.
    pub fn prepare(&mut self, size: ratatui::layout::Rect) {
        self.page = super::render::list_height(size).max(1);
        self.hex_bytes = super::render::hex_row_bytes(size.width);
        if self.view() == View::Verdict {
            self.verdict_lines = super::render::verdict_text(&self.report, size.width).len();
            self.verdict_top = self
                .verdict_top
                .min(self.verdict_lines.saturating_sub(self.page));
        }
        if self.flow_sel < self.flow_top {
            self.flow_top = self.flow_sel;
        } else if self.flow_sel >= self.flow_top + self.page {
            self.flow_top = self.flow_sel + 1 - self.page;
        }
        if !matches!(self.view(), View::Packets(_)) {
            return;
        }
        if self.packet_sel < self.packet_top {
            self.packet_top = self.packet_sel;
        } else if self.packet_sel >= self.packet_top + self.page {
            self.packet_top = self.packet_sel + 1 - self.page;
        }
        let want: Vec<u32> = self
            .packet_list
            .iter()
            .skip(self.packet_top)
            .take(self.page)
            .copied()
            .collect();
        if self
            .packet_rows
            .iter()
            .map(|r| (r.number - 1) as u32)
            .eq(want.iter().copied())
        {
            return;
        }
        let t0 = self.index.first_ts_ns;
        let mut rows = Vec::with_capacity(want.len());
        for pos in want {
            let Some(frame) = self.read(pos) else { break };
            let f = frame.as_frame();
            let p = dissect(&f, &self.dissect_opts);
            let marks = self
                .index
                .marks
                .get(pos as usize)
                .copied()
                .unwrap_or_default();
            let bps = self.link_speed.bps(p.if_speed);
            let mut text = summary_line(&p, t0, 9, bps, self.index.tcp.get(&pos));
            crate::output::packets::push_nvme(&mut text, &p, self.index.nvme.get(&pos).copied());
            rows.push(PacketRow {
                number: f.number,
                text,
                marks,
                pause: p.pause.is_some(),
            });
        }
        self.packet_rows = rows;
    }
}
