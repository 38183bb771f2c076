//! Alternative key hash functions, for experiments only (seed 000, Tables 1-3).
//!
//! The engine always uses [`Digest::of`] (xxh3-128). These functions let the experiments
//! reproduce the seed's hash-cost and FPR tables: each produces a full [`Digest`] from one
//! pass over the key (the "one digest + remixing" scheme), and a seeded 64-bit hash for the
//! "k independent hashes" baseline.

use super::digest::{mix64, Digest};
use sha2::{Digest as _, Sha256};

/// A key hash function that can feed the filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HashFn {
    /// xxh3-128: the engine's digest (two independent 64-bit halves).
    Xxh3_128,
    /// xxh3-64, second half derived by remixing the first (one 64-bit hash of entropy).
    Xxh3_64,
    /// xxh64 (the classic XXHash the seed measured as "XX"), second half remixed.
    Xxh64,
    /// MurmurHash64A (the seed's "MM64", RocksDB's legacy hash), second half remixed.
    Murmur64A,
    /// CRC32C (hardware accelerated where available), expanded to 64 bits by remixing.
    Crc32c,
    /// SHA-256 (cryptographic): the first 16 bytes of the hash.
    Sha256,
}

impl HashFn {
    /// Every hash function, engine default first.
    pub const ALL: [HashFn; 6] =
        [HashFn::Xxh3_128, HashFn::Xxh3_64, HashFn::Xxh64, HashFn::Murmur64A, HashFn::Crc32c, HashFn::Sha256];

    /// Short display name.
    pub fn name(self) -> &'static str {
        match self {
            HashFn::Xxh3_128 => "xxh3-128",
            HashFn::Xxh3_64 => "xxh3-64",
            HashFn::Xxh64 => "xxh64",
            HashFn::Murmur64A => "murmur64a",
            HashFn::Crc32c => "crc32c",
            HashFn::Sha256 => "sha-256",
        }
    }

    /// Parse a [`HashFn::name`].
    pub fn from_name(name: &str) -> Option<HashFn> {
        HashFn::ALL.into_iter().find(|h| h.name() == name)
    }

    /// The digest version recorded in filter headers built from this function's digests.
    /// Version 1 ([`super::DIGEST_VERSION`]) is the engine's xxh3-128.
    pub fn digest_version(self) -> u8 {
        match self {
            HashFn::Xxh3_128 => 1,
            HashFn::Xxh3_64 => 2,
            HashFn::Xxh64 => 3,
            HashFn::Murmur64A => 4,
            HashFn::Crc32c => 5,
            HashFn::Sha256 => 6,
        }
    }

    /// One pass over the key, giving both halves of a digest.
    pub fn digest(self, key: &[u8]) -> Digest {
        match self {
            HashFn::Xxh3_128 => Digest::of(key),
            HashFn::Sha256 => {
                let out = Sha256::digest(key);
                let mut a = [0u8; 8];
                let mut b = [0u8; 8];
                a.copy_from_slice(&out[0..8]);
                b.copy_from_slice(&out[8..16]);
                Digest { h1: u64::from_le_bytes(a), h2: u64::from_le_bytes(b) }
            }
            _ => {
                let h = self.hash64(key, 0);
                Digest { h1: h, h2: mix64(h ^ 0x6A09_E667_F3BC_C908) }
            }
        }
    }

    /// A seeded 64-bit hash: different seeds behave as independent hash functions
    /// (the "k independent hashes" baseline hashes the key k times with seeds 0..k).
    pub fn hash64(self, key: &[u8], seed: u64) -> u64 {
        match self {
            HashFn::Xxh3_128 => xxhash_rust::xxh3::xxh3_128_with_seed(key, seed) as u64,
            HashFn::Xxh3_64 => xxhash_rust::xxh3::xxh3_64_with_seed(key, seed),
            HashFn::Xxh64 => xxhash_rust::xxh64::xxh64(key, seed),
            HashFn::Murmur64A => murmur64a(key, seed),
            HashFn::Crc32c => {
                // CRC is linear, so a seed alone does not decorrelate; remix the result.
                let c = crc32c::crc32c_append(seed as u32 ^ 0xFFFF_FFFF, key);
                mix64(u64::from(c) ^ seed.rotate_left(32))
            }
            HashFn::Sha256 => {
                let mut h = Sha256::new();
                h.update(seed.to_le_bytes());
                h.update(key);
                let out = h.finalize();
                let mut a = [0u8; 8];
                a.copy_from_slice(&out[0..8]);
                u64::from_le_bytes(a)
            }
        }
    }
}

/// MurmurHash64A (Austin Appleby), as used by RocksDB's legacy Bloom filter.
pub fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let len = key.len() as u64;
    let mut h = seed ^ len.wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let mut k = u64::from_le_bytes(w);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur64a_matches_reference_vectors() {
        // Published vectors of the C++ MurmurHash64A with seed 0xc6a4a7935bd1e995.
        let seed = 0xc6a4_a793_5bd1_e995;
        assert_eq!(murmur64a(b"", seed), 0x1ab1_1ea5_a7b2_c56e);
        assert_eq!(murmur64a(b"a", seed), 0x4292_cee2_27b9_150a);
        assert_eq!(murmur64a(b"hello", seed), 0x5ba5_b8a5_9803_e699);
        assert_eq!(murmur64a(b"hello\0world", seed), 0xdcd0_bc9f_7531_5849);
    }

    #[test]
    fn every_function_is_deterministic_and_seeded() {
        for f in HashFn::ALL {
            assert_eq!(f.digest(b"abc"), f.digest(b"abc"), "{}", f.name());
            assert_ne!(f.digest(b"abc"), f.digest(b"abd"), "{}", f.name());
            assert_ne!(f.hash64(b"abc", 1), f.hash64(b"abc", 2), "{}", f.name());
            assert_eq!(HashFn::from_name(f.name()), Some(f));
        }
    }

    #[test]
    fn engine_digest_is_xxh3_128() {
        assert_eq!(HashFn::Xxh3_128.digest(b"key"), Digest::of(b"key"));
        assert_eq!(HashFn::Xxh3_128.digest_version(), super::super::DIGEST_VERSION);
    }
}
