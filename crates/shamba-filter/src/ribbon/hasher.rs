//! Turning a key digest into a Ribbon equation for one construction seed. No key is hashed
//! here: each seed remixes the digest (RocksDB's "rehasher" idea), so a failed construction
//! retries with new equations from the same digests.
//!
//! Everything about a key's equation comes from one 64-bit *equation hash*
//! `v = (h1 ^ seed) · START_FACTOR` (a bijection of `h1` for each seed):
//!
//! - the start slot is `fastrange(v, num_starts)`, i.e. the high bits of `v`, so sorting
//!   keys by `v` sorts them by start and construction only needs to keep `v` (8 bytes) per
//!   key;
//! - the 128-bit coefficient row and the result row come from `b = (v ^ v >> 32) ·
//!   COEFF_FACTOR`: the coefficient is `b ^ COEFF_XOR` (low word, bit 0 forced to 1, the
//!   pivot at the start) and `v · HI_FACTOR` (high word); the result row is `b` byte-swapped
//!   (the best-mixed top bits of the product end up in the low result bits).
//!
//! 64 bits of the digest are plenty: two keys with equal `h1` get the same equation (a
//! redundant row, never a failure), and a query shares an equation with one of `n` keys with
//! probability `n / 2^64`.

#![deny(clippy::indexing_slicing)]

use crate::digest::{fastrange64, mix64, Digest};

/// Multiplier applied to `h1 ^ seed`: the equation hash.
const START_FACTOR: u64 = 0x6193_D459_236A_3A0D;
/// Multiplier producing coefficient and result bits from the equation hash (a large prime).
const COEFF_FACTOR: u64 = 0xC28F_8282_2B65_0BED;
/// Multiplier deriving the high coefficient word from the equation hash.
const HI_FACTOR: u64 = 0x9E37_79B9_7F4A_7C15;
/// Xor making the low coefficient word differ from the result row's bits.
const COEFF_XOR: u64 = 0xC367_844A_6E52_731D;

/// One key's equation: `coefficients · solution[start .. start + 128] = result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Equation {
    /// First slot of the coefficient window.
    pub start: usize,
    /// Coefficient bits 0..64 (bit 0, the pivot, is always set).
    pub lo: u64,
    /// Coefficient bits 64..128.
    pub hi: u64,
    /// Expected fingerprint: bit `j` is the key's bit for result column `j`.
    pub result: u32,
}

/// The equation generator for one seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RibbonHasher {
    raw_seed: u64,
}

impl RibbonHasher {
    /// The hasher for ordinal seed `seed` (0, 1, 2, ... are tried in turn).
    pub fn for_seed(seed: u32) -> Self {
        RibbonHasher { raw_seed: mix64(u64::from(seed).wrapping_add(0x2545_F491_4F6C_DD1D)) }
    }

    /// Rebuild from a stored raw seed.
    pub fn from_raw(raw_seed: u64) -> Self {
        RibbonHasher { raw_seed }
    }

    /// The stored form of the seed.
    pub fn raw_seed(&self) -> u64 {
        self.raw_seed
    }

    /// The key's equation hash under this seed (the only per-key state construction keeps).
    #[inline(always)]
    pub fn equation_hash(&self, d: &Digest) -> u64 {
        (d.h1 ^ self.raw_seed).wrapping_mul(START_FACTOR)
    }

    /// The equation of equation hash `v` with `num_starts` possible start slots.
    #[inline(always)]
    pub fn equation(v: u64, num_starts: u64) -> Equation {
        let b = (v ^ (v >> 32)).wrapping_mul(COEFF_FACTOR);
        Equation {
            start: fastrange64(v, num_starts) as usize,
            lo: (b ^ COEFF_XOR) | 1,
            hi: v.wrapping_mul(HI_FACTOR),
            result: b.swap_bytes() as u32,
        }
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn equations_start_in_range_with_their_pivot_set_and_sort_with_their_hash() {
        let h = RibbonHasher::for_seed(3);
        let mut last = (0u64, 0usize);
        let mut vs: Vec<u64> = (0..10_000u64).map(|i| h.equation_hash(&Digest { h1: mix64(i), h2: i })).collect();
        vs.sort_unstable();
        for v in vs {
            let e = RibbonHasher::equation(v, 1000);
            assert!(e.start < 1000);
            assert_eq!(e.lo & 1, 1);
            assert!(e.start >= last.1 || v < last.0, "start must not decrease with v");
            last = (v, e.start);
        }
    }

    #[test]
    fn seeds_give_different_equations() {
        let d = Digest { h1: 12345, h2: 678 };
        let a = RibbonHasher::for_seed(0);
        let b = RibbonHasher::for_seed(1);
        assert_ne!(
            RibbonHasher::equation(a.equation_hash(&d), 1 << 20),
            RibbonHasher::equation(b.equation_hash(&d), 1 << 20)
        );
    }
}
