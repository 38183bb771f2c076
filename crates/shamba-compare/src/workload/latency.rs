//! A latency histogram of fixed size: buckets of 1/16 of a power of two (at most 6.25%
//! wide), so a run of minutes at hundreds of thousands of puts a second keeps 1 KiB-ish of
//! counters instead of every sample, and quantiles are exact to within a bucket. The
//! maximum is kept exactly.

/// Sub-buckets per power of two.
const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
/// Buckets: values below `SUB` have one bucket each, then `SUB` per power of two up to 2^64.
const BUCKETS: usize = SUB + (64 - SUB_BITS as usize) * SUB;

/// Counts of nanosecond latencies.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: vec![0; BUCKETS], total: 0, max: 0 }
    }
}

/// The bucket of `v`.
fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let top = 63 - v.leading_zeros(); // >= SUB_BITS
    let mantissa = (v >> (top - SUB_BITS)) as usize & (SUB - 1);
    SUB + (top - SUB_BITS) as usize * SUB + mantissa
}

/// The largest value in bucket `b`.
fn bucket_high(b: usize) -> u64 {
    if b < SUB {
        return b as u64;
    }
    let top = (b - SUB) / SUB + SUB_BITS as usize;
    let mantissa = ((b - SUB) % SUB) as u64;
    let low = (1u64 << top) | (mantissa << (top - SUB_BITS as usize));
    low.saturating_add((1u64 << (top - SUB_BITS as usize)) - 1)
}

impl Histogram {
    /// Count one latency.
    pub fn record(&mut self, nanos: u64) {
        if let Some(c) = self.counts.get_mut(bucket(nanos)) {
            *c += 1;
        }
        self.total += 1;
        self.max = self.max.max(nanos);
    }

    /// Add another histogram's counts.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
    }

    /// Samples counted.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// The largest sample.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The `q` quantile (0..=1): the upper edge of the bucket holding it, never above the
    /// maximum. 0 for an empty histogram.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_high(b).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lies_in_its_bucket() {
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 12345, u64::MAX / 3, u64::MAX]) {
            let b = bucket(v);
            assert!(b < BUCKETS, "{v}");
            assert!(bucket_high(b) >= v, "{v}: bucket {b} ends at {}", bucket_high(b));
            if b > 0 {
                assert!(bucket_high(b - 1) < v, "{v}: lies in bucket {} too", b - 1);
            }
        }
    }

    #[test]
    fn quantiles_are_within_a_sixteenth() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v);
        }
        for (q, want) in [(0.5, 50_000.0), (0.99, 99_000.0), (0.999, 99_900.0)] {
            let got = h.quantile(q) as f64;
            assert!(got >= want && got <= want * 1.0625, "q {q}: {got} for {want}");
        }
        assert_eq!(h.quantile(1.0), 100_000);
        assert_eq!(h.max(), 100_000);
    }

    #[test]
    fn merged_histograms_count_both() {
        let mut a = Histogram::default();
        let mut b = Histogram::default();
        a.record(10);
        b.record(1_000_000);
        a.merge(&b);
        assert_eq!(a.count(), 2);
        assert_eq!(a.max(), 1_000_000);
        assert_eq!(a.quantile(0.5), 10);
        assert_eq!(Histogram::default().quantile(0.5), 0);
    }
}
