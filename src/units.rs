//! Numbers as people read them: a duration in ns, µs, ms or s, digits in
//! groups of three, a count with its noun. Shared by every output and by
//! the warnings the analysis words for the report.

/// Formats nanoseconds for people: `335.5 µs`, `1.92 ms`.
pub fn human_ns(ns: u64) -> String {
    let f = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", f / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", f / 1e6)
    } else {
        format!("{:.3} s", f / 1e9)
    }
}

/// Thousands separators: 1234567 → 1,234,567.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` and a noun, singular for one: `1 frame`, `2,000 frames`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_as_people_read_them() {
        assert_eq!(human_ns(999), "999 ns");
        assert_eq!(human_ns(335_500), "335.5 µs");
        assert_eq!(human_ns(1_920_000), "1.92 ms");
        assert_eq!(human_ns(2_500_000_000), "2.500 s");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(123), "123");
        assert_eq!(count(1, "frame", "frames"), "1 frame");
        assert_eq!(count(2_000, "frame", "frames"), "2,000 frames");
    }
}
