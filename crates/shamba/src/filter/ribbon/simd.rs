//! Back-substitution with one AVX-512 vector lane per result column (up to 8 columns).
//!
//! The scalar back-substitution ([`super::banding`]) spends about ten instructions per
//! slot per column (shift the column's 128-bit state, and it with the coefficient row,
//! POPCNT, xor in the result bit, insert the new bit) and is bound by instruction
//! throughput: at 7 columns it was a quarter of the whole construction. Here the eight
//! columns' states are the eight 64-bit lanes of two registers (low and high state words),
//! so a slot costs about ten vector instructions for all columns at once (VPSHLDQ shifts
//! the 128-bit states, VPOPCNTQ gives every column's parity).
//!
//! Used only when the CPU has AVX-512F, VPOPCNTDQ and VBMI2 (checked at run time); the
//! result is bit-for-bit the scalar one (tested).

use std::arch::x86_64::{
    __m512i, _mm256_extract_epi64, _mm512_add_epi64, _mm512_and_si512, _mm512_extracti64x4_epi64, _mm512_or_si512,
    _mm512_popcnt_epi64, _mm512_set1_epi64, _mm512_set_epi64, _mm512_setzero_si512, _mm512_shldi_epi64,
    _mm512_srlv_epi64, _mm512_ternarylogic_epi64,
};

use super::config::COEFF_BITS;
use super::layout::{ColumnLayout, SEGMENT_BYTES};

/// Most result columns the vector path computes (one per 64-bit lane).
pub const MAX_COLUMNS: u32 = 8;

/// Whether this CPU runs [`back_substitute`].
pub fn available() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512vpopcntdq")
        && is_x86_feature_detected!("avx512vbmi2")
}

/// Back-substitute banding rows (`lo`, `hi`, `results`, equal lengths, a multiple of 128)
/// into `out` as [`super::banding::Banding::back_substitute`] does, for layouts using at
/// most [`MAX_COLUMNS`] columns. `None` (nothing written) when the CPU lacks the features.
pub fn back_substitute(
    lo: &[u64],
    hi: &[u64],
    results: &[u32],
    layouts: &[ColumnLayout],
    out: &mut [Vec<u8>],
) -> Option<()> {
    if !available() {
        return None;
    }
    // SAFETY: `solve` only requires the target features it is compiled with, and
    // `available()` has just checked that this CPU has all of them. Its body is safe code
    // (no pointers: lanes are moved in and out with set/extract intrinsics).
    unsafe { solve(lo, hi, results, layouts, out) };
    Some(())
}

/// The eight lanes of `v`, lane 0 first.
#[target_feature(enable = "avx512f,avx512vpopcntdq,avx512vbmi2")]
fn lanes(v: __m512i) -> [u64; 8] {
    let (a, b) = (_mm512_extracti64x4_epi64::<0>(v), _mm512_extracti64x4_epi64::<1>(v));
    [
        _mm256_extract_epi64::<0>(a) as u64,
        _mm256_extract_epi64::<1>(a) as u64,
        _mm256_extract_epi64::<2>(a) as u64,
        _mm256_extract_epi64::<3>(a) as u64,
        _mm256_extract_epi64::<0>(b) as u64,
        _mm256_extract_epi64::<1>(b) as u64,
        _mm256_extract_epi64::<2>(b) as u64,
        _mm256_extract_epi64::<3>(b) as u64,
    ]
}

/// Lane `j` of the states holds column `j`'s solution bits for the next 128 slots (as in
/// the scalar code); the same recurrence, all columns at once.
#[target_feature(enable = "avx512f,avx512vpopcntdq,avx512vbmi2")]
fn solve(lo: &[u64], hi: &[u64], results: &[u32], layouts: &[ColumnLayout], out: &mut [Vec<u8>]) {
    let bits = COEFF_BITS as usize;
    let num_blocks = lo.len() / bits;
    // Lane j shifts the result row right by j: its bit 0 is column j's result bit.
    let column_shift = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    let one = _mm512_set1_epi64(1);
    let mut state_lo = _mm512_setzero_si512();
    let mut state_hi = _mm512_setzero_si512();
    for block in (0..num_blocks).rev() {
        let rows = block * bits..(block + 1) * bits;
        let (Some(lo), Some(hi), Some(res)) = (lo.get(rows.clone()), hi.get(rows.clone()), results.get(rows)) else {
            return;
        };
        for ((&c_lo, &c_hi), &r) in lo.iter().zip(hi).zip(res).rev() {
            // The 128-bit states shift left by one: bit 63 of the low word enters the high.
            let n_hi = _mm512_shldi_epi64::<1>(state_hi, state_lo);
            let n_lo = _mm512_add_epi64(state_lo, state_lo);
            let masked_hi = _mm512_and_si512(n_hi, _mm512_set1_epi64(c_hi as i64));
            // (n_lo & c_lo) ^ masked_hi: truth table 0x6A over (a, b, c) = (n_lo, c_lo, masked_hi).
            let t = _mm512_ternarylogic_epi64::<0x6A>(n_lo, _mm512_set1_epi64(c_lo as i64), masked_hi);
            // The shifted state with the column's result bit in the empty bit 0 (off the
            // critical path, which is then add, ternlog, popcount, ternlog).
            let r = _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64(i64::from(r)), column_shift), one);
            let with_r = _mm512_or_si512(n_lo, r);
            // with_r ^ (popcount & 1): bit 0 becomes the result bit xor the parity of the
            // row's dot product with the state (truth table 0x78: a ^ (b & c)).
            state_lo = _mm512_ternarylogic_epi64::<0x78>(with_r, _mm512_popcnt_epi64(t), one);
            state_hi = n_hi;
        }
        let (seg_lo, seg_hi) = (lanes(state_lo), lanes(state_hi));
        for (layout, bytes) in layouts.iter().zip(out.iter_mut()) {
            let (seg, cols) = layout.segment_and_columns(block as u64);
            for c in 0..cols {
                let col = (layout.col_offset + c) as usize;
                let at = (seg + u64::from(c)) as usize * SEGMENT_BYTES;
                if let (Some(dst), Some(&l), Some(&h)) =
                    (bytes.get_mut(at..at + SEGMENT_BYTES), seg_lo.get(col), seg_hi.get(col))
                {
                    dst[..8].copy_from_slice(&l.to_le_bytes());
                    dst[8..].copy_from_slice(&h.to_le_bytes());
                }
            }
        }
    }
}
