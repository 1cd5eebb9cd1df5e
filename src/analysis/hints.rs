//! Expert hints: one line per anomaly kind present, with likely causes.

use super::report::{Hint, Report};

pub fn hints(r: &Report) -> Vec<Hint> {
    let sum = |f: &dyn Fn(&super::report::FlowReport) -> u64| r.flows.iter().map(f).sum::<u64>();
    let mut out = Vec::new();
    let mut add = |kind: &'static str, count: u64, text: &'static str| {
        if count > 0 {
            out.push(Hint { kind, count, text });
        }
    };
    add(
        "remote_access",
        sum(&|f| f.naks.remote_access),
        "Remote access error NAKs: the responder rejected the access: an invalid or stale R_Key, memory not registered (or deregistered) for that access, or an address outside the region.",
    );
    add(
        "psn_seq_err",
        sum(&|f| f.naks.psn_seq_err),
        "PSN sequence error NAKs: the responder saw a gap, so packets were dropped on the way: check that PFC is enabled for the RoCE priority on every hop, switch buffer and drop counters, and the DSCP/PCP mapping.",
    );
    add(
        "missing",
        sum(&|f| f.missing),
        "PSNs still missing at the end of the capture: packets lost before the capture point (lossy priority, buffer drops) or not captured (mirror drops, capture started or stopped mid-message).",
    );
    add(
        "rnr",
        sum(&|f| f.naks.rnr),
        "RNR NAKs: the receiver had no receive buffer posted; it is not posting receives fast enough. Deepen the receive queue or SRQ, or raise min_rnr_timer/rnr_retry.",
    );
    add(
        "invalid_request",
        sum(&|f| f.naks.invalid_request),
        "Invalid request NAKs: the responder does not support the operation or its length (e.g. READ/atomic not enabled on the QP, message larger than allowed).",
    );
    add(
        "remote_op",
        sum(&|f| f.naks.remote_op),
        "Remote operational error NAKs: the responder hit a local error (its QP went to the error state, a PCIe or memory fault).",
    );
    add(
        "invalid_rd",
        sum(&|f| f.naks.invalid_rd),
        "Invalid RD request NAKs: a Reliable Datagram request named an invalid EE context or Q_Key.",
    );
    let timeouts = r
        .flows
        .iter()
        .flat_map(|f| &f.episodes)
        .filter(|e| e.trigger == "timeout")
        .count() as u64;
    add(
        "timeout",
        timeouts,
        "Retransmissions with no NAK before them (timeouts): ACKs were lost, the peer is dead or stalled, or the capture misses the other direction. Check the local ACK timeout and retry count.",
    );
    add(
        "out_of_order",
        sum(&|f| f.out_of_order),
        "Late arrivals: multipath reordering (ECMP with changing entropy, adaptive routing), or a capture merged from several points.",
    );
    let ce = sum(&|f| f.ecn_ce);
    let cnps = sum(&|f| f.cnps);
    if ce > 0 && cnps == 0 {
        add(
            "ecn_no_cnp",
            ce,
            "CE-marked packets but no CNPs: the receiver's congestion notification (DCQCN NP) may be disabled, or CNPs travel on a path the capture does not see.",
        );
    }
    add(
        "cnp",
        cnps,
        "CNPs: switches marked congestion and DCQCN is slowing senders down; look for incast (many senders to one receiver) and the ECN marking thresholds.",
    );
    add(
        "pause_storm",
        r.pfc.storms,
        "Pause storm: a port stayed paused longer than the threshold: a stuck receiver, a PFC deadlock (cyclic buffer dependency) or a misbehaving NIC. Check the PFC watchdog.",
    );
    let pauses = r.pfc.intervals.len() as u64;
    if r.pfc.storms == 0 {
        add(
            "pfc_pause",
            pauses,
            "PFC pauses: the receiving side ran short of buffer on that priority; frequent pauses spread congestion upstream (head-of-line blocking).",
        );
    }
    add(
        "bad_icrc",
        r.capture.icrc_errors,
        "ICRC errors: corrupted packets (cable, optic, NIC), or a device rewrote invariant fields in flight; the receiver drops them silently.",
    );
    add(
        "duplicates",
        r.capture.duplicate_frames,
        "Capture duplicates: the mirror copied frames twice (e.g. both directions of a span); they are excluded from the analysis.",
    );
    add(
        "one_way",
        r.capture.one_way_flows,
        "Connected flows seen in one direction only: asymmetric mirroring or a capture filter; ACK-based checks and pairing are limited.",
    );
    add(
        "truncated",
        r.capture.truncated_frames,
        "Truncated frames: the snap length cut them, so their ICRC could not be checked.",
    );
    out
}
