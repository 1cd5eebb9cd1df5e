//! Writing captures: classic pcap (microsecond or nanosecond timestamps)
//! and pcapng, little-endian. One writer for `gen`'s synthetic captures,
//! `packets -w` (the frames a filter selects, as `tshark -w` writes them)
//! and the TUI's copy of a merged capture.

use std::io::{self, Write};
use std::num::NonZeroU64;

/// The container to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFormat {
    /// Classic pcap, microsecond timestamps (magic `a1b2c3d4`).
    PcapMicros,
    /// Classic pcap, nanosecond timestamps (magic `a1b23c4d`).
    PcapNanos,
    /// pcapng, nanosecond timestamps (`if_tsresol` 9).
    PcapNg,
    /// pcapng, microsecond timestamps (no `if_tsresol`: the default).
    PcapNgMicros,
}

impl OutFormat {
    /// From a file name: `.pcapng` → pcapng, `.nspcap`/`.ns.pcap` → ns
    /// pcap, else pcap.
    pub fn from_path(p: &std::path::Path) -> OutFormat {
        let name = p.to_string_lossy().to_ascii_lowercase();
        if name.ends_with(".pcapng") {
            OutFormat::PcapNg
        } else if name.ends_with(".ns.pcap") || name.ends_with(".nspcap") {
            OutFormat::PcapNanos
        } else {
            OutFormat::PcapMicros
        }
    }

    /// Nanoseconds per timestamp unit of the format.
    pub fn ts_resolution_ns(self) -> u64 {
        match self {
            OutFormat::PcapMicros | OutFormat::PcapNgMicros => 1000,
            OutFormat::PcapNanos | OutFormat::PcapNg => 1,
        }
    }

    /// The same container, in the units of timestamps `resolution_ns`
    /// nanoseconds apart: microseconds when they are whole microseconds,
    /// so that nothing is lost and a copy prints its times as the
    /// original does.
    pub fn for_resolution(self, resolution_ns: u64) -> OutFormat {
        let micros = resolution_ns >= 1000 && resolution_ns.is_multiple_of(1000);
        match self {
            OutFormat::PcapMicros | OutFormat::PcapNanos if micros => OutFormat::PcapMicros,
            OutFormat::PcapMicros | OutFormat::PcapNanos => OutFormat::PcapNanos,
            OutFormat::PcapNg | OutFormat::PcapNgMicros if micros => OutFormat::PcapNgMicros,
            OutFormat::PcapNg | OutFormat::PcapNgMicros => OutFormat::PcapNg,
        }
    }

    /// Whether it is pcapng (an interface block per link type and speed).
    pub fn is_pcapng(self) -> bool {
        matches!(self, OutFormat::PcapNg | OutFormat::PcapNgMicros)
    }
}

/// The snapshot length written (tcpdump's largest).
pub const SNAPLEN: u32 = 262_144;

/// Interfaces beyond this many distinct (link, speed) pairs lose the
/// speed: a file could state a new one on every interface, and each is an
/// interface block written.
const MAX_IFACES: usize = 256;

/// Why a frame could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A classic pcap has one link type, in its header.
    #[error(
        "a pcap file holds frames of one link type, and frames of link types {first} ({first_name}) and {then} ({then_name}) are to be written: write pcapng (-F pcapng, or a name ending in .pcapng)",
        first_name = super::link_type_name(*.first),
        then_name = super::link_type_name(*.then)
    )]
    MixedLinks { first: u32, then: u32 },
}

/// What an interface block of a pcapng states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Iface {
    link: u32,
    speed: Option<NonZeroU64>,
}

/// A streaming capture writer: the file header now, then each frame as
/// written (and in pcapng an interface block before the first frame of
/// each link type and stated speed).
pub struct FrameWriter<W: Write> {
    w: W,
    format: OutFormat,
    /// The link type of a pcap's header.
    pcap_link: u32,
    /// pcapng: the interfaces written so far, by id.
    ifaces: Vec<Iface>,
    frames: u64,
}

impl<W: Write> FrameWriter<W> {
    /// A capture whose frames are of link type `link` (1 Ethernet, 247
    /// InfiniBand, 197 ERF...): a pcap's header says it, and holds no
    /// other; a pcapng names each frame's in its interface.
    pub fn new(mut w: W, format: OutFormat, link: u32) -> io::Result<Self> {
        match format {
            OutFormat::PcapMicros | OutFormat::PcapNanos => {
                let magic: u32 = if format == OutFormat::PcapNanos {
                    0xa1b2_3c4d
                } else {
                    0xa1b2_c3d4
                };
                let mut h = [0u8; 24];
                h[0..4].copy_from_slice(&magic.to_le_bytes());
                h[4..6].copy_from_slice(&2u16.to_le_bytes());
                h[6..8].copy_from_slice(&4u16.to_le_bytes());
                // thiszone and sigfigs: 0.
                h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
                h[20..24].copy_from_slice(&link.to_le_bytes());
                w.write_all(&h)?;
            }
            OutFormat::PcapNg | OutFormat::PcapNgMicros => {
                // Section header: byte-order magic, version 1.0, length
                // unknown (-1), no options.
                let mut h = [0u8; 28];
                h[0..4].copy_from_slice(&0x0A0D_0D0Au32.to_le_bytes());
                h[4..8].copy_from_slice(&28u32.to_le_bytes());
                h[8..12].copy_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
                h[12..14].copy_from_slice(&1u16.to_le_bytes());
                h[16..24].copy_from_slice(&(-1i64).to_le_bytes());
                h[24..28].copy_from_slice(&28u32.to_le_bytes());
                w.write_all(&h)?;
            }
        }
        Ok(FrameWriter {
            w,
            format,
            pcap_link: link,
            ifaces: Vec::new(),
            frames: 0,
        })
    }

    /// Writes one frame of link type `link`, captured at `ts_ns` (since
    /// the epoch): `data` of its `orig_len` bytes (`data.len()` when
    /// larger), on an interface of stated speed `speed` (pcapng's
    /// `if_speed`).
    pub fn write(
        &mut self,
        ts_ns: u64,
        data: &[u8],
        orig_len: u32,
        link: u32,
        speed: Option<NonZeroU64>,
    ) -> Result<(), WriteError> {
        // Every reader caps a record at far less than 4 GiB.
        let caplen = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let orig = orig_len.max(caplen);
        let units = ts_ns / self.format.ts_resolution_ns();
        match self.format {
            OutFormat::PcapMicros | OutFormat::PcapNanos => {
                if link != self.pcap_link {
                    return Err(WriteError::MixedLinks {
                        first: self.pcap_link,
                        then: link,
                    });
                }
                let per_sec = 1_000_000_000 / self.format.ts_resolution_ns();
                let mut h = [0u8; 16];
                // Seconds past 2106 wrap, as in every pcap.
                h[0..4].copy_from_slice(&((units / per_sec) as u32).to_le_bytes());
                h[4..8].copy_from_slice(&((units % per_sec) as u32).to_le_bytes());
                h[8..12].copy_from_slice(&caplen.to_le_bytes());
                h[12..16].copy_from_slice(&orig.to_le_bytes());
                self.w.write_all(&h)?;
                self.w.write_all(data)?;
            }
            OutFormat::PcapNg | OutFormat::PcapNgMicros => {
                let id = self.interface(link, speed)?;
                let pad = (4 - data.len() % 4) % 4;
                let len = u32::try_from(32 + data.len() + pad).unwrap_or(u32::MAX);
                let mut h = [0u8; 28];
                h[0..4].copy_from_slice(&6u32.to_le_bytes());
                h[4..8].copy_from_slice(&len.to_le_bytes());
                h[8..12].copy_from_slice(&id.to_le_bytes());
                h[12..16].copy_from_slice(&((units >> 32) as u32).to_le_bytes());
                h[16..20].copy_from_slice(&(units as u32).to_le_bytes());
                h[20..24].copy_from_slice(&caplen.to_le_bytes());
                h[24..28].copy_from_slice(&orig.to_le_bytes());
                self.w.write_all(&h)?;
                self.w.write_all(data)?;
                self.w.write_all(&[0u8; 3][..pad])?;
                self.w.write_all(&len.to_le_bytes())?;
            }
        }
        self.frames += 1;
        Ok(())
    }

    /// The id of the pcapng interface of `link` and `speed`, its block
    /// written first if it is new.
    fn interface(&mut self, link: u32, speed: Option<NonZeroU64>) -> io::Result<u32> {
        let mut want = Iface { link, speed };
        if self.ifaces.len() >= MAX_IFACES && !self.ifaces.contains(&want) {
            want.speed = None;
        }
        if let Some(id) = self.ifaces.iter().position(|i| *i == want) {
            return Ok(id as u32);
        }
        let mut body = Vec::with_capacity(40);
        body.extend_from_slice(&(link as u16).to_le_bytes());
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(&SNAPLEN.to_le_bytes());
        if self.format == OutFormat::PcapNg {
            body.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0]); // if_tsresol = 9
        }
        if let Some(s) = want.speed {
            body.extend_from_slice(&[8, 0, 8, 0]); // if_speed
            body.extend_from_slice(&s.get().to_le_bytes());
        }
        body.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
        let total = (12 + body.len()) as u32;
        self.w.write_all(&1u32.to_le_bytes())?;
        self.w.write_all(&total.to_le_bytes())?;
        self.w.write_all(&body)?;
        self.w.write_all(&total.to_le_bytes())?;
        self.ifaces.push(want);
        Ok((self.ifaces.len() - 1) as u32)
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.w
    }

    pub fn into_inner(self) -> W {
        self.w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{FrameReader, LinkType};

    /// A frame as read back: time, length, bytes, link type, speed.
    type Read = (u64, u32, Vec<u8>, LinkType, Option<NonZeroU64>);

    fn frames_of(bytes: &[u8]) -> Vec<Read> {
        FrameReader::new(bytes)
            .unwrap()
            .map(|f| {
                let f = f.unwrap();
                (f.ts_ns, f.len, f.data.to_vec(), f.link, f.if_speed)
            })
            .collect()
    }

    #[test]
    fn every_format_reads_back_as_written() {
        let speed = NonZeroU64::new(100_000_000_000);
        for format in [
            OutFormat::PcapMicros,
            OutFormat::PcapNanos,
            OutFormat::PcapNg,
            OutFormat::PcapNgMicros,
        ] {
            let mut w = FrameWriter::new(Vec::new(), format, 1).unwrap();
            let res = format.ts_resolution_ns();
            let t0 = 1_767_225_600_123_456_789u64 / res * res;
            w.write(t0, &[1, 2, 3, 4, 5], 5, 1, None).unwrap();
            // Cut short: 3 of 60 bytes.
            w.write(t0 + 7000, &[9, 9, 9], 60, 1, None).unwrap();
            if format.is_pcapng() {
                w.write(t0 + 9000, &[7; 8], 8, 1, speed).unwrap();
                w.write(t0 + 9000, &[6; 8], 8, 247, None).unwrap();
            }
            assert_eq!(w.frames(), if format.is_pcapng() { 4 } else { 2 });
            let got = frames_of(&w.into_inner());
            assert_eq!(
                got[0],
                (t0, 5, vec![1, 2, 3, 4, 5], LinkType::Ethernet, None)
            );
            assert_eq!(
                got[1],
                (t0 + 7000, 60, vec![9, 9, 9], LinkType::Ethernet, None)
            );
            if format.is_pcapng() {
                assert_eq!(
                    got[2],
                    (t0 + 9000, 8, vec![7; 8], LinkType::Ethernet, speed)
                );
                assert_eq!(got[3].3, LinkType::InfiniBand);
            }
        }
    }

    #[test]
    fn a_pcap_refuses_a_second_link_type() {
        let mut w = FrameWriter::new(Vec::new(), OutFormat::PcapNanos, 1).unwrap();
        w.write(0, &[0; 14], 14, 1, None).unwrap();
        let e = w.write(0, &[0; 14], 14, 247, None).unwrap_err();
        assert!(matches!(
            e,
            WriteError::MixedLinks {
                first: 1,
                then: 247
            }
        ));
        assert!(e.to_string().contains("write pcapng"), "{e}");
        assert_eq!(w.frames(), 1);
    }

    #[test]
    fn resolution_keeps_whole_microseconds_in_microseconds() {
        assert_eq!(
            OutFormat::PcapNg.for_resolution(1000),
            OutFormat::PcapNgMicros
        );
        assert_eq!(OutFormat::PcapNg.for_resolution(1), OutFormat::PcapNg);
        assert_eq!(
            OutFormat::PcapMicros.for_resolution(1),
            OutFormat::PcapNanos
        );
        assert_eq!(
            OutFormat::PcapNanos.for_resolution(1000),
            OutFormat::PcapMicros
        );
        assert_eq!(OutFormat::PcapNg.for_resolution(100), OutFormat::PcapNg);
    }
}
