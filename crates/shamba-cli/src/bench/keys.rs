//! Keys and values of the benchmark, and the distributions lookups draw from.
//!
//! Key ids: the loaded keys are the even ids `0, 2, .., 2(n-1)`; missing keys are the odd
//! ids in between, so a missing key falls inside the tree's key range and reaches the
//! filters (a key outside every file's range would be rejected by the fence pointers).
//! A key is its id big-endian in the first 8 bytes, padded to the key size with bytes
//! derived from the id.

use rand::distributions::Distribution;
use rand::Rng;
use rand_distr::{Normal, Zipf};

/// Write key `id` into `buf` (exactly `buf.len()` bytes, at least 8).
pub fn key_into(id: u64, buf: &mut [u8]) {
    let (head, tail) = buf.split_at_mut(8);
    head.copy_from_slice(&id.to_be_bytes());
    let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in tail.chunks_mut(8) {
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let bytes = x.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

/// A value of `size` bytes for key `id` (deterministic; the alphabet repeated from a
/// place of the id's, so any compression shrinks it many times over).
pub fn value_into(id: u64, buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = b'a' + ((id as usize + i) % 26) as u8;
    }
}

/// How values are made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Values {
    /// [`value_into`]: highly compressible.
    Alphabet,
    /// db_bench's `compression_ratio`: the first `ratio` of the value printable random
    /// bytes (from the id), the rest that run repeated, so a compressor keeps about
    /// `ratio` of it.
    Ratio(f64),
}

impl Values {
    /// Write the value of key `id` into `buf`.
    pub fn fill(self, id: u64, buf: &mut [u8]) {
        match self {
            Values::Alphabet => value_into(id, buf),
            Values::Ratio(ratio) => {
                let random = ((buf.len() as f64 * ratio).ceil() as usize).clamp(1, buf.len().max(1));
                let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
                let (head, tail) = buf.split_at_mut(random.min(buf.len()));
                for b in head.iter_mut() {
                    x ^= x >> 29;
                    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
                    x ^= x >> 32;
                    *b = b' ' + (x % 95) as u8;
                }
                for chunk in tail.chunks_mut(head.len().max(1)) {
                    chunk.copy_from_slice(&head[..chunk.len()]);
                }
            }
        }
    }
}

/// How lookups pick among the `n` loaded keys.
#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum KeyDistribution {
    /// Every key equally likely.
    Uniform,
    /// A few keys hot (Zipf with exponent `--zipf-theta`), hot keys scattered over the key space.
    Zipfian,
    /// Seed 002's skew (its Fig. 2a): Zipf with exponent `--zipf-theta` (the seed uses 2),
    /// the hot keys neighbours at the start of the key space, so a few tables get almost
    /// every lookup.
    ZipfContiguous,
    /// Keys near the middle of the key space more likely: standard deviation `--normal-sd`
    /// keys (seed 002 uses 5), or n/10 without it.
    Normal,
}

impl KeyDistribution {
    /// The name a report prints, with the parameter that shapes it.
    pub fn describe(self, theta: f64, normal_sd: Option<f64>, n: u64) -> String {
        match self {
            KeyDistribution::Uniform => "uniform".into(),
            KeyDistribution::Zipfian => format!("zipfian (theta {theta}, hot keys scattered)"),
            KeyDistribution::ZipfContiguous => format!("zipf-contiguous (theta {theta}, hot keys neighbours)"),
            KeyDistribution::Normal => format!("normal (sd {} keys)", normal_sd.unwrap_or(n as f64 / 10.0)),
        }
    }
}

/// Draws key ranks in `0..n`.
pub enum RankSampler {
    /// Uniform.
    Uniform(u64),
    /// Zipfian, scattered.
    Zipf(Zipf<f64>, u64),
    /// Zipfian, hot keys contiguous.
    ZipfContiguous(Zipf<f64>, u64),
    /// Normal, clamped.
    Normal(Normal<f64>, u64),
}

impl RankSampler {
    /// A sampler over `n >= 1` ranks (a normal one with sd n/10).
    #[cfg(test)]
    pub fn new(dist: KeyDistribution, n: u64, theta: f64) -> Result<Self, String> {
        RankSampler::with_normal_sd(dist, n, theta, None)
    }

    /// A sampler over `n >= 1` ranks; a normal one with standard deviation `normal_sd`
    /// keys (n/10 if `None`).
    pub fn with_normal_sd(dist: KeyDistribution, n: u64, theta: f64, normal_sd: Option<f64>) -> Result<Self, String> {
        let n = n.max(1);
        let zipf = || Zipf::new(n, theta).map_err(|e| format!("zipf: {e}"));
        Ok(match dist {
            KeyDistribution::Uniform => RankSampler::Uniform(n),
            KeyDistribution::Zipfian => RankSampler::Zipf(zipf()?, n),
            KeyDistribution::ZipfContiguous => RankSampler::ZipfContiguous(zipf()?, n),
            KeyDistribution::Normal => RankSampler::Normal(
                Normal::new(n as f64 / 2.0, normal_sd.unwrap_or(n as f64 / 10.0))
                    .map_err(|e| format!("normal: {e}"))?,
                n,
            ),
        })
    }

    /// The next rank.
    pub fn sample(&self, rng: &mut impl Rng) -> u64 {
        match self {
            RankSampler::Uniform(n) => rng.gen_range(0..*n),
            RankSampler::Zipf(z, n) => {
                // Zipf ranks start at 1; scatter them with a multiplicative bijection so
                // hot keys are not all neighbours in one file.
                let r = (z.sample(rng) as u64).saturating_sub(1) % n;
                scatter(r, *n)
            }
            RankSampler::ZipfContiguous(z, n) => (z.sample(rng) as u64).saturating_sub(1) % n,
            RankSampler::Normal(d, n) => (d.sample(rng).max(0.0) as u64).min(n - 1),
        }
    }
}

/// The key ids one reader thread of the read loop looks up, in order: each draw picks a
/// rank from `sampler`, then whether the lookup is for a loaded key (probability
/// `existing`; even id `2 rank`) or a missing one (odd id `2 rank + 1`). One definition, so
/// that anything replaying a measured run (the experiments' hindsight ceilings) sees the
/// very keys it measured.
pub struct LookupIds<'s> {
    sampler: &'s RankSampler,
    existing: f64,
    rng: rand::rngs::StdRng,
}

impl<'s> LookupIds<'s> {
    /// Thread `thread`'s stream of a read phase seeded with `seed`.
    pub fn new(sampler: &'s RankSampler, existing: f64, seed: u64, thread: u64) -> Self {
        use rand::SeedableRng;
        let seed = seed ^ (thread + 1).wrapping_mul(0x9E37_79B9);
        LookupIds { sampler, existing, rng: rand::rngs::StdRng::seed_from_u64(seed) }
    }
}

impl Iterator for LookupIds<'_> {
    /// (key id, whether it was loaded).
    type Item = (u64, bool);

    fn next(&mut self) -> Option<(u64, bool)> {
        let rank = self.sampler.sample(&mut self.rng);
        let existing = self.rng.gen::<f64>() < self.existing;
        Some((if existing { 2 * rank } else { 2 * rank + 1 }, existing))
    }
}

/// A bijection of `0..n` that spreads neighbouring ranks apart.
fn scatter(r: u64, n: u64) -> u64 {
    ((r as u128 * 2_654_435_761u128) % n as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_values_are_a_random_run_repeated() {
        let mut a = [0u8; 100];
        Values::Ratio(0.5).fill(7, &mut a);
        assert_eq!(a[..50], a[50..]);
        assert!(a.iter().all(|b| (b' '..=b'~').contains(b)));
        let distinct: std::collections::HashSet<u8> = a[..50].iter().copied().collect();
        assert!(distinct.len() > 20, "{} distinct bytes", distinct.len());
        let mut b = [0u8; 100];
        Values::Ratio(0.5).fill(8, &mut b);
        assert_ne!(a, b);
        let mut c = [0u8; 10];
        Values::Ratio(0.4).fill(1, &mut c);
        assert_eq!((&c[4..8], &c[8..]), (&c[..4], &c[..2]));
    }

    #[test]
    fn keys_are_distinct_and_ordered_by_id() {
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        key_into(6, &mut a);
        key_into(7, &mut b);
        assert!(a < b);
        let mut long = [0u8; 512];
        key_into(9, &mut long);
        assert!(long[8..].iter().any(|&x| x != 0));
    }

    #[test]
    fn samplers_stay_in_range() {
        let mut rng = rand::thread_rng();
        for d in [
            KeyDistribution::Uniform,
            KeyDistribution::Zipfian,
            KeyDistribution::ZipfContiguous,
            KeyDistribution::Normal,
        ] {
            let s = RankSampler::new(d, 1000, 0.99).unwrap();
            for _ in 0..10_000 {
                assert!(s.sample(&mut rng) < 1000);
            }
        }
    }

    #[test]
    fn the_seeds_workloads_put_their_lookups_where_the_seed_does() {
        let mut rng = rand::thread_rng();
        let n = 100_000;
        // Zipf 2, contiguous: the first 10 keys take most lookups (94%: 61% the hottest,
        // 33% its 9 neighbours).
        let s = RankSampler::new(KeyDistribution::ZipfContiguous, n, 2.0).unwrap();
        let draws: Vec<u64> = (0..10_000).map(|_| s.sample(&mut rng)).collect();
        assert!(draws.iter().filter(|&&r| r < 10).count() > 9_000);
        assert!(draws.iter().filter(|&&r| (1..10).contains(&r)).count() > 2_500);
        // Scattered, the same skew puts the hottest key's followers far from it.
        let s = RankSampler::new(KeyDistribution::Zipfian, n, 2.0).unwrap();
        let near = (0..10_000).filter(|_| (1..10).contains(&s.sample(&mut rng))).count();
        assert!(near < 500, "{near} of 10000 next to the hottest key");
        // Normal with sd 5 keys: nearly every lookup within 20 keys of the middle.
        let s = RankSampler::with_normal_sd(KeyDistribution::Normal, n, 0.99, Some(5.0)).unwrap();
        let near = (0..10_000).filter(|_| s.sample(&mut rng).abs_diff(n / 2) <= 20).count();
        assert!(near > 9_990, "{near} of 10000 within 20 keys");
    }
}
