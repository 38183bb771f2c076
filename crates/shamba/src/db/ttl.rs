//! Expiry on the handles: puts with a time to live or a deadline (on `Db`, `Keyspace`, in a
//! `WriteBatch` and in a transaction), the read of a key's time to live every reader offers,
//! and `expire` / `persist`, which rewrite a key's deadline in a transaction so that a put
//! racing them is never lost.

use super::batch::{Deadline, WriteBatch};
use super::keyspace::Keyspace;
use super::read::Found;
use super::readable::sealed::View;
use super::transaction::{Transaction, TxKeyspace};
use super::tree::Tree;
use super::Db;
use crate::error::Result;
use crate::expiry::{self, Ttl};
use crate::key::ValueKind;
use crate::options::ReadOptions;
use std::time::{Duration, SystemTime};

impl Db {
    /// Set `key` to `value` for `ttl`: from then on (by [`Options::clock`](crate::Options::clock),
    /// counted from this write and rounded up to the millisecond) no read finds it, and
    /// compactions reclaim its bytes.
    ///
    /// ```
    /// use shamba::{ManualClock, Options, Readable};
    /// use std::{sync::Arc, time::{Duration, SystemTime}};
    /// # let dir = tempfile::tempdir()?;
    /// let clock = Arc::new(ManualClock::new(SystemTime::now()));
    /// let db = shamba::Db::open(dir.path(), Options { clock: clock.clone(), ..Options::default() })?;
    /// db.put_with_ttl(b"session", b"token", Duration::from_secs(60))?;
    /// assert!(db.get(b"session")?.is_some());
    /// clock.advance(Duration::from_secs(60));
    /// assert_eq!(db.get(b"session")?, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Db::put`].
    pub fn put_with_ttl(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, ttl: Duration) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put_with_ttl(key, value, ttl);
        self.write(b)
    }

    /// Set `key` to `value` until `at` (rounded to the millisecond): from then on no read
    /// finds it. A time already past writes a key no read finds.
    ///
    /// # Errors
    ///
    /// As [`Db::put`].
    pub fn put_with_expiry(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, at: SystemTime) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put_with_expiry(key, value, at);
        self.write(b)
    }
}

impl Db {
    /// Make `key` expire at `at` (a time already past removes it), keeping its value:
    /// Redis's `PEXPIREAT`. Returns whether the key was there to expire. A read-modify-write
    /// run as a transaction ([`Db::transact`]): a put that races it is never lost (the
    /// transaction runs again on the put's value, or the put comes after it).
    ///
    /// ```
    /// use shamba::{Readable, Ttl};
    /// use std::time::{Duration, SystemTime};
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// db.put(b"k", b"v")?;
    /// assert!(db.expire(b"k", SystemTime::now() + Duration::from_secs(60))?);
    /// assert!(db.ttl(b"k")?.remaining().is_some());
    /// assert!(db.persist(b"k")?);
    /// assert_eq!(db.ttl(b"k")?, Ttl::Persistent);
    /// assert!(!db.expire(b"absent", SystemTime::now())?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Db::transact`] (its last [`Error::Conflict`](crate::Error::Conflict) when every
    /// attempt met a concurrent write), and those of [`Readable::get`](crate::Readable::get).
    pub fn expire(&self, key: impl AsRef<[u8]>, at: SystemTime) -> Result<bool> {
        self.rewrite_deadline(&self.inner.default, key.as_ref(), Some(expiry::millis(at)))
    }

    /// Make `key` live for `ttl` from now (by [`Options::clock`](crate::Options::clock)),
    /// as [`Db::expire`] does: Redis's `PEXPIRE`.
    ///
    /// # Errors
    ///
    /// As [`Db::expire`].
    pub fn expire_after(&self, key: impl AsRef<[u8]>, ttl: Duration) -> Result<bool> {
        let at = expiry::deadline_after(expiry::now_millis(&*self.inner.opts.clock), ttl);
        self.rewrite_deadline(&self.inner.default, key.as_ref(), Some(at))
    }

    /// Make `key` live forever, keeping its value: Redis's `PERSIST`. Returns whether it
    /// had a deadline to remove (false when absent or already persistent). A
    /// read-modify-write run as a transaction, as [`Db::expire`].
    ///
    /// # Errors
    ///
    /// As [`Db::expire`].
    pub fn persist(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        self.rewrite_deadline(&self.inner.default, key.as_ref(), None)
    }

    /// Give `key` of `tree` the deadline `to` (`None`: none), in a transaction that depends
    /// on the key: whether it had a value to give it to (for `None`, a deadline to remove).
    pub(super) fn rewrite_deadline(&self, tree: &Tree, key: &[u8], to: Option<u64>) -> Result<bool> {
        let clock = &*self.inner.opts.clock;
        self.transact(|tx| {
            let found = tx.find_in(tree, key, true)?;
            let (deadline, value) = match &found {
                None => return Ok(false),
                Some((ValueKind::PutExpiring, stored)) => match expiry::split(stored) {
                    Some((d, _)) if expiry::has_passed(d, expiry::now_millis(clock)) => return Ok(false),
                    Some((d, value)) => (Some(d), value),
                    None => return Ok(false),
                },
                Some((_, value)) => (None, value.as_slice()),
            };
            match to {
                Some(at) => tx.put_expiring_in(tree, key, value, at).map(|()| true),
                None if deadline.is_none() => Ok(false),
                None => tx.put_in_tree(tree, key, value).map(|()| true),
            }
        })
    }
}

impl Keyspace {
    /// [`Db::expire`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Db::expire`]; [`Error::InvalidArgument`](crate::Error::InvalidArgument) once the
    /// keyspace is dropped.
    pub fn expire(&self, key: impl AsRef<[u8]>, at: SystemTime) -> Result<bool> {
        self.db.rewrite_deadline(self.tree(), key.as_ref(), Some(expiry::millis(at)))
    }

    /// [`Db::expire_after`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Keyspace::expire`].
    pub fn expire_after(&self, key: impl AsRef<[u8]>, ttl: Duration) -> Result<bool> {
        let at = expiry::deadline_after(expiry::now_millis(&*self.db.inner.opts.clock), ttl);
        self.db.rewrite_deadline(self.tree(), key.as_ref(), Some(at))
    }

    /// [`Db::persist`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Keyspace::expire`].
    pub fn persist(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        self.db.rewrite_deadline(self.tree(), key.as_ref(), None)
    }

    /// [`Db::put_with_ttl`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Keyspace::put`].
    pub fn put_with_ttl(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, ttl: Duration) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put_with_ttl_in(self, key, value, ttl);
        self.db.write(b)
    }

    /// [`Db::put_with_expiry`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Keyspace::put`].
    pub fn put_with_expiry(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, at: SystemTime) -> Result<()> {
        let mut b = WriteBatch::new();
        b.put_with_expiry_in(self, key, value, at);
        self.db.write(b)
    }
}

impl WriteBatch {
    /// [`put_with_ttl`](Self::put_with_ttl) in keyspace `ks`.
    pub fn put_with_ttl_in(
        &mut self,
        ks: &Keyspace,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        ttl: Duration,
    ) -> &mut Self {
        self.put_expiring_to_keyspace(ks.batch_id(), key.as_ref(), value.as_ref(), Deadline::After(ttl))
    }

    /// [`put_with_expiry`](Self::put_with_expiry) in keyspace `ks`.
    pub fn put_with_expiry_in(
        &mut self,
        ks: &Keyspace,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        at: SystemTime,
    ) -> &mut Self {
        let deadline = Deadline::At(expiry::millis(at));
        self.put_expiring_to_keyspace(ks.batch_id(), key.as_ref(), value.as_ref(), deadline)
    }
}

impl View<'_> {
    /// The time to live of `key` as this view reads it.
    pub(super) fn ttl(&self, key: &[u8], ro: &ReadOptions) -> Result<Ttl> {
        if let Some(e) = self.refusal() {
            return Err(e);
        }
        let found = self.inner.find_at(self.tree, key, self.seq, ro)?;
        Ok(ttl_of(found, expiry::now_millis(&*self.inner.opts.clock)))
    }
}

/// The time to live of what a lookup found, at `now_ms`.
pub(super) fn ttl_of(found: Found, now_ms: u64) -> Ttl {
    match found {
        None => Ttl::Absent,
        Some((ValueKind::PutExpiring, stored)) => match expiry::split(&stored) {
            Some((deadline, _)) if !expiry::has_passed(deadline, now_ms) => {
                Ttl::Remaining(Duration::from_millis(deadline - now_ms))
            }
            _ => Ttl::Absent,
        },
        Some(_) => Ttl::Persistent,
    }
}

impl Transaction {
    /// Set `key` to `value` for `ttl` when the transaction commits; the time to live counts
    /// from this call (by [`Options::clock`](crate::Options::clock)).
    ///
    /// # Errors
    ///
    /// As [`Transaction::put`].
    pub fn put_with_ttl(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, ttl: Duration) -> Result<()> {
        let at = expiry::deadline_after(expiry::now_millis(&*self.db_inner().opts.clock), ttl);
        self.put_expiring_in(self.default_tree(), key.as_ref(), value.as_ref(), at)
    }

    /// Set `key` to `value` until `at` when the transaction commits.
    ///
    /// # Errors
    ///
    /// As [`Transaction::put`].
    pub fn put_with_expiry(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, at: SystemTime) -> Result<()> {
        self.put_expiring_in(self.default_tree(), key.as_ref(), value.as_ref(), expiry::millis(at))
    }

    /// What [`Readable::ttl`](crate::Readable::ttl) answers in a transaction: its own write
    /// of the key, else its snapshot's version.
    pub(super) fn ttl_in(&self, tree: &Tree, key: &[u8]) -> Result<Ttl> {
        let found = self.find_in(tree, key, false)?;
        Ok(ttl_of(found, expiry::now_millis(&*self.db_inner().opts.clock)))
    }
}

impl TxKeyspace<'_> {
    /// [`Transaction::put_with_ttl`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Transaction::put`].
    pub fn put_with_ttl(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, ttl: Duration) -> Result<()> {
        let (tx, tree) = self.parts()?;
        let at = expiry::deadline_after(expiry::now_millis(&*tx.db_inner().opts.clock), ttl);
        tx.put_expiring_in(tree, key.as_ref(), value.as_ref(), at)
    }

    /// [`Transaction::put_with_expiry`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Transaction::put`].
    pub fn put_with_expiry(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>, at: SystemTime) -> Result<()> {
        let (tx, tree) = self.parts()?;
        tx.put_expiring_in(tree, key.as_ref(), value.as_ref(), expiry::millis(at))
    }
}
