//! A cursor over every index entry of a table, across its index partitions.
//!
//! An unpartitioned table has one index block; a partitioned one has an index partition per
//! key range, in key order, found through the pinned top-level index. The cursor walks the
//! entries of one index block and steps into the neighbouring partition at either end, so
//! the table cursor above it sees one sequence of (separator -> data block handle) entries
//! whichever layout the file has. Partitions are opened lazily, one at a time, through the
//! reader (pinned or cached at high priority).

#![deny(clippy::indexing_slicing)]

use super::block::BlockCursor;
use super::format::BlockHandle;
use super::reader::TableReader;
use crate::error::{DecodeError, Result};
use crate::key::compare_internal_keys;
use std::sync::Arc;

/// A position among a table's index entries. Invalid until positioned, past either end,
/// and after an error.
pub(crate) struct IndexCursor {
    table: Arc<TableReader>,
    /// The partition whose index block `block` walks.
    partition: usize,
    /// Offset of that index block, for error messages.
    offset: u64,
    block: Option<BlockCursor>,
}

impl IndexCursor {
    /// A cursor over `table`'s index entries, not positioned.
    pub(crate) fn new(table: Arc<TableReader>) -> Self {
        IndexCursor { table, partition: 0, offset: 0, block: None }
    }

    /// Whether the cursor is on an entry.
    pub(crate) fn valid(&self) -> bool {
        self.block.as_ref().is_some_and(|c| c.valid())
    }

    /// The data block handle of the current entry (`None` when invalid).
    pub(crate) fn handle(&self) -> Option<Result<BlockHandle>> {
        let c = self.block.as_ref().filter(|c| c.valid())?;
        Some(self.table.decode_index_value(c.value(), self.offset))
    }

    /// Position on the table's first index entry.
    pub(crate) fn seek_to_first(&mut self) -> Result<()> {
        if self.table.partitions_len() == 0 {
            self.block = None;
            return Ok(());
        }
        self.open(0)?;
        self.step(|c| c.seek_to_first())?;
        self.skip_forward()
    }

    /// Position on the table's last index entry.
    pub(crate) fn seek_to_last(&mut self) -> Result<()> {
        let Some(last) = self.table.partitions_len().checked_sub(1) else {
            self.block = None;
            return Ok(());
        };
        self.open(last)?;
        self.step(|c| c.seek_to_last())?;
        self.skip_backward()
    }

    /// Position on the first entry `>= target` (invalid when there is none).
    pub(crate) fn seek(&mut self, target: &[u8]) -> Result<()> {
        let Some(p) = self.table.partition_index_for(target) else {
            self.block = None;
            return Ok(());
        };
        self.open(p)?;
        self.step(|c| c.seek(target))?;
        self.skip_forward()
    }

    /// Step to the next entry.
    pub(crate) fn next(&mut self) -> Result<()> {
        if !self.valid() {
            return Ok(());
        }
        self.step(|c| c.next())?;
        self.skip_forward()
    }

    /// Step to the previous entry.
    pub(crate) fn prev(&mut self) -> Result<()> {
        if !self.valid() {
            return Ok(());
        }
        self.step(|c| c.prev())?;
        self.skip_backward()
    }

    /// Open partition `p`'s index block (not positioned), reusing the key buffer.
    fn open(&mut self, p: usize) -> Result<()> {
        let buffer = self.block.take().map(BlockCursor::into_key_buffer).unwrap_or_default();
        let (block, offset) = self.table.index_block_of(p)?;
        self.block = Some(block.cursor_with_buffer(compare_internal_keys, buffer));
        self.partition = p;
        self.offset = offset;
        Ok(())
    }

    /// Run a step on the open block cursor; an error invalidates the cursor.
    fn step(&mut self, step: impl FnOnce(&mut BlockCursor) -> Result<(), DecodeError>) -> Result<()> {
        let Some(c) = self.block.as_mut() else {
            return Ok(());
        };
        let r = step(c).map_err(|e| self.table.corruption(self.offset, format!("index block: {e}")));
        if r.is_err() {
            self.block = None;
        }
        r
    }

    /// Off the end of a partition's entries: move to the next partition's first entry
    /// (an empty partition, which the builder never writes, is passed over).
    fn skip_forward(&mut self) -> Result<()> {
        while self.block.is_some() && !self.valid() {
            let next = self.partition + 1;
            if next >= self.table.partitions_len() {
                return Ok(());
            }
            self.open(next)?;
            self.step(|c| c.seek_to_first())?;
        }
        Ok(())
    }

    /// Off the start of a partition's entries: move to the previous partition's last entry.
    fn skip_backward(&mut self) -> Result<()> {
        while self.block.is_some() && !self.valid() {
            let Some(prev) = self.partition.checked_sub(1) else {
                return Ok(());
            };
            self.open(prev)?;
            self.step(|c| c.seek_to_last())?;
        }
        Ok(())
    }
}
