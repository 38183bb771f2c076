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
//! Where the time goes, and what this file does about it (1M keys, ~6.8 walk steps per key
//! whatever the insertion order):
//!
//! - **Locality.** Keys are bucketed by start (a counting sort on the high bits of their
//!   equation hashes, which *are* the start's high bits), so elimination walks memory almost
//!   sequentially instead of at random: the banding arrays (17 or 20 bytes per slot) are
//!   far larger than the caches. Only the 8-byte equation hash is kept per key.
//! - **Latency.** A walk is a serial chain (load slot, xor, count trailing zeros, next
//!   slot) ending in a branch that mispredicts about once per key. Two walks from the two
//!   halves of the sorted keys are interleaved step by step, so one chain runs while the
//!   other waits. Interleaving is exact: every step sees the slots as the other walk left
//!   them, so the result is the elimination of some sequential order, and whether the
//!   system is solvable does not depend on the order.
//! - **Width.** The coefficient row is kept as two 64-bit words in separate arrays (`lo`
//!   holds the pivot bit, so `lo == 0` means an empty slot); a walk touches `hi` and the
//!   result row only off its critical path. Result rows are bytes when the filter has at
//!   most 8 result columns ([`ResultRow`]).
//! - **Memory passes.** Only `lo` is cleared between constructions; `hi` and the result
//!   rows of empty slots keep stale values, which back-substitution ignores.
//! - **Back-substitution** keeps each result column's next 128 solution bits as two words
//!   and computes a solution bit with one POPCNT per column (see `.cargo/config.toml`);
//!   the per-column loop is unrolled for up to 8 columns. With AVX-512 (up to 8 columns),
//!   the `simd` module does all columns at once, one per vector lane.

#![deny(clippy::indexing_slicing)]

use super::config::COEFF_BITS;
use super::hasher::{Equation, RibbonHasher};
use super::layout::{ColumnLayout, SEGMENT_BYTES};
use crate::digest::Digest;

/// Slots per sorting bucket (about): eliminating one bucket stays inside ~20 KiB of banding.
const SLOTS_PER_BUCKET_LOG2: u32 = 10;

/// Banding storage: one coefficient row (two words) and result row per slot; `lo == 0`
/// marks an empty slot (an occupied slot's pivot bit, bit 0 of `lo`, is always set).
pub struct Banding<R: ResultRow = u32> {
    lo: Vec<u64>,
    hi: Vec<u64>,
    results: Vec<R>,
}

/// The type of a banding result row: `u8` when the solution has at most 8 result columns,
/// `u32` otherwise. Byte rows make a slot 17 bytes instead of 20 and banding faster (less
/// memory traffic and smaller walk state).
pub trait ResultRow: Copy + Default + Eq + std::ops::BitXor<Output = Self> + 'static {
    /// Result columns a row holds.
    const COLUMNS: u32;
    /// The low [`Self::COLUMNS`] bits of a key's result row.
    fn truncate(result: u32) -> Self;
    /// The row as result bits, column 0 in bit 0.
    fn widen(self) -> u32;
    /// This thread's scratch vector for rows of this type (left empty there).
    fn take_scratch() -> Vec<Self>;
    /// Give a vector back to this thread's scratch.
    fn put_scratch(v: Vec<Self>);
}

impl ResultRow for u8 {
    const COLUMNS: u32 = 8;
    #[inline(always)]
    fn truncate(result: u32) -> Self {
        result as u8
    }
    #[inline(always)]
    fn widen(self) -> u32 {
        u32::from(self)
    }
    fn take_scratch() -> Vec<Self> {
        SCRATCH.with(|s| std::mem::take(&mut s.borrow_mut().results8))
    }
    fn put_scratch(v: Vec<Self>) {
        let _ = SCRATCH.try_with(|s| s.try_borrow_mut().map(|mut s| s.results8 = v));
    }
}

impl ResultRow for u32 {
    const COLUMNS: u32 = 32;
    #[inline(always)]
    fn truncate(result: u32) -> Self {
        result
    }
    #[inline(always)]
    fn widen(self) -> u32 {
        self
    }
    fn take_scratch() -> Vec<Self> {
        SCRATCH.with(|s| std::mem::take(&mut s.borrow_mut().results))
    }
    fn put_scratch(v: Vec<Self>) {
        let _ = SCRATCH.try_with(|s| s.try_borrow_mut().map(|mut s| s.results = v));
    }
}

impl<R: ResultRow> Drop for Banding<R> {
    /// Hand the vectors back to this thread's scratch for the next construction.
    fn drop(&mut self) {
        let (lo, hi, results) =
            (std::mem::take(&mut self.lo), std::mem::take(&mut self.hi), std::mem::take(&mut self.results));
        // Keep at most MAX_SCRATCH_BYTES per thread: a filter over a huge table should not
        // pin its construction memory for the life of the thread. (A thread that has built
        // with both row types also keeps the other type's result vector, at most a quarter
        // of this again.)
        if lo.capacity() * 8 + hi.capacity() * 8 + results.capacity() * size_of::<R>() > MAX_SCRATCH_BYTES {
            return;
        }
        let _ = SCRATCH.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                s.lo = lo;
                s.hi = hi;
            }
        });
        R::put_scratch(results);
    }
}

/// An equation being added: [`Equation`] with its result row cut to `R`.
#[derive(Clone, Copy)]
struct Row<R> {
    start: usize,
    lo: u64,
    hi: u64,
    result: R,
}

impl<R: ResultRow> Row<R> {
    #[inline(always)]
    fn of(e: Equation) -> Self {
        Row { start: e.start, lo: e.lo, hi: e.hi, result: R::truncate(e.result) }
    }
}

/// What one elimination step did to the equation being added.
enum Step {
    /// Reduced by an occupied slot; the walk goes on from the equation's new start.
    Continue,
    /// Stored in an empty slot, or reduced to `0 = 0` (redundant): the key is added.
    Done,
    /// Reduced to `0 = 1`: no solution with this seed.
    Contradiction,
}

/// One elimination step of `e` (see the module doc). Slices must have equal lengths.
#[inline(always)]
fn step<R: ResultRow>(lo: &mut [u64], hi: &mut [u64], results: &mut [R], e: &mut Row<R>) -> Step {
    let i = e.start;
    // Out of range cannot happen (equations are combinations of in-range rows); refusing
    // is the safe answer if it ever did.
    let (Some(slot_lo), Some(slot_hi), Some(slot_r)) = (lo.get_mut(i), hi.get_mut(i), results.get_mut(i)) else {
        return Step::Contradiction;
    };
    if *slot_lo == 0 {
        *slot_lo = e.lo;
        *slot_hi = e.hi;
        *slot_r = e.result;
        return Step::Done;
    }
    let x_lo = e.lo ^ *slot_lo;
    let x_hi = e.hi ^ *slot_hi;
    let x_r = e.result ^ *slot_r;
    if x_lo != 0 {
        // Both pivots were set, so bit 0 of `x_lo` is clear: 1 <= tz <= 63, and every
        // shift below is in range (no 128-bit shift with its >= 64 case).
        let tz = x_lo.trailing_zeros();
        *e = Row { start: i + tz as usize, lo: (x_lo >> tz) | (x_hi << (64 - tz)), hi: x_hi >> tz, result: x_r };
        Step::Continue
    } else if x_hi != 0 {
        let tz = x_hi.trailing_zeros();
        *e = Row { start: i + 64 + tz as usize, lo: x_hi >> tz, hi: 0, result: x_r };
        Step::Continue
    } else if x_r == R::default() {
        Step::Done
    } else {
        Step::Contradiction
    }
}

/// Add one equation completely. `false`: it contradicts the equations already added.
fn walk<R: ResultRow>(lo: &mut [u64], hi: &mut [u64], results: &mut [R], mut e: Row<R>) -> bool {
    loop {
        match step(lo, hi, results, &mut e) {
            Step::Continue => {}
            Step::Done => return true,
            Step::Contradiction => return false,
        }
    }
}

/// Scratch vectors of finished bandings, kept per thread for the next construction.
///
/// A table builder makes one filter after another; fresh multi-megabyte vectors would each
/// pay a page fault per 4 KiB on first touch (a sizeable part of the whole construction),
/// while reused ones are already mapped.
const MAX_SCRATCH_BYTES: usize = 40 << 20;

#[derive(Default)]
struct Scratch {
    lo: Vec<u64>,
    hi: Vec<u64>,
    results: Vec<u32>,
    results8: Vec<u8>,
    sorted: Vec<u64>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// A zeroed vector of `n` elements, reusing `v`'s allocation.
fn zeroed<T: Copy + Default>(mut v: Vec<T>, n: usize) -> Vec<T> {
    v.clear();
    v.resize(n, T::default());
    v
}

/// A vector of `n` elements reusing `v`'s allocation *and its old contents* (only the part
/// past the old length is zeroed): for storage whose every element is written before it
/// is read. Saves a pass over memory (the coefficient-high and result arrays are 9 of the
/// 17 bytes per slot with byte result rows).
fn stale<T: Copy + Default>(mut v: Vec<T>, n: usize) -> Vec<T> {
    v.truncate(n);
    v.resize(n, T::default());
    v
}

impl<R: ResultRow> Banding<R> {
    /// Empty storage for `num_slots` slots (reusing this thread's last scratch memory).
    pub fn new(num_slots: usize) -> Self {
        let (lo, hi) = SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            (std::mem::take(&mut s.lo), std::mem::take(&mut s.hi))
        });
        // Only `lo` marks empty slots; an empty slot's `hi` and result are never read by
        // banding and are treated as zero by back-substitution.
        Banding { lo: zeroed(lo, num_slots), hi: stale(hi, num_slots), results: stale(R::take_scratch(), num_slots) }
    }

    /// Empty every slot (before retrying with another seed).
    pub fn clear(&mut self) {
        self.lo.fill(0);
    }

    /// Number of slots.
    pub fn num_slots(&self) -> usize {
        self.lo.len()
    }

    /// Start positions: a key's 128-slot window must fit.
    fn num_starts(&self) -> u64 {
        (self.lo.len() as u64).saturating_sub(COEFF_BITS - 1).max(1)
    }

    /// Try to add every key under `hasher`; `false` if the system has no solution (the
    /// storage is then in an unspecified state: [`Banding::clear`] before reuse).
    pub fn add_all(&mut self, digests: &[Digest], hasher: &RibbonHasher) -> bool {
        let hashes = self.sorted_hashes(digests, hasher);
        let ok = self.add_sorted(&hashes);
        if hashes.capacity() * 8 <= MAX_SCRATCH_BYTES / 2 {
            SCRATCH.with(|s| s.borrow_mut().sorted = hashes);
        }
        ok
    }

    /// The keys' equation hashes bucketed by start slot: a counting sort on the high bits
    /// (buckets of about 2^10 slots). The hash is computed twice (count, then place) rather
    /// than stored: a multiplication is cheaper than another pass over memory.
    pub fn sorted_hashes(&self, digests: &[Digest], hasher: &RibbonHasher) -> Vec<u64> {
        let buckets = self.lo.len() >> SLOTS_PER_BUCKET_LOG2;
        let bits = (usize::BITS - buckets.leading_zeros()).min(24);
        if bits == 0 {
            return digests.iter().map(|d| hasher.equation_hash(d)).collect();
        }
        let shift = 64 - bits;
        let mut next = vec![0u32; (1usize << bits) + 1];
        for d in digests {
            if let Some(c) = next.get_mut((hasher.equation_hash(d) >> shift) as usize + 1) {
                *c += 1;
            }
        }
        let mut total = 0;
        for c in &mut next {
            total += *c;
            *c = total;
        }
        // Every position is written once below (the counts are exact).
        let mut sorted = stale(SCRATCH.with(|s| std::mem::take(&mut s.borrow_mut().sorted)), digests.len());
        for d in digests {
            let v = hasher.equation_hash(d);
            if let Some(pos) = next.get_mut((v >> shift) as usize) {
                if let Some(slot) = sorted.get_mut(*pos as usize) {
                    *slot = v;
                }
                *pos += 1;
            }
        }
        sorted
    }

    /// Eliminate the equations of `hashes` (sorted by start for speed; any order is
    /// correct); `false` on a contradiction. Two walks, one from each half, are
    /// interleaved step by step (module doc).
    pub fn add_sorted(&mut self, hashes: &[u64]) -> bool {
        let num_starts = self.num_starts();
        let eq = |v: &u64| Row::<R>::of(RibbonHasher::equation(*v, num_starts));
        let n = self.lo.len();
        let (Some(lo), Some(hi), Some(res)) = (self.lo.get_mut(..n), self.hi.get_mut(..n), self.results.get_mut(..n))
        else {
            return false;
        };
        let (first, second) = hashes.split_at(hashes.len() / 2);
        let (mut a_rest, mut b_rest) = (first.iter(), second.iter());
        let (Some(mut a), Some(mut b)) = (a_rest.next().map(eq), b_rest.next().map(eq)) else {
            return hashes.iter().all(|v| walk(lo, hi, res, eq(v)));
        };
        // When one half runs out, the other's walk in flight and its remaining keys finish
        // alone.
        let (last, rest) = loop {
            match step(lo, hi, res, &mut a) {
                Step::Continue => {}
                Step::Done => match a_rest.next() {
                    Some(v) => a = eq(v),
                    None => break (b, b_rest),
                },
                Step::Contradiction => return false,
            }
            match step(lo, hi, res, &mut b) {
                Step::Continue => {}
                Step::Done => match b_rest.next() {
                    Some(v) => b = eq(v),
                    None => break (a, a_rest),
                },
                Step::Contradiction => return false,
            }
        };
        walk(lo, hi, res, last) && rest.into_iter().all(|v| walk(lo, hi, res, eq(v)))
    }

    /// Back-substitute into the segments of every layout (all layouts share `num_blocks`;
    /// each stores its own result columns). `out[i]` must be `layouts[i].bytes()` long.
    ///
    /// `false` (nothing written) if the layouts use more result columns than a row of `R`
    /// holds.
    #[must_use]
    pub fn back_substitute(&self, layouts: &[ColumnLayout], out: &mut [Vec<u8>]) -> bool {
        let total_cols = layouts.iter().map(|l| l.col_offset + l.upper_columns).max().unwrap_or(0);
        if total_cols > R::COLUMNS {
            return false;
        }
        #[cfg(target_arch = "x86_64")]
        if (1..=super::simd::MAX_COLUMNS).contains(&total_cols)
            && super::simd::back_substitute(&self.lo, &self.hi, &self.results, layouts, out).is_some()
        {
            return true;
        }
        self.back_substitute_scalar(layouts, out, total_cols);
        true
    }

    /// [`Banding::back_substitute`] without vector instructions.
    fn back_substitute_scalar(&self, layouts: &[ColumnLayout], out: &mut [Vec<u8>], total_cols: u32) {
        match total_cols {
            0 => {}
            1 => self.solve::<1>(layouts, out),
            2 => self.solve::<2>(layouts, out),
            3 => self.solve::<3>(layouts, out),
            4 => self.solve::<4>(layouts, out),
            5 => self.solve::<5>(layouts, out),
            6 => self.solve::<6>(layouts, out),
            7 => self.solve::<7>(layouts, out),
            8 => self.solve::<8>(layouts, out),
            9..=16 => self.solve::<16>(layouts, out),
            _ => self.solve::<32>(layouts, out),
        }
    }

    /// Back-substitution computing `C` result columns (at least the columns stored).
    ///
    /// Slots are solved from the last down. Column `j`'s state holds the solution bits of
    /// the next 128 slots (bit `k` = slot `i + k` once shifted), so slot `i`'s bit is
    /// `r_i ^ parity(c_i & state)`: the coefficient's pivot bit meets the state's empty bit
    /// 0. An empty slot (`lo = 0`; its `hi` and result may be stale) is a free variable and
    /// gets 0. After the 128 slots of a block, each state is exactly that block's segment
    /// of its column.
    fn solve<const C: usize>(&self, layouts: &[ColumnLayout], out: &mut [Vec<u8>]) {
        let mut state_lo = [0u64; C];
        let mut state_hi = [0u64; C];
        let bits = COEFF_BITS as usize;
        let num_blocks = self.lo.len() / bits;
        for block in (0..num_blocks).rev() {
            let rows = block * bits..(block + 1) * bits;
            let (Some(lo), Some(hi), Some(res)) =
                (self.lo.get(rows.clone()), self.hi.get(rows.clone()), self.results.get(rows))
            else {
                return;
            };
            for ((&c_lo, &c_hi), &r) in lo.iter().zip(hi).zip(res).rev() {
                // An empty slot (free variable, set to 0) may hold stale `hi` and result.
                let (c_hi, mut r) = if c_lo == 0 { (0, 0) } else { (c_hi, r.widen()) };
                for (s_lo, s_hi) in state_lo.iter_mut().zip(state_hi.iter_mut()) {
                    let n_hi = (*s_hi << 1) | (*s_lo >> 63);
                    let n_lo = *s_lo << 1;
                    let bit = ((n_lo & c_lo) ^ (n_hi & c_hi)).count_ones() ^ r;
                    r >>= 1;
                    *s_lo = n_lo | u64::from(bit & 1);
                    *s_hi = n_hi;
                }
            }
            store_segments(block, &state_lo, &state_hi, layouts, out);
        }
    }
}

/// After the 128 slots of `block`, each column's state (`state_lo[col]`, `state_hi[col]`)
/// is exactly that block's segment of the column: store the stored columns' segments.
pub(super) fn store_segments(
    block: usize,
    state_lo: &[u64],
    state_hi: &[u64],
    layouts: &[ColumnLayout],
    out: &mut [Vec<u8>],
) {
    for (layout, bytes) in layouts.iter().zip(out.iter_mut()) {
        let (seg, cols) = layout.segment_and_columns(block as u64);
        for c in 0..cols {
            let col = (layout.col_offset + c) as usize;
            let at = (seg + u64::from(c)) as usize * SEGMENT_BYTES;
            if let (Some(dst), Some(&l), Some(&h)) = (
                bytes.get_mut(at..).and_then(|s| s.first_chunk_mut::<SEGMENT_BYTES>()),
                state_lo.get(col),
                state_hi.get(col),
            ) {
                // The low word's little-endian bytes, then the high word's.
                *dst = (u128::from(h) << 64 | u128::from(l)).to_le_bytes();
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::testing::digests;

    /// Check every key's equation against the stored solution of one whole layout.
    fn solution_satisfies_all(keys: &[Digest], hasher: &RibbonHasher, layout: &ColumnLayout, bytes: &[u8]) -> bool {
        let num_starts = layout.num_starts();
        let bit = |col: u32, slot: usize| -> u32 {
            let block = (slot / 128) as u64;
            let (seg, _) = layout.segment_and_columns(block);
            let at = (seg + u64::from(col)) as usize * SEGMENT_BYTES + (slot % 128) / 8;
            u32::from(bytes[at] >> (slot % 8)) & 1
        };
        keys.iter().all(|d| {
            let e = RibbonHasher::equation(hasher.equation_hash(d), num_starts);
            let coeff = (u128::from(e.hi) << 64) | u128::from(e.lo);
            let cols = layout.segment_and_columns((e.start / 128) as u64).1;
            (0..cols).all(|col| {
                let mut acc = 0;
                for k in 0..128 {
                    if (coeff >> k) & 1 == 1 {
                        acc ^= bit(col, e.start + k);
                    }
                }
                acc == (e.result >> col) & 1
            })
        })
    }

    /// Band `keys` with rows of `R` and check the solution against every equation.
    fn solves_every_equation<R: ResultRow>(keys: &[Digest], cols: f64) -> Vec<u8> {
        let slots = super::super::config::num_slots_for(keys.len() as u64).unwrap() as usize;
        let layout = ColumnLayout::for_columns((slots / 128) as u32, cols, 0);
        let hasher = (0..8).map(RibbonHasher::for_seed).find(|h| {
            let mut b = Banding::<R>::new(slots);
            b.add_all(keys, h)
        });
        let hasher = hasher.expect("some seed solves");
        let mut b = Banding::<R>::new(slots);
        assert!(b.add_all(keys, &hasher));
        let mut out = vec![vec![0u8; layout.bytes() as usize]];
        assert!(b.back_substitute(&[layout], &mut out));
        assert!(solution_satisfies_all(keys, &hasher, &layout, &out[0]), "n = {}, cols = {cols}", keys.len());
        out.swap_remove(0)
    }

    #[test]
    fn interleaved_elimination_solves_every_equation() {
        for (n, cols) in [(1usize, 3.0), (2, 7.0), (3, 1.0), (1000, 7.0), (20_000, 6.6), (20_000, 8.0)] {
            let keys = digests(21, n as u64);
            // Byte and word result rows give the same solution.
            assert_eq!(solves_every_equation::<u8>(&keys, cols), solves_every_equation::<u32>(&keys, cols));
        }
        solves_every_equation::<u32>(&digests(21, 20_000), 12.5);
    }

    #[test]
    fn byte_rows_refuse_more_than_eight_columns() {
        let keys = digests(24, 1000);
        let slots = super::super::config::num_slots_for(1000).unwrap() as usize;
        let layout = ColumnLayout::for_columns((slots / 128) as u32, 9.0, 0);
        let mut b = Banding::<u8>::new(slots);
        assert!((0..8).any(|s| {
            b.clear();
            b.add_all(&keys, &RibbonHasher::for_seed(s))
        }));
        let mut out = vec![vec![0u8; layout.bytes() as usize]];
        assert!(!b.back_substitute(&[layout], &mut out));
    }

    #[test]
    fn vector_and_scalar_back_substitution_agree() {
        #[cfg(target_arch = "x86_64")]
        if !super::super::simd::available() {
            eprintln!("no AVX-512 here: only the scalar path runs");
        }
        for (n, cols) in [(1usize, vec![3.0]), (3000, vec![7.0]), (20_000, vec![6.64]), (20_000, vec![3.0, 4.5])] {
            let keys = digests(23, n as u64);
            let slots = super::super::config::num_slots_for(n as u64).unwrap() as usize;
            let mut offset = 0;
            let layouts: Vec<ColumnLayout> = cols
                .iter()
                .map(|&c| {
                    let l = ColumnLayout::for_columns((slots / 128) as u32, c, offset);
                    offset += l.upper_columns;
                    l
                })
                .collect();
            let mut b = Banding::<u8>::new(slots);
            let hasher = (0..8).map(RibbonHasher::for_seed).find(|h| {
                b.clear();
                b.add_all(&keys, h)
            });
            let hasher = hasher.expect("some seed solves");
            let total = layouts.iter().map(|l| l.col_offset + l.upper_columns).max().unwrap();
            let fresh = || layouts.iter().map(|l| vec![0u8; l.bytes() as usize]).collect::<Vec<_>>();
            let (mut fast, mut scalar) = (fresh(), fresh());
            assert!(b.back_substitute(&layouts, &mut fast));
            b.back_substitute_scalar(&layouts, &mut scalar, total);
            assert_eq!(fast, scalar, "n = {n}, cols = {cols:?}");
            if layouts.len() == 1 {
                assert!(solution_satisfies_all(&keys, &hasher, &layouts[0], &fast[0]));
            }
        }
    }

    #[test]
    fn insertion_order_does_not_change_solvability() {
        let keys = digests(22, 5000);
        let slots = super::super::config::num_slots_for(5000).unwrap() as usize;
        for seed in 0..6 {
            let h = RibbonHasher::for_seed(seed);
            let mut sorted = Banding::<u32>::new(slots);
            let ok_sorted = sorted.add_all(&keys, &h);
            let mut plain = Banding::<u32>::new(slots);
            let hashes: Vec<u64> = keys.iter().map(|d| h.equation_hash(d)).collect();
            let num_starts = plain.num_starts();
            let n = plain.num_slots();
            let ok_plain = hashes.iter().all(|v| {
                walk(
                    &mut plain.lo[..n],
                    &mut plain.hi[..n],
                    &mut plain.results[..n],
                    Row::of(RibbonHasher::equation(*v, num_starts)),
                )
            });
            assert_eq!(ok_sorted, ok_plain, "seed {seed}");
        }
    }
}
