//! Flow ids by flow key: the one lookup every RoCE packet makes.
//!
//! Open addressing over a power-of-two table of (tag, id) pairs: a key's
//! tag is the high 32 bits of its hash, and the tag's low bits pick its
//! first slot. The keys themselves stay in the flows, compared only when a
//! tag matches. A `HashMap<FlowKey, u32>` spent about a hundred instructions a
//! lookup hashing and comparing `IpAddr` enums; this spends about a third.

use std::net::IpAddr;

use super::flow::FlowKey;

#[derive(Debug, Clone, Copy)]
struct Slot {
    tag: u32,
    /// `EMPTY` for a free slot.
    id: u32,
}

const EMPTY: u32 = u32::MAX;
const FREE: Slot = Slot { tag: 0, id: EMPTY };

/// The table is kept at most one eighth full. Almost every search then
/// ends at its first slot, so the branches of the probe loop are
/// predictable: on the 500 k-frame bench capture (1024 flows) the analysis
/// took 41 ns a packet against 48 with the table up to half full (best of
/// 5, one core, `examples/facts_speed.rs`). Eight bytes a slot, 64 a flow.
const LOAD_DIVISOR: usize = 8;

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

/// A well-mixed 64-bit hash of a flow key.
pub fn hash_key(k: &FlowKey) -> u64 {
    fn addr(a: IpAddr) -> (u64, u64) {
        match a {
            IpAddr::V4(v4) => (u64::from(v4.to_bits()), 4),
            IpAddr::V6(v6) => {
                let b = v6.to_bits();
                (b as u64, (b >> 64) as u64)
            }
        }
    }
    const K: [u64; 3] = [
        0x9e37_79b9_7f4a_7c15,
        0xc2b2_ae3d_27d4_eb4f,
        0x1656_67b1_9e37_79f9,
    ];
    let (s0, s1) = addr(k.src);
    let (d0, d1) = addr(k.dst);
    let a = (s0 ^ s1.rotate_left(23)).wrapping_mul(K[0]);
    let b = (d0 ^ d1.rotate_left(41)).wrapping_mul(K[1]);
    let c = u64::from(k.dest_qp).wrapping_add(1).wrapping_mul(K[2]);
    let h = a ^ b.rotate_left(17) ^ c;
    h ^ (h >> 31)
}

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
        let mask = self.mask();
        let tag = tag(hash);
        let mut i = tag as usize & mask;
        loop {
            let s = self.slots[i];
            if s.id == EMPTY {
                return None;
            }
            if s.tag == tag && key_of(s.id) == key {
                return Some(s.id);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `id` under `hash`; the caller has checked the key is not there.
    pub fn insert(&mut self, hash: u64, id: u32) {
        if (self.len + 1) * LOAD_DIVISOR > self.slots.len() {
            self.grow();
        }
        self.place(Slot { tag: tag(hash), id });
        self.len += 1;
    }

    fn place(&mut self, slot: Slot) {
        let mask = self.mask();
        let mut i = slot.tag as usize & mask;
        while self.slots[i].id != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let bigger = vec![FREE; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        for s in old.into_iter().filter(|s| s.id != EMPTY) {
            self.place(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

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
            src,
            dst,
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
}
