//! The memtable: an ordered, concurrent in-memory table of internal keys
//! (crossbeam-skiplist), written by the write path and read by lookups and iterators.
//!
//! Every write is a new entry keyed by its internal key `(user key, sequence, kind)`, so
//! older versions stay readable by older snapshots until the table is flushed. Entries
//! order by [`compare_internal_keys`](crate::key::compare_internal_keys): user key
//! ascending, newest version first.

mod cursor;
mod entry;
mod table;

pub(crate) use table::MemTable;

use crate::key::SeqNo;

/// What a memtable (or a table) knows about a user key at a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// The newest visible version is a value, with its sequence number.
    Value(SeqNo, Vec<u8>),
    /// The newest visible version is a value that expires: its stored value (deadline,
    /// then the user's value), with its sequence number.
    Expiring(SeqNo, Vec<u8>),
    /// The newest visible version is a tombstone, with its sequence number.
    Deleted(SeqNo),
    /// No visible version here; look further down.
    NotFound,
}
