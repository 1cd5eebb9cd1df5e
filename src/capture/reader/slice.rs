//! Frames out of a capture held whole in memory.

use super::{Frame, FrameSource, Item, Kind, Records, Section};
use crate::capture::{CaptureError, Format};

/// Frames out of a capture held in memory (a memory-mapped file): zero
/// copy, and an [`Iterator`] whose frames live as long as the file.
pub struct FrameReader<'a> {
    file: &'a [u8],
    pos: usize,
    pub(super) records: Records,
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
                Item::Frame { meta, data, next } => {
                    self.pos += next;
                    self.records.number += 1;
                    let data = input.get(data).unwrap_or_default();
                    return Some(Ok(meta.frame(self.records.number, data, at)));
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
