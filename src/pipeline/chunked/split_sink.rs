//! The frames of a chunked file handed to an analysis split by host pair.

use std::sync::Arc;

use crate::analysis::AnalysisOptions;
use crate::analysis::Analyzer;
use crate::analysis::Facts;
use crate::analysis::split;
use crate::analysis::split::FrameLoop;
/// A chunk's facts for a split analysis's part (shared by every part),
/// the places of the part's frames among them, and the capture's first
/// frame's time.
pub(super) type Batch = (Arc<Vec<Facts>>, Vec<u32>, u64);

/// Batches on their way to a part's thread: enough that a part that is
/// behind for a moment does not hold the frame loop up.
pub(super) const BATCHES_AHEAD: usize = 4;

/// The analysis split by host pair ([`split`]): this thread runs the frame
/// loop and analyses the first part; each other part has a thread of its
/// own. A chunk's facts are not copied: every part reads its frames from
/// them, and the last part done hands them back.
pub(super) struct SplitSink<'s, 'scope> {
    pub(super) frames: FrameLoop,
    pub(super) opts: &'s AnalysisOptions,
    pub(super) mine: Option<Analyzer>,
    /// Each part's frames in the chunk in hand.
    pub(super) picks: Vec<Vec<u32>>,
    pub(super) to: Vec<std::sync::mpsc::SyncSender<Batch>>,
    /// Emptied lists of places, and chunks' facts, back from the threads.
    pub(super) spare: std::sync::mpsc::Receiver<Vec<u32>>,
    pub(super) returned: std::sync::mpsc::Receiver<Vec<Facts>>,
    pub(super) threads: Vec<std::thread::ScopedJoinHandle<'scope, Option<Analyzer>>>,
    /// Set when a part can no longer be joined: the analysis starts again
    /// on one thread.
    pub(super) doomed: &'s std::sync::atomic::AtomicBool,
}

impl<'s, 'scope> SplitSink<'s, 'scope> {
    pub(super) fn start<'env>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        opts: &'s AnalysisOptions,
        parts: usize,
        doomed: &'s std::sync::atomic::AtomicBool,
    ) -> Self
    where
        's: 'scope,
    {
        let room = parts * (BATCHES_AHEAD + 2);
        let (back, spare) = std::sync::mpsc::sync_channel(room);
        let (give, returned) = std::sync::mpsc::sync_channel(room);
        let (mut to, mut threads) = (Vec::new(), Vec::new());
        for _ in 1..parts {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(BATCHES_AHEAD);
            let (back, give) = (back.clone(), give.clone());
            to.push(tx);
            threads.push(scope.spawn(move || part_thread(rx, back, give, opts, doomed)));
        }
        SplitSink {
            frames: FrameLoop::new(opts.clone(), parts),
            opts,
            mine: None,
            picks: vec![Vec::new(); parts],
            to,
            spare,
            returned,
            threads,
            doomed,
        }
    }

    /// A chunk's facts (`frames` frames came before them): whether the
    /// parts can still be joined, and an empty buffer for the next chunk's.
    pub(super) fn chunk(&mut self, mut packets: Vec<Facts>, frames: u64) -> (bool, Vec<Facts>) {
        use std::sync::atomic::Ordering::Relaxed;
        for (i, facts) in packets.iter_mut().enumerate() {
            facts.number += frames;
            if let Some(p) = self.frames.frame(facts) {
                self.picks[p].push(i as u32);
            }
        }
        let origin = self.frames.origin().unwrap_or(0);
        let packets = Arc::new(packets);
        for (p, to) in self.to.iter().enumerate() {
            let picks = &mut self.picks[p + 1];
            if picks.is_empty() {
                continue;
            }
            let next = self.spare.try_recv().unwrap_or_default();
            let batch = (Arc::clone(&packets), std::mem::replace(picks, next), origin);
            if to.send(batch).is_err() {
                self.doomed.store(true, Relaxed);
            }
        }
        if !self.picks[0].is_empty() {
            let opts = self.opts;
            let mine = self
                .mine
                .get_or_insert_with(|| split::part(opts.clone(), origin));
            for &i in &self.picks[0] {
                mine.observe_part(&packets[i as usize]);
            }
            self.picks[0].clear();
        }
        let mut buf = Arc::into_inner(packets)
            .or_else(|| self.returned.try_recv().ok())
            .unwrap_or_default();
        buf.clear();
        let mine = self.mine.as_ref().and_then(Analyzer::unjoinable);
        if mine.or(self.frames.unjoinable()).is_some() {
            self.doomed.store(true, Relaxed);
        }
        (!self.doomed.load(Relaxed), buf)
    }

    /// The frame loop and every part, once their threads are done; why
    /// they cannot be joined, if they cannot.
    pub(super) fn end(self) -> Result<(FrameLoop, Vec<Analyzer>), split::Unsplit> {
        use std::sync::atomic::Ordering::Relaxed;
        let SplitSink {
            frames,
            opts,
            mine,
            to,
            threads,
            doomed,
            ..
        } = self;
        drop(to);
        let mut parts = Vec::with_capacity(threads.len() + 1);
        let origin = frames.origin().unwrap_or(0);
        parts.push(mine.unwrap_or_else(|| split::part(opts.clone(), origin)));
        for t in threads {
            match t.join() {
                Ok(Some(an)) => parts.push(an),
                Ok(None) => parts.push(split::part(opts.clone(), origin)),
                Err(_) => doomed.store(true, Relaxed),
            }
        }
        if doomed.load(Relaxed) {
            let why = parts.iter().find_map(Analyzer::unjoinable);
            return Err(why
                .or(frames.unjoinable())
                .unwrap_or(split::Unsplit::Stopped));
        }
        Ok((frames, parts))
    }
}

/// A part's thread: its frames of each chunk, in file order, until the
/// frame loop ends.
pub(super) fn part_thread(
    rx: std::sync::mpsc::Receiver<Batch>,
    back: std::sync::mpsc::SyncSender<Vec<u32>>,
    give: std::sync::mpsc::SyncSender<Vec<Facts>>,
    opts: &AnalysisOptions,
    doomed: &std::sync::atomic::AtomicBool,
) -> Option<Analyzer> {
    use std::sync::atomic::Ordering::Relaxed;
    let mut an: Option<Analyzer> = None;
    while let Ok((packets, mut picks, origin)) = rx.recv() {
        // Once doomed, batches are only taken (the frame loop stops soon).
        if !doomed.load(Relaxed) {
            let a = an.get_or_insert_with(|| split::part(opts.clone(), origin));
            for &i in &picks {
                a.observe_part(&packets[i as usize]);
            }
            if a.unjoinable().is_some() {
                doomed.store(true, Relaxed);
            }
        }
        picks.clear();
        let _ = back.try_send(picks);
        if let Some(buf) = Arc::into_inner(packets) {
            let _ = give.try_send(buf);
        }
    }
    an
}
