//! The timing figures a generated capture must produce (`flows[].timing`),
//! from what the generator knows it did: when each packet was sent and
//! how often, when each answer left. Computed here from those facts with
//! the README's definitions, not by the analysis.

use crate::analysis::throughput::{Throughput, Timeline};
use crate::analysis::timing::{Acks, Messages, Sizes, Stats, TimeoutReport, TimingReport, Vantage};

/// Frames and samples the truth keeps at most; past it, a run's truth has
/// no timing (the analysis would keep only some samples).
pub const MAX_TRUTH_ITEMS: u64 = 4 << 20;

/// One flow's timing facts.
#[derive(Debug, Default, Clone)]
pub struct FlowTimingTruth {
    pub rtt: Vec<u64>,
    pub completion: Vec<u64>,
    pub read_latency: Vec<u64>,
    pub sizes: Vec<u64>,
    pub bytes: u64,
    pub acks: u64,
    pub acked_packets: u64,
    /// Silences before timeout replays.
    pub silences: Vec<u64>,
    /// Frames with payload: (time shown, payload, a replay).
    pub payload: Vec<(u64, u64, bool)>,
}

/// Nearest rank over exact samples.
pub fn stats(v: &mut [u64]) -> Option<Stats> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    let rank = |q: usize| v[(q * n).div_ceil(100).max(1) - 1];
    Some(Stats {
        count: n as u64,
        min_ns: v[0],
        p50_ns: rank(50),
        p99_ns: rank(99),
        max_ns: v[n - 1],
        mean_ns: (v.iter().map(|&x| u128::from(x)).sum::<u128>() / n as u128) as u64,
    })
}

/// The throughput of frames `(shown time, payload, replay)` in the bins of
/// a capture from `first` to `last`.
fn throughput(frames: &[(u64, u64, bool)], first: u64, last: u64) -> Option<Throughput> {
    let payload: u64 = frames.iter().map(|f| f.1).sum();
    if payload == 0 {
        return None;
    }
    let bin = Timeline::bin_for(first, last, None);
    let mut bins = std::collections::BTreeMap::<u64, u64>::new();
    for &(t, n, _) in frames {
        *bins.entry((t - first) / bin).or_default() += n;
    }
    let lo = *bins.keys().next()?;
    let hi = *bins.keys().next_back()?;
    let bps = |bytes: u64, ns: u64| (u128::from(bytes) * 8_000_000_000 / u128::from(ns)) as u64;
    Some(Throughput {
        bin_ns: bin,
        mean_bps: bps(payload, (hi - lo + 1) * bin),
        peak_bps: bps(*bins.values().max()?, bin),
        payload_bytes: payload,
        replayed_bytes: frames.iter().filter(|f| f.2).map(|f| f.1).sum(),
        series: None,
        psn_first: None,
    })
}

impl FlowTimingTruth {
    /// Items held (for [`MAX_TRUTH_ITEMS`]).
    pub fn items(&self) -> u64 {
        (self.rtt.len()
            + self.completion.len()
            + self.read_latency.len()
            + self.sizes.len()
            + self.payload.len()) as u64
    }

    /// `flows[].timing` for a capture from `first` to `last` (times shown).
    pub fn report(mut self, first: u64, last: u64) -> Option<TimingReport> {
        let throughput = throughput(&self.payload, first, last);
        let size = stats(&mut self.sizes);
        let messages = size.map(|s| Messages {
            count: s.count,
            bytes: self.bytes,
            size: Sizes {
                min: s.min_ns,
                p50: s.p50_ns,
                p99: s.p99_ns,
                max: s.max_ns,
            },
        });
        let rtt = stats(&mut self.rtt);
        let acks = (self.acks > 0).then(|| Acks {
            count: self.acks,
            per_request_packets: self.acked_packets as f64 / self.acks as f64,
        });
        if rtt.is_none() && messages.is_none() && acks.is_none() {
            return throughput.map(TimingReport::throughput_only);
        }
        let timeout = stats(&mut self.silences).map(|s| {
            let t = (s.min_ns / 4096).checked_ilog2().unwrap_or(0).min(31);
            Box::new(TimeoutReport {
                resends: s.count,
                silence_min_ns: s.min_ns,
                silence_mean_ns: s.mean_ns,
                silence_max_ns: s.max_ns,
                t,
                implied_ns: 4096 << t,
                // Each timeout replays another PSN.
                retries: 1,
            })
        });
        Some(TimingReport {
            rtt,
            messages,
            completion: stats(&mut self.completion),
            // Every message the generator starts completes.
            incomplete: 0,
            read_latency: stats(&mut self.read_latency),
            acks,
            timeout,
            throughput,
            histograms: None,
        })
    }
}

/// Where a generated capture is taken: on the link to the one server of an
/// incast, else on a switch between several hosts (`None` with one QP:
/// one host pair, each request waiting for its answer, tells nothing).
pub fn vantage(qps: u32, incast: bool) -> Option<Vantage> {
    match (qps, incast) {
        (0 | 1, _) => None,
        (_, true) => Some(Vantage::Responder),
        _ => Some(Vantage::Mid),
    }
}
