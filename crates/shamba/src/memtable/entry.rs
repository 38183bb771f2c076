//! A memtable entry: an internal key and its value in one allocation, ordered as internal
//! keys are.
//!
//! Keeping key and value in separate vectors cost every put three allocations (skip-list
//! node, key, value) and every flushed entry three frees; with small pairs, allocation
//! was a large part of the writer thread's CPU during a load. One buffer saves one
//! allocation and one free of the three, and shrinks the node by 24 bytes.
//!
//! The entry also keeps its user key's first 16 bytes inline, in the skip-list node: a
//! search compares those first and follows the pointer to the buffer only when they tie.
//! Without them, every node a search passed cost two cache misses (the node, then its
//! buffer); a server's insert or lookup in a memtable of a few hundred thousand entries
//! spent a third of its CPU there.

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
    /// The user key's first 16 bytes (see [`Head`]).
    head: Head,
    bytes: Box<[u8]>,
    key_len: usize,
}

/// A user key's first 16 bytes, zero-padded, as two big-endian integers. Where two keys'
/// heads differ they order the keys as a byte-wise compare does (a key that is a proper
/// prefix of the other pads with zeros, which sort first or tie); where they tie, the keys
/// must be compared whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Head(u64, u64);

impl Head {
    fn of(user_key: &[u8]) -> Head {
        let mut padded = [0u8; 16];
        let n = user_key.len().min(16);
        if let (Some(to), Some(from)) = (padded.get_mut(..n), user_key.get(..n)) {
            to.copy_from_slice(from);
        }
        let (hi, lo) = padded.split_at(8);
        let word = |b: &[u8]| b.try_into().map_or(0, u64::from_be_bytes);
        Head(word(hi), word(lo))
    }
}

impl MemEntry {
    /// The entry for `user_key` at `seq` (one allocation of exactly its size).
    pub(crate) fn new(user_key: &[u8], seq: SeqNo, kind: ValueKind, value: &[u8]) -> Self {
        let mut bytes = Vec::with_capacity(user_key.len() + crate::key::TRAILER_LEN + value.len());
        encode_internal_key(&mut bytes, user_key, seq, kind);
        let key_len = bytes.len();
        bytes.extend_from_slice(value);
        MemEntry { head: Head::of(user_key), bytes: bytes.into_boxed_slice(), key_len }
    }

    /// A search target: the encoded internal key `seek` with no value. Searching with it
    /// rather than with an [`InternalKey`] lets the search compare heads.
    pub(crate) fn probe(seek: &[u8]) -> Self {
        MemEntry { head: Head::of(crate::key::user_key(seek)), bytes: seek.into(), key_len: seek.len() }
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
    /// By internal key only, as the skip list needs: the order its `Borrow` form has, the
    /// heads deciding first when they differ.
    fn cmp(&self, other: &Self) -> Ordering {
        match self.head.cmp(&other.head) {
            Ordering::Equal => InternalKey::new(self.key()).cmp(InternalKey::new(other.key())),
            decided => decided,
        }
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
    fn heads_order_entries_as_their_internal_keys() {
        // Short keys, keys that are prefixes of others, keys tying on 16 bytes, zero bytes.
        let users: [&[u8]; 10] = [
            b"",
            b"\0",
            b"a",
            b"a\0",
            b"a\0\0b",
            b"ab",
            b"key:000000012345",
            b"key:000000012345x",
            b"key:000000012346",
            b"key:00000001234\xff\xff",
        ];
        let mut entries = Vec::new();
        for u in users {
            for seq in [1, 300] {
                entries.push(MemEntry::new(u, seq, ValueKind::Put, b"v"));
            }
        }
        for x in &entries {
            for y in &entries {
                assert_eq!(x.cmp(y), compare_internal_keys(x.key(), y.key()), "{x:?} {y:?}");
                let probe = MemEntry::probe(y.key());
                assert_eq!(x.cmp(&probe), compare_internal_keys(x.key(), y.key()), "{x:?} {y:?}");
            }
        }
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
