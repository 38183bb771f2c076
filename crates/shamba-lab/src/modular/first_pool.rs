//! `memory-pressure --first-module-pool`: the block cache's pool for first filter modules
//! (`Options::first_module_cache_ratio`), sized to hold SHaMBa-prop's first modules at the
//! cell's budget, as seed 002 assumes them always in memory. Every variant whose filters
//! have modules gets the same pool at a given cache size (its first modules are held there,
//! up to the pool's bytes); Plain's whole filters have no first module, so its cache is
//! the two-pool one. The pool is inside the cache's bytes: the total memory of a cell is
//! the same as without it.

use std::error::Error;

use shamba_cli::bench::report::PhaseResult;

use crate::modular::memory_pressure::BITS_PER_KEY;
use crate::modular::variants::{cached_options, prop_first_bits, Build, Variant};
use crate::support::lookups::{measure, ReadSpec};
use crate::support::report::{Cell, Table};
use crate::support::tree::LoadedTree;

/// The block cache's charge per block on top of its bytes (the engine's estimate of its
/// slot, map entry and `Arc` header).
const BLOCK_CHARGE: u64 = 64;

/// Caches of this many bytes or more are split into several shards (the engine's rule: at
/// least 512 KiB each), and each shard holds its own share of the pool.
const SHARDED_FROM: usize = 1 << 20;

/// Room added to the pool when the cache is sharded: blocks hash to shards, so one shard's
/// first modules may pass its even share of the pool by this much.
const SHARD_SLACK: f64 = 1.25;

/// The bytes SHaMBa-prop's first modules take at a budget of `pct`%, on a tree of
/// `filter_bytes` of filters at [`BITS_PER_KEY`] in `tables` tables, as the cache charges
/// them; 0 when prop builds whole filters at that budget.
pub fn prop_first_module_bytes(pct: f64, filter_bytes: u64, tables: usize) -> u64 {
    match prop_first_bits(BITS_PER_KEY, pct) {
        Some(first) => (filter_bytes as f64 * first / BITS_PER_KEY) as u64 + BLOCK_CHARGE * tables as u64,
        None => 0,
    }
}

/// The first-module share of a `cache`-byte block cache for `build` at `pct`%: enough for
/// prop's first modules (`first_bytes`), with slack when the cache is sharded; 0 for
/// builds without modules.
pub fn share(build: Build, cache: usize, first_bytes: u64) -> f64 {
    if !matches!(build, Build::Eq(_) | Build::Prop) || cache == 0 || first_bytes == 0 {
        return 0.0;
    }
    let slack = if cache >= SHARDED_FROM { SHARD_SLACK } else { 1.0 };
    (first_bytes as f64 * slack / cache as f64).min(1.0)
}

/// What the pool held at the end of a cell's measured lookups.
#[derive(Debug, Clone, Copy, Default)]
pub struct PoolUse {
    /// The pool's bytes (its share of the cache).
    pub capacity: usize,
    /// Bytes it held.
    pub resident: usize,
}

/// [`measure_cached`](crate::modular::variants::measure_cached) with `first_ratio` of the
/// cache a pool for first modules; also what the pool held at the end.
pub fn measure_with_pool(
    tree: &LoadedTree,
    v: &Variant,
    cache: usize,
    elastic_budget: u64,
    first_ratio: f64,
    spec: &ReadSpec,
) -> Result<(PhaseResult, PoolUse), Box<dyn Error>> {
    let mut options = cached_options(&tree.spec.options, v, cache, elastic_budget);
    options.first_module_cache_ratio = first_ratio;
    let db = tree.open_reads(options, spec.direct_io)?;
    let r = measure(&db, tree.spec.num, tree.spec.key_size, spec)?;
    let stats = db.stats();
    db.close()?;
    Ok((r, PoolUse { capacity: stats.cache_first_pool_capacity, resident: stats.cache_first_pool_usage }))
}

/// One row of the pool table.
pub struct PoolRow {
    /// Variant name.
    pub variant: &'static str,
    /// Cache %.
    pub pct: f64,
    /// Cache bytes.
    pub cache: usize,
    /// Prop's first modules at this budget, as charged.
    pub prop_first: u64,
    /// What the pool held, per distribution and alpha (the largest and smallest).
    pub uses: Vec<PoolUse>,
}

/// The pool of each variant and cache size: its bytes, prop's first modules', and the
/// least and most it held at the end of a cell.
pub fn pool_table(rows: &[PoolRow]) -> Table {
    let mut t = Table::new(
        "first-pool",
        "First-module pool per variant and cache size (KiB): its share, prop's first modules as charged, and the least / most it held at the end of a cell",
        &["variant", "cache %", "cache KiB", "pool KiB", "prop first modules KiB", "held min KiB", "held max KiB"],
    );
    let kib = |b: usize| b as f64 / 1024.0;
    for r in rows {
        let cap = r.uses.first().map_or(0, |u| u.capacity);
        let min = r.uses.iter().map(|u| u.resident).min().unwrap_or(0);
        let max = r.uses.iter().map(|u| u.resident).max().unwrap_or(0);
        t.row(vec![
            Cell::text(r.variant),
            Cell::num(r.pct, 0),
            Cell::num(kib(r.cache), 0),
            Cell::num(kib(cap), 0),
            Cell::num(kib(r.prop_first as usize), 0),
            Cell::num(kib(min), 0),
            Cell::num(kib(max), 0),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_holds_props_first_modules_and_only_modular_builds_get_one() {
        // 10% of the metadata: prop's first module is 1 of 10 bits per key.
        let first = prop_first_module_bytes(10.0, 2_500_000, 34);
        assert_eq!(first, 250_000 + 64 * 34);
        assert_eq!(prop_first_module_bytes(100.0, 2_500_000, 34), 0, "whole filters from 100%");
        // One shard: exactly the bytes; several: with slack.
        assert!((share(Build::Prop, 500_000, first) - first as f64 / 500_000.0).abs() < 1e-12);
        assert!((share(Build::Eq(2), 2 << 20, first) - first as f64 * 1.25 / f64::from(2 << 20)).abs() < 1e-12);
        assert_eq!(share(Build::Whole, 500_000, first), 0.0);
        assert_eq!(share(Build::Prop, 100_000, 10 * first), 1.0, "never more than the cache");
    }
}
