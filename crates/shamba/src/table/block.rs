//! Reading a block built by [`BlockBuilder`](super::block_builder::BlockBuilder): a cheap
//! shared handle on its contents and a cursor that moves both ways.
//!
//! A seek binary-searches the restart array (restart entries hold whole keys) and then
//! decodes forward. Stepping back goes to the restart point before the current entry and
//! decodes forward to the entry before it, as LevelDB does.
//!
//! Damage is reported, never trusted: every offset is checked against the entry area, a
//! restart entry must not share a prefix, and every decoded entry moves strictly forward,
//! so no loop can run past the block or forever.

#![deny(clippy::indexing_slicing)]

use super::coding::{u32_at, Decoder};
use crate::error::DecodeError;
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

/// The order of a block's keys.
pub(crate) type Comparator = fn(&[u8], &[u8]) -> Ordering;

/// Bytewise order, for meta blocks keyed by names.
pub(crate) fn bytewise(a: &[u8], b: &[u8]) -> Ordering {
    a.cmp(b)
}

/// The uncompressed contents of one block with its restart array located.
#[derive(Clone)]
pub(crate) struct Block {
    data: Arc<[u8]>,
    /// Offset of the restart array = end of the entry area.
    restarts_at: usize,
    num_restarts: usize,
}

impl Block {
    /// Locate the restart array; fails if the counts do not fit the block.
    pub(crate) fn new(data: Arc<[u8]>) -> Result<Block, DecodeError> {
        let len = data.len();
        let Some(count_at) = len.checked_sub(4) else {
            return Err(DecodeError::new(format!("block of {len} bytes has no restart count")));
        };
        let num_restarts = u32_at(&data, count_at).unwrap_or(0) as usize;
        let restarts_at = num_restarts.checked_mul(4).and_then(|n| count_at.checked_sub(n));
        let Some(restarts_at) = restarts_at.filter(|_| num_restarts > 0) else {
            return Err(DecodeError::new(format!("block of {len} bytes cannot hold {num_restarts} restart points")));
        };
        Ok(Block { data, restarts_at, num_restarts })
    }

    /// Bytes of the block's contents.
    pub(crate) fn size(&self) -> usize {
        self.data.len()
    }

    /// A cursor over the block in `cmp` order, reusing `key_buf`'s allocation for keys.
    pub(crate) fn cursor_with_buffer(self, cmp: Comparator, mut key_buf: Vec<u8>) -> BlockCursor {
        key_buf.clear();
        let end = self.restarts_at;
        BlockCursor { block: self, cmp, key: key_buf, value: 0..0, current: end, next: end, restart_index: 0 }
    }

    /// A cursor over the block in `cmp` order.
    pub(crate) fn cursor(self, cmp: Comparator) -> BlockCursor {
        self.cursor_with_buffer(cmp, Vec::new())
    }

    /// Offset of restart entry `i`; it must lie in the entry area (or at its end when the
    /// block is empty).
    fn restart_point(&self, i: usize) -> Result<usize, DecodeError> {
        let off = if i < self.num_restarts { u32_at(&self.data, self.restarts_at + 4 * i) } else { None };
        off.map(|o| o as usize)
            .filter(|&o| o <= self.restarts_at)
            .ok_or_else(|| DecodeError::new(format!("restart point {i} out of range")))
    }

    /// Ask the CPU to load restart point `i`'s slot of the restart array (a hint; nothing
    /// when out of range), so a batch's index searches overlap the miss.
    pub(crate) fn prefetch_restart_point(&self, i: usize) {
        if let Some(slot) = self.data.get(self.restarts_at.saturating_add(i.saturating_mul(4))) {
            crate::filter::prefetch_ref(slot);
        }
    }

    /// Ask the CPU to load the head of restart entry `i` (reads its restart point, so
    /// after [`prefetch_restart_point`](Self::prefetch_restart_point)); nothing when out
    /// of range.
    pub(crate) fn prefetch_restart_entry(&self, i: usize) {
        if let Some(entry) = self.restart_point(i).ok().and_then(|off| self.data.get(off)) {
            crate::filter::prefetch_ref(entry);
        }
    }

    /// Ask the CPU to load what a seek's first binary-search steps read: the restart
    /// array's slots of [`search_points`](Self::search_points). A batch calls this for
    /// all its blocks, then [`prefetch_restart_heads`](Self::prefetch_restart_heads) for
    /// all, then seeks, so the misses of its blocks overlap where one lookup's seek waits
    /// for each in turn.
    pub(crate) fn prefetch_restart_array(&self) {
        for i in self.search_points() {
            self.prefetch_restart_point(i);
        }
    }

    /// Ask the CPU to load the heads of the restart entries of
    /// [`search_points`](Self::search_points) (reads their slots of the restart array, so
    /// after [`prefetch_restart_array`](Self::prefetch_restart_array)): the keys a seek's
    /// binary search compares first.
    pub(crate) fn prefetch_restart_heads(&self) {
        for i in self.search_points() {
            self.prefetch_restart_entry(i);
        }
    }

    /// The restart points worth a hint before a seek: every one in a block of at most 16
    /// (a data block at the default interval has fewer), else 16 evenly spaced, the points
    /// of a binary search's first four halvings, so a block with thousands of restarts
    /// costs 16 hints, not thousands.
    fn search_points(&self) -> impl Iterator<Item = usize> {
        let n = self.num_restarts;
        (0..n.min(16)).map(move |k| if n <= 16 { k } else { k * n / 16 })
    }

    /// Decode the entry at `off`.
    #[inline]
    fn entry_at(&self, off: usize) -> Result<Entry<'_>, DecodeError> {
        let area = self.data.get(off..self.restarts_at).ok_or_else(|| DecodeError::new("entry offset out of range"))?;
        // Fast path (LevelDB's DecodeEntry): all three lengths fit in one varint byte, as
        // they do for keys and values under 128 bytes.
        if let [shared, unshared, value_len, ref rest @ ..] = *area {
            if (shared | unshared | value_len) < 0x80 {
                let (shared, unshared, value_len) = (shared as usize, unshared as usize, value_len as usize);
                if let Some((key, tail)) = rest.split_at_checked(unshared) {
                    if let Some((value, _)) = tail.split_at_checked(value_len) {
                        return Ok(Entry { shared, key, value, end: off + 3 + unshared + value_len });
                    }
                }
            }
        }
        let mut d = Decoder::new(area);
        let shared = d.varint32()?;
        let unshared = d.varint32()?;
        let value_len = d.varint32()?;
        let key =
            d.bytes(unshared).map_err(|_| DecodeError::new(format!("entry at {off}: key runs past the entries")))?;
        let value =
            d.bytes(value_len).map_err(|_| DecodeError::new(format!("entry at {off}: value runs past the entries")))?;
        Ok(Entry { shared, key, value, end: off + d.position() })
    }

    /// Number of restart points.
    pub(crate) fn num_restarts(&self) -> usize {
        self.num_restarts
    }

    /// Key and value of restart entry `i`, borrowed from the block; with `sole`, also
    /// check that it is the only entry before the next restart point (a block with a
    /// restart per entry, as index blocks are).
    pub(crate) fn restart_entry(&self, i: usize, sole: bool) -> Result<(&[u8], &[u8]), DecodeError> {
        let off = self.restart_point(i)?;
        let Entry { shared, key, value, end } = self.entry_at(off)?;
        if shared != 0 {
            return Err(DecodeError::new(format!("restart entry at {off} shares {shared} key bytes")));
        }
        if sole {
            let next = if i + 1 < self.num_restarts { self.restart_point(i + 1)? } else { self.restarts_at };
            if end != next {
                return Err(DecodeError::new(format!("restart entry at {off} ends at {end}, not at {next}")));
            }
        }
        Ok((key, value))
    }

    /// The whole key of a restart entry, borrowed from the block.
    fn restart_key(&self, i: usize) -> Result<&[u8], DecodeError> {
        self.restart_entry(i, false).map(|(key, _)| key)
    }
}

/// One decoded entry, borrowed from its block.
struct Entry<'a> {
    /// Key bytes shared with the previous entry's key.
    shared: usize,
    /// The key bytes after the shared ones.
    key: &'a [u8],
    value: &'a [u8],
    /// Offset of the next entry (the value ends here).
    end: usize,
}

/// A position in a block. Invalid until positioned; after an error it is invalid too.
pub(crate) struct BlockCursor {
    block: Block,
    cmp: Comparator,
    /// The current key, rebuilt from the prefix-compressed entries.
    key: Vec<u8>,
    value: Range<usize>,
    /// Offset of the current entry; `restarts_at` when invalid.
    current: usize,
    /// Offset of the entry after the current one.
    next: usize,
    /// The restart interval the current entry is in.
    restart_index: usize,
}

impl BlockCursor {
    /// Whether the cursor is on an entry.
    pub(crate) fn valid(&self) -> bool {
        self.current < self.block.restarts_at
    }

    /// The current key (empty when invalid).
    pub(crate) fn key(&self) -> &[u8] {
        if self.valid() {
            &self.key
        } else {
            &[]
        }
    }

    /// The current value (empty when invalid).
    pub(crate) fn value(&self) -> &[u8] {
        self.block.data.get(self.value.clone()).unwrap_or(&[])
    }

    /// Give back the key buffer, to reuse its allocation.
    pub(crate) fn into_key_buffer(self) -> Vec<u8> {
        self.key
    }

    /// Position on the first entry.
    pub(crate) fn seek_to_first(&mut self) -> Result<(), DecodeError> {
        self.guard(|c| {
            c.seek_to_restart(0)?;
            c.parse_next()
        })
    }

    /// Position on the last entry.
    pub(crate) fn seek_to_last(&mut self) -> Result<(), DecodeError> {
        self.guard(|c| c.last_from_restart(c.block.num_restarts - 1))
    }

    /// Position on the first entry `>= target`.
    pub(crate) fn seek(&mut self, target: &[u8]) -> Result<(), DecodeError> {
        self.guard(|c| c.seek_inner(target))
    }

    /// Position on the last entry `<= target`.
    pub(crate) fn seek_for_prev(&mut self, target: &[u8]) -> Result<(), DecodeError> {
        self.guard(|c| {
            c.seek_inner(target)?;
            if !c.valid() {
                return c.last_from_restart(c.block.num_restarts - 1);
            }
            if (c.cmp)(&c.key, target) == Ordering::Greater {
                c.prev_inner()?;
            }
            Ok(())
        })
    }

    /// Step to the next entry (invalid past the last).
    pub(crate) fn next(&mut self) -> Result<(), DecodeError> {
        if !self.valid() {
            return Ok(());
        }
        self.guard(|c| c.parse_next())
    }

    /// Step to the previous entry (invalid before the first).
    pub(crate) fn prev(&mut self) -> Result<(), DecodeError> {
        if !self.valid() {
            return Ok(());
        }
        self.guard(|c| c.prev_inner())
    }

    /// Run a positioning step; on error leave the cursor invalid.
    fn guard(&mut self, step: impl FnOnce(&mut Self) -> Result<(), DecodeError>) -> Result<(), DecodeError> {
        let r = step(self);
        if r.is_err() {
            self.invalidate();
        }
        r
    }

    fn invalidate(&mut self) {
        self.current = self.block.restarts_at;
        self.next = self.block.restarts_at;
        self.value = 0..0;
    }

    fn seek_to_restart(&mut self, i: usize) -> Result<(), DecodeError> {
        self.key.clear();
        self.restart_index = i;
        self.next = self.block.restart_point(i)?;
        self.current = self.block.restarts_at;
        Ok(())
    }

    /// Decode the entry at `next` and make it current; invalid at the end of the entries.
    fn parse_next(&mut self) -> Result<(), DecodeError> {
        let off = self.next;
        if off >= self.block.restarts_at {
            self.invalidate();
            return Ok(());
        }
        let Entry { shared, key, value, end } = self.block.entry_at(off)?;
        if shared > self.key.len() {
            return Err(DecodeError::new(format!(
                "entry at {off} shares {shared} bytes of a {}-byte key",
                self.key.len()
            )));
        }
        self.key.truncate(shared);
        self.key.extend_from_slice(key);
        self.value = end - value.len()..end;
        self.current = off;
        self.next = end;
        while self.restart_index + 1 < self.block.num_restarts
            && self.block.restart_point(self.restart_index + 1)? <= off
        {
            self.restart_index += 1;
        }
        Ok(())
    }

    /// Decode from restart `i` to the last entry of the block.
    fn last_from_restart(&mut self, i: usize) -> Result<(), DecodeError> {
        self.seek_to_restart(i)?;
        self.parse_next()?;
        while self.valid() && self.next < self.block.restarts_at {
            self.parse_next()?;
        }
        Ok(())
    }

    fn seek_inner(&mut self, target: &[u8]) -> Result<(), DecodeError> {
        // Find the last restart whose key is < target; the answer is at or after it.
        let (mut left, mut right) = (0usize, self.block.num_restarts - 1);
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            if (self.cmp)(self.block.restart_key(mid)?, target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        self.seek_to_restart(left)?;
        loop {
            self.parse_next()?;
            if !self.valid() || (self.cmp)(&self.key, target) != Ordering::Less {
                return Ok(());
            }
        }
    }

    fn prev_inner(&mut self) -> Result<(), DecodeError> {
        let original = self.current;
        let mut i = self.restart_index.min(self.block.num_restarts - 1);
        while self.block.restart_point(i)? >= original {
            if i == 0 {
                // Before the first entry.
                self.invalidate();
                return Ok(());
            }
            i -= 1;
        }
        self.seek_to_restart(i)?;
        loop {
            self.parse_next()?;
            if !self.valid() || self.next > original {
                return Err(DecodeError::new(format!("entries do not lead to offset {original}")));
            }
            if self.next == original {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests;
