//! The key digest: computed once per key, shared by every filter of every level.
//!
//! Every structure in this module derives all of its probe positions from the two halves of
//! a [`Digest`] by cheap remixing (multiply, rotate, xor-shift); none of them hashes the key
//! again. The helpers below are the only remixing primitives the filters use.

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

/// The digest version the engine writes into every filter header: xxh3-128 of the user key,
/// `h1` = low half, `h2` = high half. Other ids are used by experiments only
/// (see [`crate::hashes::HashFn::digest_version`]).
pub const DIGEST_VERSION: u8 = 1;

impl Digest {
    /// The digest of a user key (xxh3-128).
    #[inline]
    pub fn of(key: &[u8]) -> Digest {
        let h = xxhash_rust::xxh3::xxh3_128(key);
        Digest { h1: h as u64, h2: (h >> 64) as u64 }
    }

    /// A digest for filter part `part` (module or unit number) of a filter.
    ///
    /// Part 0 uses the digest as is (the hot, single-part case costs nothing); later parts
    /// remix both halves with the part number so that their probe positions are
    /// independent of part 0's.
    #[inline]
    pub fn for_part(&self, part: u8) -> Digest {
        if part == 0 {
            *self
        } else {
            let salt = u64::from(part).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            Digest { h1: mix64(self.h1 ^ salt), h2: mix64(self.h2.wrapping_add(salt)) }
        }
    }
}

/// Map a 64-bit hash uniformly onto `0..n` with a multiply-shift ("fastrange"): uses the
/// high bits of `h`, costs one multiplication, no division.
#[inline(always)]
pub fn fastrange64(h: u64, n: u64) -> u64 {
    ((u128::from(h) * u128::from(n)) >> 64) as u64
}

/// A strong 64-bit finaliser (splitmix64 / Stafford variant 13). Bijective.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_xxh3_128_halves() {
        let d = Digest::of(b"hello");
        let h = xxhash_rust::xxh3::xxh3_128(b"hello");
        assert_eq!(d.h1, h as u64);
        assert_eq!(d.h2, (h >> 64) as u64);
    }

    #[test]
    fn part_zero_is_identity_and_other_parts_differ() {
        let d = Digest::of(b"k");
        assert_eq!(d.for_part(0), d);
        assert_ne!(d.for_part(1), d);
        assert_ne!(d.for_part(1), d.for_part(2));
    }

    #[test]
    fn fastrange_stays_in_range() {
        for n in [1u64, 2, 3, 1000, u64::MAX] {
            for h in [0u64, 1, u64::MAX / 2, u64::MAX] {
                assert!(fastrange64(h, n) < n);
            }
        }
    }
}
