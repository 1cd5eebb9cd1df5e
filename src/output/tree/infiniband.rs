//! The InfiniBand transport: LRH, GRH, BTH and the extended headers, CM
//! and other MAD payloads, pad, ICRC and VCRC.

use super::*;

/// The Local Route Header of a native InfiniBand packet.
pub(super) fn lrh_node(t: &mut Tree, l: &crate::wire::LrhRepr, at: usize) {
    t.add(
        0,
        at,
        crate::wire::lrh::LEN,
        format_args!(
            "InfiniBand Local Route Header, SLID: {}, DLID: {}",
            l.slid, l.dlid
        ),
    );
    t.add(1, at, 1, format_args!("Virtual Lane: {}", l.vl));
    t.add(1, at, 1, format_args!("Link Version: {}", l.lver));
    t.add(1, at + 1, 1, format_args!("Service Level: {}", l.sl));
    t.add(1, at + 1, 1, format_args!("Reserved (2 bits): {}", l.resv2));
    t.add(
        1,
        at + 1,
        1,
        format_args!("Link Next Header: {} ({})", l.lnh.bits(), l.lnh.name()),
    );
    t.add(
        1,
        at + 2,
        2,
        format_args!("Destination Local ID: {}", l.dlid),
    );
    t.add(1, at + 4, 1, format_args!("Reserved (5 bits): {}", l.resv5));
    t.add(
        1,
        at + 4,
        2,
        format_args!(
            "Packet Length: {} ({} bytes, LRH through ICRC)",
            l.pkt_len,
            l.packet_bytes()
        ),
    );
    t.add(1, at + 6, 2, format_args!("Source Local ID: {}", l.slid));
}

/// The VCRC trailer and its verdict, at `level`.
pub(super) fn vcrc_line(t: &mut Tree, p: &Packet<'_>, level: u8) {
    let Some(v) = &p.vcrc else { return };
    let verdict = match (v.valid, v.expected) {
        (Some(true), _) => "[correct]".to_string(),
        (Some(false), Some(e)) => format!("[incorrect, should be 0x{e:04x}]"),
        (None, Some(_)) | (None, None) if v.value.is_some() => "[not checked]".to_string(),
        _ => "[not checked: frame truncated]".to_string(),
    };
    match (v.value, p.offsets.vcrc) {
        (Some(x), Some(at)) => t.add(
            level,
            usize::from(at),
            2,
            format_args!("Variant CRC: 0x{x:04x} {verdict}"),
        ),
        _ => t.text(level, format_args!("Variant CRC: not captured {verdict}")),
    }
}

/// RoCE v1's (or native InfiniBand's) Global Route Header.
pub(super) fn grh_node(t: &mut Tree<'_>, p: &Packet<'_>, g: &crate::wire::GrhRepr) {
    let at = usize::from(p.offsets.grh.unwrap_or(0));
    t.add(
        0,
        at,
        grh::LEN,
        if p.roce == Some(RoceVersion::Ib) {
            "InfiniBand Global Route Header"
        } else {
            "InfiniBand Global Route Header (RoCE v1)"
        },
    );
    t.add(1, at, 1, format_args!("IP Version: {}", g.ip_ver));
    t.add(1, at, 2, format_args!("Traffic Class: 0x{:02x}", g.tclass));
    t.add(
        1,
        at + 1,
        3,
        format_args!("Flow Label: 0x{:05x}", g.flow_label),
    );
    t.add(1, at + 4, 2, format_args!("Payload Length: {}", g.pay_len));
    t.add(
        1,
        at + 6,
        1,
        format_args!("Next Header: 0x{:02x}", g.nxt_hdr),
    );
    t.add(1, at + 7, 1, format_args!("Hop Limit: {}", g.hop_lmt));
    t.add(1, at + 8, 16, format_args!("Source GID: {}", g.sgid_addr()));
    t.add(
        1,
        at + 24,
        16,
        format_args!("Destination GID: {}", g.dgid_addr()),
    );
}

/// The InfiniBand transport: the BTH, the extended headers, the payload,
/// the pad, the ICRC and the VCRC.
pub(super) fn roce_nodes(t: &mut Tree<'_>, p: &Packet<'_>, b: &crate::wire::BthRepr) {
    let title = match p.roce {
        Some(RoceVersion::V1) => "InfiniBand (RoCE v1)",
        Some(RoceVersion::Ib) => "InfiniBand",
        _ => "InfiniBand (RoCE v2)",
    };
    t.text(0, title);
    bth_node(t, p, b);
    extended_header_nodes(t, p);
    let o = &p.offsets;
    if let (Some(n), Some(x)) = (p.payload_len, o.payload) {
        let (x, n) = (usize::from(x), n as usize);
        if let Some(cm) = &p.cm {
            cm_payload_node(t, cm, x, n);
        } else if let Some(m) = &p.mad {
            mad_payload_node(t, m, x, n);
        } else {
            t.add(1, x, n, format_args!("Payload: {n} bytes"));
        }
    }
    if let Some(x) = o.pad {
        t.add(
            1,
            usize::from(x),
            usize::from(b.padcnt),
            format_args!("Pad: {} bytes", b.padcnt),
        );
    }
    if let (Some(i), Some(x)) = (&p.icrc, o.icrc) {
        let verdict = match (i.valid, i.expected) {
            (Some(true), _) => "[correct]".to_string(),
            (Some(false), Some(e)) => format!("[incorrect, should be 0x{e:08x}]"),
            _ => "[not checked: frame truncated]".to_string(),
        };
        match i.value {
            Some(v) => t.add(
                1,
                usize::from(x),
                4,
                format_args!("Invariant CRC: 0x{v:08x} {verdict}"),
            ),
            None => t.text(1, format_args!("Invariant CRC: not captured {verdict}")),
        }
    }
    vcrc_line(t, p, 1);
}

/// The Base Transport Header.
pub(super) fn bth_node(t: &mut Tree<'_>, p: &Packet<'_>, b: &crate::wire::BthRepr) {
    let at = usize::from(p.offsets.bth);
    t.add(1, at, bth::LEN, "Base Transport Header");
    t.add(
        2,
        at,
        1,
        format_args!("Opcode: {} ({})", b.opcode.name(), b.opcode.0),
    );
    t.add(2, at + 1, 1, format_args!("Solicited Event: {}", yes(b.se)));
    t.add(2, at + 1, 1, format_args!("MigReq: {}", yes(b.m)));
    t.add(2, at + 1, 1, format_args!("Pad Count: {}", b.padcnt));
    t.add(2, at + 1, 1, format_args!("Header Version: {}", b.tver));
    t.add(
        2,
        at + 2,
        2,
        format_args!("Partition Key: 0x{:04x}", b.p_key),
    );
    t.add(2, at + 4, 1, format_args!("FECN: {}", yes(b.fecn)));
    t.add(2, at + 4, 1, format_args!("BECN: {}", yes(b.becn)));
    if let Some(&r) = p.data.get(at + 4) {
        t.add(
            2,
            at + 4,
            1,
            format_args!("Reserved (6 bits): {}", r & 0x3f),
        );
    }
    t.add(
        2,
        at + 5,
        3,
        format_args!("Destination Queue Pair: 0x{:06x}", b.dest_qp),
    );
    t.add(
        2,
        at + 8,
        1,
        format_args!("Acknowledge Request: {}", yes(b.ack_req)),
    );
    if let Some(&r) = p.data.get(at + 8) {
        t.add(
            2,
            at + 8,
            1,
            format_args!("Reserved (7 bits): {}", r & 0x7f),
        );
    }
    t.add(
        2,
        at + 9,
        3,
        format_args!("Packet Sequence Number: {}", b.psn),
    );
}

/// The extended transport headers the opcode has (RDETH, DETH, XRCETH,
/// RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH) and a CNP's
/// reserved bytes.
pub(super) fn extended_header_nodes(t: &mut Tree<'_>, p: &Packet<'_>) {
    let o = &p.offsets;
    if let (Some(r), Some(x)) = (&p.rdeth, o.rdeth) {
        let x = usize::from(x);
        t.add(1, x, 4, "Reliable Datagram Extended Transport Header");
        t.add(
            2,
            x + 1,
            3,
            format_args!("EE Context: 0x{:06x}", r.ee_context),
        );
    }
    if let (Some(d), Some(x)) = (&p.deth, o.deth) {
        let x = usize::from(x);
        t.add(1, x, 8, "Datagram Extended Transport Header");
        t.add(2, x, 4, format_args!("Queue Key: 0x{:08x}", d.q_key));
        t.add(
            2,
            x + 5,
            3,
            format_args!("Source Queue Pair: 0x{:06x}", d.src_qp),
        );
    }
    if let (Some(r), Some(x)) = (&p.xrceth, o.xrceth) {
        let x = usize::from(x);
        t.add(1, x, 4, "XRC Extended Transport Header");
        t.add(2, x + 1, 3, format_args!("XRC SRQ: 0x{:06x}", r.xrc_srq));
    }
    if let (Some(r), Some(x)) = (&p.reth, o.reth) {
        let x = usize::from(x);
        t.add(1, x, 16, "RDMA Extended Transport Header");
        t.add(2, x, 8, format_args!("Virtual Address: 0x{:016x}", r.va));
        t.add(2, x + 8, 4, format_args!("Remote Key: 0x{:08x}", r.r_key));
        t.add(2, x + 12, 4, format_args!("DMA Length: {}", r.dma_len));
    }
    if let (Some(a), Some(x)) = (&p.atomiceth, o.atomiceth) {
        let x = usize::from(x);
        t.add(1, x, 28, "Atomic Extended Transport Header");
        t.add(2, x, 8, format_args!("Virtual Address: 0x{:016x}", a.va));
        t.add(2, x + 8, 4, format_args!("Remote Key: 0x{:08x}", a.r_key));
        t.add(
            2,
            x + 12,
            8,
            format_args!("Swap (Or Add) Data: 0x{:016x}", a.swap_add),
        );
        t.add(
            2,
            x + 20,
            8,
            format_args!("Compare Data: 0x{:016x}", a.compare),
        );
    }
    if let (Some(a), Some(x)) = (&p.aeth, o.aeth) {
        let x = usize::from(x);
        t.add(1, x, 4, "ACK Extended Transport Header");
        let meaning = match a.kind() {
            AckKind::Ack => format!("ACK, credits {}", a.value()),
            AckKind::RnrNak => format!(
                "RNR NAK, timer {} ({})",
                a.value(),
                human_ns((rnr_timer_us(a.value()) * 1000.0) as u64)
            ),
            AckKind::Nak => format!("NAK, {} ({})", nak::name(a.value()), a.value()),
            AckKind::Reserved => "reserved".into(),
        };
        t.add(
            2,
            x,
            1,
            format_args!("Syndrome: 0x{:02x} ({meaning})", a.syndrome),
        );
        t.add(
            2,
            x + 1,
            3,
            format_args!("Message Sequence Number: {}", a.msn),
        );
    }
    if let (Some(a), Some(x)) = (&p.atomicacketh, o.atomicacketh) {
        t.add(1, usize::from(x), 8, "Atomic ACK Extended Transport Header");
        t.add(
            2,
            usize::from(x),
            8,
            format_args!("Original Remote Data: 0x{:016x}", a.orig_rem_dt),
        );
    }
    if let (Some(i), Some(x)) = (&p.immdt, o.immdt) {
        t.add(
            1,
            usize::from(x),
            4,
            format_args!("Immediate Data: 0x{:08x}", i.value),
        );
    }
    if let (Some(i), Some(x)) = (&p.ieth, o.ieth) {
        t.add(
            1,
            usize::from(x),
            4,
            format_args!(
                "Invalidate Extended Transport Header: R_Key 0x{:08x}",
                i.r_key
            ),
        );
    }
    if let Some(x) = o.cnp_reserved {
        t.add(1, usize::from(x), 16, "CNP Reserved (16 bytes)");
    }
}

/// A CM MAD at `x`, `n` bytes: the message and its fields.
pub(super) fn cm_payload_node(t: &mut Tree<'_>, cm: &CmMessage, x: usize, n: usize) {
    t.add(
        1,
        x,
        n,
        format_args!("MAD: Communication Management, {}", cm.name()),
    );
    match cm {
        CmMessage::Req {
            local_comm_id,
            service_id,
            local_qpn,
            starting_psn,
            mtu,
            ..
        } => {
            t.text(
                2,
                format_args!("Local Communication ID: 0x{local_comm_id:08x}"),
            );
            t.text(2, format_args!("Service ID: 0x{service_id:016x}"));
            t.add(
                2,
                x + 24 + 32,
                3,
                format_args!("Local QPN: 0x{local_qpn:06x}"),
            );
            t.add(
                2,
                x + 24 + 44,
                3,
                format_args!("Starting PSN: {starting_psn}"),
            );
            t.text(2, format_args!("Path MTU: {}", 128u32 << mtu));
        }
        CmMessage::Rep {
            local_comm_id,
            remote_comm_id,
            local_qpn,
            starting_psn,
        } => {
            t.text(
                2,
                format_args!("Local Communication ID: 0x{local_comm_id:08x}"),
            );
            t.text(
                2,
                format_args!("Remote Communication ID: 0x{remote_comm_id:08x}"),
            );
            t.add(
                2,
                x + 24 + 12,
                3,
                format_args!("Local QPN: 0x{local_qpn:06x}"),
            );
            t.add(
                2,
                x + 24 + 20,
                3,
                format_args!("Starting PSN: {starting_psn}"),
            );
        }
        CmMessage::Rej { reason, .. } => t.text(2, format_args!("Reason: {reason}")),
        CmMessage::Dreq { remote_qpn, .. } => {
            t.text(2, format_args!("Remote QPN: 0x{remote_qpn:06x}"))
        }
        _ => {}
    }
}

/// Any other MAD at `x`, `n` bytes: its common header.
pub(super) fn mad_payload_node(
    t: &mut Tree<'_>,
    m: &crate::wire::mad::MadHeader,
    x: usize,
    n: usize,
) {
    t.add(
        1,
        x,
        n,
        format_args!("MAD: {}", crate::wire::mad::describe(m)),
    );
    t.add(2, x, 1, format_args!("Base Version: {}", m.base_version));
    t.add(
        2,
        x + 1,
        1,
        format_args!("Management Class: 0x{:02x}", m.mgmt_class),
    );
    t.add(
        2,
        x + 2,
        1,
        format_args!("Class Version: {}", m.class_version),
    );
    t.add(
        2,
        x + 3,
        1,
        format_args!(
            "Method: {} (0x{:02x})",
            crate::wire::mad::method_name(m.method),
            m.method
        ),
    );
    t.add(2, x + 4, 2, format_args!("Status: 0x{:04x}", m.status));
    t.add(
        2,
        x + 8,
        8,
        format_args!("Transaction ID: 0x{:016x}", m.transaction_id),
    );
    t.add(
        2,
        x + 16,
        2,
        format_args!("Attribute ID: 0x{:04x}", m.attribute_id),
    );
    t.add(
        2,
        x + 20,
        4,
        format_args!("Attribute Modifier: 0x{:08x}", m.attribute_modifier),
    );
}
