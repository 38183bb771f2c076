//! Varints and fixed-width integers for the table format, with a bounds-checked decoder.
//!
//! Varints are LEB128: seven bits per byte, least significant group first, high bit set on
//! every byte but the last. Fixed-width integers are little-endian.

#![deny(clippy::indexing_slicing)]

use crate::error::DecodeError;

/// Append `v` as a varint (1 to 10 bytes).
pub(crate) fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Reads integers and slices from a byte string, failing (never panicking) at its end.
#[derive(Debug, Clone)]
pub(crate) struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder at the start of `buf`.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Whether every byte was consumed.
    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// A varint of at most 64 bits.
    pub(crate) fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(DecodeError::new("truncated varint"));
            };
            self.pos += 1;
            // The tenth byte may only carry the top bit of a u64.
            if shift == 63 && b > 1 {
                return Err(DecodeError::new("varint overflows 64 bits"));
            }
            v |= u64::from(b & 0x7F) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(DecodeError::new("varint longer than 10 bytes"))
    }

    /// A varint that must fit in a `u32`, as a `usize`.
    pub(crate) fn varint32(&mut self) -> Result<usize, DecodeError> {
        let v = self.varint()?;
        u32::try_from(v).map(|v| v as usize).map_err(|_| DecodeError::new(format!("length {v} exceeds 32 bits")))
    }

    /// The next `n` bytes.
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let rest = self.rest();
        let (out, _) = rest
            .split_at_checked(n)
            .ok_or_else(|| DecodeError::new(format!("needs {n} bytes, {} left", rest.len())))?;
        self.pos += n;
        Ok(out)
    }

    /// The next `N` bytes, as an array.
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let rest = self.rest();
        let out = *rest
            .first_chunk::<N>()
            .ok_or_else(|| DecodeError::new(format!("needs {N} bytes, {} left", rest.len())))?;
        self.pos += N;
        Ok(out)
    }

    /// The bytes not consumed yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// The bytes consumed so far.
    pub(crate) fn consumed(&self) -> &'a [u8] {
        self.buf.get(..self.pos).unwrap_or_default()
    }

    /// A little-endian `u32`.
    pub(crate) fn u32_le(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_le_bytes)
    }

    /// A little-endian `u64`.
    pub(crate) fn u64_le(&mut self) -> Result<u64, DecodeError> {
        self.array().map(u64::from_le_bytes)
    }
}

/// The little-endian `u32` at `at` in `buf`, if it is entirely inside.
pub(crate) fn u32_at(buf: &[u8], at: usize) -> Option<u32> {
    buf.get(at..)?.first_chunk::<4>().map(|b| u32::from_le_bytes(*b))
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_every_width() {
        let values = [0u64, 1, 127, 128, 300, 16_383, 16_384, u32::MAX as u64, 1 << 35, u64::MAX - 1, u64::MAX];
        let mut buf = Vec::new();
        for &v in &values {
            put_varint(&mut buf, v);
        }
        let mut d = Decoder::new(&buf);
        for &v in &values {
            assert_eq!(d.varint().unwrap(), v);
        }
        assert!(d.is_empty());
    }

    #[test]
    fn malformed_varints_are_errors() {
        assert!(Decoder::new(&[0x80, 0x80]).varint().is_err(), "truncated");
        assert!(Decoder::new(&[0xFF; 11]).varint().is_err(), "too long");
        assert!(Decoder::new(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]).varint().is_err());
        let mut buf = Vec::new();
        put_varint(&mut buf, 1 << 32);
        assert!(Decoder::new(&buf).varint32().is_err());
    }

    #[test]
    fn slices_and_fixed_ints_are_bounds_checked() {
        let mut buf = b"abcd".to_vec();
        buf.extend_from_slice(&7u32.to_le_bytes());
        let mut d = Decoder::new(&buf);
        assert_eq!(d.bytes(4).unwrap(), b"abcd");
        assert_eq!(d.u32_le().unwrap(), 7);
        assert!(d.u32_le().is_err());
        assert!(d.bytes(usize::MAX).is_err());
        assert_eq!(u32_at(&buf, 4), Some(7));
        assert_eq!(u32_at(&buf, 5), None);
        assert_eq!(u32_at(&buf, usize::MAX - 1), None);
    }
}
