//! Progress on standard error for runs that take more than a second: a bar
//! when the size of the input is known, a spinner with the frames and bytes
//! read so far when it is not (standard input, a pipe). Nothing when
//! standard error is not a terminal.

use std::io::{self, IsTerminal};
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

/// After this long without finishing, progress appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);

pub struct Progress {
    started: Instant,
    enabled: bool,
    bar: Option<ProgressBar>,
    /// What is being read, shown beside the figures.
    what: String,
}

impl Progress {
    /// Progress of reading `what`, on standard error if it is a terminal.
    pub fn new(what: &str) -> Self {
        Progress {
            started: Instant::now(),
            enabled: std::io::stderr().is_terminal(),
            bar: None,
            what: crate::output::text::terminal_safe(what),
        }
    }

    /// [`Progress::new`] for a command that writes to standard output as
    /// it reads (`packets`): none when that is the terminal too, where the
    /// bar would be drawn between the lines.
    pub fn beside_output(what: &str) -> Self {
        let mut p = Progress::new(what);
        p.enabled &= !std::io::stdout().is_terminal();
        p
    }

    /// `done` of `total` bytes read (`total` 0: unknown), `frames` so far.
    /// Always `Continue`: as the pipeline's progress callback, it never
    /// stops the reading.
    pub fn update(&mut self, done: u64, total: u64, frames: u64) -> ControlFlow<()> {
        if !self.enabled || self.started.elapsed() < SHOW_AFTER {
            return ControlFlow::Continue(());
        }
        let bar = self.bar.get_or_insert_with(|| {
            // The figures first and the name last, cut to what the
            // terminal's width leaves it (`wide_msg`): at 80 columns a
            // line with a long path wrapped onto two.
            let (bar, template) = if total > 0 {
                (
                    ProgressBar::new(total),
                    "{spinner} [{bar:20}] {percent:>3}%  eta {eta}  {prefix}  {wide_msg}",
                )
            } else {
                (
                    ProgressBar::new_spinner(),
                    "{spinner} {prefix}  {bytes} read  {elapsed}  {wide_msg}",
                )
            };
            bar.set_draw_target(ProgressDrawTarget::term_like_with_hz(
                Box::new(Narrower(console::Term::buffered_stderr())),
                20,
            ));
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("#>-"));
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        bar.set_position(done);
        bar.set_prefix(crate::output::text::count(frames, "frame", "frames"));
        bar.set_message(self.what.clone());
        ControlFlow::Continue(())
    }

    /// `done` of `total` bytes copied (`total` 0: unknown), no frames yet.
    pub fn update_bytes(&mut self, done: u64, total: u64) {
        let _ = self.update(done, total, 0);
        if let Some(bar) = &self.bar {
            bar.set_prefix("copying");
        }
    }

    /// Runs `f` (which writes to the terminal) with the bar out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Removes what was drawn.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Standard error as the bar is drawn to it, two columns narrower than the
/// terminal: a line as wide as the terminal left the cursor past its last
/// column, so the `^C` the terminal shows for Ctrl-C went to the next line,
/// and the bar, cleared there, left its line behind (as it does still for
/// more than two keys typed during a run).
#[derive(Debug)]
struct Narrower(console::Term);

impl TermLike for Narrower {
    fn width(&self) -> u16 {
        self.0.size().1.saturating_sub(2).max(1)
    }

    fn height(&self) -> u16 {
        self.0.size().0
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_up(n)
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_down(n)
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_right(n)
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_left(n)
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.0.write_line(s)
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        self.0.write_str(s)
    }

    fn clear_line(&self) -> io::Result<()> {
        self.0.clear_line()
    }

    fn flush(&self) -> io::Result<()> {
        self.0.flush()
    }
}
