//! Snapshots: a sequence number pinned so compaction keeps what it can see.

use super::inner::DbInner;
use super::iter::DbIterator;
use super::keyspace::Keyspace;
use crate::error::Result;
use crate::key::SeqNo;
use crate::options::ReadOptions;
use std::ops::RangeBounds;
use std::sync::Arc;

/// A consistent read view of the database as of the moment it was taken.
///
/// While it lives, compaction keeps every version it can see. Reads through it never see
/// later writes.
pub struct Snapshot {
    inner: Arc<DbInner>,
    seq: SeqNo,
}

impl Snapshot {
    pub(crate) fn new(inner: Arc<DbInner>) -> Snapshot {
        let seq = inner.seq.pin();
        Snapshot { inner, seq }
    }

    /// The sequence number this snapshot reads at.
    pub fn sequence(&self) -> SeqNo {
        self.seq
    }

    /// The value of `key` as of this snapshot.
    ///
    /// # Errors
    ///
    /// As [`Db::get`](crate::Db::get): [`Error::InvalidArgument`](crate::Error::InvalidArgument)
    /// for a key over `max_key_size`, [`Error::Closed`](crate::Error::Closed) once the
    /// database is closed, [`Error::Corruption`](crate::Error::Corruption) when a block
    /// read does not decode, [`Error::Io`](crate::Error::Io) when the device fails.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.inner.get_at(&self.inner.default, key.as_ref(), Some(self.seq), &ReadOptions::default())
    }

    /// The value of `key` as of this snapshot, with read options.
    ///
    /// # Errors
    ///
    /// As [`Snapshot::get`].
    pub fn get_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.inner.get_at(&self.inner.default, key.as_ref(), Some(self.seq), ro)
    }

    /// The values of `keys` as of this snapshot, in their order, one result per key (see
    /// [`Db::multi_get`](crate::Db::multi_get)).
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    /// [`Snapshot::multi_get`] with read options.
    pub fn multi_get_opt<K: AsRef<[u8]>>(&self, keys: &[K], ro: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>> {
        self.inner.multi_get_at(&self.inner.default, keys, Some(self.seq), ro)
    }

    /// Every key-value pair as of this snapshot, in key order. Errors come as items: see
    /// [`DbIterator`].
    pub fn iter(&self) -> DbIterator {
        self.range::<&[u8], _>(..)
    }

    /// The pairs whose keys are in `range`, as of this snapshot. Errors come as items: see
    /// [`DbIterator`].
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> DbIterator {
        DbIterator::new(&self.inner, &self.inner.default, self.seq, &range, ReadOptions::default())
    }

    /// The pairs whose keys start with `prefix`, as of this snapshot (see [`Db::prefix`](crate::Db::prefix)).
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> DbIterator {
        self.range(super::iter::prefix_range(prefix.as_ref()))
    }

    /// The value of `key` in keyspace `ks` as of this snapshot: one snapshot reads every
    /// keyspace at the same moment.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// let users = db.keyspace("users")?;
    /// users.put(b"u1", b"ada")?;
    /// let snap = db.snapshot();
    /// users.put(b"u1", b"grace")?;
    /// assert_eq!(snap.get_in(&users, b"u1")?.as_deref(), Some(&b"ada"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Snapshot::get`]; [`Error::InvalidArgument`](crate::Error::InvalidArgument)
    /// when `ks` belongs to another database or was dropped.
    pub fn get_in(&self, ks: &Keyspace, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.check_same_db(ks)?;
        self.inner.get_at(ks.tree(), key.as_ref(), Some(self.seq), &ReadOptions::default())
    }

    /// The values of `keys` in keyspace `ks` as of this snapshot, in their order (see
    /// [`Db::multi_get`](crate::Db::multi_get)).
    pub fn multi_get_in<K: AsRef<[u8]>>(&self, ks: &Keyspace, keys: &[K]) -> Vec<Result<Option<Vec<u8>>>> {
        if let Err(e) = self.check_same_db(ks) {
            return keys.iter().map(|_| Err(e.duplicate())).collect();
        }
        self.inner.multi_get_at(ks.tree(), keys, Some(self.seq), &ReadOptions::default())
    }

    /// The pairs of keyspace `ks` whose keys are in `range`, as of this snapshot. A
    /// keyspace of another database yields nothing.
    pub fn range_in<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, ks: &Keyspace, range: R) -> DbIterator {
        let same = self.check_same_db(ks).is_ok();
        let tree = if same { ks.tree() } else { &self.inner.default };
        let mut it = DbIterator::new(&self.inner, tree, self.seq, &range, ReadOptions::default());
        if !same {
            it.close();
        }
        it
    }

    /// Every pair of keyspace `ks` as of this snapshot.
    pub fn iter_in(&self, ks: &Keyspace) -> DbIterator {
        self.range_in::<&[u8], _>(ks, ..)
    }

    fn check_same_db(&self, ks: &Keyspace) -> Result<()> {
        if ks.db_identity() != self.inner.number {
            return Err(crate::Error::InvalidArgument(format!(
                "keyspace {:?} belongs to another database than this snapshot's",
                ks.name()
            )));
        }
        Ok(())
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.inner.seq.unpin(self.seq);
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("seq", &self.seq).finish()
    }
}
