//! The SST targets: a data block, an index block (and the other blocks of handles), the
//! footer and the properties block, each decoded on its own and, where the reader checks
//! it against the rest of a table, spliced into a real table of the base database and
//! opened, read and scanned there.
//!
//! Splicing appends the fuzzed block (with a valid trailer) after the table's blocks and
//! points the footer (its checksum recomputed) at it, so the fuzzer's bytes get past the
//! checksums and reach the decoder and every check the reader makes after it.

use super::base;
use super::mem_storage::MemStorage;
use crate::cache::BlockCache;
use crate::cursor::Cursor;
use crate::filter::Digest;
use crate::io::{DeviceModel, IoStats, Storage};
use crate::key::{compare_internal_keys, seek_key, MAX_SEQ};
use crate::options::ReadOptions;
use crate::table::{
    bytewise, decode_filter_index, decode_handles, decode_top_level, dump_reader, dump_table, mask_crc, read_block,
    Block, BlockHandle, Footer, IndexFences, ProbePlan, TableContext, TableFile, TableGet, TableProperties,
    TableReader, FOOTER_LEN,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most cursor steps one scan takes: every step moves forward, so a scan ends anyway;
/// this only keeps one input from taking seconds.
const MAX_STEPS: usize = 20_000;

/// A data block's contents (`mode` bit 0 clear) or its stored form with trailer (set),
/// decompressed without checking the checksum as a scan with `verify_checksums` off does;
/// then walked both ways and searched.
pub(super) fn data_block(input: &[u8]) {
    let Some((&mode, bytes)) = input.split_first() else { return };
    let contents = if mode & 1 == 1 {
        match read_block(bytes.to_vec(), false) {
            Ok(contents) => contents,
            Err(_) => return,
        }
    } else {
        bytes.to_vec()
    };
    if let Ok(block) = Block::new(contents.into()) {
        walk_block(&block, bytes);
    }
}

/// Walk every entry of `block` in internal-key order both ways, and seek to targets cut
/// from `input` and to the keys found.
fn walk_block(block: &Block, input: &[u8]) {
    let mut c = block.clone().cursor(compare_internal_keys);
    let mut keys = Vec::new();
    if c.seek_to_first().is_ok() {
        while c.valid() && keys.len() < MAX_STEPS {
            keys.push(c.key().to_vec());
            let _ = c.value();
            if c.next().is_err() {
                break;
            }
        }
    }
    let mut steps = 0;
    if c.seek_to_last().is_ok() {
        while c.valid() && steps < MAX_STEPS {
            steps += 1;
            if c.prev().is_err() {
                break;
            }
        }
    }
    for target in keys.iter().take(8).map(Vec::as_slice).chain(targets(input)) {
        let _ = c.seek(target);
        let _ = c.next();
        let _ = c.seek_for_prev(target);
        let _ = c.prev();
    }
}

/// A few seek targets cut from the fuzz input, so the fuzzer can steer searches.
fn targets(input: &[u8]) -> impl Iterator<Item = &[u8]> {
    input.chunks(13).take(4)
}

/// An index block: decoded as each kind of block that lists handles (the pinned index's
/// fences, a partitioned table's top-level index, the metaindex, the filter index), then
/// spliced into a base table in the footer slot `mode` picks and read there.
pub(super) fn index_block(input: &[u8]) {
    let Some((&mode, bytes)) = input.split_first() else { return };
    if let Ok(block) = Block::new(bytes.to_vec().into()) {
        if let Ok(fences) = IndexFences::of(&block) {
            for target in targets(bytes) {
                let _ = fences.find(&block, target);
            }
        }
        let _ = decode_top_level(block.clone());
        let _ = decode_handles(block.clone());
        let _ = decode_filter_index(block.clone());
        let mut c = block.cursor(bytewise);
        let _ = c.seek_to_first();
    }
    let slot = match (mode >> 3) & 3 {
        0 | 1 => Slot::Index,
        2 => Slot::Metaindex,
        _ => Slot::FilterIndex,
    };
    splice_and_read(mode, slot, bytes);
}

/// A properties block, decoded, then spliced into a base table and read there.
pub(super) fn sst_properties(input: &[u8]) {
    let Some((&mode, bytes)) = input.split_first() else { return };
    if let Ok(block) = Block::new(bytes.to_vec().into()) {
        let _ = TableProperties::decode(block);
    }
    splice_and_read(mode, Slot::Properties, bytes);
}

/// A footer: decoded as it is, then with its checksum made right (`mode` bit 0), and then
/// put at the end of a base table, which is opened and read.
pub(super) fn sst_footer(input: &[u8]) {
    let Some((&mode, bytes)) = input.split_first() else { return };
    let _ = Footer::decode(bytes);
    let mut footer = bytes.to_vec();
    if mode & 1 == 1 {
        seal_footer(&mut footer);
    }
    let _ = Footer::decode(&footer);
    let Some(table) = base_table(mode >> 1) else { return };
    let mut image = table.get(..table.len().saturating_sub(FOOTER_LEN)).unwrap_or_default().to_vec();
    image.extend_from_slice(&footer);
    read_table(image, mode & 0x10 != 0);
}

/// Recompute the checksum a footer's first fields are covered by, when it has the size
/// of one; the magic number is left to the fuzzer.
fn seal_footer(footer: &mut [u8]) {
    if footer.len() != FOOTER_LEN {
        return;
    }
    let covered = FOOTER_LEN - 12;
    let crc = mask_crc(crc32c::crc32c(footer.get(..covered).unwrap_or_default()));
    if let Some(at) = footer.get_mut(covered..covered + 4) {
        at.copy_from_slice(&crc.to_le_bytes());
    }
}

/// Which block of the footer a spliced block replaces.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    Metaindex,
    Index,
    Properties,
    FilterIndex,
}

/// Table `pick` (modulo their number) of the base database.
fn base_table(pick: u8) -> Option<&'static [u8]> {
    let tables: Vec<&[u8]> = base::files_ending(".sst").collect();
    tables.get(usize::from(pick) % tables.len().max(1)).copied()
}

/// Append `contents` as a block to base table `mode & 3` and point the footer's `slot` at
/// it; open and read the table with index and filters pinned or (`mode` bit 2) cached.
fn splice_and_read(mode: u8, slot: Slot, contents: &[u8]) {
    let Some(table) = base_table(mode & 3) else { return };
    let Some(image) = splice(table, slot, contents) else { return };
    read_table(image, mode & 4 != 0);
}

/// `table` with `contents` as the block the footer names in `slot`.
pub(super) fn splice(table: &[u8], slot: Slot, contents: &[u8]) -> Option<Vec<u8>> {
    let body_len = table.len().checked_sub(FOOTER_LEN)?;
    let mut footer = Footer::decode(table.get(body_len..)?).ok()?;
    let mut image = table.get(..body_len)?.to_vec();
    let handle = BlockHandle { offset: image.len() as u64, size: contents.len() as u64 };
    // Stored raw: type byte 0, then the masked crc32c of contents and type.
    image.extend_from_slice(contents);
    image.push(0);
    image.extend_from_slice(&mask_crc(crc32c::crc32c_append(crc32c::crc32c(contents), &[0])).to_le_bytes());
    match slot {
        Slot::Metaindex => footer.metaindex = handle,
        Slot::Index => footer.index = handle,
        Slot::Properties => footer.properties = handle,
        Slot::FilterIndex => footer.filter_index = handle,
    }
    image.extend_from_slice(&footer.encode());
    Some(image)
}

/// Open `image` as a table, look up keys of the base database, scan it both ways, and dump
/// it; every step may fail, none may panic. Returns how many lookups found their key.
///
/// The dump is written from the reader the lookups used, after them (so they meet the
/// cache as they would alone): opening the table a second time for it was most of what
/// the dump cost. When that reader does not open, `dump_table` opens the table its own
/// way, which does not check the filters' digest version and may get further.
pub(super) fn read_table(image: Vec<u8>, cached: bool) -> usize {
    let path = PathBuf::from(base::DIR).join("000999.sst");
    let storage = MemStorage::with_files([(path.clone(), image)]);
    let Some(reader) = open_reader(&storage, &path, cached) else {
        let _ = dump_table(&storage, &path, 64);
        return 0;
    };
    let ro = ReadOptions::default();
    let mut found = 0;
    for i in (0..130).step_by(3) {
        let user_key = base::key(i);
        let seek = seek_key(&user_key, MAX_SEQ);
        let spot = reader.locate(&seek);
        let got = reader.get_at_spot(&spot, &seek, &Digest::of(&user_key), &ro, ProbePlan::ALL);
        found += usize::from(matches!(got, Ok((TableGet::Found { .. }, _))));
    }
    scan(reader.cursor(&ro));
    scan(reader.cursor(&ReadOptions { verify_checksums: false, ..ReadOptions::default() }));
    let _ = dump_reader(&reader, 64);
    found
}

/// The table at `path` opened as the lookups read it: index and filters pinned, or cached
/// in a cache of its own.
fn open_reader(storage: &MemStorage, path: &Path, cached: bool) -> Option<Arc<TableReader>> {
    let file = storage.open_read(path).ok()?;
    let ctx = TableContext {
        cache: Arc::new(BlockCache::new(if cached { 1 << 20 } else { 0 }, 0.5)),
        io: Arc::new(IoStats::default()),
        device: DeviceModel::None,
        cache_index_and_filter_blocks: cached,
        digest_version: Some(crate::filter::DIGEST_VERSION),
        pool_filters: false,
        metadata: crate::table::MetadataBudget::new(u64::MAX),
    };
    let file = TableFile::new(path.to_path_buf(), file, ctx.io.clone(), ctx.device);
    TableReader::open(file, 999, ctx).ok().map(Arc::new)
}

/// Every entry forward, then backward, then a few seeks.
fn scan(mut c: Box<dyn Cursor>) {
    let mut steps = 0;
    if c.seek_to_first().is_ok() {
        while c.valid() && steps < MAX_STEPS && c.next().is_ok() {
            steps += 1;
        }
    }
    steps = 0;
    if c.seek_to_last().is_ok() {
        while c.valid() && steps < MAX_STEPS && c.prev().is_ok() {
            steps += 1;
        }
    }
    for i in [0, 33, 77, 200] {
        let seek = seek_key(&base::key(i), MAX_SEQ);
        let _ = c.seek(&seek);
        let _ = c.seek_for_prev(&seek);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dump written from the lookups' reader is the one `shamba sst` prints.
    #[test]
    fn the_dump_from_an_open_reader_is_the_dump_of_the_file() {
        for table in base::files_ending(".sst") {
            let path = PathBuf::from(base::DIR).join("000999.sst");
            let storage = MemStorage::with_files([(path.clone(), table.to_vec())]);
            let alone = dump_table(&storage, &path, 64).unwrap();
            assert!(alone.contains("properties:"), "{alone}");
            for cached in [false, true] {
                let reader = open_reader(&storage, &path, cached).unwrap();
                assert_eq!(dump_reader(&reader, 64).unwrap(), alone);
            }
        }
    }

    /// The harness reaches the reader's lookups: a table whose own index (or top-level
    /// index) is spliced back in, pinned or cached, still finds its keys.
    #[test]
    fn a_table_spliced_with_its_own_blocks_still_finds_its_keys() {
        let tables: Vec<&[u8]> = base::files_ending(".sst").collect();
        assert_eq!(tables.len(), 4, "one table per session of the base database");
        for table in tables {
            assert!(read_table(table.to_vec(), false) > 0);
            let footer = Footer::decode(&table[table.len() - FOOTER_LEN..]).unwrap();
            let at = footer.index.offset as usize;
            let physical = table[at..at + footer.index.size as usize + crate::table::BLOCK_TRAILER_LEN].to_vec();
            let index = read_block(physical, true).unwrap();
            let image = splice(table, Slot::Index, &index).unwrap();
            for cached in [false, true] {
                assert_eq!(read_table(image.clone(), cached), read_table(table.to_vec(), false));
            }
        }
    }
}
