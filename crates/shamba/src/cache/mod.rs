//! The block cache: byte-charged, sharded, strict capacity, two priority pools.

use crate::io::BlockKind;
use std::sync::Arc;

/// Which pool a block enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// Index and filter blocks, first filter modules.
    High,
    /// Data blocks, later filter modules.
    Low,
}

/// Cache key: (file number, block offset).
pub type BlockKey = (u64, u64);

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
}

/// A sharded, byte-charged LRU cache of uncompressed blocks.
pub struct BlockCache {
    _todo: (),
}

impl BlockCache {
    /// A cache of `capacity` bytes, `high_priority_ratio` of them reserved for high-priority
    /// blocks.
    pub fn new(capacity: usize, high_priority_ratio: f64) -> Self {
        let _ = (capacity, high_priority_ratio);
        todo!()
    }
    /// The block, if resident (counts a hit or a miss for `kind`).
    pub fn get(&self, key: BlockKey, kind: BlockKind) -> Option<Arc<[u8]>> {
        let _ = (key, kind);
        todo!()
    }
    /// Insert a block, evicting as needed; a block larger than its pool is not kept.
    pub fn insert(&self, key: BlockKey, block: Arc<[u8]>, kind: BlockKind, priority: Priority) {
        let _ = (key, block, kind, priority);
        todo!()
    }
    /// Drop every block of a file (after the file is deleted).
    pub fn erase_file(&self, file: u64) {
        let _ = file;
        todo!()
    }
    /// Bytes resident.
    pub fn usage(&self) -> usize {
        todo!()
    }
    /// Capacity in bytes.
    pub fn capacity(&self) -> usize {
        todo!()
    }
    /// Counters per kind, indexed like [`BlockKind::ALL`].
    pub fn counters(&self) -> [KindCounters; 4] {
        todo!()
    }
}
