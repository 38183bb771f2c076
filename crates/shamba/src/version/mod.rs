//! Versions: which files make up the tree at one moment, the edits between versions, and
//! the manifest that logs the edits so a restart recovers the tree.

use crate::error::{DecodeError, Result};
use crate::io::Storage;
use crate::key::SeqNo;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Metadata of one SST file, as recorded in the manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct FileMeta {
    /// File number; the file is `{number:06}.sst`.
    pub number: u64,
    /// Sorted run this file belongs to (L0: its own number; leveled L1+: one run per level).
    pub run: u64,
    /// File size in bytes.
    pub size: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
    /// Number of entries.
    pub entries: u64,
    /// Smallest sequence number in the file.
    pub smallest_seq: SeqNo,
    /// Largest sequence number in the file.
    pub largest_seq: SeqNo,
    /// Bytes of filter blocks.
    pub filter_bytes: u64,
    /// Bytes of index blocks.
    pub index_bytes: u64,
}

/// A change from one version to the next, logged in the manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VersionEdit {
    /// WALs with a number below this are fully flushed.
    pub log_number: Option<u64>,
    /// Next file number to allocate.
    pub next_file_number: Option<u64>,
    /// Last sequence number used.
    pub last_sequence: Option<SeqNo>,
    /// Files removed: (level, file number).
    pub deleted_files: Vec<(usize, u64)>,
    /// Files added: (level, metadata).
    pub new_files: Vec<(usize, FileMeta)>,
}

impl VersionEdit {
    /// Append the encoding of this edit.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let _ = out;
        todo!()
    }
    /// Decode an edit; never panics on bad bytes.
    pub fn decode(bytes: &[u8]) -> Result<VersionEdit, DecodeError> {
        let _ = bytes;
        todo!()
    }
}

/// A sorted run: files with disjoint key ranges, sorted by smallest key.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Run id (larger = newer).
    pub id: u64,
    /// Files of the run, sorted by smallest key.
    pub files: Vec<Arc<FileMeta>>,
}

/// One level: its runs, newest first.
#[derive(Debug, Clone, Default)]
pub struct Level {
    /// Runs, newest first.
    pub runs: Vec<Run>,
}

/// An immutable set of files: the tree at one moment.
#[derive(Debug, Clone, Default)]
pub struct Version {
    /// Levels 0..num_levels.
    pub levels: Vec<Level>,
}

impl Version {
    /// Files that may hold `user_key`, in the order a lookup must visit them: level by
    /// level, runs newest first, at most one file per run.
    pub fn candidates<'a>(
        &'a self,
        user_key: &'a [u8],
    ) -> impl Iterator<Item = (usize, &'a Arc<FileMeta>)> + 'a {
        let _ = user_key;
        std::iter::empty()
    }
    /// Files of `level` overlapping the user-key range `[smallest, largest]`.
    pub fn overlapping(&self, level: usize, smallest: &[u8], largest: &[u8]) -> Vec<Arc<FileMeta>> {
        let _ = (level, smallest, largest);
        todo!()
    }
    /// Total bytes of a level.
    pub fn level_bytes(&self, level: usize) -> u64 {
        let _ = level;
        todo!()
    }
    /// Number of files of a level.
    pub fn level_files(&self, level: usize) -> usize {
        let _ = level;
        todo!()
    }
    /// Every file number of this version.
    pub fn file_numbers(&self) -> impl Iterator<Item = u64> + '_ {
        std::iter::empty()
    }
}

/// What recovery read from the manifest.
#[derive(Debug, Clone)]
pub struct RecoveredState {
    /// WALs with numbers `>= log_number` must be replayed.
    pub log_number: u64,
}

/// The chain of versions and the manifest that records it.
pub struct VersionSet {
    _todo: (),
}

impl VersionSet {
    /// Create a new, empty database's manifest and CURRENT in `dir`.
    pub fn create(storage: Arc<dyn Storage>, dir: &Path, num_levels: usize) -> Result<VersionSet> {
        let _ = (storage, dir, num_levels);
        todo!()
    }
    /// Recover from CURRENT and the manifest it names.
    pub fn recover(
        storage: Arc<dyn Storage>,
        dir: &Path,
        num_levels: usize,
    ) -> Result<(VersionSet, RecoveredState)> {
        let _ = (storage, dir, num_levels);
        todo!()
    }
    /// The current version.
    pub fn current(&self) -> Arc<Version> {
        todo!()
    }
    /// Log `edit` to the manifest (synced) and install the version it produces.
    pub fn log_and_apply(&mut self, edit: VersionEdit) -> Result<()> {
        let _ = edit;
        todo!()
    }
    /// Allocate a file number.
    pub fn new_file_number(&mut self) -> u64 {
        todo!()
    }
    /// Last sequence number recorded.
    pub fn last_sequence(&self) -> SeqNo {
        todo!()
    }
    /// Record the last sequence number (logged with the next edit).
    pub fn set_last_sequence(&mut self, seq: SeqNo) {
        let _ = seq;
        todo!()
    }
    /// WALs below this number are obsolete.
    pub fn log_number(&self) -> u64 {
        todo!()
    }
    /// File numbers referenced by any version still alive (current or held by readers),
    /// plus the live manifest.
    pub fn live_files(&self) -> HashSet<u64> {
        todo!()
    }
    /// Path of the live manifest.
    pub fn manifest_path(&self) -> PathBuf {
        todo!()
    }
}
