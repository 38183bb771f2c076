//! Expiry on the handles: puts with a time to live or a deadline (on `Db`, `Keyspace` and in
//! a `WriteBatch`), and the read of a key's time to live every reader offers.

use super::batch::{Deadline, WriteBatch};
use super::keyspace::Keyspace;
use super::read::Found;
use super::readable::sealed::View;
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

impl Keyspace {
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
    pub(super) fn ttl(&self, key: &[u8]) -> Result<Ttl> {
        if let Some(e) = self.refusal() {
            return Err(e);
        }
        let found = self.inner.find_at(self.tree, key, self.seq, &ReadOptions::default())?;
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
