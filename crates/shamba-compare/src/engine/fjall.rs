//! fjall behind [`Engine`]: its defaults, with the cache, bits per key, block size,
//! memtable and table sizes of the shared setup.
//!
//! Counters come from its `metrics` feature: blocks read = index + filter + data blocks
//! loaded from a file (cache misses), bytes = bytes requested from files for them. fjall
//! does not expose index block sizes, so its metadata bytes are filter bytes only. Its
//! pinning policy (L0 filters, L0-L1 indexes held outside the cache) is a creation-time
//! setting kept as is: the memory runs use its defaults with the same cache budget.

use super::{Engine, EngineResult, ReadCounters, Setup, TreeShape, WriteCounters};
use fjall::compaction::Leveled;
use fjall::config::{BlockSizePolicy, BloomConstructionPolicy, FilterPolicy, FilterPolicyEntry};
use fjall::{AbstractTree, Database, Keyspace, KeyspaceCreateOptions};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The keyspace every workload uses.
pub(super) const KEYSPACE: &str = "bench";

/// A fjall database with one keyspace.
pub struct FjallEngine {
    db: Database,
    ks: Keyspace,
}

impl FjallEngine {
    /// Open `dir` with the shared setup.
    pub fn open(dir: &Path, setup: &Setup) -> EngineResult<Self> {
        let db = Database::builder(dir).cache_size(setup.cache_bytes as u64).open()?;
        let options = keyspace_options(setup)?;
        let ks = db.keyspace(KEYSPACE, || options)?;
        Ok(FjallEngine { db, ks })
    }
}

/// The keyspace's options for the shared setup (memtable, block and table sizes, bits per
/// key, level ratio); the rest fjall's defaults.
pub(super) fn keyspace_options(setup: &Setup) -> EngineResult<KeyspaceCreateOptions> {
    let bits = setup.bits_per_key as f32;
    let block = u32::try_from(setup.block_size)?;
    let file = setup.target_file_size;
    let ratio = setup.size_ratio as f32;
    Ok(KeyspaceCreateOptions::default()
        .max_memtable_size(setup.write_buffer_size as u64)
        .data_block_size_policy(BlockSizePolicy::all(block))
        .filter_policy(FilterPolicy::all(FilterPolicyEntry::Bloom(BloomConstructionPolicy::BitsPerKey(bits))))
        .compaction_strategy(Arc::new(
            Leveled::default().with_table_target_size(file).with_level_ratio_policy(vec![ratio]),
        )))
}

/// Rotate `ks`'s memtable, wait for its flush, then until `db` has had no flush or compaction
/// running for a while: fjall has no "wait for compactions" (compactions are scheduled after
/// each flush).
pub(super) fn settle(db: &Database, ks: &Keyspace) -> EngineResult<()> {
    ks.rotate_memtable_and_wait()?;
    let mut idle_polls = 0;
    while idle_polls < 20 {
        std::thread::sleep(Duration::from_millis(25));
        if db.outstanding_flushes() == 0 && db.active_compactions() == 0 {
            idle_polls += 1;
        } else {
            idle_polls = 0;
        }
    }
    Ok(())
}

impl Engine for FjallEngine {
    fn variant(&self) -> super::Variant {
        super::Variant::Fjall
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        Ok(self.ks.insert(key, value)?)
    }

    fn get(&self, key: &[u8]) -> EngineResult<bool> {
        Ok(self.ks.get(key)?.is_some())
    }

    fn multi_get(&self, _keys: &[Vec<u8>]) -> EngineResult<Option<usize>> {
        // fjall 3.1 has no batched get.
        Ok(None)
    }

    fn scan(&self, from: &[u8], len: usize) -> EngineResult<usize> {
        let mut seen = 0;
        for guard in self.ks.range(from.to_vec()..).take(len) {
            guard.into_inner()?;
            seen += 1;
        }
        Ok(seen)
    }

    fn settle(&self) -> EngineResult<()> {
        settle(&self.db, &self.ks)
    }

    fn counters(&self) -> ReadCounters {
        let m = self.ks.metrics();
        ReadCounters { blocks: m.block_load_io_count() as u64, bytes: m.block_io() }
    }

    fn shape(&self) -> EngineResult<TreeShape> {
        let version = self.ks.tree.current_version();
        let mut files_per_level: Vec<usize> = version.iter_levels().map(|l| l.table_count()).collect();
        while files_per_level.last() == Some(&0) {
            files_per_level.pop();
        }
        Ok(TreeShape { files_per_level, filter_bytes: self.ks.tree.filter_size(), index_bytes: None })
    }

    fn write_counters(&self) -> WriteCounters {
        // fjall counts no bytes written and no stall time; its L0 and queues are visible.
        WriteCounters {
            l0_files: Some(self.ks.l0_table_count() as u64),
            detail: vec![
                ("sealed_memtables".into(), self.ks.sealed_memtable_count() as u64),
                ("outstanding_flushes".into(), self.db.outstanding_flushes() as u64),
                ("active_compactions".into(), self.db.active_compactions() as u64),
                ("compactions_completed".into(), self.db.compactions_completed() as u64),
            ],
            ..WriteCounters::default()
        }
    }

    fn close(self: Box<Self>) -> EngineResult<()> {
        self.db.persist(fjall::PersistMode::Buffer)?;
        drop(self);
        Ok(())
    }

    fn read(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.ks.get(key)?.map(|v| v.to_vec()))
    }
}
