//! Which link speed turns pause quanta into time: `--link-speed` when it
//! was given, else the speed the frame's interface states (pcapng
//! `if_speed`), else 100 Gb/s.

use std::num::NonZeroU64;

use serde::Serialize;

/// Where a link speed came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeedFrom {
    /// `--link-speed`.
    Option,
    /// The pcapng interface block's `if_speed`.
    IfSpeed,
    /// Nothing said: 100 Gb/s.
    Default,
}

impl SpeedFrom {
    pub fn as_str(self) -> &'static str {
        match self {
            SpeedFrom::Option => "option",
            SpeedFrom::IfSpeed => "if_speed",
            SpeedFrom::Default => "default",
        }
    }

    /// How the text report says it.
    pub fn label(self) -> &'static str {
        match self {
            SpeedFrom::Option => "--link-speed",
            SpeedFrom::IfSpeed => "the interface's if_speed",
            SpeedFrom::Default => "the default; set --link-speed",
        }
    }
}

/// The link-speed policy of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSpeed {
    /// `--link-speed`, when given.
    pub given: Option<u64>,
}

impl LinkSpeed {
    pub const DEFAULT_BPS: u64 = 100_000_000_000;

    /// Always `bps`, whatever the capture says.
    pub fn fixed(bps: u64) -> LinkSpeed {
        LinkSpeed { given: Some(bps) }
    }

    /// The speed for a frame whose interface states `if_speed`, and where
    /// it came from.
    pub fn of(self, if_speed: Option<NonZeroU64>) -> (u64, SpeedFrom) {
        match (self.given, if_speed) {
            (Some(bps), _) => (bps, SpeedFrom::Option),
            (None, Some(s)) => (s.get(), SpeedFrom::IfSpeed),
            (None, None) => (Self::DEFAULT_BPS, SpeedFrom::Default),
        }
    }

    /// The speed when no frame says anything.
    pub fn fallback(self) -> (u64, SpeedFrom) {
        self.of(None)
    }

    pub fn bps(self, if_speed: Option<NonZeroU64>) -> u64 {
        self.of(if_speed).0
    }
}

impl Default for LinkSpeed {
    /// Nothing given: the capture's `if_speed`, else 100G.
    fn default() -> Self {
        LinkSpeed { given: None }
    }
}

/// The speeds pause frames were read at: at most [`MAX_SPEEDS`] kept, the
/// rest counted with the last.
#[derive(Debug, Clone, Default)]
pub struct SpeedsUsed {
    pub used: Vec<SpeedUse>,
}

/// Speeds listed apart in a report.
pub const MAX_SPEEDS: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SpeedUse {
    pub bps: u64,
    pub from: SpeedFrom,
    /// Pause frames read at it.
    pub frames: u64,
}

impl SpeedsUsed {
    pub fn note(&mut self, bps: u64, from: SpeedFrom) {
        if let Some(u) = self
            .used
            .iter_mut()
            .find(|u| u.bps == bps && u.from == from)
        {
            u.frames += 1;
        } else if self.used.len() < MAX_SPEEDS {
            self.used.push(SpeedUse {
                bps,
                from,
                frames: 1,
            });
        } else if let Some(last) = self.used.last_mut() {
            last.frames += 1;
        }
    }

    /// The speed most pause frames were read at (`fallback` when none
    /// was), then every speed used, most frames first.
    pub fn summary(&self, fallback: (u64, SpeedFrom)) -> ((u64, SpeedFrom), Vec<SpeedUse>) {
        let mut all = self.used.clone();
        all.sort_by(|a, b| {
            b.frames
                .cmp(&a.frames)
                .then(a.bps.cmp(&b.bps))
                .then(a.from.cmp(&b.from))
        });
        let main = all.first().map_or(fallback, |u| (u.bps, u.from));
        (main, all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_wins_then_if_speed_then_100g() {
        let s = NonZeroU64::new(25_000_000_000);
        assert_eq!(
            LinkSpeed::fixed(40_000_000_000).of(s),
            (40_000_000_000, SpeedFrom::Option)
        );
        assert_eq!(
            LinkSpeed::default().of(s),
            (25_000_000_000, SpeedFrom::IfSpeed)
        );
        assert_eq!(
            LinkSpeed::default().of(None),
            (LinkSpeed::DEFAULT_BPS, SpeedFrom::Default)
        );
    }

    #[test]
    fn the_summary_names_the_most_used_speed() {
        let mut u = SpeedsUsed::default();
        u.note(25, SpeedFrom::IfSpeed);
        u.note(100, SpeedFrom::Default);
        u.note(100, SpeedFrom::Default);
        let (main, all) = u.summary((7, SpeedFrom::Default));
        assert_eq!(main, (100, SpeedFrom::Default));
        assert_eq!(all.len(), 2);
        assert_eq!(
            SpeedsUsed::default().summary((7, SpeedFrom::Option)).0,
            (7, SpeedFrom::Option)
        );
        for i in 0..40 {
            u.note(1000 + i, SpeedFrom::IfSpeed);
        }
        assert_eq!(u.used.len(), MAX_SPEEDS);
        assert_eq!(u.used.iter().map(|x| x.frames).sum::<u64>(), 43);
    }
}
