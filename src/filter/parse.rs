//! The filter's grammar: tokens to an expression, each literal read by
//! the type of the field it is compared with.

use super::lex::{Tok, Token};
use super::literal::Literal;
use super::{CmpOp, Expr, Operand, Quant, Rhs, Slice, Test, TextFn, reads_analysis};
use crate::fields::{self, Field, FieldType};

pub(super) type PResult<T> = Result<T, (String, usize, usize)>;

/// The most memory a `matches` pattern's compiled form may take.
pub(super) const REGEX_SIZE_LIMIT: usize = 1 << 20;

pub(super) struct Parser<'t> {
    pub(super) toks: &'t [Token],
    pub(super) pos: usize,
    pub(super) text: &'t str,
    pub(super) uses_analysis: bool,
}

pub(super) fn is_kw(t: &Token, words: &[&str]) -> bool {
    matches!(&t.kind, Tok::Word(w) if words.iter().any(|k| w.eq_ignore_ascii_case(k)))
}

impl<'t> Parser<'t> {
    pub(super) fn peek(&self) -> Option<&'t Token> {
        self.toks.get(self.pos)
    }

    pub(super) fn next(&mut self) -> Option<&'t Token> {
        let t = self.toks.get(self.pos);
        self.pos += 1;
        t
    }

    pub(super) fn unexpected(&self, t: Option<&Token>) -> (String, usize, usize) {
        match t {
            Some(t) => (
                format!("\"{}\" was unexpected in this context", t.kind.text()),
                t.at,
                t.len,
            ),
            None => ("the filter ends too early".into(), self.text.len(), 0),
        }
    }

    pub(super) fn expect(&mut self, want: &Tok) -> PResult<&'t Token> {
        match self.next() {
            Some(t) if &t.kind == want => Ok(t),
            other => {
                let (m, at, len) = self.unexpected(other);
                Err((format!("{m} (expected \"{}\")", want.text()), at, len))
            }
        }
    }

    pub(super) fn or(&mut self) -> PResult<Expr> {
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

    pub(super) fn xor(&mut self) -> PResult<Expr> {
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

    pub(super) fn and(&mut self) -> PResult<Expr> {
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

    pub(super) fn unary(&mut self) -> PResult<Expr> {
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

    pub(super) fn field(&mut self, t: &Token) -> PResult<&'static Field> {
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

    pub(super) fn operand(&mut self) -> PResult<(Operand, usize)> {
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
                super::literal::integer(w)
                    .ok_or_else(|| (format!("\"{w}\" is not an integer"), m.at, m.len))?,
            );
        }
        Ok((Operand::Field { field, slice, mask }, start))
    }

    pub(super) fn test(&mut self) -> PResult<Test> {
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

    pub(super) fn quantified(&mut self, quant: Option<Quant>) -> PResult<Test> {
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

    pub(super) fn rhs(&mut self, op: &Operand) -> PResult<Rhs> {
        if let Some(t) = self.peek()
            && let Tok::Word(w) = &t.kind
            && let Some(f) = fields::lookup(w)
            && super::literal::parse(w, target(op)).is_none()
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

    pub(super) fn literal_for(&mut self, op: &Operand) -> PResult<Literal> {
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
                super::literal::parse(s, ty)
            }
            (Tok::Str(s), FieldType::AbsTime) => super::literal::parse(s, ty),
            (Tok::Str(_), _) => None,
            _ => super::literal::parse(text, ty),
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
    pub(super) fn regex_for(&mut self, op: &Operand) -> PResult<regex::bytes::Regex> {
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

    pub(super) fn literal_for_contains(&mut self, op: &Operand) -> PResult<Literal> {
        let t = self.next().ok_or_else(|| self.unexpected(None))?;
        let ty = target(op);
        let lit = match (&t.kind, ty) {
            (Tok::Str(s), FieldType::Str) => Some(Literal::Str(s.clone())),
            (Tok::Str(s), _) => Some(Literal::Bytes(s.as_bytes().to_vec())),
            (Tok::Word(w), FieldType::Str) => Some(Literal::Str(w.clone())),
            (Tok::Word(w), _) => super::literal::bytes(w).map(Literal::Bytes),
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

pub(super) fn bare(op: Operand) -> Test {
    match op {
        Operand::Field {
            field,
            slice: None,
            mask: None,
        } => Test::Exists(field),
        other => Test::Truthy(other),
    }
}

pub(super) fn parse_slice(t: &Token) -> PResult<Slice> {
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
pub(super) fn value_named(op: &Operand, name: &str) -> Option<u64> {
    match op {
        Operand::Field {
            field,
            slice: None,
            mask: None,
        } => field.value_named(name),
        _ => None,
    }
}

pub(super) fn target(op: &Operand) -> FieldType {
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

pub(super) fn describe(op: &Operand) -> String {
    match op {
        Operand::Field { field, .. } => field.name.to_string(),
        Operand::Len(f) => format!("len({})", f.name),
        Operand::Count(f) => format!("count({})", f.name),
        Operand::Text(t, f) => format!("{}({})", t.name(), f.name),
    }
}

pub(super) fn type_name(t: FieldType) -> &'static str {
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

pub(super) fn comparable(a: FieldType, b: FieldType) -> bool {
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
