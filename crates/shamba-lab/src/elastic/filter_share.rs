//! `shamba-lab exp filter-share` (seed 003, its overhead claim): what share of building a
//! table its filter takes. The seed: "the time of building a filter takes only around 1% of
//! the time for constructing a SSTable on the disk" (2 MB tables of 1 KB pairs, 4 bits/key).
//!
//! Each table is one memtable flushed by `Db::flush` in the calling thread (background
//! flushes off), timed alone; the filter's part is timed apart on the same keys: each key's
//! digest, then the filter built from them, as the table builder does. Both are the best of
//! several runs: on a shared machine another process only adds time, so the best run is the
//! least disturbed one.

use std::error::Error;
use std::hint::black_box;
use std::time::Instant;

use shamba::{Db, Options, WriteBatch, WriteOptions};
use shamba_cli::bench::keys::{key_into, value_into};
use shamba_filter::{build_filter_parts, Digest, FilterSpec};

use crate::args::ExpArgs;
use crate::modular::variants::{build_options, Build};
use crate::support::figures::ratio;
use crate::support::report::{Cell, Report, Table};
use crate::support::storage::without_sync;

/// One table of the even ids `0, 2, ..` (the lab's loaded keys), in the engine's key layout.
///
/// One table shape: entry and key bytes, the table's data bytes, the filter's bits per key.
struct Shape {
    name: &'static str,
    entry: usize,
    key: usize,
    data_bytes: usize,
    bits_per_key: f64,
}

/// The best of `runs` wall-clock seconds of flushing one table of `shape`'s keys.
fn flush_seconds(shape: &Shape, runs: usize) -> Result<(f64, u64), Box<dyn Error>> {
    let n = (shape.data_bytes / shape.entry) as u64;
    let mut best = f64::INFINITY;
    let mut table_bytes = 0;
    for run in 0..runs {
        let dir = tempfile::tempdir()?;
        let mut options = Options {
            write_buffer_size: 4 * shape.data_bytes + (1 << 20),
            target_file_size: 4 * shape.data_bytes as u64,
            ..Options::default()
        };
        options.lab.background_flushes = false;
        let options = build_options(&options, Build::Whole, shape.bits_per_key, false, 100.0);
        let db = Db::open(dir.path(), without_sync(options))?;
        let wo = WriteOptions { disable_wal: true, ..WriteOptions::default() };
        let (mut key, mut value) = (vec![0u8; shape.key], vec![0u8; shape.entry - shape.key]);
        let mut batch = WriteBatch::new();
        for i in 0..n {
            key_into(2 * i, &mut key);
            value_into(2 * i + run as u64, &mut value);
            batch.put(&key, &value);
        }
        db.write_opt(batch, &wo)?;
        let start = Instant::now();
        db.flush()?;
        best = best.min(start.elapsed().as_secs_f64());
        table_bytes = db.files().iter().map(|f| f.size).sum();
        db.close()?;
    }
    Ok((best, table_bytes))
}

/// The best of `runs` wall-clock seconds of the filter's part: every key's digest, then the
/// filter built from them.
fn filter_seconds(shape: &Shape, runs: usize) -> f64 {
    let n = (shape.data_bytes / shape.entry) as u64;
    let keys: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let mut key = vec![0u8; shape.key];
            key_into(2 * i, &mut key);
            key
        })
        .collect();
    let spec = FilterSpec::Bloom { bits_per_key: shape.bits_per_key };
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let start = Instant::now();
        let digests: Vec<Digest> = black_box(&keys).iter().map(|k| Digest::of(k)).collect();
        black_box(build_filter_parts(&spec, &digests));
        best = best.min(start.elapsed().as_secs_f64());
    }
    best
}

/// Run the experiment.
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    let runs = if args.quick { 3 } else { 15 };
    let shapes = [
        Shape { name: "seed's: 1 KB pairs, 2 MB table", entry: 1024, key: 16, data_bytes: 2 << 20, bits_per_key: 4.0 },
        Shape { name: "seed's at 10 bits/key", entry: 1024, key: 16, data_bytes: 2 << 20, bits_per_key: 10.0 },
        Shape {
            name: "the lab's: 64 B pairs, 4 MiB table",
            entry: 64,
            key: 32,
            data_bytes: 4 << 20,
            bits_per_key: 10.0,
        },
    ];
    let mut table = Table::new(
        "share",
        "Filter building as a share of building a table (one memtable flushed, best of the runs)",
        &["table", "keys", "bits/key", "table KiB", "flush ms", "filter ms", "ours filter %", "seed filter %"],
    );
    for shape in &shapes {
        let (flush, bytes) = flush_seconds(shape, runs)?;
        let filter = filter_seconds(shape, runs);
        table.row(vec![
            Cell::text(shape.name),
            Cell::num((shape.data_bytes / shape.entry) as f64, 0),
            Cell::num(shape.bits_per_key, 0),
            Cell::num(bytes as f64 / 1024.0, 0),
            Cell::num(flush * 1e3, 3),
            Cell::num(filter * 1e3, 3),
            Cell::num(100.0 * ratio(filter, flush), 2),
            Cell::text(if shape.bits_per_key == 4.0 { "~1" } else { "-" }),
        ]);
    }
    let mut report = Report::new("filter-share");
    report.tables.push(table);
    report.note("seed 003: building a filter takes about 1% of the time of constructing an SSTable on the disk (LevelDB, 2 MB tables, 1 KB pairs, 4 bits/key)");
    report.note(format!(
        "flush ms: Db::flush of one memtable in the calling thread (the table built, written and installed; storage without fsync, the engine's default compression), best of {runs}; filter ms: the same keys' xxh3-128 digests and a blocked Bloom filter built from them, best of {runs}; the flush includes the filter, so the share is of the whole table build"
    ));
    report.note("wall-clock times on a shared machine: the best run is the least disturbed, but a loaded machine can still inflate either part; a quiet machine settles the share");
    if args.quick {
        report.note("QUICK RUN: 3 runs per figure; the full run takes 15");
    }
    Ok(report)
}
