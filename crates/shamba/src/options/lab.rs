//! Knobs for the experiments, compiled with the `lab` feature only; without it the engine
//! runs as if each were at its default.
//!
//! Each one exists so that the experiments can measure a baseline on the same engine as
//! shipped: the unshared digest (seed 000), level-by-level filter probes without the
//! prefetch passes, the seeds' hash functions, an emulated device, and where a lookup
//! spends its time. A build without the feature has neither the fields
//! [`Options::lab`](super::Options::lab) and [`ReadOptions::lab`](super::ReadOptions::lab)
//! nor any code for them on its lookup path (`stage_timer.rs`).

use crate::filter::HashFn;
use crate::io::DeviceModel;

/// Experiment knobs of a database, fixed at open ([`Options::lab`](super::Options::lab)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabOptions {
    /// Before probing the first table of a lookup, prefetch the filter cache lines of every
    /// candidate table (from the one digest), so a deep tree's cache misses overlap (once
    /// the filters reach `Options::prefetch_min_filter_bytes`). Default: true (false only
    /// to measure the level-by-level baseline).
    pub prefetch_filters: bool,
    /// The hash function of the key digest every filter is built from and probed with.
    /// Default: xxh3-128. The others (`filter::HashFn`) exist so experiments can run the
    /// seeds' configurations (seed 000 used MurmurHash64A); tables record the digest
    /// version they were built with, and a database must be reopened with the same one
    /// (a table of another version reads as corrupt rather than answering wrongly).
    pub digest_hash: HashFn,
    /// Emulated device cost per block read. Default: none.
    pub device: DeviceModel,
    /// Flush frozen memtables in the background as they come (true), or only when
    /// `Db::flush` (or `Db::compact`) asks, in its calling thread (false: a test that numbers
    /// every storage operation gets the same numbers in every run, and frozen memtables
    /// stay unflushed until it says). With false, writes stop once
    /// `Options::max_immutable_memtables` are frozen, until a flush. Default: true.
    pub background_flushes: bool,
}

impl Default for LabOptions {
    fn default() -> Self {
        LabOptions {
            prefetch_filters: true,
            digest_hash: HashFn::Xxh3_128,
            device: DeviceModel::None,
            background_flushes: true,
        }
    }
}

/// Experiment knobs of one read ([`ReadOptions::lab`](super::ReadOptions::lab)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLab {
    /// Compute the key digest once per lookup and share it with every table (true), or
    /// recompute it per table (false: only to measure the unshared baseline, which also
    /// cannot prefetch filters: their probe positions need the digest). Default: true.
    pub share_hash: bool,
    /// Time each stage of a lookup (hashing, memtables, filters, index, data) into
    /// `Stats::lookup_costs`. Costs two clock reads per stage. Default: false.
    pub profile: bool,
}

impl Default for ReadLab {
    fn default() -> Self {
        ReadLab { share_hash: true, profile: false }
    }
}

impl ReadLab {
    /// Whether every knob is at its default (the production lookup).
    #[inline]
    pub fn is_default(&self) -> bool {
        self.share_hash && !self.profile
    }
}
