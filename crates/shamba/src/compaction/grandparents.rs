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
//!
//! Cut by size alone, an output ends wherever its bytes run out, in the middle of some
//! grandparent; its later merge into L+1 then rewrites that grandparent although only
//! part of it overlaps, and so does the merge of the next file, which starts in the same
//! grandparent: about one file more per merge than the output's key range needs (with
//! size ratio 10, a file overlaps 10 files below by its bytes and 11 by its edges). With
//! `Options::align_compaction_outputs`, an output that has reached part of its target size
//! ends at the next grandparent boundary instead: at half the target if no boundary came
//! before, 5 points more for each boundary it passed, at most 90% (RocksDB's
//! `level_compaction_dynamic_file_size`, whose thresholds these are: the more boundaries
//! an output passed, the likelier another comes before the target, so it waits for a
//! larger file). Its files are a little smaller; their edges fall between the files below.

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
    /// The output size from which a cut at a grandparent boundary is taken, by boundaries
    /// passed (`None`: outputs are not aligned).
    align_target: Option<u64>,
    /// Grandparent boundaries (file ends) the current output has passed.
    boundaries: u64,
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
            align_target: opts.align_compaction_outputs.then_some(opts.target_file_size),
            boundaries: 0,
        })
    }

    /// Whether the current output file, `output_bytes` long so far, should end before user
    /// key `key` (called once per user key, with the first of its versions): it has passed
    /// over more grandparent bytes than the bound, or `key` lies past a grandparent
    /// boundary and the output is large enough to end there.
    pub(crate) fn should_stop_before(&mut self, key: &[u8], output_bytes: u64) -> bool {
        let mut crossed = 0;
        while let Some(f) = self.files.get(self.next) {
            if user_key(&f.largest) >= key {
                break;
            }
            if self.seen_key {
                self.overlapped = self.overlapped.saturating_add(f.data_bytes);
                crossed += 1;
            }
            self.next += 1;
        }
        self.seen_key = true;
        if self.overlapped > self.limit {
            return true;
        }
        if crossed == 0 {
            return false;
        }
        let passed = self.boundaries;
        self.boundaries += crossed;
        self.align_target.is_some_and(|target| {
            let percent = 50 + (5 * passed).min(40);
            output_bytes > 0 && output_bytes >= target.div_ceil(100).saturating_mul(percent)
        })
    }

    /// A new output file starts (whatever cut the last one): it has passed over nothing.
    pub(crate) fn output_cut(&mut self) {
        self.overlapped = 0;
        self.boundaries = 0;
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
        tracker_with(factor, true)
    }

    fn tracker_with(factor: u32, align: bool) -> GrandparentOverlap {
        let mut v = Version::new(4);
        let files = (0..10u8)
            .map(|i| {
                let c = b'a' + i;
                file(u64::from(i) + 1, &[c, b'0'], &[c, b'9'], 100)
            })
            .collect();
        v.levels[2].runs = vec![Run::new(LEVELED_RUN, files)];
        let opts = Options {
            target_file_size: 100,
            max_grandparent_overlap_factor: factor,
            align_compaction_outputs: align,
            ..Options::default()
        };
        GrandparentOverlap::for_output_level(&v, &opts, 1).expect("a leveled level below")
    }

    #[test]
    fn an_output_is_cut_once_it_passed_over_more_than_the_bound() {
        let mut t = tracker(2);
        // Keys in a, b and c: the output passes over a and b (200 bytes, not over 2 * 100).
        assert!(!t.should_stop_before(b"a5", 0));
        assert!(!t.should_stop_before(b"b5", 0));
        assert!(!t.should_stop_before(b"c5", 0));
        // Past d too: 400 bytes, over the bound; the next output starts at zero.
        assert!(t.should_stop_before(b"e5", 0));
        t.output_cut();
        assert!(!t.should_stop_before(b"e6", 0));
        // One key far away passes over e..i at once.
        assert!(t.should_stop_before(b"j5", 0));
    }

    #[test]
    fn files_before_the_first_key_are_not_counted() {
        let mut t = tracker(1);
        assert!(!t.should_stop_before(b"h5", 0));
        assert!(!t.should_stop_before(b"i5", 0));
        assert!(t.should_stop_before(b"j5", 0));
    }

    #[test]
    fn an_output_past_half_its_target_ends_at_the_next_boundary() {
        let mut t = tracker(10);
        assert!(!t.should_stop_before(b"a5", 0));
        // Past a's end at 40 bytes: under half the target.
        assert!(!t.should_stop_before(b"b5", 40));
        // Inside b: no boundary, no cut, whatever the size short of the target.
        assert!(!t.should_stop_before(b"b6", 80));
        // Past b's end with one boundary behind: 55% of the target.
        assert!(t.should_stop_before(b"c5", 55));
        // A new output counts its boundaries from none.
        t.output_cut();
        assert!(!t.should_stop_before(b"c6", 10));
        assert!(t.should_stop_before(b"d5", 50));
    }

    #[test]
    fn the_size_an_aligned_cut_needs_stops_rising_at_90_percent() {
        // An output that passed eight boundaries while it was small, now at i5.
        let past_eight = || {
            let mut t = tracker(100);
            for key in [b"a5", b"b5", b"c5", b"d5", b"e5", b"f5", b"g5", b"h5", b"i5"] {
                assert!(!t.should_stop_before(key, 1));
            }
            t
        };
        let mut t = past_eight();
        assert!(!t.should_stop_before(b"i6", 95), "no boundary between i5 and i6");
        assert!(!past_eight().should_stop_before(b"j5", 89));
        assert!(t.should_stop_before(b"j5", 90));
    }

    #[test]
    fn unaligned_outputs_are_cut_only_by_the_bound() {
        let mut t = tracker_with(10, false);
        assert!(!t.should_stop_before(b"a5", 0));
        assert!(!t.should_stop_before(b"b5", 99));
        assert!(!t.should_stop_before(b"c5", 99));
    }

    #[test]
    fn tiered_levels_and_the_last_level_have_no_bound() {
        let v = Version::new(3);
        let tiered = Options { compaction_style: CompactionStyle::Tiered, ..Options::default() };
        assert!(GrandparentOverlap::for_output_level(&v, &tiered, 1).is_none());
        assert!(GrandparentOverlap::for_output_level(&v, &Options::default(), 2).is_none());
    }
}
