//! Monkey allocation (Dayan et al., SIGMOD 2017): bits per key per level that minimise the
//! sum of the levels' FP rates (the expected wasted reads of an empty lookup that probes one
//! filter per level) for a fixed total filter memory.
//!
//! Model: level `i` holds `N_i` keys and its filter kind costs `bits(f) = -ln(f) / a` bits
//! per key for FP rate `f`, with `a = (ln 2)^2` for Bloom and `a = ln 2 / 1.045` for Ribbon
//! (4.5% slot overhead). Minimising `Σ f_i` subject to `Σ N_i bits_i(f_i) = M` with a
//! Lagrange multiplier gives `f_i = min(1, λ N_i / a_i)`: FP rates proportional to level
//! sizes, so small (shallow) levels get more bits per key. `λ` is found by bisection.
//! A level whose optimal rate is 1 gets no filter.

/// Ribbon's slots per key (kOneIn20 configuration around 1M keys).
pub const RIBBON_SLOT_OVERHEAD: f64 = 1.045;

/// The filter family a level uses (it sets the memory cost model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostModel {
    /// Bloom: `f = e^(-b (ln 2)^2)`.
    Bloom,
    /// Ribbon: `f = 2^(-b / 1.045)`.
    Ribbon,
}

impl CostModel {
    fn a(self) -> f64 {
        match self {
            CostModel::Bloom => std::f64::consts::LN_2 * std::f64::consts::LN_2,
            CostModel::Ribbon => std::f64::consts::LN_2 / RIBBON_SLOT_OVERHEAD,
        }
    }

    /// Bits per key for FP rate `f` under this model.
    pub fn bits_for_fpr(self, f: f64) -> f64 {
        if f >= 1.0 {
            0.0
        } else {
            -f.max(1e-300).ln() / self.a()
        }
    }

    /// FP rate at `bits` bits per key under this model.
    pub fn fpr_for_bits(self, bits: f64) -> f64 {
        (-bits.max(0.0) * self.a()).exp()
    }
}

/// Most bits per key Monkey gives a level.
pub const MAX_BITS_PER_KEY: f64 = 40.0;

/// Entries per level of the settled tree that `current` (entries per level now) grows
/// into, for Monkey's allocation: the tree's entries spread geometrically with ratio `T`
/// down to the deepest level (the deepest non-empty one, or `output_level` if deeper),
/// which holds `(T - 1) / T` of them; deeper levels hold none.
///
/// Why not `current`: a file's bits are fixed when it is written, and mid-load the levels
/// are anything but settled (the deepest level being written is nearly empty, so Monkey
/// would give its files the most bits). Measured before this (`exp monkey`): every level
/// got 9.48 bits/key against an analytic optimum of 13.05 / 9.69 / 9.70.
pub fn settled_level_entries(current: &[u64], output_level: usize, size_ratio: u32) -> Vec<u64> {
    let total: u64 = current.iter().sum();
    let deepest = current.iter().rposition(|&e| e > 0).unwrap_or(0).max(output_level);
    let t = f64::from(size_ratio.max(2));
    let bottom = total as f64 * (t - 1.0) / t;
    (0..current.len().max(deepest + 1))
        .map(|l| if l > deepest { 0 } else { (bottom / t.powi((deepest - l) as i32)).round() as u64 })
        .collect()
}

/// Per-level FP rates minimising their sum for `total_bits` of filter memory.
/// `entries[i]` keys in level `i` (0 is treated as 1), `models[i]` its cost model.
pub fn monkey_fp_rates(entries: &[u64], models: &[CostModel], total_bits: f64) -> Vec<f64> {
    let n: Vec<f64> = entries.iter().map(|&e| e.max(1) as f64).collect();
    let rates = |ln_lambda: f64| -> Vec<f64> {
        n.iter()
            .zip(models)
            .map(|(&ni, m)| {
                let f = (ln_lambda + ni.ln() - m.a().ln()).exp().min(1.0);
                f.max(m.fpr_for_bits(MAX_BITS_PER_KEY))
            })
            .collect()
    };
    let memory =
        |f: &[f64]| -> f64 { f.iter().zip(&n).zip(models).map(|((&fi, &ni), m)| ni * m.bits_for_fpr(fi)).sum() };
    // Memory falls as λ grows; bisect ln λ.
    let (mut lo, mut hi) = (-800.0f64, 50.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if memory(&rates(mid)) > total_bits {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    rates(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monkey_uses_the_budget_and_beats_uniform() {
        let entries = [1_000u64, 10_000, 100_000, 1_000_000];
        let models = [CostModel::Bloom; 4];
        let total: f64 = entries.iter().map(|&e| e as f64 * 10.0).sum();
        let f = monkey_fp_rates(&entries, &models, total);
        let used: f64 = f.iter().zip(&entries).map(|(&fi, &e)| e as f64 * CostModel::Bloom.bits_for_fpr(fi)).sum();
        assert!((used - total).abs() / total < 1e-6, "{used} vs {total}");
        let uniform = 4.0 * CostModel::Bloom.fpr_for_bits(10.0);
        let monkey: f64 = f.iter().sum();
        assert!(monkey < uniform, "{monkey} vs {uniform}");
        // Rates are proportional to level sizes.
        assert!((f[3] / f[2] - 10.0).abs() < 1e-6);
    }

    #[test]
    fn settled_levels_are_geometric_down_to_the_deepest() {
        // Mid-load: L1 full, L3 just started.
        let w = settled_level_entries(&[0, 100_000, 900_000, 1_000], 3, 10);
        assert_eq!(w, vec![901, 9_009, 90_090, 900_900]);
        // Writing a new deepest level counts it.
        assert_eq!(settled_level_entries(&[0, 1_000, 0], 2, 4), vec![47, 188, 750]);
        // An empty tree: nothing to weigh.
        assert!(settled_level_entries(&[0, 0, 0], 0, 10).iter().all(|&e| e == 0));
    }

    #[test]
    fn tiny_budgets_drop_filters_of_the_largest_levels_first() {
        let entries = [1_000u64, 1_000_000];
        let f = monkey_fp_rates(&entries, &[CostModel::Bloom; 2], 1_000.0 * 8.0);
        assert_eq!(f[1], 1.0);
        assert!(f[0] < 1.0);
    }
}
