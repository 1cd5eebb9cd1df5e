//! Reading the records of a pcap or pcapng file, from a slice of the whole
//! file (memory-mapped) or from a stream through a bounded rolling buffer.

use std::io::Read;
use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::compress::{Compression, Decompressed};

use pcap_file::Endianness;
use pcap_file::pcap::{PcapParseError, PcapParser};
use pcap_file::pcapng::blocks::block_common::Block;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{PcapNgParseError, PcapNgParser};

use super::{
    CaptureError, Format, LinkType, MAX_RECORD_LEN, PCAP_HEADER_LEN, PREFETCH_AHEAD, PcapLayout,
    link_type_name,
};

pub(super) const PCAPNG_SHB: u32 = 0x0A0D_0D0A;
pub(super) const BLOCK_IDB: u32 = 1;
const BLOCK_PB: u32 = 2;
const BLOCK_SPB: u32 = 3;
const BLOCK_NRB: u32 = 4;
const BLOCK_ISB: u32 = 5;
pub(super) const BLOCK_EPB: u32 = 6;
const BLOCK_JOURNAL: u32 = 9;
const BLOCK_DSB: u32 = 0x0A;
const BLOCK_CUSTOM: u32 = 0x0BAD;
const BLOCK_CUSTOM_NOCOPY: u32 = 0x4000_0BAD;
/// Warnings kept verbatim; later ones are only counted.
pub const MAX_WARNINGS: usize = 20;
/// Rolling buffer of a stream: large enough that refills are rare.
const STREAM_CHUNK: usize = 4 << 20;

/// One captured frame, borrowed from the file or the stream buffer.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// 1-based frame number, as Wireshark counts.
    pub number: u64,
    /// Nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// Original length on the wire.
    pub len: u32,
    /// Captured length (`data.len()`).
    pub caplen: u32,
    pub link: LinkType,
    /// The link speed its interface states (pcapng `if_speed`).
    pub if_speed: Option<NonZeroU64>,
    /// The pcapng interface it was captured on (0 in pcap).
    pub interface: u32,
    pub data: &'a [u8],
    /// Byte offset of the record in the file.
    pub offset: usize,
}

impl<'a> Frame<'a> {
    /// A whole frame of `link` on its own (frame 1, time 0, nothing cut,
    /// no interface speed), as tests, fuzzers and `gen` build them.
    pub fn whole(data: &'a [u8], link: LinkType) -> Frame<'a> {
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        Frame {
            number: 1,
            ts_ns: 0,
            len,
            caplen: len,
            link,
            if_speed: None,
            interface: 0,
            data,
            offset: 0,
        }
    }
}

/// Anything that yields frames one at a time (each borrowed until the next).
pub trait FrameSource {
    fn next_frame(&mut self) -> Option<Result<Frame<'_>, CaptureError>>;
    fn format(&self) -> Format;
    /// Finest timestamp resolution seen so far, in nanoseconds.
    fn ts_resolution_ns(&self) -> u64;
    fn warnings(&self) -> &[String];
    fn warning_count(&self) -> u64;
    /// Bytes consumed so far and the total when known (for progress).
    fn progress(&self) -> (u64, Option<u64>);
    /// The sections seen so far (pcapng; pcap has one).
    fn sections(&self) -> &[Section];
    /// The compression the frames were read through, if any.
    fn compression(&self) -> Option<Compression> {
        None
    }
    /// Whether the next frame can be had without waiting for input: false
    /// when a stream has no whole frame buffered and nothing to read yet,
    /// so that what was made of the frames before can go out first (the
    /// frame loop's `waiting` hook). A file is always ready.
    fn ready(&mut self) -> bool {
        true
    }
    /// What the input is, for the report: `pcapng`, `pcap (gzip)`, ...
    fn description(&self) -> String {
        match self.compression() {
            Some(c) => format!("{} ({})", self.format(), c.name()),
            None => self.format().to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    link: Result<LinkType, u32>,
    /// `if_speed`, bits per second.
    speed: Option<NonZeroU64>,
    /// Nanoseconds per timestamp unit when the timestamps are a whole
    /// number of nanoseconds (a decimal resolution, no offset): the
    /// interface's packets can then be read directly ([`epb_direct`]).
    ns_per_unit: Option<u64>,
}

enum Kind {
    /// Classic pcap: every record is read by the layout the chunked reader
    /// uses too.
    Pcap(PcapLayout),
    PcapNg {
        parser: Box<PcapNgParser>,
        interfaces: Vec<Interface>,
    },
}

/// What the next bytes of a capture hold. Ranges and offsets are relative
/// to the bytes read.
#[derive(Debug)]
pub enum Item {
    /// A frame: its metadata, where its data is, where the next record
    /// starts.
    Frame {
        ts_ns: u64,
        len: u32,
        link: LinkType,
        /// The interface's `if_speed` (pcapng), when stated.
        if_speed: Option<NonZeroU64>,
        interface: u32,
        data: std::ops::Range<usize>,
        next: usize,
    },
    /// A block that is not a frame (or a corrupt one skipped with a
    /// warning).
    Skip {
        next: usize,
    },
    /// The record continues past the end of the input.
    Incomplete {
        needed: usize,
    },
    Failed(CaptureError),
}

impl Item {
    /// The item with its ranges and offsets moved on by `by` bytes.
    pub fn shifted(self, by: usize) -> Item {
        match self {
            Item::Frame {
                ts_ns,
                len,
                link,
                if_speed,
                interface,
                data,
                next,
            } => Item::Frame {
                ts_ns,
                len,
                link,
                if_speed,
                interface,
                data: data.start + by..data.end + by,
                next: next + by,
            },
            Item::Skip { next } => Item::Skip { next: next + by },
            other => other,
        }
    }
}

/// Where a pcapng section's header and interface blocks are, so a frame of
/// that section can be decoded again later from its offset alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Section {
    /// Number of the first frame read after this section began.
    pub first_frame: u64,
    pub shb_offset: u64,
    pub idb_offsets: Vec<u64>,
    /// For each interface block whose options were trimmed (see
    /// `trimmed_idb`), the block as read: rebuilding a reader's state
    /// reads these (tens of bytes) rather than the file's blocks again.
    pub idb_trimmed: Vec<Option<std::sync::Arc<[u8]>>>,
}

/// The format state shared by the readers.
pub(crate) struct Records {
    kind: Kind,
    sections: Vec<Section>,
    number: u64,
    warnings: Vec<String>,
    warning_count: u64,
    ts_resolution_ns: u64,
    if_speed_bps: Option<u64>,
    /// Plain enhanced packet blocks are read directly, without the pcapng
    /// parser (off only to test that both ways agree).
    direct_epb: bool,
}

fn borrowed<'a>(c: std::borrow::Cow<'a, [u8]>) -> &'a [u8] {
    match c {
        std::borrow::Cow::Borrowed(d) => d,
        std::borrow::Cow::Owned(_) => &[],
    }
}

impl Records {
    /// Parses the file header from the first bytes.
    fn new(head: &[u8]) -> Result<(Records, usize), CaptureError> {
        if head.is_empty() {
            return Err(CaptureError::Empty);
        }
        let Some(magic) = head.first_chunk::<4>() else {
            return Err(CaptureError::TooShort(head.len()));
        };
        if let Some(c) = super::compress::Compression::detect(head) {
            return Err(CaptureError::Compressed(c));
        }
        let records = |kind, ts_resolution_ns| Records {
            kind,
            sections: vec![Section {
                first_frame: 1,
                ..Section::default()
            }],
            number: 0,
            warnings: Vec::new(),
            warning_count: 0,
            ts_resolution_ns,
            if_speed_bps: None,
            direct_epb: true,
        };
        match u32::from_be_bytes(*magic) {
            0xA1B2_C3D4 | 0xA1B2_3C4D | 0xD4C3_B2A1 | 0x4D3C_B2A1 => {
                let (rest, _) = PcapParser::new(head).map_err(|e| match e {
                    PcapParseError::IncompleteBuffer(..) => CaptureError::TooShort(head.len()),
                    other => CaptureError::Corrupt {
                        what: "pcap header",
                        offset: 0,
                        reason: other.to_string(),
                    },
                })?;
                let layout = PcapLayout::parse(head)?.ok_or(CaptureError::TooShort(head.len()))?;
                let kind = Kind::Pcap(layout);
                Ok((
                    records(kind, layout.ts_resolution_ns()),
                    head.len() - rest.len(),
                ))
            }
            PCAPNG_SHB => {
                let (rest, parser) = PcapNgParser::new(head).map_err(|e| match e {
                    PcapNgParseError::IncompleteBuffer(..) => CaptureError::TooShort(head.len()),
                    other => CaptureError::Corrupt {
                        what: "pcapng section header",
                        offset: 0,
                        reason: other.to_string(),
                    },
                })?;
                // What the interface blocks before the first frame say of
                // its times, known before that frame is read (`packets`
                // prints times in it; `-w` keeps it).
                let resolution = leading_resolution_ns(rest, parser.state().endianness());
                let kind = Kind::PcapNg {
                    parser: Box::new(parser),
                    interfaces: Vec::new(),
                };
                Ok((records(kind, resolution), head.len() - rest.len()))
            }
            other => Err(CaptureError::BadMagic(other)),
        }
    }

    /// The state of a pcapng section from its header block (at the start
    /// of `shb`) and its interface blocks (each at the start of its bytes,
    /// with its file offset).
    fn section_state<'b>(
        shb: &[u8],
        idbs: impl IntoIterator<Item = (u64, &'b [u8])>,
    ) -> Result<Records, CaptureError> {
        let (mut records, _) = Records::new(shb)?;
        for (at, bytes) in idbs {
            let _ = records.step(bytes, at);
        }
        Ok(records)
    }

    fn format(&self) -> Format {
        match &self.kind {
            Kind::Pcap(layout) => Format::Pcap {
                nanos: layout.nanos,
                big_endian: layout.big_endian,
            },
            Kind::PcapNg { .. } => Format::PcapNg,
        }
    }

    fn warn(&mut self, msg: String) {
        self.warning_count = self.warning_count.saturating_add(1);
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(msg);
        }
    }

    fn cut(&mut self, offset: u64, needed: usize, have: usize) {
        self.warn(cut_warning(offset, needed, have, self.number));
    }

    /// The next step from `input`, which starts at file offset `at`.
    fn step(&mut self, input: &[u8], at: u64) -> Item {
        match &mut self.kind {
            Kind::Pcap(layout) => layout.item(input, 0, at, self.number.saturating_add(1)),
            Kind::PcapNg { .. } => self.step_pcapng(input, at),
        }
    }

    /// Whether `input` starts with a whole record (or one whose length is
    /// an error already): the next step then needs no more input. A cheap
    /// look at the record's length, not a parse.
    fn holds_record(&self, input: &[u8]) -> bool {
        match &self.kind {
            Kind::Pcap(layout) => !matches!(
                layout.record(input, 0),
                super::chunks::Record::Incomplete { .. }
            ),
            Kind::PcapNg { .. } => self
                .block_len(input)
                .is_some_and(|len| len as usize <= input.len() || len > MAX_RECORD_LEN),
        }
    }

    fn block_len(&self, input: &[u8]) -> Option<u32> {
        let Kind::PcapNg { parser, .. } = &self.kind else {
            return None;
        };
        ng_word(input, 4, parser.state().endianness())
    }

    fn step_pcapng(&mut self, input: &[u8], at: u64) -> Item {
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
        let order = parser.state().endianness();
        let trimmed = trimmed_idb(input, order);
        let whole = claimed.map_or(0, |c| c as usize);
        let (parse_from, skip_whole) = match &trimmed {
            Some(t) => (t.as_slice(), true),
            None => (input, false),
        };
        let (after, raw) = match parser.next_raw_block(parse_from) {
            Ok(ok) => ok,
            Err(PcapNgParseError::IncompleteBuffer(needed, _)) => {
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
            Err(e) => {
                // A block whose framing is sane can be stepped over; one
                // whose length is garbage leaves nothing to resync on.
                let len = claimed.unwrap_or(0) as usize;
                if len >= 12 && len.is_multiple_of(4) && len <= input.len() {
                    self.warn(format!("skipped corrupt pcapng block at byte {at}: {e}"));
                    return Item::Skip { next: len };
                }
                if len > input.len() && len <= MAX_RECORD_LEN as usize {
                    return Item::Incomplete { needed: len };
                }
                return Item::Failed(CaptureError::Corrupt {
                    what: "pcapng block",
                    offset: at as usize,
                    reason: e.to_string(),
                });
            }
        };
        let consumed = if skip_whole {
            whole
        } else {
            input.len() - after.len()
        };
        let Kind::PcapNg { parser, interfaces } = &mut self.kind else {
            return Item::Skip { next: consumed };
        };
        match raw.type_ {
            PCAPNG_SHB => {
                interfaces.clear();
                self.sections.push(Section {
                    first_frame: self.number.saturating_add(1),
                    shb_offset: at,
                    idb_offsets: Vec::new(),
                    idb_trimmed: Vec::new(),
                });
            }
            BLOCK_IDB => {
                if let Some(s) = self.sections.last_mut() {
                    s.idb_offsets.push(at);
                    s.idb_trimmed.push(trimmed.map(std::sync::Arc::from));
                }
                if let Some(idb) = parser.interfaces().last() {
                    let number = u32::from(idb.linktype);
                    let res = idb.ts_resolution();
                    let ts_resolution_ns = resolution_ns(number, res.is_bin(), res.resolution());
                    let speed = idb.options.iter().find_map(|opt| match opt {
                        InterfaceDescriptionOption::IfSpeed(s) => NonZeroU64::new(*s),
                        _ => None,
                    });
                    if speed.is_some() {
                        self.if_speed_bps = speed.map(NonZeroU64::get);
                    }
                    interfaces.push(Interface {
                        link: LinkType::from_number(number).ok_or(number),
                        speed,
                        ns_per_unit: (!res.is_bin() && idb.ts_offset() == 0)
                            .then_some(ts_resolution_ns),
                    });
                    self.ts_resolution_ns = if self.ts_resolution_ns == 0 {
                        ts_resolution_ns
                    } else {
                        self.ts_resolution_ns.min(ts_resolution_ns)
                    };
                }
            }
            BLOCK_EPB | BLOCK_SPB | BLOCK_PB => {
                let block = match raw.try_into_block(parser.state()) {
                    Ok(b) => b,
                    Err(e) => {
                        self.warn(format!("skipped corrupt packet block at byte {at}: {e}"));
                        return Item::Skip { next: consumed };
                    }
                };
                let (iface, ts, orig, data) = match block {
                    Block::EnhancedPacket(b) => {
                        (b.interface_id, b.timestamp, b.original_len, b.data)
                    }
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
                return Item::Frame {
                    next: consumed,
                    ts_ns: erf_ts(link, data).unwrap_or(ts_ns),
                    len: orig.max(caplen),
                    link,
                    if_speed: info.speed,
                    interface: iface,
                    data: start..start + data.len(),
                };
            }
            BLOCK_NRB | BLOCK_ISB | BLOCK_JOURNAL | BLOCK_DSB | BLOCK_CUSTOM
            | BLOCK_CUSTOM_NOCOPY => {}
            other => self.warn(format!(
                "skipped unknown pcapng block type {other:#x} at byte {at}"
            )),
        }
        Item::Skip { next: consumed }
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
    /// [`PcapLayout::resync`]'s is.
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
pub const RESYNC_BLOCKS: usize = 8;

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

/// Warnings kept and the count of all of them, as a report lists them.
pub fn warning_list(kept: &[String], count: u64) -> Vec<String> {
    let mut warnings = kept.to_vec();
    let more = count.saturating_sub(kept.len() as u64);
    if more > 0 {
        warnings.push(format!("{more} more warnings not shown"));
    }
    warnings
}

/// The frame of the enhanced packet block at the start of `input`, read
/// directly, when it is the plain kind that nearly every capture holds: whole
/// in `input`, lengths that agree, no options, a known interface whose
/// timestamps are whole nanoseconds and whose link type is supported.
/// `None` leaves the block to the pcapng parser (anything else, including
/// every error), so that both ways give the same frames and warnings
/// (tested). The parser spent a fifth of the reading thread's time on such
/// blocks (a `Vec` of options, a 128-bit timestamp conversion).
fn epb_direct(input: &[u8], order: Endianness, interfaces: &[Interface]) -> Option<Item> {
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
        next: total,
        ts_ns: erf_ts(link, input.get(data.clone())?).unwrap_or(ts_ns),
        len: orig,
        link,
        if_speed: iface.speed,
        interface: word(8)?,
        data,
    })
}

/// An ERF record's own timestamp, for frames of an ERF interface.
fn erf_ts(link: LinkType, data: &[u8]) -> Option<u64> {
    (link == LinkType::Erf)
        .then(|| crate::wire::erf::timestamp_ns(data))
        .flatten()
}

/// The 32-bit word at `input[at..]` in a pcapng section's byte order.
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
fn leading_resolution_ns(input: &[u8], order: Endianness) -> u64 {
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

fn ng_word(input: &[u8], at: usize, order: Endianness) -> Option<u32> {
    let b = *input.get(at..at.checked_add(4)?)?.first_chunk::<4>()?;
    Some(match order {
        Endianness::Big => u32::from_be_bytes(b),
        Endianness::Little => u32::from_le_bytes(b),
    })
}

/// The warning for a file that ends inside a record.
pub fn cut_warning(offset: u64, needed: usize, have: usize, frames: u64) -> String {
    format!(
        "capture cut mid-record at byte {offset}: record needs {needed} bytes, file has {have}; read {frames} whole frames before it"
    )
}

/// Frames out of a capture held in memory (a memory-mapped file): zero
/// copy, and an [`Iterator`] whose frames live as long as the file.
pub struct FrameReader<'a> {
    file: &'a [u8],
    pos: usize,
    records: Records,
    finished: bool,
}

impl<'a> FrameReader<'a> {
    pub fn new(file: &'a [u8]) -> Result<Self, CaptureError> {
        let (records, pos) = Records::new(file)?;
        Ok(FrameReader {
            file,
            pos,
            records,
            finished: false,
        })
    }

    /// Starts reading at `offset`, a record offset from an earlier pass
    /// (pcap only; pcapng needs its interface blocks, so it restarts and
    /// skips). Frame numbers continue from `number`.
    pub fn at(file: &'a [u8], offset: usize, number: u64) -> Result<Self, CaptureError> {
        let mut r = Self::new(file)?;
        if matches!(r.records.kind, Kind::Pcap(_)) && offset >= r.pos && offset <= file.len() {
            r.pos = offset;
            r.records.number = number.saturating_sub(1);
        } else {
            while r.records.number < number.saturating_sub(1) {
                if r.next().is_none() {
                    break;
                }
            }
        }
        Ok(r)
    }

    /// Link speed from a pcapng `if_speed` option, when one was present.
    pub fn if_speed_bps(&self) -> Option<u64> {
        self.records.if_speed_bps
    }
}

impl<'a> Iterator for FrameReader<'a> {
    type Item = Result<Frame<'a>, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.finished {
                return None;
            }
            let input: &'a [u8] = self.file.get(self.pos..).unwrap_or_default();
            if input.is_empty() {
                self.finished = true;
                return None;
            }
            let at = self.pos;
            match self.records.step(input, at as u64) {
                Item::Frame {
                    next,
                    ts_ns,
                    len,
                    link,
                    if_speed,
                    interface,
                    data,
                } => {
                    self.pos += next;
                    self.records.number += 1;
                    let data = input.get(data).unwrap_or_default();
                    return Some(Ok(Frame {
                        number: self.records.number,
                        ts_ns,
                        len,
                        caplen: data.len() as u32,
                        link,
                        if_speed,
                        interface,
                        data,
                        offset: at,
                    }));
                }
                Item::Skip { next: n } => self.pos += n.max(1),
                Item::Incomplete { needed } => {
                    self.records.cut(at as u64, needed, input.len());
                    self.finished = true;
                    return None;
                }
                Item::Failed(e) => {
                    self.finished = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl FrameSource for FrameReader<'_> {
    fn next_frame(&mut self) -> Option<Result<Frame<'_>, CaptureError>> {
        self.next()
    }
    fn format(&self) -> Format {
        self.records.format()
    }
    fn ts_resolution_ns(&self) -> u64 {
        self.records.ts_resolution_ns
    }
    fn warnings(&self) -> &[String] {
        &self.records.warnings
    }
    fn warning_count(&self) -> u64 {
        self.records.warning_count
    }
    fn progress(&self) -> (u64, Option<u64>) {
        (self.pos as u64, Some(self.file.len() as u64))
    }
    fn sections(&self) -> &[Section] {
        &self.records.sections
    }
}

/// Where a [`StreamReader`] gets its bytes.
enum Store {
    /// `read()` into a rolling buffer (standard input, tests).
    Buffered {
        input: Box<dyn Read>,
        /// The input's descriptor when it has one (a pipe, standard
        /// input): waited on rather than read blindly, so that a wait can
        /// be told of ([`FrameSource::ready`]) and ended by Ctrl-C.
        fd: Option<Fd>,
        buf: Vec<u8>,
        end: usize,
        eof: bool,
    },
    /// A mapped window of a regular file, remapped as reading proceeds.
    Mapped {
        file: std::fs::File,
        size: u64,
        window: mapwin::Window,
        chunk: usize,
    },
}

/// Frames out of a file or a stream a window at a time: memory stays a few
/// MiB whatever the capture's size. Regular files are mapped a window at a
/// time (no copy); standard input goes through a rolling buffer.
pub struct StreamReader {
    store: Store,
    /// Unread bytes start here in the store.
    start: usize,
    /// File offset of the store's first byte.
    base: u64,
    /// Bytes of the store up to here have been hinted into the cache.
    hinted: usize,
    records: Records,
    finished: bool,
    total: Option<u64>,
    /// For a compressed input: its format and the compressed bytes read
    /// so far (progress counts those, against the file's size).
    compressed: Option<(Compression, Arc<AtomicU64>)>,
}

/// Window mapped at a time for regular files.
pub const MAP_WINDOW: usize = 16 << 20;

/// A stream's descriptor, waited on with `poll`.
pub type Fd = std::os::fd::OwnedFd;

/// How long a wait for input lasts before it looks again at whether the
/// user pressed Ctrl-C (the signal may be taken by another thread, and
/// then does not end the wait).
#[cfg(target_os = "linux")]
const WAKE_EVERY: rustix::event::Timespec = rustix::event::Timespec {
    tv_sec: 0,
    tv_nsec: 100_000_000,
};

/// Whether `fd` has input (or its end) to read now, waiting up to
/// `wait`; `None` when it cannot be told.
#[cfg(target_os = "linux")]
fn input_ready(fd: &Fd, wait: Option<&rustix::event::Timespec>) -> Option<bool> {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut fds = [PollFd::new(fd, PollFlags::IN)];
    let zero = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(wait.unwrap_or(&zero))) {
        Ok(n) => Some(n > 0),
        Err(rustix::io::Errno::INTR) => Some(false),
        Err(_) => None,
    }
}

/// Waits until `fd` (if any) has input or the user interrupts: false for
/// the interrupt.
pub(super) fn wait_for_input(fd: Option<&Fd>) -> bool {
    #[cfg(target_os = "linux")]
    if let Some(fd) = fd {
        while !super::interrupted() {
            if input_ready(fd, Some(&WAKE_EVERY)) != Some(false) {
                return true;
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
    !super::interrupted()
}

/// Reads into `buf[*end..]` until `*end` reaches `want` (or the buffer's
/// end), the input ends or the user interrupts (see
/// [`super::stop_streams_at_interrupt`]). Reads what each read gives
/// rather than filling the buffer: frames that have come are handed on
/// while the writer is still writing (`tcpdump -w - | roce-dissect
/// packets -` shows each frame as it comes).
fn fill(
    input: &mut dyn Read,
    fd: Option<&Fd>,
    buf: &mut [u8],
    end: &mut usize,
    eof: &mut bool,
    want: usize,
) -> Result<(), CaptureError> {
    let want = want.min(buf.len());
    while *end < want && wait_for_input(fd) {
        match input.read(&mut buf[*end..]) {
            Ok(0) => {
                *eof = true;
                break;
            }
            Ok(n) => *end += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(e)),
        }
    }
    Ok(())
}

fn io_err(e: std::io::Error) -> CaptureError {
    CaptureError::Io {
        path: "<input>".into(),
        source: e,
    }
}

impl StreamReader {
    pub fn new(input: Box<dyn Read>, total: Option<u64>) -> Result<Self, CaptureError> {
        Self::buffered(input, Vec::new(), None, total, STREAM_CHUNK)
    }

    /// With a buffer of `chunk` bytes (it grows for larger records).
    pub fn with_buffer(
        input: Box<dyn Read>,
        total: Option<u64>,
        chunk: usize,
    ) -> Result<Self, CaptureError> {
        Self::buffered(input, Vec::new(), None, total, chunk)
    }

    /// A pipe (or another stream with a descriptor) whose first bytes,
    /// `head`, were read already to tell its compression.
    pub(crate) fn pipe(
        input: Box<dyn Read>,
        head: Vec<u8>,
        fd: Option<Fd>,
        total: Option<u64>,
    ) -> Result<Self, CaptureError> {
        Self::buffered(input, head, fd, total, STREAM_CHUNK)
    }

    fn buffered(
        mut input: Box<dyn Read>,
        head: Vec<u8>,
        fd: Option<Fd>,
        total: Option<u64>,
        chunk: usize,
    ) -> Result<Self, CaptureError> {
        let mut buf = vec![0u8; chunk.max(64).max(head.len())];
        buf[..head.len()].copy_from_slice(&head);
        let mut end = head.len();
        let mut eof = false;
        // As much as the file's header needs: a writer may send it alone
        // and the first frame much later.
        let mut want = PCAP_HEADER_LEN;
        let (records, start) = loop {
            fill(&mut *input, fd.as_ref(), &mut buf, &mut end, &mut eof, want)?;
            match Records::new(&buf[..end]) {
                Err(CaptureError::TooShort(_)) if super::interrupted() => {
                    return Err(CaptureError::Interrupted);
                }
                Err(CaptureError::TooShort(_)) if !eof && end >= want && end < buf.len() => {
                    want = end + 1;
                }
                other => break other?,
            }
        };
        Ok(StreamReader {
            store: Store::Buffered {
                input,
                fd,
                buf,
                end,
                eof,
            },
            start,
            base: 0,
            hinted: 0,
            records,
            finished: false,
            total,
            compressed: None,
        })
    }

    /// The decompressed stream of `input` (compressed as `format`, `total`
    /// compressed bytes when known), inflated on a thread of its own.
    pub fn decompressing(
        format: Compression,
        input: Box<dyn Read + Send>,
        total: Option<u64>,
    ) -> Result<Self, CaptureError> {
        let stream = Decompressed::start(format, input).map_err(io_err)?;
        let consumed = stream.consumed();
        let mut reader = Self::with_buffer(Box::new(stream), total, STREAM_CHUNK)?;
        reader.compressed = Some((format, consumed));
        Ok(reader)
    }

    /// The compression of the input, if it was compressed.
    pub fn compression(&self) -> Option<Compression> {
        self.compressed.as_ref().map(|(c, _)| *c)
    }

    /// A regular file, mapped `chunk` bytes at a time.
    pub fn mapped(file: std::fs::File, chunk: usize) -> Result<Self, CaptureError> {
        let size = file.metadata().map_err(io_err)?.len();
        let chunk = chunk.max(64 * 1024);
        let window = mapwin::Window::map(&file, 0, chunk).map_err(io_err)?;
        let (records, start) = Records::new(&window)?;
        Ok(StreamReader {
            store: Store::Mapped {
                file,
                size,
                window,
                chunk,
            },
            start,
            base: 0,
            hinted: 0,
            records,
            finished: false,
            total: Some(size),
            compressed: None,
        })
    }

    fn bytes(&self) -> &[u8] {
        match &self.store {
            Store::Buffered { buf, end, .. } => buf.get(..*end).unwrap_or_default(),
            Store::Mapped { window, .. } => window,
        }
    }

    /// Makes more bytes available after the unread ones; false at the end.
    fn refill(&mut self, needed: usize) -> Result<bool, CaptureError> {
        let start = self.start;
        match &mut self.store {
            Store::Buffered {
                input,
                fd,
                buf,
                end,
                eof,
            } => {
                if super::interrupted() {
                    self.stop_interrupted();
                    return Ok(false);
                }
                if *eof {
                    return Ok(false);
                }
                buf.copy_within(start..*end, 0);
                self.base += start as u64;
                *end -= start;
                self.start = 0;
                self.hinted = 0;
                if needed > buf.len() {
                    // Only up to the largest record accepted.
                    let want = needed.min(MAX_RECORD_LEN as usize + 64);
                    buf.resize(want.max(buf.len()), 0);
                }
                let before = *end;
                // At least the rest of the record begun (`needed` counts
                // from its start), or one more byte.
                let want = needed.max(before + 1);
                match fill(&mut **input, fd.as_ref(), buf, end, eof, want) {
                    // A compressed stream cut short (a capture compressed
                    // as it was written, then stopped): what came before
                    // is read, as from a plain capture cut short.
                    Err(CaptureError::Io { source, .. })
                        if source.kind() == std::io::ErrorKind::UnexpectedEof =>
                    {
                        self.records.warn(format!(
                            "{source}: the frames before the cut are read, nothing after"
                        ));
                        *eof = true;
                    }
                    r => r?,
                }
                let more = *end > before;
                if !more && !*eof && super::interrupted() {
                    // The interrupt ended a wait for input.
                    self.stop_interrupted();
                }
                Ok(more)
            }
            Store::Mapped {
                file,
                size,
                window,
                chunk,
            } => {
                let from = self.base + start as u64;
                let had = window.len() - start;
                if from + had as u64 >= *size {
                    return Ok(false);
                }
                // A file cut since it was opened ends here.
                let now = file.metadata().map_err(io_err)?.len();
                if now < *size {
                    self.records.warn(shrank_warning(now, from));
                    self.finished = true;
                    return Ok(false);
                }
                let len = (*chunk).max(needed.min(MAX_RECORD_LEN as usize + 64));
                // Drop the old window before mapping the next one.
                *window = mapwin::Window::map(file, from, 0).map_err(io_err)?;
                *window = mapwin::Window::map(file, from, len).map_err(io_err)?;
                self.base = from;
                self.start = 0;
                self.hinted = 0;
                Ok(window.len() > had)
            }
        }
    }

    pub fn if_speed_bps(&self) -> Option<u64> {
        self.records.if_speed_bps
    }

    /// Ends the reading at the user's interrupt. What was read is
    /// reported; a record begun is not "cut": its rest was never asked for.
    #[cold]
    fn stop_interrupted(&mut self) {
        let n = self.records.number;
        self.records.warn(format!(
            "interrupted (Ctrl-C): stopped reading after frame {n}; nothing after it was read"
        ));
        self.finished = true;
    }

    /// Whether the mapped file now ends before `end` (it was cut while
    /// being read): then reading stops here, with a warning.
    #[cold]
    fn cut_short(&mut self, end: u64) -> bool {
        let Store::Mapped { file, .. } = &self.store else {
            return false;
        };
        let now = file.metadata().map_or(0, |m| m.len());
        if now >= end {
            return false;
        }
        let at = self.base + self.start as u64;
        self.records.warn(shrank_warning(now, at));
        self.finished = true;
        true
    }
}

/// The warning of a file cut while it was read: it now has `now` bytes,
/// and nothing from byte `at` on was read.
pub fn shrank_warning(now: u64, at: u64) -> String {
    format!(
        "the file shrank to {now} bytes while being read: frames from byte {at} on were not read (the report covers what came before)"
    )
}

impl FrameSource for StreamReader {
    fn next_frame(&mut self) -> Option<Result<Frame<'_>, CaptureError>> {
        loop {
            if self.finished {
                return None;
            }
            if self.start >= self.bytes().len() {
                match self.refill(0) {
                    Ok(true) => {}
                    Ok(false) => {
                        self.finished = true;
                        return None;
                    }
                    Err(e) => {
                        self.finished = true;
                        return Some(Err(e));
                    }
                }
            }
            let at = self.base + self.start as u64;
            let start = self.start;
            let step = {
                let bytes = match &self.store {
                    Store::Buffered { buf, end, .. } => buf.get(start..*end).unwrap_or_default(),
                    Store::Mapped { window, .. } => window.get(start..).unwrap_or_default(),
                };
                self.records.step(bytes, at)
            };
            match step {
                Item::Frame {
                    next,
                    ts_ns,
                    len,
                    link,
                    if_speed,
                    interface,
                    data,
                } => {
                    if mapwin::shrank() && self.cut_short(at + next as u64) {
                        return None;
                    }
                    self.start += next;
                    // Hint the bytes up to PREFETCH_AHEAD past this frame
                    // that earlier frames have not hinted.
                    let ahead = self.start + PREFETCH_AHEAD;
                    if ahead > self.hinted {
                        let from = self.hinted.max(self.start);
                        mapwin::prefetch(self.bytes(), from, ahead - from);
                        self.hinted = ahead;
                    }
                    self.records.number += 1;
                    let number = self.records.number;
                    let data = self
                        .bytes()
                        .get(start + data.start..start + data.end)
                        .unwrap_or_default();
                    return Some(Ok(Frame {
                        number,
                        ts_ns,
                        len,
                        caplen: data.len() as u32,
                        link,
                        if_speed,
                        interface,
                        data,
                        offset: at as usize,
                    }));
                }
                Item::Skip { next: n } => {
                    self.start = (self.start + n.max(1)).min(self.bytes().len())
                }
                Item::Incomplete { needed } => match self.refill(needed) {
                    Ok(true) => {}
                    Ok(false) => {
                        // (Unless the file shrank: `refill` said so.)
                        if !self.finished {
                            let have = self.bytes().len() - self.start;
                            self.records.cut(at, needed, have);
                        }
                        self.finished = true;
                        return None;
                    }
                    Err(e) => {
                        self.finished = true;
                        return Some(Err(e));
                    }
                },
                Item::Failed(e) => {
                    self.finished = true;
                    return Some(Err(e));
                }
            }
        }
    }
    fn ready(&mut self) -> bool {
        let Store::Buffered {
            fd, buf, end, eof, ..
        } = &self.store
        else {
            return true;
        };
        if self.finished || *eof {
            return true;
        }
        if self
            .records
            .holds_record(buf.get(self.start..*end).unwrap_or_default())
        {
            return true;
        }
        #[cfg(target_os = "linux")]
        if let Some(fd) = fd {
            return input_ready(fd, None) != Some(false);
        }
        let _ = fd;
        // A stream that cannot be asked (a decompressor's output): as if
        // it would wait, which costs only an early flush.
        false
    }
    fn format(&self) -> Format {
        self.records.format()
    }
    fn ts_resolution_ns(&self) -> u64 {
        self.records.ts_resolution_ns
    }
    fn warnings(&self) -> &[String] {
        &self.records.warnings
    }
    fn warning_count(&self) -> u64 {
        self.records.warning_count
    }
    fn progress(&self) -> (u64, Option<u64>) {
        match &self.compressed {
            Some((_, consumed)) => (consumed.load(Ordering::Relaxed), self.total),
            None => (self.base + self.start as u64, self.total),
        }
    }
    fn compression(&self) -> Option<Compression> {
        StreamReader::compression(self)
    }
    fn sections(&self) -> &[Section] {
        &self.records.sections
    }
}

/// Frames read again by offset after a first pass (the TUI's packet lists),
/// through small mapped windows, so no frame is kept in memory.
pub struct RandomAccess {
    file: std::fs::File,
    size: u64,
    sections: Vec<Section>,
    /// Format state per section, built on first use.
    states: Vec<Option<Records>>,
    window: Option<mapwin::Window>,
}

/// A frame read by offset, with its own copy of the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedFrame {
    pub number: u64,
    pub ts_ns: u64,
    pub len: u32,
    pub link: LinkType,
    pub if_speed: Option<NonZeroU64>,
    pub interface: u32,
    pub offset: u64,
    pub data: Vec<u8>,
}

impl OwnedFrame {
    pub fn as_frame(&self) -> Frame<'_> {
        Frame {
            number: self.number,
            ts_ns: self.ts_ns,
            len: self.len,
            caplen: self.data.len() as u32,
            link: self.link,
            if_speed: self.if_speed,
            interface: self.interface,
            data: &self.data,
            offset: self.offset as usize,
        }
    }
}

const RANDOM_WINDOW: usize = 4 << 20;

impl RandomAccess {
    pub fn new(file: std::fs::File, sections: Vec<Section>) -> Result<Self, CaptureError> {
        let size = file.metadata().map_err(io_err)?.len();
        let n = sections.len();
        Ok(RandomAccess {
            file,
            size,
            sections,
            states: (0..n).map(|_| None).collect(),
            window: None,
        })
    }

    /// Bytes `[at, at + len)` (fewer at the end of the file), from the
    /// cached window when it holds them.
    fn bytes(&mut self, at: u64, len: usize) -> Result<&[u8], CaptureError> {
        let hit = self
            .window
            .as_ref()
            .is_some_and(|w| at >= w.offset() && at + len as u64 <= w.offset() + w.len() as u64);
        if !hit {
            let want = len.max(RANDOM_WINDOW);
            self.window = None;
            self.window = Some(mapwin::Window::map(&self.file, at, want).map_err(io_err)?);
        }
        let w = self.window.as_ref().map(|w| (w.offset(), &w[..]));
        let (base, bytes) = w.unwrap_or((at, &[]));
        let from = (at - base) as usize;
        Ok(bytes
            .get(from..(from + len).min(bytes.len()))
            .unwrap_or_default())
    }

    fn state(&mut self, section: usize) -> Result<&mut Records, CaptureError> {
        if self.states.get(section).is_some_and(Option::is_none) {
            let sec = self.sections[section].clone();
            let head = self.bytes(sec.shb_offset, 64 * 1024)?.to_vec();
            let mut idbs = Vec::new();
            for (i, &at) in sec.idb_offsets.iter().enumerate() {
                let block = match sec.idb_trimmed.get(i).and_then(|t| t.as_deref()) {
                    Some(t) => t.to_vec(),
                    None => self.bytes(at, 64 * 1024)?.to_vec(),
                };
                idbs.push((at, block));
            }
            let records =
                Records::section_state(&head, idbs.iter().map(|(at, b)| (*at, b.as_slice())))?;
            self.states[section] = Some(records);
        }
        self.states
            .get_mut(section)
            .and_then(Option::as_mut)
            .ok_or(CaptureError::Corrupt {
                what: "index",
                offset: 0,
                reason: "no such section".into(),
            })
    }

    /// The frame numbered `number` whose record starts at `offset`.
    pub fn read(&mut self, offset: u64, number: u64) -> Result<OwnedFrame, CaptureError> {
        if mapwin::shrank() {
            let now = self.file.metadata().map_or(0, |m| m.len());
            if offset >= now {
                return Err(CaptureError::Corrupt {
                    what: "file",
                    offset: offset as usize,
                    reason: format!("the file shrank to {now} bytes after it was read"),
                });
            }
        }
        let section = self
            .sections
            .partition_point(|s| s.first_frame <= number)
            .saturating_sub(1);
        let mut want = 64 * 1024usize;
        loop {
            let bytes = self.bytes(offset, want)?.to_vec();
            let available = bytes.len();
            let records = self.state(section)?;
            match records.step(&bytes, offset) {
                Item::Frame {
                    ts_ns,
                    len,
                    link,
                    if_speed,
                    interface,
                    data,
                    ..
                } => {
                    return Ok(OwnedFrame {
                        number,
                        ts_ns,
                        len,
                        link,
                        if_speed,
                        interface,
                        offset,
                        data: bytes.get(data).unwrap_or_default().to_vec(),
                    });
                }
                Item::Incomplete { needed }
                    if needed > want && offset + (available as u64) < self.size =>
                {
                    want = needed.min(MAX_RECORD_LEN as usize + 64);
                }
                Item::Failed(e) => return Err(e),
                _ => {
                    return Err(CaptureError::Corrupt {
                        what: "record",
                        offset: offset as usize,
                        reason: "no frame at this offset".into(),
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testfile::{Ng, build, damage_and_cut, item};
    use super::*;
    use proptest::prelude::*;

    /// An interface block of `link` with these options (code, value).
    fn idb(link: u16, options: &[(u16, &[u8])], big: bool) -> Vec<u8> {
        let w16 = |v: u16| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let w32 = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut body = Vec::new();
        body.extend_from_slice(&w16(link));
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(&w32(0));
        for (code, value) in options {
            body.extend_from_slice(&w16(*code));
            body.extend_from_slice(&w16(value.len() as u16));
            body.extend_from_slice(value);
            body.resize(body.len().div_ceil(4) * 4, 0);
        }
        body.extend_from_slice(&[0; 4]);
        let len = 12 + body.len() as u32;
        let mut b = w32(BLOCK_IDB).to_vec();
        b.extend_from_slice(&w32(len));
        b.extend_from_slice(&body);
        b.extend_from_slice(&w32(len));
        b
    }

    #[test]
    fn the_leading_interfaces_say_the_resolution_before_a_frame() {
        let le = Endianness::Little;
        // No if_tsresol: microseconds.
        assert_eq!(leading_resolution_ns(&idb(1, &[], false), le), 1000);
        // if_name first, then if_tsresol 9.
        let ns = idb(1, &[(2, b"eth0!"), (9, &[9])], false);
        assert_eq!(leading_resolution_ns(&ns, le), 1);
        assert_eq!(
            leading_resolution_ns(&idb(1, &[(9, &[9])], true), Endianness::Big),
            1
        );
        // 2^-20 s, and the finest of two interfaces.
        assert_eq!(
            leading_resolution_ns(&idb(1, &[(9, &[0x80 | 20])], false), le),
            953
        );
        let both = [idb(1, &[], false), ns.clone()].concat();
        assert_eq!(leading_resolution_ns(&both, le), 1);
        // ERF records carry their own nanoseconds.
        assert_eq!(leading_resolution_ns(&idb(197, &[], false), le), 1);
        // Not a whole interface block first: not known yet.
        assert_eq!(leading_resolution_ns(&ns[..ns.len() - 1], le), 0);
        assert_eq!(leading_resolution_ns(&[6, 0, 0, 0, 32, 0, 0, 0], le), 0);
        assert_eq!(leading_resolution_ns(&[], le), 0);
    }

    /// Everything a reader says about `file`: each frame (or error) and the
    /// warnings, read with or without the direct EPB path.
    fn read_all(file: &[u8], direct: bool) -> (Vec<String>, Vec<String>, Vec<Section>) {
        let mut r = match FrameReader::new(file) {
            Ok(r) => r,
            Err(e) => return (vec![format!("open: {e}")], Vec::new(), Vec::new()),
        };
        r.records.direct_epb = direct;
        let mut out = Vec::new();
        for f in r.by_ref() {
            out.push(match f {
                Ok(f) => format!(
                    "{} {} {} {} {:?} {:?} {}",
                    f.number, f.ts_ns, f.len, f.caplen, f.link, f.data, f.offset
                ),
                Err(e) => format!("error: {e}"),
            });
        }
        let warnings = r.records.warnings.clone();
        (out, warnings, r.records.sections.clone())
    }

    #[test]
    fn a_plain_epb_is_read_directly() {
        for big in [false, true] {
            let mut n = Ng {
                bytes: Vec::new(),
                big,
            };
            n.epb(1, 5 << 32 | 7, 70, &[9; 61], false);
            let ifaces = [
                Interface {
                    link: Ok(LinkType::Ethernet),
                    speed: None,
                    ns_per_unit: Some(1000),
                },
                Interface {
                    link: Ok(LinkType::RawIp),
                    speed: None,
                    ns_per_unit: Some(1),
                },
            ];
            let order = if big {
                Endianness::Big
            } else {
                Endianness::Little
            };
            let Some(Item::Frame {
                next,
                ts_ns,
                len,
                link,
                if_speed: _,
                interface: _,
                data,
            }) = epb_direct(&n.bytes, order, &ifaces)
            else {
                panic!("not read directly");
            };
            assert_eq!(next, n.bytes.len());
            assert_eq!(
                (ts_ns, len, link, data),
                (5 << 32 | 7, 70, LinkType::RawIp, 28..89)
            );
            // With options, or an interface in binary units: the parser's.
            let mut m = Ng {
                bytes: Vec::new(),
                big,
            };
            m.epb(0, 1, 70, &[9; 61], true);
            assert!(epb_direct(&m.bytes, order, &ifaces).is_none());
            let binary = [Interface {
                link: Ok(LinkType::Ethernet),
                speed: None,
                ns_per_unit: None,
            }; 2];
            assert!(epb_direct(&n.bytes, order, &binary).is_none());
        }
    }

    #[test]
    fn direct_epb_reads_the_sample_captures_like_the_parser() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).expect("captures/") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "pcapng") {
                let bytes = std::fs::read(&path).expect("read");
                let (frames, warnings, sections) = read_all(&bytes, true);
                assert!(frames.len() > 100, "{}", path.display());
                assert_eq!((frames, warnings, sections), read_all(&bytes, false));
                checked += 1;
            }
        }
        assert!(checked >= 3, "pcapng samples: {checked}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Built files (both byte orders, several sections, resolutions and
        /// offsets, unknown interfaces and link types, lengths that do not
        /// agree, options), then damaged: the same frames, errors and
        /// warnings either way.
        #[test]
        fn direct_epb_agrees_with_the_parser(
            items in prop::collection::vec(item(), 1..40),
            damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            cut in prop::option::of(any::<prop::sample::Index>()),
        ) {
            let mut bytes = build(&items);
            damage_and_cut(&mut bytes, &damage, cut);
            prop_assert_eq!(read_all(&bytes, true), read_all(&bytes, false));
        }
    }
}
