//! Keyspaces (RocksDB's column families): named trees in one database, sharing its WAL,
//! sequence numbers, snapshots, block cache and memtable budget; each with its own
//! memtables, levels, compactions and filter manager (`tree.rs`). [`Keyspace`] is the
//! handle; creating and dropping them is here too.

use super::batch::KeyspaceId;
use super::inner::DbInner;
use super::open::DEFAULT_NAME;
use super::readable::{sealed::View, Readable};
use super::super_version::SuperVersion;
use super::tree::Tree;
use super::{Db, FileInfo, WriteBatch};
use crate::error::{Error, Result};
use crate::memtable::MemTable;
use crate::options::KeyspaceOptions;
use crate::stats::Stats;
use crate::version::{KeyspaceRecord, VersionEdit, DEFAULT_KEYSPACE};
use std::ops::RangeBounds;
use std::sync::Arc;

/// A named keyspace of a [`Db`]: its own sorted key space, with its own options, levels and
/// compactions, written atomically with the others through one WAL
/// ([`WriteBatch::put_in`]), read through [`Readable`] (the latest data) and at one
/// moment with them through a [`Snapshot`](crate::Snapshot) (its
/// [`keyspace`](crate::Snapshot::keyspace)).
///
/// Cheap to clone, `Send + Sync`; it keeps the database open while it lives. After
/// [`Db::drop_keyspace`] its operations fail with
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) and its iterators yield that
/// error first, then end.
///
/// ```
/// use shamba::Readable;
/// # let dir = tempfile::tempdir()?;
/// let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
/// let users = db.keyspace("users")?;
/// let logs = db.keyspace("logs")?;
/// users.put(b"k", b"user")?;
/// logs.put(b"k", b"log")?;
/// assert_eq!(users.get(b"k")?.as_deref(), Some(&b"user"[..]));
/// assert_eq!(db.get(b"k")?, None, "the default keyspace is another one");
/// assert_eq!(db.keyspace_names(), ["default", "logs", "users"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Keyspace {
    pub(super) db: Db,
    tree: Arc<Tree>,
}

impl std::fmt::Debug for Keyspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyspace").field("name", &self.tree.name).field("db", &self.db.inner.dir).finish()
    }
}

impl Keyspace {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.tree.name
    }

    pub(crate) fn tree(&self) -> &Arc<Tree> {
        &self.tree
    }

    /// The number of its open database (`DbInner::number`), which batches and snapshots
    /// check.
    pub(crate) fn db_identity(&self) -> u64 {
        self.db.inner.number
    }

    /// How a batch names it.
    pub(super) fn batch_id(&self) -> KeyspaceId {
        KeyspaceId { db: self.db.inner.number, id: self.tree.id }
    }

    /// The options it runs with.
    pub fn options(&self) -> KeyspaceOptions {
        KeyspaceOptions::of(&self.tree.opts)
    }

    /// Set `key` to `value` in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Db::put`]; [`Error::InvalidArgument`](crate::Error::InvalidArgument) once the
    /// keyspace is dropped.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put_in(self, key, value);
        self.db.write(b)
    }

    /// Delete `key` from this keyspace (a no-op if absent).
    ///
    /// # Errors
    ///
    /// As [`Keyspace::put`].
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_in(self, key);
        self.db.write(b)
    }

    /// Delete every key of this keyspace in `range`, with one record (see
    /// [`Db::delete_range`]).
    ///
    /// # Errors
    ///
    /// As [`Keyspace::put`].
    pub fn delete_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_range_in(self, range);
        self.db.write(b)
    }

    /// Flush, then merge every table of this keyspace into one run of its deepest level.
    ///
    /// # Errors
    ///
    /// As [`Db::compact`].
    pub fn compact(&self) -> Result<()> {
        if self.tree.is_dropped() {
            return Err(self.tree.dropped_error());
        }
        self.db.inner.compact_all(std::slice::from_ref(&self.tree))
    }

    /// The database's counters with this keyspace's tree: its levels, memtables, range
    /// tombstones and lookup counters.
    pub fn stats(&self) -> Stats {
        self.db.stats_of(&self.tree)
    }

    /// The table files of this keyspace's current version, as [`Db::files`] lists the
    /// default keyspace's (empty once the keyspace is dropped).
    pub fn files(&self) -> Vec<FileInfo> {
        if self.tree.is_dropped() {
            return Vec::new();
        }
        let sv = self.tree.super_version();
        sv.version.all_files().map(|(level, f)| FileInfo::of(level, f)).collect()
    }
}

/// The batch operations that name a keyspace by its handle: the batch keeps only its id
/// (`batch.rs` is plain data, below the handles).
impl WriteBatch {
    /// Add a put of `key` to `value` in keyspace `ks`: the batch stays atomic across
    /// keyspaces (one WAL record).
    ///
    /// The batch keeps the keyspace's id, not the handle: [`Db::write`] refuses the whole
    /// batch with [`Error::InvalidArgument`](crate::Error::InvalidArgument), naming the
    /// keyspace, if it is dropped by then or belongs to another database.
    ///
    /// ```
    /// # use shamba::Readable;
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// let users = db.keyspace("users")?;
    /// let mut batch = shamba::WriteBatch::new();
    /// batch.put_in(&users, b"u1", b"ada").put(b"count", b"1");
    /// db.write(batch)?;
    /// assert_eq!(users.get(b"u1")?.as_deref(), Some(&b"ada"[..]));
    /// assert_eq!(db.get(b"u1")?, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn put_in(&mut self, ks: &Keyspace, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> &mut Self {
        self.put_to_keyspace(ks.batch_id(), key.as_ref(), value.as_ref())
    }

    /// Add a delete of `key` in keyspace `ks`.
    pub fn delete_in(&mut self, ks: &Keyspace, key: impl AsRef<[u8]>) -> &mut Self {
        self.delete_to_keyspace(ks.batch_id(), key.as_ref())
    }

    /// Add a delete of every key in `range` in keyspace `ks` (see
    /// [`delete_range`](Self::delete_range)).
    pub fn delete_range_in<K: AsRef<[u8]>, R: RangeBounds<K>>(&mut self, ks: &Keyspace, range: R) -> &mut Self {
        self.delete_range_to_keyspace(ks.batch_id(), &range)
    }
}

/// This keyspace, the latest data.
impl Readable for Keyspace {
    fn read_view(&self) -> View<'_> {
        View { inner: &self.db.inner, tree: &self.tree, seq: None, refused: None }
    }
}

impl Db {
    /// The keyspace `name`, created if it does not exist: with the options
    /// [`Options::keyspace_options`](crate::Options::keyspace_options) names for it, or
    /// else the database's. `"default"` is the keyspace of `Db`'s own methods.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidArgument`](crate::Error::InvalidArgument) for an empty name or
    ///   one longer than 255 bytes.
    /// - [`Error::Io`](crate::Error::Io) when logging its creation in the manifest fails
    ///   (writes then stop until [`Db::resume`] or a reopen, as for a failed drop);
    ///   [`Error::Closed`](crate::Error::Closed) after [`Db::close`], or
    ///   [`Error::ReadOnly`](crate::Error::ReadOnly) after a background error, when it
    ///   must be created.
    pub fn keyspace(&self, name: &str) -> Result<Keyspace> {
        if let Some(tree) = self.inner.trees.named(name) {
            return Ok(Keyspace { db: self.clone(), tree });
        }
        let opts = match self.inner.opts.keyspace_options.iter().find(|(n, _)| n == name) {
            Some((_, ks)) => ks.clone(),
            None => KeyspaceOptions::inherited(&self.inner.opts),
        };
        self.keyspace_with(name, opts)
    }

    /// The keyspace `name` with options `opts`: created with them if it does not exist;
    /// if it does, `opts` must be the options it runs with.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidOptions`](crate::Error::InvalidOptions) when `opts` fails
    ///   validation, or the keyspace exists with other options (its shape is fixed when it
    ///   is created; the rest is set at open through
    ///   [`Options::keyspace_options`](crate::Options::keyspace_options)).
    /// - As [`Db::keyspace`] otherwise.
    pub fn keyspace_with(&self, name: &str, opts: KeyspaceOptions) -> Result<Keyspace> {
        check_name(name)?;
        let tree = self.inner.create_keyspace(name, opts)?;
        Ok(Keyspace { db: self.clone(), tree })
    }

    /// Drop the keyspace `name`: its data is gone at once (its handles fail and its
    /// iterators end), its tables are deleted once no reader holds them, and a reopen
    /// never sees it again. Writes to it that a batch holds are refused.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidArgument`](crate::Error::InvalidArgument) for `"default"` or a
    ///   name no keyspace has.
    /// - [`Error::Io`](crate::Error::Io) when logging the drop in the manifest fails. The
    ///   drop may or may not be on disk then: writes stop (later ones fail with
    ///   [`Error::ReadOnly`](crate::Error::ReadOnly)) until [`Db::resume`] keeps the
    ///   keyspace, or a reopen finds it whole or gone.
    /// - [`Error::Closed`](crate::Error::Closed) after [`Db::close`];
    ///   [`Error::ReadOnly`](crate::Error::ReadOnly) after a background error.
    pub fn drop_keyspace(&self, name: &str) -> Result<()> {
        self.inner.drop_keyspace(name)
    }

    /// The names of every keyspace, `"default"` first, then the others in name order.
    pub fn keyspace_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.inner.trees.all().iter().map(|t| t.name.clone()).collect();
        names.sort_by(|a, b| (a != DEFAULT_NAME, a).cmp(&(b != DEFAULT_NAME, b)));
        names
    }
}

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > 255 {
        return Err(Error::InvalidArgument(format!("a keyspace name is 1 to 255 bytes, got {} bytes", name.len())));
    }
    Ok(())
}

impl DbInner {
    /// The keyspace `name` with `opts`: its tree if it exists with them, else a new one,
    /// created with no write in flight (so the WAL it starts from holds none of its
    /// records) and logged in the manifest before any write can name it.
    fn create_keyspace(&self, name: &str, opts: KeyspaceOptions) -> Result<Arc<Tree>> {
        self.check_open()?;
        let tree_opts = opts.over(&self.opts);
        tree_opts.validate()?;
        self.queue.with_lead(|| {
            if let Some(tree) = self.trees.named(name) {
                if KeyspaceOptions::of(&tree.opts) != opts {
                    return Err(Error::InvalidOptions(format!(
                        "keyspace {name:?} exists with other options ({:?}); its shape is fixed when it is created, the rest is set at open by Options::keyspace_options",
                        KeyspaceOptions::of(&tree.opts)
                    )));
                }
                return Ok(tree);
            }
            self.check_writable()?;
            let record = KeyspaceRecord { name: name.to_string(), style: opts.compaction_style, size_ratio: opts.size_ratio };
            let mut versions = self.versions.lock();
            let id = versions.next_keyspace();
            let wal_number = self.wal.number();
            versions
                .log_and_apply(VersionEdit {
                    keyspace: id,
                    create_keyspace: Some(record.clone()),
                    log_number: Some(wal_number),
                    ..VersionEdit::default()
                })
                .inspect_err(|e| self.stop_writes_after_manifest_failure(e))?;
            let version = versions.current(id).ok_or_else(|| Error::internal(format!("keyspace {name:?} has no version after its creation")))?;
            let sv = SuperVersion::new(Arc::new(MemTable::new(wal_number)), Vec::new(), version, None, &tree_opts);
            let tree = Arc::new(Tree::new(id, name.to_string(), tree_opts, sv, self.trees.ledger.clone()));
            self.trees.add(tree.clone());
            Ok(tree)
        })
    }

    /// After a failed manifest write of a keyspace's creation or drop, the record may be on
    /// disk or not: writes stop (as after a failed flush or compaction edit) until
    /// [`resume`](Db::resume) starts a fresh manifest from what is in memory, or a reopen
    /// reads what the disk holds. Otherwise a write acknowledged to a keyspace whose drop
    /// failed could be lost with it at the next reopen. An edit refused before anything
    /// was written (`InvalidArgument`) changes nothing.
    fn stop_writes_after_manifest_failure(&self, e: &Error) {
        if !matches!(e, Error::InvalidArgument(_)) {
            self.bg.set_error(e.duplicate());
        }
    }

    /// Drop the keyspace `name`, with no write, flush or compaction in flight.
    fn drop_keyspace(&self, name: &str) -> Result<()> {
        self.check_writable()?;
        if name == DEFAULT_NAME {
            return Err(Error::InvalidArgument("the default keyspace cannot be dropped".into()));
        }
        self.queue.with_lead(|| {
            let _compaction = self.bg.compaction.lock();
            let _flushing = self.bg.flushing.lock();
            let tree = self
                .trees
                .named(name)
                .ok_or_else(|| Error::InvalidArgument(format!("no keyspace is named {name:?}")))?;
            let id = tree.id;
            debug_assert_ne!(id, DEFAULT_KEYSPACE);
            // The drop is this one record. Once it is durable the keyspace is gone, and only
            // then are its files deleted (a crash between leaves orphans, which the reopen's
            // obsolete-file pass deletes). If writing it fails, it may be on disk or not.
            self.versions
                .lock()
                .log_and_apply(VersionEdit { keyspace: id, drop_keyspace: true, ..VersionEdit::default() })
                .inspect_err(|e| self.stop_writes_after_manifest_failure(e))?;
            self.trees.remove(&tree);
            Ok::<_, Error>(())
        })?;
        self.delete_obsolete_files();
        Ok(())
    }
}
