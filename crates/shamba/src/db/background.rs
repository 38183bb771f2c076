//! Background work: one thread flushes frozen memtables, one runs compactions, and one
//! deletes the files their work made obsolete, so that neither of the first two waits on
//! unlinks (an unlink waits for the file system's journal, busy with the jobs' syncs).
//! Readers never wait for any of them.

use super::file_book::{obsolete_files, Obsolete};
use super::inner::DbInner;
use super::super_version::SuperVersion;
use super::tree::Tree;
use crate::compaction::job::{flush_to_table, output_compression, run_compaction, JobEnv, Snapshots};
use crate::compaction::{collectable_range_dels, picker, Compaction, CompactionChoice, OutputRun, LEVELED_RUN};
use crate::error::Result;
use crate::io::Storage;
use crate::manager::{inherit, Estimate};
use crate::memtable::MemTable;
use crate::stats::DbCounters;
use crate::table::table_path;
use crate::version::{FileMeta, VersionEdit};
use std::sync::Arc;
use std::time::Duration;

/// How long an idle background thread sleeps before looking for work again (it is also
/// woken whenever work arrives).
const IDLE_WAIT: Duration = Duration::from_millis(200);

impl DbInner {
    /// The flush thread: write the oldest frozen memtable of any keyspace to L0 until none
    /// is left.
    pub(crate) fn flush_loop(self: &Arc<Self>) {
        while !self.bg.shutting_down() {
            let flushing = self.bg.flushing.lock();
            let Some((tree, mem)) = self.oldest_frozen() else {
                drop(flushing);
                self.bg.idle(IDLE_WAIT);
                continue;
            };
            if self.bg.failed() || !self.opts.background_flushes() {
                drop(flushing);
                self.bg.idle(IDLE_WAIT);
                continue;
            }
            let floor = self.versions.lock().log_number();
            match self.flush_memtable(&tree, &mem) {
                // A flush makes nothing obsolete but logs no keyspace needs any more: a
                // pass only once the oldest needed log moves (not after a keyspace's flush
                // while another's memtable still holds the log). Asked before `flushing`
                // is let go, so a `flush` waiting on this one finds the request
                // (`settle_obsolete_files`).
                Ok(()) if self.versions.lock().log_number() > floor => self.bg.purge.request(),
                Ok(()) => {}
                Err(e) => self.bg.set_error(e),
            }
            drop(flushing);
            self.bg.wake();
        }
    }

    /// The purge thread: an obsolete-file pass each time a background flush or compaction
    /// asks for one (requests made during a pass are one more pass after it).
    pub(crate) fn purge_loop(self: &Arc<Self>) {
        while let Some(_turn) = self.bg.purge.next() {
            self.delete_obsolete_files();
        }
    }

    /// Before a call that promises settled files returns: wait for the purge thread's pass
    /// in flight, then run the pass still requested, if any (or `anyway`, when the caller's
    /// own work made files obsolete).
    pub(crate) fn settle_obsolete_files(&self, anyway: bool) {
        if let Some(_turn) = self.bg.purge.settle(anyway) {
            self.delete_obsolete_files();
        }
    }

    /// The frozen memtable with the oldest WAL, over every keyspace, and its tree (the
    /// caller holds `flushing`, so a tree found here is not dropped before its flush).
    pub(crate) fn oldest_frozen(&self) -> Option<(Arc<Tree>, Arc<MemTable>)> {
        self.trees
            .all()
            .into_iter()
            .filter_map(|t| {
                let mem = t.super_version().imm.last().cloned()?;
                Some((t, mem))
            })
            .min_by_key(|(_, m)| m.wal_number())
    }

    /// Record, for each keyspace with no frozen memtable, that the WALs before its live
    /// memtable's hold nothing it needs: a keyspace that takes no writes must not keep old
    /// WALs alive. One manifest edit per keyspace whose floor moves. Called holding
    /// `flushing`.
    fn advance_idle_log_numbers(&self) -> Result<()> {
        for tree in self.trees.all() {
            let sv = tree.super_version();
            if !sv.imm.is_empty() {
                continue;
            }
            let mut versions = self.versions.lock();
            let floor = sv.mem.wal_number();
            if versions.keyspace_log_number(tree.id).is_some_and(|n| n < floor) {
                versions.log_and_apply(VersionEdit {
                    keyspace: tree.id,
                    log_number: Some(floor),
                    ..VersionEdit::default()
                })?;
            }
        }
        Ok(())
    }

    /// The compaction thread: run picked compactions until none is needed.
    pub(crate) fn compaction_loop(self: &Arc<Self>) {
        let mut last_resume = None;
        while !self.bg.shutting_down() {
            if self.bg.failed() {
                // A full disk may get room back: the thread retries resuming by itself.
                let next = self.maybe_resume_by_itself(&mut last_resume);
                self.bg.idle_while_failed(next.min(IDLE_WAIT));
                continue;
            }
            last_resume = None;
            match self.maybe_compact() {
                Ok(true) => {
                    self.bg.purge.request();
                    self.bg.wake();
                }
                Ok(false) => self.bg.idle(IDLE_WAIT),
                Err(e) => self.bg.set_error(e),
            }
        }
    }

    /// Run one compaction if a level of some keyspace needs it (the keyspace whose level
    /// scores highest first); `Ok(false)` if none does. The caller has its inputs deleted
    /// (the compaction thread asks the purge thread; a caller that waits runs the pass).
    pub(crate) fn maybe_compact(&self) -> Result<bool> {
        let _running = self.bg.compaction.lock();
        let mut neediest: Option<(f64, Arc<Tree>, Arc<crate::version::Version>)> = None;
        for tree in self.trees.all() {
            let Some(version) = self.versions.lock().current(tree.id) else { continue };
            let score = picker::level_scores(&version, &tree.opts).into_iter().fold(0.0, f64::max);
            if score >= 1.0 && neediest.as_ref().is_none_or(|(best, _, _)| score > *best) {
                neediest = Some((score, tree, version));
            }
        }
        let Some((_, tree, version)) = neediest else { return Ok(false) };
        let picked = picker::pick(&version, &tree.opts, &mut tree.cursors.lock());
        let Some(c) = picked else { return Ok(false) };
        self.run(&tree, &c, &version)?;
        Ok(true)
    }

    /// Compact every file of `trees` into one run of their deepest level, after flushing
    /// memtables.
    pub(crate) fn compact_all(&self, trees: &[Arc<Tree>]) -> Result<()> {
        self.flush_all()?;
        let _running = self.bg.compaction.lock();
        for tree in trees {
            let Some(version) = self.versions.lock().current(tree.id) else { continue };
            if let Some(c) = picker::pick_full(&version, &tree.opts) {
                // A failure stops writes as a background compaction's does (a damaged table
                // must not be written over); the caller gets the error itself.
                self.run(tree, &c, &version).inspect_err(|e| self.bg.set_error(e.duplicate()))?;
            }
            // The inputs are dead once no version holds them: let go of the compacted one.
            drop(version);
            self.delete_obsolete_files();
        }
        Ok(())
    }

    /// Flush, then merge every file of `level` of the default keyspace with what it
    /// overlaps in the next level (`picker::pick_level`), in the calling thread.
    #[cfg(feature = "lab")]
    pub(crate) fn compact_level(&self, level: usize) -> Result<()> {
        if level + 1 >= self.opts.num_levels {
            return Err(crate::Error::InvalidArgument(format!(
                "compact_level: level {level} has no level below it (num_levels is {})",
                self.opts.num_levels
            )));
        }
        self.flush_all()?;
        let _running = self.bg.compaction.lock();
        let tree = &self.default;
        let current = || self.versions.lock().current(tree.id).ok_or_else(|| tree.dropped_error());
        // Each step takes at least one file out of the level: as many steps as it holds
        // files now, so that flushes arriving meanwhile cannot keep the loop going.
        let steps = current()?.runs(level).iter().map(|r| r.files.len()).sum::<usize>();
        for _ in 0..steps {
            let version = current()?;
            let Some(c) = picker::pick_level(&version, &tree.opts, level) else { break };
            self.run(tree, &c, &version).inspect_err(|e| self.bg.set_error(e.duplicate()))?;
            drop(version);
            self.delete_obsolete_files();
        }
        Ok(())
    }

    /// Freeze the memtable (if it holds anything) and wait until every frozen memtable is
    /// flushed.
    pub(crate) fn flush_all(&self) -> Result<()> {
        self.check_writable()?;
        self.queue.with_lead(|| self.make_room_for_write(true, 0))?;
        if !self.opts.background_flushes() {
            // Flushed here, as `resume` does; a failure stops writes as the flush thread's.
            let _flushing = self.bg.flushing.lock();
            while let Some((tree, mem)) = self.oldest_frozen() {
                self.check_writable()?;
                self.flush_memtable(&tree, &mem).inspect_err(|e| self.bg.set_error(e.duplicate()))?;
            }
            self.delete_obsolete_files();
            return Ok(());
        }
        loop {
            self.check_writable()?;
            if self.trees.all().iter().all(|t| t.super_version().imm.is_empty()) {
                // The last flush may still be installing its table: wait for it, then for
                // the files it made obsolete to be deleted, so a flush's work is done when
                // `flush` returns.
                drop(self.bg.flushing.lock());
                self.settle_obsolete_files(false);
                return Ok(());
            }
            // A close or a background error ends the wait at the next check.
            let _ = self.bg.wake_and_wait(Duration::from_millis(20));
        }
    }

    fn job_env<'a>(&'a self, tree: &'a Tree, new_file_number: &'a (dyn Fn() -> u64 + Sync)) -> JobEnv<'a> {
        JobEnv { storage: &*self.storage, dir: &self.dir, opts: &tree.opts, tables: &self.tables, new_file_number }
    }

    /// Write a frozen memtable of `tree` to an L0 file and install it; then let the
    /// keyspaces that hold nothing in old WALs say so. The caller holds `flushing`, and has
    /// the logs this frees deleted (the flush thread asks the purge thread; a caller that
    /// flushes in its own thread runs the pass once it is done).
    pub(crate) fn flush_memtable(&self, tree: &Tree, mem: &Arc<MemTable>) -> Result<()> {
        self.flush_one(tree, mem)?;
        self.advance_idle_log_numbers()
    }

    fn flush_one(&self, tree: &Tree, mem: &Arc<MemTable>) -> Result<()> {
        // The memtable's log and the older ones are synced before its table exists: the
        // table makes its writes durable, and they must not outlive unsynced writes
        // acknowledged before them (in another keyspace's memtable of the same log, say).
        // A memtable switch left them unsynced so that no writer waits for this.
        self.wal.sync_retired(mem.wal_number())?;
        let Some(version) = self.versions.lock().current(tree.id) else { return Ok(()) };
        let filter = tree.filter_for_level(&version, 0);
        let made = parking_lot::Mutex::new(Vec::new());
        let alloc = || {
            let n = self.new_output_number();
            made.lock().push(n);
            n
        };
        let written = flush_to_table(&self.job_env(tree, &alloc), mem, filter).and_then(|meta| {
            // The table's directory entry is durable before any manifest names it (and so
            // are the entries of the logs created before the sync began).
            let created = self.wal.created();
            self.storage.sync_dir(&self.dir)?;
            self.wal.dir_synced(created);
            Ok(meta)
        });
        let mut meta = match written {
            Ok(meta) => meta,
            Err(e) => {
                self.discard_outputs(&made.into_inner());
                return Err(e);
            }
        };
        if let Some(m) = meta.as_mut() {
            let tree_entries: u64 = Tree::entries_per_level(&version).iter().sum::<u64>() + m.entries;
            let hit_ratio = tree.sv.lookup_totals().table_hit_ratio();
            m.stats = Some(inherit::for_flush(m.entries, tree_entries, hit_ratio));
        }
        let mut edit = VersionEdit { keyspace: tree.id, range_dels: mem.range_dels(), ..VersionEdit::default() };
        if let Some(m) = &meta {
            DbCounters::add(&self.counters.flush_bytes, m.size);
            tree.level_io.flushed(m.size);
            edit.new_files.push((0, m.clone()));
        }
        {
            let mut versions = self.versions.lock();
            // The keyspace's WALs older than its oldest memtable still unflushed are no
            // longer needed.
            let sv = tree.super_version();
            let remaining =
                sv.imm.iter().rev().skip(1).map(|m| m.wal_number()).next().unwrap_or_else(|| sv.mem.wal_number());
            edit.log_number = Some(remaining);
            versions.set_last_sequence(self.visible_seq());
            // Decided against the version the edit applies to.
            let current = versions.current(tree.id).ok_or_else(|| tree.dropped_error())?;
            edit.dropped_range_dels = collectable_range_dels(&current, &current, &[], self.seq.oldest_readable());
            if let Err(e) = versions.log_and_apply(edit) {
                self.files.unsure(meta.iter().map(|m| m.number));
                return Err(e);
            }
            let current = versions.current(tree.id).ok_or_else(|| tree.dropped_error())?;
            let sv = tree.sv.write();
            let imm = sv.imm.iter().filter(|m| !Arc::ptr_eq(m, mem)).cloned().collect();
            let next = SuperVersion::new(sv.mem.clone(), imm, current, Some(&*sv), &tree.opts);
            sv.install(next);
        }
        self.files.written(meta.iter().map(|m| m.number));
        DbCounters::add(&self.counters.flushes, 1);
        Ok(())
    }

    /// Execute a picked compaction and install its result. The inputs are deleted once the
    /// caller has let go of `version`, which holds them: by the caller's own pass, or by
    /// the purge thread's when the compaction thread ran it.
    fn run(&self, tree: &Tree, c: &Compaction, version: &crate::version::Version) -> Result<()> {
        let mut edit = VersionEdit { keyspace: tree.id, ..VersionEdit::default() };
        for (level, f) in c.input_files() {
            edit.deleted_files.push((level, f.number));
        }
        let mut outputs: Vec<FileMeta> = Vec::new();
        // One oldest snapshot for the merge and for the tombstones it collects: the merge
        // dropped what the tombstones visible to it delete, no more.
        let smallest_snapshot = self.seq.oldest_readable();
        let newest_snapshot = self.seq.newest_pinned();
        match self.move_or_rewrite(tree, c, version) {
            CompactionChoice::Move => {
                for (_, f) in c.input_files() {
                    let mut moved = FileMeta::clone(f);
                    moved.run = LEVELED_RUN;
                    outputs.push(moved);
                }
                DbCounters::add(&self.counters.trivial_moves, 1);
                tree.level_io.moved(c);
            }
            CompactionChoice::Merge { output_run } => {
                let filter = tree.filter_for_level(version, c.output_level);
                let output_run = match output_run {
                    OutputRun::Existing(id) => id,
                    OutputRun::New => self.versions.lock().new_file_number(),
                };
                // Subcompactions number their outputs from their own threads.
                let made = parking_lot::Mutex::new(Vec::new());
                let alloc = || {
                    let n = self.new_output_number();
                    made.lock().push(n);
                    n
                };
                let merged = run_compaction(
                    &self.job_env(tree, &alloc),
                    c,
                    version,
                    Snapshots { oldest: smallest_snapshot, newest: newest_snapshot },
                    filter,
                    output_run,
                );
                // The outputs' directory entries are durable before any manifest names them.
                let merged = merged.and_then(|m| self.storage.sync_dir(&self.dir).map(|()| m));
                let (files, stats) = match merged {
                    Ok(merged) => merged,
                    Err(e) => {
                        // No manifest names these outputs yet: they are garbage now, not
                        // after the next open.
                        self.discard_outputs(&made.into_inner());
                        return Err(e);
                    }
                };
                DbCounters::add(&self.counters.compaction_bytes_read, c.input_bytes());
                DbCounters::add(&self.counters.compaction_bytes_written, stats.bytes_out);
                DbCounters::add(&self.counters.subcompactions, stats.side_ranges);
                tree.level_io.merged(c, stats.bytes_out);
                outputs = files;
                self.inherit_stats(tree, c, version, &mut outputs);
            }
        }
        for f in &outputs {
            edit.new_files.push((c.output_level, f.clone()));
        }
        // Inputs whose range tombstones the merge may collect (a move rewrites nothing).
        let merged_inputs: Option<Vec<u64>> = match c.choice {
            CompactionChoice::Merge { .. } => Some(c.input_files().map(|(_, f)| f.number).collect()),
            CompactionChoice::Move => None,
        };
        {
            let mut versions = self.versions.lock();
            if let Some(inputs) = &merged_inputs {
                // Decided against the version the edit applies to.
                let current = versions.current(tree.id).ok_or_else(|| tree.dropped_error())?;
                edit.dropped_range_dels = collectable_range_dels(version, &current, inputs, smallest_snapshot);
            }
            if let Err(e) = versions.log_and_apply(edit) {
                // A trivial move wrote nothing: its files stay named by the installed version.
                if matches!(c.choice, CompactionChoice::Merge { .. }) {
                    self.files.unsure(outputs.iter().map(|f| f.number));
                }
                return Err(e);
            }
            let current = versions.current(tree.id).ok_or_else(|| tree.dropped_error())?;
            let sv = tree.sv.write();
            let next = SuperVersion::new(sv.mem.clone(), sv.imm.clone(), current, Some(&*sv), &tree.opts);
            sv.install(next);
        }
        self.files.written(outputs.iter().map(|f| f.number));
        DbCounters::add(&self.counters.compactions, 1);
        Ok(())
    }

    /// The choice `c` made, except that a move whose file is not compressed as its new
    /// level's tables are is a rewrite (RocksDB's `InputCompressionMatchesOutput`): else a
    /// file would reach the bottom without its `bottommost_compression`, or leave it with.
    /// So is a move whose filter is not of its new level's family (the Ribbon+Bloom
    /// hybrid): else a file moved into an empty level keeps the Bloom filter it was built
    /// with above `ribbon_from_level`, and the long-lived bottom saves nothing.
    fn move_or_rewrite(&self, tree: &Tree, c: &Compaction, version: &crate::version::Version) -> CompactionChoice {
        if c.choice != CompactionChoice::Move {
            return c.choice;
        }
        let compression = output_compression(&tree.opts, version, c.output_level);
        // A table that cannot be opened is rewritten: the merge then reports why.
        let ribbon = tree.opts.filter_policy.is_ribbon_level(c.output_level);
        let matches = c.input_files().all(|(_, f)| {
            self.tables.reader(f.number).is_ok_and(|r| r.written_with(compression) && r.filter_family_is(ribbon))
        });
        if matches {
            CompactionChoice::Move
        } else {
            CompactionChoice::Merge { output_run: OutputRun::Existing(LEVELED_RUN) }
        }
    }

    /// Delete the tables a failed compaction wrote (numbers no version and no manifest
    /// names) and forget them as pending outputs. A file that cannot be deleted now is
    /// deleted by the next open.
    fn discard_outputs(&self, numbers: &[u64]) {
        self.tables.evict_all(numbers);
        for &n in numbers {
            let _ = self.storage.remove(&table_path(&self.dir, n));
        }
        self.files.written(numbers.iter().copied());
    }

    /// Give a compaction's outputs the statistics of the inputs they replace.
    fn inherit_stats(&self, tree: &Tree, c: &Compaction, version: &crate::version::Version, outputs: &mut [FileMeta]) {
        let estimates = |only_output_level: bool| -> Vec<Estimate> {
            c.input_files()
                .filter(|(level, _)| !only_output_level || *level == c.output_level)
                .filter_map(|(level, f)| tree.manager.current_estimate(f, level, version.levels[level].file_count()))
                .collect()
        };
        let mut inputs = estimates(true);
        if inputs.is_empty() {
            inputs = estimates(false);
        }
        let entries: Vec<u64> = outputs.iter().map(|f| f.entries).collect();
        for (f, prior) in outputs.iter_mut().zip(inherit::for_compaction(&inputs, &entries)) {
            f.stats = prior;
        }
    }

    /// Record every table's current statistics in the manifest, so a restart starts from
    /// them (each file is re-added with its record; deletes apply before adds).
    pub(crate) fn persist_file_stats(&self) -> Result<()> {
        for tree in self.trees.all() {
            self.persist_tree_file_stats(&tree)?;
        }
        Ok(())
    }

    fn persist_tree_file_stats(&self, tree: &Tree) -> Result<()> {
        let mut versions = self.versions.lock();
        let Some(version) = versions.current(tree.id) else { return Ok(()) };
        let mut edit = VersionEdit { keyspace: tree.id, ..VersionEdit::default() };
        for (level, l) in version.levels.iter().enumerate() {
            for f in l.runs.iter().flat_map(|r| r.files.iter()) {
                if let Some(e) = tree.manager.estimate_of(f.number, level, l.file_count()) {
                    let mut updated = FileMeta::clone(f);
                    updated.stats = Some(e.record());
                    edit.deleted_files.push((level, f.number));
                    edit.new_files.push((level, updated));
                }
            }
        }
        if edit.new_files.is_empty() {
            return Ok(());
        }
        versions.log_and_apply(edit)?;
        let current = versions.current(tree.id).ok_or_else(|| tree.dropped_error())?;
        let sv = tree.sv.write();
        let next = SuperVersion::new(sv.mem.clone(), sv.imm.clone(), current, Some(&*sv), &tree.opts);
        sv.install(next);
        Ok(())
    }

    /// Delete tables no live version references, WALs older than the log number, and
    /// manifests other than the live one. Failures are ignored: a file left behind is
    /// deleted next time.
    pub(crate) fn delete_obsolete_files(&self) {
        // After a failed manifest write the edit may or may not be on disk: keep every file
        // until a reopen recovers the truth.
        if self.bg.failed() {
            return;
        }
        // One pass at a time, none while a checkpoint copies files (it runs a pass itself
        // when it is done).
        let Some(_pass) = self.files.begin_pass() else { return };
        // Order matters (see `obsolete_files`): the listing, then the numbers being
        // written, then the live set.
        let Ok(names) = self.storage.list(&self.dir) else { return };
        let pending = self.files.pending();
        let (live, log_number) = {
            let v = self.versions.lock();
            (v.live_files(), v.log_number())
        };
        let current_wal = self.wal.number();
        // A retired log no keyspace needs is not synced any more (its memtables' flushes
        // synced it, unless their keyspace was dropped).
        self.wal.forget_retired_below(log_number);
        let obsolete = obsolete_files(&names, &live, &pending, log_number, current_wal);
        let tables: Vec<u64> = obsolete
            .iter()
            .filter_map(|(_, what)| match what {
                Obsolete::Table(n) => Some(*n),
                _ => None,
            })
            .collect();
        // Readers, handles and cached blocks of every deleted table at once: the block
        // cache is scanned once per pass, not once per table.
        self.tables.evict_all(&tables);
        let trees = self.trees.all();
        for &n in &tables {
            for tree in &trees {
                tree.manager.forget(n);
            }
        }
        for (name, _) in obsolete {
            let _ = self.storage.remove(&self.dir.join(name));
        }
    }
}
