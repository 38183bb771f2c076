//! `shamba.Snapshot`: a consistent read view, released by `release()` or a `with` block.

use crate::bytes_arg::{byte_keys, bytes_arg, opt_bytes_arg, values_list};
use crate::db::{bounds, Db};
use crate::errors::{to_py, IntoPyResult};
use crate::iter::{Iterator, Yields};
use crate::keyspace::Keyspace;
use parking_lot::RwLock;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::ops::Bound as Edge;

/// A read view of the database as of `Db.snapshot()`: later writes are not seen, and
/// compaction keeps what it sees until it is released (`release()`, the end of a `with`
/// block, or garbage collection). Reads after `release()` raise `ClosedError`.
///
/// It reads every keyspace at the same moment: each read takes `keyspace=` (a `Keyspace`
/// of the same database; default: the database's own keys).
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

    /// The engine keyspace of `keyspace`, checked to be of this snapshot's database.
    fn keyspace_of(
        &self,
        py: Python<'_>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Option<shamba::Keyspace>> {
        let Some(ks) = keyspace else { return Ok(None) };
        let ks = ks.get();
        if !ks.db.is(&self.db) {
            let e = shamba::Error::InvalidArgument(format!(
                "keyspace {:?} belongs to another database than this snapshot's",
                ks.ks.name()
            ));
            return Err(to_py(py, &e));
        }
        Ok(Some(ks.ks.clone()))
    }

    fn lookup(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Option<Vec<u8>>> {
        let k = bytes_arg(key, "key")?;
        let ks = self.keyspace_of(py, keyspace)?;
        self.with(py, |s| match &ks {
            Some(ks) => s.get_in(ks, &k),
            None => s.get(&k),
        })
    }

    /// An iterator over `range` of `keyspace` (default: the database's own keys).
    fn iterate(
        &self,
        py: Python<'_>,
        keyspace: Option<&Bound<'_, Keyspace>>,
        range: (Edge<&[u8]>, Edge<&[u8]>),
        reverse: bool,
        yields: Yields,
    ) -> PyResult<Iterator> {
        let ks = self.keyspace_of(py, keyspace)?;
        let it = self.with(py, |snap| {
            Ok(match &ks {
                Some(ks) => snap.range_in::<&[u8], _>(ks, range),
                None => snap.range::<&[u8], _>(range),
            })
        })?;
        Ok(Iterator::new(it, reverse, yields))
    }
}

/// The first key after every key that starts with `prefix` (`None`: no such key, the
/// prefix is empty or all 0xff).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[pymethods]
impl Snapshot {
    /// The sequence number this snapshot reads at.
    #[getter]
    fn sequence(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |s| Ok(s.sequence()))
    }

    /// The value of `key` (in `keyspace`) as of this snapshot, or `default`.
    #[pyo3(signature = (key, default=None, *, keyspace=None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Py<PyAny>> {
        Ok(match self.lookup(py, key, keyspace)? {
            Some(v) => PyBytes::new(py, &v).into_any().unbind(),
            None => default.unwrap_or_else(|| py.None()),
        })
    }

    /// The values of `keys` (in `keyspace`) as of this snapshot, in their order, `None`
    /// where absent: one batched lookup.
    #[pyo3(signature = (keys, *, keyspace=None))]
    fn multi_get(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Vec<Option<Py<PyBytes>>>> {
        let keys = byte_keys(keys)?;
        let ks = self.keyspace_of(py, keyspace)?;
        let values = self.with(py, |s| {
            let found = match &ks {
                Some(ks) => s.multi_get_in(ks, &keys),
                None => s.multi_get(&keys),
            };
            found.into_iter().collect::<shamba::Result<Vec<_>>>()
        })?;
        Ok(values_list(py, values))
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        match self.lookup(py, key, None)? {
            Some(v) => Ok(PyBytes::new(py, &v)),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.lookup(py, key, None)?.is_some())
    }

    /// `(key, value)` pairs (of `keyspace`) with `start <= key < end` as of this snapshot.
    #[pyo3(signature = (start=None, end=None, reverse=false, *, keyspace=None))]
    fn range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Iterator> {
        let (s, e) = (opt_bytes_arg(start, "start")?, opt_bytes_arg(end, "end")?);
        self.iterate(py, keyspace, bounds(&s, &e), reverse, Yields::Items)
    }

    /// `(key, value)` pairs (of `keyspace`) whose keys start with `prefix`, as of this
    /// snapshot.
    #[pyo3(signature = (prefix, reverse=false, *, keyspace=None))]
    fn prefix(
        &self,
        py: Python<'_>,
        prefix: &Bound<'_, PyAny>,
        reverse: bool,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Iterator> {
        let p = bytes_arg(prefix, "prefix")?;
        let end = prefix_end(p.as_ref());
        let range = (Edge::Included(p.as_ref()), end.as_deref().map_or(Edge::Unbounded, Edge::Excluded));
        self.iterate(py, keyspace, range, reverse, Yields::Items)
    }

    /// Every key (of `keyspace`) as of this snapshot.
    #[pyo3(signature = (reverse=false, *, keyspace=None))]
    fn keys(&self, py: Python<'_>, reverse: bool, keyspace: Option<&Bound<'_, Keyspace>>) -> PyResult<Iterator> {
        self.iterate(py, keyspace, (Edge::Unbounded, Edge::Unbounded), reverse, Yields::Keys)
    }

    /// Every `(key, value)` pair (of `keyspace`) as of this snapshot.
    #[pyo3(signature = (reverse=false, *, keyspace=None))]
    fn items(&self, py: Python<'_>, reverse: bool, keyspace: Option<&Bound<'_, Keyspace>>) -> PyResult<Iterator> {
        self.iterate(py, keyspace, (Edge::Unbounded, Edge::Unbounded), reverse, Yields::Items)
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
