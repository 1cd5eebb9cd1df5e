//! `gen --scenario nvme`: a host and an NVMe-oF controller. The RDMA CM
//! sets up an admin queue and `--qps` I/O queues (their REQs carry the
//! NVMe-oF private data); each queue is connected (Fabrics Connect, its
//! 1024 data bytes in the capsule); the admin queue reads a property and
//! an Identify page, and keeps alive; the I/O queues carry `--messages`
//! commands each: reads (the controller RDMA WRITEs the data), writes
//! with a keyed SGL (the controller RDMA READs it), writes with their
//! data in the capsule, and flushes, a few at a time. One I/O is slow,
//! one read fails (Unrecovered Read Error, DNR) and one read's first data
//! packet is lost after the capture point, NAKed and replayed.
//!
//! The truth is the report's `nvme` object, computed from what was sent
//! with the README's definitions.

use crate::wire::Psn;
use std::collections::BTreeMap;

use super::{ACK_DELAY_NS, GAP_NS, Generator, Key, PfcTruth, T0, Truth, net_src_dst, ser_ns};
use crate::analysis::nvme::{ErrorCount, IoReport, LISTED, NvmeReport, QueueReport};
use crate::analysis::report::UlpBy;
use crate::synth::conn::Conn;
use crate::synth::frame::{ExtHeaders, NetSpec, Payload, RoceFrame};
use crate::wire::nvme::{CmReqData, CqeRepr, SglRepr, SqeRepr, service_id, status_name};
use crate::wire::{AckKind, AethRepr, RethRepr};

const HOST_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x0a, 0x01];
const CTRL_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x0b, 0x01];
/// Unrecovered Read Error (media errors, 0x81) with Do Not Retry.
const READ_ERROR: u16 = 0x8000 | 2 << 9 | 0x81 << 1;
/// What the slow I/O waits in the controller.
const SLOW_NS: u64 = 2_000_000;

/// One command as sent.
struct Io {
    cid: u16,
    op: &'static str,
    lba: Option<u64>,
    bytes: u32,
    /// 1: host to controller, 2: controller to host (counted in the
    /// queue's bytes unless a Fabrics command).
    dir: u8,
    fabrics: bool,
    cmd_seq: u64,
    cmd_t: u64,
    cqe_seq: u64,
    cqe_t: u64,
    /// Every data packet's time (replays too): the controller's WRITEs,
    /// or its READ request and the host's READ responses.
    data: Vec<u64>,
    status: u16,
}

/// What the controller does with a command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Work {
    /// RDMA WRITE `bytes` to the host (a read, Identify).
    WriteToHost,
    /// RDMA READ `bytes` from the host (a write with a keyed SGL).
    ReadFromHost,
    /// Nothing to move (data in the capsule, none at all).
    Nothing,
}

struct Command {
    sqe: SqeRepr,
    /// In-capsule data bytes after the SQE.
    data: Vec<u8>,
    op: &'static str,
    lba: Option<u64>,
    work: Work,
    dir: u8,
    fabrics: bool,
    status: u16,
    slow: bool,
    lose: bool,
}

struct Queue {
    conn: Conn,
    qid: u16,
    host_psn: Psn,
    ctrl_psn: Psn,
    host_msn: u32,
    ctrl_msn: u32,
    host_t: u64,
    ctrl_t: u64,
    next_cid: u16,
    sqhd: u16,
    ios: Vec<Io>,
    outstanding_max: u64,
    keys: u32,
}

fn host_key(c: &Conn) -> Key {
    let (a, b) = net_src_dst(&c.net);
    (a, b, c.qp_b)
}

fn ctrl_key(c: &Conn) -> Key {
    let (a, b) = net_src_dst(&c.net);
    (b, a, c.qp_a)
}

impl Generator<'_> {
    /// Schedules a frame of `opcode` on queue `q` from the host (else the
    /// controller); its place in the schedule when `watched`.
    #[allow(clippy::too_many_arguments)]
    fn nvme_frame(
        &mut self,
        q: &Queue,
        from_host: bool,
        opcode: u8,
        psn: Psn,
        payload: Payload<'_>,
        ext: ExtHeaders,
        t: u64,
        watched: bool,
        replay: bool,
    ) -> u64 {
        let f = RoceFrame {
            payload,
            ..q.conn.frame(from_host, opcode, psn, 0, ext)
        };
        if watched {
            self.roce_watched(t, &f)
        } else {
            self.roce_again(t, &f, replay)
        }
    }

    fn nvme_ack(&mut self, q: &Queue, from_host: bool, psn: Psn, msn: u32, nak: bool, t: u64) {
        let (kind, value) = if nak {
            (AckKind::Nak, 0)
        } else {
            (AckKind::Ack, 31)
        };
        let ext = ExtHeaders {
            aeth: Some(AethRepr {
                syndrome: AethRepr::syndrome_for(kind, value),
                msn,
            }),
            ..ExtHeaders::default()
        };
        self.nvme_frame(
            q,
            from_host,
            0x11,
            psn,
            Payload::Pattern(0),
            ext,
            t,
            false,
            false,
        );
    }

    /// A SEND of `bytes` from the host or the controller, in PMTU packets
    /// from `t`; (schedule place of its first packet, time of its first
    /// and last packets). The receiver ACKs it.
    fn nvme_send(
        &mut self,
        q: &mut Queue,
        from_host: bool,
        bytes: &[u8],
        t: u64,
    ) -> (u64, u64, u64) {
        let pmtu = self.opts.pmtu.max(256) as usize;
        let n = bytes.len().div_ceil(pmtu).max(1);
        let bps = self.opts.link_speed_bps;
        let mut at = t;
        let mut first = (0, t);
        let mut last = t;
        for k in 0..n {
            let op = match (n, k) {
                (1, _) => 0x04,
                (_, 0) => 0x00,
                (_, k) if k == n - 1 => 0x02,
                _ => 0x01,
            };
            let chunk = &bytes[k * pmtu..((k + 1) * pmtu).min(bytes.len())];
            let psn = if from_host { q.host_psn } else { q.ctrl_psn };
            let seq = self.nvme_frame(
                q,
                from_host,
                op,
                psn,
                Payload::Bytes(chunk),
                ExtHeaders::default(),
                at,
                k == 0,
                false,
            );
            if k == 0 {
                first = (seq, at);
            }
            last = at;
            if from_host {
                q.host_psn = q.host_psn + 1;
            } else {
                q.ctrl_psn = q.ctrl_psn + 1;
            }
            at += ser_ns(chunk.len() + 70, bps) + GAP_NS;
        }
        if from_host {
            q.host_t = at;
            q.ctrl_msn += 1;
            let ack_t = q.ctrl_t.max(last + ACK_DELAY_NS);
            let (psn, msn) = (q.host_psn - 1, q.ctrl_msn);
            self.nvme_ack(q, false, psn, msn, false, ack_t);
            q.ctrl_t = ack_t + GAP_NS;
        } else {
            q.ctrl_t = at;
            q.host_msn += 1;
            let ack_t = q.host_t.max(last + ACK_DELAY_NS);
            let (psn, msn) = (q.ctrl_psn - 1, q.host_msn);
            self.nvme_ack(q, true, psn, msn, false, ack_t);
            q.host_t = ack_t + GAP_NS;
        }
        (first.0, first.1, last)
    }

    /// The host sends command `c` on `q` at or after `t`.
    fn nvme_command(&mut self, q: &mut Queue, mut c: Command, t: u64) -> (Command, usize) {
        c.sqe.cid = q.next_cid;
        q.next_cid = q.next_cid.wrapping_add(1);
        let mut bytes = vec![0u8; 64];
        let _ = c.sqe.emit(&mut bytes);
        bytes.extend_from_slice(&c.data);
        let at = t.max(q.host_t);
        let (seq, first, _) = self.nvme_send(q, true, &bytes, at);
        q.ios.push(Io {
            cid: c.sqe.cid,
            op: c.op,
            lba: c.lba,
            bytes: c.sqe.sgl.length,
            dir: c.dir,
            fabrics: c.fabrics,
            cmd_seq: seq,
            cmd_t: first,
            cqe_seq: 0,
            cqe_t: 0,
            data: Vec::new(),
            status: c.status,
        });
        (c, q.ios.len() - 1)
    }

    /// The controller carries out command `c` (the `i`-th I/O of `q`) and
    /// answers it.
    fn nvme_serve(&mut self, q: &mut Queue, c: &Command, i: usize) {
        let bps = self.opts.link_speed_bps;
        let pmtu = self.opts.pmtu.max(256);
        let think = 3_000 + self.rng.below(20_000) + if c.slow { SLOW_NS } else { 0 };
        let mut t = q.ctrl_t.max(q.ios[i].cmd_t + think);
        let len = c.sqe.sgl.length;
        let n = len.div_ceil(pmtu).max(1);
        if c.status == 0 && c.work == Work::WriteToHost {
            let first_psn = q.ctrl_psn;
            q.ctrl_psn = first_psn + n;
            let reth = RethRepr {
                va: c.sqe.sgl.address,
                r_key: c.sqe.sgl.key,
                dma_len: len,
            };
            let packet = |k: u32| {
                let op = match (n, k) {
                    (1, _) => 0x0a,
                    (_, 0) => 0x06,
                    (_, k) if k == n - 1 => 0x08,
                    _ => 0x07,
                };
                let size = if k == n - 1 {
                    len - pmtu * (n - 1)
                } else {
                    pmtu
                };
                let ext = ExtHeaders {
                    reth: (k == 0).then_some(reth),
                    ..ExtHeaders::default()
                };
                (op, size, ext)
            };
            let mut times = Vec::new();
            for k in 0..n {
                let (op, size, ext) = packet(k);
                self.nvme_frame(
                    q,
                    false,
                    op,
                    first_psn + k,
                    Payload::Pattern(size as usize),
                    ext,
                    t,
                    false,
                    false,
                );
                times.push(t);
                q.ios[i].data.push(t);
                t += ser_ns(size as usize + 70, bps) + GAP_NS;
            }
            if c.lose && n >= 2 {
                // Packet 0 was lost past the capture point: the host sees
                // packet 1, NAKs 0, and the controller goes back to it.
                let nak_t = q.host_t.max(times[1] + ACK_DELAY_NS);
                let msn = q.host_msn;
                self.nvme_ack(q, true, first_psn, msn, true, nak_t);
                q.host_t = nak_t + GAP_NS;
                t = t.max(nak_t + ACK_DELAY_NS);
                for k in 0..n {
                    let (op, size, ext) = packet(k);
                    self.nvme_frame(
                        q,
                        false,
                        op,
                        first_psn + k,
                        Payload::Pattern(size as usize),
                        ext,
                        t,
                        false,
                        true,
                    );
                    q.ios[i].data.push(t);
                    t += ser_ns(size as usize + 70, bps) + GAP_NS;
                }
                let ck = ctrl_key(&q.conn);
                self.flow(ck).retransmits += u64::from(n);
                let hk = host_key(&q.conn);
                self.flow(hk).naks.psn_seq_err += 1;
            }
            q.host_msn += 1;
            let last = *q.ios[i].data.last().unwrap_or(&t);
            let ack_t = q.host_t.max(last + ACK_DELAY_NS);
            let msn = q.host_msn;
            self.nvme_ack(q, true, first_psn + (n - 1), msn, false, ack_t);
            q.host_t = ack_t + GAP_NS;
            t += GAP_NS;
        } else if c.status == 0 && c.work == Work::ReadFromHost {
            let psn = q.ctrl_psn;
            q.ctrl_psn = psn + n;
            let ext = ExtHeaders {
                reth: Some(RethRepr {
                    va: c.sqe.sgl.address,
                    r_key: c.sqe.sgl.key,
                    dma_len: len,
                }),
                ..ExtHeaders::default()
            };
            self.nvme_frame(
                q,
                false,
                0x0c,
                psn,
                Payload::Pattern(0),
                ext,
                t,
                false,
                false,
            );
            q.ios[i].data.push(t);
            q.ctrl_t = t + ser_ns(74, bps) + GAP_NS;
            q.host_msn += 1;
            let mut rt = q.host_t.max(t + self.opts.read_delay_ns);
            for k in 0..n {
                let op = match (n, k) {
                    (1, _) => 0x10,
                    (_, 0) => 0x0d,
                    (_, k) if k == n - 1 => 0x0f,
                    _ => 0x0e,
                };
                let size = if k == n - 1 {
                    len - pmtu * (n - 1)
                } else {
                    pmtu
                };
                let ext = ExtHeaders {
                    aeth: matches!(op, 0x0d | 0x0f | 0x10).then(|| AethRepr {
                        syndrome: AethRepr::syndrome_for(AckKind::Ack, 31),
                        msn: q.host_msn,
                    }),
                    ..ExtHeaders::default()
                };
                self.nvme_frame(
                    q,
                    true,
                    op,
                    psn + k,
                    Payload::Pattern(size as usize),
                    ext,
                    rt,
                    false,
                    false,
                );
                q.ios[i].data.push(rt);
                rt += ser_ns(size as usize + 70, bps) + GAP_NS;
            }
            q.host_t = rt;
            t = q.ctrl_t.max(rt + 3_000);
        }
        // The response capsule.
        q.sqhd = q.sqhd.wrapping_add(1);
        let mut cqe = vec![0u8; 16];
        let _ = CqeRepr {
            result: if c.fabrics { 1 } else { 0 },
            sqhd: q.sqhd,
            sqid: q.qid,
            cid: c.sqe.cid,
            status: c.status,
        }
        .emit(&mut cqe);
        let (seq, at, _) = self.nvme_send(q, false, &cqe, t.max(q.ctrl_t));
        q.ios[i].cqe_seq = seq;
        q.ios[i].cqe_t = at;
    }

    /// A command of the I/O command set, or the admin queue's.
    fn io_command(&mut self, q: &mut Queue, kind: u64, size: u32) -> Command {
        q.keys += 1;
        let keyed = SglRepr {
            address: 0x7f00_0000_0000 + (u64::from(q.qid) << 32) + u64::from(q.keys) * 0x10_0000,
            length: size,
            key: 0x1000_0000 | u32::from(q.qid) << 16 | (q.keys & 0xffff),
            sgl_type: 4,
            subtype: 0,
        };
        let lba = self.rng.below(1 << 20) * 8;
        let nlb = size.div_ceil(512).max(1) - 1;
        let mut sqe = SqeRepr {
            flags: 0x40,
            nsid: 1,
            sgl: keyed,
            cdw10_15: [lba as u32, (lba >> 32) as u32, nlb, 0, 0, 0],
            ..SqeRepr::default()
        };
        let mut c = Command {
            sqe,
            data: Vec::new(),
            op: "read",
            lba: Some(lba),
            work: Work::WriteToHost,
            dir: 2,
            fabrics: false,
            status: 0,
            slow: false,
            lose: false,
        };
        match kind {
            0 => c.sqe.opcode = 0x02,
            1 => {
                c.sqe.opcode = 0x01;
                c.op = "write";
                c.work = Work::ReadFromHost;
                c.dir = 1;
            }
            2 => {
                // Data in the capsule: 512 B to 4 KiB.
                let n = 512 * (1 + self.rng.below(8) as u32);
                sqe = c.sqe;
                sqe.opcode = 0x01;
                sqe.sgl = SglRepr {
                    address: 0,
                    length: n,
                    key: 0,
                    sgl_type: 0,
                    subtype: 1,
                };
                sqe.cdw10_15[2] = n / 512 - 1;
                c.sqe = sqe;
                c.data = (0..n).map(|i| (i % 251) as u8).collect();
                c.op = "write";
                c.work = Work::Nothing;
                c.dir = 1;
            }
            _ => {
                c.sqe.opcode = 0x00;
                c.sqe.sgl = SglRepr {
                    sgl_type: 4,
                    ..SglRepr::default()
                };
                c.sqe.cdw10_15 = [0; 6];
                c.op = "flush";
                c.lba = None;
                c.work = Work::Nothing;
                c.dir = 0;
            }
        }
        c
    }

    /// A Fabrics command (Connect, Property Get) or an admin command.
    fn admin_command(&mut self, q: &mut Queue, which: &str) -> Command {
        let mut c = Command {
            sqe: SqeRepr {
                flags: 0x40,
                sgl: SglRepr {
                    sgl_type: 4,
                    ..SglRepr::default()
                },
                ..SqeRepr::default()
            },
            data: Vec::new(),
            op: "",
            lba: None,
            work: Work::Nothing,
            dir: 0,
            fabrics: true,
            status: 0,
            slow: false,
            lose: false,
        };
        match which {
            "connect" => {
                c.sqe.opcode = 0x7f;
                c.sqe.nsid = 0x01;
                c.sqe.sgl = SglRepr {
                    address: 0,
                    length: 1024,
                    key: 0,
                    sgl_type: 0,
                    subtype: 1,
                };
                let kato = if q.qid == 0 { 120_000 } else { 0 };
                c.sqe.cdw10_15 = [u32::from(q.qid) << 16, 31, kato, 0, 0, 0];
                let mut d = vec![0u8; 1024];
                d[..16].copy_from_slice(&[0x5a; 16]);
                let cntlid: u16 = if q.qid == 0 { 0xffff } else { 1 };
                d[16..18].copy_from_slice(&cntlid.to_le_bytes());
                let sub = b"nqn.2014-08.org.nvmexpress:uuid:roce-dissect-subsystem";
                d[256..256 + sub.len()].copy_from_slice(sub);
                let host = b"nqn.2014-08.org.nvmexpress:uuid:roce-dissect-host";
                d[512..512 + host.len()].copy_from_slice(host);
                c.data = d;
                c.op = "connect";
                c.dir = 1;
            }
            "property-get" => {
                c.sqe.opcode = 0x7f;
                c.sqe.nsid = 0x04;
                c.sqe.cdw10_15 = [1, 0, 0, 0, 0, 0];
                c.op = "property-get";
            }
            "identify" => {
                q.keys += 1;
                c.sqe.opcode = 0x06;
                c.sqe.sgl = SglRepr {
                    address: 0x7e00_0000_0000 + u64::from(q.keys) * 0x1000,
                    length: 4096,
                    key: 0x0a00_0000 | q.keys,
                    sgl_type: 4,
                    subtype: 0,
                };
                c.sqe.cdw10_15 = [1, 0, 0, 0, 0, 0];
                c.op = "identify";
                c.work = Work::WriteToHost;
                c.dir = 2;
                c.fabrics = false;
            }
            _ => {
                c.sqe.opcode = 0x18;
                c.op = "keep-alive";
                c.fabrics = false;
            }
        }
        c
    }

    /// Sends `cmds` on `q` back to back from `t`, then serves them in
    /// order; when the queue is free again.
    fn nvme_batch(&mut self, q: &mut Queue, cmds: Vec<Command>, t: u64) -> u64 {
        let mut sent = Vec::new();
        let mut at = t;
        for c in cmds {
            let (c, i) = self.nvme_command(q, c, at);
            at = q.host_t;
            sent.push((c, i));
        }
        q.outstanding_max = q.outstanding_max.max(sent.len() as u64);
        for (c, i) in &sent {
            self.nvme_serve(q, c, *i);
        }
        q.host_t.max(q.ctrl_t)
    }

    pub(super) fn run_nvme(mut self) -> std::io::Result<Truth> {
        let o = self.opts.clone();
        let io_queues = o.qps.clamp(1, 64) as u16;
        let mut queues: Vec<Queue> = (0..=io_queues)
            .map(|qid| Queue {
                conn: Conn {
                    mac_a: HOST_MAC,
                    mac_b: CTRL_MAC,
                    net: NetSpec::V2Ipv4 {
                        src: std::net::Ipv4Addr::new(192, 168, 10, 1),
                        dst: std::net::Ipv4Addr::new(192, 168, 10, 2),
                        dscp: 26,
                        ecn: 2,
                        ttl: 64,
                        sport: 0xd000 | qid,
                    },
                    qp_a: 0x200 + u32::from(qid) * 2,
                    qp_b: 0x600 + u32::from(qid) * 2 + 1,
                    vlan: None,
                },
                qid,
                host_psn: Psn::new(0x1000 * u32::from(qid) + 100),
                ctrl_psn: Psn::new(0x2000 * u32::from(qid) + 7),
                host_msn: 0,
                ctrl_msn: 0,
                host_t: 0,
                ctrl_t: 0,
                next_cid: 0,
                sqhd: 0,
                ios: Vec::new(),
                outstanding_max: 0,
                keys: 0,
            })
            .collect();

        // The CM sets up every queue first, the admin queue then the I/O
        // queues.
        let mut t = self.now.max(T0);
        for q in &queues {
            let data = CmReqData {
                recfmt: 0,
                qid: q.qid,
                hrqsize: 32,
                hsqsize: 31,
                cntlid: if q.qid == 0 { 0xffff } else { 1 },
            };
            let c = q.conn;
            t = self.cm_setup_as(&c, t, service_id(4420), Some(data));
        }
        self.drain(t)?;
        // Connect, one queue after the other; the admin queue's property
        // and Identify.
        for q in &mut queues {
            q.host_t = t;
            q.ctrl_t = t;
            let connect = self.admin_command(q, "connect");
            t = self.nvme_batch(q, vec![connect], t) + 1_000;
            if q.qid == 0 {
                let a = self.admin_command(q, "property-get");
                let b = self.admin_command(q, "identify");
                t = self.nvme_batch(q, vec![a, b], t) + 1_000;
            }
            self.drain(t)?;
        }

        // I/O: rounds in which every I/O queue sends a few commands.
        let total = u64::from(o.messages.max(1)) * u64::from(io_queues);
        let size = o.size.clamp(512, 1 << 20).div_ceil(512) * 512;
        let slow_at = self.rng.below(total);
        let error_at = self.rng.below(total);
        let lose_at = self.rng.below(total);
        let mut issued = 0u64;
        let mut left: Vec<u64> = vec![u64::from(o.messages.max(1)); queues.len()];
        left[0] = 0;
        while left.iter().any(|&n| n > 0) {
            if let Some(d) = o.duration_ns
                && t - T0 > d
            {
                break;
            }
            let round_t = t;
            let mut end = t;
            for i in 1..queues.len() {
                if left[i] == 0 {
                    continue;
                }
                let depth = (1 + self.rng.below(4)).min(left[i]);
                left[i] -= depth;
                let q = &mut queues[i];
                let mut cmds = Vec::new();
                for _ in 0..depth {
                    let mut kind = match self.rng.below(10) {
                        0..=3 => 0,
                        4..=6 => 1,
                        7..=8 => 2,
                        _ => 3,
                    };
                    if issued == error_at || issued == lose_at {
                        kind = 0;
                    }
                    let mut c = self.io_command(q, kind, size);
                    c.slow = issued == slow_at;
                    if issued == error_at {
                        c.status = READ_ERROR;
                    } else if issued == lose_at {
                        c.lose = true;
                    }
                    issued += 1;
                    cmds.push(c);
                }
                q.host_t = q.host_t.max(round_t);
                q.ctrl_t = q.ctrl_t.max(round_t);
                end = end.max(self.nvme_batch(q, cmds, round_t));
            }
            t = end + 1_000;
            self.drain(round_t)?;
        }
        // The admin queue keeps alive.
        {
            let q = &mut queues[0];
            q.host_t = q.host_t.max(t);
            q.ctrl_t = q.ctrl_t.max(t);
            let k = self.admin_command(q, "keep-alive");
            self.nvme_batch(q, vec![k], t);
        }
        self.drain(u64::MAX)?;
        self.now = t;

        let nvme = self.nvme_truth(&queues);
        let flows = self.order.iter().map(|k| self.truth[k].clone()).collect();
        Ok(Truth {
            scenario: o.scenario,
            seed: o.seed,
            frames: self.frames,
            flows,
            pfc: PfcTruth::default(),
            vantage: None,
            nvme: Some(nvme),
            reactions: None,
            cc: None,
        })
    }

    /// The report's `nvme`, from what was sent: times as the file shows
    /// them, frames by their numbers.
    fn nvme_truth(&self, queues: &[Queue]) -> NvmeReport {
        let frame = |seq: u64| self.watch.get(&seq).copied().unwrap_or(0);
        let shown = |t: u64| self.shown(t);
        let stats = |mut v: Vec<u64>| super::super::timing::stats(&mut v);
        let mut all: Vec<IoReport> = Vec::new();
        let mut errors: BTreeMap<u16, u64> = BTreeMap::new();
        let mut out = Vec::new();
        for q in queues {
            let mut lat = Vec::new();
            let mut first = Vec::new();
            let mut data = Vec::new();
            let mut by_op: BTreeMap<String, Vec<u64>> = BTreeMap::new();
            let (mut read, mut written, mut errs) = (0u64, 0u64, 0u64);
            for io in &q.ios {
                let l = shown(io.cqe_t) - shown(io.cmd_t);
                lat.push(l);
                by_op.entry(io.op.to_string()).or_default().push(l);
                let (fd, dd) = match (io.data.iter().min(), io.data.iter().max()) {
                    (Some(&a), Some(&b)) => {
                        let (a, b) = (shown(a), shown(b));
                        first.push(a - shown(io.cmd_t));
                        data.push(b - a);
                        (Some(a - shown(io.cmd_t)), Some(b - a))
                    }
                    _ => (None, None),
                };
                if io.status & 0x0ffe != 0 {
                    errs += 1;
                    *errors.entry(io.status & 0x0ffe).or_default() += 1;
                } else if !io.fabrics {
                    match io.dir {
                        1 => written += u64::from(io.bytes),
                        2 => read += u64::from(io.bytes),
                        _ => {}
                    }
                }
                let sct = ((io.status >> 9) & 7) as u8;
                let sc = ((io.status >> 1) & 0xff) as u8;
                all.push(IoReport {
                    connection: None,
                    qid: Some(q.qid),
                    cid: io.cid,
                    opcode: io.op.into(),
                    lba: io.lba,
                    bytes: io.bytes,
                    command_frame: frame(io.cmd_seq),
                    cqe_frame: Some(frame(io.cqe_seq)),
                    latency_ns: Some(l),
                    first_data_ns: fd,
                    data_ns: dd,
                    status: Some(status_name(sct, sc)),
                    queue: 0,
                });
            }
            let (host, ctrl, _) = host_key(&q.conn);
            out.push(QueueReport {
                connection: None,
                qid: Some(q.qid),
                host: host.to_string(),
                controller: ctrl.to_string(),
                ulp_by: UlpBy::Cm,
                commands: q.ios.len() as u64,
                completed: q.ios.len() as u64,
                errors: errs,
                outstanding_max: q.outstanding_max,
                unanswered: 0,
                cid_reused: 0,
                unmatched_responses: 0,
                commands_dropped: 0,
                bytes_read: read,
                bytes_written: written,
                latency: stats(lat),
                latency_histogram: None,
                first_data: stats(first),
                data: stats(data),
                by_opcode: by_op
                    .into_iter()
                    .filter_map(|(k, v)| Some((k, stats(v)?)))
                    .collect(),
            });
        }
        all.sort_by_key(|io| (std::cmp::Reverse(io.latency_ns), io.command_frame));
        all.truncate(LISTED);
        let commands = out.iter().map(|q| q.commands).sum();
        NvmeReport {
            commands,
            completed: commands,
            unanswered_total: 0,
            queues: out,
            slowest: all,
            errors: errors
                .into_iter()
                .map(|(s, count)| {
                    let (sct, sc) = (((s >> 9) & 7) as u8, ((s >> 1) & 0xff) as u8);
                    ErrorCount {
                        status: status_name(sct, sc),
                        sct,
                        sc,
                        count,
                    }
                })
                .collect(),
            unanswered: Vec::new(),
            queues_dropped: 0,
            samples_kept_all: true,
        }
    }
}
