//! Output tables synced beside the merge that writes them.
//!
//! Each table a compaction writes must be durable before the manifest names it. Synced in
//! the merging thread, every output stopped the merge for a journal commit, a large part
//! of a merge's time while writers waited for it (`docs/results/2026-11-28/output-sync.md`).
//! Here a table the merge is done with goes to a thread of the job's own, which syncs it
//! while the merge writes the next; the job waits for every sync before it returns its
//! outputs, so what a version names is as durable as before. At most [`IN_FLIGHT`] tables
//! wait (each holds a file descriptor): a merge that outruns the device waits for a slot.

use crate::error::{Error, Result};
use crate::io::SequentialWrite;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

/// Tables handed over and not yet synced, beyond the one being synced.
const IN_FLIGHT: usize = 2;

/// A table handed to the sync thread.
type Table = Box<dyn SequentialWrite>;

/// The sync thread of one output writer, started with its first table.
#[derive(Default)]
pub(super) struct OutputSync {
    running: Option<(SyncSender<Table>, JoinHandle<Result<()>>)>,
}

impl OutputSync {
    /// Sync `file` on the sync thread (in this thread if none can be started). A failure
    /// of an earlier table's sync is returned here or by [`finish`](Self::finish).
    pub(super) fn sync_later(&mut self, mut file: Table) -> Result<()> {
        if self.running.is_none() {
            let (tx, rx) = sync_channel::<Table>(IN_FLIGHT);
            let spawned = std::thread::Builder::new().name("shamba-sync".into()).spawn(move || {
                // The first failure ends the thread: its tables belong to a failed job.
                rx.into_iter().try_for_each(|mut f| f.sync())
            });
            match spawned {
                Ok(thread) => self.running = Some((tx, thread)),
                Err(_) => return file.sync(),
            }
        }
        let Some((tx, _)) = &self.running else { return file.sync() };
        if tx.send(file).is_err() {
            // The thread ended: a sync failed.
            return self.finish();
        }
        Ok(())
    }

    /// Wait until every table handed over is synced: the first failure, if any.
    pub(super) fn finish(&mut self) -> Result<()> {
        let Some((tx, thread)) = self.running.take() else { return Ok(()) };
        drop(tx);
        thread.join().map_err(|_| Error::internal("an output sync thread panicked"))?
    }
}

impl Drop for OutputSync {
    /// A job that failed midway still waits for its thread: nothing of it touches the
    /// files after the job is gone.
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A file that counts its syncs, failing those after the first `ok`.
    struct Counted {
        synced: Arc<AtomicUsize>,
        ok: usize,
    }

    impl SequentialWrite for Counted {
        fn append(&mut self, _: &[u8]) -> Result<()> {
            Ok(())
        }
        fn flush(&mut self) -> Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> Result<()> {
            let n = self.synced.fetch_add(1, Ordering::SeqCst);
            if n >= self.ok {
                return Err(Error::Io(std::io::Error::other("sync failed")));
            }
            Ok(())
        }
        fn len(&self) -> u64 {
            0
        }
    }

    #[test]
    fn finish_returns_once_every_table_is_synced() {
        let synced = Arc::new(AtomicUsize::new(0));
        let mut sync = OutputSync::default();
        for _ in 0..10 {
            sync.sync_later(Box::new(Counted { synced: synced.clone(), ok: usize::MAX })).unwrap();
        }
        sync.finish().unwrap();
        assert_eq!(synced.load(Ordering::SeqCst), 10);
        // Finished, it starts again with the next table.
        sync.sync_later(Box::new(Counted { synced: synced.clone(), ok: usize::MAX })).unwrap();
        sync.finish().unwrap();
        assert_eq!(synced.load(Ordering::SeqCst), 11);
    }

    #[test]
    fn a_failed_sync_fails_the_job() {
        let synced = Arc::new(AtomicUsize::new(0));
        let mut sync = OutputSync::default();
        let mut outcome = Ok(());
        for _ in 0..10 {
            outcome = outcome.and_then(|()| sync.sync_later(Box::new(Counted { synced: synced.clone(), ok: 3 })));
        }
        let outcome = outcome.and_then(|()| sync.finish());
        assert!(matches!(outcome, Err(Error::Io(_))), "{outcome:?}");
        assert!(synced.load(Ordering::SeqCst) >= 4, "the fourth sync failed");
    }
}
