//! The report as JSON, written directly: the flows (with their events and
//! episodes, nearly all of a large report) and the connections by hand,
//! the rest through serde
//! with [`ReportFormatter`]. The bytes are exactly those of
//! [`write_report`](super::json::write_report) (tested on every sample and
//! external capture), at about three times the speed: this is serial work
//! after the parallel part of an analysis.

use std::io::Write;

use super::json::{ReportFormatter, push_u64};
use crate::analysis::Report;
use crate::analysis::report::{
    Connection, DelayStats, Episode, Event, FlowReport, IntervalReport, NakCounts, PeerRef,
    PfcReport,
};
use crate::analysis::timing::{Sizes, Stats, TimeoutReport, TimingReport};

/// Bytes formatted before they are written: a buffer that stays in the
/// cache. Growing one to the whole report (megabytes for a large capture)
/// cost more in page faults and copies than the formatting itself.
const PIECE: usize = 60 << 10;

/// Writes the report with a final newline.
pub fn write<W: Write + Send>(w: W, report: &Report) -> std::io::Result<()> {
    write_on(w, report, 1)
}

/// Like [`write()`], the flows of a report with thousands of them formatted
/// on up to `threads` threads (the same bytes).
pub fn write_on<W: Write + Send>(mut w: W, report: &Report, threads: usize) -> std::io::Result<()> {
    // Every field by name: a new one cannot be left out unnoticed.
    let Report {
        schema,
        capture,
        flows,
        connections,
        pfc,
        nvme,
        other,
        hints,
        notes: _,
    } = report;
    let mut out = Vec::with_capacity(PIECE + (16 << 10));
    out.extend_from_slice(b"{\n  \"schema\": ");
    serde_at(&mut out, schema, 1)?;
    out.extend_from_slice(b",\n  \"capture\": ");
    serde_at(&mut out, capture, 1)?;
    out.extend_from_slice(b",\n  \"flows\": [");
    flow_list(&mut out, &mut w, flows, threads)?;
    out.extend_from_slice(if flows.is_empty() { b"]" } else { b"\n  ]" });
    out.extend_from_slice(b",\n  \"connections\": ");
    connection_list(&mut out, &mut w, connections)?;
    out.extend_from_slice(b",\n  \"pfc\": ");
    pfc_report(&mut out, &mut w, pfc)?;
    if let Some(n) = nvme {
        out.extend_from_slice(b",\n  \"nvme\": ");
        serde_at(&mut out, n, 1)?;
    }
    if let Some(o) = other {
        out.extend_from_slice(b",\n  \"other\": ");
        serde_at(&mut out, o, 1)?;
    }
    out.extend_from_slice(b",\n  \"hints\": ");
    serde_at(&mut out, hints, 1)?;
    out.extend_from_slice(b"\n}\n");
    w.write_all(&out)
}

/// Flows a thread formats at a time in a parallel write (about 750 KB of
/// JSON). Batches of 128 saved 10 ms of 90 on 131 072 flows, these 20.
const BATCH: usize = 512;

/// The members of the flows list, each after its separator. With many
/// flows and threads, formatted in waves of two batches a thread, the next
/// wave while the last is written: the memory is two waves' (6 MB on 2
/// cores), whatever the number of flows.
fn flow_list<W: Write + Send>(
    out: &mut Vec<u8>,
    w: &mut W,
    flows: &[FlowReport],
    threads: usize,
) -> std::io::Result<()> {
    use rayon::prelude::*;
    let member = |out: &mut Vec<u8>, i: usize| {
        out.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
        flow(out, &flows[i])
    };
    let Some(pool) = crate::analysis::flows_pool(threads, flows.len()) else {
        for i in 0..flows.len() {
            member(out, i)?;
            if out.len() >= PIECE {
                w.write_all(out)?;
                out.clear();
            }
        }
        return Ok(());
    };
    w.write_all(out)?;
    out.clear();
    // Two waves' buffers, reused: the one being written, the one being
    // formatted.
    let batches = threads * 2;
    let wave = BATCH * batches;
    let format = |start: usize, bufs: &mut [Vec<u8>]| -> std::io::Result<()> {
        bufs.par_iter_mut().enumerate().try_for_each(|(k, buf)| {
            buf.clear();
            let first = start + k * BATCH;
            for i in first..(first + BATCH).min(flows.len()) {
                member(buf, i)?;
            }
            Ok(())
        })
    };
    let mut ready: Vec<Vec<u8>> = (0..batches).map(|_| Vec::new()).collect();
    let mut spare = ready.clone();
    pool.install(|| {
        format(0, &mut ready)?;
        let mut next = wave;
        loop {
            let more = next < flows.len();
            let (formatted, written) = rayon::join(
                || more.then(|| format(next, &mut spare)),
                || ready.iter().try_for_each(|b| w.write_all(b)),
            );
            written?;
            match formatted {
                None => return Ok(()),
                Some(r) => r?,
            }
            std::mem::swap(&mut ready, &mut spare);
            next += wave;
        }
    })
}

/// `value` through serde, laid out as it would be `depth` containers deep.
fn serde_at<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
    depth: usize,
) -> std::io::Result<()> {
    let f = ReportFormatter::at_depth(ReportFormatter::FLAT_FROM, depth);
    value
        .serialize(&mut serde_json::Serializer::with_formatter(out, f))
        .map_err(std::io::Error::other)
}

/// A JSON string.
fn string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // Rare (a NAK's detail, an odd capture): serde_json's escaping.
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

fn opt_u64(out: &mut Vec<u8>, v: Option<u64>) {
    match v {
        Some(v) => push_u64(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

/// An indented member: `"key": ` on its own line at the given indent (the
/// comma of the previous member included unless `first`).
macro_rules! member {
    ($out:expr, $indent:literal, $first:expr, $key:literal) => {
        $out.extend_from_slice(if $first {
            concat!("\n", $indent, "\"", $key, "\": ").as_bytes()
        } else {
            concat!(",\n", $indent, "\"", $key, "\": ").as_bytes()
        })
    };
}

/// A member of a one-line object: `"key":` (after a comma unless `first`).
macro_rules! flat {
    ($out:expr, $first:expr, $key:literal) => {
        $out.extend_from_slice(if $first {
            concat!("\"", $key, "\":").as_bytes()
        } else {
            concat!(",\"", $key, "\":").as_bytes()
        })
    };
}

/// Numeric members, each on its own line at `indent`; `first`: they open
/// their object (no comma before the first).
fn numbers(out: &mut Vec<u8>, indent: &str, first: bool, members: &[(&str, u64)]) {
    for (i, (key, v)) in members.iter().enumerate() {
        if !(first && i == 0) {
            out.push(b',');
        }
        out.push(b'\n');
        out.extend_from_slice(indent.as_bytes());
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\": ");
        push_u64(out, *v);
    }
}

/// An object of numbers at the fourth level (a flow's `naks`, `ce_to_cnp`).
fn number_object(out: &mut Vec<u8>, members: &[(&str, u64)]) {
    out.push(b'{');
    numbers(out, "        ", true, members);
    out.extend_from_slice(b"\n      }");
}

/// The connections list, in pieces (65 536 of them are 13 MB of JSON).
fn connection_list<W: Write>(
    out: &mut Vec<u8>,
    w: &mut W,
    list: &[Connection],
) -> std::io::Result<()> {
    members(out, Some(w), 2, list, connection)
}

fn connection(out: &mut Vec<u8>, c: &Connection) {
    let Connection {
        flows,
        paired_by,
        ecn_ce,
        cnps,
        ulp,
        ulp_by,
        qid,
    } = c;
    out.push(b'{');
    member!(out, "      ", true, "flows");
    out.extend_from_slice(b"[\n        ");
    push_u64(out, flows[0] as u64);
    out.extend_from_slice(b",\n        ");
    push_u64(out, flows[1] as u64);
    out.extend_from_slice(b"\n      ]");
    member!(out, "      ", false, "paired_by");
    string(out, paired_by.as_str());
    member!(out, "      ", false, "ecn_ce");
    push_u64(out, *ecn_ce);
    member!(out, "      ", false, "cnps");
    push_u64(out, *cnps);
    member!(out, "      ", false, "ulp");
    string(out, ulp.name());
    member!(out, "      ", false, "ulp_by");
    match ulp_by {
        Some(by) => string(out, by.as_str()),
        None => out.extend_from_slice(b"null"),
    }
    if let Some(q) = qid {
        member!(out, "      ", false, "qid");
        push_u64(out, u64::from(*q));
    }
    out.extend_from_slice(b"\n    }");
}

/// The `pfc` member's value, the second level of the document: its
/// intervals (thousands on a large capture) by hand, handed to `w` in
/// pieces like the flows, the rest through serde.
fn pfc_report<W: Write>(out: &mut Vec<u8>, w: &mut W, p: &PfcReport) -> std::io::Result<()> {
    let PfcReport {
        link_speed_bps,
        link_speed_from,
        link_speeds,
        frames,
        storm_threshold_ns,
        intervals,
        summary,
        storms,
    } = p;
    out.push(b'{');
    numbers(out, "    ", true, &[("link_speed_bps", *link_speed_bps)]);
    member!(out, "    ", false, "link_speed_from");
    serde_at(out, link_speed_from, 2)?;
    member!(out, "    ", false, "link_speeds");
    serde_at(out, link_speeds, 2)?;
    numbers(
        out,
        "    ",
        false,
        &[
            ("frames", *frames),
            ("storm_threshold_ns", *storm_threshold_ns),
        ],
    );
    member!(out, "    ", false, "intervals");
    members(out, Some(w), 3, intervals, interval)?;
    member!(out, "    ", false, "summary");
    serde_at(out, summary, 2)?;
    numbers(out, "    ", false, &[("storms", *storms)]);
    out.extend_from_slice(b"\n  }");
    Ok(())
}

/// A pause interval, as the fourth level of the document (its members
/// indented by 8).
fn interval(out: &mut Vec<u8>, iv: &IntervalReport) {
    let IntervalReport {
        src_mac,
        priority,
        start_ns,
        end_ns,
        ended_by,
        duration_ns,
        start_frame,
        end_frame,
        frames,
        flows,
        flows_total,
        storm,
        reaction,
    } = iv;
    out.push(b'{');
    member!(out, "        ", true, "src_mac");
    string(out, src_mac);
    member!(out, "        ", false, "priority");
    opt_u64(out, priority.map(u64::from));
    numbers(
        out,
        "        ",
        false,
        &[("start_ns", *start_ns), ("end_ns", *end_ns)],
    );
    member!(out, "        ", false, "ended_by");
    string(out, ended_by.as_str());
    numbers(
        out,
        "        ",
        false,
        &[("duration_ns", *duration_ns), ("start_frame", *start_frame)],
    );
    member!(out, "        ", false, "end_frame");
    opt_u64(out, *end_frame);
    numbers(out, "        ", false, &[("frames", *frames)]);
    member!(out, "        ", false, "flows");
    out.push(b'[');
    for (i, f) in flows.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_u64(out, *f as u64);
    }
    out.push(b']');
    numbers(
        out,
        "        ",
        false,
        &[("flows_total", u64::from(*flows_total))],
    );
    member!(out, "        ", false, "storm");
    out.extend_from_slice(if *storm { b"true" } else { b"false" });
    member!(out, "        ", false, "reaction");
    // Plain numbers, a string and an optional bool: serde cannot fail.
    let _ = serde_at(out, reaction, 4);
    out.extend_from_slice(b"\n      }");
}

/// A flow, as the third level of the document (its members indented by 6).
fn flow(out: &mut Vec<u8>, f: &FlowReport) -> std::io::Result<()> {
    let FlowReport {
        src,
        dst,
        destqp,
        version,
        transport,
        packets,
        bytes,
        payload_bytes,
        duplicates,
        first_frame,
        first_ts_ns,
        last_ts_ns,
        retransmits,
        out_of_order,
        missing,
        psn_reuse,
        ecn_ce,
        cnps,
        naks,
        retransmit_episodes,
        episodes,
        ce_to_cnp,
        pmtu,
        priority,
        peer,
        one_way,
        bad_icrc,
        unanswered_reads,
        events,
        events_dropped,
        timing,
        cc,
    } = f;
    out.push(b'{');
    member!(out, "      ", true, "src");
    string(out, src);
    member!(out, "      ", false, "dst");
    string(out, dst);
    member!(out, "      ", false, "destqp");
    push_u64(out, u64::from(*destqp));
    member!(out, "      ", false, "version");
    string(out, version.as_str());
    member!(out, "      ", false, "transport");
    string(out, crate::analysis::report::transport_name(*transport));
    numbers(
        out,
        "      ",
        false,
        &[
            ("packets", *packets),
            ("bytes", *bytes),
            ("payload_bytes", *payload_bytes),
            ("duplicates", *duplicates),
            ("first_frame", *first_frame),
            ("first_ts_ns", *first_ts_ns),
            ("last_ts_ns", *last_ts_ns),
            ("retransmits", *retransmits),
            ("out_of_order", *out_of_order),
            ("missing", *missing),
            ("psn_reuse", *psn_reuse),
            ("ecn_ce", *ecn_ce),
            ("cnps", *cnps),
        ],
    );
    member!(out, "      ", false, "naks");
    nak_counts(out, naks);
    member!(out, "      ", false, "retransmit_episodes");
    push_u64(out, *retransmit_episodes);
    member!(out, "      ", false, "episodes");
    members(out, None, 4, episodes, episode)?;
    member!(out, "      ", false, "ce_to_cnp");
    match ce_to_cnp {
        Some(d) => delay(out, d),
        None => out.extend_from_slice(b"null"),
    }
    member!(out, "      ", false, "pmtu");
    opt_u64(out, pmtu.map(u64::from));
    member!(out, "      ", false, "priority");
    opt_u64(out, priority.map(u64::from));
    member!(out, "      ", false, "peer");
    match peer {
        Some(p) => peer_ref(out, p),
        None => out.extend_from_slice(b"null"),
    }
    member!(out, "      ", false, "one_way");
    out.extend_from_slice(if *one_way { b"true" } else { b"false" });
    member!(out, "      ", false, "bad_icrc");
    push_u64(out, *bad_icrc);
    member!(out, "      ", false, "unanswered_reads");
    push_u64(out, *unanswered_reads);
    member!(out, "      ", false, "events");
    members(out, None, 4, events, event)?;
    member!(out, "      ", false, "events_dropped");
    push_u64(out, *events_dropped);
    member!(out, "      ", false, "timing");
    match timing {
        // The series and histograms (`--timeline`, `--html`) through serde.
        Some(t)
            if t.histograms.is_some()
                || t.throughput
                    .as_ref()
                    .is_some_and(|p| p.series.is_some() || p.psn_first.is_some()) =>
        {
            serde_at(out, t, 3)?
        }
        Some(t) => timing_report(out, t),
        None => out.extend_from_slice(b"null"),
    }
    if let Some(c) = cc {
        member!(out, "      ", false, "cc");
        serde_at(out, c, 3)?;
    }
    out.extend_from_slice(b"\n    }");
    Ok(())
}

/// A flow's `timing` without series or histograms: members at the third
/// level, their values on one line. Through serde it was a third of the
/// JSON's time on a capture of many short flows (33 168 flows: 116 M of
/// 308 M instructions).
fn timing_report(out: &mut Vec<u8>, t: &TimingReport) {
    let TimingReport {
        rtt,
        messages,
        completion,
        incomplete,
        read_latency,
        acks,
        timeout,
        throughput,
        histograms: _,
    } = t;
    out.push(b'{');
    let mut first = true;
    if let Some(s) = rtt {
        member!(out, "        ", first, "rtt");
        stats(out, s);
        first = false;
    }
    if let Some(m) = messages {
        member!(out, "        ", first, "messages");
        out.push(b'{');
        flat!(out, true, "count");
        push_u64(out, m.count);
        flat!(out, false, "bytes");
        push_u64(out, m.bytes);
        flat!(out, false, "size");
        let Sizes { min, p50, p99, max } = m.size;
        flat_numbers(
            out,
            &[("min", min), ("p50", p50), ("p99", p99), ("max", max)],
        );
        out.push(b'}');
        first = false;
    }
    if let Some(s) = completion {
        member!(out, "        ", first, "completion");
        stats(out, s);
        first = false;
    }
    member!(out, "        ", first, "incomplete");
    push_u64(out, *incomplete);
    if let Some(s) = read_latency {
        member!(out, "        ", false, "read_latency");
        stats(out, s);
    }
    if let Some(a) = acks {
        member!(out, "        ", false, "acks");
        out.push(b'{');
        flat!(out, true, "count");
        push_u64(out, a.count);
        flat!(out, false, "per_request_packets");
        // serde_json's own float format (and `null` for what is not finite).
        let _ = serde_json::to_writer(&mut *out, &a.per_request_packets);
        out.push(b'}');
    }
    member!(out, "        ", false, "timeout");
    match timeout {
        Some(o) => {
            let TimeoutReport {
                resends,
                silence_min_ns,
                silence_mean_ns,
                silence_max_ns,
                t,
                implied_ns,
                retries,
            } = **o;
            flat_numbers(
                out,
                &[
                    ("resends", resends),
                    ("silence_min_ns", silence_min_ns),
                    ("silence_mean_ns", silence_mean_ns),
                    ("silence_max_ns", silence_max_ns),
                    ("t", u64::from(t)),
                    ("implied_ns", implied_ns),
                    ("retries", retries),
                ],
            );
        }
        None => out.extend_from_slice(b"null"),
    }
    if let Some(p) = throughput {
        member!(out, "        ", false, "throughput");
        flat_numbers(
            out,
            &[
                ("bin_ns", p.bin_ns),
                ("mean_bps", p.mean_bps),
                ("peak_bps", p.peak_bps),
                ("payload_bytes", p.payload_bytes),
                ("replayed_bytes", p.replayed_bytes),
            ],
        );
    }
    out.extend_from_slice(b"\n      }");
}

/// `{count, min_ns, p50_ns, p99_ns, max_ns, mean_ns}` on one line.
fn stats(out: &mut Vec<u8>, s: &Stats) {
    let Stats {
        count,
        min_ns,
        p50_ns,
        p99_ns,
        max_ns,
        mean_ns,
    } = *s;
    flat_numbers(
        out,
        &[
            ("count", count),
            ("min_ns", min_ns),
            ("p50_ns", p50_ns),
            ("p99_ns", p99_ns),
            ("max_ns", max_ns),
            ("mean_ns", mean_ns),
        ],
    );
}

/// A one-line object of numbers: `{"key":1,"other":2}`.
fn flat_numbers(out: &mut Vec<u8>, members: &[(&str, u64)]) {
    out.push(b'{');
    for (i, (key, v)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        push_u64(out, *v);
    }
    out.push(b'}');
}

/// A list whose members are `depth` levels deep, each formatted by `item`
/// on a line of its own; handed to `w` in pieces as it grows, if given.
fn members<T>(
    out: &mut Vec<u8>,
    mut w: Option<&mut dyn Write>,
    depth: usize,
    items: &[T],
    item: fn(&mut Vec<u8>, &T),
) -> std::io::Result<()> {
    if items.is_empty() {
        out.extend_from_slice(b"[]");
        return Ok(());
    }
    const SPACES: &[u8] = b"                ";
    let indent = |d: usize| &SPACES[..(2 * d).min(SPACES.len())];
    out.push(b'[');
    for (i, x) in items.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
        out.extend_from_slice(indent(depth));
        item(out, x);
        if let Some(w) = w.as_deref_mut()
            && out.len() >= PIECE
        {
            w.write_all(out)?;
            out.clear();
        }
    }
    out.push(b'\n');
    out.extend_from_slice(indent(depth - 1));
    out.push(b']');
    Ok(())
}

fn nak_counts(out: &mut Vec<u8>, n: &NakCounts) {
    let NakCounts {
        psn_seq_err,
        rnr,
        invalid_request,
        remote_access,
        remote_op,
        invalid_rd,
    } = n;
    number_object(
        out,
        &[
            ("psn_seq_err", *psn_seq_err),
            ("rnr", *rnr),
            ("invalid_request", *invalid_request),
            ("remote_access", *remote_access),
            ("remote_op", *remote_op),
            ("invalid_rd", *invalid_rd),
        ],
    );
}

fn delay(out: &mut Vec<u8>, d: &DelayStats) {
    let DelayStats {
        count,
        min_ns,
        mean_ns,
        max_ns,
    } = d;
    number_object(
        out,
        &[
            ("count", *count),
            ("min_ns", *min_ns),
            ("mean_ns", *mean_ns),
            ("max_ns", *max_ns),
        ],
    );
}

fn peer_ref(out: &mut Vec<u8>, p: &PeerRef) {
    let PeerRef {
        src,
        dst,
        destqp,
        paired_by,
    } = p;
    out.push(b'{');
    member!(out, "        ", true, "src");
    string(out, src);
    member!(out, "        ", false, "dst");
    string(out, dst);
    member!(out, "        ", false, "destqp");
    push_u64(out, u64::from(*destqp));
    member!(out, "        ", false, "paired_by");
    string(out, paired_by.as_str());
    out.extend_from_slice(b"\n      }");
}

fn episode(out: &mut Vec<u8>, e: &Episode) {
    let Episode {
        frame,
        ts_ns,
        first_psn,
        last_psn,
        packets,
        trigger,
        nak_frame,
        latency_ns,
        reordered,
    } = e;
    out.push(b'{');
    flat!(out, true, "frame");
    push_u64(out, *frame);
    flat!(out, false, "ts_ns");
    push_u64(out, *ts_ns);
    flat!(out, false, "first_psn");
    push_u64(out, u64::from(*first_psn));
    flat!(out, false, "last_psn");
    push_u64(out, u64::from(*last_psn));
    flat!(out, false, "packets");
    push_u64(out, *packets);
    flat!(out, false, "trigger");
    string(out, trigger.as_str());
    if let Some(n) = nak_frame {
        flat!(out, false, "nak_frame");
        push_u64(out, *n);
    }
    flat!(out, false, "latency_ns");
    push_u64(out, *latency_ns);
    flat!(out, false, "reordered");
    out.extend_from_slice(if *reordered { b"true" } else { b"false" });
    out.push(b'}');
}

fn event(out: &mut Vec<u8>, e: &Event) {
    let Event {
        kind,
        frame,
        ts_ns,
        psn,
        count,
        code,
        detail,
    } = e;
    out.push(b'{');
    flat!(out, true, "kind");
    string(out, kind.as_str());
    flat!(out, false, "frame");
    push_u64(out, *frame);
    flat!(out, false, "ts_ns");
    push_u64(out, *ts_ns);
    flat!(out, false, "psn");
    opt_u64(out, psn.map(u64::from));
    if let Some(c) = count {
        flat!(out, false, "count");
        push_u64(out, u64::from(*c));
    }
    if let Some(c) = code {
        flat!(out, false, "code");
        push_u64(out, u64::from(*c));
    }
    if let Some(d) = detail {
        flat!(out, false, "detail");
        string(out, d);
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::AnalysisOptions;
    use crate::dissect::DissectOptions;
    use std::path::{Path, PathBuf};

    fn reports() -> Vec<(PathBuf, Report)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        for dir in [
            root.join("captures"),
            root.join("../shared/captures-external"),
        ] {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                eprintln!("skipping {}: not there", dir.display());
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if matches!(
                    p.extension().and_then(|x| x.to_str()),
                    Some("pcap" | "pcapng" | "cap")
                ) {
                    paths.push(p);
                }
            }
        }
        paths.sort();
        paths
            .into_iter()
            .filter_map(|p| {
                let r = crate::pipeline::analyze_path(
                    &p,
                    &DissectOptions::default(),
                    AnalysisOptions::default(),
                    1,
                    None,
                )
                .ok()?;
                Some((p, r))
            })
            .collect()
    }

    fn both(report: &Report) -> (String, String) {
        let mut want = Vec::new();
        super::super::json::write_report(&mut want, report).unwrap();
        let mut got = Vec::new();
        write(&mut got, report).unwrap();
        (
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap(),
        )
    }

    #[test]
    fn same_bytes_as_serde_on_every_capture() {
        let reports = reports();
        assert!(reports.len() >= 6, "only {} captures", reports.len());
        for (path, report) in &reports {
            let (got, want) = both(report);
            assert_eq!(got, want, "{}", path.display());
        }
    }

    /// A writer that keeps the size of every write.
    struct Pieces(Vec<u8>, Vec<usize>);

    impl Write for Pieces {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.extend_from_slice(b);
            self.1.push(b.len());
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_large_report_goes_out_in_pieces_with_the_same_bytes() {
        use crate::synth::scenario::{GenOptions, generate};
        use crate::synth::{CaptureWriter, OutFormat};
        let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapNanos).unwrap();
        let opts = GenOptions {
            scenario: crate::synth::scenario::Scenario::Mixed,
            qps: 64,
            messages: 6,
            size: 4096,
            pmtu: 1024,
            ..GenOptions::default()
        };
        generate(opts, &mut |ts, f| w.write(ts, f)).unwrap();
        let file = crate::capture::CaptureFile::from_bytes(w.into_inner());
        let report = crate::pipeline::analyze(
            &file,
            &DissectOptions::default(),
            AnalysisOptions::default(),
            None,
        )
        .unwrap();
        let mut want = Vec::new();
        super::super::json::write_report(&mut want, &report).unwrap();
        let mut got = Pieces(Vec::new(), Vec::new());
        write(&mut got, &report).unwrap();
        assert!(want.len() > 3 * PIECE, "{} bytes", want.len());
        assert_eq!(
            String::from_utf8(got.0).unwrap(),
            String::from_utf8(want).unwrap()
        );
        // Every write but the last is one piece, a flow or so past PIECE.
        let (last, whole) = got.1.split_last().unwrap();
        assert!(whole.len() >= 3, "{:?}", got.1);
        assert!(
            whole
                .iter()
                .all(|&n| (PIECE..PIECE + (16 << 10)).contains(&n)),
            "{:?}",
            got.1
        );
        assert!(*last < PIECE + (16 << 10));
    }

    #[test]
    fn same_bytes_with_every_optional_field_and_odd_strings() {
        let (_, mut report) = reports()
            .into_iter()
            .find(|(_, r)| !r.flows.is_empty())
            .unwrap();
        let f = &mut report.flows[0];
        f.src = "odd \"quoted\" \\ name\n".into();
        f.ce_to_cnp = Some(DelayStats {
            count: 3,
            min_ns: 1,
            mean_ns: 2,
            max_ns: u64::MAX,
        });
        f.pmtu = Some(4096);
        f.priority = Some(0);
        f.peer = Some(PeerRef {
            src: "a".into(),
            dst: "b\u{1}".into(),
            destqp: 0xff_ffff,
            paired_by: crate::analysis::report::PairedBy::Cm,
        });
        f.one_way = true;
        f.episodes = vec![
            Episode {
                frame: 1,
                ts_ns: 2,
                first_psn: 3,
                last_psn: 4,
                packets: 5,
                trigger: crate::analysis::report::Trigger::Nak,
                nak_frame: Some(9),
                latency_ns: 7,
                reordered: true,
            },
            Episode {
                frame: 10,
                ts_ns: 20,
                first_psn: 30,
                last_psn: 40,
                packets: 50,
                trigger: crate::analysis::report::Trigger::Timeout,
                nak_frame: None,
                latency_ns: 0,
                reordered: false,
            },
        ];
        f.events = vec![
            Event {
                kind: crate::analysis::report::EventKind::Nak,
                frame: 1,
                ts_ns: 2,
                psn: None,
                count: Some(3),
                code: Some(4),
                detail: Some("tab\there, é"),
            },
            Event {
                kind: crate::analysis::report::EventKind::Gap,
                frame: 5,
                ts_ns: 6,
                psn: Some(7),
                count: None,
                code: None,
                detail: None,
            },
        ];
        let (got, want) = both(&report);
        assert_eq!(got, want);
        // Every timing member, then each optional one left out in turn
        // (the first member present changes as they go).
        use crate::analysis::timing::{Acks, Messages, Sizes, Stats, TimeoutReport, TimingReport};
        let stats = |n: u64| Stats {
            count: n,
            min_ns: 1,
            p50_ns: 2,
            p99_ns: 3,
            max_ns: u64::MAX,
            mean_ns: 4,
        };
        let full = TimingReport {
            rtt: Some(stats(5)),
            messages: Some(Messages {
                count: 6,
                bytes: 7,
                size: Sizes {
                    min: 0,
                    p50: 9,
                    p99: 10,
                    max: 11,
                },
            }),
            completion: Some(stats(12)),
            incomplete: 13,
            read_latency: Some(stats(14)),
            acks: Some(Acks {
                count: 3,
                per_request_packets: 1.0 / 3.0,
            }),
            timeout: Some(Box::new(TimeoutReport {
                resends: 1,
                silence_min_ns: 2,
                silence_mean_ns: 3,
                silence_max_ns: 4,
                t: 17,
                implied_ns: 536_870_912,
                retries: 7,
            })),
            throughput: Some(crate::analysis::throughput::Throughput {
                bin_ns: 1,
                mean_bps: 2,
                peak_bps: 3,
                payload_bytes: 4,
                replayed_bytes: 5,
                series: None,
                psn_first: None,
            }),
            histograms: None,
        };
        let cuts: [fn(&mut TimingReport); 8] = [
            |_| {},
            |t| t.rtt = None,
            |t| t.messages = None,
            |t| t.completion = None,
            |t| t.read_latency = None,
            |t| t.acks = None,
            |t| t.timeout = None,
            |t| t.throughput = None,
        ];
        let mut bare = full.clone();
        for cut in cuts {
            let mut one = full.clone();
            cut(&mut one);
            cut(&mut bare);
            for t in [one, bare.clone()] {
                report.flows[0].timing = Some(Box::new(t));
                let (got, want) = both(&report);
                assert_eq!(got, want);
            }
        }
        // A float serde_json writes as `null`.
        let mut nan = full.clone();
        if let Some(a) = nan.acks.as_mut() {
            a.per_request_packets = f64::NAN;
        }
        report.flows[0].timing = Some(Box::new(nan));
        let (got, want) = both(&report);
        assert_eq!(got, want);
        // Connections: every protocol, way of knowing it and queue, and
        // none at all.
        use crate::analysis::report::{Connection, PairedBy, UlpBy};
        use crate::wire::nvme::Ulp;
        let ulps = [Ulp::Nvme, Ulp::Iser, Ulp::Nfs, Ulp::SmbDirect, Ulp::Unknown];
        let bys = [
            None,
            Some(UlpBy::Cm),
            Some(UlpBy::Heuristic),
            Some(UlpBy::Option),
        ];
        report.connections = (0..40)
            .map(|i| Connection {
                flows: [i, usize::MAX - i],
                paired_by: if i % 2 == 0 {
                    PairedBy::Cm
                } else {
                    PairedBy::Traffic
                },
                ecn_ce: i as u64 * 1_000_003,
                cnps: u64::MAX - i as u64,
                ulp: ulps[i % ulps.len()],
                ulp_by: bys[i % bys.len()],
                qid: (i % 3 != 0).then_some(i as u16 * 1_000),
            })
            .collect();
        let (got, want) = both(&report);
        assert_eq!(got, want);
        report.connections.truncate(1);
        let (got, want) = both(&report);
        assert_eq!(got, want);
        report.connections.clear();
        report.flows.clear();
        let (got, want) = both(&report);
        assert_eq!(got, want);
    }
}
