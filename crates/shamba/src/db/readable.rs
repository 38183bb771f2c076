//! One way to read: the [`Readable`] trait every reader implements ([`Db`](crate::Db),
//! [`Keyspace`](crate::Keyspace), [`Snapshot`](crate::Snapshot),
//! [`Transaction`](crate::Transaction), [`TxKeyspace`](crate::TxKeyspace)). A reader says only what
//! it reads, through its `read_view`: a tree, at the latest sequence number
//! or a pinned one. The reads are written once, here, over that view.

use super::inner::DbInner;
use super::iter::{prefix_range, DbIterator};
use super::tree::Tree;
use crate::error::{Error, Result};
use crate::expiry::Ttl;
use crate::key::SeqNo;
use crate::options::ReadOptions;
use std::ops::RangeBounds;

/// What a reader reads: one keyspace's tree of one database, at the latest sequence number
/// or a pinned one. Its type is not nameable outside the crate, so only this crate's
/// readers implement [`Readable`].
pub(crate) mod sealed {
    use super::{DbInner, SeqNo, Tree};

    /// The view of a reader: which tree, as of which moment. Not part of the API.
    #[derive(Clone, Copy)]
    pub struct View<'a> {
        pub(crate) inner: &'a DbInner,
        pub(crate) tree: &'a Tree,
        /// `None`: the latest data, read after the lookup takes its super version.
        pub(crate) seq: Option<SeqNo>,
        /// Set when the reader must refuse every read (a snapshot of a keyspace of another
        /// database): the name of that keyspace.
        pub(crate) refused: Option<&'a str>,
    }
}

use sealed::View;

impl View<'_> {
    pub(super) fn refusal(&self) -> Option<Error> {
        self.refused.map(|name| {
            Error::InvalidArgument(format!("keyspace {name:?} belongs to another database than this snapshot's"))
        })
    }

    fn get(&self, key: &[u8], ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        if let Some(e) = self.refusal() {
            return Err(e);
        }
        self.inner.get_at(self.tree, key, self.seq, ro)
    }

    fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K], ro: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>> {
        if let Some(e) = self.refusal() {
            return keys.iter().map(|_| Err(e.duplicate())).collect();
        }
        self.inner.multi_get_at(self.tree, keys, self.seq, ro)
    }

    fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: &R, ro: &ReadOptions) -> DbIterator {
        let seq = self.seq.unwrap_or_else(|| self.inner.visible_seq());
        let mut it = DbIterator::new(self.inner, self.tree, seq, range, ro.clone());
        if let Some(e) = self.refusal() {
            it.refuse(e);
        }
        it
    }
}

/// The reads every reader offers: [`Db`](crate::Db) (its default keyspace, the latest
/// data), [`Keyspace`](crate::Keyspace) (that keyspace, the latest data) and
/// [`Snapshot`](crate::Snapshot) (one keyspace as of the moment the snapshot was taken;
/// [`Snapshot::keyspace`](crate::Snapshot::keyspace) reads another at the same moment), and
/// [`Transaction`](crate::Transaction) (its snapshot with its own writes over it;
/// [`Transaction::keyspace`](crate::Transaction::keyspace) for another keyspace).
/// Bring it into scope to read: `use shamba::Readable;`.
///
/// Each read has a twin ending in `_opt` that takes [`ReadOptions`]. Reads of the latest
/// data see every write acknowledged before they start; a lookup or an iterator reads one
/// consistent state, however long it takes.
///
/// ```
/// use shamba::{Db, Options, Readable};
/// # let dir = tempfile::tempdir()?;
/// let db = Db::open(dir.path(), Options::default())?;
/// let users = db.keyspace("users")?;
/// users.put(b"u1", b"ada")?;
/// let snap = db.snapshot();
/// users.put(b"u1", b"grace")?;
///
/// // The number of users a reader sees, whichever reader it is.
/// fn count(r: &impl Readable) -> usize {
///     r.prefix(b"u").count()
/// }
/// assert_eq!(count(&users), 1);
/// assert_eq!(count(&db), 0, "the default keyspace is another one");
/// assert_eq!(snap.keyspace(&users).get(b"u1")?.as_deref(), Some(&b"ada"[..]));
/// assert_eq!(users.get(b"u1")?.as_deref(), Some(&b"grace"[..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Only this crate's readers implement it (its one required method returns a type no other
/// crate can name); every read is a provided method, so a reader that adds to what it reads
/// (a transaction's own writes over its snapshot) overrides [`get_opt`](Readable::get_opt),
/// [`multi_get_opt`](Readable::multi_get_opt) and [`range_opt`](Readable::range_opt), and
/// the others follow. The generic keys make it unusable as `dyn Readable`: take
/// `&impl Readable`.
pub trait Readable {
    /// What this reader reads. Not part of the API: call the reads below.
    #[doc(hidden)]
    fn read_view(&self) -> View<'_>;

    /// The value of `key`, or `None` when it is absent or deleted.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `key` is longer than
    ///   [`Options::max_key_size`](crate::Options::max_key_size), when the keyspace was
    ///   dropped, or when a snapshot reads a keyspace of another database.
    /// - [`Error::Closed`](crate::Error::Closed) after [`Db::close`](crate::Db::close). (A
    ///   background error makes the database read-only; reads go on.)
    /// - [`Error::Corruption`](crate::Error::Corruption), naming the file and offset, when a
    ///   table's footer or a block the lookup reads (filter, index or data) does not decode
    ///   or fails its checksum.
    /// - [`Error::Io`](crate::Error::Io) when the device fails opening or reading a table.
    fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// How long `key` lives: [`Ttl::Absent`] when no read finds it (absent, deleted or
    /// expired), [`Ttl::Persistent`] for a value written without an expiry, else the time
    /// left until its deadline by the database's [`Options::clock`](crate::Options::clock).
    ///
    /// ```
    /// use shamba::{Readable, Ttl};
    /// use std::time::Duration;
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// db.put_with_ttl(b"session", b"token", Duration::from_secs(60))?;
    /// db.put(b"name", b"ada")?;
    /// assert!(db.ttl(b"session")?.remaining().is_some_and(|d| d <= Duration::from_secs(60)));
    /// assert_eq!(db.ttl(b"name")?, Ttl::Persistent);
    /// assert_eq!(db.ttl(b"nobody")?, Ttl::Absent);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`get`](Readable::get).
    fn ttl(&self, key: impl AsRef<[u8]>) -> Result<Ttl> {
        self.ttl_opt(key, &ReadOptions::default())
    }

    /// [`ttl`](Readable::ttl) with read options.
    ///
    /// # Errors
    ///
    /// As [`get_opt`](Readable::get_opt).
    fn ttl_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Ttl> {
        self.read_view().ttl(key.as_ref(), ro)
    }

    /// [`get`](Readable::get) with read options.
    ///
    /// # Errors
    ///
    /// As [`get`](Readable::get); with `verify_checksums` false a damaged block is reported
    /// only when it does not decode.
    fn get_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.read_view().get(key.as_ref(), ro)
    }

    /// The values of `keys`, in their order (RocksDB's `MultiGet`): one result per key, as
    /// [`get`](Readable::get) would return it, all read at one moment. A key may appear
    /// more than once. Faster per key than as many gets: the filters of every key's
    /// candidate tables are prefetched together, and keys that fall in one data block
    /// share its read.
    ///
    /// Each key has its own result, so a table that fails to read costs only the keys that
    /// needed it: [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a key over
    /// [`Options::max_key_size`](crate::Options::max_key_size) (and for every key of a
    /// dropped keyspace, or of another database's), [`Error::Corruption`](crate::Error::Corruption)
    /// or [`Error::Io`](crate::Error::Io) for a key whose table blocks do not read, and
    /// [`Error::Closed`](crate::Error::Closed) for every key once the database is closed.
    ///
    /// ```
    /// use shamba::Readable;
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// db.put(b"a", b"1")?;
    /// db.put(b"c", b"3")?;
    /// let got = db.multi_get(&[&b"a"[..], b"b", b"c", b"a"]);
    /// let values: Vec<Option<Vec<u8>>> = got.into_iter().collect::<Result<_, _>>()?;
    /// assert_eq!(values, [Some(b"1".to_vec()), None, Some(b"3".to_vec()), Some(b"1".to_vec())]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    /// [`multi_get`](Readable::multi_get) with read options.
    fn multi_get_opt<K: AsRef<[u8]>>(&self, keys: &[K], ro: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>> {
        self.read_view().multi_get(keys, ro)
    }

    /// Every key-value pair, in key order (double-ended). Errors come as items: see
    /// [`DbIterator`].
    fn iter(&self) -> DbIterator {
        self.iter_opt(&ReadOptions::default())
    }

    /// [`iter`](Readable::iter) with read options (`fill_cache: false` for a scan that
    /// should not evict the working set, `readahead_size` for long ones).
    fn iter_opt(&self, ro: &ReadOptions) -> DbIterator {
        self.range_opt::<&[u8], _>(.., ro)
    }

    /// The pairs whose keys fall in `range`, in key order (double-ended). Errors come as
    /// items: see [`DbIterator`].
    ///
    /// ```
    /// use shamba::Readable;
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
    fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> DbIterator {
        self.range_opt(range, &ReadOptions::default())
    }

    /// [`range`](Readable::range) with read options.
    fn range_opt<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R, ro: &ReadOptions) -> DbIterator {
        self.read_view().range(&range, ro)
    }

    /// The pairs whose keys start with `prefix`, in key order (double-ended): `range` over
    /// `prefix..` up to the first key past every such key.
    ///
    /// ```
    /// use shamba::Readable;
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// for k in ["user:1", "user:2", "video:1"] {
    ///     db.put(k, b"v")?;
    /// }
    /// let mut users = db.prefix(b"user:");
    /// assert_eq!(users.next().transpose()?.map(|(k, _)| k), Some(b"user:1".to_vec()));
    /// users.seek(b"user:2");
    /// assert_eq!(users.next().transpose()?.map(|(k, _)| k), Some(b"user:2".to_vec()));
    /// assert!(users.next().is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn prefix(&self, prefix: impl AsRef<[u8]>) -> DbIterator {
        self.prefix_opt(prefix, &ReadOptions::default())
    }

    /// [`prefix`](Readable::prefix) with read options.
    fn prefix_opt(&self, prefix: impl AsRef<[u8]>, ro: &ReadOptions) -> DbIterator {
        self.range_opt(prefix_range(prefix.as_ref()), ro)
    }
}
