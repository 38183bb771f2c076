//! One shard of the block cache: a map from block key to slot and two or three LRU pools.
//!
//! Rules (the whole policy lives here, so research policies can replace it in one place):
//! - Capacity is strict: before an insert, least recently used blocks are evicted until the
//!   new block fits; the low pool's tail goes first, the high pool's tail only when the low
//!   pool is empty, the first-module pool's only when both are. A block whose charge exceeds the shard's capacity is not kept.
//! - The high pool holds at most `high_capacity` bytes. When it overflows, its least
//!   recently used block is not dropped but moved to the head of the low pool: a second
//!   round, so an index or filter block is lost only if it stays cold for a whole low-pool
//!   turnover as well.
//! - A hit moves a block to the head of the pool its priority names: a demoted
//!   high-priority block that is used again returns to the high pool.
//! - First filter modules have a pool of their own when the shard has a first-module
//!   share (`first_capacity > 0`; otherwise they enter the high pool, exactly as before the
//!   third pool existed). It holds at most `first_capacity` bytes; its overflow gets a
//!   second round at the head of the high pool (and from there the low one), and its
//!   blocks are evicted only when both other pools are empty, so a scan or a burst of
//!   index blocks cannot flush them. Its space is not reserved: bytes it does not hold
//!   serve the other pools, and the capacity stays one strict bound for all three.

use super::lru::{LruList, LruSlab};
use super::{BlockKey, KindCounters, Priority};
use crate::io::BlockKind;
use crate::number_map::NumberMap;
use std::sync::Arc;

/// Bytes charged per entry on top of the block itself: an estimate of the slot, the hash
/// map entry and the `Arc` header, so that many tiny blocks cannot hide their overhead.
pub(super) const ENTRY_OVERHEAD: usize = 64;

/// A resident block.
struct Entry {
    key: BlockKey,
    block: Arc<[u8]>,
    charge: usize,
    kind: BlockKind,
    /// The priority it was inserted with.
    priority: Priority,
    /// The pool it is in now (high-priority blocks are demoted to the low pool).
    pool: Priority,
}

/// One shard; the owner wraps it in a mutex.
pub(super) struct Shard {
    map: NumberMap<BlockKey, u32>,
    slab: LruSlab<Entry>,
    first: LruList,
    high: LruList,
    low: LruList,
    first_bytes: usize,
    high_bytes: usize,
    low_bytes: usize,
    capacity: usize,
    first_capacity: usize,
    high_capacity: usize,
    counters: [KindCounters; 4],
}

impl Shard {
    /// A shard of `capacity` bytes, at most `high_capacity` of them in the high pool and no
    /// pool for first modules.
    #[cfg(test)]
    pub(super) fn new(capacity: usize, high_capacity: usize) -> Self {
        Self::with_first_pool(capacity, high_capacity, 0)
    }

    /// A shard of `capacity` bytes, at most `high_capacity` of them in the high pool and at
    /// most `first_capacity` in the first-module pool (none if 0).
    pub(super) fn with_first_pool(capacity: usize, high_capacity: usize, first_capacity: usize) -> Self {
        Shard {
            map: NumberMap::default(),
            slab: LruSlab::default(),
            first: LruList::default(),
            high: LruList::default(),
            low: LruList::default(),
            first_bytes: 0,
            high_bytes: 0,
            low_bytes: 0,
            capacity,
            first_capacity: first_capacity.min(capacity),
            high_capacity: high_capacity.min(capacity),
            counters: [KindCounters::default(); 4],
        }
    }

    /// The pool a block of `priority` belongs in: first modules go to the high pool when
    /// the shard has no pool for them.
    fn home(&self, priority: Priority) -> Priority {
        match priority {
            Priority::First if self.first_capacity == 0 => Priority::High,
            p => p,
        }
    }

    /// The block, moved to the head of its pool; counts a hit or miss for `kind`.
    pub(super) fn get(&mut self, key: BlockKey, kind: BlockKind) -> Option<Arc<[u8]>> {
        let got = self.get_resident(key, kind);
        if got.is_none() {
            self.counters[kind as usize].misses += 1;
        }
        got
    }

    /// [`get`](Self::get) without counting a miss.
    pub(super) fn get_resident(&mut self, key: BlockKey, kind: BlockKind) -> Option<Arc<[u8]>> {
        let &slot = self.map.get(&key)?;
        self.counters[kind as usize].hits += 1;
        let (block, priority, pool) = match self.slab.get(slot) {
            Some(e) => (e.block.clone(), e.priority, e.pool),
            None => return None,
        };
        self.unlink(slot, pool);
        self.link(slot, self.home(priority));
        self.rebalance();
        Some(block)
    }

    /// Ask the CPU to load the head of `key`'s block if it is resident; no counters, no
    /// change of recency. The block's reference count lies beside its first byte, and
    /// taking the block (`get`) increments it: an atomic on a line cold in the CPU's
    /// caches, which no other miss overlaps.
    pub(super) fn prefetch(&self, key: BlockKey) {
        if let Some(first) = self.map.get(&key).and_then(|&slot| self.slab.get(slot)).and_then(|e| e.block.first()) {
            crate::filter::prefetch_ref(first);
        }
    }

    /// The block if resident; no counters, no change of recency.
    pub(super) fn peek(&self, key: BlockKey) -> Option<Arc<[u8]>> {
        self.map.get(&key).and_then(|&slot| self.slab.get(slot)).map(|e| e.block.clone())
    }

    /// Insert (or replace) a block; see the module doc for what gets evicted.
    pub(super) fn insert(&mut self, key: BlockKey, block: Arc<[u8]>, kind: BlockKind, priority: Priority) {
        if let Some(old) = self.map.remove(&key) {
            self.remove_slot(old);
        }
        let charge = block.len().saturating_add(ENTRY_OVERHEAD);
        if charge > self.capacity {
            return;
        }
        while self.usage() + charge > self.capacity {
            let Some(victim) = self.low.tail().or_else(|| self.high.tail()).or_else(|| self.first.tail()) else {
                break;
            };
            self.evict(victim);
        }
        // A shard full to its last slot index caches nothing more, as a block over the
        // capacity is not cached.
        let pool = self.home(priority);
        let Some(slot) = self.slab.alloc(Entry { key, block, charge, kind, priority, pool }) else {
            return;
        };
        let counters = &mut self.counters[kind as usize];
        counters.bytes_inserted += charge as u64;
        counters.bytes_resident += charge as u64;
        counters.entries_resident += 1;
        self.map.insert(key, slot);
        self.link(slot, pool);
        self.rebalance();
    }

    /// Drop every block of the `files` (sorted).
    pub(super) fn erase_files(&mut self, files: &[u64]) {
        let doomed: Vec<u32> =
            self.map.iter().filter(|(k, _)| files.binary_search(&k.0).is_ok()).map(|(_, &slot)| slot).collect();
        for slot in doomed {
            self.evict(slot);
        }
    }

    /// Bytes charged for resident blocks.
    pub(super) fn usage(&self) -> usize {
        self.first_bytes + self.high_bytes + self.low_bytes
    }

    /// Bytes charged for blocks in the first-module pool.
    pub(super) fn first_usage(&self) -> usize {
        self.first_bytes
    }

    /// Bytes charged for blocks in the high pool.
    #[cfg(test)]
    pub(super) fn high_usage(&self) -> usize {
        self.high_bytes
    }

    /// The pool a resident block is in, without touching counters or recency.
    #[cfg(test)]
    pub(super) fn pool_of(&self, key: BlockKey) -> Option<Priority> {
        self.map.get(&key).and_then(|&slot| self.slab.get(slot)).map(|e| e.pool)
    }

    /// Counters per kind, indexed like [`BlockKind::ALL`].
    pub(super) fn counters(&self) -> [KindCounters; 4] {
        self.counters
    }

    /// Move first-pool tails to the high pool and high-pool tails to the low pool until
    /// both are within their limits.
    fn rebalance(&mut self) {
        while self.first_bytes > self.first_capacity {
            let Some(slot) = self.first.tail() else { break };
            self.unlink(slot, Priority::First);
            self.link(slot, Priority::High);
        }
        while self.high_bytes > self.high_capacity {
            let Some(slot) = self.high.tail() else { break };
            self.unlink(slot, Priority::High);
            self.link(slot, Priority::Low);
        }
    }

    /// Remove a resident block from the map, its pool and the slab.
    fn evict(&mut self, slot: u32) {
        if let Some(key) = self.slab.get(slot).map(|e| e.key) {
            self.map.remove(&key);
        }
        self.remove_slot(slot);
    }

    /// Unlink and free a slot whose key is already out of the map.
    fn remove_slot(&mut self, slot: u32) {
        let Some(pool) = self.slab.get(slot).map(|e| e.pool) else {
            return;
        };
        self.unlink(slot, pool);
        if let Some(e) = self.slab.release(slot) {
            let counters = &mut self.counters[e.kind as usize];
            counters.bytes_resident -= e.charge as u64;
            counters.entries_resident -= 1;
        }
    }

    /// Put an unlinked slot at the head of `pool`, keeping the byte counts.
    fn link(&mut self, slot: u32, pool: Priority) {
        let Some(e) = self.slab.get_mut(slot) else {
            return;
        };
        e.pool = pool;
        let charge = e.charge;
        match pool {
            Priority::First => {
                self.slab.push_front(&mut self.first, slot);
                self.first_bytes += charge;
            }
            Priority::High => {
                self.slab.push_front(&mut self.high, slot);
                self.high_bytes += charge;
            }
            Priority::Low => {
                self.slab.push_front(&mut self.low, slot);
                self.low_bytes += charge;
            }
        }
    }

    /// Take a slot off `pool`, keeping the byte counts.
    fn unlink(&mut self, slot: u32, pool: Priority) {
        let Some(charge) = self.slab.get(slot).map(|e| e.charge) else {
            return;
        };
        match pool {
            Priority::First => {
                self.slab.unlink(&mut self.first, slot);
                self.first_bytes -= charge;
            }
            Priority::High => {
                self.slab.unlink(&mut self.high, slot);
                self.high_bytes -= charge;
            }
            Priority::Low => {
                self.slab.unlink(&mut self.low, slot);
                self.low_bytes -= charge;
            }
        }
    }
}

#[cfg(test)]
impl Shard {
    /// Keys of a pool from most to least recently used.
    pub(super) fn pool_order(&self, pool: Priority) -> Vec<BlockKey> {
        let list = match pool {
            Priority::First => &self.first,
            Priority::High => &self.high,
            Priority::Low => &self.low,
        };
        self.slab.order(list).into_iter().filter_map(|s| self.slab.get(s).map(|e| e.key)).collect()
    }

    /// Check the byte counts against the lists.
    pub(super) fn check_invariants(&self) {
        let sum = |pool| {
            self.pool_order(pool)
                .iter()
                .map(|k| self.map.get(k).and_then(|&s| self.slab.get(s)).map_or(0, |e| e.charge))
                .sum::<usize>()
        };
        assert_eq!(sum(Priority::First), self.first_bytes);
        assert_eq!(sum(Priority::High), self.high_bytes);
        assert_eq!(sum(Priority::Low), self.low_bytes);
        assert_eq!(self.first.len() + self.high.len() + self.low.len(), self.map.len());
        assert!(self.usage() <= self.capacity, "usage {} > capacity {}", self.usage(), self.capacity);
        assert!(self.first_bytes <= self.first_capacity);
        assert!(self.high_bytes <= self.high_capacity);
        let resident: u64 = self.counters.iter().map(|c| c.bytes_resident).sum();
        assert_eq!(resident, self.usage() as u64);
        let entries: u64 = self.counters.iter().map(|c| c.entries_resident).sum();
        assert_eq!(entries, self.map.len() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block whose charge is exactly `charge` bytes.
    fn block(charge: usize) -> Arc<[u8]> {
        vec![7u8; charge - ENTRY_OVERHEAD].into()
    }

    const C: usize = 1000;

    #[test]
    fn high_pool_overflow_moves_the_coldest_high_block_to_the_low_head() {
        // Room for four blocks, two of them high priority.
        let mut s = Shard::new(4 * C, 2 * C);
        s.insert((1, 0), block(C), BlockKind::Index, Priority::High);
        s.insert((1, 1), block(C), BlockKind::Filter, Priority::High);
        s.insert((2, 0), block(C), BlockKind::Data, Priority::Low);
        s.insert((1, 2), block(C), BlockKind::Filter, Priority::High);
        assert_eq!(s.pool_order(Priority::High), vec![(1, 2), (1, 1)]);
        // Second round: the demoted block enters the low pool at its head, ahead of (2, 0).
        assert_eq!(s.pool_order(Priority::Low), vec![(1, 0), (2, 0)]);
        assert_eq!(s.pool_of((1, 0)), Some(Priority::Low));
        s.check_invariants();

        // Two more low blocks: (2, 0) goes first (older in the low pool), then the demoted one.
        s.insert((2, 1), block(C), BlockKind::Data, Priority::Low);
        assert_eq!(s.pool_of((1, 0)), Some(Priority::Low));
        assert_eq!(s.pool_of((2, 0)), None);
        s.insert((2, 2), block(C), BlockKind::Data, Priority::Low);
        assert_eq!(s.pool_of((1, 0)), None);
        assert_eq!(s.pool_order(Priority::High), vec![(1, 2), (1, 1)]);
        s.check_invariants();
    }

    #[test]
    fn low_priority_pressure_never_evicts_high_blocks_while_low_blocks_remain() {
        let mut s = Shard::new(4 * C, 2 * C);
        s.insert((1, 0), block(C), BlockKind::Index, Priority::High);
        s.insert((1, 1), block(C), BlockKind::Filter, Priority::High);
        for off in 0..50 {
            s.insert((2, off), block(C), BlockKind::Data, Priority::Low);
            s.check_invariants();
        }
        assert_eq!(s.pool_order(Priority::High), vec![(1, 1), (1, 0)]);
        assert_eq!(s.pool_order(Priority::Low), vec![(2, 49), (2, 48)]);
    }

    #[test]
    fn a_hit_on_a_demoted_high_block_returns_it_to_the_high_pool() {
        let mut s = Shard::new(4 * C, 2 * C);
        s.insert((1, 0), block(C), BlockKind::Index, Priority::High);
        s.insert((1, 1), block(C), BlockKind::Index, Priority::High);
        s.insert((1, 2), block(C), BlockKind::Index, Priority::High);
        assert_eq!(s.pool_of((1, 0)), Some(Priority::Low));
        assert!(s.get((1, 0), BlockKind::Index).is_some());
        assert_eq!(s.pool_order(Priority::High), vec![(1, 0), (1, 2)]);
        assert_eq!(s.pool_order(Priority::Low), vec![(1, 1)]);
        s.check_invariants();
    }

    #[test]
    fn a_hit_moves_a_low_block_to_the_head_of_the_low_pool() {
        let mut s = Shard::new(3 * C, 0);
        s.insert((1, 0), block(C), BlockKind::Data, Priority::Low);
        s.insert((1, 1), block(C), BlockKind::Data, Priority::Low);
        s.insert((1, 2), block(C), BlockKind::Data, Priority::Low);
        assert!(s.get((1, 0), BlockKind::Data).is_some());
        s.insert((1, 3), block(C), BlockKind::Data, Priority::Low);
        assert_eq!(s.pool_order(Priority::Low), vec![(1, 3), (1, 0), (1, 2)]);
    }

    #[test]
    fn high_blocks_with_no_high_pool_live_in_the_low_pool() {
        let mut s = Shard::new(2 * C, 0);
        s.insert((1, 0), block(C), BlockKind::Index, Priority::High);
        assert_eq!(s.pool_of((1, 0)), Some(Priority::Low));
        assert_eq!(s.high_usage(), 0);
        s.check_invariants();
    }

    #[test]
    fn with_an_empty_low_pool_high_blocks_are_evicted_outright() {
        let mut s = Shard::new(2 * C, 2 * C);
        s.insert((1, 0), block(C), BlockKind::Index, Priority::High);
        s.insert((1, 1), block(C), BlockKind::Index, Priority::High);
        s.insert((2, 0), block(C), BlockKind::Data, Priority::Low);
        assert_eq!(s.pool_of((1, 0)), None);
        assert_eq!(s.pool_order(Priority::High), vec![(1, 1)]);
        assert_eq!(s.pool_order(Priority::Low), vec![(2, 0)]);
        s.check_invariants();
    }

    #[test]
    fn replacing_a_key_charges_it_once_and_oversized_blocks_are_not_kept() {
        let mut s = Shard::new(3 * C, C);
        s.insert((1, 0), block(C), BlockKind::Data, Priority::Low);
        s.insert((1, 0), block(2 * C), BlockKind::Data, Priority::Low);
        assert_eq!(s.usage(), 2 * C);
        s.insert((1, 1), block(3 * C + 1), BlockKind::Data, Priority::Low);
        assert_eq!(s.pool_of((1, 1)), None);
        assert_eq!(s.usage(), 2 * C, "an oversized insert must not evict anything");
        s.check_invariants();
    }
}
