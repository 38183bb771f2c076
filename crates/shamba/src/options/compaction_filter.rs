//! Compaction filters: the user's say over each entry a compaction reads.

use std::fmt;

/// What a [`CompactionFilter`] decides for one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterDecision {
    /// Write the entry on unchanged.
    Keep,
    /// The key is gone from here on. The entry becomes a deletion marker at its own
    /// sequence number (as RocksDB turns a removal into a delete), so an older version of
    /// the key in a level below does not come back; the marker is dropped, like any
    /// other, once no file below may hold the key.
    Remove,
    /// Write this value instead (at the entry's own sequence number; an expiring entry
    /// keeps its deadline).
    ChangeValue(Vec<u8>),
}

/// A keyspace's filter over its compactions (RocksDB's `CompactionFilter`): for each value
/// a compaction reads, keep it, remove the key, or change the value. It is a setting of the
/// process, not of the database: [`Options::compaction_filter`](crate::Options::compaction_filter)
/// and [`KeyspaceOptions::compaction_filter`](crate::KeyspaceOptions::compaction_filter)
/// are given again at every open, and a database opened without one compacts as if it
/// had none (it keeps every entry; nothing is lost, nothing is filtered).
///
/// The filter sees values only (deletion markers pass it by), never an entry that a live
/// snapshot or transaction may read: an entry whose sequence number is at or below the
/// newest one a snapshot pins or a transaction reads at, when the compaction starts, is
/// written on as it is (RocksDB's rule), so a snapshot reads what it read when it was
/// taken. A snapshot taken while a compaction runs reads the newest data of that moment,
/// and sees the filter's decisions once the compaction is installed, as it would see a
/// write. The filter sees an expiring entry's value without its deadline, and never an
/// expired one (the engine removes those itself). Flushes do not call it.
///
/// It runs on the compaction threads, so it must be `Send + Sync`, and it should be
/// quick: it is called once per value a compaction rewrites.
///
/// ```
/// use shamba::{CompactionFilter, FilterDecision};
/// /// Drops every key under `tmp/` and upper-cases the values under `shout/`.
/// struct Tidy;
/// impl CompactionFilter for Tidy {
///     fn filter(&self, _level: usize, key: &[u8], value: &[u8]) -> FilterDecision {
///         if key.starts_with(b"tmp/") {
///             FilterDecision::Remove
///         } else if key.starts_with(b"shout/") {
///             FilterDecision::ChangeValue(value.to_ascii_uppercase())
///         } else {
///             FilterDecision::Keep
///         }
///     }
/// }
/// let opts = shamba::Options { compaction_filter: Some(std::sync::Arc::new(Tidy)), ..Default::default() };
/// # let _ = opts;
/// ```
pub trait CompactionFilter: Send + Sync {
    /// The decision for `key`'s `value`, read by a compaction writing to `level`.
    fn filter(&self, level: usize, key: &[u8], value: &[u8]) -> FilterDecision;

    /// A name for reports and `Debug` output.
    fn name(&self) -> &str {
        "CompactionFilter"
    }
}

impl fmt::Debug for dyn CompactionFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CompactionFilter({:?})", self.name())
    }
}

/// Two filters are equal when they are the same object (options compare by identity).
impl PartialEq for dyn CompactionFilter {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(self, other)
    }
}
