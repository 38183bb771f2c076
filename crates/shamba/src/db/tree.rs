//! One keyspace's LSM tree inside a database: its options, its memtables and version
//! (the super versions readers lease), its filter manager and compaction cursors. The WAL,
//! sequence numbers, snapshots, block cache, table cache and background threads are the
//! database's, shared by every tree (`inner.rs`); the list of trees is `trees.rs`.

use super::level_io::TreeLevelIo;
use super::super_version::{SuperVersion, SuperVersions};
use crate::manager::{FilterLedger, FilterManager};
use crate::options::Options;
use crate::version::Version;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A keyspace's tree.
pub(crate) struct Tree {
    /// Its id in the manifest and in WAL records (0: the default keyspace).
    pub id: u32,
    pub name: String,
    /// The database's options with the keyspace's own (`KeyspaceOptions::over`).
    pub opts: Options,
    /// The installed super version, and the reader slots that lease it to lookups.
    pub sv: SuperVersions,
    /// Decides which filter parts each lookup of this tree probes.
    pub manager: FilterManager,
    /// Each level's round-robin position for leveled compaction (taken under
    /// `Workers::compaction`).
    pub cursors: Mutex<Vec<Vec<u8>>>,
    /// Bytes flushes and compactions wrote into each level and read out of it.
    pub level_io: TreeLevelIo,
    /// Set once `drop_keyspace` has logged its drop: handles still held fail with
    /// `InvalidArgument`, background work skips it.
    dropped: AtomicBool,
}

impl Tree {
    /// A tree whose first super version is `first`; its filter pool counts against the
    /// database's `ledger` (`Options::filter_memory_budget`), if any.
    pub(crate) fn new(
        id: u32,
        name: String,
        opts: Options,
        first: SuperVersion,
        ledger: Option<Arc<FilterLedger>>,
    ) -> Tree {
        Tree {
            id,
            name,
            sv: SuperVersions::new(first, opts.num_levels),
            manager: FilterManager::new(opts.probe_policy.clone(), opts.num_levels, ledger),
            cursors: Mutex::new(vec![Vec::new(); opts.num_levels]),
            level_io: TreeLevelIo::new(opts.num_levels),
            dropped: AtomicBool::new(false),
            opts,
        }
    }

    /// The current super version, with a reference of its own (point lookups lease it
    /// instead: `SuperVersions::lease`).
    pub(crate) fn super_version(&self) -> Arc<SuperVersion> {
        self.sv.get()
    }

    pub(crate) fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    /// The error of an operation on this keyspace once it is dropped.
    pub(crate) fn dropped_error(&self) -> crate::Error {
        crate::Error::InvalidArgument(format!("keyspace {:?} was dropped", self.name))
    }

    pub(crate) fn mark_dropped(&self) {
        self.dropped.store(true, Ordering::Release);
    }

    /// Entries per level of a version.
    pub(crate) fn entries_per_level(version: &Version) -> Vec<u64> {
        version.levels.iter().map(|l| l.runs.iter().flat_map(|r| r.files.iter()).map(|f| f.entries).sum()).collect()
    }

    /// The filter a table written to `level` of `version` gets (Monkey weighs the settled
    /// tree's levels, see `filter::settled_level_entries`).
    pub(crate) fn filter_for_level(&self, version: &Version, level: usize) -> crate::filter::FilterSpec {
        let settled =
            crate::filter::settled_level_entries(&Self::entries_per_level(version), level, self.opts.size_ratio);
        self.opts.filter_policy.spec_for_level(level, &settled)
    }
}
