//! One node's storage: a shamba database holding the Raft log, the vote and the state
//! machine, and a folder of snapshot files beside it.
//!
//! ```text
//! DIR/db/         the database: keyspaces raft_log, raft_meta and the user's
//! DIR/snapshots/  the current snapshot file (*.snap), and files being received (*.part)
//! ```

use crate::codec::{self, LOG_KEYSPACE, META_KEYSPACE};
use crate::error::corrupt;
use crate::flusher::Flusher;
use crate::log_store::LogStore;
use crate::state_machine::StateMachine;
use crate::types::is_reserved;
use serde::de::DeserializeOwned;
use shamba::{Db, Keyspace, Options, Readable};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// How a [`Store`] opens.
#[derive(Clone)]
pub struct StoreOptions {
    /// The database's options (tune its memtable, cache, or give it a simulated disk in
    /// tests). `create_if_missing` is what it says.
    pub db: Options,
    /// An installed snapshot is loaded in write batches of about this many bytes, so its
    /// size bounds neither the memory of the install nor that of a batch. Default: 4 MiB.
    pub load_batch_bytes: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions { db: Options::default(), load_batch_bytes: 4 << 20 }
    }
}

/// A node's storage, opened from its directory. Give [`Store::log_store`] and
/// [`Store::state_machine`] to `openraft::Raft::new`; read the replicated data through
/// [`Store::keyspace`] (after `raft.ensure_linearizable()` for a linearizable read).
///
/// Clones share the database. Dropping every handle (the store, its log store and state
/// machine, and whatever `Raft` holds them) closes the database; nothing acknowledged is
/// lost by a drop without [`Store::close`].
#[derive(Clone)]
pub struct Store {
    shared: Arc<Shared>,
    flusher: Flusher,
}

/// What the log store and the state machine share.
pub(crate) struct Shared {
    pub(crate) db: Db,
    pub(crate) log: Keyspace,
    pub(crate) meta: Keyspace,
    pub(crate) snapshot_dir: PathBuf,
    pub(crate) max_key_size: usize,
    pub(crate) max_value_size: usize,
    pub(crate) load_batch_bytes: usize,
    /// Held by a snapshot install for its whole run and by a snapshot build while it takes
    /// its view, so a build never reads a half-installed state machine.
    state_lock: Mutex<()>,
    /// Makes file names unique within the process (with the time, across restarts).
    names: AtomicU64,
}

impl Store {
    /// Open (or create) the storage in `dir`. A snapshot install that a crash interrupted
    /// is finished first, from the file it kept; snapshot files that are not the current
    /// one are removed.
    ///
    /// # Errors
    ///
    /// As [`Db::open`]; [`shamba::Error::Io`] when the snapshot folder cannot be made or
    /// read; [`shamba::Error::Corruption`] when a record of the storage's own (or the kept
    /// snapshot file of an interrupted install) does not decode.
    pub fn open(dir: &Path, opts: StoreOptions) -> shamba::Result<Store> {
        let snapshot_dir = dir.join("snapshots");
        std::fs::create_dir_all(&snapshot_dir)?;
        let max_key_size = opts.db.max_key_size;
        let max_value_size = opts.db.max_value_size;
        let db = Db::open(dir.join("db"), opts.db)?;
        let log = db.keyspace(LOG_KEYSPACE)?;
        let meta = db.keyspace(META_KEYSPACE)?;
        let shared = Arc::new(Shared {
            db,
            log,
            meta,
            snapshot_dir,
            max_key_size,
            max_value_size,
            load_batch_bytes: opts.load_batch_bytes.max(1),
            state_lock: Mutex::new(()),
            names: AtomicU64::new(0),
        });
        crate::install::finish_interrupted(&shared)?;
        crate::snapshot_files::remove_stale(&shared)?;
        Ok(Store { shared, flusher: Flusher::start()? })
    }

    /// The Raft log and vote, for `openraft::Raft::new`.
    pub fn log_store(&self) -> LogStore {
        LogStore::new(self.shared.clone(), self.flusher.clone())
    }

    /// The state machine and its snapshots, for `openraft::Raft::new`.
    pub fn state_machine(&self) -> StateMachine {
        StateMachine::new(self.shared.clone())
    }

    /// The database. Its keyspaces named `raft_…` belong to the storage: write to the others
    /// only through the Raft log, or the nodes' data part ways.
    pub fn db(&self) -> &Db {
        &self.shared.db
    }

    /// A user keyspace of the state machine, to read (`None`: the default one). Created if it
    /// does not exist yet, as the first command writing to it would.
    ///
    /// # Errors
    ///
    /// [`shamba::Error::InvalidArgument`] for a reserved name (`raft_…`); as
    /// [`Db::keyspace`] otherwise.
    pub fn keyspace(&self, name: Option<&str>) -> shamba::Result<Keyspace> {
        self.shared.user_keyspace(name)
    }

    /// The names of the state machine's keyspaces: `"default"` first, then the others the
    /// commands created, in name order.
    pub fn keyspace_names(&self) -> Vec<String> {
        self.shared.user_keyspace_names()
    }

    /// Where the snapshot files are.
    pub fn snapshot_dir(&self) -> &Path {
        &self.shared.snapshot_dir
    }

    /// Write-ahead log syncs the log store's appends made so far: each one made every
    /// append waiting durable at once.
    pub fn log_syncs(&self) -> u64 {
        self.flusher.syncs()
    }

    /// Close the database now (every handle of it fails afterwards): the write-ahead log is
    /// synced and the directory released.
    ///
    /// # Errors
    ///
    /// As [`Db::close`].
    pub fn close(self) -> shamba::Result<()> {
        self.shared.db.clone().close()
    }
}

/// The keyspace name an op's `keyspace` field means.
pub(crate) fn keyspace_name(name: Option<&str>) -> &str {
    name.unwrap_or("default")
}

impl Shared {
    pub(crate) fn user_keyspace(&self, name: Option<&str>) -> shamba::Result<Keyspace> {
        let name = keyspace_name(name);
        if is_reserved(name) {
            return Err(shamba::Error::InvalidArgument(format!("keyspace {name:?} belongs to the replication log")));
        }
        self.db.keyspace(name)
    }

    pub(crate) fn user_keyspace_names(&self) -> Vec<String> {
        self.db.keyspace_names().into_iter().filter(|n| !is_reserved(n)).collect()
    }

    /// A `raft_meta` record, read from `reader` (the keyspace, or a snapshot of it).
    pub(crate) fn read_meta<T: DeserializeOwned>(
        &self,
        reader: &impl Readable,
        key: &[u8],
    ) -> shamba::Result<Option<T>> {
        match reader.get(key)? {
            None => Ok(None),
            Some(bytes) => codec::decode(&bytes).map(Some).map_err(|e| self.corrupt_meta(key, e)),
        }
    }

    /// The error for a `raft_meta` record that does not decode.
    pub(crate) fn corrupt_meta(&self, key: &[u8], reason: String) -> shamba::Error {
        corrupt(self.db.path(), format!("{META_KEYSPACE} record {}: {reason}", String::from_utf8_lossy(key)))
    }

    /// Lock the state machine against a concurrent snapshot build or install.
    pub(crate) fn lock_state(&self) -> MutexGuard<'_, ()> {
        // The guarded value is `()`: a panic while holding it leaves nothing half-changed
        // in memory, so a poisoned lock is taken as it is.
        self.state_lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A file name no other file of this store has: `prefix-<time>-<counter>.ext`.
    pub(crate) fn unique_name(&self, prefix: &str, ext: &str) -> String {
        format!("{prefix}-{}.{ext}", self.unique())
    }

    /// A string no other call returns, in this process or (by the time) an earlier one.
    pub(crate) fn unique(&self) -> String {
        let n = self.names.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        format!("{nanos}-{n}")
    }
}

/// Encode a record of the storage's own (bincode fails only on types serde cannot write,
/// which ours are not: an error here is a bug).
pub(crate) fn encode<T: serde::Serialize>(what: &str, value: &T) -> shamba::Result<Vec<u8>> {
    codec::encode(value).map_err(|e| shamba::Error::Internal { what: format!("{what}: {e}") })
}
