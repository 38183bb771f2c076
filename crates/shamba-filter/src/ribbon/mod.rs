//! Ribbon filter (seed 004): standard 128-bit-coefficient Ribbon with interleaved solution
//! storage and fractional bits per key.
//!
//! A Ribbon filter stores a solution `S` (one row of `r` bits per slot) to the linear system
//! `c(x) · S = r(x)` over GF(2) for every key `x`, where `c(x)` is a 128-bit coefficient
//! window at a key-dependent start slot and `r(x)` is an `r`-bit fingerprint of the key. A
//! query recomputes `c(x) · S` and compares it with `r(x)`: a key in the set always matches;
//! any other key matches with probability `2^-r`. With `m ≈ 1.03-1.05 n` slots this costs
//! `≈ 1.04 · log2(1/FPR)` bits per key, about 30% less than a Bloom filter (1.44 log2(1/FPR)
//! plus blocking loss).
//!
//! - [`config`]: slots for a key count; [`hasher`]: equations from a digest and a seed;
//!   [`banding`]: elimination and back-substitution; [`layout`]: interleaved storage and
//!   fractional columns.
//! - Construction tries up to [`MAX_SEEDS`] seeds (each fails with probability ~1/20) and
//!   reports failure instead of panicking; [`crate::build_filter_parts`] then falls
//!   back to a Bloom filter and records the reason in the part header.
//!
//! **Analytic FP rate**: `p · 2^-(u-1) + (1 - p) · 2^-u` for `u` upper columns and a
//! fraction `p` of starts in lower blocks ([`ColumnLayout::expected_fpr`]); a modular
//! Ribbon's rate is the product of its modules' rates (disjoint result columns are
//! independent fingerprint bits).
//!
//! Parameters in the part header (27 bytes): `num_blocks: u32, upper_start_block: u32,
//! upper_columns: u8, col_offset: u8, raw_seed: u64, num_keys: u64, equation_scheme: u8`
//! (2: the equations of [`hasher`]; parts of scheme 1, whose 26-byte parameters had no such
//! field, are rejected rather than probed with the wrong equations). Payload: the segments
//! of [`layout`], 16 bytes each.
//!
//! A probe reads, per stored column, the three 64-bit words its 128-bit window overlaps (in
//! this block's and the next block's segments: at most ~2 x 16 x columns contiguous bytes,
//! 4 cache lines at 7 columns) and computes the column's bit with one POPCNT.

#![deny(clippy::indexing_slicing)]

pub mod banding;
pub mod config;
pub mod hasher;
pub mod layout;
#[cfg(target_arch = "x86_64")]
mod simd;

use self::banding::{Banding, ResultRow};
use self::config::{num_slots_for, COEFF_BITS};
use self::hasher::RibbonHasher;
use self::layout::{ColumnLayout, MAX_COLUMNS, SEGMENT_BYTES};
use super::digest::Digest;
use super::format::{self, FallbackReason, Header, PartKind, RawPart, Reader, Role, Writer};
use crate::DecodeError;

/// Columns a probe checks before its one early exit.
const FIRST_COLUMNS: u32 = 2;

/// The equation scheme written in the part parameters (see [`hasher`]).
pub const EQUATION_SCHEME: u8 = 2;

/// Columns the straight-line probe handles (FP rates down to 2^-8 = 0.4%).
const UNROLLED_COLUMNS: usize = 8;
/// The window the straight-line probe reads: offsets within it are below 256 (`& 0xFF`
/// makes that visible to the compiler, which then drops every bounds check), and the last
/// word read ends 8 bytes after the last column's start.
const UNROLLED_WINDOW: usize = 0x100 + (UNROLLED_COLUMNS - 1) * SEGMENT_BYTES + 8;

/// Seeds tried before construction gives up (each fails with probability about 1/20).
pub const MAX_SEEDS: u32 = 16;

/// Result columns (fractional) for an FP rate: `log2(1 / fp)`.
pub fn columns_for_fp_rate(fp_rate: f64) -> Option<f64> {
    if !(fp_rate > 0.0 && fp_rate < 1.0) {
        return None;
    }
    let c = -fp_rate.log2();
    (c <= f64::from(MAX_COLUMNS)).then_some(c)
}

/// A solved Ribbon filter: one stored layout per module (one for a whole filter).
#[derive(Debug, Clone)]
pub struct RibbonBuild {
    layouts: Vec<ColumnLayout>,
    segments: Vec<Vec<u8>>,
    raw_seed: u64,
    num_keys: u64,
    /// Seeds tried until one solved (1 = first try).
    pub attempts: u32,
}

/// Build a Ribbon over `digests` with `columns[d]` (fractional) result columns in module
/// `d`. Fails with a reason, never panics.
///
/// # Errors
///
/// [`FallbackReason::RibbonUnsupportedRate`] when there are no modules, more than 255,
/// more than 32 result columns in all, or a module's column count makes no valid layout;
/// [`FallbackReason::RibbonTooManyKeys`] when the keys need more than 2^32 slots;
/// [`FallbackReason::RibbonConstructionFailed`] when banding fails for every seed tried.
pub fn build_ribbon(digests: &[Digest], columns: &[f64]) -> Result<RibbonBuild, FallbackReason> {
    let total: f64 = columns.iter().map(|c| c.ceil()).sum();
    if columns.is_empty() || columns.len() > usize::from(u8::MAX) || total.is_nan() || total > f64::from(MAX_COLUMNS) {
        return Err(FallbackReason::RibbonUnsupportedRate);
    }
    let num_slots = num_slots_for(digests.len() as u64).ok_or(FallbackReason::RibbonTooManyKeys)?;
    let num_blocks = u32::try_from(num_slots / COEFF_BITS).map_err(|_| FallbackReason::RibbonTooManyKeys)?;
    let mut offset = 0u32;
    let layouts: Vec<ColumnLayout> = columns
        .iter()
        .map(|&c| {
            let l = ColumnLayout::for_columns(num_blocks, c, offset);
            offset += l.upper_columns;
            l
        })
        .collect();
    if layouts.iter().any(|l| !l.is_valid()) {
        return Err(FallbackReason::RibbonUnsupportedRate);
    }
    // Byte result rows when they hold every column (see `banding::ResultRow`).
    if offset <= <u8 as ResultRow>::COLUMNS {
        solve_with::<u8>(digests, num_slots as usize, layouts)
    } else {
        solve_with::<u32>(digests, num_slots as usize, layouts)
    }
}

/// Band and back-substitute with result rows of type `R` (which must hold every column of
/// `layouts`), trying seeds in turn.
fn solve_with<R: ResultRow>(
    digests: &[Digest],
    num_slots: usize,
    layouts: Vec<ColumnLayout>,
) -> Result<RibbonBuild, FallbackReason> {
    let mut banding = Banding::<R>::new(num_slots);
    for seed in 0..MAX_SEEDS {
        let hasher = RibbonHasher::for_seed(seed);
        if seed > 0 {
            banding.clear();
        }
        if banding.add_all(digests, &hasher) {
            let mut segments: Vec<Vec<u8>> = layouts.iter().map(|l| vec![0u8; l.bytes() as usize]).collect();
            if !banding.back_substitute(&layouts, &mut segments) {
                return Err(FallbackReason::RibbonUnsupportedRate);
            }
            return Ok(RibbonBuild {
                layouts,
                segments,
                raw_seed: hasher.raw_seed(),
                num_keys: digests.len() as u64,
                attempts: seed + 1,
            });
        }
    }
    Err(FallbackReason::RibbonConstructionFailed)
}

impl RibbonBuild {
    /// Serialize each module as a part (`role` Whole for a single layout).
    pub fn finish(&self, role: Role, digest_version: u8) -> Vec<Vec<u8>> {
        let count = self.layouts.len() as u8;
        self.layouts
            .iter()
            .zip(&self.segments)
            .enumerate()
            .map(|(d, (l, seg))| {
                let header = Header {
                    kind: PartKind::Ribbon,
                    digest_version,
                    role,
                    part_index: d as u8,
                    part_count: count,
                    fallback: FallbackReason::None,
                };
                let mut w = Writer::default();
                w.u32(l.num_blocks)
                    .u32(l.upper_start_block)
                    .u8(l.upper_columns as u8)
                    .u8(l.col_offset as u8)
                    .u64(self.raw_seed)
                    .u64(self.num_keys)
                    .u8(EQUATION_SCHEME);
                format::encode(&header, &w.bytes, seg)
            })
            .collect()
    }

    /// The stored layouts, one per module.
    pub fn layouts(&self) -> &[ColumnLayout] {
        &self.layouts
    }

    /// Analytic FP rate of all modules together (product of module rates).
    pub fn expected_fpr(&self) -> f64 {
        self.layouts.iter().map(|l| l.expected_fpr()).product()
    }

    /// Payload bytes of all modules.
    pub fn bytes(&self) -> u64 {
        self.layouts.iter().map(|l| l.bytes()).sum()
    }
}

/// A Ribbon filter (or module) read from its part, borrowing the bytes.
#[derive(Debug, Clone, Copy)]
pub struct RibbonRef<'a> {
    data: &'a [u8],
    layout: ColumnLayout,
    hasher: RibbonHasher,
    num_starts: u64,
    num_keys: u64,
}

impl<'a> RibbonRef<'a> {
    /// Check the parameters against the payload.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the parameter block is not exactly the Ribbon's, the equation
    /// scheme is not the one this reader knows, the column layout is inconsistent, or the
    /// payload is not the size the layout needs.
    pub fn parse(raw: &RawPart<'a>) -> Result<Self, DecodeError> {
        let mut r = Reader::new(raw.params);
        let num_blocks = r.u32()?;
        let upper_start_block = r.u32()?;
        let upper_columns = u32::from(r.u8()?);
        let col_offset = u32::from(r.u8()?);
        let raw_seed = r.u64()?;
        let num_keys = r.u64()?;
        let scheme = r.u8()?;
        r.finish()?;
        if scheme != EQUATION_SCHEME {
            return Err(DecodeError::new(format!("ribbon: equation scheme {scheme}, reader knows {EQUATION_SCHEME}")));
        }
        let layout = ColumnLayout { num_blocks, upper_start_block, upper_columns, col_offset };
        if !layout.is_valid() {
            return Err(DecodeError::new(format!("ribbon: inconsistent layout {layout:?}")));
        }
        if raw.payload.len() as u64 != layout.bytes() {
            return Err(DecodeError::new(format!(
                "ribbon: payload {} bytes, layout needs {}",
                raw.payload.len(),
                layout.bytes()
            )));
        }
        Ok(RibbonRef {
            data: raw.payload,
            layout,
            hasher: RibbonHasher::from_raw(raw_seed),
            num_starts: layout.num_starts(),
            num_keys,
        })
    }

    /// Where the probe of `digest` reads: for each stored column `j`, the three 64-bit
    /// words at `first + 16 j`, `first + second + 16 j` and `first + third + 16 j` (module
    /// doc of [`layout`]), the coefficient shifted to line up with them, and the expected
    /// fingerprint.
    #[inline(always)]
    fn probe_plan(&self, digest: &Digest) -> ProbePlan {
        let e = RibbonHasher::equation(self.hasher.equation_hash(digest), self.num_starts);
        let block = (e.start / COEFF_BITS as usize) as u64;
        let bit = e.start % COEFF_BITS as usize;
        let (seg, cols) = self.layout.segment_and_columns(block);
        // The key's 128-bit window starts `bit` bits into this block's segment of a column
        // and ends in the next block's segment of the same column, `stride` bytes further:
        // it covers words q, q + 1, q + 2 (q = bit / 64) of [this segment's 2 words | next
        // segment's 2]. Either way the third word is `stride` past the first.
        let shift = (bit % 64) as u32;
        let k0 = e.lo << shift;
        let k1 = (e.hi << shift) | ((e.lo >> 1) >> (63 - shift));
        let k2 = (e.hi >> 1) >> (63 - shift);
        let stride = cols as usize * SEGMENT_BYTES;
        let high_word = bit & 64 != 0;
        ProbePlan {
            first: seg as usize * SEGMENT_BYTES + if high_word { 8 } else { 0 },
            // (No column at all: every probe says maybe, the offsets are not used.)
            second: if high_word { stride.saturating_sub(8) } else { 8 },
            third: stride,
            coeffs: [k0, k1, k2],
            cols,
            expected: e.result >> self.layout.col_offset,
        }
    }

    /// `false`: the key was certainly not added.
    ///
    /// Each column costs three word loads, three ands and one POPCNT. The first
    /// `FIRST_COLUMNS` columns are checked before one early exit (a miss fails there with
    /// probability 3/4, so the branch is mostly predicted); the rest branch-free, since
    /// branching per column would mispredict on almost every miss.
    ///
    /// Always inlined, so that [`crate::FilterPart::may_contain`] runs it without a
    /// second call: an in-cache probe is about 160 instructions of straight-line code, and
    /// the inner call's register saves and constant reloads were a measurable part of it.
    #[inline(always)]
    pub fn may_contain(&self, digest: &Digest) -> bool {
        // Predictable: the same for every probe of this filter. A block stores
        // `upper_columns` or one fewer: at most `N` in each arm, and at least 4 in the arms
        // with `N > 4` (which `probe_unrolled` relies on).
        let answer = match self.layout.upper_columns {
            0..=4 => self.probe_unrolled::<4>(&self.probe_plan(digest)),
            5..=7 => self.probe_unrolled::<7>(&self.probe_plan(digest)),
            8 => self.probe_unrolled::<8>(&self.probe_plan(digest)),
            _ => None,
        };
        answer.unwrap_or_else(|| self.probe_any(digest))
    }

    /// The common case, straight-line: at most `N` <= 8 columns and all their
    /// words inside one fixed-size window of the payload (not so only for keys in the last
    /// few blocks). The second and third words of a column are at most 16 x 8 bytes past
    /// the first, so one window check covers every load. Columns past the stored ones read
    /// bytes of the next segments and are masked out.
    ///
    /// Column `j`'s bit is the low bit of its masked window's POPCNT; the counts (at most
    /// 64) are summed into byte lanes (`j` in byte `j`) and compared with the fingerprint
    /// spread the same way ([`SPREAD_BITS`]), which saves the per-column `& 1`.
    ///
    /// Called only for blocks of at most `N` columns, and of at least 4 when `N > 4`
    /// (see [`Self::may_contain`]): the only column count to check is 0, which the
    /// lane mask cannot express.
    #[inline(always)]
    fn probe_unrolled<const N: usize>(&self, p: &ProbePlan) -> Option<bool> {
        debug_assert!(p.cols as usize <= N && (N <= 4 || p.cols >= 4), "{} columns, N = {N}", p.cols);
        if (N <= 4 && p.cols == 0) || N > UNROLLED_COLUMNS {
            return None;
        }
        let window = self.data.get(p.first..)?.first_chunk::<UNROLLED_WINDOW>()?;
        let (d1, d2) = (p.second & 0xFF, p.third & 0xFF);
        let [k0, k1, k2] = p.coeffs;
        let count = |j: usize| {
            let at = j * SEGMENT_BYTES;
            u64::from(
                ((word_at(window, at) & k0) ^ (word_at(window, d1 + at) & k1) ^ (word_at(window, d2 + at) & k2))
                    .count_ones(),
            )
        };
        let expected = spread_bits(p.expected as u8);
        let mut counts = count(0) | (count(1) << 8);
        let first_lanes = if N > 4 || p.cols >= FIRST_COLUMNS { 0x0101 } else { 0x01 };
        if (counts ^ expected) & first_lanes != 0 {
            return Some(false);
        }
        for j in FIRST_COLUMNS as usize..N {
            counts += count(j) << (8 * j);
        }
        Some((counts ^ expected) & (LOW_BIT_OF_EACH_BYTE >> (64 - 8 * p.cols)) == 0)
    }

    /// Any column count, any position (rare: kept out of line so that the common path
    /// keeps its plan in registers).
    #[cold]
    #[inline(never)]
    fn probe_any(&self, digest: &Digest) -> bool {
        let p = self.probe_plan(digest);
        if p.cols == 0 {
            return true;
        }
        let span = (p.cols as usize - 1) * SEGMENT_BYTES + 8;
        let [k0, k1, k2] = p.coeffs;
        // A word whose coefficient part is zero is never needed; reading a needed one
        // instead keeps the last block (which has no next block, and always a window
        // starting at its bit 0, so `k2 == 0`) in bounds.
        let [w0, w1, w2] = p.words();
        let w2 = if k2 == 0 { w0 } else { w2 };
        let (Some(a), Some(b), Some(c)) =
            (self.data.get(w0..w0 + span), self.data.get(w1..w1 + span), self.data.get(w2..w2 + span))
        else {
            return true;
        };
        let parity =
            |((a, b), c): ((&[u8], &[u8]), &[u8])| ((word(a) & k0) ^ (word(b) & k1) ^ (word(c) & k2)).count_ones() & 1;
        let columns = a.chunks(SEGMENT_BYTES).zip(b.chunks(SEGMENT_BYTES)).zip(c.chunks(SEGMENT_BYTES));
        let got = columns.enumerate().fold(0u32, |got, (j, w)| got | (parity(w) << j));
        (got ^ p.expected) & (u32::MAX >> (32 - p.cols)) == 0
    }

    /// Byte range of the payload the probe of `digest` reads (for prefetching).
    #[inline]
    pub fn probe_range(&self, digest: &Digest) -> std::ops::Range<usize> {
        let p = self.probe_plan(digest);
        let span = (p.cols as usize).saturating_sub(1) * SEGMENT_BYTES + 8;
        let [first, second, third] = p.words();
        let last = if p.coeffs[2] == 0 { second } else { third } + span;
        first.min(self.data.len())..last.min(self.data.len())
    }

    /// The payload bytes (for prefetching).
    pub fn payload(&self) -> &'a [u8] {
        self.data
    }

    /// The stored layout.
    pub fn layout(&self) -> ColumnLayout {
        self.layout
    }

    /// Keys the filter was built over.
    pub fn num_keys(&self) -> u64 {
        self.num_keys
    }
}

/// What a probe reads and compares (see [`RibbonRef::probe_plan`]).
struct ProbePlan {
    /// Payload offset of column 0's first word; column `j` adds `16 j` to all three.
    first: usize,
    /// Offset of the second word from the first.
    second: usize,
    /// Offset of the third word from the first.
    third: usize,
    /// The coefficient row shifted to line up with the three words.
    coeffs: [u64; 3],
    /// Columns stored for the key's block.
    cols: u32,
    /// The key's fingerprint, column 0 in bit 0.
    expected: u32,
}

impl ProbePlan {
    /// Payload offsets of column 0's three words.
    fn words(&self) -> [usize; 3] {
        [self.first, self.first + self.second, self.first + self.third]
    }
}

/// Bit 0 of every byte.
const LOW_BIT_OF_EACH_BYTE: u64 = 0x0101_0101_0101_0101;

/// `SPREAD_BITS[x]` has bit `j` of `x` in bit 0 of byte `j`: a fingerprint's columns laid
/// out like the probe's per-column counts.
#[expect(clippy::indexing_slicing, reason = "evaluated at compile time: x < 256, the table's length")]
static SPREAD_BITS: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut x = 0;
    while x < 256 {
        let mut j = 0;
        while j < 8 {
            table[x] |= ((x as u64 >> j) & 1) << (8 * j);
            j += 1;
        }
        x += 1;
    }
    table
};

/// `SPREAD_BITS[x]` (a `u8` index into 256 entries: the check compiles away).
#[inline(always)]
fn spread_bits(x: u8) -> u64 {
    SPREAD_BITS.get(usize::from(x)).copied().unwrap_or(0)
}

/// The little-endian word at byte `at` of a window (constant `at`: no bounds check left).
#[inline(always)]
fn word_at<const N: usize>(window: &[u8; N], at: usize) -> u64 {
    window.get(at..).and_then(|s| s.first_chunk::<8>()).map_or(0, |b| u64::from_le_bytes(*b))
}

/// The little-endian word at the start of `s` (0 if shorter, which a validated payload
/// never is).
#[inline(always)]
fn word(s: &[u8]) -> u64 {
    s.first_chunk::<8>().map_or(0, |b| u64::from_le_bytes(*b))
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::testing::{digests, fpr_of, within};

    fn parts(b: &RibbonBuild) -> Vec<Vec<u8>> {
        b.finish(if b.layouts().len() == 1 { Role::Whole } else { Role::Module }, 1)
    }

    #[test]
    fn small_and_empty_sets_have_no_false_negatives() {
        for n in [0u64, 1, 2, 3, 100, 255, 256, 300, 1000] {
            let keys = digests(5, n);
            let b = build_ribbon(&keys, &[6.5]).unwrap();
            let bytes = parts(&b);
            let raw = format::decode(&bytes[0]).unwrap();
            let f = RibbonRef::parse(&raw).unwrap();
            assert!(keys.iter().all(|d| f.may_contain(d)), "n = {n}");
        }
    }

    #[test]
    fn duplicates_are_redundant_not_failures() {
        let mut keys = digests(6, 5000);
        keys.extend(digests(6, 5000));
        let b = build_ribbon(&keys, &[7.0]).unwrap();
        let bytes = parts(&b);
        let raw = format::decode(&bytes[0]).unwrap();
        let f = RibbonRef::parse(&raw).unwrap();
        assert!(keys.iter().all(|d| f.may_contain(d)));
    }

    #[test]
    fn measured_fpr_matches_the_analytic_formula() {
        let n = 50_000;
        let keys = digests(7, n);
        for cols in [6.64, 4.0] {
            let b = build_ribbon(&keys, &[cols]).unwrap();
            let bytes = parts(&b);
            let raw = format::decode(&bytes[0]).unwrap();
            let f = RibbonRef::parse(&raw).unwrap();
            assert!(keys.iter().all(|d| f.may_contain(d)));
            let measured = fpr_of(|d| f.may_contain(d), 1_000_000);
            let expected = b.expected_fpr();
            assert!(within(measured, expected, 0.10), "{cols}: {measured} vs {expected}");
            let bits_per_key = b.bytes() as f64 * 8.0 / n as f64;
            assert!(bits_per_key < cols * 1.06, "{cols} columns cost {bits_per_key} bits/key");
        }
    }

    #[test]
    fn output_does_not_depend_on_reused_scratch() {
        // Construction reuses this thread's scratch without clearing coefficient-high and
        // result words: a filter must come out byte-identical whatever was built before.
        let keys = digests(11, 20_000);
        let first = parts(&build_ribbon(&keys, &[6.7]).unwrap());
        build_ribbon(&digests(12, 60_000), &[3.0, 9.5]).unwrap();
        let again = parts(&build_ribbon(&keys, &[6.7]).unwrap());
        assert_eq!(first, again);
    }

    #[test]
    fn the_straight_line_probe_answers_as_the_general_one() {
        // Every arm of `may_contain` (whole and fractional column counts up to 8, and past
        // them), with and without a column offset (the modules of a modular Ribbon): the
        // lane arithmetic must give exactly the general probe's answer, hit or miss.
        let keys = digests(13, 30_000);
        let queries = digests(14, 30_000);
        for columns in [
            [0.5, 0.0],
            [1.0, 0.0],
            [1.5, 0.0],
            [3.3, 0.0],
            [4.0, 0.0],
            [5.0, 0.0],
            [6.64, 0.0],
            [7.0, 0.0],
            [7.6, 0.0],
            [8.0, 0.0],
            [9.5, 0.0],
            [2.0, 3.4],
            [3.0, 7.5],
            [1.0, 8.0],
        ] {
            let columns: Vec<f64> = columns.into_iter().filter(|&c| c > 0.0).collect();
            let b = build_ribbon(&keys, &columns).unwrap();
            for bytes in parts(&b) {
                let raw = format::decode(&bytes).unwrap();
                let f = RibbonRef::parse(&raw).unwrap();
                for d in keys.iter().chain(&queries) {
                    assert_eq!(f.may_contain(d), f.probe_any(d), "{columns:?}, layout {:?}", f.layout());
                }
                assert!(keys.iter().all(|d| f.may_contain(d)), "{columns:?}");
            }
        }
    }

    #[test]
    fn unsupported_rates_are_reported_not_panicked() {
        assert_eq!(build_ribbon(&digests(1, 10), &[40.0]).err(), Some(FallbackReason::RibbonUnsupportedRate));
        assert_eq!(build_ribbon(&digests(1, 10), &[]).err(), Some(FallbackReason::RibbonUnsupportedRate));
        assert_eq!(columns_for_fp_rate(1.0), None);
        assert_eq!(columns_for_fp_rate(0.0), None);
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod phase_timing {
    use super::*;
    use crate::testing::digests;
    use std::time::Instant;

    #[test]
    #[ignore = "timing probe; run in release with --nocapture"]
    fn ribbon_phases() {
        let n = 1_000_000u64;
        let keys = digests(9, n);
        let slots = num_slots_for(n).unwrap();
        let layouts = [ColumnLayout::for_columns((slots / 128) as u32, 6.7, 0)];
        let ns = |a: Instant, b: Instant| (b - a).as_nanos() as f64 / n as f64;
        for _ in 0..5 {
            let t0 = Instant::now();
            let mut banding = Banding::<u8>::new(slots as usize);
            let h = RibbonHasher::for_seed(0);
            let t1 = Instant::now();
            let hashes = banding.sorted_hashes(&keys, &h);
            let t2 = Instant::now();
            let ok = banding.add_sorted(&hashes);
            let t3 = Instant::now();
            let mut segs = vec![vec![0u8; layouts[0].bytes() as usize]];
            assert!(banding.back_substitute(&layouts, &mut segs));
            let t4 = Instant::now();
            eprintln!(
                "ok={ok} alloc {:.1} sort {:.1} band {:.1} back {:.1} ns/key",
                ns(t0, t1),
                ns(t1, t2),
                ns(t2, t3),
                ns(t3, t4)
            );
        }
    }
}
