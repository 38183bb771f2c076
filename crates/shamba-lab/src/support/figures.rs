//! Small figures the experiments' tables share: gains, ratios, tables per lookup, and the
//! note on what the engine experiments' numbers mean.

use shamba_cli::bench::report::PhaseResult;

/// Percent by which `slow` takes longer than `fast` (20 = "20% faster").
pub fn gain_pct(slow: f64, fast: f64) -> f64 {
    if fast > 0.0 {
        100.0 * (slow / fast - 1.0)
    } else {
        f64::NAN
    }
}

/// `a / b`, or NaN when `b` is zero.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

/// Tables visited per lookup (all levels).
pub fn tables_per_op(r: &PhaseResult) -> f64 {
    r.levels.iter().map(|l| l.table_lookups_per_op).sum()
}

/// The note every engine experiment carries about what its numbers mean.
pub const MEASUREMENT_NOTE: &str = "I/Os are block reads that missed the engine's block cache (the robust metric); the OS page cache is warm and serves them, plus any emulated device cost. Timings are single-threaded wall clock on a shared 2-core machine and are noisy; compare them within one run.";
