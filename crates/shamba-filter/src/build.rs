//! From a [`FilterSpec`] and a table's key digests to serialized parts.

use super::bloom_blocked::{blocked_fpr, BlockedBloomBuilder, BlockedBloomParams};
use super::bloom_standard::{StandardBloomBuilder, StandardBloomParams};
use super::digest::{Digest, DIGEST_VERSION};
use super::elastic::{build_units, unit_plan};
use super::format::{FallbackReason, Role};
use super::modular_bloom::{module_plan, BloomLayout, ModularBloomBuilder, ModuleSizes};
use super::modular_ribbon::module_columns;
use super::policy::{is_positive, FilterSpec};
use super::ribbon::config::num_slots_for;
use super::ribbon::{build_ribbon, columns_for_fp_rate};

/// Build the serialized parts of a filter over `digests` (duplicates allowed): one part for
/// a whole filter, one per module or unit otherwise. An empty vector means "no filter"
/// (every probe is a maybe). Never panics: a Ribbon that cannot be built becomes a blocked
/// Bloom filter of the same FP rate whose header records why.
pub fn build_filter_parts(spec: &FilterSpec, digests: &[Digest]) -> Vec<Vec<u8>> {
    build_filter_parts_with_version(spec, digests, DIGEST_VERSION)
}

/// [`build_filter_parts`] for digests of another hash function (experiments), recording
/// `digest_version` in every part.
pub fn build_filter_parts_with_version(spec: &FilterSpec, digests: &[Digest], digest_version: u8) -> Vec<Vec<u8>> {
    let n = digests.len() as u64;
    match *spec {
        FilterSpec::None => Vec::new(),
        FilterSpec::Bloom { bits_per_key } => {
            if !is_positive(bits_per_key) {
                return Vec::new();
            }
            vec![blocked_whole(digests, bits_per_key, digest_version, FallbackReason::None)]
        }
        FilterSpec::StandardBloom { bits_per_key, probing } => {
            if !is_positive(bits_per_key) {
                return Vec::new();
            }
            let mut b = StandardBloomBuilder::new(StandardBloomParams::for_keys(n, bits_per_key, probing), 0);
            b.add_all(digests);
            vec![b.finish(Role::Whole, 1, digest_version, FallbackReason::None)]
        }
        FilterSpec::ModularBloom { bits_per_key, modules, layout } => {
            if !is_positive(bits_per_key) {
                return Vec::new();
            }
            let plan = module_plan(n, bits_per_key, modules, layout);
            let mut b = ModularBloomBuilder::new(&plan, layout);
            b.add_all(digests);
            b.finish(Role::Module, digest_version)
        }
        FilterSpec::Elastic { bits_per_key, units, layout } => {
            if !is_positive(bits_per_key) {
                return Vec::new();
            }
            build_units(digests, &unit_plan(n, bits_per_key, units.max(1), layout), layout, digest_version)
        }
        FilterSpec::Ribbon { fp_rate } => ribbon_or_bloom(digests, fp_rate, None, digest_version),
        FilterSpec::ModularRibbon { fp_rate, modules } => {
            ribbon_or_bloom(digests, fp_rate, Some(modules), digest_version)
        }
    }
}

fn blocked_whole(digests: &[Digest], bits_per_key: f64, digest_version: u8, fallback: FallbackReason) -> Vec<u8> {
    let mut b = BlockedBloomBuilder::new(BlockedBloomParams::for_keys(digests.len() as u64, bits_per_key), 0);
    b.add_all(digests);
    b.finish(Role::Whole, 1, digest_version, fallback)
}

fn ribbon_or_bloom(digests: &[Digest], fp_rate: f64, modules: Option<ModuleSizes>, digest_version: u8) -> Vec<Vec<u8>> {
    if fp_rate >= 1.0 {
        return Vec::new();
    }
    let n = digests.len() as u64;
    let result = match columns_for_fp_rate(fp_rate) {
        None => Err(FallbackReason::RibbonUnsupportedRate),
        Some(total) => {
            let columns = match modules {
                None => vec![total],
                Some(sizes) => {
                    let keys_per_slot = num_slots_for(n).map_or(0.96, |s| n.max(1) as f64 / s as f64);
                    module_columns(total, sizes, keys_per_slot)
                }
            };
            build_ribbon(digests, &columns)
        }
    };
    match result {
        Ok(r) => r.finish(if modules.is_some() { Role::Module } else { Role::Whole }, digest_version),
        Err(reason) => {
            let bits = bloom_bits_for_fp_rate(fp_rate);
            match modules {
                None => vec![blocked_whole(digests, bits, digest_version, reason)],
                Some(sizes) => {
                    let plan = module_plan(n, bits, sizes, BloomLayout::Blocked);
                    let mut b = ModularBloomBuilder::new(&plan, BloomLayout::Blocked);
                    b.add_all(digests);
                    b.finish_with_fallback(Role::Module, digest_version, reason)
                }
            }
        }
    }
}

/// Bits per key a blocked Bloom filter needs for `fp_rate` (bisection on the analytic
/// formula; 0.5..=64).
pub fn bloom_bits_for_fp_rate(fp_rate: f64) -> f64 {
    let fpr_at = |b: f64| {
        let p = BlockedBloomParams::for_keys(1 << 20, b);
        blocked_fpr(512.0 / b, p.num_probes)
    };
    if !is_positive(fp_rate) {
        return 64.0;
    }
    let (mut lo, mut hi) = (0.5f64, 64.0f64);
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if fpr_at(mid) > fp_rate {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}
