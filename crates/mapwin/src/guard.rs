//! Maps of files that shrink while being read.
//!
//! A page of a file map that lies past the file's end (the file was cut
//! after it was mapped) raises SIGBUS when read, which kills the process.
//! Every map this crate makes registers its range here; a SIGBUS handler
//! (installed once) maps zero-filled pages over the rest of a registered
//! range at the faulting page, so the read completes, and notes that it did
//! ([`shrank`]). A reader that sees the note checks its file's size and stops
//! at the new end with a warning, instead of dying. A fault outside every
//! registered range is handed to the action that was there before (by
//! default, the process ends as it would have).

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Ranges registered at most at once; maps beyond are simply not guarded.
const SLOTS: usize = 64;

struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
};

static RANGES: [Slot; SLOTS] = [FREE; SLOTS];
static SHRANK: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// Whether a guarded map read past the end of its file since the start
/// (a file was cut while being read).
pub fn shrank() -> bool {
    SHRANK.load(Ordering::Relaxed)
}

/// A registered range; unregistered when dropped (before its map is).
#[derive(Debug)]
pub struct Guard {
    slot: Option<usize>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            RANGES[i].len.store(0, Ordering::Release);
            RANGES[i].start.store(0, Ordering::Release);
        }
    }
}

/// Registers `[start, start + len)`, a map of a file, installing the
/// handler on first use.
pub fn register(start: usize, len: usize) -> Guard {
    #[cfg(target_os = "linux")]
    INSTALL.call_once(install);
    if start == 0 || len == 0 {
        return Guard { slot: None };
    }
    for (i, s) in RANGES.iter().enumerate() {
        if s.start
            .compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            s.len.store(len, Ordering::Release);
            return Guard { slot: Some(i) };
        }
    }
    Guard { slot: None }
}

#[cfg(target_os = "linux")]
static mut PREVIOUS: std::mem::MaybeUninit<libc::sigaction> = std::mem::MaybeUninit::zeroed();

#[cfg(target_os = "linux")]
fn install() {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 {
        PAGE.store(page as usize, Ordering::Relaxed);
    }
    // SAFETY: a zeroed sigaction is a valid value to fill in; the handler
    // only touches atomics and calls mmap/sigaction, which are
    // async-signal-safe. PREVIOUS is written here once, before the handler
    // can run (it is installed by the same call), and only read after.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_sigbus as *const () as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
        libc::sigemptyset(&mut act.sa_mask);
        let previous = std::ptr::addr_of_mut!(PREVIOUS).cast::<libc::sigaction>();
        libc::sigaction(libc::SIGBUS, &act, previous);
    }
}

#[cfg(target_os = "linux")]
extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for s in &RANGES {
        let start = s.start.load(Ordering::Acquire);
        let len = s.len.load(Ordering::Acquire);
        if start == 0 || addr < start || addr >= start.saturating_add(len) {
            continue;
        }
        let from = addr & !(page - 1);
        let end = (start + len).div_ceil(page) * page;
        // SAFETY: [from, end) lies inside a live read-only map of this
        // crate (the range is unregistered before its map is dropped); it
        // is replaced by zero pages of the same protection, which the map's
        // own munmap removes later with the rest.
        let p = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                end - from,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            SHRANK.store(true, Ordering::Relaxed);
            return;
        }
    }
    // Not a fault of ours: what was there before runs on the next fault.
    // SAFETY: PREVIOUS was filled in by `install` before this handler ran.
    unsafe {
        let previous = std::ptr::addr_of!(PREVIOUS).cast::<libc::sigaction>();
        libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut());
    }
}
