//! The write-ahead log being appended to: its writer, its number, and whether a failed
//! write left it with a torn tail.
//!
//! Only the write leader appends to it and replaces it; a log whose write failed takes
//! nothing more (what follows its last good record was never acknowledged), until a new
//! log replaces it (`resume`).

use crate::error::Result;
use crate::wal::LogWriter;
use parking_lot::Mutex;
use std::path::{Path, PathBuf};

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

/// The WAL being appended to.
pub(crate) struct LiveWal {
    state: Mutex<WalState>,
}

impl LiveWal {
    /// `writer`, the log numbered `number`, takes the writes from now on.
    pub(crate) fn new(writer: LogWriter, number: u64) -> LiveWal {
        LiveWal { state: Mutex::new(WalState { writer, number, broken: false }) }
    }

    /// Its number.
    pub(crate) fn number(&self) -> u64 {
        self.state.lock().number
    }

    /// Whether a failed write left it with a torn tail.
    pub(crate) fn is_broken(&self) -> bool {
        self.state.lock().broken
    }

    /// Append one record, then sync it (`sync`) or hand it to the OS. A failure breaks
    /// the log: the record may be in it, whole or torn, and no later record may follow.
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

    /// Append to `writer`, log `number`, from now on. The old log is synced first, unless
    /// `abandon_old` (what a broken log holds past its last good record was never
    /// acknowledged): a synced write to the new log must not outlive a power loss that
    /// takes unsynced writes acknowledged before it. A failed sync breaks the old log and
    /// keeps it.
    pub(crate) fn replace(&self, writer: LogWriter, number: u64, abandon_old: bool) -> Result<()> {
        let mut wal = self.state.lock();
        if !abandon_old {
            if let Err(e) = wal.writer.sync() {
                wal.broken = true;
                return Err(e);
            }
        }
        *wal = WalState { writer, number, broken: false };
        Ok(())
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
        wal.replace(log(&storage, 4), 4, true).unwrap();
        assert!(!wal.is_broken());
        assert_eq!(wal.number(), 4);
        wal.append(b"three", false).unwrap();
        assert!(wal.sync_unless_broken().is_some_and(|r| r.is_ok()));
    }

    #[test]
    fn a_failed_sync_of_the_old_log_keeps_it() {
        let plan = Arc::new(FaultPlan::default());
        let storage = FaultyStorage::new(SimStorage::new(), plan.clone());
        storage.create_dir_all(Path::new("/db")).unwrap();
        let wal = LiveWal::new(log(&storage, 3), 3);
        wal.append(b"one", false).unwrap();
        plan.fail_syncs.store(true, SeqCst);
        assert!(wal.replace(log(&storage, 4), 4, false).is_err());
        assert_eq!(wal.number(), 3, "the old log stays");
        assert!(wal.is_broken());
        plan.fail_syncs.store(false, SeqCst);
        wal.replace(log(&storage, 5), 5, true).unwrap();
        assert_eq!((wal.number(), wal.is_broken()), (5, false));
    }
}
