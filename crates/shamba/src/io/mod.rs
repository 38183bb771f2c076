//! Storage: every byte the engine reads or writes goes through the [`Storage`] trait.
//!
//! One code path serves real files ([`FsStorage`]), I/O accounting ([`IoStats`]: every block
//! read counted by [`BlockKind`] and bytes), device-latency emulation ([`DeviceModel`]) and
//! fault injection for tests (`FaultyStorage`).

mod accounting;
mod device;
mod fault;
mod fs;

pub use accounting::{BlockKind, IoCounters, IoStats};
pub use device::DeviceModel;
pub use fault::{FaultPlan, FaultyStorage};
pub use fs::{DirectReadFsStorage, FsStorage};

use crate::error::Result;
use std::path::Path;
use std::sync::Arc;

/// A file open for positional reads, shared by every reader of a table.
pub trait RandomRead: Send + Sync {
    /// Fill `buf` from `offset`; a short file is an error (`UnexpectedEof`).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// The file's length in bytes.
    fn len(&self) -> u64;
    /// Whether the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file open for appending (WAL, manifest, a table being built).
pub trait SequentialWrite: Send {
    /// Append bytes (they may sit in a buffer until [`flush`](Self::flush)).
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Hand buffered bytes to the operating system.
    fn flush(&mut self) -> Result<()>;
    /// Flush and make the file's contents durable (fsync / fdatasync).
    fn sync(&mut self) -> Result<()>;
    /// Bytes appended so far.
    fn len(&self) -> u64;
    /// Whether nothing was appended yet.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Held while a database directory is open; dropping it releases the lock.
pub trait DirLock: Send + Sync {}

/// The file system as the engine sees it.
pub trait Storage: Send + Sync + 'static {
    /// Open an existing file for positional reads.
    fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>>;
    /// Create (or truncate) a file for appending.
    fn create(&self, path: &Path) -> Result<Box<dyn SequentialWrite>>;
    /// Read a whole file (WAL and manifest replay).
    fn read_all(&self, path: &Path) -> Result<Vec<u8>>;
    /// Atomically rename `from` to `to`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Delete a file.
    fn remove(&self, path: &Path) -> Result<()>;
    /// Names of the entries of a directory.
    fn list(&self, dir: &Path) -> Result<Vec<String>>;
    /// Create a directory and its parents.
    fn create_dir_all(&self, dir: &Path) -> Result<()>;
    /// Make a directory's entries (creations, renames, deletions) durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// Whether a path exists.
    fn exists(&self, path: &Path) -> bool;
    /// Take an exclusive lock on `path` (created if missing); `Error::Locked` if held.
    fn lock(&self, path: &Path) -> Result<Box<dyn DirLock>>;
}
