//! Display filters in Wireshark 4.0's language (`-Y`): comparisons
//! (`== != === !== ~= < <= > >=` and `eq ne all_eq any_ne lt le gt ge`),
//! set membership (`in {a, b, c..d}`), `contains`, `matches` (`~`, a
//! regular expression, case-insensitive by default), bitwise `&`, slices
//! (`eth.src[0:3]`), `len()` and `count()`, joined by `not`/`!`,
//! `and`/`&&`, `xor`/`^^` and `or`/`||` (binding in that order) and
//! parentheses; a bare field tests presence. Fields come from the
//! registry ([`crate::fields`]), literals are read by the type of the
//! field they are compared with.
//!
//! As in Wireshark, a comparison with a field the frame lacks is false
//! (`!=` included), and with a field that occurs several times (QinQ's
//! `vlan.id`, `ip.addr`) `==` and the orderings hold when any occurrence
//! satisfies them, `!=` when none equals (`all_ne`), `===` when all do,
//! `!==` and `~=` when any differs.

mod eval;
mod lex;
mod literal;
mod parse;

use std::fmt;

use crate::fields::{Ctx, Field};
use eval::{eval, eval3};
use literal::Literal;
use parse::Parser;

/// A compiled display filter.
#[derive(Debug, Clone)]
pub struct Filter {
    root: Expr,
    text: String,
    /// Whether any field it reads comes from the analysis.
    uses_analysis: bool,
}

/// A filter that does not parse: what and where (a byte offset and
/// length in the filter's text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    pub message: String,
    pub at: usize,
    pub len: usize,
    pub text: String,
}

impl fmt::Display for FilterError {
    /// One line: the message, then the filter with the offending part
    /// between `>>` and `<<`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.at.min(self.text.len());
        let end = (at + self.len.max(1)).min(self.text.len());
        let (a, rest) = self.text.split_at(at);
        let (m, b) = rest.split_at(end - at);
        let shown = if m.is_empty() {
            format!("{a} >><<")
        } else {
            format!("{a}>>{m}<<{b}")
        };
        write!(
            f,
            "{} (column {}): {}",
            self.message,
            at + 1,
            crate::output::text::terminal_safe(&shown)
        )
    }
}

impl std::error::Error for FilterError {}

#[derive(Debug, Clone)]
enum Expr {
    Or(Box<Expr>, Box<Expr>),
    Xor(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Test(Test),
    /// A test that reads what only the frame loop knows of a frame (the
    /// analysis, its number, its time since the first or previous frame).
    Contextual(Test),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CmpOp {
    AnyEq,
    AllNe,
    AllEq,
    AnyNe,
    Lt,
    Le,
    Gt,
    Ge,
}

/// What a comparison's left side reads from the frame.
#[derive(Debug, Clone)]
enum Operand {
    Field {
        field: &'static Field,
        slice: Option<Slice>,
        mask: Option<u64>,
    },
    /// `len(field)`: each occurrence's length in bytes.
    Len(&'static Field),
    /// `count(field)`: how many occurrences.
    Count(&'static Field),
    /// `upper(field)`, `lower(field)`, `string(field)`: each occurrence as
    /// text.
    Text(TextFn, &'static Field),
}

/// The functions that make text of a field's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextFn {
    /// A string field in capitals.
    Upper,
    /// A string field in small letters.
    Lower,
    /// Any field's value as text: integers in decimal, addresses as
    /// they are written, bytes as `01:02`, the rest as `-T fields` prints
    /// it (times, booleans `1` or `0`).
    String,
}

impl TextFn {
    fn name(self) -> &'static str {
        match self {
            TextFn::Upper => "upper",
            TextFn::Lower => "lower",
            TextFn::String => "string",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slice {
    /// Start (negative: from the end) and length (None: to the end).
    start: i64,
    len: Option<i64>,
}

#[derive(Debug, Clone)]
enum Rhs {
    Lit(Literal),
    Field(&'static Field),
}

#[derive(Debug, Clone)]
enum Test {
    Exists(&'static Field),
    /// An operand standing alone: a bitwise and that is not zero.
    Truthy(Operand),
    Cmp(Operand, CmpOp, Rhs, Quant),
    In(Operand, Vec<(Literal, Option<Literal>)>, Quant),
    Contains(Operand, Literal, Quant),
    /// `matches` / `~`: a regular expression, case-insensitive unless it
    /// says `(?-i)`, over the value's text or bytes.
    Matches(Operand, regex::bytes::Regex, Quant),
}

/// Which of a field's occurrences must pass a test: one (`any`, the
/// default but for `!=`) or every one (`all`, and `!=` unless `any`
/// says otherwise: Wireshark's "all not equal").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quant {
    Any,
    All,
}

impl Quant {
    fn holds<T>(self, mut items: impl Iterator<Item = T>, pass: impl FnMut(T) -> bool) -> bool {
        match self {
            Quant::Any => items.any(pass),
            Quant::All => items.all(pass),
        }
    }
}

impl Filter {
    /// Compiles `text`.
    pub fn parse(text: &str) -> Result<Filter, FilterError> {
        let err = |message: String, at: usize, len: usize| FilterError {
            message,
            at,
            len,
            text: text.to_string(),
        };
        let toks = lex::tokens(text).map_err(|at| {
            let c = text.get(at..).and_then(|s| s.chars().next()).unwrap_or(' ');
            err(
                format!("\"{c}\" was unexpected in this context"),
                at,
                c.len_utf8(),
            )
        })?;
        if toks.is_empty() {
            return Err(err("the filter is empty".into(), 0, 0));
        }
        let mut p = Parser {
            toks: &toks,
            pos: 0,
            text,
            uses_analysis: false,
        };
        let root = p.or().map_err(|(m, at, len)| err(m, at, len))?;
        if let Some(t) = p.peek() {
            return Err(err(
                format!("\"{}\" was unexpected in this context", t.kind.text()),
                t.at,
                t.len,
            ));
        }
        Ok(Filter {
            root: mark_contextual(root),
            text: text.to_string(),
            uses_analysis: p.uses_analysis,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the filter reads `roce.analysis.*` fields (then the frames
    /// must go through the analysis before they are filtered).
    pub fn uses_analysis(&self) -> bool {
        self.uses_analysis
    }

    /// Whether the frame passes.
    pub fn matches(&self, ctx: &Ctx<'_, '_>) -> bool {
        let mut scratch = Vec::new();
        eval(&self.root, ctx, &mut scratch)
    }

    /// Whether the frame may pass, from its bytes alone: `false` only when
    /// it fails whatever the analysis, its number and the times of the
    /// frames around it turn out to be (tests that read those are
    /// unknown, and `and`, `or`, `not` and `xor` follow Kleene's
    /// three-valued logic). The frame loop's workers test this, and the
    /// frames that may pass are tested again with [`Filter::matches`].
    pub fn may_match(&self, pkt: &crate::dissect::Packet<'_>) -> bool {
        let mut scratch = Vec::new();
        eval3(&self.root, &Ctx::alone(pkt), &mut scratch) != Some(false)
    }
}

/// Whether `f`'s value comes from the analysis: `roce.analysis.*`, and
/// `nvme`, `nvme-rdma`, `nvme.*` and `frame.protocols` (a SEND is a
/// capsule, a WRITE an I/O's data, on a connection the analysis knows),
/// and the Info column (its tags).
fn reads_analysis(f: &Field) -> bool {
    f.name.starts_with("roce.analysis.")
        || f.name.starts_with("nvme")
        || f.name == "frame.protocols"
        || f.name == "_ws.col.Info"
}

/// Whether `f` is known only to the frame loop, not from the frame.
fn contextual(f: &Field) -> bool {
    reads_analysis(f)
        || f.name.starts_with("tcp.analysis")
        || matches!(
            f.name,
            "frame.number"
                | "frame.time_relative"
                | "frame.time_delta"
                | "_ws.col.No."
                // Relative to the conversation's first numbers, or what
                // its analysis noted.
                | "tcp.stream"
                | "tcp.time_relative"
                | "tcp.time_delta"
                | "tcp.seq"
                | "tcp.nxtseq"
                | "tcp.ack"
                | "tcp.window_size"
                | "tcp.options.sack_le"
                | "tcp.options.sack_re"
                // What an SSH connection's version line and New Keys
                // said before the segment: SSH or SSHv2, in the clear or
                // encrypted.
                | "_ws.col.Protocol"
                | "ssh.packet_length"
                | "ssh.padding_length"
                | "ssh.message_code"
                | "ssh.packet_length_encrypted"
                | "ssh.encrypted_packet"
        )
        // What the segments before it said of a TLS conversation, or of
        // an HTTP one (a message's head is in the segment that began it).
        || f.name == "tls"
        || f.name.starts_with("tls.")
        || f.name == "http"
        || f.name.starts_with("http.")
}

fn operand_field(op: &Operand) -> &'static Field {
    match op {
        Operand::Field { field, .. } => field,
        Operand::Len(f) | Operand::Count(f) | Operand::Text(_, f) => f,
    }
}

/// `e` with each test that reads a [`contextual`] field marked.
fn mark_contextual(e: Expr) -> Expr {
    let b = |e: Box<Expr>| Box::new(mark_contextual(*e));
    match e {
        Expr::Or(x, y) => Expr::Or(b(x), b(y)),
        Expr::Xor(x, y) => Expr::Xor(b(x), b(y)),
        Expr::And(x, y) => Expr::And(b(x), b(y)),
        Expr::Not(x) => Expr::Not(b(x)),
        Expr::Test(t) | Expr::Contextual(t) => {
            let reads = match &t {
                Test::Exists(f) => contextual(f),
                Test::Truthy(op)
                | Test::In(op, ..)
                | Test::Contains(op, ..)
                | Test::Matches(op, ..) => contextual(operand_field(op)),
                Test::Cmp(op, _, rhs, _) => {
                    contextual(operand_field(op)) || matches!(rhs, Rhs::Field(f) if contextual(f))
                }
            };
            if reads {
                Expr::Contextual(t)
            } else {
                Expr::Test(t)
            }
        }
    }
}

#[cfg(test)]
mod tests;
