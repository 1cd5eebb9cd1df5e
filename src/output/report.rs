//! The analysis report as text: summary line, flows table (connections
//! together, most trouble first), episodes, PFC, capture quality, hints.

use std::fmt::Write as _;

use super::text::{count, shell_quote, terminal_safe};
use crate::analysis::report::{FlowReport, Report, Trigger};
pub use crate::units::grouped;
use crate::units::human_ns;

/// ANSI styling, off when not on a terminal or when `NO_COLOR` is set.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
}

fn secs(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}

/// Options for the text report.
#[derive(Debug, Clone, Copy)]
pub struct TextOptions {
    pub style: Style,
    /// List each flow's events.
    pub events: bool,
    /// Every flow, not only the [`MAX_FLOW_ROWS`] with most trouble.
    pub all: bool,
    /// The columns to fit (a terminal's), or `None`: lines as long as
    /// they need, as a pipe or a file gets them.
    pub width: Option<usize>,
}

/// Rows of the flows table (and flows whose events are listed) unless
/// `--all`: the text report stays short on a capture of a million flows.
pub const MAX_FLOW_ROWS: usize = 50;
/// Rows of the timing table unless `--all`.
pub const MAX_TIMING_ROWS: usize = 20;
/// Rows of the TCP conversations unless `--all` (the RoCE comes first).
pub const MAX_TCP_ROWS: usize = 10;

/// Puts the `shown` rows that sort first in their order at the front (the
/// rest after them in no order): a table of the top rows of thousands
/// sorts only those. Each row's key is taken once, beside it (read through
/// a reference at every comparison, thousands of them missed the cache);
/// the keys end with the flow's number, so no two are equal.
fn top_rows<K: Ord + Copy, T>(rows: &mut [(K, T)], shown: usize) {
    if shown == 0 {
        return;
    }
    if rows.len() > shown {
        rows.select_nth_unstable_by_key(shown - 1, |r| r.0);
        rows[..shown].sort_unstable_by_key(|r| r.0);
    } else {
        rows.sort_unstable_by_key(|r| r.0);
    }
}

/// The flows with timing, slowest first (by message completion p99, then
/// round trip p99), numbered as in the flows table.
fn timing_section(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    use crate::units::human_ns;
    let p99 = |x: &Option<crate::analysis::timing::Stats>| x.map_or(0, |s| s.p99_ns);
    let mut rows: Vec<(_, &crate::analysis::timing::TimingReport)> = r
        .flows
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.timing.as_deref().map(|t| (i, t)))
        .filter(|(_, t)| t.rtt.is_some() || t.messages.is_some() || t.acks.is_some())
        .map(|(i, t)| ((std::cmp::Reverse((p99(&t.completion), p99(&t.rtt))), i), t))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n{}",
        st.bold("Timing (slowest first; times from the capture point, README \"Timing\")")
    );
    let _ = writeln!(
        s,
        "  flow    msgs  RTT p50  RTT p99  done p50  done p99  READ p50  open  pkts/ACK"
    );
    let cell = |x: &Option<crate::analysis::timing::Stats>, p50: bool| match x {
        Some(st) => human_ns(if p50 { st.p50_ns } else { st.p99_ns }),
        None => "-".to_string(),
    };
    let shown = if o.all { usize::MAX } else { MAX_TIMING_ROWS };
    top_rows(&mut rows, shown);
    for ((_, i), t) in rows.iter().take(shown) {
        let _ = writeln!(
            s,
            "  #{:<5} {:>5} {:>8} {:>8} {:>9} {:>9} {:>9} {:>5} {:>9}",
            i + 1,
            grouped(t.messages.map_or(0, |m| m.count)),
            cell(&t.rtt, true),
            cell(&t.rtt, false),
            cell(&t.completion, true),
            cell(&t.completion, false),
            cell(&t.read_latency, true),
            grouped(t.incomplete),
            t.acks
                .map_or("-".to_string(), |a| format!("{:.1}", a.per_request_packets)),
        );
    }
    if rows.len() > shown {
        let _ = writeln!(s, "  ... {} more (--all lists them)", rows.len() - shown);
    }
    let _ = writeln!(
        s,
        "      done: a message's first packet to the ACK that covers it (a READ: to its last response) · open: not done by the end"
    );
}

/// Bits per second for people: `12.0 Gb/s`.
pub fn human_bps(bps: u64) -> String {
    let f = bps as f64;
    match bps {
        0..1_000 => format!("{bps} b/s"),
        1_000..1_000_000 => format!("{:.1} kb/s", f / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} Mb/s", f / 1e6),
        _ => format!("{:.1} Gb/s", f / 1e9),
    }
}

/// Bytes for people: `1.5 MiB`.
pub fn human_bytes(n: u64) -> String {
    let f = n as f64;
    match n {
        0..1024 => format!("{n} B"),
        1024..1_048_576 => format!("{:.1} KiB", f / 1024.0),
        1_048_576..1_073_741_824 => format!("{:.1} MiB", f / 1_048_576.0),
        _ => format!("{:.2} GiB", f / 1_073_741_824.0),
    }
}

/// Frames beside RoCE and pauses by protocol, and the TCP conversations,
/// most trouble first.
fn other_section(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    let Some(other) = &r.other else { return };
    let _ = writeln!(
        s,
        "\n{}",
        st.bold(&format!(
            "Other traffic ({} beside RoCE and pauses)",
            count(other.frames, "frame", "frames")
        ))
    );
    let protocols: Vec<String> = (other.protocols.iter())
        .map(|p| format!("{} {}", p.protocol, grouped(p.frames)))
        .collect();
    let _ = writeln!(s, "  {}", protocols.join(" · "));
    let convs = &other.tcp_conversations;
    if convs.is_empty() {
        return;
    }
    let mut rows: Vec<(_, &crate::analysis::other::TcpConversation)> = (convs.iter())
        .map(|c| ((std::cmp::Reverse((c.trouble(), c.frames)), c.stream), c))
        .collect();
    let shown = if o.all { usize::MAX } else { MAX_TCP_ROWS };
    top_rows(&mut rows, shown);
    let _ = writeln!(
        s,
        "  {} (most trouble first; A: the first frame's sender)",
        count(convs.len() as u64, "TCP conversation", "TCP conversations")
    );
    let _ = writeln!(
        s,
        "  stream  frames       bytes  retx  lost   ooo   dup  0win   RST  handshake    ACK RTT  A → B"
    );
    for ((_, _), c) in rows.iter().take(shown) {
        let n = |name: &str| grouped(c.noted(name));
        let resets = if c.resets > 0 {
            st.red(&format!("{:>5}", grouped(c.resets)))
        } else {
            format!("{:>5}", 0)
        };
        let _ = writeln!(
            s,
            "  {:>6} {:>7} {:>11} {:>5} {:>5} {:>5} {:>5} {:>5} {resets} {:>10} {:>10}  {} → {}",
            c.stream,
            grouped(c.frames),
            grouped(c.bytes),
            n("retransmission"),
            n("lost_segment"),
            n("out_of_order"),
            n("duplicate_ack"),
            n("zero_window"),
            c.handshake_rtt_ns.map_or("-".to_string(), human_ns),
            c.ack_rtt.map_or("-".to_string(), |r| human_ns(r.mean_ns)),
            c.a,
            c.b,
        );
    }
    if rows.len() > shown {
        let _ = writeln!(s, "  ... {} more (--all lists them)", rows.len() - shown);
    }
    if other.tcp_conversations_dropped > 0 {
        let _ = writeln!(
            s,
            "  ... {} not followed (--max-flows)",
            count(
                other.tcp_conversations_dropped,
                "conversation",
                "conversations"
            )
        );
    }
    let _ = writeln!(
        s,
        "      retx retransmissions (tcp.analysis.retransmission) · lost previous segment not captured · ooo out of order · dup duplicate ACKs · 0win zero windows · RST resets · handshake SYN to its ACK · ACK RTT mean, a segment to the ACK that ends at it · a stream's frames: packets -Y 'tcp.stream == N'"
    );
}

/// The flows with payload, busiest bin first.
fn throughput_section(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    let mut rows: Vec<(_, &crate::analysis::throughput::Throughput)> = r
        .flows
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.timing.as_ref()?.throughput.as_ref().map(|t| (i, t)))
        .map(|(i, t)| ((std::cmp::Reverse(t.peak_bps), i), t))
        .collect();
    let Some(bin) = rows.first().map(|(_, t)| t.bin_ns) else {
        return;
    };
    let _ = writeln!(
        s,
        "\n{}",
        st.bold(&format!(
            "Throughput (payload, busiest first; bins of {})",
            crate::units::human_ns(bin)
        ))
    );
    let _ = writeln!(s, "  flow      payload        mean        peak    replayed");
    let shown = if o.all { usize::MAX } else { MAX_TIMING_ROWS };
    top_rows(&mut rows, shown);
    for ((_, i), t) in rows.iter().take(shown) {
        let replayed = if t.replayed_bytes == 0 {
            "-".to_string()
        } else {
            format!(
                "{:.1}%",
                t.replayed_bytes as f64 * 100.0 / t.payload_bytes.max(1) as f64
            )
        };
        let _ = writeln!(
            s,
            "  #{:<5} {:>10} {:>11} {:>11} {:>11}",
            i + 1,
            human_bytes(t.payload_bytes),
            human_bps(t.mean_bps),
            human_bps(t.peak_bps),
            replayed,
        );
    }
    if rows.len() > shown {
        let _ = writeln!(s, "  ... {} more (--all lists them)", rows.len() - shown);
    }
    let _ = writeln!(
        s,
        "      mean: from the flow's first to its last bin with payload · --timeline lists the bins"
    );
}

/// The CE → CNP → rate cut chain of each flow whose sender got CNPs.
fn cc_section(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    let rows: Vec<(usize, &crate::analysis::report::FlowReport)> = r
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.cc.as_deref().is_some_and(|c| c.cnps > 0))
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\n{}",
        st.bold("Congestion control: CE → CNP → rate cut (README \"DCQCN reaction\")")
    );
    let _ = writeln!(
        s,
        "  flow       CE  CE→CNP   CNPs  cut  not cut  unjudged  after/before  back in"
    );
    for (i, f) in rows
        .iter()
        .take(if o.all { usize::MAX } else { MAX_TIMING_ROWS })
    {
        let Some(c) = f.cc.as_deref() else { continue };
        let not = if c.ignored > 0 {
            st.red(&format!("{:>8}", c.ignored))
        } else {
            format!("{:>8}", 0)
        };
        let _ = writeln!(
            s,
            "  #{:<5} {:>6} {:>7} {:>6} {:>4} {} {:>9} {:>13} {:>8}",
            i + 1,
            grouped(f.ecn_ce),
            f.ce_to_cnp.map_or("-".to_string(), |d| human_ns(d.mean_ns)),
            grouped(c.cnps),
            c.reacted,
            not,
            c.indeterminate,
            c.mean_ratio.map_or("-".to_string(), |m| format!("{m:.2}")),
            c.recovery_ns.map_or("-".to_string(), human_ns),
        );
    }
    if rows.len() > MAX_TIMING_ROWS && !o.all {
        let _ = writeln!(
            s,
            "  ... {} more (--all lists them)",
            rows.len() - MAX_TIMING_ROWS
        );
    }
    let _ = writeln!(
        s,
        "      cut: the payload rate a window (--cc-window) after a CNP, from +5 µs,\n      at most 0.9 of the window before; not cut: at least 0.97, sending all\n      along; unjudged: --json says why\n      back in: mean time from a cut's last CNP to the rate before it"
    );
}

/// The NVMe-oF queues, their latencies, the slowest I/Os and the errors.
fn nvme_section(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    let Some(n) = &r.nvme else { return };
    let failed: u64 = n.queues.iter().map(|q| q.errors).sum();
    let _ = writeln!(
        s,
        "\n{}",
        st.bold(&format!(
            "NVMe-oF ({}, {}, {} failed, {} unanswered; README \"NVMe-oF\")",
            count(n.queues.len() as u64, "queue", "queues"),
            count(n.commands, "command", "commands"),
            grouped(failed),
            grouped(n.unanswered_total),
        ))
    );
    let _ = writeln!(
        s,
        "  queue flows    cmds errs depth  lat p50  lat p99 1st data      read   written"
    );
    let cell = |x: Option<crate::analysis::timing::Stats>,
                f: fn(&crate::analysis::timing::Stats) -> u64| {
        x.map_or("-".to_string(), |v| human_ns(f(&v)))
    };
    let shown = if o.all { usize::MAX } else { MAX_TIMING_ROWS };
    let pairs: std::collections::BTreeSet<(&str, &str)> = n
        .queues
        .iter()
        .map(|q| (q.host.as_str(), q.controller.as_str()))
        .collect();
    for q in n.queues.iter().take(shown) {
        let flows = q
            .connection
            .and_then(|c| r.connections.get(c))
            .map_or("-".to_string(), |c| {
                format!("#{}/#{}", c.flows[0] + 1, c.flows[1] + 1)
            });
        let errs = if q.errors > 0 {
            st.red(&format!("{:>5}", grouped(q.errors)))
        } else {
            format!("{:>5}", 0)
        };
        let _ = write!(
            s,
            "  {:<5} {:<7}{:>6}{}{:>6}{:>9}{:>9}{:>9}{:>10}{:>10}",
            q.qid.map_or("q?".to_string(), |i| format!("q{i}")),
            flows,
            grouped(q.commands),
            errs,
            grouped(q.outstanding_max),
            cell(q.latency, |v| v.p50_ns),
            cell(q.latency, |v| v.p99_ns),
            cell(q.first_data, |v| v.p50_ns),
            human_bytes(q.bytes_read),
            human_bytes(q.bytes_written),
        );
        if pairs.len() > 1 {
            let _ = write!(
                s,
                "  {} → {}",
                terminal_safe(&q.host),
                terminal_safe(&q.controller)
            );
        }
        s.push('\n');
    }
    if n.queues.len() > shown {
        let _ = writeln!(
            s,
            "  ... {} more (--all lists them)",
            n.queues.len() - shown
        );
    }
    if let [(host, ctrl)] = pairs.iter().collect::<Vec<_>>()[..] {
        let _ = writeln!(
            s,
            "      host {} → controller {} ({})",
            terminal_safe(host),
            terminal_safe(ctrl),
            match n.queues.first().map(|q| q.ulp_by) {
                Some(crate::analysis::report::UlpBy::Cm) => "known from the RDMA CM",
                Some(crate::analysis::report::UlpBy::Option) => "as --ulp says",
                _ => "recognised by its capsules",
            }
        );
    }
    let _ = writeln!(
        s,
        "      depth: most commands outstanding · 1st data: command to the controller's\n      first RDMA WRITE or READ (p50) · a queue's max is its slowest I/O"
    );
    if !n.slowest.is_empty() {
        let _ = writeln!(s, "  Slowest I/Os");
        let _ = writeln!(
            s,
            "    latency queue   CID command             LBA     bytes frames         status"
        );
        for io in n.slowest.iter().take(if o.all { usize::MAX } else { 10 }) {
            let status = io.status.unwrap_or("-");
            let status = if status == "Successful Completion" {
                "ok".to_string()
            } else {
                st.red(status)
            };
            let _ = writeln!(
                s,
                "  {:>9} {:<4}{:>6} {:<12}{:>11}{:>10} {:<14} {}",
                io.latency_ns.map_or("-".to_string(), human_ns),
                io.qid.map_or("q?".to_string(), |i| format!("q{i}")),
                io.cid,
                terminal_safe(&io.opcode),
                io.lba.map_or("-".to_string(), |l| l.to_string()),
                human_bytes(u64::from(io.bytes)),
                format!(
                    "{}→{}",
                    io.command_frame,
                    io.cqe_frame.map_or("?".to_string(), |f| f.to_string())
                ),
                status
            );
        }
    }
    for e in &n.errors {
        let _ = writeln!(
            s,
            "  {} {} × {} (status type {}, code {:#04x})",
            st.red("Failed:"),
            e.status,
            grouped(e.count),
            e.sct,
            e.sc
        );
    }
    for io in n.unanswered.iter().take(if o.all { usize::MAX } else { 5 }) {
        let _ = writeln!(
            s,
            "  {} {} CID {} on {} (frame {})",
            st.yellow("Never answered:"),
            terminal_safe(&io.opcode),
            io.cid,
            io.qid.map_or("q?".to_string(), |i| format!("q{i}")),
            io.command_frame
        );
    }
}

/// Rows of the pause summary unless `--all`.
pub const MAX_PAUSE_ROWS: usize = 20;

pub fn render(r: &Report, o: &TextOptions) -> String {
    let st = o.style;
    let mut s = String::new();
    summary_section(&mut s, r, &st);
    flows_section(&mut s, r, o, &st);
    episodes_section(&mut s, r, o, &st);
    pfc_section(&mut s, r, o, &st);
    timing_section(&mut s, r, o, &st);
    throughput_section(&mut s, r, o, &st);
    cc_section(&mut s, r, o, &st);
    nvme_section(&mut s, r, o, &st);
    other_section(&mut s, r, o, &st);
    quality_section(&mut s, r, &st);
    events_section(&mut s, r, o, &st);
    if !r.hints.is_empty() {
        let _ = writeln!(s, "\n{}", st.bold("Hints"));
        for h in &r.hints {
            let _ = writeln!(s, "  {} [{}×] {}", st.yellow("!"), grouped(h.count), h.text);
        }
    }
    if let Some(w) = o.width {
        s = super::fit::wrap(&s, w);
    }
    next_step(&mut s, r, o, &st);
    s
}

/// The first lines: the capture, the filter, the totals, the warnings.
fn summary_section(s: &mut String, r: &Report, st: &Style) {
    let c = &r.capture;
    let sum = |f: &dyn Fn(&FlowReport) -> u64| r.flows.iter().map(f).sum::<u64>();
    let retx = sum(&|f| f.retransmits);
    let eps = sum(&|f| f.retransmit_episodes);
    let naks = sum(&|f| f.naks.total() - f.naks.rnr);
    let rnr = sum(&|f| f.naks.rnr);
    let _ = writeln!(
        s,
        "{} {} ({}, {}, {} RoCE, {} s)",
        st.bold("roce-dissect:"),
        terminal_safe(&c.file),
        c.format,
        count(c.frames, "frame", "frames"),
        grouped(c.roce_frames),
        secs(c.duration_ns)
    );
    if let (Some(f), Some(n)) = (&c.display_filter, c.matching_frames) {
        let _ = writeln!(
            s,
            "display filter {}: {} of {} match; listed: the flows and pause intervals with one ({} in all)",
            terminal_safe(f),
            grouped(n),
            count(c.frames, "frame", "frames"),
            count(c.flows, "flow", "flows"),
        );
    }
    let summary = format!(
        "{} in {} · {} ({}) · {} out of order · {} missing · {} · {} · {} CE · {} · {} · {} bad ICRC",
        count(r.flows.len() as u64, "flow", "flows"),
        count(r.connections.len() as u64, "connection", "connections"),
        count(retx, "retransmit", "retransmits"),
        count(eps, "episode", "episodes"),
        grouped(sum(&|f| f.out_of_order)),
        grouped(sum(&|f| f.missing)),
        count(naks, "NAK", "NAKs"),
        count(rnr, "RNR NAK", "RNR NAKs"),
        grouped(sum(&|f| f.ecn_ce)),
        count(sum(&|f| f.cnps), "CNP", "CNPs"),
        count(
            r.pfc.intervals.len() as u64,
            "pause interval",
            "pause intervals"
        ),
        grouped(c.icrc_errors),
    );
    let _ = writeln!(s, "{summary}");
    for w in &c.warnings {
        let _ = writeln!(s, "{} {}", st.yellow("warning:"), terminal_safe(w));
    }
}

/// The flows table, each flow beside its peer.
fn flows_section(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    let st = *st;
    let peers = r.peer_indexes();
    if !r.flows.is_empty() {
        let _ = writeln!(
            s,
            "\n{}",
            st.bold("Flows (most trouble first; a connection's other direction follows it)")
        );
        // The rows in the table's order: each flow, its connection's other
        // direction after it.
        let mut printed = vec![false; r.flows.len()];
        let mut order: Vec<(usize, bool)> = Vec::new();
        for i in 0..r.flows.len() {
            if printed[i] {
                continue;
            }
            if !o.all && order.len() >= MAX_FLOW_ROWS {
                break;
            }
            printed[i] = true;
            order.push((i, false));
            if let Some(j) = peers[i]
                && !printed[j]
            {
                printed[j] = true;
                order.push((j, true));
            }
        }
        let rows: Vec<FlowCells> = order
            .iter()
            .map(|&(i, is_peer)| FlowCells::of(r, i, is_peer, &peers))
            .collect();
        let wide = flows_wide(&rows, st);
        let (table, shown) = match o.width {
            Some(w) if wide.lines().any(|l| super::fit::display_width(l) > w) => {
                flows_fitted(&rows, w, st)
            }
            _ => (wide, [true; FLOW_COLUMNS.len()]),
        };
        s.push_str(&table);
        let hidden = printed.iter().filter(|&&p| !p).count() as u64;
        if hidden > 0 {
            let _ = writeln!(
                s,
                "  ... {} more (fewer troubles first): --all lists every flow, --json has them all",
                count(hidden, "flow", "flows")
            );
        }
        legend(s, &shown, st);
    }
}

/// Retransmission episodes and what triggered them.
fn episodes_section(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    let c = &r.capture;
    let episodes: Vec<(usize, &crate::analysis::report::Episode)> = r
        .flows
        .iter()
        .enumerate()
        .flat_map(|(i, f)| f.episodes.iter().map(move |e| (i, e)))
        .collect();
    if !episodes.is_empty() {
        let _ = writeln!(
            s,
            "\n{}",
            st.bold("Retransmission episodes (go-back-N replays)")
        );
        for (i, e) in episodes.iter().take(if o.all { usize::MAX } else { 50 }) {
            let why = match e.trigger {
                Trigger::Nak => format!(
                    "after the NAK in frame {} ({} later)",
                    e.nak_frame.unwrap_or(0),
                    human_ns(e.latency_ns)
                ),
                Trigger::Rnr => format!(
                    "after the RNR NAK in frame {} ({} later)",
                    e.nak_frame.unwrap_or(0),
                    human_ns(e.latency_ns)
                ),
                Trigger::Timeout => format!(
                    "timeout: no NAK, {} of silence before it",
                    human_ns(e.latency_ns)
                ),
            };
            let _ = writeln!(
                s,
                "  flow #{:<3} frame {:<8} +{} s  PSN {}..{} ({})  {}",
                i + 1,
                e.frame,
                secs(e.ts_ns.saturating_sub(c.first_ts_ns)),
                e.first_psn,
                e.last_psn,
                count(e.packets, "packet", "packets"),
                why
            );
        }
        if !o.all && episodes.len() > 50 {
            let _ = writeln!(
                s,
                "  ... {} more: --all lists them, --json has them all",
                episodes.len() - 50
            );
        }
    }
}

/// PFC and PAUSE: the paused priorities, whether senders stopped in
/// time, the pause intervals.
fn pfc_section(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    if r.pfc.frames == 0 {
        return;
    }
    let speeds = if r.pfc.link_speeds.len() > 1 {
        let each: Vec<String> = r
            .pfc
            .link_speeds
            .iter()
            .map(|u| {
                format!(
                    "{} Gb/s ({}) for {}",
                    u.bps as f64 / 1e9,
                    u.from.as_str(),
                    crate::output::text::count(u.frames, "frame", "frames")
                )
            })
            .collect();
        format!("quanta at {}", each.join(", "))
    } else {
        format!(
            "quanta at {} Gb/s, from {}",
            r.pfc.link_speed_bps as f64 / 1e9,
            r.pfc.link_speed_from.label()
        )
    };
    let _ = writeln!(
        s,
        "\n{} ({}; {speeds})",
        st.bold("PFC / PAUSE"),
        count(r.pfc.frames, "frame", "frames"),
    );
    let _ = writeln!(
        s,
        "  {:<17} {:>5} {:>9} {:>12} {:>8} {:>12}  storm",
        "source MAC", "prio", "intervals", "paused", "share", "longest"
    );
    let shown = if o.all {
        r.pfc.summary.len()
    } else {
        MAX_PAUSE_ROWS
    };
    for p in r.pfc.summary.iter().take(shown) {
        let prio = p.priority.map_or("all".to_string(), |p| p.to_string());
        let storm = if p.storm { st.red("STORM") } else { "-".into() };
        let _ = writeln!(
            s,
            "  {:<17} {:>5} {:>9} {:>12} {:>7.3}% {:>12}  {}",
            p.src_mac,
            prio,
            p.intervals,
            human_ns(p.paused_ns),
            p.fraction * 100.0,
            human_ns(p.longest_ns),
            storm
        );
    }
    pfc_reactions(s, r, shown, st);
    if r.pfc.summary.len() > shown {
        let _ = writeln!(
            s,
            "  ... {} more (less paused first): --all lists them, --json has them all",
            count((r.pfc.summary.len() - shown) as u64, "source", "sources")
        );
    }
    pause_intervals(s, r, o, st);
}

/// Whether the paused senders stopped in time (README "PFC reaction"),
/// for the first `shown` sources.
fn pfc_reactions(s: &mut String, r: &Report, shown: usize, st: &Style) {
    for p in r.pfc.summary.iter().take(shown) {
        let x = &p.reaction;
        let prio = p.priority.map_or("all".to_string(), |p| p.to_string());
        if x.late > 0 {
            let _ = writeln!(
                s,
                "  {} {} prio {}: the paused sender kept sending in {} (up to {} bytes, {} after the pause frame)",
                st.red("!"),
                p.src_mac,
                prio,
                if x.pauses == 1 {
                    "its one pause".to_string()
                } else {
                    format!("{} of {} pauses", grouped(x.late), grouped(x.pauses))
                },
                grouped(x.max_bytes),
                human_ns(x.max_stop_ns)
            );
        } else if x.max_bytes > 0 {
            let _ = writeln!(
                s,
                "  {} prio {}: the paused sender stopped in time in {} (at most {} bytes, {})",
                p.src_mac,
                prio,
                if x.pauses == 1 {
                    "its one pause".to_string()
                } else {
                    format!("all {} pauses", grouped(x.pauses))
                },
                grouped(x.max_bytes),
                human_ns(x.max_stop_ns)
            );
        }
    }
}

/// The pause intervals (the first 20 unless `--all`).
fn pause_intervals(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    let c = &r.capture;
    for iv in r
        .pfc
        .intervals
        .iter()
        .take(if o.all { usize::MAX } else { 20 })
    {
        let flows = if iv.flows_total == 0 {
            String::new()
        } else {
            let ids: Vec<String> = iv.flows.iter().map(|f| format!("#{}", f + 1)).collect();
            format!("; sent meanwhile: {}", ids.join(" "))
        };
        let ended = match iv.end_frame {
            Some(x) => format!("frames {}..{}, ended by XON", iv.start_frame, x),
            None => format!("from frame {}, expired", iv.start_frame),
        };
        let x = &iv.reaction;
        let reaction = match x.verdict {
            crate::analysis::pfc::ReactionVerdict::None => String::new(),
            v => format!(
                "; sender {} {} ({} bytes)",
                if v == crate::analysis::pfc::ReactionVerdict::Late {
                    st.red("kept sending for")
                } else {
                    "stopped in".to_string()
                },
                human_ns(x.stop_ns),
                grouped(x.bytes)
            ),
        };
        let _ = writeln!(
            s,
            "    {} prio {}: +{} s for {} ({ended}){}{}{}",
            iv.src_mac,
            iv.priority.map_or("all".to_string(), |p| p.to_string()),
            secs(iv.start_ns.saturating_sub(c.first_ts_ns)),
            human_ns(iv.duration_ns),
            flows,
            reaction,
            if iv.storm {
                format!(" {}", st.red("storm"))
            } else {
                String::new()
            }
        );
    }
    if !o.all && r.pfc.intervals.len() > 20 {
        let _ = writeln!(
            s,
            "    ... {} more intervals: --all lists them, --json has them all",
            r.pfc.intervals.len() - 20
        );
    }
}

/// What the capture can tell: its timestamp resolution, vantage and
/// frames the device lost.
fn quality_section(s: &mut String, r: &Report, st: &Style) {
    let c = &r.capture;
    let _ = writeln!(s, "\n{}", st.bold("Capture quality"));
    let res = if c.ts_resolution_ns == 0 {
        "unknown".to_string()
    } else {
        human_ns(c.ts_resolution_ns)
    };
    let _ = writeln!(
        s,
        "  timestamp resolution {res} · {} truncated · {} malformed · {} bad ICRC · {} capture duplicates · {} one-way flows · {} CM messages",
        grouped(c.truncated_frames),
        grouped(c.malformed_frames),
        grouped(c.icrc_errors),
        grouped(c.duplicate_frames),
        grouped(c.one_way_flows),
        grouped(c.cm_messages),
    );
    if let Some(v) = c.vantage {
        let from = c
            .vantage_host
            .as_ref()
            .map_or(String::new(), |h| format!(" ({h})"));
        let _ = writeln!(
            s,
            "  seen from {}{from}: round trips are measured from there (README \"Timing\")",
            v.describe()
        );
    }
    if c.device_lost > 0 {
        let _ = writeln!(
            s,
            "  {} lost by the capture device (ERF loss counters)",
            count(c.device_lost, "record", "records")
        );
    }
}

/// Every event, with `--events`.
fn events_section(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    let c = &r.capture;
    if o.events {
        let shown = if o.all { r.flows.len() } else { MAX_FLOW_ROWS };
        for (i, f) in r.flows.iter().enumerate().take(shown) {
            if f.events.is_empty() {
                continue;
            }
            let _ = writeln!(
                s,
                "\n{} {} → {} QP 0x{:06x}",
                st.bold(&format!("Events of flow #{}:", i + 1)),
                f.src,
                f.dst,
                f.destqp
            );
            for e in &f.events {
                let mut line = format!(
                    "  frame {:<8} +{} s  {:<13}",
                    e.frame,
                    secs(e.ts_ns.saturating_sub(c.first_ts_ns)),
                    e.kind.label()
                );
                if let Some(p) = e.psn {
                    let _ = write!(line, " PSN {p}");
                }
                if let Some(n) = e.count {
                    let _ = write!(line, " ({} missing)", count(u64::from(n), "PSN", "PSNs"));
                }
                if let Some(d) = &e.detail {
                    let _ = write!(line, " {d}");
                } else if let Some(code) = e.code {
                    let _ = write!(line, " code {code}");
                }
                let _ = writeln!(s, "{line}");
            }
            if f.events_dropped > 0 {
                let _ = writeln!(
                    s,
                    "  ... {} more events not kept (--max-events)",
                    f.events_dropped
                );
            }
        }
    }
}

/// The command that lists the packets of the flow in most trouble.
fn next_step(s: &mut String, r: &Report, o: &TextOptions, st: &Style) {
    let c = &r.capture;
    if let Some(f) = r.flows.first()
        && f.trouble() > 0
    {
        // A merged report's frames are those of its captures merged.
        let captures = if c.files.is_empty() {
            shell_quote(&c.file)
        } else {
            let each: Vec<String> = c.files.iter().map(|f| shell_quote(f)).collect();
            format!("--merge {}", each.join(" "))
        };
        let command = format!(
            "roce-dissect packets {} --flow {},{},0x{:06x}",
            captures, f.src, f.dst, f.destqp
        );
        let line = format!("Packets of flow #1: {command}   (events: -V, all figures: --json)");
        // Narrower than the line: the command alone on a line, whole, for
        // copying.
        let line = match o.width {
            Some(w) if super::fit::display_width(&line) > w => {
                format!("Packets of flow #1 (events: -V, all figures: --json):\n  {command}")
            }
            _ => line,
        };
        let _ = writeln!(s, "\n{}", st.dim(&line));
    }
}

/// The flows table's columns after `#` and the flow's name, and before
/// the peer: (heading, right-aligned, width in the wide table). The last
/// [`COUNTERS`] are counts, red when not 0.
const FLOW_COLUMNS: [(&str, bool, usize); 12] = [
    ("DestQP", true, 8),
    ("v", true, 3),
    ("tr", false, 3),
    ("packets", true, 8),
    ("bytes", true, 11),
    ("retx", true, 5),
    ("ooo", true, 5),
    ("miss", true, 5),
    ("nak", true, 4),
    ("rnr", true, 4),
    ("CE", true, 5),
    ("CNP", true, 4),
];
const COUNTERS: usize = 7;
/// What each count column's heading stands for, in their order.
const COUNTER_NAMES: [&str; COUNTERS] = [
    "retransmits",
    "out of order",
    "missing",
    "NAKs",
    "RNR NAKs",
    "CE marks",
    "CNPs",
];
const NAME_HEADING: &str = "source → destination";

/// One row of the flows table as text.
struct FlowCells {
    num: String,
    name: String,
    cols: [String; FLOW_COLUMNS.len()],
    counts: [u64; COUNTERS],
    peer: String,
}

impl FlowCells {
    fn of(r: &Report, i: usize, is_peer: bool, peers: &[Option<usize>]) -> FlowCells {
        let f = &r.flows[i];
        let peer = match &f.peer {
            Some(p) => {
                let idx = peers[i].map_or(String::new(), |j| format!("#{} ", j + 1));
                format!("{idx}({})", p.paired_by)
            }
            None if f.one_way => "one-way".to_string(),
            None => "-".to_string(),
        };
        let counts = [
            f.retransmits,
            f.out_of_order,
            f.missing,
            f.naks.total() - f.naks.rnr,
            f.naks.rnr,
            f.ecn_ce,
            f.cnps,
        ];
        let first = [
            format!("0x{:06x}", f.destqp),
            f.version.as_str().to_string(),
            crate::analysis::report::transport_name(f.transport).to_string(),
            grouped(f.packets),
            grouped(f.bytes),
        ];
        FlowCells {
            num: (i + 1).to_string(),
            name: format!("{}{} → {}", if is_peer { "└ " } else { "" }, f.src, f.dst),
            cols: std::array::from_fn(|j| match j.checked_sub(first.len()) {
                None => first[j].clone(),
                Some(k) => grouped(counts[k]),
            }),
            counts,
            peer,
        }
    }

    /// Column `j`'s text padded to `w`, red for a count other than 0.
    fn cell(&self, j: usize, w: usize, st: Style) -> String {
        let t = super::fit::pad(&self.cols[j], w, FLOW_COLUMNS[j].1);
        match j.checked_sub(FLOW_COLUMNS.len() - COUNTERS) {
            Some(k) if self.counts[k] > 0 => st.red(&t),
            _ => t,
        }
    }
}

/// The flows table with its fixed columns, as a pipe or a file gets it.
fn flows_wide(rows: &[FlowCells], st: Style) -> String {
    let mut s = format!("{:>4}  {:<42}", "#", NAME_HEADING);
    for (head, right, w) in FLOW_COLUMNS {
        let _ = write!(s, " {}", super::fit::pad(head, w, right));
    }
    s.push_str("  peer\n");
    for row in rows {
        let _ = write!(s, "{:>4}  {:<42}", row.num, row.name);
        for (j, (_, _, w)) in FLOW_COLUMNS.iter().enumerate() {
            let _ = write!(s, " {}", row.cell(j, *w, st));
        }
        let _ = writeln!(s, "  {}", row.peer);
    }
    s
}

/// The legend under the flows table, for the count columns shown.
fn legend(s: &mut String, shown: &[bool; FLOW_COLUMNS.len()], st: Style) {
    let first = FLOW_COLUMNS.len() - COUNTERS;
    let mut said: Vec<String> = Vec::new();
    let mut left_out: Vec<&str> = Vec::new();
    for k in 0..COUNTERS {
        let head = FLOW_COLUMNS[first + k].0;
        // CNPs are said by their heading.
        if shown[first + k] {
            if k + 1 < COUNTERS {
                said.push(format!("{head} {}", COUNTER_NAMES[k]));
            }
        } else {
            left_out.push(COUNTER_NAMES[k]);
        }
    }
    if !left_out.is_empty() {
        said.push(format!("no {} in the flows listed", left_out.join(", ")));
    }
    let line = format!("      {}", said.join(" · "));
    let _ = writeln!(s, "{}", st.dim(&line));
}

/// The flows table for `width` columns: each column as wide as its
/// widest cell; then, if the rows are still wider, without the count
/// columns that are 0 in every row; then, if still wider, each flow on two
/// lines, its name above its figures.
fn flows_fitted(
    rows: &[FlowCells],
    width: usize,
    st: Style,
) -> (String, [bool; FLOW_COLUMNS.len()]) {
    use super::fit::display_width;
    let col_w: Vec<usize> = (0..FLOW_COLUMNS.len())
        .map(|j| {
            rows.iter()
                .map(|r| display_width(&r.cols[j]))
                .chain([FLOW_COLUMNS[j].0.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let num_w = rows
        .iter()
        .map(|r| r.num.len())
        .chain([4])
        .max()
        .unwrap_or(4);
    let name_w = rows
        .iter()
        .map(|r| display_width(&r.name))
        .chain([display_width(NAME_HEADING)])
        .max()
        .unwrap_or(0);
    let peer_w = rows
        .iter()
        .map(|r| r.peer.len())
        .chain([4])
        .max()
        .unwrap_or(4);
    let mut shown = [true; FLOW_COLUMNS.len()];
    let figures = |shown: &[bool; FLOW_COLUMNS.len()]| -> usize {
        (0..FLOW_COLUMNS.len())
            .filter(|&j| shown[j])
            .map(|j| 1 + col_w[j])
            .sum::<usize>()
            + 2
            + peer_w
    };
    if num_w + 2 + name_w + figures(&shown) > width {
        let first = FLOW_COLUMNS.len() - COUNTERS;
        for k in 0..COUNTERS {
            if rows.iter().all(|r| r.counts[k] == 0) {
                shown[first + k] = false;
            }
        }
    }
    let stacked = num_w + 2 + name_w + figures(&shown) > width;
    // The figures' part of a line: heading or row.
    let tail = |s: &mut String, cell: &dyn Fn(usize, usize) -> String, peer: &str| {
        for j in (0..FLOW_COLUMNS.len()).filter(|&j| shown[j]) {
            s.push(' ');
            s.push_str(&cell(j, col_w[j]));
        }
        let _ = writeln!(s, "  {peer}");
    };
    let heading = |j: usize, w: usize| {
        let (head, right, _) = FLOW_COLUMNS[j];
        super::fit::pad(head, w, right)
    };
    let mut s = String::new();
    let indent = " ".repeat(num_w + 1);
    if stacked {
        let _ = writeln!(s, "{:>num_w$}  {NAME_HEADING}", "#");
        s.push_str(&indent);
        tail(&mut s, &heading, "peer");
        for row in rows {
            let _ = writeln!(s, "{:>num_w$}  {}", row.num, row.name);
            s.push_str(&indent);
            tail(&mut s, &|j, w| row.cell(j, w, st), &row.peer);
        }
    } else {
        let name = |n: &str| super::fit::pad(n, name_w, false);
        let _ = write!(s, "{:>num_w$}  {}", "#", name(NAME_HEADING));
        tail(&mut s, &heading, "peer");
        for row in rows {
            let _ = write!(s, "{:>num_w$}  {}", row.num, name(&row.name));
            tail(&mut s, &|j, w| row.cell(j, w, st), &row.peer);
        }
    }
    (s, shown)
}

#[cfg(test)]
mod tests {
    use super::top_rows;

    #[test]
    fn the_top_rows_are_those_a_full_sort_puts_first() {
        // Keys with many ties but the flow's number, in a scrambled order.
        let mut rows: Vec<((std::cmp::Reverse<u64>, usize), usize)> = (0..500)
            .map(|i| (i * 7919) % 500)
            .map(|i| ((std::cmp::Reverse((i as u64 * 31) % 13), i), i))
            .collect();
        let mut want = rows.clone();
        want.sort_by_key(|r| r.0);
        for shown in [0, 1, 20, 499, 500, 501, usize::MAX] {
            let mut got = rows.clone();
            top_rows(&mut got, shown);
            let n = shown.min(rows.len());
            assert_eq!(got[..n], want[..n], "{shown} rows shown");
            got.sort_by_key(|r| r.0);
            assert_eq!(got, want, "the other rows are all kept");
        }
        // Fewer rows than shown: all sorted.
        rows.truncate(3);
        let mut three = rows.clone();
        three.sort_by_key(|r| r.0);
        top_rows(&mut rows, 20);
        assert_eq!(rows, three);
    }
}
