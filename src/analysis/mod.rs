//! Packets to flows, PSN state, pauses and CNP/ECN: the only stateful layer.
//! Memory grows with the number of flows, never with the number of packets.

mod facts;
mod flow;
pub mod hints;
mod index;
pub mod marks;
mod pairing;
pub mod pfc;
pub mod psn;
pub mod report;

use std::net::IpAddr;

use rustc_hash::FxHashMap;

pub use facts::{Body, Facts, RoceFacts};
use flow::{EventBudget, FlowState, RecentNak};
pub use flow::{Fingerprint, FlowKey};
use index::{FlowIndex, hash_key};
pub use marks::{FrameAnalysis, Mark, Marks, NO_FLOW};
pub use report::Report;

use crate::dissect::{Packet, RoceVersion};
use crate::wire::aeth::AckKind;
use crate::wire::mad::CmMessage;
use crate::wire::pause::PauseRepr;
use crate::wire::{Operation, Transport};
use pfc::{PauseKey, PauseTimeline};
use psn::Verdict;
use report::EventKind;

/// Settings of the analysis (the report's command-line options).
#[derive(Debug, Clone)]
pub struct AnalysisOptions {
    pub link_speed_bps: u64,
    /// PMTU when none can be inferred (`--pmtu`).
    pub pmtu: Option<u32>,
    /// Identical frames closer than this are capture duplicates.
    pub dup_window_ns: u64,
    /// A pause longer than this is a storm.
    pub storm_threshold_ns: u64,
    /// DSCP to priority, for untagged frames.
    pub dscp_map: [Option<u8>; 64],
    /// Events kept per flow; later ones are counted in `events_dropped`.
    pub max_events: usize,
    /// Events kept in all (`--max-events-total`); past it they are counted
    /// in `capture.events_dropped` with a warning.
    pub max_events_total: u64,
}

/// Events kept in all by default: about a megabyte of JSON.
pub const DEFAULT_MAX_EVENTS_TOTAL: u64 = 10_000;

/// The common "trust DSCP" map: 24-31 → 3 (RoCE), 48-55 → 6 (CNP).
pub fn default_dscp_map() -> [Option<u8>; 64] {
    let mut m = [None; 64];
    for (d, slot) in m.iter_mut().enumerate() {
        *slot = match d {
            24..=31 => Some(3),
            48..=55 => Some(6),
            _ => None,
        };
    }
    m
}

/// Parses `24-31:3,48-55:6,46:5`.
pub fn parse_dscp_map(s: &str) -> Result<[Option<u8>; 64], String> {
    let mut m = [None; 64];
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (range, prio) = part
            .split_once(':')
            .ok_or_else(|| format!("'{part}': expected DSCP[-DSCP]:PRIORITY"))?;
        let prio: u8 = prio
            .trim()
            .parse()
            .ok()
            .filter(|p| *p < 8)
            .ok_or_else(|| format!("'{part}': priority must be 0-7"))?;
        let (lo, hi) = match range.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (range.trim(), range.trim()),
        };
        let lo: usize = lo.parse().map_err(|_| format!("'{part}': bad DSCP"))?;
        let hi: usize = hi.parse().map_err(|_| format!("'{part}': bad DSCP"))?;
        if lo > hi || hi > 63 {
            return Err(format!("'{part}': DSCP must be 0-63"));
        }
        for slot in &mut m[lo..=hi] {
            *slot = Some(prio);
        }
    }
    Ok(m)
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            link_speed_bps: 100_000_000_000,
            pmtu: None,
            dup_window_ns: 2_000,
            storm_threshold_ns: 100_000_000,
            dscp_map: default_dscp_map(),
            max_events: 1000,
            max_events_total: DEFAULT_MAX_EVENTS_TOTAL,
        }
    }
}

/// Facts about the capture file that the packets do not carry.
#[derive(Debug, Clone, Default)]
pub struct CaptureInfo {
    pub file: String,
    pub format: String,
    pub ts_resolution_ns: u64,
    pub warnings: Vec<String>,
}

/// Unordered pair of hosts: PMTU is a property of the path.
fn host_pair(a: IpAddr, b: IpAddr) -> (IpAddr, IpAddr) {
    if a <= b { (a, b) } else { (b, a) }
}

/// A flow's PMTU as inferred so far (that of its host pair), cached in the
/// flow until a new one is learnt anywhere (`generation` moves on). `None`
/// until something shows it: `--pmtu` is only the fallback for what is
/// still unknown when it is needed (see [`FlowState::request`]).
#[inline]
fn flow_pmtu(
    f: &mut FlowState,
    generation: u64,
    pmtus: &FxHashMap<(IpAddr, IpAddr), u32>,
) -> Option<u32> {
    if f.pmtu_generation == generation {
        return f.pmtu_cached;
    }
    refresh_pmtu(f, generation, pmtus)
}

#[inline(never)]
fn refresh_pmtu(
    f: &mut FlowState,
    generation: u64,
    pmtus: &FxHashMap<(IpAddr, IpAddr), u32>,
) -> Option<u32> {
    f.pmtu_generation = generation;
    f.pmtu_cached = pmtus.get(&host_pair(f.key.src, f.key.dst)).copied();
    f.pmtu_cached
}

/// Capture-wide counters.
#[derive(Debug, Default, Clone)]
struct Totals {
    frames: u64,
    roce_frames: u64,
    first_ts: Option<u64>,
    last_ts: u64,
    truncated: u64,
    malformed: u64,
    icrc_errors: u64,
    duplicates: u64,
    cm_messages: u64,
}

/// Consumes packets in capture order and builds the [`Report`].
pub struct Analyzer {
    opts: AnalysisOptions,
    totals: Totals,
    flows: Vec<FlowState>,
    index: FlowIndex,
    /// PMTU per host pair, from FIRST/MIDDLE payloads and CM REQs.
    pmtu: FxHashMap<(IpAddr, IpAddr), u32>,
    /// Recent NAKs per (NAK sender, NAK receiver).
    naks: FxHashMap<(IpAddr, IpAddr), Vec<RecentNak>>,
    /// CM REQs by local communication ID: (src, dst, local QPN).
    cm_reqs: FxHashMap<u32, (IpAddr, IpAddr, u32)>,
    /// Flow pairs learnt from CM, both ways.
    cm_peer: FxHashMap<FlowKey, FlowKey>,
    /// Flows with a CE mark still waiting for its CNP, per (src, dst).
    pending_ce: FxHashMap<(IpAddr, IpAddr), Vec<u32>>,
    pauses: PauseTimeline,
    /// Bumped whenever a PMTU is learnt, so flows can cache theirs.
    pmtu_generation: u64,
    budget: EventBudget,
    /// Every ICRC checked so far was wrong: the capture path does not keep
    /// them, and an event per frame would say nothing the hint does not.
    icrc_summarised: bool,
}

const RECENT_NAKS: usize = 32;
/// Bad ICRCs in a row from the first RoCE frame after which they are no
/// longer listed one by one (see [`hints::icrc_not_preserved`]).
const ICRC_SUMMARY_AFTER: u64 = 64;

impl Analyzer {
    pub fn new(opts: AnalysisOptions) -> Self {
        Analyzer {
            totals: Totals::default(),
            flows: Vec::new(),
            index: FlowIndex::default(),
            pmtu: FxHashMap::default(),
            naks: FxHashMap::default(),
            cm_reqs: FxHashMap::default(),
            cm_peer: FxHashMap::default(),
            pending_ce: FxHashMap::default(),
            pauses: PauseTimeline::default(),
            pmtu_generation: 1,
            icrc_summarised: false,
            budget: EventBudget {
                per_flow: opts.max_events,
                total_left: opts.max_events_total,
                dropped_total: 0,
            },
            opts,
        }
    }

    pub fn options(&self) -> &AnalysisOptions {
        &self.opts
    }

    /// The flow a packet belongs to (for `packets --flow`).
    pub fn flow_key(pkt: &Packet<'_>) -> Option<FlowKey> {
        let bth = pkt.bth?;
        let (src, dst) = pkt.endpoints()?;
        Some(FlowKey {
            src,
            dst,
            dest_qp: bth.dest_qp,
        })
    }

    /// Feeds one packet; returns what the analysis found in it.
    pub fn packet(&mut self, pkt: &Packet<'_>) -> FrameAnalysis {
        self.observe(&Facts::of(pkt))
    }

    /// [`packet`](Self::packet) for a packet dissected elsewhere (another
    /// thread): its [`Facts`].
    pub fn observe(&mut self, facts: &Facts) -> FrameAnalysis {
        let t = &mut self.totals;
        t.frames += 1;
        if t.first_ts.is_none() {
            t.first_ts = Some(facts.ts_ns);
        }
        t.last_ts = t.last_ts.max(facts.ts_ns);
        if facts.has(Facts::TRUNCATED) {
            t.truncated += 1;
        }
        if facts.has(Facts::MALFORMED) {
            t.malformed += 1;
        }
        if facts.has(Facts::BAD_ICRC) {
            t.icrc_errors += 1;
        }
        if facts.has(Facts::ROCE) {
            t.roce_frames += 1;
        }
        match &facts.body {
            Body::Other => FrameAnalysis::default(),
            Body::Pause { src_mac, pause } => {
                if let Some(mac) = src_mac {
                    self.pause_frame(facts, *mac, pause);
                }
                FrameAnalysis::default()
            }
            Body::Roce(r) => self.roce_packet(facts, r),
        }
    }

    fn pause_frame(&mut self, pkt: &Facts, mac: [u8; 6], p: &PauseRepr) {
        let bps = self.opts.link_speed_bps;
        match p {
            PauseRepr::Pfc(pfc) => {
                self.pauses.pfc_frames += 1;
                for prio in 0..8u8 {
                    if pfc.enabled(prio) {
                        let key = PauseKey {
                            mac,
                            priority: Some(prio),
                        };
                        self.pauses.apply(
                            key,
                            pfc.times[usize::from(prio)],
                            pkt.ts_ns,
                            pkt.number,
                            bps,
                        );
                    }
                }
            }
            PauseRepr::Pause { time } => {
                self.pauses.pause_frames += 1;
                let key = PauseKey {
                    mac,
                    priority: None,
                };
                self.pauses.apply(key, *time, pkt.ts_ns, pkt.number, bps);
            }
            PauseRepr::Other { .. } => {}
        }
    }

    /// The id of the flow with `key`, if it has been seen.
    fn find_flow(&self, key: &FlowKey) -> Option<u32> {
        let flows = &self.flows;
        self.index
            .get(key, hash_key(key), |id| &flows[id as usize].key)
    }

    fn flow_id(&mut self, key: &FlowKey, hash: u64, pkt: &Facts, version: RoceVersion) -> u32 {
        let flows = &self.flows;
        if let Some(id) = self.index.get(key, hash, |id| &flows[id as usize].key) {
            return id;
        }
        let id = self.flows.len() as u32;
        self.flows.push(FlowState::new(*key, version, pkt));
        self.index.insert(hash, id);
        id
    }

    #[cold]
    #[inline(never)]
    fn learn_pmtu(&mut self, key: &FlowKey, pmtu: u32) {
        if self.pmtu.insert(host_pair(key.src, key.dst), pmtu) != Some(pmtu) {
            self.pmtu_generation += 1;
        }
    }

    fn roce_packet(&mut self, pkt: &Facts, r: &RoceFacts) -> FrameAnalysis {
        // Borrowed, not copied: `r` lives in the caller's batch.
        let (bth, key, fp) = (&r.bth, &r.key, &r.fingerprint);
        let id = self.flow_id(key, r.flow_hash, pkt, r.version);
        let dup_window = self.opts.dup_window_ns;
        let op = bth.opcode.operation();
        let mut out = FrameAnalysis {
            flow: id,
            ..FrameAnalysis::default()
        };

        // Capture duplicates count in packets/bytes/duplicates only.
        let learnt = {
            let f = &mut self.flows[id as usize];
            f.packets += 1;
            f.bytes += u64::from(pkt.len);
            if f.is_duplicate(fp, pkt.ts_ns, dup_window) {
                f.duplicates += 1;
                self.totals.duplicates += 1;
                out.marks.set(Mark::Duplicate);
                return out;
            }
            f.remember(fp, pkt.ts_ns);
            // PMTU from FIRST/MIDDLE payloads, which are exactly one PMTU.
            match (op, r.payload_len) {
                (Some(o), Some(n))
                    if o.is_first_or_middle()
                        && n > 0
                        && flow_pmtu(f, self.pmtu_generation, &self.pmtu) != Some(n) =>
                {
                    Some(n)
                }
                _ => None,
            }
        };
        if let Some(n) = learnt {
            self.learn_pmtu(key, n);
        }
        if let Some(cm) = &r.cm {
            self.cm_message(key, cm);
        }

        // From here on the flow is borrowed once, beside the other fields
        // it meets: each `self.flows[id]` was a bounds check and a reload.
        let Analyzer {
            opts,
            flows,
            pmtu: pmtus,
            pmtu_generation,
            naks,
            pending_ce,
            pauses,
            budget,
            totals,
            icrc_summarised,
            ..
        } = self;
        let f = &mut flows[id as usize];
        let pmtu = flow_pmtu(f, *pmtu_generation, pmtus);
        let fallback_pmtu = opts.pmtu.unwrap_or(flow::DEFAULT_PMTU);
        let priority = r
            .pcp
            .or_else(|| r.dscp.and_then(|d| opts.dscp_map[usize::from(d & 63)]));
        f.payload_bytes += u64::from(r.payload_len.unwrap_or(0));
        f.last_ts = f.last_ts.max(pkt.ts_ns);
        // CNPs ride their own priority by design; a flow's priority is that
        // of its other frames (or of its CNPs when it carries nothing else).
        if priority.is_some() && (op != Some(Operation::Cnp) || f.priority.is_none()) {
            f.priority = priority;
        }
        if pkt.has(Facts::BAD_ICRC) {
            f.bad_icrc += 1;
            out.marks.set(Mark::BadIcrc);
            if !*icrc_summarised
                && totals.icrc_errors >= ICRC_SUMMARY_AFTER
                && totals.icrc_errors + totals.truncated >= totals.roce_frames
            {
                *icrc_summarised = true;
            }
            if !*icrc_summarised {
                f.event(
                    budget,
                    EventKind::BadIcrc,
                    pkt,
                    Some(bth.psn),
                    None,
                    None,
                    None,
                );
            }
        }
        if f.transport.is_none() && bth.opcode.transport() != Transport::Cnp {
            f.transport = Some(bth.opcode.transport());
        }

        // ECN CE marks.
        if r.ecn == Some(3) {
            f.ecn_ce += 1;
            out.marks.set(Mark::Ce);
            f.event(
                budget,
                EventKind::EcnCe,
                pkt,
                Some(bth.psn),
                None,
                None,
                None,
            );
            if f.pending_ce.is_none() {
                f.pending_ce = Some(pkt.ts_ns);
                pending_ce.entry((key.src, key.dst)).or_default().push(id);
            }
        }

        let verdict = match op {
            Some(Operation::Cnp) => {
                f.cnps += 1;
                out.marks.set(Mark::Cnp);
                f.event(budget, EventKind::Cnp, pkt, Some(bth.psn), None, None, None);
                None
            }
            Some(o) if o.is_request() => Some(f.request(pkt, r, o, pmtu, fallback_pmtu, budget)),
            Some(o) if o.is_read_response() => Some(f.read_response(pkt, bth, o, budget)),
            _ => None,
        };
        match verdict {
            None | Some(Verdict::InOrder | Verdict::First | Verdict::NewMessage) => {}
            Some(Verdict::Gap { count, .. }) => {
                out.marks.set(Mark::Gap);
                out.missing = count;
            }
            Some(Verdict::OutOfOrder) => out.marks.set(Mark::OutOfOrder),
            Some(Verdict::Retransmit) => out.marks.set(Mark::Retransmission),
            Some(Verdict::PsnReuse) => out.marks.set(Mark::PsnReuse),
        }

        // ACK/NAK syndromes.
        if let Some(a) = &r.aeth {
            f.note_ack_psn(bth.psn);
            let kind = a.kind();
            match kind {
                AckKind::RnrNak => {
                    f.naks.rnr += 1;
                    out.marks.set(Mark::RnrNak);
                    f.event(
                        budget,
                        EventKind::RnrNak,
                        pkt,
                        Some(bth.psn),
                        None,
                        Some(a.value()),
                        None,
                    );
                }
                AckKind::Nak => {
                    let code = a.value();
                    match code {
                        0 => f.naks.psn_seq_err += 1,
                        1 => f.naks.invalid_request += 1,
                        2 => f.naks.remote_access += 1,
                        3 => f.naks.remote_op += 1,
                        4 => f.naks.invalid_rd += 1,
                        _ => {}
                    }
                    out.marks.set(Mark::Nak);
                    f.event(
                        budget,
                        EventKind::Nak,
                        pkt,
                        Some(bth.psn),
                        None,
                        Some(code),
                        Some(crate::wire::aeth::nak::name(code)),
                    );
                }
                _ => {}
            }
            if matches!(kind, AckKind::RnrNak | AckKind::Nak) {
                let list = naks.entry((key.src, key.dst)).or_default();
                if list.len() >= RECENT_NAKS {
                    list.remove(0);
                }
                list.push(RecentNak {
                    psn: bth.psn,
                    ts_ns: pkt.ts_ns,
                    frame: pkt.number,
                    rnr: kind == AckKind::RnrNak,
                    used: false,
                });
            }
        }

        // A replay that just started: find the NAK that asked for it.
        if f.episode_needs_trigger() {
            f.attribute_episode(naks.get_mut(&(key.dst, key.src)));
        }

        // Frames sent on a priority that the receiving port paused.
        if let (Some(prio), Some(dst)) = (priority, r.dst_mac)
            && pauses.sent(dst, prio, pkt.ts_ns, id)
        {
            out.marks.set(Mark::Paused);
        }

        // Last, as it needs the whole analysis: a CNP settles the CE marks
        // of the flow it answers (another flow; nothing above reads what
        // it changes).
        if op == Some(Operation::Cnp) {
            self.cnp_arrived(key, pkt.ts_ns);
        }
        out
    }

    #[cold]
    #[inline(never)]
    fn cm_message(&mut self, key: &FlowKey, cm: &CmMessage) {
        self.totals.cm_messages += 1;
        match *cm {
            CmMessage::Req {
                local_comm_id,
                local_qpn,
                mtu,
                ..
            } => {
                self.cm_reqs
                    .insert(local_comm_id, (key.src, key.dst, local_qpn));
                if (1..=5).contains(&mtu) && !self.pmtu.contains_key(&host_pair(key.src, key.dst)) {
                    self.learn_pmtu(key, 128u32 << mtu);
                }
            }
            CmMessage::Rep {
                remote_comm_id,
                local_qpn,
                ..
            } => {
                // REP travels B → A; the REQ went A → B from QP qa.
                if let Some(&(a, b, qa)) = self.cm_reqs.get(&remote_comm_id)
                    && a == key.dst
                    && b == key.src
                {
                    let data = FlowKey {
                        src: a,
                        dst: b,
                        dest_qp: local_qpn,
                    };
                    let back = FlowKey {
                        src: b,
                        dst: a,
                        dest_qp: qa,
                    };
                    self.cm_peer.insert(data, back);
                    self.cm_peer.insert(back, data);
                    // A new connection on QPs seen before starts new PSN
                    // sequences (rping reconnecting reuses its QP numbers).
                    for k in [data, back] {
                        if let Some(id) = self.find_flow(&k) {
                            self.flows[id as usize].new_connection();
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// A CNP on (B → A, qa) answers CE marks on A → B.
    #[cold]
    #[inline(never)]
    fn cnp_arrived(&mut self, cnp: &FlowKey, ts: u64) {
        let data_id = self
            .cm_peer
            .get(cnp)
            .and_then(|k| self.find_flow(k))
            .filter(|&id| self.flows[id as usize].pending_ce.is_some())
            .or_else(|| {
                let list = self.pending_ce.get_mut(&(cnp.dst, cnp.src))?;
                while let Some(&id) = list.first() {
                    if self.flows[id as usize].pending_ce.is_some() {
                        return Some(id);
                    }
                    list.remove(0);
                }
                None
            });
        if let Some(id) = data_id {
            let f = &mut self.flows[id as usize];
            if let Some(ce) = f.pending_ce.take() {
                f.ce_to_cnp.add(ts.saturating_sub(ce));
            }
            if let Some(list) = self.pending_ce.get_mut(&(cnp.dst, cnp.src)) {
                list.retain(|&x| x != id);
            }
        }
    }

    /// Ends the analysis and builds the report.
    pub fn finish(self, info: CaptureInfo) -> Report {
        self.finish_indexed(info).0
    }

    /// Like [`finish`](Self::finish), also giving for each flow id that
    /// [`packet`](Self::packet) returned its index in `report.flows`.
    pub fn finish_indexed(mut self, info: CaptureInfo) -> (Report, Vec<usize>) {
        for f in &mut self.flows {
            let key = f.key;
            let inferred = self.pmtu.get(&host_pair(key.src, key.dst)).copied();
            f.finish(inferred, self.opts.pmtu);
        }
        self.pauses.finish();
        pairing::build_report(self, info)
    }
}
