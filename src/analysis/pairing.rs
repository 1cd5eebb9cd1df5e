//! Pairing the two directions of each connection, and assembling the report.

use crate::dissect::Addr;

use super::Map;
use super::flow::FlowState;
use super::hints;
use super::psn::WINDOW;
use super::report::{
    CaptureSummary, Connection, EventKind, FlowReport, IntervalReport, PairedBy, PauseSummary,
    PeerRef, PfcReport, Report, SCHEMA,
};
use super::timing::TimingReport;
use super::{Analyzer, CaptureInfo};
use crate::wire::Psn;
use crate::wire::Transport;

/// Candidates one ACK flow looks at before it gives up: a pairing by
/// traffic is a guess, and a capture of thousands of flows whose PSNs are
/// all alike must not make every one look at all the others.
const MAX_TRIES: usize = 64;

/// The data flows of one host pair, sorted by the PSN they would send
/// next, with a skip list past the ones already paired: each paired
/// candidate is stepped over once, not at every look.
struct Candidates {
    list: Vec<(u32, u32)>,
    /// `skip[i]`: the first index at or after `i` that may be unpaired
    /// (kept short by path halving).
    skip: Vec<u32>,
}

impl Candidates {
    fn next_free(&mut self, mut i: usize) -> usize {
        while i < self.skip.len() && self.skip[i] as usize != i {
            let j = self.skip[i] as usize;
            if j < self.skip.len() {
                self.skip[i] = self.skip[j];
            }
            i = j;
        }
        i
    }

    fn take(&mut self, i: usize) {
        if let Some(s) = self.skip.get_mut(i) {
            *s = (i + 1) as u32;
        }
    }
}

/// Peer of each flow (by id) and how it was found.
fn pair_flows(a: &Analyzer) -> Vec<Option<(u32, PairedBy)>> {
    let mut peer: Vec<Option<(u32, PairedBy)>> = vec![None; a.flows.len()];
    // 1. RDMA CM REQ/REP, in the order of the flows (the map's own order
    // is seeded per run: a report must not depend on it).
    let mut by_cm: Vec<(u32, u32)> = a
        .cm_peer
        .entries()
        // An entry's own flow is noted under it (the table holds each
        // key's latest); its partner's may be under a later entry.
        .filter_map(|e| Some((a.cm_peer.flow(e)?, a.cm_entry_partner(e)?)))
        .collect();
    by_cm.sort_unstable();
    for (x, y) in by_cm {
        if peer[x as usize].is_none() && peer[y as usize].is_none() {
            peer[x as usize] = Some((y, PairedBy::Cm));
            peer[y as usize] = Some((x, PairedBy::Cm));
        }
    }
    // 2. Traffic: ACK/NAK/READ response PSNs fall inside a data flow's
    // request PSNs between the same two hosts. The data flows of each host
    // pair are sorted by the PSN they would send next, so a response finds
    // the nearest ones by binary search.
    let mut by_hosts: Map<(Addr, Addr), Candidates> = Map::default();
    for (i, f) in a.flows.iter().enumerate() {
        if let (Some(next), Some(_)) = (f.req_next(), f.req_first_psn.get())
            && peer[i].is_none()
        {
            by_hosts
                .entry((f.key.src, f.key.dst))
                .or_insert_with(|| Candidates {
                    list: Vec::new(),
                    skip: Vec::new(),
                })
                .list
                .push((next.get(), i as u32));
        }
    }
    for c in by_hosts.values_mut() {
        c.list.sort_unstable();
        c.skip = (0..c.list.len() as u32).collect();
    }
    let mut responders: Vec<u32> = (0..a.flows.len() as u32)
        .filter(|&i| a.flows[i as usize].ack_last_psn.is_some() && peer[i as usize].is_none())
        .collect();
    responders.sort_by_key(|&i| a.flows[i as usize].first_frame);
    for r in responders {
        if peer[r as usize].is_some() {
            continue;
        }
        let f = &a.flows[r as usize];
        let Some(ack) = f.ack_last_psn.get() else {
            continue;
        };
        let Some(cands) = by_hosts.get_mut(&(f.key.dst, f.key.src)) else {
            continue;
        };
        // Candidates whose next PSN is 0..=WINDOW ahead of the response,
        // nearest first (ties by flow id, as the list is sorted), in one
        // range or two when it wraps.
        let (ack_psn, ack) = (ack, ack.get());
        let top = ack + WINDOW;
        let from = |psn: u32| cands.list.partition_point(|&(next, _)| next < psn);
        let upto = |psn: u32| cands.list.partition_point(|&(next, _)| next <= psn);
        let ranges = if top <= Psn::MASK {
            [(from(ack), upto(top)), (0, 0)]
        } else {
            [(from(ack), cands.list.len()), (0, upto(top & Psn::MASK))]
        };
        let mut tries = 0;
        let mut found = None;
        'search: for (lo, hi) in ranges {
            let mut i = cands.next_free(lo);
            while i < hi && tries < MAX_TRIES {
                tries += 1;
                let (_, c) = cands.list[i];
                let g = &a.flows[c as usize];
                if peer[c as usize].is_none()
                    && c != r
                    && g.req_first_psn
                        .get()
                        .is_some_and(|first| ack_psn - first >= -1)
                {
                    found = Some((i, c));
                    break 'search;
                }
                i = cands.next_free(i + 1);
            }
        }
        if let Some((i, c)) = found {
            cands.take(i);
            peer[r as usize] = Some((c, PairedBy::Traffic));
            peer[c as usize] = Some((r, PairedBy::Traffic));
        }
    }
    peer
}

/// Addresses as text, each formatted once: a capture has far fewer hosts
/// than flows, and formatting an IPv6 address costs a thousand instructions.
#[derive(Default)]
struct AddrText(Map<Addr, super::report::Text>);

impl AddrText {
    fn get(&mut self, a: Addr) -> super::report::Text {
        self.0
            .entry(a)
            .or_insert_with(|| a.to_string().into())
            .clone()
    }
}

/// The report of a flow; its episodes and events move into it.
fn flow_report(
    id: u32,
    f: &mut FlowState,
    text: &mut AddrText,
    timeline: &super::throughput::Timeline,
    logs: &super::timing::Logs,
) -> FlowReport {
    let missing = f.missing();
    let (events, episodes) = f.take_lists();
    let rate = f.rate.as_mut().and_then(|r| r.report(timeline));
    let c = f.cold_ref();
    FlowReport {
        src: text.get(f.key.src),
        dst: text.get(f.key.dst),
        destqp: f.key.dest_qp,
        version: f.version,
        transport: f.transport,
        packets: f.packets,
        bytes: f.bytes,
        payload_bytes: f.payload_bytes,
        duplicates: c.duplicates,
        first_frame: f.first_frame,
        first_ts_ns: f.first_ts,
        last_ts_ns: f.last_ts,
        retransmits: c.retransmits,
        out_of_order: c.out_of_order,
        missing,
        psn_reuse: c.psn_reuse,
        ecn_ce: c.ecn_ce,
        cnps: c.cnps,
        naks: c.naks,
        retransmit_episodes: c.episode_count,
        episodes,
        ce_to_cnp: c.ce_to_cnp.stats(),
        pmtu: f.pmtu,
        priority: f.priority,
        peer: None,
        one_way: false,
        bad_icrc: c.bad_icrc,
        unanswered_reads: 0,
        events,
        events_dropped: c.events_dropped,
        timing: {
            match (f.timing.as_ref().and_then(|t| t.report(id, logs)), rate) {
                (Some(mut t), rate) => {
                    t.timeout = c.timeouts.report().map(Box::new);
                    t.throughput = rate;
                    Some(Box::new(t))
                }
                (None, Some(rate)) => Some(Box::new(TimingReport::throughput_only(rate))),
                (None, None) => None,
            }
        },
        cc: c.cc.as_ref().map(|s| Box::new(s.report)),
    }
}

/// Where a flow's report goes in the report's order: most trouble first,
/// then by first frame.
type SortKey = (std::cmp::Reverse<u64>, u64, usize);

/// Every flow's report, in flow id order, and each one's [`SortKey`]
/// (taken from the report just built: read again from thousands of
/// reports afterwards, they missed the cache at every flow). With a pool
/// (thousands of flows), on its threads, each report written in its
/// place.
fn flow_reports(
    a: &mut Analyzer,
    pool: Option<&rayon::ThreadPool>,
) -> (Vec<FlowReport>, Vec<SortKey>) {
    use rayon::prelude::*;
    let n = a.flows.len();
    let (timeline, logs) = (&a.timeline, &a.logs);
    let build = |text: &mut AddrText, (id, (f, key)): (usize, (&mut FlowState, &mut SortKey))| {
        let r = flow_report(id as u32, f, text, timeline, logs);
        *key = (std::cmp::Reverse(r.trouble()), r.first_frame, id);
        r
    };
    let mut keys = vec![(std::cmp::Reverse(0), 0, 0); n];
    if let Some(pool) = pool {
        let mut reports = Vec::new();
        pool.install(|| {
            a.flows
                .par_iter_mut()
                .zip(keys.par_iter_mut())
                .enumerate()
                .map_init(AddrText::default, build)
                .collect_into_vec(&mut reports)
        });
        return (reports, keys);
    }
    let mut text = AddrText::default();
    let reports = a
        .flows
        .iter_mut()
        .zip(keys.iter_mut())
        .enumerate()
        .map(|x| build(&mut text, x))
        .collect();
    (reports, keys)
}

/// READs replayed on flow `i` that its other direction `j` never answered:
/// no READ response at or after their PSN.
fn unanswered_reads(a: &Analyzer, i: usize, j: usize) -> u64 {
    let replayed = &a.flows[i].cold_ref().replayed_reads;
    if replayed.is_empty() {
        // Most flows: the other direction's state is not read at all.
        return 0;
    }
    let resp_next = a.flows[j].resp_next();
    replayed
        .iter()
        .filter(|&&p| resp_next.is_none_or(|n| n - p <= 0))
        .count() as u64
}

/// What [`build_report`] needs of every flow's timing, gathered as the
/// analysis flushed it.
pub(super) struct Gathered {
    /// The flows with timing: their round trips, for the vantage point.
    pub timed: Vec<super::timing::TimedFlow<Addr>>,
    /// Timing samples counted but not kept, in all.
    pub unkept: u64,
}

pub(super) fn build_report(
    mut a: Analyzer,
    info: CaptureInfo,
    gathered: Gathered,
) -> (Report, Vec<usize>) {
    let pair = |a: &Analyzer| {
        let peers = pair_flows(a);
        let unanswered: Vec<u64> = peers
            .iter()
            .enumerate()
            .map(|(i, p)| p.map_or(0, |(j, _)| unanswered_reads(a, i, j as usize)))
            .collect();
        (peers, unanswered)
    };
    // With thousands of flows, one pool of `report_threads` for the whole
    // report; the timing logs are sorted while the flows are paired
    // (neither reads what the other writes: 8-9 ms each with 131 472
    // flows).
    let pool = super::flows_pool(a.report_threads, a.flows.len());
    let mut logs = std::mem::take(&mut a.logs);
    let (peers, unanswered) = match &pool {
        Some(pool) => pool.install(|| rayon::join(|| logs.par_sort(), || pair(&a)).1),
        None => {
            logs.sort();
            pair(&a)
        }
    };
    a.logs = logs;
    let (mut flows, mut keyed) = flow_reports(&mut a, pool.as_ref());
    let mut text = AddrText::default();
    // Sort by trouble; `order[new] = old`, `pos[old] = new`.
    // The keys in a list of their own: sorting by keys read from the
    // reports (936 bytes each) missed the cache at every comparison once
    // there were thousands of flows.
    keyed.sort_unstable();
    let order: Vec<usize> = keyed.into_iter().map(|(_, _, i)| i).collect();
    let mut pos = vec![0usize; flows.len()];
    for (new, &old) in order.iter().enumerate() {
        pos[old] = new;
    }
    let mut connections = Vec::new();
    for (old, p) in peers.iter().enumerate() {
        match p {
            Some((other, by)) => {
                let other = *other as usize;
                // The other flow's own report has its addresses as text.
                let o = &flows[other];
                flows[old].peer = Some(PeerRef {
                    src: o.src.clone(),
                    dst: o.dst.clone(),
                    destqp: o.destqp,
                    paired_by: *by,
                });
                flows[old].unanswered_reads = unanswered[old];
                let (x, y) = (pos[old], pos[other]);
                if x < y {
                    let (f, g) = (&flows[old], &flows[other]);
                    let ulp = conn_ulp(&a, old, other);
                    connections.push(Connection {
                        flows: [x, y],
                        paired_by: *by,
                        ecn_ce: f.ecn_ce + g.ecn_ce,
                        cnps: f.cnps + g.cnps,
                        ulp: ulp.map_or(crate::wire::nvme::Ulp::Unknown, |u| u.ulp),
                        ulp_by: ulp.map(|u| u.by),
                        qid: ulp.and_then(|u| u.qid),
                    });
                }
            }
            None => {
                let connected = matches!(
                    a.flows[old].transport,
                    Some(Transport::Rc | Transport::Xrc | Transport::Rd)
                );
                // A CM-established flow whose partner QPs were reused by a
                // later connection is not one-way: its partner is known.
                // (Replayed READs with no other direction in the capture
                // count as answered: it cannot be known.)
                flows[old].one_way = connected && a.cm_peer.of_flow(old as u32).is_none();
            }
        }
    }
    connections.sort_by_key(|c| c.flows);
    let mut conn_at = vec![None; flows.len()];
    for (i, c) in connections.iter().enumerate() {
        for f in c.flows {
            conn_at[f] = Some(i);
        }
    }
    let tracker = std::mem::replace(
        &mut a.nvme,
        super::nvme::Tracker::new(super::nvme::UlpRule::Auto, 0),
    );
    let nvme = tracker.report(
        |flow| conn_at[pos[flow as usize]],
        |addr| text.get(addr).to_string(),
    );
    // In place: moving the reports into new vectors cost two more copies
    // of them in memory not yet touched (0.3 ms of 1024 flows' 0.6).
    permute(&mut flows, &order);

    let t = &a.totals;
    let icrc_summarised = hints::icrc_not_preserved(t.icrc_errors, t.roce_frames, t.truncated);
    if icrc_summarised {
        // One hint says it; an event per frame would bury the others.
        for f in &mut flows {
            f.events.retain(|e| e.kind != EventKind::BadIcrc);
        }
    }
    let first = t.first_ts.unwrap_or(0);
    let duration = t.last_ts.saturating_sub(first);
    let pfc = pfc_report(&a, &pos, duration);
    let vantage = super::timing::vantage(&gathered.timed);
    let warnings = warnings(&a, info.warnings, gathered.unkept);
    let capture = CaptureSummary {
        file: info.file,
        files: info.files,
        format: info.format,
        frames: t.frames,
        roce_frames: t.roce_frames,
        first_ts_ns: first,
        last_ts_ns: t.last_ts,
        duration_ns: duration,
        ts_resolution_ns: info.ts_resolution_ns,
        truncated_frames: t.truncated,
        device_lost: t.device_lost,
        malformed_frames: t.malformed,
        icrc_errors: t.icrc_errors,
        duplicate_frames: t.duplicates,
        events_dropped: a.budget.events_dropped,
        flows_dropped: a.flows_dropped.count(),
        untracked_frames: t.untracked_frames,
        ud_sources_dropped: a.budget.ud_sources_dropped.count(),
        pause_sources_dropped: a.pauses.sources_dropped.count(),
        intervals_dropped: a.pauses.intervals_dropped,
        cm_dropped: t.cm_dropped,
        pfc_frames: a.pauses.pfc_frames,
        pause_frames: a.pauses.pause_frames,
        cm_messages: t.cm_messages,
        flows: flows.len() as u64,
        one_way_flows: flows.iter().filter(|f| f.one_way).count() as u64,
        vantage: vantage.map(|v| v.0),
        vantage_host: vantage.and_then(|v| v.1).map(|h| text.get(h).to_string()),
        warnings,
        display_filter: None,
        matching_frames: None,
    };
    let mut report = Report {
        schema: SCHEMA,
        capture,
        flows,
        connections,
        pfc,
        nvme,
        other: a.other.report(),
        hints: Vec::new(),
        notes: Vec::new(),
    };
    report.hints = hints::hints(&report);
    // What is left of the analysis is thousands of allocations (every
    // flow's PSN windows, the maps): freeing them took 0.3-0.5 ms of the
    // 1.5-2 ms that building the report of a 1024-flow capture takes, and
    // nothing waits for it.
    if a.opts.ends_process {
        std::mem::forget(a);
    } else {
        drop_elsewhere(a);
    }
    (report, pos)
}

/// What is known of the upper-layer protocol of the connection of flows
/// `old` and `other`: the CM's word, else the NVMe-oF tracker's (which
/// also knows the queue id from a Fabrics Connect).
fn conn_ulp(a: &Analyzer, old: usize, other: usize) -> Option<super::report::ConnUlp> {
    let tracked = a
        .nvme
        .ulp_of(old as u32)
        .or_else(|| a.nvme.ulp_of(other as u32));
    match a.cm_ulp.get(&a.flows[old].key).copied() {
        Some(mut u) => {
            if u.qid.is_none() {
                u.qid = tracked.and_then(|t| t.1);
            }
            Some(u)
        }
        None => tracked.map(|(by, qid)| super::report::ConnUlp {
            ulp: crate::wire::nvme::Ulp::Nvme,
            by,
            qid,
            commands: true,
        }),
    }
}

/// How the warnings about the report's lists (events, pause intervals)
/// end: the lists were cut, the counts were not. They concern the report
/// alone; `packets` leaves them out.
const LISTS_CUT: &str = "are not listed (the summary counts them all)";

/// Whether warning `w` says only that a list of the report was cut.
pub fn about_report_lists(w: &str) -> bool {
    w.ends_with(LISTS_CUT)
}

/// The warnings of the capture file, then the analysis's: every budget
/// that ran out, and timestamps out of order.
fn warnings(a: &Analyzer, mut w: Vec<String>, unkept: u64) -> Vec<String> {
    let l = &a.opts.limits;
    let t = &a.totals;
    if t.device_lost > 0 {
        w.push(format!(
            "the capture device reports {} lost (ERF loss counters): PSN gaps may be the capture's, not the network's",
            crate::units::count(t.device_lost, "record", "records")
        ));
    }
    let about = |exact: bool| if exact { "" } else { "about " };
    if a.flows_dropped.count() > 0 {
        w.push(format!(
            "{}{} flows beyond --max-flows {} were not analysed ({} frames counted only)",
            about(a.flows_dropped.is_exact()),
            a.flows_dropped.count(),
            l.flows,
            t.untracked_frames
        ));
    }
    let tcp_beyond = a.other.conversations_dropped();
    if tcp_beyond > 0 {
        w.push(format!(
            "{tcp_beyond} TCP conversations beyond --max-flows {} were not followed (their frames are counted under TCP only)",
            l.flows
        ));
    }
    if a.budget.ud_sources_dropped.count() > 0 {
        w.push(format!(
            "{}{} UD source QPs beyond --max-ud-sources {} had their PSNs not followed (their frames are counted on their flows)",
            about(a.budget.ud_sources_dropped.is_exact()),
            a.budget.ud_sources_dropped.count(),
            l.ud_sources
        ));
    }
    if a.pauses.sources_dropped.count() > 0 {
        w.push(format!(
            "{}{} (MAC, priority) pause sources beyond --max-pause-sources {} were not tracked",
            about(a.pauses.sources_dropped.is_exact()),
            a.pauses.sources_dropped.count(),
            l.pause_sources
        ));
    }
    if a.pauses.intervals_dropped > 0 {
        w.push(format!(
            "{} pause intervals beyond --max-intervals {} {LISTS_CUT}",
            a.pauses.intervals_dropped, l.intervals
        ));
    }
    if t.cm_dropped > 0 {
        w.push(format!(
            "{} CM requests were not remembered: more than --max-cm-pending {} were waiting for their reply",
            t.cm_dropped, l.cm_pending
        ));
    }
    if unkept > 0 {
        w.push(format!(
            "{unkept} timing samples beyond --max-timing-samples {} were counted but not kept: their flows' percentiles come from the samples kept",
            l.timing_samples
        ));
    }
    if let Some((asked, used)) = a.timeline.widened() {
        w.push(format!(
            "--timeline {} would split the capture in more than {} bins: its throughput bins are {} wide",
            crate::units::human_ns(asked),
            super::throughput::MAX_FIXED_BINS,
            crate::units::human_ns(used)
        ));
    }
    if a.budget.events_dropped > 0 {
        w.push(format!(
            "{} events beyond --max-events-total {} {LISTS_CUT}",
            a.budget.events_dropped, l.events_total
        ));
    }
    if t.answers_unmatched > 0 {
        w.push(format!(
            "{} ACKs, NAKs and READ responses were not matched to the request flow they answer: with no CM and many QPs between the same two hosts, finding it would have looked at more request flows than the analysis allows ({} looks, and {} more a frame); their round trips and completions are missing",
            t.answers_unmatched,
            super::MATCH_LOOKS_FIRST,
            super::MATCH_LOOKS_PER_FRAME
        ));
    }
    if t.ts_backwards > 0 {
        w.push(format!(
            "{} stamped earlier than the frame before {} (the capture is not in time order); the capture's span runs from its earliest to its latest timestamp",
            crate::units::count(t.ts_backwards, "frame is", "frames are"),
            if t.ts_backwards == 1 { "it" } else { "them" }
        ));
    }
    w
}

/// The `pfc` part of the report; `pos` maps flow ids to report indexes.
fn pfc_report(a: &Analyzer, pos: &[usize], duration: u64) -> PfcReport {
    let threshold = a.opts.storm_threshold_ns;
    let intervals: Vec<IntervalReport> = a
        .pauses
        .closed
        .iter()
        .map(|i| {
            let d = i.end_ns - i.start_ns;
            IntervalReport {
                src_mac: crate::wire::MacAddr(i.key.mac).to_string(),
                priority: i.key.priority,
                start_ns: i.start_ns,
                end_ns: i.end_ns,
                ended_by: i.ended_by,
                duration_ns: d,
                start_frame: i.start_frame,
                end_frame: i.end_frame,
                frames: i.frames,
                flows: i.flows.iter().map(|&f| pos[f as usize]).collect(),
                flows_total: i.flows_total,
                storm: d > threshold,
                reaction: i.reaction,
            }
        })
        .collect();
    // The share counts only the part of each interval inside the capture:
    // an interval left open at the end runs to its expiry, which may lie
    // past the last frame.
    let mut keyed: Vec<_> = a
        .pauses
        .summary
        .iter()
        .filter(|(_, s)| s.intervals > 0)
        .collect();
    keyed.sort_by_key(|(_, s)| s.first_seen);
    let mut summary: Vec<PauseSummary> = keyed
        .into_iter()
        .map(|(k, s)| PauseSummary {
            src_mac: crate::wire::MacAddr(k.mac).to_string(),
            priority: k.priority,
            intervals: s.intervals,
            paused_ns: s.paused_ns,
            fraction: if duration > 0 {
                (s.paused_in_capture_ns as f64 / duration as f64).min(1.0)
            } else {
                0.0
            },
            longest_ns: s.longest_ns,
            storm: s.storms > 0,
            reaction: s.reaction,
        })
        .collect();
    summary.sort_by(|x, y| {
        y.paused_ns
            .cmp(&x.paused_ns)
            .then(x.src_mac.cmp(&y.src_mac))
    });
    let ((link_speed_bps, link_speed_from), link_speeds) =
        a.speeds.summary(a.opts.link_speed.fallback());
    PfcReport {
        link_speed_bps,
        link_speed_from,
        link_speeds,
        frames: a.pauses.pfc_frames + a.pauses.pause_frames,
        storm_threshold_ns: threshold,
        intervals,
        summary,
        storms: a.pauses.storms,
    }
}

/// Puts `v[order[i]]` at `i` for every `i`, in place; `order` is a
/// permutation of `0..v.len()`. Each cycle of the permutation is walked
/// once, swapping its elements along.
fn permute<T>(v: &mut [T], order: &[usize]) {
    debug_assert_eq!(v.len(), order.len());
    let mut done = vec![false; v.len()];
    for start in 0..v.len() {
        let mut j = start;
        while !done[j] {
            done[j] = true;
            let k = order[j];
            if k == start {
                break;
            }
            v.swap(j, k);
            j = k;
        }
    }
}

/// Drops `value` on a thread of its own, or here if none can be started.
fn drop_elsewhere<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new().spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{Sender, channel};
    use std::time::Duration;

    struct Tell(Sender<std::thread::ThreadId>);

    impl Drop for Tell {
        fn drop(&mut self) {
            let _ = self.0.send(std::thread::current().id());
        }
    }

    #[test]
    fn permute_gathers_in_place() {
        let order = [3, 0, 4, 1, 2, 6, 5, 7];
        let mut v: Vec<char> = "abcdefgh".chars().collect();
        let want: Vec<char> = order.iter().map(|&i| v[i]).collect();
        permute(&mut v, &order);
        assert_eq!(v, want);
        let mut one = vec!['x'];
        permute(&mut one, &[0]);
        assert_eq!(one, ['x']);
    }

    #[test]
    fn dropped_elsewhere_is_dropped_on_another_thread() {
        let (tx, rx) = channel();
        drop_elsewhere(Tell(tx));
        let by = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("never dropped");
        assert_ne!(by, std::thread::current().id());
    }

    #[test]
    fn paired_candidates_are_stepped_over_once() {
        let mut c = Candidates {
            list: (0..10).map(|i| (5, i)).collect(),
            skip: (0..10).collect(),
        };
        for i in 0..9 {
            let at = c.next_free(0);
            assert_eq!(at, i);
            c.take(at);
        }
        assert_eq!(c.next_free(0), 9);
        c.take(9);
        assert_eq!(c.next_free(3), 10, "none left");
    }
}
