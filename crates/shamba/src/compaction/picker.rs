//! Choosing the next compaction: leveled partial compaction (RocksDB-style) or tiered.
//!
//! Leveled: L0 compacts into L1 when it holds `level0_compaction_trigger` files; level
//! `i >= 1` compacts when its bytes exceed `base * T^(i-1)`: one file (by
//! `Options::compaction_priority`: the one overlapping the fewest bytes of level `i+1` per
//! byte of its own, as RocksDB's default `kMinOverlappingRatio`, or round-robin by key as
//! LevelDB) merges with the files of level `i+1` it overlaps, or moves down if it overlaps none
//! there and no more of level `i+2` than an output may (`grandparents.rs`; else it is
//! rewritten, cut by that bound). Inputs are never expanded beyond that file and what it
//! overlaps, so no other bound on a compaction's size is needed (LevelDB and RocksDB grow
//! the upper level's inputs while the lower level's stay the same, under a byte limit).
//!
//! Tiered: every level holds up to `T-1` runs at rest; a level that reaches `T` runs (L0:
//! the trigger) merges all its runs into one new run of the next level. The last level
//! merges its runs into one.

use super::grandparents::overlap_bytes;
use super::{Compaction, CompactionChoice, CompactionInput, OutputRun, LEVELED_RUN};
use crate::options::{CompactionPriority, CompactionStyle, Options};
use crate::version::{FileMeta, Version};
use std::sync::Arc;

/// Target bytes of leveled level `level >= 1`.
pub(crate) fn level_target_bytes(opts: &Options, level: usize) -> u64 {
    let mut target = opts.max_bytes_for_level_base as f64;
    for _ in 1..level {
        target *= f64::from(opts.size_ratio);
    }
    target.min(u64::MAX as f64) as u64
}

/// How urgently each level needs compaction (>= 1 means it does), for L0..last-1.
pub(crate) fn level_scores(version: &Version, opts: &Options) -> Vec<f64> {
    let last = opts.num_levels - 1;
    (0..last)
        .map(|level| match (opts.compaction_style, level) {
            (_, 0) => version.levels[0].runs.len() as f64 / opts.level0_compaction_trigger as f64,
            (CompactionStyle::Leveled, _) => {
                version.level_data_bytes(level) as f64 / level_target_bytes(opts, level) as f64
            }
            (CompactionStyle::Tiered, _) => version.levels[level].runs.len() as f64 / f64::from(opts.size_ratio),
        })
        .collect()
}

/// Bytes above the levels' targets: the compaction debt that throttles writers.
pub(crate) fn pending_compaction_bytes(version: &Version, opts: &Options) -> u64 {
    if opts.compaction_style == CompactionStyle::Tiered {
        return 0;
    }
    (1..opts.num_levels - 1).map(|l| version.level_data_bytes(l).saturating_sub(level_target_bytes(opts, l))).sum()
}

/// The next compaction, if any level needs one. `cursor[level]` is the round-robin position
/// (largest user key of the last file compacted out of that level).
pub(crate) fn pick(version: &Version, opts: &Options, cursor: &mut [Vec<u8>]) -> Option<Compaction> {
    let scores = level_scores(version, opts);
    let (level, score) =
        scores.iter().copied().enumerate().fold((0, 0.0), |best, (l, s)| if s > best.1 { (l, s) } else { best });
    if score >= 1.0 {
        return match opts.compaction_style {
            CompactionStyle::Leveled => pick_leveled(version, opts, level, cursor),
            CompactionStyle::Tiered => Some(merge_level_runs(version, level, level + 1)),
        };
    }
    let last = opts.num_levels - 1;
    if opts.compaction_style == CompactionStyle::Tiered && version.levels[last].runs.len() >= opts.size_ratio as usize {
        return Some(merge_level_runs(version, last, last));
    }
    None
}

/// The compaction out of leveled `level` (`None` only if the level, though its score says
/// it needs one, holds no file).
fn pick_leveled(version: &Version, opts: &Options, level: usize, cursor: &mut [Vec<u8>]) -> Option<Compaction> {
    if level == 0 {
        return Some(l0_into_l1(version));
    }
    let files: Vec<&Arc<FileMeta>> = version.levels[level].runs.iter().flat_map(|r| r.files.iter()).collect();
    let chosen = match opts.compaction_priority {
        CompactionPriority::MinOverlappingRatio => least_overlapping(version, level, &files),
        CompactionPriority::RoundRobin => {
            let after = &cursor[level];
            files.iter().find(|f| after.is_empty() || crate::key::user_key(&f.smallest) > after.as_slice()).copied()
        }
    }
    .or_else(|| files.first().copied())
    .map(Arc::clone)?;
    cursor[level] = crate::key::user_key(&chosen.largest).to_vec();
    Some(file_into_next_level(version, opts, level, chosen))
}

/// The file of `files` (level `level`'s) whose compaction rewrites the fewest bytes of the
/// level below per byte it moves down: its overlap there over its own data bytes, the
/// first in key order on a tie. Where some key ranges are written more than others, files
/// overlap unevenly below and taking the cheapest first rewrites less (RocksDB's default
/// for that reason); under uniformly random writes every file overlaps about as much and
/// it saved nothing measured (`Options::compaction_priority`). A file overlapping nothing
/// moves down without a rewrite. Deletions do not weigh a file here (RocksDB's compensated
/// size does).
fn least_overlapping<'f>(version: &Version, level: usize, files: &[&'f Arc<FileMeta>]) -> Option<&'f Arc<FileMeta>> {
    let below = version.runs(level + 1);
    // A leveled level below is one sorted run: each file's overlap is a range of it, found
    // by binary search, its bytes a difference of running sums. Anything else (a level
    // being reshaped) is measured file by file.
    let overlap: Box<dyn Fn(&FileMeta) -> u64> = match below {
        [run] => {
            let mut sums = Vec::with_capacity(run.files.len() + 1);
            sums.push(0u64);
            for f in &run.files {
                sums.push(sums.last().copied().unwrap_or(0).saturating_add(f.data_bytes));
            }
            Box::new(move |f: &FileMeta| {
                let from = run.files.partition_point(|b| b.largest_user_key() < f.smallest_user_key());
                let to = run.files.partition_point(|b| b.smallest_user_key() <= f.largest_user_key());
                let at = |i: usize| sums.get(i).copied().unwrap_or(0);
                at(to.max(from)) - at(from)
            })
        }
        _ => Box::new(|f: &FileMeta| overlap_bytes(version, level + 1, f.smallest_user_key(), f.largest_user_key())),
    };
    let mut best: Option<(&'f Arc<FileMeta>, u64)> = None;
    for &f in files {
        let o = overlap(f);
        // o / size < best_o / best_size, in integers.
        let better = best.is_none_or(|(b, best_o)| {
            u128::from(o) * u128::from(b.data_bytes.max(1)) < u128::from(best_o) * u128::from(f.data_bytes.max(1))
        });
        if better {
            best = Some((f, o));
        }
    }
    best.map(|(f, _)| f)
}

/// Every L0 file merged with the L1 files their key span overlaps.
fn l0_into_l1(version: &Version) -> Compaction {
    let l0: Vec<CompactionInput> =
        version.levels[0].runs.iter().map(|r| CompactionInput { level: 0, files: r.files.clone() }).collect();
    let (lo, hi) = user_key_span(l0.iter().flat_map(|i| i.files.iter()));
    let mut inputs = l0;
    let below = version.overlapping(1, &lo, &hi);
    if !below.is_empty() {
        inputs.push(CompactionInput { level: 1, files: below });
    }
    Compaction { inputs, output_level: 1, choice: merge_into_level_run() }
}

/// File `chosen` of leveled `level >= 1` merged with the files of the next level it
/// overlaps, or moved down when it overlaps none there.
fn file_into_next_level(version: &Version, opts: &Options, level: usize, chosen: Arc<FileMeta>) -> Compaction {
    let (lo, hi) = (chosen.smallest_user_key(), chosen.largest_user_key());
    let below = version.overlapping(level + 1, lo, hi);
    // A file moved down keeps its key range: below its new level it must overlap no more
    // than a file the compaction would write (LevelDB's `IsTrivialMove`).
    let movable = below.is_empty() && overlap_bytes(version, level + 2, lo, hi) <= opts.max_grandparent_overlap_bytes();
    let choice = if movable { CompactionChoice::Move } else { merge_into_level_run() };
    let mut inputs = vec![CompactionInput { level, files: vec![chosen] }];
    if !below.is_empty() {
        inputs.push(CompactionInput { level: level + 1, files: below });
    }
    Compaction { inputs, output_level: level + 1, choice }
}

/// A leveled merge: the outputs join the output level's one run.
fn merge_into_level_run() -> CompactionChoice {
    CompactionChoice::Merge { output_run: OutputRun::Existing(LEVELED_RUN) }
}

/// All runs of `level` merged into one new run of `output_level`.
fn merge_level_runs(version: &Version, level: usize, output_level: usize) -> Compaction {
    let inputs = version.levels[level].runs.iter().map(|r| CompactionInput { level, files: r.files.clone() }).collect();
    Compaction { inputs, output_level, choice: CompactionChoice::Merge { output_run: OutputRun::New } }
}

/// The next step of a manual compaction of `level` into the next level (LevelDB's
/// `TEST_CompactRange`), `None` once the level is empty or when it is the last: leveled
/// L0 all at once into L1, a deeper level's first file with what it overlaps below (one
/// file at a time, as background compactions go: the files below a merge's inputs must be
/// contiguous, or an output would span files it did not replace); tiered, the level's
/// runs into a new run of the next.
#[cfg(feature = "lab")]
pub(crate) fn pick_level(version: &Version, opts: &Options, level: usize) -> Option<Compaction> {
    if level + 1 >= version.num_levels() {
        return None;
    }
    let first = version.runs(level).iter().flat_map(|r| r.files.iter()).next()?;
    Some(match (opts.compaction_style, level) {
        (CompactionStyle::Tiered, _) => merge_level_runs(version, level, level + 1),
        (CompactionStyle::Leveled, 0) => l0_into_l1(version),
        (CompactionStyle::Leveled, _) => file_into_next_level(version, opts, level, Arc::clone(first)),
    })
}

/// A full manual compaction: every file into one run of the deepest level that holds data
/// (at least L1).
pub(crate) fn pick_full(version: &Version, opts: &Options) -> Option<Compaction> {
    let inputs: Vec<CompactionInput> = version
        .levels
        .iter()
        .enumerate()
        .flat_map(|(level, l)| l.runs.iter().map(move |r| CompactionInput { level, files: r.files.clone() }))
        .filter(|i| !i.files.is_empty())
        .collect();
    if inputs.is_empty() {
        return None;
    }
    let output_level = inputs.iter().map(|i| i.level).max().unwrap_or(1).max(1);
    let output_run = match opts.compaction_style {
        CompactionStyle::Leveled => OutputRun::Existing(LEVELED_RUN),
        CompactionStyle::Tiered => OutputRun::New,
    };
    Some(Compaction { inputs, output_level, choice: CompactionChoice::Merge { output_run } })
}

/// The smallest and largest user keys over `files`.
fn user_key_span<'a>(files: impl Iterator<Item = &'a Arc<FileMeta>>) -> (Vec<u8>, Vec<u8>) {
    let mut lo: Option<&[u8]> = None;
    let mut hi: Option<&[u8]> = None;
    for f in files {
        let (s, l) = (crate::key::user_key(&f.smallest), crate::key::user_key(&f.largest));
        lo = Some(lo.map_or(s, |x| x.min(s)));
        hi = Some(hi.map_or(l, |x| x.max(l)));
    }
    (lo.unwrap_or_default().to_vec(), hi.unwrap_or_default().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};
    use crate::version::Run;

    fn file(number: u64, lo: &[u8], hi: &[u8]) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            number,
            size: 1000,
            data_bytes: 1000,
            smallest: internal_key(lo, 2, ValueKind::Put),
            largest: internal_key(hi, 1, ValueKind::Put),
            entries: 10,
            ..FileMeta::default()
        })
    }

    /// A version whose L1 is over its target, with `l2` below it.
    fn over_l1(l2: Vec<Arc<FileMeta>>) -> Version {
        let mut v = Version::new(4);
        v.levels[1].runs = vec![Run::new(LEVELED_RUN, vec![file(1, b"a", b"c"), file(2, b"d", b"f")])];
        v.levels[2].runs = vec![Run::new(LEVELED_RUN, l2)];
        v
    }

    #[test]
    fn a_file_overlapping_nothing_below_moves_and_one_overlapping_something_merges_into_the_level_run() {
        let opts = Options { num_levels: 4, max_bytes_for_level_base: 1500, ..Options::default() };
        let mut cursor = vec![Vec::new(); 4];
        let c = pick(&over_l1(vec![file(3, b"x", b"z")]), &opts, &mut cursor).expect("L1 is over its target");
        assert_eq!((c.choice, c.output_level, c.input_files().count()), (CompactionChoice::Move, 2, 1));
        let mut cursor = vec![Vec::new(); 4];
        let l2 = vec![file(3, b"b", b"b"), file(4, b"e", b"e")];
        let c = pick(&over_l1(l2), &opts, &mut cursor).expect("L1 is over its target");
        assert_eq!(c.choice, CompactionChoice::Merge { output_run: OutputRun::Existing(LEVELED_RUN) });
        assert_eq!(c.input_files().count(), 2);
    }

    /// L1: "a".."c", "d".."f", "g".."i" (1000 bytes each); L2 below them: 3000, 1000 and
    /// 2000 bytes.
    fn uneven_overlap() -> Version {
        let mut v = Version::new(4);
        v.levels[1].runs =
            vec![Run::new(LEVELED_RUN, vec![file(1, b"a", b"c"), file(2, b"d", b"f"), file(3, b"g", b"i")])];
        let l2 = [(10, b"a"), (11, b"b"), (12, b"c"), (13, b"e"), (14, b"g"), (15, b"h")];
        v.levels[2].runs = vec![Run::new(LEVELED_RUN, l2.iter().map(|&(n, k)| file(n, k, k)).collect())];
        v
    }

    #[test]
    fn the_file_overlapping_least_below_compacts_first_and_round_robin_walks_in_key_order() {
        let v = uneven_overlap();
        let opts = Options {
            num_levels: 4,
            max_bytes_for_level_base: 1500,
            compaction_priority: CompactionPriority::MinOverlappingRatio,
            ..Options::default()
        };
        let numbers = |c: &Compaction| c.input_files().map(|(_, f)| f.number).collect::<Vec<_>>();
        let mut cursor = vec![Vec::new(); 4];
        let c = pick(&v, &opts, &mut cursor).expect("L1 is over its target");
        assert_eq!(numbers(&c), vec![2, 13], "file 2 rewrites 1000 bytes below, files 1 and 3 more");
        // A larger file with the same overlap has the lower ratio.
        let mut bigger = uneven_overlap();
        let mut big = (*bigger.levels[1].runs[0].files[2]).clone();
        big.data_bytes = 3000;
        bigger.levels[1].runs[0].files[2] = Arc::new(big);
        let c = pick(&bigger, &opts, &mut vec![Vec::new(); 4]).expect("L1 is over its target");
        assert_eq!(numbers(&c), vec![3, 14, 15], "2000 bytes below per 3000 of its own");

        let rr = Options { compaction_priority: CompactionPriority::RoundRobin, ..opts };
        let mut cursor = vec![Vec::new(); 4];
        let firsts: Vec<u64> = (0..4).map(|_| numbers(&pick(&v, &rr, &mut cursor).expect("over"))[0]).collect();
        assert_eq!(firsts, vec![1, 2, 3, 1]);
    }

    #[test]
    fn a_file_overlapping_nothing_below_but_too_much_two_levels_down_is_rewritten_not_moved() {
        let opts = Options { num_levels: 4, max_bytes_for_level_base: 1500, ..Options::default() };
        let mut v = over_l1(vec![file(3, b"x", b"z")]);
        // File 1 ("a".."c") overlaps nothing in L2 and three 1000-byte files of L3.
        v.levels[3].runs =
            vec![Run::new(LEVELED_RUN, vec![file(4, b"a", b"a"), file(5, b"b", b"b"), file(6, b"c", b"c")])];
        let pick_with = |factor: u32, target: u64| {
            let opts = Options { max_grandparent_overlap_factor: factor, target_file_size: target, ..opts.clone() };
            pick(&v, &opts, &mut vec![Vec::new(); 4]).expect("L1 is over its target")
        };
        assert_eq!(pick_with(3, 1000).choice, CompactionChoice::Move);
        let c = pick_with(2, 1000);
        assert_eq!(c.choice, CompactionChoice::Merge { output_run: OutputRun::Existing(LEVELED_RUN) });
        assert_eq!((c.output_level, c.input_files().count()), (2, 1));
    }

    #[test]
    fn tiered_merges_make_a_new_run() {
        let opts = Options { num_levels: 4, compaction_style: CompactionStyle::Tiered, ..Options::default() };
        let mut v = Version::new(4);
        v.levels[0].runs =
            (1..=opts.level0_compaction_trigger as u64).map(|n| Run::new(n, vec![file(n, b"a", b"z")])).collect();
        let c = pick(&v, &opts, &mut vec![Vec::new(); 4]).expect("L0 is full");
        assert_eq!(c.choice, CompactionChoice::Merge { output_run: OutputRun::New });
        let full = pick_full(&v, &opts).expect("there are files");
        assert_eq!(full.choice, CompactionChoice::Merge { output_run: OutputRun::New });
    }
}
