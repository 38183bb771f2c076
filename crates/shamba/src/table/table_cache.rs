//! Open table readers by file number, so each file is opened (footer, properties, index,
//! pinned filters read) once, however many lookups and cursors use it.

use super::{table_path, TableContext, TableReader};
use crate::error::Result;
use crate::io::Storage;
use crate::number_map::NumberMap;
use parking_lot::RwLock;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Open table readers by file number, so each file is opened once.
pub(crate) struct TableCache {
    storage: Arc<dyn Storage>,
    dir: PathBuf,
    ctx: TableContext,
    readers: RwLock<NumberMap<u64, Arc<TableReader>>>,
}

impl TableCache {
    /// A cache of readers for files in `dir`.
    pub(crate) fn new(storage: Arc<dyn Storage>, dir: &Path, ctx: TableContext) -> Self {
        TableCache { storage, dir: dir.to_path_buf(), ctx, readers: RwLock::new(NumberMap::default()) }
    }

    /// The reader of file `number`, opening it on first use.
    pub(crate) fn reader(&self, number: u64) -> Result<Arc<TableReader>> {
        if let Some(r) = self.readers.read().get(&number) {
            return Ok(r.clone());
        }
        // Open without the lock: an open reads several blocks, and lookups of other files
        // must not wait for it. Two threads may race to open the same file; the first
        // reader inserted wins and the other is dropped.
        let path = table_path(&self.dir, number);
        let file = self.storage.open_read(&path)?;
        let reader = Arc::new(TableReader::open(path, file, number, self.ctx.clone())?);
        Ok(self.readers.write().entry(number).or_insert(reader).clone())
    }

    /// Forget a file's reader (after the file is deleted), and drop its blocks from the
    /// block cache. Cursors still holding the reader keep working.
    pub(crate) fn evict(&self, number: u64) {
        self.readers.write().remove(&number);
        self.ctx.cache.erase_file(number);
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
