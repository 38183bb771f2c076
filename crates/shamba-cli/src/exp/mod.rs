//! `shamba exp NAME`: the seeds' experiments, our figure beside the paper's.
//!
//! Each experiment lives in its own file and returns a [`report::Report`]; `run` emits it
//! (text or `--json` on stdout, CSV and SVG under `--out`).
//!
//! | name | seed | what |
//! |---|---|---|
//! | `hash-cost` | 000, Table 1 | ns to hash 8 B .. 1 KiB keys per hash function |
//! | `hash-fpr` | 000, Table 2 | FPR with one digest + rotation vs k independent hashes |
//! | `units-fpr` | 000, Table 3 | 7 filter units: rotation vs double hashing |
//! | `lookup-breakdown` | 000, Fig. 1 | engine: lookup time by stage (hash, filter, index, data) by data size and device |
//! | `filter-latency` | 000, Fig. 2-3 | ns per empty probe vs key size: rotation, k hashes, double hashing, blocked |
//! | `mbf` | 002, Table 3 | modular Bloom filters: FPR and module accesses |
//! | `ribbon` | 004 | bits/key vs FPR, build and query ns: Bloom vs Ribbon |
//! | `hash-sharing` | 000, Fig. 5-9 | engine: empty lookups with one shared digest vs one per table (`--num N`: at the seed's shape) |
//! | `memory-pressure` | 002, Fig. 6-7, Table 1 | engine: I/Os per lookup vs cache size, every policy |
//! | `memory-bound` | - | engine: `memory-pressure`'s distance to the offline bound alone, on a small grid |
//! | `modules` | 002, Fig. 8-10 | engine: SHaMBa-eq with 1, 2, 3, 7 modules |
//! | `elastic` | 003, Fig. 5 | engine: ElasticBF vs Plain at 4 bits/key |
//! | `elastic-seed` | 003, Fig. 5-6 | engine: `elastic`'s seed003 table alone (O_DIRECT, filter loads counted) |
//! | `elastic-sweep` | 003, Fig. 6-7 | engine: Elastic vs Plain over 2-8 bits/key with a warmed block cache; load throughput, units vs whole filters |
//! | `monkey` | 002, Fig. 12 | engine: uniform vs Monkey bits/key at equal memory |
//! | `headline` | 002 | engine: Plain vs SHaMBa under memory pressure, default options |
//! | `prefetch` | - | engine: every candidate's filter line prefetched vs level by level |
//! | `multi-get` | - | engine: `multi_get` of 32 keys vs 32 single gets on `prefetch`'s tree |
//! | `sst-skew` | 002, Fig. 2, 3, 5 | engine: accesses over tables, heat map by level, utility histogram, which beta |
//! | `index-vs-filter` | 002, Table 2, Fig. 15 | engine: index / filter bytes over entry and key sizes; SHaMBa-eq speedup as the index grows |
//! | `ribbon-hybrid` | 004 | engine: Ribbon from level L (memory, build CPU, lookups), construction memory, cache entries by kind |
//! | `partitioned` | 002, Fig. 11 | engine: SHaMBa on partitioned filters at 5-35%, modules of at least a page |
//! | `latency` | 002, Fig. 13-14, 16 | engine: mean lookup latency of Plain vs SHaMBa eq/prop under memory pressure (emulated SSD); speedup by device |

use std::error::Error;

mod cpu_cache;
mod elastic;
mod elastic_seed;
mod elastic_sweep;
mod engine;
mod filter_bound;
mod filter_latency;
mod hash_cost;
mod hash_fpr;
mod hash_sharing;
mod hash_sharing_seed;
mod headline;
mod index_vs_filter;
mod latency;
mod lookup_breakdown;
mod mbf;
pub mod measure;
mod memory_bound;
mod memory_pressure;
mod modules;
mod monkey;
mod multi_get;
mod partitioned;
mod prefetch;
mod pressure_ordering;
mod probe_schemes;
mod process_cpu;
pub mod report;
mod ribbon;
mod ribbon_hybrid;
mod seed_shape;
mod sst_skew;
mod tree_store;
mod unit_oracle;
mod units_fpr;
mod variants;
pub mod workload;

/// Arguments of `shamba exp`.
#[derive(Debug, clap::Args)]
pub struct ExpArgs {
    /// Experiment name (hash-cost, hash-fpr, units-fpr, filter-latency, lookup-breakdown, mbf, ribbon, hash-sharing, memory-pressure,
    /// memory-bound, modules, elastic, elastic-seed, elastic-sweep, monkey, headline, prefetch, multi-get, sst-skew,
    /// index-vs-filter, ribbon-hybrid, partitioned, latency).
    pub name: String,
    /// A short run (a few minutes at most).
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Where CSV and SVG files go.
    #[arg(long, default_value = "results")]
    pub out: std::path::PathBuf,
    /// Read tables with O_DIRECT (memory-pressure, memory-bound): a block the engine does not hold is
    /// read from this machine's disk, not from the OS page cache.
    #[arg(long)]
    pub direct_io: bool,
    /// Random seed for keys and queries.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Keys to load, replacing the experiment's own count (memory-pressure, latency,
    /// lookup-breakdown): the seed's 1 GB tree of 64 B entries is 16M keys. For
    /// hash-sharing, the keys of the main tree of a run at seed 000's shape (leveled,
    /// T = 10, 512 B keys; 4M keys: 2.3 GB, 5 levels) instead of its tiered trees.
    #[arg(long)]
    pub num: Option<u64>,
    /// Variants to run, comma-separated, replacing the experiment's own list
    /// (memory-pressure; names as in its tables, e.g. plain,eq,eq-P,eq-F,prop,prop-P,prop-F).
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    /// Which lookups run.
    #[command(flatten)]
    pub workload: workload::WorkloadArgs,
    /// The block cache's high-priority share for filter and index blocks (memory-pressure;
    /// default 0.5): SHaMBa-prop assumes its first modules stay cached.
    #[arg(long)]
    pub high_priority_ratio: Option<f64>,
    /// Warm-up lookups per cell (memory-pressure, memory-bound), instead of the grid's: a
    /// policy under a filter budget settles which parts stay resident over its warm-up.
    #[arg(long)]
    pub warmup: Option<u64>,
    /// Keep every loaded tree in this directory and reuse one an earlier run loaded with the
    /// same spec (experiments that share trees then load them once; the same build of shamba
    /// only: delete the directory after changing the engine).
    #[arg(long)]
    pub trees: Option<std::path::PathBuf>,
}

impl ExpArgs {
    /// Empty lookups (`ReadSpec::empty`) from the one distribution the workload options name
    /// (uniform unless `--distribution` says otherwise).
    pub fn lookups(&self, warmup: u64, reads: u64, seed: u64) -> engine::ReadSpec {
        let dist = self.workload.single(crate::bench::keys::KeyDistribution::Uniform);
        self.workload.spec(dist, engine::ReadSpec::empty(warmup, reads, seed))
    }

    /// The report line naming the distribution [`ExpArgs::lookups`] draws from, over `n` keys.
    pub fn lookups_note(&self, n: u64) -> String {
        self.workload.describe(&[self.workload.single(crate::bench::keys::KeyDistribution::Uniform)], n)
    }
}

/// Run the named experiment.
pub fn run(args: &ExpArgs) -> Result<(), Box<dyn Error>> {
    if let Some(dir) = &args.trees {
        tree_store::keep_in(dir.clone());
    }
    let report = match args.name.as_str() {
        "hash-cost" => hash_cost::run(args)?,
        "hash-fpr" => hash_fpr::run(args)?,
        "units-fpr" => units_fpr::run(args)?,
        "filter-latency" => filter_latency::run(args)?,
        "lookup-breakdown" => lookup_breakdown::run(args)?,
        "mbf" => mbf::run(args)?,
        "ribbon" => ribbon::run(args)?,
        "hash-sharing" => hash_sharing::run(args)?,
        "memory-pressure" => memory_pressure::run(args)?,
        "memory-bound" => memory_bound::run(args)?,
        "modules" => modules::run(args)?,
        "elastic" => elastic::run(args)?,
        "elastic-seed" => elastic_seed::run(args)?,
        "elastic-sweep" => elastic_sweep::run(args)?,
        "monkey" => monkey::run(args)?,
        "headline" => headline::run(args)?,
        "prefetch" => prefetch::run(args)?,
        "multi-get" => multi_get::run(args)?,
        "sst-skew" => sst_skew::run(args)?,
        "index-vs-filter" => index_vs_filter::run(args)?,
        "ribbon-hybrid" => ribbon_hybrid::run(args)?,
        "partitioned" => partitioned::run(args)?,
        "latency" => latency::run(args)?,
        other => {
            return Err(
                format!("unknown experiment {other:?} (known: hash-cost, hash-fpr, units-fpr, filter-latency, lookup-breakdown, mbf, ribbon, hash-sharing, memory-pressure, memory-bound, modules, elastic, elastic-seed, elastic-sweep, monkey, headline, prefetch, multi-get, sst-skew, index-vs-filter, ribbon-hybrid, partitioned, latency)").into()
            )
        }
    };
    report.emit(args)
}
