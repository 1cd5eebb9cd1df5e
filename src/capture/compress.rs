//! Compressed captures: gzip, zstd and xz, recognised by their magic bytes
//! (never by the file's name) and decompressed as a stream on a thread of
//! their own, so that reading and decoding go on while the next block is
//! inflated. Memory stays bounded: [`BLOCK`]-sized blocks, at most
//! [`BLOCKS_IN_FLIGHT`] of them waiting.

use std::io::{self, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// A compression format this tool reads (or recognises to refuse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
    Xz,
    /// Recognised, not read: named in the error.
    Bzip2,
    /// Recognised, not read: named in the error.
    Lz4,
}

/// Bytes needed to recognise every format.
pub const MAGIC_LEN: usize = 6;

impl Compression {
    /// The format whose magic `head` starts with.
    pub fn detect(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Some(Compression::Xz)
        } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            Some(Compression::Bzip2)
        } else if head.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
            Some(Compression::Lz4)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Bzip2 => "bzip2",
            Compression::Lz4 => "lz4",
        }
    }

    /// Whether this tool decompresses it.
    pub fn is_read(self) -> bool {
        matches!(
            self,
            Compression::Gzip | Compression::Zstd | Compression::Xz
        )
    }

    /// The file name endings of the formats, as `gzip`, `zstd`, `xz`,
    /// `bzip2` and `lz4` name what they write.
    const SUFFIXES: [(&'static str, Compression); 5] = [
        (".gz", Compression::Gzip),
        (".zst", Compression::Zstd),
        (".xz", Compression::Xz),
        (".bz2", Compression::Bzip2),
        (".lz4", Compression::Lz4),
    ];

    /// The format a file's name asks a writer for: `.gz`, `.zst`, `.xz`,
    /// `.bz2` or `.lz4` at its end (any case); `None` for every other name.
    pub fn of_name(path: &std::path::Path) -> Option<Compression> {
        let name = path.to_string_lossy().to_ascii_lowercase();
        Self::SUFFIXES
            .into_iter()
            .find(|(ext, _)| name.ends_with(ext))
            .map(|(_, c)| c)
    }

    /// `name` without the compression suffix it ends in (any case), if
    /// any: what the name says of the capture inside.
    pub fn strip_suffix(name: &str) -> &str {
        Self::SUFFIXES
            .iter()
            .find_map(|(ext, _)| {
                let cut = name.len().checked_sub(ext.len())?;
                (name.is_char_boundary(cut) && name[cut..].eq_ignore_ascii_case(ext))
                    .then(|| &name[..cut])
            })
            .unwrap_or(name)
    }

    /// A decoder of `input` (concatenated members, frames and streams
    /// included, as `zcat`, `zstdcat` and `xzcat` read them).
    fn decoder(self, input: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
        let input = io::BufReader::with_capacity(1 << 16, input);
        Ok(match self {
            Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(input)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(input)?),
            Compression::Xz => Box::new(liblzma::bufread::XzDecoder::new_multi_decoder(input)),
            Compression::Bzip2 | Compression::Lz4 => {
                return Err(io::Error::other(format!(
                    "{} is not read (gzip, zstd and xz are)",
                    self.name()
                )));
            }
        })
    }
}

/// Decompressed bytes handed over at a time.
pub const BLOCK: usize = 1 << 20;
/// Blocks decompressed ahead of the reader at most.
pub const BLOCKS_IN_FLIGHT: usize = 4;

/// Counts the compressed bytes read, for progress.
struct Counted {
    inner: Box<dyn Read + Send>,
    read: Arc<AtomicU64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The decompressed stream of a compressed input, inflated on a thread of
/// its own. Read errors and corrupt or cut compressed data come out of
/// [`Read::read`] as errors naming the format.
pub struct Decompressed {
    blocks: Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    at: usize,
    done: bool,
    /// Compressed bytes consumed so far.
    consumed: Arc<AtomicU64>,
    /// Decompressed bytes handed out so far.
    produced: u64,
    format: Compression,
}

impl Decompressed {
    /// Starts decompressing `input` (which starts with `format`'s magic).
    pub fn start(format: Compression, input: Box<dyn Read + Send>) -> io::Result<Decompressed> {
        let consumed = Arc::new(AtomicU64::new(0));
        let counted = Counted {
            inner: input,
            read: Arc::clone(&consumed),
        };
        let mut decoder = format.decoder(Box::new(counted))?;
        let (tx, rx) = sync_channel(BLOCKS_IN_FLIGHT);
        std::thread::Builder::new()
            .name(format!("{}-decoder", format.name()))
            .spawn(move || inflate(&mut *decoder, &tx))?;
        Ok(Decompressed {
            blocks: rx,
            current: Vec::new(),
            at: 0,
            done: false,
            consumed,
            produced: 0,
            format,
        })
    }

    /// A counter of the compressed bytes read so far.
    pub fn consumed(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.consumed)
    }

    pub fn format(&self) -> Compression {
        self.format
    }
}

/// The decoder thread: blocks until the input ends, fails, or the reader
/// is gone.
fn inflate(decoder: &mut dyn Read, tx: &SyncSender<io::Result<Vec<u8>>>) {
    loop {
        let mut block = vec![0u8; BLOCK];
        let mut filled = 0;
        let mut failed = None;
        while filled < BLOCK {
            match decoder.read(&mut block[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let end = filled < BLOCK;
        block.truncate(filled);
        if filled > 0 && tx.send(Ok(block)).is_err() {
            return;
        }
        if let Some(e) = failed {
            let _ = tx.send(Err(e));
            return;
        }
        if end {
            return;
        }
    }
}

impl Read for Decompressed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at >= self.current.len() {
            if self.done {
                return Ok(0);
            }
            match self.blocks.recv() {
                Ok(Ok(block)) => {
                    self.current = block;
                    self.at = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(describe(self.format, self.produced, e));
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        self.produced += n as u64;
        Ok(n)
    }
}

/// A decoder's error in words a user can act on.
fn describe(format: Compression, produced: u64, e: io::Error) -> io::Error {
    let what = match e.kind() {
        io::ErrorKind::UnexpectedEof => "ends early (the file was cut)".to_string(),
        _ => format!("is corrupt ({e})"),
    };
    io::Error::new(
        e.kind(),
        format!(
            "the {} stream {what} after {produced} decompressed bytes",
            format.name()
        ),
    )
}

/// `input` with the first bytes it already gave put back in front.
pub fn unread(head: Vec<u8>, input: Box<dyn Read + Send>) -> Box<dyn Read + Send> {
    Box::new(io::Cursor::new(head).chain(input))
}

/// Reads up to [`MAGIC_LEN`] bytes (fewer only at the end of the input).
pub fn peek(input: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut head = vec![0u8; MAGIC_LEN];
    let mut got = 0;
    while got < head.len() {
        match input.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(got);
    Ok(head)
}

/// A writer that compresses what it is given as [`Compression`] says (or
/// passes it on as it is); [`Compressor::finish`] writes the format's
/// trailer.
pub enum Compressor<W: Write> {
    Plain(W),
    Gzip(flate2::write::GzEncoder<W>),
    Zstd(zstd::stream::write::Encoder<'static, W>),
    Xz(liblzma::write::XzEncoder<W>),
}

impl<W: Write> Compressor<W> {
    /// Compresses into `w` at each format's default level (`None`: not at
    /// all). bzip2 and lz4 are not written.
    pub fn new(w: W, format: Option<Compression>) -> io::Result<Self> {
        Ok(match format {
            None => Compressor::Plain(w),
            Some(Compression::Gzip) => Compressor::Gzip(flate2::write::GzEncoder::new(
                w,
                flate2::Compression::default(),
            )),
            Some(Compression::Zstd) => Compressor::Zstd(zstd::stream::write::Encoder::new(w, 0)?),
            Some(Compression::Xz) => Compressor::Xz(liblzma::write::XzEncoder::new(w, 6)),
            Some(other @ (Compression::Bzip2 | Compression::Lz4)) => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("{} is not written (gzip, zstd and xz are)", other.name()),
                ));
            }
        })
    }

    /// Ends the stream (the trailer written) and gives the writer back.
    pub fn finish(self) -> io::Result<W> {
        match self {
            Compressor::Plain(w) => Ok(w),
            Compressor::Gzip(e) => e.finish(),
            Compressor::Zstd(e) => e.finish(),
            Compressor::Xz(e) => e.finish(),
        }
    }
}

impl<W: Write> Write for Compressor<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Compressor::Plain(w) => w.write(buf),
            Compressor::Gzip(e) => e.write(buf),
            Compressor::Zstd(e) => e.write(buf),
            Compressor::Xz(e) => e.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Compressor::Plain(w) => w.write_all(buf),
            Compressor::Gzip(e) => e.write_all(buf),
            Compressor::Zstd(e) => e.write_all(buf),
            Compressor::Xz(e) => e.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Compressor::Plain(w) => w.flush(),
            Compressor::Gzip(e) => e.flush(),
            Compressor::Zstd(e) => e.flush(),
            Compressor::Xz(e) => e.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn names_say_which_compression() {
        use std::path::Path;
        assert_eq!(
            Compression::of_name(Path::new("a.pcap.GZ")),
            Some(Compression::Gzip)
        );
        assert_eq!(
            Compression::of_name(Path::new("a.zst")),
            Some(Compression::Zstd)
        );
        assert_eq!(Compression::of_name(Path::new("a.pcapng")), None);
        assert_eq!(Compression::strip_suffix("a.pcap.XZ"), "a.pcap");
        assert_eq!(Compression::strip_suffix("a.pcapng"), "a.pcapng");
        assert_eq!(Compression::strip_suffix(".gz"), "");
        // A name ending in a multi-byte character is not cut inside it.
        assert_eq!(Compression::strip_suffix("é.pcap"), "é.pcap");
        assert_eq!(Compression::strip_suffix("éz"), "éz");
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn all(c: Compression, bytes: Vec<u8>) -> io::Result<Vec<u8>> {
        let mut d = Decompressed::start(c, Box::new(io::Cursor::new(bytes)))?;
        let mut out = Vec::new();
        d.read_to_end(&mut out)?;
        Ok(out)
    }

    fn sample() -> Vec<u8> {
        (0..3 * BLOCK + 12345)
            .map(|i| (i * 7 % 251) as u8)
            .collect()
    }

    #[test]
    fn magics() {
        assert_eq!(
            Compression::detect(&[0x1f, 0x8b, 8]),
            Some(Compression::Gzip)
        );
        assert_eq!(
            Compression::detect(&[0x28, 0xb5, 0x2f, 0xfd, 0]),
            Some(Compression::Zstd)
        );
        assert_eq!(Compression::detect(b"\xfd7zXZ\0"), Some(Compression::Xz));
        assert_eq!(Compression::detect(b"BZh9"), Some(Compression::Bzip2));
        assert_eq!(Compression::detect(b"BZhx"), None);
        assert_eq!(Compression::detect(&[0xd4, 0xc3, 0xb2, 0xa1]), None);
        assert_eq!(Compression::detect(&[0x1f]), None);
    }

    #[test]
    fn every_format_round_trips_across_blocks() {
        let data = sample();
        assert_eq!(all(Compression::Gzip, gzip(&data)).unwrap(), data);
        let z = zstd::encode_all(&data[..], 1).unwrap();
        assert_eq!(all(Compression::Zstd, z).unwrap(), data);
        let mut x = liblzma::write::XzEncoder::new(Vec::new(), 1);
        x.write_all(&data).unwrap();
        assert_eq!(all(Compression::Xz, x.finish().unwrap()).unwrap(), data);
    }

    #[test]
    fn concatenated_members_are_read_like_zcat() {
        let mut two = gzip(b"hello ");
        two.extend(gzip(b"world"));
        assert_eq!(all(Compression::Gzip, two).unwrap(), b"hello world");
        let mut z = zstd::encode_all(&b"hello "[..], 1).unwrap();
        z.extend(zstd::encode_all(&b"world"[..], 1).unwrap());
        assert_eq!(all(Compression::Zstd, z).unwrap(), b"hello world");
    }

    #[test]
    fn cut_and_corrupt_streams_are_errors_naming_the_format() {
        let data = sample();
        let gz = gzip(&data);
        let z = zstd::encode_all(&data[..], 1).unwrap();
        let mut x = liblzma::write::XzEncoder::new(Vec::new(), 1);
        x.write_all(&data).unwrap();
        let x = x.finish().unwrap();
        for (c, bytes) in [
            (Compression::Gzip, gz),
            (Compression::Zstd, z),
            (Compression::Xz, x),
        ] {
            let cut = bytes[..bytes.len() / 2].to_vec();
            let e = all(c, cut).unwrap_err().to_string();
            assert!(e.contains(c.name()) && e.contains("ends early"), "{e}");
            let mut bad = bytes.clone();
            let mid = bad.len() / 3;
            for b in &mut bad[mid..mid + 64] {
                *b ^= 0x5a;
            }
            // zstd frames carry no checksum unless asked to: a flipped
            // literal can decode as other bytes (the capture's own
            // checks then see them).
            match all(c, bad) {
                Err(e) => assert!(e.to_string().contains(c.name()), "{e}"),
                Ok(out) => assert!(c == Compression::Zstd && out != data, "{c:?}"),
            }
        }
    }
}
