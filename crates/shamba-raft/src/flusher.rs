//! The log's group sync: `append` writes its entries without a sync and hands its callback
//! here; one thread syncs the write-ahead log once for every callback waiting, then reports
//! them all. Appends that arrive while a sync runs share the next one.

use crate::types::TypeConfig;
use openraft::storage::LogFlushed;
use shamba::Db;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

/// A callback waiting for the entries written before it to be durable.
struct Job {
    /// The database to sync. Jobs carry their handle so the thread holds none while idle: a
    /// store dropped without close releases its directory as soon as its last append is
    /// reported.
    db: Db,
    done: LogFlushed<TypeConfig>,
}

/// The sending side of the sync thread; the thread ends when every clone is dropped.
#[derive(Clone)]
pub(crate) struct Flusher {
    tx: mpsc::Sender<Job>,
    syncs: Arc<AtomicU64>,
}

impl Flusher {
    /// Start the sync thread.
    pub(crate) fn start() -> std::io::Result<Flusher> {
        let (tx, rx) = mpsc::channel::<Job>();
        let syncs = Arc::new(AtomicU64::new(0));
        let counter = syncs.clone();
        std::thread::Builder::new().name("shamba-raft-log-sync".into()).spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut jobs = vec![first];
                jobs.extend(rx.try_iter());
                let result = jobs[0].db.sync_wal();
                counter.fetch_add(1, Ordering::Relaxed);
                let dones: Vec<LogFlushed<TypeConfig>> = jobs.into_iter().map(|j| j.done).collect();
                for done in dones {
                    done.log_io_completed(result.as_ref().map(|_| ()).map_err(io_error));
                }
            }
        })?;
        Ok(Flusher { tx, syncs })
    }

    /// Report `done` once what `db` holds now is durable.
    pub(crate) fn after_sync(&self, db: Db, done: LogFlushed<TypeConfig>) {
        if let Err(mpsc::SendError(job)) = self.tx.send(Job { db, done }) {
            // The thread is gone (it cannot end while a sender lives, so only a panic ends
            // it): sync here rather than never answer.
            let result = job.db.sync_wal();
            job.done.log_io_completed(result.map_err(|e| io_error(&e)));
        }
    }

    /// Syncs done so far (each one reports every callback that was waiting).
    pub(crate) fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }
}

/// openraft takes an `io::Error`: keep the kind (a full disk stays `StorageFull`).
fn io_error(e: &shamba::Error) -> std::io::Error {
    std::io::Error::new(e.io_kind().unwrap_or(std::io::ErrorKind::Other), e.to_string())
}
