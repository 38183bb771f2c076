//! Command-line arguments and the plan they make: sizes for `--quick`, the default run and
//! `--deep`, and the "equal footing" text printed with every result.

use crate::engine::{Setup, Variant};
use crate::workload::ycsb::{YcsbArgs, YcsbPlan};
use crate::workload::KeySpec;
use std::path::PathBuf;

/// Side by side: the same workloads on Shamba, RocksDB and fjall, in one run.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "shamba-compare", version)]
pub struct Args {
    /// Small run (200k keys): under 3 minutes.
    #[arg(long, conflicts_with = "deep")]
    pub quick: bool,
    /// Deep tree: 30M keys, 5 levels, filters larger than the last-level cache (long).
    #[arg(long)]
    pub deep: bool,
    /// Engines to run, in order (the first one's filter + index bytes size the sweep).
    /// Default: every engine compiled in.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub engines: Vec<Variant>,
    /// Workload families to skip.
    #[arg(long, value_enum, value_delimiter = ',', conflicts_with = "only")]
    pub skip: Vec<Family>,
    /// Run only these workload families (the others are skipped; without point, multi-get,
    /// scan and pressure the main key space is not loaded).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Family>,
    /// Keys to load (default: 2M; 200k with --quick; 30M with --deep).
    #[arg(long)]
    pub num: Option<u64>,
    /// Lookups per phase (default: 500k; 200k with --quick; 1M with --deep).
    #[arg(long)]
    pub reads: Option<u64>,
    /// Key size in bytes.
    #[arg(long, default_value_t = 32)]
    pub key_size: usize,
    /// Value size in bytes.
    #[arg(long, default_value_t = 32)]
    pub value_size: usize,
    /// Key size of the large-key workload (it loads num/8 keys).
    #[arg(long, default_value_t = 512)]
    pub big_key_size: usize,
    /// Filter bits per key, every engine (Bloom-equivalent for Ribbon rows).
    #[arg(long, default_value_t = 10.0)]
    pub bits_per_key: f64,
    /// Data block size in bytes.
    #[arg(long, default_value_t = 4096)]
    pub block_size: usize,
    /// Block cache in MiB for the runs with filters in memory (default 64; 512 with --deep).
    #[arg(long)]
    pub cache_mb: Option<f64>,
    /// Memtable and SST size in MiB (L1 = 4 files; default 1; 0.25 with --quick; 2 with --deep).
    #[arg(long)]
    pub file_mb: Option<f64>,
    /// Growth factor between levels.
    #[arg(long, default_value_t = 10)]
    pub size_ratio: u32,
    /// Zipf exponent of the Zipfian phases.
    #[arg(long, default_value_t = 0.99)]
    pub zipf_theta: f64,
    /// Entries per short range scan.
    #[arg(long, default_value_t = 10)]
    pub scan_len: usize,
    /// Seed of the load order and of every lookup sequence.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Where the databases go (default: a temporary directory, removed at the end).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Memory-pressure sweep and multi_get rows again with O_DIRECT table reads (Shamba
    /// `DirectReadFsStorage`, RocksDB `use_direct_reads`; fjall reads buffered): a block
    /// read is a disk read. Put `--dir` on a disk file system (O_DIRECT fails on tmpfs).
    #[arg(long)]
    pub direct_io: bool,
    /// Accounts (keys) of the transaction workloads (default: 100k; 20k with --quick).
    #[arg(long)]
    pub tx_accounts: Option<u64>,
    /// Operations per transaction phase (default: 100k; 20k with --quick; the
    /// 10-key read-modify-write runs a tenth as many).
    #[arg(long)]
    pub tx_ops: Option<u64>,
    /// Shamba's compaction outputs end where their size runs out, not at boundaries of the
    /// files below (`Options::align_compaction_outputs` off): an A/B of that option.
    #[arg(long)]
    pub shamba_no_align_outputs: bool,
    /// Every engine's compaction threads at the lowest CPU priority: Shamba's
    /// `background_nice` 19, RocksDB's compaction pool lowered (`LowerThreadPoolCPUPriority`,
    /// nice 19); flushes keep theirs. fjall has no such setting and runs as is.
    #[arg(long)]
    pub background_low_priority: bool,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub ycsb: YcsbArgs,
    /// Key counts of the size sweep, run one after another (e.g. 2M,20M,100M); runs the
    /// sweep (and, without --only, nothing else).
    #[arg(long, value_delimiter = ',', value_parser = crate::workload::sizes::parse_count)]
    pub sizes: Vec<u64>,
    /// Print the sustained-load and size-sweep tables of these earlier `--json` outputs, as
    /// one (and draw `--plot` from them); runs nothing.
    #[arg(long, value_delimiter = ',')]
    pub tables_from: Vec<PathBuf>,
    /// Write the size sweep's plot (empty-lookup cost against levels, SVG) to this file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Seconds of each sustained-load run (`--only sustained`).
    #[arg(long, default_value_t = 60)]
    pub sustain_secs: u64,
    /// Value sizes of the sustained-load runs.
    #[arg(long, value_delimiter = ',', default_values_t = [32usize, 512])]
    pub sustain_values: Vec<usize>,
    /// Client threads of the sustained-load runs (each count a run of its own).
    #[arg(long, value_delimiter = ',', default_values_t = [1usize])]
    pub sustain_threads: Vec<usize>,
}

/// Workload families (for `--skip`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Family {
    /// Point lookups, uniform and Zipfian.
    Point,
    /// Batches of 32 point lookups: the engine's multi-get against 32 single gets.
    MultiGet,
    /// Short range scans.
    Scan,
    /// Memory-pressure sweep.
    Pressure,
    /// Large keys.
    BigKeys,
    /// Optimistic transactions (shamba, rocksdb and fjall rows only) and the same writes
    /// without a transaction.
    Transactions,
    /// YCSB's workloads A-F (shamba, rocksdb and fjall rows only); runs only when named
    /// (`--only ycsb` or `--ycsb a,b,..`).
    Ycsb,
    /// Sustained random puts for --sustain-secs on a fresh database (only with --only).
    Sustained,
    /// The size sweep over --sizes (default 2M,20M; only with --only or --sizes).
    Sizes,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 7] = [
        Family::Point,
        Family::MultiGet,
        Family::Scan,
        Family::Pressure,
        Family::BigKeys,
        Family::Transactions,
        Family::Ycsb,
    ];

    /// Whether the family reads the main loaded key space.
    pub fn needs_main_load(self) -> bool {
        matches!(self, Family::Point | Family::MultiGet | Family::Scan | Family::Pressure)
    }
}

/// Everything a run needs, resolved from the arguments.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Plan {
    /// "quick", "default" or "deep".
    pub mode: &'static str,
    /// Main key space.
    pub spec: KeySpec,
    /// Large-key key space.
    pub big_spec: KeySpec,
    /// Lookups per phase.
    pub reads: u64,
    /// Setup of the main runs.
    pub setup: Setup,
    /// Zipf exponent.
    pub zipf_theta: f64,
    /// Entries per scan.
    pub scan_len: usize,
    /// Seed.
    pub seed: u64,
    /// O_DIRECT reads in the memory-pressure sweep.
    pub direct_io: bool,
    /// Accounts of the transaction workloads.
    pub tx_accounts: u64,
    /// Operations per transaction phase.
    pub tx_ops: u64,
    /// The YCSB family.
    pub ycsb: YcsbPlan,
}

impl Args {
    /// The engines to run: as given, or every one compiled in.
    pub fn engines(&self) -> Vec<Variant> {
        if self.engines.is_empty() {
            Variant::ALL.into_iter().filter(|v| v.compiled_in()).collect()
        } else {
            self.engines.clone()
        }
    }

    /// Whether an opt-in family (sustained load, size sweep) runs: named in `--only`, or
    /// the sweep given its `--sizes`.
    pub fn opted_in(&self, family: Family) -> bool {
        self.only.contains(&family) || (family == Family::Sizes && !self.sizes.is_empty())
    }

    /// The families to skip: `--skip`, or every family not in `--only` (all of them with
    /// `--sizes` alone). YCSB is skipped unless named, by `--only` or by `--ycsb`.
    pub fn skipped(&self) -> Vec<Family> {
        if self.only.is_empty() && self.sizes.is_empty() {
            let mut skip = self.skip.clone();
            if self.ycsb.workloads.is_empty() && !skip.contains(&Family::Ycsb) {
                skip.push(Family::Ycsb);
            }
            skip
        } else {
            Family::ALL.into_iter().filter(|f| !self.only.contains(f)).collect()
        }
    }
}

impl Plan {
    /// Resolve defaults by mode.
    pub fn from_args(a: &Args) -> Result<Plan, String> {
        if a.key_size < 8 || a.big_key_size < 8 {
            return Err("key sizes must be at least 8 bytes".into());
        }
        let (mode, num, reads, cache_mb, file_mb) = if a.quick {
            ("quick", 200_000, 200_000, 64.0, 0.25)
        } else if a.deep {
            ("deep", 30_000_000, 1_000_000, 512.0, 2.0)
        } else {
            ("default", 2_000_000, 500_000, 64.0, 1.0)
        };
        let (tx_accounts, tx_ops) = if a.quick { (20_000, 20_000) } else { (100_000, 100_000) };
        let num = a.num.unwrap_or(num).max(16);
        let mib = |x: f64| (x * 1024.0 * 1024.0) as u64;
        let file = mib(a.file_mb.unwrap_or(file_mb)).max(64 << 10);
        Ok(Plan {
            mode,
            spec: KeySpec { n: num, key_size: a.key_size, value_size: a.value_size },
            big_spec: KeySpec { n: (num / 8).max(16), key_size: a.big_key_size, value_size: a.value_size },
            reads: a.reads.unwrap_or(reads).max(1),
            setup: Setup {
                bits_per_key: a.bits_per_key,
                block_size: a.block_size,
                cache_bytes: mib(a.cache_mb.unwrap_or(cache_mb)) as usize,
                metadata_in_cache: false,
                write_buffer_size: file as usize,
                target_file_size: file,
                level_base: 4 * file,
                size_ratio: a.size_ratio,
                direct_io: false,
                filter_memory_budget: None,
                shamba_align_outputs: !a.shamba_no_align_outputs,
                background_low_priority: a.background_low_priority,
            },
            zipf_theta: a.zipf_theta,
            scan_len: a.scan_len,
            seed: a.seed,
            direct_io: a.direct_io,
            tx_accounts: a.tx_accounts.unwrap_or(tx_accounts).max(16),
            tx_ops: a.tx_ops.unwrap_or(tx_ops).max(16),
            ycsb: a.ycsb.plan(a.quick, a.key_size, a.seed),
        })
    }

    /// The equal footing, as printed above the tables.
    pub fn footing(&self, engines: &[Variant], skip: &[Family]) -> Vec<String> {
        let s = &self.setup;
        let main_load = Family::ALL.iter().any(|f| f.needs_main_load() && !skip.contains(f));
        let mut lines = Vec::new();
        if main_load {
            lines.push(format!(
                "keys: {} random-order puts, {} B keys, {} B values, seed {}; missing keys = odd ids inside the key range",
                self.spec.n, self.spec.key_size, self.spec.value_size, self.seed
            ));
        }
        lines.extend([
            format!(
                "filters: {} bits/key everywhere (Ribbon rows: Bloom-equivalent FP rate); block size {} B; no compression",
                s.bits_per_key, s.block_size
            ),
            format!(
                "memtable {} KiB, SST {} KiB, L1 {} KiB, size ratio {}, leveled, static level targets",
                s.write_buffer_size / 1024,
                s.target_file_size / 1024,
                s.level_base / 1024,
                s.size_ratio
            ),
            format!(
                "block cache {} MiB with index+filter held by table readers (fjall: its default pinning); \
                 sweep: index+filter in the cache",
                s.cache_bytes >> 20
            ),
            "page cache: not dropped, buffered reads (no O_DIRECT): a 'block read' is a block-cache miss \
             served by pread, usually from the OS page cache"
                .into(),
        ]);
        if main_load {
            lines.push("WAL on, sync off, one put per write, one client thread; engines run one after another".into());
        }
        if s.background_low_priority {
            lines.push(
                "compaction threads at nice 19 (flushes not): shamba background_nice, rocksdb \
                 LowerThreadPoolCPUPriority(LOW); fjall as is"
                    .into(),
            );
        }
        if !skip.contains(&Family::Pressure) {
            lines.push(
                "sweep: shamba-budget and shamba-fine hold filters under filter_memory_budget = the N% up to all the \
                 reference's filter bytes (filters first), the block cache gets the rest (at least 4 KiB)"
                    .into(),
            );
        }
        if !skip.contains(&Family::Transactions) {
            lines.push(format!(
                "transactions: {} accounts ({} B keys, {} B values), {} ops per phase (10-key read-modify-write: a \
                 tenth), 1 and 2 client threads, seed {}, engines one after another; shamba Db::transaction + get_for_update, rocksdb \
                 OptimisticTransactionDB (snapshot at begin, get_for_update at it), fjall OptimisticTxDatabase; \
                 a conflicted transaction is run again at once, by the same loop for all three",
                self.tx_accounts, self.spec.key_size, self.spec.value_size, self.tx_ops, self.seed
            ));
            lines.push(
                "transactions: same durability for all three, WAL on and no sync at commit (shamba and rocksdb \
                 WriteOptions sync = false, fjall PersistMode::Buffer); fjall's plain put is its transactional \
                 keyspace's insert (a one-write transaction), the others' a plain put"
                    .into(),
            );
        }
        if !skip.contains(&Family::Ycsb) {
            lines.push(self.ycsb.footing());
        }
        if self.direct_io {
            lines.push(
                "--direct-io: the sweep reopens with O_DIRECT table reads (shamba DirectReadFsStorage, rocksdb \
                 use_direct_reads; fjall has no such option and reads buffered): a block read is a disk read"
                    .into(),
            );
        }
        for v in engines {
            lines.push(format!("{:<20} {}", v.name(), v.describe()));
        }
        lines
    }
}
