//! `roce-dissect tui`: flows, packets, header tree with hex, PSN chart and
//! PFC timeline in the terminal. State (`app`), drawing (`render`) and the
//! event loop are separate; the loop is generic over the ratatui backend.

pub mod app;
pub mod index;
pub mod render;

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
use crate::capture::{CaptureError, FrameSource, RandomAccess, open_stream};
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

/// Opens a capture for the TUI: first pass (with a progress gauge drawn by
/// `draw_progress`) then the app.
pub fn load(
    path: &Path,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    draw_progress: &mut dyn FnMut(f64, u64),
) -> Result<App, CaptureError> {
    let mut source = open_stream(path)?;
    let name = path.display().to_string();
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
    let access = if path.as_os_str() == "-" {
        None
    } else {
        let file = std::fs::File::open(path).map_err(|e| CaptureError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        Some(RandomAccess::new(file, sections)?)
    };
    let mut app = App::new(name, report, index, access);
    app.dissect_opts = *dissect_opts;
    Ok(app)
}

/// Takes over the terminal, or says in one line why it cannot: standard
/// output is not a terminal (redirected to a file or a pipe, where the
/// screen would be written as escape codes), or there is no terminal to
/// put in raw mode (a script, `setsid`, a service).
fn terminal() -> Result<ratatui::DefaultTerminal, crate::cli::RunError> {
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() {
        return Err(crate::cli::RunError::Usage(
            "tui draws on a terminal and standard output is not one; for a file or a pipe use `roce-dissect CAPTURE` (the report) or `roce-dissect packets CAPTURE`".into(),
        ));
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
    path: &Path,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
) -> Result<(), crate::cli::RunError> {
    let regular = path.as_os_str() != "-" && std::fs::metadata(path).is_ok_and(|m| m.is_file());
    if !regular && std::fs::metadata(path).is_ok() || path.as_os_str() == "-" {
        return Err(crate::cli::RunError::Usage(
            "tui needs a regular file: it reads frames again by offset (save a stream or pipe to a file first)".into(),
        ));
    }
    // Fail early, on the normal screen, for files that cannot be read.
    open_stream(path).map_err(|e| crate::cli::RunError::Capture(path.to_path_buf(), e))?;
    let mut terminal = terminal()?;
    let _ = execute!(io::stdout(), EnableMouseCapture);
    // SIGTERM, SIGINT and SIGQUIT end the program as they would, but with
    // the terminal given back first (raw mode and the alternate screen
    // would otherwise outlive it); a second one ends it at once. SIGHUP
    // keeps its default: the terminal is gone, there is nothing to give
    // back (and the event reader would spin on the closed terminal).
    let signalled = Arc::new(AtomicUsize::new(0));
    let again = Arc::new(AtomicBool::new(false));
    for sig in [SIGTERM, SIGINT, SIGQUIT] {
        // The handlers only store into atomics (or exit, the second time).
        let _ =
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&again));
        let _ = signal_hook::flag::register(sig, Arc::clone(&again));
        let _ = signal_hook::flag::register_usize(sig, Arc::clone(&signalled), sig as usize);
    }
    let bail_if_signalled = || {
        let sig = signalled.load(Ordering::Relaxed);
        if sig != 0 {
            let _ = execute!(io::stdout(), DisableMouseCapture);
            ratatui::restore();
            std::process::exit(128 + sig as i32);
        }
    };
    let result = (|| -> Result<(), crate::cli::RunError> {
        let mut app = load(path, dissect_opts, opts, &mut |ratio, frames| {
            bail_if_signalled();
            let _ = terminal.draw(|f| {
                let g = Gauge::default()
                    .block(Block::default().borders(Borders::ALL).title(format!(
                        " Reading {} ({} frames) ",
                        path.display(),
                        crate::output::report::grouped(frames)
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
