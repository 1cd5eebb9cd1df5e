//! Text laid out for a terminal's width: long lines broken between words,
//! their continuation indented under their start, so that an 80-column
//! terminal shows the report as lines rather than as a mess of wraps.
//! Widths are display columns: colour sequences take none, `→` and `µ`
//! one each.

use unicode_width::UnicodeWidthChar;

/// The columns `s` takes on a terminal, its colour sequences (`ESC [ ... m`)
/// left out.
pub fn display_width(s: &str) -> usize {
    let mut width = 0;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            skip_sequence(&mut chars);
            continue;
        }
        width += c.width().unwrap_or(0);
    }
    width
}

/// Past a control sequence whose ESC was just read: '[', parameters,
/// then its final byte.
fn skip_sequence(chars: &mut std::str::Chars<'_>) {
    if chars.next() == Some('[') {
        for c in chars.by_ref() {
            if ('\x40'..='\x7e').contains(&c) {
                break;
            }
        }
    }
}

/// `text` with every line wider than `width` broken at spaces into lines
/// that fit, each continuation indented four columns more than the line it
/// continues. A break falls between clauses (parted by `·` or by two
/// spaces or more) where they fit on a line; a `·` separator stays at the
/// end of the line before a break, and a unit with its number. A word
/// wider than the room left stays whole (a path, an address): the
/// terminal wraps it, nothing is cut.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if display_width(body) <= width {
            out.push_str(line);
            continue;
        }
        wrap_line(&mut out, body, width);
        out.push_str(newline);
    }
    out
}

/// `text` padded with spaces to `width` columns: on the left when
/// `right` (a right-aligned cell), else on the right.
pub fn pad(text: &str, width: usize, right: bool) -> String {
    let spaces = " ".repeat(width.saturating_sub(display_width(text)));
    if right {
        spaces + text
    } else {
        format!("{text}{spaces}")
    }
}

/// Writes the text `write` writes to `out`: as it comes without a
/// `width`, else gathered and then fitted to it.
pub fn write_fitted<W: std::io::Write, E: From<std::io::Error>>(
    out: &mut W,
    width: Option<usize>,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<(), E>,
) -> Result<(), E> {
    let Some(width) = width else {
        return write(out);
    };
    let mut page = Vec::new();
    write(&mut page)?;
    out.write_all(wrap(&String::from_utf8_lossy(&page), width).as_bytes())?;
    Ok(())
}

/// The spaces `body` starts with, colour sequences before or among them
/// left out (a dimmed line starts with one).
fn indent_of(body: &str) -> usize {
    let mut spaces = 0;
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' => spaces += 1,
            '\x1b' => skip_sequence(&mut chars),
            _ => break,
        }
    }
    spaces
}

/// Units a number is never parted from.
const UNITS: [&str; 16] = [
    "ns", "µs", "us", "ms", "s", "B", "KiB", "MiB", "GiB", "b/s", "kb/s", "Mb/s", "Gb/s", "m",
    "bytes", "%",
];

/// Words of a line, each with the spaces before it; a lone `·` joins the
/// word before it, so that a break falls after it, and a unit joins its
/// number.
fn words(body: &str) -> Vec<(&str, &str)> {
    let mut words: Vec<(&str, &str)> = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let word_at = rest.len() - rest.trim_start_matches(' ').len();
        let (spaces, tail) = rest.split_at(word_at);
        let end = tail.find(' ').unwrap_or(tail.len());
        let (word, after) = tail.split_at(end);
        if word.is_empty() {
            // Trailing spaces: kept with the last word.
            if let Some(last) = words.last_mut() {
                let start = last.1.as_ptr() as usize - body.as_ptr() as usize;
                last.1 = &body[start..];
            }
            break;
        }
        // A `·` stays after the word before it, and so does a unit after
        // its number (`2.0 µs`, `25216 B`).
        let unit = UNITS.contains(&word.trim_end_matches([',', ';', ':', ')', '.']));
        if (word == "·" || unit)
            && let Some(last) = words.last_mut()
            && (word == "·" || last.1.ends_with(|c: char| c.is_ascii_digit()))
        {
            let start = last.1.as_ptr() as usize - body.as_ptr() as usize;
            let end = word.as_ptr() as usize - body.as_ptr() as usize + word.len();
            last.1 = &body[start..end];
        } else {
            words.push((spaces, word));
        }
        rest = after;
    }
    words
}

fn wrap_line(out: &mut String, body: &str, width: usize) {
    let words = words(body);
    let indent = indent_of(body);
    // The continuation's indent, leaving at least half the width for words.
    let cont = (indent + 4).min(width / 2);
    let mut line = Line {
        out,
        used: 0,
        fresh: true,
        width,
        cont,
    };
    // Clauses, ended by a `·` separator or by two spaces or more, are kept
    // together when they fit on a line of their own.
    let mut clause_start = 0;
    for (i, (_, word)) in words.iter().enumerate() {
        let ends = word.ends_with('·') || words.get(i + 1).is_none_or(|next| next.0.len() >= 2);
        if ends {
            let clause = &words[clause_start..=i];
            let w: usize = clause
                .iter()
                .enumerate()
                .map(|(j, (sp, wd))| if j == 0 { 0 } else { sp.len() } + display_width(wd))
                .sum();
            let lead = if line.fresh { 0 } else { clause[0].0.len() };
            if clause_start > 0 && line.used + lead + w > width && cont + w <= width {
                line.newline();
            }
            for (sp, wd) in clause {
                line.push(sp, wd);
            }
            clause_start = i + 1;
        }
    }
}

/// The line being filled by [`wrap_line`].
struct Line<'a> {
    out: &'a mut String,
    used: usize,
    /// Nothing on this line yet but its indent.
    fresh: bool,
    width: usize,
    cont: usize,
}

impl Line<'_> {
    fn newline(&mut self) {
        self.out.push('\n');
        self.out.extend(std::iter::repeat_n(' ', self.cont));
        self.used = self.cont;
        self.fresh = true;
    }

    /// Puts `word` after `spaces`, on a new line if it does not fit (a
    /// line's first word is put whatever its width).
    fn push(&mut self, spaces: &str, word: &str) {
        let w = display_width(word);
        if !self.fresh && self.used + spaces.len() + w > self.width {
            self.newline();
        }
        if !self.fresh || self.used == 0 {
            // The line's own leading spaces, or those between two words.
            self.out.push_str(spaces);
            self.used += spaces.len();
        }
        self.out.push_str(word);
        self.used += w;
        self.fresh = false;
    }
}

/// Whether `line`, a line of [`wrap`]'s text, fits in `width` columns or
/// is one word that fits on no line (after its indent; a `·` after it
/// belongs to it).
pub fn fits(line: &str, width: usize) -> bool {
    display_width(line) <= width || !line.trim().trim_end_matches(" ·").contains(' ')
}

/// The width to lay text out for on standard output: `asked` (`--width`;
/// 0 for no limit), else the terminal's when standard output is one
/// (`COLUMNS` first, as `ls` reads it), else none: a pipe or a file gets
/// the lines whole.
pub fn stdout_width(asked: Option<usize>) -> Option<usize> {
    if let Some(w) = asked {
        return (w > 0).then_some(w);
    }
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return None;
    }
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    from_env.or_else(|| {
        crossterm::terminal::size()
            .ok()
            .map(|(cols, _)| usize::from(cols))
            .filter(|&c| c > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_takes_no_room_and_arrows_one_column() {
        assert_eq!(display_width("\x1b[31m    7\x1b[0m"), 5);
        assert_eq!(display_width("10.0.0.7 → 10.0.1.3"), 19);
        assert_eq!(display_width("2.0 µs"), 6);
        assert_eq!(display_width("\x1b[1mFlows\x1b[0m"), 5);
    }

    #[test]
    fn long_lines_break_between_words_under_their_indent() {
        let line = "  flow #1   frame 175      +0.000640 s  PSN 6291465..6291467 (3 packets)  after the NAK in frame 164 (2.0 µs later)\n";
        let got = wrap(line, 80);
        for l in got.lines() {
            assert!(display_width(l) <= 80, "{l:?}");
        }
        let lines: Vec<&str> = got.lines().collect();
        // Broken where two spaces part its fields.
        assert_eq!(
            lines[0],
            "  flow #1   frame 175      +0.000640 s  PSN 6291465..6291467 (3 packets)"
        );
        assert_eq!(lines[1], "      after the NAK in frame 164 (2.0 µs later)");
        // Nothing lost or added but the breaks: the words are the same.
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(&got), words(line));
        // A line that fits is left as it is, its spacing too.
        assert_eq!(wrap(line, 200), line);
        assert_eq!(wrap("a  b\n\nc", 3), "a\n b\n\nc");
    }

    #[test]
    fn a_dot_separator_ends_a_line_and_a_long_word_stays_whole() {
        let got = wrap("17 retransmits · 3 out of order · 0 missing", 20);
        assert_eq!(got, "17 retransmits ·\n    3 out of order ·\n    0 missing");
        // A clause wider than a line is broken between its words.
        let got = wrap("a · the longest clause of them all · b", 16);
        assert_eq!(got, "a · the longest\n    clause of\n    them all · b");
        let path = "/a/very/long/path/that/does/not/fit/anywhere.pcapng";
        let got = wrap(&format!("reading {path} now"), 20);
        assert_eq!(got, format!("reading\n    {path}\n    now"));
        // A unit stays with its number.
        assert_eq!(
            wrap("timer 300.0 µs, off", 12),
            "timer\n    300.0 µs,\n    off"
        );
        assert_eq!(wrap("after 3 B", 8), "after\n    3 B");
        // A dimmed line's continuation is indented under its words too.
        let dim = "\x1b[2m      mean: from the first to the last · --timeline lists\x1b[0m";
        assert_eq!(
            wrap(dim, 40),
            "\x1b[2m      mean: from the first to the last ·\n          --timeline lists\x1b[0m"
        );
        // Colour sequences do not count.
        let red = "\x1b[31mkept sending\x1b[0m";
        let got = wrap(&format!("sender {red} for 3.9 µs"), 22);
        assert_eq!(got, format!("sender {red}\n    for 3.9 µs"));
    }
}
