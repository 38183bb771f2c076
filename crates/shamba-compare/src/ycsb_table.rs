//! The YCSB rows as tables: per record size and thread count, each workload on each engine
//! (ops/s, client CPU per op, records not found, latency per operation kind), then Shamba's
//! ratio to each peer per workload and thread count.

use crate::engine::Variant;
use crate::workload::ycsb::YcsbMeasurement;
use crate::ycsb_requests::Workload;

/// "1.23x", or "-" when either side is zero.
fn ratio(num: f64, den: f64) -> String {
    if num <= 0.0 || den <= 0.0 {
        "-".into()
    } else {
        format!("{:.2}x", num / den)
    }
}

/// Items in first-seen order, without repeats.
fn distinct<T: PartialEq + Copy>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// `engine`'s row of one workload, thread count and record size.
fn row_of(rows: &[YcsbMeasurement], engine: Variant, key: (Workload, usize, usize)) -> Option<&YcsbMeasurement> {
    rows.iter().find(|r| r.engine == engine && (r.workload, r.threads, r.value_size) == key)
}

/// Shamba's ratio to `peer` on one workload, thread count and record size: ops/s (Shamba
/// over peer) and client CPU per op (peer over Shamba); above 1.00x Shamba is ahead.
fn ratios(rows: &[YcsbMeasurement], peer: Variant, key: (Workload, usize, usize)) -> (String, String) {
    match (row_of(rows, Variant::Shamba, key), row_of(rows, peer, key)) {
        (Some(s), Some(p)) => (ratio(s.ops_per_sec, p.ops_per_sec), ratio(p.cpu_us_per_op(), s.cpu_us_per_op())),
        _ => ("-".into(), "-".into()),
    }
}

/// Print every table; nothing when no YCSB rows ran.
pub fn print(rows: &[YcsbMeasurement]) {
    if rows.is_empty() {
        return;
    }
    let sizes = distinct(rows.iter().map(|r| r.value_size));
    let threads = distinct(rows.iter().map(|r| r.threads));
    let workloads = distinct(rows.iter().map(|r| r.workload));
    let engines = distinct(rows.iter().map(|r| r.engine));
    for &size in &sizes {
        for &t in &threads {
            println!();
            println!("== YCSB, {size} B records, {t} client thread(s) ==");
            println!(
                "{:<9} {:<9} {:>10} {:>10} {:>9} {:>7} {:>9} {:>10} {:>10} {:>11}",
                "workload", "engine", "ops/s", "cpu us/op", "notfound", "op", "p50 us", "p99 us", "p99.9 us", "max us"
            );
            for &w in &workloads {
                for &e in &engines {
                    let Some(r) = row_of(rows, e, (w, t, size)) else { continue };
                    for (i, l) in r.latencies.iter().enumerate() {
                        let head = if i == 0 {
                            format!(
                                "{:<9} {:<9} {:>10.0} {:>10.2} {:>9}",
                                format!("{w:?}"),
                                e.name(),
                                r.ops_per_sec,
                                r.cpu_us_per_op(),
                                r.not_found
                            )
                        } else {
                            format!("{:<9} {:<9} {:>10} {:>10} {:>9}", "", "", "", "", "")
                        };
                        println!(
                            "{head} {:>7} {:>9.1} {:>10.1} {:>10.1} {:>11.1}",
                            l.op,
                            l.p50_ns as f64 / 1e3,
                            l.p99_ns as f64 / 1e3,
                            l.p999_ns as f64 / 1e3,
                            l.max_ns as f64 / 1e3
                        );
                    }
                }
            }
        }
    }
    print_engine_stats(rows, &sizes, &threads, &workloads, &engines);
    let peers: Vec<Variant> = engines.iter().copied().filter(|e| *e != Variant::Shamba).collect();
    if peers.is_empty() || !engines.contains(&Variant::Shamba) {
        return;
    }
    println!();
    println!("== YCSB: Shamba / peer, ops/s and client cpu per op (peer / Shamba); above 1.00x Shamba is ahead ==");
    let mut header = format!("{:<8} {:<9} {:>8}", "records", "workload", "threads");
    for p in &peers {
        header += &format!(" {:>16} {:>16}", format!("ops/s vs {}", p.name()), format!("cpu vs {}", p.name()));
    }
    println!("{header}");
    for &size in &sizes {
        for &w in &workloads {
            for &t in &threads {
                let mut line = format!("{:<8} {:<9} {:>8}", format!("{size} B"), format!("{w:?}"), t);
                for &p in &peers {
                    let (ops, cpu) = ratios(rows, p, (w, t, size));
                    line += &format!(" {ops:>16} {cpu:>16}");
                }
                println!("{line}");
            }
        }
    }
    println!();
    println!("An op is one YCSB request (a scan reads 1-100 records; an update reads the record and writes it");
    println!("back). cpu us/op: client threads only, summed (steadier than ops/s on a loaded machine).");
}

/// "12.3", or "-" where the engine does not count it.
fn scaled(v: Option<u64>, unit: f64) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{:.1}", v as f64 / unit))
}

/// What each engine's counters say about each run: blocks read past the cache per op,
/// compactions and their bytes, and write-stall time during the run.
fn print_engine_stats(
    rows: &[YcsbMeasurement],
    sizes: &[usize],
    threads: &[usize],
    workloads: &[Workload],
    engines: &[Variant],
) {
    println!();
    println!("== YCSB: engine counters over each run (blocks read past the block cache; background work) ==");
    println!(
        "{:<8} {:<9} {:>7} {:<9} {:>10} {:>11} {:>11} {:>14} {:>10}",
        "records",
        "workload",
        "threads",
        "engine",
        "blocks/op",
        "KiB read/op",
        "compactions",
        "compaction MiB",
        "stall ms"
    );
    for &size in sizes {
        for &w in workloads {
            for &t in threads {
                for &e in engines {
                    let Some(r) = row_of(rows, e, (w, t, size)) else { continue };
                    let s = &r.engine_stats;
                    let kib_per_op = if r.ops == 0 { 0.0 } else { s.bytes_read as f64 / 1024.0 / r.ops as f64 };
                    println!(
                        "{:<8} {:<9} {:>7} {:<9} {:>10.3} {:>11.2} {:>11} {:>14} {:>10}",
                        format!("{size} B"),
                        format!("{w:?}"),
                        t,
                        e.name(),
                        r.blocks_per_op(),
                        kib_per_op,
                        s.compactions.map_or_else(|| "-".into(), |c| c.to_string()),
                        scaled(s.compaction_bytes, 1024.0 * 1024.0),
                        scaled(s.stall_micros, 1e3)
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(engine: Variant, workload: Workload, threads: usize, ops_per_sec: f64, cpu_seconds: f64) -> YcsbMeasurement {
        YcsbMeasurement {
            engine,
            workload,
            threads,
            value_size: 1000,
            ops: 1000,
            seconds: 1000.0 / ops_per_sec,
            cpu_seconds,
            ops_per_sec,
            not_found: 0,
            latencies: Vec::new(),
            engine_stats: Default::default(),
            files_per_level: Vec::new(),
        }
    }

    #[test]
    fn ratios_are_shamba_over_the_peer_of_the_same_workload_and_threads() {
        let rows = vec![
            row(Variant::Shamba, Workload::A, 1, 300.0, 1.0),
            row(Variant::Shamba, Workload::A, 2, 500.0, 2.0),
            row(Variant::Rocksdb, Workload::A, 1, 200.0, 3.0),
            row(Variant::Rocksdb, Workload::A, 2, 1000.0, 1.0),
            row(Variant::Fjall, Workload::B, 1, 100.0, 1.0),
        ];
        assert_eq!(ratios(&rows, Variant::Rocksdb, (Workload::A, 1, 1000)), ("1.50x".into(), "3.00x".into()));
        assert_eq!(ratios(&rows, Variant::Rocksdb, (Workload::A, 2, 1000)), ("0.50x".into(), "0.50x".into()));
        assert_eq!(ratios(&rows, Variant::Fjall, (Workload::A, 1, 1000)), ("-".into(), "-".into()));
        assert_eq!(ratios(&rows, Variant::Fjall, (Workload::B, 1, 1000)), ("-".into(), "-".into()));
        assert_eq!(ratios(&rows, Variant::Rocksdb, (Workload::A, 1, 32)), ("-".into(), "-".into()));
    }
}
