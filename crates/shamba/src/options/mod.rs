//! Every knob of the engine, with its default and its validation.
//!
//! [`Options`] is one plain struct; [`Options::validate`] is called by `Db::open` and names
//! the bad value in an [`Error::InvalidOptions`].

use crate::error::{Error, Result};
use crate::expiry::{Clock, SystemClock};
use crate::filter::BuildPolicy;
use crate::io::{FsStorage, Storage};
use std::fmt;
use std::sync::Arc;

mod compaction_filter;
mod keyspace;
#[cfg(feature = "lab")]
mod lab;
mod probe_policy;
mod stage_timer;

pub use compaction_filter::{CompactionFilter, FilterDecision};
pub use keyspace::KeyspaceOptions;
#[cfg(feature = "lab")]
pub use lab::{LabOptions, ReadLab};
pub use probe_policy::{ElasticPolicy, ProbePolicy, ShambaPolicy, Skipping};
pub(crate) use stage_timer::StageTimer;

/// How levels are shaped by compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactionStyle {
    /// One sorted run per level (L1+); a file of level i is merged with the overlapping
    /// files of level i+1 (RocksDB's leveled, partial compaction).
    #[default]
    Leveled,
    /// Up to `size_ratio - 1` runs per level; when full, a level's runs merge into one
    /// new run of the next level.
    Tiered,
}

/// Which file of a leveled level compacts next (RocksDB's `compaction_pri`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactionPriority {
    /// The file overlapping the fewest bytes of the next level per byte of its own
    /// (RocksDB's default, `kMinOverlappingRatio`): the least rewriting per byte moved down
    /// where some key ranges are written more than others.
    MinOverlappingRatio,
    /// The file after the last one compacted out of the level, in key order, wrapping
    /// around (LevelDB's compaction pointer). Under uniformly random writes every file
    /// overlaps about as much, and a random load wrote no fewer bytes by overlap
    /// (`docs/results/2026-11-28/sustained-subcompactions.md`).
    #[default]
    RoundRobin,
}

/// Block compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// Blocks stored as they are.
    #[default]
    None,
    /// LZ4 (block kept raw when compression does not save at least 1/8).
    Lz4,
    /// Zstandard at `level` (block kept raw when compression does not save at least
    /// 1/8): slower to write than LZ4, smaller. [`Compression::zstd`] gives RocksDB's
    /// default level.
    Zstd {
        /// zstd's compression level (higher: smaller and slower), in
        /// `zstd::compression_level_range()` (1..=22, and negative fast levels).
        level: i32,
    },
}

impl Compression {
    /// Zstandard at level 3 (zstd's default, and RocksDB's).
    pub const fn zstd() -> Compression {
        Compression::Zstd { level: 3 }
    }
}

/// What to do with a WAL record that fails its checksum in the middle of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WalRecovery {
    /// A torn tail (the last record cut short by a crash) is dropped; any other damage is
    /// `Error::Corruption`.
    #[default]
    TolerateTornTail,
    /// Stop replay at the first damaged record, keeping everything before it.
    PointInTime,
}

/// Options of a database, fixed at open.
///
/// Build from [`Options::default`]: assign the fields to change, or write
/// `Options { block_size: 16 << 10, ..Options::default() }`. Every field added later comes
/// with a default, so code written either way keeps compiling as the options grow. The
/// experiments' knobs are apart, in `Options::lab`, with the `lab` feature only.
#[derive(Clone)]
pub struct Options {
    /// Create the directory and an empty database if there is none. Default: true.
    pub create_if_missing: bool,
    /// Fail if a database already exists. Default: false.
    pub error_if_exists: bool,
    /// Memtable size at which it is frozen and flushed. Default: 8 MiB.
    pub write_buffer_size: usize,
    /// Frozen memtables waiting for flush before writes stop; writes are slowed down (see
    /// `delayed_write_rate`) once this many wait, while the memtable fills. Default: 2.
    pub max_immutable_memtables: usize,
    /// Target uncompressed size of a data block. Default: 4096.
    pub block_size: usize,
    /// Keys between restart points in a data block. Default: 16.
    pub block_restart_interval: usize,
    /// Block compression of every level that neither `compression_per_level` nor
    /// `bottommost_compression` decides. Default: none.
    pub compression: Compression,
    /// Compression per level, RocksDB's `compression_per_level`: level i uses entry
    /// `min(i, len - 1)`. Empty: every level uses `compression`. Default: empty.
    pub compression_per_level: Vec<Compression>,
    /// Compression of tables a compaction writes to the bottom of the tree, RocksDB's
    /// `bottommost_compression`: where nothing lies below (the output level is at or past
    /// the deepest level holding data), so most of the data ends up compressed this way
    /// however many levels the tree has grown. Flushes never use it. `None`: the bottom
    /// is compressed like any other level. Default: `None`.
    pub bottommost_compression: Option<Compression>,
    /// Target size of an SST written by compaction, data and index (filters are not
    /// counted, so the filter policy never changes where files are cut). Default: 8 MiB.
    pub target_file_size: u64,
    /// Bound on how much of the level below its own a compaction output may overlap, in
    /// units of `target_file_size` (LevelDB's limit on "grandparent" overlap, RocksDB's
    /// `max_compaction_bytes`). A leveled compaction into level L cuts its current output
    /// file, at the next user key, once the files of level L+1 its key range has passed
    /// over hold more than `factor * target_file_size` data bytes; so the file's own
    /// compaction into L+1 later rewrites at most that much plus one file for its keys,
    /// however sparse they are. The same bound keeps a file from moving down a level
    /// without a rewrite when it would overlap more than that below its new level.
    /// Tiered levels merge whole runs and never read the level below, so the bound does
    /// not apply to them. At least 1. Default: 10 (LevelDB's).
    pub max_grandparent_overlap_factor: u32,
    /// End a leveled compaction's output file at a boundary between files of the level
    /// below its own, once it holds 50-90% of `target_file_size` (RocksDB's
    /// `level_compaction_dynamic_file_size`): its later merge into that level then
    /// rewrites whole files there, not the edges of two more. Files come out a little
    /// smaller than the target. Default: on.
    pub align_compaction_outputs: bool,
    /// Leveled or tiered. Default: leveled.
    pub compaction_style: CompactionStyle,
    /// Which file of a leveled level (L1 and deeper) compacts next. Default: `RoundRobin`.
    pub compaction_priority: CompactionPriority,
    /// Threads one compaction may merge on at once (RocksDB's `max_subcompactions`): a
    /// merge of at least four output files' worth of input is split into up to this many
    /// key ranges, merged side by side and installed together (`compaction/shards.rs`). 1
    /// runs every compaction on the compaction thread alone. At least 1. Default: 2.
    pub max_subcompactions: usize,
    /// Added to the nice value the compaction threads (the compaction thread and the sync
    /// and subcompaction threads it starts) and the obsolete-file pass inherit from the
    /// thread that opens the database, at most 19 in all (RocksDB's
    /// `Env::LowerThreadPoolCPUPriority` of its compaction pool). The flush thread is left
    /// alone: writers stop when it falls behind. With more busy threads than cores, a
    /// writer or reader woken at equal priority can wait a scheduler tick behind a merge;
    /// above the merges it runs at once. The price is compactions that yield to a busy
    /// foreground, so writes are slowed down sooner under a load that fills every core
    /// (`docs/results/2026-11-29/background-nice.md` measures both). Applied on Linux, where
    /// the nice value belongs to each thread; ignored elsewhere, where it would lower the
    /// whole process. Default: 0 (unchanged).
    pub background_nice: u8,
    /// Growth factor T between levels (and runs per tiered level + 1). Default: 10.
    pub size_ratio: u32,
    /// Number of levels, L0 included. Default: 7.
    pub num_levels: usize,
    /// Target size of L1; level i targets `base * T^(i-1)`. Levels are measured without
    /// their filters (see `target_file_size`). Default: 64 MiB.
    pub max_bytes_for_level_base: u64,
    /// L0 files that trigger a compaction into L1. Default: 4.
    pub level0_compaction_trigger: usize,
    /// L0 files at which writes are slowed down (see `delayed_write_rate`). Default: 20.
    pub level0_slowdown_trigger: usize,
    /// L0 files at which writes wait for compaction. Default: 36.
    pub level0_stop_trigger: usize,
    /// Bytes over level targets at which writes are delayed. Default: 4 GiB.
    pub pending_compaction_slowdown_bytes: u64,
    /// Bytes over level targets at which writes wait. Default: 16 GiB.
    pub pending_compaction_stop_bytes: u64,
    /// Bytes per second writes are paced at when a slowdown begins (RocksDB's
    /// `delayed_write_rate`), and the most the rate rises to. Under a slowdown the rate
    /// falls while what caused it (memtables waiting, L0 runs, compaction debt) keeps
    /// growing or writes stop anyway, and rises as it shrinks. Default: 16 MiB/s.
    pub delayed_write_rate: u64,
    /// The least bytes per second a slowdown lowers the rate to. Default: 16 KiB/s
    /// (RocksDB's).
    pub min_delayed_write_rate: u64,
    /// Which filter each level gets. Default: 10 bits/key blocked Bloom everywhere.
    pub filter_policy: BuildPolicy,
    /// How lookups decide which filter parts to probe. Default: plain (probe everything).
    pub probe_policy: ProbePolicy,
    /// Lookups prefetch the filter cache lines of every candidate table before probing the
    /// first (so a deep tree's cache misses overlap), but only while the filters lookups
    /// may probe (every table's, or at most the block cache's capacity when they are
    /// cached) add up to at least this many bytes.
    /// Below it they mostly sit in the CPU cache already, and the extra pass costs more
    /// than it hides (lookups were slower with it on a tree of a few dozen KiB of filters,
    /// faster on one of tens of MiB). Default: 4 MiB.
    pub prefetch_min_filter_bytes: u64,
    /// Block cache capacity in bytes. Default: 32 MiB.
    pub cache_capacity: usize,
    /// Fraction of the cache reserved for high-priority blocks (index, filter, first
    /// modules). Default: 0.5.
    pub high_priority_ratio: f64,
    /// Fraction of the cache that first filter modules (the first module of a modular
    /// filter; SHaMBa-prop's small one) may hold in a pool of their own, which data, index
    /// and later-module blocks never evict: they stay cached as SHaMBa-prop assumes, within
    /// this bound and within the cache's capacity. Space they do not use serves the other
    /// pools; `high_priority_ratio` applies to the capacity outside this share. 0 (the
    /// default): no such pool, first modules share the high-priority pool with index and
    /// filter blocks. Counted in `Stats::cache_first_pool_usage`.
    pub first_module_cache_ratio: f64,
    /// Keep index and filter blocks in the block cache (true) or pinned in each table
    /// reader (false). Default: false.
    pub cache_index_and_filter_blocks: bool,
    /// Most bytes of index and filter blocks the table readers pin in memory, together.
    /// A table opened when its metadata does not fit keeps its index and filter blocks in
    /// the block cache instead (as `cache_index_and_filter_blocks` does for every table),
    /// at the priorities the filter manager gives them; the room comes back when a pinning
    /// table is compacted away. First come, first pinned. The bound may be passed by the
    /// index fences of the last table pinned (a few bytes per data block), and does not
    /// count the top-level index of a partitioned table, which every reader pins.
    /// `Stats::pinned_table_bytes` and `Stats::tables_metadata_in_cache` report it. A limit
    /// below the tree's metadata goes with `partition_index_and_filters`: a lookup in a
    /// table past it then reads one small filter and index partition through the cache, not
    /// the table's whole filter.
    /// Default: an eighth of the machine's memory, at least 64 MiB (each open database
    /// takes its own; set it lower when a process opens many).
    pub pinned_metadata_limit: u64,
    /// One hard cap, in bytes, on filter parts held in memory across all tables. `None`
    /// (the default): every table's filter is pinned when it opens (or cached, with
    /// `cache_index_and_filter_blocks`), as without a budget. With a budget no filter is
    /// pinned: the filter manager keeps resident the parts that save the most expected
    /// reads per byte (from each table's measured alpha and beta and each part's FP rate)
    /// and releases the others; a part that is not resident is read for the probe that
    /// needs it (and not kept, unless through the block cache with
    /// `cache_index_and_filter_blocks`) or skipped, as the probe policy says. The Elastic
    /// policy's units are resident exactly while enabled, under the smaller of its own
    /// budget and this one. Every policy keeps per-table statistics under a budget.
    pub filter_memory_budget: Option<u64>,
    /// Split each table's index and filter into key-range partitions of about
    /// `metadata_partition_size` bytes behind a top-level index that stays pinned in the
    /// table reader (RocksDB's partitioned index and filters; SST format version 2). A
    /// lookup then reads one index partition and one filter partition, not the whole
    /// index and filter. Default: false.
    pub partition_index_and_filters: bool,
    /// Target bytes of an index partition, and of one partition's filter parts together
    /// (partitions are cut at data-block boundaries, so they come out a little larger).
    /// Only used with `partition_index_and_filters`. Default: 4096.
    pub metadata_partition_size: usize,
    /// Most file descriptors the database keeps open. Table readers keep their metadata
    /// in memory and take their files from a cache of open files, which keeps at most
    /// `max_open_files - 10` of them open (the 10 are left for the WAL, the manifest, the
    /// lock, the tables being written and directory syncs), closing the least recently
    /// used; a read in flight keeps its file open past that until it ends. At least 16.
    /// Default: half the process's soft `RLIMIT_NOFILE` (`ulimit -n`) when the database
    /// is opened with it, clamped to `16..=65_536`.
    pub max_open_files: usize,
    /// Largest accepted key. Default: 64 KiB.
    pub max_key_size: usize,
    /// Largest accepted value. Default: 64 MiB.
    pub max_value_size: usize,
    /// Replay behaviour on a damaged WAL. Default: tolerate a torn tail.
    pub wal_recovery: WalRecovery,
    /// After a background error made the database read-only because the disk was full
    /// (an `Error::Io` of kind `StorageFull` while writing), try to resume writes this often
    /// until it works, as [`Db::resume`](crate::Db::resume) does; `None` leaves that to the
    /// caller. A failed sync, a corrupt file or any other error is never resumed from: the
    /// database stays read-only until it is reopened. Default: every second.
    pub auto_resume_interval: Option<std::time::Duration>,
    /// Read back every data block of each table a flush or compaction writes before the
    /// table is installed, checking every checksum, the count of entries and their order
    /// (RocksDB's `paranoid_file_checks`). Without it each new table is still opened and
    /// checked before it is installed, cheaply: footer, properties, index, its size, entry
    /// count and first and last keys against what its builder wrote. Default: false.
    pub paranoid_file_checks: bool,
    /// Options of keyspaces by name, used when a keyspace of that name is created or the
    /// database is opened (see [`KeyspaceOptions`]); a keyspace not named here runs with
    /// this struct's own filter, probe, block and compression options. Default: empty.
    pub keyspace_options: Vec<(String, KeyspaceOptions)>,
    /// Where files live. Default: the local file system.
    pub storage: Arc<dyn Storage>,
    /// Where the database reads the time: when an expiring entry's deadline has passed
    /// (every read asks it when it meets one, compactions when they collect one), and what
    /// a time to live counts from. Default: the system's wall clock ([`SystemClock`]).
    /// Tests give a [`ManualClock`](crate::ManualClock).
    pub clock: Arc<dyn Clock>,
    /// The default keyspace's compaction filter (a keyspace's own is in its
    /// [`KeyspaceOptions`]); not persisted: give it at every open (see
    /// [`CompactionFilter`]). Default: none.
    pub compaction_filter: Option<Arc<dyn CompactionFilter>>,
    /// Knobs for the experiments (prefetch off, another digest hash, an emulated device);
    /// production code leaves them at their defaults. Only with the `lab` feature.
    #[cfg(feature = "lab")]
    pub lab: LabOptions,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            write_buffer_size: 8 << 20,
            max_immutable_memtables: 2,
            block_size: 4096,
            block_restart_interval: 16,
            compression: Compression::None,
            compression_per_level: Vec::new(),
            bottommost_compression: None,
            target_file_size: 8 << 20,
            max_grandparent_overlap_factor: 10,
            align_compaction_outputs: true,
            compaction_style: CompactionStyle::Leveled,
            compaction_priority: CompactionPriority::RoundRobin,
            max_subcompactions: 2,
            background_nice: 0,
            size_ratio: 10,
            num_levels: 7,
            max_bytes_for_level_base: 64 << 20,
            level0_compaction_trigger: 4,
            level0_slowdown_trigger: 20,
            level0_stop_trigger: 36,
            pending_compaction_slowdown_bytes: 4 << 30,
            pending_compaction_stop_bytes: 16 << 30,
            delayed_write_rate: 16 << 20,
            min_delayed_write_rate: 16 << 10,
            filter_policy: BuildPolicy::default(),
            probe_policy: ProbePolicy::Plain,
            prefetch_min_filter_bytes: 4 << 20,
            cache_capacity: 32 << 20,
            high_priority_ratio: 0.5,
            first_module_cache_ratio: 0.0,
            cache_index_and_filter_blocks: false,
            pinned_metadata_limit: default_pinned_metadata_limit(),
            filter_memory_budget: None,
            partition_index_and_filters: false,
            metadata_partition_size: 4096,
            max_open_files: default_max_open_files(),
            max_key_size: 64 << 10,
            max_value_size: 64 << 20,
            wal_recovery: WalRecovery::TolerateTornTail,
            auto_resume_interval: Some(std::time::Duration::from_secs(1)),
            paranoid_file_checks: false,
            keyspace_options: Vec::new(),
            storage: Arc::new(FsStorage),
            clock: Arc::new(SystemClock),
            compaction_filter: None,
            #[cfg(feature = "lab")]
            lab: LabOptions::default(),
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("Options");
        f.field("create_if_missing", &self.create_if_missing)
            .field("error_if_exists", &self.error_if_exists)
            .field("write_buffer_size", &self.write_buffer_size)
            .field("max_immutable_memtables", &self.max_immutable_memtables)
            .field("block_size", &self.block_size)
            .field("block_restart_interval", &self.block_restart_interval)
            .field("compression", &self.compression)
            .field("compression_per_level", &self.compression_per_level)
            .field("bottommost_compression", &self.bottommost_compression)
            .field("target_file_size", &self.target_file_size)
            .field("max_grandparent_overlap_factor", &self.max_grandparent_overlap_factor)
            .field("align_compaction_outputs", &self.align_compaction_outputs)
            .field("compaction_style", &self.compaction_style)
            .field("compaction_priority", &self.compaction_priority)
            .field("max_subcompactions", &self.max_subcompactions)
            .field("background_nice", &self.background_nice)
            .field("size_ratio", &self.size_ratio)
            .field("num_levels", &self.num_levels)
            .field("max_bytes_for_level_base", &self.max_bytes_for_level_base)
            .field("level0_compaction_trigger", &self.level0_compaction_trigger)
            .field("level0_slowdown_trigger", &self.level0_slowdown_trigger)
            .field("level0_stop_trigger", &self.level0_stop_trigger)
            .field("delayed_write_rate", &self.delayed_write_rate)
            .field("min_delayed_write_rate", &self.min_delayed_write_rate)
            .field("filter_policy", &self.filter_policy)
            .field("probe_policy", &self.probe_policy)
            .field("prefetch_min_filter_bytes", &self.prefetch_min_filter_bytes)
            .field("cache_capacity", &self.cache_capacity)
            .field("high_priority_ratio", &self.high_priority_ratio)
            .field("first_module_cache_ratio", &self.first_module_cache_ratio)
            .field("cache_index_and_filter_blocks", &self.cache_index_and_filter_blocks)
            .field("pinned_metadata_limit", &self.pinned_metadata_limit)
            .field("filter_memory_budget", &self.filter_memory_budget)
            .field("partition_index_and_filters", &self.partition_index_and_filters)
            .field("metadata_partition_size", &self.metadata_partition_size)
            .field("max_open_files", &self.max_open_files)
            .field("max_key_size", &self.max_key_size)
            .field("max_value_size", &self.max_value_size)
            .field("wal_recovery", &self.wal_recovery)
            .field("auto_resume_interval", &self.auto_resume_interval)
            .field("paranoid_file_checks", &self.paranoid_file_checks)
            .field("keyspace_options", &self.keyspace_options)
            .field("clock", &self.clock)
            .field("compaction_filter", &self.compaction_filter);
        #[cfg(feature = "lab")]
        f.field("lab", &self.lab);
        f.finish_non_exhaustive()
    }
}

/// Smallest accepted `Options::max_open_files`.
const MIN_OPEN_FILES: usize = 16;

/// Descriptors of `Options::max_open_files` not used for table files.
pub(crate) const NON_TABLE_FILES: usize = 10;

/// Half the process's soft limit on open files, clamped to `16..=65_536` (65_536 when
/// there is no limit or it cannot be read).
fn default_max_open_files() -> usize {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one `rlimit` through a pointer to a live, writable one
    // (exercised by `options::tests::max_open_files_defaults_to_half_the_soft_limit`).
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    let soft = if ok && limit.rlim_cur != libc::RLIM_INFINITY {
        usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
    } else {
        usize::MAX
    };
    (soft / 2).clamp(MIN_OPEN_FILES, 65_536)
}

/// The smallest default [`Options::pinned_metadata_limit`].
const MIN_DEFAULT_METADATA_LIMIT: u64 = 64 << 20;

/// An eighth of the machine's physical memory, at least [`MIN_DEFAULT_METADATA_LIMIT`]
/// (that alone when the memory cannot be read).
fn default_pinned_metadata_limit() -> u64 {
    // SAFETY: sysconf reads a system constant and touches no memory of ours (exercised by
    // `options::tests::the_metadata_limit_defaults_to_an_eighth_of_memory`).
    let (pages, page_size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    let memory = match (u64::try_from(pages), u64::try_from(page_size)) {
        (Ok(pages), Ok(size)) => pages.saturating_mul(size),
        _ => 0,
    };
    (memory / 8).max(MIN_DEFAULT_METADATA_LIMIT)
}

impl Options {
    /// The hash function of the key digest: xxh3-128, unless the `lab` feature is on and
    /// `LabOptions::digest_hash` names another.
    #[inline(always)]
    pub(crate) fn digest_hash(&self) -> crate::filter::HashFn {
        #[cfg(feature = "lab")]
        return self.lab.digest_hash;
        #[cfg(not(feature = "lab"))]
        crate::filter::HashFn::Xxh3_128
    }

    /// The digest of `key` every filter is built from and probed with (of
    /// [`digest_hash`](Self::digest_hash)).
    #[inline(always)]
    pub(crate) fn digest(&self, key: &[u8]) -> crate::filter::Digest {
        #[cfg(feature = "lab")]
        return self.lab.digest_hash.digest(key);
        #[cfg(not(feature = "lab"))]
        crate::filter::Digest::of(key)
    }

    /// Whether lookups may prefetch their candidates' filters: always, unless the `lab`
    /// feature is on and `LabOptions::prefetch_filters`
    /// turns it off.
    #[inline]
    pub(crate) fn prefetch_filters(&self) -> bool {
        #[cfg(feature = "lab")]
        return self.lab.prefetch_filters;
        #[cfg(not(feature = "lab"))]
        true
    }

    /// The emulated device cost per block read: none, unless the `lab` feature is on and
    /// `LabOptions::device` sets one.
    #[inline]
    pub(crate) fn device(&self) -> crate::io::DeviceModel {
        #[cfg(feature = "lab")]
        return self.lab.device;
        #[cfg(not(feature = "lab"))]
        crate::io::DeviceModel::None
    }

    /// Whether the flush thread flushes frozen memtables as they come: always, unless the
    /// `lab` feature is on and `LabOptions::background_flushes` turns it off.
    #[inline]
    pub(crate) fn background_flushes(&self) -> bool {
        #[cfg(feature = "lab")]
        return self.lab.background_flushes;
        #[cfg(not(feature = "lab"))]
        true
    }

    /// Data bytes of the level below a compaction output's level that one output file may
    /// overlap (`max_grandparent_overlap_factor * target_file_size`).
    pub(crate) fn max_grandparent_overlap_bytes(&self) -> u64 {
        u64::from(self.max_grandparent_overlap_factor).saturating_mul(self.target_file_size)
    }

    /// The compression of a table written to `level`; `bottom` when nothing lies below
    /// that level (see `bottommost_compression`).
    pub(crate) fn compression_for_level(&self, level: usize, bottom: bool) -> Compression {
        if let (true, Some(c)) = (bottom, self.bottommost_compression) {
            return c;
        }
        let per_level = self.compression_per_level.get(level).or(self.compression_per_level.last());
        per_level.copied().unwrap_or(self.compression)
    }

    /// Whether the filter manager loads and releases filter parts (a filter memory budget,
    /// or Elastic units resident only while enabled) instead of tables pinning them.
    pub(crate) fn pools_filters(&self) -> bool {
        self.filter_memory_budget.is_some() || matches!(self.probe_policy, ProbePolicy::Elastic(_))
    }

    /// How many table files the database keeps open: `max_open_files` less the
    /// descriptors left for other files.
    pub(crate) fn table_file_handles(&self) -> usize {
        self.max_open_files.saturating_sub(NON_TABLE_FILES).max(1)
    }
}

fn check(ok: bool, msg: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidOptions(msg()))
    }
}

impl Options {
    /// Check every value; the error names the first bad one.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOptions`] naming the first value out of its range (e.g. a
    /// `write_buffer_size` under 4096, `num_levels` outside `2..=64`, `max_open_files`
    /// under 16) or inconsistent with another (e.g. `level0_stop_trigger` below
    /// `level0_slowdown_trigger`), including the filter policy's and the probe policy's own
    /// checks.
    pub fn validate(&self) -> Result<()> {
        check(self.write_buffer_size >= 4096, || {
            format!("write_buffer_size must be at least 4096 bytes, got {}", self.write_buffer_size)
        })?;
        check(self.max_immutable_memtables >= 1, || "max_immutable_memtables must be at least 1".into())?;
        check(self.block_size >= 64 && self.block_size <= (64 << 20), || {
            format!("block_size must be in 64..=64 MiB, got {}", self.block_size)
        })?;
        check(self.block_restart_interval >= 1, || "block_restart_interval must be at least 1".into())?;
        check(self.target_file_size >= 4096, || {
            format!("target_file_size must be at least 4096 bytes, got {}", self.target_file_size)
        })?;
        check(self.max_grandparent_overlap_factor >= 1, || {
            format!("max_grandparent_overlap_factor must be at least 1, got {}", self.max_grandparent_overlap_factor)
        })?;
        check(self.max_subcompactions >= 1, || "max_subcompactions must be at least 1".into())?;
        check(self.background_nice <= 19, || {
            format!("background_nice must be in 0..=19, got {}", self.background_nice)
        })?;
        check(self.size_ratio >= 2, || format!("size_ratio must be at least 2, got {}", self.size_ratio))?;
        check((2..=64).contains(&self.num_levels), || {
            format!("num_levels must be in 2..=64, got {}", self.num_levels)
        })?;
        check(self.max_bytes_for_level_base >= 4096, || "max_bytes_for_level_base must be at least 4096".into())?;
        check(self.auto_resume_interval.is_none_or(|d| d >= std::time::Duration::from_millis(1)), || {
            format!("auto_resume_interval must be at least 1 ms (or None), got {:?}", self.auto_resume_interval)
        })?;
        check(self.level0_compaction_trigger >= 1, || "level0_compaction_trigger must be at least 1".into())?;
        check(self.level0_slowdown_trigger >= self.level0_compaction_trigger, || {
            format!(
                "level0_slowdown_trigger ({}) must be >= level0_compaction_trigger ({})",
                self.level0_slowdown_trigger, self.level0_compaction_trigger
            )
        })?;
        check(self.level0_stop_trigger >= self.level0_slowdown_trigger, || {
            format!(
                "level0_stop_trigger ({}) must be >= level0_slowdown_trigger ({})",
                self.level0_stop_trigger, self.level0_slowdown_trigger
            )
        })?;
        check(self.pending_compaction_stop_bytes >= self.pending_compaction_slowdown_bytes, || {
            "pending_compaction_stop_bytes must be >= pending_compaction_slowdown_bytes".into()
        })?;
        check(self.min_delayed_write_rate >= 1, || "min_delayed_write_rate must be at least 1 byte/s".into())?;
        check(self.delayed_write_rate >= self.min_delayed_write_rate, || {
            format!(
                "delayed_write_rate ({}) must be >= min_delayed_write_rate ({})",
                self.delayed_write_rate, self.min_delayed_write_rate
            )
        })?;
        check((0.0..=1.0).contains(&self.high_priority_ratio), || {
            format!("high_priority_ratio must be in 0..=1, got {}", self.high_priority_ratio)
        })?;
        check((0.0..=1.0).contains(&self.first_module_cache_ratio), || {
            format!("first_module_cache_ratio must be in 0..=1, got {}", self.first_module_cache_ratio)
        })?;
        check(self.metadata_partition_size >= 64 && self.metadata_partition_size <= (64 << 20), || {
            format!("metadata_partition_size must be in 64..=64 MiB, got {}", self.metadata_partition_size)
        })?;
        check(self.max_open_files >= MIN_OPEN_FILES, || {
            format!("max_open_files must be at least {MIN_OPEN_FILES}, got {}", self.max_open_files)
        })?;
        check(self.max_key_size >= 1 && self.max_key_size <= (1 << 30), || {
            format!("max_key_size must be in 1..=1 GiB, got {}", self.max_key_size)
        })?;
        check(self.max_value_size <= (1 << 31), || {
            format!("max_value_size must be at most 2 GiB, got {}", self.max_value_size)
        })?;
        let every_compression = std::iter::once(&self.compression)
            .chain(&self.compression_per_level)
            .chain(self.bottommost_compression.as_ref());
        for c in every_compression {
            if let Compression::Zstd { level } = *c {
                let levels = zstd::compression_level_range();
                check(levels.contains(&level), || {
                    format!("zstd level must be in {}..={}, got {level}", levels.start(), levels.end())
                })?;
            }
        }
        self.filter_policy.validate().map_err(Error::InvalidOptions)?;
        self.probe_policy.validate().map_err(Error::InvalidOptions)?;
        for (i, (name, ks)) in self.keyspace_options.iter().enumerate() {
            check(name != "default", || {
                "keyspace_options cannot name the default keyspace: its options are the database's own".into()
            })?;
            check(!self.keyspace_options.iter().skip(i + 1).any(|(other, _)| other == name), || {
                format!("keyspace_options names keyspace {name:?} twice")
            })?;
            ks.over(self).validate().map_err(|e| match e {
                Error::InvalidOptions(m) => Error::InvalidOptions(format!("keyspace {name:?}: {m}")),
                other => other,
            })?;
        }
        Ok(())
    }
}

/// Options of one read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Verify block checksums on every read. Default: true.
    pub verify_checksums: bool,
    /// Insert blocks read by this operation into the block cache. Default: true
    /// (scans may turn it off to avoid flushing the cache).
    pub fill_cache: bool,
    /// Bytes a table cursor reads at once when it needs a data block that is not cached
    /// (0: one read per block). For long sequential scans, which then make one system call
    /// per this many bytes instead of one per block; compactions use 256 KiB. Blocks are
    /// still counted in `Stats::io` one by one, as if read alone. Default: 0.
    pub readahead_size: usize,
    /// What the read may touch: everything (the default), or only what is in memory
    /// ([`ReadTier::CacheOnly`]: memtables, the block cache, open tables' pinned index and
    /// filters). Point reads and iterators honour it.
    pub read_tier: ReadTier,
    /// Knobs for the experiments (the unshared digest, profiling); production code leaves
    /// them at their defaults. Only with the `lab` feature.
    #[cfg(feature = "lab")]
    pub lab: ReadLab,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            verify_checksums: true,
            fill_cache: true,
            readahead_size: 0,
            read_tier: ReadTier::All,
            #[cfg(feature = "lab")]
            lab: ReadLab::default(),
        }
    }
}

impl ReadOptions {
    /// How this read times its stages: not at all, unless the `lab` feature is on and
    /// `ReadLab::profile` asks for it.
    #[inline(always)]
    pub(crate) fn stage_timer(&self) -> StageTimer {
        #[cfg(feature = "lab")]
        return StageTimer::new(self.lab.profile);
        #[cfg(not(feature = "lab"))]
        StageTimer::OFF
    }
}

/// What a read may touch ([`ReadOptions::read_tier`]), as RocksDB's `ReadTier`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReadTier {
    /// Memory and files: a block not cached is read, a table not open is opened.
    #[default]
    All,
    /// Memory only (RocksDB's `kBlockCacheTier`): a read that would read a block from a
    /// file, or open a table, fails at once with [`Error::WouldBlock`] instead, having
    /// changed nothing (the cache is not filled). For callers that must not wait on the
    /// disk, such as a server's event loop, which then runs the read again elsewhere with
    /// [`ReadTier::All`].
    CacheOnly,
}

/// Options of one write.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// fsync the WAL before acknowledging. Default: false (the write survives a process
    /// crash, not a power loss).
    pub sync: bool,
    /// Skip the WAL: faster, but the write is lost on a crash before the next flush.
    /// Default: false.
    pub disable_wal: bool,
    /// Fail at once with [`Error::WouldBlock`] instead of waiting: when the write would be
    /// delayed or stopped (too many level-0 runs, too much compaction debt, too many
    /// memtables waiting for a flush), when the memtable is full and must be switched (a
    /// new WAL file created), or when the writes ahead of it are stalled. The write then
    /// did nothing. As RocksDB's `no_slowdown` (which answers `Incomplete`). A write with
    /// `sync` still waits for its sync. Default: false.
    pub no_slowdown: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        Options::default().validate().unwrap();
    }

    #[test]
    fn bad_values_name_themselves() {
        let bad = |f: fn(&mut Options)| {
            let mut o = Options::default();
            f(&mut o);
            match o.validate() {
                Err(Error::InvalidOptions(m)) => m,
                other => panic!("expected InvalidOptions, got {other:?}"),
            }
        };
        assert!(bad(|o| o.block_size = 0).contains("block_size"));
        assert!(bad(|o| o.size_ratio = 1).contains("size_ratio"));
        assert!(bad(|o| o.num_levels = 1).contains("num_levels"));
        assert!(bad(|o| o.bottommost_compression = Some(Compression::Zstd { level: 99 })).contains("zstd level"));
        assert!(bad(|o| o.compression_per_level = vec![Compression::Zstd { level: 23 }]).contains("zstd level"));
        assert!(bad(|o| o.level0_stop_trigger = 1).contains("level0_stop_trigger"));
        assert!(bad(|o| o.min_delayed_write_rate = 0).contains("min_delayed_write_rate"));
        assert!(bad(|o| o.delayed_write_rate = 1 << 10).contains("delayed_write_rate"));
        assert!(bad(|o| o.high_priority_ratio = 1.5).contains("high_priority_ratio"));
        assert!(bad(|o| o.first_module_cache_ratio = -0.1).contains("first_module_cache_ratio"));
        assert!(bad(|o| o.metadata_partition_size = 63).contains("metadata_partition_size"));
        assert!(bad(|o| o.metadata_partition_size = (64 << 20) + 1).contains("metadata_partition_size"));
        assert!(bad(|o| o.filter_policy.bits_per_key = -1.0).contains("bits_per_key"));
        assert!(bad(|o| o.max_open_files = 15).contains("max_open_files"));
        assert!(bad(|o| o.max_grandparent_overlap_factor = 0).contains("max_grandparent_overlap_factor"));
        assert!(bad(|o| o.background_nice = 20).contains("background_nice"));
        Options { max_open_files: 16, ..Options::default() }.validate().unwrap();
        Options { background_nice: 19, ..Options::default() }.validate().unwrap();
    }

    #[test]
    fn max_open_files_defaults_to_half_the_soft_limit() {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes one `rlimit` through a pointer to a live one. Exercised
        // by this test, `max_open_files_defaults_to_half_the_soft_limit`.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) }, 0);
        let expected = if limit.rlim_cur == libc::RLIM_INFINITY {
            65_536
        } else {
            (limit.rlim_cur as usize / 2).clamp(16, 65_536)
        };
        let opts = Options::default();
        assert_eq!(opts.max_open_files, expected);
        assert_eq!(opts.table_file_handles(), expected - NON_TABLE_FILES);
        assert_eq!(Options { max_open_files: 16, ..Options::default() }.table_file_handles(), 6);
    }

    #[test]
    fn the_metadata_limit_defaults_to_an_eighth_of_memory() {
        // Linux's MemTotal is the physical pages sysconf counts.
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
        let kib: u64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        let expected = (kib * 1024 / 8).max(MIN_DEFAULT_METADATA_LIMIT);
        assert_eq!(Options::default().pinned_metadata_limit, expected);
    }
}
