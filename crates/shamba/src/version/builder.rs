//! Applying a [`VersionEdit`] to a [`Version`]: the only way a new version is made.
//!
//! Deletions are applied before additions, so one edit can move a file to another level
//! (delete at L, add the same number at L+1). An edit that deletes a file the version does
//! not hold, adds a number it already holds, names a level out of range, or breaks a run's
//! sorted-and-disjoint invariant is refused with a reason; the base version is untouched.

use super::edit::VersionEdit;
use super::run::Run;
use super::tree::Version;
use crate::range_del::RangeDels;
use std::collections::HashSet;
use std::sync::Arc;

/// The version `edit` makes of `base`, or why the edit is invalid.
pub(crate) fn apply(base: &Version, edit: &VersionEdit) -> Result<Version, String> {
    let mut v = base.clone();
    let num_levels = v.levels.len();
    for &(level, number) in &edit.deleted_files {
        let runs = v.levels.get_mut(level).map(|l| &mut l.runs);
        let Some(runs) = runs else {
            return Err(format!("deletes file {number} at level {level}, beyond the {num_levels} levels"));
        };
        let found = runs.iter_mut().find_map(|run| {
            let i = run.files.iter().position(|f| f.number == number)?;
            Some(run.files.remove(i))
        });
        if found.is_none() {
            return Err(format!("deletes file {number}, which is not at level {level}"));
        }
        runs.retain(|r| !r.files.is_empty());
    }
    let mut numbers: HashSet<u64> = v.file_numbers().collect();
    let mut touched: Vec<(usize, u64)> = Vec::new();
    for (level, meta) in &edit.new_files {
        let Some(l) = v.levels.get_mut(*level) else {
            return Err(format!("adds file {} at level {level}, beyond the {num_levels} levels", meta.number));
        };
        if !numbers.insert(meta.number) {
            return Err(format!("adds file {}, which the version already holds", meta.number));
        }
        // Runs are newest first: descending id.
        let at = l.runs.partition_point(|r| r.id > meta.run);
        if l.runs.get(at).is_none_or(|r| r.id != meta.run) {
            l.runs.insert(at, Run::new(meta.run, Vec::new()));
        }
        if let Some(run) = l.runs.get_mut(at) {
            let i = run.files.partition_point(|f| f.smallest_user_key() <= meta.smallest_user_key());
            run.files.insert(i, Arc::new(meta.clone()));
        }
        touched.push((*level, meta.run));
    }
    touched.sort_unstable();
    touched.dedup();
    for (level, run_id) in touched {
        let run = v.runs(level).iter().find(|r| r.id == run_id);
        if let Some(run) = run {
            run.check_sorted_and_disjoint().map_err(|e| format!("level {level}: {e}"))?;
        }
    }
    if !edit.range_dels.is_empty() || !edit.dropped_range_dels.is_empty() {
        let mut list = v.range_dels.list.clone();
        for seq in &edit.dropped_range_dels {
            let Some(i) = list.iter().position(|t| t.seq == *seq) else {
                return Err(format!("drops range delete {seq}, which the version does not hold"));
            };
            list.remove(i);
        }
        for t in &edit.range_dels {
            if list.iter().any(|held| held.seq == t.seq) {
                return Err(format!("adds range delete {}, which the version already holds", t.seq));
            }
            list.push(t.clone());
        }
        v.range_dels = Arc::new(RangeDels::new(list));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::super::file_meta::tests::file;
    use super::*;

    fn add(level: usize, n: u64, run: u64, lo: &[u8], hi: &[u8]) -> VersionEdit {
        VersionEdit { new_files: vec![(level, file(n, run, lo, hi))], ..VersionEdit::default() }
    }

    fn shape(v: &Version) -> Vec<Vec<(u64, Vec<u64>)>> {
        v.levels
            .iter()
            .map(|l| l.runs.iter().map(|r| (r.id, r.files.iter().map(|f| f.number).collect())).collect())
            .collect()
    }

    #[test]
    fn flushes_become_l0_runs_newest_first_and_l1_files_stay_sorted() {
        let mut v = Version::new(3);
        for (n, lo, hi) in [(3, b"a", b"m"), (5, b"c", b"z"), (4, b"b", b"d")] {
            v = apply(&v, &add(0, n, n, lo, hi)).unwrap();
        }
        v = apply(&v, &add(1, 7, 1, b"m", b"p")).unwrap();
        v = apply(&v, &add(1, 6, 1, b"a", b"c")).unwrap();
        assert_eq!(shape(&v)[0], vec![(5, vec![5]), (4, vec![4]), (3, vec![3])]);
        assert_eq!(shape(&v)[1], vec![(1, vec![6, 7])]);
    }

    #[test]
    fn deletes_remove_files_and_empty_runs_and_a_file_can_move_down() {
        let mut v = apply(&Version::new(3), &add(0, 3, 3, b"a", b"m")).unwrap();
        v = apply(&v, &add(0, 4, 4, b"b", b"c")).unwrap();
        let mut mv = add(1, 3, 1, b"a", b"m");
        mv.deleted_files.push((0, 3));
        v = apply(&v, &mv).unwrap();
        assert_eq!(shape(&v), vec![vec![(4, vec![4])], vec![(1, vec![3])], vec![]]);
    }

    #[test]
    fn bad_edits_are_refused_not_panics() {
        let v = apply(&Version::new(2), &add(1, 3, 1, b"c", b"f")).unwrap();
        let del = |level, n| VersionEdit { deleted_files: vec![(level, n)], ..VersionEdit::default() };
        assert!(apply(&v, &del(1, 99)).unwrap_err().contains("99"));
        assert!(apply(&v, &del(0, 3)).is_err());
        assert!(apply(&v, &del(5, 3)).is_err());
        assert!(apply(&v, &add(1, 3, 1, b"x", b"y")).is_err(), "duplicate number");
        assert!(apply(&v, &add(2, 8, 1, b"x", b"y")).is_err(), "level out of range");
        assert!(apply(&v, &add(1, 8, 1, b"a", b"c")).is_err(), "overlap sharing 'c'");
        assert!(apply(&v, &add(1, 8, 1, b"z", b"a")).is_err(), "inverted range");
        assert!(apply(&v, &add(1, 8, 2, b"a", b"c")).is_ok(), "a second, newer run may overlap");
    }
}
