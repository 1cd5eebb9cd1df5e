//! The analysis side: chunks in file order, each checked against where
//! the previous one ended and the state the file is in.

use std::fs::File;
use std::ops::ControlFlow;

use super::MAX_STATE_CHANGES;
use super::schedule::Shared;
use super::split_sink::SplitSink;
use super::walk::Chunk;
use super::walk::End;
use super::walk::Job;
use super::walk::Walker;
use super::walk::Warnings;
use crate::analysis::Analyzer;
use crate::capture::CaptureError;
use crate::capture::Item;
use crate::capture::cut_warning;
use crate::capture::shrank_warning;
use crate::dissect::dissect;
use crate::pipeline::Progress;
use crate::pipeline::Seen;
use crate::pipeline::Visit;
/// Analyses a chunk's facts (`frames` frames came before them) and hands
/// its candidates to `visit`, dissected again, with the analysis of each.
pub(super) fn visit_chunk(
    chunk: &mut Chunk,
    frames: u64,
    an: &mut Analyzer,
    job: &Job<'_>,
    times: &mut Option<(u64, u64)>,
    visit: &mut dyn FnMut(&Seen<'_, '_>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let mut next = chunk.candidates.iter().peekable();
    for (i, facts) in chunk.packets.iter_mut().enumerate() {
        facts.number += frames;
        let found = an.observe(facts);
        let tcp = an.tcp_seen(facts.number);
        let (first, prev) = *times.get_or_insert((facts.ts_ns, facts.ts_ns));
        *times = Some((first, facts.ts_ns));
        let Some(c) = next.next_if(|c| c.index == i) else {
            continue;
        };
        let data = job.map.get(c.data.clone()).unwrap_or_default();
        let frame = c.meta.frame(facts.number, data, c.offset as usize);
        let pkt = dissect(&frame, job.opts);
        if Analyzer::frame_bytes_wanted(tcp.as_ref()) {
            an.keep_frame_bytes(&pkt);
        }
        visit(&Seen {
            pkt: &pkt,
            analysis: &found,
            tcp,
            first_ts_ns: first,
            prev_ts_ns: prev,
            link: an.link_speed(),
        })?;
    }
    ControlFlow::Continue(())
}

/// The analysis side: chunks in file order, each checked against where the
/// previous one ended and the state the file is in.
pub(super) struct Feed<'f, 'a, 'p, 'v> {
    /// The file, to ask its size if it shrinks while being read.
    pub(super) file: &'f File,
    pub(super) job: &'f Job<'a>,
    pub(super) shared: &'f Shared,
    pub(super) walker: &'f mut Walker,
    pub(super) warnings: &'f mut Warnings,
    pub(super) progress: &'f mut Option<Progress<'p>>,
    /// Section header and interface blocks read after the first packet.
    pub(super) state_changes: usize,
    pub(super) visit: Option<Visit<'v>>,
    /// The first frame's timestamp and the last one's, once there is one.
    pub(super) times: Option<(u64, u64)>,
}

impl Feed<'_, '_, '_, '_> {
    pub(super) fn run(
        &mut self,
        an: &mut Analyzer,
        mut split: Option<&mut SplitSink<'_, '_>>,
    ) -> Result<(), CaptureError> {
        let job = self.job;
        // Where the next record really starts.
        let mut pos = job.data_start;
        let mut frames = 0u64;
        for k in 0..self.shared.total {
            let (_, hi) = job.bounds(k);
            let mut chunk = self.shared.take(k, job, self.walker);
            // A file cut while being read: its pages past the new end read
            // as zeros (see mapwin), so no chunk reaching past it is used.
            if mapwin::shrank() {
                let now = self.file.metadata().map_or(0, |m| m.len());
                if hi > now {
                    self.warnings.push(shrank_warning(now, pos));
                    return Ok(());
                }
            }
            // Where this thread began to read the chunk again, if it did.
            let mut reread: Option<u64> = None;
            let state = self.walker.id();
            // Until the chunk's records are all analysed.
            while pos < hi {
                if chunk.start != Some(pos) || chunk.state != self.walker.id() {
                    // A wrong guess, or an older state: again from the
                    // right offset, whose pages are populated once and
                    // given back on their own below (the group may be
                    // given back already).
                    let populate = reread.is_none();
                    chunk = job.run(k, Some(pos), self.walker, chunk.packets, populate);
                    reread.get_or_insert(pos);
                }
                let count = chunk.packets.len() as u64;
                match self.visit.as_mut() {
                    None if split.is_some() => {
                        if let Some(sink) = split.as_deref_mut() {
                            let packets = std::mem::take(&mut chunk.packets);
                            let (go_on, buf) = sink.chunk(packets, frames);
                            chunk.packets = buf;
                            if !go_on {
                                return Ok(());
                            }
                        }
                    }
                    None => an.observe_run(&mut chunk.packets, frames),
                    Some(visit) => {
                        let stop =
                            visit_chunk(&mut chunk, frames, an, job, &mut self.times, &mut **visit);
                        if stop.is_break() {
                            return Ok(());
                        }
                        // Dissecting the candidates again mapped their
                        // pages back (a whole 2 MiB folio each, where the
                        // file is cached so), after the group of the
                        // chunk may have been given back: again now.
                        if !chunk.candidates.is_empty() {
                            let (lo, _) = job.bounds(k);
                            let end = chunk.candidates.iter().map(|c| c.data.end).max();
                            let end = end.unwrap_or(0) as u64;
                            job.map
                                .release(lo as usize, end.saturating_sub(lo) as usize);
                        }
                    }
                }
                frames += count;
                self.warnings.add(std::mem::take(&mut chunk.warnings));
                match std::mem::replace(&mut chunk.end, End::Eof) {
                    End::Next(next) => {
                        pos = next;
                        if let Some(p) = self.progress.as_mut()
                            && p(pos.min(job.size) as usize, job.size as usize, frames).is_break()
                        {
                            return Ok(());
                        }
                    }
                    End::State(at) => {
                        pos = match self.state_block(at, frames)? {
                            Some(next) => next,
                            None => return Ok(()),
                        };
                        // The rest of the chunk is read again.
                        chunk.start = None;
                        self.state_changes += 1;
                    }
                    End::Eof => return Ok(()),
                    End::Cut { at, needed, have } => {
                        self.warnings.push(cut_warning(at, needed, have, frames));
                        return Ok(());
                    }
                    End::Failed(e) => return Err(renumbered(e, frames + 1)),
                }
            }
            if reread.is_some() {
                // From the chunk's start, not the reread's: where the file
                // is mapped in 2 MiB folios, populating the reread maps the
                // whole folio again, the part read first included.
                let (lo, _) = job.bounds(k);
                job.map.release(lo as usize, hi.saturating_sub(lo) as usize);
            }
            // The chunk's last record ran into the next chunk, whose pages
            // may have been given back already (it was dissected first):
            // those it touched again go back too, or they would stay.
            if pos > hi && pos < job.size {
                job.map.release(hi as usize, (pos - hi) as usize);
            }
            if self.walker.id() != state {
                if self.state_changes > MAX_STATE_CHANGES + k {
                    self.shared.solo();
                } else {
                    self.shared.publish(self.walker);
                }
            }
            self.shared.consumed(k, chunk.packets);
        }
        Ok(())
    }

    /// Reads the section header or interface block at `at`; where the next
    /// block starts, or `None` at the end of the file.
    pub(super) fn state_block(
        &mut self,
        at: u64,
        frames: u64,
    ) -> Result<Option<u64>, CaptureError> {
        let Walker::PcapNg(cursor) = &mut *self.walker else {
            return Ok(None);
        };
        let input = self.job.map.get(at as usize..).unwrap_or_default();
        let next = match cursor.apply(input, at) {
            Item::Skip { next } | Item::Frame { next, .. } => Some(at + next as u64),
            Item::Incomplete { needed } => {
                self.warnings
                    .push(cut_warning(at, needed, input.len(), frames));
                None
            }
            Item::Failed(e) => return Err(renumbered(e, frames + 1)),
        };
        self.warnings.add(cursor.take_warnings());
        Ok(next)
    }
}

/// `e` with the frame number the whole file gives it.
pub(super) fn renumbered(e: CaptureError, frame: u64) -> CaptureError {
    match e {
        CaptureError::AbsurdLength { offset, len, .. } => {
            CaptureError::AbsurdLength { frame, offset, len }
        }
        other => other,
    }
}
