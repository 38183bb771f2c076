//! # Shamba
//!
//! An embeddable LSM-tree key-value storage engine whose read path is built on filter
//! research: one key digest per lookup shared by every filter of every level, modular Bloom
//! filters probed and cached module by module, elastic filter units, Ribbon filters for
//! long-lived levels, and per-level bits per key.
//!
//! The front door is this page: [`Db`] with its [`Options`], [`ReadOptions`] and
//! [`WriteOptions`]; its named keyspaces ([`Keyspace`], with [`KeyspaceOptions`]);
//! [`WriteBatch`], [`Snapshot`] and [`DbIterator`]; [`Readable`], the reads every reader
//! (a database, a keyspace, a snapshot) shares; [`Error`]; [`Stats`];
//! [`VerifyReport`] (what [`Db::verify`] found);
//! the probe policies ([`ProbePolicy`]) and the filters that configuration names
//! ([`filter`]); [`sst`], what a tool reads of a table file without a database; and
//! [`storage`], the file-system interface a database runs on.
//!
//! The cargo feature `lab` (off by default) adds `shamba::lab`, the inside of the engine
//! opened to the experiments, the fuzz targets and the tests that inject faults, with the
//! experiments' knobs `Options::lab` and `ReadOptions::lab`. It is not a stable API, and a
//! build without it has none of it: neither the module nor any code for it on the lookup
//! path.
//!
//! ```no_run
//! use shamba::{Db, Options, Readable, WriteBatch};
//!
//! # fn main() -> shamba::Result<()> {
//! let db = Db::open("/tmp/my-db", Options::default())?;
//! db.put(b"apple", b"red")?;
//! let mut batch = WriteBatch::new();
//! batch.put(b"pear", b"green").delete(b"apple");
//! db.write(batch)?;
//! assert_eq!(db.get(b"pear")?.as_deref(), Some(&b"green"[..]));
//!
//! // One snapshot reads every keyspace at one moment.
//! let users = db.keyspace("users")?;
//! users.put(b"u1", b"ada")?;
//! let snap = db.snapshot();
//! users.delete(b"u1")?;
//! assert_eq!(snap.keyspace(&users).get(b"u1")?.as_deref(), Some(&b"ada"[..]));
//! assert_eq!(snap.prefix(b"p").count(), 1);
//! db.close()?;
//! # Ok(())
//! # }
//! ```
//!
//! See `DESIGN.md` at the repository root for the map of the code.

#![cfg_attr(
    not(feature = "lab"),
    doc = "Without the `lab` feature there is no `lab` module:\n\n```compile_fail\nuse shamba::lab;\n```"
)]
#![warn(missing_docs)]
#![deny(unreachable_pub)]
#![warn(clippy::missing_errors_doc)]
#![deny(clippy::unwrap_used, clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![warn(clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod cache;
mod compaction;
mod cursor;
mod db;
mod error;
mod expiry;
pub mod filter;
mod io;
mod key;
#[cfg(feature = "lab")]
pub mod lab;
mod manager;
mod memtable;
mod number_map;
mod options;
mod range_del;
mod read_tier;
mod stats;
mod table;
mod verify_report;
mod version;
mod wal;

pub use cache::KindCounters;
pub use db::{
    Db, DbIterator, FileInfo, Keyspace, Readable, Snapshot, Transaction, TransactionOptions, TxKeyspace, WriteBatch,
};
pub use error::{Error, Result};
pub use expiry::{Clock, ManualClock, SystemClock, Ttl};
pub use io::{BlockKind, IoCounters};
pub use options::{
    CompactionFilter, CompactionPriority, CompactionStyle, Compression, ElasticPolicy, FilterDecision, KeyspaceOptions,
    Options, ProbePolicy, ReadOptions, ReadTier, ShambaPolicy, Skipping, WalRecovery, WriteOptions,
};
pub use stats::{LevelLookupStats, LevelStats, LookupCosts, Stats};
pub use verify_report::{Problem, ProblemKind, VerifyReport};
pub use version::FileStatsRecord;

/// SST files read without a database: what the `shamba sst` command prints.
pub mod sst {
    pub use crate::table::dump_table;
}

/// The file-system interface a database runs on ([`Options::storage`]): real files by
/// default; wrap [`FsStorage`](storage::FsStorage) to count, delay or fail operations.
pub mod storage {
    pub use crate::io::{BatchTarget, DirLock, DirectReadFsStorage, FsStorage, RandomRead, SequentialWrite, Storage};
}
