//! Back-substitution with one AVX-512 vector lane per result column (up to 8 columns).
//!
//! The scalar back-substitution ([`super::banding`]) spends about ten instructions per slot
//! per column (shift the column's 128-bit state, and it with the coefficient row, POPCNT,
//! xor in the result bit, insert the new bit) and is bound by instruction throughput: at
//! many columns it was a large part of the whole construction. Here the eight columns'
//! states are the eight 64-bit lanes of two registers (low and high state words), so a slot
//! costs about fifteen vector instructions for all columns at once (VPSHLDQ shifts the
//! 128-bit states, VPOPCNTQ gives every column's parity), several times fewer instructions
//! per slot; it now mostly waits on reading the banding arrays.
//!
//! Used only when the CPU has AVX-512F, VPOPCNTDQ and VBMI2 (checked at run time); the
//! result is bit-for-bit the scalar one (tested).

#![deny(clippy::indexing_slicing)]

use std::arch::x86_64::{
    __m512i, _mm256_extract_epi64, _mm512_add_epi64, _mm512_and_si512, _mm512_extracti64x4_epi64,
    _mm512_maskz_set1_epi64, _mm512_or_si512, _mm512_popcnt_epi64, _mm512_set1_epi64, _mm512_set_epi64,
    _mm512_setzero_si512, _mm512_shldi_epi64, _mm512_slli_epi64, _mm512_srli_epi64, _mm512_srlv_epi64,
    _mm512_ternarylogic_epi64, _mm512_test_epi64_mask,
};

use super::banding::ResultRow;
use super::config::COEFF_BITS;
use super::layout::ColumnLayout;

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
pub fn back_substitute<R: ResultRow>(
    lo: &[u64],
    hi: &[u64],
    results: &[R],
    layouts: &[ColumnLayout],
    out: &mut [Vec<u8>],
) -> Option<()> {
    if !available() {
        return None;
    }
    // SAFETY: `solve` only requires the target features it is compiled with, and
    // `available()` has just checked that this CPU has all of them. Its body is safe code
    // (no pointers: lanes are moved in and out with set/extract intrinsics). Exercised by
    // `vector_and_scalar_back_substitution_agree` on a CPU with AVX-512 (elsewhere this
    // call is never reached, and the test says so).
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
/// the scalar code): the same recurrence, all columns at once.
///
/// The recurrence `x_i = parity((S_{i+1} << 1) & c_i) ^ r_i`, `S_i = (S_{i+1} << 1) | x_i`
/// is a chain through a POPCNT per slot. Split as `x_i = P_i ^ (x_{i+1} & c_i[1])` with
/// `P_i = parity((S_{i+2} << 2) & c_i) ^ r_i` (bit 1 of `c_i` meets `x_{i+1}`; every
/// other bit meets a bit of `S_{i+2}`), the POPCNT of slot `i` runs while slot `i + 1` is
/// finished, and the chain from one slot to the next is one ternary-logic instruction.
#[target_feature(enable = "avx512f,avx512vpopcntdq,avx512vbmi2")]
fn solve<R: ResultRow>(lo: &[u64], hi: &[u64], results: &[R], layouts: &[ColumnLayout], out: &mut [Vec<u8>]) {
    let bits = COEFF_BITS as usize;
    let n = lo.len().min(hi.len()).min(results.len()) / bits * bits;
    // Lane j shifts the result row right by j: its bit 0 is column j's result bit.
    let column_shift = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    let one = _mm512_set1_epi64(1);
    let (Some(lo), Some(hi), Some(results)) = (lo.get(..n), hi.get(..n), results.get(..n)) else {
        return;
    };
    // Row `k` as broadcast vectors: low and high coefficient words, and the result row with
    // column j's bit in bit 0 of lane j. An empty slot (low word 0) is a free variable, set
    // to 0 like the scalar code does: its stale high word and result are masked out.
    let row = |k: usize| {
        let (Some(&l), Some(&h), Some(&r)) = (lo.get(k), hi.get(k), results.get(k)) else {
            let zero = _mm512_setzero_si512();
            return (zero, zero, zero);
        };
        let l = _mm512_set1_epi64(l as i64);
        let occupied = _mm512_test_epi64_mask(l, l);
        let h = _mm512_maskz_set1_epi64(occupied, h as i64);
        let r = _mm512_srlv_epi64(_mm512_maskz_set1_epi64(occupied, i64::from(r.widen())), column_shift);
        (l, h, r)
    };
    let Some(last) = n.checked_sub(1) else {
        return;
    };
    // S_{i+1} (zero above the last slot), P_i (bit 0 only) and row i's low word.
    let mut state_lo = _mm512_setzero_si512();
    let mut state_hi = _mm512_setzero_si512();
    let (mut c_lo, _, r) = row(last);
    let mut p = _mm512_and_si512(r, one);
    for slot in (0..n).rev() {
        // x_i = P_i ^ (x_{i+1} & c_i[1]): x_{i+1} is bit 0 of S_{i+1} (truth table 0x78:
        // a ^ (b & c)); only bit 0 is set.
        let bit1 = _mm512_and_si512(_mm512_srli_epi64::<1>(c_lo), one);
        let x = _mm512_ternarylogic_epi64::<0x78>(p, state_lo, bit1);
        // P_{i-1} from S_{i+1} shifted by two (128-bit shift: VPSHLDQ for the high word).
        // Below slot 0 there is no row: all zero, unused.
        let (next_lo, next_hi, next_r) = row(slot.wrapping_sub(1));
        let lo2 = _mm512_slli_epi64::<2>(state_lo);
        let hi2 = _mm512_shldi_epi64::<2>(state_hi, state_lo);
        let masked_hi = _mm512_and_si512(hi2, next_hi);
        // (lo2 & c_lo) ^ masked_hi (truth table 0x6A: (a & b) ^ c).
        let t = _mm512_ternarylogic_epi64::<0x6A>(lo2, next_lo, masked_hi);
        // (popcount ^ r) & 1 (truth table 0x28: (a ^ b) & c).
        p = _mm512_ternarylogic_epi64::<0x28>(_mm512_popcnt_epi64(t), next_r, one);
        c_lo = next_lo;
        // S_i = (S_{i+1} << 1) | x_i.
        let shifted_hi = _mm512_shldi_epi64::<1>(state_hi, state_lo);
        state_lo = _mm512_or_si512(_mm512_add_epi64(state_lo, state_lo), x);
        state_hi = shifted_hi;
        if slot.is_multiple_of(bits) {
            write_block(slot / bits, state_lo, state_hi, layouts, out);
        }
    }
}

/// After the 128 slots of `block`, each column's state is exactly that block's segment of
/// the column: store the stored columns' segments.
#[target_feature(enable = "avx512f,avx512vpopcntdq,avx512vbmi2")]
fn write_block(block: usize, state_lo: __m512i, state_hi: __m512i, layouts: &[ColumnLayout], out: &mut [Vec<u8>]) {
    super::banding::store_segments(block, &lanes(state_lo), &lanes(state_hi), layouts, out);
}
