//! Writing an SST: entries go into data blocks as they arrive; filter, index, properties,
//! metaindex and footer are written by `finish`.
//!
//! File order: data blocks, filter parts, filter index, index, properties, metaindex,
//! footer. A data block's index entry is written when the next key arrives, so its
//! separator can be shortened against that key. The filter is built from one digest per
//! distinct user key, collected as keys arrive (versions of a key are adjacent, so
//! comparing with the previous user key is enough).

use super::format::{write_block, BlockHandle, CompressionType, Footer, FOOTER_LEN, FORMAT_VERSION};
use super::index::IndexBuilder;
use super::meta_index::{encode_handles, filter_part_key};
use super::properties::{FilterDescriptor, TableProperties};
use super::{block_builder::BlockBuilder, TableOptions, TableSummary};
use crate::error::{Error, Result};
use crate::filter::{build_filter_parts, Digest, FilterSpec};
use crate::io::SequentialWrite;
use crate::key::{compare_internal_keys, parse_internal_key, user_key, ValueKind};
use crate::options::Compression;
use std::cmp::Ordering;

/// Largest key or value the block format takes (offsets inside a block are `u32`).
const MAX_ENTRY_PART: usize = (u32::MAX / 4) as usize;

/// How a table's filter parts are built from its digests.
type FilterBuilderFn = fn(&FilterSpec, &[Digest]) -> Vec<Vec<u8>>;

/// Writes one SST file from internal keys added in order.
pub struct TableBuilder {
    file: Box<dyn SequentialWrite>,
    opts: TableOptions,
    data_block: BlockBuilder,
    index: IndexBuilder,
    /// The last finished data block, waiting for the next key to choose its separator.
    pending: Option<BlockHandle>,
    /// The last key added (the data block builder's copy is reset at each block).
    last_key: Vec<u8>,
    digests: Vec<Digest>,
    /// Turns the digests into filter parts: [`build_filter_parts`], or a stand-in in tests.
    filter_builder: FilterBuilderFn,
    props: TableProperties,
    /// The physical form of the block being written, reused between blocks.
    scratch: Vec<u8>,
}

impl TableBuilder {
    /// Start a table in a new file.
    pub fn new(file: Box<dyn SequentialWrite>, opts: TableOptions) -> Self {
        let props = TableProperties {
            format_version: FORMAT_VERSION,
            block_size: opts.block_size as u64,
            restart_interval: opts.restart_interval as u64,
            compression: match opts.compression {
                Compression::None => CompressionType::None as u8,
                Compression::Lz4 => CompressionType::Lz4 as u8,
            },
            creator: format!("shamba {}", env!("CARGO_PKG_VERSION")),
            ..TableProperties::default()
        };
        TableBuilder {
            file,
            data_block: BlockBuilder::new(opts.restart_interval),
            opts,
            index: IndexBuilder::new(),
            pending: None,
            last_key: Vec::new(),
            digests: Vec::new(),
            filter_builder: build_filter_parts,
            props,
            scratch: Vec::new(),
        }
    }

    /// Build filter parts with `f` instead of [`build_filter_parts`] (tests use it to
    /// store parts before the real filters exist).
    #[cfg(test)]
    pub(crate) fn with_filter_builder(mut self, f: FilterBuilderFn) -> Self {
        self.filter_builder = f;
        self
    }

    /// Add an entry; keys must be strictly increasing in internal-key order.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let Some(parsed) = parse_internal_key(ikey) else {
            return Err(Error::InvalidArgument(format!("not an internal key: {ikey:02x?}")));
        };
        if ikey.len() > MAX_ENTRY_PART || value.len() > MAX_ENTRY_PART {
            return Err(Error::InvalidArgument(format!(
                "entry too large for a table: {} + {} bytes",
                ikey.len(),
                value.len()
            )));
        }
        let first = self.props.entries == 0;
        if !first && compare_internal_keys(&self.last_key, ikey) != Ordering::Less {
            return Err(Error::InvalidArgument(format!(
                "table keys out of order: {ikey:02x?} after {:02x?}",
                self.last_key
            )));
        }
        if let Some(handle) = self.pending.take() {
            self.index.add(&self.last_key, Some(ikey), handle);
        }
        if first || user_key(&self.last_key) != parsed.user_key {
            self.digests.push(Digest::of(parsed.user_key));
        }

        let p = &mut self.props;
        if first {
            p.smallest_key = ikey.to_vec();
            p.smallest_seq = parsed.seq;
            p.largest_seq = parsed.seq;
        }
        p.smallest_seq = p.smallest_seq.min(parsed.seq);
        p.largest_seq = p.largest_seq.max(parsed.seq);
        p.entries += 1;
        p.deletions += u64::from(parsed.kind == ValueKind::Delete);
        p.raw_key_bytes += ikey.len() as u64;
        p.raw_value_bytes += value.len() as u64;

        self.data_block.add(ikey, value);
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        if self.data_block.estimated_size() >= self.opts.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Bytes the file will have if finished now, approximately (data and index; the filter
    /// is a few bits per key on top).
    pub fn estimated_size(&self) -> u64 {
        self.file.len() + (self.data_block.estimated_size() + self.index.estimated_size() + FOOTER_LEN) as u64
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.props.entries
    }

    /// Write filter, index, properties and footer, and sync the file.
    pub fn finish(mut self) -> Result<TableSummary> {
        if !self.data_block.is_empty() {
            self.flush_data_block()?;
        }
        if let Some(handle) = self.pending.take() {
            self.index.add(&self.last_key, None, handle);
        }

        // Filter parts, each its own block so it can be read and cached on its own; they
        // are not compressed (random probes into them must stay cheap).
        let parts = (self.filter_builder)(&self.opts.filter, &self.digests);
        let mut filter_entries = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            filter_entries.push((filter_part_key(i), self.write_block(part, Compression::None)?));
        }
        let filter_index = self.write_block(&encode_handles(&filter_entries), Compression::None)?;

        // The index stays uncompressed: it is pinned or cached in this form anyway.
        let index_contents = self.index.finish();
        let index = self.write_block(&index_contents, Compression::None)?;

        let p = &mut self.props;
        p.largest_key = std::mem::take(&mut self.last_key);
        p.index_bytes = index_contents.len() as u64;
        p.filter_bytes = parts.iter().map(|b| b.len() as u64).sum();
        p.filter = FilterDescriptor::new(
            &self.opts.filter,
            self.digests.len() as u64,
            parts.iter().map(|b| b.len() as u64).collect(),
        )
        .with_fprs_of(&parts);
        p.created_unix_secs =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let properties = self.write_block(&self.props.encode(), Compression::None)?;
        let metaindex = self.write_block(&encode_handles(&[]), Compression::None)?;

        let footer = Footer { metaindex, index, properties, filter_index, format_version: FORMAT_VERSION };
        self.file.append(&footer.encode())?;
        self.file.sync()?;

        let p = &self.props;
        Ok(TableSummary {
            file_size: self.file.len(),
            entries: p.entries,
            smallest: p.smallest_key.clone(),
            largest: p.largest_key.clone(),
            smallest_seq: p.smallest_seq,
            largest_seq: p.largest_seq,
            filter_bytes: p.filter_bytes,
            index_bytes: p.index_bytes,
        })
    }

    fn flush_data_block(&mut self) -> Result<()> {
        let contents = self.data_block.finish();
        let start = self.file.len();
        let handle = self.write_block(&contents, self.opts.compression)?;
        self.props.data_blocks += 1;
        self.props.data_bytes += self.file.len() - start;
        self.pending = Some(handle);
        Ok(())
    }

    /// Append a block with its trailer; its handle.
    fn write_block(&mut self, contents: &[u8], compression: Compression) -> Result<BlockHandle> {
        self.scratch.clear();
        let (size, _) = write_block(contents, compression, &mut self.scratch);
        let offset = self.file.len();
        self.file.append(&self.scratch)?;
        Ok(BlockHandle { offset, size })
    }
}
