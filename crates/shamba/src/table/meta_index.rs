//! Blocks that list other blocks by handle: the filter index and the metaindex.
//!
//! Both are ordinary blocks (restart interval 1) whose values are varint handles:
//! - the **filter index** maps the part number (`u32` big-endian, so byte order is part
//!   order) to the handle of that filter part. Parts are separate blocks so a reader can
//!   fetch, cache or skip them one by one. A partitioned table (format version 2) writes it
//!   empty: its top-level index (`partition.rs`) lists each partition's parts.
//! - the **metaindex** maps a name to the handle of an optional meta block. Versions 1 and
//!   2 write it empty; later meta blocks (persisted per-file statistics) are added by name
//!   without changing the footer.

#![deny(clippy::indexing_slicing)]

use super::block::{bytewise, Block};
use super::block_builder::BlockBuilder;
use super::format::BlockHandle;
use crate::error::DecodeError;

/// Most entries a handle list may have; far above anything the builder writes, it bounds
/// what a damaged block can make a reader allocate.
const MAX_ENTRIES: usize = 1 << 16;

/// The contents of a block listing `entries` (keys in bytewise order) by handle.
pub(crate) fn encode_handles(entries: &[(Vec<u8>, BlockHandle)]) -> Vec<u8> {
    let mut b = BlockBuilder::new(1);
    let mut value = Vec::new();
    for (key, handle) in entries {
        value.clear();
        handle.encode_to(&mut value);
        b.add(key, &value);
    }
    b.finish()
}

/// Decode a block built by [`encode_handles`]; keys must be strictly increasing.
pub(crate) fn decode_handles(block: Block) -> Result<Vec<(Vec<u8>, BlockHandle)>, DecodeError> {
    let mut out: Vec<(Vec<u8>, BlockHandle)> = Vec::new();
    let mut c = block.cursor(bytewise);
    c.seek_to_first()?;
    while c.valid() {
        if out.len() >= MAX_ENTRIES {
            return Err(DecodeError::new(format!("more than {MAX_ENTRIES} entries in a handle list")));
        }
        if out.last().is_some_and(|(prev, _)| prev.as_slice() >= c.key()) {
            return Err(DecodeError::new("handle list keys out of order"));
        }
        out.push((c.key().to_vec(), BlockHandle::decode_exact(c.value())?));
        c.next()?;
    }
    Ok(out)
}

/// The filter index key of part `i`.
pub(crate) fn filter_part_key(i: usize) -> Vec<u8> {
    (i as u32).to_be_bytes().to_vec()
}

/// Decode a filter index: the handles of parts 0, 1, ... in order.
pub(crate) fn decode_filter_index(block: Block) -> Result<Vec<BlockHandle>, DecodeError> {
    let entries = decode_handles(block)?;
    for (i, (key, _)) in entries.iter().enumerate() {
        if *key != filter_part_key(i) {
            return Err(DecodeError::new(format!("filter index entry {i} has key {key:02x?}")));
        }
    }
    Ok(entries.into_iter().map(|(_, h)| h).collect())
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn filter_index_round_trips_zero_or_more_parts() {
        for n in [0usize, 1, 3, 300] {
            let handles: Vec<_> = (0..n as u64).map(|i| BlockHandle { offset: i * 100, size: 90 + i }).collect();
            let entries: Vec<_> = handles.iter().enumerate().map(|(i, h)| (filter_part_key(i), *h)).collect();
            let block = Block::new(encode_handles(&entries).into()).unwrap();
            assert_eq!(decode_filter_index(block).unwrap(), handles);
        }
    }

    #[test]
    fn filter_index_with_a_gap_is_rejected() {
        let h = BlockHandle { offset: 0, size: 1 };
        let block = Block::new(encode_handles(&[(filter_part_key(0), h), (filter_part_key(2), h)]).into()).unwrap();
        assert!(decode_filter_index(block).is_err());
    }

    #[test]
    fn named_handles_round_trip() {
        let entries =
            vec![(b"a.stats".to_vec(), BlockHandle { offset: 5, size: 6 }), (b"b".to_vec(), BlockHandle::default())];
        let block = Block::new(encode_handles(&entries).into()).unwrap();
        assert_eq!(decode_handles(block).unwrap(), entries);
    }
}
