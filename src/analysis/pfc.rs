//! PFC and 802.3x pause intervals per (source MAC, priority), with the
//! refresh, XON and expiry rules of the contract, and per (MAC, priority)
//! summaries kept as intervals close. Intervals are listed up to a budget
//! (a capture flapping XOFF/XON a million times still gets its summary),
//! and pause sources are tracked up to another.

use super::Map;
use super::budget::DistinctCounter;
use crate::wire::pause::quanta_to_ns;

/// Which pause: a PFC priority or 802.3x (all priorities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct PauseKey {
    pub mac: [u8; 6],
    /// `None` for 802.3x PAUSE.
    pub priority: Option<u8>,
}

/// Hashed as one word (MAC, priority and whether there is one), not byte
/// by byte: a frame sent while a pause is open looks its key up.
impl std::hash::Hash for PauseKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let [a, b, c, d, e, f] = self.mac;
        let prio = self.priority.map_or(0x100, u64::from);
        state.write_u64(u64::from_le_bytes([a, b, c, d, e, f, 0, 0]) | prio << 48);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndedBy {
    Xon,
    Expiry,
}

impl EndedBy {
    pub const fn as_str(self) -> &'static str {
        match self {
            EndedBy::Xon => "xon",
            EndedBy::Expiry => "expiry",
        }
    }
}

/// Most flows named per interval; the rest are only counted.
pub const MAX_FLOWS_PER_INTERVAL: usize = 16;

/// Did the paused sender stop in time: what it still sent towards the
/// pausing MAC on the paused priority after the pause frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Reaction {
    /// Frames, and their wire bytes plus 20 each (preamble and gap).
    pub frames: u64,
    pub bytes: u64,
    /// From the pause frame to the end of the last such frame.
    pub stop_ns: u64,
    /// What a sender may still send: its response budget (IEEE 802.3
    /// Annex 31B), the cable's round trip and one largest frame.
    pub budget_ns: u64,
    pub verdict: ReactionVerdict,
    /// More bytes than `--headroom` (null without it).
    pub exceeded: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReactionVerdict {
    /// Stopped within the budget.
    Ok,
    /// Still sending past it.
    Late,
    /// Nothing was sent towards the MAC while it was paused.
    None,
}

impl ReactionVerdict {
    pub const fn as_str(self) -> &'static str {
        match self {
            ReactionVerdict::Ok => "ok",
            ReactionVerdict::Late => "late",
            ReactionVerdict::None => "none",
        }
    }
}

/// What the reaction is held against (`--cable`, `--mtu`, `--headroom`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReactionLimits {
    pub cable_m: f64,
    /// The largest frame; `None`: the largest seen so far, else 4200.
    pub mtu: Option<u32>,
    pub headroom_bytes: Option<u64>,
}

impl Default for ReactionLimits {
    fn default() -> Self {
        ReactionLimits {
            cable_m: 100.0,
            mtu: None,
            headroom_bytes: None,
        }
    }
}

/// The MTU assumed when the capture shows none.
pub const DEFAULT_MTU: u32 = 4200;

impl ReactionLimits {
    /// The budget at `link_bps` for frames of up to `mtu` bytes.
    pub fn budget_ns(&self, link_bps: u64, mtu: u32) -> u64 {
        let bps = link_bps.max(1) as f64;
        let (quanta, _) = crate::plan::response_quanta(link_bps);
        let response = f64::from(quanta) * 512.0 / bps * 1e9;
        let cable = 2.0 * self.cable_m / crate::plan::CABLE_MPS * 1e9;
        let frame = (f64::from(mtu) + 20.0) * 8.0 / bps * 1e9;
        (response + cable + frame).ceil() as u64
    }
}

/// The reaction figures of one (MAC, priority).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReactionSummary {
    /// Pauses held against the budget.
    pub pauses: u64,
    pub max_bytes: u64,
    pub max_stop_ns: u64,
    pub late: u64,
}

/// A closed pause interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interval {
    pub key: PauseKey,
    pub start_ns: u64,
    pub end_ns: u64,
    pub ended_by: EndedBy,
    pub start_frame: u64,
    /// The XON frame that ended it; `None` when it expired.
    pub end_frame: Option<u64>,
    /// PAUSE/PFC frames that started, refreshed or ended it.
    pub frames: u64,
    /// Flows (ids) that sent on the paused priority towards this MAC.
    pub flows: Vec<u32>,
    pub flows_total: u32,
    pub reaction: Reaction,
}

/// Per (MAC, priority): every interval, listed or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeySummary {
    pub intervals: u64,
    pub paused_ns: u64,
    /// The part of `paused_ns` before the last frame of the capture.
    pub paused_in_capture_ns: u64,
    pub longest_ns: u64,
    pub storms: u64,
    /// Order of first appearance (for a stable report).
    pub first_seen: u64,
    pub reaction: ReactionSummary,
}

#[derive(Debug, Clone)]
struct Open {
    /// Told apart from every other interval: flows note the serial of the
    /// last interval they were counted in.
    serial: u32,
    start_ns: u64,
    expiry_ns: u64,
    start_frame: u64,
    frames: u64,
    /// The first [`MAX_FLOWS_PER_INTERVAL`] flows, named in the report.
    flows: Vec<u32>,
    /// How many others there are (each counted once).
    more: u32,
    /// The link speed the pause was read at.
    link_bps: u64,
    /// Frames and bytes sent towards the MAC on the priority since, and
    /// the end of the last one.
    sent_frames: u64,
    sent_bytes: u64,
    last_end_ns: u64,
}

/// Where a priority (`None`: 802.3x) is counted in `open_per_priority`.
fn slot(priority: Option<u8>) -> usize {
    priority.map_or(8, |p| usize::from(p & 7))
}

/// The budgets of the timeline.
#[derive(Debug, Clone, Copy)]
pub struct PauseLimits {
    /// (MAC, priority) pairs tracked.
    pub sources: u64,
    /// Intervals listed one by one.
    pub intervals: u64,
    /// An interval longer than this is a storm.
    pub storm_threshold_ns: u64,
}

impl Default for PauseLimits {
    fn default() -> Self {
        PauseLimits {
            sources: super::budget::DEFAULT_MAX_PAUSE_SOURCES,
            intervals: super::budget::DEFAULT_MAX_INTERVALS,
            storm_threshold_ns: 100_000_000,
        }
    }
}

/// All pause state of a capture.
#[derive(Debug, Default)]
pub struct PauseTimeline {
    limits: PauseLimits,
    pub reaction: ReactionLimits,
    /// The largest frame seen so far (for the budget's last frame).
    pub max_frame: u32,
    open: Map<PauseKey, Open>,
    /// Open pauses per priority (index 8: 802.3x), so that a frame sent on
    /// a priority nothing pauses costs no lookups.
    open_per_priority: [u32; 9],
    next_serial: u32,
    pub closed: Vec<Interval>,
    /// Every (MAC, priority) seen, with its figures.
    pub summary: Map<PauseKey, KeySummary>,
    /// Intervals not listed (the budget ran out), counted in `summary`.
    pub intervals_dropped: u64,
    /// (MAC, priority) pairs not tracked (the budget ran out).
    pub sources_dropped: DistinctCounter,
    pub storms: u64,
    pub pfc_frames: u64,
    pub pause_frames: u64,
}

impl PauseTimeline {
    pub fn new(limits: PauseLimits) -> Self {
        PauseTimeline {
            limits,
            next_serial: 1,
            ..Default::default()
        }
    }

    /// What paused senders' reactions are held against.
    pub fn with_reaction(self, reaction: ReactionLimits) -> Self {
        PauseTimeline { reaction, ..self }
    }

    fn close(&mut self, key: PauseKey, end_ns: u64, by: EndedBy, end_frame: Option<u64>) {
        let Some(o) = self.open.remove(&key) else {
            return;
        };
        self.open_per_priority[slot(key.priority)] -= 1;
        let end_ns = end_ns.max(o.start_ns);
        let duration = end_ns - o.start_ns;
        let storm = duration > self.limits.storm_threshold_ns;
        let mtu = self.reaction.mtu.unwrap_or(if self.max_frame > 0 {
            self.max_frame
        } else {
            DEFAULT_MTU
        });
        let budget_ns = self.reaction.budget_ns(o.link_bps, mtu);
        let stop_ns = o.last_end_ns.saturating_sub(o.start_ns);
        let reaction = Reaction {
            frames: o.sent_frames,
            bytes: o.sent_bytes,
            stop_ns,
            budget_ns,
            verdict: match o.sent_frames {
                0 => ReactionVerdict::None,
                _ if stop_ns > budget_ns => ReactionVerdict::Late,
                _ => ReactionVerdict::Ok,
            },
            exceeded: self.reaction.headroom_bytes.map(|h| o.sent_bytes > h),
        };
        if let Some(s) = self.summary.get_mut(&key) {
            let r = &mut s.reaction;
            r.pauses += 1;
            r.max_bytes = r.max_bytes.max(reaction.bytes);
            r.max_stop_ns = r.max_stop_ns.max(stop_ns);
            r.late += u64::from(reaction.verdict == ReactionVerdict::Late);
            s.intervals += 1;
            s.paused_ns = s.paused_ns.saturating_add(duration);
            s.paused_in_capture_ns = s.paused_in_capture_ns.saturating_add(duration);
            s.longest_ns = s.longest_ns.max(duration);
            s.storms += u64::from(storm);
        }
        self.storms += u64::from(storm);
        if self.closed.len() as u64 >= self.limits.intervals {
            self.intervals_dropped += 1;
            return;
        }
        self.closed.push(Interval {
            key,
            start_ns: o.start_ns,
            end_ns,
            ended_by: by,
            start_frame: o.start_frame,
            end_frame,
            frames: o.frames,
            flows_total: (o.flows.len() as u32).saturating_add(o.more),
            flows: o.flows,
            reaction,
        });
    }

    /// Whether `key` is tracked, or can be (the sources' budget allows).
    fn track(&mut self, key: PauseKey) -> bool {
        if self.summary.contains_key(&key) {
            return true;
        }
        if self.summary.len() as u64 >= self.limits.sources {
            self.sources_dropped.add(&key);
            return false;
        }
        let first_seen = self.summary.len() as u64;
        self.summary.insert(
            key,
            KeySummary {
                first_seen,
                ..KeySummary::default()
            },
        );
        true
    }

    /// One priority's (or the 802.3x) pause time from a frame at `ts`.
    pub fn apply(&mut self, key: PauseKey, quanta: u16, ts: u64, frame: u64, link_bps: u64) {
        if !self.track(key) {
            return;
        }
        if let Some(o) = self.open.get(&key)
            && ts > o.expiry_ns
        {
            let e = o.expiry_ns;
            self.close(key, e, EndedBy::Expiry, None);
        }
        let dur = quanta_to_ns(quanta, link_bps);
        match (quanta, self.open.get_mut(&key)) {
            (0, Some(o)) => {
                // The XON is one of the interval's frames.
                o.frames += 1;
                self.close(key, ts, EndedBy::Xon, Some(frame));
            }
            (0, None) => {}
            (_, Some(o)) => {
                o.expiry_ns = ts.saturating_add(dur);
                o.frames += 1;
            }
            (_, None) => {
                self.open_per_priority[slot(key.priority)] += 1;
                let serial = self.next_serial;
                self.next_serial = self.next_serial.wrapping_add(1).max(1);
                self.open.insert(
                    key,
                    Open {
                        serial,
                        start_ns: ts,
                        expiry_ns: ts.saturating_add(dur),
                        start_frame: frame,
                        frames: 1,
                        flows: Vec::new(),
                        more: 0,
                        link_bps,
                        sent_frames: 0,
                        sent_bytes: 0,
                        last_end_ns: ts,
                    },
                );
            }
        }
    }

    /// A RoCE frame of `flow` sent at `ts` with `priority` to `dst_mac`:
    /// note it against an open pause of that MAC and priority. `noted` are
    /// the serials of the last PFC and 802.3x intervals the flow was
    /// counted in. Returns whether a pause was open (the frame was sent
    /// while paused).
    #[inline]
    pub fn sent(
        &mut self,
        dst_mac: [u8; 6],
        priority: u8,
        ts: u64,
        len: u32,
        flow: u32,
        noted: &mut [u32; 2],
    ) -> bool {
        let pfc = self.open_per_priority[slot(Some(priority))] > 0;
        let pause = self.open_per_priority[slot(None)] > 0;
        (pfc || pause)
            && self.sent_while_open(dst_mac, priority, ts, len, flow, noted, [pfc, pause])
    }

    /// Whether a pause of `priority`, or an 802.3x pause, is open somewhere
    /// (else [`sent`](Self::sent) does nothing).
    #[inline]
    pub fn any_open(&self, priority: u8) -> bool {
        self.open_per_priority[slot(Some(priority))] > 0 || self.open_per_priority[slot(None)] > 0
    }

    /// Gives the flows noted in intervals (open or closed) the ids `new`
    /// maps them to.
    pub fn renumber_flows(&mut self, new: impl Fn(u32) -> u32) {
        let lists = (self.closed.iter_mut().map(|i| &mut i.flows))
            .chain(self.open.values_mut().map(|o| &mut o.flows));
        for list in lists {
            for id in list.iter_mut() {
                *id = new(*id);
            }
        }
    }

    /// [`sent`](Self::sent) when a pause of that priority, or an 802.3x
    /// pause, is open somewhere.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn sent_while_open(
        &mut self,
        dst_mac: [u8; 6],
        priority: u8,
        ts: u64,
        len: u32,
        flow: u32,
        noted: &mut [u32; 2],
        any: [bool; 2],
    ) -> bool {
        let mut paused = false;
        for (i, prio) in [Some(priority), None].into_iter().enumerate() {
            if !any[i] {
                continue;
            }
            let key = PauseKey {
                mac: dst_mac,
                priority: prio,
            };
            let Some(o) = self.open.get_mut(&key) else {
                continue;
            };
            if ts > o.expiry_ns {
                let e = o.expiry_ns;
                self.close(key, e, EndedBy::Expiry, None);
                continue;
            }
            paused = true;
            let wire = u64::from(len) + 20;
            o.sent_frames += 1;
            o.sent_bytes += wire;
            // A frame's time on the wire: a length a capture claims can be
            // anything, so in 128 bits and saturated.
            let on_wire =
                (u128::from(wire) * 8_000_000_000).div_ceil(u128::from(o.link_bps.max(1)));
            let end = ts.saturating_add(u64::try_from(on_wire).unwrap_or(u64::MAX));
            o.last_end_ns = o.last_end_ns.max(end);
            // A flow is noted in an interval once: the serial it keeps says
            // whether this interval has it already.
            if noted[i] != o.serial {
                noted[i] = o.serial;
                if o.flows.len() < MAX_FLOWS_PER_INTERVAL {
                    o.flows.push(flow);
                } else {
                    o.more = o.more.saturating_add(1);
                }
            }
        }
        paused
    }

    /// Ends what is still open at its expiry and sorts the intervals.
    /// `last_ts` is the capture's last timestamp: an interval that runs
    /// past it counts only up to it in `paused_in_capture_ns`.
    pub fn finish(&mut self, last_ts: u64) {
        let mut keys: Vec<PauseKey> = self.open.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            let Some(o) = self.open.get(&k) else { continue };
            let (start, e) = (o.start_ns, o.expiry_ns);
            self.close(k, e, EndedBy::Expiry, None);
            if let Some(s) = self.summary.get_mut(&k) {
                let over = e.max(start) - e.max(start).min(last_ts.max(start));
                s.paused_in_capture_ns = s.paused_in_capture_ns.saturating_sub(over);
            }
        }
        self.closed
            .sort_by_key(|i| (i.start_ns, i.key.mac, i.key.priority, i.start_frame));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: u64 = 100_000_000_000;
    const MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];

    fn key(p: u8) -> PauseKey {
        PauseKey {
            mac: MAC,
            priority: Some(p),
        }
    }

    fn timeline() -> PauseTimeline {
        PauseTimeline::new(PauseLimits::default())
    }

    #[test]
    fn xoff_refresh_xon() {
        let mut t = timeline();
        t.apply(key(3), 65535, 1_000, 1, G100); // expiry 1000 + 335539
        t.apply(key(3), 65535, 200_000, 2, G100); // refresh
        t.apply(key(3), 0, 300_000, 3, G100); // XON
        t.finish(300_000);
        assert_eq!(t.closed.len(), 1);
        let i = &t.closed[0];
        assert_eq!(
            (i.start_ns, i.end_ns, i.ended_by),
            (1_000, 300_000, EndedBy::Xon)
        );
        assert_eq!(i.frames, 3, "XOFF, refresh and XON");
        assert_eq!(i.end_frame, Some(3));
    }

    #[test]
    fn each_flow_counts_once_named_or_not() {
        let mut t = timeline();
        t.apply(key(3), 65535, 0, 1, G100);
        // Repeats among the named flows and among the others, large ids,
        // and more flows than are named; each flow keeps its own serials.
        let ids: Vec<u32> = [7, 7, 70_000, 65_535, 65_536, 70_000, 0, 7]
            .into_iter()
            .chain(100..120)
            .chain(100..120)
            .collect();
        let mut noted: Map<u32, [u32; 2]> = Map::default();
        for (i, &flow) in ids.iter().enumerate() {
            t.sent(
                MAC,
                3,
                10 + i as u64,
                1000,
                flow,
                noted.entry(flow).or_default(),
            );
        }
        let mut other = [0; 2];
        assert!(
            !t.sent(MAC, 4, 100, 1000, 999, &mut other),
            "another priority"
        );
        t.finish(100);
        assert_eq!(t.closed.len(), 1);
        let i = &t.closed[0];
        assert_eq!(i.flows_total, 5 + 20);
        let mut named = vec![7, 70_000, 65_535, 65_536, 0];
        named.extend(100..111);
        assert_eq!(i.flows, named);
    }

    #[test]
    fn expiry_then_new_interval() {
        let mut t = timeline();
        t.apply(key(3), 100, 0, 1, G100); // 100 quanta = 512 ns
        t.apply(key(3), 100, 10_000, 2, G100); // after expiry: new interval
        t.finish(10_000);
        assert_eq!(t.closed.len(), 2);
        assert_eq!(
            (t.closed[0].end_ns, t.closed[0].ended_by),
            (512, EndedBy::Expiry)
        );
        assert_eq!((t.closed[1].start_ns, t.closed[1].end_ns), (10_000, 10_512));
        // The second runs 512 ns past the last frame.
        let s = &t.summary[&key(3)];
        assert_eq!((s.paused_ns, s.paused_in_capture_ns), (1024, 512));
    }

    #[test]
    fn refresh_can_shorten() {
        let mut t = timeline();
        t.apply(key(0), 65535, 0, 1, G100);
        t.apply(key(0), 1, 100, 2, G100); // expiry 105
        t.finish(100);
        assert_eq!(t.closed[0].end_ns, 105);
    }

    #[test]
    fn xon_while_not_paused_does_nothing() {
        let mut t = timeline();
        t.apply(key(5), 0, 0, 1, G100);
        t.finish(0);
        assert!(t.closed.is_empty());
    }

    #[test]
    fn intervals_and_sources_beyond_their_budgets_are_counted() {
        let mut t = PauseTimeline::new(PauseLimits {
            sources: 2,
            intervals: 3,
            storm_threshold_ns: 1_000,
        });
        // Ten XOFF/XON pairs on one priority, the last two long.
        for k in 0..10u64 {
            t.apply(key(3), 65535, k * 100_000, 2 * k + 1, G100);
            let len = if k >= 8 { 5_000 } else { 500 };
            t.apply(key(3), 0, k * 100_000 + len, 2 * k + 2, G100);
        }
        t.apply(key(4), 65535, 1, 100, G100);
        // Two sources already: priority 5 and another MAC are not tracked.
        t.apply(key(5), 65535, 2, 101, G100);
        t.apply(
            PauseKey {
                mac: [9; 6],
                priority: None,
            },
            65535,
            3,
            102,
            G100,
        );
        t.finish(1_000_000);
        assert_eq!(t.closed.len(), 3);
        assert_eq!(t.intervals_dropped, 10 + 1 - 3);
        assert_eq!(t.sources_dropped.count(), 2);
        let s = &t.summary[&key(3)];
        assert_eq!(
            (s.intervals, s.paused_ns, s.storms),
            (10, 8 * 500 + 2 * 5_000, 2)
        );
        assert_eq!(t.storms, 2 + 1, "the priority 4 pause too");
    }

    #[test]
    fn expiries_and_sums_saturate_at_the_end_of_time() {
        // At 1 bit/s a quantum lasts 512 s: 65535 of them from a frame
        // stamped near u64::MAX expire past it (a debug build panics on
        // an overflow).
        let mut t = timeline();
        let late = u64::MAX - 10_000;
        t.apply(key(3), 65535, late, 1, 1);
        t.apply(key(3), 65535, late + 5_000, 2, 1);
        t.finish(late + 6_000);
        let i = &t.closed[0];
        assert_eq!(i.end_ns, u64::MAX);
        let s = &t.summary[&key(3)];
        assert_eq!(s.paused_ns, u64::MAX - late);
        assert_eq!(s.paused_in_capture_ns, 6_000);
    }
}
