//! Storage: every byte the engine reads or writes goes through the [`Storage`] trait.
//!
//! One code path serves real files ([`FsStorage`]), I/O accounting ([`IoStats`]: every block
//! read counted by [`BlockKind`] and bytes), device-latency emulation ([`DeviceModel`]) and
//! fault injection for tests (`FaultyStorage` with switches; `SimStorage`, an in-memory disk
//! with numbered operations, faults at one of them, and crashes); the emulation and the
//! fault injection with the `lab` feature only.

mod accounting;
mod batch_read;
// Device emulation is a lab knob (`LabOptions::device`): without the feature every table
// is read with `DeviceModel::None`, and the model is public through `lab` only.
#[cfg_attr(not(feature = "lab"), allow(dead_code, unreachable_pub))]
mod device;
mod dir_lock;
// Fault injection: for the lab's tests, and for the unit tests here.
#[cfg(any(test, feature = "lab"))]
#[cfg_attr(not(feature = "lab"), allow(unreachable_pub))]
mod fault;
mod fs;
// The simulated disk: for the lab's crash tests, and for the unit tests here.
#[cfg(any(test, feature = "lab"))]
#[cfg_attr(not(feature = "lab"), allow(unreachable_pub, dead_code))]
mod sim;
mod sync_watch;

pub(crate) use accounting::IoStats;
pub use accounting::{BlockKind, IoCounters};
pub use batch_read::BatchTarget;
pub(crate) use batch_read::{read_batch, BatchRead};
#[cfg(feature = "lab")]
pub use device::DeviceModel;
#[cfg(not(feature = "lab"))]
pub(crate) use device::DeviceModel;
#[cfg(feature = "lab")]
pub use fault::{FaultPlan, FaultyStorage};
#[cfg(all(test, not(feature = "lab")))]
pub(crate) use fault::{FaultPlan, FaultyStorage};
pub use fs::{DirectReadFsStorage, FsStorage};
#[cfg(all(test, not(feature = "lab")))]
pub(crate) use sim::SimStorage;
#[cfg(feature = "lab")]
pub use sim::{CrashKeeps, SimFault, SimStorage};
pub(crate) use sync_watch::SyncWatch;

use crate::error::Result;
use std::path::Path;
use std::sync::Arc;

/// A file open for positional reads, shared by every reader of a table.
pub trait RandomRead: Send + Sync {
    /// Fill `buf` from `offset`; a short file is an error (`UnexpectedEof`).
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the read fails, of kind `UnexpectedEof` when
    /// the file ends before `buf` is full.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// Fill `head`, then `tail` with the bytes that follow it, from `offset`: a block and
    /// its trailer, each into a buffer of its own, so the block's bytes land where they stay
    /// (no copy out of a buffer of both). The default reads both with one
    /// [`read_at`](Self::read_at) into a buffer of both and copies them out; the engine's
    /// file storage reads into the two buffers directly (`preadv`).
    ///
    /// # Errors
    ///
    /// As [`read_at`](Self::read_at) for the `head.len() + tail.len()` bytes.
    fn read_split_at(&self, offset: u64, head: &mut [u8], tail: &mut [u8]) -> Result<()> {
        let mut both = vec![0u8; head.len() + tail.len()];
        self.read_at(offset, &mut both)?;
        let (h, t) = both.split_at(head.len());
        head.copy_from_slice(h);
        tail.copy_from_slice(t);
        Ok(())
    }
    /// The file's length in bytes.
    fn len(&self) -> u64;
    /// How a batch of reads may reach this file in flight together (one `io_uring`
    /// submission) rather than one [`read_at`](Self::read_at) after another. `None`, the
    /// default, reads each with `read_at`: only the engine's own file storages give a
    /// target, and a wrapper that must see every read (fault injection) gives none.
    fn batch_target(&self) -> Option<BatchTarget> {
        None
    }
    /// Whether the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file open for appending (WAL, manifest, a table being built).
pub trait SequentialWrite: Send {
    /// Append bytes (they may sit in a buffer until [`flush`](Self::flush)).
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the bytes cannot be written (of kind
    /// `StorageFull` on a full disk). The engine makes the database read-only after a failed
    /// write it cannot retry.
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Hand buffered bytes to the operating system.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system fails.
    fn flush(&mut self) -> Result<()>;
    /// Flush and make the file's contents durable (fsync / fdatasync).
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system fails.
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
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file cannot be opened (of kind `NotFound` when
    /// it does not exist).
    fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>>;
    /// Create (or truncate) a file for appending.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system fails.
    fn create(&self, path: &Path) -> Result<Box<dyn SequentialWrite>>;
    /// Read a whole file (WAL and manifest replay).
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file cannot be opened or read.
    fn read_all(&self, path: &Path) -> Result<Vec<u8>>;
    /// Atomically rename `from` to `to`, replacing `to`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system fails.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Move the directory `from`, with everything in it, to `to`, which must not exist:
    /// one atomic step (a crash leaves the directory under one name or the other), durable
    /// once [`sync_dir`](Self::sync_dir) of the parent returns. Checkpoints build their copy
    /// under a staging name and move it to the name asked for this way. The default refuses
    /// an existing `to`, then calls [`rename`](Self::rename) (on a real file system
    /// `rename(2)` moves directories too).
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system fails (of kind `AlreadyExists`
    /// when `to` exists, `NotFound` when `from` does not).
    fn rename_dir(&self, from: &Path, to: &Path) -> Result<()> {
        if self.exists(to) {
            return Err(crate::Error::Io(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("cannot move a directory to {}: it exists", to.display()),
            )));
        }
        self.rename(from, to)
    }
    /// Delete an empty directory. The default says it is unsupported (a checkpoint's
    /// staging directory then stays, empty, after a failed attempt).
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system fails (the directory is not
    /// empty, or does not exist), of kind `Unsupported` by default.
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        let _ = dir;
        Err(crate::Error::Io(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this storage cannot remove directories",
        )))
    }
    /// Delete a file.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system fails.
    fn remove(&self, path: &Path) -> Result<()>;
    /// Names of the entries of a directory.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system fails.
    fn list(&self, dir: &Path) -> Result<Vec<String>>;
    /// Create a directory and its parents.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system fails.
    fn create_dir_all(&self, dir: &Path) -> Result<()>;
    /// Make a directory's entries (creations, renames, deletions) durable.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system fails.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// Whether a path exists.
    fn exists(&self, path: &Path) -> bool;
    /// Make `to` a second name of the file `from` (a hard link), so that it keeps the
    /// file's bytes even after `from` is deleted. Checkpoints link live tables this way and
    /// copy them where linking fails. The default says linking is unsupported.
    ///
    /// # Errors
    ///
    /// [`Error::Io`](crate::Error::Io) when the file system cannot link (of kind
    /// `Unsupported` by default; `CrossesDevices` across file systems).
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        let _ = (from, to);
        Err(crate::Error::Io(std::io::Error::new(std::io::ErrorKind::Unsupported, "this storage cannot link files")))
    }
    /// Take an exclusive lock on `path` (created if missing); `Error::Locked` if held.
    ///
    /// # Errors
    ///
    /// [`Error::Locked`](crate::Error::Locked) when another holder has the lock;
    /// [`Error::Io`](crate::Error::Io) when the file cannot be created or locked.
    fn lock(&self, path: &Path) -> Result<Box<dyn DirLock>>;
}
