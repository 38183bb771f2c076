//! The byte layout of a serialized filter part, shared by every kind.
//!
//! A table stores each part (a whole filter, one module of a modular filter, or one elastic
//! unit) as its own block. Every part is self-describing, so it can be probed from its own
//! bytes alone:
//!
//! ```text
//! offset  size  field
//! 0       1     format version (1)
//! 1       1     kind: 1 blocked Bloom, 2 standard Bloom, 3 Ribbon
//! 2       1     digest version (1 = xxh3-128 of the user key)
//! 3       1     role: 0 whole filter, 1 module (probe in order), 2 unit (any subset)
//! 4       1     part index d (0-based)
//! 5       1     part count D (1 for a whole filter)
//! 6       1     fallback reason (0 none; else why a Ribbon became a Bloom, see FallbackReason)
//! 7       1     P: length of the kind's parameters
//! 8       8     L: payload length in bytes (u64 LE)
//! 16      P     kind parameters (little-endian fields, see each kind's module)
//! 16+P    L     payload (bit array or Ribbon solution)
//! ```
//!
//! The part is exactly `16 + P + L` bytes; anything else is rejected. Parsing reads the
//! header and parameters only (O(1)), never copies the payload, and validates every length
//! against the parameters so that a probe can never read out of bounds. Payload integrity
//! (bit flips) is the table's block checksum's job.

#![deny(clippy::indexing_slicing)]

use crate::DecodeError;

/// Current part format version.
pub const FORMAT_VERSION: u8 = 1;
/// Length of the fixed header.
pub const HEADER_LEN: usize = 16;

/// The structure stored in a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartKind {
    /// Cache-line-blocked Bloom filter (512-bit blocks).
    BlockedBloom = 1,
    /// Standard (one bit array) Bloom filter.
    StandardBloom = 2,
    /// Ribbon filter (or some result columns of one, for a modular Ribbon).
    Ribbon = 3,
}

impl PartKind {
    fn from_u8(v: u8) -> Option<PartKind> {
        match v {
            1 => Some(PartKind::BlockedBloom),
            2 => Some(PartKind::StandardBloom),
            3 => Some(PartKind::Ribbon),
            _ => None,
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            PartKind::BlockedBloom => "blocked-bloom",
            PartKind::StandardBloom => "standard-bloom",
            PartKind::Ribbon => "ribbon",
        }
    }
}

/// What a part is to its filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The whole filter in one part.
    Whole = 0,
    /// Module `d` of a modular filter: probed in order, stop at the first negative.
    Module = 1,
    /// Elastic unit: any subset of units may be probed, in any order.
    Unit = 2,
}

impl Role {
    fn from_u8(v: u8) -> Option<Role> {
        match v {
            0 => Some(Role::Whole),
            1 => Some(Role::Module),
            2 => Some(Role::Unit),
            _ => None,
        }
    }

    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            Role::Whole => "whole",
            Role::Module => "module",
            Role::Unit => "unit",
        }
    }
}

/// Why a part is not of the kind its spec asked for (a Ribbon that fell back to Bloom).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FallbackReason {
    /// No fallback.
    None = 0,
    /// Ribbon banding failed for every seed tried.
    RibbonConstructionFailed = 1,
    /// Too many keys for the Ribbon's 32-bit slot index.
    RibbonTooManyKeys = 2,
    /// The requested FP rate needs more result columns than a Ribbon supports, or is not a
    /// valid rate.
    RibbonUnsupportedRate = 3,
}

impl FallbackReason {
    fn from_u8(v: u8) -> Option<FallbackReason> {
        match v {
            0 => Some(FallbackReason::None),
            1 => Some(FallbackReason::RibbonConstructionFailed),
            2 => Some(FallbackReason::RibbonTooManyKeys),
            3 => Some(FallbackReason::RibbonUnsupportedRate),
            _ => None,
        }
    }

    /// Human-readable reason.
    pub fn describe(self) -> &'static str {
        match self {
            FallbackReason::None => "none",
            FallbackReason::RibbonConstructionFailed => "ribbon construction failed for every seed",
            FallbackReason::RibbonTooManyKeys => "too many keys for a ribbon filter",
            FallbackReason::RibbonUnsupportedRate => "fp rate not supported by a ribbon filter",
        }
    }
}

/// The decoded fixed header of a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Structure stored.
    pub kind: PartKind,
    /// Which hash produced the digests ([`super::DIGEST_VERSION`] for the engine).
    pub digest_version: u8,
    /// Whole filter, module or unit.
    pub role: Role,
    /// Part number within its filter.
    pub part_index: u8,
    /// Number of parts of its filter.
    pub part_count: u8,
    /// Why a requested Ribbon became this part's kind.
    pub fallback: FallbackReason,
}

/// A part split into its header, parameters and payload, borrowed from the block.
#[derive(Debug, Clone, Copy)]
pub struct RawPart<'a> {
    /// Fixed header.
    pub header: Header,
    /// Kind-specific parameters.
    pub params: &'a [u8],
    /// Payload bytes.
    pub payload: &'a [u8],
}

/// Serialize a part.
pub fn encode(header: &Header, params: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + params.len() + payload.len());
    out.push(FORMAT_VERSION);
    out.push(header.kind as u8);
    out.push(header.digest_version);
    out.push(header.role as u8);
    out.push(header.part_index);
    out.push(header.part_count);
    out.push(header.fallback as u8);
    // Parameter blocks are a few dozen bytes by construction.
    out.push(u8::try_from(params.len()).unwrap_or(u8::MAX));
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(params);
    out.extend_from_slice(payload);
    out
}

/// Split and check a part's bytes. O(1); never copies.
///
/// Every probe of a cached part parses it, so the common case is a few compares on the
/// fixed header; a part that fails them is re-checked field by field, cold, for the message.
///
/// # Errors
///
/// [`DecodeError`], saying which check failed, when the bytes are shorter than the fixed
/// header; the format version, kind, role or fallback reason is unknown; the part index is
/// not below the part count, or a whole filter claims more than one part; or the header's
/// parameter and payload lengths do not add up to the bytes after it. The kind's own
/// parameters are checked by the kind's `parse`, not here.
#[inline]
pub fn decode(bytes: &[u8]) -> Result<RawPart<'_>, DecodeError> {
    match decode_valid(bytes) {
        Some(raw) => Ok(raw),
        None => decode_explained(bytes),
    }
}

/// [`decode`]'s fast path: the part when every check passes, `None` otherwise.
#[inline]
fn decode_valid(bytes: &[u8]) -> Option<RawPart<'_>> {
    let h: &[u8; HEADER_LEN] = bytes.first_chunk()?;
    if h[0] != FORMAT_VERSION {
        return None;
    }
    let kind = PartKind::from_u8(h[1])?;
    let role = Role::from_u8(h[3])?;
    let (part_index, part_count) = (h[4], h[5]);
    if part_count == 0 || part_index >= part_count || (role == Role::Whole && part_count != 1) {
        return None;
    }
    let fallback = FallbackReason::from_u8(h[6])?;
    let params_len = usize::from(h[7]);
    let payload_len = u64::from_le_bytes(*h[8..].first_chunk()?);
    let (params, payload) = bytes.get(HEADER_LEN..)?.split_at_checked(params_len)?;
    if payload.len() as u64 != payload_len {
        return None;
    }
    let header = Header { kind, digest_version: h[2], role, part_index, part_count, fallback };
    Some(RawPart { header, params, payload })
}

/// [`decode`]'s slow path: which check a part fails.
#[cold]
#[inline(never)]
fn decode_explained(bytes: &[u8]) -> Result<RawPart<'_>, DecodeError> {
    let Some(fixed) = bytes.get(..HEADER_LEN) else {
        return Err(DecodeError::new(format!(
            "filter part truncated: {} bytes, header needs {HEADER_LEN}",
            bytes.len()
        )));
    };
    let mut r = Reader::new(fixed);
    let version = r.u8()?;
    if version != FORMAT_VERSION {
        return Err(DecodeError::new(format!("filter part: unknown format version {version}")));
    }
    let kind_byte = r.u8()?;
    let kind = PartKind::from_u8(kind_byte)
        .ok_or_else(|| DecodeError::new(format!("filter part: unknown kind {kind_byte}")))?;
    let digest_version = r.u8()?;
    let role_byte = r.u8()?;
    let role =
        Role::from_u8(role_byte).ok_or_else(|| DecodeError::new(format!("filter part: unknown role {role_byte}")))?;
    let part_index = r.u8()?;
    let part_count = r.u8()?;
    if part_count == 0 || part_index >= part_count {
        return Err(DecodeError::new(format!(
            "filter part: part index {part_index} not below part count {part_count}"
        )));
    }
    if role == Role::Whole && part_count != 1 {
        return Err(DecodeError::new("filter part: a whole filter must have one part"));
    }
    let fallback_byte = r.u8()?;
    let fallback = FallbackReason::from_u8(fallback_byte)
        .ok_or_else(|| DecodeError::new(format!("filter part: unknown fallback reason {fallback_byte}")))?;
    let params_len = usize::from(r.u8()?);
    let payload_len = r.u64()?;
    let expected = (HEADER_LEN as u64).checked_add(params_len as u64).and_then(|n| n.checked_add(payload_len));
    if expected != Some(bytes.len() as u64) {
        return Err(DecodeError::new(format!(
            "filter part: length {} does not match header ({HEADER_LEN} + {params_len} + {payload_len})",
            bytes.len()
        )));
    }
    let params = bytes
        .get(HEADER_LEN..HEADER_LEN + params_len)
        .ok_or_else(|| DecodeError::new("filter part: parameters truncated"))?;
    let payload =
        bytes.get(HEADER_LEN + params_len..).ok_or_else(|| DecodeError::new("filter part: payload truncated"))?;
    let header = Header { kind, digest_version, role, part_index, part_count, fallback };
    Ok(RawPart { header, params, payload })
}

/// Little-endian field reader over a parameter block; every read is checked.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Read from the start of `bytes`.
    #[inline]
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    #[inline]
    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let Some(out) = self.bytes.get(self.pos..).and_then(|rest| rest.first_chunk::<N>()) else {
            return Err(DecodeError::new("filter part: parameters truncated"));
        };
        self.pos += N;
        Ok(*out)
    }

    /// One byte.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when the parameter block has no byte left.
    #[inline]
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take::<1>()?[0])
    }

    /// A u32, little-endian.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when fewer than 4 bytes are left.
    #[inline]
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.take()?))
    }

    /// A u64, little-endian.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] when fewer than 8 bytes are left.
    #[inline]
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take()?))
    }

    /// Fail unless every byte was read (parameters of a known kind have a fixed size).
    ///
    /// # Errors
    ///
    /// [`DecodeError`] naming how many bytes were not read.
    #[inline]
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(DecodeError::new(format!("filter part: {} unexpected parameter bytes", self.bytes.len() - self.pos)))
        }
    }
}

/// Little-endian field writer for a parameter block.
#[derive(Default)]
pub struct Writer {
    /// Bytes written so far.
    pub bytes: Vec<u8>,
}

impl Writer {
    /// One byte.
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.bytes.push(v);
        self
    }

    /// A u32, little-endian.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A u64, little-endian.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            kind: PartKind::BlockedBloom,
            digest_version: 1,
            role: Role::Module,
            part_index: 1,
            part_count: 2,
            fallback: FallbackReason::None,
        }
    }

    #[test]
    fn round_trip_keeps_every_field() {
        let bytes = encode(&header(), &[1, 2, 3], &[9; 64]);
        let raw = decode(&bytes).unwrap();
        assert_eq!(raw.header, header());
        assert_eq!(raw.params, &[1, 2, 3]);
        assert_eq!(raw.payload, &[9; 64][..]);
    }

    #[test]
    fn every_truncation_and_extension_is_rejected() {
        let bytes = encode(&header(), &[1, 2, 3], &[9; 64]);
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_err(), "truncated to {n}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
    }

    #[test]
    fn bad_header_fields_are_rejected() {
        let good = encode(&header(), &[], &[]);
        for (at, v) in [(0, 9u8), (1, 0), (1, 77), (3, 5), (4, 2), (5, 0), (6, 200)] {
            let mut b = good.clone();
            b[at] = v;
            assert!(decode(&b).is_err(), "byte {at} = {v}");
        }
        let mut huge = good;
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode(&huge).is_err());
    }

    proptest::proptest! {
        /// The fast path accepts exactly what the field-by-field path accepts, with the
        /// same result: headers with any byte changed, any length claimed, any extra bytes.
        #[test]
        fn fast_and_explained_paths_agree(
            at in 0usize..HEADER_LEN,
            v in proptest::prelude::any::<u8>(),
            params in 0usize..12,
            payload in 0usize..40,
            cut in 0usize..60,
        ) {
            let mut b = encode(&header(), &vec![7; params], &vec![9; payload]);
            b[at] = v;
            b.truncate(b.len().saturating_sub(cut % 3 * cut));
            let fast = decode_valid(&b).map(|r| (r.header, r.params, r.payload));
            let slow = decode_explained(&b).ok().map(|r| (r.header, r.params, r.payload));
            proptest::prop_assert_eq!(fast, slow);
        }
    }
}
