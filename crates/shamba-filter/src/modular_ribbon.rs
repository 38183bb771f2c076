//! Modular Ribbon: one Ribbon solution whose result columns are split into modules, each
//! stored as its own part and probeable alone.
//!
//! A Ribbon filter with `r` result columns checks `r` independent fingerprint bits per key.
//! Splitting the columns into modules (module `d` stores columns `o_d .. o_d + r_d` of the
//! same solution, with the same start slots and coefficients) gives D filters over all keys
//! whose fingerprint bits are disjoint, hence independent: exactly the property SHaMBa's
//! modular Bloom filters have, at Ribbon's memory cost. A table can cache the first module
//! at high priority and skip or evict the others one by one; a probe of module `d` reads
//! only module `d`'s bytes.
//!
//! Only the last module has a fractional column count, so the analytic FP rate of the
//! modules used is exactly the product of their rates: `Π_d 2^-r_d` (the last one's rate
//! being the layout's mixture of `2^-floor` and `2^-ceil`).

#![deny(clippy::indexing_slicing)]

use super::modular_bloom::ModuleSizes;

/// Split `total_columns` (fractional) into modules: every module gets at least one column;
/// all but the last get whole columns; the last takes the (fractional) rest. When the
/// modules need more columns than `total_columns`, the filter is a little more accurate
/// (and larger) than asked.
///
/// `columns_per_bit_per_key` converts the first module's bits/key of
/// [`ModuleSizes::Proportional`] into columns (it is `keys / slots`, about 0.96).
pub fn module_columns(total_columns: f64, sizes: ModuleSizes, columns_per_bit_per_key: f64) -> Vec<f64> {
    let d = usize::from(sizes.count());
    if d <= 1 {
        return vec![total_columns];
    }
    match sizes {
        ModuleSizes::Equal { .. } => split_rest(total_columns, d),
        ModuleSizes::Proportional { first_bits_per_key, .. } => {
            let first = (first_bits_per_key * columns_per_bit_per_key).round().clamp(1.0, total_columns.max(1.0));
            let mut out = vec![first];
            out.extend(split_rest(total_columns - first, d - 1));
            out
        }
    }
}

fn split_rest(columns: f64, modules: usize) -> Vec<f64> {
    let base = (columns / modules as f64).floor().max(1.0);
    let mut out = vec![base; modules];
    if let Some(last) = out.last_mut() {
        *last = (columns - base * (modules - 1) as f64).max(1.0);
    }
    out
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::format::{self, Role};
    use crate::modular_bloom::probe_modules;
    use crate::ribbon::{build_ribbon, RibbonRef};
    use crate::testing::{digest_at, digests, within};

    #[test]
    fn splits_keep_the_total_with_one_fractional_module() {
        assert_eq!(module_columns(6.64, ModuleSizes::Equal { count: 1 }, 0.96), vec![6.64]);
        let two = module_columns(6.64, ModuleSizes::Equal { count: 2 }, 0.96);
        assert_eq!(two[0], 3.0);
        assert!((two[1] - 3.64).abs() < 1e-9);
        let seven = module_columns(6.64, ModuleSizes::Equal { count: 7 }, 0.96);
        assert_eq!(seven.len(), 7);
        assert!(seven.iter().all(|&c| c >= 0.6));
        let prop = module_columns(9.0, ModuleSizes::Proportional { count: 2, first_bits_per_key: 7.3 }, 0.96);
        assert_eq!(prop, vec![7.0, 2.0]);
    }

    #[test]
    fn each_module_alone_and_all_together_match_the_product_formula() {
        let n = 40_000;
        let keys = digests(8, n);
        let cols = module_columns(7.5, ModuleSizes::Equal { count: 3 }, 0.96);
        let b = build_ribbon(&keys, &cols).unwrap();
        let bytes = b.finish(Role::Module, 1);
        let raws: Vec<_> = bytes.iter().map(|p| format::decode(p).unwrap()).collect();
        let mods: Vec<RibbonRef<'_>> = raws.iter().map(|r| RibbonRef::parse(r).unwrap()).collect();
        for d in &keys {
            assert!(mods.iter().all(|m| m.may_contain(d)));
        }
        let queries = 600_000u64;
        let mut alone = vec![0u64; mods.len()];
        let mut all = 0u64;
        for i in 0..queries {
            let q = digest_at(999, i);
            for (m, c) in mods.iter().zip(alone.iter_mut()) {
                *c += u64::from(m.may_contain(&q));
            }
            all += u64::from(probe_modules(&mods, |m| m.may_contain(&q)).0);
        }
        for (m, c) in mods.iter().zip(&alone) {
            let measured = *c as f64 / queries as f64;
            assert!(within(measured, m.layout().expected_fpr(), 0.10), "module {measured}");
        }
        let measured = all as f64 / queries as f64;
        assert!(within(measured, b.expected_fpr(), 0.10), "all {measured} vs {}", b.expected_fpr());
    }
}
