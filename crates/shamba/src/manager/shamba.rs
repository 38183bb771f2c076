//! SHaMBa's module skipping (seed 002, Eq. 8-9 and Algorithm 1).
//!
//! With `d` modules probed, a table costs `expIO_d = beta (alpha + (1 - alpha) F_d)` data
//! reads per lookup, where `F_d` is the FP rate of the first `d` modules together (the
//! product of their rates). Module `d`'s utility is what it saves:
//! `u_d = expIO_(d-1) - expIO_d = beta (1 - alpha) F_(d-1) (1 - f_d)`.
//! A module whose utility is under its threshold is not worth fetching: the lookup goes to
//! the data (or probes only the modules before it).
//!
//! Beyond the seed: a module already resident (pinned or in the block cache) costs no read,
//! so it is never skipped, whatever its utility. Skipping exists to avoid fetching (and
//! caching) modules that do not pay for their read; with this rule a cache large enough to
//! hold every filter behaves exactly like `Plain`, and under pressure only the modules that
//! would cost a read are weighed.

use super::estimate::Estimate;
use crate::options::{ShambaPolicy, Skipping};
use crate::table::ProbePlan;

/// Utility of module `d` (1-based) given the modules' FP rates.
pub(super) fn utility(e: &Estimate, fprs: &[f64], d: usize) -> f64 {
    let before: f64 = fprs.iter().take(d.saturating_sub(1)).product();
    let f = fprs.get(d.wrapping_sub(1)).copied().unwrap_or(1.0);
    e.beta * (1.0 - e.alpha) * before * (1.0 - f)
}

/// Whether the key is more likely present than absent when a lookup reaches module `d`
/// (1-based): every module before it said maybe, so an absent key got this far with
/// probability `F_(d-1)`, the product of their FP rates, and a present one always.
pub(super) fn hit_more_likely(e: &Estimate, fprs: &[f64], d: usize) -> bool {
    let before: f64 = fprs.iter().take(d.saturating_sub(1)).product();
    (1.0 - e.alpha) * before < e.alpha
}

/// How many leading modules to probe (Algorithm 1, or the hit-odds rule); `resident(d)`
/// says whether module `d` (1-based) would be probed without a device read.
pub(super) fn plan(
    p: &ShambaPolicy,
    e: &Estimate,
    fprs: &[f64],
    resident: impl Fn(usize) -> bool,
) -> ProbePlan<'static> {
    let mut probe = 0;
    for d in 1..=fprs.len() {
        let below = match (p.skipping, d) {
            (Skipping::None, _) | (Skipping::Partial, 1) => false,
            (Skipping::HitOdds, _) => hit_more_likely(e, fprs, d),
            (Skipping::Full, 1) => utility(e, fprs, d) < p.full_threshold,
            (_, _) => utility(e, fprs, d) < p.partial_threshold,
        };
        let skip = below && !resident(d);
        if skip {
            break;
        }
        probe = d;
    }
    ProbePlan::first(probe)
}

/// Odds that a probe goes past the parts it read together and must read again. One more
/// part in the read costs its bytes and saves a whole later read with the odds the parts
/// before it leave; where a read costs about what 64 parts take to transfer (one-bit parts
/// of a partition against a device's per-read latency), parts are worth adding until those
/// odds fall to 1/64. Reading the rest of the filter instead spends a partition's bytes to
/// save the last few per cent of reads.
const READ_AGAIN_ODDS: f64 = 1.0 / 64.0;

/// How many parts a probe that must read part `from` (0-based) reads with one read. A key
/// the table holds passes every part, so the probe goes on past a span with the odds that
/// the key is present (given that it passed the parts before `from`) plus the odds that
/// it is absent and passed the span; the span grows until those are at most
/// [`READ_AGAIN_ODDS`] (an all-empty table of one-column Ribbon parts, FP 1/2 each: six
/// parts). A table whose keys are found too often for that, or rates that are unknown or
/// never get there: the rest of the filter (`u32::MAX`). At least one.
pub(super) fn parts_read_together(e: &Estimate, fprs: &[f64], from: usize) -> u32 {
    let passed: f64 = fprs.iter().take(from).product();
    let (present, absent) = (e.alpha, (1.0 - e.alpha) * passed);
    if present + absent <= 0.0 {
        return u32::MAX;
    }
    let present = present / (present + absent);
    let mut absent_passes = 1.0 - present;
    for (n, f) in fprs.iter().skip(from).enumerate() {
        absent_passes *= f;
        if present + absent_passes <= READ_AGAIN_ODDS {
            return u32::try_from(n + 1).unwrap_or(u32::MAX);
        }
    }
    u32::MAX
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_read_together_until_a_further_read_is_unlikely() {
        let empty = est(0.0, 1.0);
        let halves = [0.5; 14];
        assert_eq!(parts_read_together(&empty, &halves, 0), 6);
        assert_eq!(parts_read_together(&empty, &halves, 8), 6);
        // Too few parts left to get the odds down: the rest of them.
        assert_eq!(parts_read_together(&empty, &halves, 9), u32::MAX);
        // Unknown rates: the rest of the filter, as before the cap.
        assert_eq!(parts_read_together(&empty, &[], 0), u32::MAX);
        // A strong part alone is enough.
        assert_eq!(parts_read_together(&empty, &[0.5, 0.01, 0.5], 1), 1);
        assert_eq!(parts_read_together(&empty, &[0.5, 0.1, 0.5, 0.5], 0), 4);
        // A key found in the table passes every part: where that is likely enough, read
        // the rest, so a present key pays one read, not one per span.
        assert_eq!(parts_read_together(&est(0.05, 1.0), &halves, 0), u32::MAX);
        // Rarely found: a little longer than an all-empty table's span.
        assert_eq!(parts_read_together(&est(0.001, 1.0), &halves, 0), 7);
        // Having passed resident parts makes presence likelier: 1e-3 against 1/16 of the
        // absent keys is 1.6% present, more than the odds allow.
        assert_eq!(parts_read_together(&est(0.001, 1.0), &halves, 4), u32::MAX);
    }

    fn est(alpha: f64, beta: f64) -> Estimate {
        Estimate { alpha, beta_rate: beta, beta }
    }

    #[test]
    fn utility_follows_eq_8_and_9() {
        let fprs = [0.1, 0.1];
        let e = est(0.5, 2.0);
        // expIO_0 = 1.0, expIO_1 = 2 (0.5 + 0.05) = 1.1, expIO_2 = 2 (0.5 + 0.005) = 1.01
        assert!((utility(&e, &fprs, 1) - 0.9).abs() < 1e-12);
        assert!((utility(&e, &fprs, 2) - 0.09).abs() < 1e-12);
    }

    #[test]
    fn hot_empty_tables_probe_everything_cold_or_full_ones_skip() {
        let fprs = [0.1, 0.1];
        let full = ShambaPolicy { skipping: Skipping::Full, ..ShambaPolicy::default() };
        let partial = ShambaPolicy { skipping: Skipping::Partial, ..ShambaPolicy::default() };
        let none = ShambaPolicy::default();
        let on_disk = |_| false;
        let hot_empty = est(0.0, 3.0);
        assert_eq!(plan(&full, &hot_empty, &fprs, on_disk).max_parts, 2);
        // A table whose lookups all find their key gains nothing from its filter.
        let all_found = est(1.0, 3.0);
        assert_eq!(plan(&full, &all_found, &fprs, on_disk).max_parts, 0);
        assert_eq!(plan(&partial, &all_found, &fprs, on_disk).max_parts, 1);
        assert_eq!(plan(&none, &all_found, &fprs, on_disk).max_parts, 2);
        // A cold table: the second module's utility (0.15 * 0.1 * 0.9) is under 0.1.
        let cold = est(0.0, 0.15);
        assert_eq!(plan(&full, &cold, &fprs, on_disk).max_parts, 0);
        assert_eq!(plan(&partial, &cold, &fprs, on_disk).max_parts, 1);
        // Resident modules are free: never skipped.
        assert_eq!(plan(&full, &all_found, &fprs, |_| true).max_parts, 2);
        assert_eq!(plan(&full, &cold, &fprs, |d| d == 1).max_parts, 1);
    }

    #[test]
    fn hit_odds_fetch_modules_while_a_miss_is_at_least_as_likely_as_a_hit() {
        let fprs = [0.1, 0.1];
        let odds = ShambaPolicy { skipping: Skipping::HitOdds, ..ShambaPolicy::default() };
        let on_disk = |_| false;
        // Empty lookups: every module can only help.
        assert_eq!(plan(&odds, &est(0.0, 0.01), &fprs, on_disk).max_parts, 2);
        // Half the lookups find their key: the first module is a fair bet (0.5 >= 0.5);
        // after it said maybe, a miss has odds 0.05 : 0.5, so the second is not fetched.
        assert_eq!(plan(&odds, &est(0.5, 3.0), &fprs, on_disk).max_parts, 1);
        assert_eq!(plan(&odds, &est(0.04, 3.0), &fprs, on_disk).max_parts, 2);
        // Lookups that all find their key go straight to the data, unless modules are
        // resident (free).
        assert_eq!(plan(&odds, &est(1.0, 3.0), &fprs, on_disk).max_parts, 0);
        assert_eq!(plan(&odds, &est(1.0, 3.0), &fprs, |_| true).max_parts, 2);
    }
}
