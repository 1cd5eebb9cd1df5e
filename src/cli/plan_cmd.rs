//! `roce-dissect plan`: the PFC headroom of a port, what a buffer leaves
//! once the lossless groups have theirs, and the DCQCN rate controller
//! through a train of CNPs (formulas in [`crate::plan`]).

use std::io::{self, BufWriter, Write};

use super::RunError;
use super::args::{HeadroomArgs, PlanArgs, PlanCommand};
use crate::output::packets::human_ns;
use crate::output::report::human_bytes;
use crate::plan::{self, DcqcnParams, Headroom, HeadroomInput};

pub fn run(args: &PlanArgs) -> Result<(), RunError> {
    let mut out = BufWriter::new(io::stdout().lock());
    match &args.command {
        PlanCommand::Headroom(a) => {
            let h = headroom_of(&a.headroom);
            if a.json {
                json(&mut out, &h)?;
            } else {
                write_headroom(&mut out, &h)?;
            }
        }
        PlanCommand::Pfc(a) => {
            let mut lossless = a.lossless.clone();
            lossless.sort_unstable();
            lossless.dedup();
            let p = plan::pfc(a.buffer, a.ports, lossless, headroom_of(&a.headroom));
            if a.json {
                json(&mut out, &p)?;
            } else {
                write_pfc(&mut out, &p)?;
            }
        }
        PlanCommand::Dcqcn(a) => {
            let params = DcqcnParams::named(&a.params).ok_or_else(|| {
                RunError::Usage(format!("--params '{}': mlx5 or paper", a.params))
            })?;
            let mut cnps = a.cnp.clone();
            cnps.sort_unstable();
            let last = cnps.last().copied().unwrap_or(0);
            let end = a.duration.unwrap_or(last + 3_000_000);
            if end < last {
                return Err(RunError::Usage(format!(
                    "--duration {} ends before the last CNP ({})",
                    human_ns(end),
                    human_ns(last)
                )));
            }
            let r = plan::dcqcn(params, a.speed as f64, &cnps, end);
            if a.json {
                json(&mut out, &r)?;
            } else {
                write_dcqcn(&mut out, &r)?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

fn json<T: serde::Serialize>(out: &mut impl Write, v: &T) -> Result<(), RunError> {
    serde_json::to_writer_pretty(&mut *out, v).map_err(io::Error::other)?;
    writeln!(out)?;
    Ok(())
}

fn headroom_of(a: &HeadroomArgs) -> Headroom {
    let d = HeadroomInput::default();
    let mut assumed = Vec::new();
    let mut pick = |v: Option<u32>, default: u32, what: &str| {
        v.unwrap_or_else(|| {
            assumed.push(format!("{what} {default}"));
            default
        })
    };
    let mtu = pick(a.mtu, d.mtu, "lossless MTU (bytes)");
    let port_mtu = pick(a.port_mtu, mtu, "port MTU (bytes): the lossless MTU,");
    let cell = pick(a.cell, d.cell, "buffer cell (bytes)");
    let mac_phy = pick(a.mac_phy, d.mac_phy_bytes, "MAC/PHY delay (bytes)");
    let pipeline = pick(
        a.pipeline,
        d.pipeline_bytes,
        "pipeline latency, the XON hysteresis (bytes)",
    );
    if a.cable.is_none() {
        assumed.push("cable 100 m".into());
    }
    plan::headroom(
        HeadroomInput {
            speed_bps: a.speed,
            cable_m: a.cable.unwrap_or(100.0),
            mtu,
            port_mtu,
            cell,
            small_packets_pct: a.small_packets,
            gearbox_bytes: a.gearbox,
            mac_phy_bytes: mac_phy,
            pipeline_bytes: pipeline,
        },
        assumed,
    )
}

fn gbps(bps: f64) -> String {
    format!("{} Gb/s", trim(bps / 1e9, 2))
}

fn trim(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn write_headroom(out: &mut impl Write, h: &Headroom) -> io::Result<()> {
    let i = &h.input;
    writeln!(
        out,
        "PFC headroom of one lossless priority group: {} Gb/s, {} m of cable, MTU {}",
        trim(i.speed_bps as f64 / 1e9, 1),
        trim(i.cable_m, 1),
        i.mtu
    )?;
    writeln!(out)?;
    let row = |out: &mut dyn Write, what: &str, bytes: f64, how: String| {
        writeln!(out, "  {what:<26} {:>10}  {how}", format!("{:.0} B", bytes))
    };
    row(
        out,
        "sender's response",
        h.response_bytes,
        format!(
            "{} quanta of 512 bit times (IEEE 802.3 Annex 31B), {}",
            h.response_quanta,
            human_ns((h.response_bytes * 8.0 / i.speed_bps as f64 * 1e9) as u64)
        ),
    )?;
    row(
        out,
        "cable, both ways",
        h.cable_bytes,
        format!(
            "2 × {} m at {:.2e} m/s",
            trim(i.cable_m, 1),
            plan::CABLE_MPS
        ),
    )?;
    row(
        out,
        "frame being sent",
        f64::from(i.port_mtu),
        "the port MTU".into(),
    )?;
    row(
        out,
        "MAC and PHY",
        f64::from(i.mac_phy_bytes),
        "in the switch's egress when XOFF leaves".into(),
    )?;
    if i.gearbox_bytes > 0 {
        row(
            out,
            "gearboxes",
            2.0 * f64::from(i.gearbox_bytes),
            "2 × the gearbox delay".into(),
        )?;
    }
    row(
        out,
        "= in flight after XOFF",
        h.propagation_bytes,
        String::new(),
    )?;
    writeln!(
        out,
        "  {:<26} {:>10}  {}% small packets, cell {} B (factor {})",
        "× cell occupancy",
        trim(h.occupancy, 3),
        i.small_packets_pct,
        i.cell,
        trim(h.cell_factor, 3)
    )?;
    row(
        out,
        "+ frame being received",
        f64::from(i.mtu),
        "the lossless MTU".into(),
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "  xoff (headroom above XOFF) {:>9}  ({})",
        h.xoff_bytes,
        human_bytes(h.xoff_bytes)
    )?;
    writeln!(
        out,
        "  xon (hysteresis)           {:>9}  ({})",
        h.xon_bytes,
        human_bytes(h.xon_bytes)
    )?;
    writeln!(
        out,
        "  total                      {:>9}  ({})",
        h.total_bytes,
        human_bytes(h.total_bytes)
    )?;
    if !h.assumed.is_empty() {
        writeln!(out)?;
        writeln!(out, "Assumed: {}", h.assumed.join("; "))?;
    }
    Ok(())
}

fn write_pfc(out: &mut impl Write, p: &plan::PfcPlan) -> io::Result<()> {
    let h = &p.headroom;
    writeln!(
        out,
        "Buffer {} for {} ports, lossless priorities {}",
        human_bytes(p.buffer_bytes),
        p.ports,
        p.lossless_priorities
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join(",")
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "  per priority group   xoff {} + xon {} = {}",
        human_bytes(h.xoff_bytes),
        human_bytes(h.xon_bytes),
        human_bytes(h.total_bytes)
    )?;
    writeln!(
        out,
        "  per port             {} × {} = {}",
        p.lossless_priorities.len(),
        human_bytes(h.total_bytes),
        human_bytes(p.per_port_bytes)
    )?;
    writeln!(
        out,
        "  headroom, all ports  {} × {} = {}",
        p.ports,
        human_bytes(p.per_port_bytes),
        human_bytes(p.reserved_bytes)
    )?;
    if p.left_bytes >= 0 {
        writeln!(
            out,
            "  left for the shared pool (lossy traffic, lossless below XOFF): {} ({:.1} %)",
            human_bytes(p.left_bytes as u64),
            p.left_share * 100.0
        )?;
    } else {
        writeln!(
            out,
            "  the headroom does not fit: {} short. Fewer lossless priorities, shorter cables or a smaller MTU.",
            human_bytes(p.left_bytes.unsigned_abs())
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Each group's headroom: `roce-dissect plan headroom` with the same options ({} Gb/s, {} m, MTU {}).",
        trim(h.input.speed_bps as f64 / 1e9, 1),
        trim(h.input.cable_m, 1),
        h.input.mtu
    )?;
    Ok(())
}

fn write_dcqcn(out: &mut impl Write, r: &plan::DcqcnRun) -> io::Result<()> {
    let p = &r.params;
    writeln!(
        out,
        "DCQCN reaction point ({} constants: g {}, alpha every {}, timer {}, byte counter {}), line rate {}",
        p.name,
        trim(p.g, 5),
        human_ns(p.alpha_period_ns),
        human_ns(p.timer_ns),
        if p.byte_counter == 0 {
            "off".to_string()
        } else {
            human_bytes(p.byte_counter)
        },
        gbps(r.line_bps)
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "  {:>10}  {:<6} {:>12} {:>12} {:>7}",
        "time", "event", "rate", "target", "alpha"
    )?;
    let shown = 60;
    for s in r.steps.iter().take(shown) {
        writeln!(
            out,
            "  {:>10}  {:<6} {:>12} {:>12} {:>7.4}",
            human_ns(s.t_ns),
            s.event,
            gbps(s.rate_bps),
            gbps(s.target_bps),
            s.alpha
        )?;
    }
    if r.steps.len() > shown {
        writeln!(
            out,
            "  ... {} more steps (--json lists them)",
            r.steps.len() - shown
        )?;
    }
    writeln!(out)?;
    chart(out, r)?;
    match r.recovery_ns {
        Some(ns) => writeln!(
            out,
            "Back within 1 % of line rate {} after the last CNP.",
            human_ns(ns)
        )?,
        None => writeln!(
            out,
            "Not back within 1 % of line rate by the end (--duration to go on)."
        )?,
    }
    Ok(())
}

/// The rate over time: 60 columns, 10 rows.
fn chart(out: &mut impl Write, r: &plan::DcqcnRun) -> io::Result<()> {
    const W: usize = 60;
    const H: usize = 10;
    let end = r.steps.last().map_or(1, |s| s.t_ns.max(1));
    let rate_at = |t: u64| {
        r.steps
            .iter()
            .rfind(|s| s.t_ns <= t)
            .map_or(r.line_bps, |s| s.rate_bps)
    };
    let cols: Vec<f64> = (0..W)
        .map(|c| rate_at(end * c as u64 / (W as u64 - 1)) / r.line_bps)
        .collect();
    for row in (0..H).rev() {
        let lo = row as f64 / H as f64;
        let label = if row == H - 1 {
            format!("{:>9} ", gbps(r.line_bps))
        } else if row == 0 {
            format!("{:>9} ", "0")
        } else {
            " ".repeat(10)
        };
        let line: String = cols
            .iter()
            .map(|&v| if v > lo { '█' } else { ' ' })
            .collect();
        writeln!(out, "  {label}│{line}")?;
    }
    writeln!(out, "  {}└{}", " ".repeat(10), "─".repeat(W))?;
    writeln!(out, "  {}0{:>w$}", " ".repeat(11), human_ns(end), w = W - 1)?;
    Ok(())
}
