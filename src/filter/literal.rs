//! Literals read by the type of the field they meet, and how a field's
//! values compare with them.

use std::cmp::Ordering;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::fields::{FieldType, Value};

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Uint(u64),
    Ether([u8; 6]),
    /// An address and how many leading bits must match (`/24`).
    Ipv4(u32, u8),
    Ipv6(u128, u8),
    Bytes(Vec<u8>),
    Str(String),
    /// Nanoseconds.
    Time(i128),
}

/// An unsigned integer: decimal, `0x` hex, `0b` binary or `0`-led octal.
pub fn integer(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        return u64::from_str_radix(b, 2).ok();
    }
    if s.len() > 1 && s.starts_with('0') {
        return u64::from_str_radix(&s[1..], 8).ok();
    }
    s.parse().ok()
}

/// Bytes as `02:00:5e`, `02-00-5e`, `02.00.5e`, `0x02005e`-less hex
/// (`02005e`, an even number of digits) or one byte (`2`, `02`).
pub fn bytes(s: &str) -> Option<Vec<u8>> {
    if s.is_empty() {
        return None;
    }
    for sep in [':', '-', '.'] {
        if s.contains(sep) {
            return s
                .split(sep)
                .map(|p| {
                    if (1..=2).contains(&p.len()) {
                        u8::from_str_radix(p, 16).ok()
                    } else {
                        None
                    }
                })
                .collect();
        }
    }
    if s.len() <= 2 {
        return u8::from_str_radix(s, 16).ok().map(|b| vec![b]);
    }
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok()))
        .collect()
}

/// Seconds (`1.5`, `-0.000001`) as nanoseconds.
/// Milliseconds (up to 6 decimals) as nanoseconds.
fn millis(s: &str) -> Option<i128> {
    if let Some(p) = s.strip_prefix('-') {
        return millis(p).map(|n| -n);
    }
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 6 || !frac.chars().all(|c| c.is_ascii_digit()) || whole.is_empty() {
        return None;
    }
    let whole: i128 = whole.parse().ok()?;
    let frac: i128 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<6}").parse().ok()?
    };
    whole.checked_mul(1_000_000)?.checked_add(frac)
}

fn seconds(s: &str) -> Option<i128> {
    if let Some(p) = s.strip_prefix('-') {
        return seconds(p).map(|n| -n);
    }
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 9 || !frac.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let w: i128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let f: i128 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().ok()?
    };
    w.checked_mul(1_000_000_000)?.checked_add(f)
}

/// `text` as a value of type `ty`, if it reads as one.
pub fn parse(text: &str, ty: FieldType) -> Option<Literal> {
    match ty {
        FieldType::Uint(_) | FieldType::FrameNum => integer(text).map(Literal::Uint),
        FieldType::Bool => match text.to_ascii_lowercase().as_str() {
            "true" => Some(Literal::Uint(1)),
            "false" => Some(Literal::Uint(0)),
            t => integer(t).map(|n| Literal::Uint(u64::from(n != 0))),
        },
        FieldType::Ether => bytes(text)
            .and_then(|b| <[u8; 6]>::try_from(b).ok())
            .map(Literal::Ether),
        FieldType::Ipv4 => {
            let (a, p) = split_prefix(text, 32)?;
            let a: Ipv4Addr = a.parse().ok()?;
            Some(Literal::Ipv4(u32::from(a), p))
        }
        FieldType::Ipv6 => {
            let (a, p) = split_prefix(text, 128)?;
            let a: Ipv6Addr = a.parse().ok()?;
            Some(Literal::Ipv6(u128::from(a), p))
        }
        FieldType::Bytes => bytes(text).map(Literal::Bytes),
        FieldType::Str => Some(Literal::Str(text.to_string())),
        // Words (`"Jan 1, 2026 00:00:00"`, local time) or, beyond what
        // tshark reads, seconds since the epoch.
        FieldType::AbsTime => crate::fields::parse_abs_time(text)
            .or_else(|| seconds(text))
            .map(Literal::Time),
        FieldType::RelTime => seconds(text).map(Literal::Time),
        // Milliseconds, read as seconds to the picosecond: 0.05 is 50 µs.
        FieldType::Millis => millis(text).map(Literal::Time),
        FieldType::Presence => None,
    }
}

fn split_prefix(text: &str, max: u8) -> Option<(&str, u8)> {
    match text.split_once('/') {
        Some((a, p)) => {
            let p: u8 = p.parse().ok()?;
            (p <= max).then_some((a, p))
        }
        None => Some((text, max)),
    }
}

pub fn as_u64(v: &Value<'_>) -> Option<u64> {
    match v {
        Value::Uint(n) => Some(*n),
        Value::Bool(b) => Some(u64::from(*b)),
        _ => None,
    }
}

/// A value's bytes, for slices, `len()` and `contains`.
pub fn to_bytes(v: &Value<'_>) -> Option<Vec<u8>> {
    match v {
        Value::Ether(m) => Some(m.to_vec()),
        Value::Ipv4(a) => Some(a.octets().to_vec()),
        Value::Ipv6(a) => Some(a.octets().to_vec()),
        Value::Bytes(b) => Some(b.to_vec()),
        Value::Str(s) => Some(s.as_bytes().to_vec()),
        _ => None,
    }
}

/// A value as a literal (a field compared with another field).
pub fn from_value(v: &Value<'_>) -> Option<Literal> {
    Some(match v {
        Value::Uint(n) => Literal::Uint(*n),
        Value::Bool(b) => Literal::Uint(u64::from(*b)),
        Value::Ether(m) => Literal::Ether(*m),
        Value::Ipv4(a) => Literal::Ipv4(u32::from(*a), 32),
        Value::Ipv6(a) => Literal::Ipv6(u128::from(*a), 128),
        Value::Bytes(b) => Literal::Bytes(b.to_vec()),
        Value::Str(s) => Literal::Str(s.to_string()),
        Value::Time(t) => Literal::Time(*t),
        Value::Present => return None,
    })
}

fn mask32(p: u8) -> u32 {
    if p == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(p))
    }
}

fn mask128(p: u8) -> u128 {
    if p == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(p))
    }
}

pub fn equals(v: &Value<'_>, l: &Literal) -> bool {
    match (v, l) {
        (Value::Ipv4(a), Literal::Ipv4(b, p)) => (u32::from(*a) ^ b) & mask32(*p) == 0,
        (Value::Ipv6(a), Literal::Ipv6(b, p)) => (u128::from(*a) ^ b) & mask128(*p) == 0,
        _ => compare(v, l) == Some(Ordering::Equal),
    }
}

pub fn compare(v: &Value<'_>, l: &Literal) -> Option<Ordering> {
    match (v, l) {
        (Value::Uint(_) | Value::Bool(_), Literal::Uint(b)) => as_u64(v).map(|a| a.cmp(b)),
        (Value::Ether(a), Literal::Ether(b)) => Some(a.cmp(b)),
        (Value::Ipv4(a), Literal::Ipv4(b, _)) => Some(u32::from(*a).cmp(b)),
        (Value::Ipv6(a), Literal::Ipv6(b, _)) => Some(u128::from(*a).cmp(b)),
        (Value::Str(a), Literal::Str(b)) => Some(a.as_ref().cmp(b.as_str())),
        (Value::Time(a), Literal::Time(b)) => Some(a.cmp(b)),
        (_, Literal::Bytes(b)) => to_bytes(v).map(|a| a.as_slice().cmp(b.as_slice())),
        (Value::Bytes(a), Literal::Ether(b)) => Some(a.as_ref().cmp(b.as_slice())),
        _ => None,
    }
}

pub fn contains(v: &Value<'_>, l: &Literal) -> bool {
    let needle: &[u8] = match l {
        Literal::Str(s) => s.as_bytes(),
        Literal::Bytes(b) => b,
        _ => return false,
    };
    let Some(hay) = to_bytes(v) else {
        return false;
    };
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_by_type() {
        assert_eq!(integer("0x81"), Some(0x81));
        assert_eq!(integer("010"), Some(8));
        assert_eq!(integer("0b101"), Some(5));
        assert_eq!(integer("12"), Some(12));
        assert_eq!(integer("0"), Some(0));
        assert_eq!(integer("x"), None);
        assert_eq!(bytes("02:00:5e"), Some(vec![2, 0, 0x5e]));
        assert_eq!(bytes("02005e"), Some(vec![2, 0, 0x5e]));
        assert_eq!(bytes("2"), Some(vec![2]));
        assert_eq!(bytes("020"), None);
        assert_eq!(
            parse("10.0.0.0/8", FieldType::Ipv4),
            Some(Literal::Ipv4(0x0a00_0000, 8))
        );
        assert_eq!(parse("10.0.0.0/33", FieldType::Ipv4), None);
        assert_eq!(
            parse("0.5", FieldType::RelTime),
            Some(Literal::Time(500_000_000))
        );
        assert_eq!(
            parse("0.05", FieldType::Millis),
            Some(Literal::Time(50_000))
        );
        assert_eq!(
            parse("12", FieldType::Millis),
            Some(Literal::Time(12_000_000))
        );
        assert_eq!(parse("True", FieldType::Bool), Some(Literal::Uint(1)));
        assert!(equals(
            &Value::Ipv4(Ipv4Addr::new(10, 1, 2, 3)),
            &Literal::Ipv4(0x0a00_0000, 8)
        ));
        assert!(!equals(
            &Value::Ipv4(Ipv4Addr::new(11, 1, 2, 3)),
            &Literal::Ipv4(0x0a00_0000, 8)
        ));
    }
}
