//! The internal iterator every sorted source implements: data blocks, tables, memtables,
//! levels, and the merge of them all.
//!
//! A cursor walks encoded internal keys (see [`crate::key`]) in internal-key order. It
//! is positioned or not ([`Cursor::valid`]); I/O or decoding failures surface from the
//! positioning calls, never by panicking. Both directions are supported so that the
//! public iterators are double-ended.

use crate::error::Result;

/// A positioned walk over internal keys and their values.
pub(crate) trait Cursor: Send {
    /// Whether the cursor is on an entry.
    fn valid(&self) -> bool;
    /// Position on the first entry.
    fn seek_to_first(&mut self) -> Result<()>;
    /// Position on the last entry.
    fn seek_to_last(&mut self) -> Result<()>;
    /// Position on the first entry whose key is `>= target` (internal-key order).
    fn seek(&mut self, target: &[u8]) -> Result<()>;
    /// Position on the last entry whose key is `<= target` (internal-key order).
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()>;
    /// Step forward. Requires `valid()`.
    fn next(&mut self) -> Result<()>;
    /// Step backward. Requires `valid()`.
    fn prev(&mut self) -> Result<()>;
    /// The current encoded internal key. Requires `valid()`.
    fn key(&self) -> &[u8];
    /// The current value. Requires `valid()`.
    fn value(&self) -> &[u8];
}

impl<C: Cursor + ?Sized> Cursor for Box<C> {
    fn valid(&self) -> bool {
        (**self).valid()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        (**self).seek_to_first()
    }
    fn seek_to_last(&mut self) -> Result<()> {
        (**self).seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        (**self).seek(target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        (**self).seek_for_prev(target)
    }
    fn next(&mut self) -> Result<()> {
        (**self).next()
    }
    fn prev(&mut self) -> Result<()> {
        (**self).prev()
    }
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    fn value(&self) -> &[u8] {
        (**self).value()
    }
}

/// A cursor over a sorted vector of owned entries, for tests.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct VecCursor {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    pos: Option<usize>,
}

#[cfg(test)]
impl VecCursor {
    /// Entries must already be sorted by [`crate::key::compare_internal_keys`].
    pub(crate) fn new(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Self {
        VecCursor { entries, pos: None }
    }
}

#[cfg(test)]
impl Cursor for VecCursor {
    fn valid(&self) -> bool {
        self.pos.is_some()
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.pos = if self.entries.is_empty() { None } else { Some(0) };
        Ok(())
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.pos = self.entries.len().checked_sub(1);
        Ok(())
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        let i = self.entries.partition_point(|(k, _)| crate::key::compare_internal_keys(k, target).is_lt());
        self.pos = (i < self.entries.len()).then_some(i);
        Ok(())
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        let i = self.entries.partition_point(|(k, _)| crate::key::compare_internal_keys(k, target).is_le());
        self.pos = i.checked_sub(1);
        Ok(())
    }
    fn next(&mut self) -> Result<()> {
        self.pos = self.pos.map(|p| p + 1).filter(|&p| p < self.entries.len());
        Ok(())
    }
    fn prev(&mut self) -> Result<()> {
        self.pos = self.pos.and_then(|p| p.checked_sub(1));
        Ok(())
    }
    fn key(&self) -> &[u8] {
        self.pos.map(|p| self.entries[p].0.as_slice()).unwrap_or(&[])
    }
    fn value(&self) -> &[u8] {
        self.pos.map(|p| self.entries[p].1.as_slice()).unwrap_or(&[])
    }
}
