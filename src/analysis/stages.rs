//! The analysis stages that can be switched off, one by one, to measure
//! what each costs (`examples/stage_costs.rs`, `cargo bench -- stages`,
//! `roce-dissect CAPTURE --skip STAGE`). Reading, decoding, the ICRC,
//! flow lookup, counters and PSN tracking are the base every frame pays
//! and are always on.

use std::fmt;

/// A stage of the analysis beyond the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Capture duplicates: each frame's fingerprint against the flow's
    /// recent ones.
    Duplicates,
    /// Throughput: payload bytes binned per flow.
    Throughput,
    /// Timing: requests queued per flow, answers matched to them
    /// (round trips, completions).
    Timing,
    /// Frames sent while their priority was paused (the PFC reaction).
    Pauses,
    /// DCQCN reaction: payload history of congested flows, CNPs judged.
    Cc,
    /// NVMe-oF: capsules, I/Os and their data.
    Nvme,
}

impl Stage {
    pub const ALL: [Stage; 6] = [
        Stage::Duplicates,
        Stage::Throughput,
        Stage::Timing,
        Stage::Pauses,
        Stage::Cc,
        Stage::Nvme,
    ];

    /// The name on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Duplicates => "duplicates",
            Stage::Throughput => "throughput",
            Stage::Timing => "timing",
            Stage::Pauses => "pauses",
            Stage::Cc => "cc",
            Stage::Nvme => "nvme",
        }
    }

    /// What the report lacks without it.
    pub fn about(self) -> &'static str {
        match self {
            Stage::Duplicates => "capture duplicates counted as packets",
            Stage::Throughput => "no rates or throughput series",
            Stage::Timing => "no round trips, completions or message sizes",
            Stage::Pauses => "no frames marked as sent while paused",
            Stage::Cc => "no DCQCN reaction in flows[].cc",
            Stage::Nvme => "no NVMe-oF queues or I/Os",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    pub fn parse(s: &str) -> Result<Stage, String> {
        Stage::ALL
            .into_iter()
            .find(|st| st.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Stage::ALL.iter().map(|s| s.name()).collect();
                format!("unknown stage '{s}' (one of: {})", names.join(", "))
            })
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Stage`]s: those that run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stages(u8);

impl Default for Stages {
    fn default() -> Self {
        Stages::all()
    }
}

impl Stages {
    pub fn all() -> Self {
        Stages(Stage::ALL.iter().fold(0, |m, s| m | s.bit()))
    }

    pub fn none() -> Self {
        Stages(0)
    }

    #[inline]
    pub fn has(self, s: Stage) -> bool {
        self.0 & s.bit() != 0
    }

    #[must_use]
    pub fn without(self, s: Stage) -> Self {
        Stages(self.0 & !s.bit())
    }

    #[must_use]
    pub fn with(self, s: Stage) -> Self {
        Stages(self.0 | s.bit())
    }

    /// Every stage but those named in a comma-separated list.
    pub fn skipping(list: &str) -> Result<Self, String> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .try_fold(Stages::all(), |set, name| {
                Ok(set.without(Stage::parse(name)?))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_and_names() {
        let all = Stages::all();
        for s in Stage::ALL {
            assert!(all.has(s));
            assert!(!all.without(s).has(s));
            assert!(Stages::none().with(s).has(s));
            assert_eq!(Stage::parse(s.name()), Ok(s));
        }
        let some = Stages::skipping("timing, cc").unwrap();
        assert!(!some.has(Stage::Timing) && !some.has(Stage::Cc) && some.has(Stage::Nvme));
        assert!(
            Stages::skipping("psn")
                .unwrap_err()
                .contains("one of: duplicates")
        );
        assert_eq!(Stages::skipping(""), Ok(Stages::all()));
    }
}
