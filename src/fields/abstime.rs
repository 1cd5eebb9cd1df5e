//! Absolute times in words, as tshark writes and reads `frame.time`: in
//! the local time zone (the `TZ` variable, else the system's), `Jan  1,
//! 2026 00:00:00.000000108 UTC`. The zone comes from the `jiff` crate,
//! which reads the same time zone database the C library does.

use std::fmt::Write as _;
use std::sync::OnceLock;

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::fmt::strtime::BrokenDownTime;
use jiff::tz::TimeZone;

static ZONE: OnceLock<TimeZone> = OnceLock::new();

/// The local time zone, looked up once.
fn local() -> &'static TimeZone {
    ZONE.get_or_init(TimeZone::system)
}

/// Writes and reads times in words in UTC rather than the local zone,
/// for output that must not depend on the machine (snapshot tests);
/// whether it took (it does not once a time was written or read).
pub fn use_utc() -> bool {
    ZONE.set(TimeZone::UTC).is_ok() || local() == &TimeZone::UTC
}

/// Nanoseconds since the epoch as tshark's `frame.time`: the date and
/// time in the local zone, to the nanosecond, and the zone's
/// abbreviation. A time out of the calendar's range (years beyond 9999)
/// is written as seconds since the epoch.
pub fn write_local(ns: i128, out: &mut String) {
    match Timestamp::from_nanosecond(ns) {
        Ok(ts) => {
            let z = ts.to_zoned_datetime(local().clone());
            let _ = write!(out, "{}", z.strftime("%b %e, %Y %H:%M:%S.%N %Z"));
        }
        Err(_) => {
            let sign = if ns < 0 { "-" } else { "" };
            let a = ns.unsigned_abs();
            let _ = write!(out, "{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000);
        }
    }
}

/// The forms a filter may write an absolute time in (those tshark 4.0
/// reads): `Jan 1, 2026 00:00:00.0005`, `2026-01-01 00:00:00.0005`,
/// `2026-01-01T00:00:00.0005`, `2026-01-01`; in local time unless it ends
/// in `Z` or ` UTC`. Returns nanoseconds since the epoch.
pub fn parse(text: &str) -> Option<i128> {
    // Runs of spaces as one ("Jan  1, 2026" as tshark writes it).
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let (text, utc) = if let Some(t) = text.strip_suffix(" UTC") {
        (t, true)
    } else if let Some(t) = text.strip_suffix('Z') {
        (t, true)
    } else {
        (text.as_str(), false)
    };
    let civil = civil(text)?;
    let zone = if utc { TimeZone::UTC } else { local().clone() };
    let z = civil.to_zoned_datetime(zone).ok()?;
    Some(z.timestamp().as_nanosecond())
}

fn civil(text: &str) -> Option<DateTime> {
    const FORMS: [&str; 6] = [
        "%b %d, %Y %H:%M:%S%.f",
        "%b %d, %Y %H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",
    ];
    for form in FORMS {
        if let Ok(t) = BrokenDownTime::parse(form, text)
            && let Ok(d) = t.to_datetime()
        {
            return Some(d);
        }
    }
    // A date alone: its midnight.
    BrokenDownTime::parse("%Y-%m-%d", text)
        .ok()?
        .to_date()
        .ok()
        .map(|d| d.to_datetime(jiff::civil::Time::midnight()))
}

#[cfg(test)]
mod tests {
    use super::*;

    // These read the local zone; the suite may run in any zone, so each
    // compares a local form with its own reading, and UTC forms with
    // fixed figures.
    #[test]
    fn utc_forms_read_as_the_epoch_says() {
        let t = 1_767_225_600_000_500_000i128;
        for text in [
            "Jan 1, 2026 00:00:00.0005 UTC",
            "Jan  1, 2026 00:00:00.000500000 UTC",
            "2026-01-01 00:00:00.0005 UTC",
            "2026-01-01T00:00:00.0005Z",
        ] {
            assert_eq!(parse(text), Some(t), "{text}");
        }
        assert_eq!(parse("2026-01-01 UTC"), Some(1_767_225_600_000_000_000));
        assert_eq!(
            parse("2026-01-01 00:01 UTC"),
            Some(1_767_225_660_000_000_000)
        );
        for bad in [
            "Jan 1, 2026",
            "yesterday",
            "2026-13-01 00:00:00",
            "",
            "1767225600",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_written_time_reads_back() {
        for ns in [0i128, 1_767_225_600_000_000_108, 1_700_000_000_123_456_789] {
            let mut s = String::new();
            write_local(ns, &mut s);
            // The zone's abbreviation is written, not read: drop it.
            let (time, zone) = s.rsplit_once(' ').unwrap();
            assert!(!zone.is_empty(), "{s}");
            assert_eq!(parse(time), Some(ns), "{s}");
        }
        let mut s = String::new();
        write_local(i128::MAX, &mut s);
        assert!(s.starts_with("170141183460469231731"), "{s}");
    }
}
