//! Planning a lossless fabric (`roce-dissect plan`): the PFC headroom a
//! port needs, what a switch buffer leaves for lossy traffic once every
//! lossless priority group has its headroom, and the DCQCN rate
//! controller stepped through a train of CNPs. The formulas and constants
//! are the public ones gathered in `fabric-facts.md` (IEEE 802.3 Annex
//! 31B's response budgets, SONiC's headroom calculator, the DCQCN paper
//! and the mlx5 firmware defaults); every default is an option.

use serde::Serialize;

/// The pause response budget of IEEE 802.3 Annex 31B.3.7, in pause quanta
/// (512 bit times), by link speed in Mb/s, as SONiC tabulates it.
pub const RESPONSE_QUANTA: [(u64, u32); 10] = [
    (100, 1),
    (1_000, 2),
    (10_000, 67),
    (25_000, 80),
    (40_000, 118),
    (50_000, 147),
    (100_000, 394),
    (200_000, 453),
    (400_000, 905),
    (800_000, 905),
];

/// Signal speed in the cable, m/s (SONiC's figure: about 5 ns a metre).
pub const CABLE_MPS: f64 = 1.98e8;

/// The response budget at `bps`, in quanta, and whether the speed is in the
/// table (else the next slower one's budget is used).
pub fn response_quanta(bps: u64) -> (u32, bool) {
    let mbps = bps / 1_000_000;
    let mut best = RESPONSE_QUANTA[0];
    for &(s, q) in &RESPONSE_QUANTA {
        if s <= mbps {
            best = (s, q);
        }
    }
    (best.1, best.0 == mbps)
}

/// What `plan headroom` computes from.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct HeadroomInput {
    pub speed_bps: u64,
    pub cable_m: f64,
    /// The largest lossless frame, bytes.
    pub mtu: u32,
    /// The largest frame the port may be sending when XOFF triggers.
    pub port_mtu: u32,
    /// The switch's buffer cell, bytes.
    pub cell: u32,
    /// Share of small packets (0-100): small packets fill cells badly.
    pub small_packets_pct: u8,
    /// Gearbox (retimer) delay each way, bytes.
    pub gearbox_bytes: u32,
    /// Bytes in the switch's own egress pipeline and PHY when XOFF leaves.
    pub mac_phy_bytes: u32,
    /// The XON hysteresis (the switch's pipeline latency), bytes.
    pub pipeline_bytes: u32,
}

impl Default for HeadroomInput {
    fn default() -> Self {
        HeadroomInput {
            speed_bps: 100_000_000_000,
            cable_m: 100.0,
            mtu: 4200,
            port_mtu: 4200,
            cell: 96,
            small_packets_pct: 0,
            gearbox_bytes: 0,
            mac_phy_bytes: 819,
            pipeline_bytes: 18 * 1024,
        }
    }
}

/// The headroom of one lossless priority group, term by term.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Headroom {
    pub input: HeadroomInput,
    /// The paused sender's response budget, in quanta and bytes.
    pub response_quanta: u32,
    pub response_bytes: f64,
    /// Bytes on the cable in one round trip.
    pub cable_bytes: f64,
    /// Everything that arrives after XOFF: port MTU, cable round trip,
    /// gearboxes, MAC/PHY, the sender's response.
    pub propagation_bytes: f64,
    /// How much more buffer than their bytes small packets take.
    pub cell_factor: f64,
    pub occupancy: f64,
    /// Above the XOFF threshold: the lossless MTU plus the propagation
    /// times the occupancy, rounded up to 1 KiB.
    pub xoff_bytes: u64,
    /// The XON hysteresis, rounded up to 1 KiB.
    pub xon_bytes: u64,
    pub total_bytes: u64,
    /// The defaults it assumed, in words.
    pub assumed: Vec<String>,
}

fn ceil_1024(x: f64) -> u64 {
    ((x / 1024.0).ceil() as u64) * 1024
}

/// SONiC's headroom formula (its NVIDIA calculator), with the response
/// budget from IEEE 802.3 Annex 31B.
pub fn headroom(input: HeadroomInput, assumed: Vec<String>) -> Headroom {
    let (quanta, exact) = response_quanta(input.speed_bps);
    let mut assumed = assumed;
    if !exact {
        assumed.push(format!(
            "{} Gb/s is not in 802.3's table: the response budget of the next slower speed ({quanta} quanta)",
            input.speed_bps as f64 / 1e9
        ));
    }
    let bps = input.speed_bps as f64;
    let response_bytes = f64::from(quanta) * 512.0 / 8.0;
    let cable_bytes = 2.0 * input.cable_m / CABLE_MPS * bps / 8.0;
    let propagation_bytes = f64::from(input.port_mtu)
        + cable_bytes
        + 2.0 * f64::from(input.gearbox_bytes)
        + f64::from(input.mac_phy_bytes)
        + response_bytes;
    let cell = f64::from(input.cell.max(1));
    let cell_factor = if input.cell > 128 {
        cell / 64.0
    } else {
        2.0 * cell / (1.0 + cell)
    };
    let small = f64::from(input.small_packets_pct.min(100));
    let occupancy = (100.0 - small + small * cell_factor) / 100.0;
    let xoff_bytes = ceil_1024(f64::from(input.mtu) + propagation_bytes * occupancy);
    let xon_bytes = ceil_1024(f64::from(input.pipeline_bytes));
    Headroom {
        response_quanta: quanta,
        response_bytes,
        cable_bytes,
        propagation_bytes,
        cell_factor,
        occupancy,
        xoff_bytes,
        xon_bytes,
        total_bytes: xoff_bytes + xon_bytes,
        assumed,
        input,
    }
}

/// What a shared buffer leaves once every lossless priority group of every
/// port has its headroom (`plan pfc`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PfcPlan {
    pub buffer_bytes: u64,
    pub ports: u32,
    pub lossless_priorities: Vec<u8>,
    /// One priority group's headroom (the same on every port).
    pub headroom: Headroom,
    /// Per port: every lossless group's xoff + xon.
    pub per_port_bytes: u64,
    /// All ports.
    pub reserved_bytes: u64,
    /// What the shared pool keeps for lossy traffic (and for the lossless
    /// groups below XOFF); negative when the headroom does not fit.
    pub left_bytes: i64,
    pub left_share: f64,
}

pub fn pfc(buffer_bytes: u64, ports: u32, lossless: Vec<u8>, headroom: Headroom) -> PfcPlan {
    let per_port = headroom.total_bytes * lossless.len() as u64;
    let reserved = per_port * u64::from(ports);
    let left = buffer_bytes as i64 - reserved as i64;
    PfcPlan {
        buffer_bytes,
        ports,
        lossless_priorities: lossless,
        per_port_bytes: per_port,
        reserved_bytes: reserved,
        left_bytes: left,
        left_share: left as f64 / buffer_bytes.max(1) as f64,
        headroom,
    }
}

/// The reaction point's constants.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct DcqcnParams {
    pub name: &'static str,
    /// Alpha's gain.
    pub g: f64,
    /// Alpha decays by (1 - g) every this many ns without a CNP.
    pub alpha_period_ns: u64,
    pub initial_alpha: f64,
    /// The rate-increase timer.
    pub timer_ns: u64,
    /// The byte counter (0: off).
    pub byte_counter: u64,
    /// Fast-recovery stages.
    pub f: u32,
    pub ai_bps: f64,
    pub hai_bps: f64,
    /// No single cut below this share of the rate.
    pub min_dec: f64,
    pub min_rate_bps: f64,
}

impl DcqcnParams {
    /// The mlx5 firmware defaults (the byte counter's unit is firmware
    /// specific: off, the timer alone raises the rate).
    pub const MLX5: DcqcnParams = DcqcnParams {
        name: "mlx5",
        g: 5.0 / 1024.0,
        alpha_period_ns: 1_000,
        initial_alpha: 1023.0 / 1024.0,
        timer_ns: 300_000,
        byte_counter: 0,
        f: 5,
        ai_bps: 5e6,
        hai_bps: 50e6,
        min_dec: 0.5,
        min_rate_bps: 1e6,
    };
    /// The DCQCN paper's constants.
    pub const PAPER: DcqcnParams = DcqcnParams {
        name: "paper",
        g: 1.0 / 256.0,
        alpha_period_ns: 55_000,
        initial_alpha: 1.0,
        timer_ns: 55_000,
        byte_counter: 10_000_000,
        f: 5,
        ai_bps: 40e6,
        hai_bps: 200e6,
        min_dec: 0.0,
        min_rate_bps: 1e6,
    };

    pub fn named(name: &str) -> Option<DcqcnParams> {
        match name {
            "mlx5" => Some(Self::MLX5),
            "paper" => Some(Self::PAPER),
            _ => None,
        }
    }
}

/// One step of the rate controller.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct DcqcnStep {
    pub t_ns: u64,
    /// `cnp`, `timer`, `bytes` (the byte counter), or `end`.
    pub event: &'static str,
    pub rate_bps: f64,
    pub target_bps: f64,
    pub alpha: f64,
}

/// The controller's run: its steps (CNPs and rate increases) and when the
/// rate came back within 1 % of line rate after the last CNP.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DcqcnRun {
    pub params: DcqcnParams,
    pub line_bps: f64,
    pub cnps_ns: Vec<u64>,
    pub steps: Vec<DcqcnStep>,
    /// From the last CNP to the rate within 1 % of line rate.
    pub recovery_ns: Option<u64>,
}

/// Steps the reaction point at line rate `line_bps` through CNPs at
/// `cnps_ns` (sorted) until `end_ns`.
pub fn dcqcn(p: DcqcnParams, line_bps: f64, cnps_ns: &[u64], end_ns: u64) -> DcqcnRun {
    let mut rc = line_bps;
    let mut rt = line_bps;
    let mut alpha = p.initial_alpha;
    let (mut t_stage, mut b_stage) = (0u32, 0u32);
    let mut steps = Vec::new();
    let mut cnps = cnps_ns.to_vec();
    cnps.sort_unstable();
    let mut next_cnp = 0usize;
    // Time of the last alpha update, the timer's start, bytes since the
    // byte counter's last event; `cut` once a CNP arrived.
    let mut alpha_at = 0u64;
    let mut timer_at = 0u64;
    let mut bytes = 0f64;
    let mut now = 0u64;
    let mut cut = false;
    // Alpha changes from the first CNP on (before it the flow is not rate
    // limited).
    let mut started = false;
    let mut recovered = None;
    loop {
        let cnp_t = cnps.get(next_cnp).copied();
        let timer_t = cut.then_some(timer_at.saturating_add(p.timer_ns));
        let bytes_t = (cut && p.byte_counter > 0 && rc > 0.0).then(|| {
            let left = (p.byte_counter as f64 - bytes).max(0.0);
            now.saturating_add((left * 8.0 / rc * 1e9).ceil() as u64)
        });
        let t = [cnp_t, timer_t, bytes_t, Some(end_ns)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(end_ns);
        // Bytes sent and alpha's decay until `t`.
        bytes += rc * (t - now) as f64 / 8e9;
        if started && p.alpha_period_ns > 0 && t > alpha_at {
            let periods = (t - alpha_at) / p.alpha_period_ns;
            alpha *= (1.0 - p.g).powi(periods.min(i32::MAX as u64) as i32);
            alpha_at += periods * p.alpha_period_ns;
        }
        now = t;
        if t >= end_ns && cnp_t.is_none_or(|c| c > end_ns) {
            steps.push(DcqcnStep {
                t_ns: t,
                event: "end",
                rate_bps: rc,
                target_bps: rt,
                alpha,
            });
            break;
        }
        let event = if cnp_t == Some(t) {
            next_cnp += 1;
            rt = rc;
            rc = (rc * (1.0 - alpha / 2.0))
                .max(rc * p.min_dec)
                .max(p.min_rate_bps);
            alpha = (1.0 - p.g) * alpha + p.g;
            alpha_at = t;
            timer_at = t;
            bytes = 0.0;
            (t_stage, b_stage) = (0, 0);
            cut = true;
            started = true;
            recovered = None;
            "cnp"
        } else {
            let by_timer = timer_t == Some(t);
            if by_timer {
                t_stage += 1;
                timer_at = t;
            } else {
                b_stage += 1;
                bytes = 0.0;
            }
            let (lo, hi) = (t_stage.min(b_stage), t_stage.max(b_stage));
            if hi <= p.f {
                // Fast recovery: towards the target.
            } else if lo > p.f {
                rt += f64::from(lo - p.f) * p.hai_bps;
            } else {
                rt += p.ai_bps;
            }
            rt = rt.min(line_bps);
            rc = ((rt + rc) / 2.0).min(line_bps);
            if by_timer { "timer" } else { "bytes" }
        };
        steps.push(DcqcnStep {
            t_ns: t,
            event,
            rate_bps: rc,
            target_bps: rt,
            alpha,
        });
        if recovered.is_none() && next_cnp == cnps.len() && cut && rc >= 0.99 * line_bps {
            recovered = Some(t - cnps.last().copied().unwrap_or(0));
            // Nothing changes after full recovery but alpha.
            if rc >= line_bps {
                cut = false;
            }
        }
    }
    DcqcnRun {
        params: p,
        line_bps,
        cnps_ns: cnps,
        steps,
        recovery_ns: recovered,
    }
}

/// Rows of a replay at most.
const MAX_ROWS: u64 = 1_000_000;

/// Bins kept of a replayed flow's payload: past it, bins double in width.
const MAX_BINS: usize = 1 << 16;

/// A flow's payload over time, in bins that start at 1 µs and widen
/// (pairs merged) to stay within `MAX_BINS`.
#[derive(Debug, Clone)]
pub struct Observed {
    pub origin_ns: u64,
    pub bin_ns: u64,
    pub bytes: Vec<u64>,
    pub end_ns: u64,
}

impl Observed {
    pub fn new(origin_ns: u64) -> Self {
        Observed {
            origin_ns,
            bin_ns: 1_000,
            bytes: Vec::new(),
            end_ns: origin_ns,
        }
    }

    /// `bytes` of payload at `ts` (frames in time order; earlier ones
    /// count in the first bin).
    pub fn add(&mut self, ts: u64, bytes: u64) {
        self.end_ns = self.end_ns.max(ts);
        let mut k = ts.saturating_sub(self.origin_ns) / self.bin_ns;
        while k >= MAX_BINS as u64 {
            let merged: Vec<u64> = self.bytes.chunks(2).map(|c| c.iter().sum()).collect();
            self.bytes = merged;
            self.bin_ns = self.bin_ns.saturating_mul(2);
            k = ts.saturating_sub(self.origin_ns) / self.bin_ns;
        }
        if self.bytes.len() <= k as usize {
            self.bytes.resize(k as usize + 1, 0);
        }
        self.bytes[k as usize] = self.bytes[k as usize].saturating_add(bytes);
    }

    /// Payload in the bins from `from_ns` to `to_ns` (both on bin edges,
    /// relative to the origin).
    fn sum(&self, from_ns: u64, to_ns: u64) -> u64 {
        let (a, b) = (from_ns / self.bin_ns, to_ns.div_ceil(self.bin_ns));
        (a..b).filter_map(|k| self.bytes.get(k as usize)).sum()
    }
}

/// One row of a replay: a step of time, the CNPs in it, the rate the
/// controller expects and the flow's payload rate.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct ReplayRow {
    /// The row's start, from the first CNP (negative before it).
    pub t_ns: i64,
    pub cnps: u64,
    pub expected_bps: f64,
    pub observed_bps: f64,
}

/// `plan dcqcn --from`: the CNPs one flow's sender received replayed
/// through the reaction point, against the rate the flow kept.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DcqcnReplay {
    pub line_bps: f64,
    /// `--speed`, or `observed`: the flow's payload rate in the window
    /// before its first CNP.
    pub line_from: &'static str,
    /// The first CNP's timestamp; rows and CNPs count from it.
    pub first_cnp_ts_ns: u64,
    pub step_ns: u64,
    pub rows: Vec<ReplayRow>,
    /// From the last CNP to the expected rate at 0.97 of the start rate.
    pub expected_recovery_ns: Option<u64>,
    /// The mean observed / expected over the rows from the first CNP on
    /// (rows with payload), and how many of them are within 10 %.
    pub mean_ratio: Option<f64>,
    pub rows_within_10pct: u64,
    pub rows_compared: u64,
    pub run: DcqcnRun,
}

/// A step of about `span / rows`, rounded up to 1, 2 or 5 times a power
/// of ten and to a whole number of `grain`.
fn nice_step(span: u64, rows: u64, grain: u64) -> u64 {
    let raw = (span / rows.max(1)).max(1);
    let mut p = 1u64;
    let step = loop {
        if let Some(s) = [1, 2, 5].iter().map(|m| m * p).find(|&s| s >= raw) {
            break s;
        }
        p = p.saturating_mul(10);
    };
    step.div_ceil(grain.max(1)) * grain.max(1)
}

/// Replays `cnps_ns` (timestamps, sorted) through the reaction point with
/// constants `p`; `line_bps` of `None` takes the flow's payload rate in the
/// `window_ns` before the first CNP. Rows of `step_ns` (or about 60 of the
/// flow's time from `window_ns` before the first CNP) to its last frame.
pub fn dcqcn_replay(
    p: DcqcnParams,
    line_bps: Option<f64>,
    observed: &Observed,
    cnps_ns: &[u64],
    window_ns: u64,
    step_ns: Option<u64>,
) -> Result<DcqcnReplay, String> {
    let Some(&first) = cnps_ns.first() else {
        return Err("the flow's sender received no CNPs".into());
    };
    let last = cnps_ns.last().copied().unwrap_or(first);
    let origin = observed.origin_ns;
    // Rows start on a bin edge a window before the first CNP.
    let grain = observed.bin_ns;
    let start_rel = first.saturating_sub(origin).saturating_sub(window_ns) / grain * grain;
    let end_rel = observed
        .end_ns
        .max(last)
        .saturating_sub(origin)
        .saturating_add(1);
    let step = match step_ns {
        Some(s) => s.div_ceil(grain).max(1).saturating_mul(grain),
        None => nice_step(end_rel - start_rel, 60, grain),
    };
    let (line, line_from) = match line_bps {
        Some(l) => (l, "--speed"),
        None => {
            let to = first.saturating_sub(origin) / grain * grain;
            let from = to.saturating_sub(window_ns.div_ceil(grain) * grain);
            let b = observed.sum(from, to);
            if b == 0 || to == from {
                return Err(
                    "the flow sent nothing in the window before its first CNP: give its line rate with --speed"
                        .into(),
                );
            }
            (b as f64 * 8e9 / (to - from) as f64, "observed")
        }
    };
    // The controller's clock starts with the rows.
    let sim0 = origin.saturating_add(start_rel);
    let rel: Vec<u64> = cnps_ns.iter().map(|&c| c.saturating_sub(sim0)).collect();
    let run = dcqcn(p, line, &rel, end_rel - start_rel);
    if (end_rel - start_rel) / step > MAX_ROWS {
        return Err(format!(
            "--step {} ns makes more than {MAX_ROWS} rows of the flow's time",
            step
        ));
    }
    // The time-weighted mean of the controller's rate over from..to, rows
    // in order: the steps are walked once.
    let (mut i, mut rate) = (0usize, line);
    let mut rate_avg = |from: u64, to: u64| {
        let mut acc = 0.0;
        let mut t = from;
        while i < run.steps.len() && run.steps[i].t_ns <= from {
            rate = run.steps[i].rate_bps;
            i += 1;
        }
        while t < to {
            let next = run.steps.get(i).map_or(to, |s| s.t_ns.min(to));
            acc += rate * next.saturating_sub(t) as f64;
            t = next;
            if let Some(s) = run.steps.get(i)
                && s.t_ns <= t
            {
                rate = s.rate_bps;
                i += 1;
            }
        }
        acc / (to - from).max(1) as f64
    };
    let mut rows = Vec::new();
    let mut k = 0u64;
    let (mut ratio_sum, mut compared, mut within) = (0.0, 0u64, 0u64);
    let mut c = 0usize;
    loop {
        let a = start_rel.saturating_add(k.saturating_mul(step));
        if a >= end_rel {
            break;
        }
        let b = a.saturating_add(step).min(end_rel);
        let mut n = 0;
        while c < cnps_ns.len() && cnps_ns[c] < origin.saturating_add(b) {
            n += 1;
            c += 1;
        }
        let observed_bps = observed.sum(a, b) as f64 * 8e9 / (b - a) as f64;
        let expected_bps = rate_avg(a - start_rel, b - start_rel);
        let t_ns = (i128::from(origin) + i128::from(a) - i128::from(first))
            .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        if origin.saturating_add(b) > first && observed_bps > 0.0 && expected_bps > 0.0 {
            let r = observed_bps / expected_bps;
            ratio_sum += r;
            compared += 1;
            within += u64::from((r - 1.0).abs() <= 0.1);
        }
        rows.push(ReplayRow {
            t_ns,
            cnps: n,
            expected_bps,
            observed_bps,
        });
        k += 1;
    }
    let last_rel = last.saturating_sub(sim0);
    let expected_recovery_ns = run
        .steps
        .iter()
        .find(|s| {
            s.t_ns >= last_rel && !matches!(s.event, "cnp" | "end") && s.rate_bps >= 0.97 * line
        })
        .map(|s| s.t_ns - last_rel);
    Ok(DcqcnReplay {
        line_bps: line,
        line_from,
        first_cnp_ts_ns: first,
        step_ns: step,
        rows,
        expected_recovery_ns,
        mean_ratio: (compared > 0).then(|| ratio_sum / compared as f64),
        rows_within_10pct: within,
        rows_compared: compared,
        run,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_response_budget_at_100g_is_25216_bytes() {
        assert_eq!(response_quanta(100_000_000_000), (394, true));
        assert_eq!(response_quanta(400_000_000_000), (905, true));
        assert_eq!(response_quanta(56_000_000_000), (147, false));
        let h = headroom(HeadroomInput::default(), Vec::new());
        assert_eq!(h.response_bytes, 25_216.0);
        // 2.02 µs at 100 Gb/s.
        assert!((h.response_bytes * 8.0 / 100e9 * 1e9 - 2017.3).abs() < 0.1);
        // About 5 ns a metre, both ways: 100 m is 1.01 µs of 100G.
        assert!(
            (h.cable_bytes - 12_626.26).abs() < 0.01,
            "{}",
            h.cable_bytes
        );
    }

    #[test]
    fn headroom_against_the_vendor_datapoints() {
        // mlxsw: about 101.6 KB for 100G and 100 m of cable (jumbo
        // frames, the worst cell use).
        let worst = |speed: u64, cable: f64| {
            headroom(
                HeadroomInput {
                    speed_bps: speed,
                    cable_m: cable,
                    mtu: 9216,
                    port_mtu: 9216,
                    small_packets_pct: 100,
                    ..HeadroomInput::default()
                },
                Vec::new(),
            )
        };
        let h = worst(100_000_000_000, 100.0);
        let kb = h.xoff_bytes as f64 / 1000.0;
        assert!((kb - 101.6).abs() / 101.6 < 0.05, "{kb} KB");
        // Each term: the port MTU, the cable, MAC/PHY, the response.
        assert!((h.propagation_bytes - (9216.0 + 12_626.26 + 819.0 + 25_216.0)).abs() < 0.01);
        // Longer cables and faster links need more; a normal mix of
        // packet sizes less than the worst case.
        assert!(worst(100_000_000_000, 300.0).xoff_bytes > h.xoff_bytes);
        assert!(worst(400_000_000_000, 100.0).xoff_bytes > h.xoff_bytes);
        assert!(headroom(HeadroomInput::default(), Vec::new()).xoff_bytes < h.xoff_bytes);
        // 40G worst case: tens of KB (a Dell guide: about 76 KB per
        // lossless group, with its longest cable).
        let w40 = worst(40_000_000_000, 300.0).xoff_bytes as f64 / 1000.0;
        assert!((w40 - 76.0).abs() / 76.0 < 0.05, "{w40} KB");
    }

    #[test]
    fn a_buffer_leaves_what_the_headroom_does_not_take() {
        let h = headroom(HeadroomInput::default(), Vec::new());
        let p = pfc(32 << 20, 32, vec![3, 4], h.clone());
        assert_eq!(p.per_port_bytes, 2 * h.total_bytes);
        assert_eq!(p.reserved_bytes, 64 * h.total_bytes);
        assert_eq!(p.left_bytes, (32 << 20) - 64 * h.total_bytes as i64);
        let tight = pfc(1 << 20, 64, vec![3], h);
        assert!(tight.left_bytes < 0);
    }

    #[test]
    fn dcqcn_recovers_as_the_mlx5_vector_says() {
        // One CNP at 100 Gb/s: 50, then 75, 87.5, 93.75, 96.9, 98.4,
        // 99.2 Gb/s at +300 µs steps.
        let r = dcqcn(DcqcnParams::MLX5, 100e9, &[0], 2_100_000);
        let rates: Vec<f64> = r
            .steps
            .iter()
            .filter(|s| s.event != "end")
            .map(|s| (s.rate_bps / 1e8).round() / 10.0)
            .collect();
        assert_eq!(&rates[..7], &[50.0, 75.0, 87.5, 93.8, 96.9, 98.4, 99.2]);
        let times: Vec<u64> = r.steps.iter().map(|s| s.t_ns).take(7).collect();
        assert_eq!(
            times,
            [
                0, 300_000, 600_000, 900_000, 1_200_000, 1_500_000, 1_800_000
            ]
        );
        assert_eq!(r.recovery_ns, Some(1_800_000));
        // Alpha halves in about 142 µs without CNPs (mlx5), 9.7 ms
        // (paper).
        let half = |p: DcqcnParams| {
            let n = (0.5f64).ln() / (1.0 - p.g).ln();
            n * p.alpha_period_ns as f64
        };
        assert!((half(DcqcnParams::MLX5) / 1e3 - 142.0).abs() < 1.0);
        assert!((half(DcqcnParams::PAPER) / 1e6 - 9.7).abs() < 0.1);
    }

    #[test]
    fn observed_bins_widen_and_keep_every_byte() {
        let mut o = Observed::new(1_000);
        for k in 0..200_000u64 {
            o.add(1_000 + k * 1_000, 10);
        }
        assert!(o.bytes.len() <= MAX_BINS);
        assert_eq!(o.bin_ns, 4_000);
        assert_eq!(o.bytes.iter().sum::<u64>(), 2_000_000);
        assert_eq!(o.sum(0, 8_000), 80);
        assert_eq!(nice_step(11_000_000, 60, 1_000), 200_000);
        assert_eq!(nice_step(100, 60, 1_000), 1_000);
    }

    #[test]
    fn a_flow_that_sends_what_the_controller_allows_replays_at_ratio_one() {
        // A flow at 50 Gb/s of payload (6.25 bytes a ns) that follows the
        // mlx5 reaction point from CNPs at 100 and 400 µs.
        let cnps = [100_000u64, 400_000];
        let run = dcqcn(DcqcnParams::MLX5, 50e9, &cnps, 3_000_000);
        let mut o = Observed::new(0);
        let mut t = 0u64;
        while t < 3_000_000 {
            let rate = run
                .steps
                .iter()
                .rfind(|s| s.t_ns <= t)
                .filter(|_| t >= cnps[0])
                .map_or(50e9, |s| s.rate_bps);
            o.add(t, (rate / 8e9 * 100.0) as u64);
            t += 100;
        }
        let r = dcqcn_replay(DcqcnParams::MLX5, None, &o, &cnps, 50_000, None).unwrap();
        assert!((r.line_bps - 50e9).abs() / 50e9 < 0.001, "{}", r.line_bps);
        assert!(
            (r.mean_ratio.unwrap() - 1.0).abs() < 0.01,
            "{:?}",
            r.mean_ratio
        );
        assert_eq!(r.rows_within_10pct, r.rows_compared);
        assert_eq!(r.rows.iter().map(|x| x.cnps).sum::<u64>(), 2);
        // Against the paper's constants (a 55 µs timer, not 300 µs) the
        // same flow comes back too slowly.
        let paper = dcqcn_replay(DcqcnParams::PAPER, None, &o, &cnps, 50_000, None).unwrap();
        assert!(paper.mean_ratio.unwrap() < 0.8, "{:?}", paper.mean_ratio);
        // No CNPs, or nothing before the first one.
        assert!(dcqcn_replay(DcqcnParams::MLX5, None, &o, &[], 50_000, None).is_err());
        let late = Observed::new(200_000);
        assert!(dcqcn_replay(DcqcnParams::MLX5, None, &late, &cnps, 50_000, None).is_err());
    }

    #[test]
    fn cnps_in_a_row_cut_deeper_and_alpha_grows_back() {
        let one = dcqcn(DcqcnParams::PAPER, 100e9, &[0], 1_000_000);
        let three = dcqcn(DcqcnParams::PAPER, 100e9, &[0, 10_000, 20_000], 1_000_000);
        let after = |r: &DcqcnRun, t: u64| {
            r.steps
                .iter()
                .rfind(|s| s.t_ns <= t)
                .map(|s| s.rate_bps)
                .unwrap()
        };
        assert!(after(&three, 30_000) < after(&one, 30_000));
        // The paper's first cut halves the rate (alpha starts at 1).
        assert_eq!(one.steps[0].rate_bps, 50e9);
        // Never above line rate, never below the minimum.
        for s in &three.steps {
            assert!(s.rate_bps <= 100e9 && s.rate_bps >= 1e6);
        }
    }
}
