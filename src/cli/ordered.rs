//! The frames `packets` shows, formatted on every core and written in
//! capture order.
//!
//! The frame loop (reading, dissecting, the analysis) runs in file order
//! on one thread, as it must: what the analysis says of a frame depends on
//! every frame before it. Formatting a frame depends only on the frame and
//! on what the analysis said of it, and it is a large part of the
//! command's work on one thread (500 k frames of 900 bytes: about a
//! quarter of the summary lines' run, 40 % of JSON's, most of `-V`'s and
//! `-x`'s). So the loop copies
//! each shown frame's bytes and its analysis into a batch, formatting
//! threads turn batches into bytes, and the loop's thread writes the
//! batches out in the order it made them.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::num::NonZeroU64;
use std::ops::Range;
use std::sync::{Mutex, mpsc};

use crate::analysis::FrameAnalysis;
use crate::capture::{Frame, LinkType};
use crate::dissect::{DissectOptions, Icrc, Vcrc};
use crate::pipeline::Seen;

/// Formats one shown frame: the frame (dissected in full), what the
/// analysis said of it and its flow's number, appended to `out`.
pub trait Render: Sync {
    fn render(&self, seen: &Seen<'_, '_>, flow_number: Option<u64>, out: &mut Vec<u8>);
}

/// A batch is handed on at this many frames...
const BATCH_FRAMES: usize = 512;
/// ... or this many bytes of frames, whichever comes first.
const BATCH_BYTES: usize = 512 << 10;
/// The most formatting threads: past this many, the frame loop's one
/// thread is the bound (it reads, dissects and analyses in about a
/// quarter of the time a frame takes to format).
const MAX_WORKERS: usize = 16;

/// A shown frame as the frame loop saw it, its bytes in its batch.
struct Shown {
    number: u64,
    ts_ns: u64,
    len: u32,
    caplen: u32,
    link: LinkType,
    if_speed: Option<NonZeroU64>,
    data: Range<usize>,
    /// The frame loop's verdicts, so that the formatting threads need
    /// not work them out again.
    icrc: Option<Icrc>,
    vcrc: Option<Vcrc>,
    analysis: FrameAnalysis,
    tcp: Option<crate::analysis::tcp::TcpSeen>,
    flow_number: Option<u64>,
    first_ts_ns: u64,
    prev_ts_ns: u64,
    speed: crate::analysis::LinkSpeed,
}

#[derive(Default)]
struct Batch {
    seq: u64,
    frames: Vec<Shown>,
    bytes: Vec<u8>,
    /// The batch formatted.
    out: Vec<u8>,
}

impl Batch {
    fn clear(&mut self) {
        self.frames.clear();
        self.bytes.clear();
        self.out.clear();
    }

    fn render(&mut self, render: &dyn Render, opts: &DissectOptions) {
        // Everything but the trailers' checks, which are the frame loop's.
        let opts = DissectOptions {
            check_icrc: false,
            ..*opts
        };
        for s in &self.frames {
            let data = self.bytes.get(s.data.clone()).unwrap_or_default();
            let frame = Frame {
                number: s.number,
                ts_ns: s.ts_ns,
                len: s.len,
                caplen: s.caplen,
                link: s.link,
                if_speed: s.if_speed,
                // Neither is part of a dissected frame.
                interface: 0,
                data,
                offset: 0,
            };
            let mut pkt = crate::dissect::dissect(&frame, &opts);
            pkt.icrc = s.icrc;
            pkt.vcrc = s.vcrc;
            let seen = Seen {
                pkt: &pkt,
                analysis: &s.analysis,
                tcp: s.tcp.clone(),
                first_ts_ns: s.first_ts_ns,
                prev_ts_ns: s.prev_ts_ns,
                link: s.speed,
            };
            render.render(&seen, s.flow_number, &mut self.out);
        }
    }
}

/// The frame loop's side: [`Output::show`] takes each shown frame;
/// [`Output::finish`] writes what is left.
pub struct Output<'o, W: Write> {
    out: &'o mut W,
    render: &'o dyn Render,
    opts: &'o DissectOptions,
    /// `None`: no formatting threads; frames are formatted as they come.
    pool: Option<Pool>,
    batch: Batch,
    /// Formatted on this thread when there is no pool.
    inline: Vec<u8>,
}

struct Pool {
    jobs: mpsc::SyncSender<Batch>,
    done: mpsc::Receiver<Batch>,
    /// Batches handed on and not yet written.
    outstanding: usize,
    limit: usize,
    next_seq: u64,
    /// The next batch to write.
    write_seq: u64,
    /// Formatted batches that came back before their turn.
    pending: BTreeMap<u64, Batch>,
    /// Written batches, to be filled again.
    spare: Vec<Batch>,
}

/// Formatting threads for `threads` cores: one per core beside the frame
/// loop's thread (which waits whenever they fall behind, and leaves its
/// core to them), none on one core.
pub fn workers(threads: usize) -> usize {
    if threads < 2 {
        0
    } else {
        threads.min(MAX_WORKERS)
    }
}

/// Runs `body` with an [`Output`] formatting on `workers` threads (none:
/// on the calling thread) and writing to `out`.
pub fn with_output<W: Write, T>(
    out: &mut W,
    render: &dyn Render,
    opts: &DissectOptions,
    workers: usize,
    body: impl FnOnce(&mut Output<'_, W>) -> T,
) -> T {
    if workers == 0 {
        let mut output = Output {
            out,
            render,
            opts,
            pool: None,
            batch: Batch::default(),
            inline: Vec::new(),
        };
        return body(&mut output);
    }
    let limit = 2 * workers + 2;
    let (jobs, queue) = mpsc::sync_channel::<Batch>(limit);
    let (done_tx, done) = mpsc::channel::<Batch>();
    let queue = Mutex::new(queue);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (queue, done_tx) = (&queue, done_tx.clone());
            scope.spawn(move || {
                loop {
                    // The lock is held only while waiting for a batch.
                    let next = match queue.lock() {
                        Ok(q) => q.recv(),
                        Err(_) => return,
                    };
                    let Ok(mut batch) = next else { return };
                    batch.render(render, opts);
                    if done_tx.send(batch).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let mut output = Output {
            out,
            render,
            opts,
            pool: Some(Pool {
                jobs,
                done,
                outstanding: 0,
                limit,
                next_seq: 0,
                write_seq: 0,
                pending: BTreeMap::new(),
                spare: Vec::new(),
            }),
            batch: Batch::default(),
            inline: Vec::new(),
        };
        // `output` (and with it the threads' only sender) is dropped when
        // `body` returns, so that they end whether or not everything was
        // written.
        body(&mut output)
    })
}

impl<W: Write> Output<'_, W> {
    /// Takes a shown frame. An error is the output's: nothing more can be
    /// written.
    pub fn show(&mut self, seen: &Seen<'_, '_>, flow_number: Option<u64>) -> io::Result<()> {
        if self.pool.is_none() {
            self.render.render(seen, flow_number, &mut self.inline);
            // As large as a `BufWriter`'s buffer, so that it goes out
            // without being copied there first.
            if self.inline.len() >= 1 << 16 {
                self.out.write_all(&self.inline)?;
                self.inline.clear();
            }
            return Ok(());
        }
        let f = seen.pkt;
        let at = self.batch.bytes.len();
        self.batch.bytes.extend_from_slice(f.data);
        self.batch.frames.push(Shown {
            number: f.number,
            ts_ns: f.ts_ns,
            len: f.len,
            caplen: f.caplen,
            link: f.link,
            if_speed: f.if_speed,
            data: at..self.batch.bytes.len(),
            icrc: f.icrc,
            vcrc: f.vcrc,
            analysis: *seen.analysis,
            tcp: seen.tcp.clone(),
            flow_number,
            first_ts_ns: seen.first_ts_ns,
            prev_ts_ns: seen.prev_ts_ns,
            speed: seen.link,
        });
        if self.batch.frames.len() >= BATCH_FRAMES || self.batch.bytes.len() >= BATCH_BYTES {
            self.hand_on()?;
        }
        Ok(())
    }

    /// Hands the batch being filled to the formatting threads, and writes
    /// what they have finished; waits for them when too many batches are
    /// out.
    fn hand_on(&mut self) -> io::Result<()> {
        let Some(pool) = self.pool.as_mut() else {
            return Ok(());
        };
        if self.batch.frames.is_empty() {
            return Ok(());
        }
        let mut next = pool.spare.pop().unwrap_or_default();
        next.clear();
        let mut batch = std::mem::replace(&mut self.batch, next);
        batch.seq = pool.next_seq;
        pool.next_seq += 1;
        if let Err(mpsc::SendError(mut batch)) = pool.jobs.send(batch) {
            // No formatting thread is left (none should end early): this
            // thread formats it.
            batch.render(self.render, self.opts);
            pool.pending.insert(batch.seq, batch);
        }
        pool.outstanding += 1;
        while let Ok(b) = pool.done.try_recv() {
            pool.pending.insert(b.seq, b);
        }
        self.write_ready()?;
        self.wait_while(|pool| pool.outstanding >= pool.limit)
    }

    /// Waits for formatted batches and writes them, while `busy` says so
    /// of the pool.
    fn wait_while(&mut self, busy: impl Fn(&Pool) -> bool) -> io::Result<()> {
        while let Some(pool) = self.pool.as_mut()
            && busy(pool)
        {
            match pool.done.recv() {
                Ok(b) => {
                    pool.pending.insert(b.seq, b);
                }
                Err(_) => break,
            }
            self.write_ready()?;
        }
        Ok(())
    }

    /// Writes the formatted batches whose turn it is.
    fn write_ready(&mut self) -> io::Result<()> {
        let Some(pool) = self.pool.as_mut() else {
            return Ok(());
        };
        while let Some(b) = pool.pending.remove(&pool.write_seq) {
            pool.write_seq += 1;
            pool.outstanding -= 1;
            let written = self.out.write_all(&b.out);
            pool.spare.push(b);
            written?;
        }
        Ok(())
    }

    /// Formats, writes and flushes every frame shown so far (before a
    /// wait for input, or after each frame with `-l`).
    pub fn flush(&mut self) -> io::Result<()> {
        self.finish()?;
        self.out.flush()
    }

    /// Formats and writes every frame shown so far.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.pool.is_none() {
            self.out.write_all(&self.inline)?;
            self.inline.clear();
            return Ok(());
        }
        self.hand_on()?;
        self.wait_while(|pool| pool.outstanding > 0)
    }
}
