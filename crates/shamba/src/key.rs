//! Internal keys: a user key tagged with a sequence number and a kind.
//!
//! Encoded as `user_key ++ trailer`, where the trailer is a little-endian `u64` holding
//! `seq << 8 | kind`. Internal keys order by user key ascending, then by trailer descending,
//! so the newest version of a key comes first and a seek to `(key, snapshot)` lands on the
//! newest version visible at `snapshot`.

#![deny(clippy::indexing_slicing)]

use std::cmp::Ordering;

/// A sequence number: every write gets the next one; snapshots are sequence numbers.
pub(crate) type SeqNo = u64;

/// Largest sequence number that fits in a trailer (56 bits).
pub(crate) const MAX_SEQ: SeqNo = (1 << 56) - 1;

/// Bytes of the trailer that follows the user key.
pub(crate) const TRAILER_LEN: usize = 8;

/// What an internal key records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(crate) enum ValueKind {
    /// A tombstone: the key was deleted at this sequence number.
    Delete = 0,
    /// A value was written at this sequence number.
    Put = 1,
    /// A value that expires: its stored value is a deadline, then the user's value
    /// (`expiry.rs`). Written only by writes that ask for an expiry; 2 is a write batch's
    /// range delete, so this kind is 3 in both.
    PutExpiring = 3,
}

impl ValueKind {
    /// Decode a kind byte.
    pub(crate) fn from_u8(b: u8) -> Option<ValueKind> {
        match b {
            0 => Some(ValueKind::Delete),
            1 => Some(ValueKind::Put),
            3 => Some(ValueKind::PutExpiring),
            _ => None,
        }
    }

    /// Whether the entry holds a value (expiring or not).
    #[inline]
    pub(crate) fn is_value(self) -> bool {
        self != ValueKind::Delete
    }
}

/// Kind byte used in seek targets: larger than every real kind, so a seek to
/// `(key, seq)` is positioned before every entry of `key` with sequence `<= seq`.
const SEEK_KIND: u64 = 0xFF;

/// Pack a sequence number and kind into a trailer.
#[inline]
pub(crate) fn pack_trailer(seq: SeqNo, kind: ValueKind) -> u64 {
    (seq << 8) | kind as u64
}

/// Append the internal key `(user_key, seq, kind)` to `buf`.
#[inline]
pub(crate) fn encode_internal_key(buf: &mut Vec<u8>, user_key: &[u8], seq: SeqNo, kind: ValueKind) {
    buf.extend_from_slice(user_key);
    buf.extend_from_slice(&pack_trailer(seq, kind).to_le_bytes());
}

/// The internal key `(user_key, seq, kind)` as a new vector.
pub(crate) fn internal_key(user_key: &[u8], seq: SeqNo, kind: ValueKind) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    encode_internal_key(&mut v, user_key, seq, kind);
    v
}

/// A seek target positioned before every version of `user_key` visible at `seq`.
pub(crate) fn seek_key(user_key: &[u8], seq: SeqNo) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    push_seek_key(&mut v, user_key, seq);
    v
}

/// [`seek_key`] appended to `buf` (a batch keeps its keys' seek keys in one buffer).
#[inline]
pub(crate) fn push_seek_key(buf: &mut Vec<u8>, user_key: &[u8], seq: SeqNo) {
    buf.extend_from_slice(user_key);
    buf.extend_from_slice(&((seq << 8) | SEEK_KIND).to_le_bytes());
}

/// The user key part of an encoded internal key (empty if the key is too short).
#[inline]
pub(crate) fn user_key(ikey: &[u8]) -> &[u8] {
    ikey.split_last_chunk::<TRAILER_LEN>().map_or(&[], |(user_key, _)| user_key)
}

/// The trailer of an encoded internal key (0 if the key is too short).
#[inline]
pub(crate) fn trailer(ikey: &[u8]) -> u64 {
    ikey.last_chunk::<TRAILER_LEN>().map_or(0, |t| u64::from_le_bytes(*t))
}

/// A decoded internal key borrowed from its encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParsedKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// Sequence number of the write.
    pub seq: SeqNo,
    /// Put or delete.
    pub kind: ValueKind,
}

/// Decode an internal key; `None` if it is too short or has an unknown kind.
pub(crate) fn parse_internal_key(ikey: &[u8]) -> Option<ParsedKey<'_>> {
    if ikey.len() < TRAILER_LEN {
        return None;
    }
    let t = trailer(ikey);
    Some(ParsedKey { user_key: user_key(ikey), seq: t >> 8, kind: ValueKind::from_u8(t as u8)? })
}

/// The order of internal keys: user key ascending, then trailer descending.
#[inline]
pub(crate) fn compare_internal_keys(a: &[u8], b: &[u8]) -> Ordering {
    compare_user_keys(user_key(a), user_key(b)).then_with(|| trailer(b).cmp(&trailer(a)))
}

/// Byte-wise order of two keys, deciding on the first 8 bytes in registers when they
/// differ (they do for most pairs a search compares), so the common compare costs no call
/// into `memcmp`; equal prefixes, or shorter keys, fall back to the full compare.
#[inline]
pub(crate) fn compare_user_keys(a: &[u8], b: &[u8]) -> Ordering {
    if let (Some(x), Some(y)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return x.cmp(&y);
        }
    }
    a.cmp(b)
}

/// The first 8 bytes of `user_key`, zero-padded, as a big-endian integer. Where two keys'
/// prefixes differ they order the keys as a byte-wise compare does; where they tie, the
/// keys must be compared whole. Searches keep these in contiguous arrays (a table's
/// top-level index, a run's file fences) so that most steps compare integers in a few cache
/// lines instead of following a pointer to each key.
#[inline]
pub(crate) fn user_key_prefix(user_key: &[u8]) -> u64 {
    if let Some(head) = user_key.first_chunk::<8>() {
        return u64::from_be_bytes(*head);
    }
    let mut b = [0u8; 8];
    for (to, from) in b.iter_mut().zip(user_key) {
        *to = *from;
    }
    u64::from_be_bytes(b)
}

/// An internal key as `'user key' @seq kind`, for dumps and reports; a shortened index
/// separator (largest trailer) shows as `@max (separator)`, anything else raw.
pub(crate) fn show_key(ikey: &[u8]) -> String {
    match parse_internal_key(ikey) {
        Some(k) => format!("{} @{} {:?}", show_bytes(k.user_key), k.seq, k.kind),
        // A shortened index separator carries the largest trailer, which is no real kind.
        None if ikey.len() >= TRAILER_LEN && trailer(ikey) == u64::MAX => {
            format!("{} @max (separator)", show_bytes(user_key(ikey)))
        }
        None => format!("<raw {}>", show_bytes(ikey)),
    }
}

/// Bytes as a quoted string with escapes, cut at 64 bytes.
pub(crate) fn show_bytes(b: &[u8]) -> String {
    let shown: String = b.iter().take(64).flat_map(|&c| std::ascii::escape_default(c)).map(char::from).collect();
    if b.len() > 64 {
        format!("'{shown}'... ({} bytes)", b.len())
    } else {
        format!("'{shown}'")
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Differing prefixes order keys as bytes do.
        #[test]
        fn prefixes_that_differ_order_keys(
            a in proptest::collection::vec(0u8..3, 0..12),
            b in proptest::collection::vec(0u8..3, 0..12),
        ) {
            let (pa, pb) = (user_key_prefix(&a), user_key_prefix(&b));
            if pa != pb {
                proptest::prop_assert_eq!(pa.cmp(&pb), a.cmp(&b));
            }
        }

        #[test]
        fn user_key_order_is_byte_order(
            a in proptest::collection::vec(0u8..3, 0..20),
            b in proptest::collection::vec(0u8..3, 0..20),
        ) {
            proptest::prop_assert_eq!(compare_user_keys(&a, &b), a.cmp(&b));
        }
    }

    #[test]
    fn newer_versions_of_a_key_sort_first() {
        let old = internal_key(b"k", 1, ValueKind::Put);
        let new = internal_key(b"k", 2, ValueKind::Delete);
        assert_eq!(compare_internal_keys(&new, &old), Ordering::Less);
        let other = internal_key(b"ka", 9, ValueKind::Put);
        assert_eq!(compare_internal_keys(&old, &other), Ordering::Less);
    }

    #[test]
    fn seek_key_lands_before_visible_versions_only() {
        let target = seek_key(b"k", 5);
        assert_eq!(compare_internal_keys(&target, &internal_key(b"k", 5, ValueKind::Put)), Ordering::Less);
        assert_eq!(compare_internal_keys(&target, &internal_key(b"k", 6, ValueKind::Put)), Ordering::Greater);
    }

    #[test]
    fn parse_round_trips_and_rejects_garbage() {
        let k = internal_key(b"abc", 77, ValueKind::Put);
        let p = parse_internal_key(&k).unwrap();
        assert_eq!((p.user_key, p.seq, p.kind), (&b"abc"[..], 77, ValueKind::Put));
        assert!(parse_internal_key(b"short").is_none());
        let mut bad = k.clone();
        let n = bad.len();
        bad[n - 8] = 9;
        assert!(parse_internal_key(&bad).is_none());
    }
}
