//! Leaving read-only: writes resume after a background error that left nothing to distrust.
//!
//! A failed write of a table, the WAL or the manifest leaves files whose tails may be torn,
//! but nothing acknowledged depends on those tails. Resuming starts a fresh manifest (a
//! snapshot of the current version: the old one may end in a torn record, or in an edit that
//! was never installed), deletes the outputs whose edit is now known to be lost, and starts
//! a fresh WAL (the old one may end in a torn record, which recovery drops as a torn tail).
//! Then the frozen memtables are flushed, and only once that worked is the background
//! error cleared and writes taken again; a failed compaction runs again in the background. A failed sync is different: the kernel may have dropped the data it could not
//! write while reporting later syncs as successful, so the database stays read-only until
//! it is reopened and recovers from what the disk really holds. A corrupt file stays
//! corrupt, and any other error has no known cure, so those are final too.

use super::inner::DbInner;
use crate::error::{Error, Result};
use crate::io::Storage;
use crate::stats::DbCounters;
use crate::table::table_path;
use std::io::ErrorKind;
use std::time::{Duration, Instant};

impl DbInner {
    /// Whether writes may resume after the background error `cause`.
    fn resumable(&self, cause: &Error) -> bool {
        !self.storage.failed() && matches!(cause, Error::Io(_))
    }

    /// Whether the background thread should keep retrying by itself: a full disk may get
    /// room back.
    fn resumes_by_itself(&self, cause: &Error) -> bool {
        self.resumable(cause) && cause.io_kind() == Some(ErrorKind::StorageFull)
    }

    /// Clear a resumable background error and restart the logs; `Ok` if writes are
    /// allowed again (or were never stopped).
    pub(crate) fn resume(&self) -> Result<()> {
        self.check_open()?;
        let Some(cause) = self.bg.error() else { return Ok(()) };
        if !self.resumable(&cause) {
            return Err(Error::ReadOnly { cause });
        }
        self.queue.with_lead(|| {
            // No compaction installs an edit while the manifest is replaced.
            let _compaction = self.bg.compaction.lock();
            self.versions.lock().restart_abandoned_manifest()?;
            self.discard_unsure_outputs();
            if self.wal.is_broken() {
                self.switch_memtable(true)?;
            }
            Ok::<_, Error>(())
        })?;
        // The frozen memtables are flushed here, before writes resume, so that a disk that
        // is still full keeps the database read-only instead of letting writes in until the
        // background flush fails again.
        {
            let _flushing = self.bg.flushing.lock();
            while let Some((tree, mem)) = self.oldest_frozen() {
                self.flush_memtable(&tree, &mem)?;
            }
            self.bg.clear_error();
        }
        DbCounters::add(&self.counters.resumes, 1);
        self.bg.wake();
        self.delete_obsolete_files();
        Ok(())
    }

    /// The outputs of a failed edit are garbage once a fresh manifest (which does not name
    /// them) is current.
    fn discard_unsure_outputs(&self) {
        let unsure = self.files.take_unsure();
        self.tables.evict_all(&unsure);
        for n in unsure {
            // A file that cannot be deleted now is deleted by the next obsolete-file pass.
            let _ = self.storage.remove(&table_path(&self.dir, n));
        }
    }

    /// Called by the compaction thread while a background error stands: resume once the
    /// retry interval has passed since `last_try`, if the error is a full disk and the
    /// options ask for it. Returns when the next check is due.
    pub(crate) fn maybe_resume_by_itself(&self, last_try: &mut Option<Instant>) -> Duration {
        const IDLE: Duration = Duration::from_millis(200);
        let Some(interval) = self.opts.auto_resume_interval else { return IDLE };
        let Some(cause) = self.bg.error() else { return IDLE };
        if !self.resumes_by_itself(&cause) {
            return IDLE;
        }
        let now = Instant::now();
        if let Some(at) = *last_try {
            let due = at + interval;
            if now < due {
                return due - now;
            }
        }
        *last_try = Some(now);
        // A failure leaves the error in place (or replaces it, if a new one came up); the
        // next try comes after another interval.
        let _ = self.resume();
        interval
    }
}
