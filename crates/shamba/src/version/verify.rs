//! Checking a version for `Db::verify`: its shape against what the levels guarantee
//! (DESIGN.md, "Runs"), and each file's manifest record against what the file holds.
//!
//! The shape: every level's runs newest first (ids strictly descending); a level-0 run is
//! one flushed file, whose number is the run's id; a leveled level below 0 has at most one
//! run; in every run each file's smallest key is at or below its largest and the files are
//! sorted with disjoint user-key ranges (no user key in two files: compaction never splits
//! a key's versions); no file number appears twice. A version built by the version
//! builder already holds the run invariant; this checks it again on the version being
//! read, so a bug that broke it would be seen before a lookup misses a key.

use super::file_meta::FileMeta;
use super::tree::Version;
use crate::key::{compare_internal_keys, show_bytes, show_key};
use crate::verify_report::{FileContents, Problem, ProblemKind};
use std::cmp::Ordering;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Problems of `version`'s shape; `leveled` when levels 1+ hold one run each; `path_of`
/// names a file by number.
pub(crate) fn check_shape(version: &Version, leveled: bool, path_of: &dyn Fn(u64) -> PathBuf) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (level, l) in version.levels.iter().enumerate() {
        let location = format!("level {level}");
        let shape = |number: u64, expected: String, found: String| {
            Problem::new(ProblemKind::Shape, &path_of(number), None, location.clone(), expected, found)
        };
        for pair in l.runs.windows(2) {
            if let [newer, older] = pair {
                if newer.id <= older.id {
                    let first = older.files.first().map_or(0, |f| f.number);
                    let expected = "runs newest first (ids descending)".to_string();
                    out.push(shape(first, expected, format!("run {} before run {}", newer.id, older.id)));
                }
            }
        }
        if leveled && level > 0 && l.runs.len() > 1 {
            let first = l.runs.get(1).and_then(|r| r.files.first()).map_or(0, |f| f.number);
            out.push(shape(first, "one sorted run (leveled)".into(), format!("{} runs", l.runs.len())));
        }
        for run in &l.runs {
            if level == 0 {
                let numbers: Vec<u64> = run.files.iter().map(|f| f.number).collect();
                if numbers != [run.id] {
                    let first = numbers.first().copied().unwrap_or(run.id);
                    let expected = format!("run {} to be the one flushed file numbered {}", run.id, run.id);
                    out.push(shape(first, expected, format!("files {numbers:?}")));
                }
            }
            for f in &run.files {
                if !seen.insert(f.number) {
                    out.push(shape(f.number, "each file in one place".into(), format!("file {} again", f.number)));
                }
                if compare_internal_keys(&f.smallest, &f.largest) == Ordering::Greater {
                    let expected = format!("smallest key at or below largest {}", show_key(&f.largest));
                    out.push(key_order(&path_of(f.number), &location, expected, show_key(&f.smallest)));
                }
            }
            for pair in run.files.windows(2) {
                if let [a, b] = pair {
                    if a.largest_user_key() >= b.smallest_user_key() {
                        let expected = format!(
                            "a smallest user key after {} (the largest of file {}, before it in run {})",
                            show_bytes(a.largest_user_key()),
                            a.number,
                            run.id
                        );
                        out.push(key_order(&path_of(b.number), &location, expected, show_bytes(b.smallest_user_key())));
                    }
                }
            }
        }
    }
    out
}

fn key_order(path: &Path, location: &str, expected: String, found: String) -> Problem {
    Problem::new(ProblemKind::KeyOrder, path, None, location, expected, found)
}

/// Problems of one file's manifest record: its size against `size` on disk, and, when
/// the whole file could be walked, its entries and key range against `contents`.
pub(crate) fn check_record(meta: &FileMeta, path: &Path, size: u64, contents: Option<&FileContents>) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut mismatch = |what: &str, recorded: String, found: String| {
        let expected = format!("{what} {recorded} (manifest)");
        out.push(Problem::new(ProblemKind::Mismatch, path, None, "manifest record", expected, found));
    };
    if meta.size != size {
        mismatch("a size of", format!("{} bytes", meta.size), format!("{size} bytes on disk"));
    }
    if let Some(c) = contents {
        if meta.entries != c.entries {
            mismatch("entries", meta.entries.to_string(), format!("{} in the file", c.entries));
        }
        if meta.smallest != c.smallest {
            mismatch("smallest key", show_key(&meta.smallest), format!("{} in the file", show_key(&c.smallest)));
        }
        if meta.largest != c.largest {
            mismatch("largest key", show_key(&meta.largest), format!("{} in the file", show_key(&c.largest)));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::super::file_meta::tests::file;
    use super::super::run::Run;
    use super::*;
    use std::sync::Arc;

    fn path_of(n: u64) -> PathBuf {
        PathBuf::from(format!("{n:06}.sst"))
    }

    fn problems(v: &Version, leveled: bool) -> Vec<(ProblemKind, PathBuf)> {
        check_shape(v, leveled, &path_of).into_iter().map(|p| (p.kind, p.file)).collect()
    }

    /// L0: runs 9 and 8, one file each; L1: one run of two disjoint files.
    fn sound() -> Version {
        let f = |n, run, lo: &[u8], hi: &[u8]| Arc::new(file(n, run, lo, hi));
        let mut v = Version::new(3);
        v.levels[0].runs = vec![Run::new(9, vec![f(9, 9, b"a", b"z")]), Run::new(8, vec![f(8, 8, b"c", b"f")])];
        v.levels[1].runs = vec![Run::new(0, vec![f(4, 0, b"a", b"d"), f(5, 0, b"e", b"k")])];
        v
    }

    #[test]
    fn a_sound_version_has_no_problems() {
        assert_eq!(problems(&sound(), true), vec![]);
    }

    #[test]
    fn overlapping_files_of_a_run_are_a_key_order_problem_naming_the_second() {
        let mut v = sound();
        // Built by hand: the version builder would refuse this edit.
        let files = &mut v.levels[1].runs[0].files;
        files[1] = Arc::new(file(5, 0, b"d", b"k"));
        assert_eq!(problems(&v, true), vec![(ProblemKind::KeyOrder, path_of(5))]);
    }

    #[test]
    fn runs_out_of_order_two_leveled_runs_and_a_shared_l0_run_are_shape_problems() {
        let mut v = sound();
        v.levels[0].runs.swap(0, 1);
        assert_eq!(problems(&v, true), vec![(ProblemKind::Shape, path_of(9))]);

        let mut v = sound();
        v.levels[1].runs.insert(0, Run::new(1, vec![Arc::new(file(6, 1, b"x", b"y"))]));
        assert_eq!(problems(&v, true), vec![(ProblemKind::Shape, path_of(4))]);
        assert_eq!(problems(&v, false), vec![], "tiered levels hold several runs");

        let mut v = sound();
        v.levels[0].runs[1].files.push(Arc::new(file(10, 8, b"g", b"h")));
        assert_eq!(problems(&v, true), vec![(ProblemKind::Shape, path_of(8))]);

        let mut v = sound();
        v.levels[2].runs = vec![Run::new(0, vec![Arc::new(file(4, 0, b"m", b"n"))])];
        assert_eq!(problems(&v, true), vec![(ProblemKind::Shape, path_of(4))]);
    }

    #[test]
    fn a_record_that_differs_from_its_file_is_a_mismatch() {
        let meta = file(4, 0, b"a", b"d");
        let contents = FileContents {
            size: meta.size,
            entries: meta.entries,
            smallest: meta.smallest.clone(),
            largest: meta.largest.clone(),
        };
        assert_eq!(check_record(&meta, &path_of(4), meta.size, Some(&contents)), vec![]);
        let other = FileContents { entries: meta.entries + 1, largest: file(4, 0, b"a", b"e").largest, ..contents };
        let found = check_record(&meta, &path_of(4), meta.size - 1, Some(&other));
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found.iter().all(|p| p.kind == ProblemKind::Mismatch && p.file == path_of(4)));
        assert!(found[0].found.contains("on disk"), "{}", found[0]);
    }
}
