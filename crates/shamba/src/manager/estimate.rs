//! Alpha and beta of a table: measured, inherited, and blended by age (seed 002, Eq. 12).

use crate::version::FileStatsRecord;

/// Persisted statistics are rates per this many table-reaching lookups.
const RECORD_SCALE: f64 = FileStatsRecord::SCALE as f64;

/// What the manager believes about one table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Fraction of the table's lookups that find their key (seed 002's alpha).
    pub alpha: f64,
    /// Lookups reaching the table per table-reaching lookup of the database (beta as a
    /// rate).
    pub beta_rate: f64,
    /// `beta_rate` relative to the average table of its level: 1 = typical, 0.1 = cold.
    /// This is the beta the utility uses, so thresholds mean the same in a tree of ten
    /// tables and of ten thousand.
    pub beta: f64,
}

impl Estimate {
    /// Blend the measured statistics with the inherited ones: the weight of the measured
    /// ones grows linearly with the table's age (in lookups) and is 1 after `warmup`.
    #[expect(
        clippy::too_many_arguments,
        reason = "the terms of Eq. 12 and of the level-relative beta, each a plain number"
    )]
    pub fn blend(
        prior: Option<&FileStatsRecord>,
        accesses: u64,
        positives: u64,
        age: u64,
        now: u64,
        level_accesses: u64,
        files_in_level: usize,
        warmup: u64,
    ) -> Estimate {
        let level_avg_rate = if now == 0 || files_in_level == 0 {
            0.0
        } else {
            level_accesses as f64 / now as f64 / files_in_level as f64
        };
        let measured_rate = if age == 0 { 0.0 } else { accesses as f64 / age as f64 };
        let measured_alpha = if accesses == 0 { 0.0 } else { positives as f64 / accesses as f64 };
        // Without an inherited estimate, assume a typical, all-empty table: probe its filter
        // until measurements say otherwise.
        let (prior_rate, prior_alpha) = match prior {
            Some(r) if r.accesses > 0 => {
                (r.accesses as f64 / RECORD_SCALE, (r.positives as f64 / r.accesses as f64).min(1.0))
            }
            _ => (if level_avg_rate > 0.0 { level_avg_rate } else { 1.0 }, 0.0),
        };
        let w = if warmup == 0 { 1.0 } else { (age as f64 / warmup as f64).min(1.0) };
        let beta_rate = w * measured_rate + (1.0 - w) * prior_rate;
        let alpha = w * measured_alpha + (1.0 - w) * prior_alpha;
        let beta = if level_avg_rate > 0.0 { beta_rate / level_avg_rate } else { 1.0 };
        Estimate { alpha, beta_rate, beta }
    }

    /// The estimate a persisted record stands for (relative beta unknown: 1).
    pub fn from_record(r: &FileStatsRecord) -> Estimate {
        Estimate { alpha: r.alpha(), beta_rate: r.beta_rate(), beta: 1.0 }
    }

    /// The record persisted in the manifest.
    pub fn record(&self) -> FileStatsRecord {
        let accesses = (self.beta_rate * RECORD_SCALE).round().max(0.0) as u64;
        FileStatsRecord { accesses, positives: (self.alpha * accesses as f64).round().max(0.0) as u64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn young_tables_use_the_inherited_estimate_and_old_ones_the_measured() {
        let prior = FileStatsRecord { accesses: 500_000, positives: 250_000 };
        let young = Estimate::blend(Some(&prior), 0, 0, 0, 1000, 1000, 10, 100);
        assert!((young.beta_rate - 0.5).abs() < 1e-9 && (young.alpha - 0.5).abs() < 1e-9);
        // 1000 lookups of age, 100 accesses, none found: measured beta 0.1, alpha 0.
        let old = Estimate::blend(Some(&prior), 100, 0, 1000, 5000, 5000, 10, 100);
        assert!((old.beta_rate - 0.1).abs() < 1e-9 && old.alpha == 0.0);
        let half = Estimate::blend(Some(&prior), 5, 0, 50, 5000, 5000, 10, 100);
        assert!((half.beta_rate - 0.3).abs() < 1e-9 && (half.alpha - 0.25).abs() < 1e-9);
    }

    #[test]
    fn relative_beta_compares_a_table_with_its_level() {
        // The level saw 1000 accesses over 1000 lookups across 10 tables: 0.1 each on average.
        let hot = Estimate::blend(None, 500, 0, 1000, 1000, 1000, 10, 1);
        let cold = Estimate::blend(None, 5, 0, 1000, 1000, 1000, 10, 1);
        assert!((hot.beta - 5.0).abs() < 1e-9, "{hot:?}");
        assert!((cold.beta - 0.05).abs() < 1e-9, "{cold:?}");
    }

    #[test]
    fn records_round_trip_the_rates() {
        let e = Estimate { alpha: 0.25, beta_rate: 0.02, beta: 1.0 };
        let r = e.record();
        assert_eq!(r, FileStatsRecord { accesses: 20_000, positives: 5_000 });
        let back = Estimate::blend(Some(&r), 0, 0, 0, 10, 10, 1, 100);
        assert!((back.beta_rate - 0.02).abs() < 1e-9 && (back.alpha - 0.25).abs() < 1e-9);
    }
}
