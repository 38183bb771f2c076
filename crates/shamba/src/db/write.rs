//! The write path: group commit into the WAL, then the memtable; memtable switches and
//! write stalls.
//!
//! Writers queue up; the one at the front leads: it makes room (switching the memtable or
//! waiting out a stall), takes the writes queued behind it as one group, appends them to
//! the WAL as one record (synced if any of them asked), applies them to the memtable, and
//! publishes their sequence numbers. The others sleep until their result is posted.

use super::batch::WriteBatch;
use super::delay_rate::{Causes, Pressure, RateBounds};
use super::inner::DbInner;
use super::live_wal::wal_path;
use super::super_version::SuperVersion;
use super::tree::Tree;
use super::write_queue::{CommitCheck, QueuedWrite, Turn};
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::stats::DbCounters;
use crate::wal::LogWriter;
use std::sync::Arc;
use std::time::{Duration, Instant};

impl DbInner {
    fn check_batch(&self, batch: &WriteBatch) -> Result<()> {
        if batch.largest_key() > self.opts.max_key_size {
            return Err(Error::InvalidArgument(format!(
                "key of {} bytes exceeds max_key_size ({})",
                batch.largest_key(),
                self.opts.max_key_size
            )));
        }
        if batch.largest_value() > self.opts.max_value_size {
            return Err(Error::InvalidArgument(format!(
                "value of {} bytes exceeds max_value_size ({})",
                batch.largest_value(),
                self.opts.max_value_size
            )));
        }
        self.trees.check_named(batch.keyspaces(), self.number, &self.dir)
    }

    /// Apply `batch` atomically.
    pub(crate) fn write(&self, batch: WriteBatch, wo: &WriteOptions) -> Result<()> {
        self.write_checked(batch, wo, None)
    }

    /// Apply `batch` atomically, after `check` (a transaction's commit) passes under the
    /// lead: refused whole with [`Error::Conflict`] when it does not.
    pub(crate) fn write_checked(
        &self,
        mut batch: WriteBatch,
        wo: &WriteOptions,
        check: Option<CommitCheck>,
    ) -> Result<()> {
        self.check_writable()?;
        self.check_batch(&batch)?;
        if batch.is_empty() {
            return Ok(());
        }
        // A time to live counts from the write, by the database's clock; the batch is logged
        // with deadlines, so a replay expires each entry when the first write said.
        if batch.has_ttls() {
            batch.stamp_deadlines(crate::expiry::now_millis(&*self.opts.clock));
        }
        let (id, pending) = match self.queue.join_unless_stalled(batch, wo.sync, wo.disable_wal, check, wo.no_slowdown)
        {
            Turn::Done(result) => return result,
            Turn::Lead { id, pending } => (id, pending),
        };

        // This thread leads. Nobody else touches the WAL or switches memtables until it
        // passes the lead on.
        let mut unwinding = LeadOnUnwind { db: self, group: Vec::new() };
        if let Err(e) = self.make_room(false, pending, wo.no_slowdown) {
            self.queue.abandon_lead();
            std::mem::forget(unwinding);
            return Err(e);
        }
        let mut group = self.queue.take_group();
        unwinding.group = group.iter().map(|w| w.id).filter(|&w| w != id).collect();

        // The keyspaces are checked again under the lead, where none is dropped: a write
        // naming one dropped since it was queued is refused whole, not applied in part.
        let mut refused: Vec<(u64, Result<()>)> = Vec::new();
        if group.iter().any(|w| !w.batch.keyspaces().is_empty()) {
            group.retain(|w| match self.trees.check_named(w.batch.keyspaces(), self.number, &self.dir) {
                Ok(()) => true,
                Err(e) => {
                    refused.push((w.id, Err(e)));
                    false
                }
            });
        }
        // Transactions are checked in the group's order, each against the memtables and the
        // writes ahead of it in the group; a plain group skips this.
        if group.iter().any(|w| w.check.is_some()) {
            self.check_commits(&mut group, &mut refused);
        }
        let result = if group.is_empty() { Ok(()) } else { self.commit_group(&mut group) };
        let own_refused = refused.iter().position(|(w, _)| *w == id).map(|at| refused.swap_remove(at).1);
        // Every write of the group gets the group's outcome, an error with its kind (as
        // LevelDB copies the leader's `Status` to each writer of the group).
        let others = group.iter().filter(|w| w.id != id);
        self.queue.finish(
            refused.into_iter().chain(others.map(|w| (w.id, result.as_ref().map(|_| ()).map_err(Error::duplicate)))),
        );
        std::mem::forget(unwinding);
        own_refused.unwrap_or(result)
    }

    /// Log and apply a group; on a WAL failure the database turns read-only, since the log
    /// may now hold a partial record that later records must not follow.
    fn commit_group(&self, group: &mut [QueuedWrite]) -> Result<()> {
        let first = self.visible_seq() + 1;
        let sync = group.iter().any(|w| w.sync);
        let use_wal = !group.iter().all(|w| w.disable_wal);
        let mut merged;
        let batch = match group {
            [single] => &mut single.batch,
            _ => {
                merged = WriteBatch::new();
                for w in group.iter() {
                    merged.append(&w.batch);
                }
                &mut merged
            }
        };
        let count = batch.len() as u64;
        let record = batch.encode_with_seq(first);
        if use_wal {
            // A synced record must not outlive the unsynced ones acknowledged before it:
            // the retired logs, and the new logs' directory entries, are synced first.
            if sync {
                if let Err(e) = self.wal.sync_earlier(&*self.storage, &self.dir) {
                    self.bg.set_error(e.duplicate());
                    return Err(e);
                }
            }
            if let Err(e) = self.wal.append(record, sync) {
                self.bg.set_error(e.duplicate());
                // The record may be in the log, whole or torn: its sequence numbers are
                // never handed out again (writes may resume on a fresh log).
                self.seq.skip_past(first + count - 1);
                return Err(e);
            }
            DbCounters::add(&self.counters.wal_bytes, record.len() as u64);
            if sync {
                DbCounters::add(&self.counters.wal_syncs, 1);
            }
        }
        // Each keyspace's memtable, taken once per group (no switch happens meanwhile: this
        // thread leads). Every keyspace was checked under the lead, so each is live; one
        // that were not would be skipped (replay skips a dropped keyspace's records too).
        // The default keyspace's apart: most groups write only to it, and need no list.
        let mut default_sv: Option<Arc<SuperVersion>> = None;
        let mut others: Vec<(u32, Option<Arc<SuperVersion>>)> = Vec::new();
        for (i, op) in batch.ops().enumerate() {
            // The batch was encoded here and its size checked: one that does not decode is a bug.
            let (keyspace, op) = op.map_err(|e| Error::internal(format!("a write batch does not decode: {e}")))?;
            let sv = if keyspace == self.default.id {
                Some(&**default_sv.get_or_insert_with(|| self.default.super_version()))
            } else {
                let at = match others.iter().position(|(id, _)| *id == keyspace) {
                    Some(at) => at,
                    None => {
                        others.push((keyspace, self.trees.get(keyspace).map(|t| t.super_version())));
                        others.len() - 1
                    }
                };
                others.get(at).and_then(|(_, sv)| sv.as_deref())
            };
            if let Some(sv) = sv {
                op.insert_into(&sv.mem, first + i as u64);
            }
        }
        self.seq.publish(first + count - 1);
        DbCounters::add(&self.counters.write_ops, count);
        DbCounters::add(&self.counters.write_groups, 1);
        Ok(())
    }

    /// Make sure the memtable has room, switching it (and the WAL) when full; delay or stop
    /// the writer when flushes or compactions fall behind. Called by the leader only.
    /// `bytes` is the size of the write about to go in: a slowed-down writer waits for it at
    /// the delayed write rate.
    pub(crate) fn make_room_for_write(&self, force: bool, bytes: usize) -> Result<()> {
        self.make_room(force, bytes, false)
    }

    /// [`make_room_for_write`](Self::make_room_for_write); with `no_slowdown`, a write
    /// that would be delayed, stopped or would switch the memtable fails with
    /// [`Error::WouldBlock`] instead (the leader then abandons the lead, its write undone).
    /// While the leader waits, writes that must not wait are refused as they join.
    fn make_room(&self, force: bool, bytes: usize, no_slowdown: bool) -> Result<()> {
        let would_block = |why| if no_slowdown { Err(Error::WouldBlock(why)) } else { Ok(()) };
        let stalled = StallMark { queue: &self.queue, marked: std::cell::Cell::new(false) };
        let bounds = self.rate_bounds();
        let mut delayed = false;
        let mut stopped = false;
        loop {
            self.check_writable()?;
            let load = self.trees.with_live(WriteLoad::of);
            let o = &self.opts;
            // The last memtable slot before the stop is taken: slow down while the
            // memtable fills, so that the flush under way may finish before it is full.
            let causes = Causes {
                memtables: load.pressure.memtables_waiting >= o.max_immutable_memtables,
                l0: load.pressure.l0_runs >= o.level0_slowdown_trigger,
                debt: load.pressure.debt >= o.pending_compaction_slowdown_bytes,
            };
            if causes.any() {
                // Slow down: pace writes at the delayed rate (see `pacer`, `delay_rate`), so
                // flushes and compactions gain ground without stopping any writer for long.
                if !delayed {
                    delayed = true;
                    let t = Instant::now();
                    let wait = self.queue.pacer.delay(bytes, t, load.pressure, causes, bounds);
                    if !wait.is_zero() {
                        would_block("writes are being slowed down")?;
                        stalled.mark();
                        std::thread::sleep(wait);
                        let slept = t.elapsed().as_micros() as u64;
                        DbCounters::add(&self.counters.delayed_micros, slept);
                        if causes.memtables {
                            DbCounters::add(&self.counters.delayed_for_flush_micros, slept);
                        }
                        continue;
                    }
                }
            } else {
                self.queue.pacer.reset(bounds);
            }
            if load.all_empty || (!force && load.memtable_bytes < o.write_buffer_size) {
                return Ok(());
            }
            let for_flush = load.pressure.memtables_waiting >= o.max_immutable_memtables;
            if for_flush
                || load.pressure.l0_runs >= o.level0_stop_trigger
                || load.pressure.debt >= o.pending_compaction_stop_bytes
            {
                would_block("writes are stopped until a flush or compaction catches up")?;
                stalled.mark();
                let t = Instant::now();
                // The slowdown did not hold the load back: pace lower once writes resume.
                if !stopped {
                    stopped = true;
                    self.queue.pacer.stopped(t, bounds);
                }
                self.bg.wake_and_wait(Duration::from_millis(50))?;
                let waited = if for_flush {
                    &self.counters.stopped_for_flush_micros
                } else {
                    &self.counters.stopped_for_compaction_micros
                };
                DbCounters::add(waited, t.elapsed().as_micros() as u64);
                continue;
            }
            would_block("the memtable is full and must be switched")?;
            stalled.mark();
            self.switch_memtable(false)?;
            return Ok(());
        }
    }

    /// The bounds of the delayed write rate, from the options.
    pub(super) fn rate_bounds(&self) -> RateBounds {
        RateBounds { ceiling: self.opts.delayed_write_rate, floor: self.opts.min_delayed_write_rate }
    }

    /// Freeze every keyspace's memtable that holds anything, start a new WAL and a new
    /// memtable for every keyspace, and wake the flush thread. The memtables switch
    /// together (as RocksDB's `atomic_flush`): one WAL backs the memtables of every
    /// keyspace, and a keyspace's memtable never spans two WALs. Nothing is synced here (a
    /// writer that did not ask for a sync never waits for one): the old log joins the
    /// retired ones (`LiveWal::replace`), which the next synced write syncs first, and the
    /// new log's directory entry is synced by that write too (or by a flush). The old log
    /// is abandoned instead when `abandon_old_log` (resuming after a failed write: what it
    /// holds past its last good record was never acknowledged). A failure to create the
    /// new log stops writes, as a failed WAL write does.
    pub(super) fn switch_memtable(&self, abandon_old_log: bool) -> Result<()> {
        // Taken without the versions lock, which a flush holds across a manifest sync.
        let number = self.file_numbers.take();
        let file =
            self.storage.create(&wal_path(&self.dir, number)).inspect_err(|e| self.bg.set_error(e.duplicate()))?;
        {
            let trees = self.trees.all();
            let guards: Vec<_> = trees.iter().map(|t| t.sv.write()).collect();
            self.wal.replace(LogWriter::new(file), number, abandon_old_log);
            for (tree, sv) in trees.iter().zip(guards) {
                let mut imm = Vec::with_capacity(sv.imm.len() + 1);
                if !sv.mem.is_empty() {
                    imm.push(sv.mem.clone());
                }
                imm.extend(sv.imm.iter().cloned());
                // Under the lead no write is in flight: the visible number is the last
                // write the old memtable took. An empty one passes its floor on, so a
                // keyspace nobody wrote keeps the history a commit checks.
                let floor = if sv.mem.is_empty() { sv.mem.floor() } else { self.visible_seq() };
                let mem = Arc::new(MemTable::after(number, floor));
                let next = SuperVersion::new(mem, imm, sv.version.clone(), Some(&*sv), &tree.opts);
                sv.install(next);
            }
        }
        self.bg.wake();
        Ok(())
    }
}

/// The leader's mark that it waits (`WriteQueue::set_stalled`), set on the first wait
/// and cleared however `make_room` ends.
struct StallMark<'a> {
    queue: &'a super::write_queue::WriteQueue,
    marked: std::cell::Cell<bool>,
}

impl StallMark<'_> {
    fn mark(&self) {
        if !self.marked.replace(true) {
            self.queue.set_stalled(true);
        }
    }
}

impl Drop for StallMark<'_> {
    fn drop(&mut self) {
        if self.marked.get() {
            self.queue.set_stalled(false);
        }
    }
}

/// What decides whether a write waits, summed or maxed over the keyspaces: they share one
/// memtable budget (`write_buffer_size`), and the most loaded tree paces every writer.
struct WriteLoad {
    memtable_bytes: usize,
    all_empty: bool,
    pressure: Pressure,
}

impl WriteLoad {
    fn of(trees: &[Arc<Tree>]) -> WriteLoad {
        let mut load = WriteLoad { memtable_bytes: 0, all_empty: true, pressure: Pressure::default() };
        for tree in trees {
            let sv = tree.super_version();
            load.memtable_bytes += sv.mem.approximate_size();
            load.all_empty &= sv.mem.is_empty();
            let p = &mut load.pressure;
            p.memtables_waiting = p.memtables_waiting.max(sv.imm.len());
            p.l0_runs = p.l0_runs.max(sv.version.runs(0).len());
            p.debt = p.debt.max(sv.compaction_debt);
        }
        load
    }
}

impl DbInner {
    /// Make every write acknowledged so far durable: sync the retired WALs not synced yet
    /// (and the directory, if a log was created since its last sync), then the current
    /// one. A failure stops writes for good, as any failed sync.
    pub(crate) fn sync_wal(&self) -> Result<()> {
        self.check_open()?;
        // A sync is never retried after one failed: a success would not bring back what
        // the failed one lost.
        if self.storage.failed() {
            self.check_writable()?;
        }
        self.wal.sync_earlier(&*self.storage, &self.dir).inspect_err(|e| self.bg.set_error(e.duplicate()))?;
        match self.wal.sync_unless_broken() {
            // Nothing acknowledged follows its last good record, which a sync would not fix.
            None => self.check_writable(),
            Some(synced) => {
                synced.inspect_err(|e| self.bg.set_error(e.duplicate()))?;
                DbCounters::add(&self.counters.wal_syncs, 1);
                Ok(())
            }
        }
    }
}

/// Gives up the write lead if the leader panics (a bug: the engine returns errors, it does
/// not panic), so the writers queued behind it and `close` do not wait forever. Forgotten
/// on the normal path, which hands the lead on itself.
struct LeadOnUnwind<'a> {
    db: &'a DbInner,
    /// The other writes of the leader's group, once taken: they are told it failed.
    group: Vec<u64>,
}

impl Drop for LeadOnUnwind<'_> {
    fn drop(&mut self) {
        let failed = || Error::internal("the write group's leader panicked");
        self.db.bg.set_error(failed());
        self.db.queue.finish(self.group.iter().map(|&id| (id, Err(failed()))));
    }
}
