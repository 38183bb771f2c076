//! The group-commit queue: writers line up, the one at the front leads.
//!
//! A writer joins the queue and waits until either a leader has committed its write (its
//! result is posted) or it is at the front with no leader active: then it leads. It spins
//! for [`SPIN_BEFORE_SLEEP`] before it sleeps (as RocksDB's writers spin and yield before
//! they block): a group commits in tens of microseconds, while a writer that sleeps must be
//! woken, and on a busy machine a woken thread may wait milliseconds for a core. The
//! leader takes the writes behind it as one group ([`WriteQueue::take_group`]), commits
//! them (`write.rs`), posts each one's result and passes the lead on
//! ([`WriteQueue::finish`]). Work that must see no write in flight (a flush's memtable
//! switch, a keyspace's creation, a checkpoint's moment, resuming) takes the lead without
//! a write of its own ([`WriteQueue::with_lead`]).

use super::batch::WriteBatch;
use super::pacer::Pacing;
use crate::error::{Error, Result};
use crate::key::SeqNo;
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A group stops growing past this many bytes, so one slow leader does not carry the world.
pub(crate) const MAX_GROUP_BYTES: usize = 1 << 20;

/// How long a writer waiting on the leader spins before it sleeps: longer than a group of
/// small writes takes to commit, short against the milliseconds a sleeping writer may wait
/// for a core once woken when other work holds both cores.
pub(crate) const SPIN_BEFORE_SLEEP: Duration = Duration::from_micros(50);

/// One write waiting in the queue.
pub(crate) struct QueuedWrite {
    pub id: u64,
    pub batch: WriteBatch,
    pub sync: bool,
    pub disable_wal: bool,
    /// A transaction's commit: what the leader checks before the write goes in.
    pub check: Option<CommitCheck>,
}

/// What a transaction's commit asks the leader to check: no key it read for update or wrote
/// has a version (or a range tombstone over it) newer than its snapshot. Plain writes carry
/// none, and cost the leader nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct CommitCheck {
    /// The sequence number the transaction read at.
    pub snapshot: SeqNo,
    /// The keys to check: (keyspace id, key), sorted.
    pub keys: Vec<(u32, Vec<u8>)>,
}

/// What the queue holds, under its lock.
#[derive(Default)]
struct QueueState {
    next_id: u64,
    waiting: VecDeque<QueuedWrite>,
    /// Results posted by a leader for the writes of its group, by write id.
    done: HashMap<u64, Result<()>>,
    leader_active: bool,
    /// The leader is waiting out a stall or a memtable switch: a write that must not wait
    /// (`no_slowdown`) is refused rather than queued behind it, and no writer spins.
    stalled: bool,
    /// How many times a writer went to sleep on the queue (a spin that ended in time
    /// does not count).
    sleeps: u64,
}

/// What a writer that joined the queue is to do.
pub(crate) enum Turn {
    /// A leader committed the write (or failed it): its result.
    Done(Result<()>),
    /// Lead: the write is at the front. `pending` is the size of the writes waiting (the
    /// most one group takes), which the leader makes room for.
    Lead { id: u64, pending: usize },
}

/// The group-commit queue, and the pacing of its leader under a write slowdown.
#[derive(Default)]
pub(crate) struct WriteQueue {
    state: Mutex<QueueState>,
    cv: Condvar,
    /// Counts the leaders' hand-offs (results posted, lead given up), changed under the
    /// lock: what a spinning writer watches without taking it.
    handoffs: AtomicU64,
    /// Paces the write leader under a slowdown (only the leader uses it).
    pub pacer: Pacing,
}

impl WriteQueue {
    /// Queue a write and sleep until it is done or this thread leads.
    #[cfg(test)]
    pub(crate) fn join(&self, batch: WriteBatch, sync: bool, disable_wal: bool, check: Option<CommitCheck>) -> Turn {
        self.join_unless_stalled(batch, sync, disable_wal, check, false)
    }

    /// [`join`](Self::join); with `no_slowdown`, refused at once with
    /// [`Error::WouldBlock`] while the leader waits out a stall (nothing is queued then).
    pub(crate) fn join_unless_stalled(
        &self,
        batch: WriteBatch,
        sync: bool,
        disable_wal: bool,
        check: Option<CommitCheck>,
        no_slowdown: bool,
    ) -> Turn {
        let mut q = self.state.lock();
        if no_slowdown && q.stalled {
            return Turn::Done(Err(Error::WouldBlock("the writes ahead are stalled")));
        }
        let id = q.next_id;
        q.next_id += 1;
        q.waiting.push_back(QueuedWrite { id, batch, sync, disable_wal, check });
        let mut spun = false;
        loop {
            if let Some(r) = q.done.remove(&id) {
                return Turn::Done(r);
            }
            if !q.leader_active && q.waiting.front().is_some_and(|w| w.id == id) {
                q.leader_active = true;
                let pending = q.waiting.iter().map(|w| w.batch.approximate_size()).sum::<usize>();
                return Turn::Lead { id, pending: pending.min(MAX_GROUP_BYTES) };
            }
            // Spin once per hand-off, unlocked, unless the leader waits out a stall: the
            // checks above run again under the lock either way, so a hand-off made while
            // spinning is never missed, and one made after is followed by a notify.
            if !spun && !q.stalled && spinning_pays() {
                spun = true;
                let seen = self.handoffs.load(Ordering::Acquire);
                MutexGuard::unlocked(&mut q, || spin_until_changed(&self.handoffs, seen, SPIN_BEFORE_SLEEP));
                continue;
            }
            q.sleeps += 1;
            self.cv.wait(&mut q);
            spun = false;
        }
    }

    /// The leader's group: its own write (at the front) and the writes behind it, up to
    /// [`MAX_GROUP_BYTES`]; writes that skip the WAL are not grouped with writes that use
    /// it.
    pub(crate) fn take_group(&self) -> Vec<QueuedWrite> {
        take_group(&mut self.state.lock().waiting)
    }

    /// The leader gives up before taking a group (it could not make room): its own write
    /// leaves the queue, and the lead passes on.
    pub(crate) fn abandon_lead(&self) {
        let mut q = self.state.lock();
        q.waiting.pop_front();
        q.leader_active = false;
        self.handoffs.fetch_add(1, Ordering::Release);
        self.cv.notify_all();
    }

    /// The leader starts (`true`) or ends waiting out a stall.
    pub(crate) fn set_stalled(&self, stalled: bool) {
        self.state.lock().stalled = stalled;
    }

    /// Post the results of the leader's group (by write id) and pass the lead on.
    pub(crate) fn finish(&self, results: impl IntoIterator<Item = (u64, Result<()>)>) {
        let mut q = self.state.lock();
        q.done.extend(results);
        q.leader_active = false;
        self.handoffs.fetch_add(1, Ordering::Release);
        self.cv.notify_all();
    }

    /// Run `f` as the leader, with no write of its own: no write is in flight meanwhile.
    pub(crate) fn with_lead<T>(&self, f: impl FnOnce() -> T) -> T {
        let mut q = self.state.lock();
        while q.leader_active {
            self.cv.wait(&mut q);
        }
        q.leader_active = true;
        drop(q);
        let r = f();
        self.finish([]);
        r
    }

    /// Wait until no leader is active (the write group in flight, if any, is done).
    pub(crate) fn wait_idle(&self) {
        let mut q = self.state.lock();
        while q.leader_active {
            self.cv.wait(&mut q);
        }
    }
}

/// Whether a waiting writer should spin: not with one core, where it would only keep the
/// leader from running.
fn spinning_pays() -> bool {
    static MANY_CORES: OnceLock<bool> = OnceLock::new();
    *MANY_CORES.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
}

/// Spin until `counter` is no longer `seen` (true) or `budget` has passed (false).
fn spin_until_changed(counter: &AtomicU64, seen: u64, budget: Duration) -> bool {
    let start = Instant::now();
    loop {
        // The clock is read once per 64 looks: a look costs a few nanoseconds.
        for _ in 0..64 {
            if counter.load(Ordering::Acquire) != seen {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= budget {
            return false;
        }
    }
}

/// Take the front write and the writes behind it, up to a size limit; writes that skip
/// the WAL are not grouped with writes that use it.
fn take_group(waiting: &mut VecDeque<QueuedWrite>) -> Vec<QueuedWrite> {
    let mut group: Vec<QueuedWrite> = Vec::new();
    let mut bytes = 0;
    while let Some(w) = waiting.front() {
        if let Some(first) = group.first() {
            if bytes + w.batch.approximate_size() > MAX_GROUP_BYTES || w.disable_wal != first.disable_wal {
                break;
            }
        }
        bytes += w.batch.approximate_size();
        if let Some(w) = waiting.pop_front() {
            group.push(w);
        }
    }
    group
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn batch_of(bytes: usize) -> WriteBatch {
        let mut b = WriteBatch::new();
        b.put(b"k", vec![0u8; bytes]);
        b
    }

    fn queued(id: u64, bytes: usize, disable_wal: bool) -> QueuedWrite {
        QueuedWrite { id, batch: batch_of(bytes), sync: false, disable_wal, check: None }
    }

    #[test]
    fn a_group_stops_at_its_size_and_at_a_change_of_wal_use() {
        let mut waiting: VecDeque<_> =
            [queued(0, 10, false), queued(1, 10, false), queued(2, 10, true), queued(3, 10, true)].into();
        let ids = |g: Vec<QueuedWrite>| g.iter().map(|w| w.id).collect::<Vec<_>>();
        assert_eq!(ids(take_group(&mut waiting)), [0, 1]);
        assert_eq!(ids(take_group(&mut waiting)), [2, 3]);
        assert!(take_group(&mut waiting).is_empty());

        // Half the limit each: the third would pass it. A write over the limit on its own
        // still goes, alone.
        let half = MAX_GROUP_BYTES / 2;
        let mut waiting: VecDeque<_> =
            [queued(0, half, false), queued(1, 100, false), queued(2, half, false), queued(3, 2 * half, false)].into();
        assert_eq!(ids(take_group(&mut waiting)), [0, 1]);
        assert_eq!(ids(take_group(&mut waiting)), [2]);
        assert_eq!(ids(take_group(&mut waiting)), [3]);
    }

    #[test]
    fn a_write_that_must_not_wait_is_refused_while_the_leader_is_stalled_and_queued_otherwise() {
        let queue = WriteQueue::default();
        queue.set_stalled(true);
        match queue.join_unless_stalled(batch_of(1), false, false, None, true) {
            Turn::Done(Err(e)) => assert!(e.is_would_block(), "{e}"),
            _ => panic!("refused at once"),
        }
        assert!(queue.state.lock().waiting.is_empty(), "nothing of it was queued");
        queue.set_stalled(false);
        assert!(matches!(queue.join_unless_stalled(batch_of(1), false, false, None, true), Turn::Lead { .. }));
    }

    #[test]
    fn the_leader_commits_for_the_writer_behind_it() {
        let queue = Arc::new(WriteQueue::default());
        let Turn::Lead { id: leader, .. } = queue.join(batch_of(1), false, false, None) else {
            panic!("the first writer leads")
        };
        let behind = {
            let queue = queue.clone();
            std::thread::spawn(move || match queue.join(batch_of(1), false, false, None) {
                Turn::Done(r) => r.is_ok(),
                Turn::Lead { .. } => false,
            })
        };
        // Wait until the second write is queued behind the leader's.
        while queue.state.lock().waiting.len() < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let group = queue.take_group();
        assert_eq!(group.len(), 2);
        assert_eq!(group[0].id, leader);
        queue.finish(group.iter().filter(|w| w.id != leader).map(|w| (w.id, Ok(()))).collect::<Vec<_>>());
        assert!(behind.join().unwrap(), "the second writer got the leader's result, and did not lead");
        assert!(queue.state.lock().done.is_empty() && !queue.state.lock().leader_active);
    }

    #[test]
    fn a_writer_whose_group_commits_while_it_spins_does_not_sleep() {
        if !spinning_pays() {
            return;
        }
        // The leader commits the moment the second write is queued, well inside the
        // spin; a round where the writer behind was descheduled meanwhile may still
        // sleep, so one round without a sleep out of many is what is asked.
        for _ in 0..50 {
            let queue = Arc::new(WriteQueue::default());
            let Turn::Lead { id: leader, .. } = queue.join(batch_of(1), false, false, None) else {
                panic!("the first writer leads")
            };
            let behind = {
                let queue = queue.clone();
                std::thread::spawn(move || matches!(queue.join(batch_of(1), false, false, None), Turn::Done(Ok(()))))
            };
            while queue.state.lock().waiting.len() < 2 {
                std::hint::spin_loop();
            }
            let group = queue.take_group();
            queue.finish(group.iter().filter(|w| w.id != leader).map(|w| (w.id, Ok(()))).collect::<Vec<_>>());
            assert!(behind.join().unwrap(), "the writer behind got the leader's result");
            if queue.state.lock().sleeps == 0 {
                return;
            }
        }
        panic!("the writer behind the leader slept in every round");
    }

    #[test]
    fn work_under_the_lead_waits_for_the_leader_and_excludes_writers() {
        let queue = Arc::new(WriteQueue::default());
        let Turn::Lead { .. } = queue.join(batch_of(1), false, false, None) else { panic!("the first writer leads") };
        let under_lead = {
            let queue = queue.clone();
            std::thread::spawn(move || queue.with_lead(|| queue.state.lock().leader_active))
        };
        std::thread::sleep(Duration::from_millis(20));
        assert!(!under_lead.is_finished(), "it waits for the active leader");
        drop(queue.take_group());
        queue.finish([]);
        assert!(under_lead.join().unwrap(), "it ran as the leader");
        // The lead was handed back: the next writer leads at once.
        assert!(matches!(queue.join(batch_of(1), false, false, None), Turn::Lead { .. }));
        queue.abandon_lead();
        queue.wait_idle();
        assert!(queue.state.lock().waiting.is_empty());
    }
}
