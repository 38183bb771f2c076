//! `shamba-lab exp lookup-breakdown` (seed 000, Fig. 1): where a point lookup's time goes
//! (hashing, filter probing, index, data) by data size and device, half of the lookups
//! empty as in the seed, on leveled trees with T = 10 and 512 B keys (the seed's shape,
//! smaller). Measured with the engine's stage clocks (`ReadLab::profile`), one digest per
//! table visited (the seed's "state of the art", RocksDB's per-table hashing) and one per
//! lookup (Shamba's shared digest).

use std::error::Error;

use shamba_cli::bench::keys::KeyDistribution;
use shamba_filter::HashFn;

use crate::args::ExpArgs;
use crate::hash_sharing::seed_shape::{self, Loader, KEY_SIZE, VALUE_SIZE};
use crate::support::figures::{tables_per_op, MEASUREMENT_NOTE};
use crate::support::lookups::ReadSpec;
use crate::support::report::{Cell, Plot, Report, Table};

/// Emulated devices; "memory" is `none` with a block cache holding the whole tree (the seed's
/// in-memory case), where `none` reads each missed block through the OS page cache; "disk"
/// reads tables with `O_DIRECT` ([`seed_shape::open`]).
const DEVICES: [&str; 6] = ["memory", "none", "nvm", "pcie", "ssd", "disk"];

/// Run the experiment.
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    let (sizes, warmup, reads, repeats): (&[u64], u64, u64, usize) =
        if args.quick { (&[2_000, 20_000], 500, 1_000, 1) } else { (&[2_000, 20_000, 200_000], 5_000, 5_000, 3) };
    // `--num N`: that one size instead (4M keys make the seed's 2 GB point, 5 levels).
    let one = args.num.map(|n| [n]);
    let sizes: &[u64] = one.as_ref().map_or(sizes, |n| n.as_slice());
    let dist = args.workload.single(KeyDistribution::Uniform);
    let base = ReadSpec { existing: 0.5, profile: true, ..ReadSpec::empty(warmup, reads, args.seed) };
    let spec = args.workload.spec(dist, base);
    let mut table = Table::new(
        "fig1",
        "Fig. 1: lookup time by stage, half the lookups empty (leveled, T = 10, 512 B keys)",
        &[
            "data MB",
            "levels",
            "tables/lookup",
            "device",
            "hash",
            "digest",
            "ours ns/lookup",
            "ours hash %",
            "ours filter %",
            "ours index %",
            "ours data %",
            "ours other %",
            "seed hash %",
        ],
    );
    let mut plot = Plot::new(
        "fig1",
        "Share of lookup time hashing, per table digest (seed 000 Fig. 1)",
        "data MB",
        "hash % of lookup",
    )
    .log(true, false);
    let loader = Loader::of(args.full_levels);
    // With full levels, the seed's digest (MurmurHash64A) beside ours.
    let digests: &[HashFn] =
        if loader == Loader::Leveled { &[HashFn::Xxh3_128] } else { &[HashFn::Xxh3_128, HashFn::Murmur64A] };
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut trees = Vec::new();
    for (&num, &hash) in sizes.iter().flat_map(|n| digests.iter().map(move |h| (n, h))) {
        let tree = seed_shape::load(num, KEY_SIZE, VALUE_SIZE, 10.0, hash, args.seed, loader)?;
        let mb = (num * (KEY_SIZE + VALUE_SIZE) as u64) as f64 / 1e6;
        trees.push(format!("{} ({})", tree.describe(), hash.name()));
        for device in DEVICES {
            for share in [false, true] {
                let db = seed_shape::open(&tree, device)?;
                // The least disturbed of a few runs (other processes share the machine); the
                // first warms the cache, later ones run the same lookups again.
                let mut best: Option<shamba_cli::bench::report::PhaseResult> = None;
                for _ in 0..repeats {
                    let got = crate::support::lookups::measure(
                        &db,
                        num,
                        KEY_SIZE,
                        &ReadSpec { share_hash: share, ..spec.clone() },
                    )?;
                    if best.as_ref().is_none_or(|b| got.ns_per_op < b.ns_per_op) {
                        best = Some(got);
                    }
                }
                db.close()?;
                let Some(r) = best else { return Err("no runs".into()) };
                let Some(c) = r.stage_ns_per_op else { return Err("profiled run without stage costs".into()) };
                let total = r.ns_per_op;
                let pct = |x: f64| 100.0 * x / total;
                let other = total - c.hash - c.filter - c.index - c.data;
                let seed = if !share && device == "pcie" { "~80 (2 GB, 10 us PCIe)" } else { "-" };
                table.row(vec![
                    Cell::num(mb, 1),
                    Cell::num(tree.levels() as f64, 0),
                    Cell::num(tables_per_op(&r), 2),
                    Cell::text(device),
                    Cell::text(hash.name()),
                    Cell::text(if share { "shared (Shamba)" } else { "per table (seed)" }),
                    Cell::num(total, 0),
                    Cell::num(pct(c.hash), 1),
                    Cell::num(pct(c.filter), 1),
                    Cell::num(pct(c.index), 1),
                    Cell::num(pct(c.data), 1),
                    Cell::num(pct(other), 1),
                    Cell::text(seed),
                ]);
                if !share {
                    let name = format!("{device} ({})", hash.name());
                    match series.iter_mut().find(|s| s.0 == name) {
                        Some(s) => s.1.push((mb, pct(c.hash))),
                        None => series.push((name, vec![(mb, pct(c.hash))])),
                    }
                }
            }
        }
    }
    for (name, points) in series {
        plot.series(&name, points);
    }
    let mut report = Report::new("lookup-breakdown");
    report.tables.push(table);
    report.plots.push(plot);
    report.note("seed 000 Fig. 1: the share of lookup time spent hashing grows with the data size (more levels, one hash per level) and as the device gets faster; about 80% at 2 GB on a 10 us PCIe SSD; sizes 2 MB (1 level) to 2 TB (7 levels), devices SSD, PCIe SSD, fast PCIe SSD, emulated NVM, memory");
    for t in trees {
        report.note(format!("tree: {t}"));
    }
    report.note(format!(
        "{reads} lookups per cell after {warmup} warm-up, half for loaded keys; filters and indexes pinned, a 256 KiB block cache (512 MiB for memory: every block cached after the warm-up); the device's latency is added to each block read that misses it (the OS page cache serves the bytes); profiled runs (the stage clocks add a few reads of the clock per lookup), the fastest of {repeats} per cell (later runs repeat the same lookups, so for memory every block they read is cached)"
    ));
    report.note(args.lookups_note(sizes.last().copied().unwrap_or(0)));
    report.note("ours: the data sizes of the trees above (the seed's reach 2 TB): levels and tables per lookup are what drive the hashing share, and they are printed; 'other' is memtable search, version and table lookup, and the loop");
    report.note(format!("trees: {}", loader.describe()));
    report.note(match loader {
        Loader::Leveled => "an empty lookup visits fewer tables than there are levels: leveled partial compaction leaves an upper level's files covering parts of the key range (the seed bulk-loads full levels, one table per level per lookup), so the per-table digests grow with tables per lookup, printed above, not with levels",
        Loader::Full(_) => "every level spans the whole key range, as the seed's bulk-loaded trees: an empty lookup visits one table per level (tables/lookup above counts the found keys' shorter walks too)",
    });
    report.note(MEASUREMENT_NOTE);
    Ok(report)
}
