//! Filters: pure data structures fed by one key digest. No engine types here.
//!
//! STUB CONTRACT (the filters issue fills this in; the engine relies on these names):
//! - [`Digest::of`] hashes a user key once (xxh3-128).
//! - [`BuildPolicy`] says, per level, which [`FilterSpec`] a new table gets.
//! - [`build_filter_parts`] turns the digests of a table's keys into one or more serialized
//!   parts (modules / units / a whole filter), each stored by the table as its own block.
//! - [`FilterPart::parse`] reads a part back without copying; [`FilterPart::may_contain`]
//!   probes it. A lookup probes the parts in order and stops at the first negative.

mod digest;
mod policy;

pub use digest::Digest;
pub use policy::{BuildPolicy, FilterSpec};

use crate::error::DecodeError;

/// Build the serialized parts of a filter over `digests` (duplicates allowed).
/// An empty vector means "no filter" (every probe is a maybe).
pub fn build_filter_parts(spec: &FilterSpec, digests: &[Digest]) -> Vec<Vec<u8>> {
    let _ = digests;
    match spec {
        FilterSpec::None => Vec::new(),
        FilterSpec::Bloom { .. } => Vec::new(),
    }
}

/// A serialized filter part, borrowed from its block.
#[derive(Debug, Clone, Copy)]
pub struct FilterPart<'a> {
    bytes: &'a [u8],
}

impl<'a> FilterPart<'a> {
    /// Validate the header and lengths of a serialized part.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Ok(FilterPart { bytes })
    }

    /// `false` means the key is certainly absent; `true` means it may be present.
    pub fn may_contain(&self, digest: &Digest) -> bool {
        let _ = (self.bytes, digest);
        true
    }
}
