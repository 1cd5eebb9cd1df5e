//! A compiled filter tested on a frame's fields, as Wireshark tests it:
//! absent fields false, several occurrences by the operator's quantifier.

use std::fmt::Write as _;

use super::literal::Literal;
use super::{CmpOp, Expr, Operand, Rhs, Slice, Test, TextFn};
use crate::fields::{Ctx, Value};

/// [`eval`] with contextual tests unknown (`None`).
pub(super) fn eval3<'a>(e: &Expr, ctx: &Ctx<'_, 'a>, scratch: &mut Vec<Value<'a>>) -> Option<bool> {
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

pub(super) fn eval<'a>(e: &Expr, ctx: &Ctx<'_, 'a>, scratch: &mut Vec<Value<'a>>) -> bool {
    match e {
        Expr::Or(a, b) => eval(a, ctx, scratch) || eval(b, ctx, scratch),
        Expr::Xor(a, b) => eval(a, ctx, scratch) != eval(b, ctx, scratch),
        Expr::And(a, b) => eval(a, ctx, scratch) && eval(b, ctx, scratch),
        Expr::Not(a) => !eval(a, ctx, scratch),
        Expr::Test(t) | Expr::Contextual(t) => test(t, ctx, scratch),
    }
}

/// The operand's values, as literals can be compared with.
pub(super) fn operand_values<'a>(op: &Operand, ctx: &Ctx<'_, 'a>, scratch: &mut Vec<Value<'a>>) {
    scratch.clear();
    match op {
        Operand::Field { field, slice, mask } => {
            (field.get)(ctx, scratch);
            if let Some(m) = mask {
                for v in scratch.iter_mut() {
                    *v = Value::Uint(super::literal::as_u64(v).unwrap_or(0) & m);
                }
            }
            if let Some(s) = slice {
                let vals = std::mem::take(scratch);
                scratch.extend(vals.iter().filter_map(|v| {
                    let b = super::literal::to_bytes(v)?;
                    apply_slice(&b, *s).map(|x| Value::Bytes(x.to_vec().into()))
                }));
            }
        }
        Operand::Len(f) => {
            (f.get)(ctx, scratch);
            let vals = std::mem::take(scratch);
            scratch.extend(
                vals.iter().map(|v| {
                    Value::Uint(super::literal::to_bytes(v).map_or(0, |b| b.len() as u64))
                }),
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

pub(super) fn apply_slice(b: &[u8], s: Slice) -> Option<&[u8]> {
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

pub(super) fn test<'a>(t: &Test, ctx: &Ctx<'_, 'a>, scratch: &mut Vec<Value<'a>>) -> bool {
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
                    owned = rvals
                        .iter()
                        .filter_map(super::literal::from_value)
                        .collect();
                    &owned
                }
            };
            if rlits.is_empty() {
                return false;
            }
            let holds = |v: &Value<'_>, l: &Literal| {
                let o = super::literal::compare(v, l);
                match c {
                    CmpOp::AnyEq | CmpOp::AllEq => super::literal::equals(v, l),
                    CmpOp::AllNe | CmpOp::AnyNe => !super::literal::equals(v, l),
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
                        None => super::literal::equals(v, a),
                        Some(b) => {
                            matches!(
                                super::literal::compare(v, a),
                                Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
                            ) && matches!(
                                super::literal::compare(v, b),
                                Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                            )
                        }
                    })
                })
        }
        Test::Contains(op, l, quant) => {
            operand_values(op, ctx, scratch);
            !scratch.is_empty() && quant.holds(scratch.iter(), |v| super::literal::contains(v, l))
        }
        Test::Matches(op, re, quant) => {
            operand_values(op, ctx, scratch);
            !scratch.is_empty()
                && quant.holds(scratch.iter(), |v| match v {
                    Value::Str(s) => re.is_match(s.as_bytes()),
                    v => super::literal::to_bytes(v).is_some_and(|b| re.is_match(&b)),
                })
        }
    }
}
