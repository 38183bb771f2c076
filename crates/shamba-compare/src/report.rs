//! Results: one row per (workload, phase, engine), one summary per engine, printed as
//! tables with Shamba / peer ratios, or as one JSON object.

use crate::engine::{TreeShape, Variant};
use serde::Serialize;

/// One measured phase of one engine.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    /// The table this row belongs to (a workload family and its parameters).
    pub table: String,
    /// The row label inside the table (e.g. "missing", "cache 40%").
    pub phase: String,
    /// Engine configuration.
    pub engine: Variant,
    /// Operations timed.
    pub ops: u64,
    /// Wall-clock seconds for them.
    pub seconds: f64,
    /// CPU seconds of the client thread for them (background threads not included).
    pub cpu_seconds: f64,
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Blocks read from files per operation (block cache misses).
    pub blocks_per_op: f64,
    /// Bytes read from files per operation.
    pub bytes_per_op: f64,
    /// Operations that found their key (lookups) or returned entries (scans).
    pub found: u64,
}

impl Measurement {
    /// Wall-clock nanoseconds per operation.
    pub fn ns_per_op(&self) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            self.seconds * 1e9 / self.ops as f64
        }
    }

    /// Client-thread CPU nanoseconds per operation.
    pub fn cpu_ns_per_op(&self) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            self.cpu_seconds * 1e9 / self.ops as f64
        }
    }
}

/// Per-engine facts: load, tree shape, memory.
#[derive(Debug, Clone, Serialize)]
pub struct EngineSummary {
    /// Engine configuration.
    pub engine: Variant,
    /// How it is configured beyond the shared footing.
    pub description: &'static str,
    /// Keys loaded.
    pub keys: u64,
    /// Random-load throughput (puts only; the final flush and compactions are `settle`).
    pub load_ops_per_sec: f64,
    /// Seconds to flush and finish compactions after the load.
    pub settle_seconds: f64,
    /// Tree after settling.
    pub shape: TreeShape,
    /// Filter bits per loaded key.
    pub filter_bits_per_key: f64,
    /// Peak RSS while this engine ran (all its phases), bytes.
    pub peak_rss_bytes: u64,
    /// Peak RSS minus the RSS when its window started.
    pub rss_growth_bytes: u64,
}

/// Format `x` with thousands separators.
fn thousands(x: f64) -> String {
    let s = format!("{:.0}", x.max(0.0));
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "1.23x", or "-" when either side is zero.
fn ratio(num: f64, den: f64) -> String {
    if num <= 0.0 || den <= 0.0 {
        "-".into()
    } else {
        format!("{:.2}x", num / den)
    }
}

/// Below this many blocks (or KiB) per operation a ratio of reads is noise (a few cold
/// misses), and is not printed.
const READS_NOISE_FLOOR: f64 = 0.005;

/// Ratio of two per-operation read counts, "-" when both are below the noise floor.
fn reads_ratio(num: f64, den: f64, unit: f64) -> String {
    if num.max(den) / unit < READS_NOISE_FLOOR {
        "-".into()
    } else {
        ratio(num, den)
    }
}

/// The Shamba row a peer's row is compared with: same table and phase, same filter
/// family if measured, else Shamba's Bloom row.
fn reference<'a>(rows: &'a [Measurement], row: &Measurement) -> Option<&'a Measurement> {
    let same = |r: &&Measurement| r.table == row.table && r.phase == row.phase && r.engine.is_shamba();
    rows.iter().filter(same).find(|r| r.engine.family() == row.engine.family()).or_else(|| rows.iter().find(same))
}

/// Print the engine summary table.
pub fn print_engines(engines: &[EngineSummary]) {
    println!("== Engines (after load + settle) ==");
    println!(
        "{:<20} {:>11} {:>8} {:<22} {:>9} {:>10} {:>11} {:>9} {:>9}",
        "engine",
        "load ops/s",
        "settle s",
        "files per level",
        "filter b/k",
        "index KiB",
        "meta KiB",
        "peak MiB",
        "grow MiB"
    );
    for e in engines {
        let levels = e.shape.files_per_level.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(",");
        let index = e.shape.index_bytes.map_or("n/a".to_string(), |b| format!("{:.0}", b as f64 / 1024.0));
        println!(
            "{:<20} {:>11} {:>8.1} {:<22} {:>9.2} {:>10} {:>11.0} {:>9.0} {:>9.0}",
            e.engine.name(),
            thousands(e.load_ops_per_sec),
            e.settle_seconds,
            levels,
            e.filter_bits_per_key,
            index,
            e.shape.metadata_bytes() as f64 / 1024.0,
            e.peak_rss_bytes as f64 / (1 << 20) as f64,
            e.rss_growth_bytes as f64 / (1 << 20) as f64,
        );
    }
    println!("(load ratio shamba/peer:");
    for e in engines.iter().filter(|e| !e.engine.is_shamba()) {
        if let Some(s) = engines.iter().find(|s| s.engine.is_shamba() && s.engine.family() == e.engine.family()) {
            print!(" {} {}", e.engine.name(), ratio(s.load_ops_per_sec, e.load_ops_per_sec));
        }
    }
    println!(")");
}

/// Print one table per workload, in the order they ran; rows grouped by phase.
pub fn print_measurements(rows: &[Measurement]) {
    let mut tables: Vec<&str> = Vec::new();
    for r in rows {
        if !tables.contains(&r.table.as_str()) {
            tables.push(&r.table);
        }
    }
    for table in tables {
        println!();
        println!("== {table} ==");
        println!(
            "{:<20} {:<20} {:>11} {:>8} {:>8} {:>9} {:>8} {:>5} {:>9} {:>8} {:>8} {:>9}",
            "phase",
            "engine",
            "ops/s",
            "ns/op",
            "cpu ns",
            "blocks/op",
            "KiB/op",
            "found",
            "S/p ops/s",
            "S/p cpu",
            "S/p blks",
            "S/p bytes"
        );
        let in_table: Vec<&Measurement> = rows.iter().filter(|r| r.table == table).collect();
        let mut phases: Vec<&str> = Vec::new();
        for r in &in_table {
            if !phases.contains(&r.phase.as_str()) {
                phases.push(&r.phase);
            }
        }
        for phase in phases {
            for r in in_table.iter().filter(|r| r.phase == phase) {
                let (ops_ratio, cpu_ratio, blk_ratio, byte_ratio) = match reference(rows, r) {
                    Some(s) if !r.engine.is_shamba() => (
                        ratio(s.ops_per_sec, r.ops_per_sec),
                        ratio(r.cpu_ns_per_op(), s.cpu_ns_per_op()),
                        reads_ratio(s.blocks_per_op, r.blocks_per_op, 1.0),
                        reads_ratio(s.bytes_per_op, r.bytes_per_op, 1024.0),
                    ),
                    _ => ("".into(), "".into(), "".into(), "".into()),
                };
                let found = if r.ops == 0 { 0.0 } else { 100.0 * r.found as f64 / r.ops as f64 };
                println!(
                    "{:<20} {:<20} {:>11} {:>8.0} {:>8.0} {:>9.3} {:>8.2} {:>4.0}% {:>9} {:>8} {:>8} {:>9}",
                    r.phase,
                    r.engine.name(),
                    thousands(r.ops_per_sec),
                    r.ns_per_op(),
                    r.cpu_ns_per_op(),
                    r.blocks_per_op,
                    r.bytes_per_op / 1024.0,
                    found,
                    ops_ratio,
                    cpu_ratio,
                    blk_ratio,
                    byte_ratio
                );
            }
        }
    }
    println!();
    println!("S/p = Shamba / peer, against the Shamba row of the same filter family (Bloom or Ribbon).");
    println!("S/p ops/s (wall clock) and S/p cpu (peer cpu ns / Shamba cpu ns, client thread only) above 1.00x:");
    println!("Shamba is faster. S/p blks and S/p bytes below 1.00x: Shamba reads less. cpu ns is steadier than");
    println!("wall time on a loaded machine; for loads it leaves out background flushes and compactions.");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1000.0), "1,000");
        assert_eq!(thousands(1234567.4), "1,234,567");
    }

    #[test]
    fn ratio_is_blank_when_a_side_is_zero() {
        assert_eq!(ratio(2.0, 1.0), "2.00x");
        assert_eq!(ratio(0.0, 1.0), "-");
        assert_eq!(reads_ratio(0.001, 0.002, 1.0), "-");
        assert_eq!(reads_ratio(1.0, 0.5, 1.0), "2.00x");
        assert_eq!(reads_ratio(1.0, 0.0, 1.0), "-");
    }

    fn row(engine: Variant, ops_per_sec: f64) -> Measurement {
        Measurement {
            table: "t".into(),
            phase: "p".into(),
            engine,
            ops: 1,
            seconds: 1.0,
            cpu_seconds: 1.0,
            ops_per_sec,
            blocks_per_op: 0.0,
            bytes_per_op: 0.0,
            found: 0,
        }
    }

    #[test]
    fn peers_are_compared_with_the_shamba_row_of_their_family() {
        let rows = vec![row(Variant::Shamba, 1.0), row(Variant::ShambaRibbon, 2.0), row(Variant::RocksdbRibbon, 3.0)];
        assert_eq!(reference(&rows, &rows[2]).map(|r| r.engine), Some(Variant::ShambaRibbon));
        let fjall = row(Variant::Fjall, 1.0);
        assert_eq!(reference(&rows, &fjall).map(|r| r.engine), Some(Variant::Shamba));
    }
}
