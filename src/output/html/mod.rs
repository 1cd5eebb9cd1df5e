//! `--html OUT.html`: the report as one self-contained page (no network:
//! styles inline, charts inline SVG, a few lines of script only to sort
//! tables), light and dark by `prefers-color-scheme`, printable. It is a
//! view of the same [`Report`] as `--json`, with the throughput series on
//! (which carry each bin's PSN range): it analyses nothing of its own.
//!
//! The page is built with `std::fmt::Write` and one escaping function
//! rather than a template engine: every value comes from typed report
//! data, there is no template file to ship or load, and escaping happens
//! in one place ([`esc`]).

pub mod svg;

use std::fmt::Write;

use crate::analysis::Report;
use crate::analysis::report::{EventKind, FlowReport};
use crate::output::report::{grouped, human_bps, human_bytes};
use crate::output::text::count;
use crate::units::human_ns;
use svg::{Anomaly, Lane};

/// Flows given their own section (charts) at most, most trouble first.
pub const MAX_FLOW_SECTIONS: usize = 12;
/// Rows of the flows table at most.
pub const MAX_FLOW_ROWS: usize = 500;

/// Escapes text for HTML and SVG (element content and attribute values).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
:root{color-scheme:light dark;--fg:#1b1b1b;--bg:#fff;--muted:#5a5a5a;--line:#d0d0d0;--plot:#fafafa;--bad:#b33900;--ok:#006e4f;--head:#f2f2f2}
@media (prefers-color-scheme:dark){:root{--fg:#e6e6e6;--bg:#16181b;--muted:#a8a8a8;--line:#3a3d42;--plot:#1d2024;--bad:#ff8a50;--ok:#4fd1a5;--head:#23262b}}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1100px;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:20px 0 6px}
.muted{color:var(--muted)}.bad{color:var(--bad);font-weight:600}.ok{color:var(--ok);font-weight:600}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:13px}th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{background:var(--head);cursor:pointer;position:sticky;top:0}td.l,th.l{text-align:left}tr.trouble td:first-child{border-left:3px solid var(--bad)}
.scroll{max-height:520px;overflow:auto;border:1px solid var(--line)}
ul.verdict li{margin:4px 0}
svg.chart{display:block;width:100%;height:auto;margin:6px 0 14px;font:11px system-ui,sans-serif}
svg .plot{fill:var(--plot);stroke:var(--line)}svg .grid{stroke:var(--line);stroke-width:.6}svg .tick,svg .legend,svg .lane{fill:var(--fg)}svg .axis{fill:var(--muted)}
svg .paused{fill:#999;opacity:.28}svg .legendbox{fill:var(--bg);opacity:.85}svg .storm{stroke:var(--fg);stroke-width:1}
nav a{margin-right:12px}
@media print{body{max-width:none}.scroll{max-height:none;overflow:visible}th{position:static}nav{display:none}}
"#;

/// Sorts a table by the clicked column (numbers as numbers); the page
/// reads the same without it.
const SCRIPT: &str = r#"
document.querySelectorAll("table.sortable th").forEach(function(th,i){th.addEventListener("click",function(){var t=th.closest("table"),b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),d=th.dataset.dir==="a"?-1:1;th.dataset.dir=d>0?"a":"d";var v=function(r){var s=r.cells[i].textContent.replace(/[,\s]/g,"");var n=parseFloat(s);return isNaN(n)?r.cells[i].textContent:n};rows.sort(function(x,y){var a=v(x),c=v(y);return(a>c?1:a<c?-1:0)*d});rows.forEach(function(r){b.appendChild(r)})})});
"#;

/// The whole page for one report or several (one section each).
pub fn page(reports: &[Report]) -> String {
    let mut s = String::new();
    let title = match reports {
        [one] => format!("roce-dissect: {}", one.capture.file),
        many => format!("roce-dissect: {} captures", many.len()),
    };
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><meta name=\"generator\" content=\"roce-dissect {}\"><title>{}</title><style>{STYLE}</style></head><body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(&title)
    );
    let _ = writeln!(s, "<h1>{}</h1>", esc(&title));
    if reports.len() > 1 {
        s.push_str("<nav>");
        for (i, r) in reports.iter().enumerate() {
            let _ = write!(s, "<a href=\"#c{i}\">{}</a>", esc(&r.capture.file));
        }
        s.push_str("</nav>\n");
    }
    for (i, r) in reports.iter().enumerate() {
        let _ = writeln!(s, "<article id=\"c{i}\">");
        capture(&mut s, r, &format!("c{i}-"), reports.len() > 1);
        s.push_str("</article>\n");
    }
    let _ = writeln!(
        s,
        "<footer class=\"muted\"><p>roce-dissect {}: the same figures as <code>--json</code>; README \"Report\" says what each means.</p></footer><script>{SCRIPT}</script></body></html>",
        env!("CARGO_PKG_VERSION")
    );
    s
}

/// One capture's report.
fn capture(s: &mut String, r: &Report, id: &str, heading: bool) {
    let c = &r.capture;
    if heading {
        let _ = writeln!(s, "<h2>{}</h2>", esc(&c.file));
    }
    let sum = |f: &dyn Fn(&FlowReport) -> u64| r.flows.iter().map(f).sum::<u64>();
    let _ = writeln!(
        s,
        "<p class=\"muted\">{} · {}, {} RoCE · {} · {} in {}</p>",
        esc(&c.format),
        count(c.frames, "frame", "frames"),
        grouped(c.roce_frames),
        human_ns(c.duration_ns),
        count(r.flows.len() as u64, "flow", "flows"),
        count(r.connections.len() as u64, "connection", "connections")
    );
    // The verdict: the hints in plain words.
    s.push_str("<section><h2>Verdict</h2>");
    if r.hints.is_empty() {
        let _ = write!(
            s,
            "<p class=\"ok\">{}</p>",
            esc(crate::analysis::hints::NOTHING_WRONG)
        );
    } else {
        s.push_str("<ul class=\"verdict\">");
        for h in &r.hints {
            let _ = write!(
                s,
                "<li><span class=\"bad\">{} ×{}</span> {}</li>",
                esc(&serde_json::to_value(h.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(|k| k.replace('_', " ")))
                    .unwrap_or_default()),
                grouped(h.count),
                esc(&h.text)
            );
        }
        s.push_str("</ul>");
    }
    let _ = writeln!(
        s,
        "<table><tbody><tr><td class=\"l\">retransmits (episodes)</td><td>{} ({})</td><td class=\"l\">out of order</td><td>{}</td><td class=\"l\">missing</td><td>{}</td></tr><tr><td class=\"l\">NAKs (RNR)</td><td>{} ({})</td><td class=\"l\">CE marks</td><td>{}</td><td class=\"l\">CNPs</td><td>{}</td></tr><tr><td class=\"l\">pause intervals</td><td>{}</td><td class=\"l\">storms</td><td>{}</td><td class=\"l\">bad ICRC</td><td>{}</td></tr></tbody></table></section>",
        grouped(sum(&|f| f.retransmits)),
        grouped(sum(&|f| f.retransmit_episodes)),
        grouped(sum(&|f| f.out_of_order)),
        grouped(sum(&|f| f.missing)),
        grouped(sum(&|f| f.naks.total() - f.naks.rnr)),
        grouped(sum(&|f| f.naks.rnr)),
        grouped(sum(&|f| f.ecn_ce)),
        grouped(sum(&|f| f.cnps)),
        grouped(r.pfc.intervals.len() as u64),
        grouped(r.pfc.storms),
        grouped(c.icrc_errors)
    );
    flows_table(s, r, id);
    let t0 = c.first_ts_ns;
    let span = (
        c.first_ts_ns,
        c.last_ts_ns.max(c.first_ts_ns.saturating_add(1)),
    );
    for i in charted(r) {
        flow_section(s, r, i, &r.flows[i], id, t0, span);
    }
    pfc_section(s, r, t0, span);
    cc_section(s, r, t0, span);
    nvme_section(s, r);
    other_section(s, r);
    quality_section(s, r);
}

/// The flows given a section: those with trouble, or that sent through a
/// pause, or whose sender got CNPs; the report's order (most trouble
/// first), at most [`MAX_FLOW_SECTIONS`].
fn charted(r: &Report) -> Vec<usize> {
    let mut paused = vec![false; r.flows.len()];
    for iv in &r.pfc.intervals {
        for &f in &iv.flows {
            if let Some(p) = paused.get_mut(f) {
                *p = true;
            }
        }
    }
    r.flows
        .iter()
        .enumerate()
        .filter(|(i, f)| {
            f.trouble() > 0 || paused[*i] || f.cc.as_deref().is_some_and(|c| c.cnps > 0)
        })
        .take(MAX_FLOW_SECTIONS)
        .map(|(i, _)| i)
        .collect()
}

fn flow_name(f: &FlowReport) -> String {
    format!("{} → {} QP {:#08x}", f.src, f.dst, f.destqp)
}

fn flows_table(s: &mut String, r: &Report, id: &str) {
    if r.flows.is_empty() {
        return;
    }
    let peers = r.peer_indexes();
    let _ = write!(
        s,
        "<section><h2>Flows</h2><p class=\"muted\">Most trouble first, a connection's other direction after it; click a heading to sort, a flow with trouble to see its charts.</p><div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>#</th><th class=\"l\">source → destination</th><th>DestQP</th><th>v</th><th class=\"l\">tr</th><th>packets</th><th>bytes</th><th>retx</th><th>ooo</th><th>miss</th><th>NAK</th><th>RNR</th><th>CE</th><th>CNP</th><th class=\"l\">peer</th></tr></thead><tbody>"
    );
    let mut printed = vec![false; r.flows.len()];
    let mut rows = 0usize;
    let charted = charted(r);
    for i in 0..r.flows.len() {
        if printed[i] || rows >= MAX_FLOW_ROWS {
            continue;
        }
        for j in std::iter::once(i).chain(peers[i].filter(|&j| !printed[j])) {
            printed[j] = true;
            rows += 1;
            let f = &r.flows[j];
            let name = esc(&format!("{} → {}", f.src, f.dst));
            let name = if charted.contains(&j) {
                format!("<a href=\"#{id}flow-{}\">{name}</a>", j + 1)
            } else {
                name
            };
            let _ = write!(
                s,
                "<tr{}><td>{}</td><td class=\"l\">{}{name}</td><td>{:#08x}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
                if f.trouble() > 0 {
                    " class=\"trouble\""
                } else {
                    ""
                },
                j + 1,
                if j != i { "└ " } else { "" },
                f.destqp,
                f.version.as_str(),
                f.transport.map_or("-", |t| t.as_str()),
                grouped(f.packets),
                grouped(f.bytes),
                grouped(f.retransmits),
                grouped(f.out_of_order),
                grouped(f.missing),
                grouped(f.naks.total() - f.naks.rnr),
                grouped(f.naks.rnr),
                grouped(f.ecn_ce),
                grouped(f.cnps),
                peers[j].map_or("-".to_string(), |p| format!("#{}", p + 1))
            );
        }
    }
    s.push_str("</tbody></table></div>");
    if rows < r.flows.len() {
        let _ = write!(
            s,
            "<p class=\"muted\">{} more flows (fewer troubles): <code>--json</code> lists them all.</p>",
            grouped((r.flows.len() - rows) as u64)
        );
    }
    s.push_str("</section>\n");
}

/// A troubled flow: its PSN chart, its throughput, its timing.
fn flow_section(
    s: &mut String,
    r: &Report,
    i: usize,
    f: &FlowReport,
    id: &str,
    t0: u64,
    span: (u64, u64),
) {
    let _ = write!(
        s,
        "<section id=\"{id}flow-{}\"><h3>Flow #{}: {}</h3><p class=\"muted\">{} · {} in {} · {} out of order · {} missing · {} · {} CE · {}</p>",
        i + 1,
        i + 1,
        esc(&flow_name(f)),
        count(f.packets, "packet", "packets"),
        count(f.retransmits, "retransmit", "retransmits"),
        count(f.retransmit_episodes, "episode", "episodes"),
        grouped(f.out_of_order),
        grouped(f.missing),
        count(f.naks.total(), "NAK", "NAKs"),
        grouped(f.ecn_ce),
        count(f.cnps, "CNP", "CNPs")
    );
    let tp = f.timing.as_ref().and_then(|t| t.throughput.as_ref());
    // The flow's anomalies and what its peer said back (NAKs, CNPs).
    let first_psn = tp
        .and_then(|t| t.psn_first)
        .or_else(|| f.events.iter().filter_map(|e| e.psn).min());
    let rel = |psn: u32| {
        first_psn.map_or(psn, |p0| {
            crate::wire::Psn::new(psn).forward_from(crate::wire::Psn::new(p0))
        })
    };
    let reached = psn_reached(
        tp.and_then(|t| t.series.as_deref()).unwrap_or_default(),
        f.events.iter().filter_map(|e| Some((e.ts_ns, rel(e.psn?)))),
    );
    // By `ts`; 0 before anything is known.
    let reached_by = |ts: u64| {
        let n = reached.partition_point(|&(t, _)| t <= ts);
        n.checked_sub(1)
            .and_then(|i| reached.get(i))
            .map_or(0, |&(_, psn)| psn)
    };
    let mut anomalies = Vec::new();
    let peer = r
        .peer_indexes()
        .get(i)
        .copied()
        .flatten()
        .map(|j| &r.flows[j]);
    for (e, mine) in f.events.iter().map(|e| (e, true)).chain(
        peer.into_iter()
            .flat_map(|p| p.events.iter().map(|e| (e, false))),
    ) {
        let kind = match (e.kind, mine) {
            (EventKind::Retransmit, true) => Anomaly::Retransmit,
            (EventKind::OutOfOrder, true) => Anomaly::OutOfOrder,
            (EventKind::Gap, true) => Anomaly::Gap,
            (EventKind::EcnCe, true) => Anomaly::Ce,
            (EventKind::Nak | EventKind::RnrNak, false) => Anomaly::Nak,
            (EventKind::Cnp, false) => Anomaly::Cnp,
            _ => continue,
        };
        // A CNP's own PSN counts in its sender's sequence, not this
        // flow's: it goes where this flow's PSNs were when it came (the
        // highest sent by then), so that it neither stretches the axis
        // nor lands away from the packets it slowed.
        let (y, psn_text) = match (kind, e.psn) {
            (Anomaly::Cnp, _) => (reached_by(e.ts_ns), String::new()),
            (_, Some(psn)) => (rel(psn), format!(" · PSN {psn}")),
            (_, None) => continue,
        };
        let tip = format!(
            "{} · frame {} · {}{psn_text}",
            e.kind.label(),
            e.frame,
            human_ns(e.ts_ns.saturating_sub(t0)),
        );
        anomalies.push((kind, e.ts_ns, y, tip));
    }
    if let Some(series) = tp.and_then(|t| t.series.as_ref()) {
        // Past the report's event budget the replays still show, a mark a
        // bin, from the series.
        if f.events_dropped > 0 {
            let listed_until = f.events.iter().map(|e| e.ts_ns).max().unwrap_or(0);
            let bin_ns = tp.map_or(1, |t| t.bin_ns);
            for p in series
                .iter()
                .filter(|p| p.replayed_bytes > 0 && p.t_ns.saturating_add(bin_ns) > listed_until)
            {
                if let Some(lo) = p.psn_min {
                    anomalies.push((
                        Anomaly::Retransmit,
                        p.t_ns.saturating_add(bin_ns / 2),
                        lo,
                        format!(
                            "{} replayed in the {} from {} (past the events listed)",
                            human_bytes(p.replayed_bytes),
                            human_ns(bin_ns),
                            human_ns(p.t_ns.saturating_sub(t0))
                        ),
                    ));
                }
            }
        }
        let bins: Vec<svg::PsnBin> = series
            .iter()
            .filter_map(|p| Some((p.t_ns, p.psn_min?, p.psn_max?)))
            .collect();
        let bin_ns = tp.map_or(1, |t| t.bin_ns);
        s.push_str("<h4>PSN sequence</h4>");
        s.push_str(&svg::psn_chart(
            &format!("PSN sequence of flow {}", i + 1),
            t0,
            span,
            bin_ns,
            &bins,
            &anomalies,
        ));
        let points: Vec<(u64, u64, u64)> = series
            .iter()
            .map(|p| (p.t_ns, p.bytes, p.replayed_bytes))
            .collect();
        let paused: Vec<(u64, u64, String)> = r
            .pfc
            .intervals
            .iter()
            .filter(|iv| iv.flows.contains(&i))
            .map(|iv| {
                (
                    iv.start_ns,
                    iv.end_ns,
                    format!(
                        "paused by {} on priority {} for {}",
                        iv.src_mac,
                        iv.priority.map_or("all".into(), |p| p.to_string()),
                        human_ns(iv.duration_ns)
                    ),
                )
            })
            .collect();
        let _ = write!(
            s,
            "<h4>Throughput</h4><p class=\"muted\">mean {}, peak {} in {} bins; {} replayed</p>",
            human_bps(tp.map_or(0, |t| t.mean_bps)),
            human_bps(tp.map_or(0, |t| t.peak_bps)),
            human_ns(bin_ns),
            human_bytes(tp.map_or(0, |t| t.replayed_bytes))
        );
        s.push_str(&svg::throughput_chart(
            &format!("Throughput of flow {}", i + 1),
            t0,
            span,
            bin_ns,
            &points,
            &paused,
        ));
    } else if !anomalies.is_empty() {
        // No payload (READ requests, ACKs): the anomalies alone.
        s.push_str("<h4>PSN sequence</h4>");
        s.push_str(&svg::psn_chart(
            &format!("PSN sequence of flow {}", i + 1),
            t0,
            span,
            1,
            &[],
            &anomalies,
        ));
    }
    if let Some(t) = &f.timing {
        let mut rows = Vec::new();
        for (name, st) in [
            ("round trip", &t.rtt),
            ("completion", &t.completion),
            ("READ latency", &t.read_latency),
        ] {
            if let Some(st) = st {
                rows.push((
                    name.to_string(),
                    [st.min_ns, st.p50_ns, st.p99_ns, st.max_ns, st.mean_ns],
                ));
            }
        }
        if !rows.is_empty() {
            s.push_str("<h4>Timing</h4>");
            s.push_str(&svg::percentiles_chart(
                &format!("Timing of flow {}", i + 1),
                &rows,
            ));
        }
        if let Some(h) = &t.histograms {
            for (name, hist, st) in [
                ("Round trip", &h.rtt, &t.rtt),
                ("Completion", &h.completion, &t.completion),
                ("READ latency", &h.read_latency, &t.read_latency),
            ] {
                let (Some(hist), Some(st)) = (hist, st) else {
                    continue;
                };
                let _ = write!(
                    s,
                    "<h4>{name} histogram</h4><p class=\"muted\">{} kept of {}</p>",
                    count(hist.counts.iter().sum(), "sample", "samples"),
                    grouped(st.count)
                );
                s.push_str(&svg::histogram_chart(
                    &format!("{name} histogram of flow {}", i + 1),
                    &hist.edges_ns,
                    &hist.counts,
                    &[("p50", st.p50_ns), ("p99", st.p99_ns)],
                ));
            }
        }
    }
    s.push_str("</section>\n");
}

/// The highest PSN (counted from the flow's first) a flow is known to
/// have reached by each time: the PSNs its series shows sent in each
/// bin, and those of its own events (READ requests carry no payload, so
/// only their events place them). Where a CNP that came then goes on the
/// flow's PSN chart.
fn psn_reached(
    series: &[crate::analysis::throughput::Point],
    events: impl Iterator<Item = (u64, u32)>,
) -> Vec<(u64, u32)> {
    let mut at: Vec<(u64, u32)> = series
        .iter()
        .filter_map(|p| Some((p.t_ns, p.psn_max?)))
        .chain(events)
        .collect();
    at.sort_unstable();
    let mut high = 0;
    for p in &mut at {
        high = high.max(p.1);
        p.1 = high;
    }
    at
}

fn pfc_section(s: &mut String, r: &Report, t0: u64, span: (u64, u64)) {
    if r.pfc.intervals.is_empty() {
        return;
    }
    let mut lanes: Vec<Lane> = Vec::new();
    for iv in &r.pfc.intervals {
        let name = format!(
            "{} p{}",
            iv.src_mac,
            iv.priority.map_or("*".to_string(), |p| p.to_string())
        );
        let flows: Vec<String> = iv
            .flows
            .iter()
            .take(8)
            .map(|f| format!("#{}", f + 1))
            .collect();
        let tip = format!(
            "{name}: {} from {} ({}){}{}",
            human_ns(iv.duration_ns),
            human_ns(iv.start_ns.saturating_sub(t0)),
            count(iv.frames, "frame", "frames"),
            if iv.storm { ", a storm" } else { "" },
            if flows.is_empty() {
                String::new()
            } else {
                format!(
                    "; flows sending meanwhile: {}{}",
                    flows.join(" "),
                    if iv.flows_total as usize > flows.len() {
                        format!(" and {} more", iv.flows_total as usize - flows.len())
                    } else {
                        String::new()
                    }
                )
            }
        );
        match lanes.iter().position(|l| l.name == name) {
            Some(k) => lanes[k].bars.push((iv.start_ns, iv.end_ns, iv.storm, tip)),
            None if lanes.len() < 64 => lanes.push(Lane {
                name,
                bars: vec![(iv.start_ns, iv.end_ns, iv.storm, tip)],
            }),
            None => {}
        }
    }
    let _ = write!(
        s,
        "<section><h2>PFC timeline</h2><p class=\"muted\">{} from {}; hover a bar for the flows that sent meanwhile.</p>",
        count(
            r.pfc.intervals.len() as u64,
            "pause interval",
            "pause intervals"
        ),
        count(lanes.len() as u64, "sender of pauses", "senders of pauses")
    );
    s.push_str(&svg::lanes_chart(
        "PFC pause intervals",
        t0,
        span,
        &lanes,
        ["paused", "storm"],
    ));
    s.push_str("</section>\n");
}

fn cc_section(s: &mut String, r: &Report, t0: u64, span: (u64, u64)) {
    let flows: Vec<(usize, &FlowReport)> = r
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.ecn_ce > 0 || f.cnps > 0)
        .take(32)
        .collect();
    if flows.is_empty() {
        return;
    }
    let lanes: Vec<Lane> = flows
        .iter()
        .map(|(i, f)| Lane {
            name: format!("#{} {} → {}", i + 1, f.src, f.dst),
            bars: f
                .events
                .iter()
                .filter(|e| matches!(e.kind, EventKind::EcnCe | EventKind::Cnp))
                .map(|e| {
                    (
                        e.ts_ns,
                        e.ts_ns.saturating_add(1),
                        e.kind == EventKind::Cnp,
                        format!(
                            "{} · frame {} · {}",
                            e.kind.label(),
                            e.frame,
                            human_ns(e.ts_ns.saturating_sub(t0))
                        ),
                    )
                })
                .collect(),
        })
        .collect();
    s.push_str("<section><h2>Congestion: CE marks and CNPs</h2><p class=\"muted\">Per flow, each CE mark (orange) and CNP (red) the report lists.</p>");
    s.push_str(&svg::lanes_chart(
        "CE marks and CNPs",
        t0,
        span,
        &lanes,
        ["CE mark", "CNP"],
    ));
    let rows: Vec<&(usize, &FlowReport)> = flows.iter().filter(|(_, f)| f.cc.is_some()).collect();
    if !rows.is_empty() {
        s.push_str("<table><thead><tr><th>#</th><th>CNPs</th><th>cut</th><th>not cut</th><th>unjudged</th><th>after/before</th><th>back in</th></tr></thead><tbody>");
        for (i, f) in rows {
            let Some(c) = f.cc.as_deref() else { continue };
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td{}>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                i + 1,
                grouped(c.cnps),
                grouped(c.reacted),
                if c.ignored > 0 { " class=\"bad\"" } else { "" },
                grouped(c.ignored),
                grouped(c.indeterminate),
                c.mean_ratio.map_or("-".into(), |m| format!("{m:.2}")),
                c.recovery_ns.map_or("-".into(), human_ns)
            );
        }
        s.push_str("</tbody></table>");
    }
    s.push_str("</section>\n");
}

fn nvme_section(s: &mut String, r: &Report) {
    let Some(n) = &r.nvme else { return };
    let _ = write!(
        s,
        "<section><h2>NVMe-oF I/O</h2><p class=\"muted\">{}, {} completed, {} unanswered, {}</p>",
        count(n.commands, "command", "commands"),
        grouped(n.completed),
        grouped(n.unanswered_total),
        count(n.queues.len() as u64, "queue", "queues")
    );
    let rows: Vec<(String, [u64; 5])> = n
        .queues
        .iter()
        .filter_map(|q| {
            let l = q.latency.as_ref()?;
            Some((
                format!("qid {}", q.qid.map_or("?".into(), |v| v.to_string())),
                [l.min_ns, l.p50_ns, l.p99_ns, l.max_ns, l.mean_ns],
            ))
        })
        .take(32)
        .collect();
    if !rows.is_empty() {
        s.push_str(&svg::percentiles_chart(
            "NVMe-oF command latency per queue",
            &rows,
        ));
    }
    // One histogram of every queue's latencies: the bins have the same
    // 10^(k/4) edges everywhere, so they add up (a bin no queue has is
    // left out).
    let mut all: std::collections::BTreeMap<u64, (u64, u64)> = std::collections::BTreeMap::new();
    for h in n.queues.iter().filter_map(|q| q.latency_histogram.as_ref()) {
        for (k, c) in h.counts.iter().enumerate() {
            let e = all.entry(h.edges_ns[k]).or_insert((h.edges_ns[k + 1], 0));
            e.1 += c;
        }
    }
    if !all.is_empty() {
        let mut edges: Vec<u64> = all.keys().copied().collect();
        edges.push(all.values().last().map_or(0, |v| v.0));
        let counts: Vec<u64> = all.values().map(|v| v.1).collect();
        s.push_str("<h3>Command latency histogram (every queue)</h3>");
        s.push_str(&svg::histogram_chart(
            "NVMe-oF command latency histogram",
            &edges,
            &counts,
            &[],
        ));
    }
    if !n.errors.is_empty() {
        s.push_str("<h3>Failed commands</h3><table><thead><tr><th class=\"l\">status</th><th>SCT</th><th>SC</th><th>commands</th></tr></thead><tbody>");
        for e in &n.errors {
            let _ = write!(
                s,
                "<tr><td class=\"l bad\">{}</td><td>{:#x}</td><td>{:#04x}</td><td>{}</td></tr>",
                esc(e.status),
                e.sct,
                e.sc,
                grouped(e.count)
            );
        }
        s.push_str("</tbody></table>");
    }
    if !n.slowest.is_empty() {
        s.push_str("<h3>Slowest I/Os</h3><table><thead><tr><th>qid</th><th>cid</th><th class=\"l\">opcode</th><th>bytes</th><th>latency</th><th>command frame</th><th class=\"l\">status</th></tr></thead><tbody>");
        for io in &n.slowest {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
                io.qid.map_or("?".into(), |v| v.to_string()),
                io.cid,
                esc(&io.opcode),
                grouped(u64::from(io.bytes)),
                io.latency_ns.map_or("-".into(), human_ns),
                io.command_frame,
                esc(io.status.unwrap_or("-"))
            );
        }
        s.push_str("</tbody></table>");
    }
    s.push_str("</section>\n");
}

/// TCP conversations a page lists (the most trouble first; `--json` has
/// them all).
const MAX_TCP_ROWS: usize = 200;

/// Frames beside RoCE and pauses by protocol, and the TCP conversations.
fn other_section(s: &mut String, r: &Report) {
    let Some(o) = &r.other else { return };
    let _ = write!(
        s,
        "<section><h2>Other traffic</h2><p class=\"muted\">{} beside RoCE and pauses.</p><table><thead><tr><th class=\"l\">protocol</th><th>frames</th></tr></thead><tbody>",
        count(o.frames, "frame", "frames")
    );
    for p in &o.protocols {
        let _ = write!(
            s,
            "<tr><td class=\"l\">{}</td><td>{}</td></tr>",
            esc(p.protocol),
            grouped(p.frames)
        );
    }
    s.push_str("</tbody></table>");
    if !o.tcp_conversations.is_empty() {
        let mut rows: Vec<&crate::analysis::other::TcpConversation> =
            o.tcp_conversations.iter().collect();
        rows.sort_by_key(|c| (std::cmp::Reverse((c.trouble(), c.frames)), c.stream));
        let _ = write!(
            s,
            "<h3>TCP conversations</h3><p class=\"muted\">{}, most trouble first; A is the first frame's sender; a stream's frames: <code>packets -Y 'tcp.stream == N'</code>.</p><div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>stream</th><th class=\"l\">A → B</th><th>frames</th><th>bytes</th><th>retx</th><th>lost</th><th>ooo</th><th>dup ACK</th><th>zero win</th><th>RST</th><th>handshake</th><th>ACK RTT mean</th></tr></thead><tbody>",
            count(
                o.tcp_conversations.len() as u64,
                "conversation",
                "conversations"
            )
        );
        for c in rows.iter().take(MAX_TCP_ROWS) {
            let cell = |n: u64| {
                if n > 0 {
                    format!("<td class=\"bad\">{}</td>", grouped(n))
                } else {
                    "<td>0</td>".to_string()
                }
            };
            let _ = write!(
                s,
                "<tr><td>{}</td><td class=\"l\">{} → {}</td><td>{}</td><td>{}</td>{}{}{}{}{}{}<td>{}</td><td>{}</td></tr>",
                c.stream,
                esc(&c.a),
                esc(&c.b),
                grouped(c.frames),
                grouped(c.bytes),
                cell(c.noted("retransmission")),
                cell(c.noted("lost_segment")),
                cell(c.noted("out_of_order")),
                cell(c.noted("duplicate_ack")),
                cell(c.noted("zero_window")),
                cell(c.resets),
                c.handshake_rtt_ns.map_or("-".into(), human_ns),
                c.ack_rtt.map_or("-".into(), |r| human_ns(r.mean_ns))
            );
        }
        s.push_str("</tbody></table></div>");
        if rows.len() > MAX_TCP_ROWS {
            let _ = write!(
                s,
                "<p class=\"muted\">... {} more in <code>--json</code>.</p>",
                grouped((rows.len() - MAX_TCP_ROWS) as u64)
            );
        }
    }
    s.push_str("</section>\n");
}

fn quality_section(s: &mut String, r: &Report) {
    let c = &r.capture;
    let _ = write!(
        s,
        "<section><h2>Capture quality</h2><table><tbody><tr><td class=\"l\">timestamp resolution</td><td>{}</td></tr><tr><td class=\"l\">truncated frames</td><td>{}</td></tr><tr><td class=\"l\">malformed frames</td><td>{}</td></tr><tr><td class=\"l\">duplicate frames</td><td>{}</td></tr><tr><td class=\"l\">frames the device lost</td><td>{}</td></tr><tr><td class=\"l\">bad ICRC</td><td>{}</td></tr><tr><td class=\"l\">flows past --max-flows</td><td>{}</td></tr></tbody></table>",
        human_ns(c.ts_resolution_ns),
        grouped(c.truncated_frames),
        grouped(c.malformed_frames),
        grouped(c.duplicate_frames),
        grouped(c.device_lost),
        grouped(c.icrc_errors),
        grouped(c.flows_dropped)
    );
    if !c.warnings.is_empty() {
        s.push_str("<ul>");
        for w in &c.warnings {
            let _ = write!(s, "<li>{}</li>", esc(w));
        }
        s.push_str("</ul>");
    }
    s.push_str("</section>\n");
}
