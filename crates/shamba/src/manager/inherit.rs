//! Statistics of new tables, inherited from the tables they replace (seed 002, "Updating
//! alpha and beta").
//!
//! A compaction's outputs cover the key range its inputs covered, so lookups that reached
//! the inputs of the output level will reach the outputs: the outputs share those inputs'
//! access rate in proportion to their entries (keys are assumed evenly popular within the
//! range), and inherit their hit ratio. When the output level had no input (a trivial
//! extension of a level), the upper inputs stand in. A flushed L0 table is reached by
//! nearly every lookup that misses the memtables (L0 tables span the key space); its hit
//! ratio is its share of the tree's entries times the database's hit ratio.
//!
//! The seed derives a new table's beta from the overlapping tables of the last level and
//! divides alpha by T per level in between; using the replaced tables directly needs no
//! tree-shape assumption and is exact for a table rewritten in place.

use super::estimate::Estimate;
use crate::version::FileStatsRecord;

/// Priors for compaction outputs, given the estimates of the inputs at the output level
/// (or of all inputs if none was there) and each output's entries.
pub(crate) fn for_compaction(inputs: &[Estimate], output_entries: &[u64]) -> Vec<Option<FileStatsRecord>> {
    if inputs.is_empty() {
        return vec![None; output_entries.len()];
    }
    let rate: f64 = inputs.iter().map(|e| e.beta_rate).sum();
    let positives: f64 = inputs.iter().map(|e| e.beta_rate * e.alpha).sum();
    let alpha = if rate > 0.0 { (positives / rate).min(1.0) } else { 0.0 };
    let total: u64 = output_entries.iter().sum::<u64>().max(1);
    output_entries
        .iter()
        .map(|&n| Some(Estimate { alpha, beta_rate: rate * n as f64 / total as f64, beta: 1.0 }.record()))
        .collect()
}

/// Prior for a flushed L0 table holding `entries` of the tree's `tree_entries` (itself
/// included), when a fraction `hit_ratio` of table-reaching lookups find their key.
pub(crate) fn for_flush(entries: u64, tree_entries: u64, hit_ratio: f64) -> FileStatsRecord {
    let share = entries as f64 / tree_entries.max(1) as f64;
    Estimate { alpha: (share * hit_ratio).clamp(0.0, 1.0), beta_rate: 1.0, beta: 1.0 }.record()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_share_the_inputs_rate_by_entries() {
        let inputs =
            [Estimate { alpha: 0.5, beta_rate: 0.2, beta: 1.0 }, Estimate { alpha: 0.0, beta_rate: 0.2, beta: 1.0 }];
        let out = for_compaction(&inputs, &[300, 100]);
        let a = out[0].unwrap();
        let b = out[1].unwrap();
        assert_eq!(a.accesses, 300_000);
        assert_eq!(b.accesses, 100_000);
        assert_eq!(a.positives, 75_000, "alpha is the inputs' weighted hit ratio, 0.25");
    }

    #[test]
    fn flushed_tables_are_hot_and_mostly_empty() {
        let r = for_flush(1000, 100_000, 0.5);
        assert_eq!(r.accesses, 1_000_000);
        assert_eq!(r.positives, 5_000);
    }
}
