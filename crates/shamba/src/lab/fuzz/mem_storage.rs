//! A [`Storage`] in memory, so a fuzz target can build, damage and open a database
//! thousands of times a second with no disk, no fsync and nothing left behind.

use crate::error::{Error, Result};
use crate::io::{DirLock, RandomRead, SequentialWrite, Storage};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Files by path; a file's bytes are shared by the readers that opened it (a rename or a
/// rewrite makes a new buffer, so an open reader keeps what it opened, as on a real disk).
#[derive(Default)]
pub(super) struct MemStorage {
    files: Mutex<BTreeMap<PathBuf, Arc<Mutex<Vec<u8>>>>>,
}

impl MemStorage {
    /// A storage holding `files` (path, bytes).
    pub(super) fn with_files(files: impl IntoIterator<Item = (PathBuf, Vec<u8>)>) -> MemStorage {
        let files = files.into_iter().map(|(p, b)| (p, Arc::new(Mutex::new(b)))).collect();
        MemStorage { files: Mutex::new(files) }
    }

    /// Every file (path, bytes), in path order.
    pub(super) fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        self.files.lock().iter().map(|(p, b)| (p.clone(), b.lock().clone())).collect()
    }

    fn file(&self, path: &Path) -> Result<Arc<Mutex<Vec<u8>>>> {
        self.files.lock().get(path).cloned().ok_or_else(|| not_found(path))
    }
}

fn not_found(path: &Path) -> Error {
    Error::Io(std::io::Error::new(ErrorKind::NotFound, format!("{}: no such file", path.display())))
}

struct MemRead(Arc<[u8]>);

impl RandomRead for MemRead {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|at| self.0.get(at..)?.get(..buf.len()))
            .ok_or_else(|| Error::Io(ErrorKind::UnexpectedEof.into()))?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn len(&self) -> u64 {
        self.0.len() as u64
    }
}

struct MemWrite(Arc<Mutex<Vec<u8>>>);

impl SequentialWrite for MemWrite {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.lock().extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        Ok(())
    }

    fn len(&self) -> u64 {
        self.0.lock().len() as u64
    }
}

struct MemLock;

impl DirLock for MemLock {}

impl Storage for MemStorage {
    fn open_read(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        let bytes: Arc<[u8]> = self.file(path)?.lock().as_slice().into();
        Ok(Arc::new(MemRead(bytes)))
    }

    fn create(&self, path: &Path) -> Result<Box<dyn SequentialWrite>> {
        let file = Arc::new(Mutex::new(Vec::new()));
        self.files.lock().insert(path.to_path_buf(), file.clone());
        Ok(Box::new(MemWrite(file)))
    }

    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        Ok(self.file(path)?.lock().clone())
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut files = self.files.lock();
        let file = files.remove(from).ok_or_else(|| not_found(from))?;
        files.insert(to.to_path_buf(), file);
        Ok(())
    }

    fn remove(&self, path: &Path) -> Result<()> {
        self.files.lock().remove(path).map(|_| ()).ok_or_else(|| not_found(path))
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let files = self.files.lock();
        let names = files.keys().filter(|p| p.parent() == Some(dir)).filter_map(|p| p.file_name()?.to_str());
        Ok(names.map(str::to_string).collect())
    }

    fn create_dir_all(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }

    fn sync_dir(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        self.files.lock().contains_key(path)
    }

    fn lock(&self, _path: &Path) -> Result<Box<dyn DirLock>> {
        // One database per storage: nothing to exclude.
        Ok(Box::new(MemLock))
    }
}
