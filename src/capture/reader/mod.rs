//! Reading the records of a pcap or pcapng file, from a slice of the whole
//! file (memory-mapped) or from a stream through a bounded rolling buffer.
//!
//! Here: a frame, the frame sources' trait, and the format state every
//! reader steps through a file with ([`Records`]; classic pcap's records by
//! [`PcapLayout`], which the chunked reader shares). Beside it: pcapng's
//! blocks and the chunked reader's cursor (`pcapng`), the readers of a
//! file in memory (`slice`), of a stream or a large file a window at a time
//! (`stream`) and of frames again by their offsets (`random`).

use std::num::NonZeroU64;

use pcap_file::pcap::{PcapParseError, PcapParser};
use pcap_file::pcapng::{PcapNgParseError, PcapNgParser};

use super::compress::Compression;
use super::{CaptureError, Format, LinkType, MAX_RECORD_LEN, PcapLayout};
use pcapng::{Interface, leading_resolution_ns, ng_word};

pub(in crate::capture) mod pcapng;
mod random;
mod slice;
mod stream;
#[cfg(test)]
mod tests;

pub(in crate::capture) use pcapng::PCAPNG_SHB;
pub use pcapng::{NgCursor, NgStateId};
pub use random::{OwnedFrame, RandomAccess};
pub use slice::FrameReader;
pub(in crate::capture) use stream::wait_for_input;
pub use stream::{Fd, MAP_WINDOW, StreamReader, shrank_warning};

/// Warnings kept verbatim; later ones are only counted.
pub const MAX_WARNINGS: usize = 20;

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

enum Kind {
    /// Classic pcap: every record is read by the layout the chunked reader
    /// uses too.
    Pcap(PcapLayout),
    PcapNg {
        parser: Box<PcapNgParser>,
        interfaces: Vec<Interface>,
    },
}

/// What a record says of its frame beside the frame's bytes: what every
/// reader puts into a [`Frame`] with its number, bytes and offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameMeta {
    /// Nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// Original length on the wire.
    pub len: u32,
    pub link: LinkType,
    /// The interface's `if_speed` (pcapng), when stated.
    pub if_speed: Option<NonZeroU64>,
    /// The pcapng interface (0 in pcap).
    pub interface: u32,
}

impl FrameMeta {
    /// Frame `number`, whose record starts at byte `offset` of the file
    /// and whose captured bytes are `data`.
    #[inline]
    pub fn frame(self, number: u64, data: &[u8], offset: usize) -> Frame<'_> {
        Frame {
            number,
            ts_ns: self.ts_ns,
            len: self.len,
            caplen: data.len() as u32,
            link: self.link,
            if_speed: self.if_speed,
            interface: self.interface,
            data,
            offset,
        }
    }
}

/// What the next bytes of a capture hold. Ranges and offsets are relative
/// to the bytes read.
#[derive(Debug)]
pub enum Item {
    /// A frame: its metadata, where its data is, where the next record
    /// starts.
    Frame {
        meta: FrameMeta,
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
            Item::Frame { meta, data, next } => Item::Frame {
                meta,
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

/// The warning for a file that ends inside a record.
pub fn cut_warning(offset: u64, needed: usize, have: usize, frames: u64) -> String {
    format!(
        "capture cut mid-record at byte {offset}: record needs {needed} bytes, file has {have}; read {frames} whole frames before it"
    )
}
