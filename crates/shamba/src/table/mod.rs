//! SST files: data blocks, index, filter parts, properties and footer; the builder that
//! writes them, the reader that serves lookups and cursors, and the table cache of open
//! readers. The byte-level layout is in `crates/shamba/docs/format.md`.
//!
//! Where things happen:
//! - `block_builder.rs` / `block.rs`: prefix-compressed blocks with restart points, and the
//!   two-way block cursor;
//! - `format.rs`: block handles, the block trailer (compression type, crc32c), the footer;
//! - `index.rs`: fence pointers and shortened separators;
//! - `meta_index.rs`: the filter index (one handle per filter part) and the metaindex;
//! - `partition.rs`: the top-level index of a partitioned table (format version 2);
//! - `properties.rs`: the properties block;
//! - `builder.rs`: writing a table (and cutting partitions); `reader.rs`: opening one, the
//!   point lookup (and a batch's in steps) and what the filter manager asks of a table;
//!   `filter_probe.rs`: every way a lookup reaches a filter part (resident, pinned, taken
//!   by the prefetch, cached, read alone or with the parts after it) and the one walk that
//!   probes them; `meta_blocks.rs`: pinned or cached index and filter blocks, and their
//!   cache priorities; `resident_parts.rs`: filter parts the filter manager loads and
//!   releases under a memory budget (pooled filters);
//! - `file.rs`: the one place table bytes are read from storage (charged and counted);
//!   `file_handles.rs`: the database's bounded cache of open table files it reads through;
//! - `two_level_cursor.rs`: the table cursor, over `index_cursor.rs` (index entries across
//!   partitions); `table_cache.rs`: open readers by number;
//! - `dump.rs`: a human-readable dump of a file; `verify.rs`: checking every block and
//!   key of a file (`Db::verify`), read around the cache.

mod block;
mod block_batch;
mod block_builder;
mod builder;
mod coding;
mod dump;
mod file;
mod file_handles;
mod filter_probe;
mod format;
mod index;
mod index_cursor;
mod index_fences;
mod meta_blocks;
mod meta_index;
mod metadata_budget;
mod partition;
mod pinned_part;
mod properties;
mod reader;
mod resident_parts;
mod table_cache;
mod top_level;
mod two_level_cursor;
mod verify;

#[cfg(test)]
mod tests;

pub(crate) use block::Block;
pub(crate) use block_batch::read_data_blocks;
pub(crate) use builder::TableBuilder;
#[cfg(feature = "lab")]
pub(crate) use dump::dump_reader;
pub use dump::dump_table;
pub(crate) use format::BlockHandle;
pub(crate) use format::BLOCK_TRAILER_LEN;
#[cfg(any(test, feature = "lab"))]
pub(crate) use format::FOOTER_LEN;
#[cfg(test)]
pub(crate) use format::{FORMAT_VERSION_FLAT, FORMAT_VERSION_PARTITIONED};
pub(crate) use metadata_budget::MetadataBudget;
// The decoders, for the fuzz targets (`lab::fuzz`), which drive them directly.
#[cfg(feature = "lab")]
pub(crate) use block::bytewise;
#[cfg(feature = "lab")]
pub(crate) use file::TableFile;
#[cfg(feature = "lab")]
pub(crate) use format::{mask_crc, read_block, Footer};
#[cfg(feature = "lab")]
pub(crate) use index_fences::IndexFences;
#[cfg(feature = "lab")]
pub(crate) use meta_index::{decode_filter_index, decode_handles};
#[cfg(feature = "lab")]
pub(crate) use partition::decode_top_level;
pub(crate) use pinned_part::PinnedPart;
#[cfg(feature = "lab")]
pub(crate) use properties::TableProperties;
pub(crate) use reader::{IndexSearch, Spot, TableReader};
pub(crate) use resident_parts::ResidentParts;
pub(crate) use table_cache::TableCache;
pub(crate) use verify::verify_table;

use crate::cache::BlockCache;
use crate::filter::{FilterSpec, HashFn};
use crate::io::{DeviceModel, IoStats};
use crate::key::{SeqNo, ValueKind};
use crate::options::Compression;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a table is written.
#[derive(Debug, Clone)]
pub(crate) struct TableOptions {
    /// Target uncompressed data block size.
    pub block_size: usize,
    /// Keys between restart points.
    pub restart_interval: usize,
    /// Block compression.
    pub compression: Compression,
    /// The filter this table gets (from the build policy for its level).
    pub filter: FilterSpec,
    /// Split index and filter into key-range partitions behind a top-level index (format
    /// version 2). Default: false.
    pub partition_index_and_filters: bool,
    /// Target bytes of an index partition, and of a partition's filter parts together.
    /// Default: 4096.
    pub metadata_partition_size: usize,
    /// Hash function of the key digests the filters are built from. Default: xxh3-128.
    pub digest_hash: HashFn,
}

impl Default for TableOptions {
    /// The defaults of [`crate::Options`]: 4 KiB blocks, a restart every 16 keys, no
    /// compression, no filter, no partitions.
    fn default() -> Self {
        TableOptions {
            block_size: 4096,
            restart_interval: 16,
            compression: Compression::None,
            filter: FilterSpec::None,
            partition_index_and_filters: false,
            metadata_partition_size: 4096,
            digest_hash: HashFn::Xxh3_128,
        }
    }
}

impl TableOptions {
    /// The table options `opts` describe, with the filter the build policy chose and the
    /// compression of the table's level.
    pub(crate) fn from_options(opts: &crate::Options, filter: FilterSpec, compression: Compression) -> Self {
        TableOptions {
            block_size: opts.block_size,
            restart_interval: opts.block_restart_interval,
            compression,
            filter,
            partition_index_and_filters: opts.partition_index_and_filters,
            metadata_partition_size: opts.metadata_partition_size,
            digest_hash: opts.digest_hash(),
        }
    }
}

/// What a finished table holds, for its `FileMeta`.
#[derive(Debug, Clone, Default)]
pub(crate) struct TableSummary {
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
    /// Bytes of data blocks.
    pub data_bytes: u64,
}

/// Shared services a table reader uses.
#[derive(Clone)]
pub(crate) struct TableContext {
    /// Block cache for data (and, if configured, index and filter) blocks.
    pub cache: Arc<BlockCache>,
    /// Device read counters.
    pub io: Arc<IoStats>,
    /// Emulated device cost per block read.
    pub device: DeviceModel,
    /// Index and filter blocks go through the cache (true) or are pinned (false).
    pub cache_index_and_filter_blocks: bool,
    /// Digest version every filter part must have been built with (a part of another
    /// version is corrupt: probing it would give false negatives); `None` accepts any, for
    /// tools that only describe parts.
    pub digest_version: Option<u8>,
    /// Filter parts are neither pinned at open nor kept by the block cache: the filter
    /// manager loads and releases them ([`ResidentParts`]) to keep them under one budget.
    /// A part probed while not loaded is read for that probe only (through the block cache
    /// when `cache_index_and_filter_blocks`, whose capacity then bounds it).
    pub pool_filters: bool,
    /// The limit on index and filter bytes the readers pin; a reader finding no room keeps
    /// its metadata in the block cache ([`MetadataBudget`]).
    pub metadata: Arc<MetadataBudget>,
}

/// What a table knows about a key, with the version's sequence number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TableGet {
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

/// Where a batched lookup's probe of one table leaves a key, before any data block is
/// read (`TableReader::probe_filters_at` and `finish_index_search`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockProbe {
    /// The filter said no.
    FilteredOut,
    /// The filter said maybe (or was skipped), but no data block can hold the key.
    NotFound,
    /// The data block that may hold it.
    Block(BlockHandle),
}

/// Which filter parts a lookup probes, chosen by the filter manager.
///
/// Parts are probed in order (modules), or as a subset (units: the first `max_parts`
/// enabled units). Probing fewer parts costs fewer filter-block reads and more false
/// positives; it never changes an answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProbePlan<'a> {
    /// Probe at most this many leading parts; 0 skips the filter.
    pub max_parts: u32,
    /// With pooled filters, the table's loaded parts (probed in place of a read).
    pub resident: Option<&'a ResidentParts>,
    /// When the probe must read a part that is not resident, read it and the parts after
    /// it, this many in all (and no further than `max_parts`), with one read; 0 reads each
    /// part on its own ([`crate::ShambaPolicy::read_rest_together`]).
    pub read_together: u32,
}

impl ProbePlan<'static> {
    /// Probe every part.
    pub(crate) const ALL: ProbePlan<'static> = ProbePlan { max_parts: u32::MAX, resident: None, read_together: 0 };
    /// Skip the filter: go straight to the index.
    pub(crate) const SKIP: ProbePlan<'static> = ProbePlan { max_parts: 0, resident: None, read_together: 0 };

    /// Probe at most `max_parts` leading parts.
    pub(crate) const fn first(max_parts: usize) -> ProbePlan<'static> {
        // A u32 keeps the plan in two words (it is made and passed per table visit).
        let max_parts = if max_parts > u32::MAX as usize { u32::MAX } else { max_parts as u32 };
        ProbePlan { max_parts, resident: None, read_together: 0 }
    }
}

impl<'a> ProbePlan<'a> {
    /// The same plan, probing `resident`'s loaded parts in place.
    pub(crate) fn with_resident(self, resident: Option<&'a ResidentParts>) -> ProbePlan<'a> {
        ProbePlan { resident, ..self }
    }

    /// The same plan, reading up to `parts` parts not resident with one read (0: one by one).
    pub(crate) fn reading_together(self, parts: u32) -> ProbePlan<'a> {
        ProbePlan { read_together: parts, ..self }
    }
}

/// What one table lookup's filter probe did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ProbeOutcome {
    /// Filter parts probed.
    pub parts_probed: u32,
    /// Of those, parts that were neither pinned nor in the block cache and were read from
    /// the device.
    pub filter_blocks_read_from_device: u32,
    /// Bytes of those reads, block trailers included (as `IoStats` counts them).
    pub filter_bytes_read_from_device: u64,
    /// With `ReadLab::profile`: nanoseconds finding and probing filter parts.
    pub filter_nanos: u64,
    /// With `ReadLab::profile`: nanoseconds reading and searching the index.
    pub index_nanos: u64,
    /// With `ReadLab::profile`: nanoseconds reading and searching the data block.
    pub data_nanos: u64,
}

/// Path of SST `number` in `dir`.
pub(crate) fn table_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.sst"))
}
