//! `packets -T fields`: the chosen fields of each frame on one line, as
//! tshark 4.0 prints them (its `-E` options included).

use crate::fields::{Ctx, Field, Value};

/// Which occurrences of a field a line shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occurrence {
    All,
    First,
    Last,
    /// The n-th (1-based).
    Nth(usize),
}

/// tshark's `-E` options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldsFormat {
    pub header: bool,
    pub separator: String,
    pub occurrence: Occurrence,
    pub aggregator: String,
    pub quote: Option<char>,
}

impl Default for FieldsFormat {
    fn default() -> Self {
        FieldsFormat {
            header: false,
            separator: "\t".into(),
            occurrence: Occurrence::All,
            aggregator: ",".into(),
            quote: None,
        }
    }
}

fn separator(v: &str) -> Result<String, String> {
    match v {
        "/t" => Ok("\t".into()),
        "/s" => Ok(" ".into()),
        s if s.chars().count() == 1 => Ok(s.into()),
        _ => Err(format!("'{v}': a separator is /t, /s or one character")),
    }
}

impl FieldsFormat {
    /// Reads `-E` options (`header=y`, `separator=,`, ...).
    pub fn parse(options: &[String]) -> Result<Self, String> {
        let mut f = FieldsFormat::default();
        for o in options {
            let Some((k, v)) = o.split_once('=') else {
                return Err(format!(
                    "-E {o}: expected OPTION=VALUE (header=y, separator=/t, occurrence=a, aggregator=',', quote=n)"
                ));
            };
            match k {
                "header" => {
                    f.header = match v {
                        "y" => true,
                        "n" => false,
                        _ => return Err(format!("-E header={v}: y or n")),
                    }
                }
                "separator" => f.separator = separator(v).map_err(|e| format!("-E {e}"))?,
                "aggregator" => f.aggregator = separator(v).map_err(|e| format!("-E {e}"))?,
                "occurrence" => {
                    f.occurrence = match v {
                        "a" => Occurrence::All,
                        "f" => Occurrence::First,
                        "l" => Occurrence::Last,
                        n => match n.parse::<usize>() {
                            Ok(i) if i > 0 => Occurrence::Nth(i),
                            _ => {
                                return Err(format!(
                                    "-E occurrence={v}: f, l, a or a number from 1"
                                ));
                            }
                        },
                    }
                }
                "quote" => {
                    f.quote = match v {
                        "d" => Some('"'),
                        "s" => Some('\''),
                        "n" => None,
                        _ => return Err(format!("-E quote={v}: d, s or n")),
                    }
                }
                "bom" => {}
                _ => {
                    return Err(format!(
                        "-E {k}: unknown option (header, separator, occurrence, aggregator, quote)"
                    ));
                }
            }
        }
        Ok(f)
    }

    /// The header line (the field names as given), without the newline.
    pub fn header_line(&self, names: &[String]) -> String {
        let mut s = String::new();
        for (i, n) in names.iter().enumerate() {
            if i > 0 {
                s.push_str(&self.separator);
            }
            self.quoted(&mut s, n);
        }
        s
    }

    fn quoted(&self, out: &mut String, v: &str) {
        match self.quote {
            Some(q) => {
                out.push(q);
                out.push_str(v);
                out.push(q);
            }
            None => out.push_str(v),
        }
    }

    /// Appends one frame's line (without the newline).
    pub fn write_row<'a>(
        &self,
        out: &mut String,
        fields: &[&'static Field],
        ctx: &Ctx<'_, 'a>,
        scratch: &mut Vec<Value<'a>>,
    ) {
        let mut cell = String::new();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.separator);
            }
            scratch.clear();
            (f.get)(ctx, scratch);
            cell.clear();
            let picked: &[Value<'a>] = match self.occurrence {
                Occurrence::All => scratch,
                Occurrence::First => scratch.get(..1).unwrap_or_default(),
                Occurrence::Last => scratch
                    .len()
                    .checked_sub(1)
                    .and_then(|l| scratch.get(l..))
                    .unwrap_or_default(),
                Occurrence::Nth(n) => scratch.get(n - 1..n).unwrap_or_default(),
            };
            for (j, v) in picked.iter().enumerate() {
                if j > 0 {
                    cell.push_str(&self.aggregator);
                }
                f.format(v, &mut cell);
            }
            if self.quote.is_some() && !picked.is_empty() {
                self.quoted(out, &cell);
            } else {
                out.push_str(&cell);
            }
        }
    }
}
