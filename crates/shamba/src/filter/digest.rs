//! The key digest: computed once per key, shared by every filter of every level.

/// Two 64-bit halves of a 128-bit key hash (xxh3-128 by default).
///
/// Filters derive all their probe positions from these halves by cheap remixing, so a
/// lookup hashes its key exactly once however many filters it probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Digest {
    /// Low 64 bits.
    pub h1: u64,
    /// High 64 bits.
    pub h2: u64,
}

impl Digest {
    /// The digest of a user key (xxh3-128).
    #[inline]
    pub fn of(key: &[u8]) -> Digest {
        let h = xxhash_rust::xxh3::xxh3_128(key);
        Digest { h1: h as u64, h2: (h >> 64) as u64 }
    }
}
