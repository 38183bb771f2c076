//! Fault injection: a [`Storage`] wrapper that fails writes, syncs or reads on demand.
//!
//! Tests use it to check that a failing device gives an [`Error`](crate::Error) and never
//! loses acknowledged data. A failed append, flush, create or rename is a full disk
//! (`ErrorKind::StorageFull`); a failed sync or read is `ErrorKind::Other`.

use super::{DirLock, RandomRead, SequentialWrite, Storage};
use crate::error::{Error, Result};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// What the faulty storage should break. All switches start off and can be flipped live.
#[derive(Debug, Default)]
pub struct FaultPlan {
    /// Every append fails (a full disk).
    pub fail_writes: AtomicBool,
    /// Every append to a table file (`.sst`) fails (a full disk), while the WAL and the
    /// manifest still take writes: flushes and compactions fail, the write path does not.
    pub fail_table_writes: AtomicBool,
    /// Every append to a manifest (`MANIFEST-*`) fails (a full disk), while tables and the
    /// WAL still take writes: an edit is never logged, after its outputs were written.
    pub fail_manifest_writes: AtomicBool,
    /// Every append to a table file (`.sst`) is acknowledged and dropped (a disk that
    /// lies): the writer counts the bytes as written, the file never holds them, and its
    /// syncs succeed. The WAL and the manifest are written as usual.
    pub drop_table_appends: AtomicBool,
    /// Every sync (of a file or a directory) waits while this is set (a stalled device),
    /// then goes on as the other switches say: a test can hold a write group in its WAL
    /// sync.
    pub hold_syncs: AtomicBool,
    /// Every sync fails.
    pub fail_syncs: AtomicBool,
    /// Every positional read fails.
    pub fail_reads: AtomicBool,
    /// Appends succeed until this many bytes were written in total, then fail (0 = no limit).
    pub write_budget: AtomicU64,
    written: AtomicU64,
}

impl FaultPlan {
    fn injected(what: &str) -> Error {
        Error::Io(std::io::Error::other(format!("injected fault: {what}")))
    }

    fn disk_full(what: &str) -> Error {
        Error::Io(std::io::Error::new(std::io::ErrorKind::StorageFull, format!("injected fault: {what}: disk full")))
    }
}

/// Wraps another storage and fails operations as the shared [`FaultPlan`] says.
pub struct FaultyStorage<S> {
    inner: S,
    plan: Arc<FaultPlan>,
}

impl<S: Storage> FaultyStorage<S> {
    /// Wrap `inner`; flip switches on `plan` to inject faults.
    pub fn new(inner: S, plan: Arc<FaultPlan>) -> Self {
        FaultyStorage { inner, plan }
    }
}

struct FaultyWriter {
    inner: Box<dyn SequentialWrite>,
    plan: Arc<FaultPlan>,
    /// Whether the file is a table (`.sst`).
    table: bool,
    /// Whether the file is a manifest.
    manifest: bool,
    /// Bytes acknowledged and dropped (`FaultPlan::drop_table_appends`).
    dropped: u64,
}

impl SequentialWrite for FaultyWriter {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        if self.plan.fail_writes.load(SeqCst) {
            return Err(FaultPlan::disk_full("write"));
        }
        if self.table && self.plan.fail_table_writes.load(SeqCst) {
            return Err(FaultPlan::disk_full("table write"));
        }
        if self.manifest && self.plan.fail_manifest_writes.load(SeqCst) {
            return Err(FaultPlan::disk_full("manifest write"));
        }
        if self.table && self.plan.drop_table_appends.load(SeqCst) {
            self.dropped += data.len() as u64;
            return Ok(());
        }
        let budget = self.plan.write_budget.load(SeqCst);
        let after = self.plan.written.fetch_add(data.len() as u64, SeqCst) + data.len() as u64;
        if budget != 0 && after > budget {
            return Err(FaultPlan::disk_full("write budget"));
        }
        self.inner.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        if self.plan.fail_writes.load(SeqCst) {
            return Err(FaultPlan::disk_full("flush"));
        }
        self.inner.flush()
    }
    fn sync(&mut self) -> Result<()> {
        while self.plan.hold_syncs.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        if self.plan.fail_syncs.load(SeqCst) {
            return Err(FaultPlan::injected("sync"));
        }
        self.inner.sync()
    }
    fn len(&self) -> u64 {
        self.inner.len() + self.dropped
    }
}

struct FaultyReader {
    inner: Arc<dyn RandomRead>,
    plan: Arc<FaultPlan>,
}

impl RandomRead for FaultyReader {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if self.plan.fail_reads.load(SeqCst) {
            return Err(FaultPlan::injected("read"));
        }
        self.inner.read_at(offset, buf)
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

impl<S: Storage> Storage for FaultyStorage<S> {
    fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        Ok(Arc::new(FaultyReader { inner: self.inner.open_read(path)?, plan: self.plan.clone() }))
    }
    fn create(&self, path: &Path) -> Result<Box<dyn SequentialWrite>> {
        if self.plan.fail_writes.load(SeqCst) {
            return Err(FaultPlan::disk_full("create"));
        }
        let table = path.extension().is_some_and(|e| e == "sst");
        let manifest = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("MANIFEST"));
        Ok(Box::new(FaultyWriter {
            inner: self.inner.create(path)?,
            plan: self.plan.clone(),
            table,
            manifest,
            dropped: 0,
        }))
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        if self.plan.fail_reads.load(SeqCst) {
            return Err(FaultPlan::injected("read"));
        }
        self.inner.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        if self.plan.fail_writes.load(SeqCst) {
            return Err(FaultPlan::disk_full("rename"));
        }
        self.inner.rename(from, to)
    }
    fn rename_dir(&self, from: &Path, to: &Path) -> Result<()> {
        if self.plan.fail_writes.load(SeqCst) {
            return Err(FaultPlan::disk_full("rename dir"));
        }
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
        while self.plan.hold_syncs.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        if self.plan.fail_syncs.load(SeqCst) {
            return Err(FaultPlan::injected("sync dir"));
        }
        self.inner.sync_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        if self.plan.fail_writes.load(SeqCst) {
            return Err(FaultPlan::disk_full("link"));
        }
        self.inner.link(from, to)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn DirLock>> {
        self.inner.lock(path)
    }
}
