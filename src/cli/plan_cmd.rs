//! `roce-dissect plan`: the PFC headroom of a port, what a buffer leaves
//! once the lossless groups have theirs, and the DCQCN rate controller
//! through a train of CNPs (formulas in [`crate::plan`]).

use std::io::{self, BufWriter, Write};

use super::RunError;
use super::args::{HeadroomArgs, PlanArgs, PlanCommand, PlanDcqcnArgs};
use super::progress::Progress;
use crate::analysis::{AnalysisOptions, Analyzer, Body, FlowKey};
use crate::output::report::human_bytes;
use crate::plan::{self, DcqcnParams, Headroom, HeadroomInput};
use crate::units::human_ns;

pub fn run(args: &PlanArgs) -> Result<(), RunError> {
    let (json, layout) = match &args.command {
        PlanCommand::Headroom(a) => (a.json, &a.layout),
        PlanCommand::Pfc(a) => (a.json, &a.layout),
        PlanCommand::Dcqcn(a) => (a.json, &a.layout),
    };
    // JSON is never laid out.
    let width = if json { None } else { layout.stdout_width() };
    let mut out = BufWriter::new(super::sink::Sink::stdout(io::stdout().lock()));
    crate::output::fit::write_fitted(&mut out, width, |o| write_plan(o, args))?;
    out.flush()?;
    Ok(())
}

/// Writes what `args` asks for to `out`.
fn write_plan(mut out: &mut dyn Write, args: &PlanArgs) -> Result<(), RunError> {
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
            if let (Some(path), Some(key)) = (&a.from, &a.flow) {
                let r = replay(path, key, params, a)?;
                if a.json {
                    json(&mut out, &r)?;
                } else {
                    write_replay(&mut out, &r)?;
                }
                return Ok(());
            }
            let mut cnps = a.cnp.clone();
            cnps.sort_unstable();
            let last = cnps.last().copied().unwrap_or(0);
            let end = a.duration.unwrap_or(last.saturating_add(3_000_000));
            if end < last {
                return Err(RunError::Usage(format!(
                    "--duration {} ends before the last CNP ({})",
                    human_ns(end),
                    human_ns(last)
                )));
            }
            let speed = a.speed.unwrap_or(100_000_000_000);
            let r = plan::dcqcn(params, speed as f64, &cnps, end);
            if a.json {
                json(&mut out, &r)?;
            } else {
                write_dcqcn(&mut out, &r)?;
            }
        }
    }
    Ok(())
}

/// `plan dcqcn --from`: the flow, what the report says of its CNPs, and
/// the replay.
#[derive(serde::Serialize)]
struct Replay {
    flow: FlowName,
    /// The report's `flows[].cc` of the flow.
    cc: Option<crate::analysis::cc::CcReport>,
    cnps: u64,
    /// CNPs past the 1,048,576 kept.
    cnps_dropped: u64,
    #[serde(flatten)]
    replay: plan::DcqcnReplay,
}

#[derive(serde::Serialize)]
struct FlowName {
    src: String,
    dst: String,
    destqp: u32,
}

fn replay(
    path: &std::path::Path,
    key: &FlowKey,
    params: DcqcnParams,
    a: &PlanDcqcnArgs,
) -> Result<Replay, RunError> {
    let cap = |e| RunError::Capture(path.to_path_buf(), e);
    let mut source = crate::capture::open_stream(path).map_err(cap)?;
    let opts = AnalysisOptions::default();
    let window = opts.cc_window_ns;
    let mut an = Analyzer::new(opts);
    an.trace_cnps(*key);
    let mut observed: Option<plan::Observed> = None;
    let mut progress = Progress::new(&path.display().to_string());
    let mut tell =
        |done: usize, total: usize, frames| progress.update(done as u64, total as u64, frames);
    crate::pipeline::observe_source(
        &mut source,
        &Default::default(),
        &mut an,
        Some(&mut tell),
        |_, facts, _, _| {
            if let Body::Roce(r) = &facts.body
                && r.key == *key
            {
                observed
                    .get_or_insert_with(|| plan::Observed::new(facts.ts_ns))
                    .add(facts.ts_ns, u64::from(r.payload_len().unwrap_or(0)));
            }
        },
    )
    .map_err(cap)?;
    progress.finish();
    let (cnps, dropped) = an
        .traced()
        .map_or((Vec::new(), 0), |t| (t.cnps_ns.clone(), t.dropped));
    let info = crate::pipeline::capture_info(&source, &path.display().to_string());
    let report = an.finish(info);
    let name = FlowName {
        src: key.src.to_string(),
        dst: key.dst.to_string(),
        destqp: key.dest_qp,
    };
    let flow = report
        .flows
        .iter()
        .find(|f| *f.src == *name.src && *f.dst == *name.dst && f.destqp == name.destqp);
    let with_cnps = || {
        let mut names: Vec<String> = report
            .flows
            .iter()
            .filter(|f| f.cc.as_deref().is_some_and(|c| c.cnps > 0))
            .take(5)
            .map(|f| format!("{},{},{:#x}", f.src, f.dst, f.destqp))
            .collect();
        if names.is_empty() {
            names.push("none".into());
        }
        names.join("  ")
    };
    let (Some(flow), Some(observed)) = (flow, observed) else {
        return Err(RunError::Usage(format!(
            "{}: no flow {} → {} QP {:#x}; flows whose sender got CNPs: {}",
            path.display(),
            name.src,
            name.dst,
            name.destqp,
            with_cnps()
        )));
    };
    if cnps.is_empty() {
        return Err(RunError::Usage(format!(
            "{}: the sender of {} → {} QP {:#x} received no CNPs; flows whose sender did: {}",
            path.display(),
            name.src,
            name.dst,
            name.destqp,
            with_cnps()
        )));
    }
    let r = plan::dcqcn_replay(
        params,
        a.speed.map(|s| s as f64),
        &observed,
        &cnps,
        window,
        a.step,
    )
    .map_err(|e| RunError::Usage(format!("{}: {e}", path.display())))?;
    Ok(Replay {
        flow: name,
        cc: flow.cc.as_deref().copied(),
        cnps: cnps.len() as u64 + dropped,
        cnps_dropped: dropped,
        replay: r,
    })
}

fn write_replay(out: &mut impl Write, r: &Replay) -> io::Result<()> {
    let p = &r.replay;
    let params = &p.run.params;
    writeln!(
        out,
        "Flow {} → {} QP {:#x}: {} to its sender over {}",
        r.flow.src,
        r.flow.dst,
        r.flow.destqp,
        crate::output::text::count(r.cnps, "CNP", "CNPs"),
        human_ns(
            p.run.cnps_ns.last().copied().unwrap_or(0)
                - p.run.cnps_ns.first().copied().unwrap_or(0)
        )
    )?;
    writeln!(
        out,
        "replayed through the DCQCN reaction point ({} constants) from {}{}",
        params.name,
        gbps(p.line_bps),
        if p.line_from == "observed" {
            "\n(the flow's payload rate in the 50 µs before its first CNP; --speed to set it)"
        } else {
            ""
        }
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "  {:>11} {:>5} {:>12} {:>12} {:>9}",
        "time", "CNPs", "expected", "observed", "obs/exp"
    )?;
    let shown = 60;
    for row in p.rows.iter().take(shown) {
        let t = signed_ns(row.t_ns);
        let ratio = if row.expected_bps > 0.0 {
            format!("{:.2}", row.observed_bps / row.expected_bps)
        } else {
            "-".into()
        };
        writeln!(
            out,
            "  {:>11} {:>5} {:>12} {:>12} {:>9}",
            t,
            row.cnps,
            gbps(row.expected_bps),
            gbps(row.observed_bps),
            ratio
        )?;
    }
    if p.rows.len() > shown {
        writeln!(
            out,
            "  ... {} more rows (--json lists them; --step to choose the step)",
            p.rows.len() - shown
        )?;
    }
    writeln!(
        out,
        "  (rows of {}, from the first CNP)",
        human_ns(p.step_ns)
    )?;
    writeln!(out)?;
    replay_chart(out, p)?;
    writeln!(out)?;
    match p.mean_ratio {
        Some(m) => writeln!(
            out,
            "Observed / expected from the first CNP on: {:.2} on average, within 10 % in {} of {} rows.",
            m, p.rows_within_10pct, p.rows_compared
        )?,
        None => writeln!(out, "The flow sent nothing after its first CNP.")?,
    }
    let observed = r.cc.and_then(|c| c.recovery_ns);
    writeln!(
        out,
        "Back at 0.97 of the start rate after the last cut: expected {}, observed {}.",
        p.expected_recovery_ns
            .map_or("not by the flow's end".to_string(), human_ns),
        observed.map_or("-".to_string(), |ns| format!(
            "{} (mean of {})",
            human_ns(ns),
            crate::output::text::count(r.cc.map_or(0, |c| c.recoveries), "train", "trains")
        ))
    )?;
    if let Some(m) = p.mean_ratio {
        let verdict = if m < 0.8 {
            "The flow sent well below what the controller allows: it was limited elsewhere (the application, PFC, a slower receiver) or its controller cuts deeper than these constants."
        } else if m > 1.2 {
            "The flow sent well above what the controller allows: its reaction point is off, on other constants, or not on this priority."
        } else {
            "The flow followed the controller."
        };
        writeln!(out, "{verdict}")?;
    }
    Ok(())
}

/// A time from the first CNP: `-50.0 µs`, `+1.20 ms`.
fn signed_ns(t: i64) -> String {
    let sign = if t < 0 { '-' } else { '+' };
    format!("{sign}{}", human_ns(t.unsigned_abs()))
}

/// Expected (─) against observed (█) over the rows: 60 columns, 10 rows.
fn replay_chart(out: &mut impl Write, p: &plan::DcqcnReplay) -> io::Result<()> {
    const W: usize = 60;
    const H: usize = 10;
    if p.rows.is_empty() {
        return Ok(());
    }
    let top = p
        .rows
        .iter()
        .map(|r| r.expected_bps.max(r.observed_bps))
        .fold(p.line_bps, f64::max)
        .max(1.0);
    // Each column the mean of its rows.
    let n = p.rows.len();
    let cols = W.min(n);
    let col = |c: usize, f: &dyn Fn(&plan::ReplayRow) -> f64| {
        let a = c * n / cols;
        let b = ((c + 1) * n / cols).clamp(a + 1, n);
        let rows = &p.rows[a..b];
        rows.iter().map(f).sum::<f64>() / rows.len() as f64 / top
    };
    let obs: Vec<f64> = (0..cols).map(|c| col(c, &|r| r.observed_bps)).collect();
    let exp: Vec<f64> = (0..cols).map(|c| col(c, &|r| r.expected_bps)).collect();
    for row in (0..H).rev() {
        let (lo, hi) = (row as f64 / H as f64, (row + 1) as f64 / H as f64);
        let label = if row == H - 1 {
            format!("{:>10} ", gbps(top))
        } else if row == 0 {
            format!("{:>10} ", "0")
        } else {
            " ".repeat(11)
        };
        let line: String = (0..cols)
            .map(|c| {
                if exp[c] > lo && exp[c] <= hi {
                    '─'
                } else if obs[c] > lo {
                    '█'
                } else {
                    ' '
                }
            })
            .collect();
        writeln!(out, "  {label}│{line}")?;
    }
    writeln!(out, "  {}└{}", " ".repeat(11), "─".repeat(cols))?;
    let first = p.rows.first().map_or(0, |r| r.t_ns);
    let last = p.rows.last().map_or(0, |r| r.t_ns + p.step_ns as i64);
    let (a, b) = (signed_ns(first), signed_ns(last));
    writeln!(
        out,
        "  {}{a}{:>w$}",
        " ".repeat(12),
        b,
        w = cols
            .saturating_sub(a.chars().count())
            .max(b.chars().count())
    )?;
    writeln!(
        out,
        "  {}█ observed  ─ expected (time from the first CNP)",
        " ".repeat(12)
    )?;
    Ok(())
}

fn json<T: serde::Serialize>(out: &mut impl Write, v: &T) -> Result<(), RunError> {
    serde_json::to_writer_pretty(&mut *out, v).map_err(io::Error::from)?;
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
            format!("{:>10} ", gbps(r.line_bps))
        } else if row == 0 {
            format!("{:>10} ", "0")
        } else {
            " ".repeat(11)
        };
        let line: String = cols
            .iter()
            .map(|&v| if v > lo { '█' } else { ' ' })
            .collect();
        writeln!(out, "  {label}│{line}")?;
    }
    writeln!(out, "  {}└{}", " ".repeat(11), "─".repeat(W))?;
    writeln!(out, "  {}0{:>w$}", " ".repeat(12), human_ns(end), w = W - 1)?;
    Ok(())
}
