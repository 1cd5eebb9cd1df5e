//! The chunks in flight: which thread takes which chunk, the finished
//! ones waiting for the analysis, and their pages given back in groups.

use std::sync::Arc;
use std::sync::Condvar;
use std::sync::Mutex;

use super::Packets;
use super::RELEASE_GROUP;
use super::walk::Chunk;
use super::walk::Job;
use super::walk::Published;
use super::walk::Walker;
/// Chunks done and waiting, and who does what next.
pub(super) struct State {
    /// The next chunk nobody has taken yet.
    pub(super) next: usize,
    /// Chunks the analysis has finished with.
    pub(super) consumed: usize,
    /// Finished chunks, chunk `k` in slot `k % ahead`.
    pub(super) done: Vec<Option<Chunk>>,
    /// Packet buffers to reuse.
    pub(super) spare: Vec<Packets>,
    /// Chunks dissected in each release group.
    pub(super) dissected: Vec<u32>,
    /// The state new chunks are read in.
    pub(super) published: Published,
    /// Workers take no more chunks: the calling thread reads the rest.
    pub(super) solo: bool,
    pub(super) stop: bool,
    /// Threads waiting on `changed`: with none, nothing is notified (a
    /// notification is a system call whether or not anyone waits).
    pub(super) waiting: u32,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    pub(super) changed: Condvar,
    /// Chunks that may be taken beyond the one being analysed.
    pub(super) ahead: usize,
    pub(super) total: usize,
    /// Room in a new buffer: the frames of a chunk whose records average
    /// 256 bytes or more, so filling it copies nothing (pages are touched
    /// only as facts are written).
    pub(super) facts_per_chunk: usize,
}

impl Shared {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a change, counted in `waiting` while it waits.
    pub(super) fn wait<'a>(
        &self,
        mut st: std::sync::MutexGuard<'a, State>,
    ) -> std::sync::MutexGuard<'a, State> {
        st.waiting += 1;
        let mut st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        st.waiting -= 1;
        st
    }

    /// Releases the lock, then wakes the threads waiting, if any.
    pub(super) fn notify(&self, st: std::sync::MutexGuard<'_, State>) {
        let waiting = st.waiting > 0;
        drop(st);
        if waiting {
            self.changed.notify_all();
        }
    }

    /// Takes the next chunk if the window allows; with a buffer to fill.
    pub(super) fn claim(&self, st: &mut State) -> Option<(usize, Packets)> {
        if st.stop || st.next >= self.total || st.next >= st.consumed + self.ahead {
            return None;
        }
        let k = st.next;
        st.next += 1;
        let buf = st
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.facts_per_chunk));
        Some((k, buf))
    }

    /// Counts chunk `k` as dissected; the release group to give back when
    /// that completes it.
    pub(super) fn dissected(&self, st: &mut State, k: usize) -> Option<usize> {
        let g = k / RELEASE_GROUP;
        let in_group = (self.total - g * RELEASE_GROUP).min(RELEASE_GROUP) as u32;
        let n = st.dissected.get_mut(g)?;
        *n += 1;
        (*n == in_group).then_some(g)
    }

    pub(super) fn finished(&self, k: usize, chunk: Chunk, job: &Job<'_>) {
        let mut st = self.lock();
        st.done[k % self.ahead] = Some(chunk);
        let release = self.dissected(&mut st, k);
        self.notify(st);
        if let Some(g) = release {
            job.release_group(g);
        }
    }

    /// A worker: dissects chunks until there are none left.
    pub(super) fn work(&self, job: &Job<'_>, mut walker: Walker) {
        loop {
            let (k, buf, published) = {
                let mut st = self.lock();
                loop {
                    if st.stop || st.solo || st.next >= self.total {
                        // No chunk is left to fill a buffer: the spare ones
                        // are freed here, while the analysis finishes,
                        // rather than after it.
                        let spare = std::mem::take(&mut st.spare);
                        drop(st);
                        drop(spare);
                        return;
                    }
                    if let Some((k, buf)) = self.claim(&mut st) {
                        break (k, buf, st.published.clone());
                    }
                    st = self.wait(st);
                }
            };
            walker.sync(job.map, &published);
            let chunk = job.run(k, None, &mut walker, buf, true);
            self.finished(k, chunk, job);
        }
    }

    /// Chunk `k` for the analysis, dissecting others (with `walker`, in the
    /// published state) while it is not ready.
    pub(super) fn take(&self, k: usize, job: &Job<'_>, walker: &mut Walker) -> Chunk {
        let mut st = self.lock();
        loop {
            if let Some(c) = st.done[k % self.ahead].take() {
                return c;
            }
            if let Some((j, buf)) = self.claim(&mut st) {
                drop(st);
                let chunk = job.run(j, None, walker, buf, true);
                if j == k {
                    let release = self.dissected(&mut self.lock(), k);
                    if let Some(g) = release {
                        job.release_group(g);
                    }
                    return chunk;
                }
                self.finished(j, chunk, job);
                st = self.lock();
                continue;
            }
            st = self.wait(st);
        }
    }

    /// Chunk `k` is analysed: its buffer goes back, and one more chunk may
    /// be taken.
    pub(super) fn consumed(&self, k: usize, packets: Packets) {
        let mut st = self.lock();
        st.consumed = k + 1;
        st.spare.push(packets);
        self.notify(st);
    }

    /// Chunks taken from now on are read in `walker`'s state.
    pub(super) fn publish(&self, walker: &Walker) {
        if let Walker::PcapNg(c) = walker {
            self.lock().published = Some((c.id(), Arc::new(c.section())));
        }
    }

    /// The workers stop taking chunks.
    pub(super) fn solo(&self) {
        let mut st = self.lock();
        st.solo = true;
        self.notify(st);
    }

    pub(super) fn stop(&self) {
        let mut st = self.lock();
        st.stop = true;
        self.notify(st);
    }
}
