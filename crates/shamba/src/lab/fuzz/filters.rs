//! The filter targets: one serialized filter part of each kind (blocked Bloom, standard
//! Bloom, Ribbon), whatever its role (a whole filter, a module of a modular filter, an
//! elastic unit), parsed as a table reader parses it and probed.

use crate::filter::{Digest, FilterPart, PartKind};

/// Offset of the kind byte in a part's header (`shamba_filter::format`).
const KIND_AT: usize = 1;

/// Parse `input` as a part of `kind` (the kind byte is forced, so every input exercises
/// that kind's parameter checks and probe), then probe and prefetch it with digests of
/// the base database's keys and of chunks of the input.
pub(super) fn filter_part(kind: PartKind, input: &[u8]) {
    let mut bytes = input.to_vec();
    if let Some(k) = bytes.get_mut(KIND_AT) {
        *k = kind as u8;
    }
    let _ = FilterPart::parse_any_version(&bytes).map(|p| p.expected_fpr());
    let Ok(part) = FilterPart::parse(&bytes) else { return };
    let _ = (part.kind(), part.role(), part.part_index(), part.part_count(), part.fallback());
    let _ = (part.num_keys(), part.bits_per_key(), part.expected_fpr(), part.size_bytes());
    let keys = (0..64).map(super::base::key);
    let digests = keys.map(|k| Digest::of(&k)).chain(input.chunks(7).take(16).map(Digest::of));
    for digest in digests {
        part.prefetch(&digest);
        let _ = part.may_contain(&digest);
    }
}
