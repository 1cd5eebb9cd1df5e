//! Ctrl-C and SIGTERM for the commands that write files (`export`, `gen`).
//! The first signal asks the work under way to stop, so that it removes
//! what it had half written and the command says what was not done; a
//! second ends the program at once, as it would have without this. What
//! that leaves is a hidden file or folder named for the process, which the
//! command's next run removes once that process is gone ([`remove_left`]).

use std::path::Path;
#[cfg(feature = "parquet")]
use std::sync::{Arc, atomic::AtomicBool};

use signal_hook::consts::{SIGINT, SIGTERM};

use super::RunError;
use crate::output::text::terminal_safe;
use crate::signals::Noted;

/// The signals that stop the command, once one came.
pub struct Stop(Noted);

impl Stop {
    /// From now on, SIGINT and SIGTERM set the flag ([`Stop::flag`]).
    pub fn at_signals() -> Stop {
        Stop(crate::signals::note(&[SIGINT, SIGTERM]))
    }

    /// Set by the first signal: the work should stop (`export` hands it
    /// to its threads).
    #[cfg(feature = "parquet")]
    pub fn flag(&self) -> &Arc<AtomicBool> {
        self.0.flag()
    }

    pub fn requested(&self) -> bool {
        self.0.came()
    }

    /// The error that ends the command, `what` saying what was not done;
    /// its exit status is the shell's for the signal (130 for Ctrl-C).
    pub fn error(&self, what: &str) -> RunError {
        let sig = self.0.which().unwrap_or(SIGINT);
        let why = match sig {
            SIGINT => "interrupted (Ctrl-C)".to_string(),
            SIGTERM => "stopped (SIGTERM)".to_string(),
            s => format!("stopped (signal {s})"),
        };
        RunError::Interrupted {
            message: format!("{why}: {what}"),
            code: u8::try_from(128 + sig).unwrap_or(130),
        }
    }
}

/// Removes the entries of `dir` that a run which no longer runs left
/// there: those `pid_of` names as a process's (`None`: not such an entry)
/// whose process has ended, save this one's. Tells each one it removed,
/// naming `dir`. Where whether a process runs cannot be known (no
/// `/proc`), none is removed.
pub fn remove_left(dir: &Path, pid_of: impl Fn(&str) -> Option<u32>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut removed: Vec<String> = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = pid_of(&name) else {
            continue;
        };
        if pid == std::process::id() || !process_gone(pid) {
            continue;
        }
        let gone = match e.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(e.path()),
            Ok(_) => std::fs::remove_file(e.path()),
            Err(err) => Err(err),
        };
        if gone.is_ok() {
            removed.push(name);
        }
    }
    removed.sort();
    for name in removed {
        eprintln!(
            "roce-dissect: removed {}, left in {} by a run that was stopped",
            terminal_safe(&name),
            terminal_safe(&dir.display().to_string())
        );
    }
}

/// Whether process `pid` has ended, where that can be known.
fn process_gone(pid: u32) -> bool {
    let proc = Path::new("/proc");
    cfg!(target_os = "linux") && proc.join("self").exists() && !proc.join(pid.to_string()).exists()
}
