//! `ttl=` arguments and `ttl()` answers: a time to live in seconds, an `int` or a `float`.

use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};
use std::time::Duration;

/// A `ttl=` argument: `None` (no expiry) or seconds as an `int` or `float`, at least 0.
///
/// # Errors
///
/// `TypeError` for another type (a `bool` included), `ValueError` for a negative, NaN or
/// infinite number of seconds.
pub(crate) fn ttl_arg(ttl: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Duration>> {
    let Some(v) = ttl.filter(|v| !v.is_none()) else { return Ok(None) };
    if v.is_instance_of::<PyBool>() || !(v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>()) {
        return Err(PyTypeError::new_err(format!("ttl must be seconds as an int or a float, not {}", v.get_type())));
    }
    let secs: f64 = v.extract()?;
    Duration::try_from_secs_f64(secs)
        .map(Some)
        .map_err(|_| PyValueError::new_err(format!("ttl must be a finite number of seconds >= 0, got {secs}")))
}

/// A key's time to live as Python sees it: seconds left as a `float`, `None` when the value
/// does not expire.
///
/// # Errors
///
/// `KeyError` (carrying `key`) when no read finds the key.
pub(crate) fn ttl_answer(py: Python<'_>, ttl: shamba::Ttl, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    match ttl {
        shamba::Ttl::Absent => Err(PyKeyError::new_err(key.clone().unbind())),
        shamba::Ttl::Persistent => Ok(py.None()),
        shamba::Ttl::Remaining(d) => Ok(PyFloat::new(py, d.as_secs_f64()).into_any().unbind()),
    }
}
