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

/// A block that is either pinned in the reader or fetched through the cache.
pub(super) struct MetaBlock {
    pub(super) handle: BlockHandle,
    /// A pinned index block, its restart array located once (a lookup borrows it: no
    /// reference count is touched).
    pub(super) pinned: Option<Block>,
    /// A pinned filter part, parsed once at open.
    pub(super) parsed: Option<PinnedPart>,
    /// A pinned index block's prefix fences (`None` for filter parts, unpinned blocks, and
    /// index blocks without a restart per entry).
    pub(super) fences: Option<IndexFences>,
}

/// The index and filter parts of one key range (the whole table when not partitioned).
pub(super) struct Partition {
    /// The index block (or index partition).
    pub(super) index: MetaBlock,
    /// Filter parts in probe order (empty: no filter).
    pub(super) filter: Vec<MetaBlock>,
}

impl Partition {
    /// A partition's blocks; with `pin`, read and checked now and kept.
    /// Pinned filter parts must have `digest_version` (any when `None`).
    pub(super) fn open(
        file: &TableFile,
        index: BlockHandle,
        filter: &[BlockHandle],
        pin: bool,
        digest_version: Option<u8>,
    ) -> Result<Partition> {
        let mut index = MetaBlock { handle: index, pinned: None, parsed: None, fences: None };
        if pin {
            let data = file.read_block(index.handle, BlockKind::Index, true)?;
            let block = Block::new(data).map_err(|e| e.in_file(file.path(), Some(index.handle.offset)))?;
            index.fences = IndexFences::of(&block).ok();
            index.pinned = Some(block);
        }
        let mut parts = Vec::with_capacity(filter.len());
        for &handle in filter {
            let mut part = MetaBlock { handle, pinned: None, parsed: None, fences: None };
            if pin {
                let data = file.read_block(handle, BlockKind::Filter, true)?;
                let parsed =
                    PinnedPart::new(data, digest_version).map_err(|e| e.in_file(file.path(), Some(handle.offset)))?;
                part.parsed = Some(parsed);
            }
            parts.push(part);
        }
        Ok(Partition { index, filter: parts })
    }
}

impl TableReader {
    /// Filter part `i` of a partition (pinned, or through the cache at its priority), and
    /// whether it was read from the device.
    pub(super) fn filter_block(&self, part: &MetaBlock, i: usize) -> Result<(Arc<[u8]>, bool)> {
        match &part.parsed {
            Some(pinned) => Ok((pinned.bytes().clone(), false)),
            None => self.cached_block(part.handle, BlockKind::Filter, self.filter_priority(i), true, true, None),
        }
    }

    /// The cache pool filter part `i` belongs in: low for modules after the first.
    pub(super) fn filter_priority(&self, i: usize) -> Priority {
        if i > 0 && self.filter_role == Some(Role::Module) {
            Priority::Low
        } else {
            Priority::High
        }
    }

    /// A partition's index block: pinned (borrowed), or through the cache at high priority.
    pub(super) fn index_block<'p>(&self, partition: &'p Partition) -> Result<Cow<'p, Block>> {
        let index = &partition.index;
        if let Some(pinned) = &index.pinned {
            return Ok(Cow::Borrowed(pinned));
        }
        let data = self.cached_block(index.handle, BlockKind::Index, Priority::High, true, true, None)?.0;
        Block::new(data).map(Cow::Owned).map_err(|e| e.in_file(self.path(), Some(index.handle.offset)))
    }

    /// The data block at `handle`, through the cache at low priority; a sequential reader
    /// passes its read-ahead window for a block the cache does not hold.
    pub(super) fn data_block(
        &self,
        handle: BlockHandle,
        ro: &ReadOptions,
        ahead: Option<&mut ReadAhead>,
    ) -> Result<Block> {
        let (data, _) =
            self.cached_block(handle, BlockKind::Data, Priority::Low, ro.fill_cache, ro.verify_checksums, ahead)?;
        Block::new(data).map_err(|e| e.in_file(self.path(), Some(handle.offset)))
    }

    /// Number of partitions (1 when the table is not partitioned).
    pub(super) fn partitions_len(&self) -> usize {
        self.partitions.len()
    }

    /// The index block of partition `p`, and its offset (for error messages).
    pub(super) fn index_block_of(&self, p: usize) -> Result<(Block, u64)> {
        let partition = self.partition(p)?;
        Ok((self.index_block(partition)?.into_owned(), partition.index.handle.offset))
    }

    /// The handle of partition `p`'s index block.
    pub(super) fn index_handle_of(&self, p: usize) -> Option<BlockHandle> {
        self.partitions.get(p).map(|q| q.index.handle)
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
        self.partitions.get(p).map_or_else(Vec::new, |q| q.filter.iter().map(|m| m.handle).collect())
    }

    fn partition(&self, p: usize) -> Result<&Partition> {
        self.partitions
            .get(p)
            .ok_or_else(|| Error::InvalidArgument(format!("partition {p} of {}", self.partitions.len())))
    }

    /// A block through the cache: a hit, or a device read (through the read-ahead window
    /// `ahead` when given) inserted at `priority` when `fill`. Returns the contents and
    /// whether they came from the device.
    fn cached_block(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        priority: Priority,
        fill: bool,
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
        if fill {
            self.ctx.cache.insert(key, block.clone(), kind, priority);
        }
        Ok((block, true))
    }
}
