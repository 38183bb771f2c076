//! Knobs for the experiments; production code leaves them at their defaults.
//!
//! Each one exists so that `shamba exp` can measure a baseline on the same build as the
//! engine as shipped: the unshared digest (seed 000), level-by-level filter probes without
//! the prefetch passes, the seeds' hash functions, an emulated device, and where a lookup
//! spends its time. They are kept apart from [`Options`](super::Options) and
//! [`ReadOptions`](super::ReadOptions) so a user building those sees the production knobs
//! only, and so that the lookup path pays nothing for them at their defaults: a lookup
//! checks them once, at its entry, and a lab setting runs a separate variant of it.

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
}

impl Default for LabOptions {
    fn default() -> Self {
        LabOptions { prefetch_filters: true, digest_hash: HashFn::Xxh3_128, device: DeviceModel::None }
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

/// How a lookup times its stages, chosen once at its entry: [`Untimed`] in production, a
/// zero-sized no-op the compiler removes, or [`Timed`] with [`ReadLab::profile`]. The
/// lookup is generic over it, so the production loop has no profiling branch.
pub(crate) trait StageClock {
    /// Whether stages are timed (`Stats::lookup_costs` counts the lookup).
    const TIMED: bool;
    /// When a stage started.
    type Start: Copy;
    /// Start timing a stage.
    fn start() -> Self::Start;
    /// Nanoseconds since `start` (0 untimed).
    fn nanos_since(start: Self::Start) -> u64;
}

/// No clock: production lookups.
pub(crate) struct Untimed;

impl StageClock for Untimed {
    const TIMED: bool = false;
    type Start = ();
    #[inline(always)]
    fn start() {}
    #[inline(always)]
    fn nanos_since((): ()) -> u64 {
        0
    }
}

/// The monotonic clock, read twice per stage: profiled lookups.
pub(crate) struct Timed;

impl StageClock for Timed {
    const TIMED: bool = true;
    type Start = std::time::Instant;
    #[inline]
    fn start() -> std::time::Instant {
        std::time::Instant::now()
    }
    #[inline]
    fn nanos_since(start: std::time::Instant) -> u64 {
        start.elapsed().as_nanos() as u64
    }
}
