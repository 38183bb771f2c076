//! `shamba.Db(path, **options)`: keyword arguments to engine `Options`.
//!
//! The filter, probe and cache knobs keep the names and values of `shamba bench`'s flags
//! (`bits_per_key`, `layout="modules-eq"`, `policy="shamba-p"`, `ribbon_from_level`,
//! `cache_mb`, `cache_pct`, ...); the others keep the engine's field names
//! (`write_buffer_size`, `max_open_files`, `compression`, ...). A wrong type is a
//! `TypeError`, a value out of range a `ValueError`, an unknown keyword a `TypeError`
//! naming it; what only the engine can judge (one value against another) is checked by
//! `Options::validate` at open and raises `shamba.InvalidOptionsError`. The keywords that
//! shape one tree are in `tree_options`, shared with `Db.keyspace()`; `keyspaces={name:
//! {...}}` gives keyspaces options of their own at open (`Options::keyspace_options`).

use crate::tree_options::{keyspace_options, TreeKeywords, TREE_KEYWORDS};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use shamba::{KeyspaceOptions, Options};

/// The keywords `Db()` takes besides the tree keywords, for the error that names an
/// unknown one.
const DB_KEYWORDS: &[&str] = &[
    "create_if_missing",
    "error_if_exists",
    "cache_mb",
    "cache_pct",
    "cache_index_and_filter",
    "pinned_metadata_limit",
    "filter_memory_budget",
    "partition",
    "write_buffer_size",
    "target_file_size",
    "max_open_files",
    "paranoid_file_checks",
    "background_nice",
    "sync",
    "keyspaces",
];

/// What the keyword arguments of `Db()` ask for.
pub(crate) struct DbConfig {
    /// The engine's options.
    pub(crate) options: Options,
    /// Size the block cache to this percentage of the filter and index bytes found at open.
    pub(crate) cache_pct: Option<f64>,
    /// The default of `sync` for `put`, `delete` and `write`.
    pub(crate) sync: bool,
}

pub(crate) const MIB: f64 = 1024.0 * 1024.0;

/// Parse `Db()`'s keyword arguments.
///
/// # Errors
///
/// `TypeError` for an unknown keyword or a value of the wrong type, `ValueError` for a
/// value out of range or a name not among the choices.
pub(crate) fn parse(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<DbConfig> {
    let mut o = Options::default();
    let mut cache_pct = None;
    let mut sync = false;
    let mut tree = TreeKeywords::default();
    let mut keyspaces = None;
    let Some(kwargs) = kwargs else {
        return Ok(DbConfig { options: o, cache_pct, sync });
    };
    for (key, value) in kwargs.iter() {
        let name: String = key.extract()?;
        let v = &value;
        let n = name.as_str();
        if tree.take(&mut o, n, v)? {
            continue;
        }
        match n {
            "create_if_missing" => o.create_if_missing = boolean(v, n)?,
            "error_if_exists" => o.error_if_exists = boolean(v, n)?,
            "cache_mb" => o.cache_capacity = (float(v, n, 0.0)? * MIB) as usize,
            "cache_pct" => cache_pct = if v.is_none() { None } else { Some(float(v, n, 0.0)?) },
            "cache_index_and_filter" => o.cache_index_and_filter_blocks = boolean(v, n)?,
            "pinned_metadata_limit" => o.pinned_metadata_limit = int(v, n, 0)?,
            "filter_memory_budget" => o.filter_memory_budget = if v.is_none() { None } else { Some(int(v, n, 0)?) },
            "partition" => o.partition_index_and_filters = boolean(v, n)?,
            "write_buffer_size" => o.write_buffer_size = usize_arg(v, n, 4096)?,
            "target_file_size" => o.target_file_size = int(v, n, 4096)?,
            "max_open_files" => o.max_open_files = usize_arg(v, n, 16)?,
            "paranoid_file_checks" => o.paranoid_file_checks = boolean(v, n)?,
            "background_nice" => {
                o.background_nice =
                    u8::try_from(int(v, n, 0)?).ok().filter(|x| *x <= 19).ok_or_else(|| out_of_range(n, "in 0..=19"))?
            }
            "sync" => sync = boolean(v, n)?,
            "keyspaces" => keyspaces = Some(value.clone()),
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "Db() got an unexpected keyword argument '{n}' (known: {}, {})",
                    TREE_KEYWORDS.join(", "),
                    DB_KEYWORDS.join(", ")
                )))
            }
        }
    }
    tree.finish(&mut o);
    if let Some(k) = keyspaces {
        o.keyspace_options = keyspaces_arg(&k, &KeyspaceOptions::of(&o))?;
    }
    Ok(DbConfig { options: o, cache_pct, sync })
}

/// `keyspaces={name: {keyword: value}}`: each keyspace's options over the database's.
fn keyspaces_arg(v: &Bound<'_, PyAny>, base: &KeyspaceOptions) -> PyResult<Vec<(String, KeyspaceOptions)>> {
    let d = v.cast::<PyDict>().map_err(|_| wrong_type("keyspaces", "a dict of name: dict of options", v))?;
    let mut out = Vec::new();
    for (name, opts) in d.iter() {
        if !name.is_instance_of::<PyString>() {
            return Err(wrong_type("a keyspaces name", "a str", &name));
        }
        let name: String = name.extract()?;
        let opts = opts.cast::<PyDict>().map_err(|_| wrong_type(&format!("keyspaces[{name:?}]"), "a dict", &opts))?;
        out.push((name.clone(), keyspace_options(base, Some(opts), &format!("keyspaces[{name:?}]"))?));
    }
    Ok(out)
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

pub(crate) fn wrong_type(name: &str, want: &str, v: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("{name} must be {want}, not {}", type_name(v)))
}

pub(crate) fn out_of_range(name: &str, want: &str) -> PyErr {
    PyValueError::new_err(format!("{name} must be {want}"))
}

/// A `bool` (an int such as 1 is refused: it is more likely a misplaced argument).
pub(crate) fn boolean(v: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    if v.is_instance_of::<PyBool>() {
        v.extract()
    } else {
        Err(wrong_type(name, "a bool", v))
    }
}

/// An `int` (not a `bool`) of at least `min`.
pub(crate) fn int(v: &Bound<'_, PyAny>, name: &str, min: u64) -> PyResult<u64> {
    if !v.is_instance_of::<PyInt>() || v.is_instance_of::<PyBool>() {
        return Err(wrong_type(name, "an int", v));
    }
    let x: i128 = v.extract().map_err(|_| out_of_range(name, "a 64-bit integer"))?;
    match u64::try_from(x) {
        Ok(x) if x >= min => Ok(x),
        _ => Err(out_of_range(name, &format!("at least {min}, got {x}"))),
    }
}

pub(crate) fn usize_arg(v: &Bound<'_, PyAny>, name: &str, min: u64) -> PyResult<usize> {
    usize::try_from(int(v, name, min)?).map_err(|_| out_of_range(name, "addressable"))
}

/// A finite `float` or `int` of at least `min`.
pub(crate) fn float(v: &Bound<'_, PyAny>, name: &str, min: f64) -> PyResult<f64> {
    let numeric = v.is_instance_of::<PyFloat>() || (v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>());
    if !numeric {
        return Err(wrong_type(name, "a number", v));
    }
    let x: f64 = v.extract()?;
    if x.is_finite() && x >= min {
        Ok(x)
    } else {
        Err(out_of_range(name, &format!("a finite number of at least {min}, got {x}")))
    }
}

/// One of `choices`, as a `str`.
pub(crate) fn choice(v: &Bound<'_, PyAny>, name: &str, choices: &[&str]) -> PyResult<String> {
    if !v.is_instance_of::<PyString>() {
        return Err(wrong_type(name, "a str", v));
    }
    let s: String = v.extract()?;
    if choices.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(PyValueError::new_err(format!("{name} must be one of {}, got {s:?}", choices.join(", "))))
    }
}
