//! One analysis split by host pair, its parts on separate cores, joined
//! into the report one thread would have written.
//!
//! Every frame of a connection (requests, ACKs, NAKs, READ responses,
//! CNPs) travels between one pair of hosts, and what the analysis keeps
//! across flows is kept per host pair (PMTUs, recent NAKs, the request
//! flows ACKs are matched to, CE marks waiting for their CNP). So analyses
//! of disjoint sets of host pairs, each fed the RoCE frames of its pairs in
//! file order, hold between them what one analysis of every frame holds.
//! What is not per host pair stays with the frame loop ([`FrameLoop`]),
//! which sees every frame in order: the capture-wide counts, the pause
//! frames, and which frames were sent while their receiver was paused
//! (marked [`Facts::SENT_PAUSED`] for the part that analyses them).
//!
//! [`join`] makes one [`Analyzer`] of the frame loop and the parts: flows
//! take the ids one analysis would have given them (in order of their
//! first frame) and everything that names a flow is renumbered. Which
//! events one analysis keeps once its budget runs out depends on the order
//! of all frames: each part notes where it charged what it kept, and the
//! budget is applied to all of them when they are joined. The other
//! budgets are not (a split analysis whose parts together spent more than
//! one of them allows cannot be joined), nor is what is not per host pair (CM requests of two host pairs with
//! one communication ID, which is all they are matched by; NVMe-oF queues,
//! numbered capture-wide; a capture whose ICRCs are all wrong, summarised
//! from its first frames).
//! [`join`] says why ([`Unsplit`]), and the caller analyses on one thread.

use std::net::IpAddr;

use crate::dissect::Addr;

use super::flow::FlowState;
use super::index::{FlowIndex, hash_key};
use super::{
    AnalysisOptions, Analyzer, Body, Facts, FlowKey, ICRC_SUMMARY_AFTER, MATCH_LOOKS_FIRST, Map,
    NO_FLOW, Role, Stage, priority,
};

/// Why a split analysis cannot be joined into what one thread reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsplit {
    /// Two host pairs used one communication ID for CM requests (which
    /// are matched by it alone), or more were pending than
    /// `--max-cm-pending`.
    Cm,
    /// NVMe-oF queues were found (numbered in order across the capture).
    Nvme,
    /// Enough wrong ICRCs to be summarised from the capture's first ones.
    IcrcSummary,
    /// More flows than `--max-flows`.
    Flows,
    /// More UD source QPs than the budget.
    UdSources,
    /// More timing samples than `--max-timing-samples`.
    TimingSamples,
    /// More looks for the request flow of an answer than the first budget.
    MatchLooks,
    /// Capture duplicates in a capture with pauses (the frame loop, which
    /// follows the pauses, cannot tell them).
    DuplicatesWithPauses,
    /// A part's thread stopped before the end.
    Stopped,
}

impl std::fmt::Display for Unsplit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unsplit::Cm => "its CM requests share communication IDs across hosts",
            Unsplit::Nvme => "it carries NVMe-oF",
            Unsplit::IcrcSummary => "its wrong ICRCs are summarised",
            Unsplit::Flows => "it has more flows than --max-flows",
            Unsplit::UdSources => "it has more UD source QPs than tracked",
            Unsplit::TimingSamples => "it has more timing samples than --max-timing-samples",
            Unsplit::MatchLooks => "matching its ACKs to requests took too many looks",
            Unsplit::DuplicatesWithPauses => "it has capture duplicates and pauses",
            Unsplit::Stopped => "a part's thread stopped",
        })
    }
}

/// Parts a split analysis may have.
pub const MAX_PARTS: usize = 64;

/// The part among `parts` that analyses the frames of `key`'s host pair:
/// a sum of one mix of each address, so that both directions agree
/// (hashing the sorted pair through `Addr`'s `Hash` took 1.5 % of a split
/// run's samples).
#[inline]
pub fn part_of(key: &FlowKey, parts: usize) -> usize {
    if parts <= 1 {
        return 0;
    }
    let h = mix(addr_bits(&key.src)).wrapping_add(mix(addr_bits(&key.dst)));
    // The high half of the product: even over the parts.
    ((u128::from(mix(h)) * parts as u128) >> 64) as usize
}

fn addr_bits(a: &Addr) -> u64 {
    match a {
        Addr::Ip(IpAddr::V4(v)) => u64::from(v.to_bits()),
        Addr::Ip(IpAddr::V6(v)) => {
            let x = v.to_bits();
            (x as u64) ^ (x >> 64) as u64 ^ 6 << 60
        }
        Addr::Lid(l) => u64::from(*l) | 1 << 62,
    }
}

/// A 64-bit finaliser (SplitMix64's).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The frame loop of a split analysis: every frame passes here first, in
/// file order.
pub struct FrameLoop {
    an: Analyzer,
    parts: usize,
    /// Flows that sent while a pause was open, by key: an id of their own
    /// here (renumbered by [`join`]) and the intervals they were noted in.
    ids: Map<FlowKey, u32>,
    noted: Vec<(FlowKey, [u32; 2])>,
    /// More flows sent while paused than `--max-flows`: not followed
    /// further, and the parts are not joined.
    overflow: bool,
}

impl FrameLoop {
    /// The frame loop of an analysis in `parts` parts (1 to [`MAX_PARTS`]).
    pub fn new(opts: AnalysisOptions, parts: usize) -> FrameLoop {
        let mut an = Analyzer::new(opts);
        an.role = Role::Frames;
        FrameLoop {
            an,
            parts: parts.clamp(1, MAX_PARTS),
            ids: Map::default(),
            noted: Vec::new(),
            overflow: false,
        }
    }

    pub fn parts(&self) -> usize {
        self.parts
    }

    /// The capture's first frame's time, once seen: what a part needs to
    /// be made ([`part`]).
    pub fn origin(&self) -> Option<u64> {
        self.an.timeline.started()
    }

    /// Why the frames seen so far already keep the parts from being
    /// joined, if they do (see [`Analyzer::unjoinable`] for a part's).
    pub fn unjoinable(&self) -> Option<Unsplit> {
        if self.overflow {
            Some(Unsplit::Flows)
        } else if self.an.totals.icrc_errors >= ICRC_SUMMARY_AFTER {
            Some(Unsplit::IcrcSummary)
        } else {
            None
        }
    }

    /// Counts a frame capture-wide and follows the pauses; returns the part
    /// that analyses it, if any does (RoCE frames only), having marked it
    /// if it was sent while paused.
    #[inline]
    pub fn frame(&mut self, facts: &mut Facts) -> Option<usize> {
        let an = &mut self.an;
        an.count_frame(facts);
        let r = match &facts.body {
            Body::Other { .. } | Body::Tcp(_) => {
                an.other_body(facts);
                return None;
            }
            Body::Pause { .. } => {
                an.pause_body(facts);
                return None;
            }
            Body::Roce(r) => r,
        };
        // As [`Analyzer::roce_packet`] does for every frame of a tracked flow
        // (which is all of them: a capture with more flows is not joined).
        let pauses = &mut an.pauses;
        pauses.max_frame = pauses.max_frame.max(facts.len);
        if let (Some(prio), Some(dst)) = (priority(&an.opts, r), r.dst_mac)
            && an.opts.stages.has(Stage::Pauses)
            && pauses.any_open(prio)
        {
            let id = match self.ids.get(&r.key) {
                Some(&id) => Some(id),
                None if (self.noted.len() as u64) < an.opts.limits.flows => {
                    let id = self.noted.len() as u32;
                    self.ids.insert(r.key, id);
                    self.noted.push((r.key, [0; 2]));
                    Some(id)
                }
                None => {
                    self.overflow = true;
                    None
                }
            };
            if let Some(id) = id {
                let noted = &mut self.noted[id as usize].1;
                if pauses.sent(dst, prio, facts.ts_ns, facts.len, id, noted) {
                    facts.flags |= Facts::SENT_PAUSED;
                }
            }
        }
        Some(part_of(&r.key, self.parts))
    }
}

/// An analysis of one part, to be fed the frames [`FrameLoop::frame`]
/// gives it; `origin` is the capture's first frame's time
/// ([`FrameLoop::origin`]).
pub fn part(opts: AnalysisOptions, origin: u64) -> Analyzer {
    let mut an = Analyzer::new(opts);
    an.role = Role::Part;
    an.timeline.start(origin);
    an.budget.charges = Some(Vec::new());
    an
}

impl Analyzer {
    /// A frame of this part of a split analysis, as [`FrameLoop::frame`]
    /// gave it (the frame loop counts it capture-wide).
    #[inline]
    pub fn observe_part(&mut self, facts: &Facts) {
        debug_assert_eq!(self.role, Role::Part);
        if let Body::Roce(r) = &facts.body {
            self.roce_packet(facts, r);
        }
    }

    /// Why this part of a split analysis already cannot be joined, if it
    /// cannot (checked as it goes, so that the analysis starts again on one
    /// thread early; [`join`] checks all the parts together).
    pub fn unjoinable(&self) -> Option<Unsplit> {
        let l = &self.opts.limits;
        if self.nvme.active() {
            Some(Unsplit::Nvme)
        } else if self.req_ids.len() as u64 > l.cm_pending {
            Some(Unsplit::Cm)
        } else if self.flows_dropped.count() > 0 {
            Some(Unsplit::Flows)
        } else if self.budget.ud_sources_dropped.count() > 0 {
            Some(Unsplit::UdSources)
        } else if self.logs.left() == 0 {
            Some(Unsplit::TimingSamples)
        } else if self.match_asked > MATCH_LOOKS_FIRST {
            Some(Unsplit::MatchLooks)
        } else {
            None
        }
    }
}

/// Joins the frame loop and its parts (in any order) into the analysis one
/// thread would have made of the same frames, or says why it cannot.
pub fn join(frames: FrameLoop, mut parts: Vec<Analyzer>) -> Result<Analyzer, Unsplit> {
    if let Some(why) = frames.unjoinable() {
        return Err(why);
    }
    let FrameLoop {
        an: mut all, noted, ..
    } = frames;
    check(&all, &parts)?;
    let limits = all.opts.limits;

    let (events_kept, events_dropped) = settle_events(&mut parts, &limits);

    // Flows, in order of first frame: each part's are already.
    let total: usize = parts.iter().map(|p| p.flows.len()).sum();
    let mut maps: Vec<Vec<u32>> = parts
        .iter()
        .map(|p| Vec::with_capacity(p.flows.len()))
        .collect();
    let mut flows: Vec<FlowState> = Vec::with_capacity(total);
    let mut sources: Vec<std::iter::Peekable<std::vec::IntoIter<FlowState>>> = Vec::new();
    let mut rest = Vec::with_capacity(parts.len());
    for mut p in parts {
        sources.push(std::mem::take(&mut p.flows).into_iter().peekable());
        rest.push(p);
    }
    loop {
        let next = (sources.iter_mut().enumerate())
            .filter_map(|(i, s)| s.peek().map(|f| (f.first_frame, i)))
            .min();
        let Some((_, i)) = next else { break };
        if let Some(f) = sources[i].next() {
            maps[i].push(flows.len() as u32);
            flows.push(f);
        }
    }
    let renumber = |map: &[u32], id: u32| map.get(id as usize).copied().unwrap_or(NO_FLOW);
    let mut index = FlowIndex::default();
    for (id, f) in flows.iter().enumerate() {
        index.insert(hash_key(&f.key), id as u32);
    }

    let (mut ud_spent, mut samples_kept) = (0u64, 0u64);
    let mut generation = all.pmtu_generation;
    for (p, map) in rest.into_iter().zip(&maps) {
        ud_spent += limits.ud_sources - p.budget.ud_sources_left;
        samples_kept += limits.timing_samples - p.logs.left();
        generation = generation.max(p.pmtu_generation);
        let t = &mut all.totals;
        t.duplicates += p.totals.duplicates;
        t.untracked_frames += p.totals.untracked_frames;
        t.answers_unmatched += p.totals.answers_unmatched;
        t.cm_dropped += p.totals.cm_dropped;
        t.cm_messages += p.totals.cm_messages;
        all.match_looks += p.match_looks;
        all.match_asked += p.match_asked;
        all.pmtu.extend(p.pmtu);
        all.cm_reqs.extend(p.cm_reqs);
        all.cm_ulp.extend(p.cm_ulp);
        all.cm_peer.absorb(p.cm_peer, map);
        all.naks.extend(p.naks);
        all.requesters.extend(
            p.requesters
                .into_iter()
                .map(|(pair, ids)| (pair, ids.into_iter().map(|id| renumber(map, id)).collect())),
        );
        all.pending_ce
            .extend(p.pending_ce.into_iter().map(|(pair, list)| {
                let list = list.into_iter().map(|(id, ts)| (renumber(map, id), ts));
                (pair, list.collect())
            }));
        all.timeline.join(&p.timeline);
        let left = all
            .logs
            .left()
            .saturating_sub(limits.timing_samples - p.logs.left());
        all.logs.absorb(p.logs, map, left);
        for &new in map {
            let f = &mut flows[new as usize];
            if f.answers != NO_FLOW {
                f.answers = renumber(map, f.answers);
            }
        }
    }
    debug_assert!(samples_kept < limits.timing_samples);
    all.budget.events_left = limits.events_total - events_kept;
    all.budget.events_dropped = events_dropped;
    all.budget.ud_sources_left = limits.ud_sources - ud_spent;
    all.pmtu_generation = generation + 1;
    all.flows = flows;
    all.index = index;
    let pause_ids: Vec<u32> = (noted.iter())
        .map(|(key, _)| all.find_flow(key).unwrap_or(NO_FLOW))
        .collect();
    all.pauses
        .renumber_flows(|id| pause_ids.get(id as usize).copied().unwrap_or(NO_FLOW));
    all.role = Role::Whole;
    Ok(all)
}

/// Applies the budget of events and episodes (`--max-events-total`) to
/// all parts together, as one analysis charges them: in file order, the
/// first ones kept. Each part had the whole budget and noted what it kept
/// in order, so the first of all are the first of each part's notes.
/// Returns how many are kept, and how many one analysis would have counted
/// as dropped for the budget.
fn settle_events(parts: &mut [Analyzer], limits: &super::Limits) -> (u64, u64) {
    fn notes(a: &Analyzer) -> &[super::flow::Charge] {
        a.budget.charges.as_deref().unwrap_or(&[])
    }
    let mut taken = vec![0usize; parts.len()];
    let mut kept = 0;
    while kept < limits.events_total {
        // A frame is one part's: no two parts note the same one.
        let next = (parts.iter().enumerate())
            .filter_map(|(p, a)| notes(a).get(taken[p]).map(|c| (c.frame, p)))
            .min();
        let Some((_, p)) = next else { break };
        taken[p] += 1;
        kept += 1;
    }
    let mut dropped = 0;
    for (p, a) in parts.iter_mut().enumerate() {
        let mut beyond: Map<u32, [u64; 2]> = Map::default();
        for c in &notes(a)[taken[p]..] {
            beyond.entry(c.flow).or_default()[usize::from(c.episode)] += 1;
        }
        let per_flow = a.budget.events_per_flow;
        for (id, f) in a.flows.iter_mut().enumerate() {
            let b = beyond.get(&(id as u32)).copied().unwrap_or_default();
            dropped += f.settle_budget(b, per_flow);
        }
    }
    (kept, dropped)
}

/// Whether the parts can be joined: nothing they met is ordered across
/// host pairs, and together they stayed within every budget.
fn check(all: &Analyzer, parts: &[Analyzer]) -> Result<(), Unsplit> {
    if let Some(why) = parts.iter().find_map(Analyzer::unjoinable) {
        return Err(why);
    }
    let l = &all.opts.limits;
    let sum = |f: &dyn Fn(&Analyzer) -> u64| parts.iter().map(f).fold(0u64, u64::saturating_add);
    // CM REQs are matched to their REP by communication ID alone: one
    // analysis would have met one ID of two host pairs.
    let ids = sum(&|p| p.req_ids.len() as u64);
    if ids > l.cm_pending {
        return Err(Unsplit::Cm);
    }
    if parts.iter().filter(|p| !p.req_ids.is_empty()).count() > 1 {
        let mut seen = foldhash::HashSet::default();
        for id in parts.iter().flat_map(|p| p.req_ids.iter()) {
            if !seen.insert(*id) {
                return Err(Unsplit::Cm);
            }
        }
    }
    // Each part's own budgets held (above); together too?
    if sum(&|p| p.flows.len() as u64) > l.flows {
        return Err(Unsplit::Flows);
    }
    if sum(&|p| l.ud_sources - p.budget.ud_sources_left) > l.ud_sources {
        return Err(Unsplit::UdSources);
    }
    // Strictly fewer: a part that kept the whole budget may have refused
    // one more.
    if sum(&|p| l.timing_samples - p.logs.left()) >= l.timing_samples {
        return Err(Unsplit::TimingSamples);
    }
    if sum(&|p| p.match_asked) > MATCH_LOOKS_FIRST {
        return Err(Unsplit::MatchLooks);
    }
    let pauses = all.pauses.pfc_frames + all.pauses.pause_frames;
    if pauses > 0 && sum(&|p| p.totals.duplicates) > 0 {
        return Err(Unsplit::DuplicatesWithPauses);
    }
    Ok(())
}

/// Analyses `facts` (numbered, in file order) split in `parts` parts, one
/// part after another on this thread, and joins them: what a split
/// analysis concludes, for tests and measurements.
pub fn analyze_split(
    opts: AnalysisOptions,
    facts: &[Facts],
    parts: usize,
) -> Result<Analyzer, Unsplit> {
    let mut frames = FrameLoop::new(opts, parts);
    let mut lists: Vec<Vec<Facts>> = vec![Vec::new(); frames.parts()];
    for f in facts {
        let mut f = *f;
        if let Some(p) = frames.frame(&mut f) {
            lists[p].push(f);
        }
    }
    let origin = frames.origin().unwrap_or(0);
    let analyses = lists
        .iter()
        .map(|list| {
            let mut an = part(frames.an.opts.clone(), origin);
            for f in list {
                an.observe_part(f);
            }
            an
        })
        .collect();
    join(frames, analyses)
}
