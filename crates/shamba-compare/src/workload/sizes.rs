//! The size sweep: one key space after another (e.g. 2M, 20M, 100M keys), each loaded
//! fresh into every engine, then measured: load puts/s, levels, bytes on disk, filter
//! bytes, peak resident memory, empty and existing lookups with filters in memory (client
//! CPU ns and blocks read per lookup), and empty lookups with index and filters in a block
//! cache of 10% and 40% of the first engine's metadata bytes at that size. What grows with
//! the data: a lookup's cost per level.

use super::load;
use super::point::{Lookups, Mix};
use super::pressure::Sweep;
use super::KeySpec;
use crate::disk::dir_bytes;
use crate::engine::{self, EngineResult, Setup, Variant};
use crate::keys::KeyDistribution;
use crate::measure;
use crate::report::Measurement;
use std::path::Path;

/// Cache sizes of the sweep's pressure rows, in percent of the reference metadata bytes.
pub const PRESSURE_PERCENTS: [u64; 2] = [10, 40];

/// A lookup phase's cost per lookup.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Cost {
    /// Client-thread CPU nanoseconds.
    pub cpu_ns: f64,
    /// Wall-clock nanoseconds.
    pub ns: f64,
    /// Blocks read from files (block cache misses).
    pub blocks: f64,
    /// Fraction of lookups that found their key.
    pub found: f64,
}

impl From<&Measurement> for Cost {
    fn from(m: &Measurement) -> Cost {
        let found = if m.ops == 0 { 0.0 } else { m.found as f64 / m.ops as f64 };
        Cost { cpu_ns: m.cpu_ns_per_op(), ns: m.ns_per_op(), blocks: m.blocks_per_op, found }
    }
}

/// One engine at one size.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SizePoint {
    /// Engine configuration.
    pub engine: Variant,
    /// Keys loaded.
    pub keys: u64,
    /// Random-load puts per second (the put loop; settling is apart).
    pub load_ops_per_sec: f64,
    /// Seconds to flush and finish compactions after the load.
    pub settle_seconds: f64,
    /// Files per level after settling, L0 first.
    pub files_per_level: Vec<usize>,
    /// Levels holding files.
    pub levels: usize,
    /// Bytes of filters (all in memory in the first lookups).
    pub filter_bytes: u64,
    /// Filter + index bytes (filter only where the engine hides its index size).
    pub metadata_bytes: u64,
    /// Bytes of the database directory after settling.
    pub disk_bytes: u64,
    /// Peak RSS while this engine loaded and answered at this size.
    pub peak_rss_bytes: u64,
    /// That peak minus the RSS when the engine opened.
    pub rss_growth_bytes: u64,
    /// Empty lookups, filters in memory.
    pub empty: Cost,
    /// Existing-key lookups, filters in memory.
    pub existing: Cost,
    /// Empty lookups with index and filters in a cache of N% of the reference bytes,
    /// as (N, cost).
    pub empty_under_pressure: Vec<(u64, Cost)>,
}

/// The sweep's fixed parts.
pub struct SizeSweep<'a> {
    /// Setup every engine opens with (the memory runs override the cache).
    pub setup: &'a Setup,
    /// Key and value sizes (`n` set per size).
    pub shape: KeySpec,
    /// Measured lookups per phase.
    pub reads: u64,
    /// Seed of the load order and the lookups.
    pub seed: u64,
}

impl SizeSweep<'_> {
    /// Every engine at `keys` keys, one after another, each in a fresh `root/<engine>-<keys>`
    /// removed when done.
    pub fn at(&self, keys: u64, engines: &[Variant], root: &Path) -> EngineResult<Vec<SizePoint>> {
        let spec = KeySpec { n: keys, ..self.shape };
        let order = load::shuffled_ids(keys, self.seed);
        let mut reference: Option<(u64, u64)> = None;
        let mut points = Vec::new();
        for &variant in engines {
            let dir = root.join(format!("{}-{keys}", variant.name()));
            let _ = std::fs::remove_dir_all(&dir);
            let point = self.one(variant, &spec, &order, &dir, &mut reference);
            let _ = std::fs::remove_dir_all(&dir);
            points.push(point?);
        }
        Ok(points)
    }

    /// One engine at one size; `reference` is (metadata, filter) bytes of the first engine.
    fn one(
        &self,
        variant: Variant,
        spec: &KeySpec,
        order: &[u64],
        dir: &Path,
        reference: &mut Option<(u64, u64)>,
    ) -> EngineResult<SizePoint> {
        let window = measure::start_window();
        let table = format!("size sweep, {} keys", spec.n);
        let db = engine::open(variant, dir, self.setup)?;
        let loaded = load::load(db.as_ref(), spec, order, &table)?;
        let shape = db.shape()?;
        let (reference_bytes, reference_filter_bytes) =
            *reference.get_or_insert((shape.metadata_bytes(), shape.filter_bytes));
        let lookups =
            |mix: Mix, seed: u64| Lookups { spec: *spec, mix, dist: KeyDistribution::Uniform, theta: 0.0, seed };
        let empty = lookups(Mix::Missing, self.seed).run(db.as_ref(), &table, "missing", self.reads)?;
        let existing =
            lookups(Mix::Existing, self.seed.wrapping_add(1)).run(db.as_ref(), &table, "existing", self.reads)?;
        db.close()?;
        let disk_bytes = dir_bytes(dir);
        let sweep = Sweep {
            dir,
            setup: self.setup,
            spec: *spec,
            reference_bytes,
            reference_filter_bytes,
            direct_io: false,
            ops: self.reads / 2,
            seed: self.seed,
        };
        let pressure = sweep.run_at(variant, &table, &PRESSURE_PERCENTS)?;
        let peak = measure::peak_rss_bytes();
        Ok(SizePoint {
            engine: variant,
            keys: spec.n,
            load_ops_per_sec: loaded.load.ops_per_sec,
            settle_seconds: loaded.settle_seconds,
            levels: shape.files_per_level.iter().filter(|&&f| f > 0).count(),
            filter_bytes: shape.filter_bytes,
            metadata_bytes: shape.metadata_bytes(),
            files_per_level: shape.files_per_level,
            disk_bytes,
            peak_rss_bytes: peak,
            rss_growth_bytes: peak.saturating_sub(window.baseline_bytes),
            empty: Cost::from(&empty),
            existing: Cost::from(&existing),
            empty_under_pressure: PRESSURE_PERCENTS.iter().copied().zip(pressure.iter().map(Cost::from)).collect(),
        })
    }
}

/// Parse a key count: digits with an optional K, M or G suffix (powers of ten).
pub fn parse_count(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (digits, scale) = match s.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&s[..s.len() - 1], 1_000),
        Some('M') => (&s[..s.len() - 1], 1_000_000),
        Some('G') => (&s[..s.len() - 1], 1_000_000_000),
        _ => (s, 1),
    };
    let n: f64 = digits.parse().map_err(|_| format!("not a key count: {s:?} (e.g. 2M, 500K, 1000)"))?;
    if !(n.is_finite() && n >= 1.0) {
        return Err(format!("not a key count: {s:?}"));
    }
    Ok((n * scale as f64).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_counts_take_suffixes() {
        assert_eq!(parse_count("2M"), Ok(2_000_000));
        assert_eq!(parse_count("20m"), Ok(20_000_000));
        assert_eq!(parse_count("1.5K"), Ok(1500));
        assert_eq!(parse_count("300"), Ok(300));
        assert!(parse_count("M").is_err());
        assert!(parse_count("0").is_err());
        assert!(parse_count("lots").is_err());
    }

    #[test]
    fn a_small_sweep_measures_every_column() {
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup::small();
        let sweep =
            SizeSweep { setup: &setup, shape: KeySpec { n: 0, key_size: 16, value_size: 16 }, reads: 2000, seed: 3 };
        let small = sweep.at(2_000, &[Variant::Shamba], dir.path()).unwrap();
        let large = sweep.at(40_000, &[Variant::Shamba], dir.path()).unwrap();
        let (s, l) = (&small[0], &large[0]);
        assert_eq!(s.existing.found, 1.0);
        assert_eq!(s.empty.found, 0.0);
        assert!(l.levels > s.levels, "levels {} -> {}", s.levels, l.levels);
        assert!(l.disk_bytes > s.disk_bytes && l.filter_bytes > s.filter_bytes);
        assert_eq!(l.empty_under_pressure.len(), 2);
        // A cache of 10% of the metadata cannot hold it: empty lookups read blocks.
        assert!(l.empty_under_pressure[0].1.blocks > 0.0);
        // The trees were removed.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
