//! The TUI's first pass: the report, and an index of every frame's offset
//! and flow so packet lists can be read again on demand.

use crate::analysis::report::Report;
use crate::analysis::{AnalysisOptions, Analyzer, Marks};
use crate::capture::{CaptureError, FrameSource, Section};
use crate::dissect::DissectOptions;

pub use crate::analysis::NO_FLOW;

/// Per frame: where its record is and which report flow it belongs to.
#[derive(Debug, Default)]
pub struct FrameIndex {
    pub offsets: Vec<u64>,
    pub flows: Vec<u32>,
    pub sections: Vec<Section>,
    /// What the analysis found in each frame (retransmit, gap, NAK...).
    pub marks: Vec<Marks>,
    /// For the frames that have them (a gap, a replay): the PSNs skipped
    /// and the retransmission episode, by frame position.
    pub counts: std::collections::HashMap<u32, (u32, u32)>,
    /// For the answers that sampled them: the round trip and the message
    /// completion time, by frame position.
    pub timing: std::collections::HashMap<u32, (Option<u64>, Option<u64>)>,
    /// The NVMe-oF capsules among them (the `nvme.*` fields).
    pub nvme: std::collections::HashMap<u32, crate::analysis::marks::NvmeRole>,
    /// The TCP frames' conversations as followed up to each.
    pub tcp: std::collections::HashMap<u32, crate::analysis::tcp::TcpSeen>,
    pub first_ts_ns: u64,
}

impl FrameIndex {
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }
}

/// Reads `source` once: report and index. `progress(done, total, frames)`
/// is called every 64 Ki frames.
pub fn first_pass(
    source: &mut dyn FrameSource,
    name: &str,
    dissect_opts: &DissectOptions,
    opts: AnalysisOptions,
    progress: &mut dyn FnMut(u64, Option<u64>, u64),
) -> Result<(Report, FrameIndex), CaptureError> {
    let mut an = Analyzer::new(opts);
    let mut index = FrameIndex::default();
    let mut first_ts = None;
    let mut tell = |done: usize, total: usize, frames| {
        progress(done as u64, (total > 0).then_some(total as u64), frames);
        std::ops::ControlFlow::Continue(())
    };
    crate::pipeline::observe_source(
        source,
        dissect_opts,
        &mut an,
        Some(&mut tell),
        |frame, _facts, found, tcp| {
            first_ts.get_or_insert(frame.ts_ns);
            index.offsets.push(frame.offset as u64);
            index.flows.push(found.flow);
            index.marks.push(found.marks);
            if found.missing > 0 || found.episode > 0 {
                let pos = (index.offsets.len() - 1) as u32;
                index.counts.insert(pos, (found.missing, found.episode));
            }
            if found.ack_rtt_ns.is_some() || found.completion_ns.is_some() {
                let pos = (index.offsets.len() - 1) as u32;
                let t = (found.ack_rtt_ns, found.completion_ns);
                index.timing.insert(pos, t);
            }
            if let Some(role) = found.nvme {
                let pos = (index.offsets.len() - 1) as u32;
                index.nvme.insert(pos, role);
            }
            // TCP: its conversation, for the packet list's numbers.
            if let Some(seen) = tcp {
                let pos = (index.offsets.len() - 1) as u32;
                index.tcp.insert(pos, seen);
            }
        },
    )?;
    index.sections = source.sections().to_vec();
    index.first_ts_ns = first_ts.unwrap_or(0);
    let info = crate::pipeline::capture_info(source, name);
    let (report, pos) = an.finish_indexed(info);
    for f in &mut index.flows {
        if *f != NO_FLOW {
            *f = pos.get(*f as usize).map_or(NO_FLOW, |&p| p as u32);
        }
    }
    Ok((report, index))
}
