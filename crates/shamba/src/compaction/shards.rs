//! Where a large compaction splits into subcompactions (RocksDB's `max_subcompactions`):
//! user-key ranges merged side by side on threads of their own, each writing its own
//! output files, installed together as the one compaction they are.
//!
//! A writer slowed for a full L0 waits on one merge, L0 into L1 (every L0 file and what
//! they span below), run by one thread; split, that merge can use the cores the writer is
//! not using while it waits.
//!
//! The split points are the first keys of files of the input run with the most files (for
//! a leveled merge, the level below's), chosen so the shards hold about equal bytes of that
//! run: its files are disjoint and cut by size, so their boundaries spread with the data.
//! Every version of a user key stays in one shard (a shard is a range of user keys), so
//! what the merge keeps or drops is decided as it would be unsplit.

use super::Compaction;
use crate::options::Options;

/// The user keys where the shards of `c` begin, past the first shard's (which begins at
/// the first input key): empty when the compaction runs as one merge, because
/// subcompactions are off, the merge is too small to gain from a thread of its own (under
/// four output files), or its widest run holds too few files to cut at.
pub(crate) fn shard_starts(c: &Compaction, opts: &Options) -> Vec<Vec<u8>> {
    let shards = opts.max_subcompactions.max(1) as u64;
    // Data bytes, as outputs are cut: filters must not change where a tree's files end.
    let input_data: u64 = c.input_files().map(|(_, f)| f.data_bytes).sum();
    if shards == 1 || input_data < 4 * opts.target_file_size {
        return Vec::new();
    }
    let Some(widest) = c.inputs.iter().max_by_key(|i| i.files.len()) else { return Vec::new() };
    let total: u64 = widest.files.iter().map(|f| f.data_bytes).sum();
    let mut starts: Vec<Vec<u8>> = Vec::new();
    let mut before = 0u64;
    for f in &widest.files {
        // The next shard begins at the first file past its share of the run's bytes.
        let next_shard = starts.len() as u64 + 1;
        if next_shard < shards
            && before > 0
            && u128::from(before) * u128::from(shards) >= u128::from(total) * u128::from(next_shard)
        {
            starts.push(f.smallest_user_key().to_vec());
        }
        before += f.data_bytes;
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::{CompactionChoice, CompactionInput, OutputRun, LEVELED_RUN};
    use crate::key::{internal_key, ValueKind};
    use crate::version::FileMeta;
    use std::sync::Arc;

    fn file(number: u64, lo: &[u8], hi: &[u8], bytes: u64) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            number,
            size: bytes,
            data_bytes: bytes,
            smallest: internal_key(lo, 2, ValueKind::Put),
            largest: internal_key(hi, 1, ValueKind::Put),
            ..FileMeta::default()
        })
    }

    /// An L0 file over everything into six L1 files of `sizes` bytes ("b".."c", "d".."e", ...).
    fn l0_into_l1(sizes: [u64; 6]) -> Compaction {
        let l1 = sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let c = b'b' + 2 * i as u8;
                file(10 + i as u64, &[c], &[c + 1], s)
            })
            .collect();
        Compaction {
            inputs: vec![
                CompactionInput { level: 0, files: vec![file(1, b"a", b"z", 100)] },
                CompactionInput { level: 1, files: l1 },
            ],
            output_level: 1,
            choice: CompactionChoice::Merge { output_run: OutputRun::Existing(LEVELED_RUN) },
        }
    }

    fn opts(shards: usize) -> Options {
        Options { max_subcompactions: shards, target_file_size: 100, ..Options::default() }
    }

    #[test]
    fn shards_start_at_files_of_the_widest_run_holding_equal_bytes() {
        let even = l0_into_l1([100; 6]);
        assert_eq!(shard_starts(&even, &opts(2)), vec![b"h".to_vec()]);
        assert_eq!(shard_starts(&even, &opts(3)), vec![b"f".to_vec(), b"j".to_vec()]);
        // Half the bytes are in the first file: the second shard starts right after it.
        let skewed = l0_into_l1([500, 100, 100, 100, 100, 100]);
        assert_eq!(shard_starts(&skewed, &opts(2)), vec![b"d".to_vec()]);
        // More shards than files: one per file at most, each starting at a file.
        assert_eq!(shard_starts(&even, &opts(16)).len(), 5);
    }

    #[test]
    fn a_small_merge_or_subcompactions_off_run_as_one() {
        let c = l0_into_l1([100; 6]);
        assert!(shard_starts(&c, &opts(1)).is_empty());
        let big_files = Options { target_file_size: 1000, ..opts(2) };
        assert!(shard_starts(&c, &big_files).is_empty(), "700 bytes in: under four outputs of 1000");
    }
}
