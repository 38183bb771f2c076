//! Memory-pressure sweep: the loaded database reopened with index and filter blocks in a
//! block cache of 10%..150% of a reference filter + index size (the same byte budget for
//! every engine), warmed up, then measured on empty lookups.

use super::point::{Lookups, Mix};
use super::KeySpec;
use crate::engine::{self, EngineResult, Setup, Variant};
use crate::keys::KeyDistribution;
use crate::report::Measurement;
use std::path::Path;

/// Cache sizes of the sweep, in percent of the reference metadata bytes.
pub const PERCENTS: [u64; 6] = [10, 25, 40, 70, 100, 150];

/// One sweep: reopen `variant` in `dir` per cache size and measure empty lookups.
pub struct Sweep<'a> {
    /// The loaded database.
    pub dir: &'a Path,
    /// Setup it was loaded with; cache size and `metadata_in_cache` are overridden.
    pub setup: &'a Setup,
    /// Keys it holds.
    pub spec: KeySpec,
    /// Filter + index bytes the percentages refer to.
    pub reference_bytes: u64,
    /// The filter part of `reference_bytes`: shamba-budget's and shamba-fine's filter memory budget takes
    /// each cache size up to this many bytes.
    pub reference_filter_bytes: u64,
    /// Reopen with O_DIRECT table reads.
    pub direct_io: bool,
    /// Measured lookups per cache size (plus half as many to warm the cache).
    pub ops: u64,
    /// Seed of the lookups.
    pub seed: u64,
}

impl Sweep<'_> {
    /// Run every cache size; the engine must be closed before (the directory is reopened).
    pub fn run(&self, variant: Variant, table: &str) -> EngineResult<Vec<Measurement>> {
        self.run_at(variant, table, &PERCENTS)
    }

    /// [`run`](Self::run) at the cache sizes `percents` only.
    pub fn run_at(&self, variant: Variant, table: &str, percents: &[u64]) -> EngineResult<Vec<Measurement>> {
        let mut rows = Vec::new();
        for &pct in percents {
            let cache = (self.reference_bytes * pct / 100).max(4096) as usize;
            let mut setup =
                Setup { cache_bytes: cache, metadata_in_cache: true, direct_io: self.direct_io, ..self.setup.clone() };
            if matches!(variant, Variant::ShambaBudget | Variant::ShambaFine) {
                // The same total memory, filters first (as `exp memory-bound` found best): the
                // budget holds filters up to all of them, the block cache gets the rest for
                // index and data blocks.
                let filters = (cache as u64).min(self.reference_filter_bytes);
                setup.filter_memory_budget = Some(filters);
                setup.cache_bytes = (cache - filters as usize).max(4096);
            }
            let db = engine::open(variant, self.dir, &setup)?;
            let lookups = Lookups {
                spec: self.spec,
                mix: Mix::Missing,
                dist: KeyDistribution::Uniform,
                theta: 0.0,
                seed: self.seed,
            };
            lookups.warm(db.as_ref(), self.ops / 2)?;
            let phase = format!("cache {pct}% ({} KiB)", cache / 1024);
            rows.push(lookups.run(db.as_ref(), table, &phase, self.ops)?);
            db.close()?;
        }
        Ok(rows)
    }
}
