//! Counters of the whole database: live atomics updated where things happen
//! ([`DbCounters`]; point lookups count into slots of their own thread, see `lookup.rs`),
//! and the [`Stats`] snapshot returned by `Db::stats`.

mod lookup;

pub(crate) use lookup::{LookupCounters, LookupTotals, LookupTrace, Writer};

use crate::cache::KindCounters;
use crate::io::IoCounters;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Live counters of database writes, flushes and compactions.
#[derive(Debug, Default)]
pub(crate) struct DbCounters {
    /// Write operations (puts and deletes).
    pub write_ops: AtomicU64,
    /// Write groups committed (one WAL record each).
    pub write_groups: AtomicU64,
    /// WAL syncs.
    pub wal_syncs: AtomicU64,
    /// Bytes appended to the WAL.
    pub wal_bytes: AtomicU64,
    /// Memtables flushed.
    pub flushes: AtomicU64,
    /// Bytes written by flushes.
    pub flush_bytes: AtomicU64,
    /// Compactions run (trivial moves included).
    pub compactions: AtomicU64,
    /// Compactions that only moved a file down.
    pub trivial_moves: AtomicU64,
    /// Key ranges merged on threads beside a compaction's own (`Options::max_subcompactions`).
    pub subcompactions: AtomicU64,
    /// Bytes read by compactions.
    pub compaction_bytes_read: AtomicU64,
    /// Bytes written by compactions.
    pub compaction_bytes_written: AtomicU64,
    /// Microseconds writers spent paced (slowdown: the last memtable slot taken, too many
    /// L0 files or too much compaction debt).
    pub delayed_micros: AtomicU64,
    /// The part of `delayed_micros` spent while memtables waited for a flush (the last
    /// slot before the stop taken).
    pub delayed_for_flush_micros: AtomicU64,
    /// Microseconds writers spent stopped, waiting for a flush (every memtable full).
    pub stopped_for_flush_micros: AtomicU64,
    /// Microseconds writers spent stopped, waiting for a compaction (L0 or debt at the
    /// stop trigger).
    pub stopped_for_compaction_micros: AtomicU64,
    /// Times writes resumed after a background error (by `Db::resume` or by themselves).
    pub resumes: AtomicU64,
}

impl DbCounters {
    /// Add `n` to a counter.
    #[inline]
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }
}

/// Live lookup counters of one level, in one reader slot. Every table visit ends in exactly
/// one of `filter_negatives`, `false_positives` and `hits`, so visits are their sum;
/// database-wide totals are sums over levels. On a cache line of its own: the slots of
/// different threads never share one.
#[derive(Debug, Default)]
#[repr(align(64))]
pub(crate) struct LevelCounters {
    /// Filter parts probed.
    pub filter_parts_probed: AtomicU64,
    /// Table visits a filter ended ("no").
    pub filter_negatives: AtomicU64,
    /// Table visits that passed the filter (or skipped it) and found nothing.
    pub false_positives: AtomicU64,
    /// Table visits whose filter the manager skipped entirely.
    pub filters_skipped: AtomicU64,
    /// Table visits that found the key.
    pub hits: AtomicU64,
}

/// Lookup counters of one level, from [`Stats::lookup_levels`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelLookupStats {
    /// Tables of this level visited by lookups.
    pub table_lookups: u64,
    /// Filter parts probed.
    pub filter_parts_probed: u64,
    /// Table visits a filter ended.
    pub filter_negatives: u64,
    /// Table visits that passed (or skipped) the filter and found nothing.
    pub false_positives: u64,
    /// Table visits whose filter was skipped.
    pub filters_skipped: u64,
    /// Table visits that found the key.
    pub hits: u64,
}

impl LevelCounters {
    /// The counters now.
    pub(crate) fn snapshot(&self) -> LevelLookupStats {
        let g = |a: &AtomicU64| a.load(Relaxed);
        LevelLookupStats {
            table_lookups: g(&self.filter_negatives) + g(&self.false_positives) + g(&self.hits),
            filter_parts_probed: g(&self.filter_parts_probed),
            filter_negatives: g(&self.filter_negatives),
            false_positives: g(&self.false_positives),
            filters_skipped: g(&self.filters_skipped),
            hits: g(&self.hits),
        }
    }
}

/// Where profiled lookups spent their time (`ReadLab::profile`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LookupCosts {
    /// Lookups timed.
    pub lookups: u64,
    /// Nanoseconds computing key digests.
    pub hash_nanos: u64,
    /// Nanoseconds searching memtables.
    pub memtable_nanos: u64,
    /// Nanoseconds finding and probing filter parts.
    pub filter_nanos: u64,
    /// Nanoseconds reading and searching index blocks.
    pub index_nanos: u64,
    /// Nanoseconds reading and searching data blocks.
    pub data_nanos: u64,
}

impl LookupCosts {
    /// `self - earlier`, field by field.
    pub fn since(&self, e: &LookupCosts) -> LookupCosts {
        LookupCosts {
            lookups: self.lookups.saturating_sub(e.lookups),
            hash_nanos: self.hash_nanos.saturating_sub(e.hash_nanos),
            memtable_nanos: self.memtable_nanos.saturating_sub(e.memtable_nanos),
            filter_nanos: self.filter_nanos.saturating_sub(e.filter_nanos),
            index_nanos: self.index_nanos.saturating_sub(e.index_nanos),
            data_nanos: self.data_nanos.saturating_sub(e.data_nanos),
        }
    }
}

/// One level of the tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelStats {
    /// Files.
    pub files: usize,
    /// Sorted runs.
    pub runs: usize,
    /// Bytes of its files.
    pub bytes: u64,
    /// Entries of its files.
    pub entries: u64,
    /// Bytes of filter blocks.
    pub filter_bytes: u64,
    /// Bytes of index blocks.
    pub index_bytes: u64,
    /// Bytes written into the level since open: by flushes (level 0) or by compactions
    /// whose output went here.
    pub bytes_written: u64,
    /// Bytes compactions into this level read from the levels above it.
    pub compaction_read_from_above: u64,
    /// Bytes compactions into this level read from the level itself (rewritten in place).
    pub compaction_read_in_level: u64,
    /// Bytes of files moved into this level without a rewrite.
    pub bytes_moved_in: u64,
}

impl LevelStats {
    /// Bytes written into this level per byte brought down from the level above
    /// (RocksDB's per-level `W-Amp`; flushes count as level 0's own input), `None` before
    /// anything came down.
    pub fn write_amplification(&self) -> Option<f64> {
        (self.compaction_read_from_above > 0)
            .then(|| self.bytes_written as f64 / self.compaction_read_from_above as f64)
    }
}

/// A snapshot of the database's counters, from `Db::stats`.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Device reads by block kind (cache misses that went to storage).
    pub io: IoCounters,
    /// Block cache counters by block kind, indexed like `BlockKind::ALL`.
    pub cache: [KindCounters; 4],
    /// Block cache bytes in use.
    pub cache_usage: usize,
    /// Block cache capacity.
    pub cache_capacity: usize,
    /// Block cache bytes held in the first filter modules' pool (part of `cache_usage`; 0
    /// without `Options::first_module_cache_ratio`).
    pub cache_first_pool_usage: usize,
    /// Most bytes that pool may hold (part of `cache_capacity`).
    pub cache_first_pool_capacity: usize,
    /// Table files open now (reads in flight may hold a few more that were just closed
    /// to make room).
    pub open_table_files: usize,
    /// Most table files kept open (`Options::max_open_files` less the descriptors left
    /// for other files).
    pub max_open_table_files: usize,
    /// Bytes of index and filter blocks the open table readers pin in memory (with
    /// `cache_index_and_filter_blocks` on, only partitioned tables' top-level indexes).
    pub pinned_table_bytes: u64,
    /// The limit on those bytes (`Options::pinned_metadata_limit`).
    pub pinned_metadata_limit: u64,
    /// Open tables keeping their index and filter blocks in the block cache because they
    /// did not fit under the limit.
    pub tables_metadata_in_cache: u64,
    /// The tree, level by level.
    pub levels: Vec<LevelStats>,
    /// Lookup counters, level by level.
    pub lookup_levels: Vec<LevelLookupStats>,
    /// Bytes of filter units enabled by the Elastic policy (0 for other policies).
    pub elastic_enabled_bytes: u64,
    /// Bytes of filter parts the filter managers of every keyspace hold in memory under
    /// `Options::filter_memory_budget` or the Elastic policy (0 when tables pin their
    /// filters: those are in `pinned_table_bytes`).
    pub filter_resident_bytes: u64,
    /// The most filter bytes held at once since open, across every keyspace (under
    /// `filter_memory_budget`, exactly; under Elastic policies alone, the sum of each
    /// keyspace's own peak).
    pub filter_resident_peak_bytes: u64,
    /// Filter parts the manager loaded (each one filter-block read per partition of its
    /// table, also counted in `io`).
    pub filter_loads: u64,
    /// Filter parts the manager released to make room for others (Elastic: units
    /// disabled).
    pub filter_evictions: u64,
    /// Bytes in the active memtable.
    pub memtable_bytes: usize,
    /// Frozen memtables waiting for flush.
    pub immutable_memtables: usize,
    /// Bytes the levels from L1 down to the one above the last hold beyond their targets:
    /// the compaction debt writes slow down at (`Options::pending_compaction_slowdown_bytes`)
    /// and stop at (`Options::pending_compaction_stop_bytes`). Leveled only (0 tiered).
    pub pending_compaction_bytes: u64,
    /// Last sequence number visible to readers.
    pub last_sequence: u64,
    /// Point lookups served.
    pub gets: u64,
    /// Lookups answered by a memtable.
    pub memtable_hits: u64,
    /// Table probes a filter answered "no".
    pub filter_negatives: u64,
    /// Table probes a filter answered "maybe" for an absent key.
    pub filter_false_positives: u64,
    /// Table probes that found the key.
    pub table_hits: u64,
    /// Write operations.
    pub write_ops: u64,
    /// Write groups (group commit).
    pub write_groups: u64,
    /// WAL syncs.
    pub wal_syncs: u64,
    /// WAL bytes.
    pub wal_bytes: u64,
    /// Flushes.
    pub flushes: u64,
    /// Bytes flushed.
    pub flush_bytes: u64,
    /// Compactions (trivial moves included).
    pub compactions: u64,
    /// Trivial moves.
    pub trivial_moves: u64,
    /// Key ranges merged beside a compaction's own thread: a compaction split in `n` counts
    /// `n - 1`.
    pub subcompactions: u64,
    /// Range tombstones the tree holds: flushed and not yet collected by a compaction (each
    /// hides older versions in its range until then).
    pub range_tombstones: usize,
    /// Times writes resumed after a background error made the database read-only
    /// ([`Db::resume`](crate::Db::resume), or by themselves once a full disk had room).
    pub resumes: u64,
    /// Bytes read by compactions.
    pub compaction_bytes_read: u64,
    /// Bytes written by compactions.
    pub compaction_bytes_written: u64,
    /// Microseconds writers were paced by a slowdown, for any cause.
    pub delayed_micros: u64,
    /// The part of `delayed_micros` paced while the last memtable slot before the stop
    /// was taken (memtables waiting for a flush); the rest was paced for L0 or the
    /// compaction debt only.
    pub delayed_for_flush_micros: u64,
    /// The rate, in bytes per second, a slowdown paces writes at now: it adapts under
    /// slowdowns between `Options::min_delayed_write_rate` and
    /// `Options::delayed_write_rate`.
    pub delayed_write_rate: u64,
    /// Microseconds writers were stopped until a flush finished.
    pub stopped_for_flush_micros: u64,
    /// Microseconds writers were stopped until a compaction finished.
    pub stopped_for_compaction_micros: u64,
    /// Time of profiled lookups by stage.
    pub lookup_costs: LookupCosts,
}

impl Stats {
    /// Fill the operation counters from the live ones and the lookups' totals.
    pub(crate) fn with_counters(mut self, c: &DbCounters, lookups: LookupTotals) -> Stats {
        let g = |a: &AtomicU64| a.load(Relaxed);
        self.gets = lookups.gets;
        self.memtable_hits = lookups.memtable_hits;
        self.lookup_costs = lookups.costs;
        self.lookup_levels = lookups.levels;
        self.filter_negatives = self.lookup_levels.iter().map(|l| l.filter_negatives).sum();
        self.filter_false_positives = self.lookup_levels.iter().map(|l| l.false_positives).sum();
        self.table_hits = self.lookup_levels.iter().map(|l| l.hits).sum();
        self.write_ops = g(&c.write_ops);
        self.write_groups = g(&c.write_groups);
        self.wal_syncs = g(&c.wal_syncs);
        self.wal_bytes = g(&c.wal_bytes);
        self.flushes = g(&c.flushes);
        self.flush_bytes = g(&c.flush_bytes);
        self.compactions = g(&c.compactions);
        self.trivial_moves = g(&c.trivial_moves);
        self.subcompactions = g(&c.subcompactions);
        self.resumes = g(&c.resumes);
        self.compaction_bytes_read = g(&c.compaction_bytes_read);
        self.compaction_bytes_written = g(&c.compaction_bytes_written);
        self.delayed_micros = g(&c.delayed_micros);
        self.delayed_for_flush_micros = g(&c.delayed_for_flush_micros);
        self.stopped_for_flush_micros = g(&c.stopped_for_flush_micros);
        self.stopped_for_compaction_micros = g(&c.stopped_for_compaction_micros);
        self
    }

    /// Total files over all levels.
    pub fn total_files(&self) -> usize {
        self.levels.iter().map(|l| l.files).sum()
    }

    /// Microseconds writers were delayed or stopped, for any reason.
    pub fn stall_micros(&self) -> u64 {
        self.delayed_micros + self.stopped_for_flush_micros + self.stopped_for_compaction_micros
    }

    /// Number of non-empty levels (L0 included).
    pub fn non_empty_levels(&self) -> usize {
        self.levels.iter().filter(|l| l.files > 0).count()
    }

    /// Filter plus index bytes over all levels: the metadata a cache is sized against.
    pub fn metadata_bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.filter_bytes + l.index_bytes).sum()
    }

    /// The block cache's entries by block kind, indexed like `BlockKind::ALL`: blocks
    /// resident, their bytes, and their share of the cache's capacity (RocksDB's
    /// block-cache entry statistics; 0 with no cache).
    pub fn cache_entries(&self) -> [(u64, u64, f64); 4] {
        self.cache.map(|c| {
            let share =
                if self.cache_capacity == 0 { 0.0 } else { c.bytes_resident as f64 / self.cache_capacity as f64 };
            (c.entries_resident, c.bytes_resident, share)
        })
    }
}
