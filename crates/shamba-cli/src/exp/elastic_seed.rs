//! Seed 003's own set-up for `exp elastic`: every filter byte in memory is counted, and
//! every filter load is a counted read.
//!
//! Both systems start with no filter in memory and the same resident bytes (4 bits per
//! key of the tree): Plain under a filter memory budget that holds every one of its 4
//! bits/key filters (so it loads each on its table's first lookup, as LevelDB reads a
//! filter when it opens a table, and never evicts), Elastic with its units resident only
//! while enabled, under the same budget. No warm-up: the loads of the first lookups are in
//! the figures, as in the seed, whose I/Os include loading filters from disk. Data blocks
//! are not cached (the seed's direct I/O). Half the lookups are for absent keys.

use std::error::Error;

use shamba::{ElasticPolicy, ProbePolicy};

use super::engine::{measure, ratio, LoadedTree, ReadSpec};
use super::memory_pressure::dist_name;
use super::report::{Cell, Table};
use crate::bench::keys::KeyDistribution;
use crate::bench::report::PhaseResult;

/// The seed's figures (Fig. 5-6, half the lookups empty).
const SEED_IO: &str = "2.42-3.05";
const SEED_THROUGHPUT: &str = "1.94-2.24";

/// The table's columns.
pub fn table() -> Table {
    Table::new(
        "seed003",
        "Seed 003 set-up: same resident filter bytes (4 bits/key), filters loaded from an empty memory and counted, half the lookups empty",
        &[
            "tree",
            "dist",
            "plain reads/lookup",
            "elastic reads/lookup",
            "ours I/O ratio",
            "seed I/O ratio",
            "plain filter loads/lookup",
            "elastic filter loads/lookup",
            "plain ops/s",
            "elastic ops/s",
            "ours throughput x",
            "seed throughput x",
            "plain resident KiB",
            "elastic resident KiB",
            "elastic evictions",
        ],
    )
}

/// One moment of the tree: what it is called, its keys, the trees of each system, the
/// budget in bytes and Elastic's life time.
pub struct Setting<'a> {
    pub name: &'a str,
    pub num: u64,
    pub plain: &'a LoadedTree,
    pub elastic: &'a LoadedTree,
    pub budget: u64,
    pub life_time: u64,
}

/// Add the rows of `s` (uniform and Zipfian) to `table`, `reads` lookups each.
pub fn rows(table: &mut Table, s: &Setting<'_>, reads: u64, seed: u64) -> Result<(), Box<dyn Error>> {
    for dist in [KeyDistribution::Uniform, KeyDistribution::Zipfian] {
        let spec = ReadSpec { existing: 0.5, distribution: dist, fill_cache: false, ..ReadSpec::empty(0, reads, seed) };
        let run = |tree: &LoadedTree, policy: ProbePolicy| -> Result<_, Box<dyn Error>> {
            let mut o = tree.spec.options.clone();
            o.probe_policy = policy;
            o.filter_memory_budget = Some(s.budget);
            let db = tree.open(o)?;
            let r = measure(&db, s.num, 32, &spec)?;
            let stats = db.stats();
            db.close()?;
            Ok((r, stats))
        };
        let (p, ps) = run(s.plain, ProbePolicy::Plain)?;
        let (e, es) =
            run(s.elastic, ProbePolicy::Elastic(ElasticPolicy { life_time: s.life_time, budget_bytes: s.budget }))?;
        let filter_reads = |r: &PhaseResult| r.reads_per_op_by_kind[shamba::BlockKind::Filter as usize];
        table.row(vec![
            Cell::text(s.name),
            Cell::text(dist_name(dist)),
            Cell::num(p.ios_per_op, 4),
            Cell::num(e.ios_per_op, 4),
            Cell::num(ratio(p.ios_per_op, e.ios_per_op), 2),
            Cell::text(SEED_IO),
            Cell::num(filter_reads(&p), 4),
            Cell::num(filter_reads(&e), 4),
            Cell::num(p.ops_per_sec, 0),
            Cell::num(e.ops_per_sec, 0),
            Cell::num(ratio(e.ops_per_sec, p.ops_per_sec), 2),
            Cell::text(SEED_THROUGHPUT),
            Cell::num(ps.filter_resident_peak_bytes as f64 / 1024.0, 0),
            Cell::num(es.filter_resident_peak_bytes as f64 / 1024.0, 0),
            Cell::num(es.filter_evictions as f64, 0),
        ]);
    }
    Ok(())
}

/// The note that goes with the table.
pub const NOTE: &str = "seed003 table: no warm-up, so every filter load is in the reads (filter loads/lookup are the filter-block reads among them); both systems hold at most the same budget, the bytes of Plain's 4 bits/key filters whole (resident KiB: the most held at once); data blocks not cached. The seed runs LevelDB on 100 GB (~50K tables) with O_DIRECT reads on an SSD; here the tree is the seed's shape scaled to 2M keys, and reads go through the OS page cache";
