//! NVMe over Fabrics on RDMA: every I/O of every queue, from its command
//! capsule (a SEND from the host) through its data (RDMA WRITEs of the
//! controller for a read, RDMA READs of the controller for a write, each
//! matched by the command's keyed SGL: key, address and length) to its
//! response capsule (a SEND from the controller, matched by CID).
//!
//! A queue is a command flow (host → controller QP) and its response flow
//! (controller → host). The RDMA CM says which connections carry NVMe-oF;
//! without it a flow whose SENDs look like commands is followed on trial,
//! and becomes a queue when a 16-byte SEND comes back the other way with
//! one of its CIDs (`--ulp nvme` makes every such flow a queue at once).

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::Serialize;

use super::Map;
use super::report::UlpBy;
use super::timing::{Kind, Log, Logs, Samples, Stats};
use crate::dissect::Addr;
use crate::wire::nvme::{self, QueueKind};
use crate::wire::{Operation, Psn};

/// Bytes of a SEND's message start the analysis reads: a CQE, and an SQE
/// up to its starting LBA.
pub const CAPSULE_HEAD: usize = 48;

/// The parts of the first [`CAPSULE_HEAD`] bytes a [`Capsule`] keeps, as
/// (offset, length): an SQE's opcode, flags, command id and Fabrics type
/// (a CQE's first dwords, never read), a CQE's command id and status, and
/// an SQE's SGL and dwords 10-11. The rest (an SQE's namespace, dword 3 and
/// metadata pointer) is left out so that a frame's facts stay small.
const CAPSULE_PARTS: [(usize, usize); 3] = [(0, 5), (12, 4), (24, 24)];

/// Bytes a [`Capsule`] keeps: its parts' lengths.
const CAPSULE_KEPT: usize = {
    let mut kept = 0;
    let mut i = 0;
    while i < CAPSULE_PARTS.len() {
        kept += CAPSULE_PARTS[i].1;
        i += 1;
    }
    kept
};

/// Where byte `at` of a capsule is kept, if it is.
const fn kept_at(at: usize) -> Option<usize> {
    let mut kept = 0;
    let mut i = 0;
    while i < CAPSULE_PARTS.len() {
        let (start, len) = CAPSULE_PARTS[i];
        if at >= start && at < start + len {
            return Some(kept + at - start);
        }
        kept += len;
        i += 1;
    }
    None
}

/// The start of a SEND that starts a message (FIRST or ONLY): what the
/// analysis reads of a command or response capsule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capsule {
    /// [`CAPSULE_PARTS`] one after the other, zero past the payload's end.
    bytes: [u8; CAPSULE_KEPT],
}

impl Capsule {
    /// At least a CQE's worth of payload, else `None`. (Out of line: the
    /// decoders call it for SENDs only, and inlined, its copies made
    /// their every frame some 10 ns slower.)
    #[inline(never)]
    pub fn of(payload: &[u8]) -> Option<Capsule> {
        if payload.len() < nvme::CQE_LEN {
            return None;
        }
        let mut bytes = [0; CAPSULE_KEPT];
        let mut kept = 0;
        for (start, len) in CAPSULE_PARTS {
            let part = payload.get(start..).unwrap_or_default();
            let n = part.len().min(len);
            bytes[kept..kept + n].copy_from_slice(&part[..n]);
            kept += len;
        }
        Some(Capsule { bytes })
    }

    /// The capsule's byte `at` (one of those kept).
    fn byte(&self, at: usize) -> u8 {
        kept_at(at).map_or(0, |i| self.bytes[i])
    }

    /// The little-endian number in bytes `at..at + n` (kept, in one part).
    fn le(&self, at: usize, n: usize) -> u64 {
        let Some(i) = kept_at(at) else { return 0 };
        self.bytes[i..i + n]
            .iter()
            .rev()
            .fold(0u64, |v, &b| v << 8 | u64::from(b))
    }

    pub fn opcode(&self) -> u8 {
        self.byte(0)
    }
    fn flags(&self) -> u8 {
        self.byte(1)
    }
    pub fn cid(&self) -> u16 {
        self.le(2, 2) as u16
    }
    fn fctype(&self) -> Option<u8> {
        (self.opcode() == nvme::FABRICS_OPCODE).then_some(self.byte(4))
    }
    fn sgl_addr(&self) -> u64 {
        self.le(24, 8)
    }
    /// A keyed data block's length is 24 bits, a data block's 32.
    fn sgl_len(&self) -> u32 {
        if self.sgl_type() >> 4 == nvme::sgl_type::KEYED_DATA_BLOCK {
            self.le(32, 3) as u32
        } else {
            self.le(32, 4) as u32
        }
    }
    fn sgl_key(&self) -> u32 {
        self.le(35, 4) as u32
    }
    fn sgl_type(&self) -> u8 {
        self.byte(39)
    }
    fn slba(&self) -> u64 {
        self.le(40, 8)
    }
    /// A Fabrics Connect's queue id (dword 10, bits 31:16).
    fn connect_qid(&self) -> Option<u16> {
        (self.fctype() == Some(nvme::fctype::CONNECT)).then(|| self.le(42, 2) as u16)
    }
    pub fn cqe_cid(&self) -> u16 {
        self.le(12, 2) as u16
    }
    fn cqe_status(&self) -> u16 {
        self.le(14, 2) as u16
    }

    /// Whether a SEND of `len` bytes starting so reads as an NVMe-oF
    /// command: 64 bytes or more, SGLs (PSDT 1 or 2), not fused, an SGL
    /// that is keyed, an in-capsule offset, or empty, and an opcode with a
    /// name.
    pub fn looks_like_command(&self, len: u32) -> bool {
        let t = self.sgl_type();
        len as usize >= nvme::SQE_LEN
            && matches!(self.flags() >> 6, 1 | 2)
            && self.flags() & 0x03 == 0
            && (t >> 4 == nvme::sgl_type::KEYED_DATA_BLOCK
                || t == nvme::sgl_type::SUBTYPE_OFFSET
                || (t == 0 && self.sgl_len() == 0))
            && (self.fctype().is_some()
                || nvme::opcode_name(self.opcode(), QueueKind::Io) != "Unknown"
                || nvme::opcode_name(self.opcode(), QueueKind::Admin) != "Unknown")
    }

    /// The command's opcode, or a Fabrics command's type plus 0x100.
    fn op_code(&self) -> u16 {
        self.fctype()
            .map_or(u16::from(self.opcode()), |t| 0x100 | u16::from(t))
    }

    #[cfg(test)]
    fn op_key(&self, q: QueueKind) -> String {
        op_key(self.op_code(), q)
    }

    /// Data direction: bits 1:0 of the opcode: 01 host to controller, 10
    /// controller to host.
    /// Fabrics commands move no user data: none.
    fn direction(&self) -> Dir {
        if self.fctype().is_some() {
            return Dir::None;
        }
        match self.opcode() & 0x03 {
            1 => Dir::ToController,
            2 => Dir::ToHost,
            _ => Dir::None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    None,
    ToController,
    ToHost,
}

/// `--ulp`: which connections carry NVMe-oF when the CM does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum UlpRule {
    /// The CM, else the payload heuristic.
    #[default]
    Auto,
    /// The CM only (`--ulp none`).
    CmOnly,
    /// Every connection whose SENDs read as commands (`--ulp nvme`), or
    /// those to these controllers (`--ulp nvme@IP[:PORT]`; the port is the
    /// service's, read from CM REQs).
    Nvme(Vec<(IpAddr, Option<u16>)>),
}

impl UlpRule {
    /// Parses `nvme`, `nvme@IP`, `nvme@IP:PORT`, `nvme@[IPv6]:PORT` or
    /// `none`; several rules add up.
    pub fn add(&mut self, s: &str) -> Result<(), String> {
        let s = s.trim();
        if s == "none" {
            *self = UlpRule::CmOnly;
            return Ok(());
        }
        let (ulp, at) = match s.split_once('@') {
            Some((u, a)) => (u, Some(a)),
            None => (s, None),
        };
        if ulp != "nvme" {
            return Err(format!(
                "'{s}': only NVMe-oF is decoded (nvme, nvme@IP[:PORT] or none)"
            ));
        }
        let target = match at {
            None => None,
            Some(a) => Some(parse_target(a).ok_or_else(|| {
                format!("'{a}': expected IP or IP:PORT (e.g. 10.0.0.2:4420, [fd00::2]:4420)")
            })?),
        };
        match (&mut *self, target) {
            (UlpRule::Nvme(list), Some(t)) => {
                if !list.is_empty() {
                    list.push(t);
                }
            }
            (UlpRule::Nvme(list), None) => list.clear(),
            (_, Some(t)) => *self = UlpRule::Nvme(vec![t]),
            (_, None) => *self = UlpRule::Nvme(Vec::new()),
        }
        Ok(())
    }

    /// Whether the option makes a connection to `controller` (on the CM
    /// service port `port`, when known) NVMe-oF.
    pub fn forces(&self, controller: Addr, port: Option<u16>) -> bool {
        match self {
            UlpRule::Nvme(list) => {
                list.is_empty()
                    || list.iter().any(|&(ip, p)| {
                        Addr::Ip(ip) == controller && (p.is_none() || port.is_none() || p == port)
                    })
            }
            _ => false,
        }
    }

    /// Whether flows may be tried by their payloads.
    pub fn heuristic(&self) -> bool {
        *self == UlpRule::Auto
    }
}

fn parse_target(a: &str) -> Option<(IpAddr, Option<u16>)> {
    if let Ok(ip) = a.parse::<IpAddr>() {
        return Some((ip, None));
    }
    let sa: std::net::SocketAddr = a.parse().ok()?;
    Some((sa.ip(), Some(sa.port())))
}

/// Queues followed, trials included.
const MAX_QUEUES: usize = 4096;
/// Commands waiting for their response, in all queues.
const MAX_PENDING: usize = 1 << 18;
/// RDMA WRITE messages or READ requests in flight remembered per flow.
const MAX_TRANSFERS: usize = 16;
/// I/Os listed as the slowest, and as never answered.
pub const LISTED: usize = 20;

/// One command waiting for its response.
#[derive(Debug, Clone, Copy)]
struct Io {
    serial: u32,
    fabrics: bool,
    op_slot: u32,
    lba: Option<u64>,
    bytes: u32,
    dir: Dir,
    key: Option<u32>,
    addr: u64,
    frame: u64,
    ts: u64,
    psn: Psn,
    first_data: Option<u64>,
    last_data: u64,
}

#[derive(Debug)]
struct Queue {
    cmd_flow: u32,
    resp_flow: Option<u32>,
    host: Addr,
    controller: Addr,
    qid: Option<u16>,
    by: UlpBy,
    /// Known to carry NVMe-oF (not on trial).
    confirmed: bool,
    pending: Map<u16, Io>,
    commands: u64,
    completed: u64,
    errors: u64,
    outstanding_max: u64,
    cid_reused: u64,
    unmatched_responses: u64,
    dropped: u64,
    bytes_read: u64,
    bytes_written: u64,
    latency: Samples,
    first_data: Samples,
    data: Samples,
    /// The log slot of the queue's latencies, and of each command's.
    slot: u32,
    /// Per command (opcode, or Fabrics type + 0x100): its log slot and
    /// latencies. A handful per queue: a vector.
    by_op: Vec<OpStats>,
}

impl Queue {
    fn kind(&self) -> QueueKind {
        QueueKind::of_qid(self.qid.unwrap_or(1))
    }

    /// The name of the command whose latencies go to log slot `slot`.
    fn op_name(&self, slot: u32) -> String {
        self.by_op
            .iter()
            .find(|o| o.slot == slot)
            .map_or_else(String::new, |o| op_key(o.code, self.kind()))
    }
}

#[derive(Debug)]
struct OpStats {
    code: u16,
    slot: u32,
    latency: Samples,
}

/// A command's name in a queue's command set (from [`Capsule::op_code`]),
/// as a report key: `read`, `write`, `connect`, `property-get`, ...
fn op_key(code: u16, q: QueueKind) -> String {
    let name = match u8::try_from(code) {
        Ok(op) => nvme::opcode_name(op, q),
        Err(_) => nvme::fctype::name((code & 0xff) as u8),
    };
    name.to_ascii_lowercase().replace(' ', "-")
}

/// Which side of a queue a flow is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Commands,
    Responses,
}

/// A transfer in flight on a flow: PSN it started at, and its I/O.
#[derive(Debug, Clone, Copy)]
struct Transfer {
    psn: Psn,
    queue: u32,
    cid: u16,
    serial: u32,
    /// The I/O's command (opcode, or Fabrics type + 0x100).
    code: u16,
    /// Where in the I/O's data the transfer starts.
    start: u32,
    /// Its first data packet's payload (each but the last packet carries
    /// as much): 0 until that packet is seen (a READ's first response).
    unit: u32,
}

/// A packet of an I/O's data (an RDMA WRITE to the host, a READ response
/// from it), or a READ request asking the host for that data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataOf {
    pub qid: Option<u16>,
    pub cid: u16,
    /// The command (opcode, or Fabrics type + 0x100).
    pub code: u16,
    /// Bytes of the I/O's data before this packet's, when known (not on
    /// a READ request, nor on a READ response whose first was not seen).
    pub offset: Option<u32>,
}

/// What the tracker says of a capsule frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Said {
    pub side: Side,
    pub qid: Option<u16>,
    /// On a response: its command's latency.
    pub latency_ns: Option<u64>,
    /// A Fabrics command, or on a response: its command was one.
    pub fabrics: bool,
    /// The queue is known (not on trial).
    pub confirmed: bool,
}

/// Notes flow `flow` in a bitset of flows.
fn mark(bits: &mut Vec<u64>, flow: u32) {
    let w = (flow / 64) as usize;
    if bits.len() <= w {
        bits.resize(w + 1, 0);
    }
    bits[w] |= 1 << (flow % 64);
}

/// Every queue's I/Os.
#[derive(Debug)]
pub struct Tracker {
    pub rule: UlpRule,
    queues: Vec<Queue>,
    by_flow: Map<u32, (u32, Side)>,
    /// The flows in `by_flow`, a bit each by flow id: what every frame
    /// without a capsule or data asks ([`Tracker::queue_of`]) before the
    /// map is looked up.
    queue_flows: Vec<u64>,
    /// Queues per (host, controller) whose response flow is not known yet.
    unbound: Map<(Addr, Addr), Vec<u32>>,
    /// Keyed SGLs of pending I/Os: (host, controller, key) → (queue, CID).
    keys: Map<(Addr, Addr, u32), (u32, u16)>,
    /// WRITEs (on the controller's flow) and READ responses (on the
    /// host's) in flight, per flow.
    transfers: Map<u32, Vec<Transfer>>,
    pending: usize,
    serial: u32,
    slots: u32,
    logs: Logs,
    slowest: Vec<IoReport>,
    errors: BTreeMap<u16, u64>,
    queues_dropped: u64,
    /// Every I/O completed since [`Tracker::take_done`] last emptied it,
    /// when asked for (`export`'s `nvme_ios`).
    done: Option<Vec<IoDone>>,
}

/// A completed I/O with its queue's ends and its status's parts, as
/// `export` lists every one.
#[derive(Debug, Clone)]
pub struct IoDone {
    pub io: IoReport,
    pub host: Addr,
    pub controller: Addr,
    pub sct: u8,
    pub sc: u8,
}

impl Tracker {
    /// Latency histograms in the report (`--timeline`, `--html`).
    pub fn histograms(&mut self, on: bool) {
        self.logs.histograms = on;
    }

    pub fn new(rule: UlpRule, samples: u64) -> Self {
        Tracker {
            rule,
            queues: Vec::new(),
            by_flow: Map::default(),
            queue_flows: Vec::new(),
            unbound: Map::default(),
            keys: Map::default(),
            transfers: Map::default(),
            pending: 0,
            serial: 0,
            slots: 0,
            logs: Logs::new(samples),
            slowest: Vec::new(),
            errors: BTreeMap::new(),
            queues_dropped: 0,
            done: None,
        }
    }

    /// Keep every completed I/O for [`Tracker::take_done`].
    pub fn keep_done(&mut self) {
        self.done.get_or_insert_with(Vec::new);
    }

    /// The I/Os completed since the last call (the caller drains them
    /// after every frame, so at most a frame's worth are held).
    pub fn take_done(&mut self) -> Option<&mut Vec<IoDone>> {
        self.done.as_mut()
    }

    /// Whether any flow is followed (the cheap test before the others).
    #[inline]
    pub fn active(&self) -> bool {
        !self.queues.is_empty()
    }

    /// The queue and side of flow `flow`.
    pub fn side(&self, flow: u32) -> Option<(u32, Side)> {
        self.by_flow.get(&flow).copied()
    }

    /// What the tracker knows of flow `flow`'s queue: (by, qid), when it
    /// is known to carry NVMe-oF.
    pub fn ulp_of(&self, flow: u32) -> Option<(UlpBy, Option<u16>)> {
        let (q, _) = self.side(flow)?;
        let q = &self.queues[q as usize];
        q.confirmed.then_some((q.by, q.qid))
    }

    /// When flow `flow` is a QP's of a queue known to carry NVMe-oF: the
    /// queue's ID, if known.
    #[inline]
    pub fn queue_of(&self, flow: u32) -> Option<Option<u16>> {
        let w = self.queue_flows.get((flow / 64) as usize)?;
        if w & 1 << (flow % 64) == 0 {
            return None;
        }
        self.ulp_of(flow).map(|(_, qid)| qid)
    }

    /// Starts following command flow `flow` (host → controller).
    pub fn open(
        &mut self,
        flow: u32,
        host: Addr,
        controller: Addr,
        by: UlpBy,
        qid: Option<u16>,
    ) -> Option<u32> {
        if self.queues.len() >= MAX_QUEUES {
            self.queues_dropped += 1;
            return None;
        }
        let q = self.queues.len() as u32;
        let slot = self.slots;
        self.slots += 1;
        self.queues.push(Queue {
            cmd_flow: flow,
            resp_flow: None,
            host,
            controller,
            qid,
            confirmed: by != UlpBy::Heuristic,
            by,
            pending: Map::default(),
            commands: 0,
            completed: 0,
            errors: 0,
            outstanding_max: 0,
            cid_reused: 0,
            unmatched_responses: 0,
            dropped: 0,
            bytes_read: 0,
            bytes_written: 0,
            latency: Samples::default(),
            first_data: Samples::default(),
            data: Samples::default(),
            slot,
            by_op: Vec::new(),
        });
        self.by_flow.insert(flow, (q, Side::Commands));
        mark(&mut self.queue_flows, flow);
        self.unbound.entry((host, controller)).or_default().push(q);
        Some(q)
    }

    /// Binds response flow `flow` to queue `q`.
    pub fn bind(&mut self, q: u32, flow: u32) {
        let queue = &mut self.queues[q as usize];
        if queue.resp_flow.is_some() {
            return;
        }
        queue.resp_flow = Some(flow);
        queue.confirmed = true;
        self.by_flow.insert(flow, (q, Side::Responses));
        mark(&mut self.queue_flows, flow);
        if let Some(list) = self.unbound.get_mut(&(queue.host, queue.controller)) {
            list.retain(|&x| x != q);
        }
    }

    /// The unbound queue from `host` to `controller` waiting for CID `cid`
    /// (its oldest such command), for a response on a flow not yet bound.
    pub fn waiting_for(&self, host: Addr, controller: Addr, cid: u16) -> Option<u32> {
        self.unbound
            .get(&(host, controller))?
            .iter()
            .filter_map(|&q| Some((self.queues[q as usize].pending.get(&cid)?.frame, q)))
            .min()
            .map(|(_, q)| q)
    }

    /// A command capsule on queue `q`.
    #[allow(clippy::too_many_arguments)]
    pub fn command(&mut self, q: u32, c: &Capsule, frame: u64, ts: u64, psn: Psn) -> Said {
        let queue = &mut self.queues[q as usize];
        if queue.qid.is_none() {
            queue.qid = c.connect_qid();
        }
        let kind = queue.kind();
        let cid = c.cid();
        let said = Said {
            side: Side::Commands,
            qid: queue.qid,
            latency_ns: None,
            fabrics: c.fctype().is_some(),
            confirmed: queue.confirmed,
        };
        // A replay of the same capsule is not a new command.
        if queue.pending.get(&cid).is_some_and(|io| io.psn == psn) {
            return said;
        }
        queue.commands += 1;
        if self.pending >= MAX_PENDING && !queue.pending.contains_key(&cid) {
            queue.dropped += 1;
            return said;
        }
        let code = c.op_code();
        let op_slot = match queue.by_op.iter().find(|o| o.code == code) {
            Some(o) => o.slot,
            None => {
                let slot = self.slots;
                self.slots += 1;
                queue.by_op.push(OpStats {
                    code,
                    slot,
                    latency: Samples::default(),
                });
                slot
            }
        };
        let keyed = c.sgl_type() >> 4 == nvme::sgl_type::KEYED_DATA_BLOCK && c.sgl_len() > 0;
        self.serial = self.serial.wrapping_add(1);
        let io = Io {
            serial: self.serial,
            fabrics: c.fctype().is_some(),
            op_slot,
            lba: (c.fctype().is_none() && kind == QueueKind::Io && has_lba(c.opcode()))
                .then(|| c.slba()),
            bytes: c.sgl_len(),
            dir: c.direction(),
            key: keyed.then(|| c.sgl_key()),
            addr: c.sgl_addr(),
            frame,
            ts,
            psn,
            first_data: None,
            last_data: ts,
        };
        if let Some(old) = queue.pending.insert(cid, io) {
            queue.cid_reused += 1;
            if let Some(k) = old.key {
                self.keys.remove(&(queue.host, queue.controller, k));
            }
        } else {
            self.pending += 1;
        }
        queue.outstanding_max = queue.outstanding_max.max(queue.pending.len() as u64);
        if let Some(k) = io.key {
            self.keys
                .insert((queue.host, queue.controller, k), (q, cid));
        }
        said
    }

    /// A response capsule on queue `q`; the command's latency. A replayed
    /// response whose command was answered is not counted again.
    pub fn response(&mut self, q: u32, c: &Capsule, frame: u64, ts: u64, replay: bool) -> Said {
        let queue = &mut self.queues[q as usize];
        let cid = c.cqe_cid();
        let mut said = Said {
            side: Side::Responses,
            qid: queue.qid,
            latency_ns: None,
            fabrics: false,
            confirmed: queue.confirmed,
        };
        let Some(io) = queue.pending.remove(&cid) else {
            if !replay {
                queue.unmatched_responses += 1;
            }
            return said;
        };
        self.pending -= 1;
        if let Some(k) = io.key
            && self.keys.get(&(queue.host, queue.controller, k)) == Some(&(q, cid))
        {
            self.keys.remove(&(queue.host, queue.controller, k));
        }
        let status = c.cqe_status();
        let failed = status & 0x0ffe != 0;
        let latency = ts.saturating_sub(io.ts);
        said.latency_ns = Some(latency);
        said.fabrics = io.fabrics;
        queue.completed += 1;
        let logs = &mut self.logs;
        queue.latency.add(
            Kind::Completion,
            latency,
            &mut Log {
                flow: queue.slot,
                logs,
            },
        );
        if let Some(o) = queue.by_op.iter_mut().find(|o| o.slot == io.op_slot) {
            o.latency.add(
                Kind::Completion,
                latency,
                &mut Log {
                    flow: io.op_slot,
                    logs,
                },
            );
        }
        let (first_data, data) = match io.first_data {
            Some(fd) => {
                let (a, b) = (fd.saturating_sub(io.ts), io.last_data.saturating_sub(fd));
                let log = &mut Log {
                    flow: queue.slot,
                    logs,
                };
                queue.first_data.add(Kind::Rtt, a, log);
                queue.data.add(Kind::ReadLatency, b, log);
                (Some(a), Some(b))
            }
            None => (None, None),
        };
        if failed {
            queue.errors += 1;
            *self.errors.entry(status & 0x0ffe).or_default() += 1;
        } else {
            match io.dir {
                Dir::ToHost => queue.bytes_read += u64::from(io.bytes),
                Dir::ToController => queue.bytes_written += u64::from(io.bytes),
                Dir::None => {}
            }
        }
        let keep = would_keep(&self.slowest, latency, io.frame);
        if !keep && self.done.is_none() {
            return said;
        }
        let item = IoReport {
            connection: None,
            qid: queue.qid,
            cid,
            opcode: queue.op_name(io.op_slot),
            lba: io.lba,
            bytes: io.bytes,
            command_frame: io.frame,
            cqe_frame: Some(frame),
            latency_ns: Some(latency),
            first_data_ns: first_data,
            data_ns: data,
            status: Some(nvme::status_name(
                ((status >> 9) & 7) as u8,
                ((status >> 1) & 0xff) as u8,
            )),
            queue: q,
        };
        if let Some(done) = self.done.as_mut() {
            done.push(IoDone {
                io: item.clone(),
                host: queue.host,
                controller: queue.controller,
                sct: ((status >> 9) & 7) as u8,
                sc: ((status >> 1) & 0xff) as u8,
            });
        }
        if keep {
            keep_slowest(&mut self.slowest, item);
        }
        said
    }

    /// An RDMA WRITE (FIRST or ONLY, `payload` bytes) or READ request from
    /// `controller` to `host` on flow `flow`, with its RETH: the I/O whose
    /// data it carries or asks for, if any.
    #[allow(clippy::too_many_arguments)]
    pub fn transfer(
        &mut self,
        flow: u32,
        controller: Addr,
        host: Addr,
        op: Operation,
        psn: Psn,
        va: u64,
        r_key: u32,
        dma_len: u32,
        payload: u32,
        ts: u64,
    ) -> Option<DataOf> {
        let &(q, cid) = self.keys.get(&(host, controller, r_key))?;
        let queue = &mut self.queues[q as usize];
        let io = queue.pending.get_mut(&cid)?;
        let end = io.addr.saturating_add(u64::from(io.bytes));
        if va < io.addr || va.saturating_add(u64::from(dma_len)) > end {
            return None;
        }
        let code = queue
            .by_op
            .iter()
            .find(|o| o.slot == io.op_slot)
            .map_or(0, |o| o.code);
        let read = op == Operation::ReadRequest;
        // Inside the SGL's range, whose length is 32 bits.
        let start = (va - io.addr) as u32;
        io.first_data = Some(io.first_data.map_or(ts, |t| t.min(ts)));
        io.last_data = io.last_data.max(ts);
        // Its later packets: WRITE MIDDLE/LAST on this flow, READ
        // responses on the command flow.
        let on = if op == Operation::ReadRequest {
            queue.cmd_flow
        } else {
            flow
        };
        let t = Transfer {
            psn,
            queue: q,
            cid,
            serial: io.serial,
            code,
            start,
            unit: if read { 0 } else { payload },
        };
        let said = DataOf {
            qid: queue.qid,
            cid,
            code,
            offset: (!read).then_some(start),
        };
        let list = self.transfers.entry(on).or_default();
        if let Some(same) = list.iter_mut().find(|x| x.psn == psn) {
            *same = t;
        } else {
            if list.len() >= MAX_TRANSFERS {
                list.remove(0);
            }
            list.push(t);
        }
        Some(said)
    }

    /// Whether flow `flow` has transfers in flight (WRITE MIDDLE/LAST or
    /// READ responses may belong to an I/O).
    #[inline]
    pub fn has_transfers(&self, flow: u32) -> bool {
        !self.transfers.is_empty() && self.transfers.contains_key(&flow)
    }

    /// A WRITE MIDDLE/LAST or a READ response with PSN `psn` and
    /// `payload` bytes on `flow`: the I/O whose data it is, if any.
    pub fn continuation(&mut self, flow: u32, psn: Psn, payload: u32, ts: u64) -> Option<DataOf> {
        let list = self.transfers.get_mut(&flow)?;
        // The transfer that started last at or before `psn`.
        let t = list
            .iter_mut()
            .filter(|t| psn - t.psn >= 0)
            .min_by_key(|t| psn - t.psn)?;
        let after = (psn - t.psn) as u32;
        if after == 0 && t.unit == 0 {
            // A READ's first response: the size of every one but its last.
            t.unit = payload;
        }
        let offset = match (after, t.unit) {
            (0, _) => Some(t.start),
            (_, 0) => None,
            (n, unit) => u32::try_from(u64::from(t.start) + u64::from(n) * u64::from(unit)).ok(),
        };
        let t = *t;
        let queue = &mut self.queues[t.queue as usize];
        if let Some(io) = queue.pending.get_mut(&t.cid)
            && io.serial == t.serial
        {
            io.first_data = Some(io.first_data.map_or(ts, |f| f.min(ts)));
            io.last_data = io.last_data.max(ts);
        }
        Some(DataOf {
            qid: queue.qid,
            cid: t.cid,
            code: t.code,
            offset,
        })
    }

    /// The report: queues known to carry NVMe-oF, with `connection(flow)`
    /// the report's connection of a command flow and `text` an address's
    /// text. `None` when there are none.
    pub fn report(
        mut self,
        connection: impl Fn(u32) -> Option<usize>,
        mut text: impl FnMut(Addr) -> String,
    ) -> Option<NvmeReport> {
        if !self.queues.iter().any(|q| q.confirmed) {
            return None;
        }
        self.logs.sort();
        let logs = &self.logs;
        let mut unanswered = Vec::new();
        let mut queues = Vec::new();
        let mut index = vec![None; self.queues.len()];
        let mut commands = 0;
        let mut completed = 0;
        for (i, q) in self.queues.iter().enumerate() {
            if !q.confirmed {
                continue;
            }
            index[i] = Some(queues.len());
            commands += q.commands;
            completed += q.completed;
            let conn = connection(q.cmd_flow);
            for (&cid, io) in &q.pending {
                unanswered.push(IoReport {
                    connection: conn,
                    qid: q.qid,
                    cid,
                    opcode: q.op_name(io.op_slot),
                    lba: io.lba,
                    bytes: io.bytes,
                    command_frame: io.frame,
                    cqe_frame: None,
                    latency_ns: None,
                    first_data_ns: io.first_data.map(|f| f.saturating_sub(io.ts)),
                    data_ns: None,
                    status: None,
                    queue: i as u32,
                });
            }
            queues.push(QueueReport {
                connection: conn,
                qid: q.qid,
                host: text(q.host),
                controller: text(q.controller),
                ulp_by: q.by,
                commands: q.commands,
                completed: q.completed,
                errors: q.errors,
                outstanding_max: q.outstanding_max,
                unanswered: q.pending.len() as u64,
                cid_reused: q.cid_reused,
                unmatched_responses: q.unmatched_responses,
                commands_dropped: q.dropped,
                bytes_read: q.bytes_read,
                bytes_written: q.bytes_written,
                latency: q.latency.stats(Kind::Completion, q.slot, logs),
                latency_histogram: logs.histogram(Kind::Completion, q.slot),
                first_data: q.first_data.stats(Kind::Rtt, q.slot, logs),
                data: q.data.stats(Kind::ReadLatency, q.slot, logs),
                by_opcode: q
                    .by_op
                    .iter()
                    .filter_map(|o| {
                        Some((
                            op_key(o.code, q.kind()),
                            o.latency.stats(Kind::Completion, o.slot, logs)?,
                        ))
                    })
                    .collect(),
            });
        }
        unanswered.sort_by_key(|io| io.command_frame);
        let unanswered_total = unanswered.len() as u64;
        unanswered.truncate(LISTED);
        let place = |mut io: IoReport| {
            io.connection = connection(self.queues[io.queue as usize].cmd_flow);
            io
        };
        let slowest: Vec<IoReport> = std::mem::take(&mut self.slowest)
            .into_iter()
            .filter(|io| index[io.queue as usize].is_some())
            .map(place)
            .collect();
        let unanswered = unanswered.into_iter().map(place).collect();
        Some(NvmeReport {
            commands,
            completed,
            unanswered_total,
            queues,
            slowest,
            errors: self
                .errors
                .iter()
                .map(|(&s, &count)| ErrorCount {
                    status: nvme::status_name(((s >> 9) & 7) as u8, ((s >> 1) & 0xff) as u8),
                    sct: ((s >> 9) & 7) as u8,
                    sc: ((s >> 1) & 0xff) as u8,
                    count,
                })
                .collect(),
            unanswered,
            queues_dropped: self.queues_dropped,
            samples_kept_all: self.logs_complete(),
        })
    }

    fn logs_complete(&self) -> bool {
        self.queues.iter().all(|q| {
            q.latency.count() == q.latency.kept() && q.first_data.count() == q.first_data.kept()
        })
    }
}

/// Read, Write, Compare, Write Zeroes and Write Uncorrectable address
/// logical blocks.
fn has_lba(opcode: u8) -> bool {
    matches!(opcode, 0x01 | 0x02 | 0x04 | 0x05 | 0x08)
}

/// The order of the slowest: latency down, then command frame up.
fn rank(io: &IoReport) -> (std::cmp::Reverse<Option<u64>>, u64) {
    (std::cmp::Reverse(io.latency_ns), io.command_frame)
}

/// Whether an I/O of `latency` commanded in `frame` is among the slowest.
fn would_keep(list: &[IoReport], latency: u64, frame: u64) -> bool {
    list.len() < LISTED
        || list
            .last()
            .is_some_and(|l| (std::cmp::Reverse(Some(latency)), frame) < rank(l))
}

/// Keeps the [`LISTED`] slowest, slowest first (ties: the earlier command).
fn keep_slowest(list: &mut Vec<IoReport>, item: IoReport) {
    if list.len() >= LISTED && list.last().is_some_and(|l| rank(&item) >= rank(l)) {
        return;
    }
    let at = list.partition_point(|x| rank(x) < rank(&item));
    list.insert(at, item);
    list.truncate(LISTED);
}

/// The report's `nvme` object.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NvmeReport {
    /// Commands seen, and answered, on every queue.
    pub commands: u64,
    pub completed: u64,
    /// Commands never answered in the capture (the first 20 are listed).
    pub unanswered_total: u64,
    pub queues: Vec<QueueReport>,
    /// The 20 slowest I/Os, slowest first.
    pub slowest: Vec<IoReport>,
    /// Failed commands by status.
    pub errors: Vec<ErrorCount>,
    pub unanswered: Vec<IoReport>,
    /// Queues not followed (past 4096).
    pub queues_dropped: u64,
    /// Every latency was kept for the percentiles (else past
    /// `--max-timing-samples` they are of the ones kept).
    pub samples_kept_all: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct QueueReport {
    /// Index into `connections` (null when its two flows were not paired).
    pub connection: Option<usize>,
    /// The queue id (0: admin), when the CM or a Connect said.
    pub qid: Option<u16>,
    pub host: String,
    pub controller: String,
    pub ulp_by: UlpBy,
    pub commands: u64,
    pub completed: u64,
    pub errors: u64,
    pub outstanding_max: u64,
    pub unanswered: u64,
    pub cid_reused: u64,
    pub unmatched_responses: u64,
    pub commands_dropped: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Command to response.
    pub latency: Option<Stats>,
    /// With `--timeline` or `--html`: the latencies' histogram.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<super::timing::Histogram>,
    /// Command to the controller's first data packet (RDMA WRITE or READ
    /// request).
    pub first_data: Option<Stats>,
    /// First data packet to last.
    pub data: Option<Stats>,
    pub by_opcode: BTreeMap<String, Stats>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IoReport {
    pub connection: Option<usize>,
    pub qid: Option<u16>,
    pub cid: u16,
    pub opcode: String,
    pub lba: Option<u64>,
    pub bytes: u32,
    pub command_frame: u64,
    pub cqe_frame: Option<u64>,
    pub latency_ns: Option<u64>,
    pub first_data_ns: Option<u64>,
    pub data_ns: Option<u64>,
    pub status: Option<&'static str>,
    #[serde(skip)]
    pub(crate) queue: u32,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ErrorCount {
    pub status: &'static str,
    pub sct: u8,
    pub sc: u8,
    pub count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse() {
        let mut r = UlpRule::default();
        r.add("nvme@10.0.0.2:4421").unwrap();
        r.add("nvme@fd00::1").unwrap();
        let ip: IpAddr = "10.0.0.2".parse().unwrap();
        assert!(r.forces(Addr::Ip(ip), Some(4421)));
        assert!(!r.forces(Addr::Ip(ip), Some(4420)));
        assert!(r.forces(Addr::Ip(ip), None));
        assert!(r.forces(Addr::Ip("fd00::1".parse().unwrap()), Some(1)));
        assert!(!r.forces(Addr::Ip("10.0.0.3".parse().unwrap()), None));
        r.add("nvme").unwrap();
        assert!(r.forces(Addr::Ip("10.0.0.3".parse().unwrap()), None));
        assert!(r.add("iser").is_err());
        assert!(r.add("nvme@host").is_err());
        let mut n = UlpRule::default();
        n.add("none").unwrap();
        assert!(!n.heuristic());
        assert!(UlpRule::default().heuristic());
    }

    fn sqe(opcode: u8, cid: u16, key: u32, len: u32) -> Capsule {
        let mut s = [0u8; 64];
        s[0] = opcode;
        s[1] = 0x40;
        s[2..4].copy_from_slice(&cid.to_le_bytes());
        s[24..32].copy_from_slice(&0x1000u64.to_le_bytes());
        s[32..35].copy_from_slice(&len.to_le_bytes()[..3]);
        s[35..39].copy_from_slice(&key.to_le_bytes());
        s[39] = 0x40;
        Capsule::of(&s).unwrap()
    }

    fn cqe(cid: u16, status: u16) -> Capsule {
        let mut b = [0u8; 16];
        b[12..14].copy_from_slice(&cid.to_le_bytes());
        b[14..16].copy_from_slice(&status.to_le_bytes());
        Capsule::of(&b).unwrap()
    }

    fn report(t: Tracker) -> NvmeReport {
        t.report(|_| None, |a| format!("{a:?}")).unwrap()
    }

    #[test]
    fn reused_unanswered_unmatched_and_failed_commands_are_counted() {
        let (h, c) = (
            Addr::Ip("10.0.0.1".parse().unwrap()),
            Addr::Ip("10.0.0.2".parse().unwrap()),
        );
        let mut t = Tracker::new(UlpRule::Auto, 1000);
        let q = t.open(1, h, c, UlpBy::Cm, Some(1)).unwrap();
        t.bind(q, 2);
        // CID 5 twice while waiting, then a replay of the second capsule.
        t.command(q, &sqe(0x02, 5, 0xaa, 4096), 10, 1_000, Psn::new(100));
        t.command(q, &sqe(0x02, 5, 0xbb, 4096), 11, 2_000, Psn::new(101));
        t.command(q, &sqe(0x02, 5, 0xbb, 4096), 12, 3_000, Psn::new(101));
        t.command(q, &sqe(0x01, 6, 0xcc, 512), 13, 4_000, Psn::new(102));
        t.command(q, &sqe(0x00, 7, 0, 0), 14, 5_000, Psn::new(103));
        // The controller writes CID 5's data (its second key), outside
        // the SGL's range, then inside it.
        let w = Operation::WriteFirst;
        let outside = t.transfer(2, c, h, w, Psn::new(7), 0x9000, 0xbb, 4096, 2048, 6_000);
        assert_eq!(outside, None);
        let first = t.transfer(2, c, h, w, Psn::new(7), 0x1000, 0xbb, 4096, 2048, 7_000);
        let data = |offset| {
            Some(DataOf {
                qid: Some(1),
                cid: 5,
                code: 0x02,
                offset,
            })
        };
        assert_eq!(first, data(Some(0)));
        // Its next packet, 2 KiB on; a packet of no transfer.
        assert_eq!(
            t.continuation(2, Psn::new(8), 2048, 9_000),
            data(Some(2048))
        );
        assert_eq!(t.continuation(3, Psn::new(8), 2048, 9_000), None);
        let ok = t.response(q, &cqe(5, 0), 20, 10_000, false);
        assert_eq!(ok.latency_ns, Some(8_000));
        // A failed write, a response to nothing, a replayed response.
        t.response(q, &cqe(6, 2 << 9 | 0x80 << 1), 21, 11_000, false);
        t.response(q, &cqe(9, 0), 22, 12_000, false);
        t.response(q, &cqe(6, 0), 23, 13_000, true);
        let r = report(t);
        let qr = &r.queues[0];
        assert_eq!(
            (qr.commands, qr.completed, qr.errors, qr.cid_reused),
            (4, 2, 1, 1)
        );
        assert_eq!((qr.unanswered, qr.unmatched_responses), (1, 1));
        assert_eq!(qr.outstanding_max, 3);
        assert_eq!((qr.bytes_read, qr.bytes_written), (4096, 0));
        let fd = qr.first_data.unwrap();
        assert_eq!((fd.count, fd.max_ns), (1, 5_000));
        assert_eq!(qr.data.unwrap().max_ns, 2_000);
        assert_eq!(r.errors[0].status, "Write Fault");
        assert_eq!(r.unanswered[0].cid, 7);
        assert_eq!(r.unanswered[0].opcode, "flush");
        assert_eq!(
            (r.slowest[0].cid, r.slowest[0].latency_ns),
            (5, Some(8_000))
        );
        assert_eq!(r.slowest[1].cid, 6);
        assert_eq!(r.slowest[1].status, Some("Write Fault"));
        assert_eq!(qr.by_opcode["read"].count, 1);
    }

    #[test]
    fn a_trial_queue_is_confirmed_by_a_response_with_one_of_its_cids() {
        let (h, c) = (
            Addr::Ip("10.0.0.1".parse().unwrap()),
            Addr::Ip("10.0.0.2".parse().unwrap()),
        );
        let mut t = Tracker::new(UlpRule::Auto, 1000);
        let q = t.open(1, h, c, UlpBy::Heuristic, None).unwrap();
        let said = t.command(q, &sqe(0x02, 40, 1, 512), 1, 0, Psn::new(0));
        assert!(!said.confirmed);
        assert!(t.clone_report_is_none());
        assert_eq!(t.waiting_for(h, c, 41), None);
        assert_eq!(t.waiting_for(h, c, 40), Some(q));
        t.bind(q, 2);
        let r = t.response(q, &cqe(40, 0), 2, 500, false);
        assert!(r.confirmed);
        assert_eq!(t.ulp_of(2), Some((UlpBy::Heuristic, None)));
        assert_eq!(report(t).queues[0].completed, 1);
    }

    impl Tracker {
        fn clone_report_is_none(&self) -> bool {
            !self.queues.iter().any(|q| q.confirmed)
        }
    }

    #[test]
    fn slowest_are_kept_in_order() {
        let mut l = Vec::new();
        for (i, lat) in [5u64, 9, 1, 9, 7].into_iter().cycle().take(60).enumerate() {
            keep_slowest(
                &mut l,
                IoReport {
                    connection: None,
                    qid: None,
                    cid: 0,
                    opcode: String::new(),
                    lba: None,
                    bytes: 0,
                    command_frame: i as u64,
                    cqe_frame: None,
                    latency_ns: Some(lat),
                    first_data_ns: None,
                    data_ns: None,
                    status: None,
                    queue: 0,
                },
            );
        }
        assert_eq!(l.len(), LISTED);
        assert!(l[..LISTED].iter().all(|x| x.latency_ns == Some(9)));
        assert_eq!(l[0].command_frame, 1);
        assert_eq!(l[1].command_frame, 3);
    }

    #[test]
    fn a_capsule_keeps_every_byte_it_reads() {
        // Each field the accessors read, as (offset, length): kept, in one
        // part, and read back from a capsule of distinct bytes.
        let fields = [
            (0, 1),
            (1, 1),
            (2, 2),
            (4, 1),
            (12, 2),
            (14, 2),
            (24, 8),
            (32, 4),
            (35, 4),
            (39, 1),
            (40, 8),
            (42, 2),
        ];
        for (at, n) in fields {
            let i = kept_at(at).unwrap();
            assert_eq!(kept_at(at + n - 1), Some(i + n - 1), "{at}+{n}");
        }
        assert_eq!(kept_at(5), None);
        assert_eq!(kept_at(16), None);
        assert_eq!(kept_at(CAPSULE_HEAD), None);
        let bytes: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37)).collect();
        let c = Capsule::of(&bytes).unwrap();
        let le = |at: usize, n: usize| {
            bytes[at..at + n]
                .iter()
                .rev()
                .fold(0u64, |v, &b| v << 8 | u64::from(b))
        };
        for (at, n) in fields {
            assert_eq!(c.le(at, n), le(at, n), "{at}+{n}");
        }
        assert_eq!(
            (c.opcode(), c.flags(), c.sgl_type()),
            (bytes[0], bytes[1], bytes[39])
        );
        // A capsule of 20 bytes: the rest reads as zero.
        let c = Capsule::of(&bytes[..20]).unwrap();
        assert_eq!(
            (c.cqe_cid(), c.cqe_status()),
            (le(12, 2) as u16, le(14, 2) as u16)
        );
        assert_eq!((c.sgl_addr(), c.slba()), (0, 0));
    }

    #[test]
    fn a_capsule_reads_as_a_command_only_by_its_shape() {
        let mut s = [0u8; 64];
        s[0] = 0x02; // Read
        s[1] = 0x40; // SGL
        s[2] = 17;
        s[39] = 0x40; // keyed
        s[32] = 0x00;
        s[33] = 0x10; // 4096
        let c = Capsule::of(&s).unwrap();
        assert!(c.looks_like_command(64));
        assert!(!c.looks_like_command(63));
        assert_eq!(c.cid(), 17);
        assert_eq!(c.sgl_len(), 4096);
        let pattern: Vec<u8> = (0..64u8).collect();
        assert!(!Capsule::of(&pattern).unwrap().looks_like_command(64));
        assert!(Capsule::of(&s[..15]).is_none());
        assert_eq!(c.op_key(QueueKind::Io), "read");
        assert_eq!(c.direction(), Dir::ToHost);
    }
}
