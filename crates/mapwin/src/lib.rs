//! Read-only memory maps of a window of a file, and cache prefetch hints,
//! behind a safe API.
//!
//! roce-dissect is `#![forbid(unsafe_code)]`; this crate holds the one
//! `unsafe` call it needs. Mapping a window at a time, and dropping it before
//! mapping the next, keeps the resident set a window's size however large the
//! capture is, with no copy of the bytes (a `read()` into a buffer costs a
//! kernel copy of every byte).
//!
//! # Safety argument
//! `memmap2::Mmap::map` is `unsafe` because the bytes may change, or the
//! file shrink, while mapped, if another process writes it. The map here is
//! read-only and private to the process, and the caller only reads capture
//! files; a capture being rewritten under the reader is outside what a
//! capture reader can guard against (reading it with `read()` would give
//! torn records just the same). A file truncated while mapped makes later
//! accesses to the lost pages fault (SIGBUS), as with any file map (the
//! `filebuffer` crate makes the same trade for whole files).

use std::fs::File;
use std::io;
use std::ops::Deref;

/// A mapped window `[offset, offset + len)` of a file.
pub struct Window {
    map: Option<memmap2::Mmap>,
    offset: u64,
}

impl Window {
    /// Maps `len` bytes of `file` from `offset` (clipped to the file's end).
    pub fn map(file: &File, offset: u64, len: usize) -> io::Result<Window> {
        Self::map_with(file, offset, len, false)
    }

    /// Like [`map`](Self::map), with the page tables filled in one go
    /// rather than fault by fault: cheaper for a window that will be read
    /// from end to end. On Linux the window is also marked for huge pages
    /// (`MADV_HUGEPAGE`, honoured where transparent huge pages are enabled):
    /// a file not cached yet is read into 2 MiB folios, whose pages the
    /// kernel maps and unmaps in batches rather than one small folio at a
    /// time. (A 2 MiB page-table entry for a regular file would need a
    /// kernel built with `CONFIG_READ_ONLY_THP_FOR_FS`; the entries are
    /// 4 KiB ones otherwise.) With small folios, mapping and unmapping
    /// took about a tenth of an analysis's time.
    pub fn map_populated(file: &File, offset: u64, len: usize) -> io::Result<Window> {
        Self::map_with(file, offset, len, true)
    }

    fn map_with(file: &File, offset: u64, len: usize, populate: bool) -> io::Result<Window> {
        let size = file.metadata()?.len();
        let len = len.min(size.saturating_sub(offset) as usize);
        if len == 0 {
            return Ok(Window { map: None, offset });
        }
        let mut options = memmap2::MmapOptions::new();
        options.offset(offset).len(len);
        // Linux populates after the huge-page advice (below); elsewhere
        // MAP_POPULATE where the system has it.
        if populate && !cfg!(target_os = "linux") {
            options.populate();
        }
        // SAFETY: see the crate documentation: a read-only private map of a
        // file the process only reads.
        let map = unsafe { options.map(file)? };
        #[cfg(target_os = "linux")]
        if populate {
            use memmap2::Advice;
            // Advice only: a kernel without THP or MADV_POPULATE_READ (5.14)
            // maps the pages as they are first read instead.
            let _ = map.advise(Advice::HugePage);
            let _ = map.advise(Advice::PopulateRead);
        }
        #[cfg(unix)]
        if !populate {
            let _ = map.advise(memmap2::Advice::Sequential);
        }
        Ok(Window {
            map: Some(map),
            offset,
        })
    }

    /// File offset of the first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

impl Deref for Window {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or_default()
    }
}

/// Asks the CPU to start loading `bytes[from..from + len]` (clipped) into
/// its caches, one hint per 64-byte line; a no-op where there is no such
/// hint. Reading a capture is memory-bound: hinting a few KiB ahead of the
/// frame being decoded keeps the loads in flight.
#[inline]
pub fn prefetch(bytes: &[u8], from: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let end = from.saturating_add(len).min(bytes.len());
        let mut at = from;
        while at < end {
            // SAFETY: `at` is inside `bytes`; a prefetch never faults and
            // changes no memory.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(at).cast::<i8>()) };
            at += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, from, len);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn windows_see_the_file() {
        let mut f = tempfile_in_target();
        let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        f.0.write_all(&data).unwrap();
        let file = File::open(&f.1).unwrap();
        let w = Window::map(&file, 12_345, 1000).unwrap();
        assert_eq!(&w[..], &data[12_345..13_345]);
        let w = Window::map(&file, 99_990, 1000).unwrap();
        assert_eq!(&w[..], &data[99_990..]);
        let w = Window::map(&file, 200_000, 1000).unwrap();
        assert!(w.is_empty());
        let w = Window::map_populated(&file, 4096, 50_000).unwrap();
        assert_eq!(&w[..], &data[4096..54_096]);
        assert_eq!(w.offset(), 4096);
        let w = Window::map_populated(&file, 65_536, 1 << 20).unwrap();
        assert_eq!(&w[..], &data[65_536..]);
        std::fs::remove_file(&f.1).unwrap();
    }

    fn tempfile_in_target() -> (File, std::path::PathBuf) {
        let p = std::env::temp_dir().join(format!("mapwin-test-{}", std::process::id()));
        (File::create(&p).unwrap(), p)
    }
}
