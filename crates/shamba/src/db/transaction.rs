//! Optimistic transactions: reads at a snapshot with the transaction's own writes over
//! them, writes buffered until commit, and a commit that the write leader checks for
//! conflicts (`commit_check.rs`) and applies as one batch.
//!
//! Isolation is snapshot isolation: a commit fails when a key the transaction wrote, or
//! read with [`Transaction::get_for_update`], was written by someone else after its
//! snapshot. Plain reads are not tracked (two transactions may each read what the other
//! writes, and both commit: write skew); read a key for update to make the commit depend
//! on it.

use super::batch::{half_open, Deadline, KeyspaceId, WriteBatch};
use super::inner::DbInner;
use super::iter::{DbIterator, OwnWrites, OWN_SEQ};
use super::keyspace::Keyspace;
use super::read::Found;
use super::readable::{sealed::View, Readable};
use super::sequence::Lease;
use super::tree::Tree;
use super::write_queue::CommitCheck;
use crate::error::{Error, Result};
use crate::expiry::{self, Clock, Ttl};
use crate::key::ValueKind;
use crate::memtable::MemTable;
use crate::options::{ReadOptions, WriteOptions};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a transaction runs: [`Db::transaction_with`](crate::Db::transaction_with) and
/// [`Db::transact_with`](crate::Db::transact_with).
#[derive(Debug, Clone)]
pub struct TransactionOptions {
    /// How long the transaction may read: compactions keep the versions its snapshot sees
    /// for this long, no longer. Past it, a read that must go to the database fails with
    /// [`Error::Conflict`] (its commit still works: the check does not need old versions).
    /// `None`: as long as the transaction lives, as a [`Snapshot`](crate::Snapshot) does.
    /// Default: one minute.
    pub max_age: Option<Duration>,
    /// How many times [`Db::transact`](crate::Db::transact) runs the transaction before it
    /// returns the last conflict. Default: 16.
    pub max_attempts: usize,
    /// Sync the write-ahead log at commit ([`WriteOptions::sync`]). Default: false.
    pub sync: bool,
}

impl Default for TransactionOptions {
    fn default() -> Self {
        TransactionOptions { max_age: Some(Duration::from_secs(60)), max_attempts: 16, sync: false }
    }
}

/// An optimistic transaction: it reads the database as of the moment it began, with its
/// own writes over that (gets, `multi_get` and iterators in both directions, through
/// [`Readable`]), buffers its writes, and applies them as one atomic batch at
/// [`commit`](Transaction::commit). The default keyspace is read and written through the
/// transaction itself, another through [`keyspace`](Transaction::keyspace).
///
/// The commit fails with [`Error::Conflict`], writing nothing, when a key the transaction
/// wrote or read with [`get_for_update`](Transaction::get_for_update) was written by
/// someone else after the transaction began (snapshot isolation). Dropping a transaction
/// without committing it rolls it back: nothing it wrote is applied.
///
/// ```
/// use shamba::{Db, Options, Readable};
/// # let dir = tempfile::tempdir()?;
/// let db = Db::open(dir.path(), Options::default())?;
/// db.put(b"balance", b"10")?;
/// let tx = db.transaction();
/// let balance: u32 = String::from_utf8_lossy(&tx.get_for_update(b"balance")?.unwrap_or_default()).parse()?;
/// tx.put(b"balance", (balance + 5).to_string())?;
/// assert_eq!(tx.get(b"balance")?.as_deref(), Some(&b"15"[..]), "it reads its own writes");
/// assert_eq!(db.get(b"balance")?.as_deref(), Some(&b"10"[..]), "nobody else does before the commit");
/// tx.commit()?;
/// assert_eq!(db.get(b"balance")?.as_deref(), Some(&b"15"[..]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Transaction {
    inner: Arc<DbInner>,
    lease: Lease,
    opts: TransactionOptions,
    state: Mutex<Buffered>,
}

/// What a transaction has done so far, by keyspace id.
#[derive(Default)]
struct Buffered {
    /// Its puts (`Some`) and deletes (`None`), the last one per key.
    writes: BTreeMap<(u32, Vec<u8>), Option<Vec<u8>>>,
    /// Its range deletes, half-open (`None`: to the end). A write after one, over a key in
    /// it, is in `writes`, which wins; a write before it left `writes` when it came.
    ranges: Vec<(u32, Vec<u8>, Option<Vec<u8>>)>,
    /// The keys it read for update.
    read_for_update: BTreeSet<(u32, Vec<u8>)>,
    /// The deadline (milliseconds since the Unix epoch) of each put in `writes` that
    /// expires. Every write to `writes` clears its key's here first, so an entry is only
    /// read beside the put it was set with.
    deadlines: BTreeMap<(u32, Vec<u8>), u64>,
}

impl Buffered {
    /// What the transaction's own writes say of `key`: `Some(value or None)` when they
    /// decide it, `None` when the snapshot does.
    fn own(&self, keyspace: u32, key: &[u8], clock: &dyn Clock) -> Option<Option<Vec<u8>>> {
        let at = (keyspace, key.to_vec());
        if let Some(v) = self.writes.get(&at) {
            let expired = self.deadlines.get(&at).is_some_and(|&d| expiry::has_passed(d, expiry::now_millis(clock)));
            return Some(if expired { None } else { v.clone() });
        }
        let in_range = self.ranges.iter().any(|(ks, start, end)| {
            *ks == keyspace && key >= start.as_slice() && end.as_ref().is_none_or(|e| key < e.as_slice())
        });
        in_range.then_some(None)
    }

    /// The writes to one keyspace as its iterators merge them.
    fn own_writes(&self, keyspace: u32) -> OwnWrites {
        let mem = MemTable::new(0);
        let from = (keyspace, Vec::new());
        for ((ks, key), value) in self.writes.range(from..) {
            if *ks != keyspace {
                break;
            }
            match (value, self.deadlines.get(&(*ks, key.clone()))) {
                (Some(v), None) => mem.insert(key, OWN_SEQ, ValueKind::Put, v),
                (Some(v), Some(&deadline)) => {
                    mem.insert(key, OWN_SEQ, ValueKind::PutExpiring, &expiry::join(deadline, v))
                }
                (None, _) => mem.insert(key, OWN_SEQ, ValueKind::Delete, &[]),
            }
        }
        let ranges =
            self.ranges.iter().filter(|(ks, ..)| *ks == keyspace).map(|(_, s, e)| (s.clone(), e.clone())).collect();
        OwnWrites { mem: Arc::new(mem), ranges }
    }
}

impl Transaction {
    pub(crate) fn new(inner: Arc<DbInner>, opts: TransactionOptions) -> Transaction {
        let deadline = opts.max_age.map(|age| Instant::now() + age);
        let lease = inner.seq.lease(deadline);
        Transaction { inner, lease, opts, state: Mutex::new(Buffered::default()) }
    }

    /// The sequence number the transaction reads at (its snapshot's).
    pub fn sequence(&self) -> crate::key::SeqNo {
        self.lease.seq
    }

    /// The transaction's view of keyspace `ks`: reads (through [`Readable`]) and writes
    /// there, at the transaction's snapshot, committed with the rest.
    ///
    /// ```
    /// use shamba::Readable;
    /// # let dir = tempfile::tempdir()?;
    /// # let db = shamba::Db::open(dir.path(), shamba::Options::default())?;
    /// let users = db.keyspace("users")?;
    /// let tx = db.transaction();
    /// tx.keyspace(&users).put(b"u1", b"ada")?;
    /// tx.put(b"count", b"1")?;
    /// assert_eq!(tx.keyspace(&users).get(b"u1")?.as_deref(), Some(&b"ada"[..]));
    /// tx.commit()?;
    /// assert_eq!(users.get(b"u1")?.as_deref(), Some(&b"ada"[..]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// A keyspace of another database is refused: every read and write through the view
    /// fails with [`Error::InvalidArgument`].
    pub fn keyspace(&self, ks: &Keyspace) -> TxKeyspace<'_> {
        if ks.db_identity() != self.inner.number {
            return TxKeyspace { tx: self, tree: self.inner.default.clone(), refused: Some(ks.name().to_string()) };
        }
        TxKeyspace { tx: self, tree: ks.tree().clone(), refused: None }
    }

    /// Read `key` and make the commit depend on it: the commit fails with
    /// [`Error::Conflict`] if someone else writes it after the transaction began.
    ///
    /// # Errors
    ///
    /// As [`Readable::get`], and [`Error::Conflict`] once the transaction is older than
    /// [`TransactionOptions::max_age`].
    pub fn get_for_update(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_for_update_in(&self.inner.default, key.as_ref())
    }

    /// Set `key` to `value` when the transaction commits.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the key or value is over its size limit.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_in(&self.inner.default, key.as_ref(), value.as_ref())
    }

    /// Delete `key` when the transaction commits.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the key is over its size limit.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_in(&self.inner.default, key.as_ref())
    }

    /// Delete every key in `range` when the transaction commits; the transaction's reads
    /// stop seeing them at once. The keys of the range are not checked for conflicts (the
    /// range is applied as [`Db::delete_range`](crate::Db::delete_range) applies one):
    /// read a key for update to make the commit depend on it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when a bound is over the key size limit.
    pub fn delete_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<()> {
        self.delete_range_in(&self.inner.default, &range)
    }

    /// Apply every write of the transaction as one atomic batch, if no key it wrote or read
    /// for update was written by someone else since it began. A transaction that wrote
    /// nothing commits without writing.
    ///
    /// # Errors
    ///
    /// - [`Error::Conflict`], naming the key, when one was written since the transaction
    ///   began, or when that can no longer be ruled out (the writes since then were
    ///   flushed to tables); nothing is written. Run the transaction again
    ///   ([`Db::transact`](crate::Db::transact) does).
    /// - Those of [`Db::write`](crate::Db::write).
    pub fn commit(self) -> Result<()> {
        let (batch, check) = {
            let state = self.state.lock();
            let mut batch = WriteBatch::new();
            let id = |ks: u32| KeyspaceId { db: self.inner.number, id: ks };
            let default = self.inner.default.id;
            for (ks, start, end) in &state.ranges {
                let range: (Bound<&[u8]>, Bound<&[u8]>) =
                    (Bound::Included(start.as_slice()), end.as_deref().map_or(Bound::Unbounded, Bound::Excluded));
                if *ks == default {
                    batch.delete_range::<&[u8], _>(range);
                } else {
                    batch.delete_range_to_keyspace::<&[u8], _>(id(*ks), &range);
                }
            }
            for ((ks, key), value) in &state.writes {
                let deadline = state.deadlines.get(&(*ks, key.clone()));
                if let (Some(v), Some(&deadline)) = (value, deadline) {
                    batch.put_expiring_to_keyspace(id(*ks), key, v, Deadline::At(deadline));
                    continue;
                }
                match (value, *ks == default) {
                    (Some(v), true) => batch.put(key, v),
                    (Some(v), false) => batch.put_to_keyspace(id(*ks), key, v),
                    (None, true) => batch.delete(key),
                    (None, false) => batch.delete_to_keyspace(id(*ks), key),
                };
            }
            let mut keys: Vec<(u32, Vec<u8>)> = state.writes.keys().cloned().collect();
            keys.extend(state.read_for_update.iter().cloned());
            keys.sort();
            keys.dedup();
            (batch, CommitCheck { snapshot: self.lease.seq, keys })
        };
        if batch.is_empty() {
            if check.keys.is_empty() {
                return Ok(());
            }
            self.inner.check_writable()?;
            return self.inner.queue.with_lead(|| self.inner.check_alone(&check));
        }
        let wo = WriteOptions { sync: self.opts.sync, ..WriteOptions::default() };
        self.inner.write_checked(batch, &wo, Some(check))
    }

    /// Drop every write of the transaction (as dropping it does).
    pub fn rollback(self) {}

    fn get_for_update_in(&self, tree: &Tree, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.check_key(key)?;
        self.state.lock().read_for_update.insert((tree.id, key.to_vec()));
        self.get_in(tree, key, &ReadOptions::default())
    }

    fn put_in(&self, tree: &Tree, key: &[u8], value: &[u8]) -> Result<()> {
        self.inner.check_key(key)?;
        if value.len() > self.inner.opts.max_value_size {
            return Err(Error::InvalidArgument(format!(
                "value of {} bytes exceeds max_value_size ({})",
                value.len(),
                self.inner.opts.max_value_size
            )));
        }
        self.buffer(tree, key, Some(value.to_vec()));
        Ok(())
    }

    fn delete_in(&self, tree: &Tree, key: &[u8]) -> Result<()> {
        self.inner.check_key(key)?;
        self.buffer(tree, key, None);
        Ok(())
    }

    fn buffer(&self, tree: &Tree, key: &[u8], value: Option<Vec<u8>>) {
        let mut state = self.state.lock();
        state.deadlines.remove(&(tree.id, key.to_vec()));
        state.writes.insert((tree.id, key.to_vec()), value);
    }

    /// The database it runs on.
    pub(super) fn db_inner(&self) -> &DbInner {
        &self.inner
    }

    /// The default keyspace's tree.
    pub(super) fn default_tree(&self) -> &Tree {
        &self.inner.default
    }

    /// [`put`](Self::put) in `tree`.
    pub(super) fn put_in_tree(&self, tree: &Tree, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_in(tree, key, value)
    }

    /// A put of `key` that expires at `deadline_ms`, when the transaction commits.
    pub(super) fn put_expiring_in(&self, tree: &Tree, key: &[u8], value: &[u8], deadline_ms: u64) -> Result<()> {
        self.put_in(tree, key, value)?;
        self.state.lock().deadlines.insert((tree.id, key.to_vec()), deadline_ms);
        Ok(())
    }

    /// What the transaction reads of `key` before the clock is asked (its own write, or
    /// the version its snapshot sees), an expiring value with its deadline; with
    /// `for_update`, the commit depends on the key as [`get_for_update`](Self::get_for_update)
    /// makes it.
    pub(super) fn find_in(&self, tree: &Tree, key: &[u8], for_update: bool) -> Result<Found> {
        self.inner.check_key(key)?;
        {
            let mut state = self.state.lock();
            if for_update {
                state.read_for_update.insert((tree.id, key.to_vec()));
            }
            let at = (tree.id, key.to_vec());
            if let Some(v) = state.writes.get(&at) {
                return Ok(v.clone().map(|v| match state.deadlines.get(&at) {
                    Some(&deadline) => (ValueKind::PutExpiring, expiry::join(deadline, &v)),
                    None => (ValueKind::Put, v),
                }));
            }
            if state.own(tree.id, key, &*self.inner.opts.clock).is_some() {
                return Ok(None);
            }
        }
        let found = self.inner.find_at(tree, key, Some(self.lease.seq), &ReadOptions::default())?;
        if self.lease.expired() {
            return Err(self.too_old(tree, key));
        }
        Ok(found)
    }

    fn delete_range_in<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, tree: &Tree, range: &R) -> Result<()> {
        let (start, end) = half_open(range);
        self.inner.check_key(&start)?;
        if let Some(end) = &end {
            self.inner.check_key(end)?;
            if *end <= start {
                return Ok(());
            }
        }
        let mut state = self.state.lock();
        // The writes it covers are overwritten by it.
        let lo = (tree.id, start.clone());
        let covered: Vec<(u32, Vec<u8>)> = state
            .writes
            .range(lo..)
            .map(|(k, _)| k)
            .take_while(|(ks, k)| *ks == tree.id && end.as_ref().is_none_or(|e| k < e))
            .cloned()
            .collect();
        for k in covered {
            state.writes.remove(&k);
        }
        state.ranges.push((tree.id, start, end));
        Ok(())
    }

    /// The error of a read that had to go to the database after the lease ran out.
    fn too_old(&self, tree: &Tree, key: &[u8]) -> Error {
        Error::Conflict {
            keyspace: tree.name.clone(),
            key: key.to_vec(),
            reason: format!(
                "the transaction is older than its max_age ({:?}): the versions it reads may be gone",
                self.opts.max_age.unwrap_or_default()
            ),
        }
    }

    fn get_in(&self, tree: &Tree, key: &[u8], ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        if let Some(own) = self.state.lock().own(tree.id, key, &*self.inner.opts.clock) {
            return Ok(own);
        }
        let got = self.inner.get_at(tree, key, Some(self.lease.seq), ro)?;
        // Checked after the read: a read that ends before the deadline began before any
        // compaction that no longer keeps what the lease sees.
        if self.lease.expired() {
            return Err(self.too_old(tree, key));
        }
        Ok(got)
    }

    fn multi_get_in<K: AsRef<[u8]>>(&self, tree: &Tree, keys: &[K], ro: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>> {
        let mut answers: Vec<Option<Result<Option<Vec<u8>>>>> = Vec::with_capacity(keys.len());
        let mut misses: Vec<&[u8]> = Vec::new();
        {
            let state = self.state.lock();
            for key in keys {
                let own = state.own(tree.id, key.as_ref(), &*self.inner.opts.clock);
                if own.is_none() {
                    misses.push(key.as_ref());
                }
                answers.push(own.map(Ok));
            }
        }
        let mut read = self.inner.multi_get_at(tree, &misses, Some(self.lease.seq), ro).into_iter();
        let expired = self.lease.expired();
        answers
            .into_iter()
            .zip(keys)
            .map(|(own, key)| match own {
                Some(answer) => answer,
                None if expired => Err(self.too_old(tree, key.as_ref())),
                None => {
                    read.next().unwrap_or_else(|| Err(Error::internal("multi_get returned fewer results than keys")))
                }
            })
            .collect()
    }

    fn range_in<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, tree: &Tree, range: &R, ro: &ReadOptions) -> DbIterator {
        let own = self.state.lock().own_writes(tree.id);
        let mut it = DbIterator::new(&self.inner, tree, self.lease.seq, range, ro.clone()).with_own_writes(own);
        // The iterator holds the version it reads from now on: checked after it took it.
        if self.lease.expired() {
            let start = match range.start_bound() {
                Bound::Included(k) | Bound::Excluded(k) => k.as_ref().to_vec(),
                Bound::Unbounded => Vec::new(),
            };
            it.refuse(self.too_old(tree, &start));
        }
        it
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.inner.seq.release(&self.lease);
    }
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        f.debug_struct("Transaction")
            .field("seq", &self.lease.seq)
            .field("writes", &state.writes.len())
            .field("range_deletes", &state.ranges.len())
            .field("read_for_update", &state.read_for_update.len())
            .finish()
    }
}

/// The default keyspace as of the transaction's snapshot, with its own writes over it.
impl Readable for Transaction {
    fn read_view(&self) -> View<'_> {
        View { inner: &self.inner, tree: &self.inner.default, seq: Some(self.lease.seq), refused: None }
    }

    fn get_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.get_in(&self.inner.default, key.as_ref(), ro)
    }

    fn multi_get_opt<K: AsRef<[u8]>>(&self, keys: &[K], ro: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>> {
        self.multi_get_in(&self.inner.default, keys, ro)
    }

    fn range_opt<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R, ro: &ReadOptions) -> DbIterator {
        self.range_in(&self.inner.default, &range, ro)
    }

    fn ttl_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Ttl> {
        let _tier = crate::read_tier::Scope::enter(ro.read_tier);
        self.ttl_in(&self.inner.default, key.as_ref())
    }
}

/// One keyspace in a transaction ([`Transaction::keyspace`]): its reads (through
/// [`Readable`]) and writes, at the transaction's snapshot, committed with the rest.
pub struct TxKeyspace<'t> {
    tx: &'t Transaction,
    tree: Arc<Tree>,
    /// The name of a keyspace of another database: every read and write is refused.
    refused: Option<String>,
}

impl TxKeyspace<'_> {
    /// Its transaction and tree, unless the keyspace is refused.
    pub(super) fn parts(&self) -> Result<(&Transaction, &Tree)> {
        self.refusal()?;
        Ok((self.tx, &self.tree))
    }

    fn refusal(&self) -> Result<()> {
        match &self.refused {
            Some(name) => Err(Error::InvalidArgument(format!(
                "keyspace {name:?} belongs to another database than this transaction's"
            ))),
            None => Ok(()),
        }
    }

    /// [`Transaction::get_for_update`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Transaction::get_for_update`].
    pub fn get_for_update(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.refusal()?;
        self.tx.get_for_update_in(&self.tree, key.as_ref())
    }

    /// [`Transaction::put`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Transaction::put`].
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.refusal()?;
        self.tx.put_in(&self.tree, key.as_ref(), value.as_ref())
    }

    /// [`Transaction::delete`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Transaction::delete`].
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.refusal()?;
        self.tx.delete_in(&self.tree, key.as_ref())
    }

    /// [`Transaction::delete_range`] in this keyspace.
    ///
    /// # Errors
    ///
    /// As [`Transaction::delete_range`].
    pub fn delete_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<()> {
        self.refusal()?;
        self.tx.delete_range_in(&self.tree, &range)
    }
}

/// This keyspace as of the transaction's snapshot, with its own writes over it.
impl Readable for TxKeyspace<'_> {
    fn read_view(&self) -> View<'_> {
        View { inner: &self.tx.inner, tree: &self.tree, seq: Some(self.tx.lease.seq), refused: self.refused.as_deref() }
    }

    fn get_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.refusal()?;
        self.tx.get_in(&self.tree, key.as_ref(), ro)
    }

    fn multi_get_opt<K: AsRef<[u8]>>(&self, keys: &[K], ro: &ReadOptions) -> Vec<Result<Option<Vec<u8>>>> {
        if let Err(e) = self.refusal() {
            return keys.iter().map(|_| Err(e.duplicate())).collect();
        }
        self.tx.multi_get_in(&self.tree, keys, ro)
    }

    fn range_opt<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R, ro: &ReadOptions) -> DbIterator {
        let mut it = self.tx.range_in(&self.tree, &range, ro);
        if let Err(e) = self.refusal() {
            it.refuse(e);
        }
        it
    }

    fn ttl_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Ttl> {
        self.refusal()?;
        let _tier = crate::read_tier::Scope::enter(ro.read_tier);
        self.tx.ttl_in(&self.tree, key.as_ref())
    }
}

impl std::fmt::Debug for TxKeyspace<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxKeyspace").field("keyspace", &self.tree.name).field("tx", self.tx).finish()
    }
}

#[cfg(test)]
mod tests {
    use crate::db::batch::WriteBatch;
    use crate::db::write_queue::{CommitCheck, QueuedWrite};
    use crate::db::Db;
    use crate::error::Error;
    use crate::options::Options;

    fn queued(id: u64, key: &[u8], check: Option<CommitCheck>) -> QueuedWrite {
        let mut batch = WriteBatch::new();
        batch.put(key, b"v");
        QueuedWrite { id, batch, sync: false, disable_wal: false, check }
    }

    fn check_of(snapshot: u64, keys: &[&[u8]]) -> Option<CommitCheck> {
        Some(CommitCheck { snapshot, keys: keys.iter().map(|k| (0, k.to_vec())).collect() })
    }

    #[test]
    fn a_transaction_conflicts_with_a_write_ahead_of_it_in_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let inner = &db.inner;
        let now = inner.visible_seq();
        // A plain write of `a`, then a transaction checking `a` (refused), then one checking
        // `b` (kept), then one whose check names `b` again: the kept transaction ahead of it
        // writes `b`, so it is refused too.
        let mut group = vec![
            queued(0, b"a", None),
            queued(1, b"x", check_of(now, &[b"a"])),
            queued(2, b"b", check_of(now, &[b"b"])),
            queued(3, b"y", check_of(now, &[b"b"])),
        ];
        let mut refused = Vec::new();
        inner.check_commits(&mut group, &mut refused);
        assert_eq!(group.iter().map(|w| w.id).collect::<Vec<_>>(), [0, 2]);
        let refused: Vec<u64> = refused
            .iter()
            .map(|(id, r)| {
                assert!(matches!(r, Err(Error::Conflict { key, .. }) if key == b"a" || key == b"b"), "{r:?}");
                *id
            })
            .collect();
        assert_eq!(refused, [1, 3]);
    }
}
