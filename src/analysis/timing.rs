//! Where the time went, per request flow: round trips, message sizes and
//! completion times, READ latency, ACK coalescing (README, "Timing").
//!
//! A request flow (A → B, QP b) keeps the request packets still waiting
//! for their acknowledgement, the messages still waiting for theirs and
//! the READs still waiting for their responses, each in PSN order and each
//! at most [`MAX_PENDING`] long. ACKs, NAKs and READ responses come on
//! another flow (B → A, QP a); that flow learns which request flow it
//! answers from the CM handshake, or from the first of its PSNs that only
//! one request flow of the host pair has waiting.
//!
//! Samples are kept exactly (integer nanoseconds), so percentiles are
//! exact; all flows together keep at most `--max-timing-samples` of them
//! (a warning says so when more were seen: counts, minimum, maximum and
//! mean stay exact, percentiles come from the samples kept).

use std::collections::VecDeque;

use serde::Serialize;

use crate::wire::Psn;
use crate::wire::opcode::Operation;

/// Requests, messages or READs waiting per flow, at most: the oldest goes
/// (unsampled) when a flow has more outstanding.
pub const MAX_PENDING: usize = 1 << 16;

/// PSNs are 24 bits: `b` is at or after `a` when less than half the
/// space ahead.
fn at_or_after(a: Psn, b: Psn) -> bool {
    b.forward_from(a) < Psn::MOD / 2
}

/// What a sample measures: each kind has its own log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Rtt = 0,
    Completion = 1,
    ReadLatency = 2,
    Size = 3,
}

/// The samples of one kind for all flows, in the order they came: one
/// vector appended to (a frame touches its end, not a vector per flow),
/// sorted once at the end so that each flow's samples lie together in
/// order. A sample below 2^32 takes 8 bytes (`flow << 32 | value`).
#[derive(Debug, Default)]
pub struct SampleLog {
    narrow: Vec<u64>,
    wide: Vec<(u32, u64)>,
    /// Once sorted: flow `f`'s samples below 2^32 are
    /// `narrow[start[f]..start[f + 1]]` (found by bisecting, each flow's
    /// report missed the cache at every step once there were thousands).
    /// Empty in a log of 2^32 samples or more: bisected then.
    start: Vec<u32>,
}

impl SampleLog {
    fn push(&mut self, flow: u32, v: u64) {
        match u32::try_from(v) {
            Ok(v) => self.narrow.push(u64::from(flow) << 32 | u64::from(v)),
            Err(_) => self.wide.push((flow, v)),
        }
    }

    /// Groups the samples by flow (a counting sort: linear) and puts each
    /// flow's two percentiles in their places (a selection, linear too:
    /// sorting every sample took a sixth of a large report's time). The
    /// rare samples past 2^32 are sorted.
    fn sort(&mut self) {
        self.wide.sort_unstable();
        let Some(max) = self.narrow.iter().map(|&x| x >> 32).max() else {
            return;
        };
        let mut start = vec![0usize; max as usize + 2];
        for &x in &self.narrow {
            start[(x >> 32) as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut at = start.clone();
        let mut out = vec![0u64; self.narrow.len()];
        for &x in &self.narrow {
            let f = (x >> 32) as usize;
            out[at[f]] = x;
            at[f] += 1;
        }
        self.narrow = out;
        self.start = match u32::try_from(self.narrow.len()) {
            Ok(_) => start.iter().map(|&x| x as u32).collect(),
            Err(_) => Vec::new(),
        };
        for f in 0..=max as usize {
            let group = &mut self.narrow[start[f]..start[f + 1]];
            if group.is_empty() {
                continue;
            }
            let wide = {
                let flow = f as u32;
                self.wide.partition_point(|w| w.0 <= flow)
                    - self.wide.partition_point(|w| w.0 < flow)
            };
            let n = (group.len() + wide) as u64;
            let k50 = rank_index(50, n);
            let k99 = rank_index(99, n);
            if k50 < group.len() {
                group.select_nth_unstable(k50);
            }
            if k99 < group.len() && k99 > k50 {
                group[k50 + 1..].select_nth_unstable(k99 - k50 - 1);
            }
        }
    }

    /// Flow `flow`'s samples: below 2^32 (in the low half; its
    /// percentiles' places hold them), then the others (all larger,
    /// sorted).
    fn of(&self, flow: u32) -> (&[u64], &[(u32, u64)]) {
        let f = flow as usize;
        let (lo, hi) = match self.start.get(f..f + 2) {
            Some(&[lo, hi]) => (lo as usize, hi as usize),
            // Too many samples for the offsets: bisected.
            _ if self.start.is_empty() && !self.narrow.is_empty() => {
                let f = u64::from(flow);
                (
                    self.narrow.partition_point(|&x| x >> 32 < f),
                    self.narrow.partition_point(|&x| x >> 32 <= f),
                )
            }
            // Past the highest flow with samples below 2^32 (or none).
            _ => (0, 0),
        };
        let wlo = self.wide.partition_point(|w| w.0 < flow);
        let whi = self.wide.partition_point(|w| w.0 <= flow);
        (&self.narrow[lo..hi], &self.wide[wlo..whi])
    }
}

/// Nearest rank: the place of the ⌈q·n⌉-th smallest of `n` samples
/// (`q` in percent).
fn rank_index(q: u64, n: u64) -> usize {
    ((q * n).div_ceil(100).max(1) - 1) as usize
}

/// Every flow's kept samples, and how many more may be kept
/// (`--max-timing-samples`).
#[derive(Debug, Default)]
pub struct Logs {
    kinds: [SampleLog; 4],
    left: u64,
    sorted: bool,
    /// With the series (`--timeline`, `--html`): histograms of the
    /// samples in the report.
    pub histograms: bool,
}

/// `{edges_ns, counts}`: the samples kept, in bins four a decade (bin `i`
/// from `edges_ns[i]` to `edges_ns[i + 1]`, edges 10^(k/4) ns rounded), from
/// the smallest sample's bin to the largest's.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Histogram {
    pub edges_ns: Vec<u64>,
    pub counts: Vec<u64>,
}

impl Histogram {
    /// The histogram of `values` (`None` without any).
    pub fn of(values: impl Iterator<Item = u64> + Clone) -> Option<Histogram> {
        // Bin 0 holds 0 ns; bin b ≥ 1 holds [10^((b-1)/4), 10^(b/4)).
        let bin = |v: u64| {
            if v == 0 {
                0
            } else {
                ((v as f64).log10() * 4.0 + 1e-9).floor() as usize + 1
            }
        };
        let (mut lo, mut hi) = (usize::MAX, 0);
        for v in values.clone() {
            let b = bin(v);
            lo = lo.min(b);
            hi = hi.max(b);
        }
        if lo > hi {
            return None;
        }
        let mut counts = vec![0u64; hi - lo + 1];
        for v in values {
            counts[bin(v) - lo] += 1;
        }
        let edge = |b: usize| {
            if b == 0 {
                0
            } else {
                10f64.powf((b - 1) as f64 / 4.0).round() as u64
            }
        };
        Some(Histogram {
            edges_ns: (lo..=hi + 1).map(edge).collect(),
            counts,
        })
    }
}

/// `timing.histograms` (with `--timeline` or `--html`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TimingHistograms {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt: Option<Histogram>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion: Option<Histogram>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_latency: Option<Histogram>,
}

impl Logs {
    pub fn new(budget: u64) -> Self {
        Logs {
            left: budget,
            ..Logs::default()
        }
    }

    /// The histogram of flow `flow`'s samples of `kind` (sorted logs),
    /// when [`Logs::histograms`] asks for them.
    pub fn histogram(&self, kind: Kind, flow: u32) -> Option<Histogram> {
        if !self.histograms {
            return None;
        }
        let (narrow, wide) = self.kinds[kind as usize].of(flow);
        Histogram::of(
            narrow
                .iter()
                .map(|&x| x & 0xffff_ffff)
                .chain(wide.iter().map(|w| w.1)),
        )
    }

    /// Samples that may still be kept.
    pub fn left(&self) -> u64 {
        self.left
    }

    /// Takes `other`'s samples, their flows given the ids `map` holds
    /// (`map[old id]`), and leaves `left` samples to keep.
    pub fn absorb(&mut self, other: Logs, map: &[u32], left: u64) {
        debug_assert!(!self.sorted && !other.sorted);
        for (k, o) in self.kinds.iter_mut().zip(other.kinds) {
            let flow = |f: u64| u64::from(map[f as usize]);
            k.narrow.extend(
                o.narrow
                    .iter()
                    .map(|&x| flow(x >> 32) << 32 | (x & 0xffff_ffff)),
            );
            k.wide
                .extend(o.wide.iter().map(|&(f, v)| (map[f as usize], v)));
        }
        self.left = left;
    }

    /// Sorts the logs: after this, only [`FlowTiming::report`] reads them.
    pub fn sort(&mut self) {
        for k in &mut self.kinds {
            k.sort();
        }
        self.sorted = true;
    }

    /// [`sort`](Self::sort), each kind on a thread of the current rayon
    /// pool: the same logs.
    pub fn par_sort(&mut self) {
        use rayon::prelude::*;
        self.kinds.par_iter_mut().for_each(SampleLog::sort);
        self.sorted = true;
    }
}

/// Where one flow's samples go.
pub struct Log<'a> {
    pub flow: u32,
    pub logs: &'a mut Logs,
}

/// Exact statistics of a set of durations or sizes: the count, sum,
/// minimum and maximum here, the samples themselves in a [`SampleLog`].
#[derive(Debug, Default, Clone)]
pub struct Samples {
    count: u64,
    kept: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Samples {
    /// Adds `v` of `kind`; kept for the percentiles while the budget
    /// allows.
    pub fn add(&mut self, kind: Kind, v: u64, log: &mut Log<'_>) {
        if self.count == 0 {
            self.min = v;
            self.max = v;
        }
        self.count += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let logs = &mut *log.logs;
        if logs.left > 0 {
            logs.left -= 1;
            self.kept += 1;
            logs.kinds[kind as usize].push(log.flow, v);
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Samples kept for the percentiles.
    pub fn kept(&self) -> u64 {
        self.kept
    }

    /// The statistics, `None` without samples; `log` sorted.
    pub fn stats(&self, kind: Kind, flow: u32, logs: &Logs) -> Option<Stats> {
        if self.count == 0 {
            return None;
        }
        debug_assert!(logs.sorted);
        let (narrow, wide) = logs.kinds[kind as usize].of(flow);
        let n = (narrow.len() + wide.len()) as u64;
        let rank = |q: u64| {
            let k = rank_index(q, n);
            match narrow.get(k) {
                Some(&x) => x & 0xffff_ffff,
                None => wide[k - narrow.len()].1,
            }
        };
        let (p50, p99) = if n == 0 {
            (self.min, self.max)
        } else {
            (rank(50), rank(99))
        };
        Some(Stats {
            count: self.count,
            min_ns: self.min,
            p50_ns: p50,
            p99_ns: p99,
            max_ns: self.max,
            mean_ns: (self.sum / u128::from(self.count)) as u64,
        })
    }
}

/// `{count, min_ns, p50_ns, p99_ns, max_ns, mean_ns}`.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Stats {
    pub count: u64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    pub mean_ns: u64,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Sizes {
    pub min: u64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Messages {
    pub count: u64,
    pub bytes: u64,
    pub size: Sizes,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Acks {
    /// ACKs and NAKs that answered this flow.
    pub count: u64,
    /// Request packets acknowledged per ACK, on average (coalescing).
    pub per_request_packets: f64,
}

/// `flows[].timing`: each part only when it has samples.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TimingReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt: Option<Stats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Messages>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion: Option<Stats>,
    /// Messages not completed by the end of the capture.
    pub incomplete: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_latency: Option<Stats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acks: Option<Acks>,
    /// Replays after a silence (no NAK) and the ACK timeout they imply.
    /// Boxed: few flows have one, and every flow with a throughput or
    /// an answer has a report (a hundred thousand of them with as many
    /// QPs).
    pub timeout: Option<Box<TimeoutReport>>,
    /// Payload over time (any flow that carries payload).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput: Option<super::throughput::Throughput>,
    /// With the series: the samples' histograms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histograms: Option<Box<TimingHistograms>>,
}

impl TimingReport {
    /// A report with nothing but a throughput (a flow of READ responses
    /// or UD SENDs).
    pub fn throughput_only(t: super::throughput::Throughput) -> Self {
        TimingReport {
            rtt: None,
            messages: None,
            completion: None,
            incomplete: 0,
            read_latency: None,
            acks: None,
            timeout: None,
            throughput: Some(t),
            histograms: None,
        }
    }
}

/// A request packet as the timing reads it.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub op: Operation,
    pub psn: Psn,
    pub ts: u64,
    /// Payload bytes (SEND, WRITE) and DMA length (READ).
    pub payload: u64,
    pub dma_len: u64,
    /// Seen before: a replay.
    pub again: bool,
    /// Never seen, but after a later PSN: its bytes count for its message,
    /// nothing else.
    pub late: bool,
}

/// Replays after a silence with no NAK (timeouts) on one flow: what the
/// requester's local ACK timeout must be.
#[derive(Debug, Default, Clone)]
pub struct Timeouts {
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
    /// The PSN the last timeout replay started with, and how many
    /// timeout replays in a row started with it.
    last_psn: Option<Psn>,
    run: u64,
    retries: u64,
}

/// `flows[].timing.timeout`.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct TimeoutReport {
    /// Replays that followed a silence with no NAK.
    pub resends: u64,
    /// The silence before them: last packet of the flow to the resend.
    pub silence_min_ns: u64,
    pub silence_mean_ns: u64,
    pub silence_max_ns: u64,
    /// The local ACK timeout exponent the shortest silence implies: the
    /// greatest `t` with 4.096 µs × 2^t at most that silence.
    pub t: u32,
    /// 4.096 µs × 2^t.
    pub implied_ns: u64,
    /// The most timeout replays in a row of the same PSN (the retry
    /// count seen; the QP's retry_cnt is at least this).
    pub retries: u64,
}

/// The IBA's local ACK timeout unit: 4.096 µs.
const TIMEOUT_UNIT_NS: u64 = 4096;

impl Timeouts {
    /// A timeout replay starting with `psn` after `silence_ns`.
    pub fn add(&mut self, psn: Psn, silence_ns: u64) {
        if self.count == 0 {
            self.min = silence_ns;
        }
        self.count += 1;
        self.min = self.min.min(silence_ns);
        self.max = self.max.max(silence_ns);
        self.sum += u128::from(silence_ns);
        self.run = if self.last_psn == Some(psn) {
            self.run + 1
        } else {
            1
        };
        self.last_psn = Some(psn);
        self.retries = self.retries.max(self.run);
    }

    pub fn report(&self) -> Option<TimeoutReport> {
        if self.count == 0 {
            return None;
        }
        let t = (self.min / TIMEOUT_UNIT_NS)
            .checked_ilog2()
            .unwrap_or(0)
            .min(31);
        Some(TimeoutReport {
            resends: self.count,
            silence_min_ns: self.min,
            silence_mean_ns: (self.sum / u128::from(self.count)) as u64,
            silence_max_ns: self.max,
            t,
            implied_ns: TIMEOUT_UNIT_NS << t,
            retries: self.retries,
        })
    }
}

/// What an answer (ACK, NAK, READ response) sampled.
#[derive(Debug, Clone, Copy, Default)]
pub struct Answer {
    pub rtt_ns: Option<u64>,
    /// The oldest message it completed.
    pub completion_ns: Option<u64>,
}

/// A request packet waiting for its acknowledgement.
#[derive(Debug, Clone, Copy)]
struct Sent {
    psn: Psn,
    /// Times it was seen sent (Karn: a sample only when once).
    sends: u32,
    ts: u64,
}

/// A SEND or WRITE message whose last packet is sent.
#[derive(Debug, Clone, Copy)]
struct Message {
    last_psn: Psn,
    first_ts: u64,
    bytes: u64,
}

/// A READ request waiting for its responses.
#[derive(Debug, Clone, Copy)]
struct Read {
    psn: Psn,
    ts: u64,
    sends: u32,
    answered: bool,
}

/// One request flow's timing state (made on its first RC request).
#[derive(Debug, Default)]
pub struct FlowTiming {
    sent: VecDeque<Sent>,
    messages: VecDeque<Message>,
    reads: VecDeque<Read>,
    /// The SEND or WRITE message in progress: its first packet's time and
    /// its bytes so far.
    current: Option<(u64, u64)>,
    rtt: Samples,
    completion: Samples,
    read_latency: Samples,
    sizes: Samples,
    message_bytes: u64,
    acks: u64,
    acked_packets: u64,
    /// Messages dropped unanswered past [`MAX_PENDING`].
    lost_track: u64,
    /// Round trip samples whose answer came after later requests of the
    /// flow were seen (the capture point is nearer the requester).
    behind: u64,
}

/// Pushes `v`, giving back the oldest when `q` was full.
fn push_bounded<T>(q: &mut VecDeque<T>, v: T) -> Option<T> {
    let out = if q.len() >= MAX_PENDING {
        q.pop_front()
    } else {
        None
    };
    q.push_back(v);
    out
}

impl FlowTiming {
    /// A request packet, seen for the first time or again.
    pub fn request(&mut self, req: Request, log: &mut Log<'_>) {
        let Request {
            op,
            psn,
            ts,
            payload,
            dma_len,
            again,
            late,
        } = req;
        if late {
            self.late(psn, payload);
            return;
        }
        if again {
            if let Some(i) = self.sent_index(psn) {
                self.sent[i].sends += 1;
            }
            if let Some(r) = self.reads.iter_mut().rev().find(|r| r.psn == psn) {
                r.sends += 1;
            }
            return;
        }
        push_bounded(&mut self.sent, Sent { psn, sends: 1, ts });
        use Operation::*;
        match op {
            // A message whose LAST never showed is left incomplete.
            SendFirst | WriteFirst => {
                let unfinished = self.current.replace((ts, payload)).is_some();
                self.lost_track += u64::from(unfinished);
            }
            // A MIDDLE without its FIRST in the capture (yet) starts it.
            SendMiddle | WriteMiddle => match &mut self.current {
                Some((_, b)) => *b += payload,
                None => self.current = Some((ts, payload)),
            },
            SendLast | SendLastImm | SendLastInvalidate | WriteLast | WriteLastImm => {
                // A LAST without its FIRST in the capture starts here.
                let (first, bytes) = self.current.take().unwrap_or((ts, 0));
                self.message(first, psn, bytes + payload, log);
            }
            SendOnly | SendOnlyImm | SendOnlyInvalidate | WriteOnly | WriteOnlyImm => {
                self.message(ts, psn, payload, log);
            }
            ReadRequest => {
                self.count_message(dma_len, log);
                let read = Read {
                    psn,
                    ts,
                    sends: 1,
                    answered: false,
                };
                if push_bounded(&mut self.reads, read).is_some() {
                    self.lost_track += 1;
                }
            }
            _ => {}
        }
    }

    /// A message's size, counted once it is done with (completed, given
    /// up, or at the end).
    fn count_message(&mut self, bytes: u64, log: &mut Log<'_>) {
        self.sizes.add(Kind::Size, bytes, log);
        self.message_bytes += bytes;
    }

    /// A late packet: its bytes go to the message it belongs to, the
    /// oldest waiting one that ends at or after it, else the one in
    /// progress.
    fn late(&mut self, psn: Psn, payload: u64) {
        if let Some(m) = self
            .messages
            .iter_mut()
            .find(|m| at_or_after(psn, m.last_psn))
        {
            m.bytes += payload;
        } else if let Some((_, b)) = &mut self.current {
            *b += payload;
        }
    }

    fn message(&mut self, first_ts: u64, last_psn: Psn, bytes: u64, log: &mut Log<'_>) {
        let m = Message {
            last_psn,
            first_ts,
            bytes,
        };
        if let Some(old) = push_bounded(&mut self.messages, m) {
            self.lost_track += 1;
            self.count_message(old.bytes, log);
        }
    }

    /// An answer at `ts` that samples the round trip of the request
    /// packet of PSN `sample` (when it was sent once: Karn's rule) and
    /// acknowledges the request packets and messages up to `psn` (an ACK
    /// of `psn`, a NAK of `psn + 1`, a READ response of `psn`): a
    /// completion sample for each message it completes. Returns the
    /// request packets acknowledged.
    fn acknowledged(
        &mut self,
        psn: Psn,
        ts: u64,
        sample: Option<Psn>,
        log: &mut Log<'_>,
        said: &mut Answer,
    ) -> u64 {
        if let Some(p) = sample
            && let Some(i) = self.sent_index(p)
            && let s = self.sent[i]
            && s.sends == 1
            && ts >= s.ts
        {
            self.rtt.add(Kind::Rtt, ts - s.ts, log);
            said.rtt_ns = Some(ts - s.ts);
            self.behind += u64::from(i + 1 < self.sent.len());
        }
        let mut packets = 0;
        while let Some(s) = self.sent.front() {
            if !at_or_after(s.psn, psn) {
                break;
            }
            self.sent.pop_front();
            packets += 1;
        }
        while let Some(m) = self.messages.front().copied() {
            if !at_or_after(m.last_psn, psn) {
                break;
            }
            self.messages.pop_front();
            self.count_message(m.bytes, log);
            if ts >= m.first_ts {
                self.completion.add(Kind::Completion, ts - m.first_ts, log);
                said.completion_ns.get_or_insert(ts - m.first_ts);
            }
        }
        packets
    }

    /// An ACK (`nak` false) or a NAK of `psn` at `ts`: a round trip from
    /// the request of that PSN either way.
    pub fn ack(&mut self, psn: Psn, nak: bool, ts: u64, log: &mut Log<'_>) -> Answer {
        self.acks += 1;
        // A NAK acknowledges what came before the PSN it names.
        let acked = if nak { psn - 1 } else { psn };
        let mut said = Answer::default();
        self.acked_packets += self.acknowledged(acked, ts, Some(psn), log, &mut said);
        said
    }

    /// A READ response packet of `psn` at `ts`.
    pub fn read_response(&mut self, op: Operation, psn: Psn, ts: u64, log: &mut Log<'_>) -> Answer {
        let mut said = Answer::default();
        // The READ it answers: the latest one at or before its PSN.
        let Some(i) = self.reads.iter().rposition(|r| at_or_after(r.psn, psn)) else {
            return said;
        };
        let r = self.reads[i];
        let first = matches!(
            op,
            Operation::ReadResponseFirst | Operation::ReadResponseOnly
        );
        if first && psn == r.psn && !r.answered && ts >= r.ts {
            self.reads[i].answered = true;
            if r.sends == 1 {
                self.read_latency.add(Kind::ReadLatency, ts - r.ts, log);
            }
        }
        // The responses acknowledge the requests before them, and the READ
        // itself (the RTT sample of its PSN with its first response).
        let sample = (first && psn == r.psn).then_some(psn);
        self.acknowledged(psn, ts, sample, log, &mut said);
        if matches!(
            op,
            Operation::ReadResponseLast | Operation::ReadResponseOnly
        ) {
            self.reads.drain(..=i);
            if ts >= r.ts {
                self.completion.add(Kind::Completion, ts - r.ts, log);
                said.completion_ns.get_or_insert(ts - r.ts);
            }
        }
        said
    }

    /// Hints the caches with the ends of the queues a frame of the flow
    /// reads: the oldest and newest request packets waiting (an answer
    /// pops the oldest and most often names the newest; a request is
    /// added after it), the oldest message waiting and the newest READ.
    #[inline]
    pub fn hint_ends(&self) {
        for s in [self.sent.front(), self.sent.back()].into_iter().flatten() {
            mapwin::prefetch_value(s, 1);
        }
        if let Some(m) = self.messages.front() {
            mapwin::prefetch_value(m, 1);
        }
        if let Some(r) = self.reads.back() {
            mapwin::prefetch_value(r, 1);
        }
    }

    /// Whether the request flow has `psn` waiting (to learn which flow
    /// an ACK flow answers).
    pub fn waits_for(&self, psn: Psn) -> bool {
        self.sent_index(psn).is_some()
    }

    /// Where the request packet of `psn` waits, found by bisection: the
    /// waiting packets are in PSN order (modulo 2^24) from the oldest, as
    /// only first transmissions are added.
    fn sent_index(&self, psn: Psn) -> Option<usize> {
        // Most answers name the newest request (a coalesced ACK of a
        // message's last packet) or the oldest (a READ's first response).
        let last = self.sent.len().checked_sub(1)?;
        if self.sent[last].psn == psn {
            return Some(last);
        }
        let base = self.sent.front()?.psn;
        if base == psn {
            return Some(0);
        }
        let off = |p: Psn| p.forward_from(base);
        self.sent
            .binary_search_by_key(&off(psn), |s| off(s.psn))
            .ok()
    }

    /// Round trip samples, and how many of them were answered after later
    /// requests of the flow were seen.
    /// With the shortest round trip.
    pub fn lag(&self) -> (u64, u64, u64) {
        (self.rtt.count(), self.behind, self.rtt.min)
    }

    /// Samples counted but not kept (past `--max-timing-samples`).
    pub fn unkept(&self) -> u64 {
        [&self.rtt, &self.completion, &self.read_latency, &self.sizes]
            .iter()
            .map(|s| s.count - s.kept)
            .sum()
    }

    /// The end of the capture: the messages still waiting are counted
    /// (incomplete), before the logs are sorted.
    pub fn flush(&mut self, log: &mut Log<'_>) {
        while let Some(m) = self.messages.pop_front() {
            self.count_message(m.bytes, log);
            self.lost_track += 1;
        }
    }

    /// The report of flow `flow` (its samples in the sorted `logs`).
    pub fn report(&self, flow: u32, logs: &Logs) -> Option<TimingReport> {
        let sizes = self.sizes.stats(Kind::Size, flow, logs).map(|s| Sizes {
            min: s.min_ns,
            p50: s.p50_ns,
            p99: s.p99_ns,
            max: s.max_ns,
        });
        let messages = sizes.map(|size| Messages {
            count: self.sizes.count(),
            bytes: self.message_bytes,
            size,
        });
        let incomplete =
            self.reads.len() as u64 + u64::from(self.current.is_some()) + self.lost_track;
        let acks = (self.acks > 0).then(|| Acks {
            count: self.acks,
            per_request_packets: self.acked_packets as f64 / self.acks as f64,
        });
        let t = TimingReport {
            rtt: self.rtt.stats(Kind::Rtt, flow, logs),
            messages,
            completion: self.completion.stats(Kind::Completion, flow, logs),
            incomplete,
            read_latency: self.read_latency.stats(Kind::ReadLatency, flow, logs),
            acks,
            timeout: None,
            throughput: None,
            histograms: logs
                .histograms
                .then(|| TimingHistograms {
                    rtt: logs.histogram(Kind::Rtt, flow),
                    completion: logs.histogram(Kind::Completion, flow),
                    read_latency: logs.histogram(Kind::ReadLatency, flow),
                })
                .filter(|h| h.rtt.is_some() || h.completion.is_some() || h.read_latency.is_some())
                .map(Box::new),
        };
        (t.rtt.is_some() || t.messages.is_some() || t.acks.is_some()).then_some(t)
    }
}

/// Where the capture point seems to sit (`capture.vantage`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Vantage {
    /// On or beside the one host that sends every timed flow's requests.
    Requester,
    /// On or beside the one host that answers every timed flow.
    Responder,
    /// Between the hosts: no host takes part in every timed flow (a switch
    /// mirror, a tap).
    Mid,
    /// On a host that both requests and answers.
    Mixed,
}

impl Vantage {
    pub fn describe(self) -> &'static str {
        match self {
            Vantage::Requester => "the requester's side",
            Vantage::Responder => "the responder's side",
            Vantage::Mid => "between the hosts (a mirror or tap)",
            Vantage::Mixed => "a host that both requests and answers",
        }
    }
}

/// A request flow as [`vantage`] reads it.
#[derive(Debug, Clone, Copy)]
pub struct TimedFlow<A> {
    pub requester: A,
    pub responder: A,
    /// Round trip samples.
    pub samples: u64,
    /// Those answered after later requests of the flow were seen.
    pub behind: u64,
    pub min_rtt_ns: u64,
}

/// Round trips at least this many times longer one way than the other
/// (one host pair): the capture is at the slower one's requester.
const ASYMMETRY: u64 = 4;

/// The vantage of a capture from its timed flows, and the host it was
/// judged from. `None` when the flows do not tell (README, "Timing":
/// vantage).
pub fn vantage<A: Copy + Eq>(flows: &[TimedFlow<A>]) -> Option<(Vantage, Option<A>)> {
    let timed: Vec<_> = flows.iter().filter(|f| f.samples > 0).collect();
    let first = timed.first()?;
    // The hosts in every timed flow.
    let in_all = |h: A| timed.iter().all(|f| f.requester == h || f.responder == h);
    let local: Vec<A> = [first.requester, first.responder]
        .into_iter()
        .filter(|&h| in_all(h))
        .collect();
    let host = match local[..] {
        [] => return Some((Vantage::Mid, None)),
        [h] => h,
        // One host pair (a, b): the side whose requests are answered only
        // after it sent more (at least half the samples), else the side
        // whose requests wait [`ASYMMETRY`] times longer, is the capture's.
        [a, b] => {
            let mut lagging = timed
                .iter()
                .filter(|f| 2 * f.behind >= f.samples)
                .map(|f| f.requester);
            match lagging.next() {
                Some(h) if lagging.all(|x| x == h) => h,
                Some(_) => return None,
                None => {
                    let min = |h: A| {
                        timed
                            .iter()
                            .filter(|f| f.requester == h)
                            .map(|f| f.min_rtt_ns)
                            .min()
                    };
                    match (min(a)?, min(b)?) {
                        (x, y) if x >= ASYMMETRY * y.max(1) => a,
                        (x, y) if y >= ASYMMETRY * x.max(1) => b,
                        _ => return None,
                    }
                }
            }
        }
        _ => return None,
    };
    let asks = timed.iter().any(|f| f.requester == host);
    let answers = timed.iter().any(|f| f.responder == host);
    let v = match (asks, answers) {
        (true, false) => Vantage::Requester,
        (false, true) => Vantage::Responder,
        _ => Vantage::Mixed,
    };
    Some((v, Some(host)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_has_four_bins_a_decade_and_every_sample() {
        let h = Histogram::of([0u64, 1, 2, 5, 10, 99, 100, 1000, 1000].into_iter()).unwrap();
        assert_eq!(h.counts.iter().sum::<u64>(), 9);
        assert_eq!(h.edges_ns.len(), h.counts.len() + 1);
        // 0 alone; 1 in [1, 2); 2 in [2, 3); 5 in [3, 6); 10 in [10, 18).
        assert_eq!(&h.edges_ns[..6], &[0, 1, 2, 3, 6, 10]);
        assert_eq!(&h.counts[..6], &[1, 1, 1, 1, 0, 1]);
        // 1000 (10^3) opens its bin, twice.
        assert_eq!(*h.counts.last().unwrap(), 2);
        assert_eq!(h.edges_ns[h.edges_ns.len() - 2], 1000);
        assert_eq!(Histogram::of(std::iter::empty()), None);
    }

    fn flows(f: &[(u8, u8, u64, u64)]) -> Vec<TimedFlow<u8>> {
        f.iter()
            .map(|&(requester, responder, samples, behind)| TimedFlow {
                requester,
                responder,
                samples,
                behind,
                min_rtt_ns: 1_000,
            })
            .collect()
    }

    #[test]
    fn vantage_from_the_round_trips_one_way_and_back() {
        let mut f = flows(&[(1, 2, 3, 0), (2, 1, 3, 0)]);
        assert_eq!(vantage(&f), None);
        f[0].min_rtt_ns = 4_000;
        assert_eq!(vantage(&f), Some((Vantage::Mixed, Some(1))));
        f[0].min_rtt_ns = 100;
        assert_eq!(vantage(&f), Some((Vantage::Mixed, Some(2))));
        // One way only: nothing to compare.
        assert_eq!(vantage(&f[..1]), None);
    }

    #[test]
    fn vantage_from_the_hosts_and_the_lag() {
        // A host in every flow: its role decides.
        let f = flows(&[(1, 2, 5, 0), (1, 3, 5, 0)]);
        assert_eq!(vantage(&f), Some((Vantage::Requester, Some(1))));
        let f = flows(&[(2, 1, 5, 0), (3, 1, 5, 5)]);
        assert_eq!(vantage(&f), Some((Vantage::Responder, Some(1))));
        let f = flows(&[(1, 2, 5, 0), (3, 1, 5, 0)]);
        assert_eq!(vantage(&f), Some((Vantage::Mixed, Some(1))));
        // No host in every flow: mid-path. Untimed flows do not count.
        let f = flows(&[(1, 2, 5, 0), (3, 4, 5, 0), (5, 6, 0, 0)]);
        assert_eq!(vantage(&f), Some((Vantage::Mid, None)));
        // One host pair: the lagging side is near.
        let f = flows(&[(1, 2, 10, 6), (2, 1, 10, 0)]);
        assert_eq!(vantage(&f), Some((Vantage::Mixed, Some(1))));
        let f = flows(&[(1, 2, 10, 6)]);
        assert_eq!(vantage(&f), Some((Vantage::Requester, Some(1))));
        let f = flows(&[(1, 2, 10, 1)]);
        assert_eq!(vantage(&f), None);
        assert_eq!(vantage::<u8>(&[]), None);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut logs = Logs::new(u64::MAX);
        // Flow 1 between flows 0 and 2 in the log: its own samples only,
        // one of them past 2^32 ns.
        let (mut a, mut s, mut c) = (Samples::default(), Samples::default(), Samples::default());
        for v in [50, 10, 40, 20, 30] {
            a.add(
                Kind::Rtt,
                v * 1000,
                &mut Log {
                    flow: 0,
                    logs: &mut logs,
                },
            );
            s.add(
                Kind::Rtt,
                v,
                &mut Log {
                    flow: 1,
                    logs: &mut logs,
                },
            );
            c.add(
                Kind::Rtt,
                v + 1,
                &mut Log {
                    flow: 2,
                    logs: &mut logs,
                },
            );
        }
        s.add(
            Kind::Rtt,
            5 << 32,
            &mut Log {
                flow: 1,
                logs: &mut logs,
            },
        );
        // 100 samples 1..=100 of another kind: p50 the 50th, p99 the 99th.
        let mut h = Samples::default();
        for v in (1..=100).rev() {
            h.add(
                Kind::Size,
                v,
                &mut Log {
                    flow: 1,
                    logs: &mut logs,
                },
            );
        }
        logs.sort();
        let st = s.stats(Kind::Rtt, 1, &logs).unwrap();
        assert_eq!(
            (st.min_ns, st.p50_ns, st.p99_ns, st.max_ns, st.count),
            (10, 30, 5 << 32, 5 << 32, 6)
        );
        let st = h.stats(Kind::Size, 1, &logs).unwrap();
        assert_eq!((st.p50_ns, st.p99_ns), (50, 99));
        let st = c.stats(Kind::Rtt, 2, &logs).unwrap();
        assert_eq!((st.p50_ns, st.mean_ns), (31, 31));
    }

    proptest::proptest! {
        #[test]
        fn percentiles_are_those_of_each_flows_sorted_samples(
            samples in proptest::collection::vec((0u32..5, 0u64..1_000, proptest::bool::ANY), 0..300)
        ) {
            let mut logs = Logs::new(u64::MAX);
            let mut acc = vec![Samples::default(); 5];
            let mut all: Vec<Vec<u64>> = vec![Vec::new(); 5];
            for &(flow, v, wide) in &samples {
                // Some past 2^32 ns, kept apart.
                let v = if wide { v + (1 << 32) } else { v };
                acc[flow as usize].add(Kind::Rtt, v, &mut Log { flow, logs: &mut logs });
                all[flow as usize].push(v);
            }
            logs.sort();
            for f in 0..5u32 {
                let mut want = all[f as usize].clone();
                want.sort_unstable();
                let st = acc[f as usize].stats(Kind::Rtt, f, &logs);
                match st {
                    None => proptest::prop_assert!(want.is_empty()),
                    Some(st) => {
                        let n = want.len() as u64;
                        proptest::prop_assert_eq!(st.p50_ns, want[rank_index(50, n)]);
                        proptest::prop_assert_eq!(st.p99_ns, want[rank_index(99, n)]);
                        proptest::prop_assert_eq!(st.min_ns, want[0]);
                        proptest::prop_assert_eq!(st.max_ns, *want.last().unwrap());
                    }
                }
            }
            // Each flow's samples by the sort's offsets, and by bisection
            // (a log too large for them): the same slices.
            let log = &mut logs.kinds[Kind::Rtt as usize];
            let by_offsets: Vec<_> = (0..6).map(|f| {
                let (n, w) = log.of(f);
                (n.to_vec(), w.to_vec())
            }).collect();
            log.start.clear();
            for f in 0..6u32 {
                let (n, w) = log.of(f);
                proptest::prop_assert_eq!(&by_offsets[f as usize], &(n.to_vec(), w.to_vec()));
            }
        }
    }

    #[test]
    fn past_the_budget_counts_stay_exact() {
        let mut logs = Logs::new(2);
        let mut s = Samples::default();
        for v in [5, 1, 9, 7] {
            s.add(
                Kind::Completion,
                v,
                &mut Log {
                    flow: 3,
                    logs: &mut logs,
                },
            );
        }
        logs.sort();
        let st = s.stats(Kind::Completion, 3, &logs).unwrap();
        assert_eq!((st.count, st.min_ns, st.max_ns, st.mean_ns), (4, 1, 9, 5));
        // The percentiles of the two kept: 5 and 1.
        assert_eq!((st.p50_ns, st.p99_ns), (1, 5));
        assert_eq!((logs.left, s.count - s.kept), (0, 2));
    }

    #[test]
    fn waiting_requests_are_found_across_the_wrap() {
        let mut t = FlowTiming::default();
        let mut logs = Logs::new(u64::MAX);
        let left = &mut Log {
            flow: 0,
            logs: &mut logs,
        };
        let psns: Vec<Psn> = (0..40u32).map(|k| Psn::new(0xff_fff0) + 2 * k).collect();
        for (k, &psn) in psns.iter().enumerate() {
            let req = Request {
                op: Operation::SendOnly,
                psn,
                ts: k as u64 * 10,
                payload: 8,
                dma_len: 0,
                again: false,
                late: false,
            };
            t.request(req, left);
        }
        for &psn in &psns {
            assert!(t.waits_for(psn), "{psn:#x}");
            assert!(!t.waits_for(psn + 1), "{psn:#x} + 1");
        }
        // A replay of one of them: no sample for it, one for the next.
        t.request(
            Request {
                op: Operation::SendOnly,
                psn: psns[20],
                ts: 1_000,
                payload: 8,
                dma_len: 0,
                again: true,
                late: false,
            },
            left,
        );
        assert_eq!(t.ack(psns[20], false, 2_000, left).rtt_ns, None);
        assert_eq!(
            t.ack(psns[21], false, 2_000, left).rtt_ns,
            Some(2_000 - 210)
        );
        assert!(!t.waits_for(psns[0]) && t.waits_for(psns[22]));
    }

    #[test]
    fn psn_order_wraps() {
        assert!(at_or_after(Psn::new(0xff_fffe), Psn::new(1)));
        assert!(!at_or_after(Psn::new(1), Psn::new(0xff_fffe)));
        assert!(at_or_after(Psn::new(5), Psn::new(5)));
    }

    /// A report is kept for every flow with a throughput or an answer
    /// until the JSON is written: 102 000 of them on 65 536 QPs. The rare
    /// timeout part is boxed, so it costs a pointer where it is absent
    /// (it took 64 bytes of every report).
    #[test]
    fn a_timing_report_holds_the_rare_timeout_apart() {
        assert_eq!(std::mem::size_of::<Option<Box<TimeoutReport>>>(), 8);
        assert!(
            std::mem::size_of::<TimingReport>() <= 344,
            "{} bytes",
            std::mem::size_of::<TimingReport>()
        );
    }
}
