//! `shamba exp elastic` (seed 003, Fig. 5-6): ElasticBF against Plain at the same filter
//! memory, 4 bits per key, uniform and Zipfian lookups.
//!
//! Plain: one 4 bits/key Bloom filter per table. Elastic: 6 units of 2 bits/key per table,
//! of which the filter manager enables at most 4 bits/key's worth over the whole tree
//! (hot tables get more units, cold ones fewer). Filters are pinned; data blocks are either not
//! cached at all (the seed's direct I/O) or cached in a small block cache, so an I/O is a
//! data-block read: a found key or a false positive.
//!
//! Beside both, for empty lookups, the hindsight ceiling ([`super::unit_oracle`]): the
//! fewest false positives any allocation of the same unit memory could give on this tree
//! with these lookups. It separates how well Elastic adapts (its distance to the ceiling)
//! from how much adapting can gain on the tree at all (the ceiling against Plain).

use std::error::Error;

use shamba::filter::{BuildPolicy, FilterLayout};
use shamba::manager::{ElasticPolicy, ProbePolicy};

use super::engine::{measure, ratio, LoadedTree, ReadSpec, Shape, TreeSpec, MEASUREMENT_NOTE};
use super::memory_pressure::dist_name;
use super::unit_oracle::{best_false_positives, empty_lookup_visits, Table as OracleTable};
use shamba::filter::bloom_blocked::{blocked_fpr, blocked_num_probes};

use super::report::{Cell, Plot, Report, Table};
use super::ExpArgs;
use crate::bench::keys::KeyDistribution;

/// Bits per key of enabled filter memory, both systems.
const BUDGET_BITS: f64 = 4.0;
/// Elastic units per table and bits per key of each.
const UNITS: u8 = 6;
const UNIT_BITS: f64 = 2.0;
/// Block cache: small, like the seed's direct I/O.
const CACHE: usize = 256 << 10;

fn tree(num: u64, policy: BuildPolicy, seed: u64) -> TreeSpec {
    // 1 MiB files: many tables, so hotness differs between them (the seed has ~50K). Tried
    // and measured worse for Elastic (all-empty Zipfian 1.62x and 0.89x, uniform 1.14x and
    // 0.54x): the seed's size ratio 10 with 256 KiB and 64 KiB files. With thousands of
    // tables, the last level's tables outlive lifeTime between accesses and lose their units.
    let shape = Shape { target_file: 1 << 20, ..Shape::PRESSURE };
    let mut options = shape.options();
    options.filter_policy = policy;
    TreeSpec { num, key_size: 32, value_size: 32, options, seed, flush_every: Some(super::engine::COMPARED_FLUSH_KEYS) }
}

/// Run the experiment.
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    let (num, warmup, reads) = if args.quick { (2_000_000, 30_000, 60_000) } else { (2_000_000, 100_000, 200_000) };
    let mut report = Report::new("elastic");
    let plain = LoadedTree::load(tree(num, BuildPolicy::uniform(BUDGET_BITS), args.seed))?;
    let mut units = BuildPolicy::uniform(UNIT_BITS * f64::from(UNITS));
    units.layout = FilterLayout::Units { count: UNITS };
    let elastic = LoadedTree::load(tree(num, units, args.seed))?;
    let plain8 =
        if args.quick { None } else { Some(LoadedTree::load(tree(num, BuildPolicy::uniform(8.0), args.seed))?) };
    report.note(format!("Plain 4 bits/key: {}", plain.describe()));
    report.note(format!("Elastic units: {}", elastic.describe()));
    let budget = (num as f64 * BUDGET_BITS / 8.0) as u64;
    // The seed's lifeTime is 20K for ~50K tables: 0.4 x tables (in lookups).
    let life_time = ((elastic.stats.total_files() as f64 * 0.4) as u64).max(10);
    // The ceiling: units allocated in hindsight from the measured lookups' table visits.
    let tables: Vec<OracleTable> = {
        let db = elastic.open(elastic.spec.options.clone())?;
        let files = db.files().iter().map(|(level, _, f)| OracleTable::of(*level, f)).collect();
        db.close()?;
        files
    };
    let fpr_at = |bits: f64| blocked_fpr(512.0 / bits, blocked_num_probes(bits));
    let (unit_fpr, plain_fpr) = (fpr_at(UNIT_BITS), fpr_at(BUDGET_BITS));

    let mut table = Table::new(
        "fig5",
        "Fig. 5: Elastic vs Plain at 4 bits/key of filter memory",
        &[
            "data cache",
            "dist",
            "non-empty",
            "plain I/Os",
            "elastic I/Os",
            "plain 8b I/Os",
            "ours I/O ratio",
            "seed I/O ratio",
            "plain fp",
            "elastic fp",
            "hindsight fp",
            "hindsight I/O ratio",
            "plain ops/s",
            "elastic ops/s",
            "ours throughput x",
            "seed throughput x",
            "enabled KiB",
        ],
    );
    let mut plot = Plot::new(
        "fig5",
        "I/Os per lookup: Plain vs Elastic at 4 bits/key (seed 003)",
        "fraction non-empty",
        "I/Os per lookup",
    );
    let alphas = [0.0, 0.5];
    let dists = [KeyDistribution::Uniform, KeyDistribution::Normal, KeyDistribution::Zipfian];
    // The seed's Fig. 5 reads with direct I/O "to minimize the cache influence": data blocks
    // are not cached, so a hot key's false positive costs a read every time. With a cache,
    // those repeats hit it and only the long tail's false positives are left.
    for (direct, dist) in [true, false].into_iter().flat_map(|d| dists.map(|x| (d, x))) {
        let (mut pp, mut pe) = (Vec::new(), Vec::new());
        for alpha in alphas {
            let spec = ReadSpec {
                existing: alpha,
                distribution: dist,
                fill_cache: !direct,
                ..ReadSpec::empty(warmup, reads, args.seed)
            };
            let run_plain = |t: &LoadedTree| -> Result<_, Box<dyn Error>> {
                let mut o = t.spec.options.clone();
                o.cache_capacity = CACHE;
                let db = t.open(o)?;
                let r = measure(&db, num, 32, &spec)?;
                db.close()?;
                Ok(r)
            };
            let p = run_plain(&plain)?;
            let p8 = plain8.as_ref().map(run_plain).transpose()?;
            let mut o = elastic.spec.options.clone();
            o.cache_capacity = CACHE;
            o.probe_policy = ProbePolicy::Elastic(ElasticPolicy { life_time, budget_bytes: budget });
            let db = elastic.open(o)?;
            let e = measure(&db, num, 32, &spec)?;
            let enabled = db.stats().elastic_enabled_bytes;
            db.close()?;
            // Empty lookups only: their every visit's false positive is a read a unit can save.
            let hindsight = if alpha == 0.0 {
                let visits = empty_lookup_visits(&tables, num, 32, dist, reads, args.seed)
                    .map_err(|e| format!("oracle: {e}"))?;
                let best = best_false_positives(&tables, &visits, UNIT_BITS, u32::from(UNITS), unit_fpr, budget);
                let plain_expected = visits.iter().sum::<u64>() as f64 * plain_fpr;
                Some((best / reads as f64, plain_expected / best.max(f64::MIN_POSITIVE)))
            } else {
                None
            };
            let seed_io = if alpha == 0.5 { "2.42-3.05" } else { "-" };
            let seed_tp = if alpha == 0.5 { "1.94-2.24" } else { "-" };
            table.row(vec![
                Cell::text(if direct { "none (seed)" } else { "256 KiB" }),
                Cell::text(dist_name(dist)),
                Cell::num(alpha, 1),
                Cell::num(p.ios_per_op, 4),
                Cell::num(e.ios_per_op, 4),
                Cell::opt(p8.as_ref().map(|r| r.ios_per_op), 4),
                Cell::num(ratio(p.ios_per_op, e.ios_per_op), 2),
                Cell::text(seed_io),
                Cell::num(p.false_positives_per_op, 4),
                Cell::num(e.false_positives_per_op, 4),
                Cell::opt(hindsight.map(|h| h.0), 4),
                Cell::opt(hindsight.map(|h| h.1), 2),
                Cell::num(p.ops_per_sec, 0),
                Cell::num(e.ops_per_sec, 0),
                Cell::num(ratio(e.ops_per_sec, p.ops_per_sec), 2),
                Cell::text(seed_tp),
                Cell::num(enabled as f64 / 1024.0, 0),
            ]);
            pp.push((alpha, p.ios_per_op));
            pe.push((alpha, e.ios_per_op));
        }
        let cache = if direct { "" } else { ", data cache" };
        plot.series(&format!("plain {}{cache}", dist_name(dist)), pp);
        plot.series(&format!("elastic {}{cache}", dist_name(dist)), pe);
    }
    report.tables.push(table);
    report.plots.push(plot);
    report.note(format!(
        "Elastic: {UNITS} units x {UNIT_BITS} bits/key built per table; enabled-unit budget {} KiB = {BUDGET_BITS} bits/key x {num} keys; lifeTime {life_time} lookups (seed ratio 0.4 x tables); {warmup} warm-up + {reads} measured lookups per row, filters pinned; data cache 'none': lookups do not fill the cache (the seed's direct I/O), else a {} KiB block cache",
        budget / 1024,
        CACHE >> 10
    ));
    report.note("the seed (LevelDB, 100 GB, ~50K tables, half the lookups empty) counts 2.42-3.05x fewer I/Os and 1.94-2.24x the throughput; its I/Os include loading filters from disk. Here every unit is pinned at open (the engine has no load-on-enable for units outside the block cache), so only data-block reads count, and half-existing lookups each pay one data read that no filter can save: the ratio is bounded by (found + fp plain) / (found + fp elastic). The all-empty row shows the filter effect alone (the issue's bar: >= 2x fewer I/Os under Zipfian)");
    report.note("Zipf exponent 0.99 with hot keys scattered over the key space (bench's mapping): every table holds some hot keys, so table-level skew, which is what Elastic exploits, is mild. The normal distribution (sd = n/10 around the middle of the key space) makes some tables hot and most cold, the situation the seed describes");
    report.note(format!(
        "hindsight: the fewest false positives per empty lookup any allocation of the {} KiB of units could give, choosing each table's units knowing how often these lookups visit it (greedy on saving per byte; unit FPR {:.3}, analytic); its I/O ratio is against Plain's analytic {:.3} per visit. Elastic cannot beat it: where it is below the 2x bar, so is every unit policy on this tree",
        budget / 1024,
        unit_fpr,
        plain_fpr
    ));
    report.note(MEASUREMENT_NOTE);
    Ok(report)
}
