//! The engine as the commands see it: the numbered databases (`databases`), reads and
//! writes of the selected one ([`Selected`]) with the server's durability, and striped key
//! locks that make read-modify-write commands atomic.
//!
//! Every command that writes a key holds that key's stripe lock from its read (if any) to
//! its write, so `INCR` racing `INCR` (or `SET NX`, `APPEND`, `DEL`'s count) on one key
//! never loses an update; plain reads take no lock (each engine write is atomic, so a read
//! sees a key before or after it). Locks are taken in stripe order, so multi-key writers
//! (`MSET`, `DEL`) cannot deadlock. A stripe is chosen by database and key, so one key in two
//! databases is two keys.

use super::databases::Databases;
use super::durability::{SyncMode, WriteTracker};
use parking_lot::{Mutex, MutexGuard};
use shamba::{Db, DbIterator, Keyspace, Readable, Stats, WriteBatch, WriteOptions};
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

/// Stripes of the key locks: enough that unrelated keys rarely share one.
const STRIPES: usize = 1024;

/// The database and what the server keeps beside it.
pub(super) struct Store {
    db: Db,
    databases: Databases,
    stripes: Box<[Mutex<()>]>,
    sync: SyncMode,
    tracker: WriteTracker,
}

/// Held stripe locks; the keys stay locked until it drops.
pub(super) struct KeyLocks<'a> {
    _guards: Vec<MutexGuard<'a, ()>>,
}

/// One database as a command sees it: the one its connection selected.
#[derive(Clone, Copy)]
pub(super) struct Selected<'a> {
    store: &'a Store,
    index: usize,
    ks: &'a Keyspace,
}

impl Store {
    /// The store over `db` with `databases` numbered databases.
    ///
    /// # Errors
    ///
    /// As [`Databases::open`].
    pub(super) fn new(db: Db, sync: SyncMode, databases: usize) -> shamba::Result<Store> {
        Ok(Store {
            databases: Databases::open(db.clone(), databases)?,
            db,
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            sync,
            tracker: WriteTracker::default(),
        })
    }

    /// The engine handle (flush, close, the directory).
    pub(super) fn db(&self) -> &Db {
        &self.db
    }

    /// The numbered databases.
    pub(super) fn databases(&self) -> &Databases {
        &self.databases
    }

    /// Database `index` (created on first use); `None` when out of range.
    ///
    /// # Errors
    ///
    /// As [`Databases::get`].
    pub(super) fn select(&self, index: usize) -> Option<shamba::Result<Selected<'_>>> {
        Some(self.databases.get(index)?.map(|ks| Selected { store: self, index, ks }))
    }

    pub(super) fn sync_mode(&self) -> SyncMode {
        self.sync
    }

    pub(super) fn tracker(&self) -> &WriteTracker {
        &self.tracker
    }

    fn stripe(index: usize, key: &[u8]) -> usize {
        BuildHasherDefault::<DefaultHasher>::default().hash_one((index, key)) as usize % STRIPES
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

    /// Make every acknowledged write durable (see `durability`): one WAL sync.
    pub(super) fn sync_now(&self) -> shamba::Result<()> {
        self.db.sync_wal()
    }
}

impl<'a> Selected<'a> {
    /// Its keyspace, for the operations of a batch (`WriteBatch::put_in`).
    pub(super) fn keyspace(&self) -> &'a Keyspace {
        self.ks
    }

    /// Lock the stripes of `keys` in this database (in stripe order, each once).
    pub(super) fn lock<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> KeyLocks<'a> {
        let mut idx: Vec<usize> = keys.into_iter().map(|k| Store::stripe(self.index, k)).collect();
        idx.sort_unstable();
        idx.dedup();
        KeyLocks { _guards: idx.into_iter().filter_map(|i| self.store.stripes.get(i)).map(|m| m.lock()).collect() }
    }

    pub(super) fn get(&self, key: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        self.ks.get(key)
    }

    /// Values of `keys`, in order, by one `multi_get` (every multi-key read: MGET,
    /// EXISTS, DEL's count); the first failed key fails the command.
    pub(super) fn get_many<'k>(
        &self,
        keys: impl IntoIterator<Item = &'k [u8]>,
    ) -> shamba::Result<Vec<Option<Vec<u8>>>> {
        let keys: Vec<&[u8]> = keys.into_iter().collect();
        self.ks.multi_get(&keys).into_iter().collect()
    }

    /// The pairs whose keys start with `prefix`.
    pub(super) fn prefix(&self, prefix: &[u8]) -> DbIterator {
        self.ks.prefix(prefix)
    }

    /// Write `batch` (already under its keys' locks) with the server's durability.
    pub(super) fn write(&self, batch: WriteBatch) -> shamba::Result<()> {
        self.store.write(batch)
    }

    /// Write `key` = `value`.
    pub(super) fn put(&self, key: &[u8], value: &[u8]) -> shamba::Result<()> {
        let mut b = WriteBatch::new();
        b.put_in(self.ks, key, value);
        self.write(b)
    }

    /// The engine's counters with this database's tree.
    pub(super) fn stats(&self) -> Stats {
        self.ks.stats()
    }
}
