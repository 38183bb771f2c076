//! The inside of the engine, opened for the experiments, the fuzz targets, and tests that
//! inject faults or emulate devices; compiled with the cargo feature `lab` only.
//!
//! Not a stable API: these are the engine's own types, and they change with it. A program
//! that stores data needs only the crate root, and builds without the feature.

pub use crate::io::{CrashKeeps, DeviceModel, FaultPlan, FaultyStorage, SimFault, SimStorage};
pub use crate::manager::{Estimate, TableAccesses};
pub use crate::options::{LabOptions, ReadLab};
pub use crate::table::dump_table;
/// The whole filter crate, for the experiments: builders, formats, the seeds' hash
/// functions ([`HashFn`](shamba_filter::HashFn)) and cost models.
pub use shamba_filter as filter;

/// The user key of an internal key (the key without its 8-byte trailer of sequence number
/// and kind), as tables and the manifest store keys; empty if the key is too short.
pub fn user_key(internal_key: &[u8]) -> &[u8] {
    crate::key::user_key(internal_key)
}

/// Flush, then merge every table of `level` with the tables of `level + 1` it overlaps, in
/// the calling thread (tiered: the level's runs into one new run of the next level), as
/// LevelDB's `TEST_CompactRange` does. Tests and measurements use it to move data down one
/// level at a time; the background compactions go on as usual.
///
/// # Errors
///
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when `level` is the last
/// level; otherwise those of [`Db::compact`](crate::Db::compact), a failure of the
/// compaction making the database read-only as a background one does.
pub fn compact_level(db: &crate::Db, level: usize) -> crate::Result<()> {
    db.compact_level(level)
}

/// Table-reaching lookups since `db` opened, and for every table of its current version
/// that a lookup reached, what the filter manager counted (accesses, positives, its age in
/// lookups, its filter parts' FP rates and bytes). Empty under `ProbePolicy::Plain`, which
/// counts nothing; `Shamba` with `Skipping::None` counts without changing any probe.
pub fn table_accesses(db: &crate::Db) -> (u64, Vec<TableAccesses>) {
    db.table_accesses()
}
pub mod fuzz;
