//! Varints and length-prefixed tagged fields: the encoding of version edits.
//!
//! ```text
//! field := tag: varint | length: varint | payload: [u8; length]
//! ```
//!
//! Every field carries its length, so a reader can step over a field it does not know.
//! Whether it may is said by the tag itself: tags with [`SAFE_TO_SKIP`] set are
//! informational (older readers lose nothing that matters by skipping them); any other
//! unknown tag is an error, because ignoring it could silently misread the tree.

#![deny(clippy::indexing_slicing)]

use crate::error::DecodeError;

/// Tag bit marking a field an older reader may skip when it does not know the tag.
pub(crate) const SAFE_TO_SKIP: u64 = 1 << 6;

/// Append `v` as a LEB128 varint (7 bits per byte, low first).
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Append a field whose payload is one varint.
pub(crate) fn put_varint_field(out: &mut Vec<u8>, tag: u64, v: u64) {
    let mut payload = Vec::with_capacity(10);
    put_varint(&mut payload, v);
    put_field(out, tag, &payload);
}

/// Append a field.
pub(crate) fn put_field(out: &mut Vec<u8>, tag: u64, payload: &[u8]) {
    put_varint(out, tag);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// Reads varints and fields from a byte slice, never past its end.
pub(crate) struct Decoder<'a> {
    bytes: &'a [u8],
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Decoder { bytes }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub(crate) fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v: u64 = 0;
        for (i, &b) in self.bytes.iter().enumerate().take(10) {
            let bits = u64::from(b & 0x7f);
            // The tenth byte may only carry the top bit of a u64.
            if i == 9 && b > 1 {
                return Err(DecodeError::new("varint overflows 64 bits"));
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                self.bytes = self.bytes.get(i + 1..).unwrap_or_default();
                return Ok(v);
            }
        }
        Err(DecodeError::new("varint cut short or longer than 10 bytes"))
    }

    pub(crate) fn take(&mut self, n: u64) -> Result<&'a [u8], DecodeError> {
        let n = usize::try_from(n).map_err(|_| DecodeError::new("length does not fit in memory"))?;
        let (head, rest) = self
            .bytes
            .split_at_checked(n)
            .ok_or_else(|| DecodeError::new(format!("length {n} runs past the end ({} left)", self.bytes.len())))?;
        self.bytes = rest;
        Ok(head)
    }

    /// Everything not read yet.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }

    /// The next field as `(tag, payload)`, or `None` at the end.
    pub(crate) fn field(&mut self) -> Result<Option<(u64, &'a [u8])>, DecodeError> {
        if self.is_empty() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let len = self.varint()?;
        Ok(Some((tag, self.take(len)?)))
    }

    /// The whole remaining input must be one varint.
    pub(crate) fn only_varint(payload: &[u8]) -> Result<u64, DecodeError> {
        let mut d = Decoder::new(payload);
        let v = d.varint()?;
        d.finish()?;
        Ok(v)
    }

    /// Fail if bytes are left over.
    pub(crate) fn finish(&self) -> Result<(), DecodeError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::new(format!("{} unexpected trailing bytes", self.bytes.len())))
        }
    }
}

/// Store `v` in a field slot that must not be filled twice.
pub(crate) fn set_once<T>(slot: &mut Option<T>, v: T, what: &str) -> Result<(), DecodeError> {
    if slot.replace(v).is_some() {
        return Err(DecodeError::new(format!("{what} appears twice")));
    }
    Ok(())
}

/// The error for a tag this reader does not know and may not skip.
pub(crate) fn check_unknown(tag: u64, within: &str) -> Result<(), DecodeError> {
    if tag & SAFE_TO_SKIP != 0 {
        Ok(())
    } else {
        Err(DecodeError::new(format!("unknown tag {tag} in {within}")))
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn varints_round_trip(v in any::<u64>()) {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            prop_assert_eq!(Decoder::only_varint(&b), Ok(v));
        }
    }

    #[test]
    fn overlong_and_cut_varints_are_errors() {
        assert!(Decoder::only_varint(&[0xff; 11]).is_err());
        assert!(Decoder::only_varint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]).is_err());
        assert!(Decoder::only_varint(&[0x80]).is_err());
        assert!(Decoder::only_varint(&[]).is_err());
        assert!(Decoder::only_varint(&[1, 2]).is_err());
    }

    #[test]
    fn a_field_longer_than_its_input_is_an_error_not_an_allocation() {
        let mut b = Vec::new();
        put_varint(&mut b, 5);
        put_varint(&mut b, u64::MAX);
        assert!(Decoder::new(&b).field().is_err());
    }
}
