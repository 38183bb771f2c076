//! The engine as the commands see it: reads, writes with the server's durability, and
//! striped key locks that make read-modify-write commands atomic.
//!
//! Every command that writes a key holds that key's stripe lock from its read (if any) to
//! its write, so `INCR` racing `INCR` (or `SET NX`, `APPEND`, `DEL`'s count) on one key
//! never loses an update; plain reads take no lock (each engine write is atomic, so a read
//! sees a key before or after it). Locks are taken in stripe order, so multi-key writers
//! (`MSET`, `DEL`) cannot deadlock.

use super::durability::{SyncMode, WriteTracker};
use parking_lot::{Mutex, MutexGuard};
use shamba::{Db, WriteBatch, WriteOptions};
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

/// Stripes of the key locks: enough that unrelated keys rarely share one.
const STRIPES: usize = 1024;

/// The database and what the server keeps beside it.
pub(super) struct Store {
    db: Db,
    stripes: Box<[Mutex<()>]>,
    sync: SyncMode,
    tracker: WriteTracker,
}

/// Held stripe locks; the keys stay locked until it drops.
pub(super) struct KeyLocks<'a> {
    _guards: Vec<MutexGuard<'a, ()>>,
}

impl Store {
    pub(super) fn new(db: Db, sync: SyncMode) -> Store {
        Store { db, stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(), sync, tracker: WriteTracker::default() }
    }

    /// The engine handle (reads, scans, statistics).
    pub(super) fn db(&self) -> &Db {
        &self.db
    }

    pub(super) fn sync_mode(&self) -> SyncMode {
        self.sync
    }

    pub(super) fn tracker(&self) -> &WriteTracker {
        &self.tracker
    }

    fn stripe(key: &[u8]) -> usize {
        BuildHasherDefault::<DefaultHasher>::default().hash_one(key) as usize % STRIPES
    }

    /// Lock the stripes of `keys` (in stripe order, each once).
    pub(super) fn lock<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> KeyLocks<'_> {
        let mut idx: Vec<usize> = keys.into_iter().map(Self::stripe).collect();
        idx.sort_unstable();
        idx.dedup();
        KeyLocks { _guards: idx.into_iter().filter_map(|i| self.stripes.get(i)).map(|m| m.lock()).collect() }
    }

    pub(super) fn get(&self, key: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        self.db.get(key)
    }

    /// Values of `keys`, in order, by one `Db::multi_get` (every multi-key read: MGET,
    /// EXISTS, DEL's count); the first failed key fails the command.
    pub(super) fn get_many<'k>(
        &self,
        keys: impl IntoIterator<Item = &'k [u8]>,
    ) -> shamba::Result<Vec<Option<Vec<u8>>>> {
        let keys: Vec<&[u8]> = keys.into_iter().collect();
        self.db.multi_get(&keys).into_iter().collect()
    }

    /// Write `batch` (already under its keys' locks) with the server's durability.
    pub(super) fn write(&self, batch: WriteBatch) -> shamba::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let wo = WriteOptions { sync: self.sync == SyncMode::Always, ..WriteOptions::default() };
        self.db.write_opt(batch, &wo)?;
        self.tracker.wrote();
        Ok(())
    }

    /// Write `key` = `value`.
    pub(super) fn put(&self, key: &[u8], value: &[u8]) -> shamba::Result<()> {
        let mut b = WriteBatch::new();
        b.put(key, value);
        self.write(b)
    }

    /// Make every acknowledged write durable (see `durability`): one WAL sync.
    pub(super) fn sync_now(&self) -> shamba::Result<()> {
        self.db.sync_wal()
    }
}
