//! PFC and 802.3x pause intervals per (source MAC, priority), with the
//! refresh, XON and expiry rules of the contract.

use rustc_hash::FxHashMap;

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
    /// PAUSE/PFC frames that refreshed or ended it (the first included).
    pub frames: u64,
    /// Flows (ids) that sent on the paused priority towards this MAC.
    pub flows: Vec<u32>,
    pub flows_total: u32,
}

#[derive(Debug, Clone)]
struct Open {
    start_ns: u64,
    expiry_ns: u64,
    start_frame: u64,
    frames: u64,
    /// The first [`MAX_FLOWS_PER_INTERVAL`] flows, named in the report.
    flows: Vec<u32>,
    /// How many others there are (each counted once).
    more: u32,
    /// Every flow noted, a bit per flow id: one test per frame sent while
    /// the pause is open, where searching `flows` and then hashing into a
    /// set of the others took ~180 instructions (11 % of the frames of the
    /// 500 k-frame bench capture are sent while some pause is open).
    noted: Vec<u64>,
}

/// Where a priority (`None`: 802.3x) is counted in `open_per_priority`.
fn slot(priority: Option<u8>) -> usize {
    priority.map_or(8, |p| usize::from(p & 7))
}

/// All pause state of a capture.
#[derive(Debug, Default)]
pub struct PauseTimeline {
    open: FxHashMap<PauseKey, Open>,
    /// Open pauses per priority (index 8: 802.3x), so that a frame sent on
    /// a priority nothing pauses costs no lookups.
    open_per_priority: [u32; 9],
    pub closed: Vec<Interval>,
    pub pfc_frames: u64,
    pub pause_frames: u64,
}

impl PauseTimeline {
    fn close(&mut self, key: PauseKey, end_ns: u64, by: EndedBy, end_frame: Option<u64>) {
        if let Some(o) = self.open.remove(&key) {
            self.open_per_priority[slot(key.priority)] -= 1;
            self.closed.push(Interval {
                key,
                start_ns: o.start_ns,
                end_ns: end_ns.max(o.start_ns),
                ended_by: by,
                start_frame: o.start_frame,
                end_frame,
                frames: o.frames,
                flows_total: (o.flows.len() as u32).saturating_add(o.more),
                flows: o.flows,
            });
        }
    }

    /// One priority's (or the 802.3x) pause time from a frame at `ts`.
    pub fn apply(&mut self, key: PauseKey, quanta: u16, ts: u64, frame: u64, link_bps: u64) {
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
                self.open.insert(
                    key,
                    Open {
                        start_ns: ts,
                        expiry_ns: ts.saturating_add(dur),
                        start_frame: frame,
                        frames: 1,
                        flows: Vec::new(),
                        more: 0,
                        noted: Vec::new(),
                    },
                );
            }
        }
    }

    /// A RoCE frame of `flow` sent at `ts` with `priority` to `dst_mac`:
    /// note it against an open pause of that MAC and priority. Returns
    /// whether one was open (the frame was sent while paused).
    #[inline]
    pub fn sent(&mut self, dst_mac: [u8; 6], priority: u8, ts: u64, flow: u32) -> bool {
        let pfc = self.open_per_priority[slot(Some(priority))] > 0;
        let pause = self.open_per_priority[slot(None)] > 0;
        (pfc || pause) && self.sent_while_open(dst_mac, priority, ts, flow, pfc, pause)
    }

    /// [`sent`](Self::sent) when a pause of that priority, or an 802.3x
    /// pause, is open somewhere.
    #[inline(never)]
    fn sent_while_open(
        &mut self,
        dst_mac: [u8; 6],
        priority: u8,
        ts: u64,
        flow: u32,
        pfc: bool,
        pause: bool,
    ) -> bool {
        let mut paused = false;
        for (key, any) in [
            (
                PauseKey {
                    mac: dst_mac,
                    priority: Some(priority),
                },
                pfc,
            ),
            (
                PauseKey {
                    mac: dst_mac,
                    priority: None,
                },
                pause,
            ),
        ] {
            if !any {
                continue;
            }
            let Some(o) = self.open.get_mut(&key) else {
                continue;
            };
            if ts > o.expiry_ns {
                let e = o.expiry_ns;
                self.close(key, e, EndedBy::Expiry, None);
                continue;
            }
            paused = true;
            let (word, bit) = ((flow / 64) as usize, 1u64 << (flow % 64));
            if o.noted.len() <= word {
                o.noted.resize(word + 1, 0);
            }
            if o.noted[word] & bit == 0 {
                o.noted[word] |= bit;
                if o.flows.len() < MAX_FLOWS_PER_INTERVAL {
                    o.flows.push(flow);
                } else {
                    o.more += 1;
                }
            }
        }
        paused
    }

    /// Ends what is still open at its expiry and sorts the intervals.
    pub fn finish(&mut self) {
        let keys: Vec<PauseKey> = self.open.keys().copied().collect();
        for k in keys {
            let e = self.open[&k].expiry_ns;
            self.close(k, e, EndedBy::Expiry, None);
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

    #[test]
    fn xoff_refresh_xon() {
        let mut t = PauseTimeline::default();
        t.apply(key(3), 65535, 1_000, 1, G100); // expiry 1000 + 335539
        t.apply(key(3), 65535, 200_000, 2, G100); // refresh
        t.apply(key(3), 0, 300_000, 3, G100); // XON
        t.finish();
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
        let mut t = PauseTimeline::default();
        t.apply(key(3), 65535, 0, 1, G100);
        // Repeats among the named flows and among the others, large ids,
        // and more flows than are named.
        let ids: Vec<u32> = [7, 7, 70_000, 65_535, 65_536, 70_000, 0, 7]
            .into_iter()
            .chain(100..120)
            .chain(100..120)
            .collect();
        for (i, &flow) in ids.iter().enumerate() {
            t.sent(MAC, 3, 10 + i as u64, flow);
        }
        t.sent(MAC, 4, 100, 999); // another priority: not counted
        t.finish();
        assert_eq!(t.closed.len(), 1);
        let i = &t.closed[0];
        assert_eq!(i.flows_total, 5 + 20);
        let mut named = vec![7, 70_000, 65_535, 65_536, 0];
        named.extend(100..111);
        assert_eq!(i.flows, named);
    }

    #[test]
    fn expiry_then_new_interval() {
        let mut t = PauseTimeline::default();
        t.apply(key(3), 100, 0, 1, G100); // 100 quanta = 512 ns
        t.apply(key(3), 100, 10_000, 2, G100); // after expiry: new interval
        t.finish();
        assert_eq!(t.closed.len(), 2);
        assert_eq!(
            (t.closed[0].end_ns, t.closed[0].ended_by),
            (512, EndedBy::Expiry)
        );
        assert_eq!((t.closed[1].start_ns, t.closed[1].end_ns), (10_000, 10_512));
    }

    #[test]
    fn refresh_can_shorten() {
        let mut t = PauseTimeline::default();
        t.apply(key(0), 65535, 0, 1, G100);
        t.apply(key(0), 1, 100, 2, G100); // expiry 105
        t.finish();
        assert_eq!(t.closed[0].end_ns, 105);
    }

    #[test]
    fn xon_while_not_paused_does_nothing() {
        let mut t = PauseTimeline::default();
        t.apply(key(5), 0, 0, 1, G100);
        t.finish();
        assert!(t.closed.is_empty());
    }
}
