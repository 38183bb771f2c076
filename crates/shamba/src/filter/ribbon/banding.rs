//! Banding: on-the-fly Gaussian elimination of the keys' equations (the "Ribbon" in
//! Rapid Incremental Boolean Banding ON the fly), and back-substitution into the
//! interleaved solution.
//!
//! Each key is an equation `c · x = r` over GF(2), where `c` is a 128-bit window starting
//! at the key's start slot with its first bit set. Slot `i` holds at most one equation whose
//! pivot (lowest set bit) is `i`. Adding a key walks from its start: an empty slot takes the
//! equation; an occupied one is xor-ed in, clearing the pivot bit, and the walk jumps to the
//! new lowest set bit. An equation reduced to `0 = 0` is redundant (a duplicate key); to
//! `0 = 1` it is a failure, and construction retries with another seed.
//!
//! Keys are first bucketed by start position (a counting sort on the high bits), so the
//! elimination walks memory almost sequentially instead of at random: with a million keys
//! the banding arrays (20 bytes per slot) are far larger than the caches.

use super::config::COEFF_BITS;
use super::hasher::RibbonHasher;
use super::layout::{ColumnLayout, SEGMENT_BYTES};
use crate::filter::digest::Digest;

/// Banding storage: one (coefficient, result) row per slot; coefficient 0 = empty.
pub struct Banding {
    coeffs: Vec<u128>,
    results: Vec<u32>,
    /// Elimination steps taken (tests only: measures banding work).
    #[cfg(test)]
    pub steps: u64,
}

/// One key's equation, ready to add: its start slot and the digest half its coefficients
/// and result come from.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    start: u32,
    h2: u64,
}

impl Banding {
    /// Empty storage for `num_slots` slots.
    pub fn new(num_slots: usize) -> Self {
        Banding {
            coeffs: vec![0; num_slots],
            results: vec![0; num_slots],
            #[cfg(test)]
            steps: 0,
        }
    }

    /// Empty every slot (before retrying with another seed).
    pub fn clear(&mut self) {
        self.coeffs.fill(0);
        self.results.fill(0);
    }

    /// Add one equation. `false`: it contradicts the equations already added.
    #[inline]
    fn add(&mut self, start: usize, mut cr: u128, mut rr: u32) -> bool {
        let mut i = start;
        loop {
            let (Some(slot_c), Some(slot_r)) = (self.coeffs.get_mut(i), self.results.get_mut(i)) else {
                return false;
            };
            let other = *slot_c;
            #[cfg(test)]
            {
                self.steps += 1;
            }
            if other == 0 {
                *slot_c = cr;
                *slot_r = rr;
                return true;
            }
            cr ^= other;
            rr ^= *slot_r;
            if cr == 0 {
                return rr == 0;
            }
            let tz = cr.trailing_zeros();
            i += tz as usize;
            cr >>= tz;
        }
    }

    /// Try to add every key under `hasher`; `false` if the system has no solution (the
    /// storage is then in an unspecified state: [`Banding::clear`] before reuse).
    pub fn add_all(&mut self, digests: &[Digest], hasher: &RibbonHasher) -> bool {
        let rows = self.sorted_rows(digests, hasher);
        self.add_rows(&rows, hasher)
    }

    /// The keys' start slots and coefficient hashes, bucketed by start (counting sort on the
    /// high bits: each bucket spans ~1024 slots, so eliminating one bucket stays inside
    /// ~20 KiB of banding storage).
    pub fn sorted_rows(&self, digests: &[Digest], hasher: &RibbonHasher) -> Vec<Row> {
        let num_starts = (self.coeffs.len() as u64).saturating_sub(COEFF_BITS - 1).max(1);
        let shift = 10u32;
        let num_buckets = (num_starts >> shift) as usize + 1;
        let mut counts = vec![0u32; num_buckets + 1];
        let starts: Vec<u32> = digests
            .iter()
            .map(|d| {
                let s = hasher.start(d, num_starts) as u32;
                if let Some(c) = counts.get_mut((s >> shift) as usize + 1) {
                    *c += 1;
                }
                s
            })
            .collect();
        for b in 1..counts.len() {
            counts[b] += counts[b - 1];
        }
        let mut sorted = vec![Row { start: 0, h2: 0 }; digests.len()];
        for (d, &s) in digests.iter().zip(&starts) {
            if let Some(pos) = counts.get_mut((s >> shift) as usize) {
                if let Some(row) = sorted.get_mut(*pos as usize) {
                    *row = Row { start: s, h2: d.h2 };
                }
                *pos += 1;
            }
        }
        sorted
    }

    /// Eliminate rows in order; `false` on a contradiction.
    pub fn add_rows(&mut self, rows: &[Row], hasher: &RibbonHasher) -> bool {
        for row in rows {
            let (cr, rr) = hasher.coeff_and_result(row.h2);
            if !self.add(row.start as usize, cr, rr) {
                return false;
            }
        }
        true
    }

    /// Back-substitute into the segments of every layout (all layouts share `num_blocks`;
    /// each stores its own result columns). `out[i]` must be `layouts[i].bytes()` long.
    pub fn back_substitute(&self, layouts: &[ColumnLayout], out: &mut [Vec<u8>]) {
        let total_cols = layouts.iter().map(|l| (l.col_offset + l.upper_columns) as usize).max().unwrap_or(0).min(32);
        let mut state = [0u128; 32];
        let state = &mut state[..total_cols];
        let num_blocks = self.coeffs.len() / COEFF_BITS as usize;
        for block in (0..num_blocks).rev() {
            let base = block * COEFF_BITS as usize;
            let rows = self.coeffs.get(base..base + COEFF_BITS as usize).unwrap_or(&[]);
            let results = self.results.get(base..base + COEFF_BITS as usize).unwrap_or(&[]);
            for (&cr, &rr) in rows.iter().zip(results).rev() {
                if cr == 0 {
                    // Free variable: choose 0.
                    for s in state.iter_mut() {
                        *s <<= 1;
                    }
                    continue;
                }
                // x_i = r_i ^ parity(c_(i+1..) · x_(i+1..)): with the state holding the
                // next 127 solution bits from bit 0, that is parity(state & (c >> 1)).
                let c1 = cr >> 1;
                for (j, s) in state.iter_mut().enumerate() {
                    let bit = parity(*s & c1) ^ ((rr >> j) & 1);
                    *s = (*s << 1) | u128::from(bit);
                }
            }
            for (layout, bytes) in layouts.iter().zip(out.iter_mut()) {
                let (seg, cols) = layout.segment_and_columns(block as u64);
                for c in 0..cols {
                    let col = (layout.col_offset + c) as usize;
                    let at = (seg + u64::from(c)) as usize * SEGMENT_BYTES;
                    if let (Some(dst), Some(src)) = (bytes.get_mut(at..at + SEGMENT_BYTES), state.get(col)) {
                        dst.copy_from_slice(&src.to_le_bytes());
                    }
                }
            }
        }
    }
}

/// Parity of the set bits of a 128-bit word.
#[inline(always)]
pub fn parity(x: u128) -> u32 {
    ((x as u64) ^ ((x >> 64) as u64)).count_ones() & 1
}
