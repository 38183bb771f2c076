//! Checking one table file end to end, for `Db::verify`.
//!
//! Every block is read straight from the file with its own handle: not through the block
//! cache (a cached copy would hide damage on disk, and a full walk would evict the
//! working set) nor the database's open files or I/O counters. Each block's checksum is
//! computed, whatever `ReadOptions::verify_checksums` says, and the walk goes on after a
//! bad block wherever the file's structure still leads somewhere: a bad data block costs
//! that block, a bad index block its partition, a bad footer the whole file (nothing can
//! be found without it).
//!
//! Checked, in file order of discovery: footer (magic, checksum, version); properties,
//! metaindex, filter index (checksums, decoding); the top-level index of a partitioned
//! table; per partition every filter part (checksum, its header parses with the
//! database's digest version) and the index block (checksum, separators strictly
//! increasing, handles decode); every data block (checksum, decompression, entries
//! decode, internal keys strictly increasing within and across blocks, each block between
//! the separators around it, blocks back to back from offset 0); then what the walk found
//! against the properties (entries, deletions, data blocks and bytes, smallest and largest
//! key and sequence number).

#![deny(clippy::indexing_slicing)]

use super::block::Block;
use super::format::{
    mask_crc, read_block, BlockHandle, Footer, BLOCK_TRAILER_LEN, FOOTER_LEN, FORMAT_VERSION_PARTITIONED, MAGIC,
};
use super::meta_index::{decode_filter_index, decode_handles};
use super::partition::decode_top_level;
use super::properties::TableProperties;
use crate::filter::FilterPart;
use crate::io::{RandomRead, Storage};
use crate::key::{compare_internal_keys, parse_internal_key, show_key, ValueKind};
use crate::verify_report::{FileContents, Problem, ProblemKind, VerifyReport};
use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

/// What checking one table found: counts and problems, and the file's contents when every
/// data block could be walked (`None` otherwise: the damage is in the problems, and
/// counts from a partial walk would only add false mismatches).
#[derive(Debug, Default)]
pub(crate) struct TableCheck {
    /// Blocks and bytes read, keys walked, problems (`tables` is left to the caller).
    pub report: VerifyReport,
    /// The file's length, when it could be opened.
    pub size: Option<u64>,
    /// What the data blocks hold, when all of them were read.
    pub contents: Option<FileContents>,
}

/// Check the table at `path`. Filter parts must carry `digest_version` (any when `None`),
/// as the database's reader requires.
pub(crate) fn verify_table(storage: &dyn Storage, path: &Path, digest_version: Option<u8>) -> TableCheck {
    let mut walk = match storage.open_read(path) {
        Ok(file) => Walk::new(path, file),
        Err(e) => {
            let mut check = TableCheck::default();
            check.report.push(Problem::new(
                ProblemKind::Unreadable,
                path,
                None,
                "file",
                "a readable file",
                e.to_string(),
            ));
            return check;
        }
    };
    let contents = walk.table(digest_version);
    TableCheck { size: Some(walk.len), report: walk.report, contents }
}

/// The blocks of one partition (the whole table when not partitioned).
struct PartitionBlocks {
    /// Names the partition in locations ("" when the table is not partitioned).
    name: String,
    index: BlockHandle,
    filter: Vec<BlockHandle>,
    /// The top-level key the partition's last separator must equal (partitioned only).
    top_level_key: Option<Vec<u8>>,
}

/// What the walk of the data blocks adds up to.
#[derive(Default)]
struct DataTotals {
    blocks: u64,
    bytes: u64,
    entries: u64,
    deletions: u64,
    smallest: Option<Vec<u8>>,
    largest: Vec<u8>,
    smallest_seq: u64,
    largest_seq: u64,
    /// Where the next data block must start: right after the previous one.
    next_offset: u64,
    /// Whether every data block was read and decoded to its end.
    complete: bool,
    /// Whether every index block was read, so the blocks and bytes above are all the
    /// index lists.
    indexed: bool,
}

struct Walk<'p> {
    path: &'p Path,
    file: Arc<dyn RandomRead>,
    len: u64,
    report: VerifyReport,
}

impl<'p> Walk<'p> {
    fn new(path: &'p Path, file: Arc<dyn RandomRead>) -> Self {
        let len = file.len();
        Walk { path, file, len, report: VerifyReport::default() }
    }

    fn problem(
        &mut self,
        kind: ProblemKind,
        offset: Option<u64>,
        location: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) {
        self.report.push(Problem::new(kind, self.path, offset, location, expected, found));
    }

    /// The whole table; the contents when every data block was walked.
    fn table(&mut self, digest_version: Option<u8>) -> Option<FileContents> {
        let footer = self.footer()?;
        let properties = self.meta_block(footer.properties, "properties").and_then(|block| {
            TableProperties::decode(block)
                .map_err(|e| {
                    self.problem(
                        ProblemKind::Malformed,
                        Some(footer.properties.offset),
                        "properties",
                        "properties that decode",
                        e.0,
                    )
                })
                .ok()
        });
        if let Some(p) = properties.as_ref().filter(|p| p.format_version != footer.format_version) {
            let found = format!("format version {}", p.format_version);
            let expected = format!("format version {} (the footer's)", footer.format_version);
            self.problem(ProblemKind::Mismatch, Some(footer.properties.offset), "properties", expected, found);
        }
        if let Some(block) = self.meta_block(footer.metaindex, "metaindex") {
            if let Err(e) = decode_handles(block) {
                self.problem(
                    ProblemKind::Malformed,
                    Some(footer.metaindex.offset),
                    "metaindex",
                    "a list of handles",
                    e.0,
                );
            }
        }
        let filter_handles = self.meta_block(footer.filter_index, "filter index").and_then(|block| {
            decode_filter_index(block)
                .map_err(|e| {
                    let at = Some(footer.filter_index.offset);
                    self.problem(ProblemKind::Malformed, at, "filter index", "a list of filter part handles", e.0)
                })
                .ok()
        });
        let partitions = self.partitions(&footer, properties.as_ref(), filter_handles)?;

        let mut data = DataTotals { complete: true, indexed: true, ..DataTotals::default() };
        let mut previous_separator: Option<Vec<u8>> = None;
        for partition in &partitions {
            for &part in &partition.filter {
                self.filter_part(part, &partition.name, digest_version);
            }
            let Some(entries) = self.index(partition) else {
                // The partition's data blocks cannot be found: the walk is incomplete, and
                // the next partition's first block follows a gap.
                (data.complete, data.indexed) = (false, false);
                previous_separator = None;
                continue;
            };
            for (separator, handle) in entries {
                self.data_block(handle, &separator, previous_separator.as_deref(), &mut data);
                previous_separator = Some(separator);
            }
        }
        if let Some(p) = &properties {
            self.against_properties(p, &footer, &data);
        }
        data.complete.then(|| FileContents {
            size: self.len,
            entries: data.entries,
            smallest: data.smallest.unwrap_or_default(),
            largest: data.largest,
        })
    }

    /// Read `len` bytes at `offset`, counted; `None` (a problem recorded) if the device fails.
    fn read(&mut self, offset: u64, len: usize, location: &str) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; len];
        match self.file.read_at(offset, &mut buf) {
            Ok(()) => {
                self.report.blocks += 1;
                self.report.bytes += len as u64;
                Some(buf)
            }
            Err(e) => {
                self.problem(
                    ProblemKind::Unreadable,
                    Some(offset),
                    location,
                    format!("{len} readable bytes"),
                    e.to_string(),
                );
                None
            }
        }
    }

    /// The footer, checked: magic first (is it a table at all), then checksum, then version.
    fn footer(&mut self) -> Option<Footer> {
        let Some(at) = self.len.checked_sub(FOOTER_LEN as u64) else {
            let found = format!("a file of {} bytes", self.len);
            self.problem(
                ProblemKind::Malformed,
                None,
                "footer",
                format!("a file of at least {FOOTER_LEN} bytes"),
                found,
            );
            return None;
        };
        let bytes = self.read(at, FOOTER_LEN, "footer")?;
        let (covered, rest) = bytes.split_at(FOOTER_LEN - 12);
        let (Some(stored), Some(magic)) = (rest.first_chunk::<4>(), rest.last_chunk::<8>()) else {
            return None;
        };
        let magic = u64::from_le_bytes(*magic);
        if magic != MAGIC {
            let (expected, found) = (format!("magic {MAGIC:#018x}"), format!("{magic:#018x}: not a Shamba table"));
            self.problem(ProblemKind::Malformed, Some(at), "footer", expected, found);
            return None;
        }
        let stored = u32::from_le_bytes(*stored);
        let computed = mask_crc(crc32c::crc32c(covered));
        if stored != computed {
            self.checksum_problem(Some(at), "footer", stored, computed);
            return None;
        }
        match Footer::decode(&bytes) {
            Ok(footer) => Some(footer),
            Err(e) => {
                self.problem(ProblemKind::Malformed, Some(at), "footer", "a supported format version", e.0);
                None
            }
        }
    }

    fn checksum_problem(&mut self, offset: Option<u64>, location: &str, stored: u32, computed: u32) {
        let expected = format!("checksum {stored:#010x} (stored)");
        let found = format!("{computed:#010x} (computed over the bytes)");
        self.problem(ProblemKind::Checksum, offset, location, expected, found);
    }

    /// A block's contents: within the file's block bytes, its checksum right, decompressed.
    fn block(&mut self, handle: BlockHandle, location: &str) -> Option<Vec<u8>> {
        let body_end = self.len.saturating_sub(FOOTER_LEN as u64);
        let len = handle
            .end_with_trailer()
            .filter(|&end| end <= body_end)
            .and_then(|end| usize::try_from(end - handle.offset).ok());
        let Some(len) = len else {
            let expected = format!("a block within the file's first {body_end} bytes");
            let found = format!("handle (offset {}, size {})", handle.offset, handle.size);
            self.problem(ProblemKind::Malformed, Some(handle.offset), location, expected, found);
            return None;
        };
        let physical = self.read(handle.offset, len, location)?;
        let (contents, trailer) = physical.split_at(len - BLOCK_TRAILER_LEN);
        let (Some(&ty), Some(stored)) = (trailer.first(), trailer.last_chunk::<4>()) else {
            return None;
        };
        let stored = u32::from_le_bytes(*stored);
        let computed = mask_crc(crc32c::crc32c_append(crc32c::crc32c(contents), &[ty]));
        if stored != computed {
            self.checksum_problem(Some(handle.offset), location, stored, computed);
            return None;
        }
        match read_block(physical, false) {
            Ok(contents) => Some(contents),
            Err(e) => {
                self.problem(ProblemKind::Malformed, Some(handle.offset), location, "a block that decompresses", e.0);
                None
            }
        }
    }

    /// A block of entries (its restart array checked).
    fn entries_block(&mut self, handle: BlockHandle, location: &str) -> Option<Block> {
        let contents = self.block(handle, location)?;
        Block::new(contents.into())
            .map_err(|e| self.problem(ProblemKind::Malformed, Some(handle.offset), location, "a block of entries", e.0))
            .ok()
    }

    fn meta_block(&mut self, handle: BlockHandle, location: &str) -> Option<Block> {
        self.entries_block(handle, location)
    }

    /// The partitions to walk: one for a flat table; the top-level index's for a
    /// partitioned one (`None` when it cannot be read: nothing more can be found).
    fn partitions(
        &mut self,
        footer: &Footer,
        properties: Option<&TableProperties>,
        filter_handles: Option<Vec<BlockHandle>>,
    ) -> Option<Vec<PartitionBlocks>> {
        if footer.format_version < FORMAT_VERSION_PARTITIONED {
            let filter = filter_handles.unwrap_or_default();
            if let Some(p) = properties.filter(|p| p.filter.parts() != filter.len()) {
                let (expected, found) =
                    (format!("{} parts (properties)", p.filter.parts()), format!("{}", filter.len()));
                self.problem(ProblemKind::Mismatch, Some(footer.filter_index.offset), "filter index", expected, found);
            }
            return Some(vec![PartitionBlocks {
                name: String::new(),
                index: footer.index,
                filter,
                top_level_key: None,
            }]);
        }
        let at = footer.index.offset;
        let block = self.entries_block(footer.index, "top-level index")?;
        let entries = match decode_top_level(block) {
            Ok(entries) => entries,
            Err(e) => {
                self.problem(
                    ProblemKind::Malformed,
                    Some(at),
                    "top-level index",
                    "partition handles in key order",
                    e.0,
                );
                return None;
            }
        };
        if let Some(p) = properties.filter(|p| p.index_partitions != entries.len() as u64) {
            let expected = format!("{} partitions (properties)", p.index_partitions);
            self.problem(ProblemKind::Mismatch, Some(at), "top-level index", expected, format!("{}", entries.len()));
        }
        Some(
            entries
                .into_iter()
                .enumerate()
                .map(|(i, (key, handles))| PartitionBlocks {
                    name: format!(" of partition {i}"),
                    index: handles.index,
                    filter: handles.filter,
                    top_level_key: Some(key),
                })
                .collect(),
        )
    }

    fn filter_part(&mut self, handle: BlockHandle, partition: &str, digest_version: Option<u8>) {
        let location = format!("filter part{partition}");
        let Some(bytes) = self.block(handle, &location) else { return };
        if let Err(e) = FilterPart::parse_expecting(&bytes, digest_version) {
            self.problem(
                ProblemKind::Malformed,
                Some(handle.offset),
                &location,
                "a filter part that parses",
                e.to_string(),
            );
        }
    }

    /// The index block of a partition: (separator, data block handle) per entry, in order.
    /// `None` when the block itself is unusable.
    fn index(&mut self, partition: &PartitionBlocks) -> Option<Vec<(Vec<u8>, BlockHandle)>> {
        let location =
            if partition.name.is_empty() { "index block".to_string() } else { format!("index{}", partition.name) };
        let at = Some(partition.index.offset);
        let block = self.entries_block(partition.index, &location)?;
        let mut cursor = block.cursor(compare_internal_keys);
        let mut out: Vec<(Vec<u8>, BlockHandle)> = Vec::new();
        let mut step = cursor.seek_to_first();
        loop {
            if let Err(e) = step {
                self.problem(ProblemKind::Malformed, at, &location, format!("entry {} to decode", out.len()), e.0);
                return None;
            }
            if !cursor.valid() {
                break;
            }
            let n = out.len();
            if let Some((previous, _)) = out.last() {
                if compare_internal_keys(previous, cursor.key()) != Ordering::Less {
                    let expected = format!("separator {n} after {}", show_key(previous));
                    self.problem(ProblemKind::KeyOrder, at, &location, expected, show_key(cursor.key()));
                }
            }
            match BlockHandle::decode_exact(cursor.value()) {
                Ok(handle) => out.push((cursor.key().to_vec(), handle)),
                Err(e) => {
                    self.problem(ProblemKind::Malformed, at, &location, format!("entry {n}: a block handle"), e.0);
                    return None;
                }
            }
            step = cursor.next();
        }
        if let (Some(top), Some((last, _))) = (&partition.top_level_key, out.last()) {
            if top != last {
                let expected = format!("last separator {} (the top-level key)", show_key(top));
                self.problem(ProblemKind::Mismatch, at, &location, expected, show_key(last));
            }
        }
        Some(out)
    }

    /// One data block: decode every entry, check the keys' order and the separators around
    /// the block, and add it up.
    fn data_block(&mut self, handle: BlockHandle, separator: &[u8], previous: Option<&[u8]>, data: &mut DataTotals) {
        let location = format!("data block {}", data.blocks);
        let at = Some(handle.offset);
        if handle.offset != data.next_offset {
            let expected = format!("a block at offset {} (right after the one before)", data.next_offset);
            self.problem(ProblemKind::Malformed, at, &location, expected, format!("offset {}", handle.offset));
        }
        data.blocks += 1;
        data.bytes += handle.size + BLOCK_TRAILER_LEN as u64;
        data.next_offset = handle.end_with_trailer().unwrap_or(u64::MAX);
        let Some(block) = self.entries_block(handle, &location) else {
            data.complete = false;
            return;
        };
        let mut cursor = block.cursor(compare_internal_keys);
        let mut step = cursor.seek_to_first();
        let mut n = 0u64;
        let mut first = true;
        loop {
            if let Err(e) = step {
                self.problem(ProblemKind::Malformed, at, &location, format!("entry {n} to decode"), e.0);
                data.complete = false;
                return;
            }
            if !cursor.valid() {
                break;
            }
            let key = cursor.key();
            let Some(parsed) = parse_internal_key(key) else {
                self.problem(
                    ProblemKind::Malformed,
                    at,
                    &location,
                    format!("entry {n}: an internal key"),
                    show_key(key),
                );
                data.complete = false;
                return;
            };
            match &data.smallest {
                None => data.smallest = Some(key.to_vec()),
                Some(_) if compare_internal_keys(&data.largest, key) != Ordering::Less => {
                    let expected = format!("entry {n}: a key after {}", show_key(&data.largest));
                    self.problem(ProblemKind::KeyOrder, at, &location, expected, show_key(key));
                }
                Some(_) => {}
            }
            if first {
                if let Some(previous) = previous.filter(|p| compare_internal_keys(p, key) != Ordering::Less) {
                    let expected = format!("a first key after the previous separator {}", show_key(previous));
                    self.problem(ProblemKind::KeyOrder, at, &location, expected, show_key(key));
                }
                first = false;
            }
            if data.entries == 0 {
                (data.smallest_seq, data.largest_seq) = (parsed.seq, parsed.seq);
            }
            data.smallest_seq = data.smallest_seq.min(parsed.seq);
            data.largest_seq = data.largest_seq.max(parsed.seq);
            data.deletions += u64::from(parsed.kind == ValueKind::Delete);
            data.entries += 1;
            self.report.keys += 1;
            data.largest.clear();
            data.largest.extend_from_slice(key);
            n += 1;
            step = cursor.next();
        }
        if n == 0 {
            self.problem(ProblemKind::Malformed, at, &location, "a block with entries", "an empty block");
        } else if compare_internal_keys(&data.largest, separator) == Ordering::Greater {
            let expected = format!("a last key at or before its index separator {}", show_key(separator));
            self.problem(ProblemKind::KeyOrder, at, &location, expected, show_key(&data.largest));
        }
    }

    /// What the walk found against what the properties say.
    fn against_properties(&mut self, p: &TableProperties, footer: &Footer, data: &DataTotals) {
        let at = Some(footer.properties.offset);
        let mismatch = |this: &mut Self, what: &str, said: String, found: String| {
            this.problem(ProblemKind::Mismatch, at, "properties", format!("{what} {said} (properties)"), found);
        };
        if !data.indexed {
            return;
        }
        if data.blocks != p.data_blocks {
            mismatch(self, "data blocks", p.data_blocks.to_string(), format!("{} in the index", data.blocks));
        }
        if data.bytes != p.data_bytes {
            mismatch(self, "data bytes", p.data_bytes.to_string(), format!("{} in the index", data.bytes));
        }
        if !data.complete {
            return;
        }
        if data.entries != p.entries {
            mismatch(self, "entries", p.entries.to_string(), format!("{} in the data blocks", data.entries));
        }
        if data.deletions != p.deletions {
            mismatch(self, "deletions", p.deletions.to_string(), format!("{} in the data blocks", data.deletions));
        }
        let smallest = data.smallest.as_deref().unwrap_or_default();
        if smallest != p.smallest_key.as_slice() {
            mismatch(
                self,
                "smallest key",
                show_key(&p.smallest_key),
                format!("{} first in the data", show_key(smallest)),
            );
        }
        if data.largest != p.largest_key {
            mismatch(
                self,
                "largest key",
                show_key(&p.largest_key),
                format!("{} last in the data", show_key(&data.largest)),
            );
        }
        if data.entries > 0 && (data.smallest_seq, data.largest_seq) != (p.smallest_seq, p.largest_seq) {
            mismatch(
                self,
                "sequence numbers",
                format!("{}..={}", p.smallest_seq, p.largest_seq),
                format!("{}..={} in the data", data.smallest_seq, data.largest_seq),
            );
        }
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::super::tests::{build, opts, versioned_entries};
    use super::*;
    use crate::io::FsStorage;
    use crate::options::Compression;

    fn kinds(check: &TableCheck) -> Vec<(ProblemKind, String)> {
        check.report.problems().iter().map(|p| (p.kind, p.location.clone())).collect()
    }

    #[test]
    fn a_sound_table_checks_clean_and_every_entry_is_walked() {
        for partitioned in [false, true] {
            let o = super::super::TableOptions {
                partition_index_and_filters: partitioned,
                metadata_partition_size: 96,
                filter: crate::filter::FilterSpec::Bloom { bits_per_key: 10.0 },
                ..opts(160, Compression::Lz4)
            };
            let f = build(versioned_entries(200), o);
            let check = verify_table(&FsStorage, &f.path, None);
            assert!(check.report.is_ok(), "{}", check.report);
            let contents = check.contents.expect("complete walk");
            assert_eq!(contents.entries, f.entries.len() as u64);
            assert_eq!(check.report.keys, f.entries.len() as u64);
            assert_eq!(contents.smallest, f.entries[0].0);
            assert_eq!(contents.largest, f.entries.last().unwrap().0);
            assert_eq!(contents.size, std::fs::metadata(&f.path).unwrap().len());
            assert_eq!(check.report.bytes, contents.size, "every byte read once");
        }
    }

    #[test]
    fn a_bad_data_block_is_named_and_the_walk_goes_on() {
        let f = build(versioned_entries(200), opts(160, Compression::None));
        let mut bytes = std::fs::read(&f.path).unwrap();
        bytes[3] ^= 0x40;
        std::fs::write(&f.path, &bytes).unwrap();
        let check = verify_table(&FsStorage, &f.path, None);
        assert_eq!(kinds(&check), vec![(ProblemKind::Checksum, "data block 0".to_string())]);
        assert_eq!(check.report.problems()[0].offset, Some(0));
        assert!(check.contents.is_none(), "a partial walk has no contents");
        assert!(check.report.keys > 0, "the blocks after the bad one are walked");
    }
}
