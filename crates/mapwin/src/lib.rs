//! Read-only memory maps of a window of a file, and cache prefetch hints,
//! behind a safe API.
//!
//! roce-dissect is `#![forbid(unsafe_code)]`; this crate holds the `unsafe`
//! calls it needs: mapping a file, and giving back a map's pages. Mapping a
//! window at a time and dropping it before mapping the next ([`Window`]), or
//! giving back the pages of a whole-file map as they are read ([`FileMap`]),
//! keeps the resident set small however large the capture is, with no copy
//! of the bytes (a `read()` into a buffer costs a kernel copy of every byte).
//!
//! # Safety argument
//! `memmap2::Mmap::map` is `unsafe` because the bytes may change, or the
//! file shrink, while mapped, if another process writes it. The map here is
//! read-only and private to the process, and the caller only reads capture
//! files; a capture being rewritten under the reader is outside what a
//! capture reader can guard against (reading it with `read()` would give
//! torn records just the same). A file truncated while mapped makes later
//! accesses to the lost pages fault (SIGBUS), as with any file map: the
//! `guard` module catches those faults for this crate's maps, maps zero
//! pages in their place and says so ([`shrank`]), so that a reader stops at
//! the new end of the file instead of dying. Giving back the
//! pages of such a map (`MADV_DONTNEED`) changes no byte it shows: the next
//! read maps the file's page again.

use std::fs::File;
use std::io;
use std::ops::Deref;

mod guard;
pub use guard::shrank;

/// A mapped window `[offset, offset + len)` of a file.
pub struct Window {
    /// Dropped first: the range is unregistered before it is unmapped.
    _guard: Option<guard::Guard>,
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
            return Ok(Window {
                _guard: None,
                map: None,
                offset,
            });
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
            _guard: Some(guard::register(map.as_ptr() as usize, map.len())),
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

/// A read-only map of a whole file, whose pages a reader fills in
/// ([`populate`](Self::populate)) and gives back ([`release`](Self::release))
/// range by range as it moves through the file, so that the resident set
/// stays the size of the ranges in use however large the file is.
///
/// Threads reading one file through one map, rather than each mapping and
/// unmapping its own windows, release many ranges in one call: every unmap
/// in a process whose other threads are running interrupts those threads'
/// CPUs to flush their TLBs (on a 2-core VM, 6-7 % of an analysis's wall
/// time when each 2 MiB chunk was unmapped on its own).
pub struct FileMap {
    /// Dropped first: the range is unregistered before it is unmapped.
    _guard: Option<guard::Guard>,
    map: Option<memmap2::Mmap>,
}

impl FileMap {
    /// Maps all of `file`, filling in nothing yet. On Linux the map is
    /// marked for huge pages, as [`Window::map_populated`] explains.
    pub fn map(file: &File) -> io::Result<FileMap> {
        let len = file.metadata()?.len();
        if len == 0 {
            return Ok(FileMap {
                _guard: None,
                map: None,
            });
        }
        let len = usize::try_from(len).map_err(|_| io::Error::other("file too large to map"))?;
        // SAFETY: see the crate documentation: a read-only private map of a
        // file the process only reads.
        let map = unsafe { memmap2::MmapOptions::new().len(len).map(file)? };
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        Ok(FileMap {
            _guard: Some(guard::register(map.as_ptr() as usize, map.len())),
            map: Some(map),
        })
    }

    /// `[offset, offset + len)` clipped to the map, if anything is left.
    fn clip(&self, offset: usize, len: usize) -> Option<(&memmap2::Mmap, usize, usize)> {
        let map = self.map.as_ref()?;
        let end = offset.saturating_add(len).min(map.len());
        (offset < end).then(|| (map, offset, end - offset))
    }

    /// Fills in the page-table entries of `[offset, offset + len)` in one
    /// go (`MADV_POPULATE_READ`), rather than fault by fault as the bytes
    /// are first read, unless one fault maps them all: see
    /// `mapped_whole`. Advice only: where the kernel
    /// lacks it, reads fault the pages in as usual.
    pub fn populate(&self, offset: usize, len: usize) {
        #[cfg(target_os = "linux")]
        if let Some((map, offset, len)) = self.clip(offset, len)
            && !Self::mapped_whole(map, offset, len)
        {
            let _ = map.advise_range(memmap2::Advice::PopulateRead, offset, len);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (offset, len);
    }

    /// Whether the first read of `map[offset]` mapped the rest of the
    /// range's huge page too, so that populating it would only cost time.
    ///
    /// A file cached in 2 MiB folios (as Linux caches a file read from
    /// disk) is mapped a whole folio per fault, with one page-table entry,
    /// where the map and the file offset are aligned alike; populating
    /// such a range still walks its 512 pages one by one: 12-20 µs per
    /// 2 MiB against about 3 µs for the fault (measured on Linux 6.18).
    /// A file cached in small folios is mapped 16 pages per fault, and
    /// populating is the faster way there (29 ms against 38 ms for a
    /// 437 MiB capture read end to end).
    ///
    /// The test reads the range's first byte and two more, 256 KiB and
    /// 512 KiB on (each beyond another fault's reach with small folios),
    /// counting this thread's page faults: at most one means one mapping
    /// covered all three. Ranges too short to tell, or not inside one
    /// 2 MiB block of the file, are populated.
    #[cfg(target_os = "linux")]
    fn mapped_whole(map: &memmap2::Mmap, offset: usize, len: usize) -> bool {
        const PROBE: usize = 256 << 10;
        const HUGE: usize = 2 << 20;
        let last = offset + 2 * PROBE;
        if len <= 2 * PROBE || offset / HUGE != last / HUGE {
            return false;
        }
        let Some(before) = thread_minor_faults() else {
            return false;
        };
        for at in [offset, offset + PROBE, last] {
            std::hint::black_box(map[at]);
        }
        thread_minor_faults().is_some_and(|after| after - before <= 1)
    }

    /// Gives back the pages of `[offset, offset + len)` (`MADV_DONTNEED`;
    /// the start is rounded down to a page). They no longer count in the
    /// resident set; reading them again maps them again, with the same
    /// bytes.
    pub fn release(&self, offset: usize, len: usize) {
        #[cfg(unix)]
        if let Some((map, offset, len)) = self.clip(offset, len) {
            // SAFETY: the map is private and read-only and its pages were
            // never written, so dropping them loses nothing: the next read
            // of one maps the file's page again (for a private file map,
            // madvise(2): "repopulating the memory contents from the
            // up-to-date contents of the underlying mapped file"). Slices
            // borrowed from the map stay valid and read the same bytes, on
            // the crate's assumption that the file is not rewritten.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, offset, len)
            };
        }
        #[cfg(not(unix))]
        let _ = (offset, len);
    }
}

impl Deref for FileMap {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or_default()
    }
}

/// Minor page faults of the calling thread so far (`getrusage`).
#[cfg(target_os = "linux")]
fn thread_minor_faults() -> Option<libc::c_long> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `getrusage` fills in the `rusage` it is given a pointer to;
    // it is read only when the call succeeded.
    unsafe {
        (libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) == 0)
            .then(|| usage.assume_init().ru_minflt)
    }
}

/// Asks the CPU to start loading `bytes[from..from + len]` (clipped) into
/// its caches, one hint per 64-byte line; a no-op where there is no such
/// hint. Reading a capture is memory-bound: hinting a few KiB ahead of the
/// frame being decoded keeps the loads in flight.
#[inline]
pub fn prefetch(bytes: &[u8], from: usize, len: usize) {
    let end = from.saturating_add(len).min(bytes.len());
    if let Some(part) = bytes.get(from..end) {
        prefetch_value(part, part.len().div_ceil(64));
    }
}

/// Asks the CPU to start loading every 64-byte line the first `bytes`
/// bytes of `value` lie on: one more line than `bytes / 64` when they
/// straddle line boundaries, as a value allocated on 16 bytes does. A
/// no-op where there is no such hint.
#[inline]
pub fn prefetch_span<T: ?Sized>(value: &T, bytes: usize) {
    let p = (value as *const T).cast::<i8>();
    let (skew, lines) = span_lines(p as usize, bytes);
    prefetch_lines(p.wrapping_sub(skew), lines);
}

/// How far `addr` is past the start of its 64-byte line, and how many
/// lines `bytes` bytes from it lie on (at least one).
fn span_lines(addr: usize, bytes: usize) -> (usize, usize) {
    let skew = addr & 63;
    (skew, (skew + bytes.max(1)).div_ceil(64))
}

/// Every line `value` lies on (see [`prefetch_span`]).
#[inline]
pub fn prefetch_whole<T>(value: &T) {
    prefetch_span(value, std::mem::size_of::<T>());
}

#[inline]
fn prefetch_lines(p: *const i8, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        for i in 0..lines {
            // SAFETY: a prefetch never faults and changes no memory, even
            // at an address outside any value.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64 * i)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, lines);
}

/// Asks the CPU to start loading the first `lines` 64-byte lines of
/// `value` into its caches, a few iterations before a loop reads it. A
/// no-op where there is no such hint.
#[inline]
pub fn prefetch_value<T: ?Sized>(value: &T, lines: usize) {
    prefetch_lines((value as *const T).cast::<i8>(), lines);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_span_takes_every_line_it_lies_on() {
        // 352 bytes on a line's start: 6 lines; 48 bytes in: 7.
        assert_eq!(span_lines(0x1000, 352), (0, 6));
        assert_eq!(span_lines(0x1030, 352), (48, 7));
        // 64 bytes straddling a boundary: 2; within one: 1.
        assert_eq!(span_lines(0x1010, 64), (16, 2));
        assert_eq!(span_lines(0x1000, 64), (0, 1));
        // Nothing or one byte: the line it is on.
        assert_eq!(span_lines(0x103f, 0), (63, 1));
        assert_eq!(span_lines(0x103f, 1), (63, 1));
        assert_eq!(span_lines(0x103f, 2), (63, 2));
        // Hinting never faults, whatever the address.
        let v = [0u8; 3];
        prefetch_span(&v, 1 << 20);
        prefetch_whole(&v);
    }

    #[test]
    fn windows_see_the_file() {
        let mut f = tempfile_in_target("window");
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

    #[test]
    fn a_file_map_reads_the_same_after_a_release() {
        let mut f = tempfile_in_target("map");
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7) as u8).collect();
        f.0.write_all(&data).unwrap();
        let file = File::open(&f.1).unwrap();
        let m = FileMap::map(&file).unwrap();
        assert_eq!(&m[..], &data[..]);
        m.populate(8192, 100_000);
        m.populate(290_000, 1 << 20);
        let before = &m[5000..200_000];
        // Unaligned, past the end, empty: all clipped, none fails.
        m.release(4097, 150_000);
        m.release(250_000, 1 << 30);
        m.release(1 << 30, 10);
        m.release(0, 0);
        assert_eq!(before, &data[5000..200_000]);
        assert_eq!(&m[..], &data[..]);
        std::fs::remove_file(&f.1).unwrap();
        let empty = tempfile_in_target("empty");
        let m = FileMap::map(&File::open(&empty.1).unwrap()).unwrap();
        assert!(m.is_empty());
        m.populate(0, 10);
        m.release(0, 10);
        std::fs::remove_file(&empty.1).unwrap();
    }

    /// Populating ranges that the fault-count test may read (large ones,
    /// at 2 MiB block edges, past the end) reads only inside the map, and
    /// changes no byte.
    #[test]
    fn populating_large_ranges_reads_inside_the_map() {
        let mut f = tempfile_in_target("large");
        let data: Vec<u8> = (0..(5u32 << 20) + 777).map(|i| (i * 13) as u8).collect();
        f.0.write_all(&data).unwrap();
        let file = File::open(&f.1).unwrap();
        let m = FileMap::map(&file).unwrap();
        let mb = 1 << 20;
        for (offset, len) in [
            (0, 2 * mb),
            (24, 2 * mb - 24),
            (2 * mb - (512 << 10), 2 * mb),
            (2 * mb - (512 << 10) - 1, 2 * mb),
            (4 * mb, 2 * mb),
            (5 * mb, 2 * mb),
            (5 * mb + 1, 10),
            (data.len() - 1, 1),
        ] {
            m.populate(offset, len);
            m.release(offset, len);
        }
        assert_eq!(&m[..], &data[..]);
        std::fs::remove_file(&f.1).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_threads_faults_are_counted() {
        let before = thread_minor_faults().expect("getrusage");
        let v = vec![1u8; 8 << 20];
        let sum: u64 = v.iter().step_by(4096).map(|&b| u64::from(b)).sum();
        assert_eq!(sum, 2048);
        assert!(thread_minor_faults().expect("getrusage") > before);
    }

    fn tempfile_in_target(tag: &str) -> (File, std::path::PathBuf) {
        let p = std::env::temp_dir().join(format!("mapwin-test-{tag}-{}", std::process::id()));
        (File::create(&p).unwrap(), p)
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_file_cut_while_mapped_reads_zeros_and_says_so() {
        let mut f = tempfile_in_target("shrink");
        let data = vec![0xabu8; 1 << 20];
        f.0.write_all(&data).unwrap();
        f.0.flush().unwrap();
        let file = File::open(&f.1).unwrap();
        let whole = FileMap::map(&file).unwrap();
        let window = Window::map(&file, 0, 1 << 20).unwrap();
        assert_eq!(whole[4096], 0xab);
        // Cut to 64 KiB behind the maps' backs.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f.1)
            .unwrap()
            .set_len(64 << 10)
            .unwrap();
        // Past the new end: zeros, and no SIGBUS.
        let sum: u64 = whole[(64 << 10)..].iter().map(|&b| u64::from(b)).sum();
        assert_eq!(sum, 0);
        assert_eq!(window[(1 << 20) - 1], 0);
        assert!(shrank());
        // Before it, the file's bytes.
        assert_eq!(whole[100], 0xab);
    }
}
