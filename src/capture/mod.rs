//! Capture files to frames: pcap (µs and ns, either byte order) and pcapng
//! (several sections and interfaces), memory-mapped, timestamps as u64
//! nanoseconds. Knows no protocol beyond the link type number.

mod chunks;
pub mod compress;
pub mod merge;
mod reader;
#[cfg(test)]
pub(crate) mod testfile;
pub mod write;

pub use chunks::{PCAP_HEADER_LEN, PcapLayout, RECORD_HEADER_LEN, Record};
pub use reader::{
    Frame, FrameMeta, FrameReader, FrameSource, Item, MAP_WINDOW, MAX_WARNINGS, NgCursor,
    NgStateId, OwnedFrame, RandomAccess, Section, StreamReader, cut_warning, shrank_warning,
    warning_list,
};

use std::fmt;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

/// Largest record accepted. tcpdump's maximum snaplen is 262 144; anything
/// much larger is a corrupt length field, not a frame.
pub const MAX_RECORD_LEN: u32 = 16 * 1024 * 1024;
/// How far past the frame being read its successors' bytes are hinted into
/// the cache. Reading a capture is memory-bound: decoding touches a frame's
/// headers and its last bytes (the duplicate fingerprint) and, with the
/// ICRC checked, everything between; hinted a few KiB ahead, those loads are
/// in flight before they are needed (measured best at 2-4 KiB).
pub const PREFETCH_AHEAD: usize = 4 << 10;

/// Link-layer header types this tool decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// DLT_EN10MB (1).
    Ethernet,
    /// Linux cooked capture v1 (113).
    LinuxSll,
    /// Linux cooked capture v2 (276).
    LinuxSll2,
    /// Raw IPv4 or IPv6 (101, or 12 on some systems).
    RawIp,
    /// Raw IPv4 (228).
    Ipv4,
    /// Raw IPv6 (229).
    Ipv6,
    /// Native InfiniBand, from the LRH (247).
    InfiniBand,
    /// Endace ERF records (197): a record header, then Ethernet, native
    /// InfiniBand or IP by the record's type (ibdump on InfiniBand ports).
    Erf,
}

impl LinkType {
    pub fn from_number(n: u32) -> Option<LinkType> {
        Some(match n {
            1 => LinkType::Ethernet,
            113 => LinkType::LinuxSll,
            276 => LinkType::LinuxSll2,
            101 | 12 | 14 => LinkType::RawIp,
            228 => LinkType::Ipv4,
            229 => LinkType::Ipv6,
            247 => LinkType::InfiniBand,
            197 => LinkType::Erf,
            _ => return None,
        })
    }

    pub fn number(self) -> u32 {
        match self {
            LinkType::Ethernet => 1,
            LinkType::LinuxSll => 113,
            LinkType::LinuxSll2 => 276,
            LinkType::RawIp => 101,
            LinkType::Ipv4 => 228,
            LinkType::Ipv6 => 229,
            LinkType::InfiniBand => 247,
            LinkType::Erf => 197,
        }
    }
}

/// Names of common link types, for error messages.
pub fn link_type_name(n: u32) -> &'static str {
    match n {
        0 => "BSD loopback",
        1 => "Ethernet",
        105 => "IEEE 802.11",
        113 => "Linux cooked v1",
        127 => "802.11 radiotap",
        147..=162 => "user-defined",
        197 => "Endace ERF",
        220 => "USB Linux mmapped",
        247 => "InfiniBand",
        276 => "Linux cooked v2",
        _ => "unknown",
    }
}

/// The container format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pcap { nanos: bool, big_endian: bool },
    PcapNg,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Format::Pcap { nanos: false, .. } => f.write_str("pcap"),
            Format::Pcap { nanos: true, .. } => f.write_str("pcap (ns)"),
            Format::PcapNg => f.write_str("pcapng"),
        }
    }
}

/// Why a capture cannot be read. All of these end the run with exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("empty file: not a capture")]
    Empty,
    #[error("file too short for a capture header ({0} bytes)")]
    TooShort(usize),
    #[error("interrupted (Ctrl-C) before the capture's header came")]
    Interrupted,
    #[error("{}", compressed_message(*.0))]
    Compressed(compress::Compression),
    #[error("not a pcap or pcapng file (magic {0:#010x})")]
    BadMagic(u32),
    #[error(
        "unsupported link type {number} ({name}): roce-dissect reads Ethernet (1), Linux cooked SLL (113) and SLL2 (276), raw IP (101, 228, 229), InfiniBand (247) and ERF (197)"
    )]
    UnsupportedLinkType { number: u32, name: &'static str },
    #[error(
        "record {frame} at byte {offset} claims {len} bytes (limit {MAX_RECORD_LEN}): corrupt capture"
    )]
    AbsurdLength { frame: u64, offset: usize, len: u64 },
    #[error("corrupt {what} at byte {offset}: {reason}")]
    Corrupt {
        what: &'static str,
        offset: usize,
        reason: String,
    },
    /// An error of one of several inputs (`--merge`), naming it.
    #[error("{file}: {source}")]
    In {
        file: String,
        source: Box<CaptureError>,
    },
}

fn compressed_message(c: compress::Compression) -> String {
    if c.is_read() {
        format!(
            "{} data where the capture should start: compressed twice? (decompress it once first)",
            c.name()
        )
    } else {
        format!(
            "compressed capture ({}): roce-dissect reads gzip, zstd and xz; decompress it first",
            c.name()
        )
    }
}

enum Bytes {
    Mapped(filebuffer::FileBuffer),
    Owned(Vec<u8>),
}

/// An opened capture file: the whole file as one byte slice (mapped, not
/// read), from which [`FrameReader`]s borrow frames without copying.
pub struct CaptureFile {
    bytes: Bytes,
    path: PathBuf,
}

impl CaptureFile {
    /// Maps `path` (or reads standard input when `path` is `-`).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CaptureError> {
        let path = path.as_ref().to_path_buf();
        let io = |source| CaptureError::Io {
            path: path.clone(),
            source,
        };
        let bytes = if path.as_os_str() == "-" {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut widened_stdin().lock(), &mut v).map_err(io)?;
            Bytes::Owned(v)
        } else {
            let meta = std::fs::metadata(&path).map_err(io)?;
            if meta.is_dir() {
                return Err(io(std::io::Error::other("is a directory")));
            }
            Bytes::Mapped(filebuffer::FileBuffer::open(&path).map_err(io)?)
        };
        Ok(CaptureFile { bytes, path })
    }

    /// A capture held in memory (tests, fuzzing, the generator).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        CaptureFile {
            bytes: Bytes::Owned(bytes),
            path: PathBuf::from("<memory>"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }

    /// Starts reading frames; fails on a bad header.
    pub fn frames(&self) -> Result<FrameReader<'_>, CaptureError> {
        FrameReader::new(self.bytes())
    }
}

/// Opens `path` (or standard input for `-`) for one pass: a mapped window
/// (or, for standard input, a pipe or a compressed file, a buffer) that
/// moves along, so memory stays flat on captures of any size. A gzip, zstd
/// or xz capture (known by its magic, not its name) is decompressed as it
/// is read.
pub fn open_stream(path: impl AsRef<Path>) -> Result<StreamReader, CaptureError> {
    open_stream_window(path, reader::MAP_WINDOW)
}

/// [`open_stream`], mapping regular files `window` bytes at a time.
pub fn open_stream_window(
    path: impl AsRef<Path>,
    window: usize,
) -> Result<StreamReader, CaptureError> {
    let path = path.as_ref();
    let io = |source| CaptureError::Io {
        path: path.to_path_buf(),
        source,
    };
    let named = |e| match e {
        CaptureError::Io { source, .. } => io(source),
        other => other,
    };
    if path.as_os_str() == "-" {
        let stdin = widened_stdin();
        watch_interrupt(&stdin);
        // Read through the descriptor itself, not `Stdin`'s buffer: what
        // that buffer held would be invisible to the wait for input.
        return match stdin.as_fd().try_clone_to_owned() {
            Ok(fd) => stream_of_file(std::fs::File::from(fd)),
            Err(_) => stream_of(Box::new(stdin), None, None),
        };
    }
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        return Err(io(std::io::Error::other("is a directory")));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    if !meta.is_file() {
        // A named pipe, `<(zcat f)`, `/dev/stdin` on a pipe, a character
        // device: read as a stream, like `-`.
        widen_pipe(&file);
        watch_interrupt(&file);
        return stream_of_file(file).map_err(named);
    }
    match compression_of(&file).map_err(io)? {
        Some(c) if c.is_read() => {
            StreamReader::decompressing(c, Box::new(file), Some(meta.len())).map_err(named)
        }
        Some(c) => Err(CaptureError::Compressed(c)),
        None => StreamReader::mapped(file, window).map_err(named),
    }
}

/// The compression of a regular file, from its first bytes.
pub fn compression_of(file: &std::fs::File) -> std::io::Result<Option<compress::Compression>> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; compress::MAGIC_LEN];
    let mut got = 0;
    while got < head.len() {
        match file.read_at(&mut head[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(compress::Compression::detect(&head[..got]))
}

/// Whether a capture read as a stream stops at a first interrupt: set by
/// the command line, never by the library's other users.
static STOP_AT_INTERRUPT: AtomicBool = AtomicBool::new(false);

/// Set by the first SIGINT once a stream is opened under
/// [`stop_streams_at_interrupt`].
static INTERRUPTED: LazyLock<Arc<AtomicBool>> = LazyLock::new(Arc::default);

/// From now on, a capture read as a stream (standard input, a named pipe)
/// stops at the user's first Ctrl-C as at its end, with a warning, so that
/// `tcpdump -w - | roce-dissect -` reports what it read; a second Ctrl-C
/// ends the program at once (exit status 130). Files are not concerned:
/// Ctrl-C ends the program as usual.
pub(crate) fn stop_streams_at_interrupt() {
    STOP_AT_INTERRUPT.store(true, Ordering::Relaxed);
}

/// Whether the user interrupted the reading of a stream.
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Catches SIGINT for [`stop_streams_at_interrupt`], if the command line
/// asked for it (once, when the first stream is opened), unless `input`
/// is a terminal: `roce-dissect -` typed by mistake waits for input like
/// `cat`, and one Ctrl-C ends it.
fn watch_interrupt(input: &impl std::io::IsTerminal) {
    static WATCHING: std::sync::Once = std::sync::Once::new();
    if !STOP_AT_INTERRUPT.load(Ordering::Relaxed) || input.is_terminal() {
        return;
    }
    WATCHING.call_once(|| {
        crate::signals::note_in(&[signal_hook::consts::SIGINT], Arc::clone(&INTERRUPTED));
    });
}

/// Bytes a pipe we read holds, asked for where the kernel allows it (1 MiB
/// is Linux's default `fs.pipe-max-size`).
const PIPE_SIZE: usize = 1 << 20;

/// Standard input, its pipe widened (see [`widen_pipe`]) if it is one:
/// every reader of `-` takes it from here.
pub(crate) fn widened_stdin() -> std::io::Stdin {
    let stdin = std::io::stdin();
    widen_pipe(&stdin);
    stdin
}

/// Makes the pipe that `fd` is (if it is one) hold [`PIPE_SIZE`] bytes, or
/// as much as the kernel lets an unprivileged process ask for, rather
/// than the default 64 KiB: the program writing it (`tcpdump -w -`,
/// `cat`, `zcat`) then fills a mebibyte each time it runs rather than 64
/// KiB, and the two processes switch places a sixteenth as often. Returns
/// the pipe's size (`None` when `fd` is not a pipe, or off Linux).
pub(crate) fn widen_pipe(fd: &impl std::os::fd::AsFd) -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        let now = rustix::pipe::fcntl_getpipe_size(fd).ok()?;
        if now >= PIPE_SIZE {
            return Some(now);
        }
        // The limit may be lower (`fs.pipe-max-size`, or a user's pipe
        // budget past `fs.pipe-user-pages-soft`): the largest size that
        // is allowed, down to what the pipe has.
        let mut size = PIPE_SIZE;
        while size > now {
            if let Ok(got) = rustix::pipe::fcntl_setpipe_size(fd, size) {
                return Some(got);
            }
            size /= 2;
        }
        Some(now)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = fd;
        None
    }
}

/// [`stream_of`] a descriptor that is not a regular file (a pipe, standard
/// input), read directly and waited on through a copy of it.
fn stream_of_file(file: std::fs::File) -> Result<StreamReader, CaptureError> {
    let fd = file.try_clone().ok().map(std::os::fd::OwnedFd::from);
    stream_of(Box::new(file), fd, None)
}

/// A stream (standard input, a pipe), decompressed when its first bytes
/// say it is compressed. Its descriptor (`fd`, a copy of the input's) is
/// waited on for input.
fn stream_of(
    mut input: Box<dyn std::io::Read + Send>,
    fd: Option<reader::Fd>,
    total: Option<u64>,
) -> Result<StreamReader, CaptureError> {
    if !reader::wait_for_input(fd.as_ref()) {
        return Err(CaptureError::Interrupted);
    }
    let head = compress::peek(&mut *input).map_err(|source| CaptureError::Io {
        path: "<input>".into(),
        source,
    })?;
    match compress::Compression::detect(&head) {
        Some(c) if c.is_read() => {
            StreamReader::decompressing(c, compress::unread(head, input), total)
        }
        Some(c) => Err(CaptureError::Compressed(c)),
        None => StreamReader::pipe(input, head, fd, total),
    }
}

#[cfg(test)]
mod pipe_tests {
    use super::{PIPE_SIZE, widen_pipe};

    #[test]
    #[cfg(target_os = "linux")]
    fn a_pipe_read_is_widened_and_a_file_is_left_alone() {
        let (reader, mut writer) = std::io::pipe().expect("a pipe");
        let got = widen_pipe(&reader).expect("a pipe has a size");
        assert_eq!(rustix::pipe::fcntl_getpipe_size(&reader).ok(), Some(got));
        // The kernel's limit for an unprivileged process, if readable: the
        // pipe grows to PIPE_SIZE when that is allowed.
        let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok());
        if max.is_some_and(|m| m >= PIPE_SIZE) {
            assert_eq!(got, PIPE_SIZE);
            // And holds that much unread: a writer is not held up.
            rustix::fs::fcntl_setfl(&writer, rustix::fs::OFlags::NONBLOCK).expect("non-blocking");
            let block = vec![0u8; PIPE_SIZE];
            std::io::Write::write_all(&mut writer, &block).expect("a mebibyte fits unread");
        } else {
            assert!(got >= 4096, "{got}");
        }
        // Asked again, it stays.
        assert_eq!(widen_pipe(&reader), Some(got));
        let file = tempfile::tempfile().expect("a file");
        assert_eq!(widen_pipe(&file), None);
    }
}
