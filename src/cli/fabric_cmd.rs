//! `roce-dissect fabric`: captures of several links on one clock, read
//! at once (one thread each), and the pause graph they make together.

use std::collections::BTreeSet;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use super::RunError;
use super::args::FabricArgs;
use crate::analysis::{Analyzer, Facts};
use crate::capture::{FrameSource, LinkType};
use crate::fabric::{self, Link, Pause, Topology};
use crate::output::text::terminal_safe;
use crate::units::human_ns;

/// Source MACs kept per capture.
const MAX_MACS: usize = 4096;
/// Interfaces of one capture read as links.
const MAX_INTERFACES: usize = 64;

pub fn run(args: &FabricArgs) -> Result<(), RunError> {
    // Said before the captures are read.
    if args.tui && !std::io::IsTerminal::is_terminal(&io::stdout()) {
        return Err(RunError::Usage(
            crate::tui::fabric_view::NOT_A_TERMINAL.into(),
        ));
    }
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
    let results: Vec<Result<Vec<Link>, RunError>> = std::thread::scope(|s| {
        let handles: Vec<_> = inputs
            .paths
            .iter()
            .map(|p| {
                let (dissect, opts) = (&dissect, opts.clone());
                s.spawn(move || read_links(p, dissect, opts))
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
    let links: Vec<Link> = results
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect();
    // The same link given twice (a file and a merge of it) would count its
    // pauses twice.
    for (i, a) in links.iter().enumerate() {
        if let Some(b) = links[..i]
            .iter()
            .find(|b| !a.pauses.is_empty() && b.pauses == a.pauses && b.pairs == a.pairs)
        {
            eprintln!(
                "roce-dissect: {} and {} have the same pauses and senders: the same link twice? Its pauses count twice.",
                terminal_safe(&b.name),
                terminal_safe(&a.name)
            );
        }
    }
    let r = fabric::analyse(&links, &topo, args.deadlock_threshold);
    if args.tui {
        return crate::tui::fabric_view::run(r);
    }
    let mut out = BufWriter::new(super::sink::Sink::stdout(io::stdout().lock()));
    if args.json {
        serde_json::to_writer_pretty(&mut out, &serde_json::json!({ "fabric": r }))
            .map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        crate::output::fit::write_fitted(&mut out, args.layout.stdout_width(), |o| text(o, &r))?;
    }
    out.flush()?;
    Ok(())
}

/// One interface's share of a capture: its analysis and who sent to whom.
struct OnLink {
    interface: u32,
    an: Analyzer,
    /// Hashed while reading (a lookup a frame), sorted once at the end.
    seen: rustc_hash::FxHashSet<([u8; 6], [u8; 6])>,
    last: Option<([u8; 6], [u8; 6])>,
}

/// The links of one capture: one, or one per pcapng interface when its
/// frames come from several (a capture per link merged into one file).
pub fn read_links(
    path: &PathBuf,
    dissect: &crate::dissect::DissectOptions,
    opts: crate::analysis::AnalysisOptions,
) -> Result<Vec<Link>, RunError> {
    let cap = |e| RunError::Capture(path.clone(), e);
    let mut source = crate::capture::open_stream(path).map_err(cap)?;
    let mut links: Vec<OnLink> = Vec::new();
    let mut one: Vec<Facts> = Vec::with_capacity(1);
    loop {
        let frame = match source.next_frame() {
            None => break,
            Some(f) => f.map_err(cap)?,
        };
        let k = match links.iter().position(|l| l.interface == frame.interface) {
            Some(k) => k,
            None if links.len() >= MAX_INTERFACES => {
                return Err(RunError::Usage(format!(
                    "{}: frames of more than {MAX_INTERFACES} interfaces (fabric reads a link per interface)",
                    path.display()
                )));
            }
            None => {
                links.push(OnLink {
                    interface: frame.interface,
                    an: Analyzer::new(opts.clone()),
                    seen: Default::default(),
                    last: None,
                });
                links.len() - 1
            }
        };
        let l = &mut links[k];
        Facts::put_from_frame(&mut one, 0, &frame, dissect);
        if let Some(facts) = one.first() {
            l.an.observe(facts);
        }
        if frame.link != LinkType::Ethernet {
            continue;
        }
        let mac =
            |r: std::ops::Range<usize>| frame.data.get(r).and_then(|b| <[u8; 6]>::try_from(b).ok());
        let (Some(dst), Some(src)) = (mac(0..6), mac(6..12)) else {
            continue;
        };
        // Most frames repeat the previous pair: one comparison.
        if l.last == Some((src, dst)) || l.seen.len() >= MAX_MACS {
            continue;
        }
        l.last = Some((src, dst));
        l.seen.insert((src, dst));
    }
    // A capture cut short, or a stream stopped with Ctrl-C: said, named.
    let named: Vec<String> = source
        .warnings()
        .iter()
        .map(|w| format!("{}: {w}", path.display()))
        .collect();
    super::print_warnings(&named, source.warning_count(), None);
    let several = links.len() > 1;
    links.sort_by_key(|l| l.interface);
    Ok(links
        .into_iter()
        .map(|l| {
            let name = if several {
                format!("{}#if{}", path.display(), l.interface)
            } else {
                path.display().to_string()
            };
            let pairs: BTreeSet<([u8; 6], [u8; 6])> = l.seen.into_iter().collect();
            let macs: BTreeSet<[u8; 6]> = pairs.iter().map(|p| p.0).collect();
            let report = l.an.finish(crate::pipeline::capture_info(&source, &name));
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
            Link {
                name,
                pauses,
                macs,
                pairs,
            }
        })
        .collect())
}

fn text(out: &mut dyn Write, r: &fabric::FabricReport) -> io::Result<()> {
    writeln!(
        out,
        "Fabric: {}, {}, {}",
        crate::output::text::count(r.links.len() as u64, "link", "links"),
        crate::output::text::count(r.devices.len() as u64, "device", "devices"),
        crate::output::text::count(r.edges.len() as u64, "paused edge", "paused edges")
    )?;
    writeln!(out)?;
    writeln!(out, "Pause graph (X → Y: X's egress to Y paused by Y)")?;
    for e in &r.edges {
        writeln!(
            out,
            "  {} → {}  prio {}: {}, {} paused  ({})",
            e.paused,
            e.by,
            e.priority.map_or("all".to_string(), |p| p.to_string()),
            crate::output::text::count(e.pauses, "pause", "pauses"),
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
            "Pause propagation ({} within {}; the first 20):",
            crate::output::text::count(r.propagation_total, "spread", "spreads"),
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
            "\n{} could not be placed: their capture shows no other device (name the link's MACs in --topology)",
            crate::output::text::count(r.unplaced_pauses, "pause", "pauses")
        )?;
    }
    Ok(())
}
