//! Short range scans: seek to a uniformly drawn loaded key, read `len` entries forward.

use super::{timed, KeySpec};
use crate::engine::{Engine, EngineResult};
use crate::report::Measurement;
use rand::{Rng, SeedableRng};

/// Run `ops` scans of `len` entries from uniformly drawn loaded keys.
pub fn short_scans(
    engine: &dyn Engine,
    spec: &KeySpec,
    len: usize,
    seed: u64,
    ops: u64,
    table: &str,
) -> EngineResult<Measurement> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut key = spec.key_buf();
    timed(engine, table, &format!("seek+{len}"), ops, |_| {
        spec.key(2 * rng.gen_range(0..spec.n.max(1)), &mut key);
        Ok(engine.scan(&key, len)? == len)
    })
}
