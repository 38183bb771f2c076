//! The database handle.

/// A database.
pub struct Db {}
/// An atomic group of writes.
pub struct WriteBatch {}
/// A consistent read view.
pub struct Snapshot {}
/// An iterator over key-value pairs.
pub struct DbIterator {}
