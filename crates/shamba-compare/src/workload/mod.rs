//! Workload families, one file each. Every engine runs the same operations with the same
//! keys, values, order and seeds; [`timed`] turns a loop of operations into a
//! [`Measurement`] with the engine's block reads over exactly that loop.
//!
//! Keys follow `shamba bench` (`crates/shamba-cli/src/bench/keys.rs`, compiled into this
//! binary): the loaded keys are the even ids, missing keys the odd ids in between, so a
//! missing key lies inside every file's key range and reaches the filters.

pub mod latency;
pub mod load;
pub mod multi_get;
pub mod point;
pub mod pressure;
pub mod run_stats;
pub mod scan;
pub mod sizes;
pub mod sustained;
pub mod transactions;
pub mod ycsb;

use crate::engine::{Engine, EngineResult};
use crate::keys::{key_into, value_into};
use crate::measure::{progress, thread_cpu_seconds};
use crate::report::Measurement;
use std::time::Instant;

/// The key space of one database.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct KeySpec {
    /// Keys loaded (ids 0, 2, .., 2(n-1)).
    pub n: u64,
    /// Key size in bytes (at least 8).
    pub key_size: usize,
    /// Value size in bytes.
    pub value_size: usize,
}

impl KeySpec {
    /// A key buffer of the right size.
    pub fn key_buf(&self) -> Vec<u8> {
        vec![0u8; self.key_size]
    }

    /// Write key `id` into `buf`.
    pub fn key(&self, id: u64, buf: &mut [u8]) {
        key_into(id, buf);
    }

    /// Write the value of key `id` into `buf`.
    pub fn value(&self, id: u64, buf: &mut [u8]) {
        value_into(id, buf);
    }
}

/// Progress bar updates every this many operations (keeps the bar off the hot path).
const TICK: u64 = 1024;

/// Run `op` `ops` times under a progress bar and measure it. `op(i)` returns whether the
/// operation found something (counted in `found`).
pub fn timed(
    engine: &dyn Engine,
    table: &str,
    phase: &str,
    ops: u64,
    mut op: impl FnMut(u64) -> EngineResult<bool>,
) -> EngineResult<Measurement> {
    let pb = progress(ops, engine.variant().name(), &format!("{table}: {phase}"));
    let before = engine.counters();
    let start = Instant::now();
    let cpu_start = thread_cpu_seconds();
    let mut found = 0;
    for i in 0..ops {
        if op(i)? {
            found += 1;
        }
        if i % TICK == TICK - 1 {
            pb.inc(TICK);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu_seconds = thread_cpu_seconds() - cpu_start;
    let reads = engine.counters().since(&before);
    pb.finish_and_clear();
    let per_op = |x: u64| if ops == 0 { 0.0 } else { x as f64 / ops as f64 };
    Ok(Measurement {
        table: table.to_string(),
        phase: phase.to_string(),
        engine: engine.variant(),
        ops,
        seconds,
        cpu_seconds,
        ops_per_sec: if seconds > 0.0 { ops as f64 / seconds } else { 0.0 },
        blocks_per_op: per_op(reads.blocks),
        bytes_per_op: per_op(reads.bytes),
        found,
    })
}
