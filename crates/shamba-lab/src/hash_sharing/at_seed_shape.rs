//! `shamba-lab exp hash-sharing --num N` (seed 000, Figs. 5-9 at the seed's shape): the same
//! shared-against-per-table comparison as `exp hash-sharing`, on `lookup-breakdown`'s
//! leveled T = 10 trees of 512 B keys ([`crate::hash_sharing::seed_shape`]; 4M keys make 2.3 GB and five
//! levels) instead of tiered T = 2 trees of a few megabytes, with the devices the seed uses
//! (its default: a PCIe SSD with direct I/O) and both digests: ours (xxh3-128) and the
//! seed's (RocksDB's MurmurHash64A).
//!
//! - Fig. 5a: key sizes at a fixed entry size (the seed's set-up: 2 KB entries there, 1088 B
//!   here so 1 KiB keys fit a 64 B value) and the main tree's data bytes, so every key size
//!   has the same key count and levels.
//! - Fig. 5b: height with T = 10, by data size: N/20, N/4 and N keys (3, 4 and 5 levels at
//!   4M keys).
//! - Fig. 6: the page cache, the NVM, PCIe and SSD models, and `O_DIRECT` reads of this disk.
//! - Fig. 7: bits per key (NVM and PCIe); Figs. 8-9: the fraction of non-empty lookups (NVM
//!   and SSD).
//!
//! A tree is loaded, measured for every figure that uses it, and dropped before the next
//! one loads: at most two trees of a few gigabytes are on disk at once.

use std::error::Error;

use shamba::lab::DeviceModel;
use shamba_cli::bench::keys::KeyDistribution;
use shamba_cli::bench::report::PhaseResult;
use shamba_filter::HashFn;

use crate::args::ExpArgs;
use crate::hash_sharing::on_engine::{digest_ns, hash_ns, pair};
use crate::hash_sharing::seed_shape::{self, Loader, KEY_SIZE, VALUE_SIZE};
use crate::support::figures::{gain_pct, tables_per_op, MEASUREMENT_NOTE};
use crate::support::lookups::ReadSpec;
use crate::support::report::{Cell, Plot, Report, Table};
use crate::support::tree::LoadedTree;

/// Entry bytes of Fig. 5a's trees: the largest key (1 KiB) with the main tree's value.
const ENTRY_5A: usize = 1024 + VALUE_SIZE;
/// The digests compared: ours and the seed's.
const DIGESTS: [HashFn; 2] = [HashFn::Xxh3_128, HashFn::Murmur64A];
/// Devices whose reads are slow (100 us or a real disk): fewer lookups with found keys.
const SLOW: [&str; 2] = ["ssd", "disk"];

/// What one run measures.
struct Plan {
    key_sizes: Vec<usize>,
    /// Fig. 5b's smaller trees, as divisors of N (the largest is the main tree).
    height_divisors: Vec<u64>,
    devices: Vec<&'static str>,
    bits: Vec<f64>,
    fractions: Vec<f64>,
    warmup: u64,
    reads: u64,
    repeats: usize,
}

impl Plan {
    /// Fig. 5b's divisors: with full levels, powers of T, so each smaller tree is whole
    /// levels fewer over the same L1.
    fn height_divisors(&self, loader: Loader) -> Vec<u64> {
        match loader {
            Loader::Leveled => self.height_divisors.clone(),
            Loader::Full(levels) => (1..levels.min(3) as u32).rev().map(|k| 10u64.pow(k)).collect(),
        }
    }

    fn new(quick: bool) -> Plan {
        let devices = vec!["none", "nvm", "pcie", "ssd", "disk"];
        if quick {
            Plan {
                key_sizes: vec![64, 1024],
                height_divisors: vec![20],
                devices,
                bits: vec![8.0, 10.0],
                fractions: vec![0.0, 1.0],
                warmup: 1_000,
                reads: 2_000,
                repeats: 4,
            }
        } else {
            Plan {
                key_sizes: vec![64, 256, 512, 1024],
                height_divisors: vec![20, 4],
                devices,
                bits: vec![8.0, 10.0, 12.0, 14.0],
                fractions: vec![0.0, 0.25, 0.5, 0.75, 1.0],
                warmup: 5_000,
                reads: 5_000,
                repeats: 20,
            }
        }
    }
}

/// A shared and an unshared measurement of the same lookups on one tree.
#[derive(Clone)]
struct Point {
    shared: PhaseResult,
    unshared: PhaseResult,
}

impl Point {
    fn gain(&self) -> f64 {
        gain_pct(self.unshared.ns_per_op, self.shared.ns_per_op)
    }
}

/// Measure `spec` shared and unshared on `tree` opened on `device`.
fn point(tree: &LoadedTree, device: &str, repeats: usize, spec: &ReadSpec) -> Result<Point, Box<dyn Error>> {
    let db = seed_shape::open(tree, device)?;
    let (shared, unshared) = pair(&db, tree.spec.num, tree.spec.key_size, repeats, spec)?;
    db.close()?;
    Ok(Point { shared, unshared })
}

/// One row of a height sweep.
struct Height {
    digest: HashFn,
    num: u64,
    mb: f64,
    levels: usize,
    p: Point,
}

/// Run the experiment at the seed's shape with `num` keys in the main tree.
pub(crate) fn run(args: &ExpArgs, num: u64) -> Result<Report, Box<dyn Error>> {
    let plan = Plan::new(args.quick);
    let mut report = Report::new("hash-sharing");
    let dist = args.workload.single(KeyDistribution::Uniform);
    let empty = args.workload.spec(dist, ReadSpec::empty(plan.warmup, plan.reads, args.seed));
    let loader = Loader::of(args.full_levels);
    let load_as = |n: u64, key: usize, value: usize, bits: f64, digest: HashFn, loader: Loader| {
        let tree = seed_shape::load(n, key, value, bits, digest, args.seed, loader)?;
        report_tree(&tree, digest);
        Ok::<LoadedTree, Box<dyn Error>>(tree)
    };
    let load =
        |n: u64, key: usize, value: usize, bits: f64, digest: HashFn| load_as(n, key, value, bits, digest, loader);
    let mut notes = Vec::new();
    let mut note_tree = |tree: &LoadedTree, what: &str| {
        notes.push(format!(
            "{what} ({}): {} (loaded in {:.0} s)",
            tree.spec.options.lab.digest_hash.name(),
            tree.describe(),
            tree.load_seconds
        ));
    };

    // The main trees (N keys of 512 B, 10 bits/key), one per digest: Figs. 6, 8-9, the
    // top of 5b and Fig. 7's 10 bits/key.
    let mut devices: Vec<(HashFn, &str, Point)> = Vec::new();
    let mut fractions: Vec<(HashFn, &str, f64, Point)> = Vec::new();
    let mut heights: Vec<Height> = Vec::new();
    let mut bits: Vec<(f64, &str, Point)> = Vec::new();
    let main_mb = mb(num, KEY_SIZE + VALUE_SIZE);
    for digest in DIGESTS {
        let tree = load(num, KEY_SIZE, VALUE_SIZE, 10.0, digest)?;
        note_tree(&tree, "main tree");
        for &dev in &plan.devices {
            devices.push((digest, dev, point(&tree, dev, plan.repeats, &empty)?));
        }
        for dev in ["nvm", "ssd"] {
            // A found key costs a device read: on the slow device keep the runs short.
            let (reads, repeats) =
                if SLOW.contains(&dev) { (plan.reads / 2, plan.repeats / 4) } else { (plan.reads, plan.repeats) };
            for &alpha in &plan.fractions {
                let spec = ReadSpec { existing: alpha, reads, warmup: plan.warmup.min(reads), ..empty.clone() };
                fractions.push((digest, dev, alpha, point(&tree, dev, repeats.max(2), &spec)?));
            }
        }
        // The same empty lookups on the same tree: Fig. 6's points serve Figs. 5b and 7.
        let measured = |dev: &str| devices.iter().find(|r| r.0 == digest && r.1 == dev).map(|r| r.2.clone());
        if digest == HashFn::Xxh3_128 && plan.bits.contains(&10.0) {
            for dev in ["nvm", "pcie"] {
                let p = match measured(dev) {
                    Some(p) => p,
                    None => point(&tree, dev, plan.repeats, &empty)?,
                };
                bits.push((10.0, dev, p));
            }
        }
        let top = match measured("nvm") {
            Some(p) => p,
            None => point(&tree, "nvm", plan.repeats, &empty)?,
        };
        heights.push(Height { digest, num, mb: main_mb, levels: tree.levels(), p: top });
    }

    // Fig. 5b: the smaller trees of each digest (with full levels, each a level or two
    // fewer over the same L1: N/10 keys make 4 levels, N/100 make 3).
    for digest in DIGESTS {
        for &d in &plan.height_divisors(loader) {
            let n = num / d;
            let tree = load_as(n, KEY_SIZE, VALUE_SIZE, 10.0, digest, shorter(loader, d))?;
            note_tree(&tree, &format!("height tree N/{d}"));
            let p = point(&tree, "nvm", plan.repeats, &empty)?;
            heights.push(Height { digest, num: n, mb: mb(n, KEY_SIZE + VALUE_SIZE), levels: tree.levels(), p });
        }
    }
    heights.sort_by(|a, b| (a.digest.name(), a.num).cmp(&(b.digest.name(), b.num)));

    // Fig. 7: the other bits per key (ours).
    for &b in plan.bits.iter().filter(|&&b| (b - 10.0).abs() > 1e-9) {
        let tree = load(num, KEY_SIZE, VALUE_SIZE, b, HashFn::Xxh3_128)?;
        note_tree(&tree, &format!("{b} bits/key tree"));
        for dev in ["nvm", "pcie"] {
            bits.push((b, dev, point(&tree, dev, plan.repeats, &empty)?));
        }
    }
    bits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));

    // Fig. 5a: key sizes at a fixed entry size and the main tree's data bytes.
    let keys_5a = (num as f64 * (KEY_SIZE + VALUE_SIZE) as f64 / ENTRY_5A as f64) as u64;
    let mut key_sizes: Vec<(usize, usize, Point)> = Vec::new();
    for &ks in &plan.key_sizes {
        let tree = load(keys_5a, ks, ENTRY_5A - ks, 10.0, HashFn::Xxh3_128)?;
        note_tree(&tree, &format!("{ks} B key tree"));
        key_sizes.push((ks, tree.levels(), point(&tree, "nvm", plan.repeats, &empty)?));
    }

    report.tables.push(fig5a(&key_sizes, keys_5a, args.seed, &mut report.plots));
    report.tables.push(fig5b(&heights, args.seed, &mut report.plots));
    report.tables.push(fig6(&devices, &mut report.plots));
    report.tables.push(fig7(&bits, &mut report.plots));
    report.tables.push(fig8_9(&fractions, &mut report.plots));
    report.notes.extend(notes);
    match loader {
        Loader::Leveled => {
            report.note("the seed's shape (seed 000: 22 GB bulk-loaded, 5 levels, T = 10, 2 MB files, 512 B keys in 1 KB entries, 10 bits/key, a PCIe SSD with direct I/O by default) at this machine's scale: `lookup-breakdown`'s leveled trees (T = 10, 512 KiB files and memtable, 2 MiB L1), sized in data bytes; filters and indexes pinned, a 256 KiB block cache, so an empty lookup reads a data block only on a false positive");
            report.note("tables/lookup: leveled partial compaction leaves an upper level's files covering parts of the key range (the seed bulk-loads full levels, one table per level per lookup), so an empty lookup visits fewer tables than there are levels, and the unshared baseline hashes once per table visited");
        }
        Loader::Full(levels) => {
            report.note(format!("the seed's shape (seed 000: 22 GB bulk-loaded, 5 levels, T = 10, 2 MB files, 512 B keys in 1 KB entries, 10 bits/key, a PCIe SSD with direct I/O by default) at this machine's scale: {levels} full levels, level i holding 10^(i-1) / 11111 of the keys (at random) and the first and last key, loaded level by level, the deepest first, through the engine's flushes and compactions, 512 KiB files; filters and indexes pinned, a 256 KiB block cache, so an empty lookup reads a data block only on a false positive"));
            report.note("tables/lookup: every level spans the whole key range, so an empty lookup visits one table per level, as in the seed; Fig. 5b's smaller trees keep L1's size and have a level or two fewer (N/10 keys: 4 levels, N/100: 3)");
        }
    }
    report.note(format!(
        "gain % = unshared ns / shared ns - 1; digests: {} (ours) and {} (the seed's, RocksDB's 64-bit MurmurHash), each tree built and probed with its own; per point {} warm-up lookups, then {} alternating shared/unshared runs of the same {} lookups, fastest kept (found keys on ssd: half the lookups, a quarter of the runs); Figs. 5a, 5b and 7 are empty lookups on the NVM model (70 ns per block read)",
        HashFn::Xxh3_128.name(),
        HashFn::Murmur64A.name(),
        plan.warmup,
        plan.repeats,
        plan.reads
    ));
    report.note("devices: none = the OS page cache alone; nvm, pcie, ssd = 70 ns, 10 us, 100 us added per block read; disk = tables read with O_DIRECT from this VM's disk (the seed's direct I/O), nothing emulated");
    report.note("paper figures are plots; the seed column gives the values stated in its text (Fig. 5a: 10-33%, >30% at 1 KB; Fig. 5b: grows with height; Fig. 6: 15% SSD .. >80% RAM disk; Fig. 7: 20% PCIe, >65% NVM at 10 bits/key; Figs. 8-9: 75% at alpha 0, >15% at alpha 1 on the RAM disk)");
    report.note(args.workload.describe(&[dist], num));
    report.note(MEASUREMENT_NOTE);
    Ok(report)
}

/// The loader of Fig. 5b's tree of N/`divisor` keys: with full levels, one level fewer per
/// factor of 10.
fn shorter(loader: Loader, divisor: u64) -> Loader {
    match loader {
        Loader::Leveled => Loader::Leveled,
        Loader::Full(levels) => Loader::Full(levels.saturating_sub(divisor.max(1).ilog10() as usize).max(1)),
    }
}

/// Data megabytes of `num` entries of `entry` bytes.
fn mb(num: u64, entry: usize) -> f64 {
    (num * entry as u64) as f64 / 1e6
}

/// Progress on stderr: loads of gigabytes take minutes.
fn report_tree(tree: &LoadedTree, digest: HashFn) {
    eprintln!("loaded in {:.0} s ({}): {}", tree.load_seconds, digest.name(), tree.describe());
}

fn fig5a(rows: &[(usize, usize, Point)], keys: u64, seed: u64, plots: &mut Vec<Plot>) -> Table {
    let mut t = Table::new(
        "fig5a-key-size",
        &format!(
            "Fig. 5a at the seed's shape: empty-lookup latency vs key size ({keys} keys of {ENTRY_5A} B entries, leveled T = 10, NVM model, xxh3-128)"
        ),
        &[
            "key B",
            "levels",
            "tables/lookup",
            "ours shared ns",
            "ours unshared ns",
            "ours gain %",
            "xxh3-128 digest ns",
            "murmur64a digest ns",
            "ours hash ns/lookup shared",
            "ours hash ns/lookup unshared",
            "seed gain %",
        ],
    );
    let mut pts = Vec::new();
    for (ks, levels, p) in rows {
        let seed_gain = match ks {
            1024 => "> 30 (1 KB)",
            256 => "~10 (outlier)",
            _ => "10-33",
        };
        t.row(vec![
            Cell::num(*ks as f64, 0),
            Cell::num(*levels as f64, 0),
            Cell::num(tables_per_op(&p.shared), 2),
            Cell::num(p.shared.ns_per_op, 0),
            Cell::num(p.unshared.ns_per_op, 0),
            Cell::num(p.gain(), 1),
            Cell::num(digest_ns(HashFn::Xxh3_128, *ks, seed), 1),
            Cell::num(digest_ns(HashFn::Murmur64A, *ks, seed), 1),
            Cell::opt(hash_ns(&p.shared), 0),
            Cell::opt(hash_ns(&p.unshared), 0),
            Cell::text(seed_gain),
        ]);
        pts.push((*ks as f64, p.gain()));
    }
    let mut plot =
        Plot::new("fig5a", "Hash-sharing gain vs key size, seed's shape (seed 000 Fig. 5a)", "key bytes", "gain %")
            .log(true, false);
    plot.series("ours (xxh3-128)", pts);
    plots.push(plot);
    t
}

fn fig5b(rows: &[Height], seed: u64, plots: &mut Vec<Plot>) -> Table {
    let mut t = Table::new(
        "fig5b-height",
        "Fig. 5b at the seed's shape: empty-lookup latency vs tree height (leveled T = 10, 512 B keys, NVM model)",
        &[
            "digest",
            "keys",
            "data MB",
            "levels",
            "tables/lookup",
            "ours shared ns",
            "ours unshared ns",
            "ours gain %",
            "ours unshared - shared ns",
            "ours hash ns/lookup shared",
            "ours hash ns/lookup unshared",
            "model hash ns/lookup unshared",
            "seed",
        ],
    );
    let mut plot =
        Plot::new("fig5b", "Hash-sharing gain vs levels, seed's shape (seed 000 Fig. 5b)", "levels", "gain %");
    for digest in DIGESTS {
        let one = digest_ns(digest, KEY_SIZE, seed);
        let mut pts = Vec::new();
        for h in rows.iter().filter(|h| h.digest == digest) {
            t.row(vec![
                Cell::text(digest.name()),
                Cell::num(h.num as f64, 0),
                Cell::num(h.mb, 0),
                Cell::num(h.levels as f64, 0),
                Cell::num(tables_per_op(&h.p.shared), 2),
                Cell::num(h.p.shared.ns_per_op, 0),
                Cell::num(h.p.unshared.ns_per_op, 0),
                Cell::num(h.p.gain(), 1),
                Cell::num(h.p.unshared.ns_per_op - h.p.shared.ns_per_op, 0),
                Cell::opt(hash_ns(&h.p.shared), 0),
                Cell::opt(hash_ns(&h.p.unshared), 0),
                Cell::num(one * (1.0 + tables_per_op(&h.p.unshared)), 0),
                Cell::text("gain grows with height"),
            ]);
            pts.push((h.levels as f64, h.p.gain()));
        }
        plot.series(&format!("ours ({})", digest.name()), pts);
    }
    plots.push(plot);
    t
}

fn fig6(rows: &[(HashFn, &str, Point)], plots: &mut Vec<Plot>) -> Table {
    let mut t = Table::new(
        "fig6-device",
        "Fig. 6 at the seed's shape: empty lookups per device (512 B keys, 10 bits/key, leveled T = 10)",
        &[
            "digest",
            "device",
            "device ns/read",
            "tables/lookup",
            "I/Os per lookup",
            "ours shared ns",
            "ours unshared ns",
            "ours gain %",
            "ours hash ns/lookup shared",
            "ours hash ns/lookup unshared",
            "seed gain %",
        ],
    );
    let mut plot = Plot::new(
        "fig6",
        "Hash-sharing gain vs device, seed's shape (seed 000 Fig. 6; disk = O_DIRECT, plotted at 100 ms)",
        "device ns per read",
        "gain %",
    )
    .log(true, false);
    for digest in DIGESTS {
        let mut pts = Vec::new();
        for (_, dev, p) in rows.iter().filter(|r| r.0 == digest) {
            let nanos = DeviceModel::parse(dev).map(|d| d.nanos());
            let seed = match *dev {
                "ssd" => "15",
                "pcie" => "20 (PCIe, direct I/O)",
                "disk" => "15-20 (direct I/O)",
                "none" => "> 80 (RAM disk)",
                _ => "-",
            };
            t.row(vec![
                Cell::text(digest.name()),
                Cell::text(*dev),
                Cell::opt(nanos.map(|n| n as f64), 0),
                Cell::num(tables_per_op(&p.shared), 2),
                Cell::num(p.shared.ios_per_op, 4),
                Cell::num(p.shared.ns_per_op, 0),
                Cell::num(p.unshared.ns_per_op, 0),
                Cell::num(p.gain(), 1),
                Cell::opt(hash_ns(&p.shared), 0),
                Cell::opt(hash_ns(&p.unshared), 0),
                Cell::text(seed),
            ]);
            pts.push((nanos.unwrap_or(100_000_000).max(1) as f64, p.gain()));
        }
        plot.series(&format!("ours ({})", digest.name()), pts);
    }
    plots.push(plot);
    t
}

fn fig7(rows: &[(f64, &str, Point)], plots: &mut Vec<Plot>) -> Table {
    let mut t = Table::new(
        "fig7-bits",
        "Fig. 7 at the seed's shape: hash-sharing gain vs bits per key (512 B keys, leveled T = 10, xxh3-128)",
        &[
            "bits/key",
            "device",
            "tables/lookup",
            "fp per lookup",
            "ours shared ns",
            "ours unshared ns",
            "ours gain %",
            "seed gain %",
        ],
    );
    let mut plot =
        Plot::new("fig7", "Hash-sharing gain vs bits/key, seed's shape (seed 000 Fig. 7)", "bits per key", "gain %");
    for dev in ["nvm", "pcie"] {
        let mut pts = Vec::new();
        for (b, _, p) in rows.iter().filter(|r| r.1 == dev) {
            let seed = match (dev, *b as u32) {
                ("nvm", 10) => "> 65",
                ("pcie", 10) => "20",
                _ => "grows with bits",
            };
            t.row(vec![
                Cell::num(*b, 0),
                Cell::text(dev),
                Cell::num(tables_per_op(&p.shared), 2),
                Cell::num(p.shared.false_positives_per_op, 4),
                Cell::num(p.shared.ns_per_op, 0),
                Cell::num(p.unshared.ns_per_op, 0),
                Cell::num(p.gain(), 1),
                Cell::text(seed),
            ]);
            pts.push((*b, p.gain()));
        }
        plot.series(&format!("ours {dev}"), pts);
    }
    plots.push(plot);
    t
}

fn fig8_9(rows: &[(HashFn, &str, f64, Point)], plots: &mut Vec<Plot>) -> Table {
    let mut t = Table::new(
        "fig8-9-nonempty",
        "Figs. 8-9 at the seed's shape: hash-sharing gain vs fraction of non-empty lookups (512 B keys, leveled T = 10)",
        &[
            "digest",
            "device",
            "non-empty",
            "I/Os per lookup",
            "ours shared ns",
            "ours unshared ns",
            "ours gain %",
            "seed gain %",
        ],
    );
    let mut plot = Plot::new(
        "fig8-9",
        "Hash-sharing gain vs non-empty fraction, seed's shape (seed 000 Figs. 8-9)",
        "fraction non-empty",
        "gain %",
    );
    for digest in DIGESTS {
        for dev in ["nvm", "ssd"] {
            let mut pts = Vec::new();
            for (_, _, alpha, p) in rows.iter().filter(|r| r.0 == digest && r.1 == dev) {
                let seed = match (dev, *alpha) {
                    ("nvm", 0.0) => "75 (RAM disk)",
                    ("nvm", 1.0) => "> 15 (RAM disk)",
                    _ => "falls with alpha",
                };
                t.row(vec![
                    Cell::text(digest.name()),
                    Cell::text(dev),
                    Cell::num(*alpha, 2),
                    Cell::num(p.shared.ios_per_op, 3),
                    Cell::num(p.shared.ns_per_op, 0),
                    Cell::num(p.unshared.ns_per_op, 0),
                    Cell::num(p.gain(), 1),
                    Cell::text(seed),
                ]);
                pts.push((*alpha, p.gain()));
            }
            plot.series(&format!("ours {dev} ({})", digest.name()), pts);
        }
    }
    plots.push(plot);
    t
}
