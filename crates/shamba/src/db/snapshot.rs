//! Snapshots: a sequence number pinned so compaction keeps what it can see, and the
//! keyspace a snapshot reads at it.

use super::inner::DbInner;
use super::keyspace::Keyspace;
use super::readable::{sealed::View, Readable};
use super::tree::Tree;
use crate::key::SeqNo;
use std::sync::Arc;

/// A consistent read view of the database as of the moment it was taken: one keyspace
/// (the default one from [`Db::snapshot`](crate::Db::snapshot)) read through
/// [`Readable`], and every other one at the same moment through
/// [`keyspace`](Snapshot::keyspace).
///
/// While it, or a clone, or a snapshot of another keyspace made from it lives, compaction
/// keeps every version it can see. Reads through it never see later writes.
///
/// ```
/// use shamba::Readable;
/// # let dir = tempfile::tempdir()?;
/// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
/// db.put(b"k", b"v1")?;
/// let snap = db.snapshot();
/// db.put(b"k", b"v2")?;
/// assert_eq!(snap.get(b"k")?.as_deref(), Some(&b"v1"[..]));
/// assert_eq!(db.get(b"k")?.as_deref(), Some(&b"v2"[..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Snapshot {
    pin: Arc<Pin>,
    tree: Arc<Tree>,
    /// The name of a keyspace of another database this snapshot was asked to read: every
    /// read is then refused (the tree is this database's default one, never read).
    refused: Option<Arc<str>>,
}

/// A sequence number registered with the database, so compaction keeps what it sees; the
/// snapshots of every keyspace made from one share it, and the last to go releases it.
struct Pin {
    inner: Arc<DbInner>,
    seq: SeqNo,
}

impl Snapshot {
    pub(crate) fn new(inner: Arc<DbInner>) -> Snapshot {
        let seq = inner.seq.pin();
        let tree = inner.default.clone();
        Snapshot { pin: Arc::new(Pin { inner, seq }), tree, refused: None }
    }

    /// The sequence number this snapshot reads at.
    pub fn sequence(&self) -> SeqNo {
        self.pin.seq
    }

    /// The snapshot of keyspace `ks` at this snapshot's moment: one snapshot reads every
    /// keyspace at the same moment. The two share the pinned sequence number.
    ///
    /// ```
    /// use shamba::Readable;
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// let users = db.keyspace("users")?;
    /// users.put(b"u1", b"ada")?;
    /// db.put(b"count", b"1")?;
    /// let snap = db.snapshot();
    /// users.put(b"u1", b"grace")?;
    /// db.put(b"count", b"2")?;
    /// let users_then = snap.keyspace(&users);
    /// assert_eq!(users_then.get(b"u1")?.as_deref(), Some(&b"ada"[..]));
    /// assert_eq!(snap.get(b"count")?.as_deref(), Some(&b"1"[..]));
    /// assert_eq!(users_then.sequence(), snap.sequence());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// A keyspace of another database is not read: the snapshot's reads fail with
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument), and its iterators yield
    /// that error first, then end, as they do for a dropped keyspace.
    pub fn keyspace(&self, ks: &Keyspace) -> Snapshot {
        if ks.db_identity() != self.pin.inner.number {
            return Snapshot {
                pin: self.pin.clone(),
                tree: self.pin.inner.default.clone(),
                refused: Some(Arc::from(ks.name())),
            };
        }
        Snapshot { pin: self.pin.clone(), tree: ks.tree().clone(), refused: None }
    }
}

/// One keyspace as of the snapshot's moment.
impl Readable for Snapshot {
    fn read_view(&self) -> View<'_> {
        View { inner: &self.pin.inner, tree: &self.tree, seq: Some(self.pin.seq), refused: self.refused.as_deref() }
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        self.inner.seq.unpin(self.seq);
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("seq", &self.pin.seq).field("keyspace", &self.tree.name).finish()
    }
}

#[cfg(test)]
mod tests {
    use crate::db::{Db, Readable};
    use crate::options::Options;

    #[test]
    fn the_moment_is_released_when_its_last_snapshot_goes() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let ks = db.keyspace("ks").unwrap();
        let pinned = || db.inner.seq.pins();
        let snap = db.snapshot();
        let (of_ks, copy) = (snap.keyspace(&ks), snap.clone());
        assert_eq!(pinned(), 1, "one registration for the moment, however many snapshots read it");
        drop(snap);
        drop(of_ks);
        assert_eq!(pinned(), 1);
        assert_eq!(copy.get(b"k").unwrap(), None);
        drop(copy);
        assert_eq!(pinned(), 0);
    }
}
