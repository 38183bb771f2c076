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
use super::edit::{KeyspaceRecord, VersionEdit, DEFAULT_KEYSPACE};
use super::manifest::{manifest_path, read_current, set_current, write_manifest, CURRENT};
use super::tree::Version;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::key::SeqNo;
use crate::options::WalRecovery;
use crate::wal::{read_log_report, LogWriter};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// Manifest size past which the next edit rolls over to a new manifest.
pub(super) const DEFAULT_MANIFEST_LIMIT: u64 = 64 << 20;

/// What recovery read from the manifest.
#[derive(Debug, Clone)]
#[cfg_attr(not(test), expect(dead_code, reason = "what recovery read, checked by the version tests"))]
pub(crate) struct RecoveredState {
    /// WALs with numbers `>= log_number` must be replayed (the oldest any keyspace needs).
    pub log_number: u64,
    /// Last sequence number recorded in the manifest; WAL replay continues from here.
    pub last_sequence: SeqNo,
    /// Next file number to allocate (already past the new manifest's number).
    pub next_file_number: u64,
    /// Whether a torn tail of the manifest was dropped (a crash during an edit).
    pub dropped_manifest_tail: bool,
}

/// A keyspace's id and its current version.
pub(crate) type KeyspaceVersion = (u32, Arc<Version>);

/// One keyspace's tree: its versions' head and what its edits carry.
#[derive(Clone)]
struct TreeState {
    /// How it was created; `None` for the default keyspace, which the options shape.
    record: Option<KeyspaceRecord>,
    current: Arc<Version>,
    /// WALs below this hold nothing of this keyspace that its tables do not.
    log_number: u64,
    /// Per level, where the next leveled compaction starts (an internal key).
    compact_pointers: Vec<Option<Vec<u8>>>,
}

impl TreeState {
    fn new(record: Option<KeyspaceRecord>, num_levels: usize) -> TreeState {
        TreeState {
            record,
            current: Arc::new(Version::new(num_levels)),
            log_number: 0,
            compact_pointers: vec![None; num_levels],
        }
    }

    fn note_compact_pointers(&mut self, edit: &VersionEdit) {
        for (level, key) in &edit.compact_pointers {
            if let Some(slot) = self.compact_pointers.get_mut(*level) {
                *slot = Some(key.clone());
            }
        }
    }
}

/// The keyspaces' trees after `edit`, whose version is `version`; errors name what does
/// not fit (a keyspace created twice, an edit of one that does not exist).
fn apply_to_trees(
    trees: &mut BTreeMap<u32, TreeState>,
    edit: &VersionEdit,
    num_levels: usize,
) -> std::result::Result<(), String> {
    let id = edit.keyspace;
    if let Some(record) = &edit.create_keyspace {
        if id == DEFAULT_KEYSPACE || trees.contains_key(&id) {
            return Err(format!("keyspace {id} ({}) is created twice", record.name));
        }
        trees.insert(id, TreeState::new(Some(record.clone()), num_levels));
    }
    let Some(tree) = trees.get_mut(&id) else {
        return Err(format!("an edit of keyspace {id}, which does not exist"));
    };
    if edit.drop_keyspace {
        if id == DEFAULT_KEYSPACE {
            return Err("the default keyspace is dropped".into());
        }
        trees.remove(&id);
        return Ok(());
    }
    tree.current = Arc::new(apply(&tree.current, edit)?);
    tree.log_number = edit.log_number.unwrap_or(tree.log_number);
    tree.note_compact_pointers(edit);
    Ok(())
}

/// The chain of versions of every keyspace, and the manifest that records it.
///
/// Not internally synchronised: the database keeps it behind its mutex. Readers take
/// [`current`](Self::current) (an `Arc`) and need no lock afterwards.
pub(crate) struct VersionSet {
    storage: Arc<dyn Storage>,
    dir: PathBuf,
    num_levels: usize,
    /// Every keyspace's tree, by id; the default one (id 0) always.
    trees: BTreeMap<u32, TreeState>,
    /// The id the next new keyspace gets.
    next_keyspace: u32,
    /// Every version installed and maybe still held by a reader; dead ones are pruned.
    installed: Vec<Weak<Version>>,
    /// The live manifest; `None` after a failed write, so the next edit starts a new one.
    manifest: Option<LogWriter>,
    manifest_number: u64,
    /// Manifests `CURRENT` may name after a failed switch; kept out of garbage collection.
    uncertain_manifests: Vec<u64>,
    manifest_limit: u64,
    next_file_number: FileNumbers,
    last_sequence: SeqNo,
}

/// The next file number, shared with the write path: a memtable switch takes its WAL's
/// number without the versions lock, which is held across a manifest's sync.
#[derive(Clone)]
pub(crate) struct FileNumbers(Arc<AtomicU64>);

impl FileNumbers {
    fn starting_at(n: u64) -> FileNumbers {
        FileNumbers(Arc::new(AtomicU64::new(n)))
    }

    /// Allocate a file number (for a table, a WAL or a manifest).
    pub(crate) fn take(&self) -> u64 {
        self.0.fetch_add(1, Ordering::AcqRel)
    }

    /// The number the next [`take`](Self::take) returns.
    fn peek(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// Never hand out `number` or anything below it again.
    fn past(&self, number: u64) {
        self.0.fetch_max(number.saturating_add(1), Ordering::AcqRel);
    }
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
        set.roll_manifest()?;
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
        let (mut set, dropped_manifest_tail) = VersionSet::replay(storage, dir, num_levels)?;
        set.roll_manifest()?;
        let state = RecoveredState {
            log_number: set.log_number(),
            last_sequence: set.last_sequence,
            next_file_number: set.next_file_number.peek(),
            dropped_manifest_tail,
        };
        Ok((set, state))
    }

    /// The versions CURRENT's manifest records, by keyspace id, and the oldest log any
    /// keyspace still needs, read without writing anything (no new manifest, unlike
    /// [`recover`](Self::recover)): what `Db::verify_dir` checks. Errors as for `recover`.
    pub(crate) fn read_only(
        storage: Arc<dyn Storage>,
        dir: &Path,
        num_levels: usize,
    ) -> Result<(Vec<KeyspaceVersion>, u64)> {
        let (set, _) = VersionSet::replay(storage, dir, num_levels)?;
        let versions = set.trees.iter().map(|(&id, t)| (id, t.current.clone())).collect();
        Ok((versions, set.log_number()))
    }

    /// Read CURRENT and replay its manifest: the trees and counters (in a set with no
    /// manifest open), and whether a torn tail was dropped.
    fn replay(storage: Arc<dyn Storage>, dir: &Path, num_levels: usize) -> Result<(VersionSet, bool)> {
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
        let (mut default_log_number, mut next_file, mut last_seq) = (None, None, None);
        for record in &replay.records {
            let bad = |reason: String| Error::corruption(&path, Some(record.offset), reason);
            let edit = VersionEdit::decode(&record.data).map_err(|e| bad(format!("bad version edit: {e}")))?;
            if let Some((level, meta)) = edit.new_files.iter().find(|(l, _)| *l >= num_levels) {
                return Err(Error::InvalidOptions(format!(
                    "the database has file {} at level {level}, but num_levels is {num_levels}",
                    meta.number
                )));
            }
            if edit.create_keyspace.is_some() && edit.log_number.is_none() {
                return Err(bad(format!("keyspace {} is created without a log number", edit.keyspace)));
            }
            apply_to_trees(&mut set.trees, &edit, num_levels)
                .map_err(|e| bad(format!("version edit does not apply: {e}")))?;
            if edit.keyspace == DEFAULT_KEYSPACE {
                default_log_number = edit.log_number.or(default_log_number);
            }
            if edit.create_keyspace.is_some() {
                set.next_keyspace = set.next_keyspace.max(edit.keyspace.saturating_add(1));
            }
            set.next_keyspace = set.next_keyspace.max(edit.next_keyspace.unwrap_or(0));
            next_file = edit.next_file_number.or(next_file);
            last_seq = edit.last_sequence.max(last_seq);
        }
        let lacks = |what| Error::corruption(&path, None, format!("manifest records no {what}"));
        default_log_number.ok_or_else(|| lacks("log number"))?;
        set.last_sequence = last_seq.ok_or_else(|| lacks("last sequence"))?;
        let next_file = next_file.ok_or_else(|| lacks("next file number"))?;
        // Never hand out a number already on disk, whatever the manifest says.
        let highest = (set.trees.values())
            .flat_map(|t| t.current.file_numbers().chain([t.log_number]))
            .chain([number])
            .max()
            .unwrap_or(0);
        set.next_file_number = FileNumbers::starting_at(next_file.max(highest.saturating_add(1)));
        let versions: Vec<Weak<Version>> = set.trees.values().map(|t| Arc::downgrade(&t.current)).collect();
        set.installed = versions;
        Ok((set, replay.dropped.is_some()))
    }

    fn empty(storage: Arc<dyn Storage>, dir: &Path, num_levels: usize) -> VersionSet {
        let default = TreeState::new(None, num_levels);
        VersionSet {
            storage,
            dir: dir.to_path_buf(),
            num_levels,
            installed: vec![Arc::downgrade(&default.current)],
            trees: BTreeMap::from([(DEFAULT_KEYSPACE, default)]),
            next_keyspace: DEFAULT_KEYSPACE + 1,
            manifest: None,
            manifest_number: 0,
            uncertain_manifests: Vec::new(),
            manifest_limit: DEFAULT_MANIFEST_LIMIT,
            next_file_number: FileNumbers::starting_at(1),
            last_sequence: 0,
        }
    }

    /// The current version of keyspace `keyspace`, or `None` if it does not exist (it was
    /// dropped).
    pub(crate) fn current(&self, keyspace: u32) -> Option<Arc<Version>> {
        self.trees.get(&keyspace).map(|t| Arc::clone(&t.current))
    }

    /// The current version of every keyspace, by id.
    pub(crate) fn all_current(&self) -> Vec<KeyspaceVersion> {
        self.trees.iter().map(|(&id, t)| (id, t.current.clone())).collect()
    }

    /// Every keyspace: its id and how it was created (`None`: the default one).
    pub(crate) fn keyspaces(&self) -> Vec<(u32, Option<KeyspaceRecord>)> {
        self.trees.iter().map(|(&id, t)| (id, t.record.clone())).collect()
    }

    /// The id the next new keyspace gets.
    pub(crate) fn next_keyspace(&self) -> u32 {
        self.next_keyspace
    }

    /// Log `edit` to the manifest (synced) and install the version it produces for its
    /// keyspace (creating or dropping the keyspace if it says so).
    ///
    /// Fills in `next_file_number` and `last_sequence` from this set, and `log_number`
    /// unless the edit sets it (it may not go backwards; a new keyspace must set it). An
    /// edit that does not apply to the keyspace's current version, or names a keyspace
    /// that does not exist, is `Error::InvalidArgument` and changes nothing; a failed
    /// manifest write is returned as is and installs nothing.
    ///
    /// After a write failure the edit may or may not be on disk: until a later call
    /// succeeds (it starts a fresh manifest), a crash could recover either version, so the
    /// caller must not delete the files the failed edit added. The simplest correct
    /// response is LevelDB's: treat the error as a background error and stop writing.
    pub(crate) fn log_and_apply(&mut self, mut edit: VersionEdit) -> Result<()> {
        let id = edit.keyspace;
        let floor = match (self.trees.get(&id), &edit.create_keyspace) {
            (Some(t), None) => t.log_number,
            (None, Some(_)) if edit.log_number.is_some() => 0,
            (None, Some(_)) => return Err(Error::InvalidArgument(format!("new keyspace {id} needs a log number"))),
            (Some(_), Some(_)) => return Err(Error::InvalidArgument(format!("keyspace {id} already exists"))),
            (None, None) => return Err(Error::InvalidArgument(format!("keyspace {id} does not exist"))),
        };
        match edit.log_number {
            Some(n) if n < floor || n >= self.next_file_number.peek() => {
                return Err(Error::InvalidArgument(format!(
                    "log number {n} outside [{floor}, {})",
                    self.next_file_number.peek()
                )));
            }
            Some(_) => {}
            None => edit.log_number = Some(floor),
        }
        if let Some((level, _)) = edit.compact_pointers.iter().find(|(l, _)| *l >= self.num_levels) {
            return Err(Error::InvalidArgument(format!("compact pointer for level {level} beyond the tree")));
        }
        edit.next_file_number = Some(self.next_file_number.peek());
        edit.last_sequence = Some(self.last_sequence);
        let mut next_keyspace = self.next_keyspace;
        if edit.create_keyspace.is_some() {
            next_keyspace = next_keyspace.max(id.saturating_add(1));
            edit.next_keyspace = Some(next_keyspace);
        }
        let mut trees = self.trees.clone();
        apply_to_trees(&mut trees, &edit, self.num_levels)
            .map_err(|e| Error::InvalidArgument(format!("bad version edit: {e}")))?;

        let roll = self.manifest.as_ref().is_none_or(|m| m.len() >= self.manifest_limit);
        let before = std::mem::replace(&mut self.trees, trees);
        let next_before = std::mem::replace(&mut self.next_keyspace, next_keyspace);
        let written = if roll {
            // The new manifest's snapshot already holds this edit's effect.
            self.roll_manifest()
        } else if let Some(log) = self.manifest.as_mut() {
            let mut record = Vec::new();
            edit.encode(&mut record);
            let appended = log.add_record(&record).and_then(|()| log.sync());
            if appended.is_err() {
                self.manifest = None;
            }
            appended
        } else {
            Ok(())
        };
        if let Err(e) = written {
            self.trees = before;
            self.next_keyspace = next_before;
            return Err(e);
        }
        if let Some(t) = self.trees.get(&id) {
            self.installed.retain(|w| w.strong_count() > 0);
            self.installed.push(Arc::downgrade(&t.current));
        }
        Ok(())
    }

    /// After a failed manifest write, start a fresh manifest now (a snapshot of the current
    /// versions) rather than at the next edit: once it is current, no manifest can name what
    /// the failed edit added. Nothing to do if no write failed since the last manifest began.
    pub(crate) fn restart_abandoned_manifest(&mut self) -> Result<()> {
        if self.manifest.is_some() {
            return Ok(());
        }
        self.roll_manifest()
    }

    /// Start manifest number `next_file_number` with a snapshot of every keyspace's
    /// current version and this set's counters, and point CURRENT at it.
    fn roll_manifest(&mut self) -> Result<()> {
        let number = self.new_file_number();
        let path = manifest_path(&self.dir, number);
        let snapshot = self.snapshot_edits();
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

    /// The current versions and counters for a checkpoint's manifest, recording
    /// `last_sequence`, and the manifest's number (allocated here, so never used by this
    /// database's own files). Returns the versions too: their tables are the checkpoint's.
    pub(crate) fn checkpoint_manifest(&mut self, last_sequence: SeqNo) -> (u64, Vec<VersionEdit>, Vec<Arc<Version>>) {
        let number = self.new_file_number();
        let mut edits = self.snapshot_edits();
        for edit in &mut edits {
            if edit.last_sequence.is_some() {
                edit.last_sequence = Some(last_sequence.max(self.last_sequence));
            }
        }
        let versions = self.trees.values().map(|t| t.current.clone()).collect();
        (number, edits, versions)
    }

    /// Edits that rebuild every keyspace and this set's counters from nothing: the
    /// default keyspace's first, with the counters, then one creating each other one.
    fn snapshot_edits(&self) -> Vec<VersionEdit> {
        let mut edits = Vec::with_capacity(self.trees.len());
        for (&id, tree) in &self.trees {
            let version = &tree.current;
            let mut edit = VersionEdit {
                keyspace: id,
                create_keyspace: tree.record.clone(),
                log_number: Some(tree.log_number),
                new_files: version.all_files().map(|(level, f)| (level, f.as_ref().clone())).collect(),
                compact_pointers: (tree.compact_pointers.iter().enumerate())
                    .filter_map(|(level, k)| Some((level, k.clone()?)))
                    .collect(),
                range_dels: version.range_dels.list.clone(),
                ..VersionEdit::default()
            };
            if id == DEFAULT_KEYSPACE {
                edit.next_file_number = Some(self.next_file_number.peek());
                edit.last_sequence = Some(self.last_sequence);
                // Only once a keyspace was ever created: a database that never used them
                // stays readable by a release from before keyspaces.
                edit.next_keyspace = (self.next_keyspace > DEFAULT_KEYSPACE + 1).then_some(self.next_keyspace);
            }
            edits.push(edit);
        }
        edits
    }

    /// Allocate a file number (for a table, a WAL or a manifest).
    pub(crate) fn new_file_number(&mut self) -> u64 {
        self.next_file_number.take()
    }

    /// The file number counter, for allocating without this set's lock.
    pub(crate) fn file_numbers(&self) -> FileNumbers {
        self.next_file_number.clone()
    }

    /// Make sure a number found on disk (a WAL, say) is never allocated again.
    pub(crate) fn mark_file_number_used(&mut self, number: u64) {
        self.next_file_number.past(number);
    }

    /// The number the next [`new_file_number`](Self::new_file_number) returns.
    #[cfg(test)]
    pub(crate) fn next_file_number(&self) -> u64 {
        self.next_file_number.peek()
    }

    /// Last sequence number recorded.
    pub(crate) fn last_sequence(&self) -> SeqNo {
        self.last_sequence
    }

    /// Record the last sequence number (logged with the next edit). It never goes back.
    pub(crate) fn set_last_sequence(&mut self, seq: SeqNo) {
        self.last_sequence = self.last_sequence.max(seq);
    }

    /// WALs below this number are obsolete: the oldest any keyspace still needs. Each
    /// keyspace's is advanced by its edits' `log_number` (a flush sets it to the WAL of
    /// its oldest memtable still unflushed).
    pub(crate) fn log_number(&self) -> u64 {
        self.trees.values().map(|t| t.log_number).min().unwrap_or(0)
    }

    /// WALs below this number hold nothing keyspace `keyspace` needs (`None`: no such
    /// keyspace, whose records replay skips).
    pub(crate) fn keyspace_log_number(&self, keyspace: u32) -> Option<u64> {
        self.trees.get(&keyspace).map(|t| t.log_number)
    }

    /// Where the next leveled compaction of `level` of the default keyspace should start,
    /// if recorded.
    #[cfg(test)]
    pub(crate) fn compact_pointer(&self, level: usize) -> Option<&[u8]> {
        self.trees.get(&DEFAULT_KEYSPACE)?.compact_pointers.get(level)?.as_deref()
    }

    /// File numbers referenced by any version still alive (current or held by readers),
    /// plus the live manifest (and any manifest CURRENT may name after a failed switch).
    pub(crate) fn live_files(&self) -> HashSet<u64> {
        let mut live: HashSet<u64> = self.trees.values().flat_map(|t| t.current.file_numbers()).collect();
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
            .field("next_file_number", &self.next_file_number.peek())
            .field("last_sequence", &self.last_sequence)
            .field("log_number", &self.log_number())
            .field("keyspaces", &self.trees.len())
            .finish()
    }
}
