//! The log targets: a WAL replayed and its records decoded as write batches (as opening a
//! database does), one write batch, one version edit, and a manifest recovered from
//! CURRENT and the log of edits it names.
//!
//! Log fragments carry checksums, which random bytes almost never match: with `mode` bit 0
//! set, [`seal_log`] first makes every fragment's checksum right, so the fuzzer reaches
//! the record assembly and the decoders behind it.

use super::mem_storage::MemStorage;
use crate::db::decode_batch;
use crate::memtable::MemTable;
use crate::options::WalRecovery;
use crate::version::{VersionEdit, VersionSet};
use crate::wal::read_log_report;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes per log block, and of a fragment header (`crate::wal`'s format).
const LOG_BLOCK: usize = 32 * 1024;
const FRAGMENT_HEADER: usize = 7;
/// The type byte of a fragment holding a whole record.
const FULL_FRAGMENT: u8 = 1;

/// Levels of the tree a recovered manifest is applied to (the default).
const NUM_LEVELS: usize = 7;

/// Replay a WAL in both recovery modes and decode every record as a batch.
///
/// With `mode` bit 1 set, the next byte is a `gap` and the log starts with one whole
/// record that fills the first block up to `gap` bytes before its end (gaps under a
/// fragment header leave a trailer): the input's bytes then straddle a block boundary, so
/// short inputs reach the block-crossing paths that otherwise take 32 KiB of input.
pub(super) fn wal(input: &[u8]) {
    let Some((&mode, bytes)) = input.split_first() else { return };
    let mut log = Vec::new();
    let mut bytes = bytes;
    if mode & 2 != 0 {
        let Some((&gap, rest)) = bytes.split_first() else { return };
        log = block_filler(usize::from(gap));
        bytes = rest;
    }
    log.extend_from_slice(bytes);
    if mode & 1 == 1 {
        seal_log(&mut log);
    }
    let path = Path::new("/fuzz-db/000007.log");
    for recovery in [WalRecovery::TolerateTornTail, WalRecovery::PointInTime] {
        if let Ok(replay) = read_log_report(&log, path, recovery) {
            for record in &replay.records {
                write_batch(&record.data);
            }
        }
    }
}

/// One whole (FULL) fragment, checksummed, ending `gap` bytes before the end of the
/// first log block; its payload an empty write batch padded with zeros.
fn block_filler(gap: usize) -> Vec<u8> {
    let len = LOG_BLOCK - FRAGMENT_HEADER - gap.min(LOG_BLOCK - FRAGMENT_HEADER);
    let mut log = vec![0; FRAGMENT_HEADER + len];
    let [lo, hi] = u16::try_from(len).unwrap_or(u16::MAX).to_le_bytes();
    if let Some(header) = log.get_mut(4..FRAGMENT_HEADER) {
        header.copy_from_slice(&[lo, hi, FULL_FRAGMENT]);
    }
    seal_log(&mut log);
    log
}

/// Decode a WAL record as a write batch and insert its operations into a memtable at the
/// sequence numbers replay gives them.
pub(super) fn write_batch(record: &[u8]) {
    let Ok(batch) = decode_batch(record) else { return };
    let mem = MemTable::new(0);
    let first = batch.first_seq;
    // Replay's arithmetic (`db/open.rs`): entry i gets first_seq + i.
    for (i, op) in (0u64..).zip(batch.ops) {
        let Ok((_, op)) = op else { return };
        op.insert_into(&mem, first + i);
    }
}

/// Decode a version edit (a manifest record).
pub(super) fn version_edit(input: &[u8]) {
    let _ = VersionEdit::decode(input);
}

/// Recover a version set from a manifest holding `input`'s bytes (sealed with `mode` bit
/// 0), as opening a database does.
pub(super) fn manifest(input: &[u8]) {
    let Some((&mode, bytes)) = input.split_first() else { return };
    let mut log = bytes.to_vec();
    if mode & 1 == 1 {
        seal_log(&mut log);
    }
    let dir = PathBuf::from("/fuzz-db");
    let storage = MemStorage::with_files([
        (dir.join("CURRENT"), b"MANIFEST-000005\n".to_vec()),
        (dir.join("MANIFEST-000005"), log),
    ]);
    let _ = VersionSet::recover(Arc::new(storage), &dir, NUM_LEVELS);
}

/// Make the checksum of every fragment whose header and payload fit in its block right,
/// walking the log as its reader does; stop at the first that does not fit.
pub(super) fn seal_log(log: &mut [u8]) {
    let mut pos = 0;
    while pos < log.len() {
        let block_end = (pos / LOG_BLOCK + 1) * LOG_BLOCK;
        if block_end - pos < FRAGMENT_HEADER {
            pos = block_end;
            continue;
        }
        let Some(&[_, _, _, _, len_lo, len_hi, kind]) = log.get(pos..pos + FRAGMENT_HEADER) else { return };
        let len = usize::from(u16::from_le_bytes([len_lo, len_hi]));
        let end = pos + FRAGMENT_HEADER + len;
        if end > block_end {
            return;
        }
        let Some(payload) = log.get(pos + FRAGMENT_HEADER..end) else { return };
        let crc = crate::table::mask_crc(crc32c::crc32c_append(crc32c::crc32c(&[kind]), payload));
        if let Some(at) = log.get_mut(pos..pos + 4) {
            at.copy_from_slice(&crc.to_le_bytes());
        }
        pos = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_filler_is_one_whole_record_ending_gap_bytes_before_the_block() {
        for gap in [0, 3, 7, 200] {
            let filler = block_filler(gap);
            assert_eq!(filler.len(), LOG_BLOCK - gap);
            let replay = read_log_report(&filler, Path::new("f.log"), WalRecovery::TolerateTornTail).unwrap();
            assert_eq!(replay.records.len(), 1, "gap {gap}");
            assert!(decode_batch(&replay.records[0].data).is_ok());
        }
    }

    #[test]
    fn a_short_input_reaches_a_record_split_over_the_block_boundary() {
        // FIRST fragment of 10 bytes at the end of block 0, LAST of 10 at block 1's start.
        let mut frags = Vec::new();
        for kind in [2u8, 4] {
            frags.extend_from_slice(&[0, 0, 0, 0, 10, 0, kind]);
            frags.extend_from_slice(&[kind; 10]);
        }
        let mut log = block_filler(17);
        log.extend_from_slice(&frags);
        seal_log(&mut log);
        let replay = read_log_report(&log, Path::new("f.log"), WalRecovery::TolerateTornTail).unwrap();
        assert_eq!(replay.records.len(), 2);
        assert_eq!(replay.records[1].data, [[2u8; 10], [4u8; 10]].concat());
        let mut input = vec![3, 17];
        input.extend_from_slice(&frags);
        wal(&input);
    }
}
