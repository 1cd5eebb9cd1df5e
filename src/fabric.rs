//! Pauses across a fabric (`roce-dissect fabric`): captures of several
//! links on one clock and a topology naming each device's MACs give the
//! pause graph (device X's egress to Y paused by Y, per priority, with
//! its intervals); a cycle of it whose links were all paused at once for
//! longer than a threshold is a deadlock, and pauses that start soon
//! after a pause of the device they come from show how a pause spreads.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// Which device each MAC belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    by_mac: BTreeMap<[u8; 6], String>,
}

impl Topology {
    /// Parses `{"devices": {"A": ["02:00:00:00:0a:01", ...], ...}}`.
    pub fn parse(text: &str) -> Result<Topology, String> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let devices = v
            .get("devices")
            .and_then(|d| d.as_object())
            .ok_or("expected {\"devices\": {\"NAME\": [\"MAC\", ...], ...}}")?;
        let mut by_mac = BTreeMap::new();
        for (name, macs) in devices {
            let macs = macs
                .as_array()
                .ok_or_else(|| format!("device {name}: expected a list of MACs"))?;
            for m in macs {
                let s = m
                    .as_str()
                    .ok_or_else(|| format!("device {name}: a MAC is not a string"))?;
                let mac =
                    parse_mac(s).ok_or_else(|| format!("device {name}: '{s}' is not a MAC"))?;
                if let Some(other) = by_mac.insert(mac, name.clone())
                    && other != *name
                {
                    return Err(format!("{s} is named by both {other} and {name}"));
                }
            }
        }
        Ok(Topology { by_mac })
    }

    /// The device of `mac`: its name, else the MAC itself.
    pub fn device(&self, mac: &[u8; 6]) -> String {
        self.by_mac
            .get(mac)
            .cloned()
            .unwrap_or_else(|| crate::wire::MacAddr(*mac).to_string())
    }
}

pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    if parts.len() != 6 {
        return None;
    }
    let mut m = [0u8; 6];
    for (b, p) in m.iter_mut().zip(parts) {
        if p.len() != 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    Some(m)
}

/// A pause as one link's capture shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    /// The pausing port.
    pub mac: [u8; 6],
    pub priority: Option<u8>,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// What the fabric report reads of one link's capture.
#[derive(Debug, Clone, Default)]
pub struct Link {
    pub name: String,
    pub pauses: Vec<Pause>,
    /// Source MACs of the capture's frames (the devices on the link).
    pub macs: BTreeSet<[u8; 6]>,
    /// (source, destination) MACs of its frames: who sends to whom.
    pub pairs: BTreeSet<([u8; 6], [u8; 6])>,
}

/// Device `paused`'s egress to `by`, paused by `by` on `priority`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Edge {
    pub paused: String,
    pub by: String,
    pub priority: Option<u8>,
    pub pauses: u64,
    pub paused_ns: u64,
    /// The captures it was seen in.
    pub links: Vec<String>,
    #[serde(skip)]
    spans: Vec<(u64, u64)>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Deadlock {
    /// The cycle, each device paused by the next (and the last by the
    /// first), starting from the first by name.
    pub devices: Vec<String>,
    pub priority: Option<u8>,
    /// When every link of the cycle was paused at once.
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A pause that followed another: `then` started within the threshold
/// after `first`, and the device `then` pauses is the one `first` paused
/// (its buffer filled up as it could not send).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Spread {
    pub first: PauseRef,
    pub then: PauseRef,
    pub delay_ns: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PauseRef {
    pub paused: String,
    pub by: String,
    pub priority: Option<u8>,
    pub start_ns: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FabricReport {
    pub links: Vec<String>,
    pub devices: Vec<String>,
    pub threshold_ns: u64,
    pub edges: Vec<Edge>,
    pub deadlocks: Vec<Deadlock>,
    /// Spreads, in time order (the first 1000).
    pub propagation: Vec<Spread>,
    pub propagation_total: u64,
    /// Pauses whose paused device the captures do not show.
    pub unplaced_pauses: u64,
    /// The earliest pause (null without any).
    pub first_pause_ns: Option<u64>,
}

/// Spreads listed at most.
const MAX_SPREADS: usize = 1000;
/// Longest cycle looked for.
const MAX_CYCLE: usize = 16;
/// Steps and cycles of the search at most (a dense graph has too many).
const MAX_STEPS: usize = 1 << 20;
const MAX_CYCLES: usize = 10_000;

/// The pause graph of `links` and what it says.
pub fn analyse(links: &[Link], topo: &Topology, threshold_ns: u64) -> FabricReport {
    let mut edges: BTreeMap<(String, String, Option<u8>), Edge> = BTreeMap::new();
    let mut devices = BTreeSet::new();
    let mut unplaced = 0;
    // Every pause, placed on its edge.
    let mut placed: Vec<(u64, String, String, Option<u8>)> = Vec::new();
    for l in links {
        let on_link: BTreeSet<String> = l.macs.iter().map(|m| topo.device(m)).collect();
        devices.extend(on_link.iter().cloned());
        for p in &l.pauses {
            let by = topo.device(&p.mac);
            devices.insert(by.clone());
            // The devices that sent to the pausing device on this link;
            // else, when the link shows only one other, that one.
            let senders: BTreeSet<String> = l
                .pairs
                .iter()
                .filter(|(_, d)| topo.device(d) == by)
                .map(|(s, _)| topo.device(s))
                .filter(|s| *s != by)
                .collect();
            let others: Vec<&String> = if senders.is_empty() {
                let rest: Vec<&String> = on_link.iter().filter(|d| **d != by).collect();
                if rest.len() == 1 { rest } else { Vec::new() }
            } else {
                senders.iter().collect()
            };
            if others.is_empty() {
                unplaced += 1;
                continue;
            }
            for paused in others {
                let e = edges
                    .entry((paused.clone(), by.clone(), p.priority))
                    .or_insert_with(|| Edge {
                        paused: paused.clone(),
                        by: by.clone(),
                        priority: p.priority,
                        pauses: 0,
                        paused_ns: 0,
                        links: Vec::new(),
                        spans: Vec::new(),
                    });
                e.pauses += 1;
                e.paused_ns += p.end_ns.saturating_sub(p.start_ns);
                if !e.links.contains(&l.name) {
                    e.links.push(l.name.clone());
                }
                e.spans.push((p.start_ns, p.end_ns));
                placed.push((p.start_ns, paused.clone(), by.clone(), p.priority));
            }
        }
    }
    for e in edges.values_mut() {
        e.spans = merged(std::mem::take(&mut e.spans));
    }
    let deadlocks = deadlocks(&edges, threshold_ns);
    // Spreads: a pause of X by Y, then within the threshold a pause of W
    // by X (X could not drain, its buffer filled, it paused W).
    // Each pause's spreads: pauses by the device it paused, on its
    // priority, within the threshold after it, found by bisection.
    placed.sort();
    let mut by_index: BTreeMap<(&String, Option<u8>), Vec<u64>> = BTreeMap::new();
    let mut pair_index: BTreeMap<(&String, &String, Option<u8>), Vec<u64>> = BTreeMap::new();
    for (t, paused, by, prio) in &placed {
        by_index.entry((by, *prio)).or_default().push(*t);
        pair_index.entry((by, paused, *prio)).or_default().push(*t);
    }
    for v in by_index.values_mut().chain(pair_index.values_mut()) {
        v.sort_unstable();
    }
    let in_range = |v: Option<&Vec<u64>>, t0: u64| {
        v.map_or(0..0, |v| {
            v.partition_point(|&t| t < t0)
                ..v.partition_point(|&t| t <= t0.saturating_add(threshold_ns))
        })
    };
    let mut propagation = Vec::new();
    let mut total = 0u64;
    for (t0, paused, by, prio) in &placed {
        let all = in_range(by_index.get(&(paused, *prio)), *t0);
        let back = in_range(pair_index.get(&(paused, by, *prio)), *t0);
        total += (all.len() - back.len()) as u64;
        if propagation.len() >= MAX_SPREADS || all.is_empty() {
            continue;
        }
        // The spreads themselves: the pauses by `paused` in that window.
        let lo = placed.partition_point(|p| p.0 < *t0);
        for (t1, p2, b2, pr2) in &placed[lo..] {
            if t1 - t0 > threshold_ns || propagation.len() >= MAX_SPREADS {
                break;
            }
            if b2 == paused && pr2 == prio && p2 != by {
                propagation.push(Spread {
                    first: PauseRef {
                        paused: paused.clone(),
                        by: by.clone(),
                        priority: *prio,
                        start_ns: *t0,
                    },
                    then: PauseRef {
                        paused: p2.clone(),
                        by: b2.clone(),
                        priority: *pr2,
                        start_ns: *t1,
                    },
                    delay_ns: t1 - t0,
                });
            }
        }
    }
    propagation.sort_by_key(|s| (s.first.start_ns, s.then.start_ns));
    FabricReport {
        links: links.iter().map(|l| l.name.clone()).collect(),
        devices: devices.into_iter().collect(),
        threshold_ns,
        edges: edges.into_values().collect(),
        deadlocks,
        propagation,
        propagation_total: total,
        unplaced_pauses: unplaced,
        first_pause_ns: links
            .iter()
            .flat_map(|l| l.pauses.iter().map(|p| p.start_ns))
            .min(),
    }
}

/// Sorted, overlapping spans joined.
fn merged(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Where two sorted span lists overlap.
fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if lo < hi {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Every simple cycle of the graph (edges `from → to`), each once, as
/// node lists starting from their smallest node.
pub fn cycles(nodes: usize, adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    let mut on_path = vec![false; nodes];
    let mut steps = 0usize;
    fn walk(
        start: usize,
        at: usize,
        adj: &[Vec<usize>],
        path: &mut Vec<usize>,
        on_path: &mut [bool],
        out: &mut Vec<Vec<usize>>,
        steps: &mut usize,
    ) {
        *steps += 1;
        if path.len() > MAX_CYCLE || *steps > MAX_STEPS || out.len() >= MAX_CYCLES {
            return;
        }
        for &next in &adj[at] {
            if next == start {
                out.push(path.clone());
            } else if next > start && !on_path[next] {
                on_path[next] = true;
                path.push(next);
                walk(start, next, adj, path, on_path, out, steps);
                path.pop();
                on_path[next] = false;
            }
        }
    }
    for start in 0..nodes {
        path.clear();
        path.push(start);
        on_path[start] = true;
        walk(
            start,
            start,
            adj,
            &mut path,
            &mut on_path,
            &mut out,
            &mut steps,
        );
        on_path[start] = false;
    }
    out
}

fn deadlocks(
    edges: &BTreeMap<(String, String, Option<u8>), Edge>,
    threshold_ns: u64,
) -> Vec<Deadlock> {
    let mut out = Vec::new();
    let priorities: BTreeSet<Option<u8>> = edges.keys().map(|k| k.2).collect();
    for prio in priorities {
        let mine: Vec<&Edge> = edges.values().filter(|e| e.priority == prio).collect();
        let names: Vec<&String> = mine
            .iter()
            .flat_map(|e| [&e.paused, &e.by])
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let index = |n: &String| names.iter().position(|x| *x == n).unwrap_or(0);
        let mut adj = vec![Vec::new(); names.len()];
        for e in &mine {
            adj[index(&e.paused)].push(index(&e.by));
        }
        for c in cycles(names.len(), &adj) {
            let mut common: Option<Vec<(u64, u64)>> = None;
            for k in 0..c.len() {
                let (a, b) = (names[c[k]], names[c[(k + 1) % c.len()]]);
                let e = mine.iter().find(|e| &e.paused == a && &e.by == b);
                let spans = e.map_or(&[][..], |e| &e.spans[..]);
                common = Some(match common {
                    None => spans.to_vec(),
                    Some(x) => intersect(&x, spans),
                });
            }
            for (s, e) in common.unwrap_or_default() {
                if e - s > threshold_ns {
                    out.push(Deadlock {
                        devices: c.iter().map(|&i| names[i].clone()).collect(),
                        priority: prio,
                        start_ns: s,
                        end_ns: e,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(name: &str, macs: &[u8], pauses: &[(u8, u64, u64)]) -> Link {
        Link {
            name: name.into(),
            pairs: BTreeSet::new(),
            macs: macs.iter().map(|&m| [2, 0, 0, 0, 0, m]).collect(),
            pauses: pauses
                .iter()
                .map(|&(m, s, e)| Pause {
                    mac: [2, 0, 0, 0, 0, m],
                    priority: Some(3),
                    start_ns: s,
                    end_ns: e,
                })
                .collect(),
        }
    }

    fn topo() -> Topology {
        Topology::parse(
            r#"{"devices": {"A": ["02:00:00:00:00:01", "02:00:00:00:00:11"],
                            "B": ["02:00:00:00:00:02", "02:00:00:00:00:12"],
                            "C": ["02:00:00:00:00:03", "02:00:00:00:00:13"]}}"#,
        )
        .unwrap()
    }

    #[test]
    fn cycles_are_found_once_each() {
        // 0→1→2→0 and 1→3→1; 2→3 leads nowhere back.
        let adj = vec![vec![1], vec![2, 3], vec![0, 3], vec![1]];
        let mut c = cycles(4, &adj);
        c.sort();
        assert_eq!(c, vec![vec![0, 1, 2], vec![1, 2, 3], vec![1, 3]]);
        assert!(cycles(3, &[vec![1], vec![2], vec![]]).is_empty());
    }

    #[test]
    fn a_cycle_paused_at_once_is_a_deadlock_and_not_otherwise() {
        let ms = 1_000_000;
        // A paused by B on link AB (B's MAC 02), B by C, C by A.
        let links = |ca_start: u64| {
            vec![
                link("ab", &[0x01, 0x02], &[(0x02, 10 * ms, 300 * ms)]),
                link("bc", &[0x12, 0x03], &[(0x03, 20 * ms, 300 * ms)]),
                link("ca", &[0x13, 0x11], &[(0x11, ca_start, 300 * ms)]),
            ]
        };
        let r = analyse(&links(30 * ms), &topo(), 100 * ms);
        assert_eq!(r.edges.len(), 3);
        assert_eq!(
            r.deadlocks,
            vec![Deadlock {
                devices: vec!["A".into(), "B".into(), "C".into()],
                priority: Some(3),
                start_ns: 30 * ms,
                end_ns: 300 * ms,
            }]
        );
        // The cycle overlaps for less than the threshold: none.
        let r = analyse(&links(250 * ms), &topo(), 100 * ms);
        assert!(r.deadlocks.is_empty());
        // Without the third link: no cycle.
        let mut two = links(30 * ms);
        two.pop();
        assert!(analyse(&two, &topo(), 100 * ms).deadlocks.is_empty());
        // Pauses that do not overlap at all.
        let apart = vec![
            link("ab", &[0x01, 0x02], &[(0x02, 0, 150 * ms)]),
            link("bc", &[0x12, 0x03], &[(0x03, 200 * ms, 350 * ms)]),
            link("ca", &[0x13, 0x11], &[(0x11, 400 * ms, 550 * ms)]),
        ];
        assert!(analyse(&apart, &topo(), 100 * ms).deadlocks.is_empty());
    }

    #[test]
    fn a_pause_spreads_to_the_devices_that_feed_the_paused_one() {
        let us = 1_000;
        // C pauses B; 40 µs later B pauses A.
        let links = vec![
            link("bc", &[0x12, 0x03], &[(0x03, 100 * us, 500 * us)]),
            link("ab", &[0x01, 0x02], &[(0x02, 140 * us, 400 * us)]),
        ];
        let r = analyse(&links, &topo(), 100_000 * us);
        assert_eq!(r.propagation_total, 1);
        let s = &r.propagation[0];
        assert_eq!((s.first.paused.as_str(), s.first.by.as_str()), ("B", "C"));
        assert_eq!((s.then.paused.as_str(), s.then.by.as_str()), ("A", "B"));
        assert_eq!(s.delay_ns, 40 * us);
        assert!(r.deadlocks.is_empty());
    }

    #[test]
    fn topologies_are_checked() {
        assert!(Topology::parse("{}").is_err());
        assert!(Topology::parse(r#"{"devices": {"A": ["zz"]}}"#).is_err());
        assert!(
            Topology::parse(
                r#"{"devices": {"A": ["02:00:00:00:00:01"], "B": ["02:00:00:00:00:01"]}}"#
            )
            .is_err()
        );
        let t = topo();
        assert_eq!(t.device(&[2, 0, 0, 0, 0, 0x12]), "B");
        assert_eq!(t.device(&[2, 0, 0, 0, 0, 0x99]), "02:00:00:00:00:99");
    }
}
