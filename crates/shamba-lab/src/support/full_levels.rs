//! Trees whose every level spans the whole key range, as a bulk load leaves them (seed 000
//! loads its trees so): level i of L holds a random `T^(i-1) / (1 + T + .. + T^(L-1))` of
//! the keys, plus the first and the last key, so an empty lookup inside the key range visits
//! one table in every level. The engine's leveled compaction never leaves a tree so: it
//! moves a level's files down one at a time, and the upper levels end up covering parts of
//! the key range (2.1-2.8 tables per empty lookup in a five-level tree of `seed_shape`).
//!
//! The load goes generation by generation, the deepest level's first: a generation's keys
//! are written in key order, flushed, merged into L1 and moved down with
//! `lab::compact_level` to the level they belong to, which is empty until then. The
//! engine's own table writer, flushes, compactions and manifest make the tree, so it opens
//! and reads as any other. Its options keep every compaction from falling due (no L0
//! trigger, level targets far above the levels' bytes): nothing moves once it is in place,
//! during the load or when the tree is opened to be measured.

use std::error::Error;

use rand::{Rng, SeedableRng};
use shamba::{Db, Options};

use super::load::load_ids;
use super::tree::{LoadedTree, Shape, TreeSpec};

/// L0 files, level targets and write pauses no load reaches: compactions run only when the
/// loader asks for them.
const NEVER_FILES: usize = 1 << 30;
/// L1's target: one TiB (deeper levels' targets saturate).
const NEVER_BYTES: u64 = 1 << 40;
/// Memtables written before their L0 files are merged into L1: L0 stays a few files deep.
const MEMTABLES_PER_MERGE: u64 = 16;

/// `shape`'s options for a tree of `levels` full levels (L1 to L`levels`, L0 empty), whose
/// compactions never fall due by themselves. `shape.size_ratio` is the ratio between the
/// levels' key counts; its level sizes and level count are not used.
pub fn options(shape: Shape, levels: usize) -> Options {
    Options {
        num_levels: levels + 1,
        level0_compaction_trigger: NEVER_FILES,
        level0_slowdown_trigger: NEVER_FILES,
        level0_stop_trigger: NEVER_FILES,
        max_bytes_for_level_base: NEVER_BYTES,
        pending_compaction_slowdown_bytes: u64::MAX,
        pending_compaction_stop_bytes: u64::MAX,
        ..shape.options()
    }
}

/// Load `spec` (whose options come from [`options`]) with full levels.
pub fn load(spec: TreeSpec) -> Result<LoadedTree, Box<dyn Error>> {
    LoadedTree::load_filled(spec, fill)
}

/// The levels `spec`'s options ask for: L1 to the last.
fn full_levels(spec: &TreeSpec) -> usize {
    spec.options.num_levels.saturating_sub(1).max(1)
}

/// The ids (even, `0 .. 2(num-1)`) of each level, L1 first, each in key order: every id
/// in one level drawn at random with weight `ratio^(i-1)` for level i, and the first and
/// the last id in every level besides, so each level spans the whole key range.
pub fn level_ids(num: u64, levels: usize, ratio: u32, seed: u64) -> Vec<Vec<u64>> {
    let levels = levels.max(1);
    let weights: Vec<f64> = (0..levels).map(|i| f64::from(ratio).powi(i as i32)).collect();
    let total: f64 = weights.iter().sum();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x00F0_111E_7E15);
    let mut out: Vec<Vec<u64>> = vec![Vec::new(); levels];
    let last = num.saturating_sub(1);
    for i in 0..num {
        let mut u = rng.gen::<f64>() * total;
        let mut level = levels - 1;
        for (l, w) in weights.iter().enumerate() {
            if u < *w {
                level = l;
                break;
            }
            u -= w;
        }
        if i == 0 || i == last {
            continue;
        }
        if let Some(ids) = out.get_mut(level) {
            ids.push(2 * i);
        }
    }
    for ids in &mut out {
        // Generated in order: the first id leads and the last closes every level.
        if num > 0 {
            ids.insert(0, 0);
        }
        if last > 0 {
            ids.push(2 * last);
        }
    }
    out
}

/// Write `spec`'s keys level by level, the deepest first ([`crate::support::tree::Fill`]).
fn fill(db: &Db, spec: &TreeSpec) -> Result<(), Box<dyn Error>> {
    let levels = full_levels(spec);
    let generations = level_ids(spec.num, levels, spec.options.size_ratio, spec.seed);
    let entry = (spec.key_size + spec.value_size) as u64 + 104;
    let per_merge = (MEMTABLES_PER_MERGE * spec.options.write_buffer_size as u64 / entry).max(1) as usize;
    for (i, ids) in generations.iter().enumerate().rev() {
        let level = i + 1;
        // L1 .. L`level` are empty: the generation's L0 files (in key order, none
        // overlapping L1's) merge into L1 without rewriting anything else.
        for part in ids.chunks(per_merge) {
            load_ids(db, part, spec.key_size, spec.value_size)?;
            shamba::lab::compact_level(db, 0)?;
        }
        for upper in 1..level {
            shamba::lab::compact_level(db, upper)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::support::figures::tables_per_op;
    use crate::support::lookups::{measure, ReadSpec};
    use shamba_cli::bench::keys::key_into;

    const KEY: usize = 16;

    fn key(id: u64) -> Vec<u8> {
        let mut k = vec![0u8; KEY];
        key_into(id, &mut k);
        k
    }

    #[test]
    fn level_ids_put_every_key_in_one_level_and_the_ends_in_all() {
        let num = 100_000;
        let levels = level_ids(num, 4, 10, 3);
        let counts: Vec<usize> = levels.iter().map(Vec::len).collect();
        // Two ends in every level, every other key once.
        assert_eq!(counts.iter().sum::<usize>() as u64, num - 2 + 2 * 4);
        for (i, ids) in levels.iter().enumerate() {
            assert_eq!(ids.first(), Some(&0), "L{}", i + 1);
            assert_eq!(ids.last(), Some(&(2 * (num - 1))), "L{}", i + 1);
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "L{} out of order", i + 1);
        }
        // Each level about ten times the one above (1 : 10 : 100 : 1000 of 1111).
        for (i, &c) in counts.iter().enumerate() {
            let expected = num as f64 * 10f64.powi(i as i32) / 1111.0;
            assert!((c as f64 - expected).abs() < 0.2 * expected + 10.0, "L{}: {c} keys, expected {expected}", i + 1);
        }
    }

    #[test]
    fn every_level_spans_the_key_range_and_an_empty_lookup_visits_each_once() {
        let num = 60_000;
        let shape =
            Shape { write_buffer: 64 << 10, target_file: 16 << 10, level_base: 0, size_ratio: 10, num_levels: 0 };
        let spec =
            TreeSpec { num, key_size: KEY, value_size: 16, options: options(shape, 5), seed: 5, flush_every: None };
        let tree = load(spec).unwrap();
        let db = tree.open(tree.spec.options.clone()).unwrap();
        let files = db.files();
        let (first, last) = (key(0), key(2 * (num - 1)));
        for level in 1..=5 {
            let mine: Vec<_> = files.iter().filter(|f| f.level == level).collect();
            assert!(!mine.is_empty(), "L{level} is empty: {}", tree.describe());
            assert_eq!(mine.iter().map(|f| &f.smallest_key).min(), Some(&first), "L{level}");
            assert_eq!(mine.iter().map(|f| &f.largest_key).max(), Some(&last), "L{level}");
        }
        assert!(files.iter().all(|f| f.level >= 1), "L0 is not empty: {}", tree.describe());
        // Each level about ten times the keys of the one above (from L3: L1 holds a few keys).
        let entries = |l: usize| tree.stats.levels[l].entries as f64;
        for level in 3..=5 {
            let r = entries(level) / entries(level - 1);
            assert!((5.0..20.0).contains(&r), "L{level}/L{}: {r}: {}", level - 1, tree.describe());
        }
        // An empty lookup visits one table per level, as counted by the engine; a key in the
        // gap between two files of a level visits none there (a few in 10K).
        let empty = measure(&db, num, KEY, &ReadSpec::empty(0, 4_000, 9)).unwrap();
        assert_eq!(empty.found, 0);
        for level in 1..=5 {
            let visits = empty.levels.iter().find(|l| l.level == level).map_or(0.0, |l| l.table_lookups_per_op);
            assert!(visits > 0.97 && visits <= 1.0, "L{level}: {visits} tables per lookup");
        }
        assert!(tables_per_op(&empty) > 4.85, "{}", tables_per_op(&empty));
        // Every key reads back.
        let all = ReadSpec { existing: 1.0, ..ReadSpec::empty(0, 2_000, 7) };
        assert_eq!(measure(&db, num, KEY, &all).unwrap().found, 2_000);
        db.close().unwrap();
    }
}
