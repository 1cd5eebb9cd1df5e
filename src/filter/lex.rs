//! The display filter's tokens, read with nom: operators in symbols and
//! words, quoted strings, and "words": runs of the characters field names
//! and literals are made of (`infiniband.bth.psn`, `0x81`, `10.0.0.0/8`,
//! `02:00:00`, `fe80::1`), whose meaning depends on where they stand.

use nom::branch::alt;
use nom::bytes::complete::{is_not, tag, take_while_m_n, take_while1};
use nom::character::complete::{char, multispace0, none_of};
use nom::combinator::{map, recognize, value};
use nom::multi::many0;
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};

/// One token, with where it starts in the filter (a byte offset).
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: Tok,
    pub at: usize,
    pub len: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    DotDot,
    /// `&&` (`and` comes as a word).
    AndAnd,
    OrOr,
    XorXor,
    /// `!` (not `!=`).
    Bang,
    /// `&` (bitwise and).
    Amp,
    Op(&'static str),
    Str(String),
    Word(String),
}

impl Tok {
    /// How the token reads in an error message.
    pub fn text(&self) -> String {
        match self {
            Tok::LParen => "(".into(),
            Tok::RParen => ")".into(),
            Tok::LBrace => "{".into(),
            Tok::RBrace => "}".into(),
            Tok::LBracket => "[".into(),
            Tok::RBracket => "]".into(),
            Tok::Comma => ",".into(),
            Tok::DotDot => "..".into(),
            Tok::AndAnd => "&&".into(),
            Tok::OrOr => "||".into(),
            Tok::XorXor => "^^".into(),
            Tok::Bang => "!".into(),
            Tok::Amp => "&".into(),
            Tok::Op(o) => (*o).into(),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Word(w) => w.clone(),
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '/' | '-')
}

fn symbol(i: &str) -> IResult<&str, Tok> {
    alt((
        value(Tok::Op("==="), tag("===")),
        value(Tok::Op("!=="), tag("!==")),
        value(Tok::Op("=="), tag("==")),
        value(Tok::Op("!="), tag("!=")),
        value(Tok::Op("~="), tag("~=")),
        value(Tok::Op("<="), tag("<=")),
        value(Tok::Op(">="), tag(">=")),
        value(Tok::Op("<"), tag("<")),
        value(Tok::Op(">"), tag(">")),
        value(Tok::AndAnd, tag("&&")),
        value(Tok::OrOr, tag("||")),
        value(Tok::XorXor, tag("^^")),
        value(Tok::Bang, tag("!")),
        value(Tok::Amp, tag("&")),
        value(Tok::Op("~"), tag("~")),
        alt((
            value(Tok::LParen, char('(')),
            value(Tok::RParen, char(')')),
            value(Tok::LBrace, char('{')),
            value(Tok::RBrace, char('}')),
            value(Tok::LBracket, char('[')),
            value(Tok::RBracket, char(']')),
            value(Tok::Comma, char(',')),
        )),
    ))
    .parse(i)
}

/// A double-quoted string with `\"`, `\\`, `\n`, `\r`, `\t` and `\xN[N]`
/// escapes; or a raw one, `r"..."` (or `R`), whose backslashes stay (for
/// regular expressions: `r"\d+\.\d"`), `\"` included.
fn quoted(i: &str) -> IResult<&str, Tok> {
    let escape = preceded(
        char('\\'),
        alt((
            value('"', char('"')),
            value('\\', char('\\')),
            value('\n', char('n')),
            value('\r', char('r')),
            value('\t', char('t')),
            map(
                preceded(
                    char('x'),
                    take_while_m_n(1, 2, |c: char| c.is_ascii_hexdigit()),
                ),
                |h: &str| u8::from_str_radix(h, 16).map_or('?', char::from),
            ),
        )),
    );
    let raw = preceded(
        alt((char('r'), char('R'))),
        delimited(
            char('"'),
            recognize(many0(alt((
                tag("\\\\"),
                tag("\\\""),
                is_not("\"\\"),
                tag("\\"),
            )))),
            char('"'),
        ),
    );
    alt((
        map(raw, |s: &str| Tok::Str(s.to_string())),
        map(
            delimited(char('"'), many0(alt((escape, none_of("\"\\")))), char('"')),
            |cs: Vec<char>| Tok::Str(cs.into_iter().collect()),
        ),
    ))
    .parse(i)
}

fn word(i: &str) -> IResult<&str, Tok> {
    map(take_while1(is_word_char), |w: &str| {
        Tok::Word(w.to_string())
    })
    .parse(i)
}

/// The tokens of `src`, or the byte offset where none could be read.
pub fn tokens(src: &str) -> Result<Vec<Token>, usize> {
    let mut out = Vec::new();
    let mut rest = src;
    loop {
        let (r, _) = multispace0::<&str, nom::error::Error<&str>>
            .parse(rest)
            .map_err(|_| src.len() - rest.len())?;
        rest = r;
        if rest.is_empty() {
            return Ok(out);
        }
        let at = src.len() - rest.len();
        let (r, kind) = alt((quoted, symbol, word)).parse(rest).map_err(|_| at)?;
        let len = rest.len() - r.len();
        // A word holding `..` (a set's range, `1..5`) is three tokens.
        if let Tok::Word(w) = &kind
            && let Some(k) = w.find("..")
            && !w.contains(":::")
        {
            let (a, b) = (&w[..k], &w[k + 2..]);
            if !a.is_empty() {
                out.push(Token {
                    kind: Tok::Word(a.to_string()),
                    at,
                    len: a.len(),
                });
            }
            out.push(Token {
                kind: Tok::DotDot,
                at: at + k,
                len: 2,
            });
            if !b.is_empty() {
                out.push(Token {
                    kind: Tok::Word(b.to_string()),
                    at: at + k + 2,
                    len: b.len(),
                });
            }
        } else {
            out.push(Token { kind, at, len });
        }
        rest = r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        tokens(s).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn operators_words_strings_and_ranges() {
        assert_eq!(
            kinds("bth.psn>=0x10&&!x"),
            vec![
                Tok::Word("bth.psn".into()),
                Tok::Op(">="),
                Tok::Word("0x10".into()),
                Tok::AndAnd,
                Tok::Bang,
                Tok::Word("x".into())
            ]
        );
        assert_eq!(
            kinds("a in {1..5, 7}"),
            vec![
                Tok::Word("a".into()),
                Tok::Word("in".into()),
                Tok::LBrace,
                Tok::Word("1".into()),
                Tok::DotDot,
                Tok::Word("5".into()),
                Tok::Comma,
                Tok::Word("7".into()),
                Tok::RBrace
            ]
        );
        assert_eq!(kinds(r#""a\"b\x41""#), vec![Tok::Str("a\"bA".into())]);
        // \x takes one or two hex digits, as Wireshark's.
        assert_eq!(kinds(r#""\x41BC\x7""#), vec![Tok::Str("ABC\u{7}".into())]);
        // Raw strings keep their backslashes; `~` is `matches`.
        assert_eq!(
            kinds(r#"a ~ r"\d+\.\"x" R"\\""#),
            vec![
                Tok::Word("a".into()),
                Tok::Op("~"),
                Tok::Str(r#"\d+\.\"x"#.into()),
                Tok::Str(r"\\".into())
            ]
        );
        // (Not a raw string: the word `r`, then a string never closed.)
        assert_eq!(tokens(r#"r"open\""#), Err(1));
        assert_eq!(kinds("fe80::1/64"), vec![Tok::Word("fe80::1/64".into())]);
        assert_eq!(tokens("a == \"open"), Err(5));
        assert_eq!(tokens("a $ b"), Err(2));
    }
}
