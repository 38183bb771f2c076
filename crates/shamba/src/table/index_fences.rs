//! Prefix fences of a pinned index block: the first 8 bytes of every separator's user key,
//! in one contiguous array.
//!
//! A point lookup's index search is a binary search over a table's separators: about eight
//! steps for a 1 MiB table, each reading a restart offset and then a separator somewhere in
//! the block. With a hundred tables or more the index blocks do not stay in the CPU's
//! caches, so each step is a cache miss or two. The fences answer most steps from 8-byte
//! integers packed into a few cache lines (2 KiB for 256 blocks) and read whole separators
//! only where prefixes tie, as the run fences of `version/run.rs` do for files. The bytes
//! every separator of the block shares (keys like `user:000123...`) are skipped, so the 8
//! bytes kept are the ones that tell separators apart.
//!
//! They cost 8 bytes per data block (about a quarter of an index entry with 32-byte keys),
//! counted in the reader's pinned bytes, and are built only for pinned index blocks: an
//! index block in the block cache is charged to the cache, and its fences would not be.

#![deny(clippy::indexing_slicing)]

use super::block::Block;
use crate::error::DecodeError;
use crate::key::{compare_internal_keys, user_key, user_key_prefix};
use std::cmp::Ordering;

/// Where a seek key stands against the separators' shared prefix.
enum Target {
    /// Past the shared prefix: this prefix of the rest is what the fences compare.
    Prefix(u64),
    /// Below every separator.
    First,
    /// Above every separator.
    Past,
}

/// A fenced index search taken a step at a time ([`IndexFences::start_search`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum FenceSearch {
    /// Narrowing: the first prefix not below `target` is at `base` or within the `size`
    /// entries from it (or just past them).
    Narrowing { target: u64, base: usize, size: usize },
    /// Narrowed to `lo`: the first entry whose prefix is not below `target` (`None`: the
    /// seek key is below every separator, the answer is the first entry).
    Settled { target: Option<u64>, lo: usize },
    /// Above every separator.
    Past,
}

/// The separators' user-key prefixes of one index block, entry by entry.
pub(crate) struct IndexFences {
    /// The bytes every separator's user key starts with.
    common: Box<[u8]>,
    /// Per entry, [`user_key_prefix`] of its user key past `common`.
    prefixes: Box<[u64]>,
}

impl IndexFences {
    /// The fences of `block`, which must have a restart per entry (every index block this
    /// code writes does); an error if it has not, or if an entry does not decode.
    pub(crate) fn of(block: &Block) -> Result<Self, DecodeError> {
        let n = block.num_restarts();
        let first = user_key(block.restart_entry(0, true)?.0);
        let last = user_key(block.restart_entry(n - 1, true)?.0);
        // Keys sorted between two keys share the prefix those two share.
        let common: Box<[u8]> = first.iter().zip(last).take_while(|(a, b)| a == b).map(|(&a, _)| a).collect();
        let skip = common.len();
        let prefixes = (0..n)
            .map(|i| {
                let (key, _) = block.restart_entry(i, true)?;
                Ok(user_key_prefix(user_key(key).get(skip..).unwrap_or_default()))
            })
            .collect::<Result<_, DecodeError>>()?;
        Ok(IndexFences { common, prefixes })
    }

    /// The value of the first entry of `block` (the block these fences were built from)
    /// whose separator is `>= seek` in internal-key order; `None` when every separator is
    /// below `seek`.
    pub(crate) fn find<'b>(&self, block: &'b Block, seek: &[u8]) -> Result<Option<&'b [u8]>, DecodeError> {
        let target = match self.target(seek) {
            Target::Prefix(target) => target,
            Target::First => return Ok(Some(block.restart_entry(0, false)?.1)),
            Target::Past => return Ok(None),
        };
        let lo = self.prefixes.partition_point(|&p| p < target);
        self.resolve(block, seek, target, lo)
    }

    /// Where `seek` stands against the shared prefix.
    fn target(&self, seek: &[u8]) -> Target {
        let user = user_key(seek);
        match user.strip_prefix(&*self.common) {
            Some(rest) => Target::Prefix(user_key_prefix(rest)),
            // Below every separator (a byte below the shared prefix, or a prefix of it), or
            // above every one.
            _ if user < &*self.common => Target::First,
            _ => Target::Past,
        }
    }

    /// The answer of [`find`](Self::find) once the prefixes below `target` are known to
    /// end at `lo`.
    fn resolve<'b>(
        &self,
        block: &'b Block,
        seek: &[u8],
        target: u64,
        lo: usize,
    ) -> Result<Option<&'b [u8]>, DecodeError> {
        // Entries before `lo` have smaller prefixes (smaller user keys), entries from `hi`
        // larger ones; only a tie needs the separators themselves.
        // Ties are rare: look at the one entry before searching the rest for their end
        // (a search of the whole rest would cost as many misses as the search for `lo`).
        let hi = match self.prefixes.get(lo..) {
            Some(tied @ [first, ..]) if *first == target => lo + tied.partition_point(|&p| p == target),
            _ => lo,
        };
        let (mut left, mut right) = (lo, hi);
        while left < right {
            let mid = left + (right - left) / 2;
            let (key, _) = block.restart_entry(mid, false)?;
            if compare_internal_keys(key, seek) == Ordering::Less {
                left = mid + 1;
            } else {
                right = mid;
            }
        }
        if left == self.prefixes.len() {
            return Ok(None);
        }
        Ok(Some(block.restart_entry(left, false)?.1))
    }

    /// [`find`](Self::find) a step at a time, so that a batch of lookups can interleave
    /// their searches: every step asks the CPU for the line its next step reads, and the
    /// other keys' steps run while it arrives (one search alone waits for each of its
    /// misses in turn). Start with this, [`step`](Self::step) until it says done, then
    /// [`settle`](Self::settle), [`prefetch_answer`](Self::prefetch_answer) and
    /// [`finish`](Self::finish).
    pub(crate) fn start_search(&self, seek: &[u8]) -> FenceSearch {
        match self.target(seek) {
            Target::Prefix(target) => {
                let search = FenceSearch::Narrowing { target, base: 0, size: self.prefixes.len() };
                self.prefetch_step(&search);
                search
            }
            Target::First => FenceSearch::Settled { target: None, lo: 0 },
            Target::Past => FenceSearch::Past,
        }
    }

    /// One halving of the search's range (a lower bound over the prefixes, as
    /// `partition_point`); `false` once the range is down to its last candidate.
    pub(crate) fn step(&self, search: &mut FenceSearch) -> bool {
        let FenceSearch::Narrowing { target, base, size } = search else { return false };
        if *size <= 1 {
            return false;
        }
        let half = *size / 2;
        let mid = *base + half;
        if self.prefixes.get(mid).is_some_and(|p| p < target) {
            *base = mid;
        }
        *size -= half;
        self.prefetch_step(search);
        true
    }

    /// Ask for the prefix the next step of `search` compares.
    fn prefetch_step(&self, search: &FenceSearch) {
        if let FenceSearch::Narrowing { base, size, .. } = *search {
            let at = if size > 1 { base + size / 2 } else { base };
            if let Some(p) = self.prefixes.get(at) {
                crate::filter::prefetch_ref(p);
            }
        }
    }

    /// End the narrowing: the first entry whose prefix is not below the target, and ask for
    /// its slot in `block`'s restart array.
    pub(crate) fn settle(&self, block: &Block, search: &mut FenceSearch) {
        if let FenceSearch::Narrowing { target, base, .. } = *search {
            let lo = base + usize::from(self.prefixes.get(base).is_some_and(|&p| p < target));
            *search = FenceSearch::Settled { target: Some(target), lo };
        }
        if let FenceSearch::Settled { lo, .. } = *search {
            block.prefetch_restart_point(lo);
        }
    }

    /// Ask for the entry a settled search lands on (after [`settle`](Self::settle)).
    pub(crate) fn prefetch_answer(&self, block: &Block, search: &FenceSearch) {
        if let FenceSearch::Settled { lo, .. } = *search {
            block.prefetch_restart_entry(lo);
        }
    }

    /// What [`find`](Self::find) answers, from a search started for `seek` and stepped to
    /// its end (an unfinished one is finished here).
    pub(crate) fn finish<'b>(
        &self,
        block: &'b Block,
        seek: &[u8],
        mut search: FenceSearch,
    ) -> Result<Option<&'b [u8]>, DecodeError> {
        while self.step(&mut search) {}
        if matches!(search, FenceSearch::Narrowing { .. }) {
            self.settle(block, &mut search);
        }
        match search {
            FenceSearch::Settled { target: Some(target), lo } => self.resolve(block, seek, target, lo),
            FenceSearch::Settled { target: None, .. } => Ok(Some(block.restart_entry(0, false)?.1)),
            FenceSearch::Past | FenceSearch::Narrowing { .. } => Ok(None),
        }
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.prefixes) + self.common.len()
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};
    use crate::table::block_builder::BlockBuilder;
    use proptest::prelude::*;

    fn index_block(separators: &[Vec<u8>], restart_interval: usize) -> Block {
        let mut b = BlockBuilder::new(restart_interval);
        for (i, s) in separators.iter().enumerate() {
            b.add(s, &(i as u32).to_le_bytes());
        }
        Block::new(b.finish().into()).unwrap()
    }

    proptest! {
        /// The fenced search lands where the block's own seek does, for user keys sharing
        /// long prefixes, shorter than 8 bytes, with trailing zeros, and several versions of
        /// one user key across entries.
        #[test]
        fn finds_what_the_block_search_finds(
            keys in prop::collection::vec((prop::collection::vec(prop_oneof![Just(0u8), Just(7u8), Just(255u8), any::<u8>()], 0..12), 0u64..4), 1..80),
            probes in prop::collection::vec((prop::collection::vec(prop_oneof![Just(0u8), Just(7u8), Just(255u8), any::<u8>()], 0..12), 0u64..5), 1..40),
        ) {
            let mut separators: Vec<Vec<u8>> = keys.iter().map(|(k, s)| internal_key(&[b"prefix--", k.as_slice()].concat(), *s, ValueKind::Put)).collect();
            separators.extend(keys.iter().map(|(k, s)| internal_key(k, *s, ValueKind::Put)));
            separators.sort_by(|a, b| compare_internal_keys(a, b));
            separators.dedup();
            let block = index_block(&separators, 1);
            let fences = IndexFences::of(&block).unwrap();
            prop_assert!(fences.bytes() >= 8 * separators.len());
            // A block whose separators all share a long prefix, and probes on either side.
            let shared: Vec<Vec<u8>> = separators.iter().map(|s| [b"user:0000".as_slice(), s].concat()).collect();
            let shared_block = index_block(&shared, 1);
            let shared_fences = IndexFences::of(&shared_block).unwrap();
            for (k, s) in probes.iter().chain(&keys) {
                for user in [k.clone(), [b"prefix--", k.as_slice()].concat(), [b"user:0000", k.as_slice()].concat(), [b"user:000", k.as_slice()].concat(), b"user:0000prefix-".to_vec()] {
                    for (block, fences) in [(&block, &fences), (&shared_block, &shared_fences)] {
                        let seek = internal_key(&user, *s, ValueKind::Put);
                        let mut cursor = block.clone().cursor(compare_internal_keys);
                        cursor.seek(&seek).unwrap();
                        let want = cursor.valid().then(|| cursor.value().to_vec());
                        let got = fences.find(block, &seek).unwrap().map(<[u8]>::to_vec);
                        prop_assert_eq!(&got, &want);
                        // Stepped as a batch steps it, with every prefetch on the way.
                        let mut search = fences.start_search(&seek);
                        while fences.step(&mut search) {}
                        fences.settle(block, &mut search);
                        fences.prefetch_answer(block, &search);
                        let stepped = fences.finish(block, &seek, search).unwrap().map(<[u8]>::to_vec);
                        prop_assert_eq!(&stepped, &want);
                        // Or finished at once.
                        let at_once = fences.finish(block, &seek, fences.start_search(&seek)).unwrap().map(<[u8]>::to_vec);
                        prop_assert_eq!(at_once, want);
                    }
                }
            }
        }
    }

    #[test]
    fn blocks_with_several_entries_per_restart_get_no_fences() {
        let separators: Vec<Vec<u8>> = (0..20u8).map(|i| internal_key(&[i], 1, ValueKind::Put)).collect();
        assert!(IndexFences::of(&index_block(&separators, 4)).is_err());
        assert!(IndexFences::of(&index_block(&separators, 1)).is_ok());
    }
}
