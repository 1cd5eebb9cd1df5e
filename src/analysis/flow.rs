//! One direction of one queue pair and everything counted on it.
//!
//! A flow's state is split by how often it is touched: what every packet
//! reads or writes stays in [`FlowState`] (about 300 bytes); what only
//! anomalies, READ responses and UD source QPs need lives in a
//! [`FlowCold`] made on the first such packet. An orderly flow then costs
//! its hot part alone, and a capture of millions of one-frame flows stays
//! within its memory budget.

use crate::dissect::Addr;

use super::Map;
use super::budget::DistinctCounter;
use super::facts::{Facts, RoceFacts};
pub use super::fingerprint::Fingerprint;
use super::psn::{MaybePsn, PsnTracker, Verdict, WINDOW};
use super::report::{DelayStats, Episode, Event, EventKind, NakCounts, Trigger};
use super::requests::{RecentRequests, ReqKind};
use crate::dissect::RoceVersion;
use crate::wire::BthRepr;
use crate::wire::Psn;
use crate::wire::{Operation, Transport};

/// (source address, destination address, BTH DestQP). Addresses are IPs
/// for v2 and GIDs for v1; the UDP source port is entropy, never a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlowKey {
    pub src: Addr,
    pub dst: Addr,
    pub dest_qp: u32,
}

/// Hashed as three words rather than field by field and byte by byte: the
/// flow table is looked up for every packet.
impl std::hash::Hash for FlowKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let bits = |a: Addr| match a {
            Addr::Ip(std::net::IpAddr::V4(v4)) => u128::from(v4.to_bits()),
            Addr::Ip(std::net::IpAddr::V6(v6)) => v6.to_bits(),
            // Apart from the IPv4 addresses (small numbers too).
            Addr::Lid(l) => (1u128 << 64) | u128::from(l),
        };
        state.write_u128(bits(self.src));
        state.write_u128(bits(self.dst));
        state.write_u32(self.dest_qp);
    }
}

/// A NAK remembered for attributing the replay that follows it.
#[derive(Debug, Clone, Copy)]
pub struct RecentNak {
    pub psn: Psn,
    pub ts_ns: u64,
    pub frame: u64,
    pub rnr: bool,
    pub used: bool,
}

/// Default PMTU when nothing better is known.
pub const DEFAULT_PMTU: u32 = 4096;

/// Replayed READ requests remembered per flow.
const MAX_REPLAYED_READS: usize = 16;

#[derive(Debug, Clone, Copy)]
struct Prev {
    frame: u64,
    ts_ns: u64,
    psn: Psn,
    /// Its verdict was [`Verdict::OutOfOrder`] (all that is asked of it).
    /// Keeping the whole verdict cost a stall per packet: copied whole, it
    /// was read back wider than the in-order path had written it.
    out_of_order: bool,
    /// Silence before this packet on the flow.
    silence_ns: u64,
}

#[derive(Debug, Clone)]
struct OpenEpisode {
    ep: Episode,
    silence_ns: u64,
    attributed: bool,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct DelayAcc {
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
}

impl DelayAcc {
    pub fn add(&mut self, ns: u64) {
        if self.count == 0 || ns < self.min {
            self.min = ns;
        }
        self.max = self.max.max(ns);
        self.sum += u128::from(ns);
        self.count += 1;
    }

    pub fn stats(&self) -> Option<DelayStats> {
        (self.count > 0).then(|| DelayStats {
            count: self.count,
            min_ns: self.min,
            mean_ns: (self.sum / u128::from(self.count)) as u64,
            max_ns: self.max,
        })
    }
}

/// What may still be kept, and what was not: events (per flow and in all)
/// and UD source QPs (in all).
#[derive(Debug)]
pub struct Budget {
    pub events_per_flow: usize,
    pub events_left: u64,
    /// Events counted but not kept because the total ran out.
    pub events_dropped: u64,
    pub ud_sources_left: u64,
    /// UD source QPs beyond the budget (their packets are counted on their
    /// flow, their PSNs not followed).
    pub ud_sources_dropped: DistinctCounter,
    /// The frame being analysed and its flow, which events and episodes
    /// are charged at.
    pub frame: u64,
    pub flow: u32,
    /// A part of a split analysis: every event and episode kept, in the
    /// order they were charged (at most the events' budget), so that the
    /// budget of all parts together can be applied when they are joined.
    pub charges: Option<Vec<Charge>>,
}

/// An event or episode kept, where it was charged.
#[derive(Debug, Clone, Copy)]
pub struct Charge {
    pub frame: u64,
    pub flow: u32,
    pub episode: bool,
}

impl Budget {
    /// One event or episode more kept (`events_left` already taken from).
    #[inline]
    fn charged(&mut self, episode: bool) {
        if let Some(log) = self.charges.as_mut() {
            log.push(Charge {
                frame: self.frame,
                flow: self.flow,
                episode,
            });
        }
    }
}

/// The fingerprint of a flow's last frame and when it was captured (an
/// empty fingerprint before the first).
#[derive(Debug, Clone, Copy, Default)]
struct LastFrame {
    ts_ns: u64,
    fp: Fingerprint,
}

/// One flow's state: what every packet reads or writes, in the order a
/// packet touches it (`repr(C)`), so a packet touches a few cache lines.
#[repr(C)]
pub struct FlowState {
    pub key: FlowKey,
    pub packets: u64,
    pub bytes: u64,
    pub payload_bytes: u64,
    pub last_ts: u64,
    last_frame: LastFrame,
    pub pmtu_generation: u64,
    pub pmtu_cached: Option<u32>,
    pub pmtu: Option<u32>,
    /// Request sequence (SEND, WRITE, READ request, atomics); not started
    /// until the first request.
    pub req: PsnTracker,
    prev: Option<Prev>,
    /// A READ request whose PSN count waits for the PMTU: (PSN, DMA length).
    pending_read: Option<(Psn, u32)>,
    /// What consumed the recent request PSNs (RC, UC, XRC).
    recent: RecentRequests,
    pub req_first_psn: MaybePsn,
    /// PSNs carried by AETH packets (ACKs, NAKs, READ responses).
    pub ack_first_psn: MaybePsn,
    pub ack_last_psn: MaybePsn,
    pub first_frame: u64,
    pub first_ts: u64,
    pub priority: Option<u8>,
    pub transport: Option<Transport>,
    pub version: RoceVersion,
    /// The last pause intervals this flow was noted in (serials), so that
    /// each interval counts a flow once.
    pub noted_pauses: [u32; 2],
    /// The request flow this flow's ACKs, NAKs and READ responses answer,
    /// once known ([`NO_FLOW`](super::NO_FLOW) until then).
    pub answers: u32,
    /// Anything rarer, made on the first packet that needs it.
    cold: Option<Box<FlowCold>>,
    /// READ responses' sequence, made on the first one: a box of its own,
    /// as the rarer part (~500 bytes) was made for each READ response
    /// flow only to hold it.
    resp: Option<Box<PsnTracker>>,
    /// Round trips and completions, made on the first RC or XRC request.
    pub timing: Option<Box<super::timing::FlowTiming>>,
    /// Payload over time, made on the first frame with payload.
    pub rate: Option<Box<super::throughput::Rate>>,
}

/// What only some packets of some flows need: anomaly counters, events,
/// episodes, READ responses, UD source QPs.
#[derive(Debug, Default)]
pub struct FlowCold {
    pub duplicates: u64,
    pub retransmits: u64,
    pub out_of_order: u64,
    pub psn_reuse: u64,
    pub ecn_ce: u64,
    pub cnps: u64,
    pub bad_icrc: u64,
    pub naks: NakCounts,
    pub events: Vec<Event>,
    pub events_dropped: u64,
    pub episodes: Vec<Episode>,
    pub episode_count: u64,
    open_episode: Option<OpenEpisode>,
    pub ce_to_cnp: DelayAcc,
    /// When the CE mark still waiting for its CNP was seen.
    pub pending_ce: Option<u64>,
    /// UD: one request sequence per DETH source QP.
    ud: Map<u32, PsnTracker>,
    /// Missing PSNs of earlier connections on these QPs.
    carried_missing: u64,
    /// The PSN of the latest out-of-order arrival: a replay that starts
    /// with it replays a packet that was reordered, not lost.
    late_psn: Option<Psn>,
    /// READ requests replayed (their PSNs, the first few): answered or not
    /// is known once the other direction is.
    pub replayed_reads: Vec<Psn>,
    /// Timeout replays: the silences before them.
    pub timeouts: super::timing::Timeouts,
    /// DCQCN reaction: the payload history from the first CE mark or CNP.
    pub cc: Option<Box<super::cc::CcState>>,
}

static NO_COLD: std::sync::LazyLock<FlowCold> = std::sync::LazyLock::new(FlowCold::default);

impl FlowState {
    pub fn new(key: FlowKey, version: RoceVersion, pkt: &Facts) -> Self {
        FlowState {
            key,
            packets: 0,
            bytes: 0,
            payload_bytes: 0,
            last_ts: pkt.ts_ns,
            last_frame: LastFrame::default(),
            pmtu_generation: 0,
            pmtu_cached: None,
            pmtu: None,
            req: PsnTracker::default(),
            prev: None,
            pending_read: None,
            recent: RecentRequests::default(),
            req_first_psn: MaybePsn::NONE,
            ack_first_psn: MaybePsn::NONE,
            ack_last_psn: MaybePsn::NONE,
            first_frame: pkt.number,
            first_ts: pkt.ts_ns,
            priority: None,
            transport: None,
            version,
            noted_pauses: [0; 2],
            answers: super::NO_FLOW,
            cold: None,
            resp: None,
            timing: None,
            rate: None,
        }
    }

    /// The rarer part, made if need be.
    #[inline]
    pub fn cold(&mut self) -> &mut FlowCold {
        self.cold.get_or_insert_with(Box::default)
    }

    /// The DCQCN reaction history, on flows that met congestion.
    #[inline]
    pub fn cc_mut(&mut self) -> Option<&mut super::cc::CcState> {
        self.cold.as_mut()?.cc.as_deref_mut()
    }

    /// The rarer part, if made.
    #[inline]
    pub fn cold_part(&self) -> Option<&FlowCold> {
        self.cold.as_deref()
    }

    /// The rarer part, or an empty one (all counters 0).
    pub fn cold_ref(&self) -> &FlowCold {
        self.cold.as_deref().unwrap_or(&NO_COLD)
    }

    /// The rarer part's events and episodes, taken (they move into the
    /// report; the rest is read in place). Moving the whole part out of
    /// its box, or an empty one made for each flow without, took a quarter
    /// of building 131 472 flows' reports.
    pub fn take_lists(&mut self) -> (Vec<Event>, Vec<Episode>) {
        match self.cold.as_deref_mut() {
            Some(c) => (
                std::mem::take(&mut c.events),
                std::mem::take(&mut c.episodes),
            ),
            None => (Vec::new(), Vec::new()),
        }
    }

    /// Byte-identical to the previous frame of the flow and close in time.
    /// Frames longer than the fingerprint's head are compared through their
    /// ICRC, which covers everything after the headers.
    pub fn is_duplicate(&self, fp: &Fingerprint, ts_ns: u64, window_ns: u64) -> bool {
        let last = &self.last_frame;
        !last.fp.is_none()
            && last.fp == *fp
            && ts_ns >= last.ts_ns
            && ts_ns - last.ts_ns <= window_ns
    }

    pub fn remember(&mut self, fp: &Fingerprint, ts_ns: u64) {
        self.last_frame = LastFrame { ts_ns, fp: *fp };
    }

    /// Records an event (or counts it as dropped past the budget). Events
    /// are rare, as are the other paths marked cold in the analysis: kept
    /// out of the per-packet code that inlines into `Analyzer::observe`,
    /// they left it 4-6 % faster (`examples/facts_speed.rs`).
    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    pub fn event(
        &mut self,
        budget: &mut Budget,
        kind: EventKind,
        pkt: &Facts,
        psn: Option<Psn>,
        count: Option<u32>,
        code: Option<u8>,
        detail: Option<&'static str>,
    ) {
        let c = self.cold();
        if c.events.len() >= budget.events_per_flow {
            c.events_dropped += 1;
            return;
        }
        if budget.events_left == 0 {
            c.events_dropped += 1;
            budget.events_dropped += 1;
            return;
        }
        budget.events_left -= 1;
        budget.charged(false);
        c.events.push(Event {
            kind,
            frame: pkt.number,
            ts_ns: pkt.ts_ns,
            psn: psn.map(Psn::get),
            count,
            code,
            detail,
        });
    }

    pub fn note_ack_psn(&mut self, psn: Psn) {
        if self.ack_first_psn.is_none() {
            self.ack_first_psn = MaybePsn::some(psn);
        }
        self.ack_last_psn = MaybePsn::some(psn);
    }

    fn resolve_pending_read(&mut self, pmtu: u32) {
        if let Some((psn, len)) = self.pending_read.take() {
            let span = read_span(len, pmtu);
            self.req.extend_last(psn, span);
            self.recent.widen(psn, span);
        }
    }

    /// A packet of the request sequence. `pmtu` is the PMTU inferred so
    /// far; `fallback` settles a READ's span when nothing has shown the
    /// PMTU by the time the next request needs it (`--pmtu`, else 4096).
    /// Returns what the packet was to the sequence.
    #[allow(clippy::too_many_arguments)]
    pub fn request(
        &mut self,
        pkt: &Facts,
        r: &RoceFacts,
        op: Operation,
        pmtu: Option<u32>,
        fallback: u32,
        budget: &mut Budget,
    ) -> Verdict {
        let bth = r.bth;
        if pmtu.is_some() {
            self.pmtu = pmtu;
        }
        let verdict = if bth.opcode.transport() == Transport::Ud {
            match self.ud_source(r.src_qp().unwrap_or(0), budget) {
                Some(t) => t.observe(bth.psn, 1),
                // Beyond the budget: counted on the flow, not followed.
                None => return Verdict::InOrder,
            }
        } else {
            // A replay of the pending READ itself does not settle its span.
            if self.pending_read.is_some_and(|(p, _)| p != bth.psn) {
                self.resolve_pending_read(pmtu.unwrap_or(fallback));
            }
            let mut span = 1;
            if op == Operation::ReadRequest
                && let Some(dma_len) = r.dma_len()
            {
                match pmtu {
                    Some(m) => span = read_span(dma_len, m),
                    None if self.pending_read.is_none() => {
                        self.pending_read = Some((bth.psn, dma_len))
                    }
                    None => {}
                }
            }
            if self.req_first_psn.is_none() {
                self.req_first_psn = MaybePsn::some(bth.psn);
            }
            let kind = ReqKind::of(op);
            let v = self.req.observe(bth.psn, span);
            match v {
                Verdict::InOrder | Verdict::First | Verdict::Gap { .. } => {
                    self.recent.note(bth.psn, span, kind);
                    v
                }
                Verdict::Retransmit => self.replayed(pkt, bth.psn, kind, budget),
                _ => v,
            }
        };
        self.sequence_verdict(pkt, bth.psn, verdict, budget);
        verdict
    }

    /// The sequence of UD source QP `qp`, made if the budget allows.
    #[cold]
    #[inline(never)]
    fn ud_source(&mut self, qp: u32, budget: &mut Budget) -> Option<&mut PsnTracker> {
        let key = self.key;
        let c = self.cold();
        if !c.ud.contains_key(&qp) {
            if budget.ud_sources_left == 0 {
                budget.ud_sources_dropped.add(&(key, qp));
                return None;
            }
            budget.ud_sources_left -= 1;
        }
        Some(c.ud.entry(qp).or_default())
    }

    /// A request on a PSN already seen: a replay of the same request, or a
    /// PSN reused by a request of another kind.
    #[cold]
    #[inline(never)]
    fn replayed(&mut self, pkt: &Facts, psn: Psn, kind: ReqKind, budget: &mut Budget) -> Verdict {
        if self.recent.kind_at(psn).is_some_and(|k| k != kind) {
            self.cold().psn_reuse += 1;
            self.event(
                budget,
                EventKind::PsnReuse,
                pkt,
                Some(psn),
                None,
                None,
                None,
            );
            return Verdict::PsnReuse;
        }
        let c = self.cold();
        if kind == ReqKind::Read
            && c.replayed_reads.len() < MAX_REPLAYED_READS
            && !c.replayed_reads.contains(&psn)
        {
            c.replayed_reads.push(psn);
        }
        Verdict::Retransmit
    }

    /// A READ response packet; returns what it was to the response sequence.
    pub fn read_response(
        &mut self,
        pkt: &Facts,
        bth: &BthRepr,
        op: Operation,
        budget: &mut Budget,
    ) -> Verdict {
        let t = self.resp.get_or_insert_default();
        let verdict = match op {
            Operation::ReadResponseFirst | Operation::ReadResponseOnly => {
                t.observe_message_start(bth.psn)
            }
            _ => t.observe(bth.psn, 1),
        };
        self.sequence_verdict(pkt, bth.psn, verdict, budget);
        verdict
    }

    /// Whether a replay is open (its packets go through the slow path).
    #[inline]
    fn episode_open(&self) -> bool {
        self.cold.as_ref().is_some_and(|c| c.open_episode.is_some())
    }

    /// What a packet's PSN verdict adds to the flow. Most packets are in
    /// order with no replay open: only `prev` and the time change, in code
    /// inlined into the per-packet path; the rest is out of line.
    #[inline]
    fn sequence_verdict(&mut self, pkt: &Facts, psn: Psn, verdict: Verdict, budget: &mut Budget) {
        // The flow's last packet of a sequence: `prev`.
        let silence = self
            .prev
            .map(|p| pkt.ts_ns.saturating_sub(p.ts_ns))
            .unwrap_or(0);
        if !matches!(
            verdict,
            Verdict::InOrder | Verdict::First | Verdict::NewMessage
        ) || self.episode_open()
        {
            self.sequence_event(pkt, psn, verdict, budget, silence);
        }
        self.prev = Some(Prev {
            frame: pkt.number,
            ts_ns: pkt.ts_ns,
            psn,
            out_of_order: verdict == Verdict::OutOfOrder,
            silence_ns: silence,
        });
    }

    /// Counts, events and go-back-N episodes of a verdict other than in
    /// order, or while an episode is open.
    #[inline(never)]
    fn sequence_event(
        &mut self,
        pkt: &Facts,
        psn: Psn,
        verdict: Verdict,
        budget: &mut Budget,
        silence: u64,
    ) {
        match verdict {
            Verdict::Gap { first, count } => {
                self.event(
                    budget,
                    EventKind::Gap,
                    pkt,
                    Some(first),
                    Some(count),
                    None,
                    None,
                );
            }
            Verdict::OutOfOrder => {
                let c = self.cold();
                c.out_of_order += 1;
                c.late_psn = Some(psn);
                self.event(
                    budget,
                    EventKind::OutOfOrder,
                    pkt,
                    Some(psn),
                    None,
                    None,
                    None,
                );
            }
            Verdict::Retransmit => {
                self.cold().retransmits += 1;
                self.event(
                    budget,
                    EventKind::Retransmit,
                    pkt,
                    Some(psn),
                    None,
                    None,
                    None,
                );
            }
            _ => {}
        }
        // Go-back-N episodes: consecutive replayed PSNs. A late packet just
        // before the replay (receiver-side capture) is where it began.
        let prev = self.prev;
        let c = self.cold();
        if verdict == Verdict::Retransmit {
            let extends = c
                .open_episode
                .as_ref()
                .is_some_and(|o| psn == Psn::new(o.ep.last_psn) + 1);
            if extends {
                if let Some(o) = c.open_episode.as_mut() {
                    o.ep.last_psn = psn.get();
                    o.ep.packets += 1;
                }
            } else {
                c.close_episode(budget);
                let (start, reordered) = match prev {
                    Some(p) if p.out_of_order && psn == p.psn + 1 => {
                        ((p.frame, p.ts_ns, p.psn, 2, p.silence_ns), false)
                    }
                    _ => (
                        (pkt.number, pkt.ts_ns, psn, 1, silence),
                        c.late_psn == Some(psn),
                    ),
                };
                c.open_episode = Some(OpenEpisode {
                    ep: Episode {
                        frame: start.0,
                        ts_ns: start.1,
                        first_psn: start.2.get(),
                        last_psn: psn.get(),
                        packets: start.3,
                        trigger: Trigger::Timeout,
                        nak_frame: None,
                        latency_ns: start.4,
                        reordered,
                    },
                    silence_ns: start.4,
                    attributed: false,
                });
            }
        } else {
            c.close_episode(budget);
        }
    }

    /// The number (1-based, in the flow's order) of the retransmission
    /// episode open now, if one is.
    pub fn current_episode(&self) -> Option<u64> {
        let c = self.cold.as_ref()?;
        c.open_episode.as_ref().map(|_| c.episode_count + 1)
    }

    /// Whether an episode just opened and still needs its trigger.
    #[inline]
    pub fn episode_needs_trigger(&self) -> bool {
        self.cold
            .as_ref()
            .is_some_and(|c| c.open_episode.as_ref().is_some_and(|o| !o.attributed))
    }

    /// Finds the NAK (from the other direction) that asked for the open
    /// episode, or calls it a timeout.
    #[cold]
    #[inline(never)]
    pub fn attribute_episode(&mut self, naks: Option<&mut std::collections::VecDeque<RecentNak>>) {
        let Some(o) = self.cold().open_episode.as_mut() else {
            return;
        };
        o.attributed = true;
        let best = naks.and_then(|list| {
            list.iter_mut()
                .filter(|n| {
                    !n.used
                        && n.ts_ns <= o.ep.ts_ns
                        && (0..WINDOW as i32).contains(&(Psn::new(o.ep.first_psn) - n.psn))
                })
                .max_by_key(|n| n.ts_ns)
        });
        match best {
            Some(n) => {
                n.used = true;
                o.ep.trigger = if n.rnr { Trigger::Rnr } else { Trigger::Nak };
                o.ep.nak_frame = Some(n.frame);
                o.ep.latency_ns = o.ep.ts_ns.saturating_sub(n.ts_ns);
            }
            None => {
                o.ep.trigger = Trigger::Timeout;
                o.ep.latency_ns = o.silence_ns;
            }
        }
    }

    /// RDMA CM set up a new connection on this flow's QPs: PSN sequences
    /// start again (what was missing from the old one stays counted).
    pub fn new_connection(&mut self, budget: &mut Budget) {
        let missing = self.missing();
        self.req = PsnTracker::default();
        self.pending_read = None;
        self.recent.clear();
        self.req_first_psn = MaybePsn::NONE;
        self.prev = None;
        // The flow it answers is learnt again: the CM has just named the
        // new connection's (rping's QPs come back with a new peer QP).
        self.answers = super::NO_FLOW;
        if let Some(t) = self.resp.as_deref_mut() {
            *t = PsnTracker::default();
        }
        if missing > 0 || self.cold.is_some() {
            let c = self.cold();
            c.close_episode(budget);
            c.carried_missing = missing;
            c.ud.clear();
            c.late_psn = None;
        }
    }

    /// Still missing at the end of the capture.
    pub fn missing(&self) -> u64 {
        let c = self.cold_ref();
        self.req.missing()
            + c.carried_missing
            + self.resp.as_ref().map_or(0, |t| t.missing())
            + c.ud.values().map(|t| t.missing()).sum::<u64>()
    }

    /// The READ response PSN expected next, once any response was seen.
    pub fn resp_next(&self) -> Option<Psn> {
        self.resp.as_ref().and_then(|t| t.next())
    }

    pub fn req_next(&self) -> Option<Psn> {
        self.req.next()
    }

    /// In a part of a split analysis, whose budget of events was the
    /// whole one: lets go of the events and episodes (`beyond`) that one
    /// analysis of every frame charged after its budget ran out, and
    /// counts them as it would have. Returns those it would have counted
    /// against the budget (`events_dropped` of the capture).
    pub fn settle_budget(&mut self, beyond: [u64; 2], per_flow: usize) -> u64 {
        let Some(c) = self.cold.as_mut() else {
            return 0;
        };
        let per_flow = per_flow as u64;
        // Events: the list full stops them first, the budget after; past
        // the budget the list stays as it was.
        let n = c.events.len() as u64;
        let kept = n.saturating_sub(beyond[0]);
        let tried = n + c.events_dropped;
        c.events.truncate(kept as usize);
        c.events_dropped = tried - kept;
        let mut dropped = if kept < per_flow { tried - kept } else { 0 };
        // Episodes: each closed one was tried once.
        let kept = (c.episodes.len() as u64).saturating_sub(beyond[1]);
        c.episodes.truncate(kept as usize);
        if kept < per_flow {
            dropped += c.episode_count.saturating_sub(kept);
        }
        dropped
    }

    /// Ends the flow: `inferred` is its host pair's PMTU if anything
    /// showed it, `fallback` the `--pmtu` option.
    pub fn finish(&mut self, inferred: Option<u32>, fallback: Option<u32>, budget: &mut Budget) {
        let pmtu = inferred.or(fallback);
        if pmtu.is_some() {
            self.pmtu = pmtu;
        }
        self.resolve_pending_read(pmtu.unwrap_or(DEFAULT_PMTU));
        if let Some(c) = self.cold.as_mut() {
            c.close_episode(budget);
        }
    }
}

impl FlowCold {
    /// Ends the open episode: counted always, listed while the budget
    /// allows (an episode costs like an event).
    fn close_episode(&mut self, budget: &mut Budget) {
        if let Some(o) = self.open_episode.take() {
            self.episode_count += 1;
            if o.ep.trigger == Trigger::Timeout {
                self.timeouts.add(Psn::new(o.ep.first_psn), o.ep.latency_ns);
            }
            if self.episodes.len() < budget.events_per_flow && budget.events_left > 0 {
                budget.events_left -= 1;
                budget.charged(true);
                self.episodes.push(o.ep);
            } else if self.episodes.len() < budget.events_per_flow {
                budget.events_dropped += 1;
            }
        }
    }
}

/// PSNs a READ request of `len` bytes consumes: ceil(len / PMTU), at least 1.
pub fn read_span(len: u32, pmtu: u32) -> u32 {
    if pmtu == 0 {
        return 1;
    }
    len.div_ceil(pmtu).clamp(1, super::psn::MAX_SPAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_flow_is_small() {
        // The hot part only: the rarer part is made on demand.
        let size = std::mem::size_of::<FlowState>();
        assert!(size <= 352, "FlowState is {size} bytes");
    }

    #[test]
    fn read_responses_alone_make_no_rarer_part() {
        use super::super::facts::Body;
        use Operation::*;
        use std::net::Ipv4Addr;
        let key = FlowKey {
            src: Ipv4Addr::new(10, 0, 0, 2).into(),
            dst: Ipv4Addr::new(10, 0, 0, 1).into(),
            dest_qp: 0x11,
        };
        let pkt = Facts {
            number: 1,
            ts_ns: 0,
            len: 100,
            flags: 0,
            lost: 0,
            body: Body::Other { protocol: "ARP" },
        };
        let mut budget = Budget {
            events_per_flow: 8,
            events_left: 8,
            events_dropped: 0,
            ud_sources_left: 0,
            ud_sources_dropped: DistinctCounter::default(),
            frame: 1,
            flow: 0,
            charges: None,
        };
        let mut f = FlowState::new(key, RoceVersion::V2, &pkt);
        assert_eq!(f.resp_next(), None);
        let mut respond = |f: &mut FlowState, op, psn: u32| {
            let bth = BthRepr {
                psn: Psn::new(psn),
                ..BthRepr::default()
            };
            f.read_response(&pkt, &bth, op, &mut budget)
        };
        for (op, psn) in [
            (ReadResponseFirst, 100),
            (ReadResponseMiddle, 101),
            (ReadResponseLast, 102),
            (ReadResponseOnly, 103),
        ] {
            assert_ne!(respond(&mut f, op, psn), Verdict::Retransmit);
        }
        // In order: the sequence needs a few words, not the rarer part.
        assert!(f.cold.is_none());
        assert_eq!((f.resp_next(), f.missing()), (Some(Psn::new(104)), 0));
        // A message starting ahead is no loss (the PSNs between are
        // other requests', answered by ACKs, not by responses) ...
        assert_eq!(respond(&mut f, ReadResponseFirst, 106), Verdict::NewMessage);
        assert_eq!((f.resp_next(), f.missing()), (Some(Psn::new(107)), 0));
        // ... two responses gone inside a message are: missing, and an
        // event in the rarer part.
        respond(&mut f, ReadResponseLast, 109);
        assert_eq!((f.resp_next(), f.missing()), (Some(Psn::new(110)), 2));
        assert!(f.cold.is_some());
        // A new connection starts the sequence again; what was missing
        // stays counted.
        f.new_connection(&mut budget);
        assert_eq!((f.resp_next(), f.missing()), (None, 2));
    }

    #[test]
    fn maybe_psn_is_an_option_in_four_bytes() {
        assert_eq!(std::mem::size_of::<MaybePsn>(), 4);
        assert_eq!(MaybePsn::default().get(), None);
        for psn in [0, 1, Psn::MASK].map(Psn::new) {
            let p = MaybePsn::some(psn);
            assert_eq!(
                (p.get(), p.is_some(), p.is_none()),
                (Some(psn), true, false)
            );
        }
        // Only PSNs' 24 bits are kept: nothing given is taken for none.
        assert_eq!(
            MaybePsn::some(Psn::new(u32::MAX)).get(),
            Some(Psn::new(Psn::MASK))
        );
    }
}
