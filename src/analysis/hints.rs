//! Expert hints: one line per anomaly kind present, with its likely causes.
//! A hint says only what the capture shows: drops only when PSNs went
//! missing or were replayed, reordering when the packet a NAK asked for had
//! arrived, late.

use super::report::{FlowReport, Hint, HintKind, NakCounts, Report, Trigger};

/// What the views without a hint say in their place (the HTML page's
/// verdict, the TUI's).
pub const NOTHING_WRONG: &str =
    "Nothing wrong found: no replays, NAKs, gaps, pauses or congestion the analysis would explain.";

/// Whether (nearly) every RoCE frame whose ICRC could be checked failed it:
/// then the capture path does not keep ICRCs (a NIC that strips or
/// recomputes them, a mirror that rewrites headers), rather than every
/// packet being corrupt.
pub fn icrc_not_preserved(icrc_errors: u64, roce_frames: u64, truncated: u64) -> bool {
    let checked = roce_frames.saturating_sub(truncated);
    icrc_errors >= 8 && icrc_errors.saturating_mul(10) >= checked.saturating_mul(9)
}

/// What the hints add up over the flows, in one pass over them: a pass
/// per figure (16) read each flow's report again, 15 ms of the report of
/// 131 472 flows.
#[derive(Default)]
struct Sums {
    naks: NakCounts,
    missing: u64,
    psn_reuse: u64,
    out_of_order: u64,
    ecn_ce: u64,
    cnps: u64,
    cnps_ignored: u64,
    unanswered_reads: u64,
    /// Replays a NAK asked for whose first packet had arrived, late.
    reordered_by_nak: u64,
    /// Packets replayed in episodes that were not reordering.
    replayed_lost: u64,
    /// Timeout replays, on flows with no READ left unanswered.
    timeouts: u64,
}

impl Sums {
    fn of(flows: &[FlowReport]) -> Sums {
        let mut s = Sums::default();
        for f in flows {
            s.naks += f.naks;
            s.missing += f.missing;
            s.psn_reuse += f.psn_reuse;
            s.out_of_order += f.out_of_order;
            s.ecn_ce += f.ecn_ce;
            s.cnps += f.cnps;
            s.cnps_ignored += f.cc.as_deref().map_or(0, |c| c.ignored);
            s.unanswered_reads += f.unanswered_reads;
            for e in &f.episodes {
                if e.reordered {
                    s.reordered_by_nak += u64::from(e.trigger == Trigger::Nak);
                } else {
                    s.replayed_lost += e.packets;
                }
                if f.unanswered_reads == 0 && e.trigger == Trigger::Timeout {
                    s.timeouts += 1;
                }
            }
        }
        s
    }
}

/// The hints for a report.
pub fn hints(r: &Report) -> Vec<Hint> {
    let sums = Sums::of(&r.flows);
    let mut out = Vec::new();
    let mut add = |kind: HintKind, count: u64, text: &'static str| {
        if count > 0 {
            out.push(Hint {
                kind,
                count,
                text: text.into(),
            });
        }
    };
    add(
        HintKind::RemoteAccess,
        sums.naks.remote_access,
        "Remote access error NAKs: the responder rejected the access: an invalid or stale R_Key, memory not registered (or deregistered) for that access, or an address outside the region.",
    );

    // PSN sequence error NAKs: the responder saw a gap. Caused by
    // reordering when the replay starts with a packet that had arrived.
    let seq_naks = sums.naks.psn_seq_err;
    let reordered = sums.reordered_by_nak;
    let drops_seen = sums.missing > 0 || sums.replayed_lost > 0;
    let other_seq_naks = seq_naks.saturating_sub(reordered);
    if drops_seen {
        add(
            HintKind::PsnSeqErr,
            other_seq_naks,
            "PSN sequence error NAKs: the responder saw a gap and packets went missing or were replayed: packets were dropped on the way. Check that PFC is enabled for the RoCE priority on every hop, switch buffer and drop counters, and the DSCP/PCP mapping.",
        );
    } else {
        add(
            HintKind::PsnSeqErrUnseen,
            other_seq_naks,
            "PSN sequence error NAKs, but no PSN is missing here and nothing was replayed: the responder saw a gap this capture does not show: packets lost or reordered between the capture point and the responder, or a capture that misses frames.",
        );
    }
    add(
        HintKind::PsnSeqErrReorder,
        reordered.min(seq_naks),
        "PSN sequence error NAKs caused by reordering: the packet the responder asked for had already arrived, late, and the requester replayed from it anyway (go-back-N). Nothing was lost: multipath reordering (ECMP with changing entropy, adaptive routing) costs replays and goodput.",
    );
    add(
        HintKind::Missing,
        sums.missing,
        "PSNs still missing at the end of the capture: packets lost before the capture point (lossy priority, buffer drops) or not captured (mirror drops, capture started or stopped mid-message).",
    );
    add(
        HintKind::PsnReuse,
        sums.psn_reuse,
        "A request took a PSN that a request of another kind had already consumed (e.g. a SEND inside an RDMA READ's PSN span): the requester broke the PSN rules, which the responder answers with NAKs or silence. After a READ, the two sides most likely disagree on the path MTU: the requester counted the READ's PSNs with a larger one than the responder's READ responses use. Check the active MTU at both ends (ibv_devinfo, the RDMA CM path record).",
    );
    add(
        HintKind::Rnr,
        sums.naks.rnr,
        "RNR NAKs: the receiver had no receive buffer posted; it is not posting receives fast enough. Deepen the receive queue or SRQ, or raise min_rnr_timer/rnr_retry.",
    );
    add(
        HintKind::InvalidRequest,
        sums.naks.invalid_request,
        "Invalid request NAKs: the responder does not support the operation or its length (e.g. READ/atomic not enabled on the QP, message larger than allowed).",
    );
    add(
        HintKind::RemoteOp,
        sums.naks.remote_op,
        "Remote operational error NAKs: the responder hit a local error (its QP went to the error state, a PCIe or memory fault).",
    );
    add(
        HintKind::InvalidRd,
        sums.naks.invalid_rd,
        "Invalid RD request NAKs: a Reliable Datagram request named an invalid EE context or Q_Key.",
    );

    // Timeouts: READs nobody answered are their own story.
    let unanswered = sums.unanswered_reads;
    add(
        HintKind::UnansweredRead,
        unanswered,
        "RDMA READ requests retried until the capture ended with no READ response at all: the responder never answered them (its QP in the error state, the READ refused without a NAK, responses lost on every try). The ACK timeout is the symptom, not the cause: look at the responder's QP state and error counters.",
    );
    let timeouts = sums.timeouts;
    add(
        HintKind::Timeout,
        timeouts,
        "Retransmissions with no NAK before them (timeouts): the requester's ACK timer fired: ACKs were lost, the responder is stalled or gone, or the capture misses the other direction. Check the local ACK timeout and retry count.",
    );
    add(
        HintKind::OutOfOrder,
        sums.out_of_order,
        "Out-of-order packets (PSNs that arrived after later ones): multipath reordering (ECMP with changing entropy, adaptive routing), the first resend of a packet lost before the capture point, or a capture merged from several points.",
    );
    let ce = sums.ecn_ce;
    let cnps = sums.cnps;
    if ce > 0 && cnps == 0 {
        add(
            HintKind::EcnNoCnp,
            ce,
            "CE-marked packets but no CNPs: the receiver's congestion notification (DCQCN NP) may be disabled, or CNPs travel on a path the capture does not see.",
        );
    }
    add(
        HintKind::Cnp,
        cnps,
        "CNPs: switches marked congestion and DCQCN is slowing senders down; look for incast (many senders to one receiver) and the ECN marking thresholds.",
    );
    add(
        HintKind::CnpIgnored,
        sums.cnps_ignored,
        "CNPs ignored: after these CNPs the sender's rate did not drop (at least 0.97 of the rate before, still sending): congestion control disabled or not enabled on this priority (DCQCN off on the sender's NIC, CNPs on a priority it does not react to), so the switch queue stays full and PFC has to stop it.",
    );
    add(
        HintKind::PauseStorm,
        r.pfc.storms,
        "Pause storm: a port stayed paused longer than the threshold: a stuck receiver, a PFC deadlock (cyclic buffer dependency) or a misbehaving NIC. Check the PFC watchdog.",
    );
    add(
        HintKind::PauseIgnored,
        r.pfc.summary.iter().map(|p| p.reaction.late).sum(),
        "Paused senders kept sending past their budget (the 802.3 response time, the cable's round trip and one frame): a sender that does not honour PFC on this priority (PFC not enabled on its port or for this priority, a priority mapping that differs), or more cable than --cable says. The bytes past the budget need headroom the pausing port may not have: roce-dissect plan headroom.",
    );
    if r.pfc.storms == 0 {
        let pfc = r
            .pfc
            .intervals
            .iter()
            .filter(|i| i.priority.is_some())
            .count() as u64;
        let pause = r.pfc.intervals.len() as u64 - pfc;
        add(
            HintKind::PfcPause,
            pfc,
            "PFC pauses: the receiving side ran short of buffer on that priority; frequent pauses spread congestion upstream (head-of-line blocking).",
        );
        add(
            HintKind::Pause,
            pause,
            "802.3x PAUSE frames: a link partner stopped all traffic on the link (no priorities): flow control not meant for RoCE, or a NIC or driver asking for it by itself. RoCE fabrics use PFC on one priority instead.",
        );
    }
    let c = &r.capture;
    if icrc_not_preserved(c.icrc_errors, c.roce_frames, c.truncated_frames) {
        add(
            HintKind::IcrcNotPreserved,
            c.icrc_errors,
            "Nearly every RoCE frame fails its ICRC: the capture path does not preserve ICRCs (a NIC or tcpdump on an RDMA device that strips, zeroes or recomputes them, a mirror that rewrites headers), not corruption on the wire. Run with --no-icrc; the bad-ICRC events are not listed one by one.",
        );
    } else {
        add(
            HintKind::BadIcrc,
            c.icrc_errors,
            "ICRC errors: corrupted packets (cable, optic, NIC), or a device rewrote invariant fields in flight; the receiver drops them silently.",
        );
    }
    add(
        HintKind::Duplicates,
        c.duplicate_frames,
        "Capture duplicates: the mirror copied frames twice (e.g. both directions of a span); they are excluded from the analysis.",
    );
    add(
        HintKind::OneWay,
        c.one_way_flows,
        "Connected flows seen in one direction only: asymmetric mirroring or a capture filter; ACK-based checks and pairing are limited.",
    );
    add(
        HintKind::Truncated,
        c.truncated_frames,
        "Truncated frames: the snap length cut them, so their ICRC could not be checked.",
    );
    if let Some(o) = &r.other {
        // TCP between two hosts that also exchange RoCE: their rdma_cm or
        // NCCL bootstrap, their storage control path. (TCP to anywhere
        // else, a laptop's browsing beside an rxe test, says nothing of
        // the fabric.)
        let hosts: std::collections::HashSet<&str> =
            r.flows.iter().flat_map(|f| [&*f.src, &*f.dst]).collect();
        let host = |end: &str| {
            end.parse::<std::net::SocketAddr>()
                .is_ok_and(|a| hosts.contains(a.ip().to_string().as_str()))
        };
        add(
            HintKind::TcpRetransmission,
            (o.tcp_conversations.iter())
                .filter(|t| host(&t.a) && host(&t.b))
                .map(|t| t.noted("retransmission"))
                .sum(),
            "TCP retransmissions between hosts that also exchange RoCE: segments of their TCP conversations (rdma_cm's or NCCL's bootstrap, a storage control path) were lost or delayed and sent again. TCP rides a lossy traffic class, where congestion drops are expected; but where the RoCE flows between the same hosts also show gaps, the link itself may be losing frames. Other traffic lists the conversations; packets -Y tcp.analysis.retransmission the segments.",
        );
    }
    if c.roce_frames == 0 && r.pfc.frames == 0 {
        add(HintKind::NoRoce, c.frames, NO_ROCE);
    }
    out
}

/// The hint of a capture with frames but none of RoCE.
pub const NO_ROCE: &str = "No RoCE frame in this capture (RoCE v2: UDP to port 4791; v1: EtherType 0x8915). RDMA bypasses the kernel, so tcpdump on the Ethernet interface (eth0, ens1f0) does not see it: capture on the RDMA device (tcpdump -i mlx5_0, ibdump) or mirror the switch port. RoCE v2 on another UDP port: --roce-port.";

/// Frames to UDP port `port`, `frames` of them, are RoCE v2 (their ICRCs
/// check), none to `roce_port`: in place of the [`NO_ROCE`] hint, the
/// option that reads them.
pub fn roce_on_other_port(hints: &mut Vec<Hint>, roce_port: u16, port: u16, frames: u64) {
    hints.retain(|h| h.kind != HintKind::NoRoce);
    hints.push(Hint {
        kind: HintKind::RoceOnOtherPort,
        count: frames,
        text: format!(
            "No RoCE frame at UDP port {roce_port}, but frames to UDP port {port} are RoCE v2 (their ICRCs check): run again with --roce-port {port}."
        )
        .into(),
    });
}
