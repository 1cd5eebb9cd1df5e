//! `roce-dissect tui`: flows, packets, header tree with hex, PSN chart and
//! PFC timeline in the terminal. State (`app`), drawing (`render`) and the
//! event loop are separate; the loop is generic over the ratatui backend.

pub mod app;
pub mod fabric_view;
pub mod index;
pub mod render;

use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGQUIT, SIGTERM};

use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind,
};
use ratatui::crossterm::execute;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Gauge};

pub use app::{Action, App};

use crate::analysis::AnalysisOptions;
use crate::capture::{CaptureError, FrameSource, MAP_WINDOW, RandomAccess, StreamReader};
use crate::dissect::DissectOptions;

/// Runs the event loop until the app asks to quit. `next_event` blocks for
/// the next input event.
pub fn event_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    next_event: &mut dyn FnMut() -> io::Result<Option<Event>>,
) -> io::Result<()>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    loop {
        let size = terminal.size().map_err(io::Error::other)?;
        app.prepare(Rect::new(0, 0, size.width, size.height));
        terminal
            .draw(|f| render::render(app, f))
            .map_err(io::Error::other)?;
        let Some(ev) = next_event()? else { continue };
        let action = match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => app.handle_key(k),
            Event::Mouse(m) => app.handle_mouse(m),
            _ => Action::None,
        };
        if action == Action::Quit {
            return Ok(());
        }
    }
}

/// A capture as the TUI reads it: a regular file, since frames are read
/// again by offset. Standard input, a pipe and a compressed capture are
/// first copied (decompressed) into an unnamed temporary file, which the
/// system removes when the program ends, however it ends.
pub struct Input {
    file: std::fs::File,
    name: String,
    /// What was done to get the file, for the title (`gzip, decompressed
    /// to a temporary file`).
    pub note: Option<String>,
}

impl Input {
    /// Opens `path` (`-`: standard input); `progress` hears (bytes read,
    /// total when known) while a stream or compressed file is copied.
    pub fn open(path: &Path, progress: &mut dyn FnMut(u64, u64)) -> Result<Input, CaptureError> {
        use crate::capture::compress::{self, Compression, Decompressed};
        use std::io::{Read, Write};
        let name = path.display().to_string();
        let io_err = |source| CaptureError::Io {
            path: path.to_path_buf(),
            source,
        };
        let stdin = path.as_os_str() == "-";
        let (input, total): (Box<dyn Read + Send>, Option<u64>) = if stdin {
            (Box::new(crate::capture::widened_stdin()), None)
        } else {
            let meta = std::fs::metadata(path).map_err(io_err)?;
            if meta.is_dir() {
                return Err(io_err(io::Error::other("is a directory")));
            }
            let file = std::fs::File::open(path).map_err(io_err)?;
            if meta.is_file()
                && crate::capture::compression_of(&file)
                    .map_err(io_err)?
                    .is_none()
            {
                // Its header is read now, so that a file that is no
                // capture is said before the screen is taken over.
                StreamReader::mapped(file.try_clone().map_err(io_err)?, 1 << 16)?;
                return Ok(Input {
                    file,
                    name,
                    note: None,
                });
            }
            if !meta.is_file() {
                crate::capture::widen_pipe(&file);
            }
            (Box::new(file), meta.is_file().then_some(meta.len()))
        };
        let mut input = input;
        let head = compress::peek(&mut *input).map_err(io_err)?;
        let kind = Compression::detect(&head);
        let input = compress::unread(head, input);
        let (mut reader, consumed, mut note): (Box<dyn Read>, _, _) = match kind {
            Some(c) if c.is_read() => {
                let d = Decompressed::start(c, input).map_err(io_err)?;
                let consumed = d.consumed();
                (
                    Box::new(d),
                    Some(consumed),
                    format!("{}, decompressed to a temporary file", c.name()),
                )
            }
            Some(c) => return Err(CaptureError::Compressed(c)),
            None => (input, None, "read into a temporary file".to_string()),
        };
        let tmp_err = |e: io::Error| CaptureError::Io {
            path: std::env::temp_dir(),
            source: io::Error::new(
                e.kind(),
                format!(
                    "cannot write a temporary copy for the TUI ({e}); set TMPDIR to a folder with room"
                ),
            ),
        };
        let mut tmp = tempfile::tempfile().map_err(tmp_err)?;
        let mut buf = vec![0u8; 1 << 20];
        let mut copied = 0u64;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A compressed capture cut short: its frames up to the cut
                // are shown, as those of a plain capture cut short are.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && consumed.is_some() => {
                    note = format!("{note}; {e}");
                    break;
                }
                Err(e) => return Err(io_err(e)),
            };
            tmp.write_all(&buf[..n]).map_err(tmp_err)?;
            copied += n as u64;
            let done = consumed
                .as_ref()
                .map_or(copied, |c| c.load(Ordering::Relaxed));
            progress(done, total.unwrap_or(0));
        }
        tmp.flush().map_err(tmp_err)?;
        Ok(Input {
            file: tmp,
            name,
            note: Some(note),
        })
    }
}

impl Input {
    /// Several captures merged (timestamp order) into an unnamed
    /// temporary pcapng file.
    pub fn merged(
        paths: &[PathBuf],
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Input, CaptureError> {
        let mut source = crate::capture::merge::MergedSource::open(paths)?;
        let name = source.names().join(" + ");
        let tmp = tempfile::tempfile().map_err(|e| CaptureError::Io {
            path: std::env::temp_dir(),
            source: e,
        })?;
        let mut out = io::BufWriter::with_capacity(1 << 20, &tmp);
        crate::capture::merge::write_pcapng(&mut source, &mut out, progress)?;
        io::Write::flush(&mut out).map_err(|e| CaptureError::Io {
            path: std::env::temp_dir(),
            source: e,
        })?;
        drop(out);
        Ok(Input {
            file: tmp,
            name,
            note: Some(format!(
                "{} captures merged into a temporary file",
                paths.len()
            )),
        })
    }
}

/// Opens a capture for the TUI: first pass (with a progress gauge drawn by
/// `draw_progress`) then the app.
pub fn load(
    path: &Path,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    draw_progress: &mut dyn FnMut(f64, u64),
) -> Result<App, CaptureError> {
    let input = Input::open(path, &mut |_, _| {})?;
    let mut app = load_input(input, dissect_opts, opts, draw_progress)?;
    app.reading = vec![path.to_path_buf()];
    Ok(app)
}

/// The first pass over an opened capture, then the app.
pub fn load_input(
    input: Input,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    draw_progress: &mut dyn FnMut(f64, u64),
) -> Result<App, CaptureError> {
    let Input { file, name, note } = input;
    let link_speed = opts.link_speed;
    // The timing view draws each flow's throughput over time.
    let mut opts = opts;
    opts.timeline_series = true;
    let io_err = |source| CaptureError::Io {
        path: name.clone().into(),
        source,
    };
    let mut source = StreamReader::mapped(file.try_clone().map_err(io_err)?, MAP_WINDOW)?;
    let (report, index) = index::first_pass(
        &mut source,
        &name,
        dissect_opts,
        opts,
        &mut |done, total, frames| {
            let ratio = total.map_or(0.0, |t| done as f64 / t.max(1) as f64);
            draw_progress(ratio, frames);
        },
    )?;
    let sections = source.sections().to_vec();
    let ts_resolution_ns = source.ts_resolution_ns();
    let access = Some(RandomAccess::new(file, sections)?);
    let title = match &note {
        Some(n) => format!("{name} ({n})"),
        None => name,
    };
    let warnings = report.capture.warnings.clone();
    let mut app = App::new(title, report, index, access);
    app.dissect_opts = *dissect_opts;
    app.ts_resolution_ns = ts_resolution_ns;
    app.link_speed = link_speed;
    // What the report would warn of, on the status line until a key.
    if let Some(first) = warnings.first() {
        app.status = match warnings.len() {
            1 => format!("warning: {first}"),
            n => format!(
                "warning: {first} (+{} more: `roce-dissect CAPTURE` lists them)",
                n - 1
            ),
        };
    }
    Ok(app)
}

/// SIGTERM, SIGINT and SIGQUIT end the program as they would, but with
/// the terminal given back first (raw mode and the alternate screen would
/// otherwise outlive it) when the returned check runs; a second one ends
/// it at once. SIGHUP keeps its default: the terminal is gone, there is
/// nothing to give back (and the event reader would spin on the closed
/// terminal).
pub(crate) fn signal_watch() -> impl Fn() {
    let noted = crate::signals::note(&[SIGTERM, SIGINT, SIGQUIT]);
    move || {
        if let Some(sig) = noted.which() {
            let _ = execute!(io::stdout(), DisableMouseCapture);
            ratatui::restore();
            std::process::exit(128 + sig);
        }
    }
}

fn not_a_terminal() -> crate::cli::RunError {
    crate::cli::RunError::Usage(
        "tui draws on a terminal and standard output is not one; for a file or a pipe use `roce-dissect CAPTURE` (the report) or `roce-dissect packets CAPTURE`".into(),
    )
}

/// Takes over the terminal, or says in one line why it cannot: standard
/// output is not a terminal (redirected to a file or a pipe, where the
/// screen would be written as escape codes), or there is no terminal to
/// put in raw mode (a script, `setsid`, a service).
pub(crate) fn terminal() -> Result<ratatui::DefaultTerminal, crate::cli::RunError> {
    if !io::stdout().is_terminal() {
        return Err(not_a_terminal());
    }
    ratatui::try_init().map_err(|e| {
        // Raw mode may have been entered before the step that failed.
        ratatui::restore();
        crate::cli::RunError::Usage(format!(
            "tui needs a terminal to draw on and read keys from: {e}"
        ))
    })
}

/// The whole `tui` command on the real terminal. A capture that cannot be
/// read is reported before the screen is taken over.
pub fn run(
    paths: &[PathBuf],
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    display_filter: Option<&str>,
) -> Result<(), crate::cli::RunError> {
    if !io::stdout().is_terminal() {
        return Err(not_a_terminal());
    }
    // A file that cannot be read is reported, and a stream or a compressed
    // file copied, on the normal screen, before it is taken over.
    let Some(first) = paths.first() else {
        return Err(crate::cli::RunError::Usage("no capture given".into()));
    };
    let name = if paths.len() > 1 {
        format!("{} captures", paths.len())
    } else {
        first.display().to_string()
    };
    let mut progress = crate::cli::Progress::new(&name);
    let input = if paths.len() > 1 {
        Input::merged(paths, &mut |done, total| progress.update_bytes(done, total))
    } else {
        Input::open(first, &mut |done, total| progress.update_bytes(done, total))
    };
    let path = if paths.len() > 1 {
        PathBuf::from("--merge")
    } else {
        first.clone()
    };
    let input = input.map_err(|e| match e {
        CaptureError::In { file, source } => crate::cli::RunError::Capture(file.into(), *source),
        e => crate::cli::RunError::Capture(path.clone(), e),
    })?;
    progress.finish();
    let path = Path::new(&input.name).to_path_buf();
    if let Some(note) = &input.note {
        eprintln!(
            "roce-dissect: {}: {note} (the TUI reads frames again by offset; the copy goes when it ends)",
            crate::output::text::terminal_safe(&path.display().to_string())
        );
    }
    let mut terminal = terminal()?;
    let _ = execute!(io::stdout(), EnableMouseCapture);
    let bail_if_signalled = signal_watch();
    let result = (|| -> Result<(), crate::cli::RunError> {
        let mut app = load_input(input, dissect_opts, opts, &mut |ratio, frames| {
            bail_if_signalled();
            let _ = terminal.draw(|f| {
                let g = Gauge::default()
                    .block(Block::default().borders(Borders::ALL).title(format!(
                        " Reading {} ({}) ",
                        path.display(),
                        crate::output::text::count(frames, "frame", "frames")
                    )))
                    .ratio(ratio.clamp(0.0, 1.0));
                let a = f.area();
                f.render_widget(
                    g,
                    Rect::new(
                        a.x,
                        (a.height / 2).saturating_sub(1),
                        a.width,
                        3.min(a.height),
                    ),
                );
            });
        })
        .map_err(|e| crate::cli::RunError::Capture(path.to_path_buf(), e))?;
        app.reading = paths.to_vec();
        // No RoCE: whether it is there at another UDP port, as the report
        // tells.
        if paths.len() == 1 {
            crate::cli::report::look_elsewhere(&mut app.report, first, dissect_opts);
        }
        if let Some(f) = display_filter {
            app.start_with_filter(f);
        }
        event_loop(&mut terminal, &mut app, &mut || {
            bail_if_signalled();
            if event::poll(Duration::from_millis(250))? {
                event::read().map(Some)
            } else {
                Ok(None)
            }
        })?;
        Ok(())
    })();
    let _ = execute!(io::stdout(), DisableMouseCapture);
    ratatui::restore();
    result
}
