//! `Db.stats()` and `Db.verify()` as plain Python data: nested dicts and lists of ints,
//! floats, bools and strings.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use shamba::{BlockKind, Stats, VerifyReport};

/// A dict from `(name, value)` pairs.
fn dict<'py, V: IntoPyObject<'py>>(
    py: Python<'py>,
    pairs: impl IntoIterator<Item = (&'static str, V)>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in pairs {
        d.set_item(k, v)?;
    }
    Ok(d)
}

/// `Stats` as a dict:
///
/// - `io`: device reads by block kind (`data`, `index`, `filter`, `other`), each
///   `{"reads", "bytes"}`;
/// - `cache`: `{"capacity", "usage", "kinds": {kind: {"hits", "misses", "bytes_inserted",
///   "bytes_resident", "entries_resident"}}}`;
/// - `levels`: one dict per level (`files`, `runs`, `bytes`, `entries`, `filter_bytes`,
///   `index_bytes`; `bytes_written`, `compaction_read_from_above`,
///   `compaction_read_in_level`, `bytes_moved_in`: what flushes and compactions brought
///   into it; and `lookups`: its table visits, filter parts probed, filter negatives,
///   false positives, filters skipped, hits);
/// - `lookups`, `writes`, `background`, `stalls`, `memory`: the engine's counters, grouped.
pub(crate) fn stats_dict<'py>(py: Python<'py>, s: &Stats) -> PyResult<Bound<'py, PyDict>> {
    let io = PyDict::new(py);
    let kinds = PyDict::new(py);
    for (i, kind) in BlockKind::ALL.into_iter().enumerate() {
        io.set_item(kind.name(), dict(py, [("reads", s.io.reads_of(kind)), ("bytes", s.io.bytes_of(kind))])?)?;
        let c = s.cache.get(i).copied().unwrap_or_default();
        kinds.set_item(
            kind.name(),
            dict(
                py,
                [
                    ("hits", c.hits),
                    ("misses", c.misses),
                    ("bytes_inserted", c.bytes_inserted),
                    ("bytes_resident", c.bytes_resident),
                    ("entries_resident", c.entries_resident),
                ],
            )?,
        )?;
    }
    let cache = dict(py, [("capacity", s.cache_capacity), ("usage", s.cache_usage)])?;
    cache.set_item("kinds", kinds)?;

    let levels = PyList::empty(py);
    for (i, l) in s.levels.iter().enumerate() {
        let d = dict(
            py,
            [
                ("files", l.files as u64),
                ("runs", l.runs as u64),
                ("bytes", l.bytes),
                ("entries", l.entries),
                ("filter_bytes", l.filter_bytes),
                ("index_bytes", l.index_bytes),
                ("bytes_written", l.bytes_written),
                ("compaction_read_from_above", l.compaction_read_from_above),
                ("compaction_read_in_level", l.compaction_read_in_level),
                ("bytes_moved_in", l.bytes_moved_in),
            ],
        )?;
        let lk = s.lookup_levels.get(i).cloned().unwrap_or_default();
        d.set_item(
            "lookups",
            dict(
                py,
                [
                    ("table_lookups", lk.table_lookups),
                    ("filter_parts_probed", lk.filter_parts_probed),
                    ("filter_negatives", lk.filter_negatives),
                    ("false_positives", lk.false_positives),
                    ("filters_skipped", lk.filters_skipped),
                    ("hits", lk.hits),
                ],
            )?,
        )?;
        levels.append(d)?;
    }

    let out = PyDict::new(py);
    out.set_item("io", io)?;
    out.set_item("cache", cache)?;
    out.set_item("levels", levels)?;
    out.set_item(
        "lookups",
        dict(
            py,
            [
                ("gets", s.gets),
                ("memtable_hits", s.memtable_hits),
                ("filter_negatives", s.filter_negatives),
                ("filter_false_positives", s.filter_false_positives),
                ("table_hits", s.table_hits),
            ],
        )?,
    )?;
    out.set_item(
        "writes",
        dict(
            py,
            [
                ("ops", s.write_ops),
                ("groups", s.write_groups),
                ("wal_syncs", s.wal_syncs),
                ("wal_bytes", s.wal_bytes),
                ("last_sequence", s.last_sequence),
            ],
        )?,
    )?;
    out.set_item(
        "background",
        dict(
            py,
            [
                ("flushes", s.flushes),
                ("flush_bytes", s.flush_bytes),
                ("compactions", s.compactions),
                ("trivial_moves", s.trivial_moves),
                ("subcompactions", s.subcompactions),
                ("compaction_bytes_read", s.compaction_bytes_read),
                ("compaction_bytes_written", s.compaction_bytes_written),
                ("pending_compaction_bytes", s.pending_compaction_bytes),
                ("resumes", s.resumes),
            ],
        )?,
    )?;
    out.set_item(
        "stalls",
        dict(
            py,
            [
                ("delayed_micros", s.delayed_micros),
                ("stopped_for_flush_micros", s.stopped_for_flush_micros),
                ("stopped_for_compaction_micros", s.stopped_for_compaction_micros),
            ],
        )?,
    )?;
    out.set_item(
        "memory",
        dict(
            py,
            [
                ("memtable_bytes", s.memtable_bytes as u64),
                ("immutable_memtables", s.immutable_memtables as u64),
                ("pinned_table_bytes", s.pinned_table_bytes),
                ("pinned_metadata_limit", s.pinned_metadata_limit),
                ("tables_metadata_in_cache", s.tables_metadata_in_cache),
                ("metadata_bytes", s.metadata_bytes()),
                ("elastic_enabled_bytes", s.elastic_enabled_bytes),
                ("filter_resident_bytes", s.filter_resident_bytes),
                ("filter_resident_peak_bytes", s.filter_resident_peak_bytes),
                ("filter_loads", s.filter_loads),
                ("filter_evictions", s.filter_evictions),
                ("open_table_files", s.open_table_files as u64),
                ("max_open_table_files", s.max_open_table_files as u64),
            ],
        )?,
    )?;
    Ok(out)
}

/// `VerifyReport` as a dict: `ok`, the counts (`tables`, `blocks`, `bytes`, `keys`,
/// `logs`, `log_records`), `problems` (each `{"kind", "file", "offset", "location",
/// "expected", "found", "message"}`) and `orphans` (paths).
pub(crate) fn verify_dict<'py>(py: Python<'py>, r: &VerifyReport) -> PyResult<Bound<'py, PyDict>> {
    let out = dict(
        py,
        [
            ("tables", r.tables),
            ("blocks", r.blocks),
            ("bytes", r.bytes),
            ("keys", r.keys),
            ("logs", r.logs),
            ("log_records", r.log_records),
        ],
    )?;
    out.set_item("ok", r.is_ok())?;
    let problems = PyList::empty(py);
    for p in r.problems() {
        let d = PyDict::new(py);
        d.set_item("kind", p.kind.name())?;
        d.set_item("file", p.file.display().to_string())?;
        d.set_item("offset", p.offset)?;
        d.set_item("location", &p.location)?;
        d.set_item("expected", &p.expected)?;
        d.set_item("found", &p.found)?;
        d.set_item("message", p.to_string())?;
        problems.append(d)?;
    }
    out.set_item("problems", problems)?;
    let orphans: Vec<String> = r.orphans().iter().map(|p| p.display().to_string()).collect();
    out.set_item("orphans", orphans)?;
    Ok(out)
}
