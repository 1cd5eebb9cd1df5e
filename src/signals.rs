//! Signals the program goes on through: the first of a set is noted (a
//! flag, and which signal it was), for the program to act on where it
//! looks; a second ends the program at once with the shell's status for
//! it (128 + its number), as it would have ended without the handlers.
//! The stream readers (Ctrl-C ends the input), the TUI (the terminal given
//! back first) and the commands that write files (what they half wrote
//! removed) each act on it their way.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What the handlers noted.
pub struct Noted {
    flag: Arc<AtomicBool>,
    which: Arc<AtomicUsize>,
}

impl Noted {
    /// Set by the first signal.
    pub fn flag(&self) -> &Arc<AtomicBool> {
        &self.flag
    }

    /// Whether a signal came.
    pub fn came(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// The signal that came last, if one did.
    pub fn which(&self) -> Option<i32> {
        match self.which.load(Ordering::Relaxed) {
            0 => None,
            s => i32::try_from(s).ok(),
        }
    }
}

/// From now on, the first of `signals` sets a flag of its own.
pub fn note(signals: &[i32]) -> Noted {
    note_in(signals, Arc::default())
}

/// [`note`], the first signal setting `flag`.
pub fn note_in(signals: &[i32], flag: Arc<AtomicBool>) -> Noted {
    let which = Arc::new(AtomicUsize::new(0));
    for &sig in signals {
        // Registered first, so it sees the flag as the second signal
        // finds it: set by the first. The handlers only store into
        // atomics (or exit, the second time).
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&flag));
        let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
        let _ = signal_hook::flag::register_usize(sig, Arc::clone(&which), sig as usize);
    }
    Noted { flag, which }
}
