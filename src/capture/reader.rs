//! Reading the records of a pcap or pcapng file, from a slice of the whole
//! file (memory-mapped) or from a stream through a bounded rolling buffer.

use std::io::Read;

use pcap_file::Endianness;
use pcap_file::pcap::{PcapParseError, PcapParser};
use pcap_file::pcapng::blocks::block_common::Block;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{PcapNgParseError, PcapNgParser};

use super::{
    CaptureError, Format, LinkType, MAX_RECORD_LEN, PREFETCH_AHEAD, PcapLayout, Record,
    link_type_name,
};

const PCAPNG_SHB: u32 = 0x0A0D_0D0A;
const BLOCK_IDB: u32 = 1;
const BLOCK_PB: u32 = 2;
const BLOCK_SPB: u32 = 3;
const BLOCK_NRB: u32 = 4;
const BLOCK_ISB: u32 = 5;
const BLOCK_EPB: u32 = 6;
const BLOCK_JOURNAL: u32 = 9;
const BLOCK_DSB: u32 = 0x0A;
const BLOCK_CUSTOM: u32 = 0x0BAD;
const BLOCK_CUSTOM_NOCOPY: u32 = 0x4000_0BAD;
/// Warnings kept verbatim; later ones are only counted.
const MAX_WARNINGS: usize = 20;
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
    pub data: &'a [u8],
    /// Byte offset of the record in the file.
    pub offset: usize,
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
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    link: Result<LinkType, u32>,
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

/// What the next bytes hold.
enum Step {
    /// A frame: bytes consumed, its metadata, where its data is in the input.
    Frame {
        consumed: usize,
        ts_ns: u64,
        len: u32,
        link: LinkType,
        data: std::ops::Range<usize>,
    },
    /// A block that is not a frame (or a corrupt one skipped with a warning).
    Skip(usize),
    /// The record continues past the end of the input.
    Incomplete {
        needed: usize,
    },
    Error(CaptureError),
}

/// Where a pcapng section's header and interface blocks are, so a frame of
/// that section can be decoded again later from its offset alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Section {
    /// Number of the first frame read after this section began.
    pub first_frame: u64,
    pub shb_offset: u64,
    pub idb_offsets: Vec<u64>,
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
        if magic[..2] == [0x1f, 0x8b] {
            return Err(CaptureError::Gzip);
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
                    records(kind, if layout.nanos { 1 } else { 1000 }),
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
                let kind = Kind::PcapNg {
                    parser: Box::new(parser),
                    interfaces: Vec::new(),
                };
                Ok((records(kind, 0), head.len() - rest.len()))
            }
            other => Err(CaptureError::BadMagic(other)),
        }
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
    fn step(&mut self, input: &[u8], at: u64) -> Step {
        match &mut self.kind {
            Kind::Pcap(layout) => match layout.record(input, 0) {
                Record::Frame {
                    ts_ns,
                    len,
                    data,
                    next,
                } => Step::Frame {
                    consumed: next,
                    ts_ns,
                    len,
                    link: layout.link,
                    data,
                },
                Record::Incomplete { needed } => Step::Incomplete { needed },
                // Checked before the data is, so a corrupt 4 GiB length is
                // an error and not taken for a cut.
                Record::Absurd { len } => Step::Error(CaptureError::AbsurdLength {
                    frame: self.number.saturating_add(1),
                    offset: at as usize,
                    len: u64::from(len),
                }),
            },
            Kind::PcapNg { .. } => self.step_pcapng(input, at),
        }
    }

    fn block_len(&self, input: &[u8]) -> Option<u32> {
        let Kind::PcapNg { parser, .. } = &self.kind else {
            return None;
        };
        let b: [u8; 4] = input.get(4..8)?.try_into().ok()?;
        Some(match parser.state().endianness() {
            Endianness::Big => u32::from_be_bytes(b),
            Endianness::Little => u32::from_le_bytes(b),
        })
    }

    fn step_pcapng(&mut self, input: &[u8], at: u64) -> Step {
        let claimed = self.block_len(input);
        let Kind::PcapNg { parser, .. } = &mut self.kind else {
            return Step::Skip(input.len());
        };
        let (after, raw) = match parser.next_raw_block(input) {
            Ok(ok) => ok,
            Err(PcapNgParseError::IncompleteBuffer(needed, _)) => {
                let claimed = claimed.unwrap_or(0);
                if claimed > MAX_RECORD_LEN {
                    return Step::Error(CaptureError::AbsurdLength {
                        frame: self.number.saturating_add(1),
                        offset: at as usize,
                        len: u64::from(claimed),
                    });
                }
                return Step::Incomplete {
                    needed: needed.max(claimed as usize).max(12),
                };
            }
            Err(e) => {
                // A block whose framing is sane can be stepped over; one
                // whose length is garbage leaves nothing to resync on.
                let len = claimed.unwrap_or(0) as usize;
                if len >= 12 && len.is_multiple_of(4) && len <= input.len() {
                    self.warn(format!("skipped corrupt pcapng block at byte {at}: {e}"));
                    return Step::Skip(len);
                }
                if len > input.len() && len <= MAX_RECORD_LEN as usize {
                    return Step::Incomplete { needed: len };
                }
                return Step::Error(CaptureError::Corrupt {
                    what: "pcapng block",
                    offset: at as usize,
                    reason: e.to_string(),
                });
            }
        };
        let consumed = input.len() - after.len();
        let Kind::PcapNg { parser, interfaces } = &mut self.kind else {
            return Step::Skip(consumed);
        };
        match raw.type_ {
            PCAPNG_SHB => {
                interfaces.clear();
                self.sections.push(Section {
                    first_frame: self.number.saturating_add(1),
                    shb_offset: at,
                    idb_offsets: Vec::new(),
                });
            }
            BLOCK_IDB => {
                if let Some(s) = self.sections.last_mut() {
                    s.idb_offsets.push(at);
                }
                if let Some(idb) = parser.interfaces().last() {
                    let number = u32::from(idb.linktype);
                    let res = idb.ts_resolution();
                    let ts_resolution_ns = if res.is_bin() {
                        (1_000_000_000u64 >> res.resolution().min(63)).max(1)
                    } else {
                        10u64.pow(9u32.saturating_sub(u32::from(res.resolution())))
                    };
                    for opt in &idb.options {
                        if let InterfaceDescriptionOption::IfSpeed(s) = opt {
                            self.if_speed_bps = Some(*s);
                        }
                    }
                    interfaces.push(Interface {
                        link: LinkType::from_number(number).ok_or(number),
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
                        return Step::Skip(consumed);
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
                    _ => return Step::Skip(consumed),
                };
                let data = borrowed(data);
                let Some(info) = interfaces.get(iface as usize).copied() else {
                    self.warn(format!(
                        "skipped packet block at byte {at}: unknown interface {iface}"
                    ));
                    return Step::Skip(consumed);
                };
                let link = match info.link {
                    Ok(l) => l,
                    Err(number) => {
                        return Step::Error(CaptureError::UnsupportedLinkType {
                            number,
                            name: link_type_name(number),
                        });
                    }
                };
                let caplen = u32::try_from(data.len()).unwrap_or(u32::MAX);
                let start = data.as_ptr() as usize - input.as_ptr() as usize;
                return Step::Frame {
                    consumed,
                    ts_ns: u64::try_from(ts.as_nanos()).unwrap_or(u64::MAX),
                    len: orig.max(caplen),
                    link,
                    data: start..start + data.len(),
                };
            }
            BLOCK_NRB | BLOCK_ISB | BLOCK_JOURNAL | BLOCK_DSB | BLOCK_CUSTOM
            | BLOCK_CUSTOM_NOCOPY => {}
            other => self.warn(format!(
                "skipped unknown pcapng block type {other:#x} at byte {at}"
            )),
        }
        Step::Skip(consumed)
    }
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
                Step::Frame {
                    consumed,
                    ts_ns,
                    len,
                    link,
                    data,
                } => {
                    self.pos += consumed;
                    self.records.number += 1;
                    let data = input.get(data).unwrap_or_default();
                    return Some(Ok(Frame {
                        number: self.records.number,
                        ts_ns,
                        len,
                        caplen: data.len() as u32,
                        link,
                        data,
                        offset: at,
                    }));
                }
                Step::Skip(n) => self.pos += n.max(1),
                Step::Incomplete { needed } => {
                    self.records.cut(at as u64, needed, input.len());
                    self.finished = true;
                    return None;
                }
                Step::Error(e) => {
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
}

/// Window mapped at a time for regular files.
pub const MAP_WINDOW: usize = 16 << 20;

/// Reads into `buf[*end..]` until it is full or the input ends.
fn fill(
    input: &mut dyn Read,
    buf: &mut [u8],
    end: &mut usize,
    eof: &mut bool,
) -> Result<(), CaptureError> {
    while *end < buf.len() {
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
        Self::with_buffer(input, total, STREAM_CHUNK)
    }

    /// With a buffer of `chunk` bytes (it grows for larger records).
    pub fn with_buffer(
        mut input: Box<dyn Read>,
        total: Option<u64>,
        chunk: usize,
    ) -> Result<Self, CaptureError> {
        let mut buf = vec![0u8; chunk.max(64)];
        let mut end = 0;
        let mut eof = false;
        fill(&mut *input, &mut buf, &mut end, &mut eof)?;
        let (records, start) = Records::new(&buf[..end])?;
        Ok(StreamReader {
            store: Store::Buffered {
                input,
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
        })
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
                buf,
                end,
                eof,
            } => {
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
                fill(&mut **input, buf, end, eof)?;
                Ok(*end > before)
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
                Step::Frame {
                    consumed,
                    ts_ns,
                    len,
                    link,
                    data,
                } => {
                    self.start += consumed;
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
                        data,
                        offset: at as usize,
                    }));
                }
                Step::Skip(n) => self.start = (self.start + n.max(1)).min(self.bytes().len()),
                Step::Incomplete { needed } => match self.refill(needed) {
                    Ok(true) => {}
                    Ok(false) => {
                        let have = self.bytes().len() - self.start;
                        self.records.cut(at, needed, have);
                        self.finished = true;
                        return None;
                    }
                    Err(e) => {
                        self.finished = true;
                        return Some(Err(e));
                    }
                },
                Step::Error(e) => {
                    self.finished = true;
                    return Some(Err(e));
                }
            }
        }
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
        (self.base + self.start as u64, self.total)
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
            let (mut records, _) = Records::new(&head)?;
            for idb in &sec.idb_offsets {
                let bytes = self.bytes(*idb, 64 * 1024)?.to_vec();
                let _ = records.step(&bytes, *idb);
            }
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
                Step::Frame {
                    ts_ns,
                    len,
                    link,
                    data,
                    ..
                } => {
                    return Ok(OwnedFrame {
                        number,
                        ts_ns,
                        len,
                        link,
                        offset,
                        data: bytes.get(data).unwrap_or_default().to_vec(),
                    });
                }
                Step::Incomplete { needed }
                    if needed > want && offset + (available as u64) < self.size =>
                {
                    want = needed.min(MAX_RECORD_LEN as usize + 64);
                }
                Step::Error(e) => return Err(e),
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
