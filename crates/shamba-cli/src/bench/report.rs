//! Benchmark results: one row per phase, printed as a table or as JSON.

use serde::Serialize;

/// The measured result of one phase.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseResult {
    /// Phase name (`load`, `read-existing`, `read-missing`, `read-mixed`).
    pub phase: String,
    /// Operations run.
    pub ops: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Mean nanoseconds per operation (per thread).
    pub ns_per_op: f64,
    /// Device block reads per operation (cache misses).
    pub ios_per_op: f64,
    /// Bytes read from the device per operation.
    pub bytes_read_per_op: f64,
    /// Device reads per operation by kind: data, index, filter, other.
    pub reads_per_op_by_kind: [f64; 4],
    /// Lookups that found a value (reads only).
    pub found: u64,
    /// Table probes a filter rejected, per operation.
    pub filter_negatives_per_op: f64,
    /// Table probes that were filter false positives, per operation.
    pub false_positives_per_op: f64,
    /// With `--profile`: mean nanoseconds per lookup in each stage.
    pub stage_ns_per_op: Option<StageCosts>,
    /// Filter parts (modules, units) probed per operation.
    pub filter_parts_probed_per_op: f64,
    /// Tables whose filter the probe policy skipped, per operation.
    pub filters_skipped_per_op: f64,
    /// Per level: table visits, parts probed, false positives and skipped filters per op.
    pub levels: Vec<LevelPhase>,
    /// Filter parts loaded under a filter memory budget (or Elastic units enabled), per
    /// operation: each load read the part from every partition of its table, reads that
    /// `ios_per_op` counts among the filter reads.
    pub filter_loads_per_op: f64,
}

/// Mean nanoseconds per lookup by stage.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StageCosts {
    /// Computing the key digest.
    pub hash: f64,
    /// Searching memtables (lookups that went on to the tables).
    pub memtable: f64,
    /// Finding and probing filter parts.
    pub filter: f64,
    /// Reading and searching index blocks.
    pub index: f64,
    /// Reading and searching data blocks.
    pub data: f64,
}

/// One level's share of a phase, per operation.
#[derive(Debug, Clone, Serialize)]
pub struct LevelPhase {
    /// Level number.
    pub level: usize,
    /// Tables of this level visited per operation.
    pub table_lookups_per_op: f64,
    /// Filter parts probed per operation.
    pub filter_parts_probed_per_op: f64,
    /// False positives per operation.
    pub false_positives_per_op: f64,
    /// Skipped filters per operation.
    pub filters_skipped_per_op: f64,
}

/// Print the phases as an aligned table.
pub fn print_table(rows: &[PhaseResult]) {
    print_phases(rows);
    if rows.iter().any(|r| r.stage_ns_per_op.is_some()) {
        println!();
        println!(
            "{:<15}{:>10}{:>10}{:>10}{:>10}{:>10}  (ns per lookup)",
            "phase", "hash", "memtable", "filter", "index", "data"
        );
        for r in rows {
            if let Some(c) = r.stage_ns_per_op {
                println!(
                    "{:<15}{:>10.1}{:>10.1}{:>10.1}{:>10.1}{:>10.1}",
                    r.phase, c.hash, c.memtable, c.filter, c.index, c.data
                );
            }
        }
    }
}

fn print_phases(rows: &[PhaseResult]) {
    println!(
        "{:<15}{:>11}{:>9}{:>13}{:>11}{:>10}{:>12}{:>11}{:>10}{:>10}",
        "phase", "ops", "secs", "ops/s", "ns/op", "ios/op", "bytes/op", "found", "fp/op", "parts/op"
    );
    for r in rows {
        println!(
            "{:<15}{:>11}{:>9.2}{:>13.0}{:>11.0}{:>10.3}{:>12.1}{:>11}{:>10.4}",
            r.phase,
            r.ops,
            r.seconds,
            r.ops_per_sec,
            r.ns_per_op,
            r.ios_per_op,
            r.bytes_read_per_op,
            r.found,
            r.false_positives_per_op
        );
    }
}
