//! RocksDB (through the `rocksdb` crate) behind [`Engine`].
//!
//! Counters come from its statistics tickers: blocks read = `rocksdb.block.cache.miss`
//! (every miss reads one block from a file), bytes read = the sum of
//! `rocksdb.last.level.read.bytes` and `rocksdb.non.last.level.read.bytes` (every file
//! read). Statistics are on at `ExceptHistogramOrTimers`: tickers only, the cheapest level
//! that has them.

use super::{Engine, EngineResult, ReadCounters, Setup, TreeShape, Variant, WriteCounters};
use rocksdb::statistics::{StatsLevel, Ticker};
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType, IteratorMode, Options, DB,
};
use std::path::Path;

/// Levels RocksDB is opened with (its default).
const NUM_LEVELS: usize = 7;

/// A RocksDB database and the options object that owns its statistics.
pub struct RocksEngine {
    db: DB,
    opts: Options,
    variant: Variant,
    // Kept alive for the lifetime of the DB (the table factory holds a reference too).
    _cache: Cache,
}

impl RocksEngine {
    /// Open `dir` with the shared setup and the variant's filter configuration.
    pub fn open(variant: Variant, dir: &Path, setup: &Setup) -> EngineResult<Self> {
        let (mut opts, cache) = options(variant, setup);
        if setup.background_low_priority {
            lower_background_priority(&mut opts)?;
        }
        // The default column family opened by name, with the same options, so that
        // `cf_handle` finds it for the batched multi-get (plain `open` leaves it unnamed).
        let default = ColumnFamilyDescriptor::new(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, opts.clone());
        let db = DB::open_cf_descriptors(&opts, dir, [default])?;
        Ok(RocksEngine { db, opts, variant, _cache: cache })
    }

    fn ticker(&self, t: Ticker) -> u64 {
        self.opts.get_ticker_count(t)
    }
}

/// RocksDB's options for the shared setup and the variant's filter configuration, and the
/// block cache they use (to be kept alive as long as the database).
pub(super) fn options(variant: Variant, setup: &Setup) -> (Options, Cache) {
    let cache = Cache::new_lru_cache(setup.cache_bytes);
    let mut table = BlockBasedOptions::default();
    table.set_block_size(setup.block_size);
    table.set_format_version(5);
    table.set_block_cache(&cache);
    table.set_cache_index_and_filter_blocks(setup.metadata_in_cache);
    match variant {
        Variant::RocksdbRibbon => table.set_ribbon_filter(setup.bits_per_key),
        Variant::RocksdbPartitioned => {
            table.set_bloom_filter(setup.bits_per_key, false);
            table.set_partition_filters(true);
            table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
            table.set_pin_top_level_index_and_filter(true);
            // Partitioned filters only apply with metadata in the cache.
            table.set_cache_index_and_filter_blocks(true);
        }
        _ => table.set_bloom_filter(setup.bits_per_key, false),
    }

    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.enable_statistics();
    opts.set_statistics_level(StatsLevel::ExceptHistogramOrTimers);
    opts.set_compression_type(DBCompressionType::None);
    opts.set_write_buffer_size(setup.write_buffer_size);
    opts.set_target_file_size_base(setup.target_file_size);
    opts.set_max_bytes_for_level_base(setup.level_base);
    opts.set_max_bytes_for_level_multiplier(f64::from(setup.size_ratio));
    // Static level targets (base * T^(i-1)), as Shamba and fjall size their levels.
    opts.set_level_compaction_dynamic_level_bytes(false);
    opts.set_num_levels(NUM_LEVELS as i32);
    opts.set_block_based_table_factory(&table);
    opts.set_use_direct_reads(setup.direct_io);
    (opts, cache)
}

/// Run the compaction (low) thread pool at nice 19; the flush (high) pool keeps its
/// priority, as Shamba's flush thread does. The pool belongs to the process's default
/// `Env`: every RocksDB opened later in this process runs lowered too.
pub(super) fn lower_background_priority(opts: &mut Options) -> EngineResult<()> {
    let mut env = rocksdb::Env::new()?;
    env.lower_thread_pool_cpu_priority();
    opts.set_env(&env);
    Ok(())
}

/// Bytes written into each level (`written_l<N>`: flushes into L0, compactions into the
/// rest) from the `Write(GB)` column of `rocksdb.cfstats`' compaction table, whose rows
/// start `L<N>` (to 0.1 GB: RocksDB prints no finer). A row's size is two words ("1.87
/// MB") where the header's is one, so the row's column is one to the right.
fn level_writes(cfstats: &str) -> Vec<(String, u64)> {
    let mut lines = cfstats.lines().map(str::split_whitespace);
    let Some(column) = lines.by_ref().find_map(|mut cols| cols.position(|c| c == "Write(GB)")) else {
        return Vec::new();
    };
    lines
        .filter_map(|cols| {
            let cols: Vec<&str> = cols.collect();
            let level: usize = cols.first()?.strip_prefix('L')?.parse().ok()?;
            let gb: f64 = cols.get(column + 1)?.parse().ok()?;
            Some((format!("written_l{level}"), (gb * f64::from(1u32 << 30)) as u64))
        })
        .collect()
}

/// A `u64` field of `rocksdb.aggregated-table-properties` ("name=value; name=value; ...").
fn table_property(props: &str, prefix: &str) -> Option<u64> {
    props.split(';').map(str::trim).find(|kv| kv.starts_with(prefix))?.rsplit('=').next()?.trim().parse().ok()
}

impl Engine for RocksEngine {
    fn variant(&self) -> Variant {
        self.variant
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        Ok(self.db.put(key, value)?)
    }

    fn get(&self, key: &[u8]) -> EngineResult<bool> {
        Ok(self.db.get_pinned(key)?.is_some())
    }

    fn multi_get(&self, keys: &[Vec<u8>]) -> EngineResult<Option<usize>> {
        let cf = self.db.cf_handle(rocksdb::DEFAULT_COLUMN_FAMILY_NAME).ok_or("rocksdb: no default column family")?;
        let mut found = 0;
        // The batched path (MultiGet with a key vector): filters and blocks of the whole
        // batch looked up together, values pinned, as `get_pinned` does for one key.
        for v in self.db.batched_multi_get_cf(&cf, keys, false) {
            if v?.is_some() {
                found += 1;
            }
        }
        Ok(Some(found))
    }

    fn scan(&self, from: &[u8], len: usize) -> EngineResult<usize> {
        let mut seen = 0;
        for kv in self.db.iterator(IteratorMode::From(from, rocksdb::Direction::Forward)).take(len) {
            kv?;
            seen += 1;
        }
        Ok(seen)
    }

    fn settle(&self) -> EngineResult<()> {
        self.db.flush()?;
        let mut wait = rocksdb::WaitForCompactOptions::default();
        wait.set_flush(true);
        self.db.wait_for_compact(&wait)?;
        Ok(())
    }

    fn counters(&self) -> ReadCounters {
        ReadCounters {
            blocks: self.ticker(Ticker::BlockCacheMiss),
            bytes: self.ticker(Ticker::LastLevelReadBytes) + self.ticker(Ticker::NonLastLevelReadBytes),
        }
    }

    fn shape(&self) -> EngineResult<TreeShape> {
        let mut files_per_level = Vec::with_capacity(NUM_LEVELS);
        for level in 0..NUM_LEVELS {
            let files = self.db.property_int_value(format!("rocksdb.num-files-at-level{level}").as_str())?.unwrap_or(0);
            files_per_level.push(files as usize);
        }
        while files_per_level.last() == Some(&0) {
            files_per_level.pop();
        }
        let props = self.db.property_value("rocksdb.aggregated-table-properties")?.unwrap_or_default();
        Ok(TreeShape {
            files_per_level,
            filter_bytes: table_property(&props, "filter block size").unwrap_or(0),
            index_bytes: table_property(&props, "index block size"),
        })
    }

    fn write_counters(&self) -> WriteCounters {
        let int = |name: &str| self.db.property_int_value(name).ok().flatten();
        WriteCounters {
            wal_bytes: Some(self.ticker(Ticker::WalFileBytes)),
            flush_bytes: Some(self.ticker(Ticker::FlushWriteBytes)),
            compaction_bytes: Some(self.ticker(Ticker::CompactWriteBytes)),
            stall_micros: Some(self.ticker(Ticker::StallMicros)),
            l0_files: int("rocksdb.num-files-at-level0"),
            pending_compaction_bytes: int("rocksdb.estimate-pending-compaction-bytes"),
            detail: vec![
                ("actual_delayed_write_rate".into(), int("rocksdb.actual-delayed-write-rate").unwrap_or(0)),
                ("immutable_memtables".into(), int("rocksdb.num-immutable-mem-table").unwrap_or(0)),
                ("running_compactions".into(), int("rocksdb.num-running-compactions").unwrap_or(0)),
            ]
            .into_iter()
            .chain(
                self.db
                    .property_value("rocksdb.cfstats-no-file-histogram")
                    .ok()
                    .flatten()
                    .map_or_else(Vec::new, |t| level_writes(&t)),
            )
            .collect(),
        }
    }

    fn close(self: Box<Self>) -> EngineResult<()> {
        self.db.flush_wal(true)?;
        drop(self);
        Ok(())
    }

    fn read(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.db.get_pinned(key)?.map(|v| v.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::{level_writes, table_property};

    #[test]
    fn level_writes_come_from_the_write_column() {
        let s = "\n** Compaction Stats [default] **\n\
Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp\n\
----------------------------------------------------------------------------------------------\n\
  L0      2/0    1.87 MB   0.5      0.0     0.0      0.0       0.5      0.5       0.0   1.0\n\
  L2     40/0   39.90 MB   1.0      3.0     0.2      2.8       2.9      0.1       0.0  12.5\n\
 Sum     42/0   41.77 MB   0.0      3.0     0.2      2.8       3.4      0.6       0.0   7.0\n";
        let gib = |x: f64| (x * f64::from(1u32 << 30)) as u64;
        assert_eq!(level_writes(s), vec![("written_l0".to_string(), gib(0.5)), ("written_l2".to_string(), gib(2.9))]);
        assert!(level_writes("no table here").is_empty());
    }

    #[test]
    fn aggregated_table_properties_are_parsed_by_name() {
        let s = "# data blocks=35; # entries=1000; index block size (user-key? 1, delta-value? 1)=1234; \
                 filter block size=1280; ";
        assert_eq!(table_property(s, "index block size"), Some(1234));
        assert_eq!(table_property(s, "filter block size"), Some(1280));
        assert_eq!(table_property(s, "# entries"), Some(1000));
        assert_eq!(table_property(s, "raw key size"), None);
    }
}
