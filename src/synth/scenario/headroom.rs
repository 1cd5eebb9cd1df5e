//! `gen --scenario pfc-headroom`: two senders stream RDMA WRITEs on
//! priority 3 to two switch ports, and each port pauses its sender again
//! and again (PFC XOFF, then XON). The first sender stops within the
//! budget a paused sender has (its response time, the cable's round trip,
//! one frame); the second goes on sending for several microseconds. A
//! third port pauses with nothing in flight towards it. The truth states
//! every pause's reaction as the capture shows it.

use super::{ACK_DELAY_NS, GAP_NS, Generator, IntervalTruth, PfcTruth, T0, Truth, ser_ns};
use crate::analysis::pfc::{Reaction, ReactionLimits, ReactionSummary, ReactionVerdict};
use crate::synth::conn::Conn;
use crate::synth::frame::{NetSpec, build_pfc};
use crate::wire::AckKind;
use crate::wire::Psn;

const PORT_MACS: [[u8; 6]; 3] = [
    [0x02, 0x5e, 0x00, 0x00, 0x01, 0x01],
    [0x02, 0x5e, 0x00, 0x00, 0x01, 0x02],
    [0x02, 0x5e, 0x00, 0x00, 0x01, 0x03],
];

/// One sender's stream and its pauses.
struct Stream {
    conn: Conn,
    port: [u8; 6],
    psn: Psn,
    msn: u32,
    /// Next frame's time.
    t: u64,
    /// Stops in time (else keeps sending past the budget).
    prompt: bool,
}

impl Generator<'_> {
    pub(super) fn run_pfc_headroom(mut self) -> std::io::Result<Truth> {
        let o = self.opts.clone();
        let bps = o.link_speed_bps;
        let payload = o.pmtu.clamp(256, 4096) as usize;
        let mut streams: Vec<Stream> = (0..2u8)
            .map(|i| Stream {
                conn: Conn {
                    mac_a: [0x02, 0, 0, 0, 0x01, i + 1],
                    mac_b: PORT_MACS[usize::from(i)],
                    net: NetSpec::V2Ipv4 {
                        src: std::net::Ipv4Addr::new(10, 0, 0, i + 1),
                        dst: std::net::Ipv4Addr::new(10, 0, 1, i + 1),
                        dscp: 26,
                        ecn: 2,
                        ttl: 64,
                        sport: 0xc000 | u16::from(i),
                    },
                    qp_a: 0x100 + u32::from(i) * 2,
                    qp_b: 0x4000 + u32::from(i) * 2 + 1,
                    vlan: None,
                },
                port: PORT_MACS[usize::from(i)],
                psn: Psn::new(u32::from(i) * 0x1000),
                msn: 0,
                t: T0 + u64::from(i) * 37,
                prompt: i == 0,
            })
            .collect();
        let frame_len = {
            let f = streams[0].conn.req(0x0a, 0, payload);
            super::super::conn::bytes(&f).len() as u32
        };
        let frame_ns = ser_ns(frame_len as usize, bps) + GAP_NS;
        let limits = ReactionLimits::default();
        let budget = limits.budget_ns(bps, frame_len);
        let pauses = u64::from(o.messages.clamp(1, 10_000));
        let mut truth: Vec<(IntervalTruth, Reaction)> = Vec::new();
        let mut summaries = [ReactionSummary::default(); 3];

        // A pause with nothing in flight towards its port.
        let idle_at = T0 + 5_000;
        self.pfc_frame(PORT_MACS[2], 65535, idle_at);
        self.pfc_frame(PORT_MACS[2], 0, idle_at + 8_000);
        truth.push((
            IntervalTruth {
                src_mac: crate::output::json::mac_string(&PORT_MACS[2]),
                priority: Some(3),
                start_ns: self.shown(idle_at),
                end_ns: self.shown(idle_at + 8_000),
                ended_by: "xon",
            },
            Reaction {
                frames: 0,
                bytes: 0,
                stop_ns: 0,
                // Nothing seen before it closed but nothing at all: the
                // default MTU.
                budget_ns: limits.budget_ns(bps, crate::analysis::pfc::DEFAULT_MTU),
                verdict: ReactionVerdict::None,
                exceeded: None,
            },
        ));
        summaries[2] = ReactionSummary {
            pauses: 1,
            ..ReactionSummary::default()
        };
        // Streams start after it, so its budget assumes the default MTU.
        for s in &mut streams {
            s.t += 20_000;
        }

        for round in 0..pauses {
            for (i, s) in streams.iter_mut().enumerate() {
                // Some frames before the pause.
                let before = 4 + self.rng.below(12);
                for _ in 0..before {
                    self.hr_send(s, payload, frame_ns);
                }
                // XOFF between two frames, not on one.
                let xoff = s.t - frame_ns / 2;
                // The sender goes on: within its budget (less one frame and
                // the cable's round trip), or well past it.
                let go_on = if s.prompt {
                    self.rng
                        .below(budget.saturating_sub(frame_ns + 1_100).max(1))
                } else {
                    budget + 2_000 + self.rng.below(10_000)
                };
                let mut frames = 0u64;
                let mut last_end = self.shown(xoff);
                while s.t < xoff + go_on {
                    let at = s.t;
                    self.hr_send(s, payload, frame_ns);
                    frames += 1;
                    let wire = u64::from(frame_len) + 20;
                    let end = self.shown(at) + (wire * 8_000_000_000).div_ceil(bps);
                    last_end = last_end.max(end);
                }
                let pause_len = 20_000 + self.rng.below(30_000);
                let xon = (xoff + pause_len).max(s.t + 1_000);
                self.pfc_frame(s.port, 65535, xoff);
                self.pfc_frame(s.port, 0, xon);
                s.t = xon + 2_000;
                let stop_ns = if frames > 0 {
                    last_end - self.shown(xoff)
                } else {
                    0
                };
                let reaction = Reaction {
                    frames,
                    bytes: frames * (u64::from(frame_len) + 20),
                    stop_ns,
                    budget_ns: budget,
                    verdict: match frames {
                        0 => ReactionVerdict::None,
                        _ if stop_ns > budget => ReactionVerdict::Late,
                        _ => ReactionVerdict::Ok,
                    },
                    exceeded: None,
                };
                let sm = &mut summaries[i];
                sm.pauses += 1;
                sm.max_bytes = sm.max_bytes.max(reaction.bytes);
                sm.max_stop_ns = sm.max_stop_ns.max(stop_ns);
                sm.late += u64::from(reaction.verdict == ReactionVerdict::Late);
                truth.push((
                    IntervalTruth {
                        src_mac: crate::output::json::mac_string(&s.port),
                        priority: Some(3),
                        start_ns: self.shown(xoff),
                        end_ns: self.shown(xon),
                        ended_by: "xon",
                    },
                    reaction,
                ));
                let _ = round;
            }
            let until = streams.iter().map(|s| s.t).min().unwrap_or(0);
            self.drain(until.saturating_sub(100_000))?;
        }
        self.drain(u64::MAX)?;
        truth.sort_by_key(|(i, _)| (i.start_ns, i.src_mac.clone()));
        let flows = self.order.iter().map(|k| self.truth[k].clone()).collect();
        let (intervals, reactions): (Vec<_>, Vec<_>) = truth.into_iter().unzip();
        Ok(Truth {
            scenario: o.scenario,
            seed: o.seed,
            frames: self.frames,
            flows,
            pfc: PfcTruth { intervals },
            vantage: None,
            nvme: None,
            reactions: Some(super::ReactionTruth {
                intervals: reactions,
                summary: PORT_MACS
                    .iter()
                    .zip(summaries)
                    .map(|(m, s)| (crate::output::json::mac_string(m), s))
                    .collect(),
            }),
            cc: None,
        })
    }

    /// A WRITE ONLY of `payload` bytes from `s`, and its ACK.
    fn hr_send(&mut self, s: &mut Stream, payload: usize, frame_ns: u64) {
        let f = s.conn.req(0x0a, s.psn, payload);
        self.roce(s.t, &f);
        s.msn += 1;
        let ack = s.conn.ack(s.psn, AckKind::Ack, 31, s.msn);
        self.roce(s.t + ACK_DELAY_NS, &ack);
        s.psn = s.psn + 1;
        s.t += frame_ns;
    }

    /// A PFC frame from `mac` on priority 3.
    fn pfc_frame(&mut self, mac: [u8; 6], quanta: u16, t: u64) {
        let mut times = [0u16; 8];
        times[3] = quanta;
        let mut v = Vec::new();
        build_pfc(mac, 1 << 3, times, &mut v);
        self.push(t, v);
    }
}
