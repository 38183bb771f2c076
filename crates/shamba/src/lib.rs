//! # Shamba
//!
//! An embeddable LSM-tree key-value storage engine whose read path is built on filter
//! research: one key digest per lookup shared by every filter of every level, modular Bloom
//! filters probed and cached module by module, elastic filter units, Ribbon filters for
//! long-lived levels, and per-level bits per key.
//!
//! See `DESIGN.md` at the repository root for the map of the code.

#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![warn(clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod cache;
mod compaction;
pub mod cursor;
mod db;
pub mod error;
pub mod io;
pub mod key;
pub mod manager;
pub mod memtable;
mod number_map;
pub mod options;
pub mod stats;
pub mod table;
pub mod version;
pub mod wal;

pub use shamba_filter as filter;

pub use db::{Db, DbIterator, Snapshot, WriteBatch};
pub use error::{Error, Result};
pub use options::{CompactionStyle, Compression, Options, ReadOptions, WalRecovery, WriteOptions};
pub use stats::Stats;
