//! Point lookups: all-missing, all-existing and half, with ranks drawn uniformly or
//! Zipfian (hot keys scattered over the key space, as in `shamba bench`).

use super::{timed, KeySpec};
use crate::engine::{Engine, EngineResult};
use crate::keys::{KeyDistribution, RankSampler};
use crate::report::Measurement;
use rand::{Rng, SeedableRng};

/// Which keys a lookup phase asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mix {
    /// Only absent keys (odd ids): the filter path.
    Missing,
    /// Only loaded keys.
    Existing,
    /// Each lookup existing with probability 1/2.
    Half,
}

impl Mix {
    /// All mixes, in the order they run.
    pub const ALL: [Mix; 3] = [Mix::Missing, Mix::Existing, Mix::Half];

    /// Row label.
    pub fn name(self) -> &'static str {
        match self {
            Mix::Missing => "missing",
            Mix::Existing => "existing",
            Mix::Half => "half",
        }
    }

    fn existing_fraction(self) -> f64 {
        match self {
            Mix::Missing => 0.0,
            Mix::Existing => 1.0,
            Mix::Half => 0.5,
        }
    }
}

/// One lookup phase: the `(rank, existing)` sequence depends only on the seed, the mix
/// and the distribution, so every engine sees the same keys in the same order.
pub struct Lookups {
    /// Keys present in the database.
    pub spec: KeySpec,
    /// Which keys.
    pub mix: Mix,
    /// How ranks are drawn.
    pub dist: KeyDistribution,
    /// Zipf exponent.
    pub theta: f64,
    /// Seed of the draw.
    pub seed: u64,
}

impl Lookups {
    /// Run `ops` lookups and measure them under `table` / `phase`.
    pub fn run(&self, engine: &dyn Engine, table: &str, phase: &str, ops: u64) -> EngineResult<Measurement> {
        let sampler = RankSampler::with_normal_sd(self.dist, self.spec.n, self.theta, None)?;
        let mut rng = rand::rngs::StdRng::seed_from_u64(self.seed);
        let fraction = self.mix.existing_fraction();
        let mut key = self.spec.key_buf();
        timed(engine, table, phase, ops, |_| {
            let rank = sampler.sample(&mut rng);
            let existing = fraction >= 1.0 || (fraction > 0.0 && rng.gen::<f64>() < fraction);
            self.spec.key(if existing { 2 * rank } else { 2 * rank + 1 }, &mut key);
            engine.get(&key)
        })
    }

    /// Run `ops` lookups unmeasured (cache warm-up).
    pub fn warm(&self, engine: &dyn Engine, ops: u64) -> EngineResult<()> {
        let warm = Lookups { seed: self.seed ^ 0x5741_524D, ..*self };
        warm.run(engine, "warm-up", self.mix.name(), ops).map(|_| ())
    }
}

/// All mixes under one distribution, in the table `table`.
pub fn all_mixes(
    engine: &dyn Engine,
    spec: &KeySpec,
    dist: KeyDistribution,
    theta: f64,
    seed: u64,
    ops: u64,
    table: &str,
) -> EngineResult<Vec<Measurement>> {
    let mut rows = Vec::new();
    for (i, mix) in Mix::ALL.into_iter().enumerate() {
        let phase = Lookups { spec: *spec, mix, dist, theta, seed: seed.wrapping_add(i as u64) };
        rows.push(phase.run(engine, table, mix.name(), ops)?);
    }
    Ok(rows)
}
