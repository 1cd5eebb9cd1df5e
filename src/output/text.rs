//! Text that ends up on a terminal or in a shell: names made safe to print
//! (a file name may hold control characters) and quoted to paste.

pub use crate::units::count;
use std::fmt::Write as _;

/// `s` with control characters escaped (`\x1b`, `\n`, ...), so that a
/// file name cannot move the cursor, change colours or retitle the
/// terminal it is printed on.
pub fn terminal_safe(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` as one word a POSIX shell reads back as `s`: bare when it is made
/// of characters no shell treats specially, in single quotes otherwise,
/// and in `$'...'` with escapes when it holds control characters (which
/// must not reach the terminal raw).
pub fn shell_quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    if !s.chars().any(char::is_control) {
        return format!("'{}'", s.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() && u32::from(c) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(terminal_safe("plain name.pcap"), "plain name.pcap");
        assert_eq!(terminal_safe("a\u{1b}]0;x\u{7}b"), "a\\u{1b}]0;x\\u{7}b");
        assert_eq!(terminal_safe("two\nlines"), "two\\nlines");
    }

    #[test]
    fn quoted_words_read_back_as_themselves() {
        let names = [
            "captures/loss.pcap",
            "my capture (1).pcap",
            "x;touch PWNED;.pcap",
            "it's.pcap",
            "$(reboot)`x`.pcap",
            "tab\there\u{1b}[31m.pcap",
            "",
            "ünïcode.pcap",
        ];
        assert_eq!(shell_quote(names[0]), "captures/loss.pcap");
        assert_eq!(shell_quote(names[1]), "'my capture (1).pcap'");
        for n in names {
            let q = shell_quote(n);
            assert!(!q.chars().any(char::is_control), "{q:?}");
            // bash reads the word back as the name.
            let Ok(out) = Command::new("bash")
                .arg("-c")
                .arg(format!("printf %s {q}"))
                .output()
            else {
                return;
            };
            assert_eq!(String::from_utf8_lossy(&out.stdout), n, "{q}");
        }
    }

    #[test]
    fn counts_are_singular_for_one() {
        assert_eq!(count(1, "frame", "frames"), "1 frame");
        assert_eq!(count(0, "frame", "frames"), "0 frames");
        assert_eq!(count(12_345, "frame", "frames"), "12,345 frames");
    }
}
