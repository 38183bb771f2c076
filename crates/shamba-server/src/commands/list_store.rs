//! A list in the collection encoding (`types`), kvrocks's layout: one entry per element
//! at its u64 index, the ends in the metadata.
//!
//! ```text
//! metadata extra   head u64 BE ‖ tail u64 BE   (elements at head..tail; size = tail - head)
//! field            index u64 BE → element
//! ```
//!
//! A new list starts in the middle of the u64 range (2^63), so pushes at either end have
//! room for 2^63 elements. A push or pop is one entry and the metadata; LINDEX and LSET
//! one get; LRANGE a seek and a scan; LTRIM two range deletes. LINSERT and LREM rewrite
//! the elements after the first one they change (O(n), as kvrocks does).

use crate::reply::Reply;
use crate::store::{Batch, Selected};
use crate::types::{self, field_key, fields_prefix, Kind, Meta};

/// Where a new list's first element goes.
const MIDDLE: u64 = 1 << 63;

/// A list's ends: its elements are at indexes `head..tail`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Ends {
    pub(super) head: u64,
    pub(super) tail: u64,
}

impl Ends {
    /// The ends a metadata records (a new list's when it records none).
    pub(super) fn of(meta: &Meta) -> Ends {
        let at = |i: usize| meta.extra.get(i..i + 8).and_then(|b| b.try_into().ok()).map(u64::from_be_bytes);
        match (at(0), at(8)) {
            (Some(head), Some(tail)) if head <= tail => Ends { head, tail },
            _ => Ends { head: MIDDLE, tail: MIDDLE },
        }
    }

    fn encode(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        out.extend_from_slice(&self.head.to_be_bytes());
        out.extend_from_slice(&self.tail.to_be_bytes());
        out
    }

    pub(super) fn len(self) -> u64 {
        self.tail - self.head
    }
}

fn element_key(key: &[u8], meta: &Meta, index: u64) -> Vec<u8> {
    field_key(key, meta.version, &index.to_be_bytes())
}

/// The element at position `pos` (0: the head) of the list `meta` at `key`.
///
/// # Errors
///
/// As [`types::get_field`].
pub(super) fn element(db: &Selected<'_>, key: &[u8], meta: &Meta, pos: u64) -> shamba::Result<Option<Vec<u8>>> {
    let ends = Ends::of(meta);
    if pos >= ends.len() {
        return Ok(None);
    }
    types::get_field(db, key, meta, &(ends.head + pos).to_be_bytes())
}

/// The elements at positions `first..=last` (clamped to the list), by one seek and a scan.
///
/// # Errors
///
/// The first error of the scan.
pub(super) fn range(db: &Selected<'_>, key: &[u8], meta: &Meta, first: u64, last: u64) -> shamba::Result<Vec<Vec<u8>>> {
    let ends = Ends::of(meta);
    let Some(c) = db.collections() else {
        return Ok(Vec::new());
    };
    if first >= ends.len() || first > last {
        return Ok(Vec::new());
    }
    let n = (last.min(ends.len() - 1) - first + 1) as usize;
    let mut it = db.prefix_in(&c.fields, &fields_prefix(key, meta.version));
    it.seek(element_key(key, meta, ends.head + first));
    let mut out = Vec::with_capacity(n.min(1024));
    for item in it.take(n) {
        out.push(item?.1);
    }
    Ok(out)
}

/// Every element of the list, head first.
///
/// # Errors
///
/// As [`range`].
pub(super) fn all(db: &Selected<'_>, key: &[u8], meta: &Meta) -> shamba::Result<Vec<Vec<u8>>> {
    range(db, key, meta, 0, u64::MAX)
}

/// A list being changed by one command (under its key's lock): element writes go to the
/// command's batch, the ends to the metadata at `finish`.
pub(super) struct ListWrite<'a> {
    pub(super) w: types::Write<'a>,
    key: Vec<u8>,
    pub(super) ends: Ends,
}

impl<'a> ListWrite<'a> {
    /// Open `key` for writing a list: WRONGTYPE for another type.
    pub(super) fn open(db: &Selected<'a>, key: &[u8]) -> Result<ListWrite<'a>, Reply> {
        let w = types::Write::open(db, key, Kind::List)?;
        let ends = Ends::of(&w.meta);
        Ok(ListWrite { w, key: key.to_vec(), ends })
    }

    /// A new list at `key` written into `batch` (which deletes whatever `key` held): SORT
    /// STORE's destination.
    pub(super) fn fresh(db: &Selected<'a>, key: &[u8], batch: Batch) -> Result<ListWrite<'a>, Reply> {
        let w = types::Write::open_fresh(db, Kind::List, batch)?;
        Ok(ListWrite { w, key: key.to_vec(), ends: Ends::of(&Meta::new(Kind::List)) })
    }

    pub(super) fn len(&self) -> u64 {
        self.ends.len()
    }

    fn put(&mut self, index: u64, element: &[u8]) {
        self.w.put_field(&self.key, &index.to_be_bytes(), element);
    }

    pub(super) fn push_front(&mut self, element: &[u8]) {
        self.ends.head -= 1;
        self.put(self.ends.head, element);
    }

    pub(super) fn push_back(&mut self, element: &[u8]) {
        self.put(self.ends.tail, element);
        self.ends.tail += 1;
    }

    /// Drop `n` elements from the head (`back`: the tail); the caller read them first.
    pub(super) fn drop_end(&mut self, back: bool, n: u64) {
        let n = n.min(self.len());
        for _ in 0..n {
            if back {
                self.ends.tail -= 1;
                self.w.delete_field(&self.key, &self.ends.tail.to_be_bytes());
            } else {
                self.w.delete_field(&self.key, &self.ends.head.to_be_bytes());
                self.ends.head += 1;
            }
        }
    }

    /// Overwrite the element at position `pos` (inside the list).
    pub(super) fn set(&mut self, pos: u64, element: &[u8]) {
        self.put(self.ends.head + pos, element);
    }

    /// Keep positions `first..=last` only (inside the list): two range deletes.
    pub(super) fn keep(&mut self, first: u64, last: u64) {
        let (head, tail) = (self.ends.head, self.ends.tail);
        let (new_head, new_tail) = (head + first, head + last + 1);
        let c = self.w.c;
        let version = self.w.meta.version;
        let at = |i: u64| field_key(&self.key, version, &i.to_be_bytes());
        if new_head > head {
            self.w.batch.delete_range_in(&c.fields, &at(head), &at(new_head));
        }
        if tail > new_tail {
            self.w.batch.delete_range_in(&c.fields, &at(new_tail), &at(tail));
        }
        self.ends = Ends { head: new_head, tail: new_tail };
    }

    /// Make the list `new`, knowing it is `old` now: the elements from the first that
    /// differs are rewritten, the ones past the new end deleted.
    pub(super) fn replace(&mut self, old: &[Vec<u8>], new: &[Vec<u8>]) {
        let same = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        let head = self.ends.head;
        for (i, e) in new.iter().enumerate().skip(same) {
            self.put(head + i as u64, e);
        }
        for i in new.len()..old.len() {
            self.w.delete_field(&self.key, &(head + i as u64).to_be_bytes());
        }
        self.ends.tail = head + new.len() as u64;
    }

    /// Take over `batch` (a batch other keys' writes of the same command are in); this
    /// write's own must still be empty, as it is for a list that was live when opened.
    pub(super) fn join(&mut self, batch: Batch) {
        self.w.batch = batch;
    }

    /// The batch with the metadata written (the key deleted once no element is left).
    pub(super) fn finish(mut self) -> Batch {
        self.w.meta.size = self.ends.len();
        self.w.meta.extra = self.ends.encode();
        self.w.finish(&self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_list_starts_in_the_middle_and_its_ends_round_trip() {
        let mut meta = Meta::new(Kind::List);
        assert_eq!(Ends::of(&meta), Ends { head: MIDDLE, tail: MIDDLE });
        let ends = Ends { head: MIDDLE - 3, tail: MIDDLE + 2 };
        meta.extra = ends.encode();
        assert_eq!(Ends::of(&meta), ends);
        assert_eq!(ends.len(), 5);
    }
}
