//! The engines under comparison, behind one small trait.
//!
//! Each engine lives in its own file and translates the shared [`Setup`] (the equal footing:
//! bits per key, block size, cache budget, write buffer, file size, level shape) into its
//! own options. Workloads only see [`Engine`] (and [`txn::TxEngine`], the same engines opened
//! for optimistic transactions); they never name an engine.

#[cfg(feature = "fjall")]
mod fjall;
#[cfg(feature = "fjall")]
mod fjall_txn;
#[cfg(feature = "rocksdb")]
mod rocks;
#[cfg(feature = "rocksdb")]
mod rocks_txn;
mod shamba;
mod shamba_txn;
pub mod txn;

use std::error::Error;
use std::path::Path;

/// Errors of any engine, boxed: each engine has its own error type.
pub type EngineError = Box<dyn Error + Send + Sync>;

/// Result of an engine call.
pub type EngineResult<T> = Result<T, EngineError>;

/// One engine configuration in the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Shamba with blocked Bloom filters on every level (its default).
    Shamba,
    /// Shamba with Ribbon filters on every level (`ribbon_from_level = Some(0)`).
    ShambaRibbon,
    /// Shamba configured for a memory budget (the README's recommendation): partitioned
    /// filters and index, two equal Ribbon modules per partition with Monkey bits per
    /// level, and SHaMBa's hit-odds skipping.
    ShambaBudget,
    /// Shamba's fewest reads under a memory budget: partitioned filters and index (32 KiB
    /// partitions), one-column Ribbon modules at twice the bits per key (on disk; the
    /// budget decides what is in memory), the modules not resident read together in one
    /// read, hit-odds skipping.
    ShambaFine,
    /// RocksDB, format_version 5 full Bloom filters (FastLocalBloom).
    Rocksdb,
    /// RocksDB, Ribbon filters at the same Bloom-equivalent bits per key.
    RocksdbRibbon,
    /// RocksDB, partitioned Bloom filters and two-level index: its best configuration
    /// under memory pressure.
    RocksdbPartitioned,
    /// fjall with its defaults (cache, bits per key, file and memtable sizes set as above).
    Fjall,
}

/// Filter family: ratios compare Shamba with peers of the same family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Bloom filters.
    Bloom,
    /// Ribbon filters.
    Ribbon,
}

impl Variant {
    /// Every variant, in the order they run.
    pub const ALL: [Variant; 8] = [
        Variant::Shamba,
        Variant::ShambaRibbon,
        Variant::ShambaBudget,
        Variant::ShambaFine,
        Variant::Rocksdb,
        Variant::RocksdbRibbon,
        Variant::RocksdbPartitioned,
        Variant::Fjall,
    ];

    /// Name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Shamba => "shamba",
            Variant::ShambaRibbon => "shamba-ribbon",
            Variant::ShambaBudget => "shamba-budget",
            Variant::ShambaFine => "shamba-fine",
            Variant::Rocksdb => "rocksdb",
            Variant::RocksdbRibbon => "rocksdb-ribbon",
            Variant::RocksdbPartitioned => "rocksdb-partitioned",
            Variant::Fjall => "fjall",
        }
    }

    /// Bloom or Ribbon.
    pub fn family(self) -> Family {
        match self {
            Variant::ShambaRibbon | Variant::ShambaBudget | Variant::ShambaFine | Variant::RocksdbRibbon => {
                Family::Ribbon
            }
            _ => Family::Bloom,
        }
    }

    /// Whether this binary was built with the engine (`--features rocksdb,fjall`).
    pub fn compiled_in(self) -> bool {
        match self {
            Variant::Shamba | Variant::ShambaRibbon | Variant::ShambaBudget | Variant::ShambaFine => true,
            Variant::Rocksdb | Variant::RocksdbRibbon | Variant::RocksdbPartitioned => cfg!(feature = "rocksdb"),
            Variant::Fjall => cfg!(feature = "fjall"),
        }
    }

    /// True for Shamba's own rows.
    pub fn is_shamba(self) -> bool {
        matches!(self, Variant::Shamba | Variant::ShambaRibbon | Variant::ShambaBudget | Variant::ShambaFine)
    }

    /// How this variant is configured beyond the shared footing (printed with results).
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Shamba => "blocked Bloom on every level",
            Variant::ShambaRibbon => "Ribbon on every level (Bloom-equivalent FP rate)",
            Variant::ShambaBudget => {
                "partitioned filters + index, 2 equal Ribbon modules per partition, Monkey bits, hit-odds skipping"
            }
            Variant::ShambaFine => {
                "partitioned filters + index (32 KiB), 1-column Ribbon modules at 2x bits, read together, hit-odds skipping"
            }
            Variant::Rocksdb => "format_version 5 full Bloom (FastLocalBloom), get_pinned",
            Variant::RocksdbRibbon => "Ribbon, Bloom-equivalent bits/key, format_version 5",
            Variant::RocksdbPartitioned => "partitioned Bloom + two-level index, top level pinned, format_version 5",
            Variant::Fjall => "defaults: L0 filters and L0-L1 index pinned, partitioned from L3, hash index off",
        }
    }
}

/// The equal footing every engine is opened with.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Setup {
    /// Filter bits per key (Bloom-equivalent for Ribbon rows).
    pub bits_per_key: f64,
    /// Target data block size.
    pub block_size: usize,
    /// Block cache capacity in bytes.
    pub cache_bytes: usize,
    /// Index and filter blocks go through the block cache (RocksDB's
    /// `cache_index_and_filter_blocks`); false keeps them in table readers.
    pub metadata_in_cache: bool,
    /// Memtable size.
    pub write_buffer_size: usize,
    /// Target SST size.
    pub target_file_size: u64,
    /// Target size of L1 (4 table files, so fjall's fixed L1 = 4 x file size matches).
    pub level_base: u64,
    /// Growth factor between levels.
    pub size_ratio: u32,
    /// Read tables with O_DIRECT (Shamba: `DirectReadFsStorage`; RocksDB:
    /// `use_direct_reads`; fjall has no such option and reads buffered).
    pub direct_io: bool,
    /// Shamba's `filter_memory_budget` (shamba-budget and shamba-fine in the
    /// memory-pressure sweep); the peers ignore it.
    pub filter_memory_budget: Option<u64>,
    /// Shamba's `align_compaction_outputs` (on unless `--shamba-no-align-outputs`: an A/B
    /// of that option beside the same peers); the peers ignore it.
    pub shamba_align_outputs: bool,
    /// Compaction threads at the lowest CPU priority (`--background-low-priority`):
    /// Shamba's `background_nice` 19, RocksDB's compaction pool lowered
    /// (`LowerThreadPoolCPUPriority`, nice 19); flushes as they are; fjall has no such
    /// setting.
    pub background_low_priority: bool,
}

#[cfg(test)]
impl Setup {
    /// A small footing for tests: 64 KiB memtables and tables, a 1 MiB cache, so a few
    /// thousand keys make several levels.
    pub fn small() -> Setup {
        Setup {
            bits_per_key: 10.0,
            block_size: 4096,
            cache_bytes: 1 << 20,
            metadata_in_cache: false,
            write_buffer_size: 64 << 10,
            target_file_size: 64 << 10,
            level_base: 256 << 10,
            size_ratio: 4,
            direct_io: false,
            filter_memory_budget: None,
            shamba_align_outputs: true,
            background_low_priority: false,
        }
    }
}

/// Cumulative block reads that missed the block cache and went to a file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReadCounters {
    /// Blocks read from files.
    pub blocks: u64,
    /// Bytes read from files for those blocks.
    pub bytes: u64,
}

impl ReadCounters {
    /// Counters accumulated since `earlier`.
    pub fn since(&self, earlier: &ReadCounters) -> ReadCounters {
        ReadCounters {
            blocks: self.blocks.saturating_sub(earlier.blocks),
            bytes: self.bytes.saturating_sub(earlier.bytes),
        }
    }
}

/// The shape of a loaded tree and the size of its metadata.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TreeShape {
    /// Table files per level, L0 first, trailing empty levels dropped.
    pub files_per_level: Vec<usize>,
    /// Bytes of filter blocks over all tables.
    pub filter_bytes: u64,
    /// Bytes of index blocks over all tables, where the engine exposes them.
    pub index_bytes: Option<u64>,
}

impl TreeShape {
    /// Filter plus index bytes (filter only where the index size is not exposed).
    pub fn metadata_bytes(&self) -> u64 {
        self.filter_bytes + self.index_bytes.unwrap_or(0)
    }
}

/// Write-side counters an engine keeps itself, cumulative since open; `None` where the
/// engine does not expose one.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct WriteCounters {
    /// Bytes appended to the write-ahead log.
    pub wal_bytes: Option<u64>,
    /// Bytes of tables written by flushes.
    pub flush_bytes: Option<u64>,
    /// Bytes of tables written by compactions.
    pub compaction_bytes: Option<u64>,
    /// Microseconds writers were slowed down or stopped.
    pub stall_micros: Option<u64>,
    /// Table files (or sorted runs) in L0 now.
    pub l0_files: Option<u64>,
    /// Bytes over the level targets that compactions still have to move down.
    pub pending_compaction_bytes: Option<u64>,
    /// Engine-specific counters by name (e.g. how the stall time splits).
    pub detail: Vec<(String, u64)>,
}

/// What a workload can ask of an engine (from several client threads at once).
pub trait Engine: Send + Sync {
    /// Which configuration this is.
    fn variant(&self) -> Variant;
    /// Write one key (WAL on, no sync).
    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()>;
    /// Point lookup; true if the key was found.
    fn get(&self, key: &[u8]) -> EngineResult<bool>;
    /// Batched point lookups (the engine's own multi-get); the number of keys found, or
    /// `None` where the engine has no batched get (fjall).
    fn multi_get(&self, keys: &[Vec<u8>]) -> EngineResult<Option<usize>>;
    /// Forward scan of at most `len` entries from `from`; returns the entries seen.
    fn scan(&self, from: &[u8], len: usize) -> EngineResult<usize>;
    /// Flush the memtable and wait until no flush or compaction is running, so lookups
    /// are served by tables.
    fn settle(&self) -> EngineResult<()>;
    /// Block reads so far (block cache misses that read a file).
    fn counters(&self) -> ReadCounters;
    /// Levels, files and metadata bytes.
    fn shape(&self) -> EngineResult<TreeShape>;
    /// Write-side counters (bytes written, stalls, L0, compaction debt); none by default.
    fn write_counters(&self) -> WriteCounters {
        WriteCounters::default()
    }
    /// Close cleanly (flushes what the engine flushes on close).
    fn close(self: Box<Self>) -> EngineResult<()>;
    /// Point lookup returning the value (a YCSB update reads the record it rewrites).
    fn read(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>>;
}

/// Open (or create) `variant` in `dir` with `setup`.
/// Fails for an engine this binary was built without.
pub fn open(variant: Variant, dir: &Path, setup: &Setup) -> EngineResult<Box<dyn Engine>> {
    Ok(match variant {
        Variant::Shamba | Variant::ShambaRibbon | Variant::ShambaBudget | Variant::ShambaFine => {
            Box::new(shamba::ShambaEngine::open(variant, dir, setup)?)
        }
        #[cfg(feature = "rocksdb")]
        Variant::Rocksdb | Variant::RocksdbRibbon | Variant::RocksdbPartitioned => {
            Box::new(rocks::RocksEngine::open(variant, dir, setup)?)
        }
        #[cfg(feature = "fjall")]
        Variant::Fjall => Box::new(fjall::FjallEngine::open(dir, setup)?),
        #[allow(unreachable_patterns)]
        other => return Err(format!("{} is not compiled in: build with --features peers", other.name()).into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every engine this binary says it has opens, stores, finds and settles: a variant
    /// added to the list but not to [`open`] fails here, not in a long run.
    #[test]
    fn every_compiled_in_engine_opens_and_answers() {
        let setup = Setup {
            bits_per_key: 10.0,
            block_size: 4096,
            cache_bytes: 1 << 20,
            metadata_in_cache: true,
            write_buffer_size: 64 << 10,
            target_file_size: 64 << 10,
            level_base: 256 << 10,
            size_ratio: 4,
            direct_io: false,
            filter_memory_budget: Some(16 << 10),
            shamba_align_outputs: true,
            background_low_priority: false,
        };
        for variant in Variant::ALL.into_iter().filter(|v| v.compiled_in()) {
            let dir = tempfile::tempdir().expect("tempdir");
            let db = open(variant, dir.path(), &setup).unwrap_or_else(|e| panic!("{}: {e}", variant.name()));
            for i in 0..2000u32 {
                db.put(format!("key{i:06}").as_bytes(), b"value").expect("put");
            }
            db.settle().expect("settle");
            assert!(db.get(b"key000042").expect("get"), "{}", variant.name());
            assert!(!db.get(b"key999999x").expect("get"), "{}", variant.name());
            assert!(db.shape().expect("shape").filter_bytes > 0, "{}", variant.name());
            db.close().expect("close");
        }
    }
}
