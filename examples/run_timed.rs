//! Runs a command once and writes its wall time, read from a nanosecond
//! clock, and its peak resident set to a file: the timer of
//! `bench/compare.sh`.
//! `cargo run --release --example run_timed OUT_FILE CMD [ARGS...]`
//!
//! The clock is [`Instant`] (`CLOCK_MONOTONIC`, nanoseconds), read just
//! before the command is spawned and just after it is waited for, so the
//! time includes its fork and exec as a shell's would; the timer's own start
//! is outside it. The peak RSS is `getrusage(RUSAGE_CHILDREN)` after the
//! wait: the largest of the command and the descendants it waited for (a
//! `bash -c` pipeline's largest process), as `/usr/bin/time` reports it,
//! from the same run. `OUT_FILE` gets one line, `SECONDS KIB`, seconds
//! with nine decimals. The command's standard streams are the timer's; its
//! exit code is the command's (1 if a signal ended it, 127 if it could not
//! start).
use std::io::Write;
use std::process::{Command, ExitCode};
use std::time::Instant;

#[cfg(unix)]
fn peak_rss_kib() -> i64 {
    use nix::sys::resource::{UsageWho, getrusage};
    // Linux gives ru_maxrss in KiB.
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0, |u| u.max_rss())
}

#[cfg(not(unix))]
fn peak_rss_kib() -> i64 {
    0
}

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let [out, cmd, rest @ ..] = args.as_slice() else {
        eprintln!("usage: run_timed OUT_FILE CMD [ARGS...]");
        return ExitCode::from(2);
    };
    let t0 = Instant::now();
    let status = match Command::new(cmd).args(rest).status() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("run_timed: cannot run {}: {e}", cmd.to_string_lossy());
            return ExitCode::from(127);
        }
    };
    let took = t0.elapsed();
    let line = format!(
        "{}.{:09} {}\n",
        took.as_secs(),
        took.subsec_nanos(),
        peak_rss_kib()
    );
    if let Err(e) = std::fs::File::create(out).and_then(|mut f| f.write_all(line.as_bytes())) {
        eprintln!("run_timed: cannot write {}: {e}", out.to_string_lossy());
        return ExitCode::from(2);
    }
    match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => ExitCode::from(1),
    }
}
