//! pcapng files built block by block for the readers' tests: both byte
//! orders, several sections, interfaces with any resolution and offset,
//! packet blocks with or without options, and the blocks readers skip.

use proptest::prelude::*;

use super::reader::PCAPNG_SHB;
use super::reader::pcapng::{BLOCK_EPB, BLOCK_IDB};

/// A pcapng file being built, block by block, each in the byte order of
/// its section (`big`) and framed with its two lengths.
pub struct Ng {
    pub bytes: Vec<u8>,
    pub big: bool,
}

impl Ng {
    /// A number's bytes in the section's order: `(little, big)`.
    fn ordered<const N: usize>(&self, (le, be): ([u8; N], [u8; N])) -> [u8; N] {
        if self.big { be } else { le }
    }

    fn u16(&mut self, v: u16) {
        let b = self.ordered((v.to_le_bytes(), v.to_be_bytes()));
        self.bytes.extend_from_slice(&b);
    }

    fn u32(&mut self, v: u32) {
        let b = self.ordered((v.to_le_bytes(), v.to_be_bytes()));
        self.bytes.extend_from_slice(&b);
    }

    pub fn block(&mut self, kind: u32, body: impl FnOnce(&mut Ng)) {
        let start = self.bytes.len();
        self.u32(kind);
        self.u32(0);
        body(self);
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let total = (self.bytes.len() - start + 4) as u32;
        let b = self.ordered((total.to_le_bytes(), total.to_be_bytes()));
        self.bytes[start + 4..start + 8].copy_from_slice(&b);
        self.u32(total);
    }

    pub fn shb(&mut self, big: bool) {
        self.big = big;
        self.block(PCAPNG_SHB, |n| {
            n.u32(0x1A2B_3C4D);
            n.u16(1);
            n.u16(0);
            n.bytes.extend_from_slice(&u64::MAX.to_le_bytes());
        });
    }

    pub fn idb(&mut self, linktype: u16, tsresol: Option<u8>, tsoffset: Option<i64>) {
        self.block(BLOCK_IDB, |n| {
            n.u16(linktype);
            n.u16(0);
            n.u32(65535);
            if let Some(r) = tsresol {
                n.u16(9);
                n.u16(1);
                n.bytes.extend_from_slice(&[r, 0, 0, 0]);
            }
            if let Some(o) = tsoffset {
                n.u16(14);
                n.u16(8);
                let b = n.ordered((o.to_le_bytes(), o.to_be_bytes()));
                n.bytes.extend_from_slice(&b);
            }
            if tsresol.is_some() || tsoffset.is_some() {
                n.u32(0);
            }
        });
    }

    pub fn epb(&mut self, iface: u32, ts: u64, orig: u32, data: &[u8], flags: bool) {
        self.block(BLOCK_EPB, |n| {
            n.u32(iface);
            n.u32((ts >> 32) as u32);
            n.u32(ts as u32);
            n.u32(data.len() as u32);
            n.u32(orig);
            n.bytes.extend_from_slice(data);
            while !n.bytes.len().is_multiple_of(4) {
                n.bytes.push(0);
            }
            if flags {
                n.u16(2);
                n.u16(4);
                n.u32(1);
                n.u32(0);
            }
        });
    }
}

#[derive(Debug, Clone)]
pub enum Item {
    Section(bool),
    Idb(u16, Option<u8>, Option<i64>),
    Epb {
        iface: u32,
        ts: u64,
        extra: u32,
        short: bool,
        len: usize,
        flags: bool,
    },
    /// A block of `kind` with `len` bytes of body (statistics, names,
    /// custom data, an unknown type).
    Other {
        kind: u32,
        len: usize,
    },
}

pub fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        1 => any::<bool>().prop_map(Item::Section),
        2 => (
            prop::sample::select(vec![1u16, 113, 276, 12, 999]),
            prop::option::of(prop::sample::select(vec![0u8, 3, 6, 9, 10, 0x80 | 20, 0x80 | 40])),
            prop::option::of(prop::sample::select(vec![0i64, 7, -3])),
        )
            .prop_map(|(l, r, o)| Item::Idb(l, r, o)),
        12 => (0u32..4, any::<u64>(), 0u32..3, prop::bool::weighted(0.1), 0usize..80, prop::bool::weighted(0.2))
            .prop_map(|(iface, ts, extra, short, len, flags)| Item::Epb { iface, ts, extra, short, len, flags }),
        1 => (prop::sample::select(vec![4u32, 5, 0x0BAD, 0x1234]), 0usize..40)
            .prop_map(|(kind, len)| Item::Other { kind, len }),
    ]
}

/// A file of `items` after a little-endian section header; packet `k`'s
/// data is `frame(k, len)`.
pub fn build_with(items: &[Item], frame: impl Fn(usize, usize) -> Vec<u8>) -> Vec<u8> {
    let mut n = Ng {
        bytes: Vec::new(),
        big: false,
    };
    n.shb(false);
    for (k, it) in items.iter().enumerate() {
        match it {
            Item::Section(big) => n.shb(*big),
            Item::Idb(l, r, o) => n.idb(*l, *r, *o),
            Item::Epb {
                iface,
                ts,
                extra,
                short,
                len,
                flags,
            } => {
                let data = frame(k, *len);
                // `short`: an original length below the captured one.
                let orig = if *short {
                    (data.len() as u32).saturating_sub(1)
                } else {
                    data.len() as u32 + extra
                };
                n.epb(*iface, *ts, orig, &data, *flags);
            }
            Item::Other { kind, len } => n.block(*kind, |n| {
                n.bytes.extend((0..*len).map(|i| (i * 7) as u8));
            }),
        }
    }
    n.bytes
}

/// [`build_with`] counting bytes for data.
pub fn build(items: &[Item]) -> Vec<u8> {
    build_with(items, |k, len| (0..len).map(|i| (i + k) as u8).collect())
}

/// Sets the bytes at `damage`'s places to its values, then cuts the file
/// at `cut`.
pub fn damage_and_cut(
    bytes: &mut Vec<u8>,
    damage: &[(prop::sample::Index, u8)],
    cut: Option<prop::sample::Index>,
) {
    for (at, v) in damage {
        let i = at.index(bytes.len());
        bytes[i] = *v;
    }
    if let Some(c) = cut {
        bytes.truncate(c.index(bytes.len() + 1));
    }
}
