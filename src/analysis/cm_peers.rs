//! The RDMA CM's pairings of flow keys: each connection's two directions.
//!
//! Kept as the connections in a list and a table of small indexes into it,
//! found by the flow key's hash: with tens of thousands of connections, a
//! map of key to key (80 bytes an entry) missed the caches on every look,
//! and each flow looks at least once (its first answer, its first SEND).

use super::flow::FlowKey;
use super::index::hash_key;

#[derive(Debug, Default)]
pub struct CmPeers {
    /// Connection `i`: its two flow keys.
    pairs: Vec<[FlowKey; 2]>,
    /// `i << 1 | side`: the key `pairs[i][side]`, whose peer is the other.
    table: hashbrown::HashTable<u32>,
}

/// The key entry `e` of the table stands for.
fn key_at(pairs: &[[FlowKey; 2]], e: u32) -> &FlowKey {
    &pairs[(e >> 1) as usize][(e & 1) as usize]
}

impl CmPeers {
    fn find(&self, key: &FlowKey) -> Option<u32> {
        self.table
            .find(hash_key(key), |&e| key_at(&self.pairs, e) == key)
            .copied()
    }

    /// The flow key the CM paired `key` with, last.
    pub fn get(&self, key: &FlowKey) -> Option<&FlowKey> {
        self.find(key).map(|e| key_at(&self.pairs, e ^ 1))
    }

    pub fn contains_key(&self, key: &FlowKey) -> bool {
        self.find(key).is_some()
    }

    /// A connection of `a` and `b`: each is paired with the other from
    /// now on (an earlier pairing of either is replaced; its old partner
    /// keeps naming it).
    pub fn insert(&mut self, a: FlowKey, b: FlowKey) {
        // Entries are 31-bit connection numbers and a side.
        if self.pairs.len() >= 1 << 31 {
            return;
        }
        let i = self.pairs.len() as u32;
        self.pairs.push([a, b]);
        for e in [i << 1, i << 1 | 1] {
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
    }

    /// Every paired key and its peer, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&FlowKey, &FlowKey)> {
        self.table
            .iter()
            .map(|&e| (key_at(&self.pairs, e), key_at(&self.pairs, e ^ 1)))
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
}
