//! `shamba-lab exp memory-bound` and `memory-pressure`'s table `bound`: each
//! policy's empty-lookup reads over the fewest any assignment of the same bytes could give
//! on the measured lookups' trace ([`crate::modular::filter_bound`]), and what the filters' part
//! structure costs against that bound.

use std::error::Error;

use crate::args::ExpArgs;
use crate::elastic::unit_oracle::{empty_lookup_visits, Table as OracleTable};
use crate::modular::filter_bound::{min_reads, min_reads_parts, Fetch, Floor, Part, TableCost};
use crate::modular::memory_pressure::{
    dist_name, find, lookup_seed, pct_key, pressure_tree, run_grid, Grid, GridRun, BITS_PER_KEY, BOUND_PCTS,
    DIRECT_IO_NOTE,
};
use crate::modular::variants::{Build, Variant};
use crate::support::figures::{ratio, MEASUREMENT_NOTE};
use crate::support::report::{Cell, Report, Table};

/// `shamba-lab exp memory-bound`: the bound table alone, on a small grid (10, 25, 40%, empty
/// lookups, the baselines and a policy of each family).
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    let mut grid = Grid::bound(args.quick);
    grid.warmup = args.warmup.unwrap_or(grid.warmup);
    let mut report = Report::new("memory-bound");
    let mut notes = Vec::new();
    let run = run_grid(&grid, &args.workload, args.seed, args.direct_io, &mut notes)?;
    // One replay of the measured lookups' table visits serves both tables.
    let traces = traces(&grid, &run, &args.workload, args.seed)?;
    report.tables.push(bound_table(&grid, &run, &traces));
    report.tables.push(layouts_table(&traces));
    let mut io = Table::new(
        "grid",
        "I/Os (by kind), parts loaded, KB read and lookups/s per empty lookup",
        &["dist", "cache %", "variant", "I/Os", "data", "index", "filter", "loads", "KB", "ops/s"],
    );
    for c in &run.cells {
        let r = &c.result;
        io.row(vec![
            Cell::text(dist_name(c.dist)),
            Cell::num(c.pct, 0),
            Cell::text(c.variant),
            Cell::num(r.ios_per_op, 3),
            Cell::num(r.reads_per_op_by_kind[0], 3),
            Cell::num(r.reads_per_op_by_kind[1], 3),
            Cell::num(r.reads_per_op_by_kind[2], 3),
            Cell::num(r.filter_loads_per_op, 4),
            Cell::num(r.bytes_read_per_op / 1000.0, 2),
            Cell::num(r.ops_per_sec, 0),
        ]);
    }
    report.tables.push(io);
    report.notes.extend(notes);
    report.note(format!("{} warm-up + {} measured lookups per cell", grid.warmup, grid.reads));
    report.note(BOUND_NOTE);
    report.note(LAYOUTS_NOTE);
    report.note(MEASUREMENT_NOTE);
    if args.direct_io {
        report.note(DIRECT_IO_NOTE);
    }
    Ok(report)
}

/// What the bound table means.
pub(crate) const BOUND_NOTE: &str = "bound: the fewest reads per empty lookup any static assignment of the cache's bytes to (table, filter bits, index share) could give on the measured lookups' trace of table visits, fractional (the LP of a multiple-choice knapsack, solved exactly by convex hulls and reads saved per byte); a visit costs its false positive's data read plus an index read when the index is not resident, or one read for the rest of the filter. Floors: Bloom = 2^(-b ln 2) per b bits/key (any Bloom filter, split or not), any filter = 2^-b (Ribbon included; Monkey's bits up to twice the built bits). Each policy is divided by its family's bound (Ribbon builds by the any-filter one); the cache also keeps data blocks, which the bound does not model, so under skewed lookups a policy may come under it. best's parts bound: the same LP over the best variant's own whole parts (sizes from its tree, at the family's floor; as built: at their real FP rates, where exact) and its way of reading them";

/// What the layouts table means.
const LAYOUTS_NOTE: &str = "layouts: a table holds whole parts resident (in part over its partitions, as the bound's LP allows); a read each = every part not resident is read when the probe reaches it, so a chain of small parts pays a read per part; rest in one read = the parts after the resident ones lie together in the file and are read at once (FineRibbon's probes)";

/// Whether `build`'s filters are Ribbon (some part of them), so only the any-filter floor
/// bounds them.
fn floor_of(build: Build) -> Floor {
    match build {
        Build::RibbonEq(_)
        | Build::PartitionedRibbonEq(_)
        | Build::Combined(_)
        | Build::PartitionedRibbonProp
        | Build::FineRibbon => Floor::AnyFilter,
        _ => Floor::Bloom,
    }
}

/// How `build`'s probes read the parts that are not resident.
fn fetch_of(build: Build) -> Fetch {
    if build == Build::FineRibbon {
        Fetch::RestInOneRead
    } else {
        Fetch::EachPart
    }
}

/// `build`'s parts of `bits` bits per key each with the FP rates they were built with,
/// where those are exact: a one-column Ribbon module passes an absent key with
/// probability 1/2 whatever its bytes (its slots' overhead is space, not FP rate).
fn parts_as_built(build: Build, bits: &[f64]) -> Option<Vec<Part>> {
    (build == Build::FineRibbon).then(|| bits.iter().map(|&b| Part { bits: b, fpr: 0.5 }).collect())
}

/// One cell of the bound's grid: the measured lookups' trace of table visits and the bytes.
pub(crate) struct Trace {
    dist: shamba_cli::bench::keys::KeyDistribution,
    pct: f64,
    costs: Vec<TableCost>,
    budget: u64,
    /// Lookups in the trace.
    lookups: f64,
}

impl Trace {
    /// `reads` over the whole trace, per lookup.
    fn per_lookup(&self, reads: f64) -> f64 {
        reads / self.lookups
    }
}

/// The trace of every (distribution, cache %) of the grid at [`BOUND_PCTS`]: the very keys
/// the measured lookups drew, with the workload's exponent and deviation.
pub(crate) fn traces(
    grid: &Grid,
    run: &GridRun,
    workload: &crate::support::workload::WorkloadArgs,
    seed: u64,
) -> Result<Vec<Trace>, Box<dyn Error>> {
    let tables: Vec<OracleTable> = run.plain_files.iter().map(OracleTable::of).collect();
    let key_size = pressure_tree(grid.num, Build::Whole, 100.0, seed).key_size;
    let mut out = Vec::new();
    for &dist in &grid.dists {
        for pct in BOUND_PCTS.iter().copied().filter(|p| grid.pcts.contains(p)) {
            let visits = empty_lookup_visits(
                &tables,
                grid.num,
                key_size,
                dist,
                workload.theta(dist),
                Some(workload.sd()),
                grid.reads,
                lookup_seed(seed, pct),
            )
            .map_err(|e| format!("bound: {e}"))?;
            let costs = run
                .plain_files
                .iter()
                .zip(&visits)
                .map(|(f, &visits)| TableCost { visits, entries: f.entries, index_bytes: f.index_bytes })
                .collect();
            let budget = (run.metadata as f64 * pct / 100.0) as u64;
            out.push(Trace { dist, pct, costs, budget, lookups: grid.reads as f64 });
        }
    }
    Ok(out)
}

/// Each policy's empty-lookup reads over the bound at [`BOUND_PCTS`] (those in the grid),
/// and the best policy's over the best any policy could do with its own parts.
pub(crate) fn bound_table(grid: &Grid, run: &GridRun, traces: &[Trace]) -> Table {
    let mut headers: Vec<String> = [
        "dist",
        "cache %",
        "bloom bound",
        "any-filter bound",
        "best",
        "best I/Os",
        "best / any-filter bound",
        "best's parts bound",
        "best / parts bound",
        "best's parts as built",
        "best / as built",
        "best bloom",
        "best bloom / bloom bound",
    ]
    .map(String::from)
    .to_vec();
    headers.extend(grid.variants.iter().map(|v| format!("{} / bound", v.name)));
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut t =
        Table::new("bound", "Distance to the optimum: empty-lookup reads over the offline bound at the same bytes", &h);
    for trace in traces {
        let (dist, pct, costs, budget) = (trace.dist, trace.pct, &trace.costs, trace.budget);
        let bloom = trace.per_lookup(min_reads(costs, Floor::Bloom, BITS_PER_KEY, budget));
        let any = trace.per_lookup(min_reads(costs, Floor::AnyFilter, 2.0 * BITS_PER_KEY, budget));
        let measured: Vec<(&Variant, Option<f64>)> =
            grid.variants.iter().map(|v| (v, find(&run.cells, v.name, pct, dist, 0.0).map(|r| r.ios_per_op))).collect();
        let best_of = |only_bloom: bool| {
            measured
                .iter()
                .filter(|(v, _)| !only_bloom || floor_of(v.build) == Floor::Bloom)
                .filter_map(|(v, r)| r.map(|r| (*v, r)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
        };
        let best = best_of(false);
        let best_bloom = best_of(true);
        // The best any policy over the best variant's own parts could do: parts of their
        // bits at the family's floor, and as built where their FP rates are exact.
        let parts_bound = |as_built: bool| {
            best.and_then(|(v, _)| {
                let bits = run.part_bits.get(&(v.name, pct_key(pct)))?;
                let parts =
                    if as_built { parts_as_built(v.build, bits)? } else { Part::at_floor(floor_of(v.build), bits) };
                Some(trace.per_lookup(min_reads_parts(costs, &parts, fetch_of(v.build), budget)))
            })
        };
        let (parts_bound, built_bound) = (parts_bound(false), parts_bound(true));
        let mut row = vec![
            Cell::text(dist_name(dist)),
            Cell::num(pct, 0),
            Cell::num(bloom, 4),
            Cell::num(any, 4),
            Cell::text(best.map_or("-", |b| b.0.name)),
            Cell::opt(best.map(|b| b.1), 4),
            Cell::opt(best.map(|b| ratio(b.1, any)), 2),
            Cell::opt(parts_bound, 4),
            Cell::opt(best.zip(parts_bound).map(|(b, p)| ratio(b.1, p)), 2),
            Cell::opt(built_bound, 4),
            Cell::opt(best.zip(built_bound).map(|(b, p)| ratio(b.1, p)), 2),
            Cell::text(best_bloom.map_or("-", |b| b.0.name)),
            Cell::opt(best_bloom.map(|b| ratio(b.1, bloom)), 2),
        ];
        row.extend(measured.iter().map(|(v, r)| {
            let bound = if floor_of(v.build) == Floor::Bloom { bloom } else { any };
            Cell::opt(r.map(|r| ratio(r, bound)), 2)
        }));
        t.row(row);
    }
    t
}

/// Part layouts the `layouts` table weighs: (name, floor, bits per key of each part).
fn layouts() -> Vec<(&'static str, Floor, Vec<f64>)> {
    vec![
        ("ribbon 2x3.5", Floor::AnyFilter, vec![3.5; 2]),
        ("ribbon 4x3.5", Floor::AnyFilter, vec![3.5; 4]),
        ("ribbon 7x1", Floor::AnyFilter, vec![1.0; 7]),
        ("ribbon 14x1", Floor::AnyFilter, vec![1.0; 14]),
        ("bloom 2x5", Floor::Bloom, vec![5.0; 2]),
        ("bloom 20x1", Floor::Bloom, vec![1.0; 20]),
    ]
}

/// What the part structure costs: for candidate layouts (part sizes, and whether the parts
/// that are not resident take a read each or one read together), the fewest reads any
/// policy over those parts could give, over the any-filter bound. Computed from the trace
/// alone: no tree is built with these layouts here.
fn layouts_table(traces: &[Trace]) -> Table {
    let layouts = layouts();
    let mut headers: Vec<String> = vec!["dist".into(), "cache %".into(), "any-filter bound".into()];
    for (name, _, _) in &layouts {
        headers.push(format!("{name}, a read each"));
        headers.push(format!("{name}, rest in one read"));
    }
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut t = Table::new(
        "layouts",
        "What whole parts cost: the fewest reads per empty lookup any policy over these parts could give, over the any-filter bound",
        &h,
    );
    for trace in traces {
        let any = trace.per_lookup(min_reads(&trace.costs, Floor::AnyFilter, 2.0 * BITS_PER_KEY, trace.budget));
        let mut row = vec![Cell::text(dist_name(trace.dist)), Cell::num(trace.pct, 0), Cell::num(any, 4)];
        for (_, floor, parts) in &layouts {
            for fetch in [Fetch::EachPart, Fetch::RestInOneRead] {
                let parts = Part::at_floor(*floor, parts);
                let r = trace.per_lookup(min_reads_parts(&trace.costs, &parts, fetch, trace.budget));
                row.push(Cell::num(ratio(r, any), 2));
            }
        }
        t.row(row);
    }
    t
}
