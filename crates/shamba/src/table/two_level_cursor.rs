//! The table cursor: an index cursor choosing data blocks (across index partitions, see
//! `index_cursor.rs`), and a cursor in the current data block.
//!
//! Invariant when valid: the data cursor is on an entry of the block the index cursor
//! points to. Moving off either end of a data block moves the index cursor one entry and
//! opens the neighbouring block (skipping empty blocks, which the builder never writes but
//! a reader must survive). The cursor owns an `Arc` of its reader, so it is `'static`.
//! Any error leaves it invalid and is returned. Every entry it stops on is a well-formed
//! internal key: one that is not is corruption naming the table file and the data block's
//! offset, so the merges above (iterators, compactions) never meet a malformed key.

#![deny(clippy::indexing_slicing)]

use super::block::BlockCursor;
use super::file::ReadAhead;
use super::format::BlockHandle;
use super::index_cursor::IndexCursor;
use super::reader::TableReader;
use crate::cursor::Cursor;
use crate::error::{DecodeError, Result};
use crate::key::{compare_internal_keys, parse_internal_key};
use crate::options::ReadOptions;
use std::sync::Arc;

/// A cursor over every entry of one table, in both directions.
pub(crate) struct TableCursor {
    table: Arc<TableReader>,
    ro: ReadOptions,
    /// Opens index blocks on first use: `cursor()` cannot fail, the first positioning
    /// call can.
    index: IndexCursor,
    /// The open data block and a cursor in it.
    data: Option<(BlockHandle, BlockCursor)>,
    /// Bytes read ahead, when `ro.readahead_size` asks for it.
    ahead: Option<ReadAhead>,
}

impl TableCursor {
    /// A cursor over `table`, not positioned.
    pub(crate) fn new(table: Arc<TableReader>, ro: ReadOptions) -> Self {
        let ahead = (ro.readahead_size > 0).then(|| ReadAhead::new(ro.readahead_size));
        TableCursor { index: IndexCursor::new(table.clone()), table, ro, data: None, ahead }
    }

    /// Run a positioning step and check the entry it lands on; on error drop the data block
    /// so the cursor is invalid.
    fn guard(&mut self, step: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let r = step(self).and_then(|()| self.check_entry());
        if r.is_err() {
            self.data = None;
        }
        r
    }

    /// The entry the cursor is on (if any) must be an internal key.
    fn check_entry(&self) -> Result<()> {
        match &self.data {
            Some((handle, c)) if c.valid() && parse_internal_key(c.key()).is_none() => Err(self
                .table
                .corruption(handle.offset, format!("data block: malformed internal key {:02x?}", c.key()))),
            _ => Ok(()),
        }
    }

    /// Run a step on the index cursor.
    fn index_step(&mut self, step: impl FnOnce(&mut IndexCursor) -> Result<()>) -> Result<()> {
        step(&mut self.index)
    }

    /// Open the data block the index cursor points to (none if the index is exhausted).
    fn open_data_block(&mut self) -> Result<()> {
        let Some(handle) = self.index.handle() else {
            self.data = None;
            return Ok(());
        };
        let handle = handle?;
        if self.data.as_ref().is_some_and(|(h, _)| *h == handle) {
            return Ok(());
        }
        let buffer = self.data.take().map(|(_, c)| c.into_key_buffer()).unwrap_or_default();
        let block = self.table.data_block(handle, &self.ro, self.ahead.as_mut())?;
        self.data = Some((handle, block.cursor_with_buffer(compare_internal_keys, buffer)));
        Ok(())
    }

    fn data_step(&mut self, step: impl FnOnce(&mut BlockCursor) -> Result<(), DecodeError>) -> Result<()> {
        let Some((handle, data)) = self.data.as_mut() else {
            return Ok(());
        };
        let offset = handle.offset;
        step(data).map_err(|e| self.table.corruption(offset, format!("data block: {e}")))
    }

    fn data_valid(&self) -> bool {
        self.data.as_ref().is_some_and(|(_, c)| c.valid())
    }

    /// While the data cursor is off its block, move to the next block's first entry.
    fn skip_forward(&mut self) -> Result<()> {
        while self.data.is_some() && !self.data_valid() {
            self.index_step(|i| i.next())?;
            self.open_data_block()?;
            self.data_step(|d| d.seek_to_first())?;
        }
        Ok(())
    }

    /// While the data cursor is off its block, move to the previous block's last entry.
    fn skip_backward(&mut self) -> Result<()> {
        while self.data.is_some() && !self.data_valid() {
            self.index_step(|i| i.prev())?;
            self.open_data_block()?;
            self.data_step(|d| d.seek_to_last())?;
        }
        Ok(())
    }
}

impl Cursor for TableCursor {
    fn valid(&self) -> bool {
        self.data_valid()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.guard(|c| {
            c.index_step(|i| i.seek_to_first())?;
            c.open_data_block()?;
            c.data_step(|d| d.seek_to_first())?;
            c.skip_forward()
        })
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.guard(|c| {
            c.index_step(|i| i.seek_to_last())?;
            c.open_data_block()?;
            c.data_step(|d| d.seek_to_last())?;
            c.skip_backward()
        })
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.guard(|c| {
            c.index_step(|i| i.seek(target))?;
            c.open_data_block()?;
            c.data_step(|d| d.seek(target))?;
            c.skip_forward()
        })
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.guard(|c| {
            // The first separator >= target names the last block that can hold an entry
            // <= target; past every separator, the answer is the table's last entry.
            c.index_step(|i| {
                i.seek(target)?;
                if !i.valid() {
                    i.seek_to_last()?;
                }
                Ok(())
            })?;
            c.open_data_block()?;
            c.data_step(|d| d.seek_for_prev(target))?;
            c.skip_backward()
        })
    }

    fn next(&mut self) -> Result<()> {
        self.guard(|c| {
            c.data_step(|d| d.next())?;
            c.skip_forward()
        })
    }

    fn prev(&mut self) -> Result<()> {
        self.guard(|c| {
            c.data_step(|d| d.prev())?;
            c.skip_backward()
        })
    }

    fn key(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |(_, c)| c.key())
    }

    fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |(_, c)| c.value())
    }
}
