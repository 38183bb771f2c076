//! `shamba.WriteBatch`: puts and deletes applied together by `Db.write`.

use crate::bytes_arg::{bytes_arg, opt_bytes_arg};
use crate::keyspace::Keyspace;
use crate::ttl_arg::ttl_arg;
use parking_lot::Mutex;
use pyo3::prelude::*;

/// A group of puts and deletes that `Db.write` applies atomically, in order.
///
/// Each operation goes to the keyspace its `keyspace=` names (default: the database's own
/// keys); one batch may write to several keyspaces of one database and is still atomic.
/// The batch is kept after `Db.write` (it is copied), so it may be written again or
/// cleared. Methods return the batch, so calls chain.
#[pyclass(frozen, module = "shamba")]
pub(crate) struct WriteBatch {
    batch: Mutex<shamba::WriteBatch>,
}

impl WriteBatch {
    /// A copy of the operations so far.
    pub(crate) fn snapshot(&self) -> shamba::WriteBatch {
        self.batch.lock().clone()
    }
}

#[pymethods]
impl WriteBatch {
    #[new]
    fn new() -> Self {
        WriteBatch { batch: Mutex::new(shamba::WriteBatch::new()) }
    }

    /// Add a put of `key` to `value` (in `keyspace`, if given); with `ttl=` (seconds) the
    /// key expires that long after the batch is written.
    #[pyo3(signature = (key, value, *, keyspace=None, ttl=None))]
    fn put<'py>(
        slf: &Bound<'py, Self>,
        key: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        keyspace: Option<&Bound<'py, Keyspace>>,
        ttl: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let (k, v) = (bytes_arg(key, "key")?, bytes_arg(value, "value")?);
        let ttl = ttl_arg(ttl)?;
        let mut b = slf.get().batch.lock();
        match (keyspace, ttl) {
            (Some(ks), Some(ttl)) => b.put_with_ttl_in(&ks.get().ks, k, v, ttl),
            (Some(ks), None) => b.put_in(&ks.get().ks, k, v),
            (None, Some(ttl)) => b.put_with_ttl(k, v, ttl),
            (None, None) => b.put(k, v),
        };
        Ok(slf.clone())
    }

    /// Add a delete of `key` (in `keyspace`, if given).
    #[pyo3(signature = (key, *, keyspace=None))]
    fn delete<'py>(
        slf: &Bound<'py, Self>,
        key: &Bound<'py, PyAny>,
        keyspace: Option<&Bound<'py, Keyspace>>,
    ) -> PyResult<Bound<'py, Self>> {
        let k = bytes_arg(key, "key")?;
        let mut b = slf.get().batch.lock();
        match keyspace {
            Some(ks) => b.delete_in(&ks.get().ks, k),
            None => b.delete(k),
        };
        Ok(slf.clone())
    }

    /// Add a delete of every key with `start <= key < end` (`None`: unbounded), in
    /// `keyspace` if given.
    #[pyo3(signature = (start=None, end=None, *, keyspace=None))]
    fn delete_range<'py>(
        slf: &Bound<'py, Self>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        keyspace: Option<&Bound<'py, Keyspace>>,
    ) -> PyResult<Bound<'py, Self>> {
        let (s, e) = (opt_bytes_arg(start, "start")?, opt_bytes_arg(end, "end")?);
        let range = crate::readable::bounds(&s, &e);
        let mut b = slf.get().batch.lock();
        match keyspace {
            Some(ks) => b.delete_range_in::<&[u8], _>(&ks.get().ks, range),
            None => b.delete_range::<&[u8], _>(range),
        };
        Ok(slf.clone())
    }

    /// Remove every operation.
    fn clear(&self) {
        self.batch.lock().clear();
    }

    /// The number of operations.
    fn __len__(&self) -> usize {
        self.batch.lock().len()
    }

    fn __repr__(&self) -> String {
        let b = self.batch.lock();
        format!("<shamba.WriteBatch ops={} bytes={}>", b.len(), b.approximate_size())
    }
}
