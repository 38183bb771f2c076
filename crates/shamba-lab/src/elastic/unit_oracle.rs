//! The best any unit allocation could do, in hindsight: how many false positives per empty
//! lookup a tree's filter units would cost if each table's enabled units were chosen
//! knowing exactly how often the measured lookups visit it.
//!
//! ElasticBF (seed 003) adapts the units of each table to its hotness under a fixed memory
//! budget. Whatever the adaptation rule, it cannot beat the static allocation that
//! minimises `sum_i visits_i * p^(u_i)` (Eq. 1 with hindsight) subject to
//! `sum_i u_i * unit_bytes_i <= budget`: this module bounds it from below (the relaxation
//! in which a unit may be enabled in part, solved exactly by taking units by saving per
//! byte), from the tables' key ranges and the very lookup keys `bench` draws. It is the
//! ceiling against which `exp elastic` judges both the policy and the bar.

use std::collections::BinaryHeap;

use shamba::FileInfo;

use shamba_cli::bench::keys::{key_into, KeyDistribution, LookupIds, RankSampler};

/// A table as the lookups meet it.
pub struct Table {
    level: usize,
    smallest: Vec<u8>,
    largest: Vec<u8>,
    entries: u64,
}

impl Table {
    /// From a file of [`shamba::Db::files`].
    pub fn of(f: &FileInfo) -> Table {
        Table { level: f.level, smallest: f.smallest_key.clone(), largest: f.largest_key.clone(), entries: f.entries }
    }

    fn covers(&self, key: &[u8]) -> bool {
        self.smallest.as_slice() <= key && key <= self.largest.as_slice()
    }
}

/// Visits per table of `reads` empty lookups drawn as `bench`'s read loop draws them
/// ([`LookupIds`]: one thread, `seed`, `dist` over `num` keys of `key_size` bytes, Zipf
/// exponent `zipf_theta`, normal standard deviation `normal_sd` in keys, `None` = a tenth of
/// the keys, as [`RankSampler::with_normal_sd`]): an empty lookup visits every table whose
/// key range holds its key. The caller passes the parameters its measured lookups ran with,
/// or the trace is another workload's.
#[expect(clippy::too_many_arguments, reason = "one parameter per property of the replayed lookups")]
pub fn empty_lookup_visits(
    tables: &[Table],
    num: u64,
    key_size: usize,
    dist: KeyDistribution,
    zipf_theta: f64,
    normal_sd: Option<f64>,
    reads: u64,
    seed: u64,
) -> Result<Vec<u64>, String> {
    let sampler = RankSampler::with_normal_sd(dist, num, zipf_theta, normal_sd)?;
    // Tables of each level sorted by smallest key: one binary search per level.
    let levels = tables.iter().map(|t| t.level).max().map_or(0, |m| m + 1);
    let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); levels];
    for (i, t) in tables.iter().enumerate() {
        by_level[t.level].push(i);
    }
    for l in &mut by_level {
        l.sort_by(|&a, &b| tables[a].smallest.cmp(&tables[b].smallest));
    }
    let mut visits = vec![0u64; tables.len()];
    let mut key = vec![0u8; key_size];
    for (id, _) in LookupIds::new(&sampler, 0.0, seed, 0).take(reads as usize) {
        key_into(id, &mut key);
        for (level, ids) in by_level.iter().enumerate() {
            if level == 0 {
                // L0 files overlap: each one holding the key is visited.
                ids.iter().filter(|&&i| tables[i].covers(&key)).for_each(|&i| visits[i] += 1);
                continue;
            }
            let after = ids.partition_point(|&i| tables[i].smallest.as_slice() <= key.as_slice());
            if let Some(&i) = after.checked_sub(1).and_then(|p| ids.get(p)) {
                if tables[i].covers(&key) {
                    visits[i] += 1;
                }
            }
        }
    }
    Ok(visits)
}

/// The fewest false positives (summed over all visits) any allocation of `budget_bytes` of
/// units could give, given `visits` per table, `unit_bits` bits per key per unit, at most
/// `max_units` per table and a per-unit FP rate of `unit_fpr`.
///
/// A unit's saving, `visits * p^(u-1) * (1 - p)`, shrinks as its table gains units, so
/// taking units by saving per byte, largest first, and the last one only in the fraction
/// that still fits, solves the relaxation in which units may be enabled in part: a bound
/// no whole-unit allocation (so no policy) beats, within one unit's saving of the best.
pub fn best_false_positives(
    tables: &[Table],
    visits: &[u64],
    unit_bits: f64,
    max_units: u32,
    unit_fpr: f64,
    budget_bytes: u64,
) -> f64 {
    let unit_bytes: Vec<u64> = tables.iter().map(|t| (t.entries as f64 * unit_bits / 8.0).ceil() as u64).collect();
    // Max-heap of the next unit's saving per byte: (saving per byte, table, units it would make).
    #[derive(PartialEq)]
    struct Next(f64, usize, u32);
    impl Eq for Next {}
    impl PartialOrd for Next {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Next {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.0.total_cmp(&other.0)
        }
    }
    let saving = |i: usize, u: u32| visits[i] as f64 * unit_fpr.powi(u as i32 - 1) * (1.0 - unit_fpr);
    let mut heap: BinaryHeap<Next> = (0..tables.len())
        .filter(|&i| unit_bytes[i] > 0 && visits[i] > 0 && max_units > 0)
        .map(|i| Next(saving(i, 1) / unit_bytes[i] as f64, i, 1))
        .collect();
    // With no unit enabled every visit is a false positive.
    let mut false_positives: f64 = visits.iter().map(|&v| v as f64).sum();
    let mut left = budget_bytes;
    while let Some(Next(_, i, u)) = heap.pop() {
        if unit_bytes[i] > left {
            false_positives -= saving(i, u) * left as f64 / unit_bytes[i] as f64;
            break;
        }
        left -= unit_bytes[i];
        false_positives -= saving(i, u);
        if u < max_units {
            heap.push(Next(saving(i, u + 1) / unit_bytes[i] as f64, i, u + 1));
        }
    }
    false_positives.max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(level: usize, lo: u64, hi: u64, entries: u64) -> Table {
        let (mut a, mut b) = (vec![0u8; 16], vec![0u8; 16]);
        key_into(lo, &mut a);
        key_into(hi, &mut b);
        Table { level, smallest: a, largest: b, entries }
    }

    #[test]
    fn visits_follow_key_ranges() {
        // Keys 0..2000 (ids 0..4000); L1 covers the lower half only, L2 all of it in two files.
        let tables = [table(1, 0, 1999, 500), table(2, 0, 1999, 1000), table(2, 2000, 3999, 1000)];
        let v = empty_lookup_visits(&tables, 2000, 16, KeyDistribution::Uniform, 0.99, None, 10_000, 1).unwrap();
        assert_eq!(v[1] + v[2], 10_000, "every lookup visits one L2 table");
        assert_eq!(v[0], v[1], "the L1 table spans exactly the first L2 table");
        assert!((4_500..5_500).contains(&v[0]), "{v:?}");
    }

    #[test]
    fn visits_replay_the_normal_lookups_standard_deviation() {
        // 2000 keys, centre rank 1000 (id 2000): the middle table holds ids 1900..2099.
        let tables = [table(1, 0, 1899, 950), table(1, 1900, 2099, 100), table(1, 2100, 3999, 950)];
        let narrow =
            empty_lookup_visits(&tables, 2000, 16, KeyDistribution::Normal, 0.99, Some(5.0), 10_000, 1).unwrap();
        assert_eq!(narrow[1], 10_000, "sd 5 keys stays within +-50 ids of the centre: {narrow:?}");
        // A tenth of the keys (200, 400 ids) reaches the outer tables.
        let wide = empty_lookup_visits(&tables, 2000, 16, KeyDistribution::Normal, 0.99, None, 10_000, 1).unwrap();
        assert!(wide[0] > 2_000 && wide[2] > 2_000, "{wide:?}");
    }

    #[test]
    fn the_budget_goes_to_the_visited_tables_first() {
        let tables = [table(1, 0, 9, 1000), table(1, 10, 19, 1000)];
        // 250 bytes = one 2-bit unit of 1000 keys.
        let fp = best_false_positives(&tables, &[100, 1], 2.0, 4, 0.5, 250);
        assert!((fp - (100.0 * 0.5 + 1.0)).abs() < 1e-9, "{fp}");
        // Half a unit's bytes: half its saving (the bound's relaxation).
        let fp = best_false_positives(&tables, &[100, 1], 2.0, 4, 0.5, 125);
        assert!((fp - (100.0 * 0.75 + 1.0)).abs() < 1e-9, "{fp}");
        // Enough for every unit: every table at the maximum.
        let fp = best_false_positives(&tables, &[100, 1], 2.0, 4, 0.5, 10_000);
        assert!((fp - 101.0 / 16.0).abs() < 1e-9, "{fp}");
    }
}
