//! Modular Bloom filter (MBF, seed 002 section 4).
//!
//! D modules, each a Bloom filter over *all* keys with its own size `m_d` and probe count
//! `k_d = (m_d / n) ln 2` (Eq. 4), serialized as separate parts so a table can cache, fetch
//! or skip them one by one. A lookup probes modules in order and stops at the first
//! negative; [`probe_modules`] also reports how many modules it consulted.
//!
//! Modules use either layout:
//! - **standard** (the paper's): module `d` uses indices `K_(d-1) .. K_d` of one shared
//!   rotation / double-hashing sequence (`K_d = k_1 + ... + k_d`), so an MBF probes exactly
//!   the indices of a single Bloom filter with `K_D` probes, spread over the modules;
//! - **blocked** (the engine's): module `d` is a blocked Bloom filter probed with the digest
//!   remixed by `d` ([`Digest::for_part`]), one cache line per module.
//!
//! **Analytic FP rate** (Eq. 2): `f_MBF = Π_d f_d` with `f_d` the module's own Bloom FPR
//! (standard or blocked formula); with optimal `k_d` it equals a single Bloom filter of the
//! same total size (Eq. 5). **Expected module accesses** of an empty query:
//! `1 + f_1 + f_1 f_2 + ... + f_1 ... f_(D-1)`.

#![deny(clippy::indexing_slicing)]

use super::bloom_blocked::{blocked_fpr, blocked_num_probes, BlockedBloomBuilder, BlockedBloomParams};
use super::bloom_standard::{standard_fpr, Probing, StandardBloomBuilder, StandardBloomParams, MAX_PROBES};
use super::digest::Digest;
use super::format::{FallbackReason, Role};

/// How the bits of each module are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BloomLayout {
    /// Cache-line-blocked modules (fast; the engine default).
    Blocked,
    /// One bit array per module, probes from a shared index sequence (the papers').
    Standard(Probing),
}

impl BloomLayout {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            BloomLayout::Blocked => "blocked",
            BloomLayout::Standard(Probing::Rotation) => "standard/rotation",
            BloomLayout::Standard(Probing::DoubleHashing) => "standard/double-hashing",
        }
    }
}

/// How a filter's memory is split into modules (or units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ModuleSizes {
    /// `count` modules of equal size (SHaMBa-eq).
    Equal {
        /// Number of modules, 1..=255.
        count: u8,
    },
    /// The first module sized to `first_bits_per_key`, the rest of the memory split equally
    /// over the other `count - 1` modules (SHaMBa-prop: the first modules fit in memory).
    Proportional {
        /// Number of modules, 1..=255.
        count: u8,
        /// Bits per key of the first module.
        first_bits_per_key: f64,
    },
}

impl ModuleSizes {
    /// Number of modules.
    pub fn count(&self) -> u8 {
        match *self {
            ModuleSizes::Equal { count } | ModuleSizes::Proportional { count, .. } => count.max(1),
        }
    }

    /// Bits per key of each module for a filter of `bits_per_key` in total.
    pub fn split(&self, bits_per_key: f64) -> Vec<f64> {
        let d = usize::from(self.count());
        match *self {
            ModuleSizes::Proportional { first_bits_per_key, .. } if d > 1 => {
                let first = first_bits_per_key.clamp(0.0, bits_per_key);
                let rest = (bits_per_key - first) / (d - 1) as f64;
                std::iter::once(first).chain(std::iter::repeat_n(rest, d - 1)).collect()
            }
            _ => vec![bits_per_key / d as f64; d],
        }
    }
}

/// The size and probe count of one module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuleParams {
    /// Bits of the module (rounded up to whole 512-bit blocks in the blocked layout).
    pub bits: u64,
    /// Probes per key in this module.
    pub probes: u32,
}

/// The modules for `num_keys` keys at `bits_per_key` in total, `k_d` chosen per module.
pub fn module_plan(num_keys: u64, bits_per_key: f64, sizes: ModuleSizes, layout: BloomLayout) -> Vec<ModuleParams> {
    let n = num_keys.max(1) as f64;
    sizes
        .split(bits_per_key)
        .into_iter()
        .map(|bpk| {
            let bpk = if bpk.is_finite() { bpk.max(0.1) } else { 1.0 };
            let probes = match layout {
                BloomLayout::Blocked => blocked_num_probes(bpk),
                BloomLayout::Standard(_) => ((bpk * std::f64::consts::LN_2).round() as u32).clamp(1, MAX_PROBES),
            };
            ModuleParams { bits: ((n * bpk).ceil() as u64).max(64), probes }
        })
        .collect()
}

/// A modular Bloom filter being built: one builder per module.
#[derive(Debug, Clone)]
pub enum ModuleBuilder {
    /// Blocked module.
    Blocked(BlockedBloomBuilder),
    /// Standard module.
    Standard(StandardBloomBuilder),
}

impl ModuleBuilder {
    /// Add one key.
    #[inline]
    pub fn add(&mut self, digest: &Digest) {
        match self {
            ModuleBuilder::Blocked(b) => b.add(digest),
            ModuleBuilder::Standard(b) => b.add(digest),
        }
    }

    fn finish(&self, role: Role, count: u8, digest_version: u8, fallback: FallbackReason) -> Vec<u8> {
        match self {
            ModuleBuilder::Blocked(b) => b.finish(role, count, digest_version, fallback),
            ModuleBuilder::Standard(b) => b.finish(role, count, digest_version, fallback),
        }
    }

    /// Probe the module being built (experiments probe without serializing).
    pub fn may_contain(&self, digest: &Digest) -> bool {
        match self {
            ModuleBuilder::Blocked(b) => b.may_contain(digest),
            ModuleBuilder::Standard(b) => b.may_contain(digest),
        }
    }

    /// Analytic FP rate of this module.
    pub fn expected_fpr(&self) -> f64 {
        match self {
            ModuleBuilder::Blocked(b) => b.params().expected_fpr(),
            ModuleBuilder::Standard(b) => b.params().expected_fpr(),
        }
    }
}

/// The modules of one filter.
#[derive(Debug, Clone)]
pub struct ModularBloomBuilder {
    modules: Vec<ModuleBuilder>,
}

impl ModularBloomBuilder {
    /// Empty modules as planned (at most 255).
    pub fn new(plan: &[ModuleParams], layout: BloomLayout) -> Self {
        let mut offset = 0u32;
        let modules = plan
            .iter()
            .take(usize::from(u8::MAX))
            .enumerate()
            .map(|(d, m)| {
                let part = d as u8;
                let b = match layout {
                    BloomLayout::Blocked => {
                        let params = BlockedBloomParams {
                            num_blocks: m.bits.div_ceil(512).clamp(1, u64::from(u32::MAX)) as u32,
                            num_probes: m.probes,
                            num_keys: 0,
                        };
                        ModuleBuilder::Blocked(BlockedBloomBuilder::new(params, part))
                    }
                    BloomLayout::Standard(probing) => {
                        let params = StandardBloomParams {
                            num_bits: m.bits,
                            num_probes: m.probes,
                            probe_offset: offset,
                            probing,
                            num_keys: 0,
                        };
                        ModuleBuilder::Standard(StandardBloomBuilder::new(params, part))
                    }
                };
                offset = offset.saturating_add(m.probes);
                b
            })
            .collect();
        ModularBloomBuilder { modules }
    }

    /// Add one key to every module.
    pub fn add(&mut self, digest: &Digest) {
        for m in &mut self.modules {
            m.add(digest);
        }
    }

    /// Add many keys (module by module, which keeps each module's bits in cache).
    pub fn add_all(&mut self, digests: &[Digest]) {
        for m in &mut self.modules {
            for d in digests {
                m.add(d);
            }
        }
    }

    /// The modules.
    pub fn modules(&self) -> &[ModuleBuilder] {
        &self.modules
    }

    /// Serialize each module as its own part with the given role.
    pub fn finish(&self, role: Role, digest_version: u8) -> Vec<Vec<u8>> {
        self.finish_with_fallback(role, digest_version, FallbackReason::None)
    }

    /// Serialize, recording in every part why this filter replaced a requested Ribbon.
    pub fn finish_with_fallback(&self, role: Role, digest_version: u8, fallback: FallbackReason) -> Vec<Vec<u8>> {
        let count = self.modules.len() as u8;
        self.modules.iter().map(|m| m.finish(role, count, digest_version, fallback)).collect()
    }
}

/// Probe parts in order, stopping at the first negative. Returns whether the key may be
/// present and how many parts were consulted.
pub fn probe_modules<'p, P>(parts: &'p [P], mut probe: impl FnMut(&'p P) -> bool) -> (bool, usize) {
    for (i, p) in parts.iter().enumerate() {
        if !probe(p) {
            return (false, i + 1);
        }
    }
    (true, parts.len())
}

/// Analytic FP rate of an MBF (Eq. 2): the product of the module rates.
pub fn modular_fpr(plan: &[ModuleParams], num_keys: u64, layout: BloomLayout) -> f64 {
    module_fprs(plan, num_keys, layout).iter().product()
}

/// Each module's analytic FP rate.
pub fn module_fprs(plan: &[ModuleParams], num_keys: u64, layout: BloomLayout) -> Vec<f64> {
    plan.iter()
        .map(|m| match layout {
            BloomLayout::Blocked => {
                let blocks = m.bits.div_ceil(512).max(1);
                blocked_fpr(num_keys as f64 / blocks as f64, m.probes)
            }
            BloomLayout::Standard(_) => standard_fpr(m.bits, m.probes, num_keys),
        })
        .collect()
}

/// Expected modules consulted by an empty query: `1 + f_1 + f_1 f_2 + ...`.
pub fn expected_module_accesses(module_fprs: &[f64]) -> f64 {
    let mut reach = 1.0;
    let mut total = 0.0;
    for f in module_fprs {
        total += reach;
        reach *= f;
    }
    total
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::testing::{digest_at, digests, within};
    use crate::FilterPart;

    #[test]
    fn equal_and_proportional_splits_keep_the_total() {
        let eq = ModuleSizes::Equal { count: 3 }.split(9.0);
        assert_eq!(eq, vec![3.0, 3.0, 3.0]);
        let prop = ModuleSizes::Proportional { count: 2, first_bits_per_key: 7.0 }.split(10.0);
        assert_eq!(prop, vec![7.0, 3.0]);
    }

    #[test]
    fn modules_probed_in_order_match_the_product_formula_and_access_count() {
        let n = 50_000;
        for layout in [BloomLayout::Standard(Probing::Rotation), BloomLayout::Blocked] {
            let plan = module_plan(n, 10.0, ModuleSizes::Equal { count: 2 }, layout);
            let mut b = ModularBloomBuilder::new(&plan, layout);
            b.add_all(&digests(3, n));
            let bytes = b.finish(Role::Module, 1);
            let parts: Vec<FilterPart<'_>> = bytes.iter().map(|p| FilterPart::parse(p).unwrap()).collect();
            assert!(digests(3, n).iter().all(|d| probe_modules(&parts, |p| p.may_contain(d)).0));
            let queries = 1_000_000u64;
            let (mut fp, mut accesses) = (0u64, 0usize);
            for i in 0..queries {
                let d = digest_at(999, i);
                let (maybe, used) = probe_modules(&parts, |p| p.may_contain(&d));
                fp += u64::from(maybe);
                accesses += used;
            }
            let fprs = module_fprs(&plan, n, layout);
            let expected = modular_fpr(&plan, n, layout);
            let measured = fp as f64 / queries as f64;
            assert!(within(measured, expected, 0.10), "{layout:?}: {measured} vs {expected}");
            let acc = accesses as f64 / queries as f64;
            assert!(within(acc, expected_module_accesses(&fprs), 0.02), "{layout:?}: accesses {acc}");
        }
    }
}
