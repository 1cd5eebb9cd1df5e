//! Iterating over the records of a pcap or pcapng file.

use pcap_file::Endianness;
use pcap_file::pcap::{PcapParseError, PcapParser, PcapTsResolution};
use pcap_file::pcapng::blocks::block_common::Block;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{PcapNgParseError, PcapNgParser};

use super::{CaptureError, Format, LinkType, MAX_RECORD_LEN, link_type_name};

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

/// One captured frame, borrowed from the file.
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

#[derive(Debug, Clone, Copy)]
struct Interface {
    link: Result<LinkType, u32>,
}

enum Inner {
    Pcap {
        parser: PcapParser,
        link: LinkType,
        nanos: bool,
        big_endian: bool,
    },
    PcapNg {
        parser: Box<PcapNgParser>,
        interfaces: Vec<Interface>,
    },
}

/// Streams frames out of a capture; memory stays constant whatever its size.
pub struct FrameReader<'a> {
    file: &'a [u8],
    pos: usize,
    inner: Inner,
    number: u64,
    warnings: Vec<String>,
    warning_count: u64,
    finished: bool,
    ts_resolution_ns: u64,
    if_speed_bps: Option<u64>,
}

impl<'a> FrameReader<'a> {
    pub fn new(file: &'a [u8]) -> Result<Self, CaptureError> {
        if file.is_empty() {
            return Err(CaptureError::Empty);
        }
        let Some(magic) = file.first_chunk::<4>() else {
            return Err(CaptureError::TooShort(file.len()));
        };
        let magic_be = u32::from_be_bytes(*magic);
        if magic[..2] == [0x1f, 0x8b] {
            return Err(CaptureError::Gzip);
        }
        match magic_be {
            0xA1B2_C3D4 | 0xA1B2_3C4D | 0xD4C3_B2A1 | 0x4D3C_B2A1 => {
                let (rest, parser) = PcapParser::new(file).map_err(|e| match e {
                    PcapParseError::IncompleteBuffer(..) => CaptureError::TooShort(file.len()),
                    other => CaptureError::Corrupt {
                        what: "pcap header",
                        offset: 0,
                        reason: other.to_string(),
                    },
                })?;
                let h = parser.header();
                let number = u32::from(h.datalink);
                let link =
                    LinkType::from_number(number).ok_or(CaptureError::UnsupportedLinkType {
                        number,
                        name: link_type_name(number),
                    })?;
                let nanos = h.ts_resolution == PcapTsResolution::NanoSecond;
                Ok(FrameReader {
                    file,
                    pos: file.len() - rest.len(),
                    inner: Inner::Pcap {
                        parser,
                        link,
                        nanos,
                        big_endian: h.endianness == Endianness::Big,
                    },
                    number: 0,
                    warnings: Vec::new(),
                    warning_count: 0,
                    finished: false,
                    ts_resolution_ns: if nanos { 1 } else { 1000 },
                    if_speed_bps: None,
                })
            }
            PCAPNG_SHB => {
                let (rest, parser) = PcapNgParser::new(file).map_err(|e| match e {
                    PcapNgParseError::IncompleteBuffer(..) => CaptureError::TooShort(file.len()),
                    other => CaptureError::Corrupt {
                        what: "pcapng section header",
                        offset: 0,
                        reason: other.to_string(),
                    },
                })?;
                Ok(FrameReader {
                    file,
                    pos: file.len() - rest.len(),
                    inner: Inner::PcapNg {
                        parser: Box::new(parser),
                        interfaces: Vec::new(),
                    },
                    number: 0,
                    warnings: Vec::new(),
                    warning_count: 0,
                    finished: false,
                    ts_resolution_ns: 0,
                    if_speed_bps: None,
                })
            }
            other => Err(CaptureError::BadMagic(other)),
        }
    }

    pub fn format(&self) -> Format {
        match &self.inner {
            Inner::Pcap {
                nanos, big_endian, ..
            } => Format::Pcap {
                nanos: *nanos,
                big_endian: *big_endian,
            },
            Inner::PcapNg { .. } => Format::PcapNg,
        }
    }

    /// Finest timestamp resolution seen so far, in nanoseconds (pcapng: over
    /// the interfaces described so far; 0 before the first one).
    pub fn ts_resolution_ns(&self) -> u64 {
        self.ts_resolution_ns
    }

    /// Link speed from a pcapng `if_speed` option, when one was present.
    pub fn if_speed_bps(&self) -> Option<u64> {
        self.if_speed_bps
    }

    /// Warnings so far (a cut file, skipped blocks), the first few verbatim.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Number of warnings, including those not kept verbatim.
    pub fn warning_count(&self) -> u64 {
        self.warning_count
    }

    /// Bytes consumed so far (for progress).
    pub fn position(&self) -> usize {
        self.pos
    }

    fn warn(&mut self, msg: String) {
        self.warning_count = self.warning_count.saturating_add(1);
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(msg);
        }
    }

    fn cut(&mut self, offset: usize, needed: usize, have: usize) {
        self.warn(format!(
            "capture cut mid-record at byte {offset}: record needs {needed} bytes, file has {have}; read {} whole frames before it",
            self.number
        ));
        self.finished = true;
    }

    fn next_pcap(&mut self) -> Option<Result<Frame<'a>, CaptureError>> {
        let Inner::Pcap {
            parser,
            link,
            nanos,
            big_endian,
        } = &self.inner
        else {
            return None;
        };
        let (link, nanos, big_endian) = (*link, *nanos, *big_endian);
        let rest = self.file.get(self.pos..).unwrap_or_default();
        if rest.is_empty() {
            self.finished = true;
            return None;
        }
        // Look at the claimed length before the parser does, so a corrupt
        // 4 GiB length is an error and not mistaken for a cut file.
        if let Some(hdr) = rest.first_chunk::<16>() {
            let incl = [hdr[8], hdr[9], hdr[10], hdr[11]];
            let incl = if big_endian {
                u32::from_be_bytes(incl)
            } else {
                u32::from_le_bytes(incl)
            };
            if incl > MAX_RECORD_LEN {
                self.finished = true;
                return Some(Err(CaptureError::AbsurdLength {
                    frame: self.number.saturating_add(1),
                    offset: self.pos,
                    len: u64::from(incl),
                }));
            }
        }
        match parser.next_raw_packet(rest) {
            Ok((after, raw)) => {
                let offset = self.pos;
                self.pos = self.file.len() - after.len();
                self.number += 1;
                let data: &'a [u8] = match raw.data {
                    std::borrow::Cow::Borrowed(d) => d,
                    std::borrow::Cow::Owned(_) => &[],
                };
                let frac = u64::from(raw.ts_frac);
                let ts_ns = u64::from(raw.ts_sec)
                    .saturating_mul(1_000_000_000)
                    .saturating_add(if nanos {
                        frac
                    } else {
                        frac.saturating_mul(1000)
                    });
                Some(Ok(Frame {
                    number: self.number,
                    ts_ns,
                    len: raw.orig_len.max(raw.incl_len),
                    caplen: raw.incl_len,
                    link,
                    data,
                    offset,
                }))
            }
            Err(PcapParseError::IncompleteBuffer(needed, have)) => {
                let at = self.pos;
                self.cut(at, needed, have);
                None
            }
            Err(e) => {
                self.finished = true;
                Some(Err(CaptureError::Corrupt {
                    what: "pcap record",
                    offset: self.pos,
                    reason: e.to_string(),
                }))
            }
        }
    }

    fn block_len_at(&self, at: usize) -> Option<u32> {
        let Inner::PcapNg { parser, .. } = &self.inner else {
            return None;
        };
        let b = self.file.get(at.checked_add(4)?..at.checked_add(8)?)?;
        let b: [u8; 4] = b.try_into().ok()?;
        Some(match parser.state().endianness() {
            Endianness::Big => u32::from_be_bytes(b),
            Endianness::Little => u32::from_le_bytes(b),
        })
    }

    fn next_pcapng(&mut self) -> Option<Result<Frame<'a>, CaptureError>> {
        loop {
            let rest = self.file.get(self.pos..).unwrap_or_default();
            if rest.is_empty() {
                self.finished = true;
                return None;
            }
            let at = self.pos;
            let Inner::PcapNg { parser, .. } = &mut self.inner else {
                return None;
            };
            let result = parser.next_raw_block(rest);
            let (after, raw) = match result {
                Ok(ok) => ok,
                Err(PcapNgParseError::IncompleteBuffer(needed, have)) => {
                    let claimed = self.block_len_at(at).unwrap_or(0);
                    if claimed > MAX_RECORD_LEN {
                        self.finished = true;
                        return Some(Err(CaptureError::AbsurdLength {
                            frame: self.number.saturating_add(1),
                            offset: at,
                            len: u64::from(claimed),
                        }));
                    }
                    self.cut(at, needed, have);
                    return None;
                }
                Err(e) => {
                    // A block whose framing is sane can be stepped over; one
                    // whose length is garbage leaves nothing to resync on.
                    let len = self.block_len_at(at).unwrap_or(0) as usize;
                    if len >= 12 && len.is_multiple_of(4) && len <= rest.len() {
                        self.warn(format!("skipped corrupt pcapng block at byte {at}: {e}"));
                        self.pos = at.saturating_add(len);
                        continue;
                    }
                    self.finished = true;
                    return Some(Err(CaptureError::Corrupt {
                        what: "pcapng block",
                        offset: at,
                        reason: e.to_string(),
                    }));
                }
            };
            self.pos = self.file.len() - after.len();
            let Inner::PcapNg { parser, interfaces } = &mut self.inner else {
                return None;
            };
            match raw.type_ {
                PCAPNG_SHB => interfaces.clear(),
                BLOCK_IDB => {
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
                            continue;
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
                        _ => continue,
                    };
                    let data: &'a [u8] = match data {
                        std::borrow::Cow::Borrowed(d) => d,
                        std::borrow::Cow::Owned(_) => &[],
                    };
                    let Some(info) = interfaces.get(iface as usize).copied() else {
                        self.warn(format!(
                            "skipped packet block at byte {at}: unknown interface {iface}"
                        ));
                        continue;
                    };
                    let link = match info.link {
                        Ok(l) => l,
                        Err(number) => {
                            self.finished = true;
                            return Some(Err(CaptureError::UnsupportedLinkType {
                                number,
                                name: link_type_name(number),
                            }));
                        }
                    };
                    self.number += 1;
                    let caplen = u32::try_from(data.len()).unwrap_or(u32::MAX);
                    return Some(Ok(Frame {
                        number: self.number,
                        ts_ns: u64::try_from(ts.as_nanos()).unwrap_or(u64::MAX),
                        len: orig.max(caplen),
                        caplen,
                        link,
                        data,
                        offset: at,
                    }));
                }
                BLOCK_NRB | BLOCK_ISB | BLOCK_JOURNAL | BLOCK_DSB | BLOCK_CUSTOM
                | BLOCK_CUSTOM_NOCOPY => {}
                other => self.warn(format!(
                    "skipped unknown pcapng block type {other:#x} at byte {at}"
                )),
            }
        }
    }
}

impl<'a> Iterator for FrameReader<'a> {
    type Item = Result<Frame<'a>, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        match self.inner {
            Inner::Pcap { .. } => self.next_pcap(),
            Inner::PcapNg { .. } => self.next_pcapng(),
        }
    }
}
