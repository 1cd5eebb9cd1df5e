//! One direction of one queue pair and everything counted on it.

use std::net::IpAddr;

use rustc_hash::FxHashMap;

use super::facts::{Facts, RoceFacts};
use super::psn::{PsnTracker, Verdict, WINDOW, psn_add, psn_diff};
use super::report::{DelayStats, Episode, Event, EventKind, NakCounts, Trigger};
use crate::dissect::{Packet, RoceVersion};
use crate::wire::BthRepr;
use crate::wire::{Operation, Transport};

/// (source address, destination address, BTH DestQP). Addresses are IPs
/// for v2 and GIDs for v1; the UDP source port is entropy, never a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlowKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub dest_qp: u32,
}

/// Hashed as three words rather than field by field and byte by byte: the
/// flow table is looked up for every packet.
impl std::hash::Hash for FlowKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let bits = |a: IpAddr| match a {
            IpAddr::V4(v4) => u128::from(v4.to_bits()),
            IpAddr::V6(v6) => v6.to_bits(),
        };
        state.write_u128(bits(self.src));
        state.write_u128(bits(self.dst));
        state.write_u32(self.dest_qp);
    }
}

/// A NAK remembered for attributing the replay that follows it.
#[derive(Debug, Clone, Copy)]
pub struct RecentNak {
    pub psn: u32,
    pub ts_ns: u64,
    pub frame: u64,
    pub rnr: bool,
    pub used: bool,
}

/// Default PMTU when nothing better is known.
pub const DEFAULT_PMTU: u32 = 4096;

#[derive(Debug, Clone, Copy)]
struct Prev {
    frame: u64,
    ts_ns: u64,
    psn: u32,
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

/// How many events may still be kept: at most `per_flow` on each flow and
/// `total` in all. What does not fit is counted, per flow and here.
#[derive(Debug, Clone)]
pub struct EventBudget {
    pub per_flow: usize,
    pub total_left: u64,
    /// Events counted but not kept because `total` ran out.
    pub dropped_total: u64,
}

/// The kind of request that consumed a PSN: a replay repeats the same
/// kind, a request of another kind on a consumed PSN breaks the PSN rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReqKind {
    #[default]
    Send,
    Write,
    Read,
    Atomic,
}

impl ReqKind {
    pub fn of(op: Operation) -> ReqKind {
        use Operation::*;
        match op {
            WriteFirst | WriteMiddle | WriteLast | WriteLastImm | WriteOnly | WriteOnlyImm => {
                ReqKind::Write
            }
            ReadRequest => ReqKind::Read,
            CompareSwap | FetchAdd => ReqKind::Atomic,
            _ => ReqKind::Send,
        }
    }
}

/// A run of consecutive PSNs consumed by requests of one kind.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    first: u32,
    span: u32,
    kind: ReqKind,
}

const RUNS: usize = 8;
/// Replayed READ requests remembered per flow.
const MAX_REPLAYED_READS: usize = 16;
/// Longest run remembered: any PSN that far back is of the run's kind.
const MAX_RUN: u32 = 1 << 23;

/// The last few runs of a request sequence, so that a PSN behind the one
/// expected can be told apart: the same kind of request again (a replay)
/// or another kind (a reuse). A replay goes back at most a window of
/// outstanding requests, a few messages.
#[derive(Debug, Clone, Copy, Default)]
struct RecentRequests {
    runs: [Run; RUNS],
    last: u8,
    len: u8,
}

impl RecentRequests {
    /// `span` PSNs from `psn` consumed by a request of `kind`, in order.
    #[inline]
    fn note(&mut self, psn: u32, span: u32, kind: ReqKind) {
        let r = &mut self.runs[usize::from(self.last) % RUNS];
        if self.len > 0 && r.kind == kind && psn == psn_add(r.first, r.span) {
            r.span = r.span.saturating_add(span).min(MAX_RUN);
            return;
        }
        self.push(psn, span, kind);
    }

    #[inline(never)]
    fn push(&mut self, psn: u32, span: u32, kind: ReqKind) {
        self.last = ((usize::from(self.last) + 1) % RUNS) as u8;
        self.runs[usize::from(self.last)] = Run {
            first: psn,
            span: span.min(MAX_RUN),
            kind,
        };
        self.len = (self.len + 1).min(RUNS as u8);
    }

    /// The READ at `psn` turned out to span `span` PSNs.
    fn widen(&mut self, psn: u32, span: u32) {
        let r = &mut self.runs[usize::from(self.last) % RUNS];
        if self.len > 0 && r.kind == ReqKind::Read && psn_diff(psn, r.first) >= 0 {
            let end = psn_diff(psn, r.first) as u32 + span;
            r.span = r.span.max(end).min(MAX_RUN);
        }
    }

    /// The kind of request that consumed `psn`, if it is in a recent run.
    fn kind_at(&self, psn: u32) -> Option<ReqKind> {
        let n = usize::from(self.len);
        (0..n)
            .map(|i| &self.runs[(usize::from(self.last) + RUNS - i) % RUNS])
            .find(|r| {
                let d = psn_diff(psn, r.first);
                d >= 0 && (d as u32) < r.span
            })
            .map(|r| r.kind)
    }

    fn clear(&mut self) {
        self.len = 0;
    }
}

/// One flow's state. The fields every packet reads or writes come first
/// and in this order (`repr(C)`), so that a packet touches the first ~310
/// bytes of the flow (five or six cache lines) rather than lines all over
/// its ~590; the counters of rare events follow.
#[repr(C)]
pub struct FlowState {
    pub key: FlowKey,
    pub packets: u64,
    pub bytes: u64,
    pub payload_bytes: u64,
    pub last_ts: u64,
    last_frame: Option<LastFrame>,
    pub pmtu_generation: u64,
    pub pmtu_cached: Option<u32>,
    pub pmtu: Option<u32>,
    /// Request sequence (SEND, WRITE, READ request, atomics).
    pub req: Option<PsnTracker>,
    /// READ responses.
    resp: Option<PsnTracker>,
    last_seq_ts: Option<u64>,
    prev: Option<Prev>,
    /// Rare (a replay in progress): boxed to keep the hot lines dense.
    open_episode: Option<Box<OpenEpisode>>,
    /// A READ request whose PSN count waits for the PMTU: (PSN, DMA length).
    pending_read: Option<(u32, u32)>,
    /// What consumed the recent request PSNs (RC, UC, XRC).
    recent: RecentRequests,
    pub req_first_psn: Option<u32>,
    /// PSNs carried by AETH packets (ACKs, NAKs, READ responses).
    pub ack_first_psn: Option<u32>,
    pub ack_last_psn: Option<u32>,
    pub pending_ce: Option<u64>,
    pub priority: Option<u8>,
    pub transport: Option<Transport>,
    pub version: RoceVersion,

    pub first_frame: u64,
    pub duplicates: u64,
    pub first_ts: u64,
    pub retransmits: u64,
    pub out_of_order: u64,
    pub psn_reuse: u64,
    /// The PSN of the latest out-of-order arrival: a replay that starts
    /// with it replays a packet that was reordered, not lost.
    late_psn: Option<u32>,
    /// READ requests replayed (their PSNs, the first few): answered or not
    /// is known once the other direction is.
    pub replayed_reads: Vec<u32>,
    pub ecn_ce: u64,
    pub cnps: u64,
    pub bad_icrc: u64,
    pub naks: NakCounts,
    pub events: Vec<Event>,
    pub events_dropped: u64,
    pub episodes: Vec<Episode>,
    pub episode_count: u64,
    pub ce_to_cnp: DelayAcc,
    /// UD: one request sequence per DETH source QP.
    ud: FxHashMap<u32, PsnTracker>,
    /// Missing PSNs of earlier connections on these QPs.
    carried_missing: u64,
}

/// Enough of a frame to tell a byte-identical copy: its length, a 64-bit
/// hash of its first bytes (every header, variant fields included) and its
/// last eight bytes (the ICRC, which covers the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fingerprint {
    len: u32,
    head: u64,
    tail: u64,
}

/// The fingerprint of a flow's last frame and when it was captured.
#[derive(Debug, Clone, Copy)]
struct LastFrame {
    ts_ns: u64,
    fp: Fingerprint,
}

const FINGERPRINT_HEAD: usize = 128;

impl Fingerprint {
    pub fn of(pkt: &Packet<'_>) -> Self {
        Self::of_bytes(pkt.data)
    }

    /// The fingerprint of a frame's bytes `d`.
    #[inline(always)]
    pub fn of_bytes(d: &[u8]) -> Self {
        let head = &d[..d.len().min(FINGERPRINT_HEAD)];
        // Four independent lanes, word i in lane i % 4: the multiplies
        // overlap instead of waiting on each other.
        const K: u64 = 0x0000_0100_0000_01b3;
        let mut lanes = [
            0xcbf2_9ce4_8422_2325u64,
            0x9e37_79b9_7f4a_7c15,
            0xc2b2_ae3d_27d4_eb4f,
            0x1656_67b1_9e37_79f9,
        ];
        let word = |w: &[u8]| w.first_chunk::<8>().map_or(0, |w| u64::from_le_bytes(*w));
        let mix = |lane: u64, w: u64| (lane ^ w).wrapping_mul(K).rotate_left(29);
        let block = |lanes: [u64; 4], b: &[u8; 32]| {
            let w = |i: usize| u64::from_le_bytes(*b[i..].first_chunk::<8>().unwrap_or(&[0; 8]));
            [
                mix(lanes[0], w(0)),
                mix(lanes[1], w(8)),
                mix(lanes[2], w(16)),
                mix(lanes[3], w(24)),
            ]
        };
        // A whole head (the usual case) is four blocks known at compile
        // time: the loop unrolls.
        let rest: &[u8] = match head.first_chunk::<FINGERPRINT_HEAD>() {
            Some(whole) => {
                for b in whole.as_chunks::<32>().0 {
                    lanes = block(lanes, b);
                }
                &[]
            }
            None => {
                let (blocks, rest) = head.as_chunks::<32>();
                for b in blocks {
                    lanes = block(lanes, b);
                }
                rest
            }
        };
        let mut words = rest.chunks_exact(8);
        for (lane, w) in lanes.iter_mut().zip(&mut words) {
            *lane = mix(*lane, word(w));
        }
        let mut h = lanes[0]
            ^ lanes[1].rotate_left(16)
            ^ lanes[2].rotate_left(32)
            ^ lanes[3].rotate_left(48);
        for &b in words.remainder() {
            h = (h ^ u64::from(b)).wrapping_mul(K);
        }
        let tail = match d.last_chunk::<8>() {
            Some(t) => *t,
            None => {
                let mut tail = [0u8; 8];
                tail[8 - d.len()..].copy_from_slice(d);
                tail
            }
        };
        Fingerprint {
            len: d.len() as u32,
            head: h,
            tail: u64::from_le_bytes(tail),
        }
    }
}

impl FlowState {
    pub fn new(key: FlowKey, version: RoceVersion, pkt: &Facts) -> Self {
        FlowState {
            key,
            version,
            transport: None,
            first_frame: pkt.number,
            packets: 0,
            bytes: 0,
            payload_bytes: 0,
            duplicates: 0,
            first_ts: pkt.ts_ns,
            last_ts: pkt.ts_ns,
            retransmits: 0,
            out_of_order: 0,
            psn_reuse: 0,
            late_psn: None,
            replayed_reads: Vec::new(),
            recent: RecentRequests::default(),
            ecn_ce: 0,
            cnps: 0,
            bad_icrc: 0,
            naks: NakCounts::default(),
            priority: None,
            events: Vec::new(),
            events_dropped: 0,
            episodes: Vec::new(),
            episode_count: 0,
            ce_to_cnp: DelayAcc::default(),
            pending_ce: None,
            pmtu: None,
            pmtu_cached: None,
            pmtu_generation: 0,
            req: None,
            ud: FxHashMap::default(),
            resp: None,
            pending_read: None,
            req_first_psn: None,
            ack_first_psn: None,
            ack_last_psn: None,
            carried_missing: 0,
            prev: None,
            last_seq_ts: None,
            open_episode: None,
            last_frame: None,
        }
    }

    /// Byte-identical to the previous frame of the flow and close in time.
    /// Frames longer than the fingerprint's head are compared through their
    /// ICRC, which covers everything after the headers.
    pub fn is_duplicate(&self, fp: &Fingerprint, ts_ns: u64, window_ns: u64) -> bool {
        let Some(last) = &self.last_frame else {
            return false;
        };
        last.fp == *fp && ts_ns >= last.ts_ns && ts_ns - last.ts_ns <= window_ns
    }

    pub fn remember(&mut self, fp: &Fingerprint, ts_ns: u64) {
        self.last_frame = Some(LastFrame { ts_ns, fp: *fp });
    }

    /// Records an event (or counts it as dropped past `max`). Events are
    /// rare, as are the other paths marked cold in the analysis: kept out of
    /// the per-packet code that inlines into `Analyzer::observe`, they left
    /// it 4-6 % faster (`examples/facts_speed.rs`, 1024 and 32 flows).
    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    pub fn event(
        &mut self,
        budget: &mut EventBudget,
        kind: EventKind,
        pkt: &Facts,
        psn: Option<u32>,
        count: Option<u32>,
        code: Option<u8>,
        detail: Option<&'static str>,
    ) {
        if self.events.len() >= budget.per_flow {
            self.events_dropped += 1;
            return;
        }
        if budget.total_left == 0 {
            self.events_dropped += 1;
            budget.dropped_total += 1;
            return;
        }
        budget.total_left -= 1;
        self.events.push(Event {
            kind,
            frame: pkt.number,
            ts_ns: pkt.ts_ns,
            psn,
            count,
            code,
            detail,
        });
    }

    pub fn note_ack_psn(&mut self, psn: u32) {
        if self.ack_first_psn.is_none() {
            self.ack_first_psn = Some(psn);
        }
        self.ack_last_psn = Some(psn);
    }

    fn resolve_pending_read(&mut self, pmtu: u32) {
        if let Some((psn, len)) = self.pending_read.take() {
            let span = read_span(len, pmtu);
            if let Some(t) = self.req.as_mut() {
                t.extend_last(psn, span);
            }
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
        budget: &mut EventBudget,
    ) -> Verdict {
        let bth = r.bth;
        if pmtu.is_some() {
            self.pmtu = pmtu;
        }
        let verdict = if bth.opcode.transport() == Transport::Ud {
            let src_qp = r.src_qp.unwrap_or(0);
            self.ud.entry(src_qp).or_default().observe(bth.psn, 1)
        } else {
            // A replay of the pending READ itself does not settle its span.
            if self.pending_read.is_some_and(|(p, _)| p != bth.psn) {
                self.resolve_pending_read(pmtu.unwrap_or(fallback));
            }
            let mut span = 1;
            if op == Operation::ReadRequest
                && let Some(dma_len) = r.dma_len
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
                self.req_first_psn = Some(bth.psn);
            }
            let kind = ReqKind::of(op);
            let v = self
                .req
                .get_or_insert_with(Default::default)
                .observe(bth.psn, span);
            match v {
                Verdict::InOrder | Verdict::First | Verdict::Gap { .. } => {
                    self.recent.note(bth.psn & super::psn::PSN_MASK, span, kind);
                    v
                }
                Verdict::Retransmit => self.replayed(pkt, bth.psn, kind, budget),
                _ => v,
            }
        };
        self.sequence_verdict(pkt, bth.psn, verdict, budget);
        verdict
    }

    /// A request on a PSN already seen: a replay of the same request, or a
    /// PSN reused by a request of another kind.
    #[cold]
    #[inline(never)]
    fn replayed(
        &mut self,
        pkt: &Facts,
        psn: u32,
        kind: ReqKind,
        budget: &mut EventBudget,
    ) -> Verdict {
        if self.recent.kind_at(psn).is_some_and(|k| k != kind) {
            self.psn_reuse += 1;
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
        if kind == ReqKind::Read
            && self.replayed_reads.len() < MAX_REPLAYED_READS
            && !self.replayed_reads.contains(&psn)
        {
            self.replayed_reads.push(psn);
        }
        Verdict::Retransmit
    }

    /// A READ response packet; returns what it was to the response sequence.
    pub fn read_response(
        &mut self,
        pkt: &Facts,
        bth: &BthRepr,
        op: Operation,
        budget: &mut EventBudget,
    ) -> Verdict {
        let t = self.resp.get_or_insert_with(Default::default);
        let verdict = match op {
            Operation::ReadResponseFirst | Operation::ReadResponseOnly => {
                t.observe_message_start(bth.psn)
            }
            _ => t.observe(bth.psn, 1),
        };
        self.sequence_verdict(pkt, bth.psn, verdict, budget);
        verdict
    }

    /// What a packet's PSN verdict adds to the flow. Most packets are in
    /// order with no replay open: only `prev` and the time change, in code
    /// inlined into the per-packet path; the rest is out of line.
    #[inline]
    fn sequence_verdict(
        &mut self,
        pkt: &Facts,
        psn: u32,
        verdict: Verdict,
        budget: &mut EventBudget,
    ) {
        let silence = self
            .last_seq_ts
            .map(|t| pkt.ts_ns.saturating_sub(t))
            .unwrap_or(0);
        self.last_seq_ts = Some(pkt.ts_ns);
        if !matches!(
            verdict,
            Verdict::InOrder | Verdict::First | Verdict::NewMessage
        ) || self.open_episode.is_some()
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
        psn: u32,
        verdict: Verdict,
        budget: &mut EventBudget,
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
                self.out_of_order += 1;
                self.late_psn = Some(psn & super::psn::PSN_MASK);
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
                self.retransmits += 1;
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
        if verdict == Verdict::Retransmit {
            let extends = self
                .open_episode
                .as_ref()
                .is_some_and(|o| psn == psn_add(o.ep.last_psn, 1));
            if extends {
                if let Some(o) = self.open_episode.as_mut() {
                    o.ep.last_psn = psn;
                    o.ep.packets += 1;
                }
            } else {
                self.close_episode(budget.per_flow);
                let (start, reordered) = match self.prev {
                    Some(p) if p.out_of_order && psn == psn_add(p.psn, 1) => {
                        ((p.frame, p.ts_ns, p.psn, 2, p.silence_ns), false)
                    }
                    _ => (
                        (pkt.number, pkt.ts_ns, psn, 1, silence),
                        self.late_psn == Some(psn & super::psn::PSN_MASK),
                    ),
                };
                self.open_episode = Some(Box::new(OpenEpisode {
                    ep: Episode {
                        frame: start.0,
                        ts_ns: start.1,
                        first_psn: start.2,
                        last_psn: psn,
                        packets: start.3,
                        trigger: Trigger::Timeout,
                        nak_frame: None,
                        latency_ns: start.4,
                        reordered,
                    },
                    silence_ns: start.4,
                    attributed: false,
                }));
            }
        } else {
            self.close_episode(budget.per_flow);
        }
    }

    fn close_episode(&mut self, max: usize) {
        if let Some(o) = self.open_episode.take() {
            let o = *o;
            self.episode_count += 1;
            if self.episodes.len() < max {
                self.episodes.push(o.ep);
            }
        }
    }

    /// Whether an episode just opened and still needs its trigger.
    pub fn episode_needs_trigger(&self) -> bool {
        self.open_episode.as_ref().is_some_and(|o| !o.attributed)
    }

    /// Finds the NAK (from the other direction) that asked for the open
    /// episode, or calls it a timeout.
    #[cold]
    #[inline(never)]
    pub fn attribute_episode(&mut self, naks: Option<&mut Vec<RecentNak>>) {
        let Some(o) = self.open_episode.as_mut() else {
            return;
        };
        o.attributed = true;
        let best = naks.and_then(|list| {
            list.iter_mut()
                .filter(|n| {
                    !n.used
                        && n.ts_ns <= o.ep.ts_ns
                        && (0..WINDOW as i32).contains(&psn_diff(o.ep.first_psn, n.psn))
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
    pub fn new_connection(&mut self) {
        let missing = self.missing();
        self.close_episode(usize::MAX);
        self.carried_missing += missing;
        self.req = None;
        self.resp = None;
        self.ud.clear();
        self.pending_read = None;
        self.recent.clear();
        self.late_psn = None;
        self.req_first_psn = None;
        self.prev = None;
        self.last_seq_ts = None;
    }

    /// Still missing at the end of the capture.
    pub fn missing(&self) -> u64 {
        self.carried_missing
            + self.req.as_ref().map_or(0, |t| t.missing())
            + self.resp.as_ref().map_or(0, |t| t.missing())
            + self.ud.values().map(|t| t.missing()).sum::<u64>()
    }

    /// The READ response PSN expected next, once any response was seen.
    pub fn resp_next(&self) -> Option<u32> {
        self.resp.as_ref().and_then(|t| t.next())
    }

    pub fn req_next(&self) -> Option<u32> {
        self.req.as_ref().and_then(|t| t.next())
    }

    /// Ends the flow: `inferred` is its host pair's PMTU if anything
    /// showed it, `fallback` the `--pmtu` option.
    pub fn finish(&mut self, inferred: Option<u32>, fallback: Option<u32>) {
        let pmtu = inferred.or(fallback);
        if pmtu.is_some() {
            self.pmtu = pmtu;
        }
        self.resolve_pending_read(pmtu.unwrap_or(DEFAULT_PMTU));
        self.close_episode(usize::MAX);
    }
}

/// PSNs a READ request of `len` bytes consumes: ceil(len / PMTU), at least 1.
pub fn read_span(len: u32, pmtu: u32) -> u32 {
    if pmtu == 0 {
        return 1;
    }
    len.div_ceil(pmtu).clamp(1, WINDOW)
}
