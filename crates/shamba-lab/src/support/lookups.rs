//! One batch of point lookups ([`ReadSpec`]) measured with `bench`'s read loop, so
//! `shamba bench`, `shamba-lab bench` and the experiments count the same things the same way.

use std::error::Error;

use shamba::Db;
use shamba_cli::bench::keys::KeyDistribution;
use shamba_cli::bench::report::PhaseResult;
use shamba_cli::bench::{read_phase, BenchArgs, ReadKind};

use crate::bench::LabKnobs;

/// One batch of point lookups.
#[derive(Debug, Clone)]
pub struct ReadSpec {
    /// Lookups run first and not counted (they warm the cache and the filter manager).
    pub warmup: u64,
    /// Lookups measured.
    pub reads: u64,
    /// Fraction of lookups for loaded keys (the rest miss, inside the key range).
    pub existing: f64,
    /// How keys are picked.
    pub distribution: KeyDistribution,
    /// Zipf exponent (`zipfian`, `zipf-contiguous`).
    pub zipf_theta: f64,
    /// Standard deviation of `normal` in keys (`None`: a tenth of the keys).
    pub normal_sd: Option<f64>,
    /// Share one digest per lookup (false: the unshared baseline).
    pub share_hash: bool,
    /// Random seed of the lookups.
    pub seed: u64,
    /// Time each lookup stage (`ReadLab::profile`: a few clock reads per lookup).
    pub profile: bool,
    /// Keep the data blocks lookups read in the block cache (false: a direct-I/O reader).
    pub fill_cache: bool,
    /// Keys per `multi_get` call (1: single gets).
    pub multi_get: usize,
    /// Read tables through `O_DIRECT` (where the harness opens the database itself).
    pub direct_io: bool,
}

impl ReadSpec {
    /// Uniform empty lookups with sharing.
    pub fn empty(warmup: u64, reads: u64, seed: u64) -> ReadSpec {
        ReadSpec {
            warmup,
            reads,
            existing: 0.0,
            distribution: KeyDistribution::Uniform,
            zipf_theta: crate::support::workload::YCSB_ZIPF_THETA,
            normal_sd: None,
            share_hash: true,
            seed,
            profile: false,
            fill_cache: true,
            multi_get: 1,
            direct_io: false,
        }
    }
}

/// Run `spec` against `db`, whose loaded keys are the even ids below `2 num`: warm-up
/// lookups first (not counted), then the measured ones, on one thread.
pub fn measure(db: &Db, num: u64, key_size: usize, spec: &ReadSpec) -> Result<PhaseResult, Box<dyn Error>> {
    let mut args = BenchArgs::defaults();
    args.num = num;
    args.key_size = key_size;
    args.existing_fraction = spec.existing;
    args.distribution = spec.distribution;
    args.zipf_theta = spec.zipf_theta;
    args.normal_sd = spec.normal_sd;
    args.no_fill_cache = !spec.fill_cache;
    args.multi_get = spec.multi_get;
    args.threads = 1;
    // Hides the progress bar.
    args.json = true;
    let knobs = LabKnobs { no_share_hash: !spec.share_hash, profile: spec.profile, ..LabKnobs::default() };
    if spec.warmup > 0 {
        args.reads = spec.warmup;
        args.seed = spec.seed ^ 0x005E_ED0F_3A4B;
        read_phase(db, &args, ReadKind::Mixed, &knobs)?;
    }
    args.reads = spec.reads;
    args.seed = spec.seed;
    read_phase(db, &args, ReadKind::Mixed, &knobs)
}
