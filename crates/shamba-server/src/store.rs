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

/// The database and what the server keeps beside it: the numbered databases, the key
/// locks and the durability every write gets.
pub struct Store {
    db: Db,
    databases: Databases,
    stripes: Box<[Mutex<()>]>,
    sync: SyncMode,
    tracker: WriteTracker,
}

/// Held stripe locks ([`Selected::lock`]); the keys stay locked until it drops.
pub struct KeyLocks<'a> {
    _guards: Vec<MutexGuard<'a, ()>>,
}

/// One database as a command sees it: the one its connection selected.
#[derive(Clone, Copy)]
pub struct Selected<'a> {
    store: &'a Store,
    index: usize,
    ks: &'a Keyspace,
}

impl Store {
    /// The store over `db` with `databases` numbered databases.
    ///
    /// # Errors
    ///
    /// As [`Db::keyspace`] for the default keyspace or one of the databases already on
    /// disk.
    pub fn new(db: Db, sync: SyncMode, databases: usize) -> shamba::Result<Store> {
        Ok(Store {
            databases: Databases::open(db.clone(), databases)?,
            db,
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            sync,
            tracker: WriteTracker::default(),
        })
    }

    /// The engine handle (flush, close, the directory).
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// How many databases SELECT chooses among.
    pub fn database_count(&self) -> usize {
        self.databases.count()
    }

    /// The numbered databases.
    pub(super) fn databases(&self) -> &Databases {
        &self.databases
    }

    /// Database `index` (created on first use); `None` when out of range.
    ///
    /// # Errors
    ///
    /// As [`Db::keyspace`] when database `index` must be created (a database made read-only
    /// by a background error, say).
    pub fn select(&self, index: usize) -> Option<shamba::Result<Selected<'_>>> {
        Some(self.databases.get(index)?.map(|ks| Selected { store: self, index, ks }))
    }

    /// When its writes reach the disk.
    pub fn sync_mode(&self) -> SyncMode {
        self.sync
    }

    pub(super) fn tracker(&self) -> &WriteTracker {
        &self.tracker
    }

    fn stripe(index: usize, key: &[u8]) -> usize {
        BuildHasherDefault::<DefaultHasher>::default().hash_one((index, key)) as usize % STRIPES
    }

    /// Write `batch` (already under its keys' locks) with the server's durability: synced
    /// before this returns with [`SyncMode::Always`], marked for the next once-a-second sync
    /// otherwise.
    ///
    /// # Errors
    ///
    /// As [`Db::write_opt`].
    pub fn write(&self, batch: WriteBatch) -> shamba::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let wo = WriteOptions { sync: self.sync == SyncMode::Always, ..WriteOptions::default() };
        self.db.write_opt(batch, &wo)?;
        self.tracker.wrote();
        Ok(())
    }

    /// Make every acknowledged write durable (see `durability`): one WAL sync.
    ///
    /// # Errors
    ///
    /// As [`Db::sync_wal`].
    pub fn sync_now(&self) -> shamba::Result<()> {
        self.db.sync_wal()
    }
}

impl<'a> Selected<'a> {
    /// Its number (what SELECT chose).
    pub fn index(&self) -> usize {
        self.index
    }

    /// Its keyspace, for the operations of a batch (`WriteBatch::put_in`).
    pub fn keyspace(&self) -> &'a Keyspace {
        self.ks
    }

    /// Lock the stripes of `keys` in this database (in stripe order, each once).
    pub fn lock<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> KeyLocks<'a> {
        let mut idx: Vec<usize> = keys.into_iter().map(|k| Store::stripe(self.index, k)).collect();
        idx.sort_unstable();
        idx.dedup();
        KeyLocks { _guards: idx.into_iter().filter_map(|i| self.store.stripes.get(i)).map(|m| m.lock()).collect() }
    }

    /// The value of `key`.
    ///
    /// # Errors
    ///
    /// As [`Keyspace::get`].
    pub fn get(&self, key: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        self.ks.get(key)
    }

    /// Values of `keys`, in order, by one `multi_get` (every multi-key read: MGET,
    /// EXISTS, DEL's count); the first failed key fails the command.
    ///
    /// # Errors
    ///
    /// The first error of [`Keyspace::multi_get`].
    pub fn get_many<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> shamba::Result<Vec<Option<Vec<u8>>>> {
        let keys: Vec<&[u8]> = keys.into_iter().collect();
        self.ks.multi_get(&keys).into_iter().collect()
    }

    /// The pairs whose keys start with `prefix`.
    pub fn prefix(&self, prefix: &[u8]) -> DbIterator {
        self.ks.prefix(prefix)
    }

    /// Write `batch` (already under its keys' locks) with the server's durability.
    ///
    /// # Errors
    ///
    /// As [`Store::write`].
    pub fn write(&self, batch: WriteBatch) -> shamba::Result<()> {
        self.store.write(batch)
    }

    /// Write `key` = `value` (take [`Selected::lock`] first when the value depends on a
    /// read).
    ///
    /// # Errors
    ///
    /// As [`Store::write`].
    pub fn put(&self, key: &[u8], value: &[u8]) -> shamba::Result<()> {
        let mut b = WriteBatch::new();
        b.put_in(self.ks, key, value);
        self.write(b)
    }

    /// The engine's counters with this database's tree.
    pub fn stats(&self) -> Stats {
        self.ks.stats()
    }
}
