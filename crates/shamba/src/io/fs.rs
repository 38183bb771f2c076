//! The real file system.

use super::{DirLock, RandomRead, SequentialWrite, Storage};
use crate::error::{Error, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// Files on a local file system, read with positional reads (`pread`).
#[derive(Debug, Default, Clone, Copy)]
pub struct FsStorage;

struct FsRandom {
    file: File,
    len: u64,
}

impl RandomRead for FsRandom {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file.read_exact_at(buf, offset)?;
        Ok(())
    }
    fn len(&self) -> u64 {
        self.len
    }
}

struct FsWritable {
    out: BufWriter<File>,
    len: u64,
}

impl SequentialWrite for FsWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.out.write_all(data)?;
        self.len += data.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.out.flush()?;
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_data()?;
        Ok(())
    }
    fn len(&self) -> u64 {
        self.len
    }
}

struct FsLock {
    _file: File,
}

impl DirLock for FsLock {}

impl Storage for FsStorage {
    fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(Arc::new(FsRandom { file, len }))
    }

    fn create(&self, path: &Path) -> Result<Box<dyn SequentialWrite>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Box::new(FsWritable {
            out: BufWriter::with_capacity(64 * 1024, file),
            len: 0,
        }))
    }

    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        Ok(fs::read(path)?)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        Ok(fs::rename(from, to)?)
    }

    fn remove(&self, path: &Path) -> Result<()> {
        Ok(fs::remove_file(path)?)
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            if let Some(name) = entry?.file_name().to_str() {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        Ok(fs::create_dir_all(dir)?)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        File::open(dir)?.sync_all()?;
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn DirLock>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Box::new(FsLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked(path.to_path_buf())),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::Io(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_on_the_same_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("LOCK");
        let first = FsStorage.lock(&p).unwrap();
        assert!(matches!(FsStorage.lock(&p), Err(Error::Locked(_))));
        drop(first);
        assert!(FsStorage.lock(&p).is_ok());
    }

    #[test]
    fn written_bytes_read_back_positionally() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut w = FsStorage.create(&p).unwrap();
        w.append(b"hello world").unwrap();
        w.sync().unwrap();
        let r = FsStorage.open_read(&p).unwrap();
        let mut buf = [0u8; 5];
        r.read_at(6, &mut buf).unwrap();
        assert_eq!(&buf, b"world");
        assert!(r.read_at(8, &mut buf).is_err());
    }
}
