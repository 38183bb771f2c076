//! Random load: `n` keys in one shuffled order (the same for every engine), one put each,
//! WAL on and no sync; then the memtable is flushed and compactions waited for.

use super::{timed, KeySpec};
use crate::engine::{Engine, EngineResult};
use crate::report::Measurement;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;

/// The load order: even ids `0..2n` shuffled with `seed`.
pub fn shuffled_ids(n: u64, seed: u64) -> Vec<u64> {
    let mut ids: Vec<u64> = (0..n).map(|i| 2 * i).collect();
    ids.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
    ids
}

/// What a load measured.
pub struct Loaded {
    /// The put loop.
    pub load: Measurement,
    /// Seconds of the final flush and compactions.
    pub settle_seconds: f64,
}

/// Put every id of `order`, then settle.
pub fn load(engine: &dyn Engine, spec: &KeySpec, order: &[u64], table: &str) -> EngineResult<Loaded> {
    let mut key = spec.key_buf();
    let mut value = vec![0u8; spec.value_size];
    let load = timed(engine, table, "load", order.len() as u64, |i| {
        let id = order.get(i as usize).copied().unwrap_or(0);
        spec.key(id, &mut key);
        spec.value(id, &mut value);
        engine.put(&key, &value)?;
        Ok(true)
    })?;
    let start = Instant::now();
    engine.settle()?;
    Ok(Loaded { load, settle_seconds: start.elapsed().as_secs_f64() })
}
