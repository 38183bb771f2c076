//! [`Version`]: the tree of files at one moment, and the lookup path through it.

use super::file_meta::FileMeta;
use super::run::{Level, Run};
use crate::range_del::RangeDels;
use std::sync::Arc;

/// A file as a lookup meets it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileRef<'a> {
    /// Its level.
    pub level: usize,
    /// Its position in [`Version::all_files`] order (level by level, runs newest first,
    /// each run's files in key order): an index for state the layers above keep per file
    /// of a version.
    pub ordinal: usize,
    /// Its file number (the record's, kept beside the run's fences).
    pub number: u64,
    /// Its manifest record.
    pub meta: &'a Arc<FileMeta>,
}

/// The candidate files of a batch's keys ([`Version::candidates_of_sorted`]): for each run
/// in visiting order, each key's file in it, if any.
pub(crate) struct BatchCandidates<'a> {
    runs: usize,
    keys: usize,
    /// Run-major: `files[run * keys + key]`.
    files: Vec<Option<FileRef<'a>>>,
}

impl<'a> BatchCandidates<'a> {
    /// Key `key`'s candidates, in the order a lookup visits them.
    pub(crate) fn of(&self, key: usize) -> impl Iterator<Item = FileRef<'a>> + '_ {
        (0..self.runs).filter_map(move |r| self.files.get(r * self.keys + key).copied().flatten())
    }
}

/// An immutable set of files: the tree at one moment.
///
/// Shape: level 0 holds one run per flushed file (run id = file number), newest first.
/// Leveled L1+ hold one run each; tiered L1+ hold up to `size_ratio - 1` runs, newest
/// first. Readers hold an `Arc<Version>` for as long as they read its files; the
/// [`VersionSet`](super::VersionSet) keeps those files from being deleted meanwhile.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Version {
    /// Levels 0..num_levels.
    pub levels: Vec<Level>,
    /// The range tombstones flushed from memtables and not yet collected (they live with
    /// the version, not in a table: see DESIGN.md, "Range deletes").
    pub range_dels: Arc<RangeDels>,
}

impl Version {
    /// An empty tree of `num_levels` levels.
    pub(crate) fn new(num_levels: usize) -> Self {
        Version { levels: vec![Level::default(); num_levels], range_dels: Arc::default() }
    }

    /// Number of levels.
    #[cfg(feature = "lab")]
    pub(crate) fn num_levels(&self) -> usize {
        self.levels.len()
    }

    /// Files that may hold `user_key`, in the order a lookup must visit them: level by
    /// level, runs newest first, at most one file per run. Binary search per run, no
    /// allocation: this is the hot path of every point lookup.
    pub(crate) fn candidates<'a>(&'a self, user_key: &'a [u8]) -> impl Iterator<Item = FileRef<'a>> + 'a {
        // Ordinal of the first file of the run being searched: the files before it in
        // `all_files` order.
        let mut first = 0;
        self.levels.iter().enumerate().flat_map(|(level, l)| l.runs.iter().map(move |run| (level, run))).filter_map(
            move |(level, run)| {
                let base = first;
                first += run.files.len();
                run.find(user_key).map(|(i, meta)| FileRef { level, ordinal: base + i, number: run.number_of(i), meta })
            },
        )
    }

    /// The candidates of many keys at once, each key's as [`candidates`](Self::candidates)
    /// gives them: `sorted` lists the keys' indices in `keys` in ascending key order, and
    /// each run is walked once forward over them (`Run::find_from`), where searching it
    /// whole for each key would repeat the top of the same binary search.
    pub(crate) fn candidates_of_sorted<'a>(&'a self, keys: &[&[u8]], sorted: &[usize]) -> BatchCandidates<'a> {
        let all_runs: usize = self.levels.iter().map(|l| l.runs.len()).sum();
        let mut files = Vec::with_capacity(all_runs * keys.len());
        let mut first = 0;
        let mut runs = 0;
        for (level, l) in self.levels.iter().enumerate() {
            for run in &l.runs {
                let base = first;
                first += run.files.len();
                let at = files.len();
                files.resize(at + keys.len(), None);
                let mut from = 0;
                for &k in sorted {
                    let Some(key) = keys.get(k) else { continue };
                    let (next, found) = run.find_from(key, from);
                    from = next;
                    if let Some(slot) = files.get_mut(at + k) {
                        *slot =
                            found.map(|(i, meta)| FileRef { level, ordinal: base + i, number: run.number_of(i), meta });
                    }
                }
                runs += 1;
            }
        }
        BatchCandidates { runs, keys: keys.len(), files }
    }

    /// Whether a table written to `level` goes to the bottom of the tree: no level below it
    /// holds a file (RocksDB's test for `bottommost_compression`).
    pub(crate) fn is_bottom(&self, level: usize) -> bool {
        self.levels.iter().skip(level + 1).all(|l| l.file_count() == 0)
    }

    /// Runs of `level`, newest first (empty for a level out of range).
    pub(crate) fn runs(&self, level: usize) -> &[Run] {
        self.levels.get(level).map_or(&[], |l| l.runs.as_slice())
    }

    /// Files of `level` overlapping the user-key range `[smallest, largest]`, newest run
    /// first, each run's files in key order.
    pub(crate) fn overlapping(&self, level: usize, smallest: &[u8], largest: &[u8]) -> Vec<Arc<FileMeta>> {
        self.runs(level).iter().flat_map(|r| r.overlapping(smallest, largest).iter().cloned()).collect()
    }

    /// Total bytes of a level.
    #[cfg(test)]
    pub(crate) fn level_bytes(&self, level: usize) -> u64 {
        self.levels.get(level).map_or(0, Level::bytes)
    }

    /// Data-block bytes of a level: what compaction sizes levels by, so that the filter
    /// policy (Monkey even gives levels different bits per key) never changes the shape of
    /// the tree.
    pub(crate) fn level_data_bytes(&self, level: usize) -> u64 {
        self.levels.get(level).map_or(0, Level::data_bytes)
    }

    /// Number of files of a level.
    #[cfg(test)]
    pub(crate) fn level_files(&self, level: usize) -> usize {
        self.levels.get(level).map_or(0, Level::file_count)
    }

    /// Number of runs of a level.
    #[cfg(test)]
    pub(crate) fn level_runs(&self, level: usize) -> usize {
        self.runs(level).len()
    }

    /// Total number of files.
    #[cfg(test)]
    pub(crate) fn total_files(&self) -> usize {
        self.levels.iter().map(Level::file_count).sum()
    }

    /// Every file with its level, level by level, runs newest first, each run's files in
    /// key order (the order of [`FileRef::ordinal`]).
    pub(crate) fn all_files(&self) -> impl Iterator<Item = (usize, &Arc<FileMeta>)> + '_ {
        self.levels.iter().enumerate().flat_map(|(level, l)| l.files().map(move |f| (level, f)))
    }

    /// Every file number of this version.
    pub(crate) fn file_numbers(&self) -> impl Iterator<Item = u64> + '_ {
        self.all_files().map(|(_, f)| f.number)
    }

    /// The deepest level holding any file (`None` for an empty tree).
    pub(crate) fn deepest_nonempty_level(&self) -> Option<usize> {
        self.levels.iter().rposition(|l| l.file_count() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::file_meta::tests::file;
    use super::*;

    /// L0: runs 9 ([a,z]) and 8 ([c,f]); L1: one run of [a,d] [e,k]; L2: tiered runs 3 and 2.
    fn tree() -> Version {
        let f = |n, run, lo: &[u8], hi: &[u8]| Arc::new(file(n, run, lo, hi));
        let mut v = Version::new(3);
        v.levels[0].runs = vec![Run::new(9, vec![f(9, 9, b"a", b"z")]), Run::new(8, vec![f(8, 8, b"c", b"f")])];
        v.levels[1].runs = vec![Run::new(1, vec![f(4, 1, b"a", b"d"), f(5, 1, b"e", b"k")])];
        v.levels[2].runs =
            vec![Run::new(3, vec![f(6, 3, b"a", b"m")]), Run::new(2, vec![f(1, 2, b"b", b"c"), f(2, 2, b"d", b"q")])];
        v
    }

    #[test]
    fn candidates_visit_levels_in_order_and_runs_newest_first() {
        let v = tree();
        let c = |k: &[u8]| v.candidates(k).map(|f| (f.level, f.meta.number)).collect::<Vec<_>>();
        assert_eq!(c(b"e"), vec![(0, 9), (0, 8), (1, 5), (2, 6), (2, 2)]);
        assert_eq!(c(b"b"), vec![(0, 9), (1, 4), (2, 6), (2, 1)]);
        assert_eq!(c(b"p"), vec![(0, 9), (2, 2)]);
        assert_eq!(c(b"zz"), Vec::<(usize, u64)>::new());
    }

    #[test]
    fn a_batch_finds_each_key_the_candidates_it_finds_alone() {
        let v = tree();
        let keys: Vec<&[u8]> = vec![b"p", b"e", b"zz", b"b", b"e", b"0", b"d", b"k", b"c"];
        let mut sorted: Vec<usize> = (0..keys.len()).collect();
        sorted.sort_by(|&a, &b| keys[a].cmp(keys[b]));
        let found = v.candidates_of_sorted(&keys, &sorted);
        for (i, key) in keys.iter().enumerate() {
            let alone: Vec<_> = v.candidates(key).map(|f| (f.level, f.ordinal, f.meta.number)).collect();
            let batched: Vec<_> = found.of(i).map(|f| (f.level, f.ordinal, f.meta.number)).collect();
            assert_eq!(batched, alone, "key {:?}", String::from_utf8_lossy(key));
        }
        // Keys left out of `sorted` (answered by a memtable) have no candidates.
        let found = v.candidates_of_sorted(&keys, &[1]);
        assert_eq!(found.of(1).count(), 5);
        assert_eq!(found.of(0).count(), 0);
    }

    #[test]
    fn sizes_counts_and_overlaps_per_level() {
        let v = tree();
        assert_eq!(v.level_files(0), 2);
        assert_eq!(v.level_files(2), 3);
        assert_eq!(v.level_files(7), 0);
        assert_eq!(v.level_bytes(1), 1004 + 1005);
        assert_eq!(v.total_files(), 7);
        assert_eq!(v.level_runs(2), 2);
        let o = v.overlapping(2, b"c", b"d").iter().map(|f| f.number).collect::<Vec<_>>();
        assert_eq!(o, vec![6, 1, 2]);
        let mut all: Vec<u64> = v.file_numbers().collect();
        all.sort_unstable();
        assert_eq!(all, vec![1, 2, 4, 5, 6, 8, 9]);
        assert_eq!(v.deepest_nonempty_level(), Some(2));
        assert_eq!(Version::new(4).deepest_nonempty_level(), None);
    }

    proptest::proptest! {
        #[test]
        fn candidates_equal_a_brute_force_scan(
            runs in proptest::collection::vec((0usize..3, proptest::collection::btree_set(0u8..60, 0..12)), 0..8),
            key in 0u8..62,
        ) {
            // Each run: sorted distinct points paired up into disjoint [lo, hi] ranges.
            let mut v = Version::new(3);
            let mut number = 0;
            for (id, (level, points)) in runs.iter().enumerate() {
                let points: Vec<u8> = points.iter().copied().collect();
                let files = points
                    .chunks(2)
                    .map(|c| {
                        number += 1;
                        Arc::new(file(number, id as u64, &[c[0]], &[*c.last().unwrap_or(&c[0])]))
                    })
                    .collect();
                // Newest first: push at the front.
                v.levels[*level].runs.insert(0, Run::new(id as u64, files));
            }
            let got: Vec<(usize, usize, u64)> =
                v.candidates(&[key]).map(|f| (f.level, f.ordinal, f.meta.number)).collect();
            let want: Vec<(usize, usize, u64)> = v.levels.iter().enumerate()
                .flat_map(|(l, level)| level.runs.iter().flat_map(move |r| r.files.iter().map(move |f| (l, f))))
                .enumerate()
                .filter(|(_, (_, f))| f.covers(&[key]))
                .map(|(ordinal, (l, f))| (l, ordinal, f.number))
                .collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
