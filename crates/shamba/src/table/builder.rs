//! Writing an SST: entries go into data blocks as they arrive; filter, index, properties,
//! metaindex and footer are written by `finish`.
//!
//! File order: data blocks, filter parts, filter index, index, properties, metaindex,
//! footer. A data block's index entry is written when the next key arrives, so its
//! separator can be shortened against that key. The filter is built from one digest per
//! distinct user key, collected as keys arrive (versions of a key are adjacent, so
//! comparing with the previous user key is enough).
//!
//! Partitioned (format version 2, `partition.rs`): after each data block's index entry the
//! builder may cut a partition — when the current index partition reaches the target size,
//! or when the partition's digests would make its filter parts about that size. A cut
//! finishes the index partition and builds the partition's filter parts at once (so only
//! one partition's digests are ever held), keeping both in memory until `finish` writes
//! them after the data blocks: every partition's filter parts, the (empty) filter index,
//! every index partition, then the top-level index.

use super::format::{
    write_block, BlockHandle, CompressionType, Footer, FOOTER_LEN, FORMAT_VERSION_FLAT, FORMAT_VERSION_PARTITIONED,
};
use super::index::IndexBuilder;
use super::meta_index::{encode_handles, filter_part_key};
use super::partition::{PartitionHandles, MAX_PARTS_PER_PARTITION};
use super::properties::{FilterDescriptor, TableProperties};
use super::{block_builder::BlockBuilder, TableOptions, TableSummary};
use crate::error::{Error, Result};
use crate::filter::{build_filter_parts_with_version, Digest, FilterPart, FilterSpec};
use crate::io::SequentialWrite;
use crate::key::{compare_internal_keys, parse_internal_key, user_key, ValueKind};
use crate::options::Compression;
use std::cmp::Ordering;

/// Largest key or value the block format takes (offsets inside a block are `u32`).
const MAX_ENTRY_PART: usize = (u32::MAX / 4) as usize;

/// How a table's filter parts are built from its digests.
type FilterBuilderFn = fn(&FilterSpec, &[Digest], u8) -> Vec<Vec<u8>>;

/// Digests of the sample filter built to learn a spec's bytes per key.
const CALIBRATION_KEYS: usize = 1024;

/// A partition cut but not yet written.
struct BuiltPartition {
    /// Separator of its last data block: its top-level key.
    separator: Vec<u8>,
    /// The index partition's contents.
    index: Vec<u8>,
    /// The filter parts over its keys.
    filter: Vec<Vec<u8>>,
}

/// What a partitioned builder keeps besides the current index partition and digests.
struct Partitioning {
    /// Target bytes of an index partition and of a partition's filter parts together.
    target: usize,
    /// Digests at which a partition's filter parts reach `target` bytes.
    filter_keys: usize,
    /// Partitions cut so far.
    done: Vec<BuiltPartition>,
    /// Bytes of `done`'s index partitions (its filter parts are not counted: see
    /// `estimated_size`).
    done_bytes: u64,
}

/// Writes one SST file from internal keys added in order.
pub(crate) struct TableBuilder {
    file: Box<dyn SequentialWrite>,
    opts: TableOptions,
    data_block: BlockBuilder,
    /// The index, or in a partitioned table the current index partition.
    index: IndexBuilder,
    /// The last finished data block, waiting for the next key to choose its separator.
    pending: Option<BlockHandle>,
    /// The last key added (the data block builder's copy is reset at each block).
    last_key: Vec<u8>,
    /// Digests of the table's user keys, or in a partitioned table the current partition's.
    digests: Vec<Digest>,
    /// Digests the finished filters were built over (a key straddling a cut counts twice).
    digests_built: u64,
    /// Set when the table is partitioned.
    partitioning: Option<Partitioning>,
    /// Turns the digests into filter parts: [`build_filter_parts_with_version`], or a
    /// stand-in in tests.
    filter_builder: FilterBuilderFn,
    props: TableProperties,
    /// The physical form of the block being written, reused between blocks.
    scratch: Vec<u8>,
}

impl TableBuilder {
    /// Start a table in a new file.
    pub(crate) fn new(file: Box<dyn SequentialWrite>, opts: TableOptions) -> Self {
        let partitioned = opts.partition_index_and_filters;
        let props = TableProperties {
            format_version: if partitioned { FORMAT_VERSION_PARTITIONED } else { FORMAT_VERSION_FLAT },
            block_size: opts.block_size as u64,
            restart_interval: opts.restart_interval as u64,
            compression: CompressionType::of(opts.compression) as u8,
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
            digests_built: 0,
            partitioning: None,
            filter_builder: build_filter_parts_with_version,
            props,
            scratch: Vec::new(),
        }
        .calibrated()
    }

    /// Build filter parts with `f` instead of [`build_filter_parts_with_version`] (tests use it to
    /// store parts before the real filters exist).
    #[cfg(test)]
    pub(crate) fn with_filter_builder(mut self, f: FilterBuilderFn) -> Self {
        self.filter_builder = f;
        self.calibrated()
    }

    /// Set up partitioning, if asked for, with the filter builder in use: build a sample
    /// filter to learn the spec's bytes per key (headers, rounding and fallbacks included),
    /// and from it how many digests fill a partition's filter.
    fn calibrated(mut self) -> Self {
        if !self.opts.partition_index_and_filters {
            return self;
        }
        let target = self.opts.metadata_partition_size.max(1);
        let hash = self.opts.digest_hash;
        let sample: Vec<Digest> = (0..CALIBRATION_KEYS as u64).map(|i| hash.digest(&i.to_le_bytes())).collect();
        let sample_bytes: usize =
            (self.filter_builder)(&self.opts.filter, &sample, hash.digest_version()).iter().map(Vec::len).sum();
        let filter_keys = match sample_bytes {
            0 => usize::MAX,
            bytes => (target.saturating_mul(CALIBRATION_KEYS) / bytes).max(1),
        };
        self.partitioning = Some(Partitioning { target, filter_keys, done: Vec::new(), done_bytes: 0 });
        self
    }

    /// Add an entry; keys must be strictly increasing in internal-key order.
    pub(crate) fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
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
            self.maybe_cut_partition();
        }
        // After a cut the digest list is empty: a user key whose versions straddle the cut
        // gets its digest in the new partition's filter too.
        if first || self.digests.is_empty() || user_key(&self.last_key) != parsed.user_key {
            self.digests.push(self.opts.digest_hash.digest(parsed.user_key));
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

    /// Bytes the file will have if finished now, approximately: data and index. Filters
    /// are not counted, partitioned or not, so the filter policy never moves the cut
    /// between two files (two builds of the same data with different filters get the same
    /// files, and experiments compare filters on the same tree).
    pub(crate) fn estimated_size(&self) -> u64 {
        let partitions = self.partitioning.as_ref().map_or(0, |p| p.done_bytes);
        self.file.len()
            + partitions
            + (self.data_block.estimated_size() + self.index.estimated_size() + FOOTER_LEN) as u64
    }

    /// Entries added so far.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> u64 {
        self.props.entries
    }

    /// Write filter, index, properties and footer, and sync the file.
    #[cfg(test)]
    pub(crate) fn finish(self) -> Result<TableSummary> {
        let (summary, mut file) = self.finish_unsynced()?;
        file.sync()?;
        Ok(summary)
    }

    /// [`finish`](Self::finish), the file handed to the operating system but not synced:
    /// the caller syncs it (elsewhere) before anything names it.
    pub(crate) fn finish_unsynced(mut self) -> Result<(TableSummary, Box<dyn SequentialWrite>)> {
        if !self.data_block.is_empty() {
            self.flush_data_block()?;
        }
        if let Some(handle) = self.pending.take() {
            self.index.add(&self.last_key, None, handle);
        }
        let (index, filter_index) = match self.partitioning.is_some() {
            false => self.write_flat_metadata()?,
            true => self.write_partitioned_metadata()?,
        };

        let p = &mut self.props;
        p.largest_key = std::mem::take(&mut self.last_key);
        p.created_unix_secs =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let properties = self.write_block(&self.props.encode(), Compression::None)?;
        let metaindex = self.write_block(&encode_handles(&[]), Compression::None)?;

        let format_version = self.props.format_version;
        let footer = Footer { metaindex, index, properties, filter_index, format_version };
        self.file.append(&footer.encode())?;
        self.file.flush()?;

        Ok((TableSummary::of(&self.props, self.file.len()), self.file))
    }

    /// Version 1: the filter parts, the filter index and the one index block; their
    /// handles (index, filter index) for the footer.
    fn write_flat_metadata(&mut self) -> Result<(BlockHandle, BlockHandle)> {
        // Filter parts, each its own block so it can be read and cached on its own; they
        // are not compressed (random probes into them must stay cheap).
        let parts = (self.filter_builder)(&self.opts.filter, &self.digests, self.opts.digest_hash.digest_version());
        let mut filter_entries = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            filter_entries.push((filter_part_key(i), self.write_block(part, Compression::None)?));
        }
        let filter_index = self.write_block(&encode_handles(&filter_entries), Compression::None)?;

        // The index stays uncompressed: it is pinned or cached in this form anyway.
        let index_contents = self.index.finish();
        let index = self.write_block(&index_contents, Compression::None)?;

        let p = &mut self.props;
        p.index_bytes = index_contents.len() as u64;
        p.filter_bytes = parts.iter().map(|b| b.len() as u64).sum();
        p.filter = FilterDescriptor::new(
            &self.opts.filter,
            self.digests.len() as u64,
            parts.iter().map(|b| b.len() as u64).collect(),
            role_of(&parts),
        )
        .with_fprs_of(&parts);
        Ok((index, filter_index))
    }

    /// Version 2: every partition's filter parts, an empty filter index, every index
    /// partition and the top-level index; handles (top-level, filter index) for the footer.
    fn write_partitioned_metadata(&mut self) -> Result<(BlockHandle, BlockHandle)> {
        if !self.index.is_empty() {
            self.cut_partition();
        }
        let done = self.partitioning.as_mut().map(|p| std::mem::take(&mut p.done)).unwrap_or_default();

        let mut handles: Vec<PartitionHandles> = Vec::with_capacity(done.len());
        let mut part_bytes: Vec<u64> = Vec::new();
        let mut role = None;
        for partition in &done {
            if partition.filter.len() as u64 > MAX_PARTS_PER_PARTITION {
                return Err(Error::InvalidArgument(format!("{} filter parts per partition", partition.filter.len())));
            }
            role = role.or_else(|| role_of(&partition.filter));
            let mut filter = Vec::with_capacity(partition.filter.len());
            for (i, part) in partition.filter.iter().enumerate() {
                filter.push(self.write_block(part, Compression::None)?);
                if part_bytes.len() <= i {
                    part_bytes.push(0);
                }
                part_bytes[i] += part.len() as u64;
            }
            handles.push(PartitionHandles { index: BlockHandle::default(), filter });
        }
        let filter_index = self.write_block(&encode_handles(&[]), Compression::None)?;

        let mut index_bytes = 0u64;
        for (partition, h) in done.iter().zip(&mut handles) {
            h.index = self.write_block(&partition.index, Compression::None)?;
            index_bytes += partition.index.len() as u64;
        }
        let mut top = BlockBuilder::new(1);
        let mut value = Vec::new();
        for (partition, h) in done.iter().zip(&handles) {
            value.clear();
            h.encode_to(&mut value);
            top.add(&partition.separator, &value);
        }
        let top_contents = top.finish();
        let top_level = self.write_block(&top_contents, Compression::None)?;

        let p = &mut self.props;
        p.index_partitions = done.len() as u64;
        p.top_level_index_bytes = top_contents.len() as u64;
        p.index_bytes = index_bytes + top_contents.len() as u64;
        p.filter_bytes = part_bytes.iter().sum();
        p.filter = FilterDescriptor::new(&self.opts.filter, self.digests_built, part_bytes, role)
            .with_fprs_of(done.first().map_or(&[][..], |p| &p.filter[..]));
        Ok((top_level, filter_index))
    }

    /// In a partitioned table, cut after the data block just indexed when the index
    /// partition or the filter over its digests has reached the target size.
    fn maybe_cut_partition(&mut self) {
        let Some(p) = &self.partitioning else {
            return;
        };
        if self.digests.len() >= p.filter_keys || self.index.estimated_size() >= p.target {
            self.cut_partition();
        }
    }

    /// Finish the current partition: its index contents and its filter parts.
    fn cut_partition(&mut self) {
        let separator = self.index.last_separator().to_vec();
        let index = self.index.finish();
        let filter = (self.filter_builder)(&self.opts.filter, &self.digests, self.opts.digest_hash.digest_version());
        self.digests_built += self.digests.len() as u64;
        self.digests.clear();
        if let Some(p) = self.partitioning.as_mut() {
            p.done_bytes += index.len() as u64;
            p.done.push(BuiltPartition { separator, index, filter });
        }
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

/// The role of a filter's parts (whole, module, unit), from the first part's header; `None`
/// for no filter (or parts that do not parse, which only test stand-ins build).
fn role_of(parts: &[Vec<u8>]) -> Option<crate::filter::Role> {
    parts.first().and_then(|p| FilterPart::parse_any_version(p).ok()).map(|p| p.role())
}
