//! SST files: data blocks, index, filter parts, properties and footer; the builder that
//! writes them, the reader that serves lookups and cursors, and the table cache of open
//! readers. The byte-level layout is in `crates/shamba/docs/format.md`.

use crate::cache::BlockCache;
use crate::cursor::Cursor;
use crate::error::Result;
use crate::filter::{Digest, FilterSpec};
use crate::io::{DeviceModel, IoStats, RandomRead, SequentialWrite, Storage};
use crate::key::{SeqNo, ValueKind};
use crate::options::{Compression, ReadOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a table is written.
#[derive(Debug, Clone)]
pub struct TableOptions {
    /// Target uncompressed data block size.
    pub block_size: usize,
    /// Keys between restart points.
    pub restart_interval: usize,
    /// Block compression.
    pub compression: Compression,
    /// The filter this table gets (from the build policy for its level).
    pub filter: FilterSpec,
}

/// What a finished table holds, for its `FileMeta`.
#[derive(Debug, Clone, Default)]
pub struct TableSummary {
    /// File size in bytes.
    pub file_size: u64,
    /// Entries written.
    pub entries: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
    /// Smallest sequence number.
    pub smallest_seq: SeqNo,
    /// Largest sequence number.
    pub largest_seq: SeqNo,
    /// Bytes of filter blocks.
    pub filter_bytes: u64,
    /// Bytes of index blocks.
    pub index_bytes: u64,
}

/// Writes one SST file from internal keys added in order.
pub struct TableBuilder {
    _todo: Box<dyn SequentialWrite>,
}

impl TableBuilder {
    /// Start a table in a new file.
    pub fn new(file: Box<dyn SequentialWrite>, opts: TableOptions) -> Self {
        let _ = (file, opts);
        todo!()
    }
    /// Add an entry; keys must be strictly increasing in internal-key order.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let _ = (ikey, value);
        todo!()
    }
    /// Bytes the file will have if finished now, approximately.
    pub fn estimated_size(&self) -> u64 {
        todo!()
    }
    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        todo!()
    }
    /// Write filter, index, properties and footer, and sync the file.
    pub fn finish(self) -> Result<TableSummary> {
        todo!()
    }
}

/// Shared services a table reader uses.
#[derive(Clone)]
pub struct TableContext {
    /// Block cache for data (and, if configured, index and filter) blocks.
    pub cache: Arc<BlockCache>,
    /// Device read counters.
    pub io: Arc<IoStats>,
    /// Emulated device cost per block read.
    pub device: DeviceModel,
    /// Index and filter blocks go through the cache (true) or are pinned (false).
    pub cache_index_and_filter_blocks: bool,
}

/// What a table knows about a key, with the version's sequence number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableGet {
    /// The filter said no: the key is not in this table.
    FilteredOut,
    /// The filter said maybe, and no visible version is in the table (a false positive).
    NotFound,
    /// The newest visible version.
    Found {
        /// Its sequence number.
        seq: SeqNo,
        /// Put or delete.
        kind: ValueKind,
        /// The value (empty for a delete).
        value: Vec<u8>,
    },
}

/// An open SST file serving lookups and cursors.
pub struct TableReader {
    _todo: (),
}

impl TableReader {
    /// Open a table: read and check footer, properties, index (and pin filters unless
    /// they are cached).
    pub fn open(
        path: PathBuf,
        file: Arc<dyn RandomRead>,
        number: u64,
        ctx: TableContext,
    ) -> Result<TableReader> {
        let _ = (path, file, number, ctx);
        todo!()
    }
    /// The newest version of the seek key's user key with sequence `<=` the seek key's.
    /// `seek` is a [`crate::key::seek_key`]; `digest` is the user key's digest, computed
    /// once by the caller; the reader never hashes the key.
    pub fn get(&self, seek: &[u8], digest: &Digest, ro: &ReadOptions) -> Result<TableGet> {
        let _ = (seek, digest, ro);
        todo!()
    }
    /// A cursor over the whole table.
    pub fn cursor(self: &Arc<Self>, ro: &ReadOptions) -> Box<dyn Cursor> {
        let _ = ro;
        todo!()
    }
    /// The file number.
    pub fn number(&self) -> u64 {
        todo!()
    }
}

/// Open table readers by file number, so each file is opened once.
pub struct TableCache {
    _todo: (),
}

impl TableCache {
    /// A cache of readers for files in `dir`.
    pub fn new(storage: Arc<dyn Storage>, dir: &Path, ctx: TableContext) -> Self {
        let _ = (storage, dir, ctx);
        todo!()
    }
    /// The reader of file `number`, opening it on first use.
    pub fn reader(&self, number: u64) -> Result<Arc<TableReader>> {
        let _ = number;
        todo!()
    }
    /// Forget a file's reader (after the file is deleted).
    pub fn evict(&self, number: u64) {
        let _ = number;
        todo!()
    }
}

/// Path of SST `number` in `dir`.
pub fn table_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.sst"))
}

/// A human-readable dump of every part of an SST file (footer, properties, index, filter
/// parts, data blocks' entries up to `max_entries`).
pub fn dump_table(storage: &dyn Storage, path: &Path, max_entries: usize) -> Result<String> {
    let _ = (storage, path, max_entries);
    todo!()
}
