//! The pinned top-level keys of a partitioned table, searched by every lookup.
//!
//! Each key is kept with an 8-byte big-endian prefix of its user key in one contiguous
//! array, so the binary search compares integers in a few cache lines and reads a whole
//! key (a separate allocation, likely a cache miss) only when two prefixes tie.

#![deny(clippy::indexing_slicing)]

use crate::key::{compare_internal_keys, user_key, user_key_prefix as prefix};
use std::cmp::Ordering;

/// Top-level keys (internal keys), in order, with their user-key prefixes.
#[derive(Default)]
pub(super) struct TopLevelKeys {
    prefixes: Vec<u64>,
    keys: Vec<Box<[u8]>>,
}

impl TopLevelKeys {
    /// Keys already checked to be internal keys in strictly increasing order.
    pub(super) fn new(keys: Vec<Box<[u8]>>) -> TopLevelKeys {
        TopLevelKeys { prefixes: keys.iter().map(|k| prefix(user_key(k))).collect(), keys }
    }

    /// Key `i`.
    pub(super) fn get(&self, i: usize) -> Option<&[u8]> {
        self.keys.get(i).map(|k| &k[..])
    }

    /// The index of the first key `>= seek` (an internal key); `len()` if none.
    #[inline]
    #[expect(
        clippy::indexing_slicing,
        reason = "mid < hi <= keys.len() = prefixes.len(): `new` makes one prefix per key, and nothing else changes them"
    )]
    pub(super) fn first_at_or_after(&self, seek: &[u8]) -> usize {
        let sought = prefix(user_key(seek));
        let mut lo = 0;
        let mut hi = self.keys.len();
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let less = match self.prefixes[mid].cmp(&sought) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => compare_internal_keys(&self.keys[mid], seek) == Ordering::Less,
            };
            if less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    proptest::proptest! {
        /// The prefix search finds what a plain binary search of whole keys finds, with
        /// keys sharing long prefixes, shorter than 8 bytes, and with trailing zero bytes.
        #[test]
        fn search_equals_a_whole_key_search(
            users in proptest::collection::btree_set(proptest::collection::vec(0u8..3, 0..11), 1..40),
            sought in proptest::collection::vec(0u8..3, 0..11),
            seq in 0u64..4,
        ) {
            let keys: Vec<Box<[u8]>> =
                users.iter().map(|u| internal_key(u, 2, ValueKind::Put).into_boxed_slice()).collect();
            let seek = internal_key(&sought, seq, ValueKind::Put);
            let expected = keys.partition_point(|k| compare_internal_keys(k, &seek) == Ordering::Less);
            proptest::prop_assert_eq!(TopLevelKeys::new(keys).first_at_or_after(&seek), expected);
        }
    }
}
