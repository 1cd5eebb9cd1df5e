//! `roce-dissect fields`: the registry's fields, as `tshark -G fields`
//! lists Wireshark's.

use std::io::{self, BufWriter, Write};

use super::RunError;
use super::args::FieldsArgs;
use crate::fields::{Base, FIELDS, FieldType};

pub fn run(args: &FieldsArgs) -> Result<(), RunError> {
    let pattern = args.pattern.as_deref().map(str::to_ascii_lowercase);
    let chosen: Vec<_> = FIELDS
        .iter()
        .filter(|f| !args.values || f.names.is_some())
        .filter(|f| {
            pattern.as_deref().is_none_or(|p| {
                f.name.contains(p)
                    || f.alias().is_some_and(|a| a.contains(p))
                    || f.title.to_ascii_lowercase().contains(p)
            })
        })
        .collect();
    if chosen.is_empty() {
        let with_names = FIELDS.iter().filter(|f| f.names.is_some()).count();
        return Err(RunError::NothingFound(if args.values {
            format!(
                "no field with named values matches '{}' ({with_names} fields have them: \
                 `roce-dissect fields --values` lists them)",
                crate::output::text::terminal_safe(args.pattern.as_deref().unwrap_or_default()),
            )
        } else {
            format!(
                "no field matches '{}' ({} fields in all: `roce-dissect fields` lists them)",
                crate::output::text::terminal_safe(args.pattern.as_deref().unwrap_or_default()),
                FIELDS.len()
            )
        }));
    }
    let mut out = BufWriter::new(super::sink::Sink::stdout(io::stdout().lock()));
    if args.values {
        let w = chosen.iter().map(|f| f.name.len()).max().unwrap_or(0);
        if !args.tsv {
            writeln!(out, "{:<w$}  {:<6}  name", "field", "value")?;
        }
        for f in chosen {
            let names = f.names.map_or(&[][..], |n| n());
            for (v, name) in names {
                // As tshark's -G values: hex without padding for hex fields.
                let value = match f.base {
                    Base::Hex | Base::HexDec => format!("{v:#x}"),
                    _ => v.to_string(),
                };
                if args.tsv {
                    writeln!(out, "V\t{}\t{value}\t{name}", f.name)?;
                } else {
                    writeln!(out, "{:<w$}  {value:<6}  {name}", f.name)?;
                }
            }
        }
    } else if args.tsv {
        for f in chosen {
            writeln!(
                out,
                "F\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                f.title,
                f.name,
                f.ty.wireshark_name(),
                f.protocol(),
                f.base.wireshark_name(),
                f.alias().unwrap_or(""),
                if f.in_tshark {
                    "tshark"
                } else {
                    "roce-dissect"
                }
            )?;
        }
    } else {
        let w = chosen.iter().map(|f| f.name.len()).max().unwrap_or(0);
        writeln!(out, "{:<w$}  {:<8}  title", "field", "type")?;
        for f in chosen {
            let ty = match f.ty {
                FieldType::Uint(b) => format!("uint{b}"),
                FieldType::FrameNum => "frame".into(),
                FieldType::Bool => "bool".into(),
                FieldType::Ether => "mac".into(),
                FieldType::Ipv4 => "ipv4".into(),
                FieldType::Ipv6 => "ipv6".into(),
                FieldType::Bytes => "bytes".into(),
                FieldType::Str => "string".into(),
                FieldType::AbsTime | FieldType::RelTime => "time".into(),
                FieldType::Millis => "ms".into(),
                FieldType::Presence => "-".into(),
            };
            let mark = if f.in_tshark { "" } else { " [roce-dissect]" };
            writeln!(out, "{:<w$}  {ty:<8}  {}{mark}", f.name, f.title)?;
        }
    }
    out.flush()?;
    Ok(())
}
