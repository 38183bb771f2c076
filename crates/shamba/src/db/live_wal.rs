//! The write-ahead logs still alive: the one being appended to (its writer, its number,
//! whether a failed write left it with a torn tail), the logs retired by memtable switches
//! whose contents are not synced yet, and whether the directory entry of a log created
//! since the last directory sync is durable.
//!
//! Only the write leader appends to the current log and replaces it; a log whose write
//! failed takes nothing more (what follows its last good record was never acknowledged),
//! until a new log replaces it (`resume`).
//!
//! A memtable switch syncs nothing (as LevelDB's): a write that did not ask for a sync never
//! waits for one. The guarantee a sync at the switch would give (a synced write never
//! outlives unsynced writes acknowledged before it) is kept as RocksDB keeps it: a synced
//! write, `Db::sync_wal` and `close` first sync every retired log still unsynced, and the
//! directory if a log was created since its last sync, then the current log. A flush syncs
//! the retired logs up to its memtable's before writing its table, off the writer's path.

use crate::error::Result;
use crate::io::Storage;
use crate::wal::LogWriter;
use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Path of WAL `number`.
pub(crate) fn wal_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.log"))
}

struct WalState {
    writer: LogWriter,
    number: u64,
    /// A write to this log failed: its tail may be torn, so nothing more is appended to it.
    broken: bool,
}

/// A log a memtable switch retired, not yet synced: its writer, until a sync empties it.
struct Retired {
    number: u64,
    writer: Mutex<Option<LogWriter>>,
    /// Set once synced: read under the list's lock, where taking `writer` (held across a
    /// sync) would make a switch wait.
    synced: AtomicBool,
}

/// The WAL being appended to, and the retired ones not yet synced.
pub(crate) struct LiveWal {
    state: Mutex<WalState>,
    /// Its number, readable while the leader holds `state` across a sync.
    number: AtomicU64,
    /// Retired logs not yet synced, oldest first. The list's lock is held only to change
    /// or copy the list, never across a sync (each log has its own lock for that), so a
    /// switch pushing onto it never waits for a sync.
    retired: Mutex<Vec<Arc<Retired>>>,
    /// Logs created so far (the first one counts as 1).
    created: AtomicU64,
    /// How many of them the last directory sync covered; held across that sync.
    dir_synced: Mutex<u64>,
}

impl LiveWal {
    /// `writer`, the log numbered `number`, takes the writes from now on; its directory
    /// entry is durable (`open` synced the directory).
    pub(crate) fn new(writer: LogWriter, number: u64) -> LiveWal {
        LiveWal {
            state: Mutex::new(WalState { writer, number, broken: false }),
            number: AtomicU64::new(number),
            retired: Mutex::new(Vec::new()),
            created: AtomicU64::new(1),
            dir_synced: Mutex::new(1),
        }
    }

    /// Its number.
    pub(crate) fn number(&self) -> u64 {
        self.number.load(Ordering::Acquire)
    }

    /// Whether a failed write left it with a torn tail.
    pub(crate) fn is_broken(&self) -> bool {
        self.state.lock().broken
    }

    /// Append one record, then sync it (`sync`) or hand it to the OS. A failure breaks
    /// the log: the record may be in it, whole or torn, and no later record may follow.
    /// A synced record is appended only after [`sync_earlier`](Self::sync_earlier).
    pub(crate) fn append(&self, record: &[u8], sync: bool) -> Result<()> {
        let mut wal = self.state.lock();
        let w = &mut wal.writer;
        let logged = w.add_record(record).and_then(|()| if sync { w.sync() } else { w.flush() });
        if logged.is_err() {
            wal.broken = true;
        }
        logged
    }

    /// Sync what was appended; `None` when the log is broken (nothing acknowledged follows
    /// its last good record, which a sync would not fix).
    pub(crate) fn sync_unless_broken(&self) -> Option<Result<()>> {
        let mut wal = self.state.lock();
        if wal.broken {
            return None;
        }
        Some(wal.writer.sync())
    }

    /// Sync whatever the log holds (at close: a broken log's torn tail is dropped by
    /// recovery all the same).
    pub(crate) fn sync(&self) -> Result<()> {
        self.state.lock().writer.sync()
    }

    /// Hand what was appended to the OS, where a copy of the file reads it, and return the
    /// log's number and length (a checkpoint's moment). A broken log is left as it is.
    pub(crate) fn flushed_end(&self) -> Result<(u64, u64)> {
        let mut wal = self.state.lock();
        if !wal.broken {
            wal.writer.flush()?;
        }
        Ok((wal.number, wal.writer.len()))
    }

    /// Append to `writer`, log `number` (just created), from now on. Nothing is synced:
    /// the old log joins the retired ones, synced by the next synced write, `sync_wal`,
    /// the flush of its memtables or `close`; unless `abandon_old` (what a broken log holds
    /// past its last good record was never acknowledged, and `resume` flushes its
    /// memtables before writes go on). Every record appended to the old log was handed to
    /// the OS already.
    pub(crate) fn replace(&self, writer: LogWriter, number: u64, abandon_old: bool) {
        let mut wal = self.state.lock();
        let old = std::mem::replace(&mut *wal, WalState { writer, number, broken: false });
        self.number.store(number, Ordering::Release);
        self.created.fetch_add(1, Ordering::AcqRel);
        drop(wal);
        if !abandon_old {
            let writer = Mutex::new(Some(old.writer));
            let retired = Arc::new(Retired { number: old.number, writer, synced: AtomicBool::new(false) });
            self.retired.lock().push(retired);
        }
    }

    /// Numbers of the retired logs not yet synced, oldest first.
    #[cfg(test)]
    pub(crate) fn unsynced_retired(&self) -> Vec<u64> {
        self.retired.lock().iter().map(|r| r.number).collect()
    }

    /// Sync every retired log numbered `upto` or less that is not synced yet, oldest first;
    /// each is dropped from the list (and its file closed) once synced. A failed sync keeps
    /// the log listed and returns the error.
    pub(crate) fn sync_retired(&self, upto: u64) -> Result<()> {
        let due: Vec<Arc<Retired>> = self.retired.lock().iter().filter(|r| r.number <= upto).cloned().collect();
        if due.is_empty() {
            return Ok(());
        }
        let mut failed = None;
        for r in &due {
            let mut writer = r.writer.lock();
            if let Some(w) = writer.as_mut() {
                match w.sync() {
                    Ok(()) => {
                        *writer = None;
                        r.synced.store(true, Ordering::Release);
                    }
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
        }
        self.retired.lock().retain(|r| !r.synced.load(Ordering::Acquire));
        failed.map_or(Ok(()), Err)
    }

    /// Forget the retired logs numbered below `number` unsynced: no keyspace needs them
    /// any more (their memtables were flushed, or their keyspaces dropped).
    pub(crate) fn forget_retired_below(&self, number: u64) {
        self.retired.lock().retain(|r| r.number >= number);
    }

    /// How many logs were created so far: a directory sync begun after this call makes
    /// their entries durable ([`dir_synced`](Self::dir_synced)).
    pub(crate) fn created(&self) -> u64 {
        self.created.load(Ordering::Acquire)
    }

    /// A directory sync begun when [`created`](Self::created) said `created` succeeded.
    pub(crate) fn dir_synced(&self, created: u64) {
        let mut synced = self.dir_synced.lock();
        *synced = (*synced).max(created);
    }

    /// Sync `dir` if a log was created since its last sync, so that a synced record's log
    /// is found after a power loss.
    pub(crate) fn sync_dir_if_needed(&self, storage: &dyn Storage, dir: &Path) -> Result<()> {
        let created = self.created();
        let mut synced = self.dir_synced.lock();
        if *synced >= created {
            return Ok(());
        }
        storage.sync_dir(dir)?;
        *synced = created;
        Ok(())
    }

    /// Make every record appended before this call durable, except the current log's own:
    /// the retired logs, then the directory entries of the logs created since the last
    /// directory sync. A synced write calls it before appending its record, so that the
    /// record never outlives an unsynced one acknowledged before it.
    pub(crate) fn sync_earlier(&self, storage: &dyn Storage, dir: &Path) -> Result<()> {
        self.sync_retired(u64::MAX)?;
        self.sync_dir_if_needed(storage, dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{FaultPlan, FaultyStorage, SimStorage, Storage};
    use std::sync::atomic::Ordering::SeqCst;
    use std::sync::Arc;

    fn log(storage: &dyn Storage, number: u64) -> LogWriter {
        LogWriter::new(storage.create(&wal_path(Path::new("/db"), number)).unwrap())
    }

    #[test]
    fn a_failed_write_breaks_the_log_until_it_is_replaced() {
        let plan = Arc::new(FaultPlan::default());
        let storage = FaultyStorage::new(SimStorage::new(), plan.clone());
        storage.create_dir_all(Path::new("/db")).unwrap();
        let wal = LiveWal::new(log(&storage, 3), 3);
        wal.append(b"one", true).unwrap();
        let (number, len) = wal.flushed_end().unwrap();
        assert_eq!(number, 3);
        assert!(len > 3);

        plan.fail_writes.store(true, SeqCst);
        assert!(wal.append(b"two", false).is_err());
        assert!(wal.is_broken());
        assert!(wal.sync_unless_broken().is_none(), "a broken log is not synced");
        assert_eq!(wal.flushed_end().unwrap().1, len, "nor flushed");

        plan.fail_writes.store(false, SeqCst);
        wal.replace(log(&storage, 4), 4, true);
        assert!(!wal.is_broken());
        assert_eq!(wal.number(), 4);
        wal.append(b"three", false).unwrap();
        assert!(wal.sync_unless_broken().is_some_and(|r| r.is_ok()));
    }

    #[test]
    fn a_switch_syncs_nothing_and_a_failed_sync_keeps_the_retired_log() {
        let plan = Arc::new(FaultPlan::default());
        let storage = FaultyStorage::new(SimStorage::new(), plan.clone());
        storage.create_dir_all(Path::new("/db")).unwrap();
        let wal = LiveWal::new(log(&storage, 3), 3);
        wal.append(b"one", false).unwrap();
        // Every sync fails, and a switch goes through all the same: it syncs nothing.
        plan.fail_syncs.store(true, SeqCst);
        wal.replace(log(&storage, 4), 4, false);
        wal.append(b"two", false).unwrap();
        wal.replace(log(&storage, 5), 5, false);
        assert_eq!(wal.unsynced_retired(), vec![3, 4]);
        assert!(wal.sync_earlier(&storage, Path::new("/db")).is_err());
        assert_eq!(wal.unsynced_retired(), vec![3, 4], "a failed sync keeps the logs");
        plan.fail_syncs.store(false, SeqCst);
        wal.sync_retired(3).unwrap();
        assert_eq!(wal.unsynced_retired(), vec![4], "only the logs up to the one asked");
        wal.sync_earlier(&storage, Path::new("/db")).unwrap();
        assert!(wal.unsynced_retired().is_empty());
        // A broken log is abandoned, not retired.
        wal.replace(log(&storage, 6), 6, true);
        assert!(wal.unsynced_retired().is_empty());
        assert_eq!((wal.number(), wal.is_broken()), (6, false));
    }

    #[test]
    fn the_directory_is_synced_once_per_new_log() {
        let storage = SimStorage::new();
        storage.create_dir_all(Path::new("/db")).unwrap();
        let wal = LiveWal::new(log(&storage, 3), 3);
        let dir = Path::new("/db");
        let ops = storage.ops();
        wal.sync_dir_if_needed(&storage, dir).unwrap();
        assert_eq!(storage.ops(), ops, "nothing created since open's sync");
        wal.replace(log(&storage, 4), 4, true);
        let ops = storage.ops();
        wal.sync_dir_if_needed(&storage, dir).unwrap();
        wal.sync_dir_if_needed(&storage, dir).unwrap();
        assert_eq!(storage.ops(), ops + 1, "one sync for the new log");
        // A directory sync made elsewhere (a flush's) counts when it began after the log.
        wal.replace(log(&storage, 5), 5, true);
        let created = wal.created();
        wal.dir_synced(created);
        let ops = storage.ops();
        wal.sync_dir_if_needed(&storage, dir).unwrap();
        assert_eq!(storage.ops(), ops);
    }
}
