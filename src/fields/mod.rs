//! The field registry: every field the dissector and the analysis know,
//! under Wireshark's names (`infiniband.bth.psn`), with a short alias
//! (`bth.psn`), a title, a type and a display base, and how to read its
//! values from a decoded frame. `packets -T fields`, display filters
//! (`-Y`), `roce-dissect fields` and the tshark differential tests read
//! it; a field is added here once. The JSON Lines keep the contract's
//! shape (nested objects, arrays, nulls); `tests/json_registry.rs` holds
//! every JSON key to the registry field it shows, both ways.

mod abstime;
mod names;
mod registry;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use crate::analysis::{FrameAnalysis, Mark};
use crate::dissect::Packet;

pub use abstime::{parse as parse_abs_time, use_utc, write_local as write_local_time};
pub use registry::FIELDS;

/// A field's type, as Wireshark's `FT_*` (the integer's width in bits
/// sets how many hex digits it prints with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// An unsigned integer of this many bits (8, 16, 24, 32, 48, 64).
    Uint(u8),
    Bool,
    Ether,
    Ipv4,
    Ipv6,
    Bytes,
    Str,
    /// A moment, to the nanosecond, written in words in the local time
    /// zone (`frame.time`: `Jan  1, 2026 00:00:00.000000000 UTC`).
    AbsTime,
    /// A span of time, to the nanosecond.
    RelTime,
    /// A frame's number (Wireshark's `FT_FRAMENUM`: a link to it).
    FrameNum,
    /// A span of time in milliseconds, as a double (Wireshark's
    /// `FT_DOUBLE` with a "ms" unit, e.g. `nvme.cmd_latency`); its value
    /// is kept in nanoseconds.
    Millis,
    /// A header that is there or not (Wireshark's `FT_PROTOCOL` or
    /// `FT_NONE`): a filter can test it, it has no value to compare.
    Presence,
}

impl FieldType {
    /// Wireshark's name for the type (`tshark -G fields`).
    pub fn wireshark_name(self) -> &'static str {
        match self {
            FieldType::Uint(8) => "FT_UINT8",
            FieldType::Uint(16) => "FT_UINT16",
            FieldType::Uint(24) => "FT_UINT24",
            FieldType::Uint(32) => "FT_UINT32",
            FieldType::Uint(48) => "FT_UINT48",
            FieldType::Uint(_) => "FT_UINT64",
            FieldType::Bool => "FT_BOOLEAN",
            FieldType::Ether => "FT_ETHER",
            FieldType::Ipv4 => "FT_IPv4",
            FieldType::Ipv6 => "FT_IPv6",
            FieldType::Bytes => "FT_BYTES",
            FieldType::Str => "FT_STRING",
            FieldType::AbsTime => "FT_ABSOLUTE_TIME",
            FieldType::RelTime => "FT_RELATIVE_TIME",
            FieldType::FrameNum => "FT_FRAMENUM",
            FieldType::Millis => "FT_DOUBLE",
            FieldType::Presence => "FT_NONE",
        }
    }
}

/// How an integer is shown, as Wireshark's `BASE_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    None,
    Dec,
    Hex,
    /// Decimal, with hex in parentheses in the tree (`-T fields`: decimal).
    DecHex,
    /// Hex, with decimal in parentheses in the tree (`-T fields`: hex).
    HexDec,
}

impl Base {
    pub fn wireshark_name(self) -> &'static str {
        match self {
            Base::None => "",
            Base::Dec => "BASE_DEC",
            Base::Hex => "BASE_HEX",
            Base::DecHex => "BASE_DEC_HEX",
            Base::HexDec => "BASE_HEX_DEC",
        }
    }
}

/// One value of a field in one frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Uint(u64),
    Bool(bool),
    Ether([u8; 6]),
    Ipv4(Ipv4Addr),
    Ipv6(Ipv6Addr),
    Bytes(Cow<'a, [u8]>),
    Str(Cow<'a, str>),
    /// Nanoseconds: since the epoch or a span (negative when the
    /// capture's timestamps go backwards).
    Time(i128),
    /// The field is there (FieldType::Presence).
    Present,
}

/// What a field reads: the decoded frame and, when the analysis has seen
/// it, what the analysis concluded.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'p, 'a> {
    pub pkt: &'p Packet<'a>,
    pub analysis: Option<&'p FrameAnalysis>,
    /// A TCP frame's conversation, when the frame loop followed it.
    pub tcp: Option<&'p crate::analysis::tcp::TcpSeen>,
    /// The report's number of the frame's flow (1-based, in order of
    /// first appearance), when the frame belongs to one.
    pub flow_number: Option<u64>,
    /// The first frame's timestamp and the previous frame's.
    pub first_ts_ns: u64,
    pub prev_ts_ns: u64,
    /// The run's link speed (`--link-speed`), for the Info column's
    /// pause times.
    pub link: crate::analysis::LinkSpeed,
}

impl<'p, 'a> Ctx<'p, 'a> {
    /// A frame on its own: times relative to itself, no analysis.
    pub fn alone(pkt: &'p Packet<'a>) -> Self {
        Ctx {
            pkt,
            analysis: None,
            tcp: None,
            flow_number: None,
            first_ts_ns: pkt.ts_ns,
            prev_ts_ns: pkt.ts_ns,
            link: crate::analysis::LinkSpeed::default(),
        }
    }

    fn marked(&self, m: Mark) -> bool {
        self.analysis.is_some_and(|a| a.marks.has(m))
    }
}

/// Reads a field's values (in order of occurrence) into `out`.
pub type Getter = for<'p, 'a> fn(&Ctx<'p, 'a>, &mut Vec<Value<'a>>);

/// One registered field.
#[derive(Clone, Copy)]
pub struct Field {
    /// Wireshark's name, or one in its style for fields Wireshark lacks.
    pub name: &'static str,
    pub title: &'static str,
    pub ty: FieldType,
    pub base: Base,
    /// Whether tshark 4.0 has this field (same name, same meaning).
    pub in_tshark: bool,
    /// The names its values go by, for filters (`ip.proto == "UDP"`).
    pub names: Option<ValueNames>,
    pub get: Getter,
}

/// The names of an integer or boolean field's values, as Wireshark's value
/// strings let a filter write them (`ip.proto == "UDP"`,
/// `infiniband.bth.opcode == "Reliable Connection (RC) - RDMA WRITE
/// First"`): each value with a name, tshark's first, then roce-dissect's
/// own where it names the value otherwise; a value may have several.
pub type ValueNames = fn() -> &'static [(u64, &'static str)];

impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Field")
            .field("name", &self.name)
            .field("ty", &self.ty)
            .field("base", &self.base)
            .finish()
    }
}

impl Field {
    /// The short alias: the name without its `infiniband.` prefix
    /// (`bth.psn`); `None` for names without one.
    pub fn alias(&self) -> Option<&'static str> {
        self.name.strip_prefix("infiniband.")
    }

    /// The protocol the field belongs to (the name's first part).
    pub fn protocol(&self) -> &'static str {
        self.name.split('.').next().unwrap_or(self.name)
    }

    /// The value `name` stands for (its case does not matter), when the
    /// field's values have names.
    pub fn value_named(&self, name: &str) -> Option<u64> {
        let names = (self.names?)();
        names
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name.trim()))
            .map(|(v, _)| *v)
    }

    /// The field's values in this frame.
    pub fn values<'a>(&self, ctx: &Ctx<'_, 'a>) -> Vec<Value<'a>> {
        let mut v = Vec::new();
        (self.get)(ctx, &mut v);
        v
    }

    /// A value as tshark 4.0's `-T fields` prints it.
    pub fn format(&self, v: &Value<'_>, out: &mut String) {
        match v {
            Value::Uint(n) => match (self.base, self.ty) {
                (Base::Hex | Base::HexDec, FieldType::Uint(bits)) => {
                    let digits = usize::from(bits).div_ceil(4);
                    let _ = write!(out, "0x{n:0digits$x}");
                }
                _ => {
                    let _ = write!(out, "{n}");
                }
            },
            Value::Bool(b) => out.push(if *b { '1' } else { '0' }),
            Value::Ether(m) => {
                let _ = write!(
                    out,
                    "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
                    m[0], m[1], m[2], m[3], m[4], m[5]
                );
            }
            Value::Ipv4(a) => {
                let _ = write!(out, "{a}");
            }
            Value::Ipv6(a) => {
                let _ = write!(out, "{a}");
            }
            Value::Bytes(b) => {
                for x in b.iter() {
                    let _ = write!(out, "{x:02x}");
                }
            }
            Value::Str(s) => out.push_str(s),
            Value::Time(ns) if self.ty == FieldType::AbsTime => abstime::write_local(*ns, out),
            Value::Time(ns) if self.ty == FieldType::Millis => {
                out.push_str(&double_g15(millis(*ns)));
            }
            Value::Time(ns) => {
                let sign = if *ns < 0 { "-" } else { "" };
                let a = ns.unsigned_abs();
                let _ = write!(out, "{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000);
            }
            Value::Present => out.push('1'),
        }
    }
}

/// Nanoseconds as Wireshark's milliseconds: whole seconds times 1000 plus
/// the nanoseconds over 10^6, in doubles (`nstime_to_msec`).
pub fn millis(ns: i128) -> f64 {
    let (secs, nsecs) = (ns / 1_000_000_000, ns % 1_000_000_000);
    secs as f64 * 1000.0 + nsecs as f64 / 1_000_000.0
}

/// A double as C's `%.15g` (how tshark prints `FT_DOUBLE`).
pub fn double_g15(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { x.to_string() };
    }
    let sci = format!("{x:.14e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..15).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        trim(&format!("{:.*}", (14 - exp) as usize, x))
    }
}

/// Every field by name and by alias.
fn index() -> &'static HashMap<&'static str, &'static Field> {
    static INDEX: OnceLock<HashMap<&'static str, &'static Field>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut m = HashMap::with_capacity(FIELDS.len() * 2);
        for f in FIELDS {
            m.insert(f.name, f);
        }
        for f in FIELDS {
            if let Some(a) = f.alias() {
                m.entry(a).or_insert(f);
            }
        }
        m
    })
}

/// The field named `name` (its Wireshark name or its alias).
pub fn lookup(name: &str) -> Option<&'static Field> {
    index().get(name).copied()
}

/// Names close to `name`, for "did you mean" (same last part, or the
/// name with a prefix that exists; else a name one or two typing slips
/// away: `ssh.message_cod`, `tcp.flgs.syn`, `bth.destq`).
pub fn suggest(name: &str) -> Vec<&'static str> {
    let last = name.rsplit('.').next().unwrap_or(name);
    let mut out: Vec<&'static str> = FIELDS
        .iter()
        .filter(|f| {
            f.name.ends_with(&format!(".{last}")) || f.name.starts_with(&format!("{name}."))
        })
        .map(|f| f.name)
        .collect();
    if out.is_empty() && name.len() >= 5 {
        let slips = if name.len() >= 10 { 2 } else { 1 };
        // Names and their short aliases (`bth.destqp`), as typed.
        let mut near: Vec<(usize, &'static str)> = index()
            .keys()
            .map(|&n| (strsim::osa_distance(name, n), n))
            .filter(|&(d, _)| d <= slips)
            .collect();
        near.sort_unstable();
        out = near.into_iter().map(|(_, n)| n).collect();
    }
    out.truncate(5);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn typing_slips_get_the_field_meant() {
        assert_eq!(super::suggest("ssh.message_cod"), ["ssh.message_code"]);
        assert_eq!(super::suggest("tcp.flgs.syn"), ["tcp.flags.syn"]);
        assert_eq!(super::suggest("dhcp.optoin.dhcp"), ["dhcp.option.dhcp"]);
        assert_eq!(super::suggest("bth.destq"), ["bth.destqp"]);
        // Short words are not guessed at, nor names far from any field.
        assert!(super::suggest("abc").is_empty());
        assert!(super::suggest("no.such.thing.here").is_empty());
    }

    #[test]
    fn doubles_print_as_c_g15() {
        assert_eq!(double_g15(0.05), "0.05");
        assert_eq!(double_g15(0.019904), "0.019904");
        assert_eq!(double_g15(2022.304), "2022.304");
        assert_eq!(double_g15(0.1 + 0.2), "0.3");
        assert_eq!(double_g15(0.0), "0");
        assert_eq!(double_g15(1e-5), "1e-05");
        assert_eq!(double_g15(123456789012345678.0), "1.23456789012346e+17");
        assert_eq!(double_g15(millis(1_500_000_001)), "1500.000001");
        assert_eq!(double_g15(millis(9_160)), "0.00916");
    }

    use super::*;

    #[test]
    fn names_and_aliases_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for f in FIELDS {
            assert!(seen.insert(f.name), "{} twice", f.name);
            // (tshark's column fields keep their columns' titles.)
            let name = f
                .name
                .strip_prefix("_ws.col.")
                .map_or_else(|| f.name.to_string(), str::to_lowercase);
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".-_".contains(c)),
                "{}",
                f.name
            );
            assert!(!f.title.is_empty(), "{}", f.name);
            assert_eq!(lookup(f.name).map(|g| g.name), Some(f.name));
            if matches!(f.ty, FieldType::Uint(_)) {
                assert!(f.base != Base::None, "{} needs a base", f.name);
            }
        }
        assert_eq!(lookup("bth.psn").unwrap().name, "infiniband.bth.psn");
        assert!(lookup("bth.nope").is_none());
    }

    #[test]
    fn values_print_as_tshark_prints_them() {
        let f = lookup("infiniband.bth.destqp").unwrap();
        let mut s = String::new();
        f.format(&Value::Uint(0x102), &mut s);
        assert_eq!(s, "0x000102");
        s.clear();
        lookup("infiniband.reth.dmalen")
            .unwrap()
            .format(&Value::Uint(4096), &mut s);
        assert_eq!(s, "4096");
        s.clear();
        lookup("frame.time_epoch")
            .unwrap()
            .format(&Value::Time(1_767_225_600_000_000_108), &mut s);
        assert_eq!(s, "1767225600.000000108");
        s.clear();
        lookup("frame.time_delta")
            .unwrap()
            .format(&Value::Time(-1000), &mut s);
        assert_eq!(s, "-0.000001000");
    }
}
