//! What flushes and compactions wrote into each level of one tree and read out of it, as
//! RocksDB's per-level compaction statistics count them: where a tree's write
//! amplification comes from, level by level.

use crate::compaction::Compaction;
use crate::stats::LevelStats;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Live counters of one level, counted as the level a job's output went into.
#[derive(Debug, Default)]
struct LevelIo {
    /// Bytes written into the level: flushes (level 0) and merges whose output is here.
    written: AtomicU64,
    /// Bytes of merges' inputs from the levels above this one (RocksDB's `Rn`).
    read_from_above: AtomicU64,
    /// Bytes of merges' inputs from this level itself (RocksDB's `Rnp1`).
    read_in_level: AtomicU64,
    /// Bytes of files moved down into the level without a rewrite.
    moved_in: AtomicU64,
}

/// The counters of every level of one tree.
#[derive(Debug)]
pub(crate) struct TreeLevelIo {
    levels: Vec<LevelIo>,
}

impl TreeLevelIo {
    pub(crate) fn new(num_levels: usize) -> TreeLevelIo {
        TreeLevelIo { levels: (0..num_levels).map(|_| LevelIo::default()).collect() }
    }

    /// A flush wrote `bytes` into level 0.
    pub(crate) fn flushed(&self, bytes: u64) {
        if let Some(l0) = self.levels.first() {
            l0.written.fetch_add(bytes, Relaxed);
        }
    }

    /// Merge `c` read its inputs and wrote `bytes_out` into its output level.
    pub(crate) fn merged(&self, c: &Compaction, bytes_out: u64) {
        let Some(out) = self.levels.get(c.output_level) else { return };
        out.written.fetch_add(bytes_out, Relaxed);
        for (level, f) in c.input_files() {
            let counter = if level == c.output_level { &out.read_in_level } else { &out.read_from_above };
            counter.fetch_add(f.size, Relaxed);
        }
    }

    /// Move `c` put its input files into its output level unchanged.
    pub(crate) fn moved(&self, c: &Compaction) {
        if let Some(out) = self.levels.get(c.output_level) {
            out.moved_in.fetch_add(c.input_bytes(), Relaxed);
        }
    }

    /// Copy the counters into `levels` (the tree's levels, in order).
    pub(crate) fn fill(&self, levels: &mut [LevelStats]) {
        for (stats, io) in levels.iter_mut().zip(&self.levels) {
            stats.bytes_written = io.written.load(Relaxed);
            stats.compaction_read_from_above = io.read_from_above.load(Relaxed);
            stats.compaction_read_in_level = io.read_in_level.load(Relaxed);
            stats.bytes_moved_in = io.moved_in.load(Relaxed);
        }
    }
}
