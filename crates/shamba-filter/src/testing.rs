//! Helpers shared by the filter unit tests: synthetic digests and FP-rate measurement.

use super::digest::{mix64, Digest};

/// `n` distinct pseudo-random digests from stream `stream` (streams never overlap).
pub fn digests(stream: u64, n: u64) -> Vec<Digest> {
    (0..n).map(|i| digest_at(stream, i)).collect()
}

/// The `i`-th digest of stream `stream`.
pub fn digest_at(stream: u64, i: u64) -> Digest {
    let x = (stream << 40) ^ i;
    Digest { h1: mix64(x ^ 0x1234_5678_9ABC_DEF0), h2: mix64(x.wrapping_add(0x0F1E_2D3C_4B5A_6978)) }
}

/// The fraction of `queries` digests never added (stream 999) for which `probe` says maybe.
pub fn fpr_of(probe: impl Fn(&Digest) -> bool, queries: u64) -> f64 {
    let hits = (0..queries).filter(|&i| probe(&digest_at(999, i))).count();
    hits as f64 / queries as f64
}

/// Whether `measured` is within `rel` (relative) of `expected`.
pub fn within(measured: f64, expected: f64, rel: f64) -> bool {
    (measured - expected).abs() <= rel * expected
}
