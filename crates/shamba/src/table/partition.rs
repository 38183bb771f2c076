//! The top-level index of a partitioned table (format version 2).
//!
//! A partitioned table splits its index and its filter by key range. Partition `p` covers
//! a run of consecutive data blocks and owns one *index partition* (the fence pointers of
//! those blocks, an ordinary index block) and one *filter partition* (the same D filter
//! parts as an unpartitioned table would have — whole filter, modules or units — built
//! over the digests of the user keys in those blocks only).
//!
//! The top-level index has one entry per partition, restart interval 1:
//!
//! ```text
//! key    the separator of the partition's last data block (an internal key), so the
//!        first entry >= a seek key names the one partition whose index can hold it
//! value  index partition handle (varint offset | varint size)
//!        | part count varint (0..=255)
//!        | part count x filter part handle (varint offset | varint size)
//! ```
//!
//! Because partitions are cut at data-block boundaries and the top-level keys are the
//! data-block separators themselves, "the first top-level key at or after t, then the
//! first index entry at or after t in that partition" lands on exactly the data block an
//! unpartitioned index would choose. A user key whose versions straddle a cut has its digest in both partitions'
//! filters, so whichever partition a seek lands in answers correctly.

#![deny(clippy::indexing_slicing)]

use super::block::Block;
use super::coding::{put_varint, Decoder};
use super::format::BlockHandle;
use crate::error::DecodeError;
use crate::key::{compare_internal_keys, TRAILER_LEN};
use std::cmp::Ordering;

/// Most partitions a top-level index may list: bounds what damaged bytes can make a reader
/// allocate (a 64 MiB table of 4 KiB partitions has a few thousand).
const MAX_PARTITIONS: usize = 1 << 20;

/// Most filter parts one partition may have (a part's header stores its count in a byte).
pub(crate) const MAX_PARTS_PER_PARTITION: u64 = 255;

/// The blocks of one partition, as the top-level index lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartitionHandles {
    /// The index partition: fence pointers of this partition's data blocks.
    pub(crate) index: BlockHandle,
    /// The filter parts over this partition's keys, in probe order.
    pub(crate) filter: Vec<BlockHandle>,
}

impl PartitionHandles {
    /// Append the top-level value of this partition.
    pub(crate) fn encode_to(&self, out: &mut Vec<u8>) {
        self.index.encode_to(out);
        put_varint(out, self.filter.len() as u64);
        for h in &self.filter {
            h.encode_to(out);
        }
    }

    /// Decode a value that is exactly one partition's handles.
    pub(crate) fn decode_exact(bytes: &[u8]) -> Result<PartitionHandles, DecodeError> {
        let mut d = Decoder::new(bytes);
        let index = BlockHandle::decode_from(&mut d)?;
        let parts = d.varint()?;
        if parts > MAX_PARTS_PER_PARTITION {
            return Err(DecodeError::new(format!("partition lists {parts} filter parts")));
        }
        let filter = (0..parts).map(|_| BlockHandle::decode_from(&mut d)).collect::<Result<Vec<_>, _>>()?;
        if !d.is_empty() {
            return Err(DecodeError::new("trailing bytes after a partition's handles"));
        }
        Ok(PartitionHandles { index, filter })
    }
}

/// Decode a top-level index: `(separator, handles)` per partition, separators strictly
/// increasing in internal-key order.
pub(crate) fn decode_top_level(block: Block) -> Result<Vec<(Vec<u8>, PartitionHandles)>, DecodeError> {
    let mut out: Vec<(Vec<u8>, PartitionHandles)> = Vec::new();
    let mut c = block.cursor(compare_internal_keys);
    c.seek_to_first()?;
    while c.valid() {
        if out.len() >= MAX_PARTITIONS {
            return Err(DecodeError::new(format!("more than {MAX_PARTITIONS} partitions")));
        }
        if c.key().len() < TRAILER_LEN {
            return Err(DecodeError::new(format!("top-level key {:02x?} is not an internal key", c.key())));
        }
        if out.last().is_some_and(|(prev, _)| compare_internal_keys(prev, c.key()) != Ordering::Less) {
            return Err(DecodeError::new("top-level index keys out of order"));
        }
        out.push((c.key().to_vec(), PartitionHandles::decode_exact(c.value())?));
        c.next()?;
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};
    use crate::table::block_builder::BlockBuilder;

    fn handles(i: u64, parts: u64) -> PartitionHandles {
        PartitionHandles {
            index: BlockHandle { offset: 1000 * i, size: 4000 + i },
            filter: (0..parts).map(|j| BlockHandle { offset: 1000 * i + 100 * j, size: 90 + j }).collect(),
        }
    }

    fn encode(entries: &[(Vec<u8>, PartitionHandles)]) -> Block {
        let mut b = BlockBuilder::new(1);
        let mut value = Vec::new();
        for (k, h) in entries {
            value.clear();
            h.encode_to(&mut value);
            b.add(k, &value);
        }
        Block::new(b.finish().into()).unwrap()
    }

    #[test]
    fn top_level_round_trips_with_any_part_count() {
        for parts in [0, 1, 3, 255] {
            let entries: Vec<_> = (0..40u64)
                .map(|i| (internal_key(format!("k{i:04}").as_bytes(), 7, ValueKind::Put), handles(i, parts)))
                .collect();
            assert_eq!(decode_top_level(encode(&entries)).unwrap(), entries);
        }
        assert!(decode_top_level(encode(&[])).unwrap().is_empty());
    }

    #[test]
    fn unordered_keys_short_keys_and_bad_values_are_rejected() {
        let k = |s: &str| internal_key(s.as_bytes(), 1, ValueKind::Put);
        // Bytewise increasing, but the same user key with a newer sequence sorts first.
        let unordered = [
            (internal_key(b"a", 1, ValueKind::Put), handles(0, 1)),
            (internal_key(b"a", 2, ValueKind::Put), handles(1, 1)),
        ];
        assert!(decode_top_level(encode(&unordered)).is_err());
        assert!(decode_top_level(encode(&[(b"abc".to_vec(), handles(0, 1))])).is_err());

        let mut too_many = Vec::new();
        BlockHandle::default().encode_to(&mut too_many);
        put_varint(&mut too_many, 256);
        let mut b = BlockBuilder::new(1);
        b.add(&k("a"), &too_many);
        assert!(decode_top_level(Block::new(b.finish().into()).unwrap()).is_err());

        let mut trailing = Vec::new();
        handles(0, 2).encode_to(&mut trailing);
        trailing.push(0);
        assert!(PartitionHandles::decode_exact(&trailing).is_err());
        trailing.truncate(trailing.len() - 2);
        assert!(PartitionHandles::decode_exact(&trailing).is_err(), "cut short");
    }
}
