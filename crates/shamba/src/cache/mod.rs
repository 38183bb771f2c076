//! The block cache: byte-charged, sharded, strict capacity, two priority pools.
//!
//! Blocks are cached uncompressed, keyed by (file number, block offset). Each block is
//! charged its length plus a fixed per-entry overhead, and the sum of charges never exceeds
//! the capacity. The capacity is split over up to 16 shards chosen by a hash of the key,
//! each with its own lock and its own two pools (see `shard.rs` for the eviction rules):
//! a high-priority pool for index and filter blocks limited to `high_priority_ratio` of the
//! capacity, and a low-priority pool for the rest. Blocks evicted from the high pool get a
//! second round at the head of the low pool. With a first-module share
//! (`Options::first_module_cache_ratio`), first filter modules have a third pool of their
//! own, up to that share of the capacity, which the other pools' traffic never evicts; the
//! high-priority ratio then applies to the capacity left after that share. Without one they
//! enter the high pool.
//!
//! Counters per block kind (hits, misses, bytes inserted, bytes and blocks resident) are kept under the
//! shard locks and summed on demand; all byte figures are charged bytes.

mod lru;
mod shard;

use crate::io::BlockKind;
use parking_lot::Mutex;
use shard::Shard;
use std::sync::Arc;

/// Which pool a block enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Priority {
    /// First filter modules: their own pool when the cache has a first-module share, the
    /// high pool otherwise.
    First,
    /// Index and filter blocks (first filter modules without a pool of their own).
    High,
    /// Data blocks, later filter modules.
    Low,
}

/// Cache key: (file number, block offset).
pub(crate) type BlockKey = (u64, u64);

/// Counters of one block kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindCounters {
    /// Lookups that found the block.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Bytes inserted.
    pub bytes_inserted: u64,
    /// Bytes resident now.
    pub bytes_resident: u64,
    /// Blocks resident now (RocksDB's block-cache entry statistics: count, bytes, and with
    /// the capacity, the share of the cache each kind holds).
    pub entries_resident: u64,
}

/// Most shards a cache is split into.
const MAX_SHARDS: usize = 16;

/// Smallest capacity worth a shard of its own: smaller shards would refuse large blocks
/// (a block must fit its shard) and evict by shard rather than by global recency.
const MIN_SHARD_CAPACITY: usize = 512 * 1024;

/// The shards a cache of `capacity` bytes is split into: at most 16, at least 512 KiB each.
fn shards_for(capacity: usize) -> usize {
    let mut shards = MAX_SHARDS;
    while shards > 1 && capacity / shards < MIN_SHARD_CAPACITY {
        shards /= 2;
    }
    shards
}

/// A sharded, byte-charged LRU cache of uncompressed blocks.
pub(crate) struct BlockCache {
    shards: Box<[Mutex<Shard>]>,
    capacity: usize,
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the cache's tests only"))]
    high_capacity: usize,
    first_capacity: usize,
}

impl BlockCache {
    /// A cache of `capacity` bytes, `high_priority_ratio` of them reserved for high-priority
    /// blocks. Small caches get fewer shards (at least 512 KiB each, at most 16 shards).
    /// A ratio outside `0..=1` is clamped (NaN counts as 0).
    pub(crate) fn new(capacity: usize, high_priority_ratio: f64) -> Self {
        Self::with_shards(capacity, high_priority_ratio, shards_for(capacity))
    }

    /// Like [`BlockCache::new`] with an explicit number of shards (rounded up to a power of
    /// two, at least 1), for tests and experiments.
    pub(crate) fn with_shards(capacity: usize, high_priority_ratio: f64, shards: usize) -> Self {
        Self::with_pools(capacity, high_priority_ratio, 0.0, shards)
    }

    /// Like [`BlockCache::new`] with `first_module_ratio` of the capacity a pool for first
    /// filter modules (none at 0; a ratio outside `0..=1` is clamped, NaN counts as 0).
    pub(crate) fn with_first_pool(capacity: usize, high_priority_ratio: f64, first_module_ratio: f64) -> Self {
        Self::with_pools(capacity, high_priority_ratio, first_module_ratio, shards_for(capacity))
    }

    /// A cache of `shards` shards (rounded up to a power of two, at least 1) with its pools'
    /// shares: `first_module_ratio` of each shard for first modules, `high_priority_ratio`
    /// of the rest for high-priority blocks.
    pub(crate) fn with_pools(
        capacity: usize,
        high_priority_ratio: f64,
        first_module_ratio: f64,
        shards: usize,
    ) -> Self {
        let n = shards.clamp(1, 1 << 16).next_power_of_two();
        let share = |r: f64| if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
        let (ratio, first_ratio) = (share(high_priority_ratio), share(first_module_ratio));
        let (mut high_capacity, mut first_capacity) = (0, 0);
        let shards: Box<[Mutex<Shard>]> = (0..n)
            .map(|i| {
                // Spread the remainder so the shard capacities add up to `capacity` exactly.
                let cap = capacity / n + usize::from(i < capacity % n);
                let first = (cap as f64 * first_ratio) as usize;
                // With no first-module share this is `cap * ratio`, as before the third pool.
                let high = ((cap - first) as f64 * ratio) as usize;
                high_capacity += high;
                first_capacity += first;
                Mutex::new(Shard::with_first_pool(cap, high, first))
            })
            .collect();
        BlockCache { shards, capacity, high_capacity, first_capacity }
    }

    /// The block, if resident (counts a hit or a miss for `kind`).
    pub(crate) fn get(&self, key: BlockKey, kind: BlockKind) -> Option<Arc<[u8]>> {
        self.shard(key).lock().get(key, kind)
    }

    /// The block, if resident, counting a hit and refreshing its recency like
    /// [`get`](Self::get); if absent, nothing is counted. For a lookup that takes a block
    /// it will use if resident and would otherwise fetch later through `get` (which then
    /// counts the miss): a lookup's prefetch pass takes each resident first filter part
    /// this way and its probe uses it, one cache access per part either way.
    pub(crate) fn get_resident(&self, key: BlockKey, kind: BlockKind) -> Option<Arc<[u8]>> {
        self.shard(key).lock().get_resident(key, kind)
    }

    /// Ask the CPU to load the head of `key`'s block if the cache holds it, without
    /// counting anything or refreshing its recency: a batch asks this of all its blocks
    /// before it takes them, so their cold lines arrive together rather than one per take.
    pub(crate) fn prefetch(&self, key: BlockKey) {
        self.shard(key).lock().prefetch(key)
    }

    /// The block, if resident, without counting a hit or a miss and without refreshing its
    /// recency: for looking ahead (prefetching a resident filter) without disturbing the
    /// statistics or the eviction order the lookups themselves produce.
    pub(crate) fn peek(&self, key: BlockKey) -> Option<Arc<[u8]>> {
        self.shard(key).lock().peek(key)
    }

    /// Insert a block, evicting as needed; a block larger than its shard is not kept.
    pub(crate) fn insert(&self, key: BlockKey, block: Arc<[u8]>, kind: BlockKind, priority: Priority) {
        self.shard(key).lock().insert(key, block, kind, priority)
    }

    /// Drop every block of a file.
    #[cfg(test)]
    pub(crate) fn erase_file(&self, file: u64) {
        self.erase_files(&[file]);
    }

    /// Drop every block of these files (after they are deleted). A shard's blocks are not
    /// indexed by file, so each shard is scanned under its lock: once for all the files,
    /// not once per file, which kept readers of the shard waiting for every deleted table.
    pub(crate) fn erase_files(&self, files: &[u64]) {
        if files.is_empty() {
            return;
        }
        let mut files = files.to_vec();
        files.sort_unstable();
        for shard in self.shards.iter() {
            shard.lock().erase_files(&files);
        }
    }

    /// Bytes resident.
    pub(crate) fn usage(&self) -> usize {
        self.shards.iter().map(|s| s.lock().usage()).sum()
    }

    /// Bytes resident in the first-module pools.
    pub(crate) fn first_pool_usage(&self) -> usize {
        self.shards.iter().map(|s| s.lock().first_usage()).sum()
    }

    /// Bytes the first-module pools may hold in total (0: first modules share the high pool).
    pub(crate) fn first_pool_capacity(&self) -> usize {
        self.first_capacity
    }

    /// Bytes resident in the high-priority pools.
    #[cfg(test)]
    pub(crate) fn high_pool_usage(&self) -> usize {
        self.shards.iter().map(|s| s.lock().high_usage()).sum()
    }

    /// Capacity in bytes.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes the high-priority pools may hold in total.
    #[cfg(test)]
    pub(crate) fn high_pool_capacity(&self) -> usize {
        self.high_capacity
    }

    /// Number of shards.
    #[cfg(test)]
    pub(crate) fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// The pool a block is in, without counting a lookup or refreshing its recency (for
    /// inspection and tests).
    #[cfg(test)]
    pub(crate) fn pool_of(&self, key: BlockKey) -> Option<Priority> {
        self.shard(key).lock().pool_of(key)
    }

    /// Counters per kind, indexed like [`BlockKind::ALL`].
    pub(crate) fn counters(&self) -> [KindCounters; 4] {
        let mut total = [KindCounters::default(); 4];
        for shard in self.shards.iter() {
            for (t, c) in total.iter_mut().zip(shard.lock().counters()) {
                t.hits += c.hits;
                t.misses += c.misses;
                t.bytes_inserted += c.bytes_inserted;
                t.bytes_resident += c.bytes_resident;
                t.entries_resident += c.entries_resident;
            }
        }
        total
    }

    fn shard(&self, key: BlockKey) -> &Mutex<Shard> {
        // Multiplicative hashing, taking the top bits: they depend on every input bit, so
        // block offsets that are multiples of a power of two still spread over all shards.
        let h = key.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key.1.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        let bits = self.shards.len().trailing_zeros();
        let index = if bits == 0 { 0 } else { (h >> (64 - bits)) as usize };
        &self.shards[index]
    }
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("capacity", &self.capacity)
            .field("usage", &self.usage())
            .field("shards", &self.shards.len())
            .finish()
    }
}

#[cfg(test)]
mod first_pool_tests;
#[cfg(test)]
mod tests;
