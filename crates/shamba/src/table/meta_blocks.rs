//! Where a table reader gets its blocks: pinned in the reader, or through the block cache,
//! and at which priority.
//!
//! Priorities in the cache (SHaMBa's "first module at high priority, the rest at low"):
//!
//! | block | kind | pool |
//! |---|---|---|
//! | index, index partition | Index | High |
//! | filter part 0, a whole filter, any unit | Filter | High |
//! | filter module 1.. of a modular filter | Filter | Low |
//! | data | Data | Low |
//!
//! A later module is probed only after the first said maybe, so it is worth less per byte
//! than the first; units are any subset the filter manager enables, so each is treated like
//! a first module. The top-level index of a partitioned table is never in the cache: the
//! reader pins it at open.

#![deny(clippy::indexing_slicing)]

use super::block::Block;
use super::file::{ReadAhead, TableFile};
use super::format::BlockHandle;
use super::index_fences::IndexFences;
use super::pinned_part::PinnedPart;
use super::reader::TableReader;
use crate::cache::Priority;
use crate::error::{Error, Result};
use crate::filter::Role;
use crate::io::BlockKind;
use crate::options::ReadOptions;
use std::borrow::Cow;
use std::sync::Arc;

/// An index block or filter part: fetched through the block cache on every use, or read
/// and checked at open and kept by the reader as a `P` ([`PinnedIndex`] or [`PinnedPart`]).
pub(super) enum MetaBlock<P> {
    /// Fetched through the block cache.
    Cached(BlockHandle),
    /// Pinned in the reader.
    Pinned {
        /// Where the block is in the file.
        handle: BlockHandle,
        /// What the reader keeps of it.
        pinned: P,
    },
}

impl<P> MetaBlock<P> {
    /// Where the block is in the file.
    pub(super) fn handle(&self) -> BlockHandle {
        match self {
            MetaBlock::Cached(handle) | MetaBlock::Pinned { handle, .. } => *handle,
        }
    }

    /// What the reader keeps of a pinned block.
    pub(super) fn pinned(&self) -> Option<&P> {
        match self {
            MetaBlock::Cached(_) => None,
            MetaBlock::Pinned { pinned, .. } => Some(pinned),
        }
    }
}

/// A pinned index block.
pub(super) struct PinnedIndex {
    /// The block, its restart array located once (a lookup borrows it: no reference count
    /// is touched).
    pub(super) block: Block,
    /// Its prefix fences (`None` for an index block without a restart per entry).
    pub(super) fences: Option<IndexFences>,
}

impl PinnedIndex {
    /// Bytes held: the block and its fences.
    pub(super) fn pinned_bytes(&self) -> usize {
        self.block.size() + self.fences.as_ref().map_or(0, |f| f.bytes())
    }
}

/// What a block read from the device does in the block cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CacheFill {
    /// Inserted into the pool of this priority.
    At(Priority),
    /// Not inserted (`ReadOptions::fill_cache` off: a scan that would evict the working set).
    Skip,
}

/// The index and filter parts of one key range (the whole table when not partitioned).
pub(super) struct Partition {
    /// The index block (or index partition).
    pub(super) index: MetaBlock<PinnedIndex>,
    /// Filter parts in probe order (empty: no filter); a pinned part is parsed once at open.
    pub(super) filter: Vec<MetaBlock<PinnedPart>>,
}

impl Partition {
    /// A partition's blocks; with `pin`, read and checked now and kept (the filter parts
    /// only with `pin_filters` as well: pooled parts are loaded by the filter manager).
    /// Pinned filter parts must have `digest_version` (any when `None`).
    pub(super) fn open(
        file: &TableFile,
        index: BlockHandle,
        filter: &[BlockHandle],
        (pin, pin_filters): (bool, bool),
        digest_version: Option<u8>,
    ) -> Result<Partition> {
        let index = if pin {
            let bytes = file.read_block(index, BlockKind::Index, true)?;
            let block = Block::new(bytes).map_err(|e| e.in_file(file.path(), Some(index.offset)))?;
            let fences = IndexFences::of(&block).ok();
            MetaBlock::Pinned { handle: index, pinned: PinnedIndex { block, fences } }
        } else {
            MetaBlock::Cached(index)
        };
        let mut parts = Vec::with_capacity(filter.len());
        for &handle in filter {
            let part = if pin && pin_filters {
                let data = file.read_block(handle, BlockKind::Filter, true)?;
                let pinned =
                    PinnedPart::new(data, digest_version).map_err(|e| e.in_file(file.path(), Some(handle.offset)))?;
                MetaBlock::Pinned { handle, pinned }
            } else {
                MetaBlock::Cached(handle)
            };
            parts.push(part);
        }
        Ok(Partition { index, filter: parts })
    }
}

impl TableReader {
    /// Filter part `i` of a partition (pinned, or through the cache at its priority), and
    /// whether it was read from the device.
    pub(super) fn filter_block(&self, part: &MetaBlock<PinnedPart>, i: usize) -> Result<(Arc<[u8]>, bool)> {
        match part {
            MetaBlock::Pinned { pinned, .. } => Ok((pinned.bytes().clone(), false)),
            // Pooled and not loaded: read for this probe and not kept, so filter memory
            // stays what the manager's budget allows.
            MetaBlock::Cached(handle) if self.filters_bypass_cache() => {
                Ok((self.file.read_block(*handle, BlockKind::Filter, true)?, true))
            }
            MetaBlock::Cached(handle) => {
                self.cached_block(*handle, BlockKind::Filter, CacheFill::At(self.filter_priority(i)), true, None)
            }
        }
    }

    /// Filter parts `parts` (of one partition, in probe order, not pinned) read with one
    /// read, their bytes lying together in the file, and put in the block cache as
    /// [`filter_block`](Self::filter_block) would put each (`first` is the first one's
    /// index in the partition). `None` when some part is pinned or they do not lie together
    /// (the builder writes a partition's parts one after another; a damaged handle may
    /// not): the caller reads them one at a time, each checked on its own.
    pub(super) fn filter_parts_together(
        &self,
        parts: &[MetaBlock<PinnedPart>],
        first: usize,
    ) -> Result<Option<Vec<Arc<[u8]>>>> {
        let handles: Option<Vec<BlockHandle>> = parts
            .iter()
            .map(|p| match p {
                MetaBlock::Cached(handle) => Some(*handle),
                MetaBlock::Pinned { .. } => None,
            })
            .collect();
        let Some(handles) = handles else { return Ok(None) };
        let Some(blocks) = self.file.read_blocks_together(&handles, BlockKind::Filter, true)? else {
            return Ok(None);
        };
        if !self.filters_bypass_cache() {
            for (i, (handle, block)) in handles.iter().zip(&blocks).enumerate() {
                let priority = self.filter_priority(first + i);
                self.ctx.cache.insert((self.number, handle.offset), block.clone(), BlockKind::Filter, priority);
            }
        }
        Ok(Some(blocks))
    }

    /// Filter part `part` from the block cache, if it is there (a hit or a miss counted as
    /// [`filter_block`](Self::filter_block)'s lookup would count it); `None` too when the
    /// part is pinned or never cached.
    pub(super) fn cached_filter_part(&self, part: &MetaBlock<PinnedPart>) -> Option<Arc<[u8]>> {
        match part {
            MetaBlock::Cached(handle) if !self.filters_bypass_cache() => {
                self.ctx.cache.get((self.number, handle.offset), BlockKind::Filter)
            }
            _ => None,
        }
    }

    /// Whether filter parts read for one probe skip the block cache: pooled filters (held
    /// under the manager's budget) without `cache_index_and_filter_blocks`.
    fn filters_bypass_cache(&self) -> bool {
        self.ctx.pool_filters && !self.ctx.cache_index_and_filter_blocks
    }

    /// The cache pool filter part `i` belongs in: the first module's pool for a modular
    /// filter's first module (the high pool when the cache has no such pool), low for the
    /// modules after it, high for every other filter part.
    pub(super) fn filter_priority(&self, i: usize) -> Priority {
        match (i, self.filter_role) {
            (0, Some(Role::Module)) => Priority::First,
            (_, Some(Role::Module)) => Priority::Low,
            _ => Priority::High,
        }
    }

    /// A partition's index block: pinned (borrowed), or through the cache at high priority.
    pub(super) fn index_block<'p>(&self, partition: &'p Partition) -> Result<Cow<'p, Block>> {
        match &partition.index {
            MetaBlock::Pinned { pinned, .. } => Ok(Cow::Borrowed(&pinned.block)),
            MetaBlock::Cached(handle) => {
                let data = self.cached_block(*handle, BlockKind::Index, CacheFill::At(Priority::High), true, None)?.0;
                Block::new(data).map(Cow::Owned).map_err(|e| e.in_file(self.path(), Some(handle.offset)))
            }
        }
    }

    /// The data block at `handle`, through the cache at low priority; a sequential reader
    /// passes its read-ahead window for a block the cache does not hold.
    pub(super) fn data_block(
        &self,
        handle: BlockHandle,
        ro: &ReadOptions,
        ahead: Option<&mut ReadAhead>,
    ) -> Result<Block> {
        let fill = if ro.fill_cache { CacheFill::At(Priority::Low) } else { CacheFill::Skip };
        let (data, _) = self.cached_block(handle, BlockKind::Data, fill, ro.verify_checksums, ahead)?;
        self.parse_data_block(data, handle)
    }

    /// Parse the contents of the data block at `handle`.
    pub(super) fn parse_data_block(&self, data: Arc<[u8]>, handle: BlockHandle) -> Result<Block> {
        Block::new(data).map_err(|e| e.in_file(self.path(), Some(handle.offset)))
    }

    /// Number of partitions (1 when the table is not partitioned).
    pub(super) fn partitions_len(&self) -> usize {
        self.partitions.len()
    }

    /// The index block of partition `p`, and its offset (for error messages).
    pub(super) fn index_block_of(&self, p: usize) -> Result<(Block, u64)> {
        let partition = self.partition(p)?;
        Ok((self.index_block(partition)?.into_owned(), partition.index.handle().offset))
    }

    /// The handle of partition `p`'s index block.
    pub(super) fn index_handle_of(&self, p: usize) -> Option<BlockHandle> {
        self.partitions.get(p).map(|q| q.index.handle())
    }

    /// Filter part `i` of partition `p`.
    pub(super) fn filter_part_of(&self, p: usize, i: usize) -> Result<Arc<[u8]>> {
        let partition = self.partition(p)?;
        let Some(part) = partition.filter.get(i) else {
            return Err(Error::InvalidArgument(format!("filter part {i} of {}", partition.filter.len())));
        };
        Ok(self.filter_block(part, i)?.0)
    }

    /// Handles of partition `p`'s filter parts.
    pub(super) fn filter_handles_of(&self, p: usize) -> Vec<BlockHandle> {
        self.partitions.get(p).map_or_else(Vec::new, |q| q.filter.iter().map(MetaBlock::handle).collect())
    }

    fn partition(&self, p: usize) -> Result<&Partition> {
        self.partitions
            .get(p)
            .ok_or_else(|| Error::InvalidArgument(format!("partition {p} of {}", self.partitions.len())))
    }

    /// A block through the cache: a hit, or a device read (through the read-ahead window
    /// `ahead` when given, its checksum checked when `verify`) that `fill` says where to
    /// insert. Returns the contents and whether they came from the device.
    fn cached_block(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        fill: CacheFill,
        verify: bool,
        ahead: Option<&mut ReadAhead>,
    ) -> Result<(Arc<[u8]>, bool)> {
        let key = (self.number, handle.offset);
        if let Some(block) = self.ctx.cache.get(key, kind) {
            return Ok((block, false));
        }
        let block = match ahead {
            Some(ahead) => self.file.read_block_ahead(handle, kind, verify, ahead)?,
            None => self.file.read_block(handle, kind, verify)?,
        };
        if let CacheFill::At(priority) = fill {
            self.ctx.cache.insert(key, block.clone(), kind, priority);
        }
        Ok((block, true))
    }
}
