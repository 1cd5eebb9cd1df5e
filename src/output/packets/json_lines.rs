//! `packets --json`: one JSON object per frame (JSON Lines), with the
//! analysis's flags and, for NVMe-oF capsules, the command or response.

use crate::dissect::Packet;
use crate::output::json::JsonWriter;
use crate::q;
use crate::wire::mad::CmMessage;
use crate::wire::pause::PauseRepr;

/// The `nvme` object of a frame that carries a capsule: its role and
/// queue, then the command's fields (`cmd`, or `fabrics` for a Fabrics
/// command) or the response's (`cqe`, with its command's latency).
fn nvme_json(w: &mut JsonWriter<'_>, p: &Packet<'_>, role: crate::analysis::marks::NvmeRole) {
    use crate::analysis::marks::NvmeRole;
    use crate::wire::nvme::{CqeRepr, QueueKind, SqeRepr};
    let payload = p.payload().unwrap_or_default();
    w.object(q!("nvme"));
    match role {
        NvmeRole::Command { qid, .. } => {
            w.str(q!("role"), "command");
            w.opt_u64(q!("qid"), qid.map(u64::from));
            if let Ok(s) = SqeRepr::parse(payload) {
                let q = QueueKind::of_qid(qid.unwrap_or(1));
                w.str(q!("name"), s.name(q));
                if let Some(t) = s.fctype() {
                    w.object(q!("fabrics"));
                    w.u64(q!("opc"), u64::from(s.opcode));
                    w.u64(q!("cid"), u64::from(s.cid));
                    w.u64(q!("fctype"), u64::from(t));
                    w.end();
                } else {
                    w.object(q!("cmd"));
                    w.u64(q!("opc"), u64::from(s.opcode));
                    w.u64(q!("cid"), u64::from(s.cid));
                    w.u64(q!("nsid"), u64::from(s.nsid));
                    if s.has_lba(q) {
                        w.u64(q!("slba"), s.slba());
                        w.u64(q!("nlb"), u64::from(s.nlb()) + 1);
                    }
                    w.end();
                }
                w.object(q!("sgl"));
                w.str(q!("type"), s.sgl.type_name());
                w.u64(q!("address"), s.sgl.address);
                w.u64(q!("length"), u64::from(s.sgl.length));
                if s.sgl.keyed() {
                    w.u64(q!("key"), u64::from(s.sgl.key));
                }
                w.end();
            }
        }
        NvmeRole::Response {
            qid, latency_ns, ..
        } => {
            w.str(q!("role"), "response");
            w.opt_u64(q!("qid"), qid.map(u64::from));
            if let Ok(c) = CqeRepr::parse(payload) {
                w.object(q!("cqe"));
                w.u64(q!("cid"), u64::from(c.cid));
                w.u64(q!("sqhd"), u64::from(c.sqhd));
                w.u64(q!("sqid"), u64::from(c.sqid));
                w.u64(q!("status"), u64::from(c.status));
                w.str(q!("status_name"), c.status_name());
                w.bool(q!("dnr"), c.dnr());
                w.end();
            }
            w.opt_u64(q!("latency_ns"), latency_ns);
        }
        NvmeRole::Data {
            qid,
            cid,
            code,
            offset,
        } => {
            w.str(q!("role"), "data");
            w.opt_u64(q!("qid"), qid.map(u64::from));
            w.str(q!("name"), crate::wire::nvme::code_name(code, qid));
            w.object(q!("data"));
            w.u64(q!("cid"), u64::from(cid));
            if let Some(o) = offset {
                w.u64(q!("offset"), u64::from(o));
            }
            w.end();
        }
        NvmeRole::DataRequest { qid, cid, code } => {
            w.str(q!("role"), "data_request");
            w.opt_u64(q!("qid"), qid.map(u64::from));
            w.str(q!("name"), crate::wire::nvme::code_name(code, qid));
            w.object(q!("data"));
            w.u64(q!("cid"), u64::from(cid));
            w.end();
        }
        NvmeRole::Queue { qid } => {
            w.str(q!("role"), "queue");
            w.opt_u64(q!("qid"), qid.map(u64::from));
        }
    }
    w.end();
}

/// Appends one JSON Lines object (with the trailing newline) to `out`.
pub fn write_json_line(out: &mut Vec<u8>, p: &Packet<'_>) {
    json_line(out, p, None);
}

/// [`write_json_line`] with what the analysis concluded about the frame:
/// an `analysis` object holding its flow's number (in order of first
/// appearance) and the `roce.analysis.*` flags that are set (`missing`
/// with a gap), left out when there is none of them.
pub fn write_json_line_analysed(
    out: &mut Vec<u8>,
    p: &Packet<'_>,
    a: &crate::analysis::FrameAnalysis,
    flow_number: Option<u64>,
) {
    json_line(out, p, Some((a, flow_number)));
}

fn json_line(
    out: &mut Vec<u8>,
    p: &Packet<'_>,
    analysis: Option<(&crate::analysis::FrameAnalysis, Option<u64>)>,
) {
    out.reserve(768);
    let mut w = JsonWriter::new(out);
    w.begin();
    w.u64(q!("frame"), p.number);
    w.u64(q!("ts_ns"), p.ts_ns);
    w.u64(q!("len"), u64::from(p.len));
    w.u64(q!("caplen"), u64::from(p.caplen));
    link_json(&mut w, p);
    infiniband_json(&mut w, p);
    if let Some(cm) = &p.cm {
        cm_json(&mut w, cm);
    }
    if let Some(n) = p.payload_len {
        w.u64(q!("payload_len"), u64::from(n));
    }
    if let Some(i) = &p.icrc {
        w.object(q!("icrc"));
        w.opt_u64(q!("value"), i.value.map(u64::from));
        w.opt_bool(q!("valid"), i.valid);
        if let Some(e) = i.expected {
            w.u64(q!("expected"), u64::from(e));
        }
        w.end();
    }
    if let Some(v) = &p.vcrc {
        w.object(q!("vcrc"));
        w.opt_u64(q!("value"), v.value.map(u64::from));
        w.opt_bool(q!("valid"), v.valid);
        if let Some(e) = v.expected {
            w.u64(q!("expected"), u64::from(e));
        }
        w.end();
    }
    if let Some(PauseRepr::Other { opcode }) = &p.pause {
        w.object(q!("mac_control"));
        w.u64(q!("opcode"), u64::from(*opcode));
        w.end();
    } else if let Some(pause) = &p.pause {
        w.object(q!("pause"));
        w.u64(q!("opcode"), u64::from(pause.opcode()));
        match pause {
            PauseRepr::Pfc(pfc) => {
                w.u64(q!("enbv"), u64::from(pfc.class_enable));
                w.array(q!("pause_time"));
                for t in pfc.times {
                    w.element_u64(u64::from(t));
                }
                w.end_array();
            }
            PauseRepr::Pause { time } => w.u64(q!("pause_time"), u64::from(*time)),
            PauseRepr::Other { .. } => {}
        }
        w.end();
    }
    if let Some(e) = &p.error {
        w.escaped(q!("error"), &e.to_string());
    }
    if let Some((a, flow)) = analysis {
        analysis_json(&mut w, a, flow);
    }
    if let Some(role) = analysis.and_then(|(a, _)| a.nvme) {
        nvme_json(&mut w, p, role);
    }
    w.end();
    out.push(b'\n');
}

/// The link and network layers' members: Ethernet or Linux cooked
/// capture, VLAN tags, IP, UDP, ERF.
#[inline]
fn link_json(w: &mut JsonWriter<'_>, p: &Packet<'_>) {
    if let Some(e) = &p.eth {
        w.object(q!("eth"));
        w.mac(q!("src"), &e.src);
        w.mac(q!("dst"), &e.dst);
        w.u64(q!("type"), u64::from(e.ethertype));
        w.end();
    }
    if let Some(sll) = &p.sll {
        w.object(q!("sll"));
        w.u64(q!("pkttype"), u64::from(sll.packet_type));
        if let Some(m) = sll.src_mac() {
            w.mac(q!("src"), &m);
        }
        w.u64(q!("protocol"), u64::from(sll.protocol));
        w.end();
    }
    if p.vlans[0].is_some() {
        w.array(q!("vlan"));
        for t in p.vlan_tags() {
            w.element_object();
            w.u64(q!("id"), u64::from(t.id));
            w.u64(q!("pcp"), u64::from(t.pcp));
            w.bool(q!("dei"), t.dei);
            w.u64(q!("tpid"), u64::from(t.tpid));
            w.end();
        }
        w.end_array();
    }
    if let Some(ip) = &p.ip {
        w.object(q!("ip"));
        w.u64(q!("version"), u64::from(ip.version));
        w.ip(q!("src"), &ip.src);
        w.ip(q!("dst"), &ip.dst);
        w.u64(q!("dscp"), u64::from(ip.dscp));
        w.u64(q!("ecn"), u64::from(ip.ecn));
        w.u64(q!("ttl"), u64::from(ip.ttl));
        w.u64(q!("proto"), u64::from(ip.protocol));
        w.end();
    }
    if let Some(u) = &p.udp {
        w.object(q!("udp"));
        w.u64(q!("sport"), u64::from(u.sport));
        w.u64(q!("dport"), u64::from(u.dport));
        w.u64(q!("length"), u64::from(u.length));
        w.end();
    }
    if let Some(e) = &p.erf {
        w.object(q!("erf"));
        w.u64(q!("type"), u64::from(e.kind));
        w.str(q!("type_name"), e.type_name());
        w.u64(q!("flags"), u64::from(e.flags));
        w.u64(q!("port"), u64::from(e.port()));
        w.u64(q!("rlen"), u64::from(e.rlen));
        w.u64(q!("lctr"), u64::from(e.lctr));
        w.u64(q!("wlen"), u64::from(e.wlen));
        w.end();
    }
}

/// The InfiniBand layers' members: LRH, the RoCE version, GRH, BTH, the
/// extended headers and a MAD's common header.
#[inline]
fn infiniband_json(w: &mut JsonWriter<'_>, p: &Packet<'_>) {
    if let Some(l) = &p.lrh {
        w.object(q!("lrh"));
        w.u64(q!("vl"), u64::from(l.vl));
        w.u64(q!("lver"), u64::from(l.lver));
        w.u64(q!("sl"), u64::from(l.sl));
        w.u64(q!("lnh"), u64::from(l.lnh.bits()));
        w.u64(q!("dlid"), u64::from(l.dlid));
        w.u64(q!("slid"), u64::from(l.slid));
        w.u64(q!("pktlen"), u64::from(l.pkt_len));
        w.end();
    }
    if let Some(v) = p.roce {
        w.str(q!("roce"), v.as_str());
    }
    if let Some(g) = &p.grh {
        w.object(q!("grh"));
        w.u64(q!("ipver"), u64::from(g.ip_ver));
        w.u64(q!("tclass"), u64::from(g.tclass));
        w.u64(q!("flowlabel"), u64::from(g.flow_label));
        w.u64(q!("paylen"), u64::from(g.pay_len));
        w.u64(q!("nxthdr"), u64::from(g.nxt_hdr));
        w.u64(q!("hoplmt"), u64::from(g.hop_lmt));
        w.ip(q!("sgid"), &g.sgid_addr().into());
        w.ip(q!("dgid"), &g.dgid_addr().into());
        w.end();
    }
    if let Some(b) = &p.bth {
        w.object(q!("bth"));
        w.u64(q!("opcode"), u64::from(b.opcode.0));
        w.str(q!("opcode_name"), b.opcode.name());
        w.str(q!("transport"), b.opcode.transport().as_str());
        w.bool(q!("se"), b.se);
        w.bool(q!("m"), b.m);
        w.u64(q!("padcnt"), u64::from(b.padcnt));
        w.u64(q!("tver"), u64::from(b.tver));
        w.u64(q!("p_key"), u64::from(b.p_key));
        w.bool(q!("fecn"), b.fecn);
        w.bool(q!("becn"), b.becn);
        w.u64(q!("destqp"), u64::from(b.dest_qp));
        w.bool(q!("a"), b.ack_req);
        w.u64(q!("psn"), u64::from(b.psn));
        w.end();
    }
    if let Some(r) = &p.rdeth {
        w.object(q!("rdeth"));
        w.u64(q!("eecnxt"), u64::from(r.ee_context));
        w.end();
    }
    if let Some(d) = &p.deth {
        w.object(q!("deth"));
        w.u64(q!("q_key"), u64::from(d.q_key));
        w.u64(q!("srcqp"), u64::from(d.src_qp));
        w.end();
    }
    if let Some(x) = &p.xrceth {
        w.object(q!("xrceth"));
        w.u64(q!("xrcsrq"), u64::from(x.xrc_srq));
        w.end();
    }
    if let Some(r) = &p.reth {
        w.object(q!("reth"));
        w.u64(q!("va"), r.va);
        w.u64(q!("r_key"), u64::from(r.r_key));
        w.u64(q!("dmalen"), u64::from(r.dma_len));
        w.end();
    }
    if let Some(a) = &p.atomiceth {
        w.object(q!("atomiceth"));
        w.u64(q!("va"), a.va);
        w.u64(q!("r_key"), u64::from(a.r_key));
        w.u64(q!("swapdt"), a.swap_add);
        w.u64(q!("cmpdt"), a.compare);
        w.end();
    }
    if let Some(a) = &p.aeth {
        w.object(q!("aeth"));
        w.u64(q!("syndrome"), u64::from(a.syndrome));
        w.u64(q!("msn"), u64::from(a.msn));
        w.str(q!("kind"), a.kind().as_str());
        w.u64(q!("value"), u64::from(a.value()));
        w.end();
    }
    if let Some(a) = &p.atomicacketh {
        w.object(q!("atomicacketh"));
        w.u64(q!("origremdt"), a.orig_rem_dt);
        w.end();
    }
    if let Some(i) = &p.immdt {
        w.object(q!("immdt"));
        w.u64(q!("value"), u64::from(i.value));
        w.end();
    }
    if let Some(i) = &p.ieth {
        w.object(q!("ieth"));
        w.u64(q!("r_key"), u64::from(i.r_key));
        w.end();
    }
    if let Some(m) = &p.mad {
        w.object(q!("mad"));
        w.u64(q!("mgmt_class"), u64::from(m.mgmt_class));
        w.u64(q!("method"), u64::from(m.method));
        w.u64(q!("attribute_id"), u64::from(m.attribute_id));
        w.u64(q!("transaction_id"), m.transaction_id);
        w.end();
    }
}

/// A CM message's members.
fn cm_json(w: &mut JsonWriter<'_>, cm: &CmMessage) {
    w.object(q!("cm"));
    w.str(q!("msg"), cm.short_name());
    match *cm {
        CmMessage::Req {
            local_comm_id,
            service_id,
            local_qpn,
            starting_psn,
            mtu,
            ..
        } => {
            w.u64(q!("local_comm_id"), u64::from(local_comm_id));
            w.u64(q!("service_id"), service_id);
            w.u64(q!("local_qpn"), u64::from(local_qpn));
            w.u64(q!("starting_psn"), u64::from(starting_psn));
            w.u64(q!("mtu"), u64::from(mtu));
        }
        CmMessage::Rep {
            local_comm_id,
            remote_comm_id,
            local_qpn,
            starting_psn,
        } => {
            w.u64(q!("local_comm_id"), u64::from(local_comm_id));
            w.u64(q!("remote_comm_id"), u64::from(remote_comm_id));
            w.u64(q!("local_qpn"), u64::from(local_qpn));
            w.u64(q!("starting_psn"), u64::from(starting_psn));
        }
        CmMessage::Rtu {
            local_comm_id,
            remote_comm_id,
        }
        | CmMessage::Drep {
            local_comm_id,
            remote_comm_id,
        } => {
            w.u64(q!("local_comm_id"), u64::from(local_comm_id));
            w.u64(q!("remote_comm_id"), u64::from(remote_comm_id));
        }
        CmMessage::Rej {
            local_comm_id,
            remote_comm_id,
            reason,
        } => {
            w.u64(q!("local_comm_id"), u64::from(local_comm_id));
            w.u64(q!("remote_comm_id"), u64::from(remote_comm_id));
            w.u64(q!("reason"), u64::from(reason));
        }
        CmMessage::Dreq {
            local_comm_id,
            remote_comm_id,
            remote_qpn,
        } => {
            w.u64(q!("local_comm_id"), u64::from(local_comm_id));
            w.u64(q!("remote_comm_id"), u64::from(remote_comm_id));
            w.u64(q!("remote_qpn"), u64::from(remote_qpn));
        }
        CmMessage::Other { attribute_id } => {
            w.u64(q!("attribute_id"), u64::from(attribute_id));
        }
    }
    w.end();
}

/// The analysis of the frame: its flow and the `roce.analysis.*` flags
/// that are set, left out when there is none of them.
fn analysis_json(w: &mut JsonWriter<'_>, a: &crate::analysis::FrameAnalysis, flow: Option<u64>) {
    if flow.is_none() && a.marks.is_empty() && a.completion_ns.is_none() {
        return;
    }
    w.object(q!("analysis"));
    if let Some(n) = flow {
        w.u64(q!("flow"), n);
    }
    for m in a.marks.iter() {
        w.bool(&format!("\"{}\":", m.as_str()), true);
    }
    if a.marks.has(crate::analysis::Mark::Gap) {
        w.u64(q!("missing"), u64::from(a.missing));
    }
    if a.episode > 0 {
        w.u64(q!("episode"), u64::from(a.episode));
    }
    if let Some(ns) = a.ack_rtt_ns {
        w.u64(q!("ack_rtt_ns"), ns);
    }
    if let Some(ns) = a.completion_ns {
        w.u64(q!("message_completion_ns"), ns);
    }
    w.end();
}
