//! A RoCE frame through the analysis, step by step: its flow, a capture
//! duplicate, the CM, then on the flow its accounting, ECN and CNPs, the
//! PSN verdict, throughput, timing, NAKs, pauses and DCQCN, and last what
//! touches other flows (the CE marks a CNP answers, the request an ACK
//! answers) and NVMe-oF.

use super::*;
use crate::wire::Psn;

impl Analyzer {
    /// A RoCE frame: its flow, then each step of the analysis.
    pub(super) fn roce_packet(&mut self, pkt: &Facts, r: &RoceFacts) -> FrameAnalysis {
        let Some(id) = self.flow_id(&r.key, r.flow_hash(), pkt, r.version) else {
            self.totals.untracked_frames += 1;
            return FrameAnalysis::default();
        };
        self.budget.frame = pkt.number;
        self.budget.flow = id;
        // Borrowed, not copied: `r` lives in the caller's batch.
        let at = RoceFrame {
            pkt,
            r,
            id,
            op: r.bth.opcode.operation(),
        };
        let mut out = FrameAnalysis {
            flow: id,
            ..FrameAnalysis::default()
        };
        if self.counted_duplicate(id, pkt, r, at.op) {
            out.marks.set(Mark::Duplicate);
            return out;
        }
        if let Some(cm) = r.upper.cm() {
            // A REP that connects an NVMe-oF queue is part of it.
            if let Some(qid) = self.cm_message(&r.key, cm)
                && self.opts.stages.has(Stage::Nvme)
            {
                out.nvme = Some(marks::NvmeRole::Queue { qid });
            }
            // A REP charges the flows it connects anew.
            self.budget.flow = id;
        }
        let becn = self.on_the_flow(&at, &mut out);
        // Last, as they need the whole analysis: a CNP settles the CE
        // marks of the flow it answers (another flow; nothing above reads
        // what it changes), an answer times the request flow's messages.
        if at.op == Some(Operation::Cnp) || becn {
            self.cnp_arrived(id, &r.key, pkt.ts_ns);
        }
        if let Some((o, nak)) = answer(&at)
            && self.opts.stages.has(Stage::Timing)
        {
            let said = self.timing_answer(id, &r.key, o, r.bth.psn, nak, pkt.ts_ns);
            out.ack_rtt_ns = said.rtt_ns;
            out.completion_ns = said.completion_ns;
        }
        if self.opts.stages.has(Stage::Nvme) {
            self.nvme_frame(&at, &mut out);
        }
        out
    }

    /// The steps that read and change the frame's own flow, borrowed once
    /// beside the other state they meet (each `self.flows[id]` was a
    /// bounds check and a reload). Whether the frame is a BECN.
    #[inline]
    fn on_the_flow(&mut self, at: &RoceFrame<'_>, out: &mut FrameAnalysis) -> bool {
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
            requesters,
            logs,
            timeline,
            role,
            ..
        } = self;
        let f = &mut flows[at.id as usize];
        let pmtu = flow_pmtu(f, *pmtu_generation, pmtus);
        let priority = priority(opts, at.r);
        account(f, at, priority, totals, icrc_summarised, budget, out);
        let cc_window = opts.stages.has(Stage::Cc).then_some(opts.cc_window_ns);
        let becn = congestion(f, at, pending_ce, budget, cc_window, out);
        let fallback_pmtu = opts.pmtu.unwrap_or(flow::DEFAULT_PMTU);
        let verdict = psn_verdict(f, at, pmtu, fallback_pmtu, budget, out);
        if opts.stages.has(Stage::Throughput) {
            throughput(f, at, verdict, timeline);
        }
        if opts.stages.has(Stage::Timing) {
            timing_request(f, at, verdict, requesters, logs);
        }
        acknowledgement(f, at, naks, budget, out);
        let paused = if *role == Role::Part {
            at.pkt.has(Facts::SENT_PAUSED)
        } else {
            pauses.max_frame = pauses.max_frame.max(at.pkt.len);
            opts.stages.has(Stage::Pauses) && sent_paused(f, at, priority, pauses)
        };
        if paused {
            out.marks.set(Mark::Paused);
        }
        // DCQCN reaction: the payload of flows that met congestion.
        if let Some(cc) = f.cc_mut() {
            cc.frame(
                at.pkt.ts_ns,
                at.r.payload_len().unwrap_or(0),
                out.marks.has(Mark::Retransmission),
                paused,
            );
        }
        becn
    }

    /// NVMe-oF: capsules, the data of the I/Os they started, and any
    /// other frame that carries something on a queue's QPs.
    #[inline]
    fn nvme_frame(&mut self, at: &RoceFrame<'_>, out: &mut FrameAnalysis) {
        let RoceFrame { pkt, r, id, op } = *at;
        let (bth, key) = (&r.bth, &r.key);
        match r.upper {
            Upper::Capsule(c) => {
                let replay = out.marks.has(Mark::Retransmission);
                out.nvme = self.nvme_capsule(id, key, &c, r, pkt, replay);
            }
            Upper::Reth { va, r_key, dma_len } if self.nvme.active() => {
                if let Some(
                    o @ (Operation::WriteFirst
                    | Operation::WriteOnly
                    | Operation::WriteOnlyImm
                    | Operation::ReadRequest),
                ) = op
                {
                    let payload = r.payload_len().unwrap_or(0);
                    let data = self.nvme.transfer(
                        id, key.src, key.dst, o, bth.psn, va, r_key, dma_len, payload, pkt.ts_ns,
                    );
                    out.nvme = data.map(|d| match o {
                        Operation::ReadRequest => marks::NvmeRole::DataRequest {
                            qid: d.qid,
                            cid: d.cid,
                            code: d.code,
                        },
                        _ => data_role(d),
                    });
                }
            }
            _ if self.nvme.active() && self.nvme.has_transfers(id) => {
                if matches!(
                    op,
                    Some(
                        Operation::WriteMiddle
                            | Operation::WriteLast
                            | Operation::WriteLastImm
                            | Operation::ReadResponseFirst
                            | Operation::ReadResponseMiddle
                            | Operation::ReadResponseLast
                            | Operation::ReadResponseOnly
                    )
                ) {
                    let payload = r.payload_len().unwrap_or(0);
                    out.nvme = self
                        .nvme
                        .continuation(id, bth.psn, payload, pkt.ts_ns)
                        .map(data_role);
                }
            }
            _ => {}
        }
        if out.nvme.is_none()
            && self.nvme.active()
            && op.is_some_and(|o| {
                !matches!(
                    o,
                    Operation::Acknowledge | Operation::AtomicAcknowledge | Operation::Cnp
                )
            })
            && (r.payload_len().is_some_and(|n| n > 0) || matches!(r.upper, Upper::Reth { .. }))
            && let Some(qid) = self.nvme.queue_of(id)
        {
            out.nvme = Some(marks::NvmeRole::Queue { qid });
        }
    }

    /// A SEND that starts a message with 16 bytes or more, on flow `id`:
    /// an NVMe-oF command or response capsule when its connection carries
    /// NVMe-oF (the CM said, `--ulp` says, or the payloads show it).
    #[cold]
    #[inline(never)]
    fn nvme_capsule(
        &mut self,
        id: u32,
        key: &FlowKey,
        c: &nvme::Capsule,
        r: &RoceFacts,
        pkt: &Facts,
        replay: bool,
    ) -> Option<marks::NvmeRole> {
        use crate::wire::nvme::{CQE_LEN, SQE_LEN, Ulp};
        let len = r.payload_len().unwrap_or(0) as usize;
        let (number, ts, psn) = (pkt.number, pkt.ts_ns, r.bth.psn);
        let role = |s: nvme::Said| {
            s.confirmed.then_some(match s.side {
                nvme::Side::Commands => marks::NvmeRole::Command {
                    qid: s.qid,
                    fabrics: s.fabrics,
                },
                nvme::Side::Responses => marks::NvmeRole::Response {
                    qid: s.qid,
                    latency_ns: s.latency_ns,
                    fabrics: s.fabrics,
                },
            })
        };
        let t = &mut self.nvme;
        let queue = match t.side(id) {
            Some(known) => Some(known),
            None => match self.cm_ulp.get(key).copied() {
                Some(u) if u.ulp != Ulp::Nvme => return None,
                Some(u) if u.commands => {
                    if len < SQE_LEN {
                        return None;
                    }
                    t.open(id, key.src, key.dst, u.by, u.qid)
                        .map(|q| (q, nvme::Side::Commands))
                }
                Some(_) => {
                    let e = self.cm_peer.of_flow(id)?;
                    let cmd = cm_entry_partner(&self.flows, &self.index, &self.cm_peer, e)?;
                    let (q, _) = t.side(cmd)?;
                    t.bind(q, id);
                    Some((q, nvme::Side::Responses))
                }
                None if self.cm_peer.of_flow(id).is_some() => None,
                None if len >= SQE_LEN => {
                    let forced = t.rule.forces(key.dst, None);
                    if !(forced || t.rule.heuristic()) || !c.looks_like_command(len as u32) {
                        return None;
                    }
                    let by = if forced {
                        report::UlpBy::Option
                    } else {
                        report::UlpBy::Heuristic
                    };
                    t.open(id, key.src, key.dst, by, None)
                        .map(|q| (q, nvme::Side::Commands))
                }
                None if len == CQE_LEN && t.active() => {
                    let q = t.waiting_for(key.dst, key.src, c.cqe_cid())?;
                    t.bind(q, id);
                    Some((q, nvme::Side::Responses))
                }
                None => None,
            },
        };
        let (q, side) = queue?;
        match side {
            nvme::Side::Commands if len >= SQE_LEN => role(t.command(q, c, number, ts, psn)),
            nvme::Side::Responses if len == CQE_LEN => role(t.response(q, c, number, ts, replay)),
            _ => None,
        }
    }

    /// An ACK, NAK or READ response on flow `id` (`key`): timing samples
    /// on the request flow it answers, found first if need be.
    fn timing_answer(
        &mut self,
        id: u32,
        key: &FlowKey,
        op: Operation,
        psn: Psn,
        nak: bool,
        ts: u64,
    ) -> timing::Answer {
        let mut q = self.flows[id as usize].answers;
        if q == NO_FLOW {
            let waits = |flows: &[FlowState], q: u32| {
                q != id
                    && flows[q as usize]
                        .timing
                        .as_ref()
                        .is_some_and(|t| t.waits_for(psn))
            };
            // The CM's pairing, else the one request flow of the host pair,
            // else the one of them waiting for this PSN.
            let by_cm = self.cm_partner(id);
            let list = self.requesters.get(&(key.dst, key.src));
            let found = match (by_cm, list.map(Vec::as_slice)) {
                (Some(c), _) if self.flows[c as usize].timing.is_some() => Some(c),
                (_, Some(&[only])) if only != id => Some(only),
                // Exactly one of the host pair's request flows waiting for
                // this PSN: knowing that takes a look at each of them. With
                // thousands of QPs between two hosts and no CM, that made
                // the analysis quadratic in flows (16 384 QPs: 4.3-5.3 s for
                // 131 072 frames), so the looks are budgeted; an answer that
                // would overdraw the budget goes unmatched, and is counted.
                _ => {
                    let candidates = list.map_or(0, Vec::len) as u64;
                    self.match_asked = self.match_asked.saturating_add(candidates);
                    let budget = MATCH_LOOKS_FIRST
                        .saturating_add(self.totals.frames.saturating_mul(MATCH_LOOKS_PER_FRAME));
                    if self.match_looks.saturating_add(candidates) > budget {
                        self.totals.answers_unmatched += 1;
                        None
                    } else {
                        let mut looks = 0;
                        let mut waiting = list.into_iter().flatten().copied().filter(|&c| {
                            looks += 1;
                            waits(&self.flows, c)
                        });
                        let found = match (waiting.next(), waiting.next()) {
                            (Some(c), None) => Some(c),
                            _ => None,
                        };
                        self.match_looks += looks;
                        found
                    }
                }
            };
            let Some(found) = found else {
                return timing::Answer::default();
            };
            self.flows[id as usize].answers = found;
            q = found;
        }
        let log = &mut timing::Log {
            flow: q,
            logs: &mut self.logs,
        };
        match self
            .flows
            .get_mut(q as usize)
            .and_then(|f| f.timing.as_mut())
        {
            Some(t) if op.is_read_response() => t.read_response(op, psn, ts, log),
            Some(t) => t.ack(psn, nak, ts, log),
            None => timing::Answer::default(),
        }
    }

    /// Counts the packet on flow `id`; whether it is a capture duplicate
    /// (counted in packets, bytes and duplicates only). Also learns the
    /// PMTU from FIRST/MIDDLE payloads, which are exactly one PMTU.
    #[inline]
    fn counted_duplicate(
        &mut self,
        id: u32,
        pkt: &Facts,
        r: &RoceFacts,
        op: Option<Operation>,
    ) -> bool {
        let f = &mut self.flows[id as usize];
        f.packets += 1;
        f.bytes = f.bytes.saturating_add(u64::from(pkt.len));
        if self.opts.stages.has(Stage::Duplicates) {
            if f.is_duplicate(&r.fingerprint, pkt.ts_ns, self.opts.dup_window_ns) {
                f.cold().duplicates += 1;
                self.totals.duplicates += 1;
                return true;
            }
            f.remember(&r.fingerprint, pkt.ts_ns);
        }
        let learnt = match (op, r.payload_len()) {
            (Some(o), Some(n))
                if o.is_first_or_middle()
                    && n > 0
                    && flow_pmtu(f, self.pmtu_generation, &self.pmtu) != Some(n) =>
            {
                Some(n)
            }
            _ => None,
        };
        if let Some(n) = learnt {
            self.learn_pmtu(&r.key, n);
        }
        false
    }

    /// A CNP on flow `cnp_id` (`cnp`: B → A, qa) answers CE marks on A → B.
    #[cold]
    #[inline(never)]
    fn cnp_arrived(&mut self, cnp_id: u32, cnp: &FlowKey, ts: u64) {
        let waiting = |flows: &[FlowState], (id, mark): (u32, u64)| {
            flows[id as usize].cold_ref().pending_ce == Some(mark)
        };
        // The CM's pairing, looked up once (a CNP comes every few frames
        // on a congested fabric).
        let by_cm = self.cm_partner(cnp_id);
        let data_id = by_cm
            .filter(|&id| self.flows[id as usize].cold_ref().pending_ce.is_some())
            .or_else(|| {
                let list = self.pending_ce.get_mut(&(cnp.dst, cnp.src))?;
                // Entries of flows answered since are dropped as they come
                // up: each is looked at once.
                while let Some(&front) = list.front() {
                    if waiting(&self.flows, front) {
                        return Some(front.0);
                    }
                    list.pop_front();
                }
                None
            });
        if let Some(id) = data_id {
            let f = &mut self.flows[id as usize];
            let c = f.cold();
            if let Some(ce) = c.pending_ce.take() {
                c.ce_to_cnp.add(ts.saturating_sub(ce));
            }
        }
        // The flow whose sender the CNP slows down: the CE pairing, else
        // the CM's, else the request flow its ACKs answered, else the
        // one request flow of the host pair.
        let answers = self.flows[cnp_id as usize].answers;
        let target = data_id
            .or(by_cm)
            .or((answers != NO_FLOW).then_some(answers))
            .or_else(
                || match self.requesters.get(&(cnp.dst, cnp.src)).map(Vec::as_slice) {
                    Some(&[only]) if only != cnp_id => Some(only),
                    _ => None,
                },
            );
        if let Some(t) = target
            && self.opts.stages.has(Stage::Cc)
        {
            let window = self.opts.cc_window_ns;
            self.flows[cnp_id as usize].answers = t;
            self.flows[t as usize]
                .cold()
                .cc
                .get_or_insert_with(|| Box::new(cc::CcState::new(ts, window)))
                .cnp(ts);
            if let Some(tr) = self.traced.as_deref_mut()
                && tr.key == self.flows[t as usize].key
            {
                if tr.cnps_ns.len() < MAX_TRACED_CNPS {
                    tr.cnps_ns.push(ts);
                } else {
                    tr.dropped += 1;
                }
            }
        }
    }
}

/// A RoCE frame as the analysis's steps read it: its facts, its flow and
/// its operation.
#[derive(Clone, Copy)]
struct RoceFrame<'a> {
    pkt: &'a Facts,
    r: &'a RoceFacts,
    id: u32,
    op: Option<Operation>,
}

/// What the frame counts for on its flow: payload bytes, the last time,
/// the priority, a wrong ICRC, the transport.
#[inline]
fn account(
    f: &mut FlowState,
    at: &RoceFrame<'_>,
    priority: Option<u8>,
    totals: &mut Totals,
    icrc_summarised: &mut bool,
    budget: &mut Budget,
    out: &mut FrameAnalysis,
) {
    let (pkt, r) = (at.pkt, at.r);
    f.payload_bytes = f
        .payload_bytes
        .saturating_add(u64::from(r.payload_len().unwrap_or(0)));
    f.last_ts = f.last_ts.max(pkt.ts_ns);
    // CNPs ride their own priority by design; a flow's priority is that of
    // its other frames (or of its CNPs when it carries nothing else).
    if priority.is_some() && (at.op != Some(Operation::Cnp) || f.priority.is_none()) {
        f.priority = priority;
    }
    if pkt.has(Facts::BAD_ICRC) {
        out.marks.set(Mark::BadIcrc);
        bad_icrc(f, pkt, &r.bth, totals, icrc_summarised, budget);
    }
    if f.transport.is_none() && r.bth.opcode.transport() != Transport::Cnp {
        f.transport = Some(r.bth.opcode.transport());
    }
}

/// ECN and congestion notifications: a CE mark (remembered for the CNP
/// that should answer it, when the `cc` stage runs: `cc_window`), a CNP,
/// or native InfiniBand's BECN, which is what a CNP is in RoCE (on an
/// ACK, or on any packet back to the sender). Whether it is a BECN.
#[inline]
fn congestion(
    f: &mut FlowState,
    at: &RoceFrame<'_>,
    pending_ce: &mut Map<(Addr, Addr), VecDeque<(u32, u64)>>,
    budget: &mut Budget,
    cc_window: Option<u64>,
    out: &mut FrameAnalysis,
) -> bool {
    let (pkt, r) = (at.pkt, at.r);
    if r.ecn == Some(3) {
        out.marks.set(Mark::Ce);
        ce_mark(f, at.id, &r.key, pkt, &r.bth, pending_ce, budget, cc_window);
    }
    let becn = r.version == RoceVersion::Ib && r.bth.becn && at.op != Some(Operation::Cnp);
    if becn || at.op == Some(Operation::Cnp) {
        out.marks.set(Mark::Cnp);
        f.cold().cnps += 1;
        f.event(
            budget,
            EventKind::Cnp,
            pkt,
            Some(r.bth.psn),
            None,
            None,
            None,
        );
    }
    becn
}

/// The PSN analysis of a request or READ response (none for the rest):
/// in order, a gap, out of order, a retransmission, a PSN reused.
#[inline]
fn psn_verdict(
    f: &mut FlowState,
    at: &RoceFrame<'_>,
    pmtu: Option<u32>,
    fallback_pmtu: u32,
    budget: &mut Budget,
    out: &mut FrameAnalysis,
) -> Option<Verdict> {
    let bth = &at.r.bth;
    // Management datagrams (SMPs on QP0, CM and SA MADs on QP1) and
    // multicast (DestQP 0xFFFFFF) are not PSN-tracked: their sending QP
    // sends to every peer or group from one PSN sequence, so each flow
    // sees only part of it (gaps that are none).
    let management = (bth.dest_qp <= 1 || bth.dest_qp == MULTICAST_QP)
        && bth.opcode.transport() == Transport::Ud;
    let verdict = match at.op {
        Some(o) if o.is_request() && !management => {
            Some(f.request(at.pkt, at.r, o, pmtu, fallback_pmtu, budget))
        }
        Some(o) if o.is_read_response() => Some(f.read_response(at.pkt, bth, o, budget)),
        _ => None,
    };
    match verdict {
        None | Some(Verdict::InOrder | Verdict::First | Verdict::NewMessage) => {}
        Some(Verdict::Gap { count, .. }) => {
            out.marks.set(Mark::Gap);
            out.missing = count;
        }
        Some(Verdict::OutOfOrder) => out.marks.set(Mark::OutOfOrder),
        Some(Verdict::Retransmit) => {
            out.marks.set(Mark::Retransmission);
            out.episode = f.current_episode().map_or(0, |n| n as u32);
        }
        Some(Verdict::PsnReuse) => out.marks.set(Mark::PsnReuse),
    }
    verdict
}

/// Throughput: the payload of first sends and of replays.
#[inline]
fn throughput(
    f: &mut FlowState,
    at: &RoceFrame<'_>,
    verdict: Option<Verdict>,
    timeline: &mut throughput::Timeline,
) {
    if let Some(n) = at.r.payload_len().filter(|&n| n > 0) {
        f.rate.get_or_insert_with(Box::default).add(
            timeline,
            at.pkt.ts_ns,
            u64::from(n),
            verdict == Some(Verdict::Retransmit),
            at.r.bth.psn,
        );
    }
}

/// Timing, the request's side: RC and XRC requests are answered. A flow
/// that sends READ responses is noted among the host pair's senders too
/// (a CNP may slow it down), but its responses wait for no answer: they
/// are no requests, and their PSNs are the READ requests' sequence, not
/// the flow's own.
#[inline]
fn timing_request(
    f: &mut FlowState,
    at: &RoceFrame<'_>,
    verdict: Option<Verdict>,
    requesters: &mut Map<(Addr, Addr), Vec<u32>>,
    logs: &mut timing::Logs,
) {
    let (r, key) = (at.r, &at.r.key);
    let (Some(o), Some(v)) = (at.op, verdict) else {
        return;
    };
    if !matches!(r.bth.opcode.transport(), Transport::Rc | Transport::Xrc) {
        return;
    }
    let t = match &mut f.timing {
        Some(t) => t,
        None => {
            requesters
                .entry((key.src, key.dst))
                .or_default()
                .push(at.id);
            f.timing.insert(Box::default())
        }
    };
    if o.is_request() {
        let req = timing::Request {
            op: o,
            psn: r.bth.psn,
            ts: at.pkt.ts_ns,
            payload: u64::from(r.payload_len().unwrap_or(0)),
            dma_len: u64::from(r.dma_len().unwrap_or(0)),
            again: v == Verdict::Retransmit,
            late: v == Verdict::OutOfOrder,
        };
        t.request(req, &mut timing::Log { flow: at.id, logs });
    }
}

/// An ACK's AETH: the PSN it acknowledges, a NAK or RNR NAK counted and
/// remembered; and a replay that just started is matched to the NAK that
/// asked for it.
#[inline]
fn acknowledgement(
    f: &mut FlowState,
    at: &RoceFrame<'_>,
    naks: &mut Map<(Addr, Addr), VecDeque<RecentNak>>,
    budget: &mut Budget,
    out: &mut FrameAnalysis,
) {
    let (r, key) = (at.r, &at.r.key);
    if let Some(a) = &r.aeth {
        f.note_ack_psn(r.bth.psn);
        let kind = a.kind();
        if matches!(kind, AckKind::RnrNak | AckKind::Nak) {
            out.marks.set(if kind == AckKind::Nak {
                Mark::Nak
            } else {
                Mark::RnrNak
            });
            nak(f, key, at.pkt, &r.bth, a, naks, budget);
        }
    }
    if f.episode_needs_trigger() {
        f.attribute_episode(naks.get_mut(&(key.dst, key.src)));
    }
}

/// Whether the frame was sent on a priority that the receiving port had
/// paused (the largest frame so far is the last one a paused sender may
/// finish).
#[inline]
fn sent_paused(
    f: &mut FlowState,
    at: &RoceFrame<'_>,
    priority: Option<u8>,
    pauses: &mut PauseTimeline,
) -> bool {
    let (Some(prio), Some(dst)) = (priority, at.r.dst_mac) else {
        return false;
    };
    pauses.sent(
        dst,
        prio,
        at.pkt.ts_ns,
        at.pkt.len,
        at.id,
        &mut f.noted_pauses,
    )
}

/// An ACK, NAK or READ response: the operation it answers with, and
/// whether it is a NAK.
#[inline]
fn answer(at: &RoceFrame<'_>) -> Option<(Operation, bool)> {
    match (at.op?, &at.r.aeth) {
        (o @ (Operation::Acknowledge | Operation::AtomicAcknowledge), Some(a)) => {
            Some((o, matches!(a.kind(), AckKind::Nak | AckKind::RnrNak)))
        }
        (o, _) if o.is_read_response() => Some((o, false)),
        _ => None,
    }
}

/// The role of a packet of an I/O's data.
fn data_role(d: nvme::DataOf) -> marks::NvmeRole {
    marks::NvmeRole::Data {
        qid: d.qid,
        cid: d.cid,
        code: d.code,
        offset: d.offset,
    }
}

/// A packet whose ICRC is wrong.
#[cold]
#[inline(never)]
fn bad_icrc(
    f: &mut FlowState,
    pkt: &Facts,
    bth: &crate::wire::BthRepr,
    totals: &Totals,
    summarised: &mut bool,
    budget: &mut Budget,
) {
    f.cold().bad_icrc += 1;
    if !*summarised
        && totals.icrc_errors >= ICRC_SUMMARY_AFTER
        && totals.icrc_errors + totals.truncated >= totals.roce_frames
    {
        *summarised = true;
    }
    if !*summarised {
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

/// A CE-marked packet: counted, and waiting for its CNP.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn ce_mark(
    f: &mut FlowState,
    id: u32,
    key: &FlowKey,
    pkt: &Facts,
    bth: &crate::wire::BthRepr,
    pending_ce: &mut Map<(Addr, Addr), VecDeque<(u32, u64)>>,
    budget: &mut Budget,
    cc_window_ns: Option<u64>,
) {
    f.cold().ecn_ce += 1;
    f.event(
        budget,
        EventKind::EcnCe,
        pkt,
        Some(bth.psn),
        None,
        None,
        None,
    );
    let c = f.cold();
    if let (None, Some(window)) = (&c.cc, cc_window_ns) {
        c.cc = Some(Box::new(cc::CcState::new(pkt.ts_ns, window)));
    }
    if c.pending_ce.is_none() {
        c.pending_ce = Some(pkt.ts_ns);
        pending_ce
            .entry((key.src, key.dst))
            .or_default()
            .push_back((id, pkt.ts_ns));
    }
}

/// A NAK or RNR NAK: counted by code, and remembered for the replay that
/// should follow it.
#[cold]
#[inline(never)]
fn nak(
    f: &mut FlowState,
    key: &FlowKey,
    pkt: &Facts,
    bth: &crate::wire::BthRepr,
    a: &crate::wire::AethRepr,
    naks: &mut Map<(Addr, Addr), VecDeque<RecentNak>>,
    budget: &mut Budget,
) {
    let rnr = a.kind() == AckKind::RnrNak;
    let code = a.value();
    let c = f.cold();
    if rnr {
        c.naks.rnr += 1;
    } else {
        match code {
            0 => c.naks.psn_seq_err += 1,
            1 => c.naks.invalid_request += 1,
            2 => c.naks.remote_access += 1,
            3 => c.naks.remote_op += 1,
            4 => c.naks.invalid_rd += 1,
            _ => {}
        }
    }
    let (kind, detail) = if rnr {
        (EventKind::RnrNak, None)
    } else {
        (EventKind::Nak, Some(crate::wire::aeth::nak::name(code)))
    };
    f.event(budget, kind, pkt, Some(bth.psn), None, Some(code), detail);
    let list = naks.entry((key.src, key.dst)).or_default();
    if list.len() >= RECENT_NAKS {
        list.pop_front();
    }
    list.push_back(RecentNak {
        psn: bth.psn,
        ts_ns: pkt.ts_ns,
        frame: pkt.number,
        rnr,
        used: false,
    });
}
