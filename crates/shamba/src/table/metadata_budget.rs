//! One limit on the index and filter bytes every table reader of a database pins.
//!
//! A reader pins its index and filter blocks when it opens (`reader.rs`): lookups then read
//! no metadata from the cache or the device. Without a limit that memory grows with the
//! number of tables, whatever the user set. With one, a reader first reserves its
//! metadata's size here; when the reservation does not fit, the reader keeps its index and
//! filter blocks in the block cache instead (RocksDB's `cache_index_and_filter_blocks`, for
//! that table alone), at the priorities `meta_blocks.rs` gives them, so the block cache's
//! capacity bounds them. The reservation is returned when the reader is dropped (its table
//! was compacted away, or the database closed).
//!
//! First come, first pinned: the tables open when the database opens (and the tables
//! flushes and compactions write, as they are installed) take the room in that order. A
//! reader never moves between pinned and cached after it opens, so a lookup never finds
//! its blocks gone.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// The limit and what the open readers hold under it.
#[derive(Debug)]
pub(crate) struct MetadataBudget {
    limit: u64,
    reserved: AtomicU64,
    /// Readers that found no room and keep their metadata in the block cache.
    cached_readers: AtomicU64,
}

/// Room held by one reader; returned on drop.
#[derive(Debug)]
pub(crate) struct Reservation {
    budget: Arc<MetadataBudget>,
    bytes: u64,
}

/// Where a reader keeps its index and filter blocks.
#[derive(Debug)]
pub(crate) enum Placement {
    /// Pinned; the room is held until the reader drops.
    Pinned(Reservation),
    /// In the block cache, for want of room under the limit (counted while the reader lives).
    Spilled(#[expect(dead_code, reason = "held for its drop, which uncounts the reader")] CachedReader),
    /// In the block cache, as `Options::cache_index_and_filter_blocks` asks of every table.
    Cached,
}

/// A reader counted among those keeping their metadata in the block cache.
#[derive(Debug)]
pub(crate) struct CachedReader {
    budget: Arc<MetadataBudget>,
}

impl MetadataBudget {
    /// A budget of `limit` bytes (`u64::MAX`: no limit).
    pub(crate) fn new(limit: u64) -> Arc<MetadataBudget> {
        Arc::new(MetadataBudget { limit, reserved: AtomicU64::new(0), cached_readers: AtomicU64::new(0) })
    }

    /// The limit in bytes.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes reserved by the pinning readers.
    #[cfg(test)]
    pub(crate) fn reserved(&self) -> u64 {
        self.reserved.load(Relaxed)
    }

    /// Readers keeping their metadata in the block cache for want of room.
    pub(crate) fn cached_readers(&self) -> u64 {
        self.cached_readers.load(Relaxed)
    }

    /// Where a reader whose metadata takes `bytes` keeps it: pinned if the room is free
    /// (taken at once: two readers opening together cannot both take the last room).
    pub(crate) fn place(self: &Arc<Self>, bytes: u64) -> Placement {
        let taken = self
            .reserved
            .fetch_update(Relaxed, Relaxed, |held| held.checked_add(bytes).filter(|&after| after <= self.limit));
        match taken {
            Ok(_) => Placement::Pinned(Reservation { budget: self.clone(), bytes }),
            Err(_) => {
                self.cached_readers.fetch_add(1, Relaxed);
                Placement::Spilled(CachedReader { budget: self.clone() })
            }
        }
    }
}

impl Reservation {
    /// Hold `bytes` instead: the reader's pinned bytes once open, which its properties
    /// estimated (the index blocks' fences are known only then). Past the limit by at most
    /// the last placed reader's fences: every reader placed later sees the settled sum.
    pub(crate) fn settle(&mut self, bytes: u64) {
        if bytes >= self.bytes {
            self.budget.reserved.fetch_add(bytes - self.bytes, Relaxed);
        } else {
            self.budget.reserved.fetch_sub(self.bytes - bytes, Relaxed);
        }
        self.bytes = bytes;
    }
}

impl Placement {
    /// Whether the reader pins its metadata.
    pub(crate) fn pins(&self) -> bool {
        matches!(self, Placement::Pinned(_))
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.reserved.fetch_sub(self.bytes, Relaxed);
    }
}

impl Drop for CachedReader {
    fn drop(&mut self) {
        self.budget.cached_readers.fetch_sub(1, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_pin_until_the_limit_then_cache_and_give_the_room_back() {
        let budget = MetadataBudget::new(100);
        let a = budget.place(60);
        let b = budget.place(50);
        let c = budget.place(40);
        assert!(a.pins() && !b.pins() && c.pins());
        assert_eq!((budget.reserved(), budget.cached_readers()), (100, 1));
        drop(a);
        assert_eq!(budget.reserved(), 40);
        let d = budget.place(60);
        assert!(d.pins());
        let Placement::Pinned(mut e) = budget.place(0) else { panic!("no bytes always fit") };
        e.settle(7);
        assert_eq!(budget.reserved(), 107, "settled past the limit by the fences");
        assert!(!budget.place(1).pins());
        e.settle(3);
        assert_eq!(budget.reserved(), 103);
        drop((b, c, d, e));
        assert_eq!((budget.reserved(), budget.cached_readers()), (0, 0));
    }

    #[test]
    fn no_reservation_overflows_the_counter() {
        let budget = MetadataBudget::new(u64::MAX);
        let a = budget.place(u64::MAX - 1);
        assert!(a.pins());
        assert!(!budget.place(2).pins(), "u64::MAX - 1 + 2 overflows: no room");
    }
}
