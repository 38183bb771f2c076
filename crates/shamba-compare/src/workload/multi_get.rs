//! Batched point lookups: batches of [`BATCH`] keys asked once through the engine's
//! multi-get and once as single gets, the same batches in the same order, uniform ranks,
//! all-missing and all-existing. Rows are per key, so the two phases compare directly.

use super::point::Mix;
use super::{timed, KeySpec};
use crate::engine::{Engine, EngineResult};
use crate::keys::{KeyDistribution, RankSampler};
use crate::report::Measurement;
use rand::SeedableRng;

/// Keys per batch.
pub const BATCH: usize = 32;

/// The batches of one mix: `batches` x [`BATCH`] keys, drawn from `seed` alone.
fn batches(spec: &KeySpec, mix: Mix, seed: u64, batches: u64) -> EngineResult<Vec<Vec<Vec<u8>>>> {
    let sampler = RankSampler::with_normal_sd(KeyDistribution::Uniform, spec.n, 0.0, None)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(batches as usize);
    for _ in 0..batches {
        let batch = (0..BATCH)
            .map(|_| {
                let rank = sampler.sample(&mut rng);
                let mut key = spec.key_buf();
                spec.key(if mix == Mix::Existing { 2 * rank } else { 2 * rank + 1 }, &mut key);
                key
            })
            .collect();
        out.push(batch);
    }
    Ok(out)
}

/// A row timed per batch (`found` = batches whose every key was found), restated per key.
fn per_key(mut m: Measurement) -> Measurement {
    let k = BATCH as f64;
    m.ops *= BATCH as u64;
    m.found *= BATCH as u64;
    m.ops_per_sec *= k;
    m.blocks_per_op /= k;
    m.bytes_per_op /= k;
    m
}

/// Missing and existing keys, single gets then multi-get, about `keys` keys per phase.
/// Empty for an engine without a batched get.
pub fn rows(engine: &dyn Engine, spec: &KeySpec, seed: u64, keys: u64, table: &str) -> EngineResult<Vec<Measurement>> {
    if engine.multi_get(&[])?.is_none() {
        return Ok(Vec::new());
    }
    let n = (keys / BATCH as u64).max(1);
    let mut rows = Vec::new();
    for (i, mix) in [Mix::Missing, Mix::Existing].into_iter().enumerate() {
        let batches = batches(spec, mix, seed.wrapping_add(100 + i as u64), n)?;
        let single = timed(engine, table, &format!("{} x{BATCH} get", mix.name()), n, |b| {
            let mut all = true;
            for key in &batches[b as usize] {
                all &= engine.get(key)?;
            }
            Ok(all)
        })?;
        rows.push(per_key(single));
        let multi = timed(engine, table, &format!("{} multi_get {BATCH}", mix.name()), n, |b| {
            Ok(engine.multi_get(&batches[b as usize])? == Some(BATCH))
        })?;
        rows.push(per_key(multi));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Variant;

    #[test]
    fn a_batch_row_is_restated_per_key() {
        let m = Measurement {
            table: "t".into(),
            phase: "p".into(),
            engine: Variant::Shamba,
            ops: 10,
            seconds: 1.0,
            cpu_seconds: 1.0,
            ops_per_sec: 10.0,
            blocks_per_op: 64.0,
            bytes_per_op: 3200.0,
            found: 10,
        };
        let k = per_key(m);
        assert_eq!(k.ops, 320);
        assert_eq!(k.found, 320);
        assert_eq!(k.ops_per_sec, 320.0);
        assert_eq!(k.blocks_per_op, 2.0);
        assert_eq!(k.bytes_per_op, 100.0);
        // Per-op times follow from ops: ns per key = 1 s / 320 keys.
        assert!((k.ns_per_op() - 1e9 / 320.0).abs() < 1e-6);
    }
}
