//! The views a key opens over the flows table: a frame's header tree and
//! bytes, a flow's timing and PSN chart, the NVMe-oF I/Os.

use super::{App, ChartData, Detail, IoList, IoRow, Scope, TimingData, View};
use crate::analysis::Mark;
use crate::dissect::dissect;
use crate::output::tree::header_tree;
use crate::tui::index::NO_FLOW;

impl App {
    pub(super) fn open_detail(&mut self) {
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

    pub(super) fn open_timing(&mut self, flow: usize) {
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
    pub(super) fn open_ios(&mut self) {
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

    pub(super) fn open_chart(&mut self, flow: usize) {
        const MAX_POINTS: usize = 20_000;
        let positions = self.flow_positions(flow);
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
}

/// Slowest first (unanswered first of all), else in command order.
pub(super) fn sort_ios(l: &mut IoList) {
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
