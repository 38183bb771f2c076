//! `shamba exp hash-cost` (seed 000, Table 1): nanoseconds to hash one key of 8 B .. 1 KiB
//! per hash function (one digest per key, as the filters use it).

use std::error::Error;
use std::hint::black_box;

use shamba::lab::filter::hashes::HashFn;

use super::measure::{ns_per_op, random_keys};
use super::report::{Cell, Plot, Report, Table};
use super::ExpArgs;

const SIZES: [usize; 8] = [8, 16, 32, 64, 128, 256, 512, 1024];

/// The seed's 1 KiB figure for our closest function (Table 1; the seed's XXHash is xxh64).
fn seed_1k_ns(f: HashFn) -> Option<f64> {
    match f {
        HashFn::Murmur64A => Some(235.0),
        HashFn::Crc32c => Some(323.0),
        HashFn::Xxh64 => Some(874.0),
        HashFn::Sha256 => Some(5170.0),
        HashFn::Xxh3_128 | HashFn::Xxh3_64 => None,
    }
}

/// Run the experiment.
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    let pool = 1024;
    let rounds = if args.quick { 100 } else { 1000 };
    let mut headers = vec!["hash".to_string()];
    headers.extend(SIZES.iter().map(|s| format!("ours {s}B ns")));
    headers.push("seed 1KB ns".to_string());
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = Table::new("ns", "Hash cost per key (one digest), ns", &h);
    let mut plot =
        Plot::new("ns", "Hash cost vs key size (seed 000, Table 1)", "key bytes", "ns per key").log(true, true);
    for f in HashFn::ALL {
        let mut row = vec![Cell::text(f.name())];
        let mut points = Vec::new();
        for &size in &SIZES {
            let keys = random_keys(pool, size, args.seed + size as u64);
            // SHA-256 is ~50x slower: fewer rounds keep the run short.
            let r = if f == HashFn::Sha256 { rounds / 10 + 1 } else { rounds };
            let ns = ns_per_op(pool * r, 3, || {
                for _ in 0..r {
                    for k in &keys {
                        black_box(f.digest(black_box(k)));
                    }
                }
            });
            row.push(Cell::num(ns, 1));
            points.push((size as f64, ns));
        }
        row.push(Cell::opt(seed_1k_ns(f), 0));
        table.row(row);
        plot.series(f.name(), points);
    }
    let mut report = Report::new("hash-cost");
    report.tables.push(table);
    report.plots.push(plot);
    report.note("seed Table 1 (Xeon Gold 6230): CITY 176, MM64 235, CRC 323, XXHash 874, MD5 2850, SHA-256 5170 ns per 1 KB key; CITY and MD5 are not implemented here");
    report.note("ours: best of 3 runs over a pool of 1024 keys per size (keys in cache)");
    Ok(report)
}
