//! Packets to flows, PSN state, pauses and CNP/ECN: the only stateful layer.
//! Memory grows with the number of flows, never with the number of packets.

pub mod budget;
pub mod cc;
mod cm_peers;
mod facts;
mod fingerprint;
mod flow;
pub mod hints;
pub mod http;
mod index;
pub mod marks;
pub mod nvme;
pub mod other;
mod pairing;
pub mod pfc;
pub mod psn;
pub mod report;
mod requests;
mod roce_frame;
pub mod speed;
pub mod split;
pub mod stages;
pub mod tcp;
pub mod throughput;
pub mod timing;

use crate::dissect::Addr;
use std::collections::VecDeque;

/// A hash map keyed by what a capture says (addresses, QPs, MACs, CM
/// transaction ids): seeded at random for each run, so that a capture built
/// to make its keys collide cannot slow the analysis down.
pub type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// Flows below which a report's flows are built and written by one
/// thread: a thread's start (tens of microseconds) pays only for thousands.
pub const PARALLEL_FLOWS: usize = 4096;

/// A pool of up to `threads` threads for work on `flows` flows, one per
/// [`PARALLEL_FLOWS`] of them: `None` for one thread (or none to be had).
pub fn flows_pool(threads: usize, flows: usize) -> Option<rayon::ThreadPool> {
    let threads = threads.min(flows / PARALLEL_FLOWS);
    if threads < 2 {
        return None;
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .ok()
}

pub use budget::{DEFAULT_MAX_EVENTS_TOTAL, Limits};
pub use facts::{Body, Facts, RoceFacts, Upper};
use flow::{Budget, FlowState, RecentNak};
pub use flow::{Fingerprint, FlowKey};
use index::{FlowIndex, hash_key};
pub use marks::{FrameAnalysis, Mark, Marks, NO_FLOW};
pub use pairing::about_report_lists;
pub use report::{Report, Selection};
pub use speed::{LinkSpeed, SpeedFrom, SpeedUse};
pub use stages::{Stage, Stages};

use crate::dissect::{Packet, RoceVersion};
use crate::wire::aeth::AckKind;
use crate::wire::mad::CmMessage;
use crate::wire::pause::PauseRepr;
use crate::wire::{Operation, Transport};
use pfc::{PauseKey, PauseTimeline};
use psn::Verdict;
use report::EventKind;

/// The destination QP of InfiniBand multicast.
const MULTICAST_QP: u32 = 0xff_ffff;

/// Settings of the analysis (the report's command-line options).
#[derive(Debug, Clone)]
pub struct AnalysisOptions {
    /// `--link-speed`, else each interface's `if_speed`, else 100G.
    pub link_speed: LinkSpeed,
    /// PMTU when none can be inferred (`--pmtu`).
    pub pmtu: Option<u32>,
    /// Identical frames closer than this are capture duplicates.
    pub dup_window_ns: u64,
    /// A pause longer than this is a storm.
    pub storm_threshold_ns: u64,
    /// DSCP to priority, for untagged frames.
    pub dscp_map: [Option<u8>; 64],
    /// What may be kept: flows, UD source QPs, pause sources and intervals,
    /// pending CM requests, events (per flow and in all).
    pub limits: Limits,
    /// `--timeline BIN`: the throughput's bin (else about 200 per capture).
    pub timeline_bin_ns: Option<u64>,
    /// `--timeline`: each flow's throughput series in the report.
    pub timeline_series: bool,
    /// `--ulp`: which connections carry NVMe-oF when the CM does not say.
    pub ulp: nvme::UlpRule,
    /// `--cable`, `--mtu`, `--headroom`: what a paused sender's reaction
    /// is held against.
    pub reaction: pfc::ReactionLimits,
    /// `--cc-window`: the rate windows before and after a CNP.
    pub cc_window_ns: u64,
    /// The stages that run (`--skip`): all by default.
    pub stages: Stages,
    /// The process ends once the report is written: what is left of the
    /// analysis when the report is built is not freed (a capture of
    /// 131 072 flows spent 60 ms of CPU freeing its state, on the core
    /// the report's JSON could use).
    pub ends_process: bool,
    /// Analyses of host pairs side by side (`--analysis-threads`, see
    /// [`split`]) when a capture file is read in chunks: 1 for one analysis
    /// of every frame.
    pub split: usize,
}

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
            link_speed: LinkSpeed::default(),
            pmtu: None,
            dup_window_ns: 2_000,
            storm_threshold_ns: 100_000_000,
            dscp_map: default_dscp_map(),
            limits: Limits::default(),
            timeline_bin_ns: None,
            timeline_series: false,
            ulp: nvme::UlpRule::Auto,
            reaction: pfc::ReactionLimits::default(),
            cc_window_ns: 50_000,
            stages: Stages::all(),
            ends_process: false,
            split: 1,
        }
    }
}

/// Facts about the capture file that the packets do not carry.
#[derive(Debug, Clone, Default)]
pub struct CaptureInfo {
    pub file: String,
    /// The inputs of a merged capture.
    pub files: Vec<String>,
    pub format: String,
    pub ts_resolution_ns: u64,
    pub warnings: Vec<String>,
}

/// Unordered pair of hosts: PMTU is a property of the path.
fn host_pair(a: Addr, b: Addr) -> (Addr, Addr) {
    if a <= b { (a, b) } else { (b, a) }
}

/// The flow the CM paired the key of entry `e` with, if it has been seen:
/// noted under the partner's entry, else (the partner's key was paired
/// again since) found by its key.
fn cm_entry_partner(
    flows: &[FlowState],
    index: &FlowIndex,
    peers: &cm_peers::CmPeers,
    e: cm_peers::Entry,
) -> Option<u32> {
    peers
        .flow(e ^ 1)
        .or_else(|| find_flow(flows, index, peers.key(e ^ 1)))
}

/// Flows from which the observing loop hints the caches ahead.
const HINT_FROM_FLOWS: usize = 4096;
/// How many frames ahead of the one observed each [`HintStage`] hints
/// (far enough for each stage's loads to arrive before the next stage
/// reads them, near enough for them to stay).
const HINT_AHEAD: [(usize, HintStage); 5] = [
    (20, HintStage::Slot),
    (16, HintStage::Flow),
    (12, HintStage::Parts),
    (8, HintStage::Tails),
    (4, HintStage::Answered),
];
/// How many frames ahead the facts themselves are hinted (made on another
/// core, they are not in this one's caches).
const FACTS_AHEAD: usize = 24;

/// What [`Analyzer::hint`] loads, each stage through what the one
/// before brought (a stage that loaded what it had not been brought
/// would wait for memory as the frame's observing would).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HintStage {
    /// The frame's index slot (from its facts' flow hash).
    Slot,
    /// Its flow's state (found through that slot).
    Flow,
    /// The boxes that state points to (timing, throughput, rarer part),
    /// and the answered flow's pointer to its timing.
    Parts,
    /// The ends of the flow's queues and grain list, and the answered
    /// flow's timing.
    Tails,
    /// The ends of the answered flow's queues (an ACK or READ response
    /// pops and reads them).
    Answered,
}

/// The id of the flow with `key`, if it has been seen.
fn find_flow(flows: &[FlowState], index: &FlowIndex, key: &FlowKey) -> Option<u32> {
    index.get(key, hash_key(key), |id| &flows[id as usize].key)
}

/// A flow's PMTU as inferred so far (that of its host pair), cached in the
/// flow until a new one is learnt anywhere (`generation` moves on). `None`
/// until something shows it: `--pmtu` is only the fallback for what is
/// still unknown when it is needed (see [`FlowState::request`]).
#[inline]
fn flow_pmtu(f: &mut FlowState, generation: u64, pmtus: &Map<(Addr, Addr), u32>) -> Option<u32> {
    if f.pmtu_generation == generation {
        return f.pmtu_cached;
    }
    refresh_pmtu(f, generation, pmtus)
}

#[inline(never)]
fn refresh_pmtu(f: &mut FlowState, generation: u64, pmtus: &Map<(Addr, Addr), u32>) -> Option<u32> {
    f.pmtu_generation = generation;
    f.pmtu_cached = pmtus.get(&host_pair(f.key.src, f.key.dst)).copied();
    f.pmtu_cached
}

/// Capture-wide counters.
#[derive(Debug, Default, Clone)]
struct Totals {
    frames: u64,
    roce_frames: u64,
    /// The earliest and latest timestamps (not the first and last frames':
    /// a capture is not always in time order).
    first_ts: Option<u64>,
    last_ts: u64,
    /// The timestamp of the frame before, and how many frames were
    /// stamped earlier than the one before them.
    prev_ts: u64,
    ts_backwards: u64,
    truncated: u64,
    malformed: u64,
    icrc_errors: u64,
    duplicates: u64,
    cm_messages: u64,
    /// Frames of flows beyond `--max-flows`: counted here, not analysed.
    untracked_frames: u64,
    /// CM REQs not remembered (more pending than `--max-cm-pending`).
    cm_dropped: u64,
    /// Records the capture device lost (ERF loss counters).
    device_lost: u64,
    /// ACKs, NAKs and READ responses left unmatched to their request flow
    /// because finding it would have overdrawn the looks' budget.
    answers_unmatched: u64,
}

/// A CM REQ waiting for its REP: (src, dst, local QPN).
#[derive(Debug, Clone, Copy)]
struct PendingReq {
    src: Addr,
    dst: Addr,
    qpn: u32,
    /// What the REQ's ServiceID and private data say of the connection.
    ulp: report::ConnUlp,
}

/// Consumes packets in capture order and builds the [`Report`].
pub struct Analyzer {
    opts: AnalysisOptions,
    totals: Totals,
    flows: Vec<FlowState>,
    index: FlowIndex,
    /// Flows beyond `--max-flows`.
    flows_dropped: budget::DistinctCounter,
    /// PMTU per host pair, from FIRST/MIDDLE payloads and CM REQs.
    pmtu: Map<(Addr, Addr), u32>,
    /// Recent NAKs per (NAK sender, NAK receiver), at most [`RECENT_NAKS`].
    naks: Map<(Addr, Addr), VecDeque<RecentNak>>,
    /// CM REQs by local communication ID, until their REP.
    cm_reqs: Map<u32, PendingReq>,
    /// Flow pairs learnt from CM, both ways.
    cm_peer: cm_peers::CmPeers,
    /// The upper-layer protocol of connections the CM set up, by either
    /// flow's key.
    cm_ulp: Map<FlowKey, report::ConnUlp>,
    /// Flows with a CE mark waiting for its CNP, per (src, dst), in the
    /// order of their marks: (flow, time of the mark). An entry whose flow
    /// no longer waits for that mark is skipped when it comes up.
    pending_ce: Map<(Addr, Addr), VecDeque<(u32, u64)>>,
    pauses: PauseTimeline,
    /// The link speeds pause frames were read at.
    speeds: speed::SpeedsUsed,
    /// Bumped whenever a PMTU is learnt, so flows can cache theirs.
    pmtu_generation: u64,
    budget: Budget,
    /// Flows that sent RC or XRC requests, per (src, dst): where an ACK
    /// flow looks for the requests it answers.
    requesters: Map<(Addr, Addr), Vec<u32>>,
    /// Every flow's timing samples (at most `--max-timing-samples`).
    logs: timing::Logs,
    /// The throughput bins' grain.
    timeline: throughput::Timeline,
    /// NVMe-oF queues and their I/Os.
    nvme: nvme::Tracker,
    /// Frames that are neither RoCE flows' nor pauses, and the TCP
    /// conversations among them.
    other: other::OtherTraffic,
    /// Every ICRC checked so far was wrong: the capture path does not keep
    /// them, and an event per frame would say nothing the hint does not.
    icrc_summarised: bool,
    /// The CNPs of one flow's sender, when asked for (`plan dcqcn --from`).
    traced: Option<Box<Traced>>,
    /// Threads that may build the report (1 unless the caller says).
    report_threads: usize,
    /// Request flows looked at to find the one an answer flow answers
    /// (see [`MATCH_LOOKS_PER_FRAME`]).
    match_looks: u64,
    /// The looks asked for, granted or not (each answer asks for as many
    /// as the host pair has request flows): what a split analysis checks
    /// to know the budget never bound ([`split`]).
    match_asked: u64,
    /// The whole analysis, or one side of a split one ([`split`]).
    role: Role,
    /// A part of a split analysis: the communication IDs of the CM REQs it
    /// saw (at most `--max-cm-pending` and one more), which no other part
    /// may have seen for it to be joined.
    req_ids: foldhash::HashSet<u32>,
}

/// What an [`Analyzer`] sees of the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Every frame: the analysis of one thread.
    Whole,
    /// Every frame, for what is capture-wide (counts, pauses and the
    /// frames sent while paused): the frame loop of a split analysis.
    Frames,
    /// The RoCE frames of some host pairs, paused frames marked
    /// ([`Facts::SENT_PAUSED`]) by the frame loop.
    Part,
}

/// The looks at request flows that finding which one an ACK flow answers
/// may take (without the CM, and with several request flows between the
/// two hosts): this many at first, and this many more a frame. A capture
/// with tens of QPs between two hosts takes a few per answer until each
/// ACK flow is matched; the budget keeps one with tens of thousands
/// linear in frames.
pub const MATCH_LOOKS_FIRST: u64 = 1 << 24;
pub const MATCH_LOOKS_PER_FRAME: u64 = 256;

/// The CNPs matched to one flow, in order (at most [`MAX_TRACED_CNPS`]).
#[derive(Debug, Clone)]
pub struct Traced {
    pub key: FlowKey,
    pub cnps_ns: Vec<u64>,
    /// CNPs past the limit.
    pub dropped: u64,
}

/// CNP times kept for a traced flow.
pub const MAX_TRACED_CNPS: usize = 1 << 20;

/// NAKs remembered per host pair: a replay follows its NAK closely.
const RECENT_NAKS: usize = 8;
/// Bad ICRCs in a row from the first RoCE frame after which they are no
/// longer listed one by one (see [`hints::icrc_not_preserved`]).
const ICRC_SUMMARY_AFTER: u64 = 64;

impl Analyzer {
    pub fn new(opts: AnalysisOptions) -> Self {
        let l = opts.limits;
        Analyzer {
            totals: Totals::default(),
            flows: Vec::new(),
            index: FlowIndex::default(),
            flows_dropped: budget::DistinctCounter::default(),
            pmtu: Map::default(),
            naks: Map::default(),
            cm_reqs: Map::default(),
            cm_ulp: Map::default(),
            cm_peer: cm_peers::CmPeers::default(),
            pending_ce: Map::default(),
            speeds: speed::SpeedsUsed::default(),
            pauses: PauseTimeline::new(pfc::PauseLimits {
                sources: l.pause_sources,
                intervals: l.intervals,
                storm_threshold_ns: opts.storm_threshold_ns,
            })
            .with_reaction(opts.reaction),
            pmtu_generation: 1,
            icrc_summarised: false,
            requesters: Map::default(),
            traced: None,
            report_threads: 1,
            match_looks: 0,
            match_asked: 0,
            role: Role::Whole,
            req_ids: Default::default(),
            logs: {
                let mut logs = timing::Logs::new(l.timing_samples);
                logs.histograms = opts.timeline_series;
                logs
            },
            timeline: throughput::Timeline::new(opts.timeline_bin_ns, opts.timeline_series),
            nvme: {
                let mut t = nvme::Tracker::new(opts.ulp.clone(), l.timing_samples);
                t.histograms(opts.timeline_series);
                t
            },
            other: other::OtherTraffic::new(l.flows),
            budget: Budget {
                events_per_flow: l.events_per_flow,
                events_left: l.events_total,
                events_dropped: 0,
                ud_sources_left: l.ud_sources,
                ud_sources_dropped: budget::DistinctCounter::default(),
                frame: 0,
                flow: NO_FLOW,
                charges: None,
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

    /// Keep every completed NVMe-oF I/O, for [`Analyzer::nvme_done`].
    pub fn keep_nvme_ios(&mut self) {
        self.nvme.keep_done();
    }

    /// The NVMe-oF I/Os completed since they were last taken (with
    /// [`Analyzer::keep_nvme_ios`]; drain it after every frame).
    pub fn nvme_done(&mut self) -> Option<&mut Vec<nvme::IoDone>> {
        self.nvme.take_done()
    }

    /// Feeds one packet; returns what the analysis found in it.
    pub fn packet(&mut self, pkt: &Packet<'_>) -> FrameAnalysis {
        self.observe(&Facts::of(pkt))
    }

    /// Observes a run of frames in order, each frame's number moved on by
    /// `renumber` first (a chunk's frames are numbered from its start).
    /// With thousands of flows (`hints_pay`), hints the caches ahead with
    /// what each frame will read, in the stages of `HintStage` (how far
    /// ahead: `HINT_AHEAD`).
    #[inline(never)]
    pub fn observe_run(&mut self, frames: &mut [Facts], renumber: u64) {
        if !self.hints_pay() {
            for facts in frames {
                facts.number += renumber;
                self.observe(facts);
            }
            return;
        }
        for i in 0..frames.len() {
            if let Some(f) = frames.get(i + FACTS_AHEAD) {
                mapwin::prefetch_whole(f);
            }
            for (ahead, stage) in HINT_AHEAD {
                if let Some(f) = frames.get(i + ahead) {
                    self.hint(f, stage);
                }
            }
            let facts = &mut frames[i];
            facts.number += renumber;
            self.observe(facts);
        }
    }

    /// [`packet`](Self::packet) for a packet dissected elsewhere (another
    /// thread): its [`Facts`].
    pub fn observe(&mut self, facts: &Facts) -> FrameAnalysis {
        self.count_frame(facts);
        match &facts.body {
            Body::Roce(r) => self.roce_packet(facts, r),
            Body::Pause { .. } => {
                self.pause_body(facts);
                FrameAnalysis::default()
            }
            Body::Other { .. } | Body::Tcp(_) => {
                self.other_body(facts);
                FrameAnalysis::default()
            }
        }
    }

    /// What the TCP conversation said of frame `number`, when it is the
    /// TCP frame observed last (the frame loops that show frames ask right
    /// after observing it): relative numbers, the stream, tshark's notes.
    pub fn tcp_seen(&self, number: u64) -> Option<tcp::TcpSeen> {
        self.other.seen(number)
    }

    /// Gives the analysis frame `pkt` again when what its TCP conversation
    /// said of it (`tcp`, right after observing it) asks for its bytes:
    /// the head of an HTTP message that later segments end, whose first
    /// line their Info column shows. The frame loops that show frames call
    /// it; the report's loop need not.
    pub fn frame_bytes_wanted(tcp: Option<&tcp::TcpSeen>) -> bool {
        matches!(
            tcp.and_then(|t| t.http.as_ref()),
            Some(http::Reading::Begins)
        )
    }

    /// Keeps what a frame's bytes hold that later frames show (see
    /// [`frame_bytes_wanted`](Self::frame_bytes_wanted)).
    pub fn keep_frame_bytes(&mut self, pkt: &Packet<'_>) {
        self.other.keep_http_head(pkt);
    }

    /// A frame that is neither a RoCE flow's nor a pause (after
    /// [`count_frame`](Self::count_frame)).
    fn other_body(&mut self, facts: &Facts) {
        match &facts.body {
            Body::Other { protocol } => self.other.frame(protocol),
            Body::Tcp(seg) => self.other.tcp(seg, facts.ts_ns, facts.number, facts.len),
            Body::Roce(_) | Body::Pause { .. } => {}
        }
    }

    /// The capture-wide counts of a frame.
    #[inline]
    fn count_frame(&mut self, facts: &Facts) {
        let t = &mut self.totals;
        t.frames += 1;
        match t.first_ts {
            None => {
                t.first_ts = Some(facts.ts_ns);
                self.timeline.start(facts.ts_ns);
            }
            Some(first) if facts.ts_ns < first => t.first_ts = Some(facts.ts_ns),
            _ => {}
        }
        if facts.ts_ns < t.prev_ts {
            t.ts_backwards += 1;
        }
        t.prev_ts = facts.ts_ns;
        t.last_ts = t.last_ts.max(facts.ts_ns);
        t.device_lost += u64::from(facts.lost);
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
    }

    /// A pause frame's body (after [`count_frame`](Self::count_frame)).
    fn pause_body(&mut self, facts: &Facts) {
        if let Body::Pause {
            src_mac: Some(mac),
            pause,
            if_speed,
        } = &facts.body
        {
            let (bps, from) = self.opts.link_speed.of(*if_speed);
            self.speeds.note(bps, from);
            self.pause_frame(facts, *mac, pause, bps);
        }
    }

    fn pause_frame(&mut self, pkt: &Facts, mac: [u8; 6], p: &PauseRepr, bps: u64) {
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

    /// Whether hinting the caches ahead of [`observe`](Self::observe)
    /// pays: with thousands of flows their state is out of the caches, and
    /// each frame met a miss at each part of it. With fewer, the hints
    /// cost more than the misses they save (15 % more on 512 flows).
    fn hints_pay(&self) -> bool {
        self.flows.len() >= HINT_FROM_FLOWS
    }

    /// Hints the caches for a frame to be observed some frames from now,
    /// with what `stage` of [`HintStage`] loads.
    #[inline]
    fn hint(&self, facts: &Facts, stage: HintStage) {
        let Body::Roce(r) = &facts.body else {
            return;
        };
        if stage == HintStage::Slot {
            self.index.hint(r.flow_hash());
            return;
        }
        let Some(f) = self
            .index
            .guess(r.flow_hash())
            .and_then(|id| self.flows.get(id as usize))
        else {
            return;
        };
        match stage {
            HintStage::Slot => {}
            HintStage::Flow => mapwin::prefetch_whole(f),
            HintStage::Parts => {
                if let Some(t) = f.timing.as_deref() {
                    mapwin::prefetch_whole(t);
                }
                if let Some(rate) = f.rate.as_deref() {
                    mapwin::prefetch_whole(rate);
                }
                if let Some(c) = f.cold_part() {
                    mapwin::prefetch_whole(c);
                }
                if let Some(q) = self.flows.get(f.answers as usize) {
                    mapwin::prefetch_whole(&q.timing);
                }
            }
            HintStage::Tails => {
                if let Some(t) = f.timing.as_deref() {
                    t.hint_ends();
                }
                if let Some(rate) = f.rate.as_deref() {
                    rate.hint_end();
                }
                if let Some(t) = self.answered(f) {
                    mapwin::prefetch_whole(t);
                }
            }
            HintStage::Answered => {
                if let Some(t) = self.answered(f) {
                    t.hint_ends();
                }
            }
        }
    }

    /// The timing of the request flow `f`'s answers go to, once known.
    #[inline]
    fn answered(&self, f: &FlowState) -> Option<&timing::FlowTiming> {
        self.flows.get(f.answers as usize)?.timing.as_deref()
    }

    /// The id of the flow with `key`, if it has been seen.
    fn find_flow(&self, key: &FlowKey) -> Option<u32> {
        find_flow(&self.flows, &self.index, key)
    }

    /// The id of the flow with `key`, made if new and the budget allows
    /// (`hash` is `hash_key(key)`, or its high half: all the index reads).
    #[inline]
    fn flow_id(
        &mut self,
        key: &FlowKey,
        hash: u64,
        pkt: &Facts,
        version: RoceVersion,
    ) -> Option<u32> {
        let flows = &self.flows;
        if let Some(id) = self.index.get(key, hash, |id| &flows[id as usize].key) {
            return Some(id);
        }
        self.new_flow(key, hash, pkt, version)
    }

    #[cold]
    #[inline(never)]
    fn new_flow(
        &mut self,
        key: &FlowKey,
        hash: u64,
        pkt: &Facts,
        version: RoceVersion,
    ) -> Option<u32> {
        if self.flows.len() as u64 >= self.opts.limits.flows {
            self.flows_dropped.add(key);
            return None;
        }
        let id = self.flows.len() as u32;
        self.flows.push(FlowState::new(*key, version, pkt));
        // The CM's table reads all of the hash; the frame's facts keep
        // only the index's half.
        if let Some(e) = self.cm_peer.entry(key, hash_key(key)) {
            self.cm_peer.set_flow(e, id);
        }
        self.index.insert(hash, id);
        Some(id)
    }

    /// The flow the CM paired flow `id` with, if the CM did and that
    /// flow has been seen.
    fn cm_partner(&self, id: u32) -> Option<u32> {
        self.cm_entry_partner(self.cm_peer.of_flow(id)?)
    }

    /// [`cm_entry_partner`] of this analysis.
    fn cm_entry_partner(&self, e: cm_peers::Entry) -> Option<u32> {
        cm_entry_partner(&self.flows, &self.index, &self.cm_peer, e)
    }

    #[cold]
    #[inline(never)]
    fn learn_pmtu(&mut self, key: &FlowKey, pmtu: u32) {
        if self.pmtu.insert(host_pair(key.src, key.dst), pmtu) != Some(pmtu) {
            self.pmtu_generation += 1;
        }
    }

    /// A CM message on flow `key`; for a REP that connects an NVMe-oF
    /// queue, the queue's ID as the REQ said it (`Some(None)` when it did
    /// not).
    #[cold]
    #[inline(never)]
    fn cm_message(&mut self, key: &FlowKey, cm: &CmMessage) -> Option<Option<u16>> {
        self.totals.cm_messages += 1;
        match *cm {
            CmMessage::Req {
                local_comm_id,
                local_qpn,
                mtu,
                service_id,
                nvme,
                ..
            } => {
                let port = crate::wire::nvme::service_port(service_id);
                let mut ulp = port.map_or(
                    crate::wire::nvme::Ulp::Unknown,
                    crate::wire::nvme::Ulp::of_port,
                );
                let mut by = report::UlpBy::Cm;
                if ulp == crate::wire::nvme::Ulp::Unknown && self.nvme.rule.forces(key.dst, port) {
                    ulp = crate::wire::nvme::Ulp::Nvme;
                    by = report::UlpBy::Option;
                }
                let req = PendingReq {
                    src: key.src,
                    dst: key.dst,
                    qpn: local_qpn,
                    ulp: report::ConnUlp {
                        ulp,
                        by,
                        qid: nvme.map(|d| d.qid),
                        commands: true,
                    },
                };
                if self.role == Role::Part
                    && self.req_ids.len() as u64 <= self.opts.limits.cm_pending
                {
                    self.req_ids.insert(local_comm_id);
                }
                if self.cm_reqs.contains_key(&local_comm_id)
                    || (self.cm_reqs.len() as u64) < self.opts.limits.cm_pending
                {
                    self.cm_reqs.insert(local_comm_id, req);
                } else {
                    self.totals.cm_dropped += 1;
                }
                if (1..=5).contains(&mtu) && !self.pmtu.contains_key(&host_pair(key.src, key.dst)) {
                    self.learn_pmtu(key, 128u32 << mtu);
                }
            }
            CmMessage::Rep {
                remote_comm_id,
                local_qpn,
                ..
            } => {
                // REP travels B → A; the REQ went A → B from QP qa. The REQ
                // is answered: it no longer waits.
                let &PendingReq {
                    src: a,
                    dst: b,
                    qpn: qa,
                    ulp,
                } = self.cm_reqs.get(&remote_comm_id)?;
                if a != key.dst || b != key.src {
                    return None;
                }
                self.cm_reqs.remove(&remote_comm_id);
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
                let entries = self.cm_peer.insert(data, back);
                if ulp.ulp != crate::wire::nvme::Ulp::Unknown {
                    self.cm_ulp.insert(data, ulp);
                    let answers = report::ConnUlp {
                        commands: false,
                        ..ulp
                    };
                    self.cm_ulp.insert(back, answers);
                }
                // A new connection on QPs seen before starts new PSN
                // sequences (rping reconnecting reuses its QP numbers).
                for (side, k) in [data, back].iter().enumerate() {
                    if let Some(id) = self.find_flow(k) {
                        if let Some(e) = entries.map(|e| e[side]) {
                            self.cm_peer.set_flow(e, id);
                        }
                        self.budget.flow = id;
                        self.flows[id as usize].new_connection(&mut self.budget);
                    }
                }
                return (ulp.ulp == crate::wire::nvme::Ulp::Nvme).then_some(ulp.qid);
            }
            _ => {}
        }
        None
    }

    /// Keeps the time of every CNP matched to the flow `key` (its sender
    /// received them), in [`Analyzer::traced`].
    pub fn trace_cnps(&mut self, key: FlowKey) {
        self.traced = Some(Box::new(Traced {
            key,
            cnps_ns: Vec::new(),
            dropped: 0,
        }));
    }

    /// The CNPs of the flow [`Analyzer::trace_cnps`] named.
    pub fn traced(&self) -> Option<&Traced> {
        self.traced.as_deref()
    }
    /// The run's link-speed policy (`--link-speed`).
    pub fn link_speed(&self) -> LinkSpeed {
        self.opts.link_speed
    }

    /// Lets up to `n` threads build the report of a capture with many
    /// flows (each flow's report is its own work). The report is the
    /// same for every `n`.
    pub fn set_report_threads(&mut self, n: usize) {
        self.report_threads = n.max(1);
    }

    /// Ends the analysis and builds the report.
    pub fn finish(self, info: CaptureInfo) -> Report {
        self.finish_indexed(info).0
    }

    /// Like [`finish`](Self::finish), also giving for each flow id that
    /// [`packet`](Self::packet) returned its index in `report.flows`.
    pub fn finish_indexed(mut self, mut info: CaptureInfo) -> (Report, Vec<usize>) {
        let skipped: Vec<_> = Stage::ALL
            .iter()
            .filter(|s| !self.opts.stages.has(**s))
            .map(|s| format!("{s}: {}", s.about()))
            .collect();
        if !skipped.is_empty() {
            info.warnings
                .push(format!("stages skipped (--skip): {}", skipped.join("; ")));
        }
        // What the report reads of every flow's timing, gathered while
        // its state is at hand (a pass of its own for each missed the cache
        // at every flow once there were thousands).
        let mut timed = Vec::new();
        let mut unkept = 0;
        for (id, f) in self.flows.iter_mut().enumerate() {
            if let Some(t) = f.timing.as_mut() {
                t.flush(&mut timing::Log {
                    flow: id as u32,
                    logs: &mut self.logs,
                });
                let (samples, behind, min_rtt_ns) = t.lag();
                timed.push(timing::TimedFlow {
                    requester: f.key.src,
                    responder: f.key.dst,
                    samples,
                    behind,
                    min_rtt_ns,
                });
                unkept += t.unkept();
            }
            if let Some(cc) = f.cc_mut() {
                cc.finish(self.totals.last_ts);
            }
            // The host pair's PMTU as the flow has it cached, unless one was
            // learnt since (looking every flow's host pair up took about 2
            // of this pass's 17 ms with 131 472 flows).
            let inferred = flow_pmtu(f, self.pmtu_generation, &self.pmtu);
            f.finish(inferred, self.opts.pmtu, &mut self.budget);
        }
        self.pauses.finish(self.totals.last_ts);
        self.timeline.end(self.totals.last_ts);
        // The report sorts the timing logs (while it pairs the flows).
        pairing::build_report(self, info, pairing::Gathered { timed, unkept })
    }
}

/// The priority a RoCE frame travels on: its VLAN tag's, else its DSCP's
/// by `--dscp-map`.
#[inline]
fn priority(opts: &AnalysisOptions, r: &RoceFacts) -> Option<u8> {
    r.pcp
        .or_else(|| r.dscp.and_then(|d| opts.dscp_map[usize::from(d & 63)]))
}
