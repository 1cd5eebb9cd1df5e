//! Frames read again by their offsets.

use super::stream::io_err;
use super::{Frame, FrameMeta, Item, Records, Section};
use crate::capture::{CaptureError, MAX_RECORD_LEN};

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
    pub meta: FrameMeta,
    pub offset: u64,
    pub data: Vec<u8>,
}

impl OwnedFrame {
    pub fn as_frame(&self) -> Frame<'_> {
        self.meta
            .frame(self.number, &self.data, self.offset as usize)
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
                Item::Frame { meta, data, .. } => {
                    return Ok(OwnedFrame {
                        number,
                        meta,
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
