//! When acknowledged writes reach the disk (`--sync`).
//!
//! - `always`: every write is synced (the WAL fsynced) before its reply; group commit
//!   shares one sync among the writes of concurrent clients.
//! - `everysec`: every write reaches the OS before its reply (a crash of the server loses
//!   nothing); once a second, if anything was written since, the WAL is synced
//!   (`Db::sync_wal`). A power loss or kernel crash loses at most the last second or so.
//! - `never`: as `everysec` without the syncer: the OS writes back when it likes; a power
//!   loss loses what it had not written.
//!
//! In every mode a clean stop (SIGTERM, SIGINT) flushes the memtable to tables and closes
//! the database, which syncs.

use std::sync::atomic::{AtomicBool, Ordering};

/// When acknowledged writes reach the disk (`shamba serve --sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    /// Sync every write before replying.
    Always,
    /// Sync once a second.
    Everysec,
    /// Leave write-back to the OS.
    Never,
}

impl SyncMode {
    /// The name INFO, `CONFIG GET appendfsync` and the `--sync` flag use.
    pub fn name(self) -> &'static str {
        match self {
            SyncMode::Always => "always",
            SyncMode::Everysec => "everysec",
            SyncMode::Never => "never",
        }
    }
}

/// Whether anything was written since the last sync.
#[derive(Debug, Default)]
pub(super) struct WriteTracker {
    dirty: AtomicBool,
}

impl WriteTracker {
    /// A write was acknowledged.
    pub(super) fn wrote(&self) {
        // Load first: a store to a line every writer shares would bounce it between cores.
        if !self.dirty.load(Ordering::Relaxed) {
            self.dirty.store(true, Ordering::Relaxed);
        }
    }

    /// Whether a sync is due, clearing the mark (a write racing this lands in the sync
    /// that follows, or the next one).
    pub(super) fn take_dirty(&self) -> bool {
        self.dirty.swap(false, Ordering::AcqRel)
    }
}
