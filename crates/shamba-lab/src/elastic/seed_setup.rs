//! Seed 003's own set-up for `exp elastic` (and alone, `exp elastic-seed`): every filter byte in memory is counted, and
//! every filter load is a counted read.
//!
//! Both systems start with no filter in memory and the same resident bytes (4 bits per
//! key of the tree): Plain under a filter memory budget that holds every one of its 4
//! bits/key filters (so it loads each on its table's first lookup, as LevelDB reads a
//! filter when it opens a table, and never evicts), Elastic with its units resident only
//! while enabled, under the same budget. No warm-up: the loads of the first lookups are in
//! the figures, as in the seed, whose I/Os include loading filters from disk. Data blocks
//! are not cached and tables are read with `O_DIRECT` (the seed's direct I/O), so a block
//! read is a read from this machine's disk. Half the lookups are for absent keys.

use std::error::Error;

use shamba::{ElasticPolicy, ProbePolicy};
use shamba_cli::bench::keys::KeyDistribution;
use shamba_cli::bench::report::PhaseResult;
use shamba_filter::{BuildPolicy, FilterLayout};

use crate::args::ExpArgs;
use crate::elastic::versus_plain::{tree, Moment, BUDGET_BITS, MOMENTS, UNITS, UNIT_BITS};
use crate::modular::memory_pressure::dist_name;
use crate::support::figures::ratio;
use crate::support::lookups::{measure, ReadSpec};
use crate::support::report::{Cell, Report, Table};
use crate::support::tree::LoadedTree;

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

impl<'a> Setting<'a> {
    /// The seed's set-up at `moment` of the tree: the same resident bytes for both, what
    /// Plain's 4 bits/key filters take whole (block overheads make them a little more than
    /// 4 bits/key), so Plain never evicts; the seed's lifeTime, 20K lookups for ~50K
    /// tables, as the same share of this tree's tables.
    pub fn new(moment: &'a Moment, plain: &'a LoadedTree, elastic: &'a LoadedTree) -> Setting<'a> {
        Setting::at(moment.name, moment.num, plain, elastic, BUDGET_BITS)
    }

    /// [`Setting::new`] at `bits` per key of resident filter memory (`plain`'s filters are
    /// built at `bits`): `exp elastic-sweep`'s points.
    pub fn at(name: &'a str, num: u64, plain: &'a LoadedTree, elastic: &'a LoadedTree, bits: f64) -> Setting<'a> {
        let budget = (num as f64 * bits / 8.0) as u64;
        Setting {
            name,
            num,
            plain,
            elastic,
            budget: budget.max(plain.filter_bytes()),
            life_time: ((elastic.stats.total_files() as f64 * 0.4) as u64).max(10),
        }
    }

    /// Plain's probe policy and Elastic's, at this setting's budget and life time.
    pub fn policies(&self) -> [ProbePolicy; 2] {
        [
            ProbePolicy::Plain,
            ProbePolicy::Elastic(ElasticPolicy { life_time: self.life_time, budget_bytes: self.budget }),
        ]
    }
}

/// `shamba-lab exp elastic-seed`: the seed003 table alone (both moments of the tree; `--quick`:
/// L0 empty only, fewer lookups).
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    let (moments, reads): (&[Moment], u64) = if args.quick { (&MOMENTS[..1], 20_000) } else { (&MOMENTS, 100_000) };
    let mut report = Report::new("elastic-seed");
    let mut table = table();
    for moment in moments {
        let plain = LoadedTree::load(tree(moment.num, BuildPolicy::uniform(BUDGET_BITS), args.seed))?;
        let mut units = BuildPolicy::uniform(UNIT_BITS * f64::from(UNITS));
        units.layout = FilterLayout::Units { count: UNITS };
        let elastic = LoadedTree::load(tree(moment.num, units, args.seed))?;
        report.note(format!("{}, Plain 4 bits/key: {}", moment.name, plain.describe()));
        report.note(format!("{}, Elastic units: {}", moment.name, elastic.describe()));
        let setting = Setting::new(moment, &plain, &elastic);
        report.note(format!(
            "{}: lifeTime {} lookups, budget {} KiB",
            moment.name,
            setting.life_time,
            setting.budget >> 10
        ));
        rows(&mut table, &setting, reads, args.seed)?;
    }
    report.tables.push(table);
    report.note(format!("{reads} measured lookups per row"));
    report.note(NOTE);
    Ok(report)
}

/// Add the rows of `s` (uniform and Zipfian) to `table`, `reads` lookups each.
pub fn rows(table: &mut Table, s: &Setting<'_>, reads: u64, seed: u64) -> Result<(), Box<dyn Error>> {
    for dist in [KeyDistribution::Uniform, KeyDistribution::Zipfian] {
        let spec = ReadSpec { existing: 0.5, distribution: dist, fill_cache: false, ..ReadSpec::empty(0, reads, seed) };
        let [plain, elastic] = s.policies();
        // The seed's direct I/O: every block the engine does not hold, filter loads
        // included, is read from this machine's disk; no data block is cached.
        let (p, ps) = measure_under_budget(s.plain, plain, s, None, true, &spec)?;
        let (e, es) = measure_under_budget(s.elastic, elastic, s, None, true, &spec)?;
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

/// Reopen `tree` under `policy` with both systems' filter memory budget of `s`, a block
/// cache of `cache` bytes (`None`: the default, which lookups that do not fill it leave
/// empty) and table reads through `O_DIRECT` (`direct`), measure
/// `spec`, and close it: the figures and the database's statistics after them.
pub fn measure_under_budget(
    tree: &LoadedTree,
    policy: ProbePolicy,
    s: &Setting<'_>,
    cache: Option<usize>,
    direct: bool,
    spec: &ReadSpec,
) -> Result<(PhaseResult, shamba::Stats), Box<dyn Error>> {
    let mut o = tree.spec.options.clone();
    o.probe_policy = policy;
    o.filter_memory_budget = Some(s.budget);
    if let Some(cache) = cache {
        o.cache_capacity = cache;
    }
    let db = tree.open_reads(o, direct)?;
    let r = measure(&db, s.num, 32, spec)?;
    let stats = db.stats();
    db.close()?;
    Ok((r, stats))
}

/// Filter-block reads per lookup (filter loads under a budget).
pub fn filter_reads(r: &PhaseResult) -> f64 {
    r.reads_per_op_by_kind[shamba::BlockKind::Filter as usize]
}

/// The note that goes with the table.
pub const NOTE: &str = "seed003 table: no warm-up, so every filter load is in the reads (filter loads/lookup are the filter-block reads among them); both systems hold at most the same budget, the bytes of Plain's 4 bits/key filters whole (resident KiB: the most held at once); data blocks not cached. The seed runs LevelDB on 100 GB (~50K tables) with O_DIRECT reads on an SSD; here the tree is the seed's shape scaled to 2M keys, tables read with O_DIRECT from this machine's disk (a VM's virtual disk: its latency is the host's, shared with other work)";
