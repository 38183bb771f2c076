//! The engine as the commands see it: the numbered databases (`databases`), reads and
//! writes of the selected one ([`Selected`]) with the server's durability, and striped key
//! locks that make read-modify-write commands atomic.
//!
//! A store is local (writes go to the engine) or replicated (`Store::replicated`: the
//! writes of a [`Batch`] become one `shamba_raft::Command` proposed to the group, and the
//! write returns once it is applied here; see `cluster`). Commands build a [`Batch`] either
//! way and do not know which.
//!
//! Every command that writes a key holds that key's stripe lock from its read (if any) to
//! its write, so `INCR` racing `INCR` (or `SET NX`, `APPEND`, `DEL`'s count) on one key
//! never loses an update; plain reads take no lock (each engine write is atomic, so a read
//! sees a key before or after it). Locks are taken in stripe order, so multi-key writers
//! (`MSET`, `DEL`) cannot deadlock. A stripe is chosen by database and key, so one key in two
//! databases is two keys.

use super::cluster::{Cluster, ClusterError};
use super::databases::{Collections, Databases};
use super::durability::{SyncMode, WriteTracker};
use super::no_wait;
use parking_lot::{Mutex, MutexGuard};
use shamba::{Db, DbIterator, Keyspace, Readable, Stats, Transaction, Ttl, WriteBatch};
use shamba_raft::{Command, Op};
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::Arc;
use std::time::SystemTime;

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
    /// Set in cluster mode: writes are proposed to the group.
    cluster: Option<Replication>,
    /// The compaction filters that read the database (let go of it on drop).
    filters: Option<Arc<crate::types::CollectionFilters>>,
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(f) = &self.filters {
            f.detach();
        }
    }
}

/// What a replicated store writes through.
struct Replication {
    cluster: Arc<Cluster>,
    max_key_size: usize,
    max_value_size: usize,
}

/// Why a write failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The engine refused or failed it.
    #[error(transparent)]
    Engine(#[from] shamba::Error),
    /// The group did not commit it (see [`ClusterError`]).
    #[error(transparent)]
    Cluster(#[from] ClusterError),
}

/// The writes of one command, applied together: an engine write batch on a local store,
/// the ops of one replicated command on a replicated one ([`Selected::batch`]).
pub struct Batch {
    inner: BatchInner,
}

enum BatchInner {
    Local(WriteBatch),
    Replicated(Vec<Op>),
    /// The writes of a command queued by MULTI, applied to EXEC's transaction.
    InTransaction(Vec<TxOp>),
    /// A write a replicated store cannot carry (a put that expires): refused by `write`.
    Refused(&'static str),
    /// A read the batch depended on failed: refused by `write` with its text.
    Failed(shamba::Error),
}

/// One write of a command run by EXEC, for its transaction.
enum TxOp {
    Put { ks: Keyspace, key: Vec<u8>, value: Vec<u8>, expires: Option<SystemTime> },
    Delete { ks: Keyspace, key: Vec<u8> },
    DeleteRange { ks: Keyspace, start: Vec<u8>, end: Vec<u8> },
    DeleteAll { ks: Keyspace },
}

impl TxOp {
    fn apply(self, tx: &Transaction) -> shamba::Result<()> {
        match self {
            TxOp::Put { ks, key, value, expires: None } => tx.keyspace(&ks).put(key, value),
            TxOp::Put { ks, key, value, expires: Some(at) } => tx.keyspace(&ks).put_with_expiry(key, value, at),
            TxOp::Delete { ks, key } => tx.keyspace(&ks).delete(key),
            TxOp::DeleteRange { ks, start, end } => tx.keyspace(&ks).delete_range(start..end),
            TxOp::DeleteAll { ks } => tx.keyspace(&ks).delete_range::<&[u8], _>(..),
        }
    }
}

/// What a command run in cluster mode answers when it would give a key a deadline.
pub(crate) const NO_EXPIRY_IN_CLUSTER: &str =
    "expiry is not supported in cluster mode (keys of a replicated store never expire)";

impl Batch {
    /// Add a put of `key` in database `db`.
    /// A collection of the same name is deleted with it (see `types`).
    pub fn put(&mut self, db: &Selected<'_>, key: &[u8], value: &[u8]) {
        self.replace_collection(db, key);
        match &mut self.inner {
            BatchInner::Local(b) => {
                b.put_in(db.ks, key, value);
            }
            BatchInner::Replicated(ops) => {
                ops.push(Op::Put { keyspace: named_keyspace(db.ks), key: key.to_vec(), value: value.to_vec() })
            }
            BatchInner::InTransaction(ops) => {
                ops.push(TxOp::Put { ks: db.ks.clone(), key: key.to_vec(), value: value.to_vec(), expires: None })
            }
            BatchInner::Refused(_) | BatchInner::Failed(_) => {}
        }
    }

    /// Add a put of `key` in database `db` that expires at `at` (a time already past: a
    /// key no read finds). A replicated store refuses the batch (see `cluster`).
    pub fn put_expiring(&mut self, db: &Selected<'_>, key: &[u8], value: &[u8], at: SystemTime) {
        self.replace_collection(db, key);
        match &mut self.inner {
            BatchInner::Local(b) => {
                b.put_with_expiry_in(db.ks, key, value, at);
            }
            BatchInner::Replicated(_) => self.inner = BatchInner::Refused(NO_EXPIRY_IN_CLUSTER),
            BatchInner::InTransaction(ops) => {
                ops.push(TxOp::Put { ks: db.ks.clone(), key: key.to_vec(), value: value.to_vec(), expires: Some(at) })
            }
            BatchInner::Refused(_) | BatchInner::Failed(_) => {}
        }
    }

    /// Add a delete of `key` in database `db`.
    pub fn delete(&mut self, db: &Selected<'_>, key: &[u8]) {
        match &mut self.inner {
            BatchInner::Local(b) => {
                b.delete_in(db.ks, key);
            }
            BatchInner::Replicated(ops) => ops.push(Op::Delete { keyspace: named_keyspace(db.ks), key: key.to_vec() }),
            BatchInner::InTransaction(ops) => ops.push(TxOp::Delete { ks: db.ks.clone(), key: key.to_vec() }),
            BatchInner::Refused(_) | BatchInner::Failed(_) => {}
        }
    }

    /// Add a put of `key` in keyspace `ks` (a database's collection keyspaces, see
    /// `types`).
    pub(crate) fn put_in(&mut self, ks: &Keyspace, key: &[u8], value: &[u8]) {
        match &mut self.inner {
            BatchInner::Local(b) => {
                b.put_in(ks, key, value);
            }
            BatchInner::Replicated(ops) => {
                ops.push(Op::Put { keyspace: named_keyspace(ks), key: key.to_vec(), value: value.to_vec() })
            }
            BatchInner::InTransaction(ops) => {
                ops.push(TxOp::Put { ks: ks.clone(), key: key.to_vec(), value: value.to_vec(), expires: None })
            }
            BatchInner::Refused(_) | BatchInner::Failed(_) => {}
        }
    }

    /// Add a delete of `key` in keyspace `ks`.
    pub(crate) fn delete_in(&mut self, ks: &Keyspace, key: &[u8]) {
        match &mut self.inner {
            BatchInner::Local(b) => {
                b.delete_in(ks, key);
            }
            BatchInner::Replicated(ops) => ops.push(Op::Delete { keyspace: named_keyspace(ks), key: key.to_vec() }),
            BatchInner::InTransaction(ops) => ops.push(TxOp::Delete { ks: ks.clone(), key: key.to_vec() }),
            BatchInner::Refused(_) | BatchInner::Failed(_) => {}
        }
    }

    /// Add the delete of the keys in `[start, end)` of keyspace `ks`: one range delete.
    pub(crate) fn delete_range_in(&mut self, ks: &Keyspace, start: &[u8], end: &[u8]) {
        match &mut self.inner {
            BatchInner::Local(b) => {
                b.delete_range_in(ks, start..end);
            }
            BatchInner::Replicated(ops) => {
                ops.push(Op::DeleteRange { keyspace: named_keyspace(ks), start: start.to_vec(), end: end.to_vec() })
            }
            BatchInner::InTransaction(ops) => {
                ops.push(TxOp::DeleteRange { ks: ks.clone(), start: start.to_vec(), end: end.to_vec() })
            }
            BatchInner::Refused(_) | BatchInner::Failed(_) => {}
        }
    }

    /// Add the delete of every key of database `index` (keyspace `ks`): one range delete.
    fn delete_all(&mut self, _index: usize, ks: &Keyspace, max_key_size: usize) {
        match &mut self.inner {
            BatchInner::Local(b) => {
                b.delete_range_in::<&[u8], _>(ks, ..);
            }
            BatchInner::Replicated(ops) => {
                // A command's range has an end: the longest key of 0xff bytes, which the
                // range leaves out, is deleted beside it.
                let last = vec![0xff; max_key_size];
                ops.push(Op::DeleteRange { keyspace: named_keyspace(ks), start: Vec::new(), end: last.clone() });
                ops.push(Op::Delete { keyspace: named_keyspace(ks), key: last });
            }
            BatchInner::InTransaction(ops) => ops.push(TxOp::DeleteAll { ks: ks.clone() }),
            BatchInner::Refused(_) | BatchInner::Failed(_) => {}
        }
    }

    /// Before a string put of `key`: add the delete of a collection named `key`, if the
    /// database ever held one (a probe of its metadata keyspace; none otherwise). A failed
    /// probe fails the batch.
    fn replace_collection(&mut self, db: &Selected<'_>, key: &[u8]) {
        if db.collections().is_none() || matches!(self.inner, BatchInner::Failed(_) | BatchInner::Refused(_)) {
            return;
        }
        if let Err(e) = crate::types::delete_collection(db, self, key) {
            self.inner = BatchInner::Failed(e);
        }
    }

    /// How many operations it holds.
    pub fn len(&self) -> usize {
        match &self.inner {
            BatchInner::Local(b) => b.len(),
            BatchInner::Replicated(ops) => ops.len(),
            BatchInner::InTransaction(ops) => ops.len(),
            // Not empty: `write` must see it to refuse it.
            BatchInner::Refused(_) | BatchInner::Failed(_) => 1,
        }
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The keyspace a replicated op names for keyspace `ks` (`None`: the default one).
fn named_keyspace(ks: &Keyspace) -> Option<String> {
    (ks.name() != "default").then(|| ks.name().to_string())
}

/// Held stripe locks ([`Selected::lock`]); the keys stay locked until it drops.
pub struct KeyLocks<'a> {
    guards: Vec<(usize, MutexGuard<'a, ()>)>,
}

thread_local! {
    /// The stripes this thread holds: a command asking again for a stripe the type check
    /// before it locked (see `types::string_guard`) is not made to wait on itself.
    static HELD: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Drop for KeyLocks<'_> {
    fn drop(&mut self) {
        HELD.with_borrow_mut(|held| held.retain(|i| !self.guards.iter().any(|(g, _)| g == i)));
    }
}

/// One database as a command sees it: the one its connection selected.
#[derive(Clone, Copy)]
pub struct Selected<'a> {
    store: &'a Store,
    index: usize,
    ks: &'a Keyspace,
    /// EXEC's transaction, when the command runs in one: reads go through it (seeing the
    /// queue's earlier writes), writes are buffered in it, and the keys are already locked.
    tx: Option<&'a Transaction>,
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
            cluster: None,
            filters: None,
        })
    }

    /// The compaction filters installed in `db`'s options, which the store lets go of
    /// the database when it drops.
    pub(crate) fn with_filters(mut self, filters: Arc<crate::types::CollectionFilters>) -> Store {
        self.filters = Some(filters);
        self
    }

    /// The store of a cluster node over `db` (the database of its Raft storage): its
    /// writes are proposed through `cluster`, which must lead the group for them to
    /// succeed. `max_key_size` and `max_value_size` are the engine's: a command over them
    /// is refused before it is proposed.
    ///
    /// # Errors
    ///
    /// As [`Store::new`].
    pub fn replicated(
        db: Db,
        cluster: Arc<Cluster>,
        databases: usize,
        max_key_size: usize,
        max_value_size: usize,
    ) -> shamba::Result<Store> {
        let mut store = Store::new(db, SyncMode::Always, databases)?;
        store.databases.create_all_collections()?;
        store.cluster = Some(Replication { cluster, max_key_size, max_value_size });
        Ok(store)
    }

    /// The node this store replicates through, in cluster mode.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.as_ref().map(|r| &r.cluster)
    }

    /// An empty batch of writes for this store.
    pub fn batch(&self) -> Batch {
        let inner = match self.cluster {
            None => BatchInner::Local(WriteBatch::new()),
            Some(_) => BatchInner::Replicated(Vec::new()),
        };
        Batch { inner }
    }

    /// Add the delete of every key of database `index` (keyspace `ks`) to `batch`.
    /// Its collections (see `types`) go with it.
    pub(super) fn delete_all(&self, batch: &mut Batch, index: usize, ks: &Keyspace) {
        let max = self.cluster.as_ref().map_or(0, |r| r.max_key_size);
        batch.delete_all(index, ks, max);
        if let Some(c) = self.databases.collections(index) {
            batch.delete_all(index, &c.meta, max);
            batch.delete_all(index, &c.fields, max);
        }
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
        Some(self.databases.get(index)?.map(|ks| Selected { store: self, index, ks, tx: None }))
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
    /// otherwise. On a replicated store: proposed as one command, returning once the group
    /// committed it (its log entry durable on a majority) and this node applied it.
    ///
    /// # Errors
    ///
    /// As [`Db::write_opt`]; [`WriteError::Cluster`] when the group did not commit it.
    pub fn write(&self, batch: Batch) -> Result<(), WriteError> {
        if batch.is_empty() {
            return Ok(());
        }
        match (batch.inner, &self.cluster) {
            (BatchInner::Local(b), _) => {
                // On a connection's own task: no stall waited out, no sync (see `no_wait`).
                let wo = no_wait::write_options(self.sync == SyncMode::Always)?;
                let written = self.db.write_opt(b, &wo);
                no_wait::saw(&written);
                written?;
                self.tracker.wrote();
                no_wait::wrote();
                Ok(())
            }
            (BatchInner::Replicated(ops), Some(r)) => {
                let command = Command { ops };
                // Refused here rather than applied as a no-op on every node.
                if let Err(why) = command.validate(r.max_key_size, r.max_value_size) {
                    return Err(shamba::Error::InvalidArgument(why).into());
                }
                let response = r.cluster.write(command)?;
                match response.error {
                    None => Ok(()),
                    Some(why) => Err(shamba::Error::InvalidArgument(why).into()),
                }
            }
            (BatchInner::Replicated(_), None) => {
                Err(ClusterError::Failed("a replicated batch given to a local store".into()).into())
            }
            (BatchInner::Refused(why), _) => Err(shamba::Error::InvalidArgument(why.to_string()).into()),
            (BatchInner::Failed(e), _) => Err(e.into()),
            (BatchInner::InTransaction(_), _) => {
                Err(ClusterError::Failed("a transaction's batch written outside its transaction".into()).into())
            }
        }
    }

    /// Write `batches` (already under their keys' locks), one after another; on a
    /// replicated store they are proposed together (in order) and then waited for, so they
    /// share replication rounds and syncs. Answers each one's outcome.
    pub fn write_each(&self, batches: Vec<Batch>) -> Vec<Result<(), WriteError>> {
        let Some(r) = &self.cluster else {
            return batches.into_iter().map(|b| self.write(b)).collect();
        };
        let mut results: Vec<Option<Result<(), WriteError>>> = Vec::with_capacity(batches.len());
        let mut commands = Vec::with_capacity(batches.len());
        for b in batches {
            match b.inner {
                BatchInner::Replicated(ops) if !ops.is_empty() => {
                    let command = Command { ops };
                    match command.validate(r.max_key_size, r.max_value_size) {
                        Ok(()) => {
                            commands.push(command);
                            results.push(None);
                        }
                        Err(why) => results.push(Some(Err(shamba::Error::InvalidArgument(why).into()))),
                    }
                }
                _ => results.push(Some(Ok(()))),
            }
        }
        let mut proposed = r.cluster.write_each(commands).into_iter();
        results
            .into_iter()
            .map(|done| match done {
                Some(r) => r,
                None => match proposed.next() {
                    Some(Ok(response)) => match response.error {
                        None => Ok(()),
                        Some(why) => Err(shamba::Error::InvalidArgument(why).into()),
                    },
                    Some(Err(e)) => Err(e.into()),
                    None => Err(ClusterError::Failed("a proposal went unanswered".into()).into()),
                },
            })
            .collect()
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

    /// This database as a command run by EXEC sees it: through `tx`, its keys locked
    /// already by EXEC.
    pub(crate) fn in_transaction(self, tx: &'a Transaction) -> Selected<'a> {
        Selected { tx: Some(tx), ..self }
    }

    /// Lock the stripes of `keys` in this database (in stripe order, each once). Inside
    /// EXEC, a no-op: EXEC holds the locks of every key its queue names.
    pub fn lock<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> KeyLocks<'a> {
        if self.tx.is_some() {
            return KeyLocks { guards: Vec::new() };
        }
        self.store.lock_stripes(keys.into_iter().map(|k| (self.index, k)))
    }
}

impl Store {
    /// Lock the stripes of `keys` (database, key), in stripe order, each once; the ones
    /// this thread already holds are left to their holder.
    pub(crate) fn lock_stripes<'k>(&self, keys: impl IntoIterator<Item = (usize, &'k [u8])>) -> KeyLocks<'_> {
        let mut idx: Vec<usize> = keys.into_iter().map(|(db, k)| Store::stripe(db, k)).collect();
        idx.sort_unstable();
        idx.dedup();
        HELD.with_borrow(|held| idx.retain(|i| !held.contains(i)));
        let guards: Vec<(usize, MutexGuard<'_, ()>)> =
            idx.into_iter().filter_map(|i| self.stripes.get(i).map(|m| (i, m.lock()))).collect();
        HELD.with_borrow_mut(|held| held.extend(guards.iter().map(|(i, _)| *i)));
        KeyLocks { guards }
    }
}

impl<'a> Selected<'a> {
    /// The value of `key`.
    ///
    /// # Errors
    ///
    /// As [`Keyspace::get`].
    pub fn get(&self, key: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        match self.tx {
            Some(tx) => tx.keyspace(self.ks).get(key),
            None => {
                let found = self.ks.get_opt(key, &no_wait::read_options());
                no_wait::saw(&found);
                found
            }
        }
    }

    /// The time to live of `key` (absent, persistent, or what remains).
    ///
    /// # Errors
    ///
    /// As [`Readable::ttl`].
    pub fn ttl(&self, key: &[u8]) -> shamba::Result<Ttl> {
        match self.tx {
            Some(tx) => tx.keyspace(self.ks).ttl(key),
            None => {
                let found = self.ks.ttl_opt(key, &no_wait::read_options());
                no_wait::saw(&found);
                found
            }
        }
    }

    /// Values of `keys`, in order, by one `multi_get` (every multi-key read: MGET,
    /// EXISTS, DEL's count); the first failed key fails the command.
    ///
    /// # Errors
    ///
    /// The first error of [`Keyspace::multi_get`].
    pub fn get_many<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> shamba::Result<Vec<Option<Vec<u8>>>> {
        let keys: Vec<&[u8]> = keys.into_iter().collect();
        match self.tx {
            Some(tx) => tx.keyspace(self.ks).multi_get(&keys).into_iter().collect(),
            None => {
                let found = self.ks.multi_get_opt(&keys, &no_wait::read_options()).into_iter().collect();
                no_wait::saw(&found);
                found
            }
        }
    }

    /// The pairs whose keys start with `prefix`.
    pub fn prefix(&self, prefix: &[u8]) -> DbIterator {
        match self.tx {
            Some(tx) => tx.keyspace(self.ks).prefix(prefix),
            // A refused step comes as an item; `commands::engine_error` notes it.
            None => self.ks.prefix_opt(prefix, &no_wait::read_options()),
        }
    }

    /// The pairs from `start` on, in key order.
    pub fn keys_from(&self, start: &[u8]) -> DbIterator {
        match self.tx {
            Some(tx) => tx.keyspace(self.ks).range(start..),
            None => self.ks.range_opt(start.., &no_wait::read_options()),
        }
    }

    /// The value of `key` in keyspace `ks` (one of this database's collection keyspaces),
    /// through EXEC's transaction when in one.
    ///
    /// # Errors
    ///
    /// As [`Keyspace::get`].
    pub(crate) fn get_in(&self, ks: &Keyspace, key: &[u8]) -> shamba::Result<Option<Vec<u8>>> {
        match self.tx {
            Some(tx) => tx.keyspace(ks).get(key),
            None => {
                let found = ks.get_opt(key, &no_wait::read_options());
                no_wait::saw(&found);
                found
            }
        }
    }

    /// Values of `keys` in keyspace `ks`, by one `multi_get`.
    ///
    /// # Errors
    ///
    /// The first error of [`Keyspace::multi_get`].
    pub(crate) fn get_many_in<'k>(
        &self,
        ks: &Keyspace,
        keys: impl IntoIterator<Item = &'k [u8]>,
    ) -> shamba::Result<Vec<Option<Vec<u8>>>> {
        let keys: Vec<&[u8]> = keys.into_iter().collect();
        match self.tx {
            Some(tx) => tx.keyspace(ks).multi_get(&keys).into_iter().collect(),
            None => {
                let found = ks.multi_get_opt(&keys, &no_wait::read_options()).into_iter().collect();
                no_wait::saw(&found);
                found
            }
        }
    }

    /// The pairs of keyspace `ks` whose keys start with `prefix`.
    pub(crate) fn prefix_in(&self, ks: &Keyspace, prefix: &[u8]) -> DbIterator {
        match self.tx {
            Some(tx) => tx.keyspace(ks).prefix(prefix),
            // A refused step comes as an item; `commands::engine_error` notes it.
            None => ks.prefix_opt(prefix, &no_wait::read_options()),
        }
    }

    /// This database's collection keyspaces, if it ever held a collection.
    pub(crate) fn collections(&self) -> Option<&'a Collections> {
        self.store.databases.collections(self.index)
    }

    /// This database's collection keyspaces, created on the first collection write.
    ///
    /// # Errors
    ///
    /// As [`Db::keyspace`] when they must be created.
    pub(crate) fn collections_or_create(&self) -> shamba::Result<&'a Collections> {
        match self.store.databases.collections_or_create(self.index) {
            Some(r) => r,
            None => Err(shamba::Error::InvalidArgument("DB index is out of range".into())),
        }
    }

    /// An empty batch of writes ([`Batch::put`], [`Batch::delete`]).
    pub fn batch(&self) -> Batch {
        match self.tx {
            Some(_) => Batch { inner: BatchInner::InTransaction(Vec::new()) },
            None => self.store.batch(),
        }
    }

    /// Write `batch` (already under its keys' locks) with the server's durability.
    ///
    /// # Errors
    ///
    /// As [`Store::write`].
    pub fn write(&self, batch: Batch) -> Result<(), WriteError> {
        // An empty batch changed nothing: no keyspace notification for it.
        let changes = !batch.is_empty();
        match (self.tx, batch.inner) {
            (Some(tx), BatchInner::InTransaction(ops)) => {
                for op in ops {
                    op.apply(tx)?;
                }
                Ok(())
            }
            (Some(_), BatchInner::Failed(e)) => Err(e.into()),
            (_, inner) => self.store.write(Batch { inner }),
        }
        .inspect(|()| {
            if changes {
                crate::notify::wrote();
            }
        })
    }

    /// Add the delete of every key of this database to `batch`: one range delete.
    pub fn delete_all(&self, batch: &mut Batch) {
        self.store.delete_all(batch, self.index, self.ks);
    }

    /// Write `key` = `value` (take [`Selected::lock`] first when the value depends on a
    /// read).
    ///
    /// # Errors
    ///
    /// As [`Store::write`].
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<(), WriteError> {
        let mut b = self.batch();
        b.put(self, key, value);
        self.write(b)
    }

    /// The engine's counters with this database's tree.
    pub fn stats(&self) -> Stats {
        self.ks.stats()
    }
}
