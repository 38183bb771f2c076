//! `shamba.Db(path, **options)`: keyword arguments to engine `Options`.
//!
//! The filter, probe and cache knobs keep the names and values of `shamba bench`'s flags
//! (`bits_per_key`, `layout="modules-eq"`, `policy="shamba-p"`, `ribbon_from_level`,
//! `cache_mb`, `cache_pct`, ...); the others keep the engine's field names
//! (`write_buffer_size`, `max_open_files`, `compression`, ...). A wrong type is a
//! `TypeError`, a value out of range a `ValueError`, an unknown keyword a `TypeError`
//! naming it; what only the engine can judge (one value against another) is checked by
//! `Options::validate` at open and raises `shamba.InvalidOptionsError`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use shamba::filter::{Allocation, FilterLayout, ModuleSizes};
use shamba::{CompactionStyle, Compression, ElasticPolicy, Options, ProbePolicy, ShambaPolicy, Skipping};

/// Every keyword `Db()` takes, for the error that names an unknown one.
const KEYWORDS: &[&str] = &[
    "create_if_missing",
    "error_if_exists",
    "bits_per_key",
    "layout",
    "parts",
    "first_bits_per_key",
    "ribbon_from_level",
    "monkey",
    "policy",
    "elastic_budget_mb",
    "life_time",
    "cache_mb",
    "cache_pct",
    "cache_index_and_filter",
    "filter_memory_budget",
    "partition",
    "compression",
    "compaction_style",
    "write_buffer_size",
    "target_file_size",
    "block_size",
    "max_open_files",
    "paranoid_file_checks",
    "sync",
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

const MIB: f64 = 1024.0 * 1024.0;

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
    let (mut layout, mut parts, mut first_bits) = ("whole".to_string(), 2u8, 2.0f64);
    let (mut policy, mut budget_mb, mut life_time) = ("plain".to_string(), 8.0f64, 1000u64);
    let Some(kwargs) = kwargs else {
        return Ok(DbConfig { options: o, cache_pct, sync });
    };
    for (key, value) in kwargs.iter() {
        let name: String = key.extract()?;
        let v = &value;
        let n = name.as_str();
        match n {
            "create_if_missing" => o.create_if_missing = boolean(v, n)?,
            "error_if_exists" => o.error_if_exists = boolean(v, n)?,
            "bits_per_key" => o.filter_policy.bits_per_key = float(v, n, 0.0)?,
            "layout" => layout = choice(v, n, &["whole", "modules-eq", "modules-prop", "units"])?,
            "parts" => parts = u8::try_from(int(v, n, 1)?).map_err(|_| out_of_range(n, "at most 255"))?,
            "first_bits_per_key" => first_bits = float(v, n, 0.0)?,
            "ribbon_from_level" => {
                o.filter_policy.ribbon_from_level = if v.is_none() { None } else { Some(usize_arg(v, n, 0)?) }
            }
            "monkey" => {
                o.filter_policy.allocation = if boolean(v, n)? { Allocation::Monkey } else { Allocation::Uniform }
            }
            "policy" => {
                policy = choice(
                    v,
                    n,
                    &["plain", "no-last-level", "shamba", "shamba-p", "shamba-f", "shamba-odds", "elastic"],
                )?
            }
            "elastic_budget_mb" => budget_mb = float(v, n, 0.0)?,
            "life_time" => life_time = int(v, n, 1)?,
            "cache_mb" => o.cache_capacity = (float(v, n, 0.0)? * MIB) as usize,
            "cache_pct" => cache_pct = if v.is_none() { None } else { Some(float(v, n, 0.0)?) },
            "cache_index_and_filter" => o.cache_index_and_filter_blocks = boolean(v, n)?,
            "filter_memory_budget" => o.filter_memory_budget = if v.is_none() { None } else { Some(int(v, n, 0)?) },
            "partition" => o.partition_index_and_filters = boolean(v, n)?,
            "compression" => {
                o.compression = match choice(v, n, &["none", "lz4"])?.as_str() {
                    "lz4" => Compression::Lz4,
                    _ => Compression::None,
                }
            }
            "compaction_style" => {
                o.compaction_style = match choice(v, n, &["leveled", "tiered"])?.as_str() {
                    "tiered" => CompactionStyle::Tiered,
                    _ => CompactionStyle::Leveled,
                }
            }
            "write_buffer_size" => o.write_buffer_size = usize_arg(v, n, 4096)?,
            "target_file_size" => o.target_file_size = int(v, n, 4096)?,
            "block_size" => o.block_size = usize_arg(v, n, 64)?,
            "max_open_files" => o.max_open_files = usize_arg(v, n, 16)?,
            "paranoid_file_checks" => o.paranoid_file_checks = boolean(v, n)?,
            "sync" => sync = boolean(v, n)?,
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "Db() got an unexpected keyword argument '{n}' (known: {})",
                    KEYWORDS.join(", ")
                )))
            }
        }
    }
    o.filter_policy.layout = match layout.as_str() {
        "modules-eq" => FilterLayout::Modules(ModuleSizes::Equal { count: parts }),
        "modules-prop" => {
            FilterLayout::Modules(ModuleSizes::Proportional { count: parts, first_bits_per_key: first_bits })
        }
        "units" => FilterLayout::Units { count: parts },
        _ => FilterLayout::Whole,
    };
    let shamba = |skipping| ProbePolicy::Shamba(ShambaPolicy { skipping, ..ShambaPolicy::default() });
    o.probe_policy = match policy.as_str() {
        "no-last-level" => ProbePolicy::NoLastLevel,
        "shamba" => shamba(Skipping::None),
        "shamba-p" => shamba(Skipping::Partial),
        "shamba-f" => shamba(Skipping::Full),
        "shamba-odds" => shamba(Skipping::HitOdds),
        "elastic" => ProbePolicy::Elastic(ElasticPolicy { life_time, budget_bytes: (budget_mb * MIB) as u64 }),
        _ => ProbePolicy::Plain,
    };
    Ok(DbConfig { options: o, cache_pct, sync })
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

fn wrong_type(name: &str, want: &str, v: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("{name} must be {want}, not {}", type_name(v)))
}

fn out_of_range(name: &str, want: &str) -> PyErr {
    PyValueError::new_err(format!("{name} must be {want}"))
}

/// A `bool` (an int such as 1 is refused: it is more likely a misplaced argument).
fn boolean(v: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    if v.is_instance_of::<PyBool>() {
        v.extract()
    } else {
        Err(wrong_type(name, "a bool", v))
    }
}

/// An `int` (not a `bool`) of at least `min`.
fn int(v: &Bound<'_, PyAny>, name: &str, min: u64) -> PyResult<u64> {
    if !v.is_instance_of::<PyInt>() || v.is_instance_of::<PyBool>() {
        return Err(wrong_type(name, "an int", v));
    }
    let x: i128 = v.extract().map_err(|_| out_of_range(name, "a 64-bit integer"))?;
    match u64::try_from(x) {
        Ok(x) if x >= min => Ok(x),
        _ => Err(out_of_range(name, &format!("at least {min}, got {x}"))),
    }
}

fn usize_arg(v: &Bound<'_, PyAny>, name: &str, min: u64) -> PyResult<usize> {
    usize::try_from(int(v, name, min)?).map_err(|_| out_of_range(name, "addressable"))
}

/// A finite `float` or `int` of at least `min`.
fn float(v: &Bound<'_, PyAny>, name: &str, min: f64) -> PyResult<f64> {
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
fn choice(v: &Bound<'_, PyAny>, name: &str, choices: &[&str]) -> PyResult<String> {
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
