//! A filter part kept parsed with its bytes: pinned in a table reader (parsed once when the
//! table is opened), or resident in the filter manager's pool.
//!
//! A probe of a part parsed on every use reads the part's header first: one more cache line,
//! usually a miss, before the probe line, and a dependent one (the header says where the
//! probe line is). Keeping the parsed part lets a lookup go straight to the probe line, and
//! lets the prefetch pass issue it without touching the header.

#![deny(clippy::indexing_slicing)]

use crate::error::DecodeError;
use crate::filter::FilterPart;
use std::sync::Arc;

/// A filter part's bytes and the part parsed from them. Cloning shares the bytes.
#[derive(Clone)]
pub(crate) struct PinnedPart {
    /// Borrows `bytes`' heap buffer (see `new`); never handed out as `'static`.
    part: FilterPart<'static>,
    bytes: Arc<[u8]>,
}

impl PinnedPart {
    /// Parse `bytes` (checking the digest version when one is expected) and keep both.
    pub(super) fn new(bytes: Arc<[u8]>, digest_version: Option<u8>) -> Result<PinnedPart, DecodeError> {
        let part = FilterPart::parse_expecting(&bytes, digest_version)?;
        // SAFETY: `part` borrows the slice behind `bytes`, the heap allocation of an `Arc`:
        // it never moves (moving the `Arc`, or `self`, moves a pointer, not the bytes), is
        // never written (an `Arc<[u8]>` hands out no `&mut`), and is freed only when the
        // last `Arc` is dropped, which cannot happen before `self` is, since `self` owns
        // one. The `'static` never leaves this type: `part()` re-borrows the part for the
        // lifetime of `&self`. Exercised by
        // `table::pinned_part::tests::a_pinned_part_outlives_its_other_owners`.
        let part = unsafe { std::mem::transmute::<FilterPart<'_>, FilterPart<'static>>(part) };
        Ok(PinnedPart { part, bytes })
    }

    /// The parsed part, borrowed for as long as `self`.
    #[inline]
    pub(crate) fn part(&self) -> FilterPart<'_> {
        self.part
    }

    /// The part's bytes.
    pub(super) fn bytes(&self) -> &Arc<[u8]> {
        &self.bytes
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::filter::{build_filter_parts, Digest, FilterSpec};

    #[test]
    fn a_pinned_part_outlives_its_other_owners() {
        let digests: Vec<Digest> = (0..5000u64).map(|i| Digest::of(&i.to_le_bytes())).collect();
        for spec in [FilterSpec::Bloom { bits_per_key: 10.0 }, FilterSpec::Ribbon { fp_rate: 0.01 }] {
            let parts = build_filter_parts(&spec, &digests);
            let bytes: Arc<[u8]> = parts[0].clone().into();
            let pinned = PinnedPart::new(bytes.clone(), Some(crate::filter::DIGEST_VERSION)).unwrap();
            drop(bytes);
            drop(parts);
            // Move it around (the parsed part must follow the bytes, not the struct).
            let mut moved = vec![pinned];
            moved.reserve(100);
            let pinned = Box::new(moved.pop().unwrap());
            assert!(digests.iter().all(|d| pinned.part().may_contain(d)), "{spec:?}: a false negative");
            assert_eq!(pinned.part().size_bytes(), pinned.bytes().len());
        }
        let garbage: Arc<[u8]> = vec![7u8; 40].into();
        assert!(PinnedPart::new(garbage, None).is_err());
    }
}
