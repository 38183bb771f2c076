//! Sorted runs and levels.
//!
//! Invariant of a [`Run`]: its files are sorted by smallest user key and their user-key
//! ranges are disjoint (one file's largest user key is below the next file's smallest), so
//! at most one file of a run can hold a given user key and a binary search finds it.
//! [`Level::runs`] is ordered newest first, so a lookup that stops at the first hit sees the
//! newest version.

use super::file_meta::FileMeta;
use crate::key::{compare_user_keys, user_key_prefix};
use std::cmp::Ordering;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A sorted run: files with disjoint key ranges, sorted by smallest key.
///
/// `files` must not change once the run has been searched: versions are built by the
/// version builder (`version/builder.rs`) from clones (whose fences start empty) and never
/// modified after.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Run {
    /// Run id (larger = newer).
    pub id: u64,
    /// Files of the run, sorted by smallest key.
    pub files: Vec<Arc<FileMeta>>,
    /// The files' key boundaries, built on the run's first lookup.
    fences: FenceCache,
}

/// A run's [`Fences`], built on first use. A cache derived from `files`, not part of the
/// run: it compares equal to any other, and a clone starts empty (a clone may change its
/// files before its first search).
#[derive(Default)]
struct FenceCache(OnceLock<Fences>);

impl FenceCache {
    #[inline]
    fn get_or_build(&self, files: &[Arc<FileMeta>]) -> &Fences {
        self.0.get_or_init(|| Fences::of(files))
    }
}

impl Clone for FenceCache {
    fn clone(&self) -> Self {
        FenceCache::default()
    }
}

impl PartialEq for FenceCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl fmt::Debug for FenceCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.get().is_some() { "built" } else { "empty" })
    }
}

/// A run's file boundaries as user-key prefixes ([`user_key_prefix`]), in two contiguous
/// arrays. Every point lookup binary-searches every run of every level; on a deep tree a
/// level has hundreds of files, each its own allocation with its keys in two more, and a
/// search through them was a chain of cache misses, a visible part of an empty lookup's
/// time on deep trees. RocksDB keeps each level's file boundaries contiguous
/// (`LevelFilesBrief`) for the same reason.
#[derive(Debug)]
struct Fences {
    smallest: Vec<u64>,
    largest: Vec<u64>,
    /// The files' numbers, so a lookup names its candidate without reading its metadata.
    numbers: Vec<u64>,
}

impl Fences {
    fn of(files: &[Arc<FileMeta>]) -> Fences {
        Fences {
            smallest: files.iter().map(|f| user_key_prefix(f.smallest_user_key())).collect(),
            largest: files.iter().map(|f| user_key_prefix(f.largest_user_key())).collect(),
            numbers: files.iter().map(|f| f.number).collect(),
        }
    }
}

impl Run {
    /// A run of `files` (sorted by smallest key, disjoint).
    pub(crate) fn new(id: u64, files: Vec<Arc<FileMeta>>) -> Run {
        Run { id, files, fences: FenceCache::default() }
    }

    /// The file whose user-key range covers `user_key`, if any, with its index in
    /// [`files`](Self::files). No allocation after the run's first lookup; a file's metadata
    /// is read only to break a prefix tie.
    #[inline]
    pub(crate) fn find(&self, user_key: &[u8]) -> Option<(usize, &Arc<FileMeta>)> {
        let fences = self.fences.get_or_build(&self.files);
        if fences.largest.len() != self.files.len() {
            // The files changed after the first search, against the invariant above;
            // the whole-key search is still right.
            return self.find_by_keys(user_key);
        }
        let sought = user_key_prefix(user_key);
        let lo = self.lower_bound(fences, sought, user_key, 0, self.files.len());
        self.covering(fences, lo, sought, user_key)
    }

    /// The number of file `i` of the run, from the fences (a lookup's candidate is named
    /// without a read of its metadata, a cache miss on a large tree).
    #[inline]
    pub(crate) fn number_of(&self, i: usize) -> u64 {
        match self.fences.get_or_build(&self.files).numbers.get(i) {
            Some(&n) => n,
            None => self.files.get(i).map_or(0, |f| f.number),
        }
    }

    /// [`Run::find`] for a key not below the key of an earlier search, which returned
    /// `from` as its first value: the search gallops forward from there, so keys in
    /// ascending order walk the run once instead of each searching it whole. Returns where
    /// the next (not smaller) key's search starts, and the covering file.
    pub(crate) fn find_from(&self, user_key: &[u8], from: usize) -> (usize, Option<(usize, &Arc<FileMeta>)>) {
        let fences = self.fences.get_or_build(&self.files);
        if fences.largest.len() != self.files.len() {
            return (0, self.find_by_keys(user_key));
        }
        let sought = user_key_prefix(user_key);
        let len = self.files.len();
        // Gallop: widen a window past `from` until its end is not below the key.
        let (mut lo, mut step) = (from.min(len), 1);
        let mut hi = len;
        while lo < len {
            let probe = (lo + step - 1).min(len - 1);
            if self.largest_below(fences, probe, sought, user_key) {
                lo = probe + 1;
                step *= 2;
            } else {
                hi = probe;
                break;
            }
        }
        let lo = self.lower_bound(fences, sought, user_key, lo, hi.max(lo));
        (lo, self.covering(fences, lo, sought, user_key))
    }

    /// Whether file `i`'s largest key is below the sought key (`false` past the end).
    #[inline]
    fn largest_below(&self, fences: &Fences, i: usize, sought: u64, user_key: &[u8]) -> bool {
        match fences.largest.get(i).map(|f| f.cmp(&sought)) {
            Some(Ordering::Less) => true,
            Some(Ordering::Greater) | None => false,
            Some(Ordering::Equal) => {
                self.files.get(i).is_some_and(|f| compare_user_keys(f.largest_user_key(), user_key) == Ordering::Less)
            }
        }
    }

    /// The first file in `[lo, hi)` whose largest key is not below the sought key (`hi` if
    /// none), given that every file before `lo` is below it.
    #[inline]
    fn lower_bound(&self, fences: &Fences, sought: u64, user_key: &[u8], mut lo: usize, mut hi: usize) -> usize {
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.largest_below(fences, mid, sought, user_key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// File `lo` if its range starts at or before the key (it ends at or after it).
    #[inline]
    fn covering(&self, fences: &Fences, lo: usize, sought: u64, user_key: &[u8]) -> Option<(usize, &Arc<FileMeta>)> {
        let file = self.files.get(lo)?;
        let starts_at_or_before = match fences.smallest.get(lo)?.cmp(&sought) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => compare_user_keys(file.smallest_user_key(), user_key) != Ordering::Greater,
        };
        starts_at_or_before.then_some((lo, file))
    }

    /// [`Run::find`] comparing whole keys.
    fn find_by_keys(&self, user_key: &[u8]) -> Option<(usize, &Arc<FileMeta>)> {
        let i = self.files.partition_point(|f| compare_user_keys(f.largest_user_key(), user_key) == Ordering::Less);
        let file = self.files.get(i)?;
        (compare_user_keys(file.smallest_user_key(), user_key) != Ordering::Greater).then_some((i, file))
    }

    /// The files meeting the user-key range `[smallest, largest]`: a contiguous slice.
    pub(crate) fn overlapping(&self, smallest: &[u8], largest: &[u8]) -> &[Arc<FileMeta>] {
        let from = self.files.partition_point(|f| f.largest_user_key() < smallest);
        let to = self.files.partition_point(|f| f.smallest_user_key() <= largest);
        self.files.get(from..to.max(from)).unwrap_or_default()
    }

    /// Total bytes of the run's files.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// Data-block bytes of the run's files (see [`FileMeta::data_bytes`]).
    pub(crate) fn data_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.data_bytes).sum()
    }

    /// Check the run's invariant; the reason names the first two files that break it.
    pub(crate) fn check_sorted_and_disjoint(&self) -> Result<(), String> {
        for f in &self.files {
            if f.smallest_user_key() > f.largest_user_key() {
                return Err(format!("file {} has smallest key above its largest", f.number));
            }
        }
        for pair in self.files.windows(2) {
            if let [a, b] = pair {
                if a.largest_user_key() >= b.smallest_user_key() {
                    return Err(format!(
                        "files {} and {} of run {} overlap (or share a user key)",
                        a.number, b.number, self.id
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One level: its runs, newest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Level {
    /// Runs, newest first.
    pub runs: Vec<Run>,
}

impl Level {
    /// Every file of the level, run by run (newest run first).
    pub(crate) fn files(&self) -> impl Iterator<Item = &Arc<FileMeta>> + '_ {
        self.runs.iter().flat_map(|r| r.files.iter())
    }

    /// Total bytes of the level's files.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> u64 {
        self.runs.iter().map(Run::bytes).sum()
    }

    /// Data-block bytes of the level's files.
    pub(crate) fn data_bytes(&self) -> u64 {
        self.runs.iter().map(Run::data_bytes).sum()
    }

    /// Number of files of the level.
    pub(crate) fn file_count(&self) -> usize {
        self.runs.iter().map(|r| r.files.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::super::file_meta::tests::file;
    use super::*;

    fn run() -> Run {
        Run::new(
            1,
            vec![Arc::new(file(1, 1, b"b", b"d")), Arc::new(file(2, 1, b"f", b"h")), Arc::new(file(3, 1, b"m", b"m"))],
        )
    }

    proptest::proptest! {
        /// The fence search finds what the whole-key search finds, with keys sharing long
        /// prefixes, shorter than 8 bytes, and with trailing zero bytes; the first search
        /// builds the fences and the others reuse them.
        #[test]
        fn fence_search_equals_a_whole_key_search(
            bounds in proptest::collection::btree_set(proptest::collection::vec(0u8..3, 0..12), 0..80),
            sought in proptest::collection::vec(proptest::collection::vec(0u8..3, 0..12), 1..8),
        ) {
            // Consecutive pairs of distinct sorted keys are the files' [smallest, largest].
            let bounds: Vec<Vec<u8>> = bounds.into_iter().collect();
            let files = bounds
                .chunks_exact(2)
                .enumerate()
                .map(|(i, pair)| Arc::new(file(i as u64 + 1, 1, &pair[0], &pair[1])))
                .collect();
            let r = Run::new(1, files);
            for key in sought.iter().chain(&bounds) {
                let want = r.find_by_keys(key).map(|(i, f)| (i, f.number));
                proptest::prop_assert_eq!(r.find(key).map(|(i, f)| (i, f.number)), want);
                if let Some((i, f)) = r.find(key) {
                    proptest::prop_assert!(Arc::ptr_eq(&r.files[i], f), "the index names the file found");
                    proptest::prop_assert_eq!(r.number_of(i), f.number);
                }
            }
            // Keys in ascending order, each search galloping on from the last: the same
            // files (repeated keys included).
            let mut sorted: Vec<&Vec<u8>> = sought.iter().chain(&bounds).chain(&sought).collect();
            sorted.sort_by(|a, b| compare_user_keys(a, b));
            let mut from = 0;
            for key in sorted {
                let (next, found) = r.find_from(key, from);
                proptest::prop_assert!(next >= from, "the walk goes forward");
                from = next;
                let want = r.find_by_keys(key).map(|(i, f)| (i, f.number));
                proptest::prop_assert_eq!(found.map(|(i, f)| (i, f.number)), want, "key {:?}", key);
            }
        }
    }

    #[test]
    fn find_picks_the_one_covering_file_or_none() {
        let r = run();
        let n = |k: &[u8]| r.find(k).map(|(i, f)| (i, f.number));
        assert_eq!((n(b"a"), n(b"b"), n(b"c"), n(b"d")), (None, Some((0, 1)), Some((0, 1)), Some((0, 1))));
        assert_eq!((n(b"e"), n(b"g"), n(b"i"), n(b"m"), n(b"z")), (None, Some((1, 2)), None, Some((2, 3)), None));
        assert_eq!(Run::default().find(b"a"), None);
    }

    #[test]
    fn overlapping_is_the_contiguous_slice_meeting_the_range() {
        let r = run();
        let n = |lo: &[u8], hi: &[u8]| r.overlapping(lo, hi).iter().map(|f| f.number).collect::<Vec<_>>();
        assert_eq!(n(b"a", b"z"), vec![1, 2, 3]);
        assert_eq!(n(b"d", b"f"), vec![1, 2]);
        assert_eq!(n(b"e", b"e"), Vec::<u64>::new());
        assert_eq!(n(b"z", b"a"), Vec::<u64>::new());
        assert_eq!(n(b"i", b"m"), vec![3]);
    }

    #[test]
    fn files_sharing_a_boundary_user_key_break_the_invariant() {
        let mut r = run();
        assert!(r.check_sorted_and_disjoint().is_ok());
        r.files[1] = Arc::new(file(2, 1, b"d", b"h"));
        assert!(r.check_sorted_and_disjoint().is_err());
    }
}
