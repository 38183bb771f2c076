//! Interleaved solution storage: which 128-bit segments hold which result columns.
//!
//! The solution has one bit per slot per result column. Slots are grouped into blocks of
//! 128; for each block, each stored column is one 128-bit little-endian segment whose bit
//! `t` is the solution bit of slot `128·block + t`. Segments are stored block by block,
//! column by column within a block:
//!
//! ```text
//! block 0: col 0, col 1, ..., col c0-1 | block 1: col 0, ..., col c1-1 | ...
//! ```
//!
//! **Fractional columns** (fractional bits/key): blocks `0 .. upper_start_block` store
//! `upper_columns - 1` columns, the rest store `upper_columns`. A key starting in a block
//! checks that block's number of columns. Since column counts never decrease along the
//! blocks, the following block always has the columns a query needs.
//!
//! **Analytic FP rate**: each checked column halves the FP rate, so with `p` the fraction
//! of start positions in lower blocks, `FPR = p · 2^-(upper-1) + (1 - p) · 2^-upper`.
//!
//! A *module* of a modular Ribbon is one such layout over result columns
//! `col_offset .. col_offset + upper_columns` of a shared solution.

#![deny(clippy::indexing_slicing)]

use super::config::COEFF_BITS;

/// Bytes per segment.
pub const SEGMENT_BYTES: usize = 16;
/// Most result columns of one solution (the result row is 32 bits).
pub const MAX_COLUMNS: u32 = 32;

/// The column layout of one stored solution (or module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnLayout {
    /// Blocks of 128 slots (at least 1).
    pub num_blocks: u32,
    /// First block with `upper_columns` columns; earlier blocks have one fewer.
    pub upper_start_block: u32,
    /// Columns in the upper blocks (0 = no columns: every probe says maybe).
    pub upper_columns: u32,
    /// First result-row bit this layout stores.
    pub col_offset: u32,
}

impl ColumnLayout {
    /// The layout closest to `columns` (fractional) result columns for `num_blocks` blocks.
    /// Like RocksDB, the fraction is chosen so the mixture of FP rates equals `2^-columns`.
    pub fn for_columns(num_blocks: u32, columns: f64, col_offset: u32) -> Self {
        let num_blocks = num_blocks.max(1);
        let columns = if columns.is_nan() { 0.0 } else { columns.clamp(0.0, f64::from(MAX_COLUMNS)) };
        let lower = columns.floor();
        let (lower_cols, upper_start_block) = if columns == lower {
            (lower as u32, num_blocks)
        } else {
            let fp = 2f64.powf(-columns);
            let (fp_lower, fp_upper) = (2f64.powf(-lower), 2f64.powf(-lower - 1.0));
            let lower_portion = ((fp - fp_upper) / (fp_lower - fp_upper)).clamp(0.0, 1.0);
            let num_starts = f64::from(num_blocks) * COEFF_BITS as f64 - (COEFF_BITS - 1) as f64;
            let usb = ((lower_portion * num_starts) / COEFF_BITS as f64).floor();
            (lower as u32, (usb as u32).min(num_blocks))
        };
        // Normalise like RocksDB: count segments, then derive upper columns from them.
        let segments = u64::from(num_blocks) * u64::from(lower_cols) + u64::from(num_blocks - upper_start_block);
        Self::from_segments(num_blocks, segments, col_offset)
    }

    fn from_segments(num_blocks: u32, segments: u64, col_offset: u32) -> Self {
        let nb = u64::from(num_blocks);
        let upper = segments.div_ceil(nb);
        let usb = upper * nb - segments;
        ColumnLayout { num_blocks, upper_start_block: usb as u32, upper_columns: upper as u32, col_offset }
    }

    /// Whether the fields are consistent (checked when parsing).
    pub fn is_valid(&self) -> bool {
        self.num_blocks >= 1
            && self.upper_start_block <= self.num_blocks
            && self.upper_columns <= MAX_COLUMNS
            && self.col_offset + self.upper_columns <= MAX_COLUMNS
            && (self.upper_columns > 0 || self.upper_start_block == 0)
    }

    /// Number of start positions: a key's 128-slot window must fit.
    pub fn num_starts(&self) -> u64 {
        u64::from(self.num_blocks) * COEFF_BITS - (COEFF_BITS - 1)
    }

    /// Total 128-bit segments stored.
    pub fn num_segments(&self) -> u64 {
        u64::from(self.num_blocks) * u64::from(self.upper_columns) - u64::from(self.upper_start_block)
    }

    /// Payload bytes.
    pub fn bytes(&self) -> u64 {
        self.num_segments() * SEGMENT_BYTES as u64
    }

    /// First segment of `block` and the number of columns it stores.
    #[inline(always)]
    pub fn segment_and_columns(&self, block: u64) -> (u64, u32) {
        let usb = u64::from(self.upper_start_block);
        let seg = block * u64::from(self.upper_columns) - block.min(usb);
        let cols = self.upper_columns - u32::from(block < usb);
        (seg, cols)
    }

    /// Analytic FP rate (module doc).
    pub fn expected_fpr(&self) -> f64 {
        if self.upper_columns == 0 {
            return 1.0;
        }
        let lower_portion =
            ((u64::from(self.upper_start_block) * COEFF_BITS) as f64 / self.num_starts() as f64).min(1.0);
        let upper = f64::from(self.upper_columns);
        lower_portion * 2f64.powf(-(upper - 1.0)) + (1.0 - lower_portion) * 2f64.powf(-upper)
    }

    /// Average stored columns per slot ("bits per slot").
    pub fn average_columns(&self) -> f64 {
        self.num_segments() as f64 / f64::from(self.num_blocks)
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn whole_columns_have_no_lower_blocks() {
        let l = ColumnLayout::for_columns(100, 7.0, 0);
        assert_eq!((l.upper_columns, l.upper_start_block), (7, 0));
        assert_eq!(l.num_segments(), 700);
        assert!((l.expected_fpr() - 2f64.powi(-7)).abs() < 1e-12);
    }

    #[test]
    fn fractional_columns_hit_the_requested_rate() {
        for c in [0.4, 1.5, 6.64, 6.72, 9.99, 20.3] {
            let l = ColumnLayout::for_columns(10_000, c, 0);
            assert!(l.is_valid());
            let want = 2f64.powf(-c);
            assert!((l.expected_fpr() - want).abs() / want < 0.01, "{c}: {} vs {want}", l.expected_fpr());
            // Mixing FP rates costs a little more than `c` columns on average (convexity).
            assert!(l.average_columns() >= c - 1e-9 && l.average_columns() < c + 0.1, "{c}: {}", l.average_columns());
        }
    }

    #[test]
    fn segments_are_contiguous_per_block() {
        let l = ColumnLayout::for_columns(10, 3.5, 0);
        let mut next = 0;
        for b in 0..10 {
            let (seg, cols) = l.segment_and_columns(b);
            assert_eq!(seg, next);
            next += u64::from(cols);
        }
        assert_eq!(next, l.num_segments());
    }
}
