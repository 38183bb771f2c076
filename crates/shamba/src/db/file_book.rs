//! The book of files being written and of files to delete: table numbers being written
//! (never deleted as obsolete before a version names them), outputs whose manifest edit
//! failed, checkpoints that pause deletion, and which names of a directory listing are
//! obsolete. The deletion pass itself (`DbInner::delete_obsolete_files`) gathers what it
//! needs from the other parts and asks [`obsolete_files`].

use parking_lot::{Mutex, MutexGuard};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Files being written and deletion passes.
#[derive(Default)]
pub(crate) struct FileBook {
    /// File numbers being written, not yet in a version: never deleted as obsolete.
    pending: Mutex<HashSet<u64>>,
    /// Pending outputs of a flush or compaction whose manifest edit failed: the edit may be
    /// on disk, so they stay until a fresh manifest is written (`resume`) or a reopen.
    unsure: Mutex<Vec<u64>>,
    /// Checkpoints being taken: while any is, no file is deleted as obsolete (the WALs and
    /// tables it copies stay put).
    paused: AtomicUsize,
    /// Held by an obsolete-file pass (one at a time; a checkpoint waits for it).
    pass: Mutex<()>,
}

/// Deletion paused while it lives ([`FileBook::pause_deletions`]).
pub(crate) struct Paused<'a>(&'a FileBook);

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        self.0.paused.fetch_sub(1, Ordering::AcqRel);
    }
}

impl FileBook {
    /// File `number` is about to be written: not obsolete until [`written`](Self::written).
    pub(crate) fn writing(&self, number: u64) {
        self.pending.lock().insert(number);
    }

    /// Files `numbers` are named by an installed version, or discarded: no longer pending.
    pub(crate) fn written(&self, numbers: impl IntoIterator<Item = u64>) {
        let mut pending = self.pending.lock();
        for n in numbers {
            pending.remove(&n);
        }
    }

    /// The numbers being written now.
    pub(crate) fn pending(&self) -> HashSet<u64> {
        self.pending.lock().clone()
    }

    /// Outputs whose manifest edit failed: kept (pending) until a fresh manifest is written.
    pub(crate) fn unsure(&self, numbers: impl IntoIterator<Item = u64>) {
        self.unsure.lock().extend(numbers);
    }

    /// The unsure outputs, now known to be garbage (a fresh manifest does not name them):
    /// no longer pending, for the caller to delete.
    pub(crate) fn take_unsure(&self) -> Vec<u64> {
        let numbers = std::mem::take(&mut *self.unsure.lock());
        self.written(numbers.iter().copied());
        numbers
    }

    /// Pause deletion (a checkpoint copies files) until the guard drops; a pass that began
    /// before is waited for, so it cannot delete, after the caller takes its moment, a file
    /// the caller is about to copy.
    pub(crate) fn pause_deletions(&self) -> Paused<'_> {
        self.paused.fetch_add(1, Ordering::AcqRel);
        drop(self.pass.lock());
        Paused(self)
    }

    /// Begin an obsolete-file pass (one at a time): `None` while deletion is paused (the
    /// checkpoint runs a pass itself when it is done).
    pub(crate) fn begin_pass(&self) -> Option<MutexGuard<'_, ()>> {
        let pass = self.pass.lock();
        (self.paused.load(Ordering::Acquire) == 0).then_some(pass)
    }
}

/// A name of the directory that a deletion pass removes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Obsolete {
    /// A table no live version names and none being written: its caches forget it too.
    Table(u64),
    /// A WAL, manifest or temporary file.
    Other,
}

/// Which of the directory's `names` are obsolete: tables neither `live` (named by a live
/// version) nor `pending`; WALs older than `log_number` (the oldest any keyspace needs)
/// except `current_wal`; manifests other than the live ones; temporary files. The listing
/// must be taken before `pending`, and `pending` before `live`: a number leaves `pending`
/// only after its version is installed, so no file written in between is missed.
pub(crate) fn obsolete_files<'n>(
    names: &'n [String],
    live: &HashSet<u64>,
    pending: &HashSet<u64>,
    log_number: u64,
    current_wal: u64,
) -> Vec<(&'n str, Obsolete)> {
    let number = |name: &str, suffix: &str| name.strip_suffix(suffix).and_then(|n| n.parse::<u64>().ok());
    names
        .iter()
        .filter_map(|name| {
            let what = if let Some(n) = number(name, ".sst") {
                (!live.contains(&n) && !pending.contains(&n)).then_some(Obsolete::Table(n))?
            } else if let Some(n) = number(name, ".log") {
                (n < log_number && n != current_wal).then_some(Obsolete::Other)?
            } else if let Some(n) = crate::version::parse_manifest_file_name(name) {
                (!live.contains(&n)).then_some(Obsolete::Other)?
            } else {
                name.ends_with(".tmp").then_some(Obsolete::Other)?
            };
            Some((name.as_str(), what))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_removes_only_what_nothing_needs() {
        let names: Vec<String> = [
            "000004.sst", // live
            "000005.sst", // being written
            "000006.sst", // dead
            "000002.log", // before the log number
            "000007.log", // needed
            "000003.log", // before the log number, but the current one
            "MANIFEST-000001",
            "MANIFEST-000008",
            "CURRENT",
            "LOCK",
            "CURRENT.tmp",
            "notes.txt",
        ]
        .map(String::from)
        .into();
        let live = HashSet::from([4, 8]);
        let pending = HashSet::from([5]);
        let obsolete = obsolete_files(&names, &live, &pending, 7, 3);
        assert_eq!(
            obsolete,
            [
                ("000006.sst", Obsolete::Table(6)),
                ("000002.log", Obsolete::Other),
                ("MANIFEST-000001", Obsolete::Other),
                ("CURRENT.tmp", Obsolete::Other),
            ]
        );
    }

    #[test]
    fn pending_outputs_leave_when_written_and_unsure_ones_when_taken() {
        let book = FileBook::default();
        for n in [1, 2, 3] {
            book.writing(n);
        }
        book.written([1]);
        book.unsure([2]);
        assert_eq!(book.pending(), HashSet::from([2, 3]), "an unsure output stays pending");
        assert_eq!(book.take_unsure(), [2]);
        assert_eq!(book.pending(), HashSet::from([3]));
        assert!(book.take_unsure().is_empty());
    }

    #[test]
    fn a_pause_stops_passes_until_its_last_guard_drops() {
        let book = FileBook::default();
        assert!(book.begin_pass().is_some());
        let (a, b) = (book.pause_deletions(), book.pause_deletions());
        assert!(book.begin_pass().is_none());
        drop(a);
        assert!(book.begin_pass().is_none());
        drop(b);
        assert!(book.begin_pass().is_some());
    }
}
