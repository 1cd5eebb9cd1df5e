//! Scenarios: realistic RoCE traffic with chosen faults, and the report
//! facts it must produce (the ground truth), known by construction.
//!
//! Time advances as frames are serialised on the link; frames scheduled for
//! later (ACKs, NAKs, replays, CNPs, pauses) wait in a heap, so memory stays
//! bounded by what is in flight, whatever the number of frames.

use crate::wire::Psn;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::conn::Conn;
use super::frame::{NetSpec, build_pause, build_pfc, cm_frame, cm_mad};
use super::samples::Rng;
use crate::analysis::report::NakCounts;
use crate::wire::AckKind;
use crate::wire::mad::CmMessage;
use crate::wire::pause::quanta_to_ns;

/// The scenarios `gen` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// RC SEND/WRITE/READ on several QPs with RDMA CM setup; no faults
    #[default]
    Clean,
    /// Drops with PSN-sequence NAKs and go-back-N replays, or timeouts
    Loss,
    /// Packets swapped on the way, NAKed and replayed
    Reorder,
    /// Many senders to one receiver: CE marks, CNPs and PFC pauses on priority 3
    Incast,
    /// A port paused on priority 3 for longer than the storm threshold
    PfcStorm,
    /// All of it, over RoCE v1 and v2, IPv4 and IPv6
    Mixed,
    /// Two senders paused again and again: one stops in time, one goes on
    /// past its budget; and a pause with nothing in flight
    PfcHeadroom,
    /// Two senders CNPs slow down, or not: one halves its rate after each
    /// CNP, one ignores them
    Dcqcn,
    /// Three switches pausing each other in a ring, one capture per link
    /// and the topology (gen -o DIR); use with `roce-dissect fabric`
    Deadlock,
    /// NVMe-oF: an admin and I/O queues set up by the CM, Connect, reads
    /// and writes (keyed SGLs and in-capsule data), a slow I/O, an error
    /// status and a lost data packet replayed
    Nvme,
}

impl Scenario {
    pub const ALL: [Scenario; 6] = [
        Scenario::Clean,
        Scenario::Loss,
        Scenario::Reorder,
        Scenario::Incast,
        Scenario::PfcStorm,
        Scenario::Mixed,
    ];

    /// Every scenario: [`ALL`](Self::ALL) (whose truth states timing too)
    /// and `nvme` (whose truth states the NVMe-oF I/Os instead).
    pub const EVERY: [Scenario; 9] = [
        Scenario::Clean,
        Scenario::Loss,
        Scenario::Reorder,
        Scenario::Incast,
        Scenario::PfcStorm,
        Scenario::Mixed,
        Scenario::Nvme,
        Scenario::PfcHeadroom,
        Scenario::Dcqcn,
    ];

    /// Its name on the command line and in the truth.
    pub const fn name(self) -> &'static str {
        match self {
            Scenario::Clean => "clean",
            Scenario::Loss => "loss",
            Scenario::Reorder => "reorder",
            Scenario::Incast => "incast",
            Scenario::PfcStorm => "pfc-storm",
            Scenario::Mixed => "mixed",
            Scenario::Nvme => "nvme",
            Scenario::PfcHeadroom => "pfc-headroom",
            Scenario::Dcqcn => "dcqcn",
            Scenario::Deadlock => "deadlock",
        }
    }

    /// The scenario called `name`.
    pub fn from_name(name: &str) -> Option<Scenario> {
        Scenario::EVERY.into_iter().find(|s| s.name() == name)
    }
}

impl std::fmt::Display for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the capture point sits relative to the drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LossSide {
    /// Dropped after the capture point: the capture sees every first send.
    Sender,
    /// Dropped before it: lost packets are absent from the capture.
    Receiver,
}

#[derive(Debug, Clone)]
pub struct GenOptions {
    pub scenario: Scenario,
    pub seed: u64,
    pub qps: u32,
    /// Messages per QP.
    pub messages: u32,
    /// Message size in bytes.
    pub size: u32,
    pub pmtu: u32,
    /// Probability that a request packet is dropped (`loss`, `mixed`).
    pub loss: f64,
    pub loss_side: LossSide,
    /// Probability that a request packet is swapped with the next.
    pub reorder: f64,
    /// Probability that a request packet is CE-marked (`incast`, `mixed`).
    pub ecn: f64,
    pub link_speed_bps: u64,
    /// Stop starting messages after this much simulated time.
    pub duration_ns: Option<u64>,
    /// Timestamp resolution of the file written (1000 for a µs pcap): the
    /// truth states times as the file can show them.
    pub ts_resolution_ns: u64,
    /// The responder's ACK (and NAK) delay, drawn from this list.
    pub rtt_ns: Vec<u64>,
    /// ACK every this many request packets of a message (and at its end);
    /// `None`: one ACK per message.
    pub ack_every: Option<u32>,
    /// READ request to its first response.
    pub read_delay_ns: u64,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            scenario: Scenario::Clean,
            seed: 1,
            qps: 4,
            messages: 50,
            size: 8192,
            pmtu: 4096,
            loss: 0.01,
            loss_side: LossSide::Sender,
            reorder: 0.01,
            ecn: 0.05,
            link_speed_bps: 100_000_000_000,
            duration_ns: None,
            ts_resolution_ns: 1,
            rtt_ns: vec![ACK_DELAY_NS],
            ack_every: None,
            read_delay_ns: ACK_DELAY_NS,
        }
    }
}

/// The facts a capture must produce, with the report's own keys.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct Truth {
    pub scenario: Scenario,
    pub seed: u64,
    pub frames: u64,
    pub flows: Vec<FlowTruth>,
    pub pfc: PfcTruth,
    /// `capture.vantage`.
    pub vantage: Option<crate::analysis::timing::Vantage>,
    /// The report's `nvme` (its `connection` indexes left null: they
    /// depend on the flows' order by trouble).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvme: Option<crate::analysis::nvme::NvmeReport>,
    /// `pfc.intervals[].reaction` (in `pfc.intervals`' order) and
    /// `pfc.summary[].reaction` by MAC, when the scenario states them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reactions: Option<ReactionTruth>,
    /// `flows[].cc` of the flows that have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc: Option<Vec<dcqcn::FlowCcTruth>>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReactionTruth {
    pub intervals: Vec<crate::analysis::pfc::Reaction>,
    pub summary: Vec<(String, crate::analysis::pfc::ReactionSummary)>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct FlowTruth {
    pub src: String,
    pub dst: String,
    pub destqp: u32,
    pub packets: u64,
    pub retransmits: u64,
    pub out_of_order: u64,
    pub missing: u64,
    pub ecn_ce: u64,
    pub cnps: u64,
    pub naks: NakCounts,
    /// `flows[].timing` (without `throughput.series`); left out when the
    /// run was too large for the truth to keep every sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<crate::analysis::timing::TimingReport>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, Default)]
pub struct PfcTruth {
    pub intervals: Vec<IntervalTruth>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct IntervalTruth {
    pub src_mac: String,
    pub priority: Option<u8>,
    pub start_ns: u64,
    pub end_ns: u64,
    pub ended_by: &'static str,
}

const T0: u64 = 1_767_225_600_000_000_000; // 2026-01-01T00:00:00Z
const SWITCH_MAC: [u8; 6] = [0x02, 0x5e, 0x00, 0x00, 0x00, 0x01];
const GAP_NS: u64 = 100;
const ACK_DELAY_NS: u64 = 2_000;
const RTO_NS: u64 = 500_000;
const CNP_INTERVAL_NS: u64 = 50_000;

type Key = (IpAddr, IpAddr, u32);

struct QpState {
    conn: Conn,
    next_psn: Psn,
    msn: u32,
    busy_until: u64,
    last_cnp: Option<u64>,
    /// When the responder last answered (its answers leave in order).
    last_answer: u64,
    loss: bool,
    reorder: bool,
    ecn: bool,
}

/// Streams a scenario's frames to `sink` in time order and returns the truth.
pub struct Generator<'s> {
    opts: GenOptions,
    rng: Rng,
    now: u64,
    seq: u64,
    heap: BinaryHeap<Reverse<(u64, u64, Vec<u8>)>>,
    sink: &'s mut dyn FnMut(u64, &[u8]) -> std::io::Result<()>,
    truth: FxHashMap<Key, FlowTruth>,
    order: Vec<Key>,
    frames: u64,
    gsi_psn: FxHashMap<(IpAddr, IpAddr), u32>,
    intervals: Vec<IntervalTruth>,
    /// Frame buffers written out, ready for reuse.
    pool: Vec<Vec<u8>>,
    /// Timing facts per flow, while they fit in the truth.
    timing: FxHashMap<Key, super::timing::FlowTimingTruth>,
    timing_items: u64,
    /// The first and last frame written (times as shown).
    span: Option<(u64, u64)>,
    /// Frames whose number the truth states, by their schedule order:
    /// their number once written.
    watch: FxHashMap<u64, u64>,
}

pub mod dcqcn;
mod headroom;
mod nvme;

/// A request packet's appearances in the capture (true times).
#[derive(Debug, Default, Clone)]
struct Seen {
    times: Vec<u64>,
}

impl Seen {
    fn first(&self) -> Option<u64> {
        self.times.first().copied()
    }
    fn before(&self, t: u64) -> usize {
        self.times.iter().filter(|&&x| x < t).count()
    }
}

fn ser_ns(len: usize, bps: u64) -> u64 {
    ((len as u64 + 20) * 8 * 1_000_000_000).div_ceil(bps.max(1))
}

fn net_src_dst(net: &NetSpec) -> (IpAddr, IpAddr) {
    match *net {
        NetSpec::V2Ipv4 { src, dst, .. } => (src.into(), dst.into()),
        NetSpec::V2Ipv6 { src, dst, .. } => (src.into(), dst.into()),
        NetSpec::V1 { sgid, dgid, .. } => (sgid.into(), dgid.into()),
    }
}

impl<'s> Generator<'s> {
    pub fn new(
        opts: GenOptions,
        sink: &'s mut dyn FnMut(u64, &[u8]) -> std::io::Result<()>,
    ) -> Self {
        let rng = Rng::new(opts.seed);
        Generator {
            opts,
            rng,
            now: T0,
            seq: 0,
            heap: BinaryHeap::new(),
            sink,
            truth: FxHashMap::default(),
            order: Vec::new(),
            frames: 0,
            gsi_psn: FxHashMap::default(),
            intervals: Vec::new(),
            pool: Vec::new(),
            timing: FxHashMap::default(),
            timing_items: 0,
            span: None,
            watch: FxHashMap::default(),
        }
    }

    /// The time the file shows for `t`.
    fn shown(&self, t: u64) -> u64 {
        let res = self.opts.ts_resolution_ns.max(1);
        t - t % res
    }

    /// The timing facts of flow `key`, while the truth keeps them.
    fn timing(&mut self, key: Key) -> Option<&mut super::timing::FlowTimingTruth> {
        if self.timing_items > super::timing::MAX_TRUTH_ITEMS {
            return None;
        }
        self.timing_items += 1;
        Some(self.timing.entry(key).or_default())
    }

    /// The responder's delay before an answer: from `--rtt`.
    fn answer_delay(&mut self) -> u64 {
        match self.opts.rtt_ns.len() {
            0 => ACK_DELAY_NS,
            1 => self.opts.rtt_ns[0],
            n => self.opts.rtt_ns[self.rng.below(n as u64) as usize],
        }
    }

    /// When an answer due at `t` leaves: after the QP's previous answer.
    fn answer_at(q: &mut QpState, t: u64) -> u64 {
        let t = t.max(q.last_answer);
        q.last_answer = t;
        t
    }

    fn flow(&mut self, key: Key) -> &mut FlowTruth {
        if !self.truth.contains_key(&key) {
            self.order.push(key);
            self.truth.insert(
                key,
                FlowTruth {
                    src: key.0.to_string(),
                    dst: key.1.to_string(),
                    destqp: key.2,
                    ..FlowTruth::default()
                },
            );
        }
        self.truth.get_mut(&key).expect("inserted above")
    }

    /// Schedules a RoCE frame at `ts` and counts it on its flow.
    fn roce(&mut self, ts: u64, f: &super::frame::RoceFrame<'_>) {
        self.roce_again(ts, f, false);
    }

    /// [`roce`](Self::roce) for a frame whose number the truth states.
    fn roce_watched(&mut self, ts: u64, f: &super::frame::RoceFrame<'_>) -> u64 {
        let seq = self.roce_again(ts, f, false);
        self.watch.insert(seq, 0);
        seq
    }

    /// [`roce`](Self::roce) for a frame that may be a replay.
    fn roce_again(&mut self, ts: u64, f: &super::frame::RoceFrame<'_>, replay: bool) -> u64 {
        let (s, d) = net_src_dst(&f.net);
        let key = (s, d, f.bth.dest_qp);
        self.flow(key).packets += 1;
        let n = f.payload.len() as u64;
        if n > 0 {
            let shown = self.shown(ts);
            if let Some(t) = self.timing(key) {
                t.payload.push((shown, n, replay));
            }
        }
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        super::frame::build_roce(f, &mut buf);
        self.push(ts, buf)
    }

    /// Schedules `frame` at `ts`; its place in the schedule.
    fn push(&mut self, ts: u64, frame: Vec<u8>) -> u64 {
        self.seq += 1;
        self.heap.push(Reverse((ts, self.seq, frame)));
        self.seq
    }

    /// Writes every scheduled frame up to `until`.
    fn drain(&mut self, until: u64) -> std::io::Result<()> {
        while let Some(Reverse((ts, _, _))) = self.heap.peek() {
            if *ts > until {
                break;
            }
            let Some(Reverse((ts, seq, f))) = self.heap.pop() else {
                break;
            };
            if let Some(n) = self.watch.get_mut(&seq) {
                *n = self.frames + 1;
            }
            (self.sink)(ts, &f)?;
            let shown = self.shown(ts);
            self.span = Some(self.span.map_or((shown, shown), |(a, _)| (a, shown)));
            // Reuse the buffer for a later frame.
            if self.pool.len() < 1024 {
                self.pool.push(f);
            }
            self.frames += 1;
        }
        Ok(())
    }

    fn cm_setup(&mut self, c: &Conn, t: u64) -> u64 {
        self.cm_setup_as(c, t, 0x0106_0000_0000_4791, None)
    }

    /// The CM handshake for a service, with NVMe-oF private data (whose
    /// REQ names the path's GIDs, as tshark needs to follow the queue).
    fn cm_setup_as(
        &mut self,
        c: &Conn,
        t: u64,
        service_id: u64,
        nvme: Option<crate::wire::nvme::CmReqData>,
    ) -> u64 {
        let (a, b) = net_src_dst(&c.net);
        let comm = 0x1000 + c.qp_a;
        let msgs = [
            (
                true,
                CmMessage::Req {
                    local_comm_id: comm,
                    service_id,
                    local_qpn: c.qp_a,
                    starting_psn: 0,
                    mtu: pmtu_code(self.opts.pmtu),
                    nvme,
                },
            ),
            (
                false,
                CmMessage::Rep {
                    local_comm_id: comm + 1,
                    remote_comm_id: comm,
                    local_qpn: c.qp_b,
                    starting_psn: 0,
                },
            ),
            (
                true,
                CmMessage::Rtu {
                    local_comm_id: comm,
                    remote_comm_id: comm + 1,
                },
            ),
        ];
        let mut t = t;
        for (from_a, m) in msgs {
            let (src, dst, net) = if from_a {
                (c.mac_a, c.mac_b, c.net)
            } else {
                (c.mac_b, c.mac_a, c.net.reversed())
            };
            let pair = if from_a { (a, b) } else { (b, a) };
            let psn = {
                let p = self.gsi_psn.entry(pair).or_insert(0);
                *p += 1;
                *p
            };
            let mut mad = cm_mad(u64::from(comm), &m);
            if nvme.is_some() && matches!(m, CmMessage::Req { .. }) {
                super::frame::fill_req_primary_path(&mut mad, &net);
            }
            let f = cm_frame(src, dst, net, psn, &mad);
            self.roce(t, &f);
            t += 5_000;
        }
        t
    }

    /// One PFC pause on `prio` from the switch: XOFF at `start`, refreshed
    /// every `refresh` ns until `xon` (or left to expire when `None`).
    fn pause_train(
        &mut self,
        prio: u8,
        start: u64,
        until: u64,
        refresh: u64,
        quanta: u16,
        xon: bool,
    ) {
        let bps = self.opts.link_speed_bps;
        // The truth is what the written file shows: times as the capture
        // format stores them (a µs pcap drops the nanoseconds), expiries
        // counted from those.
        let res = self.opts.ts_resolution_ns.max(1);
        let shown = |t: u64| t - t % res;
        let mut t = start;
        let mut times = [0u16; 8];
        times[usize::from(prio)] = quanta;
        let mut expiry;
        loop {
            let mut v = Vec::new();
            build_pfc(SWITCH_MAC, 1 << prio, times, &mut v);
            self.push(t, v);
            expiry = shown(t) + quanta_to_ns(quanta, bps);
            let next = t + refresh;
            if next > until || shown(next) > expiry {
                break;
            }
            t = next;
        }
        let (end, by) = if xon && shown(until) <= expiry {
            let mut v = Vec::new();
            build_pfc(SWITCH_MAC, 1 << prio, [0; 8], &mut v);
            self.push(until, v);
            (shown(until), "xon")
        } else {
            (expiry, "expiry")
        };
        self.intervals.push(IntervalTruth {
            src_mac: crate::output::json::mac_string(&SWITCH_MAC),
            priority: Some(prio),
            start_ns: shown(start),
            end_ns: end,
            ended_by: by,
        });
    }

    /// Runs the scenario to the end.
    pub fn run(mut self) -> std::io::Result<Truth> {
        let name = self.opts.scenario;
        if name == Scenario::Nvme {
            return self.run_nvme();
        }
        if name == Scenario::PfcHeadroom {
            return self.run_pfc_headroom();
        }
        if name == Scenario::Dcqcn {
            return self.run_dcqcn();
        }
        if name == Scenario::Deadlock {
            return Err(std::io::Error::other(
                "the deadlock scenario writes a capture per link: synth::deadlock::generate",
            ));
        }
        let o = self.opts.clone();
        let mixed = name == Scenario::Mixed;
        let mut qps: Vec<QpState> = (0..o.qps.max(1))
            .map(|i| {
                let incast = name == Scenario::Incast;
                let conn = make_conn(i, if mixed { i % 3 } else { 0 }, incast);
                QpState {
                    conn,
                    // Wrapping: only the low 24 bits are a PSN (past 4 095
                    // QPs the product leaves 32 bits).
                    next_psn: Psn::new(
                        i.wrapping_mul(0x10_0000)
                            .wrapping_add(0xff_fff0 * u32::from(i % 5 == 4)),
                    ),
                    msn: 0,
                    busy_until: 0,
                    last_cnp: None,
                    last_answer: 0,
                    loss: name == Scenario::Loss || (mixed && i % 4 == 1),
                    reorder: name == Scenario::Reorder || (mixed && i % 4 == 2),
                    ecn: name == Scenario::Incast || (mixed && i % 4 == 3),
                }
            })
            .collect();

        // RDMA CM setup, one connection after the other.
        if matches!(name, Scenario::Clean | Scenario::Mixed) {
            let mut t = self.now;
            for q in &qps {
                let c = q.conn;
                t = self.cm_setup(&c, t);
            }
            self.now = t;
        }
        let start = self.now;

        // Pauses: incast gets short XOFF/XON bursts, pfc-storm one long pause.
        if name == Scenario::PfcStorm {
            let long = 150_000_000u64.max(o.duration_ns.unwrap_or(0));
            self.pause_train(
                3,
                start + 1_000,
                start + 1_000 + long,
                200_000,
                65535,
                false,
            );
            self.pause_train(4, start + 2_000, start + 52_000, 20_000, 65535, true);
        }

        let total = u64::from(o.messages) * qps.len() as u64;
        let mut pause_at = start + 20_000;
        for m in 0..total {
            if let Some(d) = o.duration_ns
                && self.now - start > d
            {
                break;
            }
            let i = (m % qps.len() as u64) as usize;
            let t0 = self.now.max(qps[i].busy_until);
            let kind = self.rng.below(3);
            let end = self.message(&mut qps[i], t0, kind)?;
            qps[i].busy_until = end;
            if (name == Scenario::Incast || mixed) && self.now >= pause_at {
                let len = 2_000 + self.rng.below(8_000);
                let xon = self.rng.chance(0.7);
                self.pause_train(3, self.now + 500, self.now + 500 + len, 3_000, 3000, xon);
                pause_at = self.now + 100_000;
            }
            self.drain(self.now)?;
        }
        self.drain(u64::MAX)?;

        let (first, last) = self.span.unwrap_or((0, 0));
        let kept = self.timing_items <= super::timing::MAX_TRUTH_ITEMS;
        let mut timing = std::mem::take(&mut self.timing);
        let flows = self
            .order
            .iter()
            .map(|k| {
                let mut f = self.truth[k].clone();
                if kept {
                    f.timing = timing.remove(k).and_then(|t| t.report(first, last));
                }
                f
            })
            .collect();
        Ok(Truth {
            scenario: name,
            seed: o.seed,
            frames: self.frames,
            flows,
            pfc: PfcTruth {
                intervals: self.intervals,
            },
            vantage: super::timing::vantage(o.qps, name == Scenario::Incast),
            nvme: None,
            reactions: None,
            cc: None,
        })
    }

    /// Sends one message on `q` starting at `t0`; returns when the QP is free.
    fn message(&mut self, q: &mut QpState, t0: u64, kind: u64) -> std::io::Result<u64> {
        let o = self.opts.clone();
        let c = q.conn;
        let (a, b) = net_src_dst(&c.net);
        let data_key = (a, b, c.qp_b);
        let back_key = (b, a, c.qp_a);
        let size = o.size.max(1);
        let pmtu = o.pmtu.max(256);
        let n = size.div_ceil(pmtu).max(1);
        let bps = o.link_speed_bps;
        q.msn += 1;
        let msn = q.msn;

        if kind == 2 {
            return Ok(self.read_message(q, t0, n, msn, data_key, back_key));
        }

        // SEND (0) or WRITE (1): n packets.
        let ops: Vec<u8> = (0..n)
            .map(|k| match (kind, n, k) {
                (0, 1, _) => 0x04,
                (0, _, 0) => 0x00,
                (0, _, k) if k == n - 1 => 0x02,
                (0, _, _) => 0x01,
                (_, 1, _) => 0x0a,
                (_, _, 0) => 0x06,
                (_, _, k) if k == n - 1 => 0x08,
                _ => 0x07,
            })
            .collect();
        let first_psn = q.next_psn;
        q.next_psn = first_psn + n;
        let frames: Vec<_> = (0..n)
            .map(|k| {
                let len = if k == n - 1 {
                    size - pmtu * (n - 1)
                } else {
                    pmtu
                };
                c.req(ops[k as usize], first_psn + k, len as usize)
            })
            .collect();
        let drop_at = (q.loss && self.rng.chance(o.loss * f64::from(n)))
            .then(|| self.rng.below(u64::from(n)) as u32);
        let swap_at =
            (q.reorder && n >= 2 && drop_at.is_none() && self.rng.chance(o.reorder * f64::from(n)))
                .then(|| self.rng.below(u64::from(n - 1)) as u32);
        // Each packet's appearances in the capture, and the answers: (when,
        // the PSN they name (offset), a NAK).
        let mut seen = vec![Seen::default(); n as usize];
        let mut answers: Vec<(u64, u32, bool)> = Vec::new();
        // The first packet the fault touches: ACKs before it only.
        let fault = drop_at.or(swap_at).unwrap_or(n);

        let mut t = t0;
        let mut times = Vec::with_capacity(n as usize);
        let mut order: Vec<u32> = (0..n).collect();
        if let Some(s) = swap_at {
            order.swap(s as usize, s as usize + 1);
        }
        for (pos, &k) in order.iter().enumerate() {
            let mut f = frames[k as usize];
            let lost = drop_at == Some(k);
            if !(lost && o.loss_side == LossSide::Receiver) {
                if q.ecn && self.rng.chance(o.ecn) {
                    f.net = f.net.with_ecn(3);
                    self.ce(q, t, data_key, back_key);
                }
                self.roce(t, &f);
                seen[k as usize].times.push(t);
            }
            times.push(t);
            t += ser_ns(f.payload.len() + 70, bps) + GAP_NS;
            // Coalesced ACKs: every N packets of the message before a fault.
            if let Some(every) = o.ack_every
                && k < fault
                && k + 1 < n
                && (pos as u32 + 1).is_multiple_of(every.max(1))
            {
                let d = self.answer_delay();
                let at = Self::answer_at(q, times[pos] + d);
                let ack = c.ack(first_psn + k, AckKind::Ack, 31, msn - 1);
                self.roce(at, &ack);
                answers.push((at, k, false));
            }
        }
        self.now = t;
        let mut done = t;

        // Replays of packets `from..n` starting at `at`; returns when done.
        let replay = |g: &mut Self, from: u32, at: u64, seen: &mut [Seen]| {
            let mut rt = at;
            for k in from..n {
                let again = !seen[k as usize].times.is_empty();
                g.roce_again(rt, &frames[k as usize], again);
                seen[k as usize].times.push(rt);
                rt += ser_ns(frames[k as usize].payload.len() + 70, bps) + GAP_NS;
            }
            rt
        };
        let mut silence = None;
        if let Some(s) = swap_at {
            // The responder sees s+1 before s: NAK(s), then go-back-N s, s+1.
            let d = self.answer_delay();
            let nak_t = Self::answer_at(q, times[s as usize + 1] + d);
            let nak = c.ack(first_psn + s, AckKind::Nak, 0, msn - 1);
            self.roce(nak_t, &nak);
            answers.push((nak_t, s, true));
            // Go-back-N starts once the burst in flight has left.
            done = replay(self, s, (nak_t + ACK_DELAY_NS).max(t), &mut seen);
            let ft = self.flow(data_key);
            ft.out_of_order += 1;
            ft.retransmits += u64::from(n - s);
            self.flow(back_key).naks.psn_seq_err += 1;
        } else if let Some(j) = drop_at {
            let replay_from;
            if j + 1 < n {
                // The next packet reveals the hole: NAK(j), go-back-N j..n.
                let d = self.answer_delay();
                let nak_t = Self::answer_at(q, times[j as usize + 1] + d);
                let nak = c.ack(first_psn + j, AckKind::Nak, 0, msn - 1);
                self.roce(nak_t, &nak);
                answers.push((nak_t, j, true));
                self.flow(back_key).naks.psn_seq_err += 1;
                replay_from = (nak_t + ACK_DELAY_NS).max(t);
                let ft = self.flow(data_key);
                match o.loss_side {
                    LossSide::Sender => ft.retransmits += u64::from(n - j),
                    LossSide::Receiver => {
                        ft.out_of_order += 1;
                        ft.retransmits += u64::from(n - j - 1);
                    }
                }
            } else {
                // Last packet lost: nothing reveals it; the requester times out.
                replay_from = t + RTO_NS;
                if o.loss_side == LossSide::Sender {
                    self.flow(data_key).retransmits += 1;
                    // The flow's last frame before the replay: the lost one.
                    silence = Some(self.shown(replay_from) - self.shown(times[n as usize - 1]));
                }
            }
            done = replay(self, j, replay_from, &mut seen);
        }
        // The ACK of the whole message.
        let d = self.answer_delay();
        let ack_t = Self::answer_at(q, done + d);
        let ack = c.ack(first_psn + (n - 1), AckKind::Ack, 31, msn);
        self.roce(ack_t, &ack);
        answers.push((ack_t, n - 1, false));

        // The timing facts, by the README's definitions: a packet is late
        // when a later PSN of its message was seen first.
        let late: Vec<bool> = (0..n as usize)
            .map(|k| {
                let f = seen[k].first();
                seen[k + 1..]
                    .iter()
                    .any(|x| matches!((x.first(), f), (Some(a), Some(b)) if a < b))
            })
            .collect();
        let start = seen.iter().filter_map(Seen::first).min().unwrap_or(t0);
        let shown = |g: &Self, t: u64| g.shown(t);
        let samples: Vec<u64> = answers
            .iter()
            .filter_map(|&(at, k, _)| {
                let s = &seen[k as usize];
                (!late[k as usize] && s.before(at) == 1)
                    .then(|| shown(self, at) - shown(self, s.times[0]))
            })
            .collect();
        let pushed = (0..n as usize)
            .filter(|&k| !late[k] && !seen[k].times.is_empty())
            .count() as u64;
        let completion = shown(self, ack_t) - shown(self, start);
        if let Some(tt) = self.timing(data_key) {
            tt.rtt.extend(samples);
            tt.acks += answers.len() as u64;
            tt.acked_packets += pushed;
            tt.sizes.push(u64::from(size));
            tt.bytes += u64::from(size);
            tt.completion.push(completion);
            tt.silences.extend(silence);
        }
        Ok(ack_t)
    }

    /// A READ of `n` PSNs: one request (replayed after a timeout when
    /// dropped), `n` responses.
    fn read_message(
        &mut self,
        q: &mut QpState,
        t0: u64,
        n: u32,
        msn: u32,
        data_key: Key,
        back_key: Key,
    ) -> u64 {
        let o = self.opts.clone();
        let c = q.conn;
        let (size, pmtu, bps) = (o.size.max(1), o.pmtu.max(256), o.link_speed_bps);
        let psn = q.next_psn;
        q.next_psn = psn + n;
        let req = c.read(psn, size);
        let mut t = t0;
        let dropped = q.loss && self.rng.chance(o.loss);
        let captured = !(dropped && o.loss_side == LossSide::Receiver);
        // The request's appearances in the capture.
        let mut seen = Seen::default();
        if captured {
            let mut frame = req;
            if q.ecn && self.rng.chance(o.ecn) {
                frame.net = frame.net.with_ecn(3);
                self.ce(q, t, data_key, back_key);
            }
            self.roce(t, &frame);
            seen.times.push(t);
        }
        let frame = req;
        self.now = t + ser_ns(74, bps) + GAP_NS;
        let mut silence = None;
        if dropped {
            // The only packet: nothing follows, so the requester times out.
            t += RTO_NS;
            self.roce_again(t, &frame, captured);
            seen.times.push(t);
            if o.loss_side == LossSide::Sender {
                self.flow(data_key).retransmits += 1;
                silence = Some(self.shown(t) - self.shown(t0));
            }
        }
        let first_rt = t + o.read_delay_ns;
        let mut rt = first_rt;
        let mut last_rt = rt;
        for k in 0..n {
            let op = match (n, k) {
                (1, _) => 0x10,
                (_, 0) => 0x0d,
                (_, k) if k == n - 1 => 0x0f,
                _ => 0x0e,
            };
            let len = if k == n - 1 {
                size - pmtu * (n - 1)
            } else {
                pmtu
            };
            let f = c.read_resp(op, psn + k, len as usize, msn);
            self.roce(rt, &f);
            last_rt = rt;
            rt += ser_ns(len as usize + 70, bps) + GAP_NS;
        }
        q.last_answer = q.last_answer.max(last_rt);
        let start = seen.times[0];
        let once = seen.before(first_rt) == 1;
        let (first_shown, last_shown, start_shown) =
            (self.shown(first_rt), self.shown(last_rt), self.shown(start));
        if let Some(tt) = self.timing(data_key) {
            tt.sizes.push(u64::from(size));
            tt.bytes += u64::from(size);
            if once {
                tt.rtt.push(first_shown - start_shown);
                tt.read_latency.push(first_shown - start_shown);
            }
            tt.completion.push(last_shown - start_shown);
            tt.silences.extend(silence);
        }
        rt
    }

    /// A CE mark at `t` on the data flow; the receiver answers with a CNP
    /// unless it sent one to this QP less than 50 µs ago.
    fn ce(&mut self, q: &mut QpState, t: u64, data: Key, back: Key) {
        self.flow(data).ecn_ce += 1;
        if q.last_cnp.is_none_or(|l| t >= l + CNP_INTERVAL_NS) {
            q.last_cnp = Some(t);
            let cnp = q.conn.cnp();
            self.roce(t + 4_000, &cnp);
            self.flow(back).cnps += 1;
        }
    }
}

fn pmtu_code(pmtu: u32) -> u8 {
    match pmtu {
        0..=256 => 1,
        257..=512 => 2,
        513..=1024 => 3,
        1025..=2048 => 4,
        _ => 5,
    }
}

/// Connection `i` over network kind `kind` (0 v2/IPv4, 1 v2/IPv6, 2 v1).
/// Incast sends every client to one server.
fn make_conn(i: u32, kind: u32, incast: bool) -> Conn {
    let client = (i % 200) as u8 + 1;
    let server = if incast { 1 } else { (i % 4) as u8 + 1 };
    let mac_a = [0x02, 0x00, 0x00, 0x00, 0x01, client];
    let net = match kind {
        0 => NetSpec::V2Ipv4 {
            src: Ipv4Addr::new(10, 0, 0, client),
            dst: Ipv4Addr::new(10, 0, 1, server),
            dscp: 26,
            ecn: 2,
            ttl: 64,
            sport: 0xc000 | (i as u16 & 0x3fff),
        },
        1 => NetSpec::V2Ipv6 {
            src: Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, u16::from(client)),
            dst: Ipv6Addr::new(0xfd00, 0, 0, 1, 0, 0, 0, u16::from(server)),
            dscp: 26,
            ecn: 2,
            hop_limit: 64,
            flow_label: i & 0xfffff,
            sport: 0xc000 | (i as u16 & 0x3fff),
        },
        _ => NetSpec::V1 {
            sgid: Ipv4Addr::new(10, 0, 0, client).to_ipv6_mapped(),
            dgid: Ipv4Addr::new(10, 0, 1, server).to_ipv6_mapped(),
            tclass: 26 << 2 | 2,
            hop_limit: 1,
            flow_label: 0,
        },
    };
    Conn {
        mac_a,
        // Frames to the server go through the switch port that pauses.
        mac_b: SWITCH_MAC,
        net,
        qp_a: 0x100 + i * 2,
        qp_b: 0x4000 + i * 2 + 1,
        vlan: None,
    }
}

/// Generates a scenario into `sink`.
pub fn generate(
    opts: GenOptions,
    sink: &mut dyn FnMut(u64, &[u8]) -> std::io::Result<()>,
) -> std::io::Result<Truth> {
    let _ = build_pause;
    Generator::new(opts, sink).run()
}
