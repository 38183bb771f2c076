//! [`FileInfo`]: what `Db::files` tells about one table file.

use crate::key::{user_key, SeqNo};
use crate::version::{FileMeta, FileStatsRecord};

/// One table file of the current version, as [`Db::files`](crate::Db::files) reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// Its level (0 = flushed from a memtable).
    pub level: usize,
    /// The sorted run it belongs to (larger = newer).
    pub run: u64,
    /// File number; the file is `{number:06}.sst` in the database directory.
    pub number: u64,
    /// File size in bytes.
    pub size: u64,
    /// Smallest user key.
    pub smallest_key: Vec<u8>,
    /// Largest user key.
    pub largest_key: Vec<u8>,
    /// Entries (puts and deletes).
    pub entries: u64,
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
    /// Lookup statistics as last persisted or inherited (the filter manager's alpha and
    /// beta), when known.
    pub stats: Option<FileStatsRecord>,
}

impl FileInfo {
    pub(crate) fn of(level: usize, meta: &FileMeta) -> FileInfo {
        FileInfo {
            level,
            run: meta.run,
            number: meta.number,
            size: meta.size,
            smallest_key: user_key(&meta.smallest).to_vec(),
            largest_key: user_key(&meta.largest).to_vec(),
            entries: meta.entries,
            smallest_seq: meta.smallest_seq,
            largest_seq: meta.largest_seq,
            filter_bytes: meta.filter_bytes,
            index_bytes: meta.index_bytes,
            data_bytes: meta.data_bytes,
            stats: meta.stats,
        }
    }
}
