//! A classic pcap file cut into chunks that threads can read independently.
//!
//! pcap records only chain: where record *n* starts is known once record
//! *n - 1* has been read. To read a chunk in the middle of a file without
//! reading everything before it, its first record is found by
//! [`PcapLayout::resync`]: the first offset from which a run of records looks
//! like a capture (sane lengths and timestamps). That guess is a guess: the
//! caller checks it against where the previous chunk's last record really
//! ended, and rereads the chunk from there when the two differ, so a payload
//! that happens to look like records can cost time but never change a result.

use std::ops::Range;

use super::reader::{FrameMeta, Item};
use super::{CaptureError, LinkType, MAX_RECORD_LEN, link_type_name};

/// Bytes of a pcap file header.
pub const PCAP_HEADER_LEN: usize = 24;
/// Bytes of a pcap record header.
pub const RECORD_HEADER_LEN: usize = 16;
/// Records that must chain up before a resync guess is taken.
const RESYNC_CHAIN: usize = 8;
/// Largest gap between the timestamps of chained records in a guess.
const RESYNC_MAX_TS_GAP_S: u32 = 24 * 3600;

/// What a classic pcap file header says: enough to read any record alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcapLayout {
    pub link: LinkType,
    pub nanos: bool,
    pub big_endian: bool,
    pub snaplen: u32,
}

impl PcapLayout {
    /// Nanoseconds per timestamp unit: 1 or 1000, and 1 for ERF records,
    /// whose own timestamps are finer than the file's.
    pub fn ts_resolution_ns(&self) -> u64 {
        if self.nanos || self.link == LinkType::Erf {
            1
        } else {
            1000
        }
    }
}

/// One record read at a known offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    Frame {
        ts_ns: u64,
        /// Original length (at least the captured length).
        len: u32,
        /// Where the captured bytes are in the buffer.
        data: Range<usize>,
        /// Offset of the next record in the buffer.
        next: usize,
    },
    /// The buffer ends inside the record: `needed` bytes from its start.
    Incomplete { needed: usize },
    /// The captured length is beyond [`MAX_RECORD_LEN`].
    Absurd { len: u32 },
}

impl PcapLayout {
    /// The layout of a classic pcap file from its first bytes; `Ok(None)`
    /// for anything else (pcapng is read by the sequential readers).
    pub fn parse(head: &[u8]) -> Result<Option<PcapLayout>, CaptureError> {
        let Some(h) = head.first_chunk::<PCAP_HEADER_LEN>() else {
            return Ok(None);
        };
        let magic = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let (nanos, big_endian) = match magic {
            0xA1B2_C3D4 => (false, false),
            0xA1B2_3C4D => (true, false),
            0xD4C3_B2A1 => (false, true),
            0x4D3C_B2A1 => (true, true),
            _ => return Ok(None),
        };
        let word = |i: usize| {
            let b = [h[i], h[i + 1], h[i + 2], h[i + 3]];
            if big_endian {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        // All 32 bits, as the sequential reader (pcap-file) takes them.
        let number = word(20);
        let link = LinkType::from_number(number).ok_or(CaptureError::UnsupportedLinkType {
            number,
            name: link_type_name(number),
        })?;
        Ok(Some(PcapLayout {
            link,
            nanos,
            big_endian,
            snaplen: word(16),
        }))
    }

    fn word(&self, b: [u8; 4]) -> u32 {
        if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    /// The four header words of the record at `at`, if all 16 bytes are there.
    fn header(&self, buf: &[u8], at: usize) -> Option<[u32; 4]> {
        let h = buf.get(at..)?.first_chunk::<RECORD_HEADER_LEN>()?;
        Some([
            self.word([h[0], h[1], h[2], h[3]]),
            self.word([h[4], h[5], h[6], h[7]]),
            self.word([h[8], h[9], h[10], h[11]]),
            self.word([h[12], h[13], h[14], h[15]]),
        ])
    }

    /// Reads the record that starts at `at` (as the sequential reader does:
    /// no check beyond the length limit).
    pub fn record(&self, buf: &[u8], at: usize) -> Record {
        let Some([sec, frac, incl, orig]) = self.header(buf, at) else {
            return Record::Incomplete {
                needed: RECORD_HEADER_LEN,
            };
        };
        if incl > MAX_RECORD_LEN {
            return Record::Absurd { len: incl };
        }
        let start = at.saturating_add(RECORD_HEADER_LEN);
        let end = start.saturating_add(incl as usize);
        if end > buf.len() {
            return Record::Incomplete {
                needed: RECORD_HEADER_LEN.saturating_add(incl as usize),
            };
        }
        let frac = u64::from(frac);
        let mut ts_ns =
            u64::from(sec)
                .saturating_mul(1_000_000_000)
                .saturating_add(if self.nanos {
                    frac
                } else {
                    frac.saturating_mul(1000)
                });
        if self.link == LinkType::Erf
            && let Some(t) = buf.get(start..end).and_then(crate::wire::erf::timestamp_ns)
        {
            ts_ns = t;
        }
        Record::Frame {
            ts_ns,
            len: orig.max(incl),
            data: start..end,
            next: end,
        }
    }

    /// The record at `buf[at..]` (file offset `offset`) as a reader's
    /// [`Item`]; a length beyond [`MAX_RECORD_LEN`] is an error naming frame
    /// `frame` (checked before the data is, so a corrupt 4 GiB length is an
    /// error and not taken for a cut).
    #[inline]
    pub fn item(&self, buf: &[u8], at: usize, offset: u64, frame: u64) -> Item {
        match self.record(buf, at) {
            Record::Frame {
                ts_ns,
                len,
                data,
                next,
            } => Item::Frame {
                meta: FrameMeta {
                    ts_ns,
                    len,
                    link: self.link,
                    if_speed: None,
                    interface: 0,
                },
                data,
                next,
            },
            Record::Incomplete { needed } => Item::Incomplete { needed },
            Record::Absurd { len } => Item::Failed(CaptureError::AbsurdLength {
                frame,
                offset: offset as usize,
                len: u64::from(len),
            }),
        }
    }

    /// Whether a record header looks like one a capture tool wrote.
    fn plausible(&self, [_, frac, incl, orig]: [u32; 4]) -> bool {
        let frac_limit = if self.nanos { 1_000_000_000 } else { 1_000_000 };
        let cap_limit = if self.snaplen == 0 {
            MAX_RECORD_LEN
        } else {
            self.snaplen.min(MAX_RECORD_LEN)
        };
        frac < frac_limit && incl > 0 && incl <= cap_limit && incl <= orig
    }

    /// The first offset in `buf[from..limit]` where `RESYNC_CHAIN` records
    /// chain up plausibly (or chain up to exactly `buf.len()` when `at_eof`).
    /// A guess: see the module documentation.
    pub fn resync(&self, buf: &[u8], from: usize, limit: usize, at_eof: bool) -> Option<usize> {
        let limit = limit.min(buf.len());
        (from..limit).find(|&start| self.chains(buf, start, at_eof))
    }

    fn chains(&self, buf: &[u8], start: usize, at_eof: bool) -> bool {
        let mut at = start;
        let mut first_sec = None;
        for _ in 0..RESYNC_CHAIN {
            if at == buf.len() {
                return at_eof;
            }
            let Some(h) = self.header(buf, at) else {
                return false;
            };
            if !self.plausible(h) {
                return false;
            }
            let sec = h[0];
            let first = *first_sec.get_or_insert(sec);
            if sec.abs_diff(first) > RESYNC_MAX_TS_GAP_S {
                return false;
            }
            at = at
                .saturating_add(RECORD_HEADER_LEN)
                .saturating_add(h[2] as usize);
            if at > buf.len() {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(records: &[(u32, u32, &[u8])], nanos: bool, big: bool) -> Vec<u8> {
        let w = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let magic: u32 = if nanos { 0xA1B2_3C4D } else { 0xA1B2_C3D4 };
        let mut f = Vec::new();
        f.extend(w(magic));
        f.extend(if big {
            2u16.to_be_bytes()
        } else {
            2u16.to_le_bytes()
        });
        f.extend(if big {
            4u16.to_be_bytes()
        } else {
            4u16.to_le_bytes()
        });
        f.extend(w(0));
        f.extend(w(0));
        f.extend(w(65535));
        f.extend(w(1));
        for (sec, frac, data) in records {
            f.extend(w(*sec));
            f.extend(w(*frac));
            f.extend(w(data.len() as u32));
            f.extend(w(data.len() as u32 + 4));
            f.extend(*data);
        }
        f
    }

    #[test]
    fn layout_of_each_byte_order_and_resolution() {
        for nanos in [false, true] {
            for big in [false, true] {
                let f = file(&[], nanos, big);
                let l = PcapLayout::parse(&f).unwrap().unwrap();
                assert_eq!((l.nanos, l.big_endian), (nanos, big));
                assert_eq!(l.link, LinkType::Ethernet);
                assert_eq!(l.snaplen, 65535);
            }
        }
        assert_eq!(PcapLayout::parse(&[0x0a, 0x0d, 0x0d, 0x0a]).unwrap(), None);
        let mut f = file(&[], false, false);
        f[20] = 147;
        assert!(matches!(
            PcapLayout::parse(&f),
            Err(CaptureError::UnsupportedLinkType { number: 147, .. })
        ));
    }

    #[test]
    fn records_read_like_the_sequential_reader() {
        let f = file(&[(10, 5, &[1, 2, 3]), (11, 6, &[4; 100])], false, true);
        let l = PcapLayout::parse(&f).unwrap().unwrap();
        let Record::Frame {
            ts_ns,
            len,
            data,
            next,
        } = l.record(&f, PCAP_HEADER_LEN)
        else {
            panic!()
        };
        assert_eq!(
            (ts_ns, len, &f[data]),
            (10_000_005_000, 7, &[1u8, 2, 3][..])
        );
        assert!(matches!(l.record(&f, next), Record::Frame { len: 104, .. }));
        assert_eq!(
            l.record(&f[..f.len() - 1], next),
            Record::Incomplete { needed: 116 }
        );
        let mut bad = f.clone();
        bad[PCAP_HEADER_LEN + 8..PCAP_HEADER_LEN + 12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            l.record(&bad, PCAP_HEADER_LEN),
            Record::Absurd { len: u32::MAX }
        );
    }

    #[test]
    fn resync_finds_the_record_after_an_arbitrary_offset() {
        let recs: Vec<(u32, u32, Vec<u8>)> = (0..40u32)
            .map(|i| (1000 + i, i * 7, vec![i as u8; 60 + (i as usize * 13) % 90]))
            .collect();
        let refs: Vec<(u32, u32, &[u8])> = recs
            .iter()
            .map(|(s, f, d)| (*s, *f, d.as_slice()))
            .collect();
        let f = file(&refs, false, false);
        let l = PcapLayout::parse(&f).unwrap().unwrap();
        let mut starts = vec![PCAP_HEADER_LEN];
        while let Record::Frame { next, .. } = l.record(&f, *starts.last().unwrap()) {
            starts.push(next);
        }
        starts.pop();
        for from in PCAP_HEADER_LEN..f.len() {
            let want = starts.iter().copied().find(|&s| s >= from);
            let got = l.resync(&f, from, f.len(), true);
            assert_eq!(got, want, "from {from}");
        }
    }
}
