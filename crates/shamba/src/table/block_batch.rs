//! The data blocks of a `multi_get` round, read together: each from the block cache when it
//! holds it, the rest in one batch of reads in flight at once ([`crate::io::read_batch`]),
//! then checked, cached and parsed as a single lookup's block read would be; a round with
//! one block to read reads it as a single lookup does.

use super::block::Block;
use super::format::BlockHandle;
use super::reader::TableReader;
use crate::cache::Priority;
use crate::error::Result;
use crate::io::{read_batch, BatchRead, BlockKind};
use crate::options::ReadOptions;

/// Where a block of the batch comes from.
enum Source {
    /// Settled without a read: found in the cache (parsed), or its read could not start.
    Settled(Result<Block>),
    /// Not in the cache, to be read on its own (the round's only read).
    Alone,
    /// The read of this index in the batch.
    Read(usize),
}

/// The data block of each `(table, handle)` of `wanted`, in order, each with its own result
/// (a block that fails to read or check fails only the keys waiting on it).
pub(crate) fn read_data_blocks(wanted: &[(&TableReader, BlockHandle)], ro: &ReadOptions) -> Vec<Result<Block>> {
    // The heads of the blocks the cache holds, asked for at once: each take below then
    // finds its block's reference count warm instead of waiting on it alone.
    if wanted.len() > 1 {
        for &(table, handle) in wanted {
            table.ctx.cache.prefetch((table.number, handle.offset));
        }
    }
    let mut sources: Vec<Source> = wanted
        .iter()
        .map(|&(table, handle)| match table.ctx.cache.get((table.number, handle.offset), BlockKind::Data) {
            Some(data) => Source::Settled(table.parse_data_block(data, handle)),
            None => Source::Alone,
        })
        .collect();
    // A lone read has nothing to overlap with: it takes a single lookup's path, which reads
    // the block straight into the buffer the cache keeps. Two or more go in flight together.
    let mut reads: Vec<BatchRead> = Vec::new();
    if sources.iter().filter(|s| matches!(s, Source::Alone)).count() > 1 {
        for (source, &(table, handle)) in sources.iter_mut().zip(wanted) {
            if matches!(source, Source::Alone) {
                *source = match table.file.batch_read(handle, BlockKind::Data) {
                    Ok(read) => {
                        reads.push(read);
                        Source::Read(reads.len() - 1)
                    }
                    Err(e) => Source::Settled(Err(e)),
                };
            }
        }
        read_batch(&mut reads);
    }
    sources
        .into_iter()
        .zip(wanted)
        .map(|(source, &(table, handle))| {
            let data = match source {
                Source::Settled(block) => return block,
                Source::Alone => table.file.read_block(handle, BlockKind::Data, ro.verify_checksums)?,
                Source::Read(r) => {
                    let read =
                        reads.get_mut(r).ok_or_else(|| table.file.corruption(handle.offset, "batch read lost"))?;
                    table.file.finish_batch_read(handle, BlockKind::Data, read, ro.verify_checksums)?
                }
            };
            if ro.fill_cache {
                table.ctx.cache.insert((table.number, handle.offset), data.clone(), BlockKind::Data, Priority::Low);
            }
            table.parse_data_block(data, handle)
        })
        .collect()
}
