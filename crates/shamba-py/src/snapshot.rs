//! `shamba.Snapshot`: a consistent read view, released by `release()` or a `with` block.

use crate::bytes_arg::{byte_keys, bytes_arg, opt_bytes_arg, values_list};
use crate::db::{bounds, Db};
use crate::errors::IntoPyResult;
use crate::iter::{Iterator, Yields};
use parking_lot::RwLock;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A read view of the database as of `Db.snapshot()`: later writes are not seen, and
/// compaction keeps what it sees until it is released (`release()`, the end of a `with`
/// block, or garbage collection). Reads after `release()` raise `ClosedError`.
#[pyclass(frozen, module = "shamba")]
pub(crate) struct Snapshot {
    snap: RwLock<Option<shamba::Snapshot>>,
    // The database it was taken from: once that is closed, reads raise `ClosedError` (the
    // engine's iterators made after a close would be empty instead).
    db: Py<Db>,
}

impl Snapshot {
    pub(crate) fn new(snap: shamba::Snapshot, db: Py<Db>) -> Self {
        Snapshot { snap: RwLock::new(Some(snap)), db }
    }

    /// Run `f` on the snapshot with the interpreter released.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&shamba::Snapshot) -> shamba::Result<T> + Send,
    ) -> PyResult<T> {
        let db = self.db.get();
        py.detach(|| match self.snap.read().as_ref() {
            Some(s) if !db.is_closed() => f(s),
            _ => Err(shamba::Error::Closed),
        })
        .py_err(py)
    }

    fn lookup(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
        let k = bytes_arg(key, "key")?;
        self.with(py, |s| s.get(&k))
    }
}

#[pymethods]
impl Snapshot {
    /// The sequence number this snapshot reads at.
    #[getter]
    fn sequence(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |s| Ok(s.sequence()))
    }

    /// The value of `key` as of this snapshot, or `default`.
    #[pyo3(signature = (key, default=None))]
    fn get(&self, py: Python<'_>, key: &Bound<'_, PyAny>, default: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
        Ok(match self.lookup(py, key)? {
            Some(v) => PyBytes::new(py, &v).into_any().unbind(),
            None => default.unwrap_or_else(|| py.None()),
        })
    }

    /// The values of `keys` as of this snapshot, in their order, `None` where absent: one
    /// batched lookup.
    fn multi_get(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<Option<Py<PyBytes>>>> {
        let keys = byte_keys(keys)?;
        let values = self.with(py, |s| s.multi_get(&keys).into_iter().collect::<shamba::Result<Vec<_>>>())?;
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

    /// `(key, value)` pairs with `start <= key < end` as of this snapshot.
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
        let it = self.with(py, |snap| Ok(snap.range::<&[u8], _>(r)))?;
        Ok(Iterator::new(it, reverse, Yields::Items))
    }

    /// `(key, value)` pairs whose keys start with `prefix`, as of this snapshot.
    #[pyo3(signature = (prefix, reverse=false))]
    fn prefix(&self, py: Python<'_>, prefix: &Bound<'_, PyAny>, reverse: bool) -> PyResult<Iterator> {
        let p = bytes_arg(prefix, "prefix")?;
        let it = self.with(py, |snap| Ok(snap.prefix(&p)))?;
        Ok(Iterator::new(it, reverse, Yields::Items))
    }

    /// Every key as of this snapshot.
    #[pyo3(signature = (reverse=false))]
    fn keys(&self, py: Python<'_>, reverse: bool) -> PyResult<Iterator> {
        let it = self.with(py, |snap| Ok(snap.iter()))?;
        Ok(Iterator::new(it, reverse, Yields::Keys))
    }

    /// Every `(key, value)` pair as of this snapshot.
    #[pyo3(signature = (reverse=false))]
    fn items(&self, py: Python<'_>, reverse: bool) -> PyResult<Iterator> {
        let it = self.with(py, |snap| Ok(snap.iter()))?;
        Ok(Iterator::new(it, reverse, Yields::Items))
    }

    /// Let compaction drop what only this snapshot saw. Reading it again raises
    /// `ClosedError`; releasing again does nothing.
    fn release(&self, py: Python<'_>) {
        // Dropping unregisters it under the engine's lock: not while holding the interpreter.
        py.detach(|| drop(self.snap.write().take()));
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.release(py);
        false
    }
}
