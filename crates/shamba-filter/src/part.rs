//! [`FilterPart`]: one serialized part, parsed without copying and probed from a digest.

#![deny(clippy::indexing_slicing)]

use std::fmt;

use super::bloom_blocked::BlockedBloomRef;
use super::bloom_standard::StandardBloomRef;
use super::digest::{Digest, DIGEST_VERSION};
use super::format::{self, FallbackReason, Header, PartKind, Role};
use super::ribbon::RibbonRef;
use crate::DecodeError;

/// A serialized filter part (whole filter, module or unit), borrowed from its block.
#[derive(Debug, Clone, Copy)]
pub struct FilterPart<'a> {
    header: Header,
    bytes: usize,
    body: Body<'a>,
}

#[derive(Debug, Clone, Copy)]
enum Body<'a> {
    Blocked(BlockedBloomRef<'a>),
    Standard(StandardBloomRef<'a>),
    Ribbon(RibbonRef<'a>),
}

impl<'a> FilterPart<'a> {
    /// Validate the header and lengths of a part built from engine digests
    /// ([`DIGEST_VERSION`]). O(1): reads the header and parameters only.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the header does not decode ([`format::decode`]), the part's
    /// parameters do not match its payload (the kind's `parse`), or the part was built from digests of another version.
    #[inline]
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Self::parse_expecting(bytes, Some(DIGEST_VERSION))
    }

    /// Validate a part built from digests of any version: for tools that describe parts
    /// (sizes, roles, FP rates) and never probe them.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the header does not decode ([`format::decode`]), the part's
    /// parameters do not match its payload (the kind's `parse`).
    pub fn parse_any_version(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Self::parse_expecting(bytes, None)
    }

    /// Validate a part, and its digest version when one is expected: a part whose digests
    /// came from another hash function (experiments, `filter::HashFn`) is rejected, since
    /// probing it with the wrong digest would give false negatives.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the header does not decode ([`format::decode`]), the part's
    /// parameters do not match its payload (the kind's `parse`), or a digest version is
    /// expected and the part's is another.
    #[inline]
    pub fn parse_expecting(bytes: &'a [u8], digest_version: Option<u8>) -> Result<Self, DecodeError> {
        let raw = format::decode(bytes)?;
        if let Some(digest_version) = digest_version.filter(|&v| v != raw.header.digest_version) {
            return Err(DecodeError::new(format!(
                "filter part built from digest version {}, reader uses {digest_version}",
                raw.header.digest_version
            )));
        }
        let body = match raw.header.kind {
            PartKind::BlockedBloom => Body::Blocked(BlockedBloomRef::parse(&raw)?),
            PartKind::StandardBloom => Body::Standard(StandardBloomRef::parse(&raw)?),
            PartKind::Ribbon => Body::Ribbon(RibbonRef::parse(&raw)?),
        };
        Ok(FilterPart { header: raw.header, bytes: bytes.len(), body })
    }

    /// `false` means the key is certainly absent; `true` means it may be present.
    #[inline(always)]
    pub fn may_contain(&self, digest: &Digest) -> bool {
        match &self.body {
            Body::Blocked(f) => f.may_contain(digest),
            Body::Standard(f) => f.may_contain(digest),
            Body::Ribbon(f) => f.may_contain(digest),
        }
    }

    /// Ask the CPU to start loading the cache lines the probe of `digest` will read, and
    /// return at once. A caller that knows the digest and several filters it will probe
    /// prefetches them all first, so their DRAM misses overlap instead of queueing one
    /// after another. Blocked Bloom: the key's 64-byte block; standard Bloom: the line of
    /// the first probed bit (the others are spread at random); Ribbon: every line of the
    /// key's window in the interleaved segments (up to 5 at 7 columns, contiguous).
    ///
    /// Only a hint: results never change, and on other architectures it does nothing.
    #[inline]
    pub fn prefetch(&self, digest: &Digest) {
        match &self.body {
            Body::Blocked(f) => {
                let (bytes, at) = (f.payload(), f.block_offset(digest));
                let (first, second) = block_lines(bytes.as_ptr() as usize, at);
                prefetch_line(bytes, first);
                if let Some(second) = second {
                    prefetch_line(bytes, second);
                }
            }
            Body::Standard(f) => prefetch_line(f.payload(), f.first_probe_offset(digest)),
            Body::Ribbon(f) => {
                let bytes = f.payload();
                let range = f.probe_range(digest);
                let mut at = range.start;
                while at < range.end {
                    prefetch_line(bytes, at);
                    // The next line boundary (by address: payloads need not be aligned).
                    at += CACHE_LINE - (bytes.as_ptr() as usize).wrapping_add(at) % CACHE_LINE;
                }
            }
        }
    }

    /// The structure stored.
    pub fn kind(&self) -> PartKind {
        self.header.kind
    }

    /// Whole filter, module (probe in order) or unit (any subset).
    pub fn role(&self) -> Role {
        self.header.role
    }

    /// This part's number within its filter (0-based).
    pub fn part_index(&self) -> u8 {
        self.header.part_index
    }

    /// Number of parts of the filter.
    pub fn part_count(&self) -> u8 {
        self.header.part_count
    }

    /// Digest version the part was built from.
    pub fn digest_version(&self) -> u8 {
        self.header.digest_version
    }

    /// Why a requested Ribbon became this kind ([`FallbackReason::None`] normally).
    pub fn fallback(&self) -> FallbackReason {
        self.header.fallback
    }

    /// Serialized size, header included.
    pub fn size_bytes(&self) -> usize {
        self.bytes
    }

    /// Keys the filter was built over.
    pub fn num_keys(&self) -> u64 {
        match &self.body {
            Body::Blocked(f) => f.params().num_keys,
            Body::Standard(f) => f.params().num_keys,
            Body::Ribbon(f) => f.num_keys(),
        }
    }

    /// Bits of this part per key.
    pub fn bits_per_key(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.num_keys().max(1) as f64
    }

    /// This part's analytic FP rate when probed alone.
    pub fn expected_fpr(&self) -> f64 {
        match &self.body {
            Body::Blocked(f) => f.params().expected_fpr(),
            Body::Standard(f) => f.params().expected_fpr(),
            Body::Ribbon(f) => f.layout().expected_fpr(),
        }
    }
}

/// Bytes per CPU cache line (x86-64 and most others).
const CACHE_LINE: usize = 64;

/// Offsets from a payload at address `base` that fall in the cache lines of the 64-byte
/// bloom block at offset `at`: its first byte's, and its last byte's when that is another
/// line. The payload need not start on a line boundary (it follows the part's header, in
/// whatever allocation holds the part), so a block usually spans two lines, and a probe's
/// bits fall in both: prefetching only the first left the second to miss at the probe.
#[inline(always)]
fn block_lines(base: usize, at: usize) -> (usize, Option<usize>) {
    let last = at + crate::bloom_blocked::BLOCK_BYTES - 1;
    let line = |offset: usize| base.wrapping_add(offset) / CACHE_LINE;
    (at, (line(last) != line(at)).then_some(last))
}

/// Ask the CPU to start loading the first cache line of `bytes` (a part's header), and
/// return at once; nothing for an empty slice. Only a hint.
#[inline]
pub fn prefetch_bytes(bytes: &[u8]) {
    prefetch_line(bytes, 0);
}

/// Ask the CPU to start loading the cache line holding `value` (its first byte), and
/// return at once. Only a hint: for searches that know where their next step reads (an
/// index search of a batched lookup) before they take it.
#[inline(always)]
pub fn prefetch_ref<T>(value: &T) {
    prefetch_read(value);
}

/// Prefetch the cache line holding `bytes[at]`; nothing if `at` is out of range.
#[inline(always)]
fn prefetch_line(bytes: &[u8], at: usize) {
    if let Some(byte) = bytes.get(at) {
        prefetch_read(byte);
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_read<T>(value: &T) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: PREFETCHT0 is a hint with no architectural effect: it never faults, even on
    // an invalid address (and this one is a live reference), and reads nothing into Rust.
    // Exercised by `prefetch_works_on_every_part_kind_and_changes_no_answer` and
    // `prefetch_ref_changes_nothing`.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(value).cast::<i8>()) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn prefetch_read<T>(_value: &T) {}

impl fmt::Display for FilterPart<'_> {
    /// One line for `shamba inspect` / SST dumps, e.g.
    /// `blocked-bloom whole 1/1: 1250080 B, 1000000 keys, 10.00 bits/key, fpr 0.871% (k=6, 15625 blocks)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}/{}: {} B, {} keys, {:.2} bits/key, fpr {:.4}%",
            self.kind().name(),
            self.role().name(),
            u32::from(self.part_index()) + 1,
            self.part_count(),
            self.bytes,
            self.num_keys(),
            self.bits_per_key(),
            self.expected_fpr() * 100.0
        )?;
        match &self.body {
            Body::Blocked(b) => {
                let p = b.params();
                write!(f, " (k={}, {} blocks)", p.num_probes, p.num_blocks)?;
            }
            Body::Standard(s) => {
                let p = s.params();
                write!(
                    f,
                    " (k={}, {} bits, {}, probes {}..{})",
                    p.num_probes,
                    p.num_bits,
                    p.probing.name(),
                    p.probe_offset,
                    p.probe_offset + p.num_probes
                )?;
            }
            Body::Ribbon(r) => {
                let l = r.layout();
                write!(
                    f,
                    " ({} blocks, columns {}..{} ({:.2} avg), upper from block {})",
                    l.num_blocks,
                    l.col_offset,
                    l.col_offset + l.upper_columns,
                    l.average_columns(),
                    l.upper_start_block
                )?;
            }
        }
        if self.fallback() != FallbackReason::None {
            write!(f, " [fallback: {}]", self.fallback().describe())?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::testing::digests;
    use crate::{build_filter_parts, BloomLayout, FilterSpec, ModuleSizes, Probing};

    #[test]
    fn a_bloom_blocks_lines_are_both_prefetched() {
        // Aligned: one line. Any other start: the block's first and last bytes, in two.
        assert_eq!(block_lines(4096, 128), (128, None));
        assert_eq!(block_lines(4096 + 32, 128), (128, Some(191)));
        assert_eq!(block_lines(4096 + 63, 0), (0, Some(63)));
        for base in 0..256usize {
            for at in [0, 64, 640] {
                let (first, second) = block_lines(base, at);
                let lines: std::collections::BTreeSet<usize> = (at..at + 64).map(|o| (base + o) / CACHE_LINE).collect();
                let asked: std::collections::BTreeSet<usize> =
                    std::iter::once(first).chain(second).map(|o| (base + o) / CACHE_LINE).collect();
                assert_eq!(asked, lines, "base {base}, block at {at}");
            }
        }
    }

    #[test]
    fn prefetch_ref_changes_nothing() {
        let values: Vec<u64> = (0..4096).map(|i| i * 3).collect();
        for v in values.iter().step_by(7) {
            prefetch_ref(v);
        }
        prefetch_ref(&());
        prefetch_ref(&values);
        assert!(values.iter().enumerate().all(|(i, &v)| v == i as u64 * 3));
    }

    #[test]
    fn prefetch_works_on_every_part_kind_and_changes_no_answer() {
        let keys = digests(31, 20_000);
        let absent = digests(32, 20_000);
        let specs = [
            FilterSpec::Bloom { bits_per_key: 10.0 },
            FilterSpec::StandardBloom { bits_per_key: 10.0, probing: Probing::Rotation },
            FilterSpec::ModularBloom {
                bits_per_key: 10.0,
                modules: ModuleSizes::Equal { count: 3 },
                layout: BloomLayout::Standard(Probing::DoubleHashing),
            },
            FilterSpec::Elastic { bits_per_key: 10.0, units: 4, layout: BloomLayout::Blocked },
            FilterSpec::Ribbon { fp_rate: 0.01 },
            FilterSpec::Ribbon { fp_rate: 0.000_1 },
            FilterSpec::ModularRibbon { fp_rate: 0.01, modules: ModuleSizes::Equal { count: 2 } },
        ];
        let mut kinds = std::collections::HashSet::new();
        for spec in specs {
            let parts = build_filter_parts(&spec, &keys);
            for bytes in &parts {
                let part = FilterPart::parse(bytes).unwrap();
                kinds.insert(part.kind().name());
                for d in keys.iter().chain(&absent) {
                    let before = part.may_contain(d);
                    part.prefetch(d);
                    assert_eq!(part.may_contain(d), before, "{spec:?}");
                }
                assert!(keys.iter().all(|d| part.may_contain(d)), "{spec:?}");
            }
        }
        assert_eq!(kinds.len(), 3, "every part kind was prefetched: {kinds:?}");
    }
}
