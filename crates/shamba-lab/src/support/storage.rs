//! Storage for the experiments' temporary trees: the local file system without fsync, and
//! table reads through `O_DIRECT` on request.

use std::path::Path;
use std::sync::Arc;

use shamba::storage::{DirLock, DirectReadFsStorage, FsStorage, RandomRead, SequentialWrite, Storage};
use shamba::Options;

/// `options` on storage that never fsyncs: loads of temporary trees are limited by the
/// machine's fsync latency otherwise (hundreds of small flushes), and a crash only loses a
/// database the experiment would delete anyway. Reads are the file system's, unchanged.
pub fn without_sync(mut options: Options) -> Options {
    options.storage = Arc::new(NoSyncStorage { direct: false });
    options
}

/// [`without_sync`], with table reads through `O_DIRECT`.
pub fn with_direct_reads(mut options: Options) -> Options {
    options.storage = Arc::new(NoSyncStorage { direct: true });
    options
}

/// The local file system with `sync` and `sync_dir` as no-ops; positional reads through
/// `O_DIRECT` when `direct`.
struct NoSyncStorage {
    direct: bool,
}

/// A writer whose `sync` only flushes.
struct NoSyncWrite(Box<dyn SequentialWrite>);

impl SequentialWrite for NoSyncWrite {
    fn append(&mut self, data: &[u8]) -> shamba::Result<()> {
        self.0.append(data)
    }
    fn flush(&mut self) -> shamba::Result<()> {
        self.0.flush()
    }
    fn sync(&mut self) -> shamba::Result<()> {
        self.0.flush()
    }
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl Storage for NoSyncStorage {
    fn open_read(&self, path: &Path) -> shamba::Result<Arc<dyn RandomRead>> {
        if self.direct {
            DirectReadFsStorage.open_read(path)
        } else {
            FsStorage.open_read(path)
        }
    }
    fn create(&self, path: &Path) -> shamba::Result<Box<dyn SequentialWrite>> {
        Ok(Box::new(NoSyncWrite(FsStorage.create(path)?)))
    }
    fn read_all(&self, path: &Path) -> shamba::Result<Vec<u8>> {
        FsStorage.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> shamba::Result<()> {
        FsStorage.rename(from, to)
    }
    fn remove(&self, path: &Path) -> shamba::Result<()> {
        FsStorage.remove(path)
    }
    fn rename_dir(&self, from: &Path, to: &Path) -> shamba::Result<()> {
        FsStorage.rename_dir(from, to)
    }
    fn remove_dir(&self, dir: &Path) -> shamba::Result<()> {
        FsStorage.remove_dir(dir)
    }
    fn list(&self, dir: &Path) -> shamba::Result<Vec<String>> {
        FsStorage.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> shamba::Result<()> {
        FsStorage.create_dir_all(dir)
    }
    fn sync_dir(&self, _dir: &Path) -> shamba::Result<()> {
        Ok(())
    }
    fn exists(&self, path: &Path) -> bool {
        FsStorage.exists(path)
    }
    fn link(&self, from: &Path, to: &Path) -> shamba::Result<()> {
        FsStorage.link(from, to)
    }
    fn lock(&self, path: &Path) -> shamba::Result<Box<dyn DirLock>> {
        FsStorage.lock(path)
    }
}
