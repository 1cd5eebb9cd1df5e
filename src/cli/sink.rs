//! Where a command's output goes, named in its errors: a full disk says
//! "cannot write the standard output: No space left on device", not only
//! the system's words, which could as well be about a capture being read.

use std::fmt;
use std::io::{self, Write};

/// The error of a write to a [`Sink`]: what was being written and why it
/// failed. Carried inside an [`io::Error`] of the same kind, so that a
/// closed pipe is still told apart by its kind.
#[derive(Debug)]
pub struct WriteFailed {
    to: String,
    source: io::Error,
}

impl fmt::Display for WriteFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write {}: {}", self.to, self.source)
    }
}

impl std::error::Error for WriteFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A writer whose errors name what it writes to.
pub struct Sink<W> {
    inner: W,
    to: String,
}

impl<W: Write> Sink<W> {
    /// `inner` writes to standard output.
    pub fn stdout(inner: W) -> Self {
        Sink {
            inner,
            to: "the standard output".to_string(),
        }
    }

    /// `inner` writes to the file at `path`.
    pub fn file(inner: W, path: &std::path::Path) -> Self {
        Sink {
            inner,
            to: crate::output::text::terminal_safe(&path.display().to_string()),
        }
    }

    fn named(&self, e: io::Error) -> io::Error {
        named(&self.to, e)
    }
}

/// `e`, a failure to write `to`, saying so.
fn named(to: &str, e: io::Error) -> io::Error {
    // Interrupted writes are retried by `write_all`, and an error already
    // named (a sink over a sink) keeps its one name.
    if e.kind() == io::ErrorKind::Interrupted || e.get_ref().is_some_and(|r| r.is::<WriteFailed>())
    {
        return e;
    }
    io::Error::new(
        e.kind(),
        WriteFailed {
            to: to.to_string(),
            source: e,
        },
    )
}

/// `std::fs::write` whose errors, making the file or writing it, name it.
pub fn write_file(path: &std::path::Path, bytes: &[u8]) -> io::Result<()> {
    let mut out = match std::fs::File::create(path) {
        Ok(f) => Sink::file(f, path),
        Err(e) => {
            let to = crate::output::text::terminal_safe(&path.display().to_string());
            return Err(named(&to, e));
        }
    };
    out.write_all(bytes)?;
    out.flush()
}

impl<W: Write> Write for Sink<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.named(e))
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.inner.write_vectored(bufs).map_err(|e| self.named(e))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| self.named(e))
    }
}

/// Refuses a binary capture on a terminal: `option -` (`-w -`, `-o -`)
/// names standard output, and a terminal shows such bytes as garbage and
/// may take some of them as commands.
pub fn binary_stdout(option: &str) -> Result<(), super::RunError> {
    if io::IsTerminal::is_terminal(&io::stdout()) {
        return Err(super::RunError::Usage(format!(
            "{option} - writes a binary capture to the standard output, which is a terminal: redirect it ({option} - > out.pcapng, or | wireshark -k -i -) or name a file"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that fails every write with `kind`.
    struct Failing(io::ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(self.0))
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::from(self.0))
        }
    }

    #[test]
    fn a_failed_write_names_the_output_and_keeps_its_kind() {
        let full = io::Error::from_raw_os_error(28); // ENOSPC
        let kind = full.kind();
        let mut out = io::BufWriter::new(Sink::stdout(Failing(kind)));
        out.write_all(b"x").unwrap();
        let e = out.flush().unwrap_err();
        assert_eq!(e.kind(), kind);
        assert!(
            e.to_string()
                .starts_with("cannot write the standard output: "),
            "{e}"
        );
        // Named once, not once per layer.
        let mut twice = Sink::stdout(Sink::stdout(Failing(io::ErrorKind::BrokenPipe)));
        let e = twice.write_all(b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(e.to_string().matches("cannot write").count(), 1, "{e}");
    }

    #[test]
    fn a_file_that_cannot_be_made_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no such folder").join("out.pcap");
        let e = write_file(&path, b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let said = e.to_string();
        assert!(
            said.starts_with(&format!("cannot write {}: ", path.display())),
            "{said}"
        );
        let ok = dir.path().join("out.pcap");
        write_file(&ok, b"bytes").unwrap();
        assert_eq!(std::fs::read(&ok).unwrap(), b"bytes");
    }
}
