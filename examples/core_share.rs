//! How much of a core, and of the memory's bandwidth, each core of this
//! machine gets when all of them work at once:
//! `cargo run --release --example core_share [ROUNDS]`.
//!
//! On a shared virtual machine a second vCPU may be another tenant's
//! hyperthread or be time-sliced with it, and the memory's bandwidth is
//! shared with the host's other guests: a command that splits its work over
//! two threads then gains less than it would on two real cores. Each round
//! times two fixed jobs, each alone on one thread and then one copy per core
//! at once:
//!
//! - arithmetic: integer work in registers, no memory traffic;
//! - memory: summing a buffer of 64 MiB (each thread its own, 16 times a
//!   core's L2 here; smaller past 16 cores, 1 GiB in all), eight times over.
//!
//! A job's share is its time alone over the slowest copy's time at once:
//! 1.00 when every core (or every core's stream) is as fast as one alone,
//! 0.50 when two of them get what one gets alone. Prints the best and the
//! median share of `ROUNDS` rounds (default 5), e.g.
//!
//! ```text
//! cores: 2
//! arithmetic: alone 0.146 s, 2 at once 0.147 s (best of 5); share 0.99 (median 0.99)
//! memory: alone 0.058 s (9.3 GB/s), 2 at once 0.066 s (best of 5); share 0.88 (median 0.92)
//! ```
use std::hint::black_box;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

/// Steps of the arithmetic job: about 0.1-0.3 s on current cores.
const STEPS: u64 = 300_000_000;
/// Each memory job's buffer, in 64-bit words (64 MiB) ...
const WORDS: usize = 8 << 20;
/// ... and all of them together at most (1 GiB), whatever the cores.
const ALL_WORDS: usize = 128 << 20;
/// Passes of the memory job over its buffer.
const PASSES: usize = 8;

/// Eight independent xorshift sequences stepped together, so the core's
/// arithmetic units are busy every cycle (one sequence alone waits on each
/// step's result, and a hyperthread sharing the core would hide in those
/// waits); the result is used so the loop cannot be dropped.
fn arithmetic(seed: u64) -> u64 {
    let mut x: [u64; 8] = std::array::from_fn(|i| (seed + i as u64) | 1);
    for _ in 0..black_box(STEPS / 8) {
        for v in &mut x {
            *v ^= *v << 13;
            *v ^= *v >> 7;
            *v ^= *v << 17;
        }
    }
    x.iter().fold(0, |a, v| a ^ v)
}

/// Sums `buf` `PASSES` times.
fn memory(buf: &[u64]) -> u64 {
    (0..PASSES).fold(0u64, |acc, _| {
        acc.wrapping_add(black_box(buf).iter().fold(0u64, |a, &v| a.wrapping_add(v)))
    })
}

/// Seconds for one copy of a job per buffer, run at once, one per thread:
/// the slowest copy's (the buffers are made before any clock starts).
fn at_once(bufs: &[Vec<u64>], job: fn(&[u64]) -> u64) -> f64 {
    std::thread::scope(|s| {
        let handles: Vec<_> = bufs
            .iter()
            .map(|b| {
                s.spawn(move || {
                    let t = Instant::now();
                    black_box(job(b));
                    t.elapsed().as_secs_f64()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(f64::NAN))
            .fold(0.0, f64::max)
    })
}

/// A job's name, its inputs (one per thread) and the job.
type Job<'a> = (&'a str, &'a [Vec<u64>], fn(&[u64]) -> u64);

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn best(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn main() -> ExitCode {
    let rounds: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 5,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: core_share [ROUNDS]  (ROUNDS: a positive number, default 5)");
            return ExitCode::from(2);
        }
    };
    match run(rounds, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stopped early (`| head -1`) is no error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("core_share: cannot write the result: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Measures, writing each job's line to `out` as soon as it is known.
fn run(rounds: usize, out: &mut impl Write) -> std::io::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // One buffer per core, every page written, so no job pays for faults.
    let words = WORDS.min(ALL_WORDS / cores) as u64;
    let bufs: Vec<Vec<u64>> = (0..cores)
        .map(|c| (0..words).map(|i| i ^ c as u64).collect())
        .collect();
    let seeds: Vec<Vec<u64>> = (0..cores).map(|c| vec![c as u64]).collect();
    let jobs: [Job; 2] = [
        ("arithmetic", &seeds, |s| arithmetic(s[0])),
        ("memory", &bufs, memory),
    ];
    writeln!(out, "cores: {cores}")?;
    out.flush()?;
    for (name, inputs, job) in jobs {
        let (mut alone, mut together, mut shares) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let a = at_once(&inputs[..1], job);
            let t = at_once(inputs, job);
            alone.push(a);
            together.push(t);
            shares.push(a / t);
        }
        let (a, t) = (best(&alone), best(&together));
        let rate = if name == "memory" {
            let bytes = (words as usize * 8 * PASSES) as f64;
            format!(" ({:.1} GB/s)", bytes / a / 1e9)
        } else {
            String::new()
        };
        writeln!(
            out,
            "{name}: alone {a:.3} s{rate}, {cores} at once {t:.3} s (best of {rounds}); \
             share {:.2} (median {:.2})",
            (a / t).min(1.0),
            median(&mut shares).min(1.0),
        )?;
        out.flush()?;
    }
    Ok(())
}
