//! Counters of the whole database, returned by `Db::stats`.

/// A snapshot of the database's counters.
#[derive(Debug, Clone, Default)]
pub struct Stats {}
