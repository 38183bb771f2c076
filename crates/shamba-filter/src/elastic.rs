//! Elastic filter units (ElasticBF, seed 003).
//!
//! U independent units of `b / U` bits per key each, every unit a Bloom filter over all the
//! table's keys, stored as its own part with role [`Role::Unit`]. Unlike modules, *any*
//! subset of units may be probed in any order: the filter manager enables more units for
//! hot tables and fewer for cold ones under a memory budget. All units take their positions
//! from the one digest (standard layout: consecutive slices of one rotation / double-hashing
//! index sequence, as in seed 000 section 4.2; blocked layout: the digest remixed by the
//! unit number), so enabling a unit costs no hashing.
//!
//! **Analytic FP rate** ("separability"): the units are independent, so with a set `E` of
//! enabled units `FPR = Π_(u in E) f_u`, where `f_u` is the unit's own Bloom FPR
//! (`≈ 0.6185^(b/U)` at optimal `k`); with all U enabled this is `≈ 0.6185^b`, a single
//! filter of `b` bits per key.

#![deny(clippy::indexing_slicing)]

use super::digest::Digest;
use super::format::Role;
use super::modular_bloom::{module_fprs, module_plan, BloomLayout, ModularBloomBuilder, ModuleParams, ModuleSizes};

/// The units of a filter of `bits_per_key` split into `units` equal units.
pub fn unit_plan(num_keys: u64, bits_per_key: f64, units: u8, layout: BloomLayout) -> Vec<ModuleParams> {
    module_plan(num_keys, bits_per_key, ModuleSizes::Equal { count: units }, layout)
}

/// Build and serialize the units (role [`Role::Unit`]).
pub fn build_units(digests: &[Digest], plan: &[ModuleParams], layout: BloomLayout, digest_version: u8) -> Vec<Vec<u8>> {
    let mut b = ModularBloomBuilder::new(plan, layout);
    b.add_all(digests);
    b.finish(Role::Unit, digest_version)
}

/// Analytic FP rate with the units in `enabled` probed.
pub fn enabled_units_fpr(plan: &[ModuleParams], num_keys: u64, layout: BloomLayout, enabled: &[usize]) -> f64 {
    let fprs = module_fprs(plan, num_keys, layout);
    enabled.iter().map(|&u| fprs.get(u).copied().unwrap_or(1.0)).product()
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::bloom_standard::Probing;
    use crate::testing::{digests, fpr_of, within};
    use crate::FilterPart;

    #[test]
    fn any_subset_of_units_has_no_false_negatives_and_the_product_fpr() {
        let n = 20_000;
        for layout in [BloomLayout::Standard(Probing::DoubleHashing), BloomLayout::Blocked] {
            let plan = unit_plan(n, 12.0, 4, layout);
            let keys = digests(4, n);
            let bytes = build_units(&keys, &plan, layout, 1);
            let units: Vec<FilterPart<'_>> = bytes.iter().map(|b| FilterPart::parse(b).unwrap()).collect();
            assert!(units.iter().all(|u| u.role() == Role::Unit));
            for subset in [vec![2usize], vec![0, 3], vec![3, 1, 2]] {
                let probe = |d: &Digest| subset.iter().all(|&u| units[u].may_contain(d));
                assert!(keys.iter().all(probe));
                let measured = fpr_of(probe, 300_000);
                let expected = enabled_units_fpr(&plan, n, layout, &subset);
                assert!(within(measured, expected, 0.10), "{layout:?} {subset:?}: {measured} vs {expected}");
            }
        }
    }
}
