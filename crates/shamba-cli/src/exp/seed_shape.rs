//! Seed 000's LSM-tree at a chosen size: leveled, T = 10, 10 bits/key, 512 B keys, levels
//! small enough that a few gigabytes make its five levels (4M keys of 512 B + 64 B: 2.3 GB).
//! `lookup-breakdown` and `hash-sharing --num` load it and open it in memory, on an
//! emulated device, or with `O_DIRECT` reads of this machine's disk.

use std::error::Error;

use shamba::lab::filter::{BuildPolicy, HashFn};
use shamba::{Db, Options};

use super::engine::{LoadedTree, Shape, TreeSpec};
use super::hash_sharing::read_options;

/// The seed's key size.
pub(super) const KEY_SIZE: usize = 512;
/// Value bytes (the key is what matters; small values keep loads short).
pub(super) const VALUE_SIZE: usize = 64;
/// The "memory" case's block cache: larger than the trees of `lookup-breakdown`'s own sizes.
const MEMORY_CACHE: usize = 512 << 20;

/// Small levels so that megabytes of data already make the seed's several levels.
const SHAPE: Shape =
    Shape { write_buffer: 512 << 10, target_file: 512 << 10, level_base: 2 << 20, size_ratio: 10, num_levels: 7 };

/// `num` keys of `key_size` B with `value_size` B values in the seed's shape, filters of
/// `bits` per key over digests from `digest` (the same function probes them at read time).
pub(super) fn tree_spec(
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
pub(super) fn open(tree: &LoadedTree, device: &str) -> Result<Db, Box<dyn Error>> {
    match device {
        "memory" => tree.open(Options { cache_capacity: MEMORY_CACHE, ..read_options(&tree.spec.options, "none")? }),
        "disk" => tree.open_reads(read_options(&tree.spec.options, "none")?, true),
        _ => tree.open(read_options(&tree.spec.options, device)?),
    }
}
