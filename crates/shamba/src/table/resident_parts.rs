//! A table's filter parts held in memory by the filter manager's decision, not for the
//! table's whole life: the slots of a table opened with pooled filters
//! (`TableContext::pool_filters`, set by `Options::filter_memory_budget` and by the Elastic
//! policy).
//!
//! A pinned part is read when the table opens and held until it closes; a pooled part is
//! held only between the manager's [`TableReader::load_part`] (one counted filter-block
//! read per partition) and [`ResidentParts::release`], so the manager can keep the filter
//! bytes of every table under one budget. A lookup reaches the slots through its probe
//! plan and probes a loaded part as it would a pinned one; a part not loaded is fetched
//! (or skipped: the plan says how many parts to probe).
//!
//! Each slot is a read-write lock: a probe holds the read side while it probes, so a
//! release cannot free the bytes under it. That is an atomic read-modify-write per probed
//! part, paid only with pooled filters: the default configuration pins and never gets here.

#![deny(clippy::indexing_slicing)]

use super::meta_blocks::MetaBlock;
use super::pinned_part::PinnedPart;
use super::reader::TableReader;
use crate::error::Result;
use crate::io::BlockKind;
use parking_lot::{RwLock, RwLockReadGuard};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One slot per (partition, part).
pub(crate) struct ResidentParts {
    /// Filter parts per partition.
    parts: usize,
    slots: Box<[RwLock<Option<PinnedPart>>]>,
    /// Bit `d`: part `d` is loaded in every partition (written by the manager under its
    /// lock; lookups and the manager read it without one).
    loaded: AtomicU64,
}

/// Most parts per partition the slots track (the loaded mask's bits).
const MAX_PARTS: usize = 64;

impl ResidentParts {
    /// Slots for `partitions` partitions of `parts` parts, none loaded.
    pub(crate) fn empty(partitions: usize, parts: usize) -> ResidentParts {
        let parts = parts.min(MAX_PARTS);
        ResidentParts {
            parts,
            slots: (0..partitions * parts).map(|_| RwLock::new(None)).collect(),
            loaded: AtomicU64::new(0),
        }
    }

    /// Whether part `d` is loaded (in every partition).
    #[inline]
    pub(crate) fn is_loaded(&self, d: usize) -> bool {
        d < MAX_PARTS && self.loaded.load(Relaxed) & (1 << d) != 0
    }

    /// The first part not loaded, if any.
    pub(crate) fn first_missing(&self) -> Option<usize> {
        let d = self.loaded.load(Relaxed).trailing_ones() as usize;
        (d < self.parts).then_some(d)
    }

    /// The loaded part `d` of partition `p`, held for reading while the guard lives.
    #[inline]
    pub(super) fn get(&self, p: usize, d: usize) -> Option<RwLockReadGuard<'_, Option<PinnedPart>>> {
        if d >= self.parts {
            return None;
        }
        let slot = self.slots.get(p * self.parts + d)?;
        let guard = slot.read();
        guard.is_some().then_some(guard)
    }

    /// Drop part `d` of every partition; returns the bytes freed (0 if it was not loaded).
    pub(crate) fn release(&self, d: usize) -> u64 {
        if !self.is_loaded(d) {
            return 0;
        }
        self.loaded.fetch_and(!(1 << d), Relaxed);
        let mut freed = 0;
        for p in 0..self.partitions() {
            if let Some(slot) = self.slots.get(p * self.parts + d) {
                if let Some(part) = slot.write().take() {
                    freed += part.bytes().len() as u64;
                }
            }
        }
        freed
    }

    /// Drop every part; returns the bytes freed.
    pub(crate) fn release_all(&self) -> u64 {
        (0..self.parts).map(|d| self.release(d)).sum()
    }

    fn partitions(&self) -> usize {
        self.slots.len().checked_div(self.parts).unwrap_or(0)
    }
}

impl std::fmt::Debug for ResidentParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResidentParts").field("parts", &self.parts).field("loaded", &self.loaded).finish()
    }
}

impl TableReader {
    /// Empty slots for this table's filter parts.
    pub(crate) fn empty_resident_parts(&self) -> ResidentParts {
        ResidentParts::empty(self.partitions.len(), self.filter_part_count())
    }

    /// Read part `d` of every partition from the file (one counted filter-block read each,
    /// not through the block cache) into `slots`; returns the bytes now held. A part
    /// already loaded costs nothing and returns 0.
    ///
    /// # Errors
    ///
    /// A failed read or a part that does not parse (`Error::Corruption`); nothing is kept.
    pub(crate) fn load_part(&self, slots: &ResidentParts, d: usize) -> Result<u64> {
        if slots.is_loaded(d) || d >= slots.parts {
            return Ok(0);
        }
        let mut read = Vec::with_capacity(self.partitions.len());
        for partition in &self.partitions {
            let Some(meta) = partition.filter.get(d) else {
                read.push(None);
                continue;
            };
            let handle = meta.handle();
            let bytes = match meta {
                MetaBlock::Pinned { pinned, .. } => pinned.bytes().clone(),
                MetaBlock::Cached(_) => self.file.read_block(handle, BlockKind::Filter, true)?,
            };
            let part = PinnedPart::new(bytes, self.ctx.digest_version)
                .map_err(|e| e.in_file(self.path(), Some(handle.offset)))?;
            read.push(Some(part));
        }
        let mut held = 0;
        for (p, part) in read.into_iter().enumerate() {
            if let (Some(part), Some(slot)) = (part, slots.slots.get(p * slots.parts + d)) {
                held += part.bytes().len() as u64;
                *slot.write() = Some(part);
            }
        }
        slots.loaded.fetch_or(1 << d, Relaxed);
        Ok(held)
    }
}
