//! The charts of the HTML report as inline SVG: a small builder (scales,
//! axes with units, legends, marks with native tooltips) and one function
//! per chart kind, each from plain data so that it can be tested alone.
//! Colours are the Okabe-Ito palette, told apart by colour-blind readers,
//! and every series also has its own shape.

use std::fmt::Write;

use super::esc;
use crate::units::human_ns;

pub const WIDTH: f64 = 1000.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 24.0;
/// Room for the legend above the plot.
const TOP: f64 = 26.0;
const BOTTOM: f64 = 34.0;
/// Columns a chart is drawn in at most (one a pixel of its plot area).
pub const COLUMNS: usize = 912;

/// Okabe-Ito.
pub const BLUE: &str = "#0072B2";
pub const ORANGE: &str = "#E69F00";
pub const SKY: &str = "#56B4E9";
pub const GREEN: &str = "#009E73";
pub const VERMILLION: &str = "#D55E00";
pub const PURPLE: &str = "#CC79A7";
pub const YELLOW: &str = "#F0E442";
pub const GREY: &str = "#999999";

/// A linear scale from a domain to pixels.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub d0: f64,
    pub d1: f64,
    pub r0: f64,
    pub r1: f64,
}

impl Scale {
    pub fn new(d0: f64, d1: f64, r0: f64, r1: f64) -> Self {
        let d1 = if d1 > d0 { d1 } else { d0 + 1.0 };
        Scale { d0, d1, r0, r1 }
    }

    pub fn at(&self, v: f64) -> f64 {
        self.r0 + (v - self.d0) / (self.d1 - self.d0) * (self.r1 - self.r0)
    }
}

/// About `n` round ticks over `lo..hi`.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut out = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi + step * 1e-9 && out.len() < 50 {
        out.push(t);
        t += step;
    }
    out
}

/// The label of the decade 10^`e` ns on a log time axis, a round
/// number in its unit: `1 µs`, `10 µs`, `100 µs`, `1 ms` (not `1.0 µs`,
/// `100.0 µs`, `1.00 ms`).
fn decade(e: f64) -> String {
    let e = e.round().clamp(0.0, 12.0) as u32;
    let unit = ["ns", "µs", "ms", "s"][(e / 3).min(3) as usize];
    let digits = if e >= 9 { e - 9 } else { e % 3 };
    format!("{} {unit}", 10u64.pow(digits))
}

/// A number for a tick: no trailing zeros.
fn num(v: f64) -> String {
    if v.abs() >= 1e6 || (v != 0.0 && v.abs() < 1e-3) {
        return format!("{v:.2e}");
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Bits per second for an axis.
pub fn bps_label(v: f64) -> String {
    if v >= 1e9 {
        format!("{} Gb/s", num(v / 1e9))
    } else if v >= 1e6 {
        format!("{} Mb/s", num(v / 1e6))
    } else if v >= 1e3 {
        format!("{} kb/s", num(v / 1e3))
    } else {
        format!("{} b/s", num(v))
    }
}

/// The opening `<svg>` tag of a chart `height` pixels tall, described by
/// `label` (read by screen readers).
fn open(label: &str, height: f64) -> String {
    format!(
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg">"#,
        esc(label)
    )
}

/// One chart being drawn.
pub struct Svg {
    pub out: String,
    pub height: f64,
    pub x: Scale,
    pub y: Scale,
}

/// A time axis: nanoseconds from `t0`, labelled in the unit that suits
/// the span.
fn time_unit(span_ns: f64) -> (f64, &'static str) {
    if span_ns >= 2e9 {
        (1e9, "s")
    } else if span_ns >= 2e6 {
        (1e6, "ms")
    } else {
        (1e3, "µs")
    }
}

impl Svg {
    /// A chart `height` pixels tall for x in `x0..x1` and y in `y0..y1`,
    /// its description `label` (read by screen readers).
    pub fn new(label: &str, height: f64, x: (f64, f64), y: (f64, f64)) -> Svg {
        let out = open(label, height);
        Svg {
            out,
            height,
            x: Scale::new(x.0, x.1, LEFT, WIDTH - RIGHT),
            y: Scale::new(y.0, y.1, height - BOTTOM, TOP),
        }
    }

    /// The plot area's frame, a time axis (from `t0`, in ns) and a y axis
    /// labelled by `ylabel` and formatted by `fmt`.
    pub fn axes(&mut self, t0: f64, ylabel: &str, fmt: &dyn Fn(f64) -> String) {
        let (x0, x1) = (self.x.r0, self.x.r1);
        let (yb, yt) = (self.y.r0, self.y.r1);
        let _ = write!(
            self.out,
            r#"<rect class="plot" x="{x0}" y="{yt}" width="{}" height="{}"/>"#,
            x1 - x0,
            yb - yt
        );
        let span = self.x.d1 - self.x.d0;
        let (div, unit) = time_unit(span);
        for t in ticks((self.x.d0 - t0) / div, (self.x.d1 - t0) / div, 8) {
            let px = self.x.at(t * div + t0);
            let anchor = if px > x1 - 20.0 { "end" } else { "middle" };
            let _ = write!(
                self.out,
                r#"<line class="grid" x1="{px:.1}" y1="{yt}" x2="{px:.1}" y2="{yb}"/><text class="tick" x="{px:.1}" y="{}" text-anchor="{anchor}">{}</text>"#,
                yb + 14.0,
                num(t)
            );
        }
        let _ = write!(
            self.out,
            r#"<text class="axis" x="{}" y="{}" text-anchor="middle">time ({unit} from the capture's first frame)</text>"#,
            (x0 + x1) / 2.0,
            self.height - 4.0
        );
        for v in ticks(self.y.d0, self.y.d1, 4) {
            let py = self.y.at(v);
            let _ = write!(
                self.out,
                r#"<line class="grid" x1="{x0}" y1="{py:.1}" x2="{x1}" y2="{py:.1}"/><text class="tick" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
                x0 - 4.0,
                py + 4.0,
                esc(&fmt(v))
            );
        }
        let _ = write!(
            self.out,
            r#"<text class="axis" transform="translate(12 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
            (yb + yt) / 2.0,
            esc(ylabel)
        );
    }

    /// A shaded span of x (a pause), with a tooltip.
    pub fn band(&mut self, x0: f64, x1: f64, class: &str, tip: &str) {
        let (a, b) = (self.x.at(x0).max(self.x.r0), self.x.at(x1).min(self.x.r1));
        if b < a {
            return;
        }
        let _ = write!(
            self.out,
            r#"<rect class="{class}" x="{a:.1}" y="{}" width="{:.1}" height="{}"><title>{}</title></rect>"#,
            self.y.r1,
            (b - a).max(1.0),
            self.y.r0 - self.y.r1,
            esc(tip)
        );
    }

    /// A mark of `shape` at (x, y) in data units.
    pub fn mark(&mut self, shape: Shape, x: f64, y: f64, color: &str, tip: &str) {
        let (px, py) = (self.x.at(x), self.y.at(y));
        let body = shape.path(px, py);
        let _ = write!(
            self.out,
            r#"<path d="{body}" fill="{color}" stroke="{color}"><title>{}</title></path>"#,
            esc(tip)
        );
    }

    /// A legend, top right: (shape, colour, name).
    pub fn legend(&mut self, items: &[(Shape, &str, &str)]) {
        let mut x = self.x.r1;
        let y = self.y.r1 - 8.0;
        let mut parts = Vec::new();
        for (shape, color, name) in items.iter().rev() {
            let w = name.chars().count() as f64 * 6.4 + 18.0;
            x -= w;
            parts.push(format!(
                r#"<path d="{}" fill="{color}" stroke="{color}"/><text class="legend" x="{:.1}" y="{:.1}">{}</text>"#,
                shape.path(x + 5.0, y - 4.0),
                x + 12.0,
                y,
                esc(name)
            ));
        }
        let _ = write!(
            self.out,
            r#"<rect class="legendbox" x="{:.1}" y="{}" width="{:.1}" height="16"/>"#,
            x - 4.0,
            y - 12.0,
            self.x.r1 - x + 4.0
        );
        for p in parts.iter().rev() {
            self.out.push_str(p);
        }
    }

    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
}

/// Mark shapes, each series its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Dot,
    Cross,
    Diamond,
    Triangle,
    TriangleDown,
    Square,
    Bar,
}

impl Shape {
    fn path(self, x: f64, y: f64) -> String {
        match self {
            Shape::Dot => format!("M{:.1} {y:.1}a2 2 0 1 0 4 0a2 2 0 1 0 -4 0", x - 2.0),
            Shape::Cross => format!("M{:.1} {:.1}l7 7m0 -7l-7 7", x - 3.5, y - 3.5),
            Shape::Diamond => format!("M{x:.1} {:.1}l4 4l-4 4l-4 -4z", y - 4.0),
            Shape::Triangle => format!("M{x:.1} {:.1}l4 7h-8z", y - 4.0),
            Shape::TriangleDown => format!("M{x:.1} {:.1}l4 -7h-8z", y + 4.0),
            Shape::Square => format!("M{:.1} {:.1}h6v6h-6z", x - 3.0, y - 3.0),
            Shape::Bar => format!("M{:.1} {:.1}h8v4h-8z", x - 4.0, y - 2.0),
        }
    }
}

/// A PSN range of one bin: (bin start ns, lowest, highest).
pub type PsnBin = (u64, u32, u32);

/// One anomaly on a PSN chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anomaly {
    Retransmit,
    OutOfOrder,
    Gap,
    Nak,
    Cnp,
    Ce,
}

impl Anomaly {
    fn style(self) -> (Shape, &'static str, &'static str) {
        match self {
            Anomaly::Retransmit => (Shape::Cross, VERMILLION, "replayed"),
            Anomaly::OutOfOrder => (Shape::Diamond, ORANGE, "late (out of order)"),
            Anomaly::Gap => (Shape::Triangle, PURPLE, "gap"),
            Anomaly::Nak => (Shape::Square, "currentColor", "NAK"),
            Anomaly::Cnp => (Shape::TriangleDown, GREEN, "CNP"),
            Anomaly::Ce => (Shape::Bar, SKY, "CE mark"),
        }
    }
}

/// A PSN sequence chart (like tcptrace's): PSN from the flow's first
/// against time. Each bin's PSNs are a vertical stroke from lowest to
/// highest (at most one a pixel column: bins finer than a pixel are
/// merged, min of mins, max of maxes); anomalies are kept one by one.
pub fn psn_chart(
    label: &str,
    t0: u64,
    span: (u64, u64),
    bin_ns: u64,
    bins: &[PsnBin],
    anomalies: &[(Anomaly, u64, u32, String)],
) -> String {
    let hi = bins
        .iter()
        .map(|b| b.2)
        .chain(anomalies.iter().map(|a| a.2))
        .max()
        .unwrap_or(1)
        .max(1);
    let mut svg = Svg::new(
        label,
        260.0,
        (span.0 as f64, span.1.max(span.0.saturating_add(1)) as f64),
        (0.0, f64::from(hi) * 1.05),
    );
    svg.axes(t0 as f64, "PSN from the flow's first", &num);
    // One stroke a pixel column.
    let mut cols: Vec<Option<(u32, u32)>> = vec![None; COLUMNS + 1];
    for &(t, lo, hi) in bins {
        let mid = t.saturating_add(bin_ns / 2) as f64;
        let px = svg.x.at(mid);
        let c = (((px - svg.x.r0) / (svg.x.r1 - svg.x.r0)) * COLUMNS as f64)
            .clamp(0.0, COLUMNS as f64) as usize;
        let e = cols[c].get_or_insert((lo, hi));
        e.0 = e.0.min(lo);
        e.1 = e.1.max(hi);
    }
    let mut d = String::new();
    for (c, v) in cols.iter().enumerate() {
        if let Some((lo, hi)) = v {
            let px = svg.x.r0 + (c as f64 + 0.5) / COLUMNS as f64 * (svg.x.r1 - svg.x.r0);
            let (a, b) = (svg.y.at(f64::from(*lo)), svg.y.at(f64::from(*hi)));
            // At least 4 pixels tall: a column of one PSN was a dot.
            let mid = (a + b) / 2.0;
            let _ = write!(
                d,
                "M{px:.1} {:.1}V{:.1}",
                (a + 0.8).max(mid + 2.0),
                (b - 0.8).min(mid - 2.0)
            );
        }
    }
    let _ = write!(
        svg.out,
        r#"<path class="series" d="{d}" stroke="{BLUE}" stroke-width="2" fill="none"><title>PSNs sent in order</title></path>"#
    );
    let mut seen = Vec::new();
    for (kind, ts, psn, tip) in anomalies {
        let (shape, color, _) = kind.style();
        svg.mark(shape, *ts as f64, f64::from(*psn), color, tip);
        if !seen.contains(kind) {
            seen.push(*kind);
        }
    }
    let mut legend = vec![(Shape::Bar, BLUE, "sent")];
    for k in [
        Anomaly::Retransmit,
        Anomaly::OutOfOrder,
        Anomaly::Gap,
        Anomaly::Nak,
        Anomaly::Cnp,
        Anomaly::Ce,
    ] {
        if seen.contains(&k) {
            let (shape, color, name) = k.style();
            legend.push((shape, color, name));
        }
    }
    svg.legend(&legend);
    svg.finish()
}

/// A throughput chart: payload rate per bin as a line, the replayed part
/// as bars, paused spans shaded.
pub fn throughput_chart(
    label: &str,
    t0: u64,
    span: (u64, u64),
    bin_ns: u64,
    points: &[(u64, u64, u64)],
    paused: &[(u64, u64, String)],
) -> String {
    let bps = |bytes: u64| bytes as f64 * 8e9 / bin_ns.max(1) as f64;
    let top = points.iter().map(|p| bps(p.1)).fold(1.0, f64::max) * 1.1;
    let mut svg = Svg::new(
        label,
        220.0,
        (span.0 as f64, span.1.max(span.0.saturating_add(1)) as f64),
        (0.0, top),
    );
    svg.axes(t0 as f64, "payload", &bps_label);
    // Over the plot's background (under it, they were never seen).
    for (a, b, tip) in paused {
        svg.band(*a as f64, *b as f64, "paused", tip);
    }
    // Bins finer than a pixel: each column keeps its lowest and highest.
    let mut cols: Vec<Option<(f64, f64, f64)>> = vec![None; COLUMNS + 1];
    let col = |svg: &Svg, t: f64| {
        (((svg.x.at(t) - svg.x.r0) / (svg.x.r1 - svg.x.r0)) * COLUMNS as f64)
            .clamp(0.0, COLUMNS as f64) as usize
    };
    for &(t, bytes, replayed) in points {
        let c = col(&svg, t.saturating_add(bin_ns / 2) as f64);
        let (v, r) = (bps(bytes), bps(replayed));
        let e = cols[c].get_or_insert((v, v, r));
        e.0 = e.0.min(v);
        e.1 = e.1.max(v);
        e.2 = e.2.max(r);
    }
    let mut line = String::new();
    let mut bars = String::new();
    let w = (svg.x.r1 - svg.x.r0) / COLUMNS as f64;
    for (c, v) in cols.iter().enumerate() {
        let Some((lo, hi, re)) = v else { continue };
        let px = svg.x.r0 + (c as f64 + 0.5) * w;
        let cmd = if line.is_empty() { 'M' } else { 'L' };
        let _ = write!(
            line,
            "{cmd}{px:.1} {:.1}L{px:.1} {:.1}",
            svg.y.at(*lo),
            svg.y.at(*hi)
        );
        if *re > 0.0 {
            let y = svg.y.at(*re);
            let _ = write!(
                bars,
                r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{VERMILLION}"/>"#,
                px - (w * 2.0).max(2.0) / 2.0,
                (w * 2.0).max(2.0),
                (svg.y.r0 - y).max(1.0)
            );
        }
    }
    // A flow whose payload all fell in one bin is one column: a line of
    // no length, which draws nothing. It is drawn 6 pixels wide instead.
    if let [(c, (_, hi, _))] = cols
        .iter()
        .enumerate()
        .filter_map(|(c, v)| Some((c, (*v)?)))
        .collect::<Vec<_>>()[..]
    {
        let px = svg.x.r0 + (c as f64 + 0.5) * w;
        let y = svg.y.at(hi);
        line = format!("M{:.1} {y:.1}L{:.1} {y:.1}", px - 3.0, px + 3.0);
    }
    svg.out.push_str(&bars);
    let _ = write!(
        svg.out,
        r#"<path class="series" d="{line}" stroke="{BLUE}" stroke-width="1.5" fill="none"><title>payload rate, {} bins</title></path>"#,
        human_ns(bin_ns)
    );
    let mut legend = vec![(Shape::Bar, BLUE, "payload")];
    if cols.iter().flatten().any(|c| c.2 > 0.0) {
        legend.push((Shape::Square, VERMILLION, "replayed"));
    }
    if !paused.is_empty() {
        legend.push((Shape::Square, GREY, "paused (PFC)"));
    }
    svg.legend(&legend);
    svg.finish()
}

/// One lane of a timeline: its name and its bars (start, end, storm,
/// tooltip).
pub struct Lane {
    pub name: String,
    pub bars: Vec<(u64, u64, bool, String)>,
}

/// Lanes of intervals (PFC pauses per MAC and priority, CE marks and
/// CNPs per flow) over the capture; `names` says in the legend what a
/// bar is, plain and marked (a pause and a storm, a CE mark and a CNP).
pub fn lanes_chart(
    label: &str,
    t0: u64,
    span: (u64, u64),
    lanes: &[Lane],
    names: [&str; 2],
) -> String {
    let lane_h = 22.0;
    let height = TOP + BOTTOM + lane_h * lanes.len().max(1) as f64;
    let mut svg = Svg::new(
        label,
        height,
        (span.0 as f64, span.1.max(span.0.saturating_add(1)) as f64),
        (0.0, lanes.len().max(1) as f64),
    );
    // Lane names instead of y ticks: wider left margin is not needed, they
    // are drawn inside the plot, over the bars.
    svg.axes(t0 as f64, "", &|_| String::new());
    for (i, lane) in lanes.iter().enumerate() {
        let y = svg.y.at((lanes.len() - i) as f64);
        for (x0, x1, storm, tip) in merged_bars(&svg, &lane.bars) {
            let color = if storm { VERMILLION } else { ORANGE };
            let _ = write!(
                svg.out,
                r#"<rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}"{}><title>{}</title></rect>"#,
                y + 3.0,
                (x1 - x0).max(1.5),
                lane_h - 6.0,
                if storm { r#" class="storm""# } else { "" },
                esc(&tip)
            );
        }
        let _ = write!(
            svg.out,
            r#"<text class="lane" x="{}" y="{:.1}">{}</text>"#,
            svg.x.r0 + 4.0,
            y + lane_h / 2.0 + 4.0,
            esc(&lane.name)
        );
    }
    // Each kind of bar the lanes have, named as the caller says.
    let has = |marked: bool| lanes.iter().any(|l| l.bars.iter().any(|b| b.2 == marked));
    let legend: Vec<_> = [(false, ORANGE), (true, VERMILLION)]
        .into_iter()
        .zip(names)
        .filter(|((marked, _), _)| has(*marked))
        .map(|((_, color), name)| (Shape::Square, color, name))
        .collect();
    svg.legend(&legend);
    svg.finish()
}

/// Bars in pixels, those that touch merged (a storm of a million pauses is
/// as many bars as the chart has pixels): (x0, x1, storm, tooltip).
fn merged_bars(svg: &Svg, bars: &[(u64, u64, bool, String)]) -> Vec<(f64, f64, bool, String)> {
    let mut sorted: Vec<&(u64, u64, bool, String)> = bars.iter().collect();
    sorted.sort_by_key(|b| b.0);
    let mut out: Vec<(f64, f64, bool, String, usize)> = Vec::new();
    for (a, b, storm, tip) in sorted {
        let (x0, x1) = (
            svg.x.at(*a as f64),
            svg.x.at(*b as f64).max(svg.x.at(*a as f64) + 1.5),
        );
        match out.last_mut() {
            Some(last) if x0 <= last.1 + 1.0 => {
                last.1 = last.1.max(x1);
                last.2 |= storm;
                last.4 += 1;
            }
            _ => out.push((x0, x1, *storm, tip.clone(), 1)),
        }
    }
    out.into_iter()
        .map(|(x0, x1, storm, tip, n)| {
            let tip = if n > 1 {
                format!("{n} intervals closer than a pixel; the first: {tip}")
            } else {
                tip
            };
            (x0, x1, storm, tip)
        })
        .collect()
}

/// A histogram of times on a log axis: a bar per bin (`edges_ns` one
/// longer than `counts`), the p50 and p99 as dashed lines.
pub fn histogram_chart(
    label: &str,
    edges_ns: &[u64],
    counts: &[u64],
    marks: &[(&str, u64)],
) -> String {
    let lo = edges_ns.first().copied().unwrap_or(1).max(1) as f64;
    let hi = edges_ns.last().copied().unwrap_or(10).max(2) as f64;
    // Whole decades, so that the axis has at least two labelled ticks
    // (samples within one bin, 1.8 to 3.2 µs say, had none).
    let l0 = lo.log10().floor();
    let l1 = hi.log10().ceil().max(l0 + 1.0);
    let top = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let height = 170.0;
    let x = Scale::new(l0, l1, LEFT, WIDTH - RIGHT);
    let y = Scale::new(0.0, top * 1.1, height - BOTTOM, TOP);
    let mut out = open(label, height);
    let yb = height - BOTTOM;
    let _ = write!(
        out,
        r#"<rect class="plot" x="{LEFT}" y="{TOP}" width="{}" height="{}"/>"#,
        x.r1 - x.r0,
        yb - TOP
    );
    // Decades as ticks.
    let mut e = l0.ceil();
    while e <= l1 {
        let px = x.at(e);
        let anchor = if px > x.r1 - 20.0 { "end" } else { "middle" };
        let _ = write!(
            out,
            r#"<line class="grid" x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{yb}"/><text class="tick" x="{px:.1}" y="{}" text-anchor="{anchor}">{}</text>"#,
            yb + 14.0,
            decade(e)
        );
        e += 1.0;
    }
    // Counts: whole numbers only (one sample gave 0, 0.5 and 1).
    for v in ticks(0.0, top, 3).into_iter().filter(|v| v.fract() == 0.0) {
        let py = y.at(v);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{LEFT}" y1="{py:.1}" x2="{}" y2="{py:.1}"/><text class="tick" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            x.r1,
            LEFT - 4.0,
            py + 4.0,
            num(v)
        );
    }
    let _ = write!(
        out,
        r#"<text class="axis" x="{}" y="{}" text-anchor="middle">time (log scale)</text><text class="axis" transform="translate(12 {}) rotate(-90)" text-anchor="middle">samples</text>"#,
        (x.r0 + x.r1) / 2.0,
        height - 4.0,
        (yb + TOP) / 2.0
    );
    for (i, &c) in counts.iter().enumerate() {
        let (a, b) = (
            edges_ns[i].max(1) as f64,
            edges_ns.get(i + 1).copied().unwrap_or(1).max(1) as f64,
        );
        let (x0, x1) = (x.at(a.log10()), x.at(b.log10()));
        let py = y.at(c as f64);
        let _ = write!(
            out,
            r#"<rect x="{:.1}" y="{py:.1}" width="{:.1}" height="{:.1}" fill="{SKY}" stroke="{BLUE}"><title>{} to {}: {c}</title></rect>"#,
            x0 + 0.5,
            (x1 - x0 - 1.0).max(1.0),
            (yb - py).max(if c > 0 { 1.0 } else { 0.0 }),
            esc(&human_ns(edges_ns[i])),
            esc(&human_ns(edges_ns.get(i + 1).copied().unwrap_or(0)))
        );
    }
    let mut legend = vec![(Shape::Square, SKY, "samples")];
    for (name, v) in marks {
        let px = x.at(((*v).max(1) as f64).log10()).clamp(x.r0, x.r1);
        let color = if *name == "p99" { VERMILLION } else { BLUE };
        let _ = write!(
            out,
            r#"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{yb}" stroke="{color}" stroke-width="2" stroke-dasharray="5 3"><title>{name} {}</title></line>"#,
            esc(&human_ns(*v))
        );
        legend.push((Shape::Bar, color, name));
    }
    let mut svg = Svg {
        out,
        height,
        x: Scale::new(0.0, 1.0, LEFT, WIDTH - RIGHT),
        y,
    };
    svg.legend(&legend);
    svg.finish()
}

/// Distributions as strips on a log time axis: min to max as a thin line,
/// p50 to p99 as a box, the mean as a tick; one row each.
pub fn percentiles_chart(label: &str, rows: &[(String, [u64; 5])]) -> String {
    let row_h = 26.0;
    let height = TOP + BOTTOM + row_h * rows.len().max(1) as f64;
    let lo = rows.iter().map(|r| r.1[0].max(1)).min().unwrap_or(1).max(1) as f64;
    let hi = rows.iter().map(|r| r.1[3]).max().unwrap_or(10).max(10) as f64;
    let (l0, l1) = (
        lo.log10().floor(),
        hi.log10().ceil().max(lo.log10().floor() + 1.0),
    );
    let x = Scale::new(l0, l1, LEFT + 110.0, WIDTH - RIGHT);
    let mut out = open(label, height);
    let yb = height - BOTTOM;
    let _ = write!(
        out,
        r#"<rect class="plot" x="{}" y="{TOP}" width="{}" height="{}"/>"#,
        x.r0,
        x.r1 - x.r0,
        yb - TOP
    );
    let mut e = l0;
    while e <= l1 {
        let px = x.at(e);
        let anchor = if px > x.r1 - 20.0 { "end" } else { "middle" };
        let _ = write!(
            out,
            r#"<line class="grid" x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{yb}"/><text class="tick" x="{px:.1}" y="{}" text-anchor="{anchor}">{}</text>"#,
            yb + 14.0,
            decade(e)
        );
        e += 1.0;
    }
    let _ = write!(
        out,
        r#"<text class="axis" x="{}" y="{}" text-anchor="middle">time (log scale): line min to max, box p50 to p99, tick the mean</text>"#,
        (x.r0 + x.r1) / 2.0,
        height - 4.0
    );
    let at = |v: u64| x.at((v.max(1) as f64).log10());
    for (i, (name, [min, p50, p99, max, mean])) in rows.iter().enumerate() {
        let y = TOP + row_h * (i as f64 + 0.5);
        let tip = format!(
            "{name}: min {}, p50 {}, p99 {}, max {}, mean {}",
            human_ns(*min),
            human_ns(*p50),
            human_ns(*p99),
            human_ns(*max),
            human_ns(*mean)
        );
        let _ = write!(
            out,
            r#"<g><title>{}</title><line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{GREY}" stroke-width="2"/><rect x="{:.1}" y="{:.1}" width="{:.1}" height="12" fill="{SKY}" stroke="{BLUE}"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{VERMILLION}" stroke-width="2"/></g><text class="lane" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            esc(&tip),
            at(*min),
            at(*max),
            at(*p50),
            y - 6.0,
            (at(*p99) - at(*p50)).max(2.0),
            at(*mean),
            y - 8.0,
            at(*mean),
            y + 8.0,
            x.r0 - 6.0,
            y + 4.0,
            esc(name)
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_span() {
        assert_eq!(ticks(0.0, 10.0, 5), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(3.0, 3.9, 3), [3.0, 3.5]);
        assert_eq!(num(1.2300), "1.23");
        assert_eq!(bps_label(2.5e9), "2.5 Gb/s");
    }

    #[test]
    fn decades_are_round_numbers_in_their_units() {
        let got: Vec<String> = (0..=11).map(|e| decade(f64::from(e))).collect();
        assert_eq!(
            got,
            [
                "1 ns", "10 ns", "100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms",
                "1 s", "10 s", "100 s"
            ]
        );
    }

    #[test]
    fn a_chart_keeps_one_stroke_a_column_and_every_anomaly() {
        // 100 000 bins of 10 ns: far finer than the pixels.
        let bins: Vec<PsnBin> = (0..100_000u64)
            .map(|k| (k * 10, k as u32, k as u32))
            .collect();
        let anomalies: Vec<_> = (0..50u64)
            .map(|k| {
                (
                    Anomaly::Retransmit,
                    k * 20_000,
                    (k * 2000) as u32,
                    format!("r{k}"),
                )
            })
            .collect();
        let svg = psn_chart("t", 0, (0, 1_000_000), 10, &bins, &anomalies);
        let strokes = svg.matches('V').count();
        assert!(strokes <= COLUMNS + 1, "{strokes}");
        assert_eq!(svg.matches("<title>r").count(), 50);
        assert!(svg.len() < 60_000, "{}", svg.len());
    }
}
