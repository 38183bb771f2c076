//! Open table readers by file number, so each file is opened (footer, properties, index,
//! pinned filters read) once, however many lookups and cursors use it. The readers hold no
//! open file: they read through the cache's bounded set of open files (`file_handles.rs`).

use super::file::TableFile;
use super::file_handles::FileHandles;
use super::{table_path, MetadataBudget, TableContext, TableReader};
use crate::error::Result;
use crate::io::Storage;
use crate::number_map::NumberMap;
use parking_lot::RwLock;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Open table readers by file number, so each file is opened once.
pub(crate) struct TableCache {
    dir: PathBuf,
    ctx: TableContext,
    handles: Arc<FileHandles>,
    readers: RwLock<NumberMap<u64, Arc<TableReader>>>,
}

impl TableCache {
    /// A cache of readers for files in `dir`, keeping at most `max_open_files` of them
    /// open (at least 1).
    pub(crate) fn new(storage: Arc<dyn Storage>, dir: &Path, ctx: TableContext, max_open_files: usize) -> Self {
        let handles = Arc::new(FileHandles::new(storage, max_open_files));
        TableCache { dir: dir.to_path_buf(), ctx, handles, readers: RwLock::new(NumberMap::default()) }
    }

    /// The reader of file `number`, opening it on first use.
    pub(crate) fn reader(&self, number: u64) -> Result<Arc<TableReader>> {
        if let Some(r) = self.readers.read().get(&number) {
            return Ok(r.clone());
        }
        crate::read_tier::check("a table open")?;
        // Open without the lock: an open reads several blocks, and lookups of other files
        // must not wait for it. Two threads may race to open the same file; the first
        // reader inserted wins and the other is dropped.
        let path = table_path(&self.dir, number);
        let file = TableFile::cached(path, number, self.handles.clone(), self.ctx.io.clone(), self.ctx.device)?;
        let reader = Arc::new(TableReader::open(file, number, self.ctx.clone())?);
        Ok(self.readers.write().entry(number).or_insert(reader).clone())
    }

    /// Forget the files' readers (after the files are deleted), close the files and drop
    /// their blocks from the block cache, in one pass over it. Cursors still holding a
    /// reader keep working while its file exists (they reopen it).
    pub(crate) fn evict_all(&self, numbers: &[u64]) {
        {
            let mut readers = self.readers.write();
            for n in numbers {
                readers.remove(n);
            }
        }
        for &n in numbers {
            self.handles.remove(n);
        }
        self.ctx.cache.erase_files(numbers);
    }

    /// Table files open now, and the most kept open.
    pub(crate) fn open_files(&self) -> (usize, usize) {
        (self.handles.len(), self.handles.capacity())
    }

    /// Bytes of index and filter blocks the open readers pin in memory.
    pub(crate) fn pinned_bytes(&self) -> u64 {
        self.readers.read().values().map(|r| r.pinned_bytes() as u64).sum()
    }

    /// The limit on the bytes readers pin, and what they hold under it.
    pub(crate) fn metadata_budget(&self) -> &MetadataBudget {
        &self.ctx.metadata
    }

    /// Number of open readers.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.readers.read().len()
    }

    /// Whether no reader is open.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
