//! The commands behind the command line. `main.rs` only calls [`main`];
//! `args` says what each command takes, the files beside it run them.

pub mod args;
mod beside;
pub(crate) mod capture_out;
#[cfg(feature = "parquet")]
mod export_cmd;
pub mod fabric_cmd;
mod fields_cmd;
mod gen_cmd;
pub mod inputs;
mod ordered;
mod packets;
mod plan_cmd;
mod progress;
pub(crate) mod report;
mod sink;
mod stop;

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

pub use args::{
    AnalysisArgs, Cli, Command, DecodeArgs, GenArgs, PacketsArgs, ReportArgs, TuiArgs,
    parse_duration, parse_link_speed, parse_pmtu,
};
pub use progress::Progress;

use crate::capture::CaptureError;
use crate::output::text::terminal_safe;

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let mut cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `roce-dissect packet FILE`: clap sees a capture called
            // "packet" and a stray FILE; say what was probably meant.
            if e.use_stderr()
                && let Some(hint) = std::env::args().nth(1).and_then(|w| mistyped(&w))
            {
                eprintln!("roce-dissect: {hint}");
                return ExitCode::from(2);
            }
            if !e.use_stderr() {
                // --help, --version: a full disk says so (clap's own exit
                // would not), a closed pipe is fine.
                return match e.print() {
                    Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
                        eprintln!("roce-dissect: cannot write the standard output: {err}");
                        ExitCode::from(1)
                    }
                    _ => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1)),
                };
            }
            e.exit();
        }
    };
    cli.gather_read_files();
    if !matches!(cli.command, Some(Command::Tui(_))) {
        // `tcpdump -w - | roce-dissect -`: Ctrl-C stops the reading and
        // the report covers what was read (the TUI has keys for that).
        crate::capture::stop_streams_at_interrupt();
    }
    let result = match &cli.command {
        Some(Command::Packets(args)) => packets::run(args),
        Some(Command::Gen(args)) => gen_cmd::run(args),
        Some(Command::Tui(args)) => args
            .analysis
            .options(&args.decode)
            .and_then(|opts| {
                let inputs = inputs::expand(&args.captures)?;
                if inputs.paths.len() > 1 && !args.merge {
                    return Err(RunError::Usage(format!(
                        "tui reads one capture ({} given): add --merge to browse them as one, in timestamp order",
                        inputs.paths.len()
                    )));
                }
                // A bad filter is said before the screen is taken over.
                if let Some(f) = &args.display_filter {
                    crate::filter::Filter::parse(f)
                        .map_err(|e| RunError::Usage(format!("-Y: {e}")))?;
                }
                crate::tui::run(
                    &inputs.paths,
                    &args.decode.dissect_options(),
                    opts,
                    args.display_filter.as_deref(),
                )
            }),
        Some(Command::Completions(args)) => completions(args.shell),
        Some(Command::Man(args)) => man(args.command.as_deref()),
        Some(Command::Fields(args)) => fields_cmd::run(args),
        Some(Command::Plan(args)) => plan_cmd::run(args),
        Some(Command::Fabric(args)) => fabric_cmd::run(args),
        #[cfg(feature = "parquet")]
        Some(Command::Export(args)) => export_cmd::run(args),
        None if cli.captures.is_empty() => {
            Err(RunError::Usage("no capture given (see --help)".into()))
        }
        // `roce-dissect packet FILE`: a mistyped command, not two captures.
        None => match cli.captures[0].to_str().and_then(mistyped) {
            Some(hint) => Err(RunError::Usage(hint)),
            None => report::run(&cli),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(RunError::BrokenPipe) => ExitCode::SUCCESS,
        Err(e) => {
            if matches!(e, RunError::Interrupted { code: 130, .. }) {
                after_ctrl_c();
            }
            eprintln!("roce-dissect: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// The message for a first word that is no file but looks like a command.
fn mistyped(word: &str) -> Option<String> {
    if args::COMMANDS.contains(&word) || Path::new(word).exists() {
        return None;
    }
    let cmd = args::suggest_command(word)?;
    Some(format!(
        "'{}' is neither a capture file nor a command; did you mean `roce-dissect {cmd}`?",
        terminal_safe(word)
    ))
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{path}: {err}", path = terminal_safe(&.0.display().to_string()), err = terminal_safe(&.1.to_string()))]
    Capture(PathBuf, CaptureError),
    #[error("{0}")]
    Io(io::Error),
    #[error("{0}")]
    Usage(String),
    /// The command ran and found nothing to show (exit 1, like grep).
    #[error("{0}")]
    NothingFound(String),
    #[error("output closed")]
    BrokenPipe,
    /// Some of several captures could not be read (each said so).
    #[error("{failed} of {total} captures could not be read (see above)")]
    SomeFailed { failed: usize, total: usize },
    /// The user stopped the command (Ctrl-C) before it was done; `code`
    /// is the shell's for that signal (130 for SIGINT).
    #[error("{message}")]
    Interrupted { message: String, code: u8 },
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
            RunError::Capture(..) | RunError::Usage(_) | RunError::SomeFailed { .. } => 2,
            RunError::BrokenPipe => 0,
            RunError::Io(_) | RunError::NothingFound(_) => 1,
            RunError::Interrupted { code, .. } => *code,
        }
    }
}

/// A capture error of `path`; a missing file whose name is a mistyped
/// command says so.
fn capture_error(e: CaptureError, path: &Path) -> RunError {
    if let CaptureError::Io { source, .. } = &e
        && source.kind() == io::ErrorKind::NotFound
        && let Some(hint) = path.to_str().and_then(mistyped)
    {
        return RunError::Usage(hint);
    }
    RunError::Capture(path.to_path_buf(), e)
}

/// An error met while reading `path`: one of merged inputs names its own
/// file.
fn source_error(e: CaptureError, path: &Path) -> RunError {
    match e {
        CaptureError::In { file, source } => RunError::Capture(PathBuf::from(file), *source),
        other => capture_error(other, path),
    }
}

/// The frames of one capture, or of several merged (`--merge`), and the
/// name to call them by. `command` names the command in the error for
/// several captures without `--merge`.
fn open_inputs(
    paths: &[PathBuf],
    merge: bool,
    command: &str,
) -> Result<(Box<dyn crate::capture::FrameSource>, String), RunError> {
    match paths {
        [one] => {
            let reader = crate::capture::open_stream(one).map_err(|e| capture_error(e, one))?;
            Ok((Box::new(reader), one.display().to_string()))
        }
        several if merge => {
            let m = crate::capture::merge::MergedSource::open(several)
                .map_err(|e| source_error(e, Path::new("--merge")))?;
            let name = m.names().join(" + ");
            Ok((Box::new(m), name))
        }
        several => Err(RunError::Usage(format!(
            "{command} reads one capture ({} given): add --merge to read them as one, in timestamp order",
            several.len()
        ))),
    }
}

/// What the analysis tells the user beside its report
/// ([`Report::notes`](crate::analysis::Report::notes)), after the
/// capture's name when it is one of several (`of`).
fn print_notes(report: &crate::analysis::Report, of: Option<&str>) {
    for n in &report.notes {
        eprintln!("roce-dissect: note: {}{}", named(of), terminal_safe(n));
    }
}

/// `NAME: ` before a message about one capture of several, else nothing.
fn named(of: Option<&str>) -> String {
    of.map(|n| format!("{}: ", terminal_safe(n)))
        .unwrap_or_default()
}

/// Prints warnings on standard error, the `warnings` kept of `total`,
/// after the capture's name when it is one of several (`of`).
fn print_warnings(warnings: &[String], total: u64, of: Option<&str>) {
    if crate::capture::interrupted() {
        after_ctrl_c();
    }
    let name = named(of);
    for w in warnings {
        eprintln!("roce-dissect: warning: {name}{}", terminal_safe(w));
    }
    let more = total.saturating_sub(warnings.len() as u64);
    if more > 0 {
        eprintln!(
            "roce-dissect: warning: {name}{} not shown",
            crate::output::text::count(more, "more warning", "more warnings")
        );
    }
}

/// A terminal shows Ctrl-C as `^C` where the cursor was (at the start of
/// a line, the progress bar cleared): the first message after it takes
/// that line rather than following it.
fn after_ctrl_c() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if io::stderr().is_terminal() {
        ONCE.call_once(|| eprint!("\r\x1b[K"));
    }
}

fn completions(shell: clap_complete::Shell) -> Result<(), RunError> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "roce-dissect", &mut out);
    sink::Sink::stdout(io::stdout().lock()).write_all(&out)?;
    Ok(())
}

fn man(command: Option<&str>) -> Result<(), RunError> {
    let top = Cli::command();
    let page = match command {
        None => clap_mangen::Man::new(top),
        Some(name) => {
            let Some(sub) = top.find_subcommand(name).cloned() else {
                return Err(RunError::Usage(format!(
                    "no command '{}' (commands: {})",
                    terminal_safe(name),
                    args::COMMANDS.join(", ")
                )));
            };
            clap_mangen::Man::new(sub).title(format!("roce-dissect-{name}"))
        }
    };
    let mut out = Vec::new();
    page.render(&mut out)?;
    sink::Sink::stdout(io::stdout().lock()).write_all(&out)?;
    Ok(())
}
