//! Shamba behind [`Engine`]: counters come from `Db::stats()` (`io` = block cache misses
//! that read the device, by block kind).

use super::{Engine, EngineResult, ReadCounters, Setup, TreeShape, Variant, WriteCounters};
use shamba::filter::{Allocation, FilterLayout, ModuleSizes};
use shamba::{Db, Options, Readable};
use shamba::{ProbePolicy, ShambaPolicy, Skipping};
use std::path::Path;

/// A Shamba database.
pub struct ShambaEngine {
    db: Db,
    variant: Variant,
    /// Level targets, to estimate the compaction debt from the level sizes.
    targets: LevelTargets,
}

/// L1's target size and the growth factor (level i targets `base * T^(i-1)`).
#[derive(Debug, Clone, Copy)]
struct LevelTargets {
    base: u64,
    ratio: u64,
    l0_trigger: usize,
}

impl LevelTargets {
    /// Bytes over the level targets: all of L0 once it reaches its compaction trigger,
    /// and each deeper level's excess (RocksDB's `estimate-pending-compaction-bytes` counts
    /// the same way, without the bytes each move rewrites below). `Db::stats` has no such
    /// figure; this is computed from its per-level sizes.
    fn debt(&self, levels: &[shamba::LevelStats]) -> u64 {
        let mut debt = 0;
        let mut target = self.base;
        for (i, level) in levels.iter().enumerate() {
            if i == 0 {
                if level.files >= self.l0_trigger {
                    debt += level.bytes;
                }
                continue;
            }
            debt += level.bytes.saturating_sub(target);
            target = target.saturating_mul(self.ratio);
        }
        debt
    }
}

impl ShambaEngine {
    /// Open `dir` with the shared setup and the variant's options ([`options`]).
    pub fn open(variant: Variant, dir: &Path, setup: &Setup) -> EngineResult<Self> {
        let opts = options(variant, setup);
        let targets = LevelTargets {
            base: opts.max_bytes_for_level_base,
            ratio: u64::from(opts.size_ratio),
            l0_trigger: opts.level0_compaction_trigger,
        };
        Ok(ShambaEngine { db: Db::open(dir, opts)?, variant, targets })
    }
}

/// Shamba's options for the shared setup; `ShambaRibbon` puts Ribbon filters on every level,
/// `ShambaBudget` adds partitions, modules, Monkey bits and hit-odds skipping,
/// `ShambaFine` one-column modules read together (see [`Variant::ShambaFine`]).
pub(super) fn options(variant: Variant, setup: &Setup) -> Options {
    let mut opts = Options {
        write_buffer_size: setup.write_buffer_size,
        target_file_size: setup.target_file_size,
        max_bytes_for_level_base: setup.level_base,
        size_ratio: setup.size_ratio,
        block_size: setup.block_size,
        cache_capacity: setup.cache_bytes,
        cache_index_and_filter_blocks: setup.metadata_in_cache,
        align_compaction_outputs: setup.shamba_align_outputs,
        background_nice: if setup.background_low_priority { 19 } else { 0 },
        ..Options::default()
    };
    opts.filter_policy.bits_per_key = setup.bits_per_key;
    if setup.direct_io {
        opts.storage = std::sync::Arc::new(shamba::storage::DirectReadFsStorage);
    }
    match variant {
        Variant::ShambaRibbon => opts.filter_policy.ribbon_from_level = Some(0),
        Variant::ShambaBudget => {
            opts.filter_policy.ribbon_from_level = Some(0);
            opts.filter_policy.allocation = Allocation::Monkey;
            opts.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
            opts.partition_index_and_filters = true;
            opts.filter_memory_budget = setup.filter_memory_budget;
            opts.probe_policy = ProbePolicy::Shamba(ShambaPolicy { skipping: Skipping::HitOdds, ..Default::default() });
        }
        Variant::ShambaFine => {
            opts.filter_policy.ribbon_from_level = Some(0);
            opts.filter_policy.bits_per_key = 2.0 * setup.bits_per_key;
            // One module per Ribbon column: log2(1 / FP rate) = bits ln 2.
            let columns = (opts.filter_policy.bits_per_key * std::f64::consts::LN_2).round().clamp(1.0, 255.0);
            opts.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: columns as u8 });
            opts.partition_index_and_filters = true;
            opts.metadata_partition_size = 32 << 10;
            opts.filter_memory_budget = setup.filter_memory_budget;
            opts.probe_policy = ProbePolicy::Shamba(ShambaPolicy {
                skipping: Skipping::HitOdds,
                read_rest_together: true,
                ..Default::default()
            });
        }
        _ => {}
    }
    opts
}

impl Engine for ShambaEngine {
    fn variant(&self) -> Variant {
        self.variant
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        Ok(self.db.put(key, value)?)
    }

    fn get(&self, key: &[u8]) -> EngineResult<bool> {
        Ok(self.db.get(key)?.is_some())
    }

    fn multi_get(&self, keys: &[Vec<u8>]) -> EngineResult<Option<usize>> {
        let mut found = 0;
        for v in self.db.multi_get(keys) {
            if v?.is_some() {
                found += 1;
            }
        }
        Ok(Some(found))
    }

    fn scan(&self, from: &[u8], len: usize) -> EngineResult<usize> {
        let mut seen = 0;
        for kv in self.db.range(from.to_vec()..).take(len) {
            kv?;
            seen += 1;
        }
        Ok(seen)
    }

    fn settle(&self) -> EngineResult<()> {
        self.db.flush()?;
        self.db.wait_for_compactions()?;
        Ok(())
    }

    fn counters(&self) -> ReadCounters {
        let io = self.db.stats().io;
        ReadCounters { blocks: io.total_reads(), bytes: io.total_bytes() }
    }

    fn shape(&self) -> EngineResult<TreeShape> {
        let stats = self.db.stats();
        let mut files_per_level: Vec<usize> = stats.levels.iter().map(|l| l.files).collect();
        while files_per_level.last() == Some(&0) {
            files_per_level.pop();
        }
        Ok(TreeShape {
            files_per_level,
            filter_bytes: stats.levels.iter().map(|l| l.filter_bytes).sum(),
            index_bytes: Some(stats.levels.iter().map(|l| l.index_bytes).sum()),
        })
    }

    fn write_counters(&self) -> WriteCounters {
        let s = self.db.stats();
        WriteCounters {
            wal_bytes: Some(s.wal_bytes),
            flush_bytes: Some(s.flush_bytes),
            compaction_bytes: Some(s.compaction_bytes_written),
            stall_micros: Some(s.stall_micros()),
            l0_files: s.levels.first().map(|l| l.files as u64),
            pending_compaction_bytes: Some(self.targets.debt(&s.levels)),
            detail: vec![
                ("delayed_micros".into(), s.delayed_micros),
                ("delayed_for_flush_micros".into(), s.delayed_for_flush_micros),
                ("delayed_write_rate".into(), s.delayed_write_rate),
                ("stopped_for_flush_micros".into(), s.stopped_for_flush_micros),
                ("stopped_for_compaction_micros".into(), s.stopped_for_compaction_micros),
                ("immutable_memtables".into(), s.immutable_memtables as u64),
                ("compactions".into(), s.compactions),
                ("trivial_moves".into(), s.trivial_moves),
                ("flushes".into(), s.flushes),
            ]
            .into_iter()
            .chain(s.levels.iter().enumerate().map(|(i, l)| (format!("written_l{i}"), l.bytes_written)))
            .collect(),
        }
    }

    fn close(self: Box<Self>) -> EngineResult<()> {
        Ok(self.db.close()?)
    }

    fn read(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.db.get(key)?)
    }
}
