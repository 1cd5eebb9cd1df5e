//! The tables made of the report: a row per item of its lists, a column
//! per figure, nested objects flattened with `_` (`naks.psn_seq_err` →
//! `naks_psn_seq_err`). Each table's columns are declared here, so every
//! capture's file has the same schema (a figure that is `null` or absent
//! in one report is still a column); `tests/export.rs` checks that every
//! figure of every scenario's report has its column.

use serde_json::Value as J;

use super::column::{Columns, Kind};
use crate::analysis::nvme::IoDone;

use Kind::{Bool, F64, I64, List, Str, Time, U64};

/// A column of a report table: its name, where its value is in the
/// item's JSON (dotted), and its kind. A `Time` column takes the
/// nanoseconds at its path as a timestamp.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    pub name: &'static str,
    pub path: &'static str,
    pub kind: Kind,
}

/// A column named after its path (`naks.psn_seq_err` → `naks_psn_seq_err`
/// is spelled out, as names must be `'static`).
const fn c(name: &'static str, path: &'static str, kind: Kind) -> Col {
    Col { name, path, kind }
}

/// `timing.rtt` and its kin: a latency's count and percentiles.
macro_rules! stats {
    ($name:literal, $path:literal) => {
        [
            c(concat!($name, "_count"), concat!($path, ".count"), I64),
            c(concat!($name, "_min_ns"), concat!($path, ".min_ns"), I64),
            c(concat!($name, "_p50_ns"), concat!($path, ".p50_ns"), I64),
            c(concat!($name, "_p99_ns"), concat!($path, ".p99_ns"), I64),
            c(concat!($name, "_max_ns"), concat!($path, ".max_ns"), I64),
            c(concat!($name, "_mean_ns"), concat!($path, ".mean_ns"), I64),
        ]
    };
}

/// `flows`: the report's `flows[]` (its `events` and `episodes` are
/// tables of their own). `flow` is the flow's number, as the packets'
/// `flow` column and the report number it.
pub static FLOWS: &[&[Col]] = &[
    &[
        c("flow", "", I64),
        c("src", "src", Str),
        c("dst", "dst", Str),
        c("destqp", "destqp", I64),
        c("version", "version", Str),
        c("transport", "transport", Str),
        c("packets", "packets", I64),
        c("bytes", "bytes", I64),
        c("payload_bytes", "payload_bytes", I64),
        c("duplicates", "duplicates", I64),
        c("first_frame", "first_frame", I64),
        c("first_ts", "first_ts_ns", Time),
        c("first_ts_ns", "first_ts_ns", I64),
        c("last_ts", "last_ts_ns", Time),
        c("last_ts_ns", "last_ts_ns", I64),
        c("retransmits", "retransmits", I64),
        c("out_of_order", "out_of_order", I64),
        c("missing", "missing", I64),
        c("psn_reuse", "psn_reuse", I64),
        c("ecn_ce", "ecn_ce", I64),
        c("cnps", "cnps", I64),
        c("naks_psn_seq_err", "naks.psn_seq_err", I64),
        c("naks_rnr", "naks.rnr", I64),
        c("naks_invalid_request", "naks.invalid_request", I64),
        c("naks_remote_access", "naks.remote_access", I64),
        c("naks_remote_op", "naks.remote_op", I64),
        c("naks_invalid_rd", "naks.invalid_rd", I64),
        c("retransmit_episodes", "retransmit_episodes", I64),
        c("ce_to_cnp_count", "ce_to_cnp.count", I64),
        c("ce_to_cnp_min_ns", "ce_to_cnp.min_ns", I64),
        c("ce_to_cnp_mean_ns", "ce_to_cnp.mean_ns", I64),
        c("ce_to_cnp_max_ns", "ce_to_cnp.max_ns", I64),
        c("pmtu", "pmtu", I64),
        c("priority", "priority", I64),
        c("peer_src", "peer.src", Str),
        c("peer_dst", "peer.dst", Str),
        c("peer_destqp", "peer.destqp", I64),
        c("peer_paired_by", "peer.paired_by", Str),
        c("one_way", "one_way", Bool),
        c("bad_icrc", "bad_icrc", I64),
        c("unanswered_reads", "unanswered_reads", I64),
        c("events_dropped", "events_dropped", I64),
    ],
    &stats!("timing_rtt", "timing.rtt"),
    &[
        c("timing_messages_count", "timing.messages.count", I64),
        c("timing_messages_bytes", "timing.messages.bytes", I64),
        c("timing_messages_size_min", "timing.messages.size.min", I64),
        c("timing_messages_size_p50", "timing.messages.size.p50", I64),
        c("timing_messages_size_p99", "timing.messages.size.p99", I64),
        c("timing_messages_size_max", "timing.messages.size.max", I64),
    ],
    &stats!("timing_completion", "timing.completion"),
    &[c("timing_incomplete", "timing.incomplete", I64)],
    &stats!("timing_read_latency", "timing.read_latency"),
    &[
        c("timing_acks_count", "timing.acks.count", I64),
        c(
            "timing_acks_per_request_packets",
            "timing.acks.per_request_packets",
            F64,
        ),
        c("timing_timeout_resends", "timing.timeout.resends", I64),
        c(
            "timing_timeout_silence_min_ns",
            "timing.timeout.silence_min_ns",
            I64,
        ),
        c(
            "timing_timeout_silence_mean_ns",
            "timing.timeout.silence_mean_ns",
            I64,
        ),
        c(
            "timing_timeout_silence_max_ns",
            "timing.timeout.silence_max_ns",
            I64,
        ),
        c("timing_timeout_t", "timing.timeout.t", I64),
        c(
            "timing_timeout_implied_ns",
            "timing.timeout.implied_ns",
            I64,
        ),
        c("timing_timeout_retries", "timing.timeout.retries", I64),
        c("timing_throughput_bin_ns", "timing.throughput.bin_ns", I64),
        c(
            "timing_throughput_mean_bps",
            "timing.throughput.mean_bps",
            I64,
        ),
        c(
            "timing_throughput_peak_bps",
            "timing.throughput.peak_bps",
            I64,
        ),
        c(
            "timing_throughput_payload_bytes",
            "timing.throughput.payload_bytes",
            I64,
        ),
        c(
            "timing_throughput_replayed_bytes",
            "timing.throughput.replayed_bytes",
            I64,
        ),
        c("cc_cnps", "cc.cnps", I64),
        c("cc_reacted", "cc.reacted", I64),
        c("cc_ignored", "cc.ignored", I64),
        c("cc_indeterminate", "cc.indeterminate", I64),
        c("cc_reasons_no_history", "cc.reasons.no_history", I64),
        c("cc_reasons_replays", "cc.reasons.replays", I64),
        c("cc_reasons_paused", "cc.reasons.paused", I64),
        c("cc_reasons_idle", "cc.reasons.idle", I64),
        c("cc_reasons_unclear", "cc.reasons.unclear", I64),
        c("cc_reasons_capture_end", "cc.reasons.capture_end", I64),
        c("cc_mean_ratio", "cc.mean_ratio", F64),
        c("cc_recoveries", "cc.recoveries", I64),
        c("cc_recovery_ns", "cc.recovery_ns", I64),
        c("cc_recovery_max_ns", "cc.recovery_max_ns", I64),
    ],
];

/// `events`: each flow's `events[]`, with the flow's number.
pub static EVENTS: &[&[Col]] = &[&[
    c("flow", "", I64),
    c("kind", "kind", Str),
    c("frame", "frame", I64),
    c("ts", "ts_ns", Time),
    c("ts_ns", "ts_ns", I64),
    c("psn", "psn", I64),
    c("count", "count", I64),
    c("code", "code", I64),
    c("detail", "detail", Str),
]];

/// `episodes`: each flow's retransmission `episodes[]`.
pub static EPISODES: &[&[Col]] = &[&[
    c("flow", "", I64),
    c("frame", "frame", I64),
    c("ts", "ts_ns", Time),
    c("ts_ns", "ts_ns", I64),
    c("first_psn", "first_psn", I64),
    c("last_psn", "last_psn", I64),
    c("packets", "packets", I64),
    c("trigger", "trigger", Str),
    c("nak_frame", "nak_frame", I64),
    c("latency_ns", "latency_ns", I64),
    c("reordered", "reordered", Bool),
]];

/// `pfc_intervals`: `pfc.intervals[]`; `flows` are flow numbers.
pub static PFC_INTERVALS: &[&[Col]] = &[&[
    c("src_mac", "src_mac", Str),
    c("priority", "priority", I64),
    c("start", "start_ns", Time),
    c("start_ns", "start_ns", I64),
    c("end", "end_ns", Time),
    c("end_ns", "end_ns", I64),
    c("ended_by", "ended_by", Str),
    c("duration_ns", "duration_ns", I64),
    c("start_frame", "start_frame", I64),
    c("end_frame", "end_frame", I64),
    c("frames", "frames", I64),
    c("flows", "flows", List),
    c("flows_total", "flows_total", I64),
    c("storm", "storm", Bool),
    c("reaction_frames", "reaction.frames", I64),
    c("reaction_bytes", "reaction.bytes", I64),
    c("reaction_stop_ns", "reaction.stop_ns", I64),
    c("reaction_budget_ns", "reaction.budget_ns", I64),
    c("reaction_verdict", "reaction.verdict", Str),
    c("reaction_exceeded", "reaction.exceeded", Bool),
]];

/// `connections`: `connections[]`, numbered from 1; `flows` are flow
/// numbers.
pub static CONNECTIONS: &[&[Col]] = &[&[
    c("connection", "", I64),
    c("flows", "flows", List),
    c("paired_by", "paired_by", Str),
    c("ecn_ce", "ecn_ce", I64),
    c("cnps", "cnps", I64),
    c("ulp", "ulp", Str),
    c("ulp_by", "ulp_by", Str),
    c("qid", "qid", I64),
]];

/// `nvme_ios`: every completed NVMe-oF command, as the analysis matched it
/// to its completion (the report lists only the slowest). Filled by
/// [`push_io`]; the paths name the I/O's figures.
pub static NVME_IOS: &[&[Col]] = &[&[
    c("host", "host", Str),
    c("controller", "controller", Str),
    c("qid", "qid", I64),
    c("cid", "cid", I64),
    c("opcode", "opcode", Str),
    c("lba", "lba", U64),
    c("bytes", "bytes", I64),
    c("command_frame", "command_frame", I64),
    c("cqe_frame", "cqe_frame", I64),
    c("latency_ns", "latency_ns", I64),
    c("first_data_ns", "first_data_ns", I64),
    c("data_ns", "data_ns", I64),
    c("status", "status", Str),
    c("sct", "sct", I64),
    c("sc", "sc", I64),
    c("failed", "failed", Bool),
]];

/// `tcp_conversations`: `other.tcp_conversations`, a row per conversation
/// (`stream` is `tcp.stream`), its analysis notes flattened.
pub static TCP_CONVERSATIONS: &[&[Col]] = &[&[
    c("stream", "stream", I64),
    c("a", "a", Str),
    c("b", "b", Str),
    c("frames", "frames", I64),
    c("bytes", "bytes", I64),
    c("frames_a_to_b", "frames_a_to_b", I64),
    c("bytes_a_to_b", "bytes_a_to_b", I64),
    c("frames_b_to_a", "frames_b_to_a", I64),
    c("bytes_b_to_a", "bytes_b_to_a", I64),
    c("payload_bytes", "payload_bytes", I64),
    c("first_ts", "first_ts_ns", Time),
    c("first_ts_ns", "first_ts_ns", I64),
    c("last_ts", "last_ts_ns", Time),
    c("last_ts_ns", "last_ts_ns", I64),
    c("handshake_rtt_ns", "handshake_rtt_ns", I64),
    c("syns", "syns", I64),
    c("fins", "fins", I64),
    c("resets", "resets", I64),
    c("ack_rtt_count", "ack_rtt.count", I64),
    c("ack_rtt_min_ns", "ack_rtt.min_ns", I64),
    c("ack_rtt_mean_ns", "ack_rtt.mean_ns", I64),
    c("ack_rtt_max_ns", "ack_rtt.max_ns", I64),
    c("retransmission", "analysis.retransmission", I64),
    c("fast_retransmission", "analysis.fast_retransmission", I64),
    c(
        "spurious_retransmission",
        "analysis.spurious_retransmission",
        I64,
    ),
    c("out_of_order", "analysis.out_of_order", I64),
    c("reused_ports", "analysis.reused_ports", I64),
    c("lost_segment", "analysis.lost_segment", I64),
    c("ack_lost_segment", "analysis.ack_lost_segment", I64),
    c("window_update", "analysis.window_update", I64),
    c("window_full", "analysis.window_full", I64),
    c("keep_alive", "analysis.keep_alive", I64),
    c("keep_alive_ack", "analysis.keep_alive_ack", I64),
    c("duplicate_ack", "analysis.duplicate_ack", I64),
    c("zero_window", "analysis.zero_window", I64),
    c("zero_window_probe", "analysis.zero_window_probe", I64),
    c(
        "zero_window_probe_ack",
        "analysis.zero_window_probe_ack",
        I64,
    ),
]];

/// A table's columns, in order.
pub fn cols(spec: &'static [&'static [Col]]) -> impl Iterator<Item = &'static Col> {
    spec.iter().flat_map(|part| part.iter())
}

/// An empty table of `spec`'s columns.
pub fn columns(spec: &'static [&'static [Col]]) -> Columns {
    Columns::new(cols(spec).map(|c| (c.name, c.kind)))
}

/// The value at a dotted path in an item.
fn at<'v>(item: &'v J, path: &str) -> Option<&'v J> {
    path.split('.').try_fold(item, |v, k| v.get(k))
}

/// Adds `item` as a row; `number` fills the path-less column (a flow's or
/// a connection's number). Lists of flow indexes become flow numbers.
pub fn push(table: &mut Columns, spec: &'static [&'static [Col]], item: &J, number: u64) {
    for (col, b) in cols(spec).zip(table.builders.iter_mut()) {
        if col.path.is_empty() {
            b.int(i128::from(number));
            continue;
        }
        match at(item, col.path) {
            None | Some(J::Null) => b.null(),
            Some(J::Bool(x)) => b.bool(*x),
            Some(J::String(s)) => b.str(s),
            Some(J::Number(n)) => match (n.as_i64(), n.as_u64()) {
                (_, Some(u)) if col.kind != F64 => b.int(i128::from(u)),
                (Some(i), _) if col.kind != F64 => b.int(i128::from(i)),
                _ => b.float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Some(J::Array(xs)) => {
                b.list(xs.iter().filter_map(J::as_u64).map(|i| i128::from(i) + 1))
            }
            Some(J::Object(_)) => b.null(),
        }
    }
    table.rows += 1;
}

/// Adds a completed NVMe-oF I/O to an [`NVME_IOS`] table.
pub fn push_io(table: &mut Columns, done: &IoDone) {
    let io = &done.io;
    let b = &mut table.builders;
    b[0].str(&done.host.to_string());
    b[1].str(&done.controller.to_string());
    opt(&mut b[2], io.qid.map(i128::from));
    b[3].int(i128::from(io.cid));
    b[4].str(&io.opcode);
    opt(&mut b[5], io.lba.map(i128::from));
    b[6].int(i128::from(io.bytes));
    b[7].int(i128::from(io.command_frame));
    opt(&mut b[8], io.cqe_frame.map(i128::from));
    opt(&mut b[9], io.latency_ns.map(i128::from));
    opt(&mut b[10], io.first_data_ns.map(i128::from));
    opt(&mut b[11], io.data_ns.map(i128::from));
    match io.status {
        Some(s) => b[12].str(s),
        None => b[12].null(),
    }
    b[13].int(i128::from(done.sct));
    b[14].int(i128::from(done.sc));
    b[15].bool(done.sct != 0 || done.sc != 0);
    table.rows += 1;
}

fn opt(b: &mut super::column::Builder, v: Option<i128>) {
    match v {
        Some(v) => b.int(v),
        None => b.null(),
    }
}
