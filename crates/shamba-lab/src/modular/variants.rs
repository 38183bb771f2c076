//! The filter configurations the memory experiments compare: how the tree's filters are
//! built (fixed at load) and how lookups probe them (chosen at open).
//!
//! Partitioned index and filters (RocksDB-style: ~4 KiB key-range partitions behind a pinned
//! top-level index, the strongest baseline under memory pressure) are a property of the
//! build: `Build::Partitioned` wraps another build.

use std::error::Error;

use shamba::Options;
use shamba::{ElasticPolicy, ProbePolicy, ShambaPolicy, Skipping};
use shamba_cli::bench::report::PhaseResult;
use shamba_filter::{Allocation, BuildPolicy, FilterLayout, ModuleSizes};

use crate::support::lookups::{measure, ReadSpec};
use crate::support::tree::LoadedTree;

/// How filters are built, fixed when the tree is loaded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Build {
    /// One Bloom filter per table.
    Whole,
    /// `n` equal Bloom modules (SHaMBa-eq).
    Eq(u8),
    /// Two Bloom modules, the first sized to the memory budget (SHaMBa-prop): `bits x
    /// budget` bits per key, the rest in the second; one module from a budget of 100%.
    Prop,
    /// `n` elastic units (ElasticBF).
    Units(u8),
    /// `n` equal modules of a Ribbon filter (modular Ribbon) on every level.
    RibbonEq(u8),
    /// Whole Bloom filters, index and filters partitioned.
    PartitionedWhole,
    /// `n` equal Bloom modules per partition, index and filters partitioned.
    PartitionedEq(u8),
    /// `n` equal modules of a Ribbon filter per partition, index and filters partitioned.
    PartitionedRibbonEq(u8),
    /// Everything combined: Monkey-allocated bits per level, `n` equal modules of a Ribbon
    /// filter per partition, index and filters partitioned.
    Combined(u8),
    /// Two modules of a Ribbon filter per partition, the first sized to the budget (as
    /// SHaMBa-prop), index and filters partitioned; one module from a budget of 100%.
    PartitionedRibbonProp,
    /// Ribbon modules of one column each (1 bit per key, FP rate 1/2) at twice the
    /// Bloom-equivalent bits per key of the others, index and filters partitioned; its
    /// probes read the parts that are not resident in one read. Under a filter memory
    /// budget a table may then hold any number of leading bits resident and pays at most
    /// one filter read per visit: the part structure the offline bound assumes
    /// (`exp/memory_bound.rs`, table `layouts`). The bits not resident cost disk, not
    /// memory.
    FineRibbon,
}

impl Build {
    /// Whether index and filters are partitioned.
    pub fn partitioned(self) -> bool {
        matches!(
            self,
            Build::PartitionedWhole
                | Build::PartitionedEq(_)
                | Build::PartitionedRibbonEq(_)
                | Build::Combined(_)
                | Build::PartitionedRibbonProp
                | Build::FineRibbon
        )
    }
}

/// How lookups probe, chosen at open.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Probe {
    /// Every part.
    Plain,
    /// SHaMBa's utility skipping.
    Shamba(Skipping),
    /// ElasticBF's units under a budget.
    Elastic,
}

/// One configuration: a name, a build and a probe policy.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// Name in tables (the seed's names where it has one).
    pub name: &'static str,
    /// Filter build.
    pub build: Build,
    /// Probe policy.
    pub probe: Probe,
}

impl Variant {
    /// A variant named `name`.
    pub const fn new(name: &'static str, build: Build, probe: Probe) -> Variant {
        Variant { name, build, probe }
    }

    /// Whether this is one of the SHaMBa variants (for "best SHaMBa policy").
    pub fn is_shamba(&self) -> bool {
        matches!(self.probe, Probe::Shamba(_))
    }
}

/// Every variant of `memory-pressure`, baselines first.
pub const ALL: [Variant; 19] = [
    Variant::new("plain", Build::Whole, Probe::Plain),
    Variant::new("plain-part", Build::PartitionedWhole, Probe::Plain),
    Variant::new("eq", Build::Eq(2), Probe::Shamba(Skipping::None)),
    Variant::new("eq-P", Build::Eq(2), Probe::Shamba(Skipping::Partial)),
    Variant::new("eq-F", Build::Eq(2), Probe::Shamba(Skipping::Full)),
    Variant::new("prop", Build::Prop, Probe::Shamba(Skipping::None)),
    Variant::new("prop-P", Build::Prop, Probe::Shamba(Skipping::Partial)),
    Variant::new("prop-F", Build::Prop, Probe::Shamba(Skipping::Full)),
    Variant::new("elastic", Build::Units(5), Probe::Elastic),
    Variant::new("ribbon-eq-F", Build::RibbonEq(2), Probe::Shamba(Skipping::Full)),
    Variant::new("eq-F-part", Build::PartitionedEq(2), Probe::Shamba(Skipping::Full)),
    Variant::new("ribbon-eq-part", Build::PartitionedRibbonEq(2), Probe::Shamba(Skipping::None)),
    Variant::new("ribbon-eq-F-part", Build::PartitionedRibbonEq(2), Probe::Shamba(Skipping::Full)),
    Variant::new("combined", Build::Combined(2), Probe::Shamba(Skipping::None)),
    Variant::new("combined-F", Build::Combined(2), Probe::Shamba(Skipping::Full)),
    Variant::new("ribbon-eq-O-part", Build::PartitionedRibbonEq(2), Probe::Shamba(Skipping::HitOdds)),
    Variant::new("combined-O", Build::Combined(2), Probe::Shamba(Skipping::HitOdds)),
    Variant::new("ribbon-prop-O-part", Build::PartitionedRibbonProp, Probe::Shamba(Skipping::HitOdds)),
    Variant::new("no-last-level", Build::Whole, Probe::Plain),
];

/// Variants whose filters are held under `Options::filter_memory_budget` (the filter share
/// of the bytes; the block cache, with the rest, holds index and data blocks and the parts
/// read for one probe) instead of competing for the block cache by recency: the filter
/// manager keeps the parts worth the most reads per byte. Named `*-budget`.
pub const BUDGETED: [Variant; 3] = [
    Variant::new("eq-F-budget", Build::Eq(2), Probe::Shamba(Skipping::Full)),
    Variant::new("ribbon-eq-O-part-budget", Build::PartitionedRibbonEq(2), Probe::Shamba(Skipping::HitOdds)),
    Variant::new("ribbon-fine-O-part-budget", Build::FineRibbon, Probe::Shamba(Skipping::HitOdds)),
];

/// [`Build::FineRibbon`]'s bits per key as a multiple of the others' (Bloom-equivalent): the
/// bound lets a hot table hold up to twice the built bits, and bits not resident cost disk.
const FINE_RIBBON_BITS_FACTOR: f64 = 2.0;

/// Whether `v` holds its filters under a filter memory budget ([`BUDGETED`]).
pub fn budgeted(v: &Variant) -> bool {
    v.name.ends_with("-budget")
}

/// First-module bits per key of SHaMBa-prop at a budget of `pct`% of the metadata (seed
/// 002: 7 of 10 bits at 70%), or `None` when the budget holds everything (one module).
pub fn prop_first_bits(bits_per_key: f64, pct: f64) -> Option<f64> {
    if pct >= 100.0 {
        None
    } else {
        Some((bits_per_key * pct / 100.0).clamp(0.5, bits_per_key - 0.5))
    }
}

/// The build policy of `build` at `bits_per_key` (Monkey allocation if `monkey`), for a
/// budget of `pct`% (only SHaMBa-prop depends on it).
pub fn build_policy(build: Build, bits_per_key: f64, monkey: bool, pct: f64) -> BuildPolicy {
    let mut p = BuildPolicy::uniform(bits_per_key);
    if monkey {
        p.allocation = Allocation::Monkey;
    }
    p.layout = match build {
        Build::Whole | Build::PartitionedWhole => FilterLayout::Whole,
        Build::Eq(count) | Build::PartitionedEq(count) => FilterLayout::Modules(ModuleSizes::Equal { count }),
        Build::Prop => match prop_first_bits(bits_per_key, pct) {
            Some(first_bits_per_key) => {
                FilterLayout::Modules(ModuleSizes::Proportional { count: 2, first_bits_per_key })
            }
            None => FilterLayout::Whole,
        },
        Build::Units(count) => FilterLayout::Units { count },
        Build::RibbonEq(count) | Build::PartitionedRibbonEq(count) => {
            p.ribbon_from_level = Some(0);
            FilterLayout::Modules(ModuleSizes::Equal { count })
        }
        Build::PartitionedRibbonProp => {
            p.ribbon_from_level = Some(0);
            match prop_first_bits(bits_per_key, pct) {
                Some(first_bits_per_key) => {
                    FilterLayout::Modules(ModuleSizes::Proportional { count: 2, first_bits_per_key })
                }
                None => FilterLayout::Whole,
            }
        }
        Build::Combined(count) => {
            p.ribbon_from_level = Some(0);
            p.allocation = Allocation::Monkey;
            FilterLayout::Modules(ModuleSizes::Equal { count })
        }
        Build::FineRibbon => {
            p.ribbon_from_level = Some(0);
            p.bits_per_key = bits_per_key * FINE_RIBBON_BITS_FACTOR;
            // A Ribbon's columns: log2(1 / FP rate), b ln 2 at b Bloom-equivalent bits.
            let columns = p.bits_per_key * std::f64::consts::LN_2;
            let count = columns.round().clamp(1.0, f64::from(u8::MAX)) as u8;
            FilterLayout::Modules(ModuleSizes::Equal { count })
        }
    };
    p
}

/// The probe policy of `v`. Elastic gets `elastic_budget` bytes of enabled units.
pub fn probe_policy(v: &Variant, elastic_budget: u64) -> ProbePolicy {
    if v.name == "no-last-level" {
        return ProbePolicy::NoLastLevel;
    }
    match v.probe {
        Probe::Plain => ProbePolicy::Plain,
        Probe::Shamba(skipping) => ProbePolicy::Shamba(ShambaPolicy {
            skipping,
            read_rest_together: v.build == Build::FineRibbon,
            ..ShambaPolicy::default()
        }),
        Probe::Elastic => {
            ProbePolicy::Elastic(ElasticPolicy { budget_bytes: elastic_budget, ..ElasticPolicy::default() })
        }
    }
}

/// The options a tree of `build` is loaded with: `base` with the build's filters (for a
/// budget of `pct`%, see [`build_policy`]) and partitioning.
pub fn build_options(base: &Options, build: Build, bits_per_key: f64, monkey: bool, pct: f64) -> Options {
    let mut o = base.clone();
    o.filter_policy = build_policy(build, bits_per_key, monkey, pct);
    o.partition_index_and_filters = build.partitioned();
    if build.partitioned() {
        o.metadata_partition_size = feasible_partition_size(build, bits_per_key, pct);
    }
    o
}

/// The page seed 002's feasibility condition counts in.
pub const PAGE_BYTES: usize = 4096;

/// The partition size (a partition's filter parts together) that gives every module at
/// least one page (seed 002, Eq. 10 with the file size replaced by the partition's, as its
/// Sec. 4.2 says for partitioned filters): one page for a whole filter, n pages for n equal
/// modules, and for SHaMBa-prop's unequal pair enough that the smaller one fills a page.
/// Below that a module is read as part of a page it shares, and skipping it saves nothing.
pub fn feasible_partition_size(build: Build, bits_per_key: f64, pct: f64) -> usize {
    match build {
        Build::PartitionedEq(n) | Build::PartitionedRibbonEq(n) | Build::Combined(n) => PAGE_BYTES * n.max(1) as usize,
        // Its parts are read together: the partition's, not each module's, size counts.
        Build::FineRibbon => 8 * PAGE_BYTES,
        Build::PartitionedRibbonProp => match prop_first_bits(bits_per_key, pct) {
            Some(first) => {
                let smaller = first.min(bits_per_key - first).max(0.1);
                (PAGE_BYTES as f64 * bits_per_key / smaller).ceil() as usize
            }
            None => PAGE_BYTES,
        },
        _ => PAGE_BYTES,
    }
}

/// `base` with index and filter blocks in a block cache of `cache_bytes` and `v`'s probes.
/// A variant that holds filters outside the block cache takes them out of the same bytes:
/// a [`BUDGETED`] variant has `elastic_budget` of them as its filter memory budget, Elastic
/// as the bytes of units it may enable, and the block cache gets the rest.
pub fn cached_options(base: &Options, v: &Variant, cache_bytes: usize, elastic_budget: u64) -> Options {
    let mut o = base.clone();
    o.cache_capacity = cache_bytes;
    if budgeted(v) {
        o.filter_memory_budget = Some(elastic_budget);
    }
    if budgeted(v) || v.probe == Probe::Elastic {
        o.cache_capacity = cache_bytes.saturating_sub(elastic_budget as usize);
    }
    o.cache_index_and_filter_blocks = true;
    o.probe_policy = probe_policy(v, elastic_budget);
    o
}

/// Reopen `tree` with `v`'s probe policy and its index and filter blocks in a cold block
/// cache of `cache` bytes (Elastic may enable `elastic_budget` bytes of units), measure
/// `spec`, and close it.
pub fn measure_cached(
    tree: &LoadedTree,
    v: &Variant,
    cache: usize,
    elastic_budget: u64,
    spec: &ReadSpec,
) -> Result<PhaseResult, Box<dyn Error>> {
    let db = tree.open_reads(cached_options(&tree.spec.options, v, cache, elastic_budget), spec.direct_io)?;
    let r = measure(&db, tree.spec.num, tree.spec.key_size, spec)?;
    db.close()?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prop_sizes_the_first_module_to_the_budget() {
        assert_eq!(prop_first_bits(10.0, 70.0), Some(7.0));
        assert_eq!(prop_first_bits(10.0, 1.0), Some(0.5));
        assert_eq!(prop_first_bits(10.0, 100.0), None);
        assert_eq!(build_policy(Build::Prop, 10.0, false, 150.0).layout, FilterLayout::Whole);
    }

    #[test]
    fn a_budgeted_variant_splits_the_bytes_between_its_filters_and_the_cache() {
        let o = cached_options(&Options::default(), &BUDGETED[0], 1000, 700);
        assert_eq!((o.filter_memory_budget, o.cache_capacity), (Some(700), 300));
        let o = cached_options(&Options::default(), &ALL[0], 1000, 700);
        assert_eq!((o.filter_memory_budget, o.cache_capacity), (None, 1000));
        // Elastic's enabled units live outside the block cache: the same bytes, not more.
        let elastic = ALL.iter().find(|v| v.probe == Probe::Elastic).expect("an Elastic variant");
        let o = cached_options(&Options::default(), elastic, 1000, 700);
        assert_eq!((o.filter_memory_budget, o.cache_capacity), (None, 300));
        assert!(matches!(o.probe_policy, ProbePolicy::Elastic(ElasticPolicy { budget_bytes: 700, .. })));
    }

    #[test]
    fn partitioned_modules_fill_at_least_a_page() {
        assert_eq!(feasible_partition_size(Build::PartitionedWhole, 10.0, 10.0), PAGE_BYTES);
        assert_eq!(feasible_partition_size(Build::PartitionedEq(2), 10.0, 10.0), 2 * PAGE_BYTES);
        // Prop at 10%: a 1 bit/key first module of 10 needs ten pages of partition.
        assert_eq!(feasible_partition_size(Build::PartitionedRibbonProp, 10.0, 10.0), 10 * PAGE_BYTES);
        assert_eq!(feasible_partition_size(Build::PartitionedRibbonProp, 10.0, 150.0), PAGE_BYTES);
        for v in ALL {
            let o = build_options(&Options::default(), v.build, 10.0, false, 25.0);
            o.validate().unwrap();
            if v.build.partitioned() {
                let modules = match o.filter_policy.layout {
                    FilterLayout::Modules(ModuleSizes::Equal { count }) => count as usize,
                    _ => 1,
                };
                assert!(o.metadata_partition_size >= modules * PAGE_BYTES, "{}", v.name);
            }
        }
    }

    #[test]
    fn every_variant_builds_a_valid_policy() {
        for v in ALL.iter().chain(&BUDGETED) {
            for pct in [10.0, 40.0, 150.0] {
                build_policy(v.build, 10.0, false, pct).validate().unwrap();
                probe_policy(v, 1 << 20).validate().unwrap();
            }
        }
    }
}
