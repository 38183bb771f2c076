//! `shamba.Keyspace`: one named keyspace of a database, dict-like as `Db` is, over
//! `shamba::Keyspace`.

use crate::bytes_arg::{byte_keys, bytes_arg, opt_bytes_arg, values_list};
use crate::db::{bounds, Db};
use crate::iter::{Iterator, Yields};
use crate::report;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// A keyspace of a database (`db.keyspace(name)`): its own sorted keys, levels and
/// compactions, sharing the database's log, so a `WriteBatch` across keyspaces is atomic
/// and a `Snapshot` reads every keyspace at one moment.
///
/// It offers what `Db` offers for its keys (`ks[k]`, `k in ks`, `del ks[k]`, `get`,
/// `put`, `delete`, `delete_range`, `multi_get`, `range`, `prefix`, `keys`, `values`,
/// `items`, iteration over its keys) and `compact()` and `stats()` of its own. Closing the
/// database closes it (`ClosedError`); after `db.drop_keyspace(name)` its calls raise
/// `InvalidArgumentError` and its iterators are empty.
#[pyclass(frozen, module = "shamba")]
pub(crate) struct Keyspace {
    pub(crate) ks: shamba::Keyspace,
    // Its database's Python handle: `close()` there ends this handle too, and batches and
    // snapshots check that a keyspace is of their database.
    pub(crate) db: Py<Db>,
}

impl Keyspace {
    pub(crate) fn new(ks: shamba::Keyspace, db: Py<Db>) -> Self {
        Keyspace { ks, db }
    }

    /// Run `f` on the keyspace and its open database with the interpreter released.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&shamba::Keyspace, &shamba::Db) -> shamba::Result<T> + Send,
    ) -> PyResult<T> {
        self.db.get().with(py, |db| f(&self.ks, db))
    }

    fn lookup(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
        let k = bytes_arg(key, "key")?;
        self.with(py, |ks, _| ks.get(&k))
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

    fn iterator(&self, py: Python<'_>, reverse: bool, yields: Yields) -> PyResult<Iterator> {
        let it = self.with(py, |ks, _| Ok(ks.iter()))?;
        Ok(Iterator::new(it, reverse, yields))
    }
}

#[pymethods]
impl Keyspace {
    /// Its name (`"default"` for the keyspace of `Db`'s own methods).
    #[getter]
    fn name(&self) -> &str {
        self.ks.name()
    }

    /// The value of `key`, or `default` when it is absent.
    #[pyo3(signature = (key, default=None))]
    fn get(&self, py: Python<'_>, key: &Bound<'_, PyAny>, default: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        Ok(match self.lookup(py, key)? {
            Some(v) => PyBytes::new(py, &v).into_any().unbind(),
            None => default.unwrap_or_else(|| py.None()),
        })
    }

    /// The values of `keys` at one moment, in their order, `None` where absent: one
    /// batched lookup.
    fn multi_get(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<Option<Py<PyBytes>>>> {
        let keys = byte_keys(keys)?;
        let values = self.with(py, |ks, _| ks.multi_get(&keys).into_iter().collect::<shamba::Result<Vec<_>>>())?;
        Ok(values_list(py, values))
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        match self.lookup(py, key)? {
            Some(v) => Ok(PyBytes::new(py, &v)),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.lookup(py, key)?.is_some())
    }

    /// Set `key` to `value`; `sync=True` waits until the write-ahead log is on the device
    /// (default: the `sync` the database was opened with).
    #[pyo3(signature = (key, value, sync=None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        sync: Option<bool>,
    ) -> PyResult<()> {
        let (k, v) = (bytes_arg(key, "key")?, bytes_arg(value, "value")?);
        self.write(py, sync, |b, ks| {
            b.put_in(ks, &k, &v);
        })
    }

    fn __setitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(py, key, value, None)
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

    /// `(key, value)` pairs with `start <= key < end` (`None`: unbounded), in key order,
    /// or reversed.
    #[pyo3(signature = (start=None, end=None, reverse=false))]
    fn range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<Iterator> {
        let (s, e) = (opt_bytes_arg(start, "start")?, opt_bytes_arg(end, "end")?);
        let r = bounds(&s, &e);
        let it = self.with(py, |ks, _| Ok(ks.range::<&[u8], _>(r)))?;
        Ok(Iterator::new(it, reverse, Yields::Items))
    }

    /// `(key, value)` pairs whose keys start with `prefix`, in key order (or reversed).
    #[pyo3(signature = (prefix, reverse=false))]
    fn prefix(&self, py: Python<'_>, prefix: &Bound<'_, PyAny>, reverse: bool) -> PyResult<Iterator> {
        let p = bytes_arg(prefix, "prefix")?;
        let it = self.with(py, |ks, _| Ok(ks.prefix(&p)))?;
        Ok(Iterator::new(it, reverse, Yields::Items))
    }

    /// Every key, in key order (or reversed).
    #[pyo3(signature = (reverse=false))]
    fn keys(&self, py: Python<'_>, reverse: bool) -> PyResult<Iterator> {
        self.iterator(py, reverse, Yields::Keys)
    }

    /// Every value, in key order (or reversed).
    #[pyo3(signature = (reverse=false))]
    fn values(&self, py: Python<'_>, reverse: bool) -> PyResult<Iterator> {
        self.iterator(py, reverse, Yields::Values)
    }

    /// Every `(key, value)` pair, in key order (or reversed).
    #[pyo3(signature = (reverse=false))]
    fn items(&self, py: Python<'_>, reverse: bool) -> PyResult<Iterator> {
        self.iterator(py, reverse, Yields::Items)
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Iterator> {
        self.iterator(py, false, Yields::Keys)
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
