//! Compaction: picking what to merge ([`picker`]), merging cursors ([`MergingCursor`],
//! [`RunCursor`]), the job that writes the merged output ([`job`]), where it cuts output
//! files for the level below them ([`grandparents`]), and the check of every table written
//! before it is installed ([`output_check`]), the thread that syncs each table while the
//! merge writes the next ([`output_sync`]), and where a large merge splits into ranges
//! merged side by side ([`shards`]).

mod grandparents;
pub(crate) mod job;
mod merging_cursor;
mod output_check;
mod output_sync;
pub(crate) mod picker;
mod range_dels;
mod run_cursor;
mod shards;

pub(crate) use merging_cursor::MergingCursor;
pub(crate) use range_dels::collectable_range_dels;
pub(crate) use run_cursor::RunCursor;

use crate::version::FileMeta;
use std::sync::Arc;

/// One sorted run of input files at a level.
#[derive(Debug, Clone)]
pub(crate) struct CompactionInput {
    /// The level the files are in.
    pub level: usize,
    /// Disjoint files sorted by key.
    pub files: Vec<Arc<FileMeta>>,
}

/// A compaction chosen by the picker.
#[derive(Debug, Clone)]
pub(crate) struct Compaction {
    /// Input runs, newest first.
    pub inputs: Vec<CompactionInput>,
    /// Level the output goes to.
    pub output_level: usize,
    /// What becomes of the inputs.
    pub choice: CompactionChoice,
}

/// What the picker decided to do with a compaction's inputs.
///
/// There is no "drop" choice: nothing the picker sees (no TTL, no deleted range) makes a
/// whole file dead without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CompactionChoice {
    /// Move the single input file to the output level without rewriting it (leveled: it
    /// overlaps nothing there).
    Move,
    /// Merge the inputs into new files of the output level.
    Merge {
        /// The run the new files join.
        output_run: OutputRun,
    },
}

/// The run a merge's outputs join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputRun {
    /// An existing run of the output level, by id (leveled L1+: [`LEVELED_RUN`]).
    Existing(u64),
    /// A new run (tiered), its id a fresh file number.
    New,
}

impl Compaction {
    /// Every input file with its level.
    pub(crate) fn input_files(&self) -> impl Iterator<Item = (usize, &Arc<FileMeta>)> {
        self.inputs.iter().flat_map(|i| i.files.iter().map(move |f| (i.level, f)))
    }

    /// Total bytes of input files.
    pub(crate) fn input_bytes(&self) -> u64 {
        self.input_files().map(|(_, f)| f.size).sum()
    }
}

/// The run id of every leveled L1+ level: one run per level.
pub(crate) const LEVELED_RUN: u64 = 0;
