//! `shamba bench`: load a database, then time point lookups, db_bench style.
//!
//! The flags ([`BenchArgs`]) describe stable engine options only. A caller that sets more
//! (the lab binary's `shamba-lab bench`, with its device model and lookup variants) passes a
//! [`Tuning`] that adjusts the options and read options the flags describe, and the same load
//! and read loops run: one copy of the code for both commands.

pub mod keys;
pub mod report;
pub mod ycsb;
pub mod ycsb_requests;

use indicatif::{ProgressBar, ProgressStyle};
use keys::{key_into, KeyDistribution, LookupIds, RankSampler, Values};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use report::PhaseResult;
use shamba::filter::{Allocation, FilterLayout, ModuleSizes};
use shamba::{
    CompactionPriority, CompactionStyle, Compression, Db, Options, ReadOptions, Readable, Stats, WriteBatch,
    WriteOptions,
};
use shamba::{ElasticPolicy, ProbePolicy, ShambaPolicy, Skipping};
use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `shamba bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Database directory (default: a fresh temporary directory, deleted afterwards).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Keys to load.
    #[arg(long, default_value_t = 1_000_000)]
    pub num: u64,
    /// Key size in bytes (at least 8).
    #[arg(long, default_value_t = 16)]
    pub key_size: usize,
    /// Value size in bytes.
    #[arg(long, default_value_t = 100)]
    pub value_size: usize,
    /// Values like db_bench's `--compression_ratio`: this fraction of each value random
    /// (printable) bytes, the rest a repeat of them. Without it values are the alphabet
    /// repeated, which any compressor shrinks many times over.
    #[arg(long)]
    pub compression_ratio: Option<f64>,
    /// Block compression of every level (but the bottom's with --bottommost-compression).
    #[arg(long, value_enum, default_value_t = CompressionFlag::None)]
    pub compression: CompressionFlag,
    /// Block compression of tables compacted into the bottom of the tree.
    #[arg(long, value_enum)]
    pub bottommost_compression: Option<CompressionFlag>,
    /// Load order.
    #[arg(long, value_enum, default_value_t = Order::Random)]
    pub order: Order,
    /// Skip the load (read an existing `--db` loaded with the same --num and key size).
    #[arg(long)]
    pub no_load: bool,
    /// Lookups per read phase.
    #[arg(long, default_value_t = 1_000_000)]
    pub reads: u64,
    /// Read phases to run.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = vec![ReadKind::Existing, ReadKind::Missing, ReadKind::Mixed])]
    pub read: Vec<ReadKind>,
    /// Fraction of lookups for existing keys in the mixed phase.
    #[arg(long, default_value_t = 0.5)]
    pub existing_fraction: f64,
    /// How lookups pick keys.
    #[arg(long, value_enum, default_value_t = KeyDistribution::Uniform)]
    pub distribution: KeyDistribution,
    /// Zipf exponent (`zipfian`, `zipf-contiguous`).
    #[arg(long, default_value_t = 0.99)]
    pub zipf_theta: f64,
    /// Standard deviation of `normal`, in keys (default: a tenth of the keys).
    #[arg(long)]
    pub normal_sd: Option<f64>,
    /// Reader threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Look keys up N at a time with `multi_get` in the read phases (1: single gets).
    #[arg(long, default_value_t = 1)]
    pub multi_get: usize,
    /// Filter bits per key.
    #[arg(long, default_value_t = 10.0)]
    pub bits_per_key: f64,
    /// Filter layout: one part, modules probed in order, or elastic units.
    #[arg(long, value_enum, default_value_t = Layout::Whole)]
    pub layout: Layout,
    /// Modules or units per filter (with --layout modules-eq, modules-prop, units).
    #[arg(long, default_value_t = 2)]
    pub parts: u8,
    /// Bits per key of the first module (with --layout modules-prop).
    #[arg(long, default_value_t = 2.0)]
    pub first_bits_per_key: f64,
    /// Ribbon filters from this level down (Bloom above).
    #[arg(long)]
    pub ribbon_from_level: Option<usize>,
    /// Monkey: spread the same filter memory over levels to minimise total false positives.
    #[arg(long)]
    pub monkey: bool,
    /// SHaMBa policies: a probe that must read a filter part reads it and the later ones
    /// it may probe with one read, as many as make a further read unlikely
    /// (`ShambaPolicy::read_rest_together`).
    #[arg(long)]
    pub read_rest_together: bool,
    /// Which filter parts lookups probe.
    #[arg(long, value_enum, default_value_t = Policy::Plain)]
    pub policy: Policy,
    /// Elastic: MiB of filter units that may be enabled at once.
    #[arg(long, default_value_t = 8.0)]
    pub elastic_budget_mb: f64,
    /// Elastic: lookups after which an unused table is cold.
    #[arg(long, default_value_t = 1000)]
    pub life_time: u64,
    /// Block cache size in MiB.
    #[arg(long, default_value_t = 32.0)]
    pub cache_mb: f64,
    /// Block cache size as a percentage of the loaded database's filter + index bytes
    /// (overrides --cache-mb for the read phases: the database is reopened with it).
    #[arg(long)]
    pub cache_pct: Option<f64>,
    /// Hold at most this many bytes of filters in memory, across all tables
    /// (`Options::filter_memory_budget`): the filter manager keeps the parts that save the
    /// most reads per byte and reads or skips the others, as the probe policy says.
    #[arg(long, value_name = "BYTES")]
    pub filter_memory_budget: Option<u64>,
    /// Partition index and filters into ~4 KiB blocks behind a pinned top-level index.
    #[arg(long)]
    pub partition: bool,
    /// Keep index and filter blocks in the block cache instead of pinning them.
    #[arg(long)]
    pub cache_index_and_filter: bool,
    /// Most MiB of index and filter blocks pinned in memory, all tables together; a table
    /// past it keeps them in the block cache (default: the engine's).
    #[arg(long)]
    pub pinned_metadata_mb: Option<f64>,
    /// Memtable size in MiB.
    #[arg(long, default_value_t = 8.0)]
    pub write_buffer_mb: f64,
    /// Target SST size in MiB.
    #[arg(long, default_value_t = 8.0)]
    pub target_file_mb: f64,
    /// Size of L1 in MiB.
    #[arg(long, default_value_t = 64.0)]
    pub level_base_mb: f64,
    /// Size ratio T between levels.
    #[arg(long, default_value_t = 10)]
    pub size_ratio: u32,
    /// Compaction style.
    #[arg(long, value_enum, default_value_t = Style::Leveled)]
    pub compaction: Style,
    /// Which file of a leveled level compacts next.
    #[arg(long, value_enum, default_value_t = Priority::RoundRobin)]
    pub compaction_priority: Priority,
    /// Threads one compaction may merge on (`Options::max_subcompactions`).
    #[arg(long, default_value_t = Options::default().max_subcompactions)]
    pub max_subcompactions: usize,
    /// Added to the compaction threads' nice value, 0-19 (`Options::background_nice`).
    #[arg(long, default_value_t = Options::default().background_nice)]
    pub background_nice: u8,
    /// End compaction outputs where the outputs' size runs out, not at the next boundary
    /// between files of the level below (`Options::align_compaction_outputs` off).
    #[arg(long)]
    pub no_align_outputs: bool,
    /// Read tables with O_DIRECT (no OS page cache): real device reads on a cache miss.
    #[arg(long)]
    pub direct_io: bool,
    /// Do not keep the data blocks lookups read in the block cache (`ReadOptions::fill_cache`
    /// false), like a direct-I/O reader with no cache of its own: every data-block read the
    /// filters let through costs a device read.
    #[arg(long)]
    pub no_fill_cache: bool,
    /// Run YCSB's core workloads on the loaded database instead of the read phases (one
    /// run each, in the order given: D and E insert records the later ones see). Use
    /// `--value-size 1000` for YCSB's record of 10 fields of 100 bytes.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub ycsb: Vec<ycsb::Workload>,
    /// Operations per YCSB workload (default: --reads).
    #[arg(long)]
    pub ycsb_ops: Option<u64>,
    /// Fields per YCSB record: an update rewrites one of them.
    #[arg(long, default_value_t = 10)]
    pub ycsb_fields: usize,
    /// Random seed.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Compression flag.
#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum CompressionFlag {
    /// None.
    None,
    /// LZ4.
    Lz4,
    /// Zstandard at level 3.
    Zstd,
}

impl CompressionFlag {
    fn compression(self) -> Compression {
        match self {
            CompressionFlag::None => Compression::None,
            CompressionFlag::Lz4 => Compression::Lz4,
            CompressionFlag::Zstd => Compression::zstd(),
        }
    }
}

/// Load order.
#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum Order {
    /// Keys in a random permutation.
    Random,
    /// Keys in ascending order.
    Sequential,
}

/// A read phase.
#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum ReadKind {
    /// Only loaded keys.
    Existing,
    /// Only keys never loaded (inside the key range).
    Missing,
    /// `--existing-fraction` loaded keys, the rest missing.
    Mixed,
}

/// Filter layout flag.
#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum Layout {
    /// One part per table.
    Whole,
    /// Equal modules probed in order (SHaMBa-eq).
    ModulesEq,
    /// A small first module, the rest split equally (SHaMBa-prop).
    ModulesProp,
    /// Elastic units.
    Units,
}

/// Probe policy flag.
#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum Policy {
    /// Probe every part.
    Plain,
    /// No filter probes on the last level.
    NoLastLevel,
    /// SHaMBa, probing every module in order.
    Shamba,
    /// SHaMBa with partial skipping.
    ShambaP,
    /// SHaMBa with full skipping.
    ShambaF,
    /// SHaMBa fetching a module only while a miss is at least as likely as a hit.
    ShambaOdds,
    /// ElasticBF.
    Elastic,
}

/// Compaction style flag.
#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum Style {
    /// Leveled.
    Leveled,
    /// Tiered.
    Tiered,
}

/// Compaction priority flag (`Options::compaction_priority`).
#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum Priority {
    /// The file overlapping the fewest bytes below per byte of its own.
    MinOverlappingRatio,
    /// The next file in key order after the last one compacted.
    RoundRobin,
}

/// `BenchArgs` as a top-level parser, so code can build the flags' defaults.
#[derive(Debug, clap::Parser)]
struct DefaultBenchArgs {
    #[command(flatten)]
    args: BenchArgs,
}

impl BenchArgs {
    /// Every flag at its default value (what `shamba bench` alone would run).
    pub fn defaults() -> BenchArgs {
        use clap::Parser as _;
        DefaultBenchArgs::parse_from(["bench"]).args
    }

    /// How the load makes values.
    pub fn values(&self) -> Values {
        self.compression_ratio.map_or(Values::Alphabet, Values::Ratio)
    }

    /// The engine options these flags describe.
    pub fn options(&self) -> Options {
        let mib = |x: f64| (x * 1024.0 * 1024.0) as u64;
        let mut o = Options {
            write_buffer_size: mib(self.write_buffer_mb) as usize,
            target_file_size: mib(self.target_file_mb),
            max_bytes_for_level_base: mib(self.level_base_mb),
            size_ratio: self.size_ratio,
            cache_capacity: mib(self.cache_mb) as usize,
            cache_index_and_filter_blocks: self.cache_index_and_filter,
            partition_index_and_filters: self.partition,
            compression: self.compression.compression(),
            bottommost_compression: self.bottommost_compression.map(CompressionFlag::compression),
            compaction_style: match self.compaction {
                Style::Leveled => CompactionStyle::Leveled,
                Style::Tiered => CompactionStyle::Tiered,
            },
            compaction_priority: match self.compaction_priority {
                Priority::MinOverlappingRatio => CompactionPriority::MinOverlappingRatio,
                Priority::RoundRobin => CompactionPriority::RoundRobin,
            },
            align_compaction_outputs: !self.no_align_outputs,
            max_subcompactions: self.max_subcompactions,
            background_nice: self.background_nice,
            ..Options::default()
        };
        if self.direct_io {
            o.storage = std::sync::Arc::new(shamba::storage::DirectReadFsStorage);
        }
        o.filter_memory_budget = self.filter_memory_budget;
        if let Some(limit) = self.pinned_metadata_mb {
            o.pinned_metadata_limit = mib(limit);
        }
        o.filter_policy.bits_per_key = self.bits_per_key;
        o.filter_policy.ribbon_from_level = self.ribbon_from_level;
        if self.monkey {
            o.filter_policy.allocation = Allocation::Monkey;
        }
        o.filter_policy.layout = match self.layout {
            Layout::Whole => FilterLayout::Whole,
            Layout::ModulesEq => FilterLayout::Modules(ModuleSizes::Equal { count: self.parts }),
            Layout::ModulesProp => FilterLayout::Modules(ModuleSizes::Proportional {
                count: self.parts,
                first_bits_per_key: self.first_bits_per_key,
            }),
            Layout::Units => FilterLayout::Units { count: self.parts },
        };
        let together = self.read_rest_together;
        let shamba = |skipping| {
            ProbePolicy::Shamba(ShambaPolicy { skipping, read_rest_together: together, ..ShambaPolicy::default() })
        };
        o.probe_policy = match self.policy {
            Policy::Plain => ProbePolicy::Plain,
            Policy::NoLastLevel => ProbePolicy::NoLastLevel,
            Policy::Shamba => shamba(Skipping::None),
            Policy::ShambaP => shamba(Skipping::Partial),
            Policy::ShambaF => shamba(Skipping::Full),
            Policy::ShambaOdds => shamba(Skipping::HitOdds),
            Policy::Elastic => ProbePolicy::Elastic(ElasticPolicy {
                life_time: self.life_time,
                budget_bytes: mib(self.elastic_budget_mb),
            }),
        };
        o
    }

    /// [`BenchArgs::options`] as `tuning` adjusts them.
    pub fn tuned_options(&self, tuning: &dyn Tuning) -> Result<Options, Box<dyn Error>> {
        let mut o = self.options();
        tuning.options(&mut o)?;
        Ok(o)
    }
}

/// What a caller sets beyond the stable options the flags describe: `shamba bench` sets
/// nothing ([`Stable`]); the lab binary sets its device model and lookup variants.
pub trait Tuning {
    /// Adjust the engine options the flags describe (before every open).
    fn options(&self, _options: &mut Options) -> Result<(), Box<dyn Error>> {
        Ok(())
    }

    /// Adjust the read options of every read phase.
    fn read_options(&self, _read_options: &mut ReadOptions) {}

    /// Add the settings this tuning made to the JSON report's `config`.
    fn config(&self, _config: &mut serde_json::Map<String, serde_json::Value>) {}
}

/// No tuning: the stable options the flags describe, as they are.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stable;

impl Tuning for Stable {}

/// Run the benchmark and print its results.
pub fn run(args: &BenchArgs) -> Result<(), Box<dyn Error>> {
    run_tuned(args, &Stable)
}

/// [`run`] with the options and read options as `tuning` adjusts them.
pub fn run_tuned(args: &BenchArgs, tuning: &dyn Tuning) -> Result<(), Box<dyn Error>> {
    if args.key_size < 8 {
        return Err("--key-size must be at least 8".into());
    }
    if !(0.0..=1.0).contains(&args.existing_fraction) {
        return Err("--existing-fraction must be in 0..=1".into());
    }
    if args.compression_ratio.is_some_and(|r| !(r > 0.0 && r <= 1.0)) {
        return Err("--compression-ratio must be in (0, 1]".into());
    }
    let temp;
    let dir = match &args.db {
        Some(d) => d.clone(),
        None => {
            temp = tempfile::tempdir()?;
            temp.path().to_path_buf()
        }
    };
    let mut db = Db::open(&dir, args.tuned_options(tuning)?)?;
    let mut rows = Vec::new();
    if !args.no_load {
        rows.push(load(&db, args)?);
    }
    let settle = Instant::now();
    db.wait_for_compactions()?;
    let settle_secs = settle.elapsed().as_secs_f64();
    if let Some(pct) = args.cache_pct {
        // Size the cache against what was built, then start the reads from a cold cache.
        let metadata = db.stats().metadata_bytes();
        db.close()?;
        let mut o = args.tuned_options(tuning)?;
        o.cache_capacity = (metadata as f64 * pct / 100.0) as usize;
        db = Db::open(&dir, o)?;
    }
    let mut ycsb_rows = Vec::new();
    if args.ycsb.is_empty() {
        for &kind in &args.read {
            rows.push(read_phase(&db, args, kind, tuning)?);
        }
    } else {
        let inserted = ycsb::Inserts::default();
        for &w in &args.ycsb {
            ycsb_rows.push(ycsb::run_workload(&db, args, w, args.ycsb_ops.unwrap_or(args.reads), args.num, &inserted)?);
        }
    }
    let stats = db.stats();
    if args.json {
        let out = serde_json::json!({
            "config": config_json(args, tuning),
            "settle_seconds": settle_secs,
            "tree": tree_json(&stats),
            "phases": rows,
            "ycsb": ycsb_rows,
            "filter_memory": {
                "resident_bytes": stats.filter_resident_bytes,
                "resident_peak_bytes": stats.filter_resident_peak_bytes,
                "loads": stats.filter_loads,
                "evictions": stats.filter_evictions,
            },
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_tree(&stats, settle_secs);
        println!();
        println!("lookups: {}", args.distribution.describe(args.zipf_theta, args.normal_sd, args.num));
        report::print_table(&rows);
        for r in &ycsb_rows {
            println!();
            ycsb::print(r);
        }
        if args.filter_memory_budget.is_some() {
            println!(
                "filter memory: {} KiB resident (peak {} KiB), {} loads, {} evictions",
                stats.filter_resident_bytes >> 10,
                stats.filter_resident_peak_bytes >> 10,
                stats.filter_loads,
                stats.filter_evictions
            );
        }
    }
    db.close()?;
    Ok(())
}

fn progress(len: u64, what: &str, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg:>15} [{bar:40}] {pos}/{len} {per_sec} eta {eta}") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}

fn load(db: &Db, args: &BenchArgs) -> Result<PhaseResult, Box<dyn Error>> {
    let mut ids: Vec<u64> = (0..args.num).map(|i| 2 * i).collect();
    if args.order == Order::Random {
        ids.shuffle(&mut rand::rngs::StdRng::seed_from_u64(args.seed));
    }
    let pb = progress(args.num, "load", args.json);
    let before = db.stats();
    let start = Instant::now();
    // Small batches amortise the per-write overhead the way db_bench does (batch of 1 by
    // default there; 16 here keeps the load phase short without hiding the WAL cost).
    let wo = WriteOptions::default();
    let shape = RecordShape { key_size: args.key_size, value_size: args.value_size, values: args.values() };
    write_ids(db, &ids, shape, 16, &wo, |n| pb.inc(n))?;
    let seconds = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    Ok(phase_result("load", args.num, seconds, 1, &before, &db.stats(), 0))
}

/// The records a load writes.
#[derive(Debug, Clone, Copy)]
pub struct RecordShape {
    /// Key size in bytes.
    pub key_size: usize,
    /// Value size in bytes.
    pub value_size: usize,
    /// How values are made.
    pub values: Values,
}

/// Write keys `ids` (with their values) in batches of `batch_size`, reporting progress.
pub fn write_ids(
    db: &Db,
    ids: &[u64],
    shape: RecordShape,
    batch_size: usize,
    wo: &WriteOptions,
    mut progress: impl FnMut(u64),
) -> Result<(), shamba::Error> {
    let mut key = vec![0u8; shape.key_size];
    let mut value = vec![0u8; shape.value_size];
    for chunk in ids.chunks(batch_size.max(1)) {
        let mut batch = WriteBatch::new();
        for &id in chunk {
            key_into(id, &mut key);
            shape.values.fill(id, &mut value);
            batch.put(&key, &value);
        }
        db.write_opt(batch, wo)?;
        progress(chunk.len() as u64);
    }
    Ok(())
}

/// One read phase of `args.reads` lookups of `kind` on `args.threads` threads, with the
/// read options `tuning` adjusts.
pub fn read_phase(
    db: &Db,
    args: &BenchArgs,
    kind: ReadKind,
    tuning: &dyn Tuning,
) -> Result<PhaseResult, Box<dyn Error>> {
    let name = match kind {
        ReadKind::Existing => "read-existing",
        ReadKind::Missing => "read-missing",
        ReadKind::Mixed => "read-mixed",
    };
    let fraction = match kind {
        ReadKind::Existing => 1.0,
        ReadKind::Missing => 0.0,
        ReadKind::Mixed => args.existing_fraction,
    };
    let sampler = RankSampler::with_normal_sd(args.distribution, args.num, args.zipf_theta, args.normal_sd)?;
    let threads = args.threads.max(1) as u64;
    let per_thread = args.reads / threads;
    let pb = progress(per_thread * threads, name, args.json);
    let mut ro = ReadOptions { fill_cache: !args.no_fill_cache, ..ReadOptions::default() };
    tuning.read_options(&mut ro);
    let before = db.stats();
    let start = Instant::now();
    let found = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (db, sampler, pb, ro) = (db.clone(), &sampler, pb.clone(), ro.clone());
                s.spawn(move || -> Result<u64, shamba::Error> {
                    let mut ids = LookupIds::new(sampler, fraction, args.seed, t);
                    if args.multi_get > 1 {
                        return multi_get_lookups(&db, &mut ids, per_thread, args, &ro, &pb);
                    }
                    let mut key = vec![0u8; args.key_size];
                    let mut found = 0;
                    for i in 0..per_thread {
                        let (id, _) = ids.next().unwrap_or_default();
                        key_into(id, &mut key);
                        if db.get_opt(&key, &ro)?.is_some() {
                            found += 1;
                        }
                        if i % 4096 == 4095 {
                            pb.inc(4096);
                        }
                    }
                    Ok(found)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .sum::<Result<u64, _>>()
    })?;
    let seconds = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
    Ok(phase_result(name, per_thread * threads, seconds, threads, &before, &db.stats(), found))
}

/// `reads` lookups in batches of `--multi-get` keys (the last batch shorter): the keys
/// found.
fn multi_get_lookups(
    db: &Db,
    ids: &mut LookupIds<'_>,
    reads: u64,
    args: &BenchArgs,
    ro: &ReadOptions,
    pb: &ProgressBar,
) -> Result<u64, shamba::Error> {
    let mut keys = vec![vec![0u8; args.key_size]; args.multi_get];
    let (mut found, mut done) = (0, 0u64);
    while done < reads {
        let n = (reads - done).min(args.multi_get as u64) as usize;
        for k in &mut keys[..n] {
            let (id, _) = ids.next().unwrap_or_default();
            key_into(id, k);
        }
        for got in db.multi_get_opt(&keys[..n], ro) {
            if got?.is_some() {
                found += 1;
            }
        }
        // Progress in steps of about 4096 lookups, as the single gets report it.
        if (done + n as u64) / 4096 > done / 4096 {
            pb.inc(4096);
        }
        done += n as u64;
    }
    Ok(found)
}

fn phase_result(
    name: &str,
    ops: u64,
    seconds: f64,
    threads: u64,
    before: &Stats,
    after: &Stats,
    found: u64,
) -> PhaseResult {
    let io = after.io.since(&before.io);
    let per = |x: u64| if ops == 0 { 0.0 } else { x as f64 / ops as f64 };
    PhaseResult {
        phase: name.to_string(),
        ops,
        seconds,
        ops_per_sec: if seconds > 0.0 { ops as f64 / seconds } else { 0.0 },
        ns_per_op: if ops == 0 { 0.0 } else { seconds * 1e9 * threads as f64 / ops as f64 },
        ios_per_op: per(io.total_reads()),
        bytes_read_per_op: per(io.total_bytes()),
        reads_per_op_by_kind: std::array::from_fn(|i| per(io.reads[i])),
        found,
        filter_negatives_per_op: per(after.filter_negatives - before.filter_negatives),
        false_positives_per_op: per(after.filter_false_positives - before.filter_false_positives),
        stage_ns_per_op: {
            let d = after.lookup_costs.since(&before.lookup_costs);
            (d.lookups > 0).then(|| report::StageCosts {
                hash: d.hash_nanos as f64 / d.lookups as f64,
                memtable: d.memtable_nanos as f64 / d.lookups as f64,
                filter: d.filter_nanos as f64 / d.lookups as f64,
                index: d.index_nanos as f64 / d.lookups as f64,
                data: d.data_nanos as f64 / d.lookups as f64,
            })
        },
        filter_parts_probed_per_op: per(level_sum(before, after, |l| l.filter_parts_probed)),
        filters_skipped_per_op: per(level_sum(before, after, |l| l.filters_skipped)),
        filter_loads_per_op: per(after.filter_loads.saturating_sub(before.filter_loads)),
        levels: after
            .lookup_levels
            .iter()
            .zip(&before.lookup_levels)
            .enumerate()
            .filter(|(_, (a, b))| a.table_lookups > b.table_lookups)
            .map(|(level, (a, b))| report::LevelPhase {
                level,
                table_lookups_per_op: per(a.table_lookups - b.table_lookups),
                filter_parts_probed_per_op: per(a.filter_parts_probed - b.filter_parts_probed),
                false_positives_per_op: per(a.false_positives - b.false_positives),
                filters_skipped_per_op: per(a.filters_skipped - b.filters_skipped),
            })
            .collect(),
    }
}

fn level_sum(before: &Stats, after: &Stats, f: impl Fn(&shamba::LevelLookupStats) -> u64) -> u64 {
    after.lookup_levels.iter().map(&f).sum::<u64>() - before.lookup_levels.iter().map(&f).sum::<u64>()
}

fn config_json(a: &BenchArgs, tuning: &dyn Tuning) -> serde_json::Value {
    let mut config = serde_json::json!({
        "num": a.num, "key_size": a.key_size, "value_size": a.value_size,
        "compression_ratio": a.compression_ratio, "compression": format!("{:?}", a.compression),
        "bottommost_compression": a.bottommost_compression.map(|c| format!("{c:?}")),
        "order": format!("{:?}", a.order), "reads": a.reads, "existing_fraction": a.existing_fraction, "multi_get": a.multi_get,
        "distribution": a.distribution.describe(a.zipf_theta, a.normal_sd, a.num), "threads": a.threads, "bits_per_key": a.bits_per_key,
        "cache_mb": a.cache_mb, "cache_pct": a.cache_pct, "filter_memory_budget": a.filter_memory_budget, "cache_index_and_filter": a.cache_index_and_filter, "pinned_metadata_mb": a.pinned_metadata_mb, "partition": a.partition,
        "layout": format!("{:?}", a.layout), "parts": a.parts, "first_bits_per_key": a.first_bits_per_key,
        "ribbon_from_level": a.ribbon_from_level, "monkey": a.monkey, "policy": format!("{:?}", a.policy),
        "elastic_budget_mb": a.elastic_budget_mb, "life_time": a.life_time, "write_buffer_mb": a.write_buffer_mb, "target_file_mb": a.target_file_mb,
        "size_ratio": a.size_ratio, "compaction": format!("{:?}", a.compaction), "compaction_priority": format!("{:?}", a.compaction_priority),
        "align_outputs": !a.no_align_outputs, "max_subcompactions": a.max_subcompactions, "background_nice": a.background_nice, "direct_io": a.direct_io,
        "fill_cache": !a.no_fill_cache, "seed": a.seed,
    });
    if let Some(map) = config.as_object_mut() {
        tuning.config(map);
    }
    config
}

fn tree_json(s: &Stats) -> serde_json::Value {
    let levels: Vec<_> = s
        .levels
        .iter()
        .enumerate()
        .filter(|(_, l)| l.files > 0)
        .map(|(i, l)| {
            serde_json::json!({"level": i, "files": l.files, "runs": l.runs, "bytes": l.bytes, "entries": l.entries,
                "filter_bytes": l.filter_bytes, "index_bytes": l.index_bytes, "bytes_written": l.bytes_written,
                "compaction_read_from_above": l.compaction_read_from_above,
                "compaction_read_in_level": l.compaction_read_in_level, "bytes_moved_in": l.bytes_moved_in})
        })
        .collect();
    serde_json::json!({
        "levels": levels,
        "non_empty_levels": s.non_empty_levels(),
        "bytes": s.levels.iter().map(|l| l.bytes).sum::<u64>(),
        "entries": s.levels.iter().map(|l| l.entries).sum::<u64>(),
        "files": s.total_files(),
        "metadata_bytes": s.metadata_bytes(),
        "flushes": s.flushes, "compactions": s.compactions, "trivial_moves": s.trivial_moves, "subcompactions": s.subcompactions,
        "compaction_bytes_written": s.compaction_bytes_written, "stall_micros": s.stall_micros(),
        "delayed_micros": s.delayed_micros, "stopped_for_flush_micros": s.stopped_for_flush_micros,
        "stopped_for_compaction_micros": s.stopped_for_compaction_micros,
    })
}

fn print_tree(s: &Stats, settle_secs: f64) {
    println!(
        "tree: {} levels, {} files, {} flushes, {} compactions ({} trivial moves, {} subcompactions), {:.1} MiB written by compaction, stalls {:.2} s (delayed {:.2}, stopped for flush {:.2}, for compaction {:.2}), settle {:.2} s",
        s.non_empty_levels(),
        s.total_files(),
        s.flushes,
        s.compactions,
        s.trivial_moves,
        s.subcompactions,
        s.compaction_bytes_written as f64 / (1 << 20) as f64,
        s.stall_micros() as f64 / 1e6,
        s.delayed_micros as f64 / 1e6,
        s.stopped_for_flush_micros as f64 / 1e6,
        s.stopped_for_compaction_micros as f64 / 1e6,
        settle_secs
    );
    let (bytes, entries) = s.levels.iter().fold((0, 0), |(b, e), l| (b + l.bytes, e + l.entries));
    if entries > 0 {
        println!("  {:.1} bytes on disk per entry ({bytes} bytes, {entries} entries)", bytes as f64 / entries as f64);
    }
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    for (i, l) in s.levels.iter().enumerate().filter(|(_, l)| l.files > 0 || l.bytes_written + l.bytes_moved_in > 0) {
        let bpk = if l.entries > 0 { l.filter_bytes as f64 * 8.0 / l.entries as f64 } else { 0.0 };
        let amp = l.write_amplification().map_or(String::new(), |a| format!(" (w-amp {a:.1})"));
        println!(
            "  L{i}: {} files, {} runs, {:.1} MiB, {} entries, filter {:.2} bits/key; written {:.1} MiB{amp}, read {:.1} MiB from above and {:.1} MiB in place, moved in {:.1} MiB",
            l.files,
            l.runs,
            mib(l.bytes),
            l.entries,
            bpk,
            mib(l.bytes_written),
            mib(l.compaction_read_from_above),
            mib(l.compaction_read_in_level),
            mib(l.bytes_moved_in),
        );
    }
}
