//! Command-line parsing and the commands. `main.rs` only calls [`main`].

use std::io::{self, BufWriter, IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::analysis::{AnalysisOptions, Analyzer, parse_dscp_map};
use crate::capture::{CaptureError, Format, FrameSource, open_stream};
use crate::dissect::{DissectOptions, dissect};
use crate::output::report::{Style, TextOptions};
use crate::output::{packets, tree};

const AFTER_HELP: &str = "\
Examples:
  roce-dissect capture.pcap                 analysis report (flows, retransmits, NAKs, CNPs, pauses)
  roce-dissect capture.pcap --json          the same report as JSON
  roce-dissect packets capture.pcap         one line per frame, like tshark
  roce-dissect packets -V -x capture.pcap   full header tree and hex dump
  roce-dissect packets --json capture.pcap  JSON Lines, one object per frame

Exit status: 0 on success, 2 when the capture cannot be read or the command line is wrong, 1 on other errors (e.g. writing the output).";

#[derive(Debug, Parser)]
#[command(
    name = "roce-dissect",
    version,
    about = "Decode and analyse RoCE (RDMA over Converged Ethernet) captures",
    long_about = "Decode and analyse RoCE v1/v2 captures (pcap, pcapng): per-QP PSN tracking, \
                  retransmissions, out-of-order and missing packets, NAKs, ECN/CNP, PFC pauses.",
    after_help = AFTER_HELP,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Capture file (pcap or pcapng; `-` reads standard input)
    #[arg(value_name = "CAPTURE", required = true)]
    pub capture: Option<PathBuf>,

    #[command(flatten)]
    pub decode: DecodeArgs,

    #[command(flatten)]
    pub report: ReportArgs,

    /// Threads for reading and analysing (default: one per core, or
    /// ROCE_DISSECT_THREADS; 1 reads sequentially)
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
}

/// Options of the analysis report (the default command).
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Print the report as one JSON document
    #[arg(long)]
    pub json: bool,

    /// List every flow's events (gaps, retransmits, NAKs, CE, CNPs) in the text report
    #[arg(long)]
    pub events: bool,

    /// Path MTU for sizing READ requests when nothing in the capture shows it
    /// (FIRST/MIDDLE payloads, a CM REQ): 256, 512, 1024, 2048 or 4096
    #[arg(long, value_name = "BYTES", value_parser = parse_pmtu)]
    pub pmtu: Option<u32>,

    /// Identical frames of a flow closer than this are capture duplicates
    #[arg(long, value_name = "DURATION", default_value = "2us", value_parser = parse_duration)]
    pub dup_window: u64,

    /// A pause longer than this is reported as a storm
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = parse_duration)]
    pub storm_threshold: u64,

    /// DSCP to priority for untagged frames, e.g. 24-31:3,48-55:6
    #[arg(long, value_name = "MAP", default_value = "24-31:3,48-55:6")]
    pub dscp_map: String,

    /// Events kept per flow (the rest are counted)
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_events: usize,

    /// Events kept in all (the rest are counted, with a warning)
    #[arg(long, value_name = "N", default_value_t = crate::analysis::DEFAULT_MAX_EVENTS_TOTAL)]
    pub max_events_total: u64,

    /// Never colour the text report (NO_COLOR is honoured too)
    #[arg(long)]
    pub no_color: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// One line per frame like tshark; -V for the header tree, --json for JSON Lines
    Packets(PacketsArgs),
    /// Browse flows, packets, header trees, PSN charts and PFC pauses in the terminal
    Tui(TuiArgs),
    /// Synthesize a capture of a scenario, with the facts its report must show
    Gen(GenArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "Keys: arrows/hjkl move, Enter drills in, Esc/Backspace back, Tab switches panes, / filter, s sort, p PSN chart, t PFC timeline, a all frames, g/G top/end, ? help, q quit, Ctrl-C quits anywhere."
)]
pub struct TuiArgs {
    /// Capture file (pcap or pcapng)
    #[arg(value_name = "CAPTURE")]
    pub capture: PathBuf,

    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Scenarios:\n  clean      RC SEND/WRITE/READ on several QPs with RDMA CM setup; no faults\n  loss       drops with PSN-sequence NAKs and go-back-N replays, or timeouts\n  reorder    packets swapped on the way, NAKed and replayed\n  incast     many senders to one receiver: CE marks, CNPs and PFC pauses\n  pfc-storm  a port paused on priority 3 for longer than the storm threshold\n  mixed      all of it, over RoCE v1 and v2, IPv4 and IPv6\n\nExample:\n  roce-dissect gen --scenario loss --seed 7 -o loss.pcapng --truth loss.truth.json"
)]
pub struct GenArgs {
    /// Scenario to generate (see below)
    #[arg(long, value_name = "NAME", value_parser = ["clean", "loss", "reorder", "incast", "pfc-storm", "mixed"])]
    pub scenario: String,

    /// Seed: the same seed and options give the same bytes
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Output capture (.pcap, .ns.pcap or .pcapng picks the format)
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: PathBuf,

    /// Write the report facts the capture must produce (JSON) here
    #[arg(long, value_name = "FILE")]
    pub truth: Option<PathBuf>,

    /// Container format, overriding the file extension
    #[arg(long, value_parser = ["pcap", "ns-pcap", "pcapng"])]
    pub format: Option<String>,

    /// Queue pairs (connections)
    #[arg(long, default_value_t = 4)]
    pub qps: u32,

    /// Messages per queue pair
    #[arg(long, default_value_t = 50)]
    pub messages: u32,

    /// Message size in bytes
    #[arg(long, default_value_t = 8192)]
    pub size: u32,

    /// Path MTU in bytes: 256, 512, 1024, 2048 or 4096
    #[arg(long, default_value_t = 4096, value_parser = parse_pmtu)]
    pub pmtu: u32,

    /// Probability that a request packet is dropped (loss, mixed)
    #[arg(long, default_value_t = 0.01)]
    pub loss: f64,

    /// Where the capture sits: `sender` sees every first send, `receiver` misses the dropped ones
    #[arg(long, default_value = "sender", value_parser = ["sender", "receiver"])]
    pub loss_side: String,

    /// Probability that a packet is swapped with the next (reorder, mixed)
    #[arg(long, default_value_t = 0.01)]
    pub reorder: f64,

    /// Probability that a request packet is CE-marked (incast, mixed)
    #[arg(long, default_value_t = 0.05)]
    pub ecn: f64,

    /// Stop starting messages after this much simulated time (e.g. 50ms)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<u64>,
}

/// Options shared by every command that reads a capture.
#[derive(Debug, Clone, Args)]
pub struct DecodeArgs {
    /// UDP destination port that marks RoCE v2
    #[arg(long, value_name = "PORT", default_value_t = crate::dissect::ROCE_V2_PORT, global = true)]
    pub roce_port: u16,

    /// Link speed for PFC/PAUSE quanta: 10G, 25G, 40G, 50G, 100G, 200G, 400G, 800G or bits/s
    #[arg(long, value_name = "SPEED", default_value = "100G", value_parser = parse_link_speed, global = true)]
    pub link_speed: u64,

    /// Do not verify ICRCs (faster; `icrc.valid` becomes null)
    #[arg(long, global = true)]
    pub no_icrc: bool,
}

impl DecodeArgs {
    pub fn dissect_options(&self) -> DissectOptions {
        DissectOptions {
            roce_port: self.roce_port,
            check_icrc: !self.no_icrc,
        }
    }
}

#[derive(Debug, Args)]
pub struct PacketsArgs {
    /// Capture file (pcap or pcapng; `-` reads standard input)
    #[arg(value_name = "CAPTURE")]
    pub capture: PathBuf,

    /// Print the full header tree of every frame
    #[arg(short = 'V', long)]
    pub verbose: bool,

    /// Add a hex dump of every frame
    #[arg(short = 'x', long)]
    pub hex: bool,

    /// JSON Lines: one object per frame, every frame, in capture order
    #[arg(long, conflicts_with_all = ["verbose", "hex"])]
    pub json: bool,

    /// Stop after this many frames
    #[arg(short = 'c', long, value_name = "N")]
    pub count: Option<u64>,

    /// Show only RoCE frames (and PFC/PAUSE frames)
    #[arg(long)]
    pub roce_only: bool,

    /// Show only the frames of one flow: SRC,DST,QP as the report names it
    #[arg(long, value_name = "SRC,DST,QP", value_parser = crate::pipeline::parse_flow)]
    pub flow: Option<crate::analysis::FlowKey>,
}

/// The path MTUs InfiniBand and RoCE define.
pub const PMTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];

/// Parses a path MTU: one of [`PMTUS`].
pub fn parse_pmtu(s: &str) -> Result<u32, String> {
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|m| PMTUS.contains(m))
        .ok_or_else(|| format!("'{s}' is not a path MTU: 256, 512, 1024, 2048 or 4096"))
}

/// Parses `2us`, `100ms`, `1.5s`, `500ns`, `0`. A number needs its unit
/// (only `0` stands alone): a bare `50` is more likely meant as 50 ms or
/// 50 µs than as 50 ns.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (try 2us, 100ms, 1s)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("'{s}' is not a duration (try 2us, 100ms, 1s)"));
    }
    let mult = match unit.trim() {
        "" if v == 0.0 => 1.0,
        "" => {
            return Err(format!("'{s}' needs a unit: {s}ns, {s}us, {s}ms or {s}s"));
        }
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => return Err(format!("unknown unit '{other}' in '{s}' (ns, us, ms, s)")),
    };
    let ns = (v * mult).round();
    if ns > u64::MAX as f64 {
        return Err(format!("'{s}' is too long a duration"));
    }
    Ok(ns as u64)
}

/// Parses `100G`, `25g`, `400Gb`, `10000000000`.
pub fn parse_link_speed(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .trim_end_matches("bps")
        .trim_end_matches("b/s")
        .trim_end_matches('b');
    let (num, mult) = if let Some(n) = t.strip_suffix('g') {
        (n, 1_000_000_000u64)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 1_000_000)
    } else if let Some(n) = t.strip_suffix('t') {
        (n, 1_000_000_000_000)
    } else {
        (t, 1)
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a link speed (try 100G, 25G or bits/s)"))?;
    let bps = v * mult as f64;
    if !(1.0..=1e15).contains(&bps) {
        return Err(format!("'{s}' is out of range for a link speed"));
    }
    Ok(bps as u64)
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Packets(args)) => run_packets(args, &cli.decode),
        Some(Command::Gen(args)) => run_gen(args, &cli.decode),
        Some(Command::Tui(args)) => analysis_options(&cli.decode, &args.report)
            .and_then(|opts| crate::tui::run(&args.capture, &cli.decode.dissect_options(), opts)),
        None => match &cli.capture {
            Some(path) => run_report(path, &cli.decode, &cli.report, cli.threads),
            None => Err(RunError::Usage("no capture given (see --help)".into())),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(RunError::BrokenPipe) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("roce-dissect: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{path}: {err}", path = .0.display(), err = .1)]
    Capture(PathBuf, CaptureError),
    #[error("{0}")]
    Io(io::Error),
    #[error("{0}")]
    Usage(String),
    #[error("output closed")]
    BrokenPipe,
}

impl From<io::Error> for RunError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            RunError::BrokenPipe
        } else {
            RunError::Io(e)
        }
    }
}

impl RunError {
    pub fn exit_code(&self) -> u8 {
        match self {
            // Unreadable input and command-line misuse, like clap's own errors.
            RunError::Capture(..) | RunError::Usage(_) => 2,
            RunError::BrokenPipe => 0,
            RunError::Io(_) => 1,
        }
    }
}

fn print_warnings(reader: &dyn FrameSource) {
    for w in reader.warnings() {
        eprintln!("roce-dissect: warning: {w}");
    }
    let more = reader
        .warning_count()
        .saturating_sub(reader.warnings().len() as u64);
    if more > 0 {
        eprintln!("roce-dissect: warning: {more} more warnings not shown");
    }
}

fn run_packets(args: &PacketsArgs, decode: &DecodeArgs) -> Result<(), RunError> {
    let mut reader = open_stream(&args.capture).map_err(|e| with_path(e, &args.capture))?;
    let opts = decode.dissect_options();
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let ts_digits = match reader.format() {
        Format::Pcap { nanos: false, .. } => 6,
        _ => 9,
    };
    let mut first_ts: Option<u64> = None;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut shown = 0u64;
    let result: Result<(), RunError> = (|| {
        while let Some(frame) = reader.next_frame() {
            let frame = frame.map_err(|e| with_path(e, &args.capture))?;
            let pkt = dissect(&frame, &opts);
            let first = *first_ts.get_or_insert(pkt.ts_ns);
            if args.roce_only && pkt.roce.is_none() && pkt.pause.is_none() {
                continue;
            }
            if let Some(want) = &args.flow
                && Analyzer::flow_key(&pkt).as_ref() != Some(want)
            {
                continue;
            }
            if args.json {
                packets::write_json_line(&mut buf, &pkt);
                if buf.len() >= 1 << 15 {
                    out.write_all(&buf)?;
                    buf.clear();
                }
            } else {
                writeln!(
                    out,
                    "{}",
                    packets::summary_line(&pkt, first, ts_digits, decode.link_speed)
                )?;
                if args.verbose {
                    let nodes = tree::header_tree(&pkt, decode.link_speed);
                    write!(out, "{}", tree::render_tree(&nodes))?;
                }
                if args.hex {
                    write!(out, "{}", tree::hex_dump(pkt.data))?;
                }
                if args.verbose || args.hex {
                    writeln!(out)?;
                }
            }
            shown += 1;
            if args.count.is_some_and(|c| shown >= c) {
                break;
            }
        }
        Ok(())
    })();
    out.write_all(&buf)?;
    out.flush()?;
    print_warnings(&reader);
    result
}

fn with_path(e: CaptureError, path: &std::path::Path) -> RunError {
    RunError::Capture(path.to_path_buf(), e)
}

fn analysis_options(decode: &DecodeArgs, args: &ReportArgs) -> Result<AnalysisOptions, RunError> {
    let dscp_map = parse_dscp_map(&args.dscp_map).map_err(RunError::Usage)?;
    Ok(AnalysisOptions {
        link_speed_bps: decode.link_speed,
        pmtu: args.pmtu,
        dup_window_ns: args.dup_window,
        storm_threshold_ns: args.storm_threshold,
        dscp_map,
        max_events: args.max_events,
        max_events_total: args.max_events_total,
    })
}

fn run_report(
    path: &Path,
    decode: &DecodeArgs,
    args: &ReportArgs,
    threads: Option<u16>,
) -> Result<(), RunError> {
    let opts = analysis_options(decode, args)?;
    let started = std::time::Instant::now();
    let show = io::stderr().is_terminal();
    let mut shown = false;
    let mut progress = |done: usize, total: usize, frames: u64| {
        if show && started.elapsed().as_secs_f64() > 1.0 {
            shown = true;
            let pct = (done * 100).checked_div(total).unwrap_or(0);
            let bar = "#".repeat(pct / 4);
            eprint!(
                "\r[{bar:<25}] {pct:>3}%  {} frames",
                crate::output::report::grouped(frames)
            );
        }
    };
    let threads = threads.map_or_else(crate::pipeline::threads, usize::from);
    let result = crate::pipeline::analyze_path(
        path,
        &decode.dissect_options(),
        opts,
        threads,
        Some(&mut progress),
    );
    if shown {
        eprint!("\r{:60}\r", "");
    }
    let report = result.map_err(|e| with_path(e, path))?;
    for w in &report.capture.warnings {
        eprintln!("roce-dissect: warning: {w}");
    }
    // Both writers below hand over large pieces: no buffer in between, and
    // not standard output's own handle either, which is line-buffered (each
    // piece would go out as two writes, the second a copy of its last line).
    let mut out = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    if args.json {
        crate::output::report_json::write(&mut out, &report)?;
    } else {
        let color = !args.no_color
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            && io::stdout().is_terminal();
        let text = crate::output::report::render(
            &report,
            &TextOptions {
                style: Style { color },
                events: args.events,
            },
        );
        out.write_all(text.as_bytes())?;
    }
    out.flush()?;
    // The process ends next, which frees the report at once; freeing it
    // piece by piece first (every flow's events and episodes) took
    // milliseconds on large captures.
    std::mem::forget(report);
    Ok(())
}

fn run_gen(args: &GenArgs, decode: &DecodeArgs) -> Result<(), RunError> {
    use crate::synth::scenario::{GenOptions, LossSide, generate};
    use crate::synth::{CaptureWriter, OutFormat};
    for (name, p) in [
        ("--loss", args.loss),
        ("--reorder", args.reorder),
        ("--ecn", args.ecn),
    ] {
        if !(0.0..=1.0).contains(&p) {
            return Err(RunError::Usage(format!(
                "{name} {p}: a probability is between 0 and 1"
            )));
        }
    }
    let format = match args.format.as_deref() {
        Some("pcap") => OutFormat::PcapMicros,
        Some("ns-pcap") => OutFormat::PcapNanos,
        Some("pcapng") => OutFormat::PcapNg,
        _ => OutFormat::from_path(&args.output),
    };
    let opts = GenOptions {
        scenario: args.scenario.clone(),
        seed: args.seed,
        qps: args.qps.max(1),
        messages: args.messages,
        size: args.size.max(1),
        pmtu: args.pmtu,
        loss: args.loss,
        loss_side: if args.loss_side == "receiver" {
            LossSide::Receiver
        } else {
            LossSide::Sender
        },
        reorder: args.reorder,
        ecn: args.ecn,
        link_speed_bps: decode.link_speed,
        duration_ns: args.duration,
        ts_resolution_ns: format.ts_resolution_ns(),
    };
    let started = std::time::Instant::now();
    let file = std::fs::File::create(&args.output)
        .map_err(|e| RunError::Usage(format!("{}: {e}", args.output.display())))?;
    let mut w = CaptureWriter::new(crate::synth::BackgroundWriter::new(file), format)?;
    let truth = generate(opts, &mut |ts, f| w.write(ts, f))?;
    w.into_inner().finish()?;
    if let Some(t) = &args.truth {
        let f = std::fs::File::create(t)
            .map_err(|e| RunError::Usage(format!("{}: {e}", t.display())))?;
        let mut f = BufWriter::new(f);
        serde_json::to_writer_pretty(&mut f, &truth).map_err(io::Error::other)?;
        writeln!(f)?;
        f.flush()?;
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "roce-dissect: wrote {} frames ({} flows) to {} in {:.2} s ({:.2} M frames/s)",
        crate::output::report::grouped(truth.frames),
        truth.flows.len(),
        args.output.display(),
        secs,
        truth.frames as f64 / secs.max(1e-9) / 1e6
    );
    Ok(())
}
