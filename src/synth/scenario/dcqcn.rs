//! `gen --scenario dcqcn`: two senders stream RDMA WRITEs at line rate to
//! one receiver; now and then a switch marks one of their packets CE and
//! the receiver answers with a CNP. The first sender halves its rate 2 µs
//! after each CNP for 60 to 120 µs, then is back at line rate; the second
//! ignores its CNPs; the third follows the DCQCN reaction point with the
//! paper's constants (`plan dcqcn --params paper`) from its CNPs. The truth states
//! each flow's `cc` as the README defines it, from the frames sent.

use super::{GAP_NS, Generator, PfcTruth, T0, Truth, ser_ns};
use crate::analysis::cc::{AFTER_DELAY_NS, CcReport, IGNORED, REACTED};
use crate::plan::{DcqcnParams, DcqcnStep};
use crate::synth::conn::Conn;
use crate::synth::frame::NetSpec;
use crate::wire::Psn;

/// The window of the truth (the analysis default).
const WINDOW_NS: u64 = 50_000;
const BIN_NS: u64 = WINDOW_NS / 50;

/// One flow's `cc`, named as the report names the flow.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct FlowCcTruth {
    pub src: String,
    pub dst: String,
    pub destqp: u32,
    pub cc: CcReport,
}

struct Sender {
    conn: Conn,
    /// The reaction point's steps from the CNPs so far, and the one in
    /// force (the third sender).
    follows: Option<(Vec<DcqcnStep>, usize)>,
    psn: Psn,
    t: u64,
    reacts: bool,
    /// Slow until then (after a CNP).
    slow_until: u64,
    slow_from: u64,
    /// Frames sent: (time as shown, payload).
    sent: Vec<(u64, u32)>,
    /// CE marks' times as shown; CNPs' times as shown.
    first_ce: Option<u64>,
    cnps: Vec<u64>,
}

impl Generator<'_> {
    pub(super) fn run_dcqcn(mut self) -> std::io::Result<Truth> {
        let o = self.opts.clone();
        let bps = o.link_speed_bps;
        let payload = o.pmtu.clamp(256, 4096) as usize;
        let mut senders: Vec<Sender> = (0..3u8)
            .map(|i| Sender {
                follows: (i == 2).then(|| (Vec::new(), 0)),
                conn: Conn {
                    mac_a: [0x02, 0, 0, 0, 0x02, i + 1],
                    mac_b: [0x02, 0, 0, 0, 0x03, 0x01],
                    net: NetSpec::V2Ipv4 {
                        src: std::net::Ipv4Addr::new(10, 0, 2, i + 1),
                        dst: std::net::Ipv4Addr::new(10, 0, 3, 1),
                        dscp: 26,
                        ecn: 2,
                        ttl: 64,
                        sport: 0xc100 | u16::from(i),
                    },
                    qp_a: 0x300 + u32::from(i) * 2,
                    qp_b: 0x5000 + u32::from(i) * 2 + 1,
                    vlan: None,
                },
                psn: Psn::new(u32::from(i) * 0x10_0000),
                t: T0 + u64::from(i) * 53,
                reacts: i == 0,
                slow_until: 0,
                slow_from: 0,
                sent: Vec::new(),
                first_ce: None,
                cnps: Vec::new(),
            })
            .collect();
        let frame_len = {
            let f = senders[0].conn.req(0x0a, 0, payload);
            super::super::conn::bytes(&f).len()
        };
        let frame_ns = ser_ns(frame_len, bps) + GAP_NS;
        let marks = u64::from(o.messages.clamp(1, 10_000));
        // Per sender: the next CE mark, and the marks left.
        let mut next_ce: Vec<u64> = senders
            .iter()
            .map(|s| s.t + 10_000 + self.rng.below(20_000))
            .collect();
        let mut left = vec![marks; senders.len()];
        let mut done = vec![false; senders.len()];
        let mut steps = 0u64;
        // Both senders in time order, written out as they go.
        while let Some(i) = (0..senders.len())
            .filter(|&i| !done[i])
            .min_by_key(|&i| senders[i].t)
        {
            let s = &mut senders[i];
            let slow = s.t >= s.slow_from && s.t < s.slow_until;
            let ce = s.t >= next_ce[i] && left[i] > 0;
            let mut f = s.conn.req(0x0a, s.psn, payload);
            if ce {
                f.net = f.net.with_ecn(3);
            }
            let (t, conn) = (s.t, s.conn);
            self.roce(t, &f);
            let shown = self.shown(t);
            let s = &mut senders[i];
            s.sent.push((shown, payload as u32));
            if ce {
                let key = super::net_src_dst(&conn.net);
                s.first_ce.get_or_insert(shown);
                let cnp_t = t + 4_000;
                s.cnps.push(cnp_t);
                if s.reacts {
                    s.slow_from = cnp_t + 2_000;
                    s.slow_until = cnp_t + 60_000 + self.rng.below(60_000);
                }
                left[i] -= 1;
                next_ce[i] = t + 150_000 + self.rng.below(150_000);
                self.flow((key.0, key.1, conn.qp_b)).ecn_ce += 1;
                self.roce(cnp_t, &conn.cnp());
                self.flow((key.1, key.0, conn.qp_a)).cnps += 1;
            }
            let s = &mut senders[i];
            s.psn = s.psn + 1;
            if let Some((steps, at)) = &mut s.follows {
                if ce {
                    // Future CNPs do not change the past: the run from
                    // every CNP so far, 100 ms on.
                    let end = s.cnps.last().copied().unwrap_or(0) + 100_000_000;
                    *steps = crate::plan::dcqcn(DcqcnParams::PAPER, bps as f64, &s.cnps, end).steps;
                    *at = 0;
                }
                while *at + 1 < steps.len() && steps[*at + 1].t_ns <= s.t {
                    *at += 1;
                }
                let rate = steps
                    .get(*at)
                    .filter(|st| st.t_ns <= s.t)
                    .map_or(bps as f64, |st| st.rate_bps);
                s.t += (frame_ns as f64 * bps as f64 / rate.max(1.0)) as u64;
            } else {
                s.t += if slow { 2 * frame_ns } else { frame_ns };
            }
            if left[i] == 0 && s.t > s.cnps.last().copied().unwrap_or(0) + 100_000 {
                done[i] = true;
            }
            steps += 1;
            if steps.is_multiple_of(1024) {
                let until = senders.iter().map(|s| s.t).min().unwrap_or(0);
                self.drain(until.saturating_sub(10_000))?;
            }
        }
        for s in &mut senders {
            let shown: Vec<u64> = s
                .cnps
                .iter()
                .map(|&c| c - c % self.opts.ts_resolution_ns.max(1))
                .collect();
            s.cnps = shown;
        }
        self.drain(u64::MAX)?;
        let cc = senders
            .iter()
            .map(|s| {
                let (a, b) = super::net_src_dst(&s.conn.net);
                FlowCcTruth {
                    src: a.to_string(),
                    dst: b.to_string(),
                    destqp: s.conn.qp_b,
                    cc: judge(s),
                }
            })
            .collect();
        let flows = self.order.iter().map(|k| self.truth[k].clone()).collect();
        Ok(Truth {
            scenario: o.scenario,
            seed: o.seed,
            frames: self.frames,
            flows,
            pfc: PfcTruth::default(),
            vantage: None,
            nvme: None,
            reactions: None,
            cc: Some(cc),
        })
    }
}

/// The README's definitions, summed over the frames sent.
fn judge(s: &Sender) -> CcReport {
    let mut r = CcReport::default();
    let Some(origin) = s.first_ce else {
        return r;
    };
    let bin = |t: u64| (t - origin) / BIN_NS;
    let last_bin = s.sent.last().map_or(0, |&(t, _)| bin(t.max(origin)));
    let mut per_bin = vec![0u64; last_bin as usize + 1];
    for &(t, n) in &s.sent {
        if t >= origin {
            per_bin[bin(t) as usize] += u64::from(n);
        }
    }
    // Bytes of bins from..to, and whether one is empty (past the last
    // frame: empty).
    let bytes = |from: u64, to: u64| -> (u64, bool) {
        let per = (from..to).map(|k| per_bin.get(k as usize).copied().unwrap_or(0));
        (per.clone().sum(), per.clone().any(|b| b == 0))
    };
    let mut sum = 0.0;
    let mut judged = 0u64;
    // The reacted CNPs and the bytes of their window before.
    let mut reacted = Vec::new();
    for &c in &s.cnps {
        r.cnps += 1;
        if c < origin + WINDOW_NS {
            r.indeterminate += 1;
            r.reasons.no_history += 1;
            continue;
        }
        let cb = bin(c);
        let (before, gap_b) = bytes(cb - 50, cb);
        let a0 = cb + AFTER_DELAY_NS.div_ceil(BIN_NS);
        let (after, gap_a) = bytes(a0, a0 + 50);
        if gap_b || before == 0 {
            r.indeterminate += 1;
            r.reasons.idle += 1;
            continue;
        }
        let ratio = after as f64 / before as f64;
        if ratio <= REACTED {
            r.reacted += 1;
            reacted.push((c, before));
        } else if ratio >= IGNORED && !gap_a {
            r.ignored += 1;
        } else if gap_a {
            r.indeterminate += 1;
            r.reasons.idle += 1;
            continue;
        } else {
            r.indeterminate += 1;
            r.reasons.unclear += 1;
        }
        sum += ratio;
        judged += 1;
    }
    r.mean_ratio = (judged > 0).then(|| sum / judged as f64);
    // Recoveries: from a reacted CNP not yet part of a train, the first
    // window starting 5 µs or more after the last CNP received before the
    // window ended, with payload in every bin and 0.97 of the bytes before
    // the train's first CNP.
    let delay = AFTER_DELAY_NS.div_ceil(BIN_NS);
    let mut total = 0u128;
    let mut absorbed_until = None;
    for &(c, target) in &reacted {
        if absorbed_until.is_some_and(|u| c <= u) {
            continue;
        }
        let mut found = None;
        let mut from = c;
        for start in bin(c) + delay.. {
            let end = start + 50;
            // The window must end before the capture's last frame's bin.
            if end > last_bin {
                break;
            }
            from = s
                .cnps
                .iter()
                .copied()
                .filter(|&x| x >= origin && bin(x) < end)
                .max()
                .unwrap_or(c)
                .max(c);
            if start < bin(from) + delay {
                continue;
            }
            let (b, gap) = bytes(start, end);
            if !gap && b as f64 >= IGNORED * target as f64 {
                found = Some(origin + start * BIN_NS - from);
                break;
            }
        }
        match found {
            Some(took) => {
                r.recoveries += 1;
                r.recovery_max_ns = Some(r.recovery_max_ns.unwrap_or(0).max(took));
                total += u128::from(took);
                absorbed_until = Some(from);
            }
            None => absorbed_until = Some(u64::MAX),
        }
    }
    r.recovery_ns = (r.recoveries > 0).then(|| (total / u128::from(r.recoveries)) as u64);
    r
}
