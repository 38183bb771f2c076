//! Hash maps keyed by file numbers and block positions, with a multiplicative hash.
//!
//! These keys are small integers chosen by the engine, not by an attacker, so the DoS
//! resistance of the standard SipHash buys nothing; on the lookup path, where several maps
//! are consulted per table, its cost does show.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for integer keys: each written integer is folded in with a multiply-xorshift.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct NumberHasher(u64);

impl Hasher for NumberHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // The high bits of a multiplicative hash are the good ones; hashbrown uses the top 7
        // bits for its control bytes and the low bits for the bucket, so mix both ways.
        let x = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^ (x >> 32)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517C_C1B7_2722_0A95);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A `HashMap` keyed by numbers (or tuples of numbers), hashed with [`NumberHasher`].
pub(crate) type NumberMap<K, V> = HashMap<K, V, BuildHasherDefault<NumberHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, BuildHasherDefault};

    #[test]
    fn nearby_keys_spread_over_buckets() {
        let b = BuildHasherDefault::<NumberHasher>::default();
        let mut low_bits = std::collections::HashSet::new();
        let mut high_bits = std::collections::HashSet::new();
        for n in 0u64..1024 {
            let h = b.hash_one((7u64, n * 4096));
            low_bits.insert(h & 1023);
            high_bits.insert(h >> 57);
        }
        assert!(low_bits.len() > 600, "low bits collide: {}", low_bits.len());
        assert_eq!(high_bits.len(), 128, "top 7 bits do not vary");
    }

    #[test]
    fn map_works_as_a_map() {
        let mut m: NumberMap<u64, &str> = NumberMap::default();
        m.insert(1, "a");
        m.insert(1 << 40, "b");
        assert_eq!(m.get(&1), Some(&"a"));
        assert_eq!(m.get(&(1 << 40)), Some(&"b"));
        assert_eq!(m.get(&2), None);
    }
}
