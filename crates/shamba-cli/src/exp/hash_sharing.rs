//! `shamba exp hash-sharing` (seed 000, Fig. 5-9): empty-lookup latency with one digest
//! per lookup shared by every table (`ReadLab::share_hash`) against one digest per table,
//! on the engine, over key size (Fig. 5a), tree height with T = 2 (Fig. 5b), device latency
//! (Fig. 6), bits per key (Fig. 7) and the fraction of non-empty lookups (Fig. 8-9).
//!
//! Filters and indexes are pinned (in memory); the block cache is tiny, so a false positive
//! or a found key costs a data-block read with the emulated device latency, as the seed's
//! direct I/O does. Shared and unshared runs alternate on the same open database and each
//! keeps its fastest repeat.
//!
//! `--num N` runs the same figures at the seed's shape instead ([`super::hash_sharing_seed`]).

use std::error::Error;
use std::hint::black_box;

use shamba::lab::filter::{BuildPolicy, HashFn};
use shamba::lab::DeviceModel;
use shamba::{CompactionStyle, Db, Options};

use super::engine::{
    describe_tree, gain_pct, load_ids, measure, settle, shuffled_ids, tables_per_op, without_sync, LoadedTree,
    ReadSpec, Shape, TreeSpec, MEASUREMENT_NOTE,
};
use super::measure::{ns_per_op, random_keys};
use super::report::{Cell, Plot, Report, Table};
use super::ExpArgs;
use crate::bench::keys::KeyDistribution;
use crate::bench::report::PhaseResult;

/// Value bytes of every tree (the key is what matters here; small values keep loads short).
const VALUE_SIZE: usize = 64;
/// Block cache of the measured opens: small, so data blocks come from the "device".
const SMALL_CACHE: usize = 256 << 10;

/// Run sizes.
#[derive(Clone)]
struct Plan {
    key_sizes: Vec<usize>,
    bits: Vec<f64>,
    fractions: Vec<f64>,
    devices: Vec<&'static str>,
    /// Keys per flush of every tree.
    flush_keys: u64,
    /// Levels of the key-size, device, bits and fraction trees.
    tree_levels: u32,
    /// Height sweep: the levels at which to measure.
    height_levels: Vec<u32>,
    warmup: u64,
    reads: u64,
    repeats: usize,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                key_sizes: vec![8, 64, 256, 512, 1024],
                bits: vec![8.0, 10.0, 14.0],
                fractions: vec![0.0, 0.5, 1.0],
                devices: vec!["none", "nvm", "pcie", "ssd"],
                flush_keys: 32,
                tree_levels: 8,
                height_levels: (5..=12).collect(),
                warmup: 5_000,
                reads: 5_000,
                repeats: 20,
            }
        } else {
            Plan {
                key_sizes: vec![8, 16, 32, 64, 128, 256, 512, 1024],
                bits: vec![8.0, 10.0, 12.0, 14.0],
                fractions: vec![0.0, 0.25, 0.5, 0.75, 1.0],
                devices: vec!["none", "nvm", "pcie", "ssd"],
                flush_keys: 64,
                tree_levels: 9,
                height_levels: (5..=14).collect(),
                warmup: 20_000,
                reads: 10_000,
                repeats: 20,
            }
        }
    }
}

/// Every tree of this experiment is tiered with T = 2 and flushed every `flush_keys` keys,
/// so after `2^k - 1` flushes it has exactly k levels of one run each, every run spanning the
/// key range (like the seed's bulk-loaded levels): an empty lookup visits k tables. Seed 000
/// Fig. 5b uses T = 2 too; Fig. 5a uses 5 levels with T = 10. (Leveled partial compaction
/// leaves the upper levels covering only parts of the key range, so an empty lookup would
/// visit far fewer tables than there are levels.)
pub(super) fn tall_options() -> Options {
    let shape =
        Shape { write_buffer: 64 << 20, target_file: 64 << 20, level_base: 64 << 20, size_ratio: 2, num_levels: 20 };
    Options { compaction_style: CompactionStyle::Tiered, ..shape.options() }
}

/// Keys of a tall tree with `levels` levels.
pub(super) fn keys_for_levels(flush_keys: u64, levels: u32) -> u64 {
    flush_keys * ((1u64 << levels) - 1)
}

fn tree_spec(plan: &Plan, key_size: usize, bits: f64, seed: u64) -> TreeSpec {
    let mut options = tall_options();
    options.filter_policy = BuildPolicy::uniform(bits);
    TreeSpec {
        num: keys_for_levels(plan.flush_keys, plan.tree_levels),
        key_size,
        value_size: VALUE_SIZE,
        options,
        seed,
        flush_every: Some(plan.flush_keys),
    }
}

/// `base` opened for measuring: filters and indexes pinned, a small block cache, no prefetch,
/// the named device emulated.
pub(super) fn read_options(base: &Options, device: &str) -> Result<Options, Box<dyn Error>> {
    let mut o = base.clone();
    o.cache_capacity = SMALL_CACHE;
    o.cache_index_and_filter_blocks = false;
    // The seed's figures measure sharing alone; prefetching (which needs the shared digest)
    // is measured on its own by `exp prefetch`.
    o.lab.prefetch_filters = false;
    o.lab.device = DeviceModel::parse(device).ok_or_else(|| format!("unknown device {device:?}"))?;
    Ok(o)
}

/// Shared and unshared runs of `spec`: one warm-up, then many short runs of the same
/// lookups alternating between the two; each keeps its fastest run (the one least disturbed
/// by other processes on a shared machine) for timing, and its first for the counters.
pub(super) fn pair(
    db: &Db,
    num: u64,
    key_size: usize,
    repeats: usize,
    spec: &ReadSpec,
) -> Result<(PhaseResult, PhaseResult), Box<dyn Error>> {
    if spec.warmup > 0 {
        measure(db, num, key_size, &ReadSpec { reads: spec.warmup, warmup: 0, ..spec.clone() })?;
    }
    let mut best: [Option<PhaseResult>; 2] = [None, None];
    for _ in 0..repeats {
        for (i, share) in [true, false].into_iter().enumerate() {
            let s = ReadSpec { share_hash: share, warmup: 0, ..spec.clone() };
            let got = measure(db, num, key_size, &s)?;
            match &mut best[i] {
                Some(b) if got.ns_per_op < b.ns_per_op => {
                    b.ns_per_op = got.ns_per_op;
                    b.ops_per_sec = got.ops_per_sec;
                }
                Some(_) => {}
                None => best[i] = Some(got),
            }
        }
    }
    // One more run of each, profiled, for the time spent hashing (kept apart: the clock
    // reads of profiling would slow the timed runs).
    for (i, share) in [true, false].into_iter().enumerate() {
        let profiled =
            measure(db, num, key_size, &ReadSpec { share_hash: share, warmup: 0, profile: true, ..spec.clone() })?;
        if let Some(b) = &mut best[i] {
            b.stage_ns_per_op = profiled.stage_ns_per_op;
        }
    }
    match best {
        [Some(s), Some(u)] => Ok((s, u)),
        _ => Err("no repeats".into()),
    }
}

/// Fastest ns per lookup of `spec` on `tree` opened as shipped: every candidate's filter
/// prefetched before the first probe, which only a shared digest makes possible (the
/// unshared baseline cannot know the probe positions before it hashes per table), once
/// the filters are large enough for that to pay (`Options::prefetch_min_filter_bytes`).
fn with_prefetch(tree: &LoadedTree, plan: &Plan, spec: &ReadSpec) -> Result<f64, Box<dyn Error>> {
    let mut o = read_options(&tree.spec.options, "nvm")?;
    o.lab.prefetch_filters = true;
    let db = tree.open(o)?;
    if spec.warmup > 0 {
        measure(&db, tree.spec.num, tree.spec.key_size, &ReadSpec { reads: spec.warmup, warmup: 0, ..spec.clone() })?;
    }
    let mut best = f64::INFINITY;
    for _ in 0..plan.repeats {
        let r = measure(&db, tree.spec.num, tree.spec.key_size, &ReadSpec { warmup: 0, ..spec.clone() })?;
        best = best.min(r.ns_per_op);
    }
    db.close()?;
    Ok(best)
}

/// Measured nanoseconds per lookup spent computing digests (profiled run).
pub(super) fn hash_ns(r: &PhaseResult) -> Option<f64> {
    r.stage_ns_per_op.map(|c| c.hash)
}

/// Nanoseconds to compute one digest of a `key_size`-byte key.
pub(super) fn digest_ns(hash_fn: HashFn, key_size: usize, seed: u64) -> f64 {
    let keys = random_keys(1024, key_size, seed);
    ns_per_op(keys.len() * 200, 5, || {
        for _ in 0..200 {
            for k in &keys {
                black_box(hash_fn.digest(black_box(k)));
            }
        }
    })
}

/// Digests an empty lookup computes: one, plus one per table visited when unshared.
fn digests_per_lookup(r: &PhaseResult, shared: bool) -> f64 {
    if shared {
        1.0
    } else {
        1.0 + tables_per_op(r)
    }
}

/// Run the experiment.
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    if let Some(num) = args.num {
        return super::hash_sharing_seed::run(args, num);
    }
    let plan = Plan::new(args.quick);
    let mut report = Report::new("hash-sharing");
    let dist = args.workload.single(KeyDistribution::Uniform);
    let empty = args.workload.spec(dist, ReadSpec::empty(plan.warmup, plan.reads, args.seed));

    // Fig. 5a: key size, NVM.
    let mut t5a = Table::new(
        "fig5a-key-size",
        "Fig. 5a: empty-lookup latency vs key size (NVM emulation, 10 bits/key, tiered T = 2)",
        &[
            "key B",
            "levels",
            "tables/lookup",
            "ours shared ns",
            "ours unshared ns",
            "ours gain %",
            "ours as shipped ns",
            "gain as shipped %",
            "digest ns",
            "ours hash ns/lookup shared",
            "ours hash ns/lookup unshared",
            "seed gain %",
        ],
    );
    let mut p5a = Plot::new("fig5a", "Empty lookup vs key size (seed 000 Fig. 5a)", "key bytes", "ns per lookup")
        .log(true, false);
    let (mut pts_s, mut pts_u) = (Vec::new(), Vec::new());
    let mut tree512 = None;
    for &ks in &plan.key_sizes {
        let tree = LoadedTree::load(tree_spec(&plan, ks, 10.0, args.seed))?;
        let db = tree.open(read_options(&tree.spec.options, "nvm")?)?;
        let (s, u) = pair(&db, tree.spec.num, ks, plan.repeats, &empty)?;
        db.close()?;
        let pf = with_prefetch(&tree, &plan, &empty)?;
        let hash = digest_ns(HashFn::Xxh3_128, ks, args.seed);
        let seed_gain = match ks {
            1024 => "> 30 (1 KB)",
            256 => "~10 (outlier)",
            _ => "10-33",
        };
        t5a.row(vec![
            Cell::num(ks as f64, 0),
            Cell::num(tree.levels() as f64, 0),
            Cell::num(tables_per_op(&s), 2),
            Cell::num(s.ns_per_op, 0),
            Cell::num(u.ns_per_op, 0),
            Cell::num(gain_pct(u.ns_per_op, s.ns_per_op), 1),
            Cell::num(pf, 0),
            Cell::num(gain_pct(u.ns_per_op, pf), 1),
            Cell::num(hash, 1),
            Cell::opt(hash_ns(&s), 0),
            Cell::opt(hash_ns(&u), 0),
            Cell::text(seed_gain),
        ]);
        pts_s.push((ks as f64, s.ns_per_op));
        pts_u.push((ks as f64, u.ns_per_op));
        if ks == 512 {
            report.note(format!("512 B tree: {}", tree.describe()));
            tree512 = Some(tree);
        }
    }
    p5a.series("ours shared", pts_s);
    p5a.series("ours unshared", pts_u);
    report.tables.push(t5a);
    report.plots.push(p5a);
    let tree512 = match tree512 {
        Some(t) => t,
        None => LoadedTree::load(tree_spec(&plan, 512, 10.0, args.seed))?,
    };

    height_sweep(&plan, args, HashFn::Xxh3_128, &mut report)?;
    height_sweep(&plan, args, HashFn::Murmur64A, &mut report)?;
    device_sweep(&plan, &tree512, &empty, &mut report)?;
    bits_sweep(&plan, args, &tree512, &empty, &mut report)?;
    fraction_sweep(&plan, &tree512, &empty, &mut report)?;

    report.note("gain % = unshared ns / shared ns - 1 (the seed's 'performance gain'); the bar is >= 20% at 512 B keys, 5+ levels, NVM. 'ours shared' is sharing alone (prefetch off, as in the seed); 'as shipped' is the engine's defaults, whose filter prefetch needs the shared digest and runs once the filters reach 4 MiB (these trees' do not, so it matches 'shared' up to noise), against the same unshared baseline");
    report.note("ours hash ns/lookup = time in Digest::of per lookup from a profiled run (ReadLab::profile; the timed runs are unprofiled); model = one digest's ns (micro-benchmark) x digests per lookup (1 shared; 1 + tables visited unshared: Db::get computes the shared digest before it looks at share_hash). Prefetching is off in these tables (the seed measures sharing alone; `shamba exp prefetch` measures it)");
    report.note("seed 000 used RocksDB's 64-bit MurmurHash; we use xxh3-128, about 2-4x cheaper per byte, so the hashing share of a lookup (and the gain) is smaller at equal key size. The seed's 'NVM' is a RAM disk (a syscall per read): closest to our device 'none' (page-cache pread); our 'nvm' adds 70 ns to that");
    report.note("paper figures are plots; the seed column gives the values stated in the text (Fig. 5a: 10-33%, >30% at 1 KB; Fig. 6: 15% SSD .. >80% NVM; Fig. 7: 20% PCIe, >65% NVM at 10 bits/key; Fig. 9: 75% at alpha 0, >15% at alpha 1)");
    report.note(format!("filters and indexes pinned, block cache {} KiB; per point {} warm-up lookups, then {} alternating shared/unshared runs of the same {} lookups, fastest run kept", SMALL_CACHE >> 10, plan.warmup, plan.repeats, plan.reads));
    report.note(args.workload.describe(&[dist], keys_for_levels(plan.flush_keys, plan.tree_levels)));
    report.note(MEASUREMENT_NOTE);
    Ok(report)
}

/// Fig. 5b: one tree grown flush by flush (tiered, T = 2), measured each time it reaches a
/// new height (512 B keys, NVM), with digests from `hash_fn`: ours (xxh3-128), or the
/// seed's (RocksDB's MurmurHash64A), which costs about twice as much per byte, so sharing
/// saves more of a lookup.
fn height_sweep(plan: &Plan, args: &ExpArgs, hash_fn: HashFn, report: &mut Report) -> Result<(), Box<dyn Error>> {
    let ks = 512;
    let fk = plan.flush_keys / 4;
    let top = plan.height_levels.iter().copied().max().unwrap_or(5);
    let max = keys_for_levels(fk, top);
    let dir = tempfile::tempdir()?;
    let mut options = read_options(&tall_options(), "nvm")?;
    options.filter_policy = BuildPolicy::uniform(10.0);
    options.lab.digest_hash = hash_fn;
    let db = Db::open(dir.path(), without_sync(options))?;
    let ids = shuffled_ids(max, args.seed);
    let hash = digest_ns(hash_fn, ks, args.seed);
    let (name, title) = match hash_fn {
        HashFn::Xxh3_128 => (
            "fig5b-height".to_string(),
            "Fig. 5b: empty-lookup latency vs tree height (tiered T = 2, 512 B keys, NVM emulation)".to_string(),
        ),
        other => (
            format!("fig5b-height-{}", other.name()),
            format!(
                "Fig. 5b with the seed's hash ({}, digest {hash:.0} ns at 512 B): empty-lookup latency vs tree height",
                other.name()
            ),
        ),
    };
    let mut table = Table::new(
        &name,
        &title,
        &[
            "keys",
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
    let mut plot = Plot::new(&name.replace("-height", ""), &title, "levels", "ns per lookup");
    let (mut ps, mut pu, mut hs, mut hu) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (flush, part) in ids.chunks(fk as usize).enumerate() {
        load_ids(&db, part, ks, VALUE_SIZE)?;
        settle(&db)?;
        let flushes = flush as u64 + 1;
        let levels = (flushes + 1).trailing_zeros();
        if !(flushes + 1).is_power_of_two() || !plan.height_levels.contains(&levels) {
            continue;
        }
        let stats = db.stats();
        let (s, u) = pair(
            &db,
            max,
            ks,
            plan.repeats,
            &args.workload.spec(
                args.workload.single(KeyDistribution::Uniform),
                ReadSpec::empty(plan.warmup, plan.reads, args.seed),
            ),
        )?;
        let levels = stats.non_empty_levels();
        let n = flushes * fk;
        table.row(vec![
            Cell::num(n as f64, 0),
            Cell::num(levels as f64, 0),
            Cell::num(tables_per_op(&s), 2),
            Cell::num(s.ns_per_op, 0),
            Cell::num(u.ns_per_op, 0),
            Cell::num(gain_pct(u.ns_per_op, s.ns_per_op), 1),
            Cell::num(u.ns_per_op - s.ns_per_op, 0),
            Cell::opt(hash_ns(&s), 0),
            Cell::opt(hash_ns(&u), 0),
            Cell::num(hash * digests_per_lookup(&u, false), 0),
            Cell::text("gain grows with height"),
        ]);
        let x = levels as f64;
        ps.push((x, s.ns_per_op));
        pu.push((x, u.ns_per_op));
        hs.push((x, hash_ns(&s).unwrap_or(f64::NAN)));
        hu.push((x, hash_ns(&u).unwrap_or(f64::NAN)));
        if n == max && hash_fn == HashFn::Xxh3_128 {
            report.note(format!("height sweep, final tree: {}", describe_tree(&stats, n, ks, VALUE_SIZE)));
        }
    }
    db.close()?;
    plot.series("ours shared", ps);
    plot.series("ours unshared", pu);
    plot.series("ours hashing shared", hs);
    plot.series("ours hashing unshared", hu);
    report.tables.push(table);
    report.plots.push(plot);
    Ok(())
}

/// Fig. 6: device latency, 512 B keys.
fn device_sweep(plan: &Plan, tree: &LoadedTree, empty: &ReadSpec, report: &mut Report) -> Result<(), Box<dyn Error>> {
    let mut table = Table::new(
        "fig6-device",
        "Fig. 6: empty lookups per device (512 B keys, 10 bits/key)",
        &[
            "device",
            "device ns/read",
            "I/Os per lookup",
            "ours shared ns",
            "ours unshared ns",
            "ours gain %",
            "seed gain %",
        ],
    );
    let mut plot = Plot::new("fig6", "Hash-sharing gain vs device (seed 000 Fig. 6)", "device ns per read", "gain %")
        .log(true, false);
    let mut pts = Vec::new();
    for &dev in &plan.devices {
        // Slow devices: fewer lookups (each false positive sleeps).
        let empty = &ReadSpec { reads: if dev == "ssd" { empty.reads / 4 } else { empty.reads }, ..empty.clone() };
        let plan = &if dev == "ssd" { Plan { repeats: 4, ..plan.clone() } } else { plan.clone() };
        let db = tree.open(read_options(&tree.spec.options, dev)?)?;
        let (s, u) = pair(&db, tree.spec.num, tree.spec.key_size, plan.repeats, empty)?;
        db.close()?;
        let nanos = DeviceModel::parse(dev).map_or(0, |d| d.nanos());
        let seed = match dev {
            "ssd" => "15",
            "pcie" => "20",
            "nvm" => "> 80 (RAM disk)",
            _ => "-",
        };
        let gain = gain_pct(u.ns_per_op, s.ns_per_op);
        table.row(vec![
            Cell::text(dev),
            Cell::num(nanos as f64, 0),
            Cell::num(s.ios_per_op, 4),
            Cell::num(s.ns_per_op, 0),
            Cell::num(u.ns_per_op, 0),
            Cell::num(gain, 1),
            Cell::text(seed),
        ]);
        pts.push(((nanos.max(1)) as f64, gain));
    }
    plot.series("ours", pts);
    report.tables.push(table);
    report.plots.push(plot);
    Ok(())
}

/// Fig. 7: bits per key, NVM and PCIe, 512 B keys (one load per setting).
fn bits_sweep(
    plan: &Plan,
    args: &ExpArgs,
    tree10: &LoadedTree,
    empty: &ReadSpec,
    report: &mut Report,
) -> Result<(), Box<dyn Error>> {
    let mut table = Table::new(
        "fig7-bits",
        "Fig. 7: hash-sharing gain vs bits per key (512 B keys)",
        &["bits/key", "device", "fp per lookup", "ours shared ns", "ours unshared ns", "ours gain %", "seed gain %"],
    );
    let mut plot = Plot::new("fig7", "Hash-sharing gain vs bits/key (seed 000 Fig. 7)", "bits per key", "gain %");
    let mut series: Vec<(&str, Vec<(f64, f64)>)> = vec![("nvm", Vec::new()), ("pcie", Vec::new())];
    for &bits in &plan.bits {
        let owned;
        let tree = if (bits - 10.0).abs() < 1e-9 {
            tree10
        } else {
            owned = LoadedTree::load(tree_spec(plan, 512, bits, args.seed))?;
            &owned
        };
        for (dev, pts) in series.iter_mut() {
            let db = tree.open(read_options(&tree.spec.options, dev)?)?;
            let (s, u) = pair(&db, tree.spec.num, tree.spec.key_size, plan.repeats, empty)?;
            db.close()?;
            let seed = match (*dev, bits as u32) {
                ("nvm", 10) => "> 65",
                ("pcie", 10) => "20",
                _ => "grows with bits",
            };
            let gain = gain_pct(u.ns_per_op, s.ns_per_op);
            table.row(vec![
                Cell::num(bits, 0),
                Cell::text(*dev),
                Cell::num(s.false_positives_per_op, 4),
                Cell::num(s.ns_per_op, 0),
                Cell::num(u.ns_per_op, 0),
                Cell::num(gain, 1),
                Cell::text(seed),
            ]);
            pts.push((bits, gain));
        }
    }
    for (dev, pts) in series {
        plot.series(&format!("ours {dev}"), pts);
    }
    report.tables.push(table);
    report.plots.push(plot);
    Ok(())
}

/// Fig. 8-9: fraction of lookups for existing keys, SSD and NVM, 512 B keys.
fn fraction_sweep(plan: &Plan, tree: &LoadedTree, empty: &ReadSpec, report: &mut Report) -> Result<(), Box<dyn Error>> {
    let mut table = Table::new(
        "fig8-9-nonempty",
        "Fig. 8-9: hash-sharing gain vs fraction of non-empty lookups (512 B keys)",
        &["non-empty", "device", "I/Os per lookup", "ours shared ns", "ours unshared ns", "ours gain %", "seed gain %"],
    );
    let mut plot = Plot::new(
        "fig8-9",
        "Hash-sharing gain vs non-empty fraction (seed 000 Fig. 8-9)",
        "fraction non-empty",
        "gain %",
    );
    for dev in ["nvm", "ssd"] {
        let db = tree.open(read_options(&tree.spec.options, dev)?)?;
        // A found key costs a device read: on the emulated SSD (100 us each) keep it short.
        let plan = &if dev == "ssd" { Plan { repeats: 2, reads: 1_000, ..plan.clone() } } else { plan.clone() };
        let empty = &ReadSpec { warmup: empty.warmup.min(plan.reads), ..empty.clone() };
        let mut pts = Vec::new();
        for &alpha in &plan.fractions {
            let spec = ReadSpec { existing: alpha, ..empty.clone() };
            let (s, u) = pair(&db, tree.spec.num, tree.spec.key_size, plan.repeats, &spec)?;
            let seed = match (dev, alpha) {
                ("nvm", 0.0) => "75 (RAM disk)",
                ("nvm", 1.0) => "> 15 (RAM disk)",
                _ => "falls with alpha",
            };
            let gain = gain_pct(u.ns_per_op, s.ns_per_op);
            table.row(vec![
                Cell::num(alpha, 2),
                Cell::text(dev),
                Cell::num(s.ios_per_op, 3),
                Cell::num(s.ns_per_op, 0),
                Cell::num(u.ns_per_op, 0),
                Cell::num(gain, 1),
                Cell::text(seed),
            ]);
            pts.push((alpha, gain));
        }
        db.close()?;
        plot.series(&format!("ours {dev}"), pts);
    }
    report.tables.push(table);
    report.plots.push(plot);
    Ok(())
}
