//! Measurement helpers shared by experiments: random keys and wall-clock timing.

use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};
use std::time::Instant;

/// `n` random keys of `len` bytes from a fixed seed (distinct with overwhelming probability
/// for `len >= 8`).
pub fn random_keys(n: usize, len: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut k = vec![0u8; len];
            rng.fill_bytes(&mut k);
            k
        })
        .collect()
}

/// Nanoseconds per operation of `run`, which performs `ops` operations; the best of
/// `repeats` runs (the least disturbed by other processes on a shared machine).
pub fn ns_per_op(ops: usize, repeats: usize, mut run: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..repeats.max(1) {
        let t = Instant::now();
        run();
        let ns = t.elapsed().as_nanos() as f64 / ops.max(1) as f64;
        best = best.min(ns);
    }
    best
}
