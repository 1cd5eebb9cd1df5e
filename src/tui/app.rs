//! TUI state and key handling. No terminal here: `handle_key` changes
//! state, `prepare` reads what the next frame shows, `render` draws it.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};

use super::index::{FrameIndex, NO_FLOW};
use crate::analysis::report::{FlowReport, Report};
use crate::analysis::{Mark, Marks};
use crate::capture::{OwnedFrame, RandomAccess};
use crate::dissect::{DissectOptions, dissect};
use crate::output::packets::summary_line;
use crate::output::tree::{TreeNode, header_tree};

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

/// Whether `/`'s text is meant as a display filter rather than words to
/// look for in addresses: it has an operator, or its first word is a field.
fn looks_like_filter(text: &str) -> bool {
    text.contains(['=', '<', '>', '!', '&', '|', '(', '[', '{', '~', '^'])
        || text.split_whitespace().next().is_some_and(|w| {
            crate::fields::lookup(w).is_some()
                || ["not", "any", "all"]
                    .iter()
                    .any(|k| w.eq_ignore_ascii_case(k))
        })
}

/// What `/` says of words typed in a frame list, which takes display
/// filters only: the filter meant, when the first word is an address or a
/// QP.
fn words_in_a_list(text: &str) -> String {
    let w = text.split_whitespace().next().unwrap_or_default();
    let field = if w.parse::<std::net::Ipv4Addr>().is_ok() {
        Some("ip.addr")
    } else if w.parse::<std::net::Ipv6Addr>().is_ok() {
        Some("ipv6.addr")
    } else if w.strip_prefix("0x").map_or_else(
        || w.parse::<u32>().is_ok(),
        |h| u32::from_str_radix(h, 16).is_ok(),
    ) {
        Some("bth.destqp")
    } else {
        None
    };
    match field {
        Some(f) => {
            format!("\"{text}\" is not a display filter; a frame list takes one: {f} == {w}")
        }
        None => format!(
            "\"{text}\" is not a display filter; a frame list takes one (words search the flows table)"
        ),
    }
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
    }

    /// The frames a packet list of `scope` shows (positions, 0-based):
    /// those the display filter matches, when one is applied.
    fn scope_positions(&mut self, scope: Scope) -> Vec<u32> {
        let mut list: Vec<u32> = match scope {
            Scope::Flow(f) => self
                .index
                .flows
                .iter()
                .enumerate()
                .filter(|(_, x)| **x == f as u32)
                .map(|(i, _)| i as u32)
                .collect(),
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

    /// Starts with a display filter applied (`tui -Y FILTER`), as if it
    /// had been typed after `/` (`↑` in the filter bar brings it back).
    pub fn start_with_filter(&mut self, text: &str) {
        self.last_filter = text.to_string();
        self.apply_filter(text.to_string());
    }

    /// Applies what was typed after `/`: a display filter (every frame read
    /// again and tested, with what the analysis found in it), or words to
    /// look for in the flows' addresses and QPs; empty clears both.
    fn apply_filter(&mut self, mut text: String) {
        self.flow_sel = 0;
        // Spaces at the end mean nothing (and would show in the title).
        text.truncate(text.trim_end().len());
        // A frame list takes display filters only (words would search the
        // flows table, which is not on screen): the parser says what is
        // wrong with words there.
        let in_list = matches!(self.view(), View::Packets(_));
        if text.trim().is_empty() || (!in_list && !looks_like_filter(&text)) {
            self.display = None;
            self.filter = text;
            self.rebuild_flow_rows();
            self.relist_packets();
            return;
        }
        let filter = match crate::filter::Filter::parse(&text) {
            Ok(f) => f,
            Err(_) if in_list && !looks_like_filter(&text) => {
                self.status = words_in_a_list(&text);
                return;
            }
            Err(e) => {
                self.status = format!("display filter: {e}");
                return;
            }
        };
        let n = self.index.len();
        let mut frames = vec![false; n];
        let mut flows = vec![false; self.report.flows.len()];
        let mut matched = 0u64;
        let (mut first, mut prev) = (self.index.first_ts_ns, self.index.first_ts_ns);
        for pos in 0..n as u32 {
            let Some(frame) = self.read(pos) else {
                break;
            };
            let f = frame.as_frame();
            let p = dissect(&f, &self.dissect_opts);
            if pos == 0 {
                first = p.ts_ns;
                prev = p.ts_ns;
            }
            let flow = self
                .index
                .flows
                .get(pos as usize)
                .copied()
                .unwrap_or(NO_FLOW);
            let found = crate::analysis::FrameAnalysis {
                flow,
                marks: self
                    .index
                    .marks
                    .get(pos as usize)
                    .copied()
                    .unwrap_or_default(),
                missing: self.index.counts.get(&pos).map_or(0, |c| c.0),
                episode: self.index.counts.get(&pos).map_or(0, |c| c.1),
                ack_rtt_ns: self.index.timing.get(&pos).and_then(|t| t.0),
                completion_ns: self.index.timing.get(&pos).and_then(|t| t.1),
                nvme: self.index.nvme.get(&pos).copied(),
            };
            let ctx = crate::fields::Ctx {
                pkt: &p,
                analysis: Some(&found),
                tcp: self.index.tcp.get(&pos),
                flow_number: (flow != NO_FLOW).then_some(u64::from(flow) + 1),
                first_ts_ns: first,
                prev_ts_ns: prev,
                link: self.link_speed,
            };
            prev = p.ts_ns;
            if filter.matches(&ctx) {
                frames[pos as usize] = true;
                matched += 1;
                if let Some(x) = flows.get_mut(flow as usize) {
                    *x = true;
                }
            }
        }
        // The count first: a long filter gives way on a narrow terminal.
        self.status = format!(
            "{} of {} frames match display filter {}",
            crate::output::report::grouped(matched),
            crate::output::report::grouped(n as u64),
            filter.text(),
        );
        self.filter.clear();
        self.display = Some(DisplayFilter {
            filter,
            frames,
            flows,
            matched,
        });
        self.rebuild_flow_rows();
        self.relist_packets();
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

    /// A name for a capture of the frames of `scope`: the capture's, with
    /// what they are (`mixed-flow4.pcapng`), beside it.
    fn capture_name(&self, scope: Scope) -> String {
        let stem = self
            .reading
            .first()
            .filter(|_| self.reading.len() == 1)
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .map(|n| {
                let n = crate::capture::compress::Compression::strip_suffix(&n);
                [".pcapng", ".pcap", ".cap"]
                    .iter()
                    .find_map(|e| n.strip_suffix(e))
                    .unwrap_or(n)
                    .to_string()
            })
            .filter(|n| !n.is_empty() && n != "-")
            .unwrap_or_else(|| "capture".to_string());
        let what = match scope {
            Scope::All if self.display.is_some() => "filtered".to_string(),
            Scope::All => "frames".to_string(),
            Scope::Flow(f) => format!("flow{}", f + 1),
            Scope::Pause(i) => format!("pause{}", i + 1),
            Scope::Io(i) => format!("io{}", i + 1),
        };
        format!("{stem}-{what}.pcapng")
    }

    /// Writes the frames of the packet list to the capture file `name`
    /// (pcapng, or as its name says: `.pcap`, `.gz`...); says how it went
    /// on the status line.
    fn write_listed(&mut self, name: &str) {
        if name.is_empty() {
            self.status = "no file named: nothing written".into();
            return;
        }
        let path = std::path::Path::new(name);
        let shown = crate::output::text::terminal_safe(name);
        let mut out = match crate::cli::capture_out::CaptureOut::create(
            path,
            None,
            self.ts_resolution_ns,
            &self.reading,
        ) {
            Ok(o) => o,
            Err(e) => {
                self.status = format!("not written: {e}");
                return;
            }
        };
        let list = std::mem::take(&mut self.packet_list);
        let mut failed = None;
        for &pos in &list {
            let Some(f) = self.read(pos) else {
                failed = Some(std::mem::take(&mut self.status));
                break;
            };
            if let Err(e) = out.write_record(
                f.meta.ts_ns,
                &f.data,
                f.meta.len,
                f.meta.link,
                f.meta.if_speed,
            ) {
                failed = Some(e.to_string());
                break;
            }
        }
        self.packet_list = list;
        self.status = match failed {
            // The file being written goes with `out`.
            Some(why) => format!("not written: {why}"),
            None => match out.finish() {
                Ok(n) => format!(
                    "{} written to {shown}",
                    crate::output::text::count(n, "frame", "frames")
                ),
                Err(e) => format!("not written: {e}"),
            },
        };
    }

    fn open_detail(&mut self) {
        let Some(&pos) = self.packet_list.get(self.packet_sel) else {
            return;
        };
        let Some(frame) = self.read(pos) else {
            return;
        };
        let tree = {
            let f = frame.as_frame();
            let p = dissect(&f, &self.dissect_opts);
            let mut nodes = header_tree(
                &p,
                self.link_speed.bps(p.if_speed),
                self.index.tcp.get(&pos),
            );
            if let Some(&role) = self.index.nvme.get(&pos) {
                nodes.extend(crate::output::tree::nvme_tree(&p, role));
            }
            nodes
        };
        let selected = tree
            .iter()
            .position(|n| n.text.starts_with("Base Transport Header"))
            .unwrap_or(0);
        self.detail = Some(Detail {
            frame,
            tree,
            selected,
            hex_focus: false,
            hex_scroll: 0,
        });
        self.stack.push(View::Detail);
    }

    fn open_timing(&mut self, flow: usize) {
        let mut data = TimingData {
            flow,
            ..TimingData::default()
        };
        // The samples ride on the answers: the frames of the other
        // direction.
        if let Some(peer) = self.peers.get(flow).copied().flatten() {
            for (&pos, &(rtt, done)) in &self.index.timing {
                if self.index.flows.get(pos as usize) == Some(&(peer as u32)) {
                    data.rtt.extend(rtt);
                    data.completion.extend(done);
                }
            }
        }
        let t0 = self.index.first_ts_ns;
        if let Some(tp) = self.report.flows[flow]
            .timing
            .as_ref()
            .and_then(|t| t.throughput.as_ref())
        {
            data.bin_ns = tp.bin_ns;
            let gbps = |bytes: u64| bytes as f64 * 8.0 / tp.bin_ns.max(1) as f64;
            for p in tp.series.iter().flatten() {
                let x = p.t_ns.saturating_sub(t0) as f64 / 1e9;
                data.first_sends.push((x, gbps(p.bytes - p.replayed_bytes)));
                data.replays.push((x, gbps(p.replayed_bytes)));
            }
        }
        self.timing = Some(data);
        self.stack.push(View::Timing(flow));
    }

    /// The I/O list of the NVMe-oF queue of the selected flow (else the
    /// first queue): its capsules read again, each command paired with
    /// its response by CID.
    fn open_ios(&mut self) {
        use crate::analysis::marks::NvmeRole;
        use crate::wire::nvme::{CqeRepr, QueueKind, SqeRepr};
        let Some(n) = &self.report.nvme else {
            self.status = "no NVMe-oF queues in this capture".into();
            return;
        };
        let flow = match self.view() {
            View::Packets(Scope::Flow(f)) => Some(f),
            _ => self.selected_flow(),
        };
        let flows_of = |q: &crate::analysis::nvme::QueueReport| {
            q.connection
                .and_then(|c| self.report.connections.get(c))
                .map_or(Vec::new(), |c| c.flows.to_vec())
        };
        let queue = flow
            .and_then(|f| n.queues.iter().position(|q| flows_of(q).contains(&f)))
            .unwrap_or(0);
        let Some(q) = n.queues.get(queue) else {
            return;
        };
        let flows = flows_of(q);
        if flows.is_empty() {
            self.status = "this queue's two flows were not paired".into();
            return;
        }
        let kind = QueueKind::of_qid(q.qid.unwrap_or(1));
        let mut capsules: Vec<(u32, NvmeRole)> = self
            .index
            .nvme
            .iter()
            .filter(|(_, r)| matches!(r, NvmeRole::Command { .. } | NvmeRole::Response { .. }))
            .filter(|(p, _)| {
                let f = self
                    .index
                    .flows
                    .get(**p as usize)
                    .copied()
                    .unwrap_or(NO_FLOW);
                flows.iter().any(|&x| x as u32 == f)
            })
            .map(|(&p, &r)| (p, r))
            .collect();
        capsules.sort_by_key(|c| c.0);
        let mut rows: Vec<IoRow> = Vec::new();
        let mut waiting: std::collections::HashMap<u16, usize> = Default::default();
        for (pos, role) in capsules {
            let Some(frame) = self.read(pos) else { break };
            let f = frame.as_frame();
            let p = dissect(&f, &self.dissect_opts);
            let payload = p.payload().unwrap_or_default();
            match role {
                NvmeRole::Command { .. } => {
                    let Ok(s) = SqeRepr::parse(payload) else {
                        continue;
                    };
                    waiting.insert(s.cid, rows.len());
                    rows.push(IoRow {
                        cid: s.cid,
                        name: s.name(kind),
                        lba: s.has_lba(kind).then(|| s.slba()),
                        bytes: s.sgl.length,
                        latency_ns: None,
                        status: None,
                        command: pos,
                        response: None,
                    });
                }
                NvmeRole::Response { latency_ns, .. } => {
                    let Ok(c) = CqeRepr::parse(payload) else {
                        continue;
                    };
                    if let Some(i) = waiting.remove(&c.cid) {
                        rows[i].latency_ns = latency_ns;
                        rows[i].status = Some(c.status_name());
                        rows[i].response = Some(pos);
                    }
                }
                NvmeRole::Data { .. } | NvmeRole::DataRequest { .. } | NvmeRole::Queue { .. } => {}
            }
        }
        let mut list = IoList {
            flows,
            rows,
            by_latency: true,
            sel: 0,
        };
        sort_ios(&mut list);
        self.ios = Some(list);
        self.stack.push(View::Ios(queue));
    }

    fn open_chart(&mut self, flow: usize) {
        const MAX_POINTS: usize = 20_000;
        let positions: Vec<u32> = self
            .index
            .flows
            .iter()
            .enumerate()
            .filter(|(_, x)| **x == flow as u32)
            .map(|(i, _)| i as u32)
            .collect();
        let stride = positions.len().div_ceil(MAX_POINTS).max(1);
        let mut data = ChartData {
            flow,
            sampled: stride > 1,
            ..ChartData::default()
        };
        let t0 = self.index.first_ts_ns;
        let mut base: Option<crate::wire::Psn> = None;
        let mut offset: i64 = 0;
        let mut last = crate::wire::Psn::default();
        for (k, &pos) in positions.iter().enumerate() {
            let marks = self
                .index
                .marks
                .get(pos as usize)
                .copied()
                .unwrap_or_default();
            let shown = marks.has(Mark::Retransmission)
                || marks.has(Mark::OutOfOrder)
                || marks.has(Mark::Gap);
            if k % stride != 0 && !shown {
                continue;
            }
            let Some(frame) = self.read(pos) else { break };
            let p = dissect(&frame.as_frame(), &self.dissect_opts);
            let Some(bth) = p.bth else { continue };
            if p.is_cnp() {
                continue;
            }
            // Unwrap the 24-bit PSN relative to the first one.
            match base {
                None => {
                    base = Some(bth.psn);
                    last = bth.psn;
                }
                Some(_) => {
                    offset += i64::from(bth.psn - last);
                    last = bth.psn;
                }
            }
            let pt = (
                (frame.meta.ts_ns.saturating_sub(t0)) as f64 / 1e9,
                offset as f64,
            );
            if marks.has(Mark::Retransmission) {
                data.retransmit.push(pt);
            } else if marks.has(Mark::OutOfOrder) {
                data.out_of_order.push(pt);
            } else if marks.has(Mark::Gap) {
                data.gap.push(pt);
            } else {
                data.normal.push(pt);
            }
        }
        self.chart = Some(data);
        self.stack.push(View::Chart(flow));
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

    fn move_sel(&mut self, delta: isize) {
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

    fn jump(&mut self, end: bool) {
        self.move_sel(if end { isize::MAX / 2 } else { isize::MIN / 2 });
    }

    fn back(&mut self) -> Action {
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

/// Slowest first (unanswered first of all), else in command order.
fn sort_ios(l: &mut IoList) {
    if l.by_latency {
        l.rows.sort_by_key(|r| {
            (
                std::cmp::Reverse(r.latency_ns.unwrap_or(u64::MAX)),
                r.command,
            )
        });
    } else {
        l.rows.sort_by_key(|r| r.command);
    }
    l.sel = 0;
}
