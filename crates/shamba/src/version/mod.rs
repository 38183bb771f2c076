//! Versions: which files make up the tree at one moment, the edits between versions, and
//! the manifest that logs the edits so a restart recovers the tree.
//!
//! - [`FileMeta`]: one SST file's metadata (`file_meta.rs`).
//! - [`Run`], [`Level`], [`Version`]: the tree's shape and the lookup path through it
//!   ([`Version::candidates`]) (`run.rs`, `tree.rs`).
//! - [`VersionEdit`]: a change between versions and its encoding (`edit.rs`, `coding.rs`);
//!   applying one is `builder.rs`.
//! - [`VersionSet`]: the current version, counters and the manifest (`set.rs`,
//!   `manifest.rs`).
//! - `verify.rs`: a version's shape and its records of files, checked for `Db::verify`.

mod builder;
mod coding;
mod edit;
mod file_meta;
mod manifest;
mod run;
mod set;
mod tree;
mod verify;

pub(crate) use edit::{KeyspaceRecord, VersionEdit, DEFAULT_KEYSPACE};
pub(crate) use file_meta::FileMeta;
pub use file_meta::FileStatsRecord;
pub(crate) use manifest::{manifest_path, parse_manifest_file_name, set_current, write_manifest};
pub(crate) use set::{FileNumbers, VersionSet};
pub(crate) use tree::{FileRef, Version};
pub(crate) use verify::{check_record, check_shape};
#[cfg(test)]
pub(crate) use {
    manifest::{manifest_file_name, CURRENT},
    run::Run,
    set::RecoveredState,
};

#[cfg(test)]
mod tests;
