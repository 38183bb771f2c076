//! The shared state behind every `Db` handle, held in parts that own their locks and the
//! methods that change them:
//!
//! | part | file | holds |
//! |------|------|-------|
//! | [`WriteQueue`] | `write_queue.rs` | the group-commit queue, its condition variable, the write leader's pacer |
//! | [`LiveWal`] | `live_wal.rs` | the WAL being appended to, its number, whether it is broken |
//! | [`Workers`] | `workers.rs` | the background threads, shutting down, the first background error, the flush and compaction locks |
//! | [`Trees`] | `trees.rs` | every keyspace's tree (each with its super versions), the dropped ones' names, the filter ledger |
//! | [`Sequence`] | `sequence.rs` | the visible sequence number and the snapshots' pins |
//! | [`FileBook`] | `file_book.rs` | files being written, outputs of failed edits, deletion pauses and passes |
//! | `versions` | `crate::version` | the manifest and every keyspace's current version |
//!
//! What coordinates several parts stays a method of [`DbInner`], in the file of its path:
//! writes (`write.rs`), flushes and compactions (`background.rs`), resuming (`resume.rs`),
//! checkpoints (`checkpoint.rs`), keyspaces' creation and drop (`keyspace.rs`), reads
//! (`read.rs`, `multi_get.rs`), opening (`open.rs`) and closing (`mod.rs`).
//!
//! Lock order (never take an earlier one while holding a later one):
//!
//! ```text
//! the write lead (WriteQueue::with_lead, or a write that leads)
//!   -> Workers::compaction -> Workers::flushing
//!   -> FileBook's deletion pass
//!   -> versions
//!   -> Trees' list -> a tree's cursors -> a tree's super version (every tree's, in id order)
//!   -> LiveWal
//! ```
//!
//! The write lead is not a lock but a role, taken under the queue's lock and held across
//! the others. The locks inside `WriteQueue`, `Workers` (its state), `FileBook` (its
//! sets), `Sequence` and the pacer are leaves: nothing is taken while one is held, and
//! each part's methods release them before returning.

use super::file_book::FileBook;
use super::live_wal::LiveWal;
use super::sequence::Sequence;
use super::tree::Tree;
use super::trees::Trees;
use super::workers::Workers;
use super::write_queue::WriteQueue;
use crate::cache::BlockCache;
use crate::io::{DirLock, IoStats, SyncWatch};
use crate::key::SeqNo;
use crate::options::Options;
use crate::stats::DbCounters;
use crate::table::TableCache;
use crate::version::{FileNumbers, VersionSet};
use crate::Error;
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The number the next open database takes.
static NEXT_NUMBER: AtomicU64 = AtomicU64::new(1);

/// A number no other database opened in this process has.
pub(crate) fn next_number() -> u64 {
    NEXT_NUMBER.fetch_add(1, Ordering::Relaxed)
}

pub(crate) struct DbInner {
    /// This open's number, unique in the process: batches and snapshots check the
    /// keyspaces they name against it ([`next_number`]).
    pub number: u64,
    pub dir: PathBuf,
    pub opts: Options,
    /// The storage every file goes through, watching whether a sync ever failed (then no
    /// background error is resumed from).
    pub storage: Arc<SyncWatch>,
    pub lock: Mutex<Option<Box<dyn DirLock>>>,
    /// The default keyspace's tree (also in `trees`): `Db`'s own reads and writes.
    pub default: Arc<Tree>,
    pub trees: Trees,
    /// The manifest and every keyspace's current version.
    pub versions: Mutex<VersionSet>,
    /// The versions' file number counter, for allocating a WAL's number without their lock.
    pub file_numbers: FileNumbers,
    pub tables: Arc<TableCache>,
    pub block_cache: Arc<BlockCache>,
    pub io: Arc<IoStats>,
    pub seq: Sequence,
    pub queue: WriteQueue,
    pub wal: LiveWal,
    pub bg: Workers,
    pub files: FileBook,
    pub counters: DbCounters,
    /// Set once by `close` (or the last handle's drop): every operation fails from then on.
    pub closed: AtomicBool,
}

impl DbInner {
    /// Largest sequence number readers may see.
    pub(crate) fn visible_seq(&self) -> SeqNo {
        self.seq.visible()
    }

    pub(crate) fn check_open(&self) -> crate::Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        Ok(())
    }

    /// Fail if a background error made the database read-only.
    pub(crate) fn check_writable(&self) -> crate::Result<()> {
        self.check_open()?;
        if let Some(cause) = self.bg.error() {
            return Err(Error::ReadOnly { cause });
        }
        Ok(())
    }

    /// Allocate a file number and mark it pending (not obsolete while being written).
    pub(crate) fn new_output_number(&self) -> u64 {
        let n = self.versions.lock().new_file_number();
        self.files.writing(n);
        n
    }
}
