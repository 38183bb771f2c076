//! Engine errors as Python exceptions: each `shamba::Error` kind raises its own class, all
//! under `shamba.Error` (the classes live in `python/shamba/_errors.py`, where they can
//! also derive from `ValueError` and `OSError`).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// The module that defines the exception classes.
const ERRORS_MODULE: &str = "shamba._errors";

/// `e` as the Python exception of its kind.
pub(crate) fn to_py(py: Python<'_>, e: &shamba::Error) -> PyErr {
    match build(py, e) {
        Ok(err) => err,
        // Raising the mapped exception failed (the package's Python half missing): say so
        // rather than lose the engine's message.
        Err(import) => {
            let err = pyo3::exceptions::PyRuntimeError::new_err(e.to_string());
            err.set_cause(py, Some(import));
            err
        }
    }
}

/// A `PyResult` from an engine `Result`.
pub(crate) trait IntoPyResult<T> {
    /// Map the error with [`to_py`].
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for shamba::Result<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, &e))
    }
}

fn build(py: Python<'_>, e: &shamba::Error) -> PyResult<PyErr> {
    let module = py.import(ERRORS_MODULE)?;
    let class = |name: &str| module.getattr(name);
    let msg = e.to_string();
    let value = match e {
        shamba::Error::Io(io) => {
            let args = match io.raw_os_error() {
                // OSError(errno, strerror) fills `.errno` and `.strerror`.
                Some(code) => {
                    PyTuple::new(py, [code.into_pyobject(py)?.into_any(), msg.into_pyobject(py)?.into_any()])?
                }
                None => PyTuple::new(py, [msg])?,
            };
            class("IoError")?.call1(args)?
        }
        shamba::Error::Corruption { file, offset, reason } => {
            let v = class("CorruptionError")?.call1((msg,))?;
            v.setattr("file", file)?;
            v.setattr("offset", offset)?;
            v.setattr("reason", reason)?;
            v
        }
        shamba::Error::InvalidOptions(_) => class("InvalidOptionsError")?.call1((msg,))?,
        shamba::Error::InvalidArgument(_) => class("InvalidArgumentError")?.call1((msg,))?,
        shamba::Error::Locked(path) => {
            let v = class("LockedError")?.call1((msg,))?;
            v.setattr("path", path)?;
            v
        }
        shamba::Error::Closed => class("ClosedError")?.call1((msg,))?,
        shamba::Error::ReadOnly { cause } => {
            let v = class("ReadOnlyError")?.call1((msg,))?;
            // The background error, as its own class, is the exception's `__cause__`.
            let cause = to_py(py, cause);
            let err = PyErr::from_value(v);
            err.set_cause(py, Some(cause));
            return Ok(err);
        }
        shamba::Error::Conflict { keyspace, key, reason } => {
            let v = class("ConflictError")?.call1((msg,))?;
            v.setattr("keyspace", keyspace)?;
            v.setattr("key", PyBytes::new(py, key))?;
            v.setattr("reason", reason)?;
            v
        }
        shamba::Error::Internal { what } => {
            let v = class("InternalError")?.call1((msg,))?;
            v.setattr("what", what)?;
            v
        }
        _ => class("Error")?.call1((msg,))?,
    };
    Ok(PyErr::from_value(value))
}
