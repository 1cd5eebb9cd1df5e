//! NVMe-oF capsules and I/O data over RDMA.

use super::*;

/// The NVMe-oF capsule a frame carries, as the analysis read it (its
/// `role`): `NVM Express` with the command's or the response's fields,
/// titled as Wireshark titles them.
pub fn nvme_tree(p: &Packet<'_>, role: crate::analysis::marks::NvmeRole) -> Vec<TreeNode> {
    let mut t = Tree::nodes();
    nvme_nodes(&mut t, p, role);
    t.into_nodes()
}

/// [`nvme_tree`] written as `packets -V` prints it, straight to `out`.
pub fn write_nvme_tree(p: &Packet<'_>, role: crate::analysis::marks::NvmeRole, out: &mut Vec<u8>) {
    nvme_nodes(&mut Tree::lines(out), p, role);
}

pub(super) fn nvme_nodes(t: &mut Tree<'_>, p: &Packet<'_>, role: crate::analysis::marks::NvmeRole) {
    use crate::analysis::marks::NvmeRole;
    use crate::wire::nvme::{CqeRepr, QueueKind, SqeRepr, fctype, sct_name};
    let queue =
        |qid: Option<u16>| qid.map_or("queue unknown".to_string(), |q| format!("queue {q}"));
    // The two roles that need no payload (a READ request has none).
    match role {
        NvmeRole::DataRequest { qid, cid, code } => {
            let name = crate::wire::nvme::code_name(code, qid);
            t.text(
                0,
                format_args!(
                    "NVM Express Fabrics RDMA, Data Request ({}): {name}",
                    queue(qid)
                ),
            );
            t.text(1, format_args!("Command Identifier: {cid:#06x}"));
            return;
        }
        NvmeRole::Queue { qid } => {
            t.text(0, format_args!("NVM Express Fabrics RDMA ({})", queue(qid)));
            return;
        }
        _ => {}
    }
    let Some(at) = p.offsets.payload.map(usize::from) else {
        return;
    };
    let n = p.payload_len.unwrap_or(0) as usize;
    let Some(payload) = p.data.get(at..at.saturating_add(n)) else {
        return;
    };
    match role {
        NvmeRole::Command { qid, .. } => {
            let Ok(s) = SqeRepr::parse(payload) else {
                return;
            };
            let q = QueueKind::of_qid(qid.unwrap_or(1));
            t.add(
                0,
                at,
                payload.len(),
                format_args!(
                    "NVM Express Fabrics RDMA, Cmd ({}): {}",
                    queue(qid),
                    s.name(q)
                ),
            );
            if let Some(ft) = s.fctype() {
                t.add(
                    1,
                    at,
                    1,
                    format_args!("Opcode: {:02x} (Fabric Command)", s.opcode),
                );
                t.add(
                    1,
                    at + 2,
                    2,
                    format_args!("Command Identifier: {:#06x}", s.cid),
                );
                t.add(
                    1,
                    at + 4,
                    1,
                    format_args!("Fabric Command Type: {} ({ft:#04x})", fctype::name(ft)),
                );
                if let Some(pr) = s.property() {
                    let set = s.fctype() == Some(crate::wire::nvme::fctype::PROPERTY_SET);
                    t.add(
                        1,
                        at + 40,
                        16,
                        format_args!(
                            "Property {}: Offset {:#010x} ({}), Size {} bytes{}",
                            if set { "Set" } else { "Get" },
                            pr.offset,
                            crate::wire::nvme::property_name(pr.offset),
                            if pr.attrib & 7 == 1 { 8 } else { 4 },
                            if set {
                                format!(", Value {:#x}", pr.value)
                            } else {
                                String::new()
                            }
                        ),
                    );
                }
                if let Some(c) = s.connect() {
                    t.add(
                        1,
                        at + 40,
                        12,
                        format_args!(
                            "Connect: Record Format {}, Queue ID {}, Submission Queue Size {}, Connect Attributes {:#04x}, Keep Alive Timeout {} ms",
                            c.recfmt,
                            c.qid,
                            u32::from(c.sqsize) + 1,
                            c.cattr,
                            c.kato
                        ),
                    );
                    // The Connect data, when the capsule is in this packet.
                    if let Some(d) = payload
                        .get(64..64 + crate::wire::nvme::CONNECT_DATA_LEN)
                        .and_then(|b| crate::wire::nvme::ConnectData::new(b).ok())
                    {
                        let text = |b: &[u8]| {
                            crate::output::text::terminal_safe(&String::from_utf8_lossy(b))
                        };
                        t.add(
                            1,
                            at + 64 + 16,
                            2,
                            format_args!("Controller ID: {:#06x}", d.cntlid()),
                        );
                        t.add(
                            1,
                            at + 64 + 256,
                            256,
                            format_args!("Subsystem NQN: {}", text(d.subnqn())),
                        );
                        t.add(
                            1,
                            at + 64 + 512,
                            256,
                            format_args!("Host NQN: {}", text(d.hostnqn())),
                        );
                    }
                }
            } else {
                t.add(
                    1,
                    at,
                    1,
                    format_args!("Opcode: {:#04x} ({})", s.opcode, s.name(q)),
                );
                t.add(1, at + 2, 2, format_args!("Command ID: {:#06x}", s.cid));
                t.add(1, at + 4, 4, format_args!("Namespace Id: {:#010x}", s.nsid));
                if s.has_lba(q) {
                    t.add(1, at + 40, 8, format_args!("Start LBA: {:#018x}", s.slba()));
                    t.add(
                        1,
                        at + 48,
                        2,
                        format_args!(
                            "Absolute Number of Logical Blocks: {}",
                            u32::from(s.nlb()) + 1
                        ),
                    );
                }
            }
            let g = s.sgl;
            t.add(
                1,
                at + 24,
                16,
                format_args!(
                    "SGL1: {}, Address {:#018x}, Length {}{}",
                    g.type_name(),
                    g.address,
                    g.length,
                    if g.keyed() {
                        format!(", Key {:#010x}", g.key)
                    } else {
                        String::new()
                    }
                ),
            );
        }
        NvmeRole::Response {
            qid,
            latency_ns,
            fabrics,
        } => {
            let Ok(c) = CqeRepr::parse(payload) else {
                return;
            };
            t.add(
                0,
                at,
                payload.len(),
                format_args!(
                    "NVM Express Fabrics RDMA, Cqe ({}): {}",
                    queue(qid),
                    c.status_name()
                ),
            );
            if let Some(ns) = latency_ns {
                t.text(
                    1,
                    format_args!(
                        "Cmd Latency: {} ms{}",
                        crate::fields::double_g15(crate::fields::millis(i128::from(ns))),
                        if fabrics { " (a Fabrics command)" } else { "" }
                    ),
                );
            }
            t.add(
                1,
                at + 8,
                2,
                format_args!("SQ Head Pointer: {:#06x}", c.sqhd),
            );
            t.add(
                1,
                at + 10,
                2,
                format_args!("SQ Identifier: {:#06x}", c.sqid),
            );
            t.add(
                1,
                at + 12,
                2,
                format_args!("Command Identifier: {:#06x}", c.cid),
            );
            t.add(
                1,
                at + 14,
                2,
                format_args!(
                    "Status Field: {:#06x} ({}, {}{})",
                    c.status,
                    c.status_name(),
                    sct_name(c.sct()),
                    if c.dnr() { ", Do Not Retry" } else { "" }
                ),
            );
        }
        NvmeRole::Data {
            qid,
            cid,
            code,
            offset,
        } => {
            let name = crate::wire::nvme::code_name(code, qid);
            t.add(
                0,
                at,
                payload.len(),
                format_args!("NVM Express Fabrics RDMA, Data ({}): {name}", queue(qid)),
            );
            t.text(1, format_args!("Command Identifier: {cid:#06x}"));
            if let Some(o) = offset {
                t.text(1, format_args!("Data Offset: {o}"));
            }
            t.text(1, format_args!("Data Length: {}", payload.len()));
        }
        NvmeRole::DataRequest { .. } | NvmeRole::Queue { .. } => {}
    }
}
