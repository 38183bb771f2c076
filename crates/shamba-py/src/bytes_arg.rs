//! Keys and values from Python: `bytes` borrowed as they are (immutable, so safe to read
//! with the interpreter released), `bytearray` and `memoryview` copied (another thread may
//! change them meanwhile); anything else, `str` included, is a `TypeError` naming the
//! argument.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};

/// The bytes of one key or value argument.
pub(crate) enum BytesArg<'a> {
    /// A `bytes` object's own buffer.
    Borrowed(&'a [u8]),
    /// A copy of a mutable buffer.
    Owned(Vec<u8>),
}

impl AsRef<[u8]> for BytesArg<'_> {
    fn as_ref(&self) -> &[u8] {
        match self {
            BytesArg::Borrowed(b) => b,
            BytesArg::Owned(v) => v,
        }
    }
}

/// The keys of an iterable of bytes (`multi_get`'s argument), copied: its items need not
/// outlive the loop that reads them.
///
/// # Errors
///
/// `TypeError` naming `keys` for an item that is not bytes-like, or when `obj` is not
/// iterable.
pub(crate) fn byte_keys(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u8>>> {
    obj.try_iter()?.map(|k| k.and_then(|k| bytes_arg(&k, "keys").map(|b| b.as_ref().to_vec()))).collect()
}

/// The values a batched lookup found, as Python data: `bytes`, or `None` where absent.
pub(crate) fn values_list(py: Python<'_>, values: Vec<Option<Vec<u8>>>) -> Vec<Option<Py<PyBytes>>> {
    values.into_iter().map(|v| v.map(|v| PyBytes::new(py, &v).unbind())).collect()
}

/// The bytes of `obj`, the argument called `name`.
///
/// # Errors
///
/// `TypeError` naming `name` when `obj` is not `bytes`, `bytearray` or a `memoryview`.
pub(crate) fn bytes_arg<'a>(obj: &'a Bound<'_, PyAny>, name: &str) -> PyResult<BytesArg<'a>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(BytesArg::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(BytesArg::Owned(b.to_vec()));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        // The buffer protocol is not in the stable ABI before 3.11: copy through Python.
        let b = obj.call_method0("tobytes")?;
        return Ok(BytesArg::Owned(b.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Err(PyTypeError::new_err(format!(
        "{name} must be bytes, bytearray or memoryview, not {}",
        obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
    )))
}

/// Like [`bytes_arg`] for an optional argument: `None` stays `None`.
///
/// # Errors
///
/// As [`bytes_arg`].
pub(crate) fn opt_bytes_arg<'a>(obj: Option<&'a Bound<'_, PyAny>>, name: &str) -> PyResult<Option<BytesArg<'a>>> {
    match obj {
        Some(o) if !o.is_none() => bytes_arg(o, name).map(Some),
        _ => Ok(None),
    }
}
