//! Pairing the two directions of each connection, and assembling the report.

use std::net::IpAddr;

use rustc_hash::FxHashMap;

use super::flow::FlowState;
use super::hints;
use super::psn::{PSN_MASK, WINDOW, psn_diff};
use super::report::{
    CaptureSummary, Connection, EventKind, FlowReport, IntervalReport, PairedBy, PauseSummary,
    PeerRef, PfcReport, Report, SCHEMA,
};
use super::{Analyzer, CaptureInfo};
use crate::output::json::mac_string;
use crate::wire::Transport;

/// Peer of each flow (by id) and how it was found.
fn pair_flows(a: &Analyzer) -> Vec<Option<(u32, PairedBy)>> {
    let mut peer: Vec<Option<(u32, PairedBy)>> = vec![None; a.flows.len()];
    // 1. RDMA CM REQ/REP.
    for (k, other) in &a.cm_peer {
        if let (Some(x), Some(y)) = (a.find_flow(k), a.find_flow(other))
            && peer[x as usize].is_none()
            && peer[y as usize].is_none()
        {
            peer[x as usize] = Some((y, PairedBy::Cm));
            peer[y as usize] = Some((x, PairedBy::Cm));
        }
    }
    // 2. Traffic: ACK/NAK/READ response PSNs fall inside a data flow's
    // request PSNs between the same two hosts. The data flows of each host
    // pair are sorted by the PSN they would send next, so a response finds
    // the nearest ones by binary search: many QPs between two hosts cost
    // n log n, not n squared.
    let mut by_hosts: FxHashMap<(IpAddr, IpAddr), Vec<(u32, u32)>> = FxHashMap::default();
    for (i, f) in a.flows.iter().enumerate() {
        if let (Some(next), Some(_)) = (f.req_next(), f.req_first_psn) {
            by_hosts
                .entry((f.key.src, f.key.dst))
                .or_default()
                .push((next & PSN_MASK, i as u32));
        }
    }
    for cands in by_hosts.values_mut() {
        cands.sort_unstable();
    }
    let mut responders: Vec<u32> = (0..a.flows.len() as u32)
        .filter(|&i| a.flows[i as usize].ack_last_psn.is_some())
        .collect();
    responders.sort_by_key(|&i| a.flows[i as usize].first_frame);
    for r in responders {
        if peer[r as usize].is_some() {
            continue;
        }
        let f = &a.flows[r as usize];
        let Some(ack) = f.ack_last_psn else { continue };
        let Some(cands) = by_hosts.get(&(f.key.dst, f.key.src)) else {
            continue;
        };
        // Candidates whose next PSN is 0..=WINDOW ahead of the response,
        // nearest first (ties by flow id, as the list is sorted).
        let ack = ack & PSN_MASK;
        let top = ack + WINDOW;
        let from = |psn: u32| cands.partition_point(|&(next, _)| next < psn);
        let upto = |psn: u32| cands.partition_point(|&(next, _)| next <= psn);
        let (near, wrapped) = if top <= PSN_MASK {
            (&cands[from(ack)..upto(top)], &cands[..0])
        } else {
            (&cands[from(ack)..], &cands[..upto(top & PSN_MASK)])
        };
        let best = near.iter().chain(wrapped).find(|&&(_, c)| {
            let g = &a.flows[c as usize];
            peer[c as usize].is_none()
                && c != r
                && g.req_first_psn
                    .is_some_and(|first| psn_diff(ack, first) >= -1)
        });
        if let Some(&(_, c)) = best {
            peer[r as usize] = Some((c, PairedBy::Traffic));
            peer[c as usize] = Some((r, PairedBy::Traffic));
        }
    }
    peer
}

/// Addresses as text, each formatted once: a capture has far fewer hosts
/// than flows, and formatting an IPv6 address costs a thousand instructions.
#[derive(Default)]
struct AddrText(FxHashMap<IpAddr, String>);

impl AddrText {
    fn get(&mut self, a: IpAddr) -> String {
        self.0.entry(a).or_insert_with(|| a.to_string()).clone()
    }
}

/// The report of a flow; its episodes and events move into it.
fn flow_report(f: &mut FlowState, text: &mut AddrText) -> FlowReport {
    FlowReport {
        src: text.get(f.key.src),
        dst: text.get(f.key.dst),
        destqp: f.key.dest_qp,
        version: f.version.as_str(),
        transport: f.transport.map_or("CNP", Transport::as_str),
        packets: f.packets,
        bytes: f.bytes,
        payload_bytes: f.payload_bytes,
        duplicates: f.duplicates,
        first_frame: f.first_frame,
        first_ts_ns: f.first_ts,
        last_ts_ns: f.last_ts,
        retransmits: f.retransmits,
        out_of_order: f.out_of_order,
        missing: f.missing(),
        psn_reuse: f.psn_reuse,
        ecn_ce: f.ecn_ce,
        cnps: f.cnps,
        naks: f.naks,
        retransmit_episodes: f.episode_count,
        episodes: std::mem::take(&mut f.episodes),
        ce_to_cnp: f.ce_to_cnp.stats(),
        pmtu: f.pmtu,
        priority: f.priority,
        peer: None,
        one_way: false,
        bad_icrc: f.bad_icrc,
        unanswered_reads: 0,
        events: std::mem::take(&mut f.events),
        events_dropped: f.events_dropped,
    }
}

pub(super) fn build_report(mut a: Analyzer, info: CaptureInfo) -> (Report, Vec<usize>) {
    let peers = pair_flows(&a);
    let mut text = AddrText::default();
    let mut flows: Vec<FlowReport> = a
        .flows
        .iter_mut()
        .map(|f| flow_report(f, &mut text))
        .collect();
    // Sort by trouble; `order[new] = old`, `pos[old] = new`.
    let mut order: Vec<usize> = (0..flows.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(flows[i].trouble()), flows[i].first_frame));
    let mut pos = vec![0usize; flows.len()];
    for (new, &old) in order.iter().enumerate() {
        pos[old] = new;
    }
    let mut connections = Vec::new();
    for (old, p) in peers.iter().enumerate() {
        match p {
            Some((other, by)) => {
                let o = &a.flows[*other as usize].key;
                flows[old].peer = Some(PeerRef {
                    src: text.get(o.src),
                    dst: text.get(o.dst),
                    destqp: o.dest_qp,
                    paired_by: *by,
                });
                // READs replayed on this flow that the other direction
                // never answered: no READ response at or after their PSN.
                let resp_next = a.flows[*other as usize].resp_next();
                flows[old].unanswered_reads = a.flows[old]
                    .replayed_reads
                    .iter()
                    .filter(|&&p| resp_next.is_none_or(|n| psn_diff(n, p) <= 0))
                    .count() as u64;
                let (x, y) = (pos[old], pos[*other as usize]);
                if x < y {
                    let (f, g) = (&a.flows[old], &a.flows[*other as usize]);
                    connections.push(Connection {
                        flows: [x, y],
                        paired_by: *by,
                        ecn_ce: f.ecn_ce + g.ecn_ce,
                        cnps: f.cnps + g.cnps,
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
                flows[old].one_way = connected && !a.cm_peer.contains_key(&a.flows[old].key);
                // Replayed READs with no other direction in the capture:
                // whether they were answered is not known.
            }
        }
    }
    connections.sort_by_key(|c| c.flows);
    // In place: moving the reports into new vectors cost two more copies
    // of them in memory not yet touched (0.3 ms of 1024 flows' 0.6).
    permute(&mut flows, &order);

    let t = &a.totals;
    let mut warnings = info.warnings;
    if a.budget.dropped_total > 0 {
        warnings.push(format!(
            "{} events not listed: the report keeps {} in all (--max-events-total); every one is counted",
            a.budget.dropped_total, a.opts.max_events_total
        ));
    }
    if hints::icrc_not_preserved(t.icrc_errors, t.roce_frames, t.truncated) {
        // One hint says it; an event per frame would bury the others.
        for f in &mut flows {
            f.events.retain(|e| e.kind != EventKind::BadIcrc);
        }
    }
    let first = t.first_ts.unwrap_or(0);
    let duration = t.last_ts.saturating_sub(first);
    let threshold = a.opts.storm_threshold_ns;
    let intervals: Vec<IntervalReport> = a
        .pauses
        .closed
        .iter()
        .map(|i| {
            let d = i.end_ns - i.start_ns;
            IntervalReport {
                src_mac: mac_string(&i.key.mac),
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
            }
        })
        .collect();
    // Per (MAC, priority), found through a map: a capture may hold pauses
    // from many thousands of MACs.
    let mut summary: Vec<PauseSummary> = Vec::new();
    let mut slot_of: FxHashMap<(&str, Option<u8>), usize> = FxHashMap::default();
    let mut in_capture = Vec::new();
    for i in &intervals {
        let at = *slot_of
            .entry((i.src_mac.as_str(), i.priority))
            .or_insert_with(|| {
                summary.push(PauseSummary {
                    src_mac: i.src_mac.clone(),
                    priority: i.priority,
                    intervals: 0,
                    paused_ns: 0,
                    fraction: 0.0,
                    longest_ns: 0,
                    storm: false,
                });
                in_capture.push(0u64);
                summary.len() - 1
            });
        let s = &mut summary[at];
        s.intervals += 1;
        s.paused_ns = s.paused_ns.saturating_add(i.duration_ns);
        s.longest_ns = s.longest_ns.max(i.duration_ns);
        s.storm |= i.storm;
        // The share counts only the part of each interval inside the
        // capture: an interval left open at the end runs to its expiry,
        // which may lie past the last frame.
        let (from, to) = (i.start_ns.max(first), i.end_ns.min(t.last_ts));
        in_capture[at] += to.saturating_sub(from);
    }
    for (s, inside) in summary.iter_mut().zip(&in_capture) {
        s.fraction = if duration > 0 {
            (*inside as f64 / duration as f64).min(1.0)
        } else {
            0.0
        };
    }
    summary.sort_by(|x, y| {
        y.paused_ns
            .cmp(&x.paused_ns)
            .then(x.src_mac.cmp(&y.src_mac))
    });
    let storms = intervals.iter().filter(|i| i.storm).count() as u64;
    let pfc = PfcReport {
        link_speed_bps: a.opts.link_speed_bps,
        frames: a.pauses.pfc_frames + a.pauses.pause_frames,
        storm_threshold_ns: threshold,
        intervals,
        summary,
        storms,
    };
    let capture = CaptureSummary {
        file: info.file,
        format: info.format,
        frames: t.frames,
        roce_frames: t.roce_frames,
        first_ts_ns: first,
        last_ts_ns: t.last_ts,
        duration_ns: duration,
        ts_resolution_ns: info.ts_resolution_ns,
        truncated_frames: t.truncated,
        malformed_frames: t.malformed,
        icrc_errors: t.icrc_errors,
        duplicate_frames: t.duplicates,
        events_dropped: a.budget.dropped_total,
        pfc_frames: a.pauses.pfc_frames,
        pause_frames: a.pauses.pause_frames,
        cm_messages: t.cm_messages,
        flows: flows.len() as u64,
        one_way_flows: flows.iter().filter(|f| f.one_way).count() as u64,
        warnings,
    };
    let mut report = Report {
        schema: SCHEMA,
        capture,
        flows,
        connections,
        pfc,
        hints: Vec::new(),
    };
    report.hints = hints::hints(&report);
    // What is left of the analysis is thousands of allocations (every
    // flow's PSN windows, the maps): freeing them took 0.3-0.5 ms of the
    // 1.5-2 ms that building the report of a 1024-flow capture takes, and
    // nothing waits for it.
    drop_elsewhere(a);
    (report, pos)
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
}
