//! Turning a key digest into a Ribbon equation: start slot, 128-bit coefficient row and
//! result row, for one construction seed. No key is hashed here: each seed remixes the
//! digest (RocksDB's "rehasher" idea), so a failed construction retries with new
//! equations from the same digests.

use crate::filter::digest::{fastrange64, mix64, Digest};

/// Multiplier applied to `h1 ^ seed` before mapping to a start slot.
const START_FACTOR: u64 = 0x6193_D459_236A_3A0D;
/// Multiplier producing coefficient and result bits from `h2 ^ seed` (a large prime).
const COEFF_FACTOR: u64 = 0xC28F_8282_2B65_0BED;
/// Xor making the low coefficient half differ from the high half.
const COEFF_XOR: u64 = 0xC367_844A_6E52_731D;

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

    /// First slot of the key's coefficient window, in `0..num_starts`.
    #[inline(always)]
    pub fn start(&self, d: &Digest, num_starts: u64) -> u64 {
        fastrange64((d.h1 ^ self.raw_seed).wrapping_mul(START_FACTOR), num_starts)
    }

    /// Coefficient row (bit 0 always set, so the key's equation has a pivot at its start)
    /// and result row (the key's expected fingerprint, one bit per solution column).
    #[inline(always)]
    pub fn coeff_and_result(&self, h2: u64) -> (u128, u32) {
        let b = (h2 ^ self.raw_seed.rotate_left(29)).wrapping_mul(COEFF_FACTOR);
        let coeff = ((u128::from(b) << 64) | u128::from(b ^ COEFF_XOR)) | 1;
        // The top bits of a product are the best mixed: byte-swap them to the bottom.
        (coeff, b.swap_bytes() as u32)
    }
}
