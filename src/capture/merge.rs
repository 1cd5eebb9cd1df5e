//! Several captures read as one, frames in timestamp order (as `mergecap`
//! merges): a sender-side and a receiver-side capture of one link, the
//! per-port captures of one switch. Each input is read as a stream (plain
//! or compressed); the frame at the head of each waits in a buffer of its
//! own, and a heap picks the earliest. Memory: one frame and one read
//! window per input.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::num::NonZeroU64;
use std::path::PathBuf;

use super::reader::{Frame, FrameSource, Section, StreamReader, warning_list};
use super::{CaptureError, Format, LinkType};

/// A frame copied out of its reader while it waits its turn.
struct Waiting {
    ts_ns: u64,
    len: u32,
    link: LinkType,
    if_speed: Option<NonZeroU64>,
    interface: u32,
    offset: usize,
    data: Vec<u8>,
}

struct Input {
    name: String,
    reader: StreamReader,
    /// The next frame of this input, once read.
    head: Option<Waiting>,
    done: bool,
}

/// Frames of several captures in timestamp order; ties go to the input
/// named first, and each input's own order is kept.
pub struct MergedSource {
    inputs: Vec<Input>,
    /// (timestamp, input) of every waiting frame.
    queue: BinaryHeap<Reverse<(u64, usize)>>,
    /// The input whose frame was handed out last: read on at the next call.
    last: Option<usize>,
    started: bool,
    number: u64,
    warnings: Vec<String>,
    warning_count: u64,
    sections: Vec<Section>,
}

/// Read window of each input when many are merged (one per input is
/// mapped at a time).
pub const MERGE_WINDOW: usize = 4 << 20;

impl MergedSource {
    /// Opens every path (plain or compressed; `-` for standard input at
    /// most once). The first that cannot be read is the error, naming it.
    pub fn open(paths: &[PathBuf]) -> Result<MergedSource, CaptureError> {
        let window = if paths.len() > 4 {
            MERGE_WINDOW
        } else {
            super::reader::MAP_WINDOW
        };
        let mut inputs = Vec::with_capacity(paths.len());
        for p in paths {
            let name = p.display().to_string();
            let reader = super::open_stream_window(p, window).map_err(|e| CaptureError::In {
                file: name.clone(),
                source: Box::new(e),
            })?;
            inputs.push(Input {
                name,
                reader,
                head: None,
                done: false,
            });
        }
        Ok(MergedSource {
            inputs,
            queue: BinaryHeap::new(),
            last: None,
            started: false,
            number: 0,
            warnings: Vec::new(),
            warning_count: 0,
            sections: vec![Section {
                first_frame: 1,
                ..Section::default()
            }],
        })
    }

    /// The names of the inputs, in the order given.
    pub fn names(&self) -> Vec<String> {
        self.inputs.iter().map(|i| i.name.clone()).collect()
    }

    /// Reads input `i`'s next frame into its buffer and queues it.
    fn advance(&mut self, i: usize) -> Result<(), CaptureError> {
        let Some(input) = self.inputs.get_mut(i) else {
            return Ok(());
        };
        if input.done {
            return Ok(());
        }
        let mut buf = input.head.take().map(|w| w.data).unwrap_or_default();
        match input.reader.next_frame() {
            Some(Ok(f)) => {
                buf.clear();
                buf.extend_from_slice(f.data);
                let ts_ns = f.ts_ns;
                input.head = Some(Waiting {
                    ts_ns,
                    len: f.len,
                    link: f.link,
                    if_speed: f.if_speed,
                    interface: f.interface,
                    offset: f.offset,
                    data: buf,
                });
                self.queue.push(Reverse((ts_ns, i)));
                Ok(())
            }
            Some(Err(e)) => {
                input.done = true;
                Err(CaptureError::In {
                    file: input.name.clone(),
                    source: Box::new(e),
                })
            }
            None => {
                input.done = true;
                let (kept, count) = (input.reader.warnings(), input.reader.warning_count());
                for w in warning_list(kept, count) {
                    self.warning_count += 1;
                    if self.warnings.len() < super::MAX_WARNINGS {
                        self.warnings.push(format!("{}: {w}", input.name));
                    }
                }
                Ok(())
            }
        }
    }
}

impl FrameSource for MergedSource {
    fn next_frame(&mut self) -> Option<Result<Frame<'_>, CaptureError>> {
        if !self.started {
            self.started = true;
            for i in 0..self.inputs.len() {
                if let Err(e) = self.advance(i) {
                    return Some(Err(e));
                }
            }
        }
        if let Some(i) = self.last.take()
            && let Err(e) = self.advance(i)
        {
            return Some(Err(e));
        }
        let Reverse((_, i)) = self.queue.pop()?;
        self.last = Some(i);
        self.number += 1;
        let number = self.number;
        let w = self.inputs.get(i)?.head.as_ref()?;
        Some(Ok(Frame {
            number,
            ts_ns: w.ts_ns,
            len: w.len,
            caplen: w.data.len() as u32,
            link: w.link,
            if_speed: w.if_speed,
            interface: w.interface,
            data: &w.data,
            offset: w.offset,
        }))
    }

    fn format(&self) -> Format {
        self.inputs
            .first()
            .map_or(Format::PcapNg, |i| i.reader.format())
    }

    /// The coarsest of the inputs': merged timestamps are only as good as
    /// that.
    fn ts_resolution_ns(&self) -> u64 {
        self.inputs
            .iter()
            .map(|i| i.reader.ts_resolution_ns())
            .max()
            .unwrap_or(0)
    }

    fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn warning_count(&self) -> u64 {
        self.warning_count
    }

    fn progress(&self) -> (u64, Option<u64>) {
        let mut done = 0u64;
        let mut total = Some(0u64);
        for i in &self.inputs {
            let (d, t) = i.reader.progress();
            done = done.saturating_add(d);
            total = total.zip(t).map(|(a, b)| a.saturating_add(b));
        }
        (done, total)
    }

    /// One section, of no file: a merged capture is read again from a
    /// copy (the TUI), never by the inputs' offsets.
    fn sections(&self) -> &[Section] {
        &self.sections
    }

    fn description(&self) -> String {
        let mut kinds: Vec<String> = Vec::new();
        for i in &self.inputs {
            let d = i.reader.description();
            if !kinds.contains(&d) {
                kinds.push(d);
            }
        }
        format!("merged {}", kinds.join(" + "))
    }
}

/// Writes the frames of `source` as a pcapng file (nanosecond timestamps,
/// an interface per link type and stated speed met) to `out`; `progress`
/// hears the bytes read of the inputs (and their total, 0 if unknown) now
/// and then. A merged capture is read again
/// by offset (the TUI) through such a copy.
pub fn write_pcapng(
    source: &mut dyn FrameSource,
    out: &mut dyn std::io::Write,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<u64, CaptureError> {
    use super::write::{FrameWriter, OutFormat, WriteError};
    let io = |e: std::io::Error| CaptureError::Io {
        path: "<copy>".into(),
        source: e,
    };
    let buffered = std::io::BufWriter::with_capacity(1 << 20, out);
    let mut w = FrameWriter::new(buffered, OutFormat::PcapNg, 1).map_err(io)?;
    while let Some(frame) = source.next_frame() {
        let f = frame?;
        match w.write(f.ts_ns, f.data, f.len, f.link.number(), f.if_speed) {
            Ok(()) => {}
            Err(WriteError::Io(e)) => return Err(io(e)),
            // pcapng holds every link type.
            Err(e @ WriteError::MixedLinks { .. }) => return Err(io(std::io::Error::other(e))),
        }
        if w.frames().is_multiple_of(4096) {
            let (done, total) = source.progress();
            progress(done, total.unwrap_or(0));
        }
    }
    w.flush().map_err(io)?;
    Ok(w.frames())
}
