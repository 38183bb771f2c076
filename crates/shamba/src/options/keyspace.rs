//! What a keyspace may set for itself: its filters, how lookups probe them, its levels'
//! shape, its block size and compression. Everything else (memtable budget, cache, file
//! limits, the WAL) is the database's, shared by all its keyspaces.

use super::{CompactionFilter, CompactionStyle, Compression, Options, ProbePolicy};
use crate::filter::BuildPolicy;
use std::sync::Arc;

/// Options of one keyspace (RocksDB's column-family options), for
/// [`Db::keyspace_with`](crate::Db::keyspace_with) and
/// [`Options::keyspace_options`].
///
/// The shape (`compaction_style`, `size_ratio`) is recorded when the keyspace is created
/// and kept for its life. The rest is a setting of the process, as RocksDB takes every
/// column family's options at each open: a keyspace reopened without options in
/// [`Options::keyspace_options`] runs with the database's.
///
/// ```
/// use shamba::{CompactionStyle, Compression, KeyspaceOptions};
/// let logs = KeyspaceOptions { compaction_style: CompactionStyle::Tiered, compression: Compression::Lz4, ..KeyspaceOptions::default() };
/// assert_eq!(logs.size_ratio, 10);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct KeyspaceOptions {
    /// As [`Options::filter_policy`].
    pub filter_policy: BuildPolicy,
    /// As [`Options::probe_policy`].
    pub probe_policy: ProbePolicy,
    /// As [`Options::compaction_style`]; fixed when the keyspace is created.
    pub compaction_style: CompactionStyle,
    /// As [`Options::size_ratio`]; fixed when the keyspace is created.
    pub size_ratio: u32,
    /// As [`Options::block_size`].
    pub block_size: usize,
    /// As [`Options::compression`].
    pub compression: Compression,
    /// As [`Options::compression_per_level`].
    pub compression_per_level: Vec<Compression>,
    /// As [`Options::bottommost_compression`].
    pub bottommost_compression: Option<Compression>,
    /// As [`Options::compaction_filter`]: this keyspace's, given again at every open.
    pub compaction_filter: Option<Arc<dyn CompactionFilter>>,
}

impl Default for KeyspaceOptions {
    /// The engine's defaults (those of [`Options::default`]).
    fn default() -> Self {
        KeyspaceOptions::of(&Options::default())
    }
}

impl KeyspaceOptions {
    /// The keyspace options in `opts` (its compaction filter included).
    pub fn of(opts: &Options) -> KeyspaceOptions {
        KeyspaceOptions {
            filter_policy: opts.filter_policy.clone(),
            probe_policy: opts.probe_policy.clone(),
            compaction_style: opts.compaction_style,
            size_ratio: opts.size_ratio,
            block_size: opts.block_size,
            compression: opts.compression,
            compression_per_level: opts.compression_per_level.clone(),
            bottommost_compression: opts.bottommost_compression,
            compaction_filter: opts.compaction_filter.clone(),
        }
    }

    /// What a keyspace without options of its own runs with: `opts`' settings, but no
    /// compaction filter (`Options::compaction_filter` is the default keyspace's alone: a
    /// filter written for one keyspace's data must not run over another's).
    pub(crate) fn inherited(opts: &Options) -> KeyspaceOptions {
        KeyspaceOptions { compaction_filter: None, ..KeyspaceOptions::of(opts) }
    }

    /// `db`'s options with this keyspace's in place of its own: what the keyspace runs with.
    pub(crate) fn over(&self, db: &Options) -> Options {
        Options {
            filter_policy: self.filter_policy.clone(),
            probe_policy: self.probe_policy.clone(),
            compaction_style: self.compaction_style,
            size_ratio: self.size_ratio,
            block_size: self.block_size,
            compression: self.compression,
            compression_per_level: self.compression_per_level.clone(),
            bottommost_compression: self.bottommost_compression,
            compaction_filter: self.compaction_filter.clone(),
            keyspace_options: Vec::new(),
            ..db.clone()
        }
    }
}
