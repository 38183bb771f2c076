//! The memtable: an ordered, concurrent in-memory table of internal keys
//! (crossbeam-skiplist), written by the write path and read by lookups and iterators.

use crate::cursor::Cursor;
use crate::error::Result;
use crate::key::{SeqNo, ValueKind};
use std::sync::Arc;

/// What a memtable (or a table) knows about a user key at a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The newest visible version is a value.
    Value(Vec<u8>),
    /// The newest visible version is a tombstone.
    Deleted,
    /// No visible version here; look further down.
    NotFound,
}

/// An in-memory table of internal keys.
pub struct MemTable {
    _todo: (),
}

impl MemTable {
    /// An empty memtable whose writes are logged in WAL `wal_number`.
    pub fn new(wal_number: u64) -> Self {
        let _ = wal_number;
        todo!()
    }
    /// The WAL that holds this memtable's writes.
    pub fn wal_number(&self) -> u64 {
        todo!()
    }
    /// Insert one version. Safe to call from several threads.
    pub fn insert(&self, user_key: &[u8], seq: SeqNo, kind: ValueKind, value: &[u8]) {
        let _ = (user_key, seq, kind, value);
        todo!()
    }
    /// The newest version of `user_key` with sequence `<= seq`.
    pub fn get(&self, user_key: &[u8], seq: SeqNo) -> Lookup {
        let _ = (user_key, seq);
        todo!()
    }
    /// Bytes of keys, values and overhead, approximately.
    pub fn approximate_size(&self) -> usize {
        todo!()
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        todo!()
    }
    /// Whether the memtable holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A cursor over all entries, keeping the memtable alive.
    pub fn cursor(self: &Arc<Self>) -> Box<dyn Cursor> {
        todo!()
    }
}

#[allow(dead_code)]
fn _assert_cursor_result(_: Result<()>) {}
