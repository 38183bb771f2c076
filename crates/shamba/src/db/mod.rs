//! The database handle: open/recover, writes, reads, iterators, snapshots, flush and
//! compaction, statistics, close.

// Imports flow one way (the floors are checked by `tests::the_folder_imports_flow_one_way`):
// plain data and the parts that own their locks (`batch`, `delay_rate`, `pacer`, `table_slots`,
// `sequence`, `file_book`, `live_wal`, `workers`, then `write_queue` and
// `super_version`), then `tree`, then `trees`, then `inner`, which holds the parts; then the
// paths that coordinate them (`write`, `background`, `resume`, `checkpoint`, `open`,
// `read`, `multi_get`, `iter`); then the handles (`Db` here, `keyspace`, `snapshot`, and
// `ttl`: the writes and reads of expiry on all of them).
mod background;
mod batch;
mod checkpoint;
mod commit_check;
mod delay_rate;
mod file_book;
mod file_info;
mod inner;
mod iter;
mod keyspace;
#[cfg(feature = "lab")]
mod lab_lookup;
mod level_io;
mod live_wal;
mod multi_get;
mod open;
mod pacer;
mod purge_turns;
mod read;
mod readable;
mod resume;
mod sequence;
mod snapshot;
mod super_version;
#[cfg(feature = "lab")]
mod table_accesses;
mod table_slots;
mod thread_priority;
mod transaction;
mod tree;
mod trees;
mod ttl;
mod verify;
mod workers;
mod write;
mod write_queue;

#[cfg(feature = "lab")]
pub(crate) use batch::decode_batch;
pub use batch::WriteBatch;
pub use file_info::FileInfo;
pub use iter::DbIterator;
pub use keyspace::Keyspace;
pub use readable::Readable;
pub use snapshot::Snapshot;
pub use transaction::{Transaction, TransactionOptions, TxKeyspace};

use crate::error::Result;
use crate::options::{Options, WriteOptions};
use crate::stats::{LevelStats, Stats};
use crate::verify_report::VerifyReport;
use inner::DbInner;
use std::ops::RangeBounds;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// An open database.
///
/// `Db` is `Send + Sync` and cheap to clone (an `Arc` inside): share it between threads by
/// cloning. The database closes when the last handle is dropped, or explicitly with
/// [`Db::close`]. It reads its default keyspace through [`Readable`] (`get`, `multi_get`,
/// `iter`, `range`, `prefix`), as [`Keyspace`] and [`Snapshot`] read theirs.
///
/// ```
/// use shamba::{Db, Options, Readable};
/// let dir = tempfile::tempdir()?;
/// let db = Db::open(dir.path(), Options::default())?;
/// db.put(b"hello", b"world")?;
/// assert_eq!(db.get(b"hello")?.as_deref(), Some(&b"world"[..]));
/// db.delete(b"hello")?;
/// assert_eq!(db.get(b"hello")?, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Db {
    inner: Arc<DbInner>,
    _guard: Arc<CloseGuard>,
}

/// Closes the database when the last `Db` handle goes away.
struct CloseGuard {
    inner: Arc<DbInner>,
}

impl Drop for CloseGuard {
    fn drop(&mut self) {
        let _ = self.inner.shutdown();
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("dir", &self.inner.dir).finish_non_exhaustive()
    }
}

impl Db {
    /// Open the database in `dir`, creating it if `opts.create_if_missing`.
    ///
    /// Recovers from the manifest and the write-ahead logs.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidOptions`](crate::Error::InvalidOptions) when `opts` fails
    ///   [`Options::validate`].
    /// - [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `dir` holds no
    ///   database and `opts.create_if_missing` is false, or holds one and
    ///   `opts.error_if_exists` is true.
    /// - [`Error::Locked`](crate::Error::Locked) when another process, or another open `Db`
    ///   in this one, holds the directory's lock.
    /// - [`Error::Corruption`](crate::Error::Corruption), naming the file, when CURRENT, the
    ///   manifest or a write-ahead log does not decode. A torn last log record (a crash in
    ///   mid-write) is dropped, not an error; damage before it is an error unless
    ///   `opts.wal_recovery` is [`WalRecovery::PointInTime`](crate::WalRecovery::PointInTime).
    /// - [`Error::Io`](crate::Error::Io) when the device fails: creating the directory,
    ///   reading the manifest or the logs, writing the recovered tables, the new log or the
    ///   manifest record, or starting the background threads.
    pub fn open(dir: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let inner = open::open(dir.as_ref(), opts)?;
        Ok(Db { _guard: Arc::new(CloseGuard { inner: inner.clone() }), inner })
    }

    /// Set `key` to `value`.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidArgument`](crate::Error::InvalidArgument) when a key is longer than
    ///   [`Options::max_key_size`] or a value longer than [`Options::max_value_size`];
    ///   nothing is written.
    /// - [`Error::Closed`](crate::Error::Closed) after [`Db::close`], while the database is
    ///   closing, or once a background error (a failed flush or compaction, or an earlier
    ///   failed log write) has made it read-only.
    /// - [`Error::Io`](crate::Error::Io) when the device fails: appending to or syncing the
    ///   write-ahead log (the database then turns read-only, since the log may end in a
    ///   partial record), or creating the next log when the memtable is full. A write
    ///   committed in a group whose leader failed gets that failure as an `Error::Io`
    ///   carrying its message.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let (key, value) = (key.as_ref(), value.as_ref());
        // One allocation for the batch, sized for its one put.
        let mut b = WriteBatch::with_capacity(key.len().saturating_add(value.len()).saturating_add(31));
        b.put(key, value);
        self.write(b)
    }

    /// Delete `key` (a no-op if absent).
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidArgument`](crate::Error::InvalidArgument) when a key is longer than
    ///   [`Options::max_key_size`] or a value longer than [`Options::max_value_size`];
    ///   nothing is written.
    /// - [`Error::Closed`](crate::Error::Closed) after [`Db::close`], while the database is
    ///   closing, or once a background error (a failed flush or compaction, or an earlier
    ///   failed log write) has made it read-only.
    /// - [`Error::Io`](crate::Error::Io) when the device fails: appending to or syncing the
    ///   write-ahead log (the database then turns read-only, since the log may end in a
    ///   partial record), or creating the next log when the memtable is full. A write
    ///   committed in a group whose leader failed gets that failure as an `Error::Io`
    ///   carrying its message.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write(b)
    }

    /// Make every write acknowledged so far durable, as if each had been written with
    /// [`WriteOptions::sync`]: one fsync of the write-ahead log. For writers that batch
    /// their durability (sync once a second, or at a commit point) instead of per write.
    ///
    /// # Errors
    ///
    /// - [`Error::Io`](crate::Error::Io) when the sync fails; the database is then
    ///   read-only until it is reopened (a failed sync is never retried).
    /// - [`Error::ReadOnly`](crate::Error::ReadOnly) when a background error already
    ///   stopped writes; [`Error::Closed`](crate::Error::Closed) after [`Db::close`].
    pub fn sync_wal(&self) -> Result<()> {
        self.inner.sync_wal()
    }

    /// Delete every key in `range`, present or not, with one record: the cost does not
    /// depend on how many keys the range holds. Reads stop seeing them at once; the space
    /// comes back as compactions rewrite the tables that hold them (all of it after
    /// [`Db::compact`]). An empty range is a no-op.
    ///
    /// ```
    /// use shamba::Readable;
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// for i in 0..100 {
    ///     db.put(format!("log:{i:04}"), b"entry")?;
    /// }
    /// db.delete_range(&b"log:0000"[..]..&b"log:0090"[..])?;
    /// assert_eq!(db.prefix(b"log:").count(), 10);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Db::delete`].
    pub fn delete_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_range(range);
        self.write(b)
    }

    /// Apply a batch atomically: after a crash, all of it or none of it is present. An
    /// empty batch writes nothing.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidArgument`](crate::Error::InvalidArgument) when a key is longer than
    ///   [`Options::max_key_size`] or a value longer than [`Options::max_value_size`];
    ///   nothing is written.
    /// - [`Error::Closed`](crate::Error::Closed) after [`Db::close`], while the database is
    ///   closing, or once a background error (a failed flush or compaction, or an earlier
    ///   failed log write) has made it read-only.
    /// - [`Error::Io`](crate::Error::Io) when the device fails: appending to or syncing the
    ///   write-ahead log (the database then turns read-only, since the log may end in a
    ///   partial record), or creating the next log when the memtable is full. A write
    ///   committed in a group whose leader failed gets that failure as an `Error::Io`
    ///   carrying its message.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        self.inner.write(batch, &WriteOptions::default())
    }

    /// Apply a batch with write options (e.g. `sync`).
    ///
    /// # Errors
    ///
    /// As [`Db::write`]; with `disable_wal` no log is written, so none can fail.
    pub fn write_opt(&self, batch: WriteBatch, wo: &WriteOptions) -> Result<()> {
        self.inner.write(batch, wo)
    }

    /// A consistent view of the database as of now, reading the default keyspace
    /// ([`Snapshot::keyspace`] reads another at the same moment).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.inner.clone())
    }

    /// An optimistic transaction reading the database as of now, with the default
    /// [`TransactionOptions`]: see [`Transaction`].
    pub fn transaction(&self) -> Transaction {
        Transaction::new(self.inner.clone(), TransactionOptions::default())
    }

    /// An optimistic transaction with options.
    pub fn transaction_with(&self, opts: TransactionOptions) -> Transaction {
        Transaction::new(self.inner.clone(), opts)
    }

    /// Run `f` in a transaction and commit it; on [`Error::Conflict`](crate::Error::Conflict)
    /// (from the commit, or from `f`) run it again in a new transaction, up to
    /// [`TransactionOptions::max_attempts`] times in all. `f` may run more than once: it
    /// should do nothing outside the transaction it is given that must happen once.
    ///
    /// ```
    /// use shamba::Readable;
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// let next = db.transact(|tx| {
    ///     let n = tx.get_for_update(b"counter")?.map_or(0, |v| v[0]) + 1;
    ///     tx.put(b"counter", [n])?;
    ///     Ok(n)
    /// })?;
    /// assert_eq!(next, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The last conflict when every attempt conflicted; any other error of `f` or of the
    /// commit at once (the transaction is then rolled back).
    pub fn transact<T>(&self, f: impl FnMut(&Transaction) -> Result<T>) -> Result<T> {
        self.transact_with(&TransactionOptions::default(), f)
    }

    /// [`Db::transact`] with options.
    ///
    /// # Errors
    ///
    /// As [`Db::transact`].
    pub fn transact_with<T>(
        &self,
        opts: &TransactionOptions,
        mut f: impl FnMut(&Transaction) -> Result<T>,
    ) -> Result<T> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let tx = self.transaction_with(opts.clone());
            let outcome = f(&tx).and_then(|value| tx.commit().map(|()| value));
            match outcome {
                Err(e) if e.is_conflict() && attempt < opts.max_attempts => {
                    // Let the writer that won go on before trying again: a little longer
                    // each time, so contending retries spread out.
                    std::thread::sleep(Duration::from_micros(20 * attempt.min(50) as u64));
                }
                outcome => return outcome,
            }
        }
    }

    /// Write the memtable to an L0 table and wait until every frozen memtable is flushed.
    ///
    /// # Errors
    ///
    /// - [`Error::Closed`](crate::Error::Closed) after [`Db::close`], while the database is
    ///   closing, or when a background error has made it read-only, including a failure of
    ///   the background flush this call waits for (the message says what failed).
    /// - [`Error::Io`](crate::Error::Io) when the device fails creating the next write-ahead
    ///   log or syncing the directory.
    pub fn flush(&self) -> Result<()> {
        self.inner.flush_all()
    }

    /// Flush, then merge every table of every keyspace into one sorted run of its deepest
    /// level.
    ///
    /// # Errors
    ///
    /// Those of [`Db::flush`], then, from the compaction (run in the calling thread):
    /// - [`Error::Corruption`](crate::Error::Corruption) when a block of an input table does
    ///   not decode or fails its checksum;
    /// - [`Error::Io`](crate::Error::Io) when the device fails reading the inputs, writing
    ///   the output tables or logging the new version in the manifest.
    pub fn compact(&self) -> Result<()> {
        self.inner.compact_all(&self.inner.trees.all())
    }

    /// Flush, then run compactions in the calling thread until no level needs one: the
    /// tree is settled (benchmarks call this between loading and reading).
    ///
    /// # Errors
    ///
    /// As [`Db::compact`].
    pub fn wait_for_compactions(&self) -> Result<()> {
        self.inner.flush_all()?;
        let mut compacted = false;
        while self.inner.maybe_compact()? {
            compacted = true;
        }
        // Settled includes the inputs gone from disk, not left to the purge thread.
        self.inner.settle_obsolete_files(compacted);
        Ok(())
    }

    /// Take writes again after a background error made the database read-only, when that
    /// error leaves nothing to distrust: a failed write of a table, the WAL or the manifest
    /// (a full disk, say, once it has room again). A fresh WAL and, if its last write
    /// failed, a fresh manifest are started, and the flush or compaction that failed runs
    /// again in the background. `Ok(())` also when writes were never stopped.
    ///
    /// A full disk is resumed from by itself every
    /// [`Options::auto_resume_interval`](crate::Options::auto_resume_interval); this call
    /// is for other write errors, and for callers that know the space is back.
    ///
    /// # Errors
    ///
    /// - [`Error::ReadOnly`](crate::Error::ReadOnly) with the background error as its cause
    ///   when writes cannot resume without a reopen: a sync failed (the kernel may have
    ///   dropped what it could not write, and a later sync would report success all the
    ///   same), or a file is corrupt.
    /// - [`Error::Io`](crate::Error::Io) when starting the fresh WAL or manifest fails (the
    ///   disk is still full): the database stays read-only.
    /// - [`Error::Closed`](crate::Error::Closed) after [`Db::close`].
    pub fn resume(&self) -> Result<()> {
        self.inner.resume()
    }

    /// Write a consistent copy of the database, as of one moment, into the directory `out`
    /// (which must not exist; missing parents are created), while writers go on: `Db::open(out, ..)`
    /// opens it as a database of its own, holding every write acknowledged before the call
    /// and none acknowledged after it returns. Live tables are hard-linked where the file
    /// system allows (no bytes copied; a link outlives the table's deletion here) and copied
    /// otherwise; the write-ahead logs the memtables need are copied up to that moment.
    ///
    /// ```
    /// use shamba::Readable;
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path().join("db"), shamba::Options::default())?;
    /// db.put(b"k", b"v1")?;
    /// db.checkpoint(dir.path().join("backup"))?;
    /// db.put(b"k", b"v2")?;
    /// let backup = shamba::Db::open(dir.path().join("backup"), shamba::Options::default())?;
    /// assert_eq!(backup.get(b"k")?.as_deref(), Some(&b"v1"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `out` exists or has
    ///   no file name, or when `out.checkpoint-staging` (where the copy is built) exists and
    ///   was not made by a checkpoint (nothing in it is touched).
    /// - [`Error::Locked`](crate::Error::Locked) when another checkpoint into `out` is
    ///   being made.
    /// - [`Error::Io`](crate::Error::Io) when creating, copying or syncing the files fails;
    ///   `out` is then not created, and the staging directory is removed (if removing it
    ///   fails too, the next attempt empties and reuses it). Only if the last step, the
    ///   sync of `out`'s parent after the move, fails is `out` there: whole, but perhaps
    ///   not durable.
    ///
    /// A crash at any point leaves `out` either absent or a whole checkpoint: the copy is
    /// built and synced in `out.checkpoint-staging`, then moved to `out` in one rename. A
    /// staging directory a crash leaves is emptied and reused by the next checkpoint into
    /// `out`.
    /// - [`Error::Closed`](crate::Error::Closed) after [`Db::close`].
    pub fn checkpoint(&self, out: impl AsRef<Path>) -> Result<()> {
        self.inner.checkpoint(out.as_ref())
    }

    /// Flush, then merge one level into the next (`lab::compact_level`).
    #[cfg(feature = "lab")]
    pub(crate) fn compact_level(&self, level: usize) -> Result<()> {
        self.inner.compact_level(level)
    }

    /// The database's counters, with the default keyspace's tree: its levels, memtables,
    /// range tombstones and lookup counters ([`Keyspace::stats`] for another keyspace's).
    pub fn stats(&self) -> Stats {
        self.stats_of(&self.inner.default)
    }

    fn stats_of(&self, tree: &tree::Tree) -> Stats {
        let inner = &self.inner;
        let sv = tree.super_version();
        let mut levels: Vec<LevelStats> = sv
            .version
            .levels
            .iter()
            .map(|l| {
                let files = l.runs.iter().flat_map(|r| r.files.iter());
                LevelStats {
                    files: files.clone().count(),
                    runs: l.runs.iter().filter(|r| !r.files.is_empty()).count(),
                    bytes: files.clone().map(|f| f.size).sum(),
                    entries: files.clone().map(|f| f.entries).sum(),
                    filter_bytes: files.clone().map(|f| f.filter_bytes).sum(),
                    index_bytes: files.map(|f| f.index_bytes).sum(),
                    ..LevelStats::default()
                }
            })
            .collect();
        tree.level_io.fill(&mut levels);
        let (open_table_files, max_open_table_files) = inner.tables.open_files();
        let residency = inner.trees.filter_residency();
        Stats {
            io: inner.io.snapshot(),
            cache: inner.block_cache.counters(),
            cache_usage: inner.block_cache.usage(),
            cache_capacity: inner.block_cache.capacity(),
            cache_first_pool_usage: inner.block_cache.first_pool_usage(),
            cache_first_pool_capacity: inner.block_cache.first_pool_capacity(),
            open_table_files,
            max_open_table_files,
            pinned_table_bytes: inner.tables.pinned_bytes(),
            pinned_metadata_limit: inner.tables.metadata_budget().limit(),
            tables_metadata_in_cache: inner.tables.metadata_budget().cached_readers(),
            levels,
            memtable_bytes: sv.mem.approximate_size(),
            immutable_memtables: sv.imm.len(),
            pending_compaction_bytes: sv.compaction_debt,
            last_sequence: inner.visible_seq(),
            range_tombstones: sv.version.range_dels.list.len(),
            elastic_enabled_bytes: tree.manager.enabled_filter_bytes().unwrap_or(0),
            filter_resident_bytes: residency.resident_bytes,
            filter_resident_peak_bytes: residency.peak_bytes,
            filter_loads: residency.loads,
            filter_evictions: residency.evictions,
            delayed_write_rate: inner.queue.pacer.rate(inner.rate_bounds()),
            ..Stats::default()
        }
        .with_counters(&inner.counters, tree.sv.lookup_totals())
    }

    /// The table files of the default keyspace's current version, level by level, runs
    /// newest first, each run's files in key order.
    pub fn files(&self) -> Vec<FileInfo> {
        let sv = self.inner.default.super_version();
        sv.version.all_files().map(|(level, f)| FileInfo::of(level, f)).collect()
    }

    /// Check the database for damage: every block of every table of the current version
    /// read from the file and its checksum computed (data, index and index partitions,
    /// every filter part, filter index, metaindex, properties, footer), the order of every
    /// key inside each table and across the files of each sorted run, each table against
    /// its properties and its manifest record (size, entries, smallest and largest key),
    /// the levels' shape (runs newest first, one file per level-0 run, one run per level
    /// of a leveled tree), the directory against the version (a table missing is damage;
    /// a table nothing names is an orphan, reported apart), and the write-ahead logs still
    /// needed (checksums and batches).
    ///
    /// The check reads around the block cache and the open-file cache (neither is filled
    /// or consulted: a cached copy would hide damage on disk) and holds the current
    /// version, so no compaction deletes a table it is reading; reads and writes go on
    /// meanwhile. It keeps going after a problem, so the report lists all the damage it can
    /// reach: see [`VerifyReport::is_ok`](crate::VerifyReport::is_ok) and
    /// [`VerifyReport::problems`](crate::VerifyReport::problems). To check a database
    /// without opening it, see [`Db::verify_dir`].
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// db.put(b"k", b"v")?;
    /// db.flush()?;
    /// let report = db.verify()?;
    /// assert!(report.is_ok(), "{report}");
    /// assert_eq!(report.tables, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// Only when the check cannot run (damage it finds is in the report):
    /// [`Error::Closed`](crate::Error::Closed) after [`Db::close`], and
    /// [`Error::Io`](crate::Error::Io) when listing the directory fails.
    pub fn verify(&self) -> Result<VerifyReport> {
        verify::verify_open(&self.inner)
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.dir
    }

    /// Stop background work, sync the WAL and release the directory lock. Every handle
    /// of this database fails with [`crate::Error::Closed`] afterwards (an iterator made
    /// afterwards yields it as its first item; one made before reads on to its end).
    /// Dropping the last handle does the same, ignoring errors.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when syncing the write-ahead log fails, or writing
    /// the tables' lookup statistics to the manifest does (skipped once a background error
    /// has made the database read-only). Background work stops and the lock is released
    /// all the same. Closing a database another handle already closed returns `Ok(())`.
    pub fn close(self) -> Result<()> {
        self.inner.shutdown()
    }
}

/// The default keyspace, the latest data.
impl Readable for Db {
    fn read_view(&self) -> readable::sealed::View<'_> {
        readable::sealed::View { inner: &self.inner, tree: &self.inner.default, seq: None, refused: None }
    }
}

impl DbInner {
    /// Stop background threads, sync the WAL, release the lock. Idempotent.
    fn shutdown(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        self.bg.stop();
        // Wait for an in-flight write group to finish before syncing its log.
        self.queue.wait_idle();
        // Never retry a failed sync: a success now would not bring back what it lost.
        // The retired logs and the new logs' directory entries first, as a synced write.
        let synced = if self.storage.failed() {
            Ok(())
        } else {
            self.wal.sync_earlier(&*self.storage, &self.dir).and_then(|()| self.wal.sync())
        };
        let persisted = if self.bg.failed() { Ok(()) } else { self.persist_file_stats() };
        // Tables a reader still held when their compaction finished go now, not at the next
        // open (the pass keeps everything after a background error).
        self.delete_obsolete_files();
        self.lock.lock().take();
        synced.and(persisted)
    }
}

// `Db` and `Snapshot` can be shared between threads: checked at compile time.
const _: () = {
    const fn is<T: Send + Sync>() {}
    is::<Db>();
    is::<Snapshot>();
    is::<Keyspace>();
    is::<Transaction>();
};

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    /// The files of this folder, floor by floor from the ground up (DESIGN.md, "The
    /// database's parts"). A file names (`super::x`, `crate::db::x`) only files on its floor
    /// or below, and the floors below the handles hold no circle. The handles (`Db` here,
    /// `Keyspace`, `Snapshot`) refer to each other, as the public API does.
    const FLOORS: &[&[&str]] = &[
        &[
            "batch",
            "file_info",
            "delay_rate",
            "pacer",
            "table_slots",
            "sequence",
            "file_book",
            "purge_turns",
            "thread_priority",
            "live_wal",
            "workers",
            "level_io",
        ],
        &["write_queue", "super_version"],
        &["tree"],
        &["trees"],
        &["inner"],
        &[
            "write",
            "background",
            "resume",
            "checkpoint",
            "open",
            "read",
            "multi_get",
            "iter",
            "lab_lookup",
            "commit_check",
        ],
        &["mod", "readable", "keyspace", "snapshot", "transaction", "verify", "table_accesses", "ttl"],
    ];

    fn floor_of(file: &str) -> Option<usize> {
        FLOORS.iter().position(|floor| floor.contains(&file))
    }

    /// The files of this folder a line of code names: `super::x` or `crate::db::x` (`x` a
    /// file), or a name `mod.rs` re-exports (`super::Db`: the handles' floor).
    fn named(line: &str) -> Vec<String> {
        let code = line.trim_start();
        if code.starts_with("//") {
            return Vec::new();
        }
        let mut found = Vec::new();
        for prefix in ["crate::db::", "super::"] {
            let mut rest = code;
            while let Some(at) = rest.find(prefix) {
                rest = &rest[at + prefix.len()..];
                let group = rest.strip_prefix('{').map(|g| g.split('}').next().unwrap_or(""));
                let names: Vec<&str> = match group {
                    Some(group) => group.split(',').collect(),
                    None => vec![rest],
                };
                for name in names {
                    let name: String = name.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    match name.chars().next() {
                        Some(c) if c.is_uppercase() => found.push("mod".to_string()),
                        Some(_) if name != "super" => found.push(name),
                        _ => {}
                    }
                }
            }
        }
        found
    }

    #[test]
    fn the_folder_imports_flow_one_way() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/db");
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut wrong = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            // A folder holds one file's children (`super_version/`: its sync shim and
            // tests), whose `super::` is that file: the crate-wide layering test reads them.
            if path.is_dir() {
                continue;
            }
            let file = path.file_stem().unwrap().to_string_lossy().into_owned();
            let Some(floor) = floor_of(&file) else {
                wrong.push(format!("{file}.rs is on no floor: add it to FLOORS"));
                continue;
            };
            // `mod.rs` names its files without `super::`, and `super::` there is the crate.
            if file == "mod" {
                continue;
            }
            for (n, line) in std::fs::read_to_string(&path).unwrap().lines().enumerate() {
                for to in named(line) {
                    if to == file {
                        continue;
                    }
                    match floor_of(&to) {
                        Some(f) if f <= floor => {
                            edges.entry(file.clone()).or_default().insert(to);
                        }
                        Some(_) => wrong.push(format!("{file}.rs:{}: names {to}, on a floor above it", n + 1)),
                        None => wrong.push(format!("{file}.rs:{}: names {to}, on no floor", n + 1)),
                    }
                }
            }
        }
        // No circle below the handles: a depth-first walk never meets a file it is in.
        let top = FLOORS.len() - 1;
        fn walk<'a>(
            file: &'a str,
            edges: &'a BTreeMap<String, BTreeSet<String>>,
            path: &mut Vec<&'a str>,
            done: &mut BTreeSet<&'a str>,
            top: usize,
            wrong: &mut Vec<String>,
        ) {
            if done.contains(file) {
                return;
            }
            if let Some(at) = path.iter().position(|f| *f == file) {
                wrong.push(format!("a circle: {} -> {file}", path[at..].join(" -> ")));
                return;
            }
            path.push(file);
            for to in edges.get(file).into_iter().flatten() {
                if floor_of(to) != Some(top) {
                    walk(to, edges, path, done, top, wrong);
                }
            }
            path.pop();
            done.insert(file);
        }
        let mut done = BTreeSet::new();
        for file in edges.keys().filter(|f| floor_of(f) != Some(top)) {
            walk(file, &edges, &mut Vec::new(), &mut done, top, &mut wrong);
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        // The check sees the imports: the parts are named from above.
        assert!(edges.get("inner").is_some_and(|e| e.contains("write_queue") && e.contains("trees")));
    }

    #[test]
    fn names_are_read_from_paths_and_groups() {
        assert_eq!(named("use super::inner::DbInner;"), ["inner"]);
        assert_eq!(named("use super::{Db, FileInfo};"), ["mod", "mod"]);
        assert_eq!(named("    use crate::db::super_version::SuperVersion;"), ["super_version"]);
        assert!(named("// super::inner is mentioned").is_empty());
        assert!(named("use super::*;").is_empty());
    }
}
