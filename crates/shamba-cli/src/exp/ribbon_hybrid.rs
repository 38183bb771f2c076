//! `shamba exp ribbon-hybrid` (seed 004): the Ribbon+Bloom hybrid by level measured on the
//! engine, construction memory per key, and the block cache's entries by kind.
//!
//! - Hybrid: one tree per choice of `ribbon_from_level` (all Bloom, Ribbon from L for each
//!   level L of the tree, all Ribbon), the same keys; for each, filter bytes (memory saved
//!   against all Bloom), the load's wall time (flushes and compactions build every filter,
//!   once per level a key passes through), the filter build CPU that implies (each level's
//!   entries x the measured build ns/key of its kind), and empty lookups with filters
//!   pinned (ns and false positives per lookup).
//! - Construction memory: peak heap bytes per key while a filter of 100K and 1M keys is
//!   built (the allocator's own count, `alloc_meter`), beside the 16-byte digests the
//!   table builder holds per key; the seed: ~230 bits/key for Ribbon, ~75 for Bloom.
//! - Block-cache entry statistics (seed 004's "Block cache entry stats"): after lookups
//!   with index and filter blocks in a cache, each kind's blocks, bytes and share.

use std::error::Error;
use std::hint::black_box;

use shamba::lab::filter::{bloom_equivalent_fp_rate, build_filter_parts, Digest, FilterSpec};
use shamba::BlockKind;

use super::engine::{measure, ratio, LoadedTree, Shape, TreeSpec, MEASUREMENT_NOTE};
use super::measure::{ns_per_op, random_keys};
use super::memory_pressure::BITS_PER_KEY;
use super::report::{Cell, Report, Table};
use super::ExpArgs;

/// Peak heap bytes per key while building `spec` over `keys`, and build ns per key.
fn construction(spec: &FilterSpec, keys: &[Digest], repeats: usize) -> (f64, f64) {
    let (_, peak) = crate::alloc_meter::peak_during(|| build_filter_parts(black_box(spec), black_box(keys)));
    let ns = ns_per_op(keys.len(), repeats, || {
        black_box(build_filter_parts(black_box(spec), black_box(keys)));
    });
    (peak as f64 / keys.len().max(1) as f64, ns)
}

struct Plan {
    num: u64,
    shape: Shape,
    reads: u64,
    sizes: Vec<usize>,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                num: 200_000,
                shape: Shape {
                    write_buffer: 1 << 20,
                    target_file: 1 << 20,
                    level_base: 2 << 20,
                    size_ratio: 4,
                    num_levels: 7,
                },
                reads: 20_000,
                sizes: vec![100_000],
            }
        } else {
            Plan { num: 2_000_000, shape: Shape::PRESSURE, reads: 200_000, sizes: vec![100_000, 1_000_000] }
        }
    }
}

/// Run the experiment.
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    let plan = Plan::new(args.quick);
    let mut report = Report::new("ribbon-hybrid");
    let bloom = FilterSpec::Bloom { bits_per_key: BITS_PER_KEY };
    let ribbon = FilterSpec::Ribbon { fp_rate: bloom_equivalent_fp_rate(BITS_PER_KEY) };

    // Construction memory and CPU per key.
    let mut mem = Table::new(
        "construction",
        "Construction: peak heap bits per key while a filter is built (the output included), plus the 128-bit digests the table builder holds per key",
        &["keys", "kind", "ours build peak bits/key", "ours + digests bits/key", "seed bits/key", "ours build ns/key"],
    );
    let mut build_ns = [0.0f64; 2];
    for &n in &plan.sizes {
        let keys: Vec<Digest> = random_keys(n, 16, args.seed + n as u64).iter().map(|k| Digest::of(k)).collect();
        for (i, (name, spec, seed)) in
            [("blocked-bloom", &bloom, 75.0), ("ribbon", &ribbon, 230.0)].into_iter().enumerate()
        {
            let (bytes, ns) = construction(spec, &keys, if args.quick { 1 } else { 3 });
            build_ns[i] = ns;
            mem.row(vec![
                Cell::num(n as f64, 0),
                Cell::text(name),
                Cell::num(bytes * 8.0, 1),
                Cell::num(bytes * 8.0 + 128.0, 1),
                Cell::num(seed, 0),
                Cell::num(ns, 1),
            ]);
        }
    }

    // The hybrid by level.
    let load = |from: Option<usize>| -> Result<LoadedTree, Box<dyn Error>> {
        let mut options = plan.shape.options();
        options.filter_policy.bits_per_key = BITS_PER_KEY;
        options.filter_policy.ribbon_from_level = from;
        LoadedTree::load(TreeSpec {
            num: plan.num,
            key_size: 32,
            value_size: 32,
            options,
            seed: args.seed,
            flush_every: Some(super::engine::COMPARED_FLUSH_KEYS.min(plan.num / 20).max(1)),
        })
    };
    let all_bloom = load(None)?;
    report.note(format!("tree: {}", all_bloom.describe()));
    let levels = all_bloom.stats.levels.iter().rposition(|l| l.files > 0).unwrap_or(0);
    let mut hybrid = Table::new(
        "hybrid",
        "Ribbon from level L (Bloom above): filter memory, build CPU and empty lookups with filters pinned",
        &[
            "ribbon from",
            "filter MiB",
            "memory saved %",
            "load s",
            "modelled filter build s",
            "empty lookup ns",
            "fp per lookup",
        ],
    );
    let mut choices: Vec<Option<usize>> = vec![None];
    choices.extend((0..=levels).rev().map(Some));
    let bloom_bytes = all_bloom.filter_bytes() as f64;
    let mut cache_table = Table::new(
        "cache-entries",
        "Block-cache entry statistics after the lookups (index and filter blocks cached; cache = 50% of the all-Bloom tree's filter + index bytes)",
        &["ribbon from", "kind", "blocks", "bytes", "share %"],
    );
    for from in choices {
        let owned;
        let tree = match from {
            None => &all_bloom,
            Some(_) => {
                owned = load(from)?;
                &owned
            }
        };
        // Filter build CPU: every level's entries were built once into that level's kind
        // (and into each level above on the way down: the load's wall time has those).
        let modelled: f64 = tree
            .stats
            .levels
            .iter()
            .enumerate()
            .map(|(l, lv)| lv.entries as f64 * if from.is_some_and(|f| l >= f) { build_ns[1] } else { build_ns[0] })
            .sum::<f64>()
            / 1e9;
        let mut o = tree.spec.options.clone();
        o.cache_index_and_filter_blocks = false;
        let db = tree.open(o)?;
        let r = measure(&db, tree.spec.num, tree.spec.key_size, &args.lookups(plan.reads / 10, plan.reads, args.seed))?;
        db.close()?;
        let label = from.map_or("never (all Bloom)".to_string(), |l| format!("L{l}"));
        hybrid.row(vec![
            Cell::text(label.clone()),
            Cell::num(tree.filter_bytes() as f64 / (1 << 20) as f64, 3),
            Cell::num(100.0 * (1.0 - ratio(tree.filter_bytes() as f64, bloom_bytes)), 1),
            Cell::num(tree.load_seconds, 2),
            Cell::num(modelled, 3),
            Cell::num(r.ns_per_op, 0),
            Cell::num(r.false_positives_per_op, 4),
        ]);

        let mut o = tree.spec.options.clone();
        o.cache_index_and_filter_blocks = true;
        o.cache_capacity = (all_bloom.metadata_bytes() / 2) as usize;
        let db = tree.open(o)?;
        measure(&db, tree.spec.num, tree.spec.key_size, &args.lookups(0, plan.reads, args.seed))?;
        let s = db.stats();
        db.close()?;
        for (kind, (blocks, bytes, share)) in BlockKind::ALL.into_iter().zip(s.cache_entries()) {
            cache_table.row(vec![
                Cell::text(label.clone()),
                Cell::text(kind.name()),
                Cell::num(blocks as f64, 0),
                Cell::num(bytes as f64, 0),
                Cell::num(100.0 * share, 1),
            ]);
        }
    }
    report.tables.extend([hybrid, mem, cache_table]);
    report.note("seed 004: Ribbon saves ~30% of filter memory for 3-4x the construction CPU (and more per query at low FP rates), and takes ~230 bits/key of temporary memory while built against ~75 for Bloom; filters living more than about an hour should be Ribbon, so a hybrid keeps the short-lived upper levels Bloom and makes the long-lived bottom Ribbon. Its block-cache example: filters 14% of a 9 GB cache, data 76%, index 10%");
    report.note("Ribbon at the Bloom-equivalent FP rate of 10 bits/key; 'modelled filter build s' = each level's entries x the build ns/key measured above for its kind (a key is built into every level it passes through; the load's wall time includes those and the compactions). Construction memory counts the building thread's heap: the digests are the caller's (the table builder keeps one 16-byte digest per key, RocksDB a 64-bit hash), so the '+ digests' column is comparable with the seed's");
    report.note(args.lookups_note(plan.num));
    if args.quick {
        report.note("QUICK RUN: a 200K-key tree of 1 MiB tables and 100K-key filters; the full run is 2M keys on seed 002's shape and 100K/1M-key filters");
    }
    report.note(MEASUREMENT_NOTE);
    Ok(report)
}
