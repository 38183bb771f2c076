//! The shared state behind every `Db` handle, and the locks that guard it.
//!
//! Lock order (never take an earlier one while holding a later one):
//! `compaction` -> `flushing` -> `deleting` -> `versions` -> `trees` -> a tree's `sv` ->
//! `wal`; `queue` and `bg` are leaves. A write switching memtables takes the `sv` of every
//! tree, in id order.

use super::pacer::Pacing;
use super::table_slots::TableSlots;
use super::tree::Tree;
use crate::cache::BlockCache;
use crate::io::{DirLock, IoStats, Storage, SyncWatch};
use crate::key::SeqNo;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::stats::DbCounters;
use crate::table::TableCache;
use crate::version::{Version, VersionSet};
use crate::wal::LogWriter;
use crate::Error;
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// What a read needs, captured together so it is consistent: the memtables and the
/// version of one moment. Replaced (never mutated) by writes, flushes and compactions.
pub(crate) struct SuperVersion {
    pub mem: Arc<MemTable>,
    /// Frozen memtables, newest first.
    pub imm: Vec<Arc<MemTable>>,
    pub version: Arc<Version>,
    /// The open state of the version's tables (shared by the super versions of one version).
    pub tables: Arc<TableSlots>,
    /// Whether lookups prefetch the candidates' filters (`LabOptions::prefetch_filters` and
    /// `prefetch_min_filter_bytes`, decided once per version).
    pub prefetch: bool,
    /// Whether a frozen memtable or the version holds a range tombstone (the live memtable
    /// says so itself: it may get one later).
    pub range_dels: bool,
}

impl SuperVersion {
    /// The memtables and version of one moment, under `opts`; the tables of `previous`
    /// that are still in `version` keep their open state.
    pub(crate) fn new(
        mem: Arc<MemTable>,
        imm: Vec<Arc<MemTable>>,
        version: Arc<Version>,
        previous: Option<&SuperVersion>,
        opts: &Options,
    ) -> SuperVersion {
        let tables = match previous {
            Some(p) if Arc::ptr_eq(&p.version, &version) => p.tables.clone(),
            _ => Arc::new(TableSlots::new(&version, previous.map(|p| &*p.tables))),
        };
        let filters: u64 = version.all_files().map(|(_, f)| f.filter_bytes).sum();
        let probed = if opts.cache_index_and_filter_blocks { filters.min(opts.cache_capacity as u64) } else { filters };
        let prefetch = opts.prefetch_filters() && probed >= opts.prefetch_min_filter_bytes;
        let range_dels = imm.iter().any(|m| m.has_range_dels()) || !version.range_dels.is_empty();
        SuperVersion { mem, imm, version, tables, prefetch, range_dels }
    }

    /// The sequence number of the newest range tombstone over `key` that a reader at `seq`
    /// sees, or 0: a version of `key` older than it is deleted. Two loads when there are no
    /// range tombstones.
    #[inline]
    pub(crate) fn range_del_floor(&self, key: &[u8], seq: SeqNo) -> SeqNo {
        let mut floor = self.mem.range_del_cover(key, seq);
        if self.range_dels {
            for m in &self.imm {
                floor = floor.max(m.range_del_cover(key, seq));
            }
            floor = floor.max(self.version.range_dels.set.cover(key, seq));
        }
        floor
    }
}

/// The WAL being appended to.
pub(crate) struct WalState {
    pub writer: LogWriter,
    pub number: u64,
    /// A write to this log failed: its tail may be torn, so nothing more is appended to it.
    pub broken: bool,
}

/// One write waiting in the group-commit queue.
pub(crate) struct QueuedWrite {
    pub id: u64,
    pub batch: crate::WriteBatch,
    pub sync: bool,
    pub disable_wal: bool,
}

/// The group-commit queue: the writer at the front leads, and commits the writes behind it.
#[derive(Default)]
pub(crate) struct WriteQueue {
    pub next_id: u64,
    pub waiting: VecDeque<QueuedWrite>,
    /// Results posted by a leader for the writes of its group, by write id.
    pub done: HashMap<u64, crate::Result<()>>,
    pub leader_active: bool,
}

/// Background work state.
#[derive(Default)]
pub(crate) struct BgState {
    pub shutting_down: bool,
    /// First background failure, kept whole; once set, writes fail with
    /// [`Error::ReadOnly`] naming it (reads still work).
    pub error: Option<Arc<Error>>,
}

pub(crate) struct DbInner {
    pub dir: PathBuf,
    pub opts: Options,
    /// `sync_watch`, as the storage every file goes through.
    pub storage: Arc<dyn Storage>,
    /// Whether a sync ever failed (then no background error is resumed from).
    pub sync_watch: Arc<SyncWatch>,
    pub lock: Mutex<Option<Box<dyn DirLock>>>,
    /// The default keyspace's tree (also in `trees`): `Db`'s own reads and writes.
    pub default: Arc<Tree>,
    /// Every keyspace's tree, in id order.
    pub trees: RwLock<Vec<Arc<Tree>>>,
    pub versions: Mutex<VersionSet>,
    pub tables: Arc<TableCache>,
    pub block_cache: Arc<BlockCache>,
    pub io: Arc<IoStats>,
    /// Largest sequence number readers may see.
    pub visible_seq: AtomicU64,
    /// Live snapshots: sequence number -> handles.
    pub snapshots: Mutex<BTreeMap<SeqNo, usize>>,
    pub queue: Mutex<WriteQueue>,
    pub queue_cv: Condvar,
    /// Paces the write leader under a slowdown.
    pub pacer: Pacing,
    pub wal: Mutex<WalState>,
    pub bg: Mutex<BgState>,
    pub bg_cv: Condvar,
    /// File numbers being written, not yet in a version: never deleted as obsolete.
    pub pending_outputs: Mutex<HashSet<u64>>,
    /// Pending outputs of a flush or compaction whose manifest edit failed: the edit may be
    /// on disk, so they stay until a fresh manifest is written (`resume`) or a reopen.
    pub unsure_outputs: Mutex<Vec<u64>>,
    /// Checkpoints being taken: while any is, no file is deleted as obsolete (the WALs and
    /// tables it copies stay put).
    pub deletions_paused: AtomicUsize,
    /// Held by an obsolete-file pass (one at a time; a checkpoint waits for it).
    pub deleting: Mutex<()>,
    /// Held while a memtable is flushed (by the flush thread, or by `resume`).
    pub flushing: Mutex<()>,
    /// Held while a compaction runs (one at a time, in any tree).
    pub compaction: Mutex<()>,
    pub threads: Mutex<Vec<JoinHandle<()>>>,
    pub counters: DbCounters,
    /// The cap on resident filter bytes every keyspace's filter pool counts against
    /// (`Options::filter_memory_budget`).
    pub filter_ledger: Option<Arc<crate::manager::FilterLedger>>,
    pub closed: AtomicBool,
}

impl DbInner {
    /// Every keyspace's tree, in id order.
    pub(crate) fn trees(&self) -> Vec<Arc<Tree>> {
        self.trees.read().clone()
    }

    /// Filter parts held by the managers of every keyspace, with their loads and
    /// evictions: the peak is the database's (the ledger's) under a filter budget, else the
    /// sum of each pool's own peak (a bound on the database's).
    pub(crate) fn filter_residency(&self) -> crate::manager::ResidencyCounters {
        let mut total = crate::manager::ResidencyCounters::default();
        for tree in self.trees() {
            let c = tree.manager.residency_counters();
            total.resident_bytes += c.resident_bytes;
            total.peak_bytes += c.peak_bytes;
            total.loads += c.loads;
            total.evictions += c.evictions;
        }
        if let Some(ledger) = &self.filter_ledger {
            total.peak_bytes = ledger.peak();
        }
        total
    }

    /// The tree of keyspace `id`, if it exists.
    pub(crate) fn tree(&self, id: u32) -> Option<Arc<Tree>> {
        self.trees.read().iter().find(|t| t.id == id).cloned()
    }

    pub(crate) fn visible_seq(&self) -> SeqNo {
        self.visible_seq.load(Ordering::Acquire)
    }

    /// The oldest sequence number any reader may still ask for.
    pub(crate) fn smallest_snapshot(&self) -> SeqNo {
        let snaps = self.snapshots.lock();
        snaps.keys().next().copied().unwrap_or_else(|| self.visible_seq())
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
        if let Some(cause) = &self.bg.lock().error {
            return Err(Error::ReadOnly { cause: cause.clone() });
        }
        Ok(())
    }

    /// Record a background failure: writes stop (with [`Error::ReadOnly`] naming the first
    /// one), readers continue.
    pub(crate) fn set_bg_error(&self, e: Error) {
        let mut bg = self.bg.lock();
        if bg.error.is_none() {
            bg.error = Some(Arc::new(e));
        }
        self.bg_cv.notify_all();
    }

    /// Allocate a file number and mark it pending (not obsolete while being written).
    pub(crate) fn new_output_number(&self) -> u64 {
        let n = self.versions.lock().new_file_number();
        self.pending_outputs.lock().insert(n);
        n
    }
}
