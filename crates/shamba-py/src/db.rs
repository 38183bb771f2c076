//! `shamba.Db`: an open database, dict-like, over `shamba::Db`.

use crate::batch::WriteBatch;
use crate::bytes_arg::{bytes_arg, opt_bytes_arg};
use crate::errors::IntoPyResult;
use crate::keyspace::Keyspace;
use crate::options::{self, DbConfig};
use crate::readable::{bounds, Readable};
use crate::report;
use crate::snapshot::Snapshot;
use crate::transaction::Transaction;
use crate::tree_options::keyspace_options;
use crate::ttl_arg::ttl_arg;
use parking_lot::RwLock;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use shamba::WriteOptions;
use std::path::PathBuf;

/// An open database: `Db(path, **options)`.
///
/// Keys and values are `bytes` (`bytearray` and `memoryview` are accepted and copied).
/// `db[k] = v`, `db[k]` (`KeyError` when absent), `k in db` and `del db[k]` work as on a
/// dict (the reads are those of `Readable`, shared with `Keyspace` and `Snapshot`); `del`
/// of an absent key is not an error (an LSM delete writes a tombstone without looking:
/// raising would cost a lookup per delete). There is no `len()`: counting means a full
/// scan. Iterating over the database yields its keys in order.
///
/// `db.keyspace(name)` opens (or creates) a named keyspace with the same API; the database's
/// own methods are the keyspace named `"default"`.
///
/// Every call releases the interpreter while the engine works, so threads sharing one `Db`
/// run in parallel. `close()` (or leaving a `with` block) closes it for every thread;
/// calls afterwards raise `ClosedError`, and so do its snapshots' reads. An iterator made
/// before `close()` runs to its end: it holds the files it reads.
#[pyclass(frozen, extends = Readable, module = "shamba")]
pub(crate) struct Db {
    // `None` once closed. Locked only with the interpreter released, so a thread waiting
    // for it never holds the interpreter a thread inside the engine needs to return.
    db: RwLock<Option<shamba::Db>>,
    path: PathBuf,
    sync: bool,
}

impl Db {
    /// Run `f` on the open database with the interpreter released.
    pub(crate) fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&shamba::Db) -> shamba::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| match self.db.read().as_ref() {
            Some(db) => f(db),
            None => Err(shamba::Error::Closed),
        })
        .py_err(py)
    }

    /// Whether `close()` was called (takes the handle's lock: call with the interpreter
    /// released).
    pub(crate) fn is_closed(&self) -> bool {
        self.db.read().is_none()
    }

    /// A transaction's options from `Db.transaction`'s arguments.
    fn transaction_options(&self, sync: Option<bool>, max_age: Option<f64>) -> PyResult<shamba::TransactionOptions> {
        let max_age = match max_age {
            None => None,
            Some(s) if s.is_finite() && s >= 0.0 => Some(std::time::Duration::from_secs_f64(s)),
            Some(s) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!("max_age must be >= 0 seconds, not {s}")))
            }
        };
        Ok(shamba::TransactionOptions {
            max_age,
            sync: sync.unwrap_or(self.sync),
            ..shamba::TransactionOptions::default()
        })
    }

    pub(crate) fn write_options(&self, sync: Option<bool>) -> WriteOptions {
        WriteOptions { sync: sync.unwrap_or(self.sync), ..WriteOptions::default() }
    }
}

#[pymethods]
impl Db {
    /// Open (by default, create) the database in the directory `path`.
    #[new]
    #[pyo3(signature = (path, **options))]
    fn new(py: Python<'_>, path: PathBuf, options: Option<&Bound<'_, PyDict>>) -> PyResult<PyClassInitializer<Self>> {
        let DbConfig { options, cache_pct, sync } = options::parse(options)?;
        let dir = path.clone();
        let db = py
            .detach(move || -> shamba::Result<shamba::Db> {
                let db = shamba::Db::open(&dir, options.clone())?;
                let Some(pct) = cache_pct else { return Ok(db) };
                // Size the cache against the filter and index bytes the database holds,
                // as `shamba bench --cache-pct` does, then start again from a cold cache.
                let metadata = db.stats().metadata_bytes();
                db.close()?;
                let sized = shamba::Options { cache_capacity: (metadata as f64 * pct / 100.0) as usize, ..options };
                shamba::Db::open(&dir, sized)
            })
            .py_err(py)?;
        Ok(PyClassInitializer::from(Readable).add_subclass(Db { db: RwLock::new(Some(db)), path, sync }))
    }

    /// The database directory.
    #[getter]
    pub(crate) fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        py.detach(|| self.is_closed())
    }

    /// Set `key` to `value`; `sync=True` waits until the write-ahead log is on the device
    /// (default: the `sync` the database was opened with). With `ttl=` (seconds, an `int`
    /// or a `float`) the key expires that long after the write: no read finds it from then
    /// on, and compactions reclaim its bytes.
    #[pyo3(signature = (key, value, sync=None, *, ttl=None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: Option<bool>,
        ttl: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let (k, v) = (bytes_arg(key, "key")?, bytes_arg(value, "value")?);
        let ttl = ttl_arg(ttl)?;
        let wo = self.write_options(sync);
        self.with(py, |db| {
            let mut b = shamba::WriteBatch::new();
            match ttl {
                Some(ttl) => b.put_with_ttl(&k, &v, ttl),
                None => b.put(&k, &v),
            };
            db.write_opt(b, &wo)
        })
    }

    fn __setitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(py, key, value, None, None)
    }

    /// Make `key` expire `ttl` seconds from now, keeping its value (Redis's `EXPIRE`); a
    /// transaction, so a put racing it is never lost. Whether the key was there.
    fn expire(&self, py: Python<'_>, key: &Bound<'_, PyAny>, ttl: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = bytes_arg(key, "key")?;
        let ttl = ttl_arg(Some(ttl))?.unwrap_or_default();
        self.with(py, |db| db.expire_after(&k, ttl))
    }

    /// Make `key` live forever, keeping its value (Redis's `PERSIST`): whether it had a
    /// deadline to remove.
    fn persist(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = bytes_arg(key, "key")?;
        self.with(py, |db| db.persist(&k))
    }

    /// Delete `key` (absent or not: no error either way).
    #[pyo3(signature = (key, sync=None))]
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, sync: Option<bool>) -> PyResult<()> {
        let k = bytes_arg(key, "key")?;
        let wo = self.write_options(sync);
        self.with(py, |db| {
            let mut b = shamba::WriteBatch::new();
            b.delete(&k);
            db.write_opt(b, &wo)
        })
    }

    /// Delete every key with `start <= key < end` (`None`: unbounded) with one record,
    /// however many keys the range holds.
    #[pyo3(signature = (start=None, end=None, sync=None))]
    fn delete_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        sync: Option<bool>,
    ) -> PyResult<()> {
        let (s, e) = (opt_bytes_arg(start, "start")?, opt_bytes_arg(end, "end")?);
        let wo = self.write_options(sync);
        self.with(py, |db| {
            let mut b = shamba::WriteBatch::new();
            b.delete_range::<&[u8], _>(bounds(&s, &e));
            db.write_opt(b, &wo)
        })
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(py, key, None)
    }

    /// Apply every operation of `batch` atomically (the batch is kept: it may be written
    /// again).
    #[pyo3(signature = (batch, sync=None))]
    fn write(&self, py: Python<'_>, batch: &WriteBatch, sync: Option<bool>) -> PyResult<()> {
        let b = batch.snapshot();
        let wo = self.write_options(sync);
        self.with(py, |db| db.write_opt(b, &wo))
    }

    /// The keyspace `name`, created if it does not exist. With keyword options (the tree
    /// options of `Db()`: `bits_per_key`, `layout`, `policy`, `compression`,
    /// `compaction_style`, `block_size`, ...) it is created with them over the database's
    /// own; an existing keyspace must run with exactly those (else `InvalidOptionsError`:
    /// give a keyspace its options at open with `Db(path, keyspaces={name: {...}})`).
    #[pyo3(signature = (name, **options))]
    fn keyspace(slf: &Bound<'_, Self>, name: &str, options: Option<&Bound<'_, PyDict>>) -> PyResult<Py<Keyspace>> {
        let py = slf.py();
        let this = slf.get();
        let ks = match options.filter(|o| !o.is_empty()) {
            None => this.with(py, |db| db.keyspace(name))?,
            Some(kwargs) => {
                let base = this.with(py, |db| Ok(db.keyspace("default")?.options()))?;
                let opts = keyspace_options(&base, Some(kwargs), "keyspace()")?;
                this.with(py, |db| db.keyspace_with(name, opts))?
            }
        };
        Keyspace::new(py, ks, slf.clone().unbind())
    }

    /// Drop the keyspace `name`: its data is gone at once, its handles raise
    /// `InvalidArgumentError`, and a reopen never sees it. The default keyspace cannot be
    /// dropped.
    fn drop_keyspace(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.with(py, |db| db.drop_keyspace(name))
    }

    /// The names of every keyspace, `"default"` first, then the others in name order.
    fn keyspace_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |db| Ok(db.keyspace_names()))
    }

    /// A consistent read view as of now (`with db.snapshot() as s:` releases it at the end).
    fn snapshot(slf: &Bound<'_, Self>) -> PyResult<Py<Snapshot>> {
        let snap = slf.get().with(slf.py(), |db| Ok(db.snapshot()))?;
        Snapshot::new(slf.py(), snap, slf.clone().unbind())
    }

    /// An optimistic transaction reading the database as of now: `with db.transaction()
    /// as tx:` commits at the end of the block (rolls back if it raises). `sync=True`
    /// syncs the write-ahead log at commit (default: the database's `sync`); `max_age`
    /// (seconds, default 60, `None` for no bound) is how long its reads may go on before
    /// they raise `ConflictError` (compactions stop keeping what it sees then).
    #[pyo3(signature = (*, sync=None, max_age=Some(60.0)))]
    fn transaction(slf: &Bound<'_, Self>, sync: Option<bool>, max_age: Option<f64>) -> PyResult<Py<Transaction>> {
        let opts = slf.get().transaction_options(sync, max_age)?;
        let tx = slf.get().with(slf.py(), |db| Ok(db.transaction_with(opts)))?;
        Transaction::new(slf.py(), tx, slf.clone().unbind())
    }

    /// Run `fn(tx)` in a transaction and commit it; when the commit (or `fn`) raises
    /// `ConflictError`, run it again in a new transaction, up to `max_attempts` times in
    /// all. Returns what `fn` returned; any other exception rolls back and goes on.
    #[pyo3(signature = (f, *, max_attempts=16, sync=None, max_age=Some(60.0)))]
    fn transact(
        slf: &Bound<'_, Self>,
        f: &Bound<'_, PyAny>,
        max_attempts: usize,
        sync: Option<bool>,
        max_age: Option<f64>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let conflict = py.import("shamba._errors")?.getattr("ConflictError")?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let tx = Self::transaction(slf, sync, max_age)?;
            let outcome = f.call1((tx.clone_ref(py),)).and_then(|v| tx.get().finish_commit(py).map(|()| v));
            tx.get().finish_rollback(py);
            match outcome {
                Err(e) if e.is_instance(py, &conflict) && attempt < max_attempts => {
                    py.detach(|| std::thread::sleep(std::time::Duration::from_micros(20 * attempt.min(50) as u64)));
                }
                outcome => return outcome.map(Bound::unbind),
            }
        }
    }

    /// Write a consistent copy of the database into the new directory `path`.
    fn checkpoint(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        self.with(py, |db| db.checkpoint(&path))
    }

    /// Write the memtable to a table and wait for every pending flush.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |db| db.flush())
    }

    /// Flush, then merge every table into one sorted run of the deepest level.
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |db| db.compact())
    }

    /// Flush, then run compactions until no level needs one.
    fn wait_for_compactions(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |db| db.wait_for_compactions())
    }

    /// Take writes again after a background error made the database read-only.
    fn resume(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |db| db.resume())
    }

    /// The engine's counters and the shape of the tree, as plain Python data.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.with(py, |db| Ok(db.stats()))?;
        report::stats_dict(py, &stats)
    }

    /// Check every block, key order, table and log for damage; a dict report.
    fn verify<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.with(py, |db| db.verify())?;
        report::verify_dict(py, &r)
    }

    /// Stop background work, sync the log and release the directory. Calls afterwards
    /// raise `ClosedError`; closing again does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| match self.db.write().take() {
            Some(db) => db.close(),
            None => Ok(()),
        })
        .py_err(py)
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let state = if self.closed(py) { " closed" } else { "" };
        format!("<shamba.Db {:?}{state}>", self.path)
    }
}
