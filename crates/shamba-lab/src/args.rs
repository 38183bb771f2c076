//! The options every experiment takes (`shamba-lab exp NAME ...`): how long a run, where
//! its files go, the seed, the workload, and the few options some experiments read.

use shamba_cli::bench::keys::KeyDistribution;

use crate::support::lookups::ReadSpec;

/// Arguments of `shamba-lab exp`.
#[derive(Debug, clap::Args)]
pub struct ExpArgs {
    /// The experiment (`shamba-lab list` shows them all).
    #[arg(value_parser = crate::registry::possible_values())]
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
    /// lookup-breakdown; elastic-load: keys per load): the seed's 1 GB tree of 64 B entries
    /// is 16M keys. For
    /// hash-sharing, the keys of the main tree of a run at seed 000's shape (leveled,
    /// T = 10, 512 B keys; 4M keys: 2.3 GB, 5 levels) instead of its tiered trees.
    #[arg(long)]
    pub num: Option<u64>,
    /// Variants to run, comma-separated, replacing the experiment's own list
    /// (memory-pressure: names as in its tables, e.g. plain,eq,eq-P,eq-F,prop,prop-P,prop-F;
    /// elastic-load: the bits/key to load at, e.g. 4 or 2,6,8).
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    /// Which lookups run.
    #[command(flatten)]
    pub workload: crate::support::workload::WorkloadArgs,
    /// The block cache's high-priority share for filter and index blocks (memory-pressure;
    /// default 0.5): SHaMBa-prop assumes its first modules stay cached.
    #[arg(long)]
    pub high_priority_ratio: Option<f64>,
    /// Give first filter modules a block cache pool of their own, sized to hold
    /// SHaMBa-prop's first modules at each cache size (memory-pressure;
    /// `Options::first_module_cache_ratio`), inside the same cache bytes.
    #[arg(long)]
    pub first_module_pool: bool,
    /// Cache sizes, % of the metadata, comma-separated, replacing the grid's
    /// (memory-pressure).
    #[arg(long, value_delimiter = ',')]
    pub cache_pcts: Vec<f64>,
    /// Warm-up lookups per cell (memory-pressure, memory-bound), instead of the grid's: a
    /// policy under a filter budget settles which parts stay resident over its warm-up.
    #[arg(long)]
    pub warmup: Option<u64>,
    /// Keep every loaded tree in this directory and reuse one an earlier run loaded with the
    /// same spec (experiments that share trees then load them once; the same build of shamba-lab
    /// only: delete the directory after changing the engine).
    #[arg(long)]
    pub trees: Option<std::path::PathBuf>,
    /// Load seed 000's trees (lookup-breakdown, hash-sharing --num) with five full levels,
    /// each spanning the whole key range as a bulk load leaves them (an empty lookup visits
    /// one table per level), instead of by the engine's leveled compaction.
    #[arg(long)]
    pub full_levels: bool,
}

impl ExpArgs {
    /// Empty lookups (`ReadSpec::empty`) from the one distribution the workload options name
    /// (uniform unless `--distribution` says otherwise).
    pub fn lookups(&self, warmup: u64, reads: u64, seed: u64) -> ReadSpec {
        let dist = self.workload.single(KeyDistribution::Uniform);
        self.workload.spec(dist, ReadSpec::empty(warmup, reads, seed))
    }

    /// The report line naming the distribution [`ExpArgs::lookups`] draws from, over `n` keys.
    pub fn lookups_note(&self, n: u64) -> String {
        self.workload.describe(&[self.workload.single(KeyDistribution::Uniform)], n)
    }
}
