//! A memtable entry: an internal key and its value in one allocation, ordered as internal
//! keys are.
//!
//! Keeping key and value in separate vectors cost every put three allocations (skip-list
//! node, key, value) and every flushed entry three frees; with small pairs, allocation
//! was a large part of the writer thread's CPU during a load. One buffer saves one
//! allocation and one free of the three, and shrinks the node by 24 bytes.

use crate::key::{compare_internal_keys, encode_internal_key, SeqNo, ValueKind};
use std::borrow::Borrow;
use std::cmp::Ordering;

/// An encoded internal key ordered by [`compare_internal_keys`] rather than bytewise: the
/// form lookups search the skip list with, borrowed from an entry or a seek target.
#[derive(Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct InternalKey([u8]);

impl InternalKey {
    /// View encoded internal-key bytes as an `InternalKey` (no copy).
    pub(crate) fn new(bytes: &[u8]) -> &InternalKey {
        // SAFETY: `InternalKey` is `repr(transparent)` over `[u8]`, so a `*const [u8]` and a
        // `*const InternalKey` have the same layout and slice-length metadata, and the
        // result borrows `bytes` for the same lifetime. Exercised by every test of this
        // module (e.g. `borrowed_keys_order_as_entries`) and of the memtable.
        unsafe { &*(bytes as *const [u8] as *const InternalKey) }
    }
}

impl PartialOrd for InternalKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for InternalKey {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_internal_keys(&self.0, &other.0)
    }
}

/// One version of a key: `bytes[..key_len]` is the internal key, the rest the value.
#[derive(Debug)]
pub(crate) struct MemEntry {
    bytes: Box<[u8]>,
    key_len: usize,
}

impl MemEntry {
    /// The entry for `user_key` at `seq` (one allocation of exactly its size).
    pub(crate) fn new(user_key: &[u8], seq: SeqNo, kind: ValueKind, value: &[u8]) -> Self {
        let mut bytes = Vec::with_capacity(user_key.len() + crate::key::TRAILER_LEN + value.len());
        encode_internal_key(&mut bytes, user_key, seq, kind);
        let key_len = bytes.len();
        bytes.extend_from_slice(value);
        MemEntry { bytes: bytes.into_boxed_slice(), key_len }
    }

    /// The encoded internal key.
    pub(crate) fn key(&self) -> &[u8] {
        self.bytes.get(..self.key_len).unwrap_or_default()
    }

    /// The value (empty for a tombstone).
    pub(crate) fn value(&self) -> &[u8] {
        self.bytes.get(self.key_len..).unwrap_or_default()
    }

    /// Bytes held: key and value.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }
}

impl Borrow<InternalKey> for MemEntry {
    fn borrow(&self) -> &InternalKey {
        InternalKey::new(self.key())
    }
}

impl PartialEq for MemEntry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for MemEntry {}

impl PartialOrd for MemEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for MemEntry {
    /// By internal key only, as the skip list needs: the order its `Borrow` form has.
    fn cmp(&self, other: &Self) -> Ordering {
        InternalKey::new(self.key()).cmp(InternalKey::new(other.key()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::internal_key;

    #[test]
    fn orders_newest_version_first_not_bytewise() {
        let old = MemEntry::new(b"a", 1, ValueKind::Put, b"x");
        let new = MemEntry::new(b"a", 300, ValueKind::Put, b"y");
        // Bytewise, the little-endian trailer of seq 1 sorts after that of seq 300's.
        assert!(new < old);
        assert!(old < MemEntry::new(b"b", 0, ValueKind::Put, b""));
        // The value takes no part in the order.
        assert_eq!(MemEntry::new(b"a", 1, ValueKind::Put, b"zzz"), old);
    }

    #[test]
    fn key_and_value_come_back_apart_and_borrow_as_the_key() {
        let e = MemEntry::new(b"key", 7, ValueKind::Put, b"value");
        assert_eq!(e.key(), internal_key(b"key", 7, ValueKind::Put).as_slice());
        assert_eq!(e.value(), b"value");
        assert_eq!(e.len(), 3 + crate::key::TRAILER_LEN + 5);
        let borrowed: &InternalKey = e.borrow();
        assert_eq!(borrowed, InternalKey::new(e.key()));
        let tombstone = MemEntry::new(b"", 1, ValueKind::Delete, b"");
        assert_eq!((tombstone.key().len(), tombstone.value()), (crate::key::TRAILER_LEN, &b""[..]));
    }

    #[test]
    fn borrowed_keys_order_as_entries() {
        let keys = [
            internal_key(b"a", 5, ValueKind::Put),
            internal_key(b"a", 2, ValueKind::Delete),
            internal_key(b"ab", 9, ValueKind::Put),
        ];
        for x in &keys {
            for y in &keys {
                assert_eq!(InternalKey::new(x).cmp(InternalKey::new(y)), compare_internal_keys(x, y));
            }
        }
    }
}
