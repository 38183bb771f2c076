//! Build policy: which filter each level's tables get.
//!
//! Per level: the filter family (blocked Bloom above `ribbon_from_level`, Ribbon from it
//! on), the bits per key (uniform, or Monkey-allocated for the same total memory given the
//! entries per level) and the layout (one part, modules or elastic units).

use super::bloom_blocked::BlockedBloomParams;
use super::bloom_standard::Probing;
use super::modular_bloom::{BloomLayout, ModuleSizes};
use super::monkey::{monkey_fp_rates, CostModel};

/// The filter of one table, as the build policy chose it.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterSpec {
    /// No filter.
    None,
    /// Cache-line-blocked Bloom filter (the engine default).
    Bloom {
        /// Bits per key (fractional allowed).
        bits_per_key: f64,
    },
    /// Standard (non-blocked) Bloom filter, as in the seeds' experiments.
    StandardBloom {
        /// Bits per key.
        bits_per_key: f64,
        /// How the probe indices come from the digest.
        probing: Probing,
    },
    /// Modular Bloom filter: one part per module, probed in order (SHaMBa).
    ModularBloom {
        /// Bits per key of all modules together.
        bits_per_key: f64,
        /// How memory is split over modules.
        modules: ModuleSizes,
        /// Blocked or standard modules.
        layout: BloomLayout,
    },
    /// Elastic filter units: one part per unit, any subset probed (ElasticBF).
    Elastic {
        /// Bits per key of all units together.
        bits_per_key: f64,
        /// Number of units.
        units: u8,
        /// Blocked or standard units.
        layout: BloomLayout,
    },
    /// Ribbon filter, one part.
    Ribbon {
        /// Target FP rate.
        fp_rate: f64,
    },
    /// Modular Ribbon: result columns split into parts probed in order.
    ModularRibbon {
        /// Target FP rate of all modules together.
        fp_rate: f64,
        /// How the columns are split over modules (bits/key of a proportional first
        /// module are memory bits).
        modules: ModuleSizes,
    },
}

/// The FP rate a blocked Bloom filter has at `bits_per_key` (analytic): the target of a
/// "Bloom-equivalent" Ribbon.
pub fn bloom_equivalent_fp_rate(bits_per_key: f64) -> f64 {
    BlockedBloomParams::for_keys(1_000_000, bits_per_key).expected_fpr()
}

/// `x > 0`, false for NaN: a size or rate that asks for a filter.
pub(crate) fn is_positive(x: f64) -> bool {
    x > 0.0
}

impl FilterSpec {
    /// A Ribbon filter with the FP rate of a blocked Bloom filter at `bits_per_key`
    /// (RocksDB's `NewRibbonFilterPolicy(bloom_equivalent_bits_per_key)`).
    pub fn ribbon_bloom_equivalent(bits_per_key: f64) -> FilterSpec {
        FilterSpec::Ribbon { fp_rate: bloom_equivalent_fp_rate(bits_per_key) }
    }

    /// Short name of the kind.
    pub fn name(&self) -> &'static str {
        match self {
            FilterSpec::None => "none",
            FilterSpec::Bloom { .. } => "bloom",
            FilterSpec::StandardBloom { .. } => "standard-bloom",
            FilterSpec::ModularBloom { .. } => "modular-bloom",
            FilterSpec::Elastic { .. } => "elastic",
            FilterSpec::Ribbon { .. } => "ribbon",
            FilterSpec::ModularRibbon { .. } => "modular-ribbon",
        }
    }
}

/// How bits per key are spread over levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Allocation {
    /// The same bits per key (or Bloom-equivalent FP rate, on Ribbon levels) everywhere.
    #[default]
    Uniform,
    /// Monkey: the same total memory as `Uniform`, spread to minimise the sum of FP rates.
    Monkey,
}

/// How each table's filter is split into parts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FilterLayout {
    /// One part per table.
    #[default]
    Whole,
    /// Modules probed in order (modular Bloom, or modular Ribbon on Ribbon levels).
    Modules(ModuleSizes),
    /// Elastic units (on Ribbon levels: equal Ribbon modules, which may also be probed in
    /// any subset).
    Units {
        /// Number of units.
        count: u8,
    },
}

/// Per-level filter choice. `BuildPolicy::default()` is a 10 bits/key blocked Bloom filter
/// on every level.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildPolicy {
    /// Bits per key: for every level (uniform) or on average (Monkey). On Ribbon levels it
    /// is "Bloom-equivalent": the Ribbon gets the FP rate a blocked Bloom filter would have
    /// at these bits, in about 30% less memory. 0 = no filters.
    pub bits_per_key: f64,
    /// Levels from this one down get Ribbon filters; shallower levels get Bloom filters.
    pub ribbon_from_level: Option<usize>,
    /// Uniform or Monkey bits per key.
    pub allocation: Allocation,
    /// One part, modules or units.
    pub layout: FilterLayout,
    /// Blocked or standard bits for Bloom modules and units.
    pub bloom_layout: BloomLayout,
}

impl Default for BuildPolicy {
    fn default() -> Self {
        BuildPolicy {
            bits_per_key: 10.0,
            ribbon_from_level: None,
            allocation: Allocation::Uniform,
            layout: FilterLayout::Whole,
            bloom_layout: BloomLayout::Blocked,
        }
    }
}

impl BuildPolicy {
    /// Uniform blocked Bloom filters at `bits_per_key`.
    pub fn uniform(bits_per_key: f64) -> Self {
        BuildPolicy { bits_per_key, ..BuildPolicy::default() }
    }

    /// Check the policy's parameters; the message names the bad value.
    ///
    /// # Errors
    ///
    /// A message when `bits_per_key` is outside `0..=64`, a module or unit count is 0, or
    /// proportional modules' first module has more bits per key than the whole filter (or
    /// none).
    pub fn validate(&self) -> Result<(), String> {
        if !(self.bits_per_key >= 0.0 && self.bits_per_key <= 64.0) {
            return Err(format!("filter bits_per_key must be in 0..=64, got {}", self.bits_per_key));
        }
        let check_sizes = |sizes: &ModuleSizes| -> Result<(), String> {
            match *sizes {
                ModuleSizes::Equal { count: 0 } | ModuleSizes::Proportional { count: 0, .. } => {
                    Err("filter module count must be at least 1".to_string())
                }
                ModuleSizes::Proportional { first_bits_per_key, .. }
                    if !(first_bits_per_key > 0.0 && first_bits_per_key <= self.bits_per_key) =>
                {
                    Err(format!(
                        "filter first_bits_per_key must be in (0, bits_per_key = {}], got {first_bits_per_key}",
                        self.bits_per_key
                    ))
                }
                _ => Ok(()),
            }
        };
        match &self.layout {
            FilterLayout::Whole => {}
            FilterLayout::Modules(sizes) => check_sizes(sizes)?,
            FilterLayout::Units { count: 0 } => return Err("filter units count must be at least 1".to_string()),
            FilterLayout::Units { .. } => {}
        }
        Ok(())
    }

    /// Whether tables written to `level` get Ribbon filters (`ribbon_from_level` and below).
    pub fn is_ribbon_level(&self, level: usize) -> bool {
        self.ribbon_from_level.is_some_and(|from| level >= from)
    }

    fn model(&self, level: usize) -> CostModel {
        if self.is_ribbon_level(level) {
            CostModel::Ribbon
        } else {
            CostModel::Bloom
        }
    }

    /// The filter for a table written to `level`, given the entries per level of the tree
    /// (used by Monkey allocation; uniform when it is empty or has no entries).
    pub fn spec_for_level(&self, level: usize, entries_per_level: &[u64]) -> FilterSpec {
        if !is_positive(self.bits_per_key) {
            return FilterSpec::None;
        }
        let uniform_fp = bloom_equivalent_fp_rate(self.bits_per_key);
        let (bits, fp) = match self.allocation {
            Allocation::Monkey if level < entries_per_level.len() && entries_per_level.iter().any(|&e| e > 0) => {
                let models: Vec<CostModel> = (0..entries_per_level.len()).map(|l| self.model(l)).collect();
                // The same memory the uniform policy would use.
                let budget: f64 = entries_per_level
                    .iter()
                    .zip(&models)
                    .map(|(&n, m)| {
                        let bits = match m {
                            CostModel::Bloom => self.bits_per_key,
                            CostModel::Ribbon => m.bits_for_fpr(uniform_fp),
                        };
                        n.max(1) as f64 * bits
                    })
                    .sum();
                let rates = monkey_fp_rates(entries_per_level, &models, budget);
                let f = rates.get(level).copied().unwrap_or(uniform_fp);
                if f >= 1.0 {
                    return FilterSpec::None;
                }
                (CostModel::Bloom.bits_for_fpr(f), f)
            }
            _ => (self.bits_per_key, uniform_fp),
        };
        if self.is_ribbon_level(level) {
            match self.layout {
                FilterLayout::Whole => FilterSpec::Ribbon { fp_rate: fp },
                FilterLayout::Modules(modules) => FilterSpec::ModularRibbon { fp_rate: fp, modules },
                FilterLayout::Units { count } => {
                    FilterSpec::ModularRibbon { fp_rate: fp, modules: ModuleSizes::Equal { count } }
                }
            }
        } else {
            match self.layout {
                FilterLayout::Whole => FilterSpec::Bloom { bits_per_key: bits },
                FilterLayout::Modules(modules) => {
                    FilterSpec::ModularBloom { bits_per_key: bits, modules, layout: self.bloom_layout }
                }
                FilterLayout::Units { count } => {
                    FilterSpec::Elastic { bits_per_key: bits, units: count, layout: self.bloom_layout }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_ten_bits_blocked_bloom_everywhere() {
        let p = BuildPolicy::default();
        p.validate().unwrap();
        for level in 0..7 {
            assert_eq!(p.spec_for_level(level, &[]), FilterSpec::Bloom { bits_per_key: 10.0 });
        }
        assert_eq!(BuildPolicy::uniform(0.0).spec_for_level(0, &[]), FilterSpec::None);
    }

    #[test]
    fn bad_values_name_themselves() {
        assert!(BuildPolicy::uniform(-1.0).validate().unwrap_err().contains("bits_per_key"));
        assert!(BuildPolicy::uniform(f64::NAN).validate().unwrap_err().contains("bits_per_key"));
        let p = BuildPolicy {
            layout: FilterLayout::Modules(ModuleSizes::Proportional { count: 2, first_bits_per_key: 12.0 }),
            ..BuildPolicy::default()
        };
        assert!(p.validate().unwrap_err().contains("first_bits_per_key"));
        let p = BuildPolicy { layout: FilterLayout::Units { count: 0 }, ..BuildPolicy::default() };
        assert!(p.validate().unwrap_err().contains("units"));
    }

    #[test]
    fn ribbon_from_a_level_down_with_bloom_above() {
        let p = BuildPolicy { ribbon_from_level: Some(2), ..BuildPolicy::default() };
        assert!(matches!(p.spec_for_level(1, &[]), FilterSpec::Bloom { .. }));
        let FilterSpec::Ribbon { fp_rate } = p.spec_for_level(2, &[]) else { panic!() };
        assert!((fp_rate - bloom_equivalent_fp_rate(10.0)).abs() < 1e-12);
        let p = BuildPolicy { layout: FilterLayout::Units { count: 4 }, ..p };
        assert!(matches!(p.spec_for_level(0, &[]), FilterSpec::Elastic { units: 4, .. }));
        assert!(matches!(p.spec_for_level(3, &[]), FilterSpec::ModularRibbon { .. }));
    }

    #[test]
    fn monkey_gives_shallow_levels_more_bits() {
        let p = BuildPolicy { allocation: Allocation::Monkey, ..BuildPolicy::default() };
        let entries = [10_000u64, 100_000, 1_000_000, 10_000_000];
        let bits: Vec<f64> = (0..4)
            .map(|l| match p.spec_for_level(l, &entries) {
                FilterSpec::Bloom { bits_per_key } => bits_per_key,
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(bits.windows(2).all(|w| w[0] > w[1]), "{bits:?}");
        let used: f64 = bits.iter().zip(&entries).map(|(b, &n)| b * n as f64).sum();
        let budget: f64 = entries.iter().map(|&n| n as f64 * 10.0).sum();
        assert!((used - budget).abs() / budget < 1e-6);
    }
}
