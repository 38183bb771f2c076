//! Seed 000's LSM-tree at a chosen size: leveled, T = 10, 10 bits/key, 512 B keys, levels
//! small enough that a few gigabytes make its five levels (4M keys of 512 B + 64 B: 2.3 GB).
//! `lookup-breakdown` and `hash-sharing --num` load it and open it in memory, on an
//! emulated device, or with `O_DIRECT` reads of this machine's disk.

use std::error::Error;

use shamba::{Db, Options};
use shamba_filter::{BuildPolicy, HashFn};

use crate::hash_sharing::on_engine::read_options;
use crate::support::full_levels;
use crate::support::tree::{LoadedTree, Shape, TreeSpec};

/// The seed's key size.
pub(crate) const KEY_SIZE: usize = 512;
/// Value bytes (the key is what matters; small values keep loads short).
pub(crate) const VALUE_SIZE: usize = 64;
/// The "memory" case's block cache: larger than the trees of `lookup-breakdown`'s own sizes.
const MEMORY_CACHE: usize = 512 << 20;

/// Small levels so that megabytes of data already make the seed's several levels.
const SHAPE: Shape =
    Shape { write_buffer: 512 << 10, target_file: 512 << 10, level_base: 2 << 20, size_ratio: 10, num_levels: 7 };

/// Levels of the trees with full levels (the seed's five).
pub(crate) const FULL_LEVELS: usize = 5;

/// How a tree's levels are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loader {
    /// The engine's own leveled compaction (upper levels cover parts of the key range).
    Leveled,
    /// This many levels, each spanning the whole key range ([`full_levels`]), the seed's
    /// bulk-loaded trees.
    Full(usize),
}

impl Loader {
    /// `--full-levels`: the seed's five full levels; otherwise leveled.
    pub(crate) fn of(full: bool) -> Loader {
        if full {
            Loader::Full(FULL_LEVELS)
        } else {
            Loader::Leveled
        }
    }

    /// How the report names the trees' shape.
    pub(crate) fn describe(self) -> String {
        match self {
            Loader::Leveled => "leveled by the engine's compaction".to_string(),
            Loader::Full(n) => format!("{n} full levels (each spanning the key range, loaded level by level)"),
        }
    }
}

/// Load `num` keys ([`tree_spec`]) as `loader` says.
pub(crate) fn load(
    num: u64,
    key_size: usize,
    value_size: usize,
    bits: f64,
    digest: HashFn,
    seed: u64,
    loader: Loader,
) -> Result<LoadedTree, Box<dyn Error>> {
    let mut spec = tree_spec(num, key_size, value_size, bits, digest, seed);
    match loader {
        Loader::Leveled => LoadedTree::load(spec),
        Loader::Full(levels) => {
            spec.options = Options {
                filter_policy: spec.options.filter_policy.clone(),
                lab: spec.options.lab,
                ..full_levels::options(SHAPE, levels)
            };
            full_levels::load(spec)
        }
    }
}

/// `num` keys of `key_size` B with `value_size` B values in the seed's shape, filters of
/// `bits` per key over digests from `digest` (the same function probes them at read time).
pub(crate) fn tree_spec(
    num: u64,
    key_size: usize,
    value_size: usize,
    bits: f64,
    digest: HashFn,
    seed: u64,
) -> TreeSpec {
    let mut options = SHAPE.options();
    options.filter_policy = BuildPolicy::uniform(bits);
    options.lab.digest_hash = digest;
    TreeSpec { num, key_size, value_size, options, seed, flush_every: None }
}

/// Open `tree` for measuring (filters and indexes pinned, a small block cache) on `device`:
/// an emulated device model (`none`, `nvm`, `pcie`, `ssd`: the OS page cache serves the
/// bytes, the model adds its latency per block read), `memory` (a block cache holding every
/// block read, the seed's in-memory case) or `disk` (tables read with `O_DIRECT` from this
/// machine's disk, nothing emulated).
pub(crate) fn open(tree: &LoadedTree, device: &str) -> Result<Db, Box<dyn Error>> {
    match device {
        "memory" => tree.open(Options { cache_capacity: MEMORY_CACHE, ..read_options(&tree.spec.options, "none")? }),
        "disk" => tree.open_reads(read_options(&tree.spec.options, "none")?, true),
        _ => tree.open(read_options(&tree.spec.options, device)?),
    }
}
