//! The index block: one fence pointer per data block.
//!
//! Entry `i` maps a separator key `S_i` to the handle of data block `i`, with
//! `last_key(block i) <= S_i < first_key(block i + 1)` in internal-key order. A seek for
//! target `t` finds the first `S_i >= t`; every entry `>= t` that precedes block `i + 1`
//! is then in block `i`, so a point lookup reads exactly one data block.
//!
//! Separators are shortened where the user keys allow it (`"apple" | "apricot"` gives
//! `"apq"`), which keeps the index small for long keys. The index uses a restart interval
//! of 1: every entry stores its whole key, so a seek is a pure binary search that borrows
//! keys from the block.

#![deny(clippy::indexing_slicing)]

use super::block_builder::BlockBuilder;
use super::format::BlockHandle;
use crate::key::{compare_internal_keys, user_key};
use std::cmp::Ordering;

/// Builds the index block.
#[derive(Debug)]
pub(crate) struct IndexBuilder {
    block: BlockBuilder,
    separator: Vec<u8>,
    value: Vec<u8>,
}

impl IndexBuilder {
    /// An empty index.
    pub(crate) fn new() -> Self {
        IndexBuilder { block: BlockBuilder::new(1), separator: Vec::new(), value: Vec::new() }
    }

    /// Add the entry of a finished data block whose last key is `last`; `next` is the first
    /// key of the following block, `None` for the table's last block.
    pub(crate) fn add(&mut self, last: &[u8], next: Option<&[u8]>, handle: BlockHandle) {
        self.separator.clear();
        match next {
            Some(next) => shortest_separator(last, next, &mut self.separator),
            None => self.separator.extend_from_slice(last),
        }
        self.value.clear();
        handle.encode_to(&mut self.value);
        self.block.add(&self.separator, &self.value);
    }

    /// The separator of the last entry added (empty before the first).
    pub(crate) fn last_separator(&self) -> &[u8] {
        &self.separator
    }

    /// Whether no entry was added.
    pub(crate) fn is_empty(&self) -> bool {
        self.block.is_empty()
    }

    /// Bytes the index block will have when finished now.
    pub(crate) fn estimated_size(&self) -> usize {
        self.block.estimated_size()
    }

    /// The finished index block's contents.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        self.block.finish()
    }
}

/// Write into `out` a short internal key `S` with `last <= S < next` (both internal keys,
/// `last < next`). When the user keys differ and a byte of `last`'s user key can be bumped
/// below `next`'s, `S` is that shortened user key with the largest trailer (which sorts
/// first among its versions); otherwise `S` is `last` itself.
pub(crate) fn shortest_separator(last: &[u8], next: &[u8], out: &mut Vec<u8>) {
    let (a, b) = (user_key(last), user_key(next));
    let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if let (Some((shared, &[byte, ..])), Some(&limit)) = (a.split_at_checked(common), b.get(common)) {
        if byte < 0xFF && byte + 1 < limit {
            out.extend_from_slice(shared);
            out.push(byte + 1);
            // The largest trailer: before every real version of the shortened user key.
            out.extend_from_slice(&u64::MAX.to_le_bytes());
            debug_assert_eq!(compare_internal_keys(last, out), Ordering::Less);
            debug_assert_eq!(compare_internal_keys(out, next), Ordering::Less);
            return;
        }
    }
    out.extend_from_slice(last);
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    fn sep(a: &[u8], sa: u64, b: &[u8], sb: u64) -> Vec<u8> {
        let (last, next) = (internal_key(a, sa, ValueKind::Put), internal_key(b, sb, ValueKind::Put));
        let mut out = Vec::new();
        shortest_separator(&last, &next, &mut out);
        assert_ne!(compare_internal_keys(&last, &out), Ordering::Greater, "separator below last");
        assert_eq!(compare_internal_keys(&out, &next), Ordering::Less, "separator not below next");
        out
    }

    #[test]
    fn separators_are_shortened_when_a_byte_can_be_bumped() {
        assert_eq!(user_key(&sep(b"apple", 1, b"apricot", 1)), b"apq");
        assert_eq!(user_key(&sep(b"abc1234", 5, b"abd", 9)), b"abc1234", "bump would equal next");
        assert_eq!(user_key(&sep(b"a", 5, b"a\x00", 9)), b"a", "prefix");
        assert_eq!(user_key(&sep(b"a\xff", 5, b"b", 9)), b"a\xff");
    }

    #[test]
    fn versions_of_one_user_key_across_blocks_keep_the_last_key() {
        let last = internal_key(b"k", 10, ValueKind::Put);
        assert_eq!(sep(b"k", 10, b"k", 9), last);
    }

    #[test]
    fn separators_hold_for_random_key_pairs() {
        let mut x = 88172645463325252u64;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..2000 {
            let len_a = (rnd() % 6) as usize;
            let len_b = (rnd() % 6) as usize;
            let mut a: Vec<u8> = (0..len_a).map(|_| [0u8, 1, 0x7F, 0xFE, 0xFF][(rnd() % 5) as usize]).collect();
            let mut b: Vec<u8> = (0..len_b).map(|_| [0u8, 1, 0x7F, 0xFE, 0xFF][(rnd() % 5) as usize]).collect();
            let (sa, sb) = (rnd() % 100, rnd() % 100);
            let (ka, kb) = (internal_key(&a, sa, ValueKind::Put), internal_key(&b, sb, ValueKind::Put));
            match compare_internal_keys(&ka, &kb) {
                Ordering::Less => {
                    sep(&a, sa, &b, sb);
                }
                Ordering::Greater => {
                    std::mem::swap(&mut a, &mut b);
                    sep(&a, sb, &b, sa);
                }
                Ordering::Equal => {}
            }
        }
    }
}
