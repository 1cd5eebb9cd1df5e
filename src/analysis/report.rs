//! The report: plain data with the contract's keys, serialised by serde.

use serde::Serialize;

/// Schema name carried in every JSON report.
pub const SCHEMA: &str = "roce-dissect.report/1";

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    pub schema: &'static str,
    pub capture: CaptureSummary,
    pub flows: Vec<FlowReport>,
    pub connections: Vec<Connection>,
    pub pfc: PfcReport,
    /// NVMe-oF queues and I/Os, when the capture has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvme: Option<super::nvme::NvmeReport>,
    /// Frames that are neither RoCE flows' nor pauses: by protocol, and
    /// the TCP conversations; absent when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<super::other::OtherReport>,
    pub hints: Vec<Hint>,
    /// Told to the user on stderr, not part of the report: why
    /// `--analysis-threads` analysed on one thread after all.
    #[serde(skip)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct CaptureSummary {
    pub file: String,
    /// The captures merged into this one (`--merge`), in the order given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    pub format: String,
    pub frames: u64,
    pub roce_frames: u64,
    pub first_ts_ns: u64,
    pub last_ts_ns: u64,
    pub duration_ns: u64,
    pub ts_resolution_ns: u64,
    pub truncated_frames: u64,
    /// Records the capture device says it lost (the loss counters of ERF
    /// records): frames of the link that are in no capture.
    pub device_lost: u64,
    pub malformed_frames: u64,
    pub icrc_errors: u64,
    pub duplicate_frames: u64,
    /// Events counted but not listed because the report's total budget
    /// (`--max-events-total`) ran out (per flow: `flows[].events_dropped`).
    pub events_dropped: u64,
    /// Flows beyond `--max-flows` (exact up to a million, then estimated).
    pub flows_dropped: u64,
    /// Frames of those flows: counted, not analysed.
    pub untracked_frames: u64,
    /// UD source QPs beyond `--max-ud-sources`.
    pub ud_sources_dropped: u64,
    /// (MAC, priority) pause sources beyond `--max-pause-sources`.
    pub pause_sources_dropped: u64,
    /// Pause intervals beyond `--max-intervals` (in the summary, not listed).
    pub intervals_dropped: u64,
    /// CM requests not remembered (beyond `--max-cm-pending`).
    pub cm_dropped: u64,
    pub pfc_frames: u64,
    pub pause_frames: u64,
    pub cm_messages: u64,
    pub flows: u64,
    pub one_way_flows: u64,
    /// Where the capture point seems to sit, from the timed flows (README,
    /// "Timing"); null when they do not tell.
    pub vantage: Option<super::timing::Vantage>,
    /// The host it was judged from (not for `mid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vantage_host: Option<String>,
    pub warnings: Vec<String>,
    /// `-Y`: the display filter, when the report lists only the flows and
    /// pause intervals with a frame it matches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_filter: Option<String>,
    /// `-Y`: how many frames it matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matching_frames: Option<u64>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, Default)]
pub struct NakCounts {
    pub psn_seq_err: u64,
    pub rnr: u64,
    pub invalid_request: u64,
    pub remote_access: u64,
    pub remote_op: u64,
    pub invalid_rd: u64,
}

impl std::ops::AddAssign for NakCounts {
    fn add_assign(&mut self, o: NakCounts) {
        self.psn_seq_err += o.psn_seq_err;
        self.rnr += o.rnr;
        self.invalid_request += o.invalid_request;
        self.remote_access += o.remote_access;
        self.remote_op += o.remote_op;
        self.invalid_rd += o.invalid_rd;
    }
}

impl NakCounts {
    pub fn total(&self) -> u64 {
        self.psn_seq_err
            + self.rnr
            + self.invalid_request
            + self.remote_access
            + self.remote_op
            + self.invalid_rd
    }
}

/// What happened at a frame of a flow: the report's event kinds. One name
/// each, everywhere: `as_str` in JSON and on the command line, `label` in
/// text meant for people.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// PSNs skipped: the packet is ahead of the one expected.
    Gap,
    /// A PSN behind the one expected that had not been seen: it arrived late.
    OutOfOrder,
    /// A PSN behind the one expected that had been seen: a replay.
    Retransmit,
    /// A PSN already consumed by a request of another kind.
    PsnReuse,
    Nak,
    RnrNak,
    EcnCe,
    Cnp,
    BadIcrc,
}

impl EventKind {
    pub const ALL: [EventKind; 9] = [
        EventKind::Gap,
        EventKind::OutOfOrder,
        EventKind::Retransmit,
        EventKind::PsnReuse,
        EventKind::Nak,
        EventKind::RnrNak,
        EventKind::EcnCe,
        EventKind::Cnp,
        EventKind::BadIcrc,
    ];

    /// The JSON name (`out_of_order`).
    pub const fn as_str(self) -> &'static str {
        match self {
            EventKind::Gap => "gap",
            EventKind::OutOfOrder => "out_of_order",
            EventKind::Retransmit => "retransmit",
            EventKind::PsnReuse => "psn_reuse",
            EventKind::Nak => "nak",
            EventKind::RnrNak => "rnr_nak",
            EventKind::EcnCe => "ecn_ce",
            EventKind::Cnp => "cnp",
            EventKind::BadIcrc => "bad_icrc",
        }
    }

    /// The name in text for people (`out of order`).
    pub const fn label(self) -> &'static str {
        match self {
            EventKind::Gap => "gap",
            EventKind::OutOfOrder => "out of order",
            EventKind::Retransmit => "retransmit",
            EventKind::PsnReuse => "PSN reuse",
            EventKind::Nak => "NAK",
            EventKind::RnrNak => "RNR NAK",
            EventKind::EcnCe => "CE mark",
            EventKind::Cnp => "CNP",
            EventKind::BadIcrc => "bad ICRC",
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// What started a go-back-N replay.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// A NAK (PSN sequence error or another code) from the other direction.
    Nak,
    /// An RNR NAK.
    Rnr,
    /// No NAK: the requester's retry timer.
    Timeout,
}

impl Trigger {
    pub const fn as_str(self) -> &'static str {
        match self {
            Trigger::Nak => "nak",
            Trigger::Rnr => "rnr",
            Trigger::Timeout => "timeout",
        }
    }
}

/// How the two directions of a connection were matched.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PairedBy {
    /// RDMA CM REQ/REP.
    Cm,
    /// ACK, NAK and READ response PSNs inside the other direction's requests.
    Traffic,
}

impl PairedBy {
    pub const fn as_str(self) -> &'static str {
        match self {
            PairedBy::Cm => "cm",
            PairedBy::Traffic => "traffic",
        }
    }
}

impl std::fmt::Display for PairedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An address as the report writes it. Shared: a capture's thousands of
/// flows run between a few hosts, and each flow's report and its peer's
/// name the same addresses (a copy each took 23 ms of the report of
/// 131 472 flows).
pub type Text = std::sync::Arc<str>;

/// A flow's other direction.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PeerRef {
    pub src: Text,
    pub dst: Text,
    pub destqp: u32,
    pub paired_by: PairedBy,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, Default)]
pub struct DelayStats {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: u64,
    pub max_ns: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Episode {
    pub frame: u64,
    pub ts_ns: u64,
    pub first_psn: u32,
    pub last_psn: u32,
    /// Packets resent in this go-back-N replay.
    pub packets: u64,
    pub trigger: Trigger,
    /// The NAK that asked for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nak_frame: Option<u64>,
    /// NAK to first resend, or the silence before the resend (timeout).
    pub latency_ns: u64,
    /// The packet the replay starts with had already arrived, late: what
    /// the responder NAKed was reordered on the way, not lost.
    pub reordered: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    pub frame: u64,
    pub ts_ns: u64,
    pub psn: Option<u32>,
    /// Gap: PSNs skipped from `psn` on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// NAK code or RNR timer code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'static str>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowReport {
    pub src: Text,
    pub dst: Text,
    pub destqp: u32,
    #[serde(serialize_with = "as_str::version")]
    pub version: crate::dissect::RoceVersion,
    /// The flow's transport (`None`: it carried CNPs only, shown `CNP`).
    #[serde(serialize_with = "as_str::transport")]
    pub transport: Option<crate::wire::Transport>,
    pub packets: u64,
    pub bytes: u64,
    pub payload_bytes: u64,
    pub duplicates: u64,
    pub first_frame: u64,
    pub first_ts_ns: u64,
    pub last_ts_ns: u64,
    pub retransmits: u64,
    pub out_of_order: u64,
    pub missing: u64,
    /// Requests whose PSN a request of another kind had already consumed.
    pub psn_reuse: u64,
    pub ecn_ce: u64,
    pub cnps: u64,
    pub naks: NakCounts,
    pub retransmit_episodes: u64,
    pub episodes: Vec<Episode>,
    /// CE mark on this flow to the next CNP for its QP.
    pub ce_to_cnp: Option<DelayStats>,
    pub pmtu: Option<u32>,
    /// 802.1p priority its frames travelled on (PCP, or DSCP via the map).
    pub priority: Option<u8>,
    pub peer: Option<PeerRef>,
    /// An RC/XRC flow whose other direction was not captured.
    pub one_way: bool,
    pub bad_icrc: u64,
    /// RDMA READ requests replayed and never answered in the capture.
    pub unanswered_reads: u64,
    pub events: Vec<Event>,
    pub events_dropped: u64,
    /// Round trips, messages, completions, READ latency, ACK coalescing
    /// (a request flow whose answers were captured); `null` otherwise.
    /// Boxed: 400 bytes that half the flows (those that only answer) leave
    /// empty, in every flow's report.
    pub timing: Option<Box<super::timing::TimingReport>>,
    /// DCQCN reaction to the CNPs its sender received (README "DCQCN
    /// reaction"); absent on flows whose sender received none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc: Option<Box<super::cc::CcReport>>,
}

impl FlowReport {
    /// How much is wrong with the flow, for sorting.
    pub fn trouble(&self) -> u64 {
        self.retransmits
            + self.out_of_order
            + self.missing
            + self.psn_reuse
            + self.naks.total()
            + self.bad_icrc
            + self.ecn_ce.min(1)
            + self.cnps.min(1)
    }
}

impl Report {
    /// For each flow, the index in `flows` of its other direction: one
    /// pass over the connections (asking flow by flow searched them all).
    pub fn peer_indexes(&self) -> Vec<Option<usize>> {
        let mut peers = vec![None; self.flows.len()];
        for c in &self.connections {
            let [x, y] = c.flows;
            if x < peers.len() && y < peers.len() {
                peers[x] = Some(y);
                peers[y] = Some(x);
            }
        }
        peers
    }
}

/// Two flows of one RC connection.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Connection {
    /// Indexes into `flows`.
    pub flows: [usize; 2],
    pub paired_by: PairedBy,
    /// CE-marked packets in either direction, and the CNPs returned.
    pub ecn_ce: u64,
    pub cnps: u64,
    /// The upper-layer protocol it carries (`unknown` when nothing said).
    pub ulp: crate::wire::nvme::Ulp,
    /// How that was known: `cm` (the CM REQ's ServiceID), `heuristic`
    /// or `option` (`--ulp`); null for `unknown`.
    pub ulp_by: Option<UlpBy>,
    /// NVMe-oF: the queue it is (0: the admin queue), when the CM REQ's
    /// private data said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qid: Option<u16>,
}

/// How a connection's upper-layer protocol was known.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum UlpBy {
    Cm,
    Heuristic,
    Option,
}

impl UlpBy {
    /// The JSON name (`heuristic`).
    pub const fn as_str(self) -> &'static str {
        match self {
            UlpBy::Cm => "cm",
            UlpBy::Heuristic => "heuristic",
            UlpBy::Option => "option",
        }
    }
}

/// What the analysis knows of a connection's upper-layer protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnUlp {
    pub ulp: crate::wire::nvme::Ulp,
    pub by: UlpBy,
    pub qid: Option<u16>,
    /// On the host's flow to the controller (its SENDs are commands), not
    /// the other way.
    pub commands: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct IntervalReport {
    pub src_mac: String,
    pub priority: Option<u8>,
    pub start_ns: u64,
    pub end_ns: u64,
    pub ended_by: super::pfc::EndedBy,
    pub duration_ns: u64,
    pub start_frame: u64,
    /// The XON frame that ended it (`null` when it expired).
    pub end_frame: Option<u64>,
    pub frames: u64,
    /// Flows that sent on the paused priority towards this MAC meanwhile
    /// (indexes into `flows`).
    pub flows: Vec<usize>,
    pub flows_total: u32,
    pub storm: bool,
    /// What the paused sender still sent towards the MAC on the priority
    /// (README "PFC reaction").
    pub reaction: super::pfc::Reaction,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PauseSummary {
    pub src_mac: String,
    pub priority: Option<u8>,
    pub intervals: u64,
    pub paused_ns: u64,
    /// Paused time over the capture duration.
    pub fraction: f64,
    pub longest_ns: u64,
    pub storm: bool,
    pub reaction: super::pfc::ReactionSummary,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PfcReport {
    /// The speed most pause frames were read at (or the one they would
    /// have been, when there were none).
    pub link_speed_bps: u64,
    pub link_speed_from: super::SpeedFrom,
    /// Every speed used, most pause frames first (several when interfaces
    /// state different speeds).
    pub link_speeds: Vec<super::SpeedUse>,
    /// PFC and 802.3x frames.
    pub frames: u64,
    pub storm_threshold_ns: u64,
    pub intervals: Vec<IntervalReport>,
    pub summary: Vec<PauseSummary>,
    pub storms: u64,
}

/// What a hint is about (`hints[].kind`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum HintKind {
    RemoteAccess,
    PsnSeqErr,
    PsnSeqErrUnseen,
    PsnSeqErrReorder,
    Missing,
    PsnReuse,
    Rnr,
    InvalidRequest,
    RemoteOp,
    InvalidRd,
    UnansweredRead,
    Timeout,
    OutOfOrder,
    EcnNoCnp,
    Cnp,
    PauseStorm,
    PauseIgnored,
    CnpIgnored,
    PfcPause,
    Pause,
    IcrcNotPreserved,
    BadIcrc,
    Duplicates,
    OneWay,
    Truncated,
    /// Frames but no RoCE frame (nor a pause frame).
    NoRoce,
    /// No RoCE frame at the RoCE port, but frames to another UDP port
    /// that are RoCE v2 (see `dissect::probe`).
    RoceOnOtherPort,
    /// TCP segments sent again beside the RoCE (`other`).
    TcpRetransmission,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Hint {
    pub kind: HintKind,
    /// How many occurrences (NAKs, episodes, intervals...).
    pub count: u64,
    pub text: std::borrow::Cow<'static, str>,
}

/// What a display filter matched, for [`Report::select`]: the flows with
/// a matching frame, and matching pause frames (at most
/// [`Selection::MAX_PAUSES`]; past that every interval is kept).
#[derive(Debug, Default, Clone)]
pub struct Selection {
    pub filter: String,
    /// Frames the filter matched.
    pub frames: u64,
    /// (src, dst, destqp) as the report names flows.
    pub flows: std::collections::HashSet<(String, String, u32)>,
    /// Matching pause frames: source MAC, time, and the priorities they
    /// pause (`None`: 802.3x, the whole link).
    pub pauses: Vec<(String, u64, Option<u8>)>,
    /// More pause frames matched than are kept.
    pub pauses_overflowed: bool,
    /// The TCP conversations (`tcp.stream`) with a matching frame.
    pub tcp_streams: std::collections::HashSet<u32>,
}

impl Selection {
    pub const MAX_PAUSES: usize = 1 << 20;

    pub fn add_pause(&mut self, mac: String, ts_ns: u64, priorities: Option<u8>) {
        if self.pauses.len() < Self::MAX_PAUSES {
            self.pauses.push((mac, ts_ns, priorities));
        } else {
            self.pauses_overflowed = true;
        }
    }
}

impl Report {
    /// Keeps the flows and pause intervals with at least one frame the
    /// display filter matched (connections whose two directions both stay;
    /// pause summaries of the sources that keep an interval; TCP
    /// conversations); the capture figures, and the other frames by
    /// protocol, still count every frame. `capture.display_filter` and
    /// `capture.matching_frames` say so.
    pub fn select(&mut self, sel: &Selection) {
        let old = std::mem::take(&mut self.flows);
        let mut new_index = vec![None; old.len()];
        for (i, f) in old.into_iter().enumerate() {
            if sel
                .flows
                .contains(&(f.src.to_string(), f.dst.to_string(), f.destqp))
            {
                new_index[i] = Some(self.flows.len());
                self.flows.push(f);
            }
        }
        self.connections
            .retain_mut(|c| match (new_index[c.flows[0]], new_index[c.flows[1]]) {
                (Some(a), Some(b)) => {
                    c.flows = [a, b];
                    true
                }
                _ => false,
            });
        let pauses = &sel.pauses;
        let keep_all = sel.pauses_overflowed;
        self.pfc.intervals.retain_mut(|iv| {
            let hit = keep_all
                || pauses.iter().any(|(mac, ts, prio)| {
                    *mac == iv.src_mac
                        && (iv.start_ns..=iv.end_ns).contains(ts)
                        && match (iv.priority, prio) {
                            (Some(p), Some(mask)) => mask & (1 << p) != 0,
                            (None, None) => true,
                            _ => false,
                        }
                });
            if hit {
                iv.flows = iv
                    .flows
                    .iter()
                    .filter_map(|&i| new_index.get(i).copied().flatten())
                    .collect();
            }
            hit
        });
        let kept: std::collections::HashSet<(String, Option<u8>)> = self
            .pfc
            .intervals
            .iter()
            .map(|i| (i.src_mac.clone(), i.priority))
            .collect();
        self.pfc
            .summary
            .retain(|s| keep_all || kept.contains(&(s.src_mac.clone(), s.priority)));
        if let Some(o) = &mut self.other {
            (o.tcp_conversations).retain(|c| sel.tcp_streams.contains(&c.stream));
        }
        self.capture.display_filter = Some(sel.filter.clone());
        self.capture.matching_frames = Some(sel.frames);
    }
}

/// Closed sets written by their names.
mod as_str {
    use serde::Serializer;

    pub fn version<S: Serializer>(
        v: &crate::dissect::RoceVersion,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.as_str())
    }

    pub fn transport<S: Serializer>(
        t: &Option<crate::wire::Transport>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::transport_name(*t))
    }
}

/// A flow's transport as the report names it (`CNP` when it carried
/// CNPs only).
pub fn transport_name(t: Option<crate::wire::Transport>) -> &'static str {
    t.map_or("CNP", crate::wire::Transport::as_str)
}
