//! Where a compaction cuts its outputs for the level below them: the overlap bound.
//!
//! A file of level L is compacted later by merging it with every file of level L+1 its key
//! range overlaps. Cut by size only, a file holding a few keys spread over the key space
//! overlaps all of L+1, and its compaction rewrites that whole level for those few keys.
//! So a compaction into level L also walks the files of L+1 (the "grandparents" of its
//! inputs, in LevelDB's words) alongside its output keys, and starts a new output file once
//! the current one has passed over more than `Options::max_grandparent_overlap_bytes` of
//! them (LevelDB's `Compaction::ShouldStopBefore`). An output then overlaps at most that
//! bound plus the one grandparent its last key falls in.

use crate::key::user_key;
use crate::options::{CompactionStyle, Options};
use crate::version::{FileMeta, Version};
use std::sync::Arc;

/// The files of the level below a compaction's output level, and how far the current
/// output file has walked over them.
pub(crate) struct GrandparentOverlap {
    /// The level's files, sorted by key and disjoint (a leveled level's one run).
    files: Vec<Arc<FileMeta>>,
    /// Bytes one output file may overlap.
    limit: u64,
    /// The first file whose largest key is not below the last key seen.
    next: usize,
    /// Data bytes of the files the current output has passed over entirely.
    overlapped: u64,
    /// Whether a key was seen: files before the first output key are not the first
    /// output's overlap.
    seen_key: bool,
}

impl GrandparentOverlap {
    /// The bound of a compaction into `output_level`, or `None` when it has none: tiered
    /// levels merge whole runs and never read the level below, and the last level has no
    /// level below.
    pub(crate) fn for_output_level(version: &Version, opts: &Options, output_level: usize) -> Option<Self> {
        if opts.compaction_style != CompactionStyle::Leveled {
            return None;
        }
        let [run] = version.runs(output_level + 1) else { return None };
        Some(GrandparentOverlap {
            files: run.files.clone(),
            limit: opts.max_grandparent_overlap_bytes(),
            next: 0,
            overlapped: 0,
            seen_key: false,
        })
    }

    /// Whether the current output file should end before user key `key` (called once per
    /// user key, with the first of its versions): it has passed over more grandparent bytes
    /// than the bound.
    pub(crate) fn should_stop_before(&mut self, key: &[u8]) -> bool {
        while let Some(f) = self.files.get(self.next) {
            if user_key(&f.largest) >= key {
                break;
            }
            if self.seen_key {
                self.overlapped = self.overlapped.saturating_add(f.data_bytes);
            }
            self.next += 1;
        }
        self.seen_key = true;
        self.overlapped > self.limit
    }

    /// A new output file starts (whatever cut the last one): it has passed over nothing.
    pub(crate) fn output_cut(&mut self) {
        self.overlapped = 0;
    }
}

/// Data bytes of the files of `level` that the user-key range `[smallest, largest]`
/// overlaps.
pub(crate) fn overlap_bytes(version: &Version, level: usize, smallest: &[u8], largest: &[u8]) -> u64 {
    version.overlapping(level, smallest, largest).iter().map(|f| f.data_bytes).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::LEVELED_RUN;
    use crate::key::{internal_key, ValueKind};
    use crate::version::Run;

    fn file(number: u64, lo: &[u8], hi: &[u8], data_bytes: u64) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            number,
            data_bytes,
            size: data_bytes,
            smallest: internal_key(lo, 1, ValueKind::Put),
            largest: internal_key(hi, 1, ValueKind::Put),
            ..FileMeta::default()
        })
    }

    /// L2 holds ten files of 100 bytes: "a0".."a9" .. "j0".."j9"; outputs go to L1.
    fn tracker(factor: u32) -> GrandparentOverlap {
        let mut v = Version::new(4);
        let files = (0..10u8)
            .map(|i| {
                let c = b'a' + i;
                file(u64::from(i) + 1, &[c, b'0'], &[c, b'9'], 100)
            })
            .collect();
        v.levels[2].runs = vec![Run::new(LEVELED_RUN, files)];
        let opts = Options { target_file_size: 100, max_grandparent_overlap_factor: factor, ..Options::default() };
        GrandparentOverlap::for_output_level(&v, &opts, 1).expect("a leveled level below")
    }

    #[test]
    fn an_output_is_cut_once_it_passed_over_more_than_the_bound() {
        let mut t = tracker(2);
        // Keys in a, b and c: the output passes over a and b (200 bytes, not over 2 * 100).
        assert!(!t.should_stop_before(b"a5"));
        assert!(!t.should_stop_before(b"b5"));
        assert!(!t.should_stop_before(b"c5"));
        // Past d too: 400 bytes, over the bound; the next output starts at zero.
        assert!(t.should_stop_before(b"e5"));
        t.output_cut();
        assert!(!t.should_stop_before(b"e6"));
        // One key far away passes over e..i at once.
        assert!(t.should_stop_before(b"j5"));
    }

    #[test]
    fn files_before_the_first_key_are_not_counted() {
        let mut t = tracker(1);
        assert!(!t.should_stop_before(b"h5"));
        assert!(!t.should_stop_before(b"i5"));
        assert!(t.should_stop_before(b"j5"));
    }

    #[test]
    fn tiered_levels_and_the_last_level_have_no_bound() {
        let v = Version::new(3);
        let tiered = Options { compaction_style: CompactionStyle::Tiered, ..Options::default() };
        assert!(GrandparentOverlap::for_output_level(&v, &tiered, 1).is_none());
        assert!(GrandparentOverlap::for_output_level(&v, &Options::default(), 2).is_none());
    }
}
