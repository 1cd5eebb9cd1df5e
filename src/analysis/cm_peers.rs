//! The RDMA CM's pairings of flow keys: each connection's two directions.
//!
//! Kept as the connections in a list and a table of small indexes into it,
//! found by the flow key's hash: with tens of thousands of connections, a
//! map of key to key (80 bytes an entry) missed the caches on every look,
//! and each flow looks at least once (its first answer, its first SEND).
//!
//! A flow learns its entry once, when it is made (or when the CM pairs a
//! flow already seen), and each entry learns its flow: from then on a
//! flow's partner is two array reads, not a look-up of each key (with
//! 131 072 flows, those looks were a sixth of the analysing thread).

use super::flow::FlowKey;
use super::index::hash_key;
use super::marks::NO_FLOW;

/// A flow key's entry: `connection << 1 | side`.
pub type Entry = u32;

/// No entry: the CM never paired the key.
pub const NO_ENTRY: Entry = u32::MAX;

#[derive(Debug, Default)]
pub struct CmPeers {
    /// Connection `i`: its two flow keys.
    pairs: Vec<[FlowKey; 2]>,
    /// The flows of `pairs[i]`'s keys, once known ([`NO_FLOW`] before).
    flows: Vec<[u32; 2]>,
    /// Flow `id`'s latest entry ([`NO_ENTRY`] or past the end: none). As
    /// long as the highest flow the CM paired, so empty without a CM.
    entry_of: Vec<Entry>,
    /// Entry `e` stands for the key `pairs[e >> 1][e & 1]`, whose peer is
    /// the other; the table holds each key's latest.
    table: hashbrown::HashTable<Entry>,
}

/// The key entry `e` stands for.
fn key_at(pairs: &[[FlowKey; 2]], e: Entry) -> &FlowKey {
    &pairs[(e >> 1) as usize][(e & 1) as usize]
}

impl CmPeers {
    /// The latest entry of `key`, whose hash is `hash` ([`hash_key`]).
    #[inline]
    pub fn entry(&self, key: &FlowKey, hash: u64) -> Option<Entry> {
        if self.table.is_empty() {
            return None;
        }
        self.table
            .find(hash, |&e| key_at(&self.pairs, e) == key)
            .copied()
    }

    /// The flow key the CM paired `key` with, last.
    #[cfg(test)]
    pub fn get(&self, key: &FlowKey) -> Option<&FlowKey> {
        self.entry(key, hash_key(key)).map(|e| self.key(e ^ 1))
    }

    #[cfg(test)]
    pub fn contains_key(&self, key: &FlowKey) -> bool {
        self.entry(key, hash_key(key)).is_some()
    }

    /// The key of entry `e`.
    pub fn key(&self, e: Entry) -> &FlowKey {
        key_at(&self.pairs, e)
    }

    /// The flow of entry `e`'s key, if it was noted.
    pub fn flow(&self, e: Entry) -> Option<u32> {
        let id = self.flows[(e >> 1) as usize][(e & 1) as usize];
        (id != NO_FLOW).then_some(id)
    }

    /// Flow `id` has entry `e`'s key, which is that key's latest.
    pub fn set_flow(&mut self, e: Entry, id: u32) {
        self.flows[(e >> 1) as usize][(e & 1) as usize] = id;
        let i = id as usize;
        if self.entry_of.len() <= i {
            self.entry_of.resize(i + 1, NO_ENTRY);
        }
        self.entry_of[i] = e;
    }

    /// Flow `id`'s latest entry, if the CM paired its key.
    #[inline]
    pub fn of_flow(&self, id: u32) -> Option<Entry> {
        self.entry_of
            .get(id as usize)
            .copied()
            .filter(|&e| e != NO_ENTRY)
    }

    /// A connection of `a` and `b`: each is paired with the other from
    /// now on (an earlier pairing of either is replaced; its old partner
    /// keeps naming it). Its two entries, `a`'s first; none when the list
    /// is full.
    pub fn insert(&mut self, a: FlowKey, b: FlowKey) -> Option<[Entry; 2]> {
        // Entries are 31-bit connection numbers and a side.
        if self.pairs.len() >= 1 << 31 {
            return None;
        }
        let i = self.pairs.len() as u32;
        self.pairs.push([a, b]);
        self.flows.push([NO_FLOW; 2]);
        let entries = [i << 1, i << 1 | 1];
        for e in entries {
            let pairs = &self.pairs;
            let key = key_at(pairs, e);
            match self.table.entry(
                hash_key(key),
                |&x| key_at(pairs, x) == key,
                |&x| hash_key(key_at(pairs, x)),
            ) {
                hashbrown::hash_table::Entry::Occupied(mut o) => *o.get_mut() = e,
                hashbrown::hash_table::Entry::Vacant(v) => {
                    v.insert(e);
                }
            }
        }
        Some(entries)
    }

    /// Takes the connections of `other` (an analysis of other host pairs:
    /// none of its keys is here), its flows given the ids `map` holds
    /// (`map[old id]`). Which connection came first is not kept: the
    /// analysis compares entries only of one key, which are all in one of
    /// them, in their order.
    pub fn absorb(&mut self, other: CmPeers, map: &[u32]) {
        let off = (self.pairs.len() as u32) << 1;
        let flow = |id: u32| {
            if id == NO_FLOW {
                NO_FLOW
            } else {
                map.get(id as usize).copied().unwrap_or(NO_FLOW)
            }
        };
        self.flows
            .extend(other.flows.iter().map(|f| [flow(f[0]), flow(f[1])]));
        self.pairs.extend(other.pairs);
        for (id, &e) in other.entry_of.iter().enumerate() {
            let new = flow(id as u32);
            if e != NO_ENTRY && new != NO_FLOW {
                let i = new as usize;
                if self.entry_of.len() <= i {
                    self.entry_of.resize(i + 1, NO_ENTRY);
                }
                self.entry_of[i] = e + off;
            }
        }
        for e in other.table.iter().map(|&e| e + off) {
            let pairs = &self.pairs;
            self.table
                .insert_unique(hash_key(key_at(pairs, e)), e, |&x| {
                    hash_key(key_at(pairs, x))
                });
        }
    }

    /// Every key's latest entry, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        self.table.iter().copied()
    }

    /// Every paired key and its peer, in no particular order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = (&FlowKey, &FlowKey)> {
        self.entries().map(|e| (self.key(e), self.key(e ^ 1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dissect::Addr;

    fn key(src: u8, dst: u8, qp: u32) -> FlowKey {
        FlowKey {
            src: Addr::Ip([10, 0, 0, src].into()),
            dst: Addr::Ip([10, 0, 0, dst].into()),
            dest_qp: qp,
        }
    }

    #[test]
    fn a_pairing_names_each_side_and_a_new_one_replaces_it() {
        let mut m = CmPeers::default();
        let (x, y, z) = (key(1, 2, 10), key(2, 1, 20), key(2, 1, 30));
        m.insert(x, y);
        assert_eq!(m.get(&x), Some(&y));
        assert_eq!(m.get(&y), Some(&x));
        assert!(!m.contains_key(&z));
        // x reconnects to z: x names z, z names x, y still names x (as a
        // map of key to key did).
        m.insert(x, z);
        assert_eq!(m.get(&x), Some(&z));
        assert_eq!(m.get(&z), Some(&x));
        assert_eq!(m.get(&y), Some(&x));
        let mut all: Vec<_> = m.iter().map(|(a, b)| (*a, *b)).collect();
        all.sort();
        let mut want = vec![(x, z), (y, x), (z, x)];
        want.sort();
        assert_eq!(all, want);
    }

    #[test]
    fn thousands_of_pairings_are_each_found() {
        let mut m = CmPeers::default();
        for q in 0..20_000u32 {
            m.insert(key(1, 2, q), key(2, 1, q + 1_000_000));
        }
        for q in 0..20_000u32 {
            assert_eq!(m.get(&key(1, 2, q)), Some(&key(2, 1, q + 1_000_000)));
            assert_eq!(m.get(&key(2, 1, q + 1_000_000)), Some(&key(1, 2, q)));
        }
        assert_eq!(m.iter().count(), 40_000);
    }

    #[test]
    fn entries_learn_their_flows_and_flows_their_latest_entry() {
        let mut m = CmPeers::default();
        let (x, y, z) = (key(1, 2, 10), key(2, 1, 20), key(2, 1, 30));
        assert_eq!(m.entry(&x, hash_key(&x)), None);
        let [ex, ey] = m.insert(x, y).unwrap();
        assert_eq!(m.entry(&x, hash_key(&x)), Some(ex));
        assert_eq!((m.key(ex), m.key(ey)), (&x, &y));
        // No flow is known until noted; a flow the CM never paired has no
        // entry, whatever its id.
        assert_eq!((m.flow(ex), m.flow(ey)), (None, None));
        assert_eq!(
            (m.of_flow(0), m.of_flow(7), m.of_flow(u32::MAX - 1)),
            (None, None, None)
        );
        m.set_flow(ex, 7);
        m.set_flow(ey, 3);
        assert_eq!((m.flow(ex), m.flow(ey)), (Some(7), Some(3)));
        assert_eq!(
            (m.of_flow(7), m.of_flow(3), m.of_flow(5)),
            (Some(ex), Some(ey), None)
        );
        // x reconnects to z (a flow not seen yet): x's flow moves to the
        // new entry; y's entry still names x's old one, which knows x's flow.
        let [ex2, ez] = m.insert(x, z).unwrap();
        m.set_flow(ex2, 7);
        assert_eq!(m.of_flow(7), Some(ex2));
        assert_eq!(m.flow(ex2 ^ 1), None);
        assert_eq!(m.key(ez), &z);
        assert_eq!(m.flow(m.of_flow(3).unwrap() ^ 1), Some(7));
        let mut latest: Vec<_> = m.entries().collect();
        latest.sort();
        assert_eq!(latest, vec![ey, ex2, ez]);
    }
}
