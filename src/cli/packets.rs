//! `roce-dissect packets CAPTURE`: one line per frame (with what the
//! analysis found in it), the header tree, hex, or JSON Lines.

use std::io::{self, BufWriter, Write};

use super::{PacketsArgs, Progress, RunError, print_warnings, source_error};
use crate::analysis::Analyzer;
use crate::dissect::dissect;
use crate::output::{packets, tree};

pub fn run(args: &PacketsArgs) -> Result<(), RunError> {
    let inputs = super::inputs::expand(&args.captures)?;
    let (mut reader, name) = super::open_inputs(&inputs.paths, args.merge, "packets")?;
    let path = std::path::Path::new(&name);
    let opts = args.decode.dissect_options();
    let link_speed = args.decode.link_speed();
    // The analysis sees every frame, shown or not, so that what it says of
    // a frame (a retransmission, a gap) is what the report says.
    let mut analyzer = Analyzer::new(args.analysis.options(&args.decode)?);
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    // Microseconds when that is all the capture has (a classic pcap);
    // nanoseconds otherwise (ns pcaps, pcapng, ERF records).
    let ts_digits = if reader.ts_resolution_ns() >= 1000 {
        6
    } else {
        9
    };
    let mut first_ts: Option<u64> = None;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut shown = 0u64;
    let mut read = 0u64;
    let mut progress = Progress::new(&path.display().to_string());
    let result: Result<(), RunError> = (|| {
        loop {
            if read.is_multiple_of(1 << 16) {
                let (done, total) = reader.progress();
                progress.update(done, total.unwrap_or(0), read);
            }
            let Some(frame) = reader.next_frame() else {
                break;
            };
            let frame = frame.map_err(|e| source_error(e, path))?;
            let pkt = dissect(&frame, &opts);
            let found = analyzer.packet(&pkt);
            read += 1;
            let first = *first_ts.get_or_insert(pkt.ts_ns);
            if args.roce_only && pkt.roce.is_none() && pkt.pause.is_none() {
                continue;
            }
            if let Some(want) = &args.flow
                && Analyzer::flow_key(&pkt).as_ref() != Some(want)
            {
                continue;
            }
            if args.json {
                packets::write_json_line(&mut buf, &pkt);
                if buf.len() >= 1 << 15 {
                    out.write_all(&buf)?;
                    buf.clear();
                }
            } else {
                let mut line =
                    packets::summary_line(&pkt, first, ts_digits, link_speed.bps(pkt.if_speed));
                packets::push_marks(&mut line, found.marks);
                writeln!(out, "{line}")?;
                if args.verbose {
                    let nodes = tree::header_tree(&pkt, link_speed.bps(pkt.if_speed));
                    write!(out, "{}", tree::render_tree(&nodes))?;
                }
                if args.hex {
                    write!(out, "{}", tree::hex_dump(pkt.data))?;
                }
                if args.verbose || args.hex {
                    writeln!(out)?;
                }
            }
            shown += 1;
            if args.count.is_some_and(|c| shown >= c) {
                break;
            }
        }
        Ok(())
    })();
    progress.finish();
    out.write_all(&buf)?;
    out.flush()?;
    print_warnings(reader.warnings(), reader.warning_count());
    result?;
    if shown == 0
        && let Some(f) = &args.flow
    {
        return Err(RunError::NothingFound(format!(
            "no frame of flow {},{},0x{:06x} in {} ({} read; `roce-dissect {}` lists its flows)",
            f.src,
            f.dst,
            f.dest_qp,
            crate::output::text::terminal_safe(&path.display().to_string()),
            crate::output::text::count(read, "frame", "frames"),
            crate::output::text::shell_quote(&path.display().to_string()),
        )));
    }
    Ok(())
}
