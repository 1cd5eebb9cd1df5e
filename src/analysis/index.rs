//! Flow ids by flow key: the one lookup every RoCE packet makes.
//!
//! Open addressing over a power-of-two table of (tag, id) pairs: a key's
//! tag is the high 32 bits of its hash, and the tag's low bits pick its
//! first slot. The keys themselves stay in the flows, compared only when a
//! tag matches. A `HashMap<FlowKey, u32>` spent about a hundred instructions a
//! lookup hashing and comparing `IpAddr` enums; this spends about a third.
//!
//! The hash is keyed with a seed drawn at random for each run: keys are
//! what a capture says, and a fixed hash let a capture of IPv6 flows built
//! to collide make every lookup walk all of them (100 000 flows: 26-39 s
//! against 0.4-1.5 s). A probe that still runs long grows the table.

use std::hash::BuildHasher;
use std::sync::LazyLock;

use super::flow::FlowKey;

#[derive(Debug, Clone, Copy)]
struct Slot {
    tag: u32,
    /// `EMPTY` for a free slot.
    id: u32,
}

const EMPTY: u32 = u32::MAX;
const FREE: Slot = Slot { tag: 0, id: EMPTY };

/// The table is kept at most one eighth full while it fits the caches
/// (up to [`DENSE_FROM`] slots). Almost every search then ends at its first
/// slot, so the branches of the probe loop are predictable: on the 500
/// k-frame bench capture (1024 flows) the analysis took 41 ns a packet
/// against 48 with the table up to half full (best of 5, one core,
/// `examples/facts_speed.rs`). Eight bytes a slot, 64 a flow.
const LOAD_DIVISOR: usize = 8;

/// From this many slots (512 KiB) on, the table is kept at most half full:
/// a search then misses the caches whatever the table's load, and the
/// probes of a half-full table stay in that line almost always. With
/// 131 072 flows an eighth-full table was 16 MiB, and making it (zeroing
/// each bigger table and moving the slots) 6 % of the analysing thread.
const DENSE_FROM: usize = 1 << 16;

/// The load a table of `slots` slots may reach: one in `load_divisor`.
fn load_divisor(slots: usize) -> usize {
    if slots >= DENSE_FROM { 2 } else { LOAD_DIVISOR }
}

fn tag(hash: u64) -> u32 {
    (hash >> 32) as u32
}

/// The index: ids of flows whose keys live elsewhere (`key_of`).
#[derive(Debug)]
pub struct FlowIndex {
    slots: Vec<Slot>,
    len: usize,
}

impl Default for FlowIndex {
    fn default() -> Self {
        FlowIndex {
            slots: vec![FREE; 64],
            len: 0,
        }
    }
}

/// The run's flow-key hasher: one seed for every thread, as flows are
/// hashed where frames are dissected and looked up where they are analysed.
static FLOW_HASHER: LazyLock<foldhash::fast::FixedState> = LazyLock::new(|| {
    let seed = foldhash::fast::RandomState::default().hash_one(0x5eed_u64);
    foldhash::fast::FixedState::with_seed(seed)
});

/// A well-mixed 64-bit hash of a flow key, keyed for this run.
#[inline]
pub fn hash_key(k: &FlowKey) -> u64 {
    FLOW_HASHER.hash_one(k)
}

/// Slots an insert may walk before the table grows instead: with a keyed
/// hash and a table at most half full (an eighth while small), a walk this
/// long means bad luck or a table due to grow.
const MAX_PROBE: usize = 32;
/// A table grows for long probes only up to this many slots a flow: past
/// that the tags themselves are equal (a 2^-32 chance a pair with a keyed
/// hash) and a bigger table would not help.
const MAX_SPREAD: usize = 64;

impl FlowIndex {
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The id of `key` (whose hash is `hash`); `key_of(id)` gives the key of
    /// a flow in the index.
    #[inline]
    pub fn get<'k>(
        &self,
        key: &FlowKey,
        hash: u64,
        key_of: impl Fn(u32) -> &'k FlowKey,
    ) -> Option<u32> {
        self.probe(hash, |id| key_of(id) == key)
    }

    /// The first id along `hash`'s probe with its tag that `found` accepts.
    /// The table is never full: every probe meets a free slot.
    #[inline]
    fn probe(&self, hash: u64, found: impl Fn(u32) -> bool) -> Option<u32> {
        let mask = self.mask();
        let tag = tag(hash);
        let mut i = tag as usize & mask;
        loop {
            let s = self.slots[i];
            if s.id == EMPTY {
                return None;
            }
            if s.tag == tag && found(s.id) {
                return Some(s.id);
            }
            i = (i + 1) & mask;
        }
    }

    /// Hints the caches with the slot a search for `hash` starts at.
    #[inline]
    pub fn hint(&self, hash: u64) {
        mapwin::prefetch_value(&self.slots[tag(hash) as usize & self.mask()], 1);
    }

    /// The id in the first slot of `hash`'s probe with its tag, if any: the
    /// flow a search would most likely find, without reading its key (for
    /// a cache hint; [`get`](Self::get) says which flow it is).
    #[inline]
    pub fn guess(&self, hash: u64) -> Option<u32> {
        self.probe(hash, |_| true)
    }

    /// Adds `id` under `hash`; the caller has checked the key is not there.
    pub fn insert(&mut self, hash: u64, id: u32) {
        if (self.len + 1) * load_divisor(self.slots.len()) > self.slots.len() {
            self.grow();
        }
        let slot = Slot { tag: tag(hash), id };
        while !self.place(slot, MAX_PROBE) {
            if self.slots.len() >= MAX_SPREAD * (self.len + 1) {
                // Equal tags a bigger table cannot tell apart: walk on.
                self.place(slot, self.slots.len());
                break;
            }
            self.grow();
        }
        self.len += 1;
    }

    /// Puts `slot` in the first free place of its probe, unless that is
    /// more than `limit` slots away (then the table should grow).
    fn place(&mut self, slot: Slot, limit: usize) -> bool {
        let mask = self.mask();
        let mut i = slot.tag as usize & mask;
        for _ in 0..limit.min(self.slots.len()) {
            if self.slots[i].id == EMPTY {
                self.slots[i] = slot;
                return true;
            }
            i = (i + 1) & mask;
        }
        false
    }

    /// The longest probe an insert could need now.
    #[cfg(test)]
    pub fn longest_probe(&self) -> usize {
        let mask = self.mask();
        let mut longest = 0;
        for (at, s) in self.slots.iter().enumerate() {
            if s.id != EMPTY {
                let home = s.tag as usize & mask;
                longest = longest.max((at + self.slots.len() - home) & mask);
            }
        }
        longest
    }

    /// Doubles the table. Slots whose probe would run long in it are
    /// placed anyway: the next insert grows it further if need be.
    fn grow(&mut self) {
        let bigger = vec![FREE; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        let size = self.slots.len();
        for s in old.into_iter().filter(|s| s.id != EMPTY) {
            self.place(s, size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    fn key(i: u32) -> FlowKey {
        let (src, dst): (IpAddr, IpAddr) = match i % 3 {
            0 => (
                Ipv4Addr::from(0x0a00_0000 + i).into(),
                Ipv4Addr::new(10, 0, 1, 3).into(),
            ),
            1 => (
                Ipv6Addr::from(u128::from(i)).into(),
                Ipv6Addr::LOCALHOST.into(),
            ),
            // The same address bits as an IPv4 key, mapped: a different key.
            _ => (
                Ipv4Addr::from(0x0a00_0000 + i - 2).to_ipv6_mapped().into(),
                Ipv4Addr::new(10, 0, 1, 3).to_ipv6_mapped().into(),
            ),
        };
        FlowKey {
            src: src.into(),
            dst: dst.into(),
            dest_qp: i / 7,
        }
    }

    #[test]
    fn finds_what_was_inserted_and_nothing_else() {
        let keys: Vec<FlowKey> = (0..5000).map(key).collect();
        let mut index = FlowIndex::default();
        for (id, k) in keys.iter().enumerate().take(4000) {
            let h = hash_key(k);
            assert_eq!(index.get(k, h, |i| &keys[i as usize]), None);
            index.insert(h, id as u32);
        }
        for (id, k) in keys.iter().enumerate() {
            let want = (id < 4000).then_some(id as u32);
            assert_eq!(index.get(k, hash_key(k), |i| &keys[i as usize]), want);
        }
    }

    #[test]
    fn equal_keys_hash_alike_and_colliding_hashes_still_compare_keys() {
        assert_eq!(hash_key(&key(5)), hash_key(&key(5)));
        let keys = [key(1), key(2)];
        let mut index = FlowIndex::default();
        // Both under one hash: only the key tells them apart.
        index.insert(7, 0);
        index.insert(7, 1);
        assert_eq!(index.get(&keys[1], 7, |i| &keys[i as usize]), Some(1));
        assert_eq!(index.get(&keys[0], 7, |i| &keys[i as usize]), Some(0));
        assert_eq!(index.get(&key(3), 7, |i| &keys[i as usize]), None);
    }

    #[test]
    fn keys_built_to_collide_in_a_fixed_hash_spread_out() {
        // IPv6 sources whose halves mix to one value in the old unseeded
        // hash (lo ^ rotl(hi, 23)): each once cost a walk over all others.
        let keys: Vec<FlowKey> = (0..50_000u64)
            .map(|i| {
                let hi = 0xfd00u64 << 48 | i;
                let lo = 0x1234_5678_9abc_def0 ^ hi.rotate_left(23);
                FlowKey {
                    src: IpAddr::from(Ipv6Addr::from(u128::from(hi) << 64 | u128::from(lo))).into(),
                    dst: IpAddr::from(Ipv6Addr::LOCALHOST).into(),
                    dest_qp: 0x11,
                }
            })
            .collect();
        let mut index = FlowIndex::default();
        for (id, k) in keys.iter().enumerate() {
            index.insert(hash_key(k), id as u32);
        }
        assert!(
            index.longest_probe() < MAX_PROBE,
            "{}",
            index.longest_probe()
        );
        for (id, k) in keys.iter().enumerate() {
            assert_eq!(
                index.get(k, hash_key(k), |i| &keys[i as usize]),
                Some(id as u32)
            );
        }
    }

    #[test]
    fn the_table_is_sparse_while_small_and_at_most_half_full_when_large() {
        let mut index = FlowIndex::default();
        let keys: Vec<FlowKey> = (0..100_000).map(key).collect();
        for (id, k) in keys.iter().enumerate() {
            index.insert(hash_key(k), id as u32);
            let n = id + 1;
            // (The hash is keyed afresh in each process: now and then one
            // probe is longer than MAX_PROBE, and the table grows once
            // more than its load asks.)
            if n == 1_000 {
                // An eighth full at most: 8 192 slots.
                assert!(
                    matches!(index.slots.len(), 8_192 | 16_384),
                    "{}",
                    index.slots.len()
                );
            }
        }
        // 100 000 flows: 262 144 slots, not the 1 048 576 of an eighth.
        assert!(
            matches!(index.slots.len(), 262_144 | 524_288),
            "{}",
            index.slots.len()
        );
        assert!(
            index.longest_probe() < MAX_PROBE,
            "{}",
            index.longest_probe()
        );
        for (id, k) in keys.iter().enumerate() {
            assert_eq!(
                index.get(k, hash_key(k), |i| &keys[i as usize]),
                Some(id as u32)
            );
        }
    }

    #[test]
    fn equal_hashes_still_work_with_a_bounded_table() {
        // The worst a keyed hash could do: every key under one hash.
        let keys: Vec<FlowKey> = (0..2_000).map(key).collect();
        let mut index = FlowIndex::default();
        for id in 0..keys.len() as u32 {
            index.insert(42, id);
        }
        assert!(index.slots.len() <= MAX_SPREAD * 2 * keys.len());
        for (id, k) in keys.iter().enumerate() {
            assert_eq!(index.get(k, 42, |i| &keys[i as usize]), Some(id as u32));
        }
    }

    proptest::proptest! {
        /// Chosen keys (few distinct addresses, QPs packed together) and
        /// chosen hashes (few distinct values): every key inserted is found
        /// under its id, and no other.
        #[test]
        fn chosen_keys_and_hashes(
            ops in proptest::collection::vec((0u32..64, 0u32..8, 0u64..16, proptest::bool::ANY), 1..600),
        ) {
            let mut keys: Vec<FlowKey> = Vec::new();
            let mut hashes: Vec<u64> = Vec::new();
            let mut index = FlowIndex::default();
            for (a, qp, h, keyed) in ops {
                let k = FlowKey {
                    src: Ipv4Addr::from(0x0a00_0000 + a).into(),
                    dst: Ipv4Addr::new(10, 0, 1, 3).into(),
                    dest_qp: qp,
                };
                let hash = if keyed { hash_key(&k) } else { h << 32 | h };
                let found = index.get(&k, hash, |i| &keys[i as usize]);
                let known = keys.iter().zip(&hashes).position(|(x, y)| *x == k && *y == hash);
                proptest::prop_assert_eq!(found, known.map(|p| p as u32));
                if found.is_none() {
                    index.insert(hash, keys.len() as u32);
                    keys.push(k);
                    hashes.push(hash);
                }
            }
        }
    }
}
