//! The database handle: open/recover, writes, reads, iterators, snapshots, flush and
//! compaction, statistics, close.

mod background;
mod batch;
mod inner;
mod iter;
mod open;
mod pacer;
mod read;
mod snapshot;
mod super_version;
mod write;

pub use batch::WriteBatch;
pub use iter::DbIterator;
pub use snapshot::Snapshot;

use crate::error::Result;
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::stats::{LevelStats, Stats};
use inner::DbInner;
use std::ops::RangeBounds;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// An open database.
///
/// `Db` is `Send + Sync` and cheap to clone (an `Arc` inside): share it between threads by
/// cloning. The database closes when the last handle is dropped, or explicitly with
/// [`Db::close`].
///
/// ```
/// use shamba::{Db, Options};
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
    /// Recovers from the manifest and the write-ahead log. Fails with [`crate::Error::Locked`] if
    /// another process (or handle) has it open, [`crate::Error::InvalidOptions`] for a bad option,
    /// [`crate::Error::Corruption`] if its files are damaged.
    pub fn open(dir: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let inner = open::open(dir.as_ref(), opts)?;
        Ok(Db { _guard: Arc::new(CloseGuard { inner: inner.clone() }), inner })
    }

    /// Set `key` to `value`.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write(b)
    }

    /// Delete `key` (a no-op if absent).
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete(key);
        self.write(b)
    }

    /// Apply a batch atomically: after a crash, all of it or none of it is present.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        self.inner.write(batch, &WriteOptions::default())
    }

    /// Apply a batch with write options (e.g. `sync`).
    pub fn write_opt(&self, batch: WriteBatch, wo: &WriteOptions) -> Result<()> {
        self.inner.write(batch, wo)
    }

    /// The current value of `key`.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// The current value of `key`, with read options.
    pub fn get_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.inner.get_at(key.as_ref(), None, ro)
    }

    /// Every key-value pair, in key order (double-ended).
    pub fn iter(&self) -> DbIterator {
        self.range::<&[u8], _>(..)
    }

    /// The pairs whose keys fall in `range`, in key order (double-ended).
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// for k in [b"a", b"b", b"c", b"d"] {
    ///     db.put(k, b"v")?;
    /// }
    /// let keys: Vec<Vec<u8>> = db.range(&b"b"[..]..&b"d"[..]).map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, vec![b"b".to_vec(), b"c".to_vec()]);
    /// let last = db.iter().next_back().transpose()?;
    /// assert_eq!(last.map(|(k, _)| k), Some(b"d".to_vec()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> DbIterator {
        DbIterator::new(&self.inner, self.inner.visible_seq(), &range, ReadOptions::default())
    }

    /// A consistent view of the database as of now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.inner.clone())
    }

    /// Write the memtable to an L0 table and wait until every frozen memtable is flushed.
    pub fn flush(&self) -> Result<()> {
        self.inner.flush_all()
    }

    /// Flush, then merge every table into one sorted run of the deepest level.
    pub fn compact(&self) -> Result<()> {
        self.inner.compact_all()
    }

    /// Flush, then run compactions in the calling thread until no level needs one: the
    /// tree is settled (benchmarks call this between loading and reading).
    pub fn wait_for_compactions(&self) -> Result<()> {
        self.inner.flush_all()?;
        while self.inner.maybe_compact()? {}
        Ok(())
    }

    /// Counters and the shape of the tree.
    pub fn stats(&self) -> Stats {
        let inner = &self.inner;
        let sv = inner.super_version();
        let levels = sv
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
                }
            })
            .collect();
        Stats {
            io: inner.io.snapshot(),
            cache: inner.block_cache.counters(),
            cache_usage: inner.block_cache.usage(),
            cache_capacity: inner.block_cache.capacity(),
            levels,
            memtable_bytes: sv.mem.approximate_size(),
            immutable_memtables: sv.imm.len(),
            last_sequence: inner.visible_seq(),
            elastic_enabled_bytes: inner.manager.enabled_filter_bytes().unwrap_or(0),
            ..Stats::default()
        }
        .with_counters(&inner.counters, inner.sv.lookup_totals())
    }

    /// The files of the current version, level by level: `(level, run, FileMeta)`.
    pub fn files(&self) -> Vec<(usize, u64, crate::version::FileMeta)> {
        let sv = self.inner.super_version();
        let mut out = Vec::new();
        for (level, l) in sv.version.levels.iter().enumerate() {
            for r in &l.runs {
                for f in &r.files {
                    out.push((level, r.id, f.as_ref().clone()));
                }
            }
        }
        out
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.dir
    }

    /// Stop background work, sync the WAL and release the directory lock. Every handle
    /// of this database fails with [`crate::Error::Closed`] afterwards. Dropping the last handle
    /// does the same, ignoring errors.
    pub fn close(self) -> Result<()> {
        self.inner.shutdown()
    }
}

impl DbInner {
    /// Stop background threads, sync the WAL, release the lock. Idempotent.
    fn shutdown(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        {
            let mut bg = self.bg.lock();
            bg.shutting_down = true;
            self.bg_cv.notify_all();
        }
        let threads: Vec<_> = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            let _ = t.join();
        }
        // Wait for an in-flight write group to finish before syncing its log.
        let mut q = self.queue.lock();
        while q.leader_active {
            self.queue_cv.wait(&mut q);
        }
        drop(q);
        let synced = self.wal.lock().writer.sync();
        let persisted = if self.bg.lock().error.is_none() { self.persist_file_stats() } else { Ok(()) };
        self.lock.lock().take();
        synced.and(persisted)
    }
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Db>();
    is::<Snapshot>();
}
