//! `shamba.Transaction`: an optimistic transaction over `shamba::Transaction`, committed at
//! the end of a `with` block (rolled back when the block raises).

use crate::bytes_arg::{bytes_arg, opt_bytes_arg};
use crate::db::Db;
use crate::errors::{to_py, IntoPyResult};
use crate::keyspace::Keyspace;
use crate::readable::{bounds, Readable};
use crate::ttl_arg::ttl_arg;
use parking_lot::RwLock;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// An optimistic transaction (`Db.transaction()`): it reads the database as of the moment
/// it began, with its own writes over that (the reads of `Readable`, each with
/// `keyspace=`), and buffers its writes (`put`, `delete`, `delete_range`, `tx[k] = v`,
/// `del tx[k]`) until `commit()`, which applies them as one atomic batch.
///
/// `with db.transaction() as tx:` commits when the block ends and rolls back when it
/// raises. The commit raises `ConflictError` (naming the key) when a key the transaction
/// wrote, or read with `get_for_update`, was written by someone else after it began;
/// nothing is written then, and `Db.transact(fn)` runs `fn` again in a new transaction.
/// After `commit()` or `rollback()` every call raises `ClosedError`.
#[pyclass(frozen, extends = Readable, module = "shamba")]
pub(crate) struct Transaction {
    // `None` once committed or rolled back.
    tx: RwLock<Option<shamba::Transaction>>,
    db: Py<Db>,
}

impl Transaction {
    /// The Python object of `tx`, begun on `db`.
    pub(crate) fn new(py: Python<'_>, tx: shamba::Transaction, db: Py<Db>) -> PyResult<Py<Transaction>> {
        let tx = Transaction { tx: RwLock::new(Some(tx)), db };
        Py::new(py, PyClassInitializer::from(Readable).add_subclass(tx))
    }

    /// Run `f` on the engine transaction, in `keyspace` (checked to be of this database)
    /// or the default one, with the interpreter released.
    pub(crate) fn with<T: Send>(
        &self,
        py: Python<'_>,
        keyspace: Option<&Bound<'_, Keyspace>>,
        f: impl FnOnce(&shamba::Transaction, Option<&shamba::Keyspace>) -> shamba::Result<T> + Send,
    ) -> PyResult<T> {
        let ks = match keyspace {
            None => None,
            Some(ks) => {
                let ks = ks.get();
                if !ks.db.is(&self.db) {
                    let e = shamba::Error::InvalidArgument(format!(
                        "keyspace {:?} belongs to another database than this transaction's",
                        ks.ks.name()
                    ));
                    return Err(to_py(py, &e));
                }
                Some(ks.ks.clone())
            }
        };
        let db = self.db.get();
        py.detach(|| match self.tx.read().as_ref() {
            Some(tx) if !db.is_closed() => f(tx, ks.as_ref()),
            _ => Err(shamba::Error::Closed),
        })
        .py_err(py)
    }

    /// Commit, leaving the transaction finished whatever the outcome.
    pub(crate) fn finish_commit(&self, py: Python<'_>) -> PyResult<()> {
        let db = self.db.get();
        py.detach(|| match self.tx.write().take() {
            Some(tx) if !db.is_closed() => tx.commit(),
            _ => Err(shamba::Error::Closed),
        })
        .py_err(py)
    }

    /// Drop the transaction's writes (nothing happens if it is finished already).
    pub(crate) fn finish_rollback(&self, py: Python<'_>) {
        // Dropping it releases its lease under the engine's lock: not holding the interpreter.
        py.detach(|| drop(self.tx.write().take()));
    }
}

#[pymethods]
impl Transaction {
    /// The sequence number the transaction reads at.
    #[getter]
    fn sequence(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, None, |tx, _| Ok(tx.sequence()))
    }

    /// The value of `key` (or `default` when absent), and make the commit depend on it: it
    /// raises `ConflictError` if someone else writes `key` after the transaction began.
    #[pyo3(signature = (key, default=None, *, keyspace=None))]
    fn get_for_update(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<Py<PyAny>> {
        let k = bytes_arg(key, "key")?;
        let got = self.with(py, keyspace, |tx, ks| match ks {
            Some(ks) => tx.keyspace(ks).get_for_update(&k),
            None => tx.get_for_update(&k),
        })?;
        Ok(match got {
            Some(v) => PyBytes::new(py, &v).into_any().unbind(),
            None => default.unwrap_or_else(|| py.None()),
        })
    }

    /// Set `key` to `value` at commit; with `ttl=` (seconds) it expires that long after
    /// this call.
    #[pyo3(signature = (key, value, *, keyspace=None, ttl=None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        keyspace: Option<&Bound<'_, Keyspace>>,
        ttl: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let (k, v) = (bytes_arg(key, "key")?, bytes_arg(value, "value")?);
        let ttl = ttl_arg(ttl)?;
        self.with(py, keyspace, |tx, ks| match (ks, ttl) {
            (Some(ks), Some(ttl)) => tx.keyspace(ks).put_with_ttl(&k, &v, ttl),
            (Some(ks), None) => tx.keyspace(ks).put(&k, &v),
            (None, Some(ttl)) => tx.put_with_ttl(&k, &v, ttl),
            (None, None) => tx.put(&k, &v),
        })
    }

    fn __setitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(py, key, value, None, None)
    }

    /// Delete `key` at commit (absent or not).
    #[pyo3(signature = (key, *, keyspace=None))]
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, keyspace: Option<&Bound<'_, Keyspace>>) -> PyResult<()> {
        let k = bytes_arg(key, "key")?;
        self.with(py, keyspace, |tx, ks| match ks {
            Some(ks) => tx.keyspace(ks).delete(&k),
            None => tx.delete(&k),
        })
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.delete(py, key, None)
    }

    /// Delete every key with `start <= key < end` (`None`: unbounded) at commit; the
    /// transaction's reads stop seeing them at once. The range's keys are not checked for
    /// conflicts: read one with `get_for_update` to make the commit depend on it.
    #[pyo3(signature = (start=None, end=None, *, keyspace=None))]
    fn delete_range(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        keyspace: Option<&Bound<'_, Keyspace>>,
    ) -> PyResult<()> {
        let (s, e) = (opt_bytes_arg(start, "start")?, opt_bytes_arg(end, "end")?);
        let range = bounds(&s, &e);
        self.with(py, keyspace, |tx, ks| match ks {
            Some(ks) => tx.keyspace(ks).delete_range::<&[u8], _>(range),
            None => tx.delete_range::<&[u8], _>(range),
        })
    }

    /// Apply the transaction's writes as one atomic batch; `ConflictError` when a key it
    /// wrote or read for update was written by someone else since it began (nothing is
    /// written). The transaction is finished either way.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        self.finish_commit(py)
    }

    /// Drop the transaction's writes; it is finished.
    fn rollback(&self, py: Python<'_>) {
        self.finish_rollback(py);
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Commit when the block ended normally, roll back when it raised (the exception goes
    /// on).
    #[pyo3(signature = (exc_type, _exc=None, _tb=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if exc_type.is_some_and(|t| !t.is_none()) {
            self.finish_rollback(py);
            return Ok(false);
        }
        // Finished inside the block (committed or rolled back): nothing left to do.
        let open = py.detach(|| self.tx.read().is_some());
        if open {
            self.finish_commit(py)?;
        }
        Ok(false)
    }
}
