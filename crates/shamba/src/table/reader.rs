//! An open SST: point lookups and the blocks cursors read.
//!
//! `open` reads the footer, properties, metaindex and the filter index, and in a
//! partitioned table (format version 2) the top-level index, which stays pinned. With
//! `cache_index_and_filter_blocks` false the index (or every index partition) and every
//! filter part are read once here and pinned (counted as Index / Filter reads at open);
//! with it true they are fetched through the block cache on every use (`meta_blocks.rs`
//! says at which priority). Data blocks always go through the cache at low priority
//! (inserted unless `ReadOptions::fill_cache` is false).
//!
//! Internally an unpartitioned table is a table of one partition without a top-level
//! index, so lookups and cursors have one code path.
//!
//! The point lookup, top to bottom: (partitioned: a binary search of the pinned top-level
//! keys picks the partition) -> the partition's filter parts in order with the caller's
//! digest (the first negative ends it; the key is never hashed here; how each part is
//! reached is `filter_probe.rs`) -> index binary search -> one data block -> seek in the
//! block. It allocates only the returned value:
//! block contents are shared `Arc`s and the key buffers of the block cursors are reused per
//! thread.

#![deny(clippy::indexing_slicing)]

use super::block::Block;
use super::file::TableFile;
use super::format::{BlockHandle, Footer, FORMAT_VERSION_FLAT, FORMAT_VERSION_PARTITIONED};
use super::index_fences::{FenceSearch, IndexFences};
use super::meta_blocks::{MetaBlock, Partition};
use super::meta_index::{decode_filter_index, decode_handles};
use super::metadata_budget::Placement;
use super::partition::decode_top_level;
use super::pinned_part::PinnedPart;
use super::properties::TableProperties;
use super::top_level::TopLevelKeys;
use super::two_level_cursor::TableCursor;
use super::{BlockProbe, ProbeOutcome, ProbePlan, TableContext, TableGet};
use crate::cursor::Cursor;
use crate::error::Result;
use crate::filter::{Digest, Role};
use crate::io::BlockKind;
use crate::key::{compare_internal_keys, parse_internal_key, user_key};
use crate::options::{ReadOptions, StageTimer};
use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;

thread_local! {
    /// Key buffer lent to block cursors during `get`, so a lookup does not allocate one.
    static KEY_SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// An open SST file serving lookups and cursors.
pub(crate) struct TableReader {
    pub(super) file: TableFile,
    pub(super) number: u64,
    pub(super) ctx: TableContext,
    footer: Footer,
    properties: TableProperties,
    metaindex: Vec<(Vec<u8>, BlockHandle)>,
    /// Top-level keys (each partition's last separator), pinned; empty when the table is
    /// not partitioned.
    top_level: TopLevelKeys,
    /// Bytes of the top-level index block's contents (0 when not partitioned).
    top_level_bytes: u64,
    /// One entry per partition; exactly one when the table is not partitioned.
    pub(super) partitions: Vec<Partition>,
    /// What the filter parts are (whole, modules, units), from the properties.
    pub(super) filter_role: Option<Role>,
    /// Whether the index and filters are pinned under the database's metadata limit (the
    /// room held until the reader drops) or kept in the block cache.
    placement: Placement,
}

/// Where one lookup falls in one table, found once by [`TableReader::locate`]: the
/// partition whose key range holds the key (`None`: past the table's last key), and the
/// first filter part once a prefetch pass took it from the block cache.
pub(crate) struct Spot<'r> {
    pub(super) partition: Option<&'r Partition>,
    /// The partition's number (its slots among pooled filter parts).
    pub(super) partition_index: usize,
    /// The first filter part, taken from the block cache by the prefetch passes. Kept as
    /// bytes, parsed by the second pass and again by the probe: the header is in the CPU
    /// cache by then, so the second parse costs a few instructions, where keeping the
    /// parsed part would make every spot (a batch holds one per key and candidate) several
    /// times larger to move.
    pub(super) first_part: Option<Arc<[u8]>>,
}

impl TableReader {
    /// Open a table: read and check footer, properties, the top-level index of a
    /// partitioned table, and pin index and filters unless they are cached. The reader
    /// keeps those in memory; `file` says whether it holds its file open or takes it from
    /// the database's cache of open files per read.
    pub(crate) fn open(file: TableFile, number: u64, ctx: TableContext) -> Result<TableReader> {
        let footer = file.read_footer()?;
        let meta_block = |handle: BlockHandle| -> Result<Block> {
            let data = file.read_block(handle, BlockKind::Other, true)?;
            Block::new(data).map_err(|e| e.in_file(file.path(), Some(handle.offset)))
        };
        let properties = TableProperties::decode(meta_block(footer.properties)?)
            .map_err(|e| file.corruption(footer.properties.offset, format!("properties: {e}")))?;
        if properties.format_version != footer.format_version {
            return Err(file.corruption(
                footer.properties.offset,
                format!(
                    "properties say format version {}, footer {}",
                    properties.format_version, footer.format_version
                ),
            ));
        }
        let metaindex = decode_handles(meta_block(footer.metaindex)?)
            .map_err(|e| file.corruption(footer.metaindex.offset, format!("metaindex: {e}")))?;
        let filter_handles = decode_filter_index(meta_block(footer.filter_index)?)
            .map_err(|e| file.corruption(footer.filter_index.offset, format!("filter index: {e}")))?;

        let placement = if ctx.cache_index_and_filter_blocks {
            Placement::Cached
        } else {
            // Pooled filter parts are held under the filter budget, not pinned here.
            let filters = if ctx.pool_filters { 0 } else { properties.filter_bytes };
            ctx.metadata.place(properties.index_bytes.saturating_add(filters))
        };
        let pin = placement.pins();
        let (top_level, top_level_bytes, partitions) = match footer.format_version {
            FORMAT_VERSION_FLAT => {
                if filter_handles.len() != properties.filter.parts() {
                    return Err(file.corruption(
                        footer.filter_index.offset,
                        format!(
                            "filter index lists {} parts, properties {}",
                            filter_handles.len(),
                            properties.filter.parts()
                        ),
                    ));
                }
                let pins = (pin, !ctx.pool_filters);
                let partition = Partition::open(&file, footer.index, &filter_handles, pins, ctx.digest_version)?;
                (TopLevelKeys::default(), 0, vec![partition])
            }
            FORMAT_VERSION_PARTITIONED => {
                if !filter_handles.is_empty() {
                    return Err(
                        file.corruption(footer.filter_index.offset, "filter index of a partitioned table lists parts")
                    );
                }
                open_partitions(&file, &footer, &properties, (pin, !ctx.pool_filters), ctx.digest_version)?
            }
            v => return Err(file.corruption(footer.index.offset, format!("unsupported format version {v}"))),
        };
        let mut reader = TableReader {
            file,
            number,
            ctx,
            footer,
            filter_role: properties.filter.role,
            properties,
            metaindex,
            top_level,
            top_level_bytes,
            partitions,
            placement,
        };
        let pinned = reader.pinned_bytes() as u64;
        if let Placement::Pinned(reservation) = &mut reader.placement {
            reservation.settle(pinned);
        }
        Ok(reader)
    }

    /// Where the lookup of `seek` falls in this table: found once per lookup (a binary
    /// search of the top-level index when partitioned) and used by the prefetch passes,
    /// the filter manager and the probe.
    #[inline]
    pub(crate) fn locate(&self, seek: &[u8]) -> Spot<'_> {
        let partition_index = self.partition_index_for(seek);
        Spot {
            partition: partition_index.and_then(|i| self.partitions.get(i)),
            partition_index: partition_index.unwrap_or(0),
            first_part: None,
        }
    }

    /// The newest version of the seek key's user key with sequence `<=` the seek key's, at a
    /// spot [`locate`](Self::locate) found for `seek`, probing only the filter parts `plan`
    /// allows (of the partition the key falls in), and reporting what the filter did.
    /// `seek` is a [`crate::key::seek_key`]; `digest` is the user key's digest, computed
    /// once by the caller: the reader never hashes the key.
    ///
    /// In a partitioned table a key past the last partition is `NotFound` without reading
    /// a block: the pinned top-level index already knows. The stages are timed into the
    /// outcome when `ro` profiles the lookup (with the `lab` feature only).
    pub(crate) fn get_at_spot(
        &self,
        spot: &Spot<'_>,
        seek: &[u8],
        digest: &Digest,
        ro: &ReadOptions,
        plan: ProbePlan<'_>,
    ) -> Result<(TableGet, ProbeOutcome)> {
        let mut outcome = ProbeOutcome::default();
        let timer = ro.stage_timer();
        let start = timer.start();
        let Some(partition) = spot.partition else {
            return Ok((TableGet::NotFound, outcome));
        };
        let may_contain = self.probe_filters(partition, spot, digest, plan, &mut outcome)?;
        outcome.filter_nanos = timer.nanos_since(start);
        if !may_contain {
            return Ok((TableGet::FilteredOut, outcome));
        }
        self.lookup_data(partition, seek, ro, timer, &mut outcome).map(|g| (g, outcome))
    }

    /// The index and data-block part of a lookup, after the filter said maybe.
    fn lookup_data(
        &self,
        partition: &Partition,
        seek: &[u8],
        ro: &ReadOptions,
        timer: StageTimer,
        outcome: &mut ProbeOutcome,
    ) -> Result<TableGet> {
        let start = timer.start();
        let index_offset = partition.index.handle().offset;
        let index = self.index_block(partition)?;
        let mut buffer = KEY_SCRATCH.take();
        let handle = match partition.index.pinned().and_then(|p| p.fences.as_ref()) {
            Some(fences) => match fences.find(&index, seek) {
                Ok(found) => found.map(|value| self.decode_index_value(value, index_offset)),
                Err(e) => Some(Err(e.in_file(self.path(), Some(index_offset)))),
            },
            None => {
                let mut index = index.into_owned().cursor_with_buffer(compare_internal_keys, buffer);
                let sought = index.seek(seek).map_err(|e| e.in_file(self.path(), Some(index_offset)));
                let handle = match sought {
                    Ok(()) if index.valid() => Some(self.decode_index_value(index.value(), index_offset)),
                    Ok(()) => None,
                    Err(e) => Some(Err(e)),
                };
                buffer = index.into_key_buffer();
                handle
            }
        };
        outcome.index_nanos = timer.nanos_since(start);
        let index_done = timer.start();
        let Some(handle) = handle.transpose()? else {
            KEY_SCRATCH.set(buffer);
            return Ok(TableGet::NotFound);
        };

        let mut data = self.data_block(handle, ro, None)?.cursor_with_buffer(compare_internal_keys, buffer);
        data.seek(seek).map_err(|e| e.in_file(self.path(), Some(handle.offset)))?;
        let result = if data.valid() && user_key(data.key()) == user_key(seek) {
            let Some(parsed) = parse_internal_key(data.key()) else {
                return Err(self.file.corruption(handle.offset, format!("bad internal key {:02x?}", data.key())));
            };
            TableGet::Found { seq: parsed.seq, kind: parsed.kind, value: data.value().to_vec() }
        } else {
            TableGet::NotFound
        };
        KEY_SCRATCH.set(data.into_key_buffer());
        outcome.data_nanos = timer.nanos_since(index_done);
        Ok(result)
    }

    /// A cursor over the whole table.
    pub(crate) fn cursor(self: &Arc<Self>, ro: &ReadOptions) -> Box<dyn Cursor> {
        Box::new(TableCursor::new(self.clone(), ro.clone()))
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        self.file.path()
    }

    /// The file's size in bytes.
    pub(crate) fn file_size(&self) -> u64 {
        self.file.len()
    }

    /// The footer.
    pub(crate) fn footer(&self) -> &Footer {
        &self.footer
    }

    /// The properties block.
    pub(crate) fn properties(&self) -> &TableProperties {
        &self.properties
    }

    /// Whether the table's blocks were written with `compression` (its properties record
    /// the kind, not a zstd level).
    pub(crate) fn written_with(&self, compression: crate::options::Compression) -> bool {
        self.properties.compression == super::format::CompressionType::of(compression) as u8
    }

    /// Whether the table's filter is of the family its level would build (Ribbon or
    /// Bloom, `ribbon` saying which); a table without a filter matches either.
    pub(crate) fn filter_family_is(&self, ribbon: bool) -> bool {
        let f = &self.properties.filter;
        f.part_bytes.is_empty() || f.kind == "None" || f.kind.contains("Ribbon") == ribbon
    }

    /// Optional meta blocks by name (empty in format versions 1 and 2).
    pub(crate) fn metaindex(&self) -> &[(Vec<u8>, BlockHandle)] {
        &self.metaindex
    }

    /// What the table holds, as its builder reported it.
    #[cfg(test)]
    pub(crate) fn summary(&self) -> super::TableSummary {
        super::TableSummary::of(&self.properties, self.file.len())
    }

    /// Bytes of index and filter blocks pinned in this reader (everything when they are
    /// not cached; the top-level index of a partitioned table either way), with the pinned
    /// index blocks' prefix fences.
    pub(crate) fn pinned_bytes(&self) -> usize {
        let partitions: usize = self
            .partitions
            .iter()
            .map(|p| {
                let index = p.index.pinned().map_or(0, |i| i.pinned_bytes());
                index + p.filter.iter().filter_map(MetaBlock::pinned).map(|f| f.bytes().len()).sum::<usize>()
            })
            .sum();
        self.top_level_bytes as usize + partitions
    }

    /// Whether index and filter are split into key-range partitions (format version 2).
    pub(crate) fn is_partitioned(&self) -> bool {
        self.footer.format_version >= FORMAT_VERSION_PARTITIONED
    }

    /// Number of key-range partitions (0 when the table is not partitioned).
    pub(crate) fn partition_count(&self) -> usize {
        if self.is_partitioned() {
            self.partitions.len()
        } else {
            0
        }
    }

    /// Number of filter parts a lookup may probe (0: no filter, every lookup reads the
    /// index). In a partitioned table, the parts of each partition.
    pub(crate) fn filter_part_count(&self) -> usize {
        self.properties.filter.parts()
    }

    /// Bytes of each filter part, in probe order, summed over the partitions: what
    /// keeping part `i` resident for every key of the table costs.
    #[cfg(test)]
    pub(crate) fn filter_part_bytes(&self) -> Vec<u64> {
        self.properties.filter.part_bytes.clone()
    }

    /// Kind of filter, the variant name of its [`crate::filter::FilterSpec`] (`None`,
    /// `Bloom`, `ModularBloom`, ...).
    #[cfg(test)]
    pub(crate) fn filter_kind(&self) -> &str {
        &self.properties.filter.kind
    }

    /// Whether the parts are a whole filter, modules (probe a prefix, in order) or units
    /// (probe any subset); `None` when the table has no filter.
    #[cfg(test)]
    pub(crate) fn filter_role(&self) -> Option<Role> {
        self.filter_role
    }

    /// Bytes of (index, filter) contents: index blocks (top-level and partitions) and all
    /// filter parts — what pinning them costs, or what a cache needs to hold them all.
    #[cfg(test)]
    pub(crate) fn metadata_bytes(&self) -> (u64, u64) {
        let index: u64 = self.partitions.iter().map(|p| p.index.handle().size).sum();
        let filter: u64 = self.partitions.iter().flat_map(|p| &p.filter).map(|m| m.handle().size).sum();
        (self.top_level_bytes + index, filter)
    }

    /// The table's first filter part when a lookup may probe it without the reader: the
    /// table is not partitioned (the part does not depend on the key) and the part is
    /// pinned. A lookup keeps it beside the table's slot (`db/table_slots.rs`) and probes
    /// it before it touches the reader at all. Shares the pinned bytes.
    pub(crate) fn first_filter_part(&self) -> Option<PinnedPart> {
        if self.is_partitioned() {
            return None;
        }
        self.partitions.first()?.filter.first()?.pinned().cloned()
    }

    /// Number of the partition whose key range holds `seek`: the first whose top-level key
    /// is `>= seek` (`None` past the last). An unpartitioned table's one partition holds
    /// all.
    pub(super) fn partition_index_for(&self, seek: &[u8]) -> Option<usize> {
        if !self.is_partitioned() {
            return Some(0);
        }
        let i = self.top_level.first_at_or_after(seek);
        (i < self.partitions.len()).then_some(i)
    }

    /// The top-level key of partition `p` (`None` when not partitioned).
    pub(super) fn top_level_key(&self, p: usize) -> Option<&[u8]> {
        self.top_level.get(p)
    }

    /// The handle an index entry's value holds; `index_offset` names the index block.
    pub(super) fn decode_index_value(&self, value: &[u8], index_offset: u64) -> Result<BlockHandle> {
        BlockHandle::decode_exact(value).map_err(|e| self.file.corruption(index_offset, format!("index entry: {e}")))
    }

    /// A corruption error at `offset` of this file.
    pub(super) fn corruption(&self, offset: u64, reason: impl Into<String>) -> crate::error::Error {
        self.file.corruption(offset, reason)
    }
}

/// The steps of a batched lookup (`db/multi_get.rs`): the filter and the index first, for
/// every key of the batch, then each data block read once for all the keys that need it.
/// They do what [`TableReader::get_at_spot`] does in one go, in two halves, sharing its
/// filter probe (`probe_filters`); the model test compares `multi_get` with `get` on every
/// policy and layout.
impl TableReader {
    /// The filter parts `plan` allows at `spot`, as `get_at_spot` probes them: `Some` when
    /// the table is done with the key (filtered out, or past its last partition), `None`
    /// when the filter says maybe and the index is next ([`start_index_search`]). `timer`
    /// times the probe into the outcome.
    ///
    /// [`start_index_search`]: Self::start_index_search
    pub(crate) fn probe_filters_at(
        &self,
        spot: &Spot<'_>,
        digest: &Digest,
        plan: ProbePlan<'_>,
        timer: StageTimer,
    ) -> Result<(Option<BlockProbe>, ProbeOutcome)> {
        let mut outcome = ProbeOutcome::default();
        let start = timer.start();
        let Some(partition) = spot.partition else {
            return Ok((Some(BlockProbe::NotFound), outcome));
        };
        let may_contain = self.probe_filters(partition, spot, digest, plan, &mut outcome)?;
        outcome.filter_nanos = timer.nanos_since(start);
        Ok(((!may_contain).then_some(BlockProbe::FilteredOut), outcome))
    }

    /// Start the index search of `seek` at `spot` (whose filter said maybe). On a pinned
    /// index with fences the search goes a step at a time ([`step_index_search`]), so a
    /// batch interleaves its keys' searches and their cache misses overlap; any other
    /// index is searched whole by [`finish_index_search`].
    ///
    /// [`step_index_search`]: Self::step_index_search
    /// [`finish_index_search`]: Self::finish_index_search
    pub(crate) fn start_index_search(&self, spot: &Spot<'_>, seek: &[u8]) -> IndexSearch {
        IndexSearch(spot.partition.and_then(fenced).map(|(_, fences)| fences.start_search(seek)))
    }

    /// One step of the search; `false` once it has no step left before settling.
    pub(crate) fn step_index_search(&self, spot: &Spot<'_>, search: &mut IndexSearch) -> bool {
        match (spot.partition.and_then(fenced), &mut search.0) {
            (Some((_, fences)), Some(s)) => fences.step(s),
            _ => false,
        }
    }

    /// End the narrowing and ask for the index entry's restart slot.
    pub(crate) fn settle_index_search(&self, spot: &Spot<'_>, search: &mut IndexSearch) {
        if let (Some((block, fences)), Some(s)) = (spot.partition.and_then(fenced), &mut search.0) {
            fences.settle(block, s);
        }
    }

    /// Ask for the index entry a settled search lands on.
    pub(crate) fn prefetch_index_answer(&self, spot: &Spot<'_>, search: &IndexSearch) {
        if let (Some((block, fences)), Some(s)) = (spot.partition.and_then(fenced), &search.0) {
            fences.prefetch_answer(block, s);
        }
    }

    /// The data block the index names for `seek` (what `get_at_spot` reads after a maybe),
    /// from a search [`start_index_search`](Self::start_index_search) began for it.
    pub(crate) fn finish_index_search(&self, spot: &Spot<'_>, seek: &[u8], search: IndexSearch) -> Result<BlockProbe> {
        let Some(partition) = spot.partition else {
            return Ok(BlockProbe::NotFound);
        };
        let index_offset = partition.index.handle().offset;
        let handle = match (fenced(partition), search.0) {
            (Some((block, fences)), Some(s)) => {
                let found = fences.finish(block, seek, s).map_err(|e| e.in_file(self.path(), Some(index_offset)))?;
                found.map(|value| self.decode_index_value(value, index_offset)).transpose()?
            }
            _ => {
                let index = self.index_block(partition)?;
                let found = match partition.index.pinned().and_then(|p| p.fences.as_ref()) {
                    Some(fences) => {
                        fences.find(&index, seek).map_err(|e| e.in_file(self.path(), Some(index_offset)))?
                    }
                    None => {
                        let mut index = index.into_owned().cursor(compare_internal_keys);
                        index.seek(seek).map_err(|e| e.in_file(self.path(), Some(index_offset)))?;
                        return if index.valid() {
                            Ok(BlockProbe::Block(self.decode_index_value(index.value(), index_offset)?))
                        } else {
                            Ok(BlockProbe::NotFound)
                        };
                    }
                };
                found.map(|value| self.decode_index_value(value, index_offset)).transpose()?
            }
        };
        Ok(handle.map_or(BlockProbe::NotFound, BlockProbe::Block))
    }

    /// Look up every seek key of `seeks` in `block`, this table's data block at `handle`
    /// (read by [`super::read_data_blocks`] with others).
    pub(crate) fn get_in_block<'k>(
        &self,
        block: Block,
        handle: BlockHandle,
        seeks: impl IntoIterator<Item = &'k [u8]>,
    ) -> Vec<Result<TableGet>> {
        let mut data = block.cursor(compare_internal_keys);
        seeks
            .into_iter()
            .map(|seek| {
                data.seek(seek).map_err(|e| e.in_file(self.path(), Some(handle.offset)))?;
                if !(data.valid() && user_key(data.key()) == user_key(seek)) {
                    return Ok(TableGet::NotFound);
                }
                let Some(parsed) = parse_internal_key(data.key()) else {
                    return Err(self.file.corruption(handle.offset, format!("bad internal key {:02x?}", data.key())));
                };
                Ok(TableGet::Found { seq: parsed.seq, kind: parsed.kind, value: data.value().to_vec() })
            })
            .collect()
    }
}

/// An index search of a batched lookup in progress ([`TableReader::start_index_search`]):
/// stepped through the pinned index's fences, or (`None`) left whole for the finish.
pub(crate) struct IndexSearch(Option<FenceSearch>);

/// A partition's pinned index block with its fences, when it has both.
#[inline]
fn fenced(partition: &Partition) -> Option<(&Block, &IndexFences)> {
    let pinned = partition.index.pinned()?;
    Some((&pinned.block, pinned.fences.as_ref()?))
}

/// What the top-level index of a partitioned table gives an open reader: (top-level keys,
/// bytes of their block, partitions).
type OpenedPartitions = (TopLevelKeys, u64, Vec<Partition>);

/// Read and check a partitioned table's top-level index, and open each partition.
fn open_partitions(
    file: &TableFile,
    footer: &Footer,
    properties: &TableProperties,
    pin: (bool, bool),
    digest_version: Option<u8>,
) -> Result<OpenedPartitions> {
    let at = footer.index.offset;
    let bytes = file.read_block(footer.index, BlockKind::Index, true)?;
    let top_level_bytes = bytes.len() as u64;
    let block = Block::new(bytes).map_err(|e| e.in_file(file.path(), Some(at)))?;
    let entries = decode_top_level(block).map_err(|e| file.corruption(at, format!("top-level index: {e}")))?;
    if entries.len() as u64 != properties.index_partitions {
        return Err(file.corruption(
            at,
            format!("top-level index lists {} partitions, properties {}", entries.len(), properties.index_partitions),
        ));
    }
    let expected_parts = properties.filter.parts();
    let mut part_bytes = vec![0u64; expected_parts];
    let mut keys = Vec::with_capacity(entries.len());
    let mut partitions = Vec::with_capacity(entries.len());
    for (key, handles) in entries {
        if handles.filter.len() > expected_parts {
            return Err(file.corruption(
                at,
                format!("a partition lists {} filter parts, properties {expected_parts}", handles.filter.len()),
            ));
        }
        for (sum, h) in part_bytes.iter_mut().zip(&handles.filter) {
            *sum += h.size;
        }
        partitions.push(Partition::open(file, handles.index, &handles.filter, pin, digest_version)?);
        keys.push(key.into_boxed_slice());
    }
    if part_bytes != properties.filter.part_bytes {
        return Err(file.corruption(
            at,
            format!("filter parts add up to {part_bytes:?} bytes, properties say {:?}", properties.filter.part_bytes),
        ));
    }
    Ok((TopLevelKeys::new(keys), top_level_bytes, partitions))
}

impl std::fmt::Debug for TableReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableReader")
            .field("path", &self.file.path())
            .field("number", &self.number)
            .field("entries", &self.properties.entries)
            .field("partitions", &self.partition_count())
            .field("filter_parts", &self.filter_part_count())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{build, ctx, open, opts, versioned_entries};
    use super::*;
    use crate::error::Error;
    use crate::key::{seek_key, MAX_SEQ};
    use crate::options::Compression;

    /// A lookup probing every filter part.
    fn get(r: &TableReader, user_key: &[u8]) -> Result<TableGet> {
        let seek = seek_key(user_key, MAX_SEQ);
        let spot = r.locate(&seek);
        r.get_at_spot(&spot, &seek, &Digest::of(user_key), &ReadOptions::default(), ProbePlan::ALL).map(|(g, _)| g)
    }

    #[test]
    fn open_reads_what_the_builder_wrote() {
        let f = build(versioned_entries(40), opts(256, Compression::None));
        let r = open(&f.path, ctx(1 << 20, false)).unwrap();
        assert_eq!(r.properties().entries, f.entries.len() as u64);
        assert_eq!(r.file_size(), std::fs::metadata(&f.path).unwrap().len());
        assert_eq!((r.is_partitioned(), r.partition_count()), (false, 0));
        assert!(r.filter_part_count() > 0 && r.pinned_bytes() > 0, "index and filter are pinned");
    }

    #[test]
    fn get_finds_the_newest_version_of_a_present_key() {
        let f = build(versioned_entries(40), opts(256, Compression::None));
        let r = open(&f.path, ctx(1 << 20, false)).unwrap();
        let (newest, value) = f.entries.first().unwrap();
        let p = crate::key::parse_internal_key(newest).unwrap();
        match get(&r, p.user_key).unwrap() {
            TableGet::Found { seq, kind, value: got } => assert_eq!((seq, kind, &got), (p.seq, p.kind, value)),
            other => panic!("expected the newest version, got {other:?}"),
        }
    }

    #[test]
    fn an_absent_key_is_filtered_out_or_not_found() {
        let f = build(versioned_entries(40), opts(256, Compression::None));
        let r = open(&f.path, ctx(1 << 20, false)).unwrap();
        let mut filtered = 0;
        for i in 0..200 {
            match get(&r, format!("absent-{i}").as_bytes()).unwrap() {
                TableGet::FilteredOut => filtered += 1,
                TableGet::NotFound => {}
                found @ TableGet::Found { .. } => panic!("an absent key was found: {found:?}"),
            }
        }
        // 10 bits per key: about 1% false positives.
        assert!(filtered >= 180, "only {filtered} of 200 absent keys filtered out");
    }

    #[test]
    fn a_damaged_data_block_is_corruption_naming_the_file() {
        let f = build(versioned_entries(40), opts(256, Compression::None));
        let mut bytes = std::fs::read(&f.path).unwrap();
        // The first data block starts the file; its first entry holds the smallest key.
        *bytes.get_mut(3).unwrap() ^= 0x40;
        std::fs::write(&f.path, &bytes).unwrap();
        let r = open(&f.path, ctx(1 << 20, false)).unwrap();
        let p = crate::key::parse_internal_key(&f.entries.first().unwrap().0).unwrap();
        match get(&r, p.user_key) {
            Err(Error::Corruption { file, .. }) => assert_eq!(file, f.path),
            other => panic!("expected corruption of {}, got {other:?}", f.path.display()),
        }
    }

    #[test]
    fn a_damaged_footer_fails_open_as_corruption_naming_the_file() {
        let f = build(versioned_entries(10), opts(256, Compression::None));
        let mut bytes = std::fs::read(&f.path).unwrap();
        *bytes.last_mut().unwrap() ^= 0xFF;
        std::fs::write(&f.path, &bytes).unwrap();
        match open(&f.path, ctx(0, false)) {
            Err(Error::Corruption { file, .. }) => assert_eq!(file, f.path),
            other => panic!("expected corruption, got {other:?}"),
        }
    }
}
