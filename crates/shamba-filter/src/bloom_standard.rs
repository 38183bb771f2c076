//! Standard (non-blocked) Bloom filter, as used in the seeds' experiments, and the building
//! block of modular Bloom modules and elastic units with the standard layout.
//!
//! One bit array of `m` bits; a key sets `k` bits at positions `fastrange(g_i, m)` for
//! `i = offset .. offset + k`, where the index sequence `g_i` comes from one digest
//! (seed 000, section 4):
//!
//! - **rotation** (RocksDB's legacy scheme): `h = h1`, `δ = h rotr 17`, `g_i = h + i·δ`;
//! - **double hashing** (Kirsch-Mitzenmacher): `g_i = h1 + i·h2`.
//!
//! `offset` lets the modules of a modular filter (and elastic units) continue one shared
//! sequence, so D modules with `k_1 + ... + k_D` probes use exactly the indices a single
//! filter with that many probes would. For the "k independent hashes" baseline of the seed's
//! Table 2, [`StandardBloomBuilder::add_hashes`] takes arbitrary per-probe hashes.
//!
//! **Analytic FP rate**: `FPR = (1 - (1 - 1/m)^(k·n))^k ≈ (1 - e^(-k n / m))^k`, minimised
//! by `k = (m/n) ln 2` (seed 002, Eq. 1).
//!
//! Parameters in the part header (25 bytes): `num_bits: u64, num_probes: u32,
//! probe_offset: u32, num_keys: u64, probing: u8` (0 rotation, 1 double hashing).
//! Payload: `ceil(num_bits / 64)` little-endian u64 words, bit `p` is word `p / 64`, bit
//! `p % 64`.

#![deny(clippy::indexing_slicing)]

use super::digest::{fastrange64, Digest};
use super::format::{self, FallbackReason, Header, PartKind, RawPart, Reader, Role, Writer};
use crate::DecodeError;

/// How the k probe indices are derived from one digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Probing {
    /// `g_i = h1 + i·(h1 rotr 17)`: one 64-bit hash is enough.
    Rotation,
    /// `g_i = h1 + i·h2`: uses both halves of the digest.
    DoubleHashing,
}

impl Probing {
    fn to_u8(self) -> u8 {
        match self {
            Probing::Rotation => 0,
            Probing::DoubleHashing => 1,
        }
    }

    fn from_u8(v: u8) -> Option<Probing> {
        match v {
            0 => Some(Probing::Rotation),
            1 => Some(Probing::DoubleHashing),
            _ => None,
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Probing::Rotation => "rotation",
            Probing::DoubleHashing => "double-hashing",
        }
    }

    /// The start and step of the index sequence for a digest.
    #[inline]
    fn sequence(self, d: &Digest) -> (u64, u64) {
        match self {
            Probing::Rotation => (d.h1, d.h1.rotate_right(17)),
            Probing::DoubleHashing => (d.h1, d.h2),
        }
    }
}

/// Most probes per key.
pub const MAX_PROBES: u32 = 64;

/// The textbook optimal probe count `round(b ln 2)`, at least 1.
pub fn standard_num_probes(bits_per_key: f64) -> u32 {
    let k = (bits_per_key * std::f64::consts::LN_2).round();
    if k.is_nan() {
        1
    } else {
        k.clamp(1.0, f64::from(MAX_PROBES)) as u32
    }
}

/// The analytic FP rate of a standard Bloom filter (see the module doc).
pub fn standard_fpr(num_bits: u64, num_probes: u32, num_keys: u64) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    let k = f64::from(num_probes);
    let unset = (k * num_keys as f64 * (-1.0 / num_bits as f64).ln_1p()).exp();
    (1.0 - unset).powf(k)
}

/// The sizes of one standard Bloom filter (or module / unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandardBloomParams {
    /// Bits in the array (at least 1).
    pub num_bits: u64,
    /// Probes per key.
    pub num_probes: u32,
    /// Index of this filter's first probe in the shared sequence.
    pub probe_offset: u32,
    /// Index scheme.
    pub probing: Probing,
    /// Keys added.
    pub num_keys: u64,
}

impl StandardBloomParams {
    /// A whole filter for `num_keys` at `bits_per_key`, `k = round(b ln 2)`.
    pub fn for_keys(num_keys: u64, bits_per_key: f64, probing: Probing) -> Self {
        let bpk = if bits_per_key.is_nan() { 10.0 } else { bits_per_key.clamp(0.1, 256.0) };
        StandardBloomParams {
            num_bits: ((num_keys as f64 * bpk).ceil() as u64).max(64),
            num_probes: standard_num_probes(bpk),
            probe_offset: 0,
            probing,
            num_keys,
        }
    }

    /// Payload bytes.
    pub fn bytes(&self) -> u64 {
        self.num_bits.div_ceil(64) * 8
    }

    /// Analytic FP rate.
    pub fn expected_fpr(&self) -> f64 {
        standard_fpr(self.num_bits, self.num_probes, self.num_keys)
    }
}

/// Builds a standard Bloom filter (or one module / unit).
#[derive(Debug, Clone)]
pub struct StandardBloomBuilder {
    params: StandardBloomParams,
    part: u8,
    words: Vec<u64>,
}

impl StandardBloomBuilder {
    /// An empty filter, as part `part` of its filter.
    pub fn new(params: StandardBloomParams, part: u8) -> Self {
        let num_bits = params.num_bits.max(1);
        let params =
            StandardBloomParams { num_bits, num_probes: params.num_probes.clamp(1, MAX_PROBES), num_keys: 0, ..params };
        let words = vec![0u64; num_bits.div_ceil(64) as usize];
        StandardBloomBuilder { params, part, words }
    }

    #[inline]
    fn set(&mut self, g: u64) {
        let p = fastrange64(g, self.params.num_bits);
        if let Some(w) = self.words.get_mut((p / 64) as usize) {
            *w |= 1 << (p % 64);
        }
    }

    /// Add one key from its digest.
    #[inline]
    pub fn add(&mut self, digest: &Digest) {
        let (h, delta) = self.params.probing.sequence(digest);
        let mut g = h.wrapping_add(u64::from(self.params.probe_offset).wrapping_mul(delta));
        for _ in 0..self.params.num_probes {
            self.set(g);
            g = g.wrapping_add(delta);
        }
        self.params.num_keys += 1;
    }

    /// Add many keys.
    pub fn add_all(&mut self, digests: &[Digest]) {
        for d in digests {
            self.add(d);
        }
    }

    /// Add one key from `num_probes` independent hashes (the seeds' "all k" baseline).
    pub fn add_hashes(&mut self, hashes: impl IntoIterator<Item = u64>) {
        for g in hashes.into_iter().take(self.params.num_probes as usize) {
            self.set(g);
        }
        self.params.num_keys += 1;
    }

    /// Test a key given by independent hashes (pairs with [`Self::add_hashes`]).
    pub fn contains_hashes(&self, hashes: impl IntoIterator<Item = u64>) -> bool {
        let view = self.view();
        hashes.into_iter().take(self.params.num_probes as usize).all(|g| view.test(g))
    }

    /// Probe the filter being built (for experiments that never serialize).
    pub fn may_contain(&self, digest: &Digest) -> bool {
        let p = &self.params;
        self.view().may_contain_from(p.probing, p.probe_offset, p.num_probes, digest)
    }

    fn view(&self) -> Bits<'_> {
        Bits::Words(&self.words, self.params.num_bits)
    }

    /// Sizes, with the keys added so far.
    pub fn params(&self) -> StandardBloomParams {
        self.params
    }

    /// Serialize as a part.
    pub fn finish(&self, role: Role, part_count: u8, digest_version: u8, fallback: FallbackReason) -> Vec<u8> {
        let header =
            Header { kind: PartKind::StandardBloom, digest_version, role, part_index: self.part, part_count, fallback };
        let p = &self.params;
        let mut w = Writer::default();
        w.u64(p.num_bits).u32(p.num_probes).u32(p.probe_offset).u64(p.num_keys).u8(p.probing.to_u8());
        let payload: Vec<u8> = self.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        format::encode(&header, &w.bytes, &payload)
    }
}

/// The bit array, owned words or serialized bytes.
#[derive(Debug, Clone, Copy)]
enum Bits<'a> {
    Words(&'a [u64], u64),
    Bytes(&'a [u8], u64),
}

impl Bits<'_> {
    #[inline]
    fn test(&self, g: u64) -> bool {
        match *self {
            Bits::Words(w, m) => {
                let p = fastrange64(g, m);
                w.get((p / 64) as usize).is_none_or(|w| w >> (p % 64) & 1 == 1)
            }
            Bits::Bytes(b, m) => {
                let p = fastrange64(g, m);
                b.get((p / 8) as usize).is_none_or(|b| b >> (p % 8) & 1 == 1)
            }
        }
    }

    #[inline]
    fn may_contain_from(&self, probing: Probing, offset: u32, k: u32, digest: &Digest) -> bool {
        let (h, delta) = probing.sequence(digest);
        let mut g = h.wrapping_add(u64::from(offset).wrapping_mul(delta));
        for _ in 0..k {
            if !self.test(g) {
                return false;
            }
            g = g.wrapping_add(delta);
        }
        true
    }
}

/// A standard Bloom filter read from its part, borrowing the bytes.
#[derive(Debug, Clone, Copy)]
pub struct StandardBloomRef<'a> {
    data: &'a [u8],
    params: StandardBloomParams,
}

impl<'a> StandardBloomRef<'a> {
    /// Check the parameters against the payload.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the parameter block is not exactly the standard Bloom's, the
    /// probing scheme is unknown, there are no bits, the probe count is 0 or above the most
    /// a probe makes, or the payload is not the bits rounded up to whole 64-bit words.
    pub fn parse(raw: &RawPart<'a>) -> Result<Self, DecodeError> {
        let mut r = Reader::new(raw.params);
        let num_bits = r.u64()?;
        let num_probes = r.u32()?;
        let probe_offset = r.u32()?;
        let num_keys = r.u64()?;
        let probing_byte = r.u8()?;
        r.finish()?;
        let probing = Probing::from_u8(probing_byte)
            .ok_or_else(|| DecodeError::new(format!("standard bloom: unknown probing {probing_byte}")))?;
        if num_bits == 0 {
            return Err(DecodeError::new("standard bloom: zero bits"));
        }
        if num_probes == 0 || num_probes > MAX_PROBES {
            return Err(DecodeError::new(format!("standard bloom: {num_probes} probes")));
        }
        if raw.payload.len() as u64 != num_bits.div_ceil(64) * 8 {
            return Err(DecodeError::new(format!(
                "standard bloom: payload {} bytes for {num_bits} bits",
                raw.payload.len()
            )));
        }
        let params = StandardBloomParams { num_bits, num_probes, probe_offset, probing, num_keys };
        Ok(StandardBloomRef { data: raw.payload, params })
    }

    /// `false`: the key was certainly not added.
    #[inline]
    pub fn may_contain(&self, digest: &Digest) -> bool {
        let p = &self.params;
        Bits::Bytes(self.data, p.num_bits).may_contain_from(p.probing, p.probe_offset, p.num_probes, digest)
    }

    /// Payload offset of the byte holding this part's first probed bit for `digest`.
    #[inline]
    pub fn first_probe_offset(&self, digest: &Digest) -> usize {
        let p = &self.params;
        let (h, delta) = p.probing.sequence(digest);
        let g = h.wrapping_add(u64::from(p.probe_offset).wrapping_mul(delta));
        (fastrange64(g, p.num_bits) / 8) as usize
    }

    /// The payload (the bit array).
    pub fn payload(&self) -> &'a [u8] {
        self.data
    }

    /// Sizes as stored.
    pub fn params(&self) -> StandardBloomParams {
        self.params
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::testing::{digests, fpr_of, within};

    fn build(n: u64, bpk: f64, probing: Probing) -> Vec<u8> {
        let mut b = StandardBloomBuilder::new(StandardBloomParams::for_keys(n, bpk, probing), 0);
        b.add_all(&digests(1, n));
        b.finish(Role::Whole, 1, 1, FallbackReason::None)
    }

    #[test]
    fn ten_bits_per_key_uses_seven_probes() {
        assert_eq!(standard_num_probes(10.0), 7);
        assert_eq!(standard_num_probes(0.1), 1);
    }

    #[test]
    fn serialized_and_in_memory_filters_agree_and_have_no_false_negatives() {
        for probing in [Probing::Rotation, Probing::DoubleHashing] {
            let mut b = StandardBloomBuilder::new(StandardBloomParams::for_keys(5000, 9.0, probing), 0);
            let keys = digests(1, 5000);
            b.add_all(&keys);
            let bytes = b.finish(Role::Whole, 1, 1, FallbackReason::None);
            let raw = format::decode(&bytes).unwrap();
            let f = StandardBloomRef::parse(&raw).unwrap();
            assert!(keys.iter().all(|d| f.may_contain(d) && b.may_contain(d)));
            let others = digests(2, 5000);
            assert!(others.iter().all(|d| f.may_contain(d) == b.may_contain(d)));
        }
    }

    #[test]
    fn measured_fpr_matches_the_analytic_formula() {
        for probing in [Probing::Rotation, Probing::DoubleHashing] {
            let bytes = build(20_000, 10.0, probing);
            let raw = format::decode(&bytes).unwrap();
            let f = StandardBloomRef::parse(&raw).unwrap();
            let measured = fpr_of(|d| f.may_contain(d), 1_000_000);
            let expected = f.params().expected_fpr();
            assert!(within(measured, expected, 0.10), "{probing:?}: measured {measured}, expected {expected}");
        }
    }

    #[test]
    fn independent_hashes_have_no_false_negatives() {
        let mut b = StandardBloomBuilder::new(StandardBloomParams::for_keys(100, 10.0, Probing::Rotation), 0);
        for i in 0..100u64 {
            b.add_hashes((0..7).map(|s| crate::digest::mix64(i * 31 + s)));
        }
        for i in 0..100u64 {
            assert!(b.contains_hashes((0..7).map(|s| crate::digest::mix64(i * 31 + s))));
        }
    }
}
