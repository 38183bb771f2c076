//! `shamba.Iterator`: a Python iterator over a `shamba::DbIterator`, in either direction,
//! yielding keys, values or `(key, value)` pairs.

use crate::bytes_arg::bytes_arg;
use crate::errors::to_py;
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// What each step yields.
#[derive(Clone, Copy)]
pub(crate) enum Yields {
    Keys,
    Values,
    Items,
}

/// An iterator over a consistent view of the database (writes after its creation are not
/// seen), in key order or, made with `reverse=True`, in reverse key order.
///
/// A read error (a damaged block) is raised by the step that meets it; the iterator then
/// ends.
#[pyclass(frozen, module = "shamba", name = "Iterator")]
pub(crate) struct Iterator {
    // Locked only with the interpreter released: a step blocks no other thread.
    it: Mutex<shamba::DbIterator>,
    reverse: bool,
    yields: Yields,
}

impl Iterator {
    pub(crate) fn new(it: shamba::DbIterator, reverse: bool, yields: Yields) -> Self {
        Iterator { it: Mutex::new(it), reverse, yields }
    }
}

#[pymethods]
impl Iterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let step = py.detach(|| {
            let mut it = self.it.lock();
            if self.reverse {
                it.next_back()
            } else {
                it.next()
            }
        });
        let (k, v) = match step {
            None => return Ok(None),
            Some(Err(e)) => return Err(to_py(py, &e)),
            Some(Ok(kv)) => kv,
        };
        Ok(Some(match self.yields {
            Yields::Keys => PyBytes::new(py, &k).into_any().unbind(),
            Yields::Values => PyBytes::new(py, &v).into_any().unbind(),
            Yields::Items => (PyBytes::new(py, &k), PyBytes::new(py, &v)).into_pyobject(py)?.into_any().unbind(),
        }))
    }

    /// Restart at `key`: a forward iterator goes on from the first key at or after it, a
    /// reverse one from the last key at or before it (both within the iterator's range).
    fn seek(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = bytes_arg(key, "key")?;
        let k = k.as_ref();
        py.detach(|| {
            let mut it = self.it.lock();
            if self.reverse {
                it.seek_for_prev(k)
            } else {
                it.seek(k)
            }
        });
        Ok(())
    }
}
