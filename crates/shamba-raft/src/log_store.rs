//! The Raft log and vote (`RaftLogReader` + `RaftLogStorage`): entries in `raft_log` under
//! their big-endian index, the vote and the committed and purged log ids in `raft_meta`.
//!
//! Durability: `save_vote` and `save_committed` are synced writes. `append` writes without a
//! sync and reports the entries flushed once the sync thread has synced the write-ahead log
//! (one sync for every append waiting). `truncate` and `purge` are not synced: the database
//! has one write-ahead log, so the next synced write (an append's, a vote's, a commit's)
//! makes them durable, and a crash before it loses them only together with everything
//! written after them.
//!
//! The committed id is synced because openraft restores a restarted node whose stored vote
//! is its own committed one as leader at once, and takes its read index from the committed
//! id it reads back: one lost in a power loss would let the node serve reads older than
//! writes it acknowledged before the crash (the cluster tests' power-loss read test).

use crate::codec::{self, log_key, COMMITTED, LAST_PURGED, VOTE};
use crate::error::{self, StorageResult};
use crate::flusher::Flusher;
use crate::store::{encode, Shared};
use crate::types::{NodeId, TypeConfig};
use openraft::storage::{LogFlushed, LogState, RaftLogReader, RaftLogStorage};
use openraft::{Entry, LogId, OptionalSend, Vote};
use shamba::{Readable, WriteBatch, WriteOptions};
use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// The log store of a [`Store`](crate::Store): openraft's `RaftLogStorage`, and its own
/// log reader. Clones share the store.
#[derive(Clone)]
pub struct LogStore {
    shared: Arc<Shared>,
    flusher: Flusher,
}

const SYNC: WriteOptions = WriteOptions { sync: true, disable_wal: false, no_slowdown: false };

impl LogStore {
    pub(crate) fn new(shared: Arc<Shared>, flusher: Flusher) -> LogStore {
        LogStore { shared, flusher }
    }

    /// The entries with indexes in `start..end` (`end: None`: to the last), in order.
    fn entries(&self, start: u64, end: Option<u64>) -> shamba::Result<Vec<Entry<TypeConfig>>> {
        let from = log_key(start);
        let iter = match end {
            Some(end) => self.shared.log.range(&from[..]..&log_key(end)[..]),
            None => self.shared.log.range(&from[..]..),
        };
        iter.map(|item| {
            let (key, value) = item?;
            self.decode_entry(&key, &value)
        })
        .collect()
    }

    fn decode_entry(&self, key: &[u8], value: &[u8]) -> shamba::Result<Entry<TypeConfig>> {
        let entry: Entry<TypeConfig> =
            codec::decode(value).map_err(|e| error::corrupt(self.shared.db.path(), format!("raft_log entry: {e}")))?;
        match codec::log_index(key) {
            Ok(index) if index == entry.log_id.index => Ok(entry),
            Ok(index) => Err(error::corrupt(
                self.shared.db.path(),
                format!("raft_log key {index} holds the entry of index {}", entry.log_id.index),
            )),
            Err(e) => Err(error::corrupt(self.shared.db.path(), e)),
        }
    }

    /// The log id of the last entry present.
    fn last_entry_id(&self) -> shamba::Result<Option<LogId<NodeId>>> {
        match self.shared.log.iter().next_back() {
            None => Ok(None),
            Some(item) => {
                let (key, value) = item?;
                Ok(Some(self.decode_entry(&key, &value)?.log_id))
            }
        }
    }

    fn read_meta<T: serde::de::DeserializeOwned>(&self, key: &[u8]) -> shamba::Result<Option<T>> {
        self.shared.read_meta(&self.shared.meta, key)
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> StorageResult<Vec<Entry<TypeConfig>>> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1),
            Bound::Excluded(&e) => Some(e),
            Bound::Unbounded => None,
        };
        if end.is_some_and(|e| e <= start) {
            return Ok(Vec::new());
        }
        self.entries(start, end).map_err(error::read_logs)
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> StorageResult<LogState<TypeConfig>> {
        let last_purged_log_id: Option<LogId<NodeId>> = self.read_meta(LAST_PURGED).map_err(error::read_logs)?;
        let last = self.last_entry_id().map_err(error::read_logs)?;
        Ok(LogState { last_log_id: last.or(last_purged_log_id), last_purged_log_id })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<NodeId>) -> StorageResult<()> {
        let value = encode("vote", vote).map_err(error::write_vote)?;
        let mut batch = WriteBatch::new();
        batch.put_in(&self.shared.meta, VOTE, value);
        self.shared.db.write_opt(batch, &SYNC).map_err(error::write_vote)
    }

    async fn read_vote(&mut self) -> StorageResult<Option<Vote<NodeId>>> {
        self.read_meta(VOTE).map_err(error::read_vote)
    }

    async fn save_committed(&mut self, committed: Option<LogId<NodeId>>) -> StorageResult<()> {
        let value = encode("committed", &committed).map_err(error::write_logs)?;
        let mut batch = WriteBatch::new();
        batch.put_in(&self.shared.meta, COMMITTED, value);
        self.shared.db.write_opt(batch, &SYNC).map_err(error::write_logs)
    }

    async fn read_committed(&mut self) -> StorageResult<Option<LogId<NodeId>>> {
        Ok(self.read_meta::<Option<LogId<NodeId>>>(COMMITTED).map_err(error::read_logs)?.flatten())
    }

    async fn append<I>(&mut self, entries: I, callback: LogFlushed<TypeConfig>) -> StorageResult<()>
    where
        I: IntoIterator<Item = Entry<TypeConfig>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = WriteBatch::new();
        for entry in entries {
            let value = encode("log entry", &entry).map_err(error::write_logs)?;
            batch.put_in(&self.shared.log, log_key(entry.log_id.index), value);
        }
        // Readable once written; durable once the sync thread has synced the log.
        self.shared.db.write(batch).map_err(error::write_logs)?;
        self.flusher.after_sync(self.shared.db.clone(), callback);
        Ok(())
    }

    async fn truncate(&mut self, log_id: LogId<NodeId>) -> StorageResult<()> {
        let mut batch = WriteBatch::new();
        batch.delete_range_in(&self.shared.log, &log_key(log_id.index)[..]..);
        self.shared.db.write(batch).map_err(error::write_logs)
    }

    async fn purge(&mut self, log_id: LogId<NodeId>) -> StorageResult<()> {
        let value = encode("last purged", &log_id).map_err(error::write_logs)?;
        let mut batch = WriteBatch::new();
        batch.put_in(&self.shared.meta, LAST_PURGED, value);
        match log_id.index.checked_add(1) {
            Some(end) => batch.delete_range_in(&self.shared.log, &log_key(0)[..]..&log_key(end)[..]),
            None => batch.delete_range_in(&self.shared.log, &log_key(0)[..]..),
        };
        self.shared.db.write(batch).map_err(error::write_logs)
    }
}
