//! Frames out of a stream or a large file, through a bounded window.

/// Rolling buffer of a stream: large enough that refills are rare.
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Frame, FrameSource, Item, Records, Section};
use crate::capture::compress::{Compression, Decompressed};
use crate::capture::{CaptureError, Format, MAX_RECORD_LEN, PCAP_HEADER_LEN, PREFETCH_AHEAD};

const STREAM_CHUNK: usize = 4 << 20;

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
pub(in crate::capture) fn wait_for_input(fd: Option<&Fd>) -> bool {
    #[cfg(target_os = "linux")]
    if let Some(fd) = fd {
        while !crate::capture::interrupted() {
            if input_ready(fd, Some(&WAKE_EVERY)) != Some(false) {
                return true;
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
    !crate::capture::interrupted()
}

/// Reads into `buf[*end..]` until `*end` reaches `want` (or the buffer's
/// end), the input ends or the user interrupts (see
/// [`crate::capture::stop_streams_at_interrupt`]). Reads what each read gives
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

pub(super) fn io_err(e: std::io::Error) -> CaptureError {
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
                Err(CaptureError::TooShort(_)) if crate::capture::interrupted() => {
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
                if crate::capture::interrupted() {
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
                if !more && !*eof && crate::capture::interrupted() {
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
                Item::Frame { meta, data, next } => {
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
                    return Some(Ok(meta.frame(number, data, at as usize)));
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
