//! What the analysis may keep, whatever a capture holds: flows, UD source
//! QPs, pause sources, pause intervals, pending CM requests, events. Past
//! a budget, new items are counted, never kept, and the report says how
//! many (`capture.*_dropped`) with a warning.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hash};

/// Defaults, sized so that a run on any capture stays well under 2 GiB.
pub const DEFAULT_MAX_FLOWS: u64 = 1_000_000;
pub const DEFAULT_MAX_UD_SOURCES: u64 = 1_000_000;
pub const DEFAULT_MAX_PAUSE_SOURCES: u64 = 100_000;
pub const DEFAULT_MAX_INTERVALS: u64 = 100_000;
pub const DEFAULT_MAX_CM_PENDING: u64 = 100_000;
pub const DEFAULT_MAX_EVENTS_TOTAL: u64 = 10_000;
/// Timing samples kept for exact percentiles: 4 Mi of 8 bytes, 32 MiB at
/// most, all flows together.
pub const DEFAULT_MAX_TIMING_SAMPLES: u64 = 4 << 20;

/// The limits, from the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Flows tracked (`--max-flows`).
    pub flows: u64,
    /// UD source QPs with a PSN sequence of their own, in all.
    pub ud_sources: u64,
    /// (MAC, priority) pairs whose pauses are tracked.
    pub pause_sources: u64,
    /// Pause intervals listed one by one (the rest are in the summary).
    pub intervals: u64,
    /// CM REQs waiting for their REP.
    pub cm_pending: u64,
    /// Events kept per flow.
    pub events_per_flow: usize,
    /// Events (and retransmission episodes) kept in all.
    pub events_total: u64,
    /// Timing samples (round trips, completions, READ latencies, message
    /// sizes) kept for exact percentiles, in all.
    pub timing_samples: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            flows: DEFAULT_MAX_FLOWS,
            ud_sources: DEFAULT_MAX_UD_SOURCES,
            pause_sources: DEFAULT_MAX_PAUSE_SOURCES,
            intervals: DEFAULT_MAX_INTERVALS,
            cm_pending: DEFAULT_MAX_CM_PENDING,
            events_per_flow: 1000,
            events_total: DEFAULT_MAX_EVENTS_TOTAL,
            timing_samples: DEFAULT_MAX_TIMING_SAMPLES,
        }
    }
}

/// Counts distinct items (flows, source QPs) that were not kept: exactly
/// up to a million of them (eight bytes each), then as an estimate
/// (HyperLogLog, 4 KiB, about 2 % off).
#[derive(Debug, Default)]
pub struct DistinctCounter {
    exact: HashSet<u64>,
    /// Past [`EXACT_UP_TO`]: 4096 registers of leading-zero counts.
    registers: Option<Box<[u8; REGISTERS]>>,
}

const EXACT_UP_TO: usize = 1_000_000;
const REGISTER_BITS: u32 = 12;
const REGISTERS: usize = 1 << REGISTER_BITS;

/// The hasher of the items counted (seeded per run, like every table).
fn item_hash<T: Hash>(item: &T) -> u64 {
    static SEEDED: std::sync::LazyLock<foldhash::quality::FixedState> =
        std::sync::LazyLock::new(|| {
            let seed = foldhash::quality::RandomState::default().hash_one(0xd1_5711_u64);
            foldhash::quality::FixedState::with_seed(seed)
        });
    SEEDED.hash_one(item)
}

impl DistinctCounter {
    pub fn add<T: Hash>(&mut self, item: &T) {
        let h = item_hash(item);
        match &mut self.registers {
            None => {
                self.exact.insert(h);
                if self.exact.len() > EXACT_UP_TO {
                    let mut regs = Box::new([0u8; REGISTERS]);
                    for &h in &self.exact {
                        observe(&mut regs, h);
                    }
                    self.exact = HashSet::new();
                    self.registers = Some(regs);
                }
            }
            Some(regs) => observe(regs, h),
        }
    }

    /// How many distinct items were added.
    pub fn count(&self) -> u64 {
        match &self.registers {
            None => self.exact.len() as u64,
            Some(regs) => estimate(regs),
        }
    }

    /// Whether [`count`](Self::count) is exact.
    pub fn is_exact(&self) -> bool {
        self.registers.is_none()
    }
}

fn observe(regs: &mut [u8; REGISTERS], h: u64) {
    let idx = (h >> (64 - REGISTER_BITS)) as usize;
    let rest = h << REGISTER_BITS;
    let rank = (rest.leading_zeros() + 1).min(64 - REGISTER_BITS + 1) as u8;
    if let Some(r) = regs.get_mut(idx) {
        *r = (*r).max(rank);
    }
}

fn estimate(regs: &[u8; REGISTERS]) -> u64 {
    let m = REGISTERS as f64;
    let alpha = 0.7213 / (1.0 + 1.079 / m);
    let sum: f64 = regs.iter().map(|&r| 2f64.powi(-i32::from(r))).sum();
    let raw = alpha * m * m / sum;
    let zeros = regs.iter().filter(|&&r| r == 0).count();
    let e = if raw <= 2.5 * m && zeros > 0 {
        m * (m / zeros as f64).ln()
    } else {
        raw
    };
    e.round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_then_estimated() {
        let mut c = DistinctCounter::default();
        for i in 0..1000u64 {
            c.add(&i);
            c.add(&i);
        }
        assert_eq!(c.count(), 1000);
        assert!(c.is_exact());
        let mut c = DistinctCounter::default();
        let n = EXACT_UP_TO as u64 + 500_000;
        for i in 0..n {
            c.add(&i);
        }
        assert!(!c.is_exact());
        let err = (c.count() as f64 - n as f64).abs() / n as f64;
        assert!(err < 0.05, "{} for {n}", c.count());
    }
}
