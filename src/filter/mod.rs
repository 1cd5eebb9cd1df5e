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

mod lex;
mod literal;

use std::fmt::{self, Write as _};

use crate::fields::{self, Ctx, Field, FieldType, Value};
use lex::{Tok, Token};
use literal::Literal;

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

/// [`eval`] with contextual tests unknown (`None`).
fn eval3<'a>(e: &Expr, ctx: &Ctx<'_, 'a>, scratch: &mut Vec<Value<'a>>) -> Option<bool> {
    match e {
        Expr::Or(a, b) => match eval3(a, ctx, scratch) {
            Some(true) => Some(true),
            x => match (x, eval3(b, ctx, scratch)) {
                (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
        },
        Expr::And(a, b) => match eval3(a, ctx, scratch) {
            Some(false) => Some(false),
            x => match (x, eval3(b, ctx, scratch)) {
                (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
        },
        Expr::Xor(a, b) => Some(eval3(a, ctx, scratch)? != eval3(b, ctx, scratch)?),
        Expr::Not(a) => eval3(a, ctx, scratch).map(|x| !x),
        Expr::Test(t) => Some(test(t, ctx, scratch)),
        Expr::Contextual(_) => None,
    }
}

type PResult<T> = Result<T, (String, usize, usize)>;

/// The most memory a `matches` pattern's compiled form may take.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

struct Parser<'t> {
    toks: &'t [Token],
    pos: usize,
    text: &'t str,
    uses_analysis: bool,
}

fn is_kw(t: &Token, words: &[&str]) -> bool {
    matches!(&t.kind, Tok::Word(w) if words.iter().any(|k| w.eq_ignore_ascii_case(k)))
}

impl<'t> Parser<'t> {
    fn peek(&self) -> Option<&'t Token> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<&'t Token> {
        let t = self.toks.get(self.pos);
        self.pos += 1;
        t
    }

    fn unexpected(&self, t: Option<&Token>) -> (String, usize, usize) {
        match t {
            Some(t) => (
                format!("\"{}\" was unexpected in this context", t.kind.text()),
                t.at,
                t.len,
            ),
            None => ("the filter ends too early".into(), self.text.len(), 0),
        }
    }

    fn expect(&mut self, want: &Tok) -> PResult<&'t Token> {
        match self.next() {
            Some(t) if &t.kind == want => Ok(t),
            other => {
                let (m, at, len) = self.unexpected(other);
                Err((format!("{m} (expected \"{}\")", want.text()), at, len))
            }
        }
    }

    fn or(&mut self) -> PResult<Expr> {
        let mut l = self.xor()?;
        while let Some(t) = self.peek() {
            if t.kind == Tok::OrOr || is_kw(t, &["or"]) {
                self.pos += 1;
                let r = self.xor()?;
                l = Expr::Or(Box::new(l), Box::new(r));
            } else {
                break;
            }
        }
        Ok(l)
    }

    fn xor(&mut self) -> PResult<Expr> {
        let mut l = self.and()?;
        while let Some(t) = self.peek() {
            if t.kind == Tok::XorXor || is_kw(t, &["xor"]) {
                self.pos += 1;
                let r = self.and()?;
                l = Expr::Xor(Box::new(l), Box::new(r));
            } else {
                break;
            }
        }
        Ok(l)
    }

    fn and(&mut self) -> PResult<Expr> {
        let mut l = self.unary()?;
        while let Some(t) = self.peek() {
            if t.kind == Tok::AndAnd || is_kw(t, &["and"]) {
                self.pos += 1;
                let r = self.unary()?;
                l = Expr::And(Box::new(l), Box::new(r));
            } else {
                break;
            }
        }
        Ok(l)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let Some(t) = self.peek() else {
            return Err(self.unexpected(None));
        };
        if t.kind == Tok::Bang || is_kw(t, &["not"]) {
            self.pos += 1;
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if t.kind == Tok::LParen {
            self.pos += 1;
            let e = self.or()?;
            self.expect(&Tok::RParen)?;
            return Ok(e);
        }
        self.test().map(Expr::Test)
    }

    fn field(&mut self, t: &Token) -> PResult<&'static Field> {
        let Tok::Word(name) = &t.kind else {
            return Err(self.unexpected(Some(t)));
        };
        match fields::lookup(name) {
            Some(f) => {
                if reads_analysis(f) {
                    self.uses_analysis = true;
                }
                Ok(f)
            }
            None => {
                let hint = fields::suggest(name);
                let hint = if hint.is_empty() {
                    " (roce-dissect fields lists them)".to_string()
                } else {
                    format!(" (did you mean {}?)", hint.join(", "))
                };
                Err((
                    format!("\"{name}\" is neither a field nor a protocol name{hint}"),
                    t.at,
                    t.len,
                ))
            }
        }
    }

    fn operand(&mut self) -> PResult<(Operand, usize)> {
        let Some(t) = self.next() else {
            return Err(self.unexpected(None));
        };
        let start = t.at;
        if let Some(kind) = ["len", "count", "upper", "lower", "string"]
            .into_iter()
            .find(|k| is_kw(t, &[k]))
            .filter(|_| self.peek().is_some_and(|n| n.kind == Tok::LParen))
        {
            self.pos += 1;
            let ft = self.next().ok_or_else(|| self.unexpected(None))?;
            let f = self.field(ft)?;
            self.expect(&Tok::RParen)?;
            let text = match kind {
                "len" => return Ok((Operand::Len(f), start)),
                "count" => return Ok((Operand::Count(f), start)),
                "upper" => TextFn::Upper,
                "lower" => TextFn::Lower,
                _ => TextFn::String,
            };
            let fits = match text {
                TextFn::Upper | TextFn::Lower => f.ty == FieldType::Str,
                TextFn::String => f.ty != FieldType::Presence,
            };
            if !fits {
                return Err((
                    format!(
                        "{}() needs {}, and {} is {}",
                        text.name(),
                        if text == TextFn::String {
                            "a field with a value"
                        } else {
                            "a string field"
                        },
                        f.name,
                        type_name(f.ty)
                    ),
                    ft.at,
                    ft.len,
                ));
            }
            return Ok((Operand::Text(text, f), start));
        }
        let field = self.field(t)?;
        let mut slice = None;
        if self.peek().is_some_and(|n| n.kind == Tok::LBracket) {
            self.pos += 1;
            let s = self.next().ok_or_else(|| self.unexpected(None))?;
            slice = Some(parse_slice(s)?);
            self.expect(&Tok::RBracket)?;
        }
        let mut mask = None;
        if self.peek().is_some_and(|n| n.kind == Tok::Amp) {
            self.pos += 1;
            let m = self.next().ok_or_else(|| self.unexpected(None))?;
            if !matches!(field.ty, FieldType::Uint(_) | FieldType::Bool) || slice.is_some() {
                return Err((
                    format!("\"{}\" is not an integer: & needs one", field.name),
                    t.at,
                    t.len,
                ));
            }
            let Tok::Word(w) = &m.kind else {
                return Err(self.unexpected(Some(m)));
            };
            mask = Some(
                literal::integer(w)
                    .ok_or_else(|| (format!("\"{w}\" is not an integer"), m.at, m.len))?,
            );
        }
        Ok((Operand::Field { field, slice, mask }, start))
    }

    fn test(&mut self) -> PResult<Test> {
        // `any` / `all` before a field: which of its occurrences must pass.
        let quant = match self.peek() {
            Some(q)
                if is_kw(q, &["any", "all"])
                    && self
                        .toks
                        .get(self.pos + 1)
                        .is_some_and(|n| matches!(n.kind, Tok::Word(_))) =>
            {
                self.pos += 1;
                Some((
                    if is_kw(q, &["all"]) {
                        Quant::All
                    } else {
                        Quant::Any
                    },
                    q,
                ))
            }
            _ => None,
        };
        let test = self.quantified(quant.map(|(q, _)| q))?;
        if let Some((_, q)) = quant
            && matches!(test, Test::Exists(_) | Test::Truthy(_))
        {
            return Err((
                format!(
                    "\"{}\" needs a comparison after its field (all f > 1)",
                    q.kind.text()
                ),
                q.at,
                q.len,
            ));
        }
        Ok(test)
    }

    fn quantified(&mut self, quant: Option<Quant>) -> PResult<Test> {
        let first = self.peek();
        let (op, at) = self.operand()?;
        let Some(t) = self.peek() else {
            return Ok(bare(op));
        };
        let cmp = match &t.kind {
            Tok::Op("~") => None,
            Tok::Op(o) => Some(*o),
            Tok::Word(w) => match w.to_ascii_lowercase().as_str() {
                "eq" | "any_eq" => Some("=="),
                "ne" | "all_ne" => Some("!="),
                "all_eq" => Some("==="),
                "any_ne" => Some("!=="),
                "lt" => Some("<"),
                "le" => Some("<="),
                "gt" => Some(">"),
                "ge" => Some(">="),
                _ => None,
            },
            _ => None,
        };
        if let Some(c) = cmp {
            self.pos += 1;
            let op_kind = match c {
                "==" => CmpOp::AnyEq,
                "!=" => CmpOp::AllNe,
                "===" => CmpOp::AllEq,
                "!==" | "~=" => CmpOp::AnyNe,
                "<" => CmpOp::Lt,
                "<=" => CmpOp::Le,
                ">" => CmpOp::Gt,
                _ => CmpOp::Ge,
            };
            let rhs = self.rhs(&op)?;
            let default = match op_kind {
                CmpOp::AllNe | CmpOp::AllEq => Quant::All,
                _ => Quant::Any,
            };
            return Ok(Test::Cmp(op, op_kind, rhs, quant.unwrap_or(default)));
        }
        if is_kw(t, &["in"]) {
            self.pos += 1;
            self.expect(&Tok::LBrace)?;
            let mut items = Vec::new();
            loop {
                match self.peek() {
                    Some(n) if n.kind == Tok::RBrace => {
                        self.pos += 1;
                        break;
                    }
                    Some(n) if n.kind == Tok::Comma && !items.is_empty() => {
                        self.pos += 1;
                    }
                    _ => {}
                }
                let a = self.literal_for(&op)?;
                let b = if self.peek().is_some_and(|n| n.kind == Tok::DotDot) {
                    self.pos += 1;
                    Some(self.literal_for(&op)?)
                } else {
                    None
                };
                items.push((a, b));
            }
            if items.is_empty() {
                return Err(("a set needs at least one member".into(), t.at, t.len));
            }
            return Ok(Test::In(op, items, quant.unwrap_or(Quant::Any)));
        }
        if is_kw(t, &["contains"]) {
            self.pos += 1;
            let l = self.literal_for_contains(&op)?;
            return Ok(Test::Contains(op, l, quant.unwrap_or(Quant::Any)));
        }
        if is_kw(t, &["matches"]) || t.kind == Tok::Op("~") {
            self.pos += 1;
            let re = self.regex_for(&op)?;
            return Ok(Test::Matches(op, re, quant.unwrap_or(Quant::Any)));
        }
        let _ = (first, at);
        Ok(bare(op))
    }

    fn rhs(&mut self, op: &Operand) -> PResult<Rhs> {
        if let Some(t) = self.peek()
            && let Tok::Word(w) = &t.kind
            && let Some(f) = fields::lookup(w)
            && literal::parse(w, target(op)).is_none()
            && (comparable(target(op), f.ty) || value_named(op, w).is_none())
        {
            self.pos += 1;
            if reads_analysis(f) {
                self.uses_analysis = true;
            }
            if !comparable(target(op), f.ty) {
                return Err((
                    format!(
                        "{} and {} cannot be compared ({} with {})",
                        describe(op),
                        f.name,
                        type_name(target(op)),
                        type_name(f.ty)
                    ),
                    t.at,
                    t.len,
                ));
            }
            return Ok(Rhs::Field(f));
        }
        self.literal_for(op).map(Rhs::Lit)
    }

    fn literal_for(&mut self, op: &Operand) -> PResult<Literal> {
        let t = self.next().ok_or_else(|| self.unexpected(None))?;
        let ty = target(op);
        if ty == FieldType::Presence {
            return Err((
                format!(
                    "{} is a protocol or a flag: test it alone, it has no value to compare",
                    describe(op)
                ),
                t.at,
                t.len,
            ));
        }
        let text = match &t.kind {
            Tok::Word(w) => w.as_str(),
            Tok::Str(s) => s.as_str(),
            _ => return Err(self.unexpected(Some(t))),
        };
        let lit = match (&t.kind, ty) {
            (Tok::Str(s), FieldType::Str) => Some(Literal::Str(s.clone())),
            (Tok::Str(s), FieldType::Bytes) => Some(Literal::Bytes(s.as_bytes().to_vec())),
            (Tok::Str(s), FieldType::Bool) if ["true", "false"].contains(&&*s.to_lowercase()) => {
                literal::parse(s, ty)
            }
            (Tok::Str(s), FieldType::AbsTime) => literal::parse(s, ty),
            (Tok::Str(_), _) => None,
            _ => literal::parse(text, ty),
        };
        if let Some(lit) = lit.or_else(|| value_named(op, text).map(Literal::Uint)) {
            return Ok(lit);
        }
        let named = match op {
            Operand::Field { field, .. } if field.names.is_some() => Some(field.name),
            _ => None,
        };
        Err((
            match named {
                Some(name) => format!(
                    "\"{text}\" is neither a valid {} nor the name of one of {name}'s values \
                     (roce-dissect fields --values {name} lists them)",
                    type_name(ty),
                ),
                None if ty == FieldType::AbsTime => format!(
                    "\"{text}\" is not a valid time (for {}): write \"Nov 12, 2026 08:55:44.123\" \
                     or \"2026-11-12 08:55:44\" (local time; \" UTC\" after it for UTC), \
                     or seconds since the epoch",
                    describe(op)
                ),
                None => format!(
                    "\"{text}\" is not a valid {} (for {})",
                    type_name(ty),
                    describe(op)
                ),
            },
            t.at,
            t.len,
        ))
    }

    /// The regular expression after `matches`: a string (`r"..."` keeps
    /// its backslashes), compiled as Wireshark's PCRE2 is used: case-
    /// insensitive by default; over text for a string field, over the
    /// raw bytes for the others (`\\x02` is the byte 2).
    fn regex_for(&mut self, op: &Operand) -> PResult<regex::bytes::Regex> {
        let t = self.next().ok_or_else(|| self.unexpected(None))?;
        let ty = target(op);
        if !matches!(ty, FieldType::Str | FieldType::Bytes | FieldType::Ether) {
            return Err((
                format!(
                    "matches needs a string or bytes field, and {} is {}",
                    describe(op),
                    type_name(ty)
                ),
                t.at,
                t.len,
            ));
        }
        let Tok::Str(pattern) = &t.kind else {
            return Err((
                format!(
                    "matches needs a regular expression in quotes, not {}",
                    t.kind.text()
                ),
                t.at,
                t.len,
            ));
        };
        // Over bytes, `"\\xfe"` (the character 0xfe once the string is read)
        // is the byte 0xfe, as in Wireshark.
        let pattern: String = if ty == FieldType::Str {
            pattern.clone()
        } else {
            pattern
                .chars()
                .map(|c| match u32::from(c) {
                    b @ 0x80..=0xff => format!("\\x{b:02x}"),
                    _ => c.to_string(),
                })
                .collect()
        };
        regex::bytes::RegexBuilder::new(&pattern)
            .case_insensitive(true)
            .unicode(ty == FieldType::Str)
            // A pattern's automata stay small, whatever it asks for.
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| {
                let why = match e {
                    regex::Error::CompiledTooBig(_) => "it is too large".to_string(),
                    e => {
                        let last = e.to_string().lines().last().unwrap_or_default().to_string();
                        last.trim().trim_start_matches("error: ").to_string()
                    }
                };
                (
                    format!("the regular expression cannot be compiled: {why}"),
                    t.at,
                    t.len,
                )
            })
    }

    fn literal_for_contains(&mut self, op: &Operand) -> PResult<Literal> {
        let t = self.next().ok_or_else(|| self.unexpected(None))?;
        let ty = target(op);
        let lit = match (&t.kind, ty) {
            (Tok::Str(s), FieldType::Str) => Some(Literal::Str(s.clone())),
            (Tok::Str(s), _) => Some(Literal::Bytes(s.as_bytes().to_vec())),
            (Tok::Word(w), FieldType::Str) => Some(Literal::Str(w.clone())),
            (Tok::Word(w), _) => literal::bytes(w).map(Literal::Bytes),
            _ => None,
        };
        if !matches!(
            ty,
            FieldType::Str | FieldType::Bytes | FieldType::Ether | FieldType::Ipv6
        ) {
            return Err((
                format!(
                    "contains needs a string or bytes, and {} is {}",
                    describe(op),
                    type_name(ty)
                ),
                t.at,
                t.len,
            ));
        }
        lit.ok_or_else(|| {
            (
                format!("\"{}\" is not a string or bytes", t.kind.text()),
                t.at,
                t.len,
            )
        })
    }
}

fn bare(op: Operand) -> Test {
    match op {
        Operand::Field {
            field,
            slice: None,
            mask: None,
        } => Test::Exists(field),
        other => Test::Truthy(other),
    }
}

fn parse_slice(t: &Token) -> PResult<Slice> {
    let bad = || {
        (
            format!(
                "\"{}\" is not a slice ([i], [i:len], [i-j], [i:], [:len])",
                t.kind.text()
            ),
            t.at,
            t.len,
        )
    };
    let Tok::Word(w) = &t.kind else {
        return Err(bad());
    };
    let num = |s: &str| -> Option<i64> { s.parse().ok() };
    if let Some((a, b)) = w.split_once(':') {
        let start = if a.is_empty() {
            0
        } else {
            num(a).ok_or_else(bad)?
        };
        let len = if b.is_empty() {
            None
        } else {
            Some(num(b).filter(|l| *l >= 0).ok_or_else(bad)?)
        };
        return Ok(Slice { start, len });
    }
    // i-j (inclusive), but not a lone negative index.
    if let Some(k) = w.get(1..).and_then(|r| r.find('-')).map(|k| k + 1) {
        let (a, b) = (&w[..k], &w[k + 1..]);
        let (a, b) = (num(a).ok_or_else(bad)?, num(b).ok_or_else(bad)?);
        // j before i, or a span no i64 holds (`[-7028514242080800768-6148914691236517206]`).
        let len = b.checked_sub(a).and_then(|d| d.checked_add(1));
        return match len {
            Some(len) if len > 0 => Ok(Slice {
                start: a,
                len: Some(len),
            }),
            _ => Err(bad()),
        };
    }
    Ok(Slice {
        start: num(w).ok_or_else(bad)?,
        len: Some(1),
    })
}

/// The type of what an operand yields.
/// The value `name` stands for in `op`'s field (`ip.proto == "UDP"`): a
/// field as it is, not a slice or a masked part of it.
fn value_named(op: &Operand, name: &str) -> Option<u64> {
    match op {
        Operand::Field {
            field,
            slice: None,
            mask: None,
        } => field.value_named(name),
        _ => None,
    }
}

fn target(op: &Operand) -> FieldType {
    match op {
        Operand::Field { slice: Some(_), .. } => FieldType::Bytes,
        Operand::Field {
            mask: Some(_),
            field,
            ..
        } => match field.ty {
            FieldType::Uint(b) => FieldType::Uint(b),
            _ => FieldType::Uint(64),
        },
        Operand::Field { field, .. } => field.ty,
        Operand::Len(_) | Operand::Count(_) => FieldType::Uint(32),
        Operand::Text(..) => FieldType::Str,
    }
}

fn describe(op: &Operand) -> String {
    match op {
        Operand::Field { field, .. } => field.name.to_string(),
        Operand::Len(f) => format!("len({})", f.name),
        Operand::Count(f) => format!("count({})", f.name),
        Operand::Text(t, f) => format!("{}({})", t.name(), f.name),
    }
}

fn type_name(t: FieldType) -> &'static str {
    match t {
        FieldType::Uint(_) => "integer",
        FieldType::FrameNum => "frame number",
        FieldType::Bool => "boolean",
        FieldType::Ether => "MAC address",
        FieldType::Ipv4 => "IPv4 address",
        FieldType::Ipv6 => "IPv6 address",
        FieldType::Bytes => "byte string",
        FieldType::Str => "string",
        FieldType::AbsTime | FieldType::RelTime => "time",
        FieldType::Millis => "time in ms",
        FieldType::Presence => "protocol",
    }
}

fn comparable(a: FieldType, b: FieldType) -> bool {
    use FieldType::*;
    matches!(
        (a, b),
        (Uint(_) | Bool | FrameNum, Uint(_) | Bool | FrameNum)
            | (Ether, Ether)
            | (Ipv4, Ipv4)
            | (Ipv6, Ipv6)
            | (Bytes, Bytes | Ether)
            | (Ether, Bytes)
            | (Str, Str)
            | (AbsTime | RelTime | Millis, AbsTime | RelTime | Millis)
    )
}

fn eval<'a>(e: &Expr, ctx: &Ctx<'_, 'a>, scratch: &mut Vec<Value<'a>>) -> bool {
    match e {
        Expr::Or(a, b) => eval(a, ctx, scratch) || eval(b, ctx, scratch),
        Expr::Xor(a, b) => eval(a, ctx, scratch) != eval(b, ctx, scratch),
        Expr::And(a, b) => eval(a, ctx, scratch) && eval(b, ctx, scratch),
        Expr::Not(a) => !eval(a, ctx, scratch),
        Expr::Test(t) | Expr::Contextual(t) => test(t, ctx, scratch),
    }
}

/// The operand's values, as literals can be compared with.
fn operand_values<'a>(op: &Operand, ctx: &Ctx<'_, 'a>, scratch: &mut Vec<Value<'a>>) {
    scratch.clear();
    match op {
        Operand::Field { field, slice, mask } => {
            (field.get)(ctx, scratch);
            if let Some(m) = mask {
                for v in scratch.iter_mut() {
                    *v = Value::Uint(literal::as_u64(v).unwrap_or(0) & m);
                }
            }
            if let Some(s) = slice {
                let vals = std::mem::take(scratch);
                scratch.extend(vals.iter().filter_map(|v| {
                    let b = literal::to_bytes(v)?;
                    apply_slice(&b, *s).map(|x| Value::Bytes(x.to_vec().into()))
                }));
            }
        }
        Operand::Len(f) => {
            (f.get)(ctx, scratch);
            let vals = std::mem::take(scratch);
            scratch.extend(
                vals.iter()
                    .map(|v| Value::Uint(literal::to_bytes(v).map_or(0, |b| b.len() as u64))),
            );
        }
        Operand::Count(f) => {
            (f.get)(ctx, scratch);
            let n = scratch.len() as u64;
            scratch.clear();
            scratch.push(Value::Uint(n));
        }
        Operand::Text(t, f) => {
            (f.get)(ctx, scratch);
            for v in scratch.iter_mut() {
                let text = match (t, &*v) {
                    (TextFn::Upper, Value::Str(s)) => s.to_uppercase(),
                    (TextFn::Lower, Value::Str(s)) => s.to_lowercase(),
                    (_, Value::Str(_)) => continue,
                    (_, Value::Uint(n)) => n.to_string(),
                    (_, Value::Bytes(b)) => {
                        let mut s = String::with_capacity(b.len() * 3);
                        for (i, x) in b.iter().enumerate() {
                            if i > 0 {
                                s.push(':');
                            }
                            let _ = write!(s, "{x:02x}");
                        }
                        s
                    }
                    (_, other) => {
                        let mut s = String::new();
                        f.format(other, &mut s);
                        s
                    }
                };
                *v = Value::Str(text.into());
            }
        }
    }
}

fn apply_slice(b: &[u8], s: Slice) -> Option<&[u8]> {
    let n = b.len() as i64;
    let start = if s.start < 0 { n + s.start } else { s.start };
    if start < 0 || start > n {
        return None;
    }
    let end = match s.len {
        Some(l) => start.checked_add(l)?,
        None => n,
    };
    if end > n {
        return None;
    }
    b.get(usize::try_from(start).ok()?..usize::try_from(end).ok()?)
}

fn test<'a>(t: &Test, ctx: &Ctx<'_, 'a>, scratch: &mut Vec<Value<'a>>) -> bool {
    match t {
        Test::Exists(f) => {
            scratch.clear();
            (f.get)(ctx, scratch);
            !scratch.is_empty()
        }
        Test::Truthy(op) => {
            operand_values(op, ctx, scratch);
            scratch.iter().any(|v| match v {
                Value::Uint(n) => *n != 0,
                Value::Bool(b) => *b,
                Value::Bytes(b) => !b.is_empty(),
                _ => true,
            })
        }
        Test::Cmp(op, c, rhs, quant) => {
            operand_values(op, ctx, scratch);
            if scratch.is_empty() {
                return false;
            }
            let owned: Vec<Literal>;
            let rlits: &[Literal] = match rhs {
                Rhs::Lit(l) => std::slice::from_ref(l),
                Rhs::Field(f) => {
                    let mut rvals = Vec::new();
                    (f.get)(ctx, &mut rvals);
                    owned = rvals.iter().filter_map(literal::from_value).collect();
                    &owned
                }
            };
            if rlits.is_empty() {
                return false;
            }
            let holds = |v: &Value<'_>, l: &Literal| {
                let o = literal::compare(v, l);
                match c {
                    CmpOp::AnyEq | CmpOp::AllEq => literal::equals(v, l),
                    CmpOp::AllNe | CmpOp::AnyNe => !literal::equals(v, l),
                    CmpOp::Lt => o == Some(std::cmp::Ordering::Less),
                    CmpOp::Le => matches!(
                        o,
                        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                    ),
                    CmpOp::Gt => o == Some(std::cmp::Ordering::Greater),
                    CmpOp::Ge => matches!(
                        o,
                        Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
                    ),
                }
            };
            let pairs = || {
                scratch
                    .iter()
                    .flat_map(|v| rlits.iter().map(move |l| (v, l)))
            };
            quant.holds(pairs(), |(v, l)| holds(v, l))
        }
        Test::In(op, items, quant) => {
            operand_values(op, ctx, scratch);
            !scratch.is_empty()
                && quant.holds(scratch.iter(), |v| {
                    items.iter().any(|(a, b)| match b {
                        None => literal::equals(v, a),
                        Some(b) => {
                            matches!(
                                literal::compare(v, a),
                                Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
                            ) && matches!(
                                literal::compare(v, b),
                                Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                            )
                        }
                    })
                })
        }
        Test::Contains(op, l, quant) => {
            operand_values(op, ctx, scratch);
            !scratch.is_empty() && quant.holds(scratch.iter(), |v| literal::contains(v, l))
        }
        Test::Matches(op, re, quant) => {
            operand_values(op, ctx, scratch);
            !scratch.is_empty()
                && quant.holds(scratch.iter(), |v| match v {
                    Value::Str(s) => re.is_match(s.as_bytes()),
                    v => literal::to_bytes(v).is_some_and(|b| re.is_match(&b)),
                })
        }
    }
}

#[cfg(test)]
mod tests;
