//! Compaction: picking what to merge ([`picker`]), merging cursors ([`MergingCursor`],
//! [`RunCursor`]), and the job that writes the merged output ([`job`]).

pub mod job;
mod merging_cursor;
pub mod picker;
mod run_cursor;

pub use merging_cursor::MergingCursor;
pub use run_cursor::RunCursor;

use crate::version::FileMeta;
use std::sync::Arc;

/// One sorted run of input files at a level.
#[derive(Debug, Clone)]
pub struct CompactionInput {
    /// The level the files are in.
    pub level: usize,
    /// Disjoint files sorted by key.
    pub files: Vec<Arc<FileMeta>>,
}

/// A compaction chosen by the picker.
#[derive(Debug, Clone)]
pub struct Compaction {
    /// Input runs, newest first.
    pub inputs: Vec<CompactionInput>,
    /// Level the output goes to.
    pub output_level: usize,
    /// Run the outputs join: `Some(id)` for an existing run, `None` for a new run.
    pub output_run: Option<u64>,
    /// Move the single input file to the output level without rewriting it.
    pub trivial_move: bool,
}

impl Compaction {
    /// Every input file with its level.
    pub fn input_files(&self) -> impl Iterator<Item = (usize, &Arc<FileMeta>)> {
        self.inputs.iter().flat_map(|i| i.files.iter().map(move |f| (i.level, f)))
    }

    /// Total bytes of input files.
    pub fn input_bytes(&self) -> u64 {
        self.input_files().map(|(_, f)| f.size).sum()
    }
}

/// The run id of every leveled L1+ level: one run per level.
pub const LEVELED_RUN: u64 = 0;
