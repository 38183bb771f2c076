//! An open SST: point lookups and the blocks cursors read.
//!
//! `open` reads the footer, properties, metaindex, index and the filter index. With
//! `cache_index_and_filter_blocks` false the index and the filter parts are read once here
//! and pinned (counted as Index / Filter reads at open); with it true they are fetched
//! through the block cache at high priority on every use. Data blocks always go through
//! the cache at low priority (inserted unless `ReadOptions::fill_cache` is false).
//!
//! The point lookup, top to bottom: filter parts in order with the caller's digest (the
//! first negative ends it; the key is never hashed here) -> index binary search -> one
//! data block -> seek in the block. It allocates only the returned value: block contents
//! are shared `Arc`s and the key buffers of the block cursors are reused per thread.

use super::block::{Block, BlockCursor};
use super::file::TableFile;
use super::format::{BlockHandle, Footer};
use super::meta_index::{decode_filter_index, decode_handles};
use super::properties::TableProperties;
use super::two_level_cursor::TableCursor;
use super::{ProbeOutcome, ProbePlan, TableContext, TableGet, TableSummary};
use crate::cache::Priority;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::filter::{Digest, FilterPart};
use crate::io::{BlockKind, RandomRead};
use crate::key::{compare_internal_keys, parse_internal_key, user_key};
use crate::options::ReadOptions;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

thread_local! {
    /// Key buffer lent to block cursors during `get`, so a lookup does not allocate one.
    static KEY_SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A block that is either pinned in the reader or fetched through the cache.
struct MetaBlock {
    handle: BlockHandle,
    pinned: Option<Arc<[u8]>>,
}

/// Live per-table counters.
#[derive(Debug, Default)]
struct Counters {
    lookups: AtomicU64,
    filter_probes: AtomicU64,
    filter_negatives: AtomicU64,
    filter_false_positives: AtomicU64,
    found: AtomicU64,
}

/// What happened to a table's lookups so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableCounters {
    /// Calls to [`TableReader::get`].
    pub lookups: u64,
    /// Filter parts probed.
    pub filter_probes: u64,
    /// Lookups ended by a filter part saying no.
    pub filter_negatives: u64,
    /// Lookups that passed a filter (with at least one part) but found no version.
    pub filter_false_positives: u64,
    /// Lookups that found a version (put or delete).
    pub found: u64,
}

/// An open SST file serving lookups and cursors.
pub struct TableReader {
    file: TableFile,
    number: u64,
    ctx: TableContext,
    footer: Footer,
    properties: TableProperties,
    metaindex: Vec<(Vec<u8>, BlockHandle)>,
    index: MetaBlock,
    filter_parts: Vec<MetaBlock>,
    counters: Counters,
}

impl TableReader {
    /// Open a table: read and check footer, properties, index (and pin filters unless
    /// they are cached).
    pub fn open(path: PathBuf, file: Arc<dyn RandomRead>, number: u64, ctx: TableContext) -> Result<TableReader> {
        let file = TableFile::new(path, file, ctx.io.clone(), ctx.device);
        let footer = file.read_footer()?;
        let meta_block = |handle: BlockHandle| -> Result<Block> {
            let data = file.read_block(handle, BlockKind::Other, true)?;
            Block::new(data).map_err(|e| e.in_file(file.path(), Some(handle.offset)))
        };
        let properties = TableProperties::decode(meta_block(footer.properties)?)
            .map_err(|e| file.corruption(footer.properties.offset, format!("properties: {e}")))?;
        let metaindex = decode_handles(meta_block(footer.metaindex)?)
            .map_err(|e| file.corruption(footer.metaindex.offset, format!("metaindex: {e}")))?;
        let filter_handles = decode_filter_index(meta_block(footer.filter_index)?)
            .map_err(|e| file.corruption(footer.filter_index.offset, format!("filter index: {e}")))?;
        if filter_handles.len() != properties.filter.parts() {
            return Err(file.corruption(
                footer.filter_index.offset,
                format!("filter index lists {} parts, properties {}", filter_handles.len(), properties.filter.parts()),
            ));
        }

        let pin = !ctx.cache_index_and_filter_blocks;
        let mut index = MetaBlock { handle: footer.index, pinned: None };
        if pin {
            let data = file.read_block(footer.index, BlockKind::Index, true)?;
            Block::new(data.clone()).map_err(|e| e.in_file(file.path(), Some(footer.index.offset)))?;
            index.pinned = Some(data);
        }
        let mut filter_parts = Vec::with_capacity(filter_handles.len());
        for handle in filter_handles {
            let mut part = MetaBlock { handle, pinned: None };
            if pin {
                let data = file.read_block(handle, BlockKind::Filter, true)?;
                FilterPart::parse(&data).map_err(|e| e.in_file(file.path(), Some(handle.offset)))?;
                part.pinned = Some(data);
            }
            filter_parts.push(part);
        }
        Ok(TableReader {
            file,
            number,
            ctx,
            footer,
            properties,
            metaindex,
            index,
            filter_parts,
            counters: Counters::default(),
        })
    }

    /// The newest version of the seek key's user key with sequence `<=` the seek key's.
    /// `seek` is a [`crate::key::seek_key`]; `digest` is the user key's digest, computed
    /// once by the caller; the reader never hashes the key.
    pub fn get(&self, seek: &[u8], digest: &Digest, ro: &ReadOptions) -> Result<TableGet> {
        self.get_planned(seek, digest, ro, ProbePlan::ALL).map(|(g, _)| g)
    }

    /// [`get`](Self::get), probing only the filter parts `plan` allows, and reporting what
    /// the filter did.
    pub fn get_planned(
        &self,
        seek: &[u8],
        digest: &Digest,
        ro: &ReadOptions,
        plan: ProbePlan,
    ) -> Result<(TableGet, ProbeOutcome)> {
        self.counters.lookups.fetch_add(1, Relaxed);
        let mut outcome = ProbeOutcome::default();
        for i in 0..self.filter_parts.len().min(plan.max_parts) {
            let bytes = self.filter_part(i)?;
            let part = FilterPart::parse(&bytes)
                .map_err(|e| e.in_file(self.path(), Some(self.filter_parts[i].handle.offset)))?;
            self.counters.filter_probes.fetch_add(1, Relaxed);
            outcome.parts_probed += 1;
            if !part.may_contain(digest) {
                self.counters.filter_negatives.fetch_add(1, Relaxed);
                return Ok((TableGet::FilteredOut, outcome));
            }
        }
        self.lookup_data(seek, ro).map(|g| (g, outcome))
    }

    /// The index and data-block part of a lookup, after the filter said maybe.
    fn lookup_data(&self, seek: &[u8], ro: &ReadOptions) -> Result<TableGet> {
        let mut index = self.index_block()?.cursor_with_buffer(compare_internal_keys, KEY_SCRATCH.take());
        let sought = index.seek(seek).map_err(|e| e.in_file(self.path(), Some(self.footer.index.offset)));
        let handle = match sought {
            Ok(()) if index.valid() => Some(self.decode_index_value(&index)),
            Ok(()) => None,
            Err(e) => Some(Err(e)),
        };
        let buffer = index.into_key_buffer();
        let Some(handle) = handle.transpose()? else {
            KEY_SCRATCH.set(buffer);
            return Ok(self.not_found());
        };

        let mut data = self.data_block(handle, ro)?.cursor_with_buffer(compare_internal_keys, buffer);
        data.seek(seek).map_err(|e| e.in_file(self.path(), Some(handle.offset)))?;
        let result = if data.valid() && user_key(data.key()) == user_key(seek) {
            let Some(parsed) = parse_internal_key(data.key()) else {
                return Err(self.file.corruption(handle.offset, format!("bad internal key {:02x?}", data.key())));
            };
            self.counters.found.fetch_add(1, Relaxed);
            TableGet::Found { seq: parsed.seq, kind: parsed.kind, value: data.value().to_vec() }
        } else {
            self.not_found()
        };
        KEY_SCRATCH.set(data.into_key_buffer());
        Ok(result)
    }

    /// A cursor over the whole table.
    pub fn cursor(self: &Arc<Self>, ro: &ReadOptions) -> Box<dyn Cursor> {
        Box::new(TableCursor::new(self.clone(), ro.clone()))
    }

    /// The file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The file's size in bytes.
    pub fn file_size(&self) -> u64 {
        self.file.len()
    }

    /// The footer.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// The properties block.
    pub fn properties(&self) -> &TableProperties {
        &self.properties
    }

    /// Optional meta blocks by name (empty in format version 1).
    pub fn metaindex(&self) -> &[(Vec<u8>, BlockHandle)] {
        &self.metaindex
    }

    /// What the table holds, as its builder reported it.
    pub fn summary(&self) -> TableSummary {
        let p = &self.properties;
        TableSummary {
            file_size: self.file.len(),
            entries: p.entries,
            smallest: p.smallest_key.clone(),
            largest: p.largest_key.clone(),
            smallest_seq: p.smallest_seq,
            largest_seq: p.largest_seq,
            filter_bytes: p.filter_bytes,
            index_bytes: p.index_bytes,
        }
    }

    /// Bytes of index and filter blocks pinned in this reader (0 when they are cached).
    pub fn pinned_bytes(&self) -> usize {
        let pinned = |m: &MetaBlock| m.pinned.as_ref().map_or(0, |b| b.len());
        pinned(&self.index) + self.filter_parts.iter().map(pinned).sum::<usize>()
    }

    /// Number of filter parts (0: no filter, every lookup reads the index).
    pub fn filter_part_count(&self) -> usize {
        self.filter_parts.len()
    }

    /// The counters of this table's lookups.
    pub fn counters(&self) -> TableCounters {
        let c = &self.counters;
        TableCounters {
            lookups: c.lookups.load(Relaxed),
            filter_probes: c.filter_probes.load(Relaxed),
            filter_negatives: c.filter_negatives.load(Relaxed),
            filter_false_positives: c.filter_false_positives.load(Relaxed),
            found: c.found.load(Relaxed),
        }
    }

    /// The contents of filter part `i` (pinned, or through the cache at high priority).
    pub(super) fn filter_part(&self, i: usize) -> Result<Arc<[u8]>> {
        let Some(part) = self.filter_parts.get(i) else {
            return Err(Error::InvalidArgument(format!("filter part {i} of {}", self.filter_parts.len())));
        };
        match &part.pinned {
            Some(bytes) => Ok(bytes.clone()),
            None => self.cached_block(part.handle, BlockKind::Filter, Priority::High, true, true),
        }
    }

    /// Handle of filter part `i`.
    pub(super) fn filter_part_handle(&self, i: usize) -> Option<BlockHandle> {
        self.filter_parts.get(i).map(|p| p.handle)
    }

    /// The index block (pinned, or through the cache at high priority).
    pub(super) fn index_block(&self) -> Result<Block> {
        let data = match &self.index.pinned {
            Some(bytes) => bytes.clone(),
            None => self.cached_block(self.index.handle, BlockKind::Index, Priority::High, true, true)?,
        };
        Block::new(data).map_err(|e| e.in_file(self.path(), Some(self.index.handle.offset)))
    }

    /// The data block at `handle`, through the cache at low priority.
    pub(super) fn data_block(&self, handle: BlockHandle, ro: &ReadOptions) -> Result<Block> {
        let data = self.cached_block(handle, BlockKind::Data, Priority::Low, ro.fill_cache, ro.verify_checksums)?;
        Block::new(data).map_err(|e| e.in_file(self.path(), Some(handle.offset)))
    }

    /// The handle an index entry points to.
    pub(super) fn decode_index_value(&self, index: &BlockCursor) -> Result<BlockHandle> {
        BlockHandle::decode_exact(index.value())
            .map_err(|e| self.file.corruption(self.footer.index.offset, format!("index entry: {e}")))
    }

    /// A corruption error at `offset` of this file.
    pub(super) fn corruption(&self, offset: u64, reason: impl Into<String>) -> Error {
        self.file.corruption(offset, reason)
    }

    fn cached_block(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        priority: Priority,
        fill: bool,
        verify: bool,
    ) -> Result<Arc<[u8]>> {
        let key = (self.number, handle.offset);
        if let Some(block) = self.ctx.cache.get(key, kind) {
            return Ok(block);
        }
        let block = self.file.read_block(handle, kind, verify)?;
        if fill {
            self.ctx.cache.insert(key, block.clone(), kind, priority);
        }
        Ok(block)
    }

    fn not_found(&self) -> TableGet {
        if !self.filter_parts.is_empty() {
            self.counters.filter_false_positives.fetch_add(1, Relaxed);
        }
        TableGet::NotFound
    }
}

impl std::fmt::Debug for TableReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableReader")
            .field("path", &self.file.path())
            .field("number", &self.number)
            .field("entries", &self.properties.entries)
            .field("filter_parts", &self.filter_parts.len())
            .finish()
    }
}
