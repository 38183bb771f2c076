//! `shamba.Snapshot`: a consistent read view, released by `release()` or a `with` block.

use crate::db::Db;
use crate::errors::{to_py, IntoPyResult};
use crate::keyspace::Keyspace;
use crate::readable::Readable;
use parking_lot::RwLock;
use pyo3::prelude::*;
use std::sync::Arc;

/// A read view of the database as of `Db.snapshot()`: later writes are not seen, and
/// compaction keeps what it sees until it is released (`release()`, the end of a `with`
/// block, or garbage collection). Reads after `release()` raise `ClosedError`.
///
/// It reads every keyspace at the same moment: `snap.keyspace(ks)` is the snapshot of the
/// keyspace `ks` (of the same database) at that moment, and each read also takes
/// `keyspace=` (default: the snapshot's own keyspace, the database's own keys for
/// `Db.snapshot()`). The reads are those of `Readable`.
#[pyclass(frozen, extends = Readable, module = "shamba")]
pub(crate) struct Snapshot {
    // Shared with the snapshots of other keyspaces made from it: releasing one releases
    // the moment for all of them.
    snap: Arc<RwLock<Option<shamba::Snapshot>>>,
    // The keyspace it reads (`None`: the one the engine snapshot reads, the default).
    keyspace: Option<shamba::Keyspace>,
    // The database it was taken from: once that is closed, reads raise `ClosedError` (the
    // engine's iterators made after a close would be empty instead).
    db: Py<Db>,
}

impl Snapshot {
    /// The Python object of `snap`, taken from `db`.
    pub(crate) fn new(py: Python<'_>, snap: shamba::Snapshot, db: Py<Db>) -> PyResult<Py<Snapshot>> {
        let snap = Snapshot { snap: Arc::new(RwLock::new(Some(snap))), keyspace: None, db };
        Py::new(py, PyClassInitializer::from(Readable).add_subclass(snap))
    }

    /// Run `f` on the engine snapshot with the interpreter released.
    pub(crate) fn with<T: Send>(
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
    pub(crate) fn keyspace_of(
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

    /// The engine snapshot that reads `keyspace` (a read's `keyspace=`), else this
    /// snapshot's own keyspace, at the moment of `snap`.
    pub(crate) fn reader(&self, snap: &shamba::Snapshot, keyspace: Option<&shamba::Keyspace>) -> shamba::Snapshot {
        match keyspace.or(self.keyspace.as_ref()) {
            Some(ks) => snap.keyspace(ks),
            None => snap.clone(),
        }
    }
}

#[pymethods]
impl Snapshot {
    /// The sequence number this snapshot reads at.
    #[getter]
    fn sequence(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |s| Ok(s.sequence()))
    }

    /// The snapshot of `keyspace` (a `Keyspace` of the same database) at this snapshot's
    /// moment: its reads read that keyspace. The two share the moment: releasing either
    /// releases both.
    fn keyspace(&self, py: Python<'_>, keyspace: &Bound<'_, Keyspace>) -> PyResult<Py<Snapshot>> {
        let ks = self.keyspace_of(py, Some(keyspace))?;
        let snap = Snapshot { snap: self.snap.clone(), keyspace: ks, db: self.db.clone_ref(py) };
        Py::new(py, PyClassInitializer::from(Readable).add_subclass(snap))
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
