//! [`VersionSet`]: the current version, the versions readers still hold, the counters
//! (file numbers, sequence, WAL number) and the manifest that makes them durable.
//!
//! Every change goes through [`VersionSet::log_and_apply`]: the edit is validated against
//! the current version, appended to the manifest and synced, and only then installed. If
//! writing the manifest fails, nothing is installed and the manifest is abandoned (its tail
//! may be torn; appending after it would look like damage in the middle), so the next edit
//! starts a fresh manifest with a snapshot. The manifest is also rolled over to a fresh
//! snapshot when it grows past [`DEFAULT_MANIFEST_LIMIT`], and after every recovery.

#![deny(clippy::indexing_slicing)]

use super::builder::apply;
use super::edit::VersionEdit;
use super::manifest::{manifest_path, read_current, set_current, write_manifest, CURRENT};
use super::tree::Version;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::key::SeqNo;
use crate::options::WalRecovery;
use crate::wal::{read_log_report, LogWriter};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

/// Manifest size past which the next edit rolls over to a new manifest.
pub(super) const DEFAULT_MANIFEST_LIMIT: u64 = 64 << 20;

/// What recovery read from the manifest.
#[derive(Debug, Clone)]
#[cfg_attr(not(test), expect(dead_code, reason = "what recovery read, checked by the version tests"))]
pub(crate) struct RecoveredState {
    /// WALs with numbers `>= log_number` must be replayed.
    pub log_number: u64,
    /// Last sequence number recorded in the manifest; WAL replay continues from here.
    pub last_sequence: SeqNo,
    /// Next file number to allocate (already past the new manifest's number).
    pub next_file_number: u64,
    /// Whether a torn tail of the manifest was dropped (a crash during an edit).
    pub dropped_manifest_tail: bool,
}

/// The chain of versions and the manifest that records it.
///
/// Not internally synchronised: the database keeps it behind its mutex. Readers take
/// [`current`](Self::current) (an `Arc`) and need no lock afterwards.
pub(crate) struct VersionSet {
    storage: Arc<dyn Storage>,
    dir: PathBuf,
    current: Arc<Version>,
    /// Every version installed and maybe still held by a reader; dead ones are pruned.
    installed: Vec<Weak<Version>>,
    /// The live manifest; `None` after a failed write, so the next edit starts a new one.
    manifest: Option<LogWriter>,
    manifest_number: u64,
    /// Manifests `CURRENT` may name after a failed switch; kept out of garbage collection.
    uncertain_manifests: Vec<u64>,
    manifest_limit: u64,
    next_file_number: u64,
    last_sequence: SeqNo,
    log_number: u64,
    /// Per level, where the next leveled compaction starts (an internal key).
    compact_pointers: Vec<Option<Vec<u8>>>,
}

impl VersionSet {
    /// Create a new, empty database's manifest and CURRENT in `dir` (creating `dir`).
    /// Refuses if `dir` already has a CURRENT.
    pub(crate) fn create(storage: Arc<dyn Storage>, dir: &Path, num_levels: usize) -> Result<VersionSet> {
        storage.create_dir_all(dir)?;
        if storage.exists(&dir.join(CURRENT)) {
            return Err(Error::InvalidArgument(format!("a database already exists in {}", dir.display())));
        }
        let mut set = VersionSet::empty(storage, dir, num_levels);
        set.roll_manifest(&Version::new(num_levels))?;
        Ok(set)
    }

    /// Recover from CURRENT and the manifest it names, then start a fresh manifest.
    ///
    /// A torn tail of the manifest (a crash while logging an edit) is dropped; any other
    /// damage, or an edit that does not apply, is `Error::Corruption` naming the manifest.
    /// A missing CURRENT is the `Error::Io` of the storage (`NotFound`: no database here);
    /// a CURRENT naming a missing manifest is corruption. Files at a level `>= num_levels`
    /// are `Error::InvalidOptions`.
    pub(crate) fn recover(
        storage: Arc<dyn Storage>,
        dir: &Path,
        num_levels: usize,
    ) -> Result<(VersionSet, RecoveredState)> {
        let (mut set, version, dropped_manifest_tail) = VersionSet::replay(storage, dir, num_levels)?;
        set.roll_manifest(&version)?;
        set.install(version);
        let state = RecoveredState {
            log_number: set.log_number,
            last_sequence: set.last_sequence,
            next_file_number: set.next_file_number,
            dropped_manifest_tail,
        };
        Ok((set, state))
    }

    /// The version CURRENT's manifest records and the oldest log it still needs, read
    /// without writing anything (no new manifest, unlike [`recover`](Self::recover)): what
    /// `Db::verify_dir` checks. Errors as for `recover`.
    pub(crate) fn read_only(storage: Arc<dyn Storage>, dir: &Path, num_levels: usize) -> Result<(Version, u64)> {
        let (set, version, _) = VersionSet::replay(storage, dir, num_levels)?;
        Ok((version, set.log_number))
    }

    /// Read CURRENT and replay its manifest: the counters (in a set with no manifest open),
    /// the version, and whether a torn tail was dropped.
    fn replay(storage: Arc<dyn Storage>, dir: &Path, num_levels: usize) -> Result<(VersionSet, Version, bool)> {
        let number = read_current(storage.as_ref(), dir)?;
        let path = manifest_path(dir, number);
        let bytes = storage.read_all(&path).map_err(|e| match e {
            Error::Io(io) if io.kind() == std::io::ErrorKind::NotFound => {
                Error::corruption(&path, None, format!("{CURRENT} names a manifest that does not exist"))
            }
            other => other,
        })?;
        let replay = read_log_report(&bytes, &path, WalRecovery::TolerateTornTail)?;
        let mut set = VersionSet::empty(storage, dir, num_levels);
        let mut version = Version::new(num_levels);
        let (mut log_number, mut next_file, mut last_seq) = (None, None, None);
        for record in &replay.records {
            let bad = |reason: String| Error::corruption(&path, Some(record.offset), reason);
            let edit = VersionEdit::decode(&record.data).map_err(|e| bad(format!("bad version edit: {e}")))?;
            if let Some((level, meta)) = edit.new_files.iter().find(|(l, _)| *l >= num_levels) {
                return Err(Error::InvalidOptions(format!(
                    "the database has file {} at level {level}, but num_levels is {num_levels}",
                    meta.number
                )));
            }
            version = apply(&version, &edit).map_err(|e| bad(format!("version edit does not apply: {e}")))?;
            log_number = edit.log_number.or(log_number);
            next_file = edit.next_file_number.or(next_file);
            last_seq = edit.last_sequence.max(last_seq);
            set.note_compact_pointers(&edit);
        }
        let lacks = |what| Error::corruption(&path, None, format!("manifest records no {what}"));
        set.log_number = log_number.ok_or_else(|| lacks("log number"))?;
        set.last_sequence = last_seq.ok_or_else(|| lacks("last sequence"))?;
        let next_file = next_file.ok_or_else(|| lacks("next file number"))?;
        // Never hand out a number already on disk, whatever the manifest says.
        let highest = version.file_numbers().chain([number, set.log_number]).max().unwrap_or(0);
        set.next_file_number = next_file.max(highest.saturating_add(1));
        Ok((set, version, replay.dropped.is_some()))
    }

    fn empty(storage: Arc<dyn Storage>, dir: &Path, num_levels: usize) -> VersionSet {
        let current = Arc::new(Version::new(num_levels));
        VersionSet {
            storage,
            dir: dir.to_path_buf(),
            installed: vec![Arc::downgrade(&current)],
            current,
            manifest: None,
            manifest_number: 0,
            uncertain_manifests: Vec::new(),
            manifest_limit: DEFAULT_MANIFEST_LIMIT,
            next_file_number: 1,
            last_sequence: 0,
            log_number: 0,
            compact_pointers: vec![None; num_levels],
        }
    }

    /// The current version.
    pub(crate) fn current(&self) -> Arc<Version> {
        Arc::clone(&self.current)
    }

    /// Number of levels of every version.
    pub(crate) fn num_levels(&self) -> usize {
        self.current.num_levels()
    }

    /// Log `edit` to the manifest (synced) and install the version it produces.
    ///
    /// Fills in `next_file_number` and `last_sequence` from this set, and `log_number`
    /// unless the edit sets it (it may not go backwards). An edit that does not apply to the
    /// current version is `Error::InvalidArgument` and changes nothing; a failed manifest
    /// write is returned as is and installs nothing.
    ///
    /// After a write failure the edit may or may not be on disk: until a later call
    /// succeeds (it starts a fresh manifest), a crash could recover either version, so the
    /// caller must not delete the files the failed edit added. The simplest correct
    /// response is LevelDB's: treat the error as a background error and stop writing.
    pub(crate) fn log_and_apply(&mut self, mut edit: VersionEdit) -> Result<()> {
        match edit.log_number {
            Some(n) if n < self.log_number || n >= self.next_file_number => {
                return Err(Error::InvalidArgument(format!(
                    "log number {n} outside [{}, {})",
                    self.log_number, self.next_file_number
                )));
            }
            Some(_) => {}
            None => edit.log_number = Some(self.log_number),
        }
        if let Some((level, _)) = edit.compact_pointers.iter().find(|(l, _)| *l >= self.num_levels()) {
            return Err(Error::InvalidArgument(format!("compact pointer for level {level} beyond the tree")));
        }
        edit.next_file_number = Some(self.next_file_number);
        edit.last_sequence = Some(self.last_sequence);
        let version =
            apply(&self.current, &edit).map_err(|e| Error::InvalidArgument(format!("bad version edit: {e}")))?;

        let roll = self.manifest.as_ref().is_none_or(|m| m.len() >= self.manifest_limit);
        if roll {
            // The new manifest's snapshot already holds this edit's effect.
            let (log_number, pointers) = (self.log_number, self.compact_pointers.clone());
            self.log_number = edit.log_number.unwrap_or(log_number);
            self.note_compact_pointers(&edit);
            if let Err(e) = self.roll_manifest(&version) {
                self.log_number = log_number;
                self.compact_pointers = pointers;
                return Err(e);
            }
        } else if let Some(log) = self.manifest.as_mut() {
            let mut record = Vec::new();
            edit.encode(&mut record);
            if let Err(e) = log.add_record(&record).and_then(|()| log.sync()) {
                self.manifest = None;
                return Err(e);
            }
            self.log_number = edit.log_number.unwrap_or(self.log_number);
            self.note_compact_pointers(&edit);
        }
        self.install(version);
        Ok(())
    }

    /// After a failed manifest write, start a fresh manifest now (a snapshot of the current
    /// version) rather than at the next edit: once it is current, no manifest can name what
    /// the failed edit added. Nothing to do if no write failed since the last manifest began.
    pub(crate) fn restart_abandoned_manifest(&mut self) -> Result<()> {
        if self.manifest.is_some() {
            return Ok(());
        }
        let version = self.current.clone();
        self.roll_manifest(&version)
    }

    /// Start manifest number `next_file_number` with a snapshot of `version` and this
    /// set's counters, and point CURRENT at it.
    fn roll_manifest(&mut self, version: &Version) -> Result<()> {
        let number = self.new_file_number();
        let path = manifest_path(&self.dir, number);
        let snapshot = self.snapshot_edit(version);
        let log = match write_manifest(self.storage.as_ref(), &path, &snapshot) {
            Ok(log) => log,
            Err(e) => {
                // Nothing names this file yet; a failed removal only leaves garbage.
                let _ = self.storage.remove(&path);
                return Err(e);
            }
        };
        if let Err(e) = set_current(self.storage.as_ref(), &self.dir, number) {
            // CURRENT may now name either manifest: keep both until a switch succeeds.
            self.uncertain_manifests.push(number);
            self.manifest = None;
            return Err(e);
        }
        self.uncertain_manifests.clear();
        self.manifest = Some(log);
        self.manifest_number = number;
        Ok(())
    }

    /// The current version and counters for a checkpoint's manifest, recording
    /// `last_sequence`, and the manifest's number (allocated here, so never used by this
    /// database's own files). Returns the version too: its tables are the checkpoint's.
    pub(crate) fn checkpoint_manifest(&mut self, last_sequence: SeqNo) -> (u64, VersionEdit, Arc<Version>) {
        let number = self.new_file_number();
        let version = self.current.clone();
        let mut edit = self.snapshot_edit(&version);
        edit.last_sequence = Some(last_sequence.max(self.last_sequence));
        (number, edit, version)
    }

    /// An edit that rebuilds `version` and this set's counters from nothing.
    fn snapshot_edit(&self, version: &Version) -> VersionEdit {
        VersionEdit {
            log_number: Some(self.log_number),
            next_file_number: Some(self.next_file_number),
            last_sequence: Some(self.last_sequence),
            deleted_files: Vec::new(),
            new_files: version.all_files().map(|(level, f)| (level, f.as_ref().clone())).collect(),
            compact_pointers: (self.compact_pointers.iter().enumerate())
                .filter_map(|(level, k)| Some((level, k.clone()?)))
                .collect(),
            range_dels: version.range_dels.list.clone(),
            dropped_range_dels: Vec::new(),
        }
    }

    fn note_compact_pointers(&mut self, edit: &VersionEdit) {
        for (level, key) in &edit.compact_pointers {
            if let Some(slot) = self.compact_pointers.get_mut(*level) {
                *slot = Some(key.clone());
            }
        }
    }

    fn install(&mut self, version: Version) {
        let version = Arc::new(version);
        self.installed.retain(|w| w.strong_count() > 0);
        self.installed.push(Arc::downgrade(&version));
        self.current = version;
    }

    /// Allocate a file number (for a table, a WAL or a manifest).
    pub(crate) fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }

    /// Make sure a number found on disk (a WAL, say) is never allocated again.
    pub(crate) fn mark_file_number_used(&mut self, number: u64) {
        self.next_file_number = self.next_file_number.max(number.saturating_add(1));
    }

    /// The number the next [`new_file_number`](Self::new_file_number) returns.
    #[cfg(test)]
    pub(crate) fn next_file_number(&self) -> u64 {
        self.next_file_number
    }

    /// Last sequence number recorded.
    pub(crate) fn last_sequence(&self) -> SeqNo {
        self.last_sequence
    }

    /// Record the last sequence number (logged with the next edit). It never goes back.
    pub(crate) fn set_last_sequence(&mut self, seq: SeqNo) {
        self.last_sequence = self.last_sequence.max(seq);
    }

    /// WALs below this number are obsolete. Advanced by an edit's `log_number` (a flush
    /// sets it to the WAL of the oldest memtable still unflushed).
    pub(crate) fn log_number(&self) -> u64 {
        self.log_number
    }

    /// Where the next leveled compaction of `level` should start, if recorded.
    #[cfg(test)]
    pub(crate) fn compact_pointer(&self, level: usize) -> Option<&[u8]> {
        self.compact_pointers.get(level)?.as_deref()
    }

    /// File numbers referenced by any version still alive (current or held by readers),
    /// plus the live manifest (and any manifest CURRENT may name after a failed switch).
    pub(crate) fn live_files(&self) -> HashSet<u64> {
        let mut live: HashSet<u64> = self.current.file_numbers().collect();
        for v in self.installed.iter().filter_map(Weak::upgrade) {
            live.extend(v.file_numbers());
        }
        live.insert(self.manifest_number);
        live.extend(&self.uncertain_manifests);
        live
    }

    /// Path of the live manifest.
    #[cfg(test)]
    pub(crate) fn manifest_path(&self) -> PathBuf {
        manifest_path(&self.dir, self.manifest_number)
    }

    /// Number of the live manifest.
    #[cfg(test)]
    pub(crate) fn manifest_number(&self) -> u64 {
        self.manifest_number
    }

    /// Roll over to a new manifest once the live one reaches `bytes` (tests use a small
    /// limit to exercise rollover).
    #[cfg(test)]
    pub(crate) fn set_manifest_limit(&mut self, bytes: u64) {
        self.manifest_limit = bytes;
    }
}

impl std::fmt::Debug for VersionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VersionSet")
            .field("dir", &self.dir)
            .field("manifest_number", &self.manifest_number)
            .field("next_file_number", &self.next_file_number)
            .field("last_sequence", &self.last_sequence)
            .field("log_number", &self.log_number)
            .field("files", &self.current.total_files())
            .finish()
    }
}
