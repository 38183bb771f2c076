//! The public iterator: a merge of memtables and tables, read at a sequence number,
//! resolving versions and tombstones into the user's view, in both directions.
//!
//! Forward and backward walks use separate cursors (created on first use), so each is a
//! one-direction merge; they stop when they meet.

use super::inner::DbInner;
use super::super_version::SuperVersion;
use super::tree::Tree;
use crate::compaction::{MergingCursor, RunCursor};
use crate::cursor::Cursor;
use crate::error::Result;
use crate::expiry::{live_value, visible_slice, Clock};
use crate::key::{internal_key, parse_internal_key, seek_key, SeqNo, ValueKind, MAX_SEQ};
use crate::memtable::MemTable;
use crate::options::ReadOptions;
use crate::table::TableCache;
use crate::Error;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// A key-ordered, double-ended iterator over `(key, value)` pairs at one sequence number.
///
/// It holds the memtables and files it reads, so it sees a consistent state however long
/// it lives; writes after its creation are invisible to it.
///
/// # Errors
///
/// Each item is a `Result`. An item is
/// [`Error::Corruption`](crate::Error::Corruption), naming the table file and the block's
/// offset, when a table's footer or a block the walk reads (index or data) does not decode
/// or fails its checksum, or an entry of a data block is not an internal key;
/// [`Error::Io`](crate::Error::Io) when the device fails opening or reading a table. The
/// iterator yields an error once, then ends (in both directions).
///
/// An iterator that must not read yields the error a lookup would return as its first
/// item, then ends: [`Error::Closed`](crate::Error::Closed) when it was made after
/// [`Db::close`](crate::Db::close) (from the database, a keyspace or a snapshot),
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) over a dropped keyspace or a
/// snapshot's view of another database's keyspace. A seek restarts its walk: the error
/// comes again.
///
/// [`seek`](Self::seek) and [`seek_for_prev`](Self::seek_for_prev) restart a walk at a key,
/// as RocksDB's `Seek` and `SeekForPrev` do.
pub struct DbIterator {
    sv: Arc<SuperVersion>,
    /// Asked at each expiring entry the walk meets (an entry past its deadline is skipped).
    clock: Arc<dyn Clock>,
    tables: Arc<TableCache>,
    read: ReadOptions,
    seq: SeqNo,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    front: Option<MergingCursor>,
    back: Option<MergingCursor>,
    /// Last key yielded from the front / back: the walks stop when they cross.
    front_key: Option<Vec<u8>>,
    back_key: Option<Vec<u8>>,
    /// Where `seek` / `seek_for_prev` restarted the walks (inside the range).
    front_from: Option<Vec<u8>>,
    back_from: Option<Vec<u8>>,
    done: bool,
    /// Why this iterator reads nothing (made after the database closed, over a dropped
    /// keyspace, ...): each walk, seeks included, yields it once and ends.
    refused: Option<Error>,
    /// The refusal the next item yields, in either direction.
    pending: Option<Error>,
    /// A transaction's own writes, read over the snapshot.
    own: Option<OwnWrites>,
}

/// The sequence number of a transaction's own writes in its iterators: above every real one
/// (and below [`MAX_SEQ`], which seeks use), so an own write is always the newest version of
/// its key, and visible whatever the iterator's snapshot.
pub(crate) const OWN_SEQ: SeqNo = MAX_SEQ - 1;

/// A transaction's writes to one keyspace as its iterators merge them over its snapshot:
/// its puts and deletes in a memtable of their own, at [`OWN_SEQ`], and its range deletes
/// (half-open, `None`: to the end), which hide the snapshot's versions. A put after a range
/// delete over its key is in the memtable, so it wins over the range.
pub(crate) struct OwnWrites {
    pub mem: Arc<MemTable>,
    pub ranges: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl DbIterator {
    pub(crate) fn new<K: AsRef<[u8]>, R: RangeBounds<K>>(
        inner: &DbInner,
        tree: &Tree,
        seq: SeqNo,
        range: &R,
        read: ReadOptions,
    ) -> Self {
        let own = |b: Bound<&K>| match b {
            Bound::Included(k) => Bound::Included(k.as_ref().to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.as_ref().to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        // A closed database or a dropped keyspace refuses the iterator as it refuses a get.
        let refused = match inner.check_open() {
            Err(e) => Some(e),
            Ok(()) => tree.is_dropped().then(|| tree.dropped_error()),
        };
        let sv = tree.super_version();
        let mut it = DbIterator {
            sv,
            clock: inner.opts.clock.clone(),
            tables: inner.tables.clone(),
            read,
            seq,
            start: own(range.start_bound()),
            end: own(range.end_bound()),
            front: None,
            back: None,
            front_key: None,
            back_key: None,
            front_from: None,
            back_from: None,
            done: false,
            refused: None,
            pending: None,
            own: None,
        };
        if let Some(e) = refused {
            it.refuse(e);
        }
        it
    }

    /// Merge a transaction's own writes over what the iterator reads.
    pub(crate) fn with_own_writes(mut self, own: OwnWrites) -> Self {
        self.own = Some(own);
        self
    }

    /// Whether the version of `key` at `version_seq` is deleted by a range tombstone the
    /// iterator sees: the snapshot's, or its transaction's own.
    fn range_deleted(&self, key: &[u8], version_seq: SeqNo) -> bool {
        if version_seq == OWN_SEQ {
            return false;
        }
        range_deleted(&self.sv, key, self.seq, version_seq)
            || self.own.as_ref().is_some_and(|own| {
                own.ranges
                    .iter()
                    .any(|(start, end)| key >= start.as_slice() && end.as_ref().is_none_or(|e| key < e.as_slice()))
            })
    }

    /// Read nothing: yield `e` as the next item, then end (an iterator over a keyspace it
    /// must not read).
    pub(crate) fn refuse(&mut self, e: Error) {
        self.pending = Some(e.duplicate());
        self.refused = Some(e);
        self.done = true;
    }

    /// A walk restarts: a refused iterator yields its refusal again.
    fn restart(&mut self) {
        self.pending = self.refused.as_ref().map(Error::duplicate);
        self.done = self.refused.is_some();
    }

    fn build_cursor(&self) -> MergingCursor {
        let mut children: Vec<Box<dyn Cursor>> = Vec::new();
        if let Some(own) = &self.own {
            children.push(own.mem.cursor());
        }
        children.push(self.sv.mem.cursor());
        for m in &self.sv.imm {
            children.push(m.cursor());
        }
        for level in &self.sv.version.levels {
            for run in &level.runs {
                children.push(Box::new(RunCursor::new(run.files.clone(), self.tables.clone(), self.read.clone())));
            }
        }
        MergingCursor::new(children)
    }

    /// Restart the forward walk at the first key at or after `key` (or at the range's start,
    /// if that comes later): the next [`next`](Iterator::next) yields it. The backward walk
    /// is not moved; the two still stop where they meet.
    pub fn seek(&mut self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        self.front = None;
        self.front_key = None;
        self.front_from = above_start(&self.start, key).then(|| key.to_vec());
        self.restart();
    }

    /// Restart the backward walk at the last key at or before `key` (or at the range's end,
    /// if that comes first): the next [`next_back`](DoubleEndedIterator::next_back) yields it.
    /// The forward walk is not moved; the two still stop where they meet.
    pub fn seek_for_prev(&mut self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        self.back = None;
        self.back_key = None;
        self.back_from = below_end(&self.end, key).then(|| key.to_vec());
        self.restart();
    }

    fn step_forward(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if self.front.is_none() {
            let mut c = self.build_cursor();
            let start = match &self.front_from {
                Some(k) => Bound::Included(k.clone()),
                None => self.start.clone(),
            };
            match &start {
                // Own writes sit above the snapshot's number: seek above them too.
                Bound::Included(s) => c.seek(&seek_key(s, if self.own.is_some() { MAX_SEQ } else { self.seq }))?,
                Bound::Excluded(s) => c.seek(&internal_key(s, 0, ValueKind::Delete))?,
                Bound::Unbounded => c.seek_to_first()?,
            }
            // An excluded start lands on the oldest version of the start key: skip it.
            if let Bound::Excluded(s) = &start {
                if c.valid() && crate::key::user_key(c.key()) == s.as_slice() {
                    c.next()?;
                }
            }
            self.front = Some(c);
        }
        // The cursor leaves `self` for the walk, which reads the iterator's other fields.
        let Some(mut c) = self.front.take() else { return Ok(None) };
        let r = self.walk_forward(&mut c);
        self.front = Some(c);
        r
    }

    fn walk_forward(&mut self, c: &mut MergingCursor) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let seq = self.seq;
        while c.valid() {
            let p = parse_internal_key(c.key()).ok_or_else(|| {
                Error::internal(format!("an entry of the merge is not an internal key: {:02x?}", c.key()))
            })?;
            if p.seq > seq && p.seq != OWN_SEQ {
                c.next()?;
                continue;
            }
            // The first visible entry of a user key is its newest visible version.
            let user_key = p.user_key.to_vec();
            let (kind, version_seq) = (p.kind, p.seq);
            let live = kind.is_value() && !self.range_deleted(&user_key, version_seq);
            let item = if live { visible_slice(kind, c.value(), &*self.clock).map(<[u8]>::to_vec) } else { None };
            // Skip the older versions of this key.
            c.next()?;
            while c.valid() && crate::key::user_key(c.key()) == user_key.as_slice() {
                c.next()?;
            }
            if !below_end(&self.end, &user_key) || self.back_key.as_deref().is_some_and(|b| user_key.as_slice() >= b) {
                return Ok(None);
            }
            if let Some(value) = item {
                self.front_key = Some(user_key.clone());
                return Ok(Some((user_key, value)));
            }
        }
        Ok(None)
    }

    fn step_backward(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if self.back.is_none() {
            let mut c = self.build_cursor();
            let end = match &self.back_from {
                Some(k) => Bound::Included(k.clone()),
                None => self.end.clone(),
            };
            match &end {
                Bound::Included(e) => c.seek_for_prev(&internal_key(e, 0, ValueKind::Delete))?,
                Bound::Excluded(e) => c.seek_for_prev(&seek_key(e, MAX_SEQ))?,
                Bound::Unbounded => c.seek_to_last()?,
            }
            self.back = Some(c);
        }
        let Some(mut c) = self.back.take() else { return Ok(None) };
        let r = self.walk_backward(&mut c);
        self.back = Some(c);
        r
    }

    fn walk_backward(&mut self, c: &mut MergingCursor) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let seq = self.seq;
        while c.valid() {
            // Walking backward, a user key's versions come oldest first: the last visible
            // one seen before the key changes is the newest visible version.
            let user_key = crate::key::user_key(c.key()).to_vec();
            let mut newest: Option<(ValueKind, SeqNo, Vec<u8>)> = None;
            while c.valid() && crate::key::user_key(c.key()) == user_key.as_slice() {
                let p = parse_internal_key(c.key()).ok_or_else(|| {
                    Error::internal(format!("an entry of the merge is not an internal key: {:02x?}", c.key()))
                })?;
                if p.seq <= seq || p.seq == OWN_SEQ {
                    let value = if p.kind.is_value() { c.value().to_vec() } else { Vec::new() };
                    newest = Some((p.kind, p.seq, value));
                }
                c.prev()?;
            }
            let Some((kind, version_seq, value)) = newest else { continue };
            if !above_start(&self.start, &user_key)
                || self.front_key.as_deref().is_some_and(|f| user_key.as_slice() <= f)
            {
                return Ok(None);
            }
            if kind.is_value() && !self.range_deleted(&user_key, version_seq) {
                let value = match kind {
                    ValueKind::PutExpiring => live_value(value, &*self.clock),
                    _ => Some(value),
                };
                if let Some(value) = value {
                    self.back_key = Some(user_key.clone());
                    return Ok(Some((user_key, value)));
                }
            }
        }
        Ok(None)
    }

    fn finish(&mut self, r: Result<Option<(Vec<u8>, Vec<u8>)>>) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        match r {
            Ok(Some(kv)) => Some(Ok(kv)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                // Yield the error once, then end.
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl Iterator for DbIterator {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.pending.take() {
            return Some(Err(e));
        }
        if self.done {
            return None;
        }
        let _tier = crate::read_tier::Scope::enter(self.read.read_tier);
        let r = self.step_forward();
        self.finish(r)
    }
}

impl DoubleEndedIterator for DbIterator {
    fn next_back(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.pending.take() {
            return Some(Err(e));
        }
        if self.done {
            return None;
        }
        let _tier = crate::read_tier::Scope::enter(self.read.read_tier);
        let r = self.step_backward();
        self.finish(r)
    }
}

impl std::fmt::Debug for DbIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIterator")
            .field("seq", &self.seq)
            .field("start", &self.start)
            .field("end", &self.end)
            .finish()
    }
}

/// The smallest key above every key that starts with `prefix`, if there is one (`None`
/// when the prefix is empty or all `0xff`).
pub(crate) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// The range of every key that starts with `prefix`.
pub(crate) fn prefix_range(prefix: &[u8]) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let end = prefix_end(prefix).map_or(Bound::Unbounded, Bound::Excluded);
    (Bound::Included(prefix.to_vec()), end)
}

/// Whether a range tombstone visible at `seq` deletes the version of `key` at
/// `version_seq`: the floor a point lookup computes (tombstones written after the
/// iterator was made have larger sequence numbers, and do not count).
fn range_deleted(sv: &SuperVersion, key: &[u8], seq: SeqNo, version_seq: SeqNo) -> bool {
    sv.range_del_floor(key, seq) > version_seq
}

fn below_end(end: &Bound<Vec<u8>>, key: &[u8]) -> bool {
    match end {
        Bound::Included(e) => key <= e.as_slice(),
        Bound::Excluded(e) => key < e.as_slice(),
        Bound::Unbounded => true,
    }
}

fn above_start(start: &Bound<Vec<u8>>, key: &[u8]) -> bool {
    match start {
        Bound::Included(s) => key >= s.as_slice(),
        Bound::Excluded(s) => key > s.as_slice(),
        Bound::Unbounded => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_ends_at_its_successor_or_nowhere() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff\xff"), None);
        assert_eq!(prefix_end(b""), None);
        assert_eq!(prefix_range(b"\xff"), (Bound::Included(b"\xff".to_vec()), Bound::Unbounded));
    }
}
