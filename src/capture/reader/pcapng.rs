//! pcapng's blocks: a section's header and interface blocks (the state
//! its packets are read in), packet blocks read directly or through the
//! parser, and the cursor the chunked reader steps through a file with.

pub(in crate::capture) const PCAPNG_SHB: u32 = 0x0A0D_0D0A;
pub(in crate::capture) const BLOCK_IDB: u32 = 1;
use std::num::NonZeroU64;

use pcap_file::Endianness;
use pcap_file::pcapng::PcapNgParseError;
use pcap_file::pcapng::blocks::block_common::Block;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;

use super::{FrameMeta, Item, Kind, Records, Section};
use crate::capture::{CaptureError, LinkType, MAX_RECORD_LEN, link_type_name};

const BLOCK_PB: u32 = 2;
const BLOCK_SPB: u32 = 3;
const BLOCK_NRB: u32 = 4;
const BLOCK_ISB: u32 = 5;
pub(in crate::capture) const BLOCK_EPB: u32 = 6;
const BLOCK_JOURNAL: u32 = 9;
const BLOCK_DSB: u32 = 0x0A;
const BLOCK_CUSTOM: u32 = 0x0BAD;
const BLOCK_CUSTOM_NOCOPY: u32 = 0x4000_0BAD;

#[derive(Debug, Clone, Copy)]
pub(super) struct Interface {
    pub(super) link: Result<LinkType, u32>,
    /// `if_speed`, bits per second.
    pub(super) speed: Option<NonZeroU64>,
    /// Nanoseconds per timestamp unit when the timestamps are a whole
    /// number of nanoseconds (a decimal resolution, no offset): the
    /// interface's packets can then be read directly ([`epb_direct`]).
    pub(super) ns_per_unit: Option<u64>,
}

fn borrowed<'a>(c: std::borrow::Cow<'a, [u8]>) -> &'a [u8] {
    match c {
        std::borrow::Cow::Borrowed(d) => d,
        std::borrow::Cow::Owned(_) => &[],
    }
}

impl Records {
    /// The next step of a pcapng file from `input`, which starts at file
    /// offset `at`: a plain packet block read directly, anything else
    /// through the parser.
    pub(super) fn step_pcapng(&mut self, input: &[u8], at: u64) -> Item {
        if self.direct_epb
            && let Kind::PcapNg { parser, interfaces } = &self.kind
            && let Some(step) = epb_direct(input, parser.state().endianness(), interfaces)
        {
            return step;
        }
        let claimed = self.block_len(input);
        let Kind::PcapNg { parser, .. } = &mut self.kind else {
            return Item::Skip { next: input.len() };
        };
        // An interface block with large options is read without them: the
        // parser keeps every block's options, and each thread that reads
        // the file keeps a parser (200 blocks of 1 MiB options on 8 threads
        // held 1.8 GiB).
        let trimmed = trimmed_idb(input, parser.state().endianness());
        let parse_from = trimmed.as_deref().unwrap_or(input);
        let (after, raw) = match parser.next_raw_block(parse_from) {
            Ok(ok) => ok,
            Err(e) => return self.unparsed(e, claimed, input, at),
        };
        let consumed = match &trimmed {
            Some(_) => claimed.map_or(0, |c| c as usize),
            None => input.len() - after.len(),
        };
        match raw.type_ {
            PCAPNG_SHB => self.section_header(at),
            BLOCK_IDB => self.interface_block(trimmed, at),
            BLOCK_EPB | BLOCK_SPB | BLOCK_PB => return self.packet_block(raw, input, at, consumed),
            BLOCK_NRB | BLOCK_ISB | BLOCK_JOURNAL | BLOCK_DSB | BLOCK_CUSTOM
            | BLOCK_CUSTOM_NOCOPY => {}
            other => self.warn(format!(
                "skipped unknown pcapng block type {other:#x} at byte {at}"
            )),
        }
        Item::Skip { next: consumed }
    }

    /// What a block the parser refused (`claimed` long, by its header)
    /// leaves: more input to wait for, a block to step over, or an error.
    fn unparsed(
        &mut self,
        e: PcapNgParseError,
        claimed: Option<u32>,
        input: &[u8],
        at: u64,
    ) -> Item {
        if let PcapNgParseError::IncompleteBuffer(needed, _) = e {
            let claimed = claimed.unwrap_or(0);
            if claimed > MAX_RECORD_LEN {
                return Item::Failed(CaptureError::AbsurdLength {
                    frame: self.number.saturating_add(1),
                    offset: at as usize,
                    len: u64::from(claimed),
                });
            }
            return Item::Incomplete {
                needed: needed.max(claimed as usize).max(12),
            };
        }
        // A block whose framing is sane can be stepped over; one whose
        // length is garbage leaves nothing to resync on.
        let len = claimed.unwrap_or(0) as usize;
        if len >= 12 && len.is_multiple_of(4) && len <= input.len() {
            self.warn(format!("skipped corrupt pcapng block at byte {at}: {e}"));
            return Item::Skip { next: len };
        }
        if len > input.len() && len <= MAX_RECORD_LEN as usize {
            return Item::Incomplete { needed: len };
        }
        Item::Failed(CaptureError::Corrupt {
            what: "pcapng block",
            offset: at as usize,
            reason: e.to_string(),
        })
    }

    /// A section header block at `at`: a new section, no interfaces yet.
    fn section_header(&mut self, at: u64) {
        if let Kind::PcapNg { interfaces, .. } = &mut self.kind {
            interfaces.clear();
        }
        self.sections.push(Section {
            first_frame: self.number.saturating_add(1),
            shb_offset: at,
            idb_offsets: Vec::new(),
            idb_trimmed: Vec::new(),
        });
    }

    /// The interface block at `at` the parser has just read (`trimmed`:
    /// as read, when its options were trimmed): where it is, and what its
    /// packets' link type, speed and timestamps are.
    fn interface_block(&mut self, trimmed: Option<Vec<u8>>, at: u64) {
        if let Some(s) = self.sections.last_mut() {
            s.idb_offsets.push(at);
            s.idb_trimmed.push(trimmed.map(std::sync::Arc::from));
        }
        let Kind::PcapNg { parser, interfaces } = &mut self.kind else {
            return;
        };
        let Some(idb) = parser.interfaces().last() else {
            return;
        };
        let number = u32::from(idb.linktype);
        let res = idb.ts_resolution();
        let ts_resolution_ns = resolution_ns(number, res.is_bin(), res.resolution());
        let speed = idb.options.iter().find_map(|opt| match opt {
            InterfaceDescriptionOption::IfSpeed(s) => NonZeroU64::new(*s),
            _ => None,
        });
        interfaces.push(Interface {
            link: LinkType::from_number(number).ok_or(number),
            speed,
            ns_per_unit: (!res.is_bin() && idb.ts_offset() == 0).then_some(ts_resolution_ns),
        });
        if speed.is_some() {
            self.if_speed_bps = speed.map(NonZeroU64::get);
        }
        self.ts_resolution_ns = if self.ts_resolution_ns == 0 {
            ts_resolution_ns
        } else {
            self.ts_resolution_ns.min(ts_resolution_ns)
        };
    }

    /// The frame of a packet block (enhanced, simple or obsolete) at the
    /// start of `input`, `consumed` bytes long, or why it is skipped.
    fn packet_block(
        &mut self,
        raw: pcap_file::pcapng::blocks::RawBlock<'_>,
        input: &[u8],
        at: u64,
        consumed: usize,
    ) -> Item {
        let Kind::PcapNg { parser, interfaces } = &self.kind else {
            return Item::Skip { next: consumed };
        };
        let block = match raw.try_into_block(parser.state()) {
            Ok(b) => b,
            Err(e) => {
                self.warn(format!("skipped corrupt packet block at byte {at}: {e}"));
                return Item::Skip { next: consumed };
            }
        };
        let (iface, ts, orig, data) = match block {
            Block::EnhancedPacket(b) => (b.interface_id, b.timestamp, b.original_len, b.data),
            Block::SimplePacket(b) => (0, Default::default(), b.original_len, b.data),
            Block::Packet(b) => (
                u32::from(b.interface_id),
                b.timestamp,
                b.original_len,
                b.data,
            ),
            _ => return Item::Skip { next: consumed },
        };
        let data = borrowed(data);
        let Some(info) = interfaces.get(iface as usize).copied() else {
            self.warn(format!(
                "skipped packet block at byte {at}: unknown interface {iface}"
            ));
            return Item::Skip { next: consumed };
        };
        let link = match info.link {
            Ok(l) => l,
            Err(number) => {
                return Item::Failed(CaptureError::UnsupportedLinkType {
                    number,
                    name: link_type_name(number),
                });
            }
        };
        let caplen = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let start = data.as_ptr() as usize - input.as_ptr() as usize;
        let ts_ns = u64::try_from(ts.as_nanos()).unwrap_or(u64::MAX);
        Item::Frame {
            meta: FrameMeta {
                ts_ns: erf_ts(link, data).unwrap_or(ts_ns),
                len: orig.max(caplen),
                link,
                if_speed: info.speed,
                interface: iface,
            },
            data: start..start + data.len(),
            next: consumed,
        }
    }
}

/// Options of an interface block larger than this are trimmed.
const IDB_TRIM_OVER: usize = 256;

/// The interface block at the start of `input`, rebuilt with only the
/// options the reader uses (`if_speed`, `if_tsresol`, `if_tsoffset`,
/// `if_fcslen`), when it is whole and larger than [`IDB_TRIM_OVER`].
fn trimmed_idb(input: &[u8], order: Endianness) -> Option<Vec<u8>> {
    if ng_word(input, 0, order)? != BLOCK_IDB {
        return None;
    }
    let len = ng_word(input, 4, order)? as usize;
    if len <= IDB_TRIM_OVER || len > input.len() || !len.is_multiple_of(4) || len < 20 {
        return None;
    }
    let u16_at = |at: usize| -> Option<u16> {
        let b = *input.get(at..at.checked_add(2)?)?.first_chunk::<2>()?;
        Some(match order {
            Endianness::Big => u16::from_be_bytes(b),
            Endianness::Little => u16::from_le_bytes(b),
        })
    };
    let put32 = |v: &mut Vec<u8>, x: u32| {
        v.extend_from_slice(&match order {
            Endianness::Big => x.to_be_bytes(),
            Endianness::Little => x.to_le_bytes(),
        })
    };
    let mut kept = Vec::new();
    let mut at = 16usize;
    let end = len - 4;
    while at + 4 <= end {
        let (code, olen) = (u16_at(at)?, usize::from(u16_at(at + 2)?));
        if code == 0 {
            break;
        }
        let padded = olen.div_ceil(4) * 4;
        if at + 4 + padded > end {
            break;
        }
        if matches!(code, 8 | 9 | 13 | 14) {
            kept.extend_from_slice(input.get(at..at + 4 + padded)?);
        }
        at += 4 + padded;
    }
    let mut out = Vec::with_capacity(28 + kept.len());
    put32(&mut out, BLOCK_IDB);
    put32(&mut out, (16 + kept.len() + 4 + 4) as u32);
    out.extend_from_slice(input.get(8..16)?);
    out.extend_from_slice(&kept);
    out.extend_from_slice(&[0, 0, 0, 0]);
    put32(&mut out, (16 + kept.len() + 4 + 4) as u32);
    Some(out)
}

/// Which state of a file's pcapng reader: (sections begun, interfaces of
/// the last one). Every section header or interface block that is read
/// raises it, so equal ids mean equal states.
pub type NgStateId = (usize, usize);

/// A pcapng file read block by block from any block's offset, the way the
/// sequential readers read it, for the chunked reader. Section header and
/// interface blocks are read only on request ([`apply`](Self::apply)): one
/// cursor follows the file's state, and copies of it
/// ([`rebuild`](Self::rebuild)) read chunks in that state.
pub struct NgCursor {
    records: Records,
    id: NgStateId,
}

impl NgCursor {
    /// A cursor after the first section header of `file`, and that
    /// header's length. `None` for a file that is not pcapng.
    pub fn open(file: &[u8]) -> Option<Result<(NgCursor, usize), CaptureError>> {
        if file.first_chunk::<4>().copied().map(u32::from_be_bytes) != Some(PCAPNG_SHB) {
            return None;
        }
        Some(Records::new(file).map(|(records, pos)| {
            let mut c = NgCursor {
                records,
                id: (0, 0),
            };
            c.id = c.live_id();
            (c, pos)
        }))
    }

    fn live_id(&self) -> NgStateId {
        let s = &self.records.sections;
        (s.len(), s.last().map_or(0, |s| s.idb_offsets.len()))
    }

    pub fn id(&self) -> NgStateId {
        self.id
    }

    /// Where the current section's header and interface blocks are.
    pub fn section(&self) -> Section {
        self.records.sections.last().cloned().unwrap_or_default()
    }

    /// A cursor in state `id`, which `section` (of `file`) describes.
    pub fn rebuild(
        file: &[u8],
        section: &Section,
        id: NgStateId,
    ) -> Result<NgCursor, CaptureError> {
        let mut records = Records::section_state(
            file.get(section.shb_offset as usize..).unwrap_or_default(),
            section.idb_offsets.iter().enumerate().map(|(i, &at)| {
                let trimmed = section.idb_trimmed.get(i).and_then(|t| t.as_deref());
                (
                    at,
                    trimmed.unwrap_or_else(|| file.get(at as usize..).unwrap_or_default()),
                )
            }),
        )?;
        records.warnings.clear();
        records.warning_count = 0;
        Ok(NgCursor { records, id })
    }

    /// Whether the block at the start of `input` is a section header or an
    /// interface block.
    pub fn is_state(&self, input: &[u8]) -> bool {
        let order = match &self.records.kind {
            Kind::PcapNg { parser, .. } => parser.state().endianness(),
            Kind::Pcap(_) => return false,
        };
        matches!(ng_word(input, 0, order), Some(PCAPNG_SHB | BLOCK_IDB))
    }

    /// Another cursor in the same state (for another thread).
    pub fn copy(&self, file: &[u8]) -> Result<NgCursor, CaptureError> {
        NgCursor::rebuild(file, &self.section(), self.id)
    }

    /// The block at the start of `input`, at file offset `at`; `None` for
    /// a section header or interface block, left unread.
    pub fn block(&mut self, input: &[u8], at: u64) -> Option<Item> {
        (!self.is_state(input)).then(|| self.step(input, at))
    }

    /// Reads the block at the start of `input` whatever it is, a section
    /// header or interface block included.
    pub fn apply(&mut self, input: &[u8], at: u64) -> Item {
        let item = self.step(input, at);
        self.id = self.live_id();
        item
    }

    /// The next item, every skip moving on.
    fn step(&mut self, input: &[u8], at: u64) -> Item {
        match self.records.step(input, at) {
            Item::Skip { next } => Item::Skip {
                next: next.max(1).min(input.len()),
            },
            other => other,
        }
    }

    /// The first offset in `buf[from..limit]` (`buf` starting at file
    /// offset `base`) where `RESYNC_BLOCKS` blocks chain up: aligned to
    /// four bytes, a known block type, the same length at both ends (or
    /// blocks up to exactly `buf.len()` when `at_eof`). A guess, as
    /// [`crate::capture::PcapLayout::resync`]'s is.
    pub fn resync(
        &self,
        buf: &[u8],
        base: u64,
        from: usize,
        limit: usize,
        at_eof: bool,
    ) -> Option<usize> {
        let Kind::PcapNg { parser, .. } = &self.records.kind else {
            return None;
        };
        let order = parser.state().endianness();
        let limit = limit.min(buf.len());
        let first = from + (4 - ((base + from as u64) % 4) as usize) % 4;
        (first..limit)
            .step_by(4)
            .find(|&start| ng_chains(buf, start, at_eof, order))
    }

    /// The warnings made since the last call, and how many more there were.
    pub fn take_warnings(&mut self) -> (Vec<String>, u64) {
        let list = std::mem::take(&mut self.records.warnings);
        let more =
            std::mem::take(&mut self.records.warning_count).saturating_sub(list.len() as u64);
        (list, more)
    }

    /// The finest timestamp resolution among the interfaces read so far.
    pub fn ts_resolution_ns(&self) -> u64 {
        self.records.ts_resolution_ns
    }
}

/// Blocks that must chain up before a resync guess is taken.
const RESYNC_BLOCKS: usize = 8;

fn ng_chains(buf: &[u8], start: usize, at_eof: bool, order: Endianness) -> bool {
    let mut at = start;
    for _ in 0..RESYNC_BLOCKS {
        if at == buf.len() {
            return at_eof;
        }
        let (Some(ty), Some(len)) = (ng_word(buf, at, order), ng_word(buf, at + 4, order)) else {
            return false;
        };
        let known = matches!(
            ty,
            PCAPNG_SHB
                | BLOCK_IDB
                | BLOCK_PB
                | BLOCK_SPB
                | BLOCK_NRB
                | BLOCK_ISB
                | BLOCK_EPB
                | BLOCK_JOURNAL
                | BLOCK_DSB
                | BLOCK_CUSTOM
                | BLOCK_CUSTOM_NOCOPY
        );
        if !known || len < 12 || !len.is_multiple_of(4) || len > MAX_RECORD_LEN {
            return false;
        }
        let end = at + len as usize;
        if end > buf.len() || ng_word(buf, end - 4, order) != Some(len) {
            return false;
        }
        at = end;
    }
    true
}

/// The frame of the enhanced packet block at the start of `input`, read
/// directly, when it is the plain kind that nearly every capture holds: whole
/// in `input`, lengths that agree, no options, a known interface whose
/// timestamps are whole nanoseconds and whose link type is supported.
/// `None` leaves the block to the pcapng parser (anything else, including
/// every error), so that both ways give the same frames and warnings
/// (tested). The parser spent a fifth of the reading thread's time on such
/// blocks (a `Vec` of options, a 128-bit timestamp conversion).
pub(super) fn epb_direct(
    input: &[u8],
    order: Endianness,
    interfaces: &[Interface],
) -> Option<Item> {
    let word = |at: usize| ng_word(input, at, order);
    if word(0)? != BLOCK_EPB {
        return None;
    }
    let total = word(4)? as usize;
    let caplen = word(20)?;
    let orig = word(24)?;
    // Header, the five fixed fields, the padded data, the trailing length.
    if total != 32 + (caplen as usize).div_ceil(4) * 4 || word(total - 4)? as usize != total {
        return None;
    }
    if orig < caplen {
        return None;
    }
    let iface = interfaces.get(word(8)? as usize)?;
    let link = iface.link.ok()?;
    let ts = u64::from(word(12)?) << 32 | u64::from(word(16)?);
    let ts_ns = ts.saturating_mul(iface.ns_per_unit?);
    let data = 28..28 + caplen as usize;
    Some(Item::Frame {
        meta: FrameMeta {
            ts_ns: erf_ts(link, input.get(data.clone())?).unwrap_or(ts_ns),
            len: orig,
            link,
            if_speed: iface.speed,
            interface: word(8)?,
        },
        data,
        next: total,
    })
}

/// An ERF record's own timestamp, for frames of an ERF interface.
fn erf_ts(link: LinkType, data: &[u8]) -> Option<u64> {
    (link == LinkType::Erf)
        .then(|| crate::wire::erf::timestamp_ns(data))
        .flatten()
}

/// Nanoseconds per timestamp unit of a pcapng interface of link type
/// `link` whose `if_tsresol` is `value` (a power of two when `binary`, else
/// of ten).
fn resolution_ns(link: u32, binary: bool, value: u8) -> u64 {
    if link == LinkType::Erf.number() {
        // ERF records carry their own (finer) timestamps.
        1
    } else if binary {
        (1_000_000_000u64 >> value.min(63)).max(1)
    } else {
        10u64.pow(9u32.saturating_sub(u32::from(value)))
    }
}

/// The finest timestamp resolution of the interface blocks at the start of
/// `input` (those right after a section header), in nanoseconds; 0 when
/// `input` does not start with a whole one.
pub(super) fn leading_resolution_ns(input: &[u8], order: Endianness) -> u64 {
    let half = |b: &[u8], at: usize| -> Option<u16> {
        let w = *b.get(at..at + 2)?.first_chunk::<2>()?;
        Some(match order {
            Endianness::Big => u16::from_be_bytes(w),
            Endianness::Little => u16::from_le_bytes(w),
        })
    };
    let mut finest = 0u64;
    let mut at = 0usize;
    // A file states a handful of interfaces; past 64 the first frame's
    // block tells the rest.
    for _ in 0..64 {
        let (Some(BLOCK_IDB), Some(len)) =
            (ng_word(input, at, order), ng_word(input, at + 4, order))
        else {
            break;
        };
        let len = len as usize;
        let Some(block) = input.get(at..at.saturating_add(len)).filter(|_| len >= 20) else {
            break;
        };
        let Some(link) = half(block, 8) else { break };
        // Microseconds unless an if_tsresol option says otherwise.
        let (mut binary, mut value) = (false, 6u8);
        let mut o = 16usize;
        while o + 4 <= len - 4 {
            let (Some(code), Some(olen)) = (half(block, o), half(block, o + 2)) else {
                break;
            };
            if code == 0 {
                break;
            }
            if code == 9
                && olen == 1
                && let Some(&v) = block.get(o + 4)
            {
                (binary, value) = (v & 0x80 != 0, v & 0x7f);
            }
            o += 4 + usize::from(olen).div_ceil(4) * 4;
        }
        let ns = resolution_ns(u32::from(link), binary, value);
        finest = if finest == 0 { ns } else { finest.min(ns) };
        at += len;
    }
    finest
}

/// The 32-bit word at `input[at..]` in a pcapng section's byte order.
pub(super) fn ng_word(input: &[u8], at: usize, order: Endianness) -> Option<u32> {
    let b = *input.get(at..at.checked_add(4)?)?.first_chunk::<4>()?;
    Some(match order {
        Endianness::Big => u32::from_be_bytes(b),
        Endianness::Little => u32::from_le_bytes(b),
    })
}
