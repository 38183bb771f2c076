//! Remembering a failed sync: the storage a database writes through, wrapped so that any
//! failed `sync` or `sync_dir` is noted for good.
//!
//! After a failed fsync the kernel may have dropped the dirty pages and marked them clean,
//! so a second fsync can succeed while the data is gone (PostgreSQL's "fsyncgate"). A
//! database that saw one must not trust a later success: it stays read-only until it is
//! reopened and recovers from what is really on disk. The engine asks [`SyncWatch::failed`]
//! before it retries anything after a background error.

use super::{DirLock, RandomRead, SequentialWrite, Storage};
use crate::error::Result;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Wraps the storage a database writes through and notes every failed sync.
pub(crate) struct SyncWatch {
    inner: Arc<dyn Storage>,
    failed: Arc<AtomicBool>,
}

impl SyncWatch {
    pub(crate) fn new(inner: Arc<dyn Storage>) -> SyncWatch {
        SyncWatch { inner, failed: Arc::new(AtomicBool::new(false)) }
    }

    /// Whether any sync of a file or directory has failed since this storage was made.
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    fn note<T>(failed: &AtomicBool, r: Result<T>) -> Result<T> {
        if r.is_err() {
            failed.store(true, Ordering::Release);
        }
        r
    }
}

struct WatchedWriter {
    inner: Box<dyn SequentialWrite>,
    failed: Arc<AtomicBool>,
}

impl SequentialWrite for WatchedWriter {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.inner.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> Result<()> {
        SyncWatch::note(&self.failed, self.inner.sync())
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

impl Storage for SyncWatch {
    fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        self.inner.open_read(path)
    }
    fn create(&self, path: &Path) -> Result<Box<dyn SequentialWrite>> {
        Ok(Box::new(WatchedWriter { inner: self.inner.create(path)?, failed: self.failed.clone() }))
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        self.inner.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.rename(from, to)
    }
    fn rename_dir(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.rename_dir(from, to)
    }
    fn remove(&self, path: &Path) -> Result<()> {
        self.inner.remove(path)
    }
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        self.inner.remove_dir(dir)
    }
    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        SyncWatch::note(&self.failed, self.inner.sync_dir(dir))
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.link(from, to)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn DirLock>> {
        self.inner.lock(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{FaultPlan, FaultyStorage, FsStorage};
    use std::sync::atomic::Ordering::SeqCst;

    #[test]
    fn a_failed_sync_is_remembered_after_syncs_work_again() {
        let dir = tempfile::tempdir().unwrap();
        let plan = Arc::new(FaultPlan::default());
        let watch = SyncWatch::new(Arc::new(FaultyStorage::new(FsStorage, plan.clone())));
        let mut f = watch.create(&dir.path().join("a")).unwrap();
        f.append(b"x").unwrap();
        f.sync().unwrap();
        watch.sync_dir(dir.path()).unwrap();
        assert!(!watch.failed());
        plan.fail_syncs.store(true, SeqCst);
        assert!(f.sync().is_err());
        plan.fail_syncs.store(false, SeqCst);
        f.sync().unwrap();
        assert!(watch.failed(), "a later success does not undo a failed sync");

        let other = SyncWatch::new(Arc::new(FaultyStorage::new(FsStorage, plan.clone())));
        plan.fail_syncs.store(true, SeqCst);
        assert!(other.sync_dir(dir.path()).is_err());
        assert!(other.failed(), "a failed directory sync counts too");
    }
}
