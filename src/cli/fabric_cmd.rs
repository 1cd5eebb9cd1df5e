//! `roce-dissect fabric`: captures of several links on one clock, read
//! at once (one thread each), and the pause graph they make together.

use std::collections::BTreeSet;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use super::RunError;
use super::args::FabricArgs;
use crate::analysis::Analyzer;
use crate::capture::LinkType;
use crate::fabric::{self, Link, Pause, Topology};
use crate::output::packets::human_ns;

/// Source MACs kept per capture.
const MAX_MACS: usize = 4096;

pub fn run(args: &FabricArgs) -> Result<(), RunError> {
    let topo = match &args.topology {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| RunError::Usage(format!("--topology {}: {e}", p.display())))?;
            Topology::parse(&text)
                .map_err(|e| RunError::Usage(format!("--topology {}: {e}", p.display())))?
        }
        None => Topology::default(),
    };
    let inputs = super::inputs::expand(&args.captures)?;
    let dissect = args.decode.dissect_options();
    let opts = args.analysis.options(&args.decode)?;
    let results: Vec<Result<Link, RunError>> = std::thread::scope(|s| {
        let handles: Vec<_> = inputs
            .paths
            .iter()
            .map(|p| {
                let (dissect, opts) = (&dissect, opts.clone());
                s.spawn(move || read_link(p, dissect, opts))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(RunError::Usage("a capture's reader failed".into())))
            })
            .collect()
    });
    let links = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let r = fabric::analyse(&links, &topo, args.deadlock_threshold);
    let mut out = BufWriter::new(io::stdout().lock());
    if args.json {
        serde_json::to_writer_pretty(&mut out, &serde_json::json!({ "fabric": r }))
            .map_err(io::Error::other)?;
        writeln!(out)?;
    } else {
        text(&mut out, &r)?;
    }
    out.flush()?;
    Ok(())
}

fn read_link(
    path: &PathBuf,
    dissect: &crate::dissect::DissectOptions,
    opts: crate::analysis::AnalysisOptions,
) -> Result<Link, RunError> {
    let cap = |e| RunError::Capture(path.clone(), e);
    let mut source = crate::capture::open_stream(path).map_err(cap)?;
    let mut an = Analyzer::new(opts);
    // Hashed while reading (a lookup a frame), sorted once at the end.
    let mut seen: rustc_hash::FxHashSet<([u8; 6], [u8; 6])> = Default::default();
    let mut last = None;
    crate::pipeline::observe_source(&mut source, dissect, &mut an, None, |frame, _, _| {
        if frame.link != LinkType::Ethernet {
            return;
        }
        let (Some(dst), Some(src)) = (
            frame
                .data
                .get(0..6)
                .and_then(|b| <[u8; 6]>::try_from(b).ok()),
            frame
                .data
                .get(6..12)
                .and_then(|b| <[u8; 6]>::try_from(b).ok()),
        ) else {
            return;
        };
        // Most frames repeat the previous pair: one comparison.
        if last == Some((src, dst)) || seen.len() >= MAX_MACS {
            return;
        }
        last = Some((src, dst));
        seen.insert((src, dst));
    })
    .map_err(cap)?;
    let pairs: BTreeSet<([u8; 6], [u8; 6])> = seen.into_iter().collect();
    let macs: BTreeSet<[u8; 6]> = pairs.iter().map(|p| p.0).collect();
    let name = path.display().to_string();
    let report = an.finish(crate::pipeline::capture_info(&source, &name));
    let pauses = report
        .pfc
        .intervals
        .iter()
        .filter_map(|i| {
            Some(Pause {
                mac: fabric::parse_mac(&i.src_mac)?,
                priority: i.priority,
                start_ns: i.start_ns,
                end_ns: i.end_ns,
            })
        })
        .collect();
    Ok(Link {
        name,
        pauses,
        macs,
        pairs,
    })
}

fn text(out: &mut impl Write, r: &fabric::FabricReport) -> io::Result<()> {
    writeln!(
        out,
        "Fabric: {} links, {} devices, {} paused edges",
        r.links.len(),
        r.devices.len(),
        r.edges.len()
    )?;
    writeln!(out)?;
    writeln!(out, "Pause graph (X → Y: X's egress to Y paused by Y)")?;
    for e in &r.edges {
        writeln!(
            out,
            "  {} → {}  prio {}: {} pauses, {} paused  ({})",
            e.paused,
            e.by,
            e.priority.map_or("all".to_string(), |p| p.to_string()),
            e.pauses,
            human_ns(e.paused_ns),
            e.links.join(", ")
        )?;
    }
    writeln!(out)?;
    if r.deadlocks.is_empty() {
        writeln!(
            out,
            "Deadlocks: none (no cycle of the graph paused at once for more than {})",
            human_ns(r.threshold_ns)
        )?;
    } else {
        for d in &r.deadlocks {
            writeln!(
                out,
                "DEADLOCK prio {}: {} → {} all paused at once for {} (from {} after the first pause)",
                d.priority.map_or("all".to_string(), |p| p.to_string()),
                d.devices.join(" → "),
                d.devices.first().map_or("", String::as_str),
                human_ns(d.end_ns - d.start_ns),
                human_ns(
                    d.start_ns
                        .saturating_sub(r.first_pause_ns.unwrap_or(d.start_ns))
                ),
            )?;
        }
    }
    if r.propagation_total > 0 {
        writeln!(out)?;
        writeln!(
            out,
            "Pause propagation ({} spreads within {}; the first 20):",
            r.propagation_total,
            human_ns(r.threshold_ns)
        )?;
        for s in r.propagation.iter().take(20) {
            writeln!(
                out,
                "  {} paused by {}, then {} paused by {} {} later",
                s.first.paused,
                s.first.by,
                s.then.paused,
                s.then.by,
                human_ns(s.delay_ns)
            )?;
        }
    }
    if r.unplaced_pauses > 0 {
        writeln!(
            out,
            "\n{} pauses could not be placed: their capture shows no other device (name the link's MACs in --topology)",
            r.unplaced_pauses
        )?;
    }
    Ok(())
}
