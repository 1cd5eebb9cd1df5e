//! `roce-dissect gen`: a scenario's capture and its ground truth.

use std::io::{self, BufWriter, Write};

use super::args::GenLink;
use super::beside::{beside, create_output};
use super::{GenArgs, RunError};
use crate::output::text::{count, terminal_safe};
use crate::synth::ib;
use crate::synth::scenario::{GenOptions, Scenario, generate};
use crate::synth::{CaptureWriter, OutFormat};

/// Frames a `gen` run may write unless `--max-frames` says otherwise: about
/// 40 GB of 800-byte frames, far beyond any test and short of a full disk.
pub const DEFAULT_MAX_FRAMES: u64 = 50_000_000;

/// `gen --scenario deadlock -o DIR`: a capture per link, the topology
/// and (with `--truth`) what `fabric` must report.
fn deadlock(args: &GenArgs) -> Result<(), RunError> {
    let dir = &args.output;
    if dir.as_os_str() == "-" {
        return Err(RunError::Usage(
            "--scenario deadlock writes a capture per link: -o names a folder".into(),
        ));
    }
    let format = match args.format {
        Some(super::args::FormatArg::Pcap) => OutFormat::PcapMicros,
        Some(super::args::FormatArg::NsPcap) => OutFormat::PcapNanos,
        _ => OutFormat::PcapNg,
    };
    let shown = terminal_safe(&dir.display().to_string());
    std::fs::create_dir_all(dir).map_err(|e| RunError::Usage(format!("{shown}: {e}")))?;
    let run = crate::synth::deadlock::generate(args.seed, format)?;
    for (name, bytes) in &run.captures {
        super::sink::write_file(&dir.join(name), bytes)?;
    }
    super::sink::write_file(&dir.join("topology.json"), run.topology.as_bytes())?;
    // The same frames as one capture of the three ports, an interface each
    // (in a folder of its own: `fabric DIR` reads each link once).
    if format == OutFormat::PcapNg {
        std::fs::create_dir_all(dir.join("one-file"))?;
        let links: Vec<(&str, &[u8])> = run
            .captures
            .iter()
            .map(|(n, b)| (n.trim_end_matches(".pcapng"), b.as_slice()))
            .collect();
        super::sink::write_file(
            &dir.join("one-file").join("links.pcapng"),
            &crate::synth::pcap::pcapng_of_links(&links)?,
        )?;
    }
    if let Some(t) = &args.truth {
        let mut json = serde_json::to_vec_pretty(&run.truth).map_err(io::Error::other)?;
        json.push(b'\n');
        super::sink::write_file(t, &json)?;
    }
    eprintln!(
        "roce-dissect: wrote {} link captures{} and topology.json to {shown}: roce-dissect fabric {shown}/link-* --topology {shown}/topology.json",
        run.captures.len(),
        if format == OutFormat::PcapNg {
            " (and one-file/links.pcapng, an interface each)"
        } else {
            ""
        }
    );
    Ok(())
}

pub fn run(args: &GenArgs) -> Result<(), RunError> {
    for (name, p) in [
        ("--loss", args.loss),
        ("--reorder", args.reorder),
        ("--ecn", args.ecn),
    ] {
        if !(0.0..=1.0).contains(&p) {
            return Err(RunError::Usage(format!(
                "{name} {p}: a probability is between 0 and 1"
            )));
        }
    }
    if args.grh && args.link == GenLink::Ethernet {
        return Err(RunError::Usage(
            "--grh goes with --link infiniband or erf (RoCE v1 frames carry a GRH by themselves)"
                .into(),
        ));
    }
    if args.link != GenLink::Ethernet && args.scenario == Scenario::PfcStorm {
        return Err(RunError::Usage(
            "--scenario pfc-storm with --link infiniband: InfiniBand has no PFC (credit-based flow control), so there is no storm to generate"
                .into(),
        ));
    }
    if args.scenario == Scenario::Deadlock {
        return deadlock(args);
    }
    let to_stdout = args.output.as_os_str() == "-";
    if to_stdout {
        super::sink::binary_stdout("-o")?;
    }
    let format = match args.format {
        Some(super::args::FormatArg::Pcap) => OutFormat::PcapMicros,
        Some(super::args::FormatArg::NsPcap) => OutFormat::PcapNanos,
        Some(super::args::FormatArg::Pcapng) => OutFormat::PcapNg,
        None if to_stdout => OutFormat::PcapNg,
        None => OutFormat::from_path(&args.output),
    };
    // Refuse what would not fit before writing anything: each message is
    // at least one packet per PMTU and an ACK.
    let per_message = u64::from(args.size.max(1).div_ceil(args.pmtu)) + 1;
    let estimate = u64::from(args.qps)
        .saturating_mul(u64::from(args.messages))
        .saturating_mul(per_message);
    if estimate > args.max_frames {
        return Err(RunError::Usage(format!(
            "--qps {} --messages {} --size {} would write about {}, more than --max-frames {} allows",
            args.qps,
            args.messages,
            args.size,
            count(estimate, "frame", "frames"),
            args.max_frames
        )));
    }
    let opts = GenOptions {
        scenario: args.scenario,
        seed: args.seed,
        qps: args.qps.max(1),
        messages: args.messages,
        size: args.size.max(1),
        pmtu: args.pmtu,
        loss: args.loss,
        loss_side: args.loss_side,
        reorder: args.reorder,
        ecn: args.ecn,
        link_speed_bps: args.link_speed,
        duration_ns: args.duration,
        ts_resolution_ns: format.ts_resolution_ns(),
        rtt_ns: args.rtt.clone(),
        ack_every: args.ack_every,
        read_delay_ns: args.read_delay,
    };
    let started = std::time::Instant::now();
    let stop = super::stop::Stop::at_signals();
    // A file is written beside its place and moved there when whole: until
    // then, a file of that name is as it was.
    let (out, partial): (Box<dyn Write + Send>, _) = if to_stdout {
        (Box::new(super::sink::Sink::stdout(io::stdout())), None)
    } else {
        let (file, partial) = create_output(&args.output, beside(&args.output))?;
        (
            Box::new(super::sink::Sink::file(file, &args.output)),
            partial,
        )
    };
    let link = args.link;
    let link_type = match link {
        GenLink::Ethernet => 1,
        GenLink::Infiniband => 247,
        GenLink::Erf => 197,
    };
    let mut w =
        CaptureWriter::with_link(crate::synth::BackgroundWriter::new(out), format, link_type)?;
    let budget = args.max_frames;
    let mut cut_at_budget = false;
    let mut written = 0u64;
    let mut dropped = 0u64;
    let generated = generate(opts, &mut |ts, f| {
        if stop.requested() {
            return Err(io::Error::other("stopped"));
        }
        written += 1;
        if written > budget {
            cut_at_budget = true;
            return Err(io::Error::other(format!(
                "stopped at --max-frames {budget}: the capture is cut short"
            )));
        }
        match link {
            GenLink::Ethernet => w.write(ts, f),
            native => match ib::carry(f, args.grh) {
                Some(p) if native == GenLink::Erf => w.write(ts, &ib::erf_record(&p, ts, 1)),
                Some(p) => w.write(ts, &p),
                None => {
                    dropped += 1;
                    Ok(())
                }
            },
        }
    });
    let finished = w.into_inner().finish();
    if stop.requested() {
        // Only a file of our own: a named pipe or `/dev/null` stays.
        if let Some(b) = &partial {
            let _ = std::fs::remove_file(&b.partial);
        }
        return Err(stop.error(&match to_stdout {
            true => "the capture written to standard output is cut short".to_string(),
            false => {
                let out = terminal_safe(&args.output.display().to_string());
                match partial {
                    Some(_) => format!("{out} was not written (a file of that name is as it was)"),
                    None => format!("what went to {out} is cut short"),
                }
            }
        }));
    }
    // A capture that could not be written whole (a full disk) is not
    // left behind: a file of that name is as it was, and the disk is not
    // left full. One cut short at --max-frames goes in its place, and
    // says so.
    let generated = match finished.and(generated) {
        Err(e) if !cut_at_budget => {
            if let Some(b) = &partial {
                let _ = std::fs::remove_file(&b.partial);
            }
            return Err(e.into());
        }
        g => g,
    };
    if let Some(b) = &partial {
        std::fs::rename(&b.partial, &b.target).map_err(|e| {
            let _ = std::fs::remove_file(&b.partial);
            RunError::Io(io::Error::new(
                e.kind(),
                format!("{}: {e}", terminal_safe(&args.output.display().to_string())),
            ))
        })?;
    }
    let mut truth = generated?;
    if link != GenLink::Ethernet {
        // What the native capture holds: no PFC, flows by LID or GID.
        truth.frames -= dropped;
        truth.pfc.intervals.clear();
        for f in &mut truth.flows {
            f.src = ib::native_addr(&f.src, args.grh);
            f.dst = ib::native_addr(&f.dst, args.grh);
        }
    }
    if let Some(t) = &args.truth {
        let f = std::fs::File::create(t).map_err(|e| {
            RunError::Usage(format!("{}: {e}", terminal_safe(&t.display().to_string())))
        })?;
        let mut f = BufWriter::new(super::sink::Sink::file(f, t));
        serde_json::to_writer_pretty(&mut f, &truth).map_err(io::Error::from)?;
        writeln!(f)?;
        f.flush()?;
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "roce-dissect: wrote {} ({}) to {} in {:.2} s ({:.2} M frames/s)",
        count(truth.frames, "frame", "frames"),
        count(truth.flows.len() as u64, "flow", "flows"),
        if to_stdout {
            "standard output".to_string()
        } else {
            terminal_safe(&args.output.display().to_string())
        },
        secs,
        truth.frames as f64 / secs.max(1e-9) / 1e6
    );
    Ok(())
}
