//! Range tombstones: `delete_range(start..end)` as one record, and the set a read asks
//! "which tombstone, visible at my sequence number, covers this key?".
//!
//! A tombstone at sequence number `t` deletes every version of every key in `[start, end)`
//! with a sequence number below `t`. Since sequence numbers order every write, a read
//! needs no more than that rule: it finds the newest visible version of its key as it
//! always does, then asks the set for the newest visible tombstone covering the key; the
//! version is deleted if it is older. Where the tombstone and the version live (memtable,
//! which table, which level) does not matter, nor do filters: a filter that says "no" only
//! means the table holds no version of the key, and a probe skipped by the filter manager
//! only costs a read. See DESIGN.md, "Range deletes".

use crate::key::SeqNo;
use std::collections::BTreeMap;

/// One range tombstone: every key in `[start, end)` (to the end of the key space when
/// `end` is `None`) is deleted as of `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RangeTombstone {
    pub start: Vec<u8>,
    pub end: Option<Vec<u8>>,
    pub seq: SeqNo,
}

impl RangeTombstone {
    /// Whether `key` is in the tombstone's range.
    pub(crate) fn covers(&self, key: &[u8]) -> bool {
        key >= self.start.as_slice() && self.end.as_deref().is_none_or(|end| key < end)
    }

    /// Whether the tombstone's range and the inclusive key range `[lo, hi]` share a key.
    pub(crate) fn overlaps(&self, lo: &[u8], hi: &[u8]) -> bool {
        hi >= self.start.as_slice() && self.end.as_deref().is_none_or(|end| lo < end)
    }
}

/// One piece of the key space no tombstone boundary falls inside: `[start, end)` with the
/// sequence numbers of the tombstones covering it, newest first.
#[derive(Debug, Clone)]
struct Fragment {
    start: Vec<u8>,
    end: Option<Vec<u8>>,
    seqs: Vec<SeqNo>,
}

/// Tombstones cut into fragments, for lookups by key.
#[derive(Debug, Clone, Default)]
pub(crate) struct RangeDelSet {
    fragments: Vec<Fragment>,
}

impl RangeDelSet {
    /// The set of `tombstones`.
    pub(crate) fn new<'a>(tombstones: impl IntoIterator<Item = &'a RangeTombstone>) -> RangeDelSet {
        let tombstones: Vec<&RangeTombstone> = tombstones.into_iter().collect();
        if tombstones.is_empty() {
            return RangeDelSet::default();
        }
        // Every boundary, in order; `None` (the end of the key space) sorts last.
        let mut bounds: Vec<Option<&[u8]>> =
            tombstones.iter().flat_map(|t| [Some(t.start.as_slice()), t.end.as_deref()]).collect();
        bounds.sort_by(|a, b| match (a, b) {
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        bounds.dedup();
        // Sweep: starts and ends by boundary, the covering seqs as a multiset.
        let mut by_start: BTreeMap<&[u8], Vec<SeqNo>> = BTreeMap::new();
        let mut by_end: BTreeMap<&[u8], Vec<SeqNo>> = BTreeMap::new();
        for t in &tombstones {
            by_start.entry(t.start.as_slice()).or_default().push(t.seq);
            if let Some(end) = t.end.as_deref() {
                by_end.entry(end).or_default().push(t.seq);
            }
        }
        let mut active: BTreeMap<SeqNo, usize> = BTreeMap::new();
        let mut fragments = Vec::new();
        for pair in bounds.windows(2) {
            let [Some(lo), hi] = pair else { continue };
            // Starts before ends: an empty range `[x, x)` comes and goes at `x`.
            for seq in by_start.get(lo).into_iter().flatten() {
                *active.entry(*seq).or_default() += 1;
            }
            for seq in by_end.get(lo).into_iter().flatten() {
                if let Some(n) = active.get_mut(seq) {
                    *n -= 1;
                    if *n == 0 {
                        active.remove(seq);
                    }
                }
            }
            if !active.is_empty() {
                fragments.push(Fragment {
                    start: lo.to_vec(),
                    end: hi.map(<[u8]>::to_vec),
                    seqs: active.keys().rev().copied().collect(),
                });
            }
        }
        RangeDelSet { fragments }
    }

    /// The sequence number of the newest tombstone covering `key` that a reader at `seq`
    /// sees, or 0: a version of `key` older than it is deleted.
    pub(crate) fn cover(&self, key: &[u8], seq: SeqNo) -> SeqNo {
        // The last fragment starting at or before `key`.
        let i = self.fragments.partition_point(|f| f.start.as_slice() <= key);
        let Some(f) = i.checked_sub(1).and_then(|i| self.fragments.get(i)) else { return 0 };
        if f.end.as_deref().is_some_and(|end| key >= end) {
            return 0;
        }
        f.seqs.iter().copied().find(|&s| s <= seq).unwrap_or(0)
    }
}

/// The range tombstones of a version: their list (as the manifest records them) and the
/// set reads ask.
#[derive(Debug, Clone, Default)]
pub(crate) struct RangeDels {
    pub list: Vec<RangeTombstone>,
    pub set: RangeDelSet,
}

impl RangeDels {
    pub(crate) fn new(list: Vec<RangeTombstone>) -> RangeDels {
        let set = RangeDelSet::new(&list);
        RangeDels { list, set }
    }

    /// Whether there are none.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

impl PartialEq for RangeDels {
    fn eq(&self, other: &Self) -> bool {
        self.list == other.list
    }
}

/// The newest tombstone among `tombstones` covering `key` visible at `seq`, or 0 (for the
/// few tombstones of a memtable, no fragments needed).
pub(crate) fn cover_in(tombstones: &[RangeTombstone], key: &[u8], seq: SeqNo) -> SeqNo {
    tombstones.iter().filter(|t| t.seq <= seq && t.covers(key)).map(|t| t.seq).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(start: &str, end: Option<&str>, seq: SeqNo) -> RangeTombstone {
        RangeTombstone { start: start.into(), end: end.map(Into::into), seq }
    }

    #[test]
    fn the_set_answers_as_the_tombstones_do_for_every_key_and_sequence() {
        let all =
            [t("b", Some("f"), 10), t("d", Some("h"), 20), t("a", Some("c"), 5), t("g", None, 7), t("x", Some("x"), 9)];
        let set = RangeDelSet::new(&all);
        for key in ["", "a", "aa", "b", "c", "d", "e", "f", "g", "h", "x", "z", "zzz"] {
            for seq in [0, 4, 5, 6, 9, 10, 15, 20, 100] {
                assert_eq!(set.cover(key.as_bytes(), seq), cover_in(&all, key.as_bytes(), seq), "key {key:?} at {seq}");
            }
        }
        assert_eq!(set.cover(b"e", 100), 20);
        assert_eq!(set.cover(b"e", 19), 10);
        assert_eq!(set.cover(b"h", 100), 7, "g.. reaches the end of the key space");
        assert_eq!(set.cover(b"x", 100), 7, "an empty range deletes nothing");
        assert_eq!(RangeDelSet::new(&[]).cover(b"a", 100), 0);
    }

    #[test]
    fn overlap_with_an_inclusive_range() {
        let bounded = t("c", Some("f"), 1);
        assert!(bounded.overlaps(b"a", b"c") && bounded.overlaps(b"e", b"z") && bounded.overlaps(b"d", b"d"));
        assert!(!bounded.overlaps(b"a", b"b") && !bounded.overlaps(b"f", b"z"));
        assert!(t("c", None, 1).overlaps(b"x", b"y"));
    }
}
