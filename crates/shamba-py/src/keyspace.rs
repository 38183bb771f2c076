//! `shamba.Keyspace`: one named keyspace of a database, dict-like as `Db` is, over
//! `shamba::Keyspace`.

use crate::bytes_arg::{bytes_arg, opt_bytes_arg};
use crate::db::Db;
use crate::readable::{bounds, Readable};
use crate::report;
use crate::ttl_arg::ttl_arg;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A keyspace of a database (`db.keyspace(name)`): its own sorted keys, levels and
/// compactions, sharing the database's log, so a `WriteBatch` across keyspaces is atomic
/// and a `Snapshot` reads every keyspace at one moment.
///
/// It offers what `Db` offers for its keys (the reads of `Readable`, `ks[k] = v`,
/// `del ks[k]`, `put`, `delete`, `delete_range`) and `compact()` and `stats()` of its own. Closing the
/// database closes it (`ClosedError`); after `db.drop_keyspace(name)` its calls raise
/// `InvalidArgumentError`, its iterators too (on their first item).
#[pyclass(frozen, extends = Readable, module = "shamba")]
pub(crate) struct Keyspace {
    pub(crate) ks: shamba::Keyspace,
    // Its database's Python handle: `close()` there ends this handle too, and batches and
    // snapshots check that a keyspace is of their database.
    pub(crate) db: Py<Db>,
}

impl Keyspace {
    /// The Python object of `ks`, a keyspace of `db`.
    pub(crate) fn new(py: Python<'_>, ks: shamba::Keyspace, db: Py<Db>) -> PyResult<Py<Keyspace>> {
        Py::new(py, PyClassInitializer::from(Readable).add_subclass(Keyspace { ks, db }))
    }

    /// Run `f` on the keyspace and its open database with the interpreter released.
    pub(crate) fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&shamba::Keyspace, &shamba::Db) -> shamba::Result<T> + Send,
    ) -> PyResult<T> {
        self.db.get().with(py, |db| f(&self.ks, db))
    }

    fn write(
        &self,
        py: Python<'_>,
        sync: Option<bool>,
        fill: impl FnOnce(&mut shamba::WriteBatch, &shamba::Keyspace) + Send,
    ) -> PyResult<()> {
        let wo = self.db.get().write_options(sync);
        self.with(py, |ks, db| {
            let mut b = shamba::WriteBatch::new();
            fill(&mut b, ks);
            db.write_opt(b, &wo)
        })
    }
}

#[pymethods]
impl Keyspace {
    /// Its name (`"default"` for the keyspace of `Db`'s own methods).
    #[getter]
    fn name(&self) -> &str {
        self.ks.name()
    }

    /// Set `key` to `value`; `sync=True` waits until the write-ahead log is on the device
    /// (default: the `sync` the database was opened with); `ttl=` as `Db.put`'s.
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
        self.write(py, sync, |b, ks| {
            match ttl {
                Some(ttl) => b.put_with_ttl_in(ks, &k, &v, ttl),
                None => b.put_in(ks, &k, &v),
            };
        })
    }

    fn __setitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(py, key, value, None, None)
    }

    /// As `Db.expire`, in this keyspace.
    fn expire(&self, py: Python<'_>, key: &Bound<'_, PyAny>, ttl: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = bytes_arg(key, "key")?;
        let ttl = ttl_arg(Some(ttl))?.unwrap_or_default();
        self.with(py, |ks, _| ks.expire_after(&k, ttl))
    }

    /// As `Db.persist`, in this keyspace.
    fn persist(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = bytes_arg(key, "key")?;
        self.with(py, |ks, _| ks.persist(&k))
    }

    /// Delete `key` (absent or not: no error either way).
    #[pyo3(signature = (key, sync=None))]
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, sync: Option<bool>) -> PyResult<()> {
        let k = bytes_arg(key, "key")?;
        self.write(py, sync, |b, ks| {
            b.delete_in(ks, &k);
        })
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(py, key, None)
    }

    /// Delete every key of this keyspace with `start <= key < end` (`None`: unbounded)
    /// with one record.
    #[pyo3(signature = (start=None, end=None, sync=None))]
    fn delete_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        sync: Option<bool>,
    ) -> PyResult<()> {
        let (s, e) = (opt_bytes_arg(start, "start")?, opt_bytes_arg(end, "end")?);
        self.write(py, sync, |b, ks| {
            b.delete_range_in::<&[u8], _>(ks, bounds(&s, &e));
        })
    }

    /// Flush, then merge every table of this keyspace into one sorted run of its deepest
    /// level.
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |ks, _| ks.compact())
    }

    /// The engine's counters with this keyspace's tree (its levels, memtables and lookup
    /// counters), as plain Python data shaped as `Db.stats()`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.with(py, |ks, _| Ok(ks.stats()))?;
        report::stats_dict(py, &stats)
    }

    fn __repr__(&self) -> String {
        format!("<shamba.Keyspace {:?} of {:?}>", self.ks.name(), self.db.get().path())
    }
}
