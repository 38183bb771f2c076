//! Cache-line-blocked Bloom filter: the engine's default filter.
//!
//! The bit array is split into 512-bit (64-byte, one cache line) blocks. A key's digest
//! picks one block with `h1` (multiply-shift onto the block count) and sets or tests `k` bits
//! inside it, the i-th bit being the top 9 bits of `h2 * M^i` (one multiplication per probe).
//! A probe therefore touches exactly one cache line and hashes nothing. Bits per key may be
//! fractional: the block count is `ceil(n * b / 512)`.
//!
//! **Analytic FP rate** (Putze, Sanders, Singler 2009). The number of keys in a block is
//! about Poisson(λ = n / blocks); a block with `i` keys has each bit unset with probability
//! `(1 - 1/512)^(k i)`, so
//!
//! ```text
//! FPR = Σ_i  e^-λ λ^i / i!  ·  (1 - (1 - 1/512)^(k·i))^k
//! ```
//!
//! `k` is the value minimising that formula for the bits/key (6 at 10 bits/key), see
//! [`blocked_num_probes`].
//!
//! Parameters in the part header (16 bytes): `num_blocks: u32, num_probes: u32,
//! num_keys: u64`. Payload: `num_blocks * 64` bytes, bit `j` of a block is
//! `byte[j / 8] >> (j % 8) & 1`.

#![deny(clippy::indexing_slicing)]

use super::digest::{fastrange64, Digest};
use super::format::{self, FallbackReason, Header, PartKind, RawPart, Reader, Role, Writer};
use crate::DecodeError;

/// Bytes per block (one cache line).
pub const BLOCK_BYTES: usize = 64;
const BLOCK_BITS: u32 = 512;
/// Multiplier that advances a probe's hash to the next probe.
const PROBE_MUL: u64 = 0x9E37_79B9_7F4A_7C15;
/// Most probes per key.
pub const MAX_PROBES: u32 = 24;

/// The sizes of one blocked Bloom filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockedBloomParams {
    /// Number of 512-bit blocks (at least 1).
    pub num_blocks: u32,
    /// Bits set / tested per key.
    pub num_probes: u32,
    /// Keys added (for the analytic FP rate; duplicates count).
    pub num_keys: u64,
}

impl BlockedBloomParams {
    /// Sizes for `num_keys` keys at `bits_per_key` (fractional allowed; clamped to 0.5..=64).
    pub fn for_keys(num_keys: u64, bits_per_key: f64) -> Self {
        let bpk = clamp_bpk(bits_per_key);
        let bits = (num_keys as f64 * bpk).ceil();
        let blocks = (bits / f64::from(BLOCK_BITS)).ceil().clamp(1.0, f64::from(u32::MAX));
        BlockedBloomParams { num_blocks: blocks as u32, num_probes: blocked_num_probes(bpk), num_keys }
    }

    /// Filter size in bytes (payload only).
    pub fn bytes(&self) -> u64 {
        u64::from(self.num_blocks) * BLOCK_BYTES as u64
    }

    /// Analytic FP rate (see the module doc).
    pub fn expected_fpr(&self) -> f64 {
        blocked_fpr(self.num_keys as f64 / f64::from(self.num_blocks), self.num_probes)
    }
}

fn clamp_bpk(bits_per_key: f64) -> f64 {
    if bits_per_key.is_nan() {
        10.0
    } else {
        bits_per_key.clamp(0.5, 64.0)
    }
}

/// The analytic FP rate of a blocked Bloom filter with `keys_per_block` keys per 512-bit
/// block on average and `k` probes per key.
///
/// The series costs a few hundred `exp` and `powf` calls, and table builds ask for the same
/// few values over and over (every unit, module and partition of every table, and every
/// candidate `k` of [`blocked_num_probes`]): it showed in compaction profiles with elastic
/// units. Answers are remembered per thread in a small direct-mapped cache.
pub fn blocked_fpr(keys_per_block: f64, k: u32) -> f64 {
    const SLOTS: usize = 64;
    thread_local! {
        static MEMO: std::cell::RefCell<[(u64, u32, f64); SLOTS]> =
            const { std::cell::RefCell::new([(u64::MAX, 0, 0.0); SLOTS]) };
    }
    let key = keys_per_block.to_bits();
    let slot = (key.wrapping_add(u64::from(k)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % SLOTS;
    let hit = MEMO
        .try_with(|m| m.try_borrow().ok().and_then(|m| m.get(slot).filter(|e| e.0 == key && e.1 == k).map(|e| e.2)));
    if let Ok(Some(fpr)) = hit {
        return fpr;
    }
    let fpr = blocked_fpr_series(keys_per_block, k);
    let _ = MEMO.try_with(|m| {
        if let Some(e) = m.try_borrow_mut().ok().as_deref_mut().and_then(|m| m.get_mut(slot)) {
            *e = (key, k, fpr);
        }
    });
    fpr
}

/// [`blocked_fpr`], computed.
fn blocked_fpr_series(keys_per_block: f64, k: u32) -> f64 {
    let lambda = keys_per_block.max(0.0);
    if lambda == 0.0 {
        return 0.0;
    }
    // Past ten keys per bit every probe hits a set bit: the rate is 1 to within f64, and
    // the series below would run for about lambda terms (a corrupt header can claim 2^64
    // keys, and decoding must stay cheap whatever the input).
    if lambda.is_nan() || lambda > 10.0 * f64::from(BLOCK_BITS) {
        return 1.0;
    }
    let k = f64::from(k);
    let q = (1.0 - 1.0 / f64::from(BLOCK_BITS)).ln();
    // Sum the Poisson weights in log space so large λ does not underflow.
    let sd = lambda.sqrt();
    let hi = (lambda + 12.0 * sd + 20.0).ceil() as u64;
    let lo = (lambda - 12.0 * sd - 20.0).max(0.0).floor() as u64;
    let mut ln_fact = 0.0f64;
    let mut total = 0.0;
    for i in 0..=hi {
        if i > 0 {
            ln_fact += (i as f64).ln();
        }
        if i < lo {
            continue;
        }
        let fi = i as f64;
        let weight = (fi * lambda.ln() - lambda - ln_fact).exp();
        let unset = (k * fi * q).exp();
        total += weight * (1.0 - unset).powf(k);
    }
    total
}

/// Probes per key for a blocked Bloom filter at `bits_per_key`: the `k` minimising
/// [`blocked_fpr`] (blocking makes the best `k` smaller than the textbook `b ln 2`), or
/// rather the fewest probes within 1% of that minimum.
pub fn blocked_num_probes(bits_per_key: f64) -> u32 {
    let bpk = clamp_bpk(bits_per_key);
    let lambda = f64::from(BLOCK_BITS) / bpk;
    let rates: Vec<f64> = (1..=MAX_PROBES).map(|k| blocked_fpr(lambda, k)).collect();
    let best = rates.iter().copied().fold(f64::INFINITY, f64::min);
    // The fewest probes within 1% of the optimum: same accuracy, faster probes.
    rates.iter().position(|&f| f <= best * 1.01).map_or(1, |i| i as u32 + 1)
}

/// Builds a blocked Bloom filter (or one blocked module / unit of a larger filter).
#[derive(Debug, Clone)]
pub struct BlockedBloomBuilder {
    params: BlockedBloomParams,
    /// Which part of its filter this is: part `d > 0` probes with a remixed digest.
    part: u8,
    data: Vec<u8>,
}

impl BlockedBloomBuilder {
    /// An empty filter with the given sizes, as part `part` of its filter.
    pub fn new(params: BlockedBloomParams, part: u8) -> Self {
        let params = BlockedBloomParams {
            num_blocks: params.num_blocks.max(1),
            num_probes: params.num_probes.clamp(1, MAX_PROBES),
            num_keys: 0,
        };
        let data = vec![0u8; params.num_blocks as usize * BLOCK_BYTES];
        BlockedBloomBuilder { params, part, data }
    }

    /// Add one key.
    #[inline]
    pub fn add(&mut self, digest: &Digest) {
        let d = digest.for_part(self.part);
        let block = fastrange64(d.h1, u64::from(self.params.num_blocks)) as usize;
        if let Some(line) = self.data.get_mut(block * BLOCK_BYTES..).and_then(|s| s.first_chunk_mut::<BLOCK_BYTES>()) {
            let mut h = d.h2;
            for _ in 0..self.params.num_probes {
                let bit = (h >> 55) as usize;
                if let Some(byte) = line.get_mut(bit >> 3) {
                    *byte |= 1 << (bit & 7);
                }
                h = h.wrapping_mul(PROBE_MUL);
            }
        }
        self.params.num_keys += 1;
    }

    /// Add many keys.
    pub fn add_all(&mut self, digests: &[Digest]) {
        for d in digests {
            self.add(d);
        }
    }

    /// Probe the filter being built.
    pub fn may_contain(&self, digest: &Digest) -> bool {
        let p = &self.params;
        probe(&self.data, u64::from(p.num_blocks), p.num_probes, self.part, digest)
    }

    /// The sizes (with the keys added so far).
    pub fn params(&self) -> BlockedBloomParams {
        self.params
    }

    /// Serialize as a part with the given header fields.
    pub fn finish(&self, role: Role, part_count: u8, digest_version: u8, fallback: FallbackReason) -> Vec<u8> {
        let header =
            Header { kind: PartKind::BlockedBloom, digest_version, role, part_index: self.part, part_count, fallback };
        let mut w = Writer::default();
        w.u32(self.params.num_blocks).u32(self.params.num_probes).u64(self.params.num_keys);
        format::encode(&header, &w.bytes, &self.data)
    }
}

/// Test a key against blocked Bloom bits: one cache line. All `k` bits are tested without
/// branching on their values (a miss typically fails at a random probe, and a mispredicted
/// early exit costs more than the few remaining in-cache bit tests).
#[inline(always)]
#[expect(
    clippy::indexing_slicing,
    reason = "bit = h >> 55 < 512, so bit >> 3 < 64 = BLOCK_BYTES, the length of `line`"
)]
fn probe(data: &[u8], num_blocks: u64, num_probes: u32, part: u8, digest: &Digest) -> bool {
    let d = digest.for_part(part);
    let block = fastrange64(d.h1, num_blocks) as usize;
    let Some(line) = data.get(block * BLOCK_BYTES..).and_then(|s| s.first_chunk::<BLOCK_BYTES>()) else {
        return true;
    };
    let mut h = d.h2;
    let mut all = 1u8;
    for _ in 0..num_probes {
        let bit = (h >> 55) as usize;
        all &= line[bit >> 3] >> (bit & 7);
        h = h.wrapping_mul(PROBE_MUL);
    }
    all & 1 == 1
}

/// A blocked Bloom filter read from its part, borrowing the bytes.
#[derive(Debug, Clone, Copy)]
pub struct BlockedBloomRef<'a> {
    data: &'a [u8],
    num_blocks: u64,
    num_probes: u32,
    num_keys: u64,
    part: u8,
}

impl<'a> BlockedBloomRef<'a> {
    /// Check the parameters against the payload.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the parameter block is not exactly the blocked Bloom's (block
    /// count, probe count, key count), there are no blocks, the probe count is 0 or above
    /// the most a probe makes, or the payload is not 64 bytes per block.
    #[inline]
    pub fn parse(raw: &RawPart<'a>) -> Result<Self, DecodeError> {
        let mut r = Reader::new(raw.params);
        let num_blocks = r.u32()?;
        let num_probes = r.u32()?;
        let num_keys = r.u64()?;
        r.finish()?;
        if num_blocks == 0 {
            return Err(DecodeError::new("blocked bloom: zero blocks"));
        }
        if num_probes == 0 || num_probes > MAX_PROBES {
            return Err(DecodeError::new(format!("blocked bloom: {num_probes} probes")));
        }
        if raw.payload.len() as u64 != u64::from(num_blocks) * BLOCK_BYTES as u64 {
            return Err(DecodeError::new(format!(
                "blocked bloom: payload {} bytes, {num_blocks} blocks need {}",
                raw.payload.len(),
                u64::from(num_blocks) * BLOCK_BYTES as u64
            )));
        }
        Ok(BlockedBloomRef {
            data: raw.payload,
            num_blocks: u64::from(num_blocks),
            num_probes,
            num_keys,
            part: raw.header.part_index,
        })
    }

    /// `false`: the key was certainly not added.
    #[inline]
    pub fn may_contain(&self, digest: &Digest) -> bool {
        probe(self.data, self.num_blocks, self.num_probes, self.part, digest)
    }

    /// Payload offset of the 64-byte block the probe of `digest` reads.
    #[inline]
    pub fn block_offset(&self, digest: &Digest) -> usize {
        fastrange64(digest.for_part(self.part).h1, self.num_blocks) as usize * BLOCK_BYTES
    }

    /// The payload (the bit array).
    pub fn payload(&self) -> &'a [u8] {
        self.data
    }

    /// Sizes as stored.
    pub fn params(&self) -> BlockedBloomParams {
        BlockedBloomParams { num_blocks: self.num_blocks as u32, num_probes: self.num_probes, num_keys: self.num_keys }
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::testing::{digests, fpr_of, within};

    fn build(n: u64, bpk: f64) -> Vec<u8> {
        let mut b = BlockedBloomBuilder::new(BlockedBloomParams::for_keys(n, bpk), 0);
        b.add_all(&digests(0, n));
        b.finish(Role::Whole, 1, 1, FallbackReason::None)
    }

    #[test]
    fn probes_per_bits_per_key_follow_the_blocked_optimum() {
        assert_eq!(blocked_num_probes(10.0), 6);
        assert!(blocked_num_probes(1.0) <= 2);
        assert!(blocked_num_probes(20.0) >= 10);
        let mut last = 0;
        for tenth in 5..400 {
            let k = blocked_num_probes(f64::from(tenth) / 10.0);
            assert!(k >= last, "k must not decrease with bits/key");
            last = k;
        }
    }

    #[test]
    fn remembered_rates_are_the_computed_ones() {
        // More distinct inputs than the memo has slots, asked twice in a shuffled order:
        // every answer, remembered or evicted, is the series' own.
        let inputs: Vec<(f64, u32)> = (0..300u32).map(|i| (f64::from(i % 97) * 0.731 + 0.01, 1 + i % 11)).collect();
        for &(lambda, k) in inputs.iter().chain(inputs.iter().rev()) {
            assert_eq!(blocked_fpr(lambda, k).to_bits(), blocked_fpr_series(lambda, k).to_bits(), "{lambda} {k}");
        }
    }

    #[test]
    fn no_false_negatives() {
        let bytes = build(20_000, 7.5);
        let raw = format::decode(&bytes).unwrap();
        let f = BlockedBloomRef::parse(&raw).unwrap();
        assert!(digests(0, 20_000).iter().all(|d| f.may_contain(d)));
    }

    #[test]
    fn measured_fpr_matches_the_analytic_formula() {
        for (n, bpk) in [(50_000u64, 10.0), (50_000, 6.5)] {
            let bytes = build(n, bpk);
            let raw = format::decode(&bytes).unwrap();
            let f = BlockedBloomRef::parse(&raw).unwrap();
            let measured = fpr_of(|d| f.may_contain(d), 1_000_000);
            let expected = f.params().expected_fpr();
            assert!(within(measured, expected, 0.10), "bpk {bpk}: measured {measured}, expected {expected}");
        }
    }

    #[test]
    fn analytic_fpr_at_10_bits_is_near_one_percent() {
        let f = BlockedBloomParams::for_keys(1_000_000, 10.0).expected_fpr();
        assert!(f > 0.008 && f < 0.0105, "{f}");
    }
}
