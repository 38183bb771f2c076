//! A human-readable dump of an SST: every part, for `shamba sst` and for debugging.

#![deny(clippy::indexing_slicing)]

use super::file::TableFile;
use super::{TableContext, TableReader};
use crate::cache::BlockCache;
use crate::cursor::Cursor;
use crate::error::{DecodeError, Result};
use crate::filter::FilterPart;
use crate::io::{DeviceModel, IoStats, Storage};
use crate::key::{compare_internal_keys, show_bytes, show_key};
use crate::options::ReadOptions;
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

/// Longest debug form of a filter part printed in full.
const MAX_FILTER_DEBUG: usize = 160;

/// A human-readable dump of every part of an SST file (footer, properties, index, filter
/// parts — per partition in a partitioned table — and data blocks' entries up to
/// `max_entries`).
///
/// # Errors
///
/// [`Error::Io`](crate::Error::Io) when the file cannot be read;
/// [`Error::Corruption`](crate::Error::Corruption) when a part of it does not decode.
pub fn dump_table(storage: &dyn Storage, path: &Path, max_entries: usize) -> Result<String> {
    let file = storage.open_read(path)?;
    // A private context: no cache, nothing pinned in anyone else's counters.
    let ctx = TableContext {
        cache: Arc::new(BlockCache::new(0, 0.0)),
        io: Arc::new(IoStats::default()),
        device: DeviceModel::None,
        cache_index_and_filter_blocks: false,
        // A dump describes parts of whatever digest version; it never probes them.
        digest_version: None,
        pool_filters: false,
        metadata: super::MetadataBudget::new(u64::MAX),
    };
    let file = TableFile::new(path.to_path_buf(), file, ctx.io.clone(), ctx.device);
    let reader = Arc::new(TableReader::open(file, 0, ctx)?);
    dump_reader(&reader, max_entries)
}

/// The dump of a table already open (what [`dump_table`] writes once it has opened the
/// file), for a caller that has a reader and would otherwise open the file twice.
pub(crate) fn dump_reader(reader: &Arc<TableReader>, max_entries: usize) -> Result<String> {
    let mut out = String::new();
    write_all(&mut out, reader, max_entries)?;
    Ok(out)
}

fn write_all(out: &mut String, r: &Arc<TableReader>, max_entries: usize) -> Result<()> {
    let f = r.footer();
    let p = r.properties();
    let _ = writeln!(out, "file {} ({} bytes)", r.path().display(), r.file_size());
    let _ = writeln!(out, "footer: format version {}", f.format_version);
    for (name, h) in
        [("metaindex", f.metaindex), ("index", f.index), ("properties", f.properties), ("filter index", f.filter_index)]
    {
        let _ = writeln!(out, "  {name:<13} offset {:>10} size {:>8}", h.offset, h.size);
    }

    let _ = writeln!(out, "properties:");
    let _ = writeln!(
        out,
        "  entries {} (deletions {}), raw key bytes {}, raw value bytes {}",
        p.entries, p.deletions, p.raw_key_bytes, p.raw_value_bytes
    );
    let _ = writeln!(out, "  smallest {}", show_key(&p.smallest_key));
    let _ = writeln!(out, "  largest  {}", show_key(&p.largest_key));
    let _ = writeln!(out, "  seq range {}..={}", p.smallest_seq, p.largest_seq);
    let _ = writeln!(
        out,
        "  data blocks {} ({} bytes), index {} bytes, filter {} bytes",
        p.data_blocks, p.data_bytes, p.index_bytes, p.filter_bytes
    );
    let _ = writeln!(
        out,
        "  block size {}, restart interval {}, compression {}",
        p.block_size,
        p.restart_interval,
        super::format::CompressionType::name_of(p.compression)
    );
    let _ = writeln!(
        out,
        "  filter {} ({}, {}) over {} digests, {} parts {:?}",
        p.filter.kind,
        p.filter.spec,
        p.filter.role.map_or("no parts", |r| r.name()),
        p.filter.digests,
        p.filter.parts(),
        p.filter.part_bytes
    );
    let _ = writeln!(out, "  created {} by {}", p.created_unix_secs, p.creator);

    let _ = writeln!(out, "metaindex: {} entries", r.metaindex().len());
    for (name, h) in r.metaindex() {
        let _ = writeln!(out, "  {} -> offset {} size {}", String::from_utf8_lossy(name), h.offset, h.size);
    }

    if r.is_partitioned() {
        let _ = writeln!(
            out,
            "partitions: {} (top-level index {} bytes, pinned)",
            r.partition_count(),
            p.top_level_index_bytes
        );
    }
    for q in 0..r.partitions_len() {
        if let Some(key) = r.top_level_key(q) {
            let h = r.index_handle_of(q).unwrap_or_default();
            let _ = writeln!(out, "partition {q}: up to {}", show_key(key));
            let _ = writeln!(out, "  index partition offset {} size {}", h.offset, h.size);
        }
        write_index(out, r, q)?;
        write_filter_parts(out, r, q)?;
    }

    let _ = writeln!(out, "data (first {max_entries} entries):");
    let mut c = r.cursor(&ReadOptions { fill_cache: false, ..ReadOptions::default() });
    c.seek_to_first()?;
    let mut shown = 0;
    while c.valid() && shown < max_entries {
        let _ = writeln!(out, "  {} => {}", show_key(c.key()), show_bytes(c.value()));
        shown += 1;
        c.next()?;
    }
    if c.valid() {
        let _ = writeln!(out, "  ... ({} entries in all)", p.entries);
    }
    Ok(())
}

/// The entries of partition `q`'s index block.
fn write_index(out: &mut String, r: &Arc<TableReader>, q: usize) -> Result<()> {
    let _ = writeln!(out, "index:");
    let (block, offset) = r.index_block_of(q)?;
    let mut index = block.cursor(compare_internal_keys);
    index.seek_to_first().map_err(|e| r.corruption(offset, e.0))?;
    while index.valid() {
        let h = r.decode_index_value(index.value(), offset)?;
        let _ = writeln!(out, "  {} -> offset {} size {}", show_key(index.key()), h.offset, h.size);
        index.next().map_err(|e| r.corruption(offset, e.0))?;
    }
    Ok(())
}

/// Partition `q`'s filter parts, one line each.
fn write_filter_parts(out: &mut String, r: &Arc<TableReader>, q: usize) -> Result<()> {
    let handles = r.filter_handles_of(q);
    let _ = writeln!(out, "filter parts: {}", handles.len());
    for (i, h) in handles.iter().enumerate() {
        let bytes = r.filter_part_of(q, i)?;
        let part = FilterPart::parse_any_version(&bytes)
            .map_err(|e| DecodeError::from(e).in_file(r.path(), Some(h.offset)))?;
        let mut debug = format!("{part}");
        if debug.len() > MAX_FILTER_DEBUG {
            let cut = (0..=MAX_FILTER_DEBUG).rev().find(|&i| debug.is_char_boundary(i)).unwrap_or(0);
            debug.truncate(cut);
            debug.push_str("...");
        }
        let _ = writeln!(out, "  part {i}: offset {}, {} bytes, {debug}", h.offset, bytes.len());
    }
    Ok(())
}
