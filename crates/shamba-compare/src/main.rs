//! `shamba-compare`: the same workloads, in one process run, on Shamba, RocksDB and fjall.
//!
//! Engines run one after another; each gets a fresh database per key space, its own
//! peak-RSS window, and the same keys, values, order and seeds. See `config.rs` for the
//! plan, `engine/` for how each engine is configured, `workload/` for what is measured.

#![deny(clippy::unwrap_used, clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![warn(clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod config;
mod disk;
mod engine;
// Shared with `shamba bench`, which also uses the lookup-id streams the comparison does not.
#[allow(dead_code)]
#[path = "../../shamba-cli/src/bench/keys.rs"]
mod keys;
mod measure;
mod pressure_table;
mod report;
mod scale;
mod scale_plot;
mod scale_table;
mod tx_table;
mod workload;
// YCSB's request streams, shared with `shamba bench --ycsb`.
#[path = "../../shamba-cli/src/bench/ycsb_requests.rs"]
mod ycsb_requests;
mod ycsb_table;

use clap::Parser;
use config::{Args, Family, Plan};
use engine::txn::{open_tx, TX_VARIANTS};
use engine::{Engine, Setup, Variant};
use keys::KeyDistribution;
use report::{EngineSummary, Measurement};
use std::error::Error;
use std::path::Path;
use workload::transactions::{Accounts, Phases, TxMeasurement};
use workload::ycsb::{YcsbMeasurement, YCSB_VARIANTS};
use workload::{load, multi_get, point, pressure, scan};

/// Results of one engine.
struct EngineRun {
    /// None when no family needed the main key space loaded.
    summary: Option<EngineSummary>,
    rows: Vec<Measurement>,
    tx_rows: Vec<TxMeasurement>,
    ycsb_rows: Vec<YcsbMeasurement>,
}

fn main() -> Result<(), Box<dyn Error + Send + Sync>> {
    let args = Args::parse();
    let plan = Plan::from_args(&args)?;
    if !args.tables_from.is_empty() {
        scale_table::print(&scale::from_json_files(&args.tables_from, args.plot.as_deref())?);
        return Ok(());
    }
    let temp;
    let root = match &args.dir {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            d.clone()
        }
        None => {
            temp = tempfile::Builder::new().prefix("shamba-compare").tempdir()?;
            temp.path().to_path_buf()
        }
    };
    let engines = args.engines();
    let skip = args.skipped();
    if let Some(missing) = engines.iter().find(|v| !v.compiled_in()) {
        return Err(format!("{} is not compiled in: build with --features peers", missing.name()).into());
    }
    let started = std::time::Instant::now();
    if !args.json {
        println!("shamba-compare, {} run", plan.mode);
        for line in plan.footing(&engines, &skip) {
            println!("  {line}");
        }
        println!();
    }
    let order = load::shuffled_ids(plan.spec.n, plan.seed);
    let mut reference_bytes = None;
    let mut reference_filter_bytes = None;
    let mut summaries = Vec::new();
    let mut rows = Vec::new();
    let mut tx_rows = Vec::new();
    let mut ycsb_rows = Vec::new();
    for &variant in &engines {
        let run =
            run_engine(variant, &plan, &skip, &root, &order, (&mut reference_bytes, &mut reference_filter_bytes))?;
        summaries.extend(run.summary);
        rows.extend(run.rows);
        tx_rows.extend(run.tx_rows);
        ycsb_rows.extend(run.ycsb_rows);
    }
    let scale = scale::run(&args, &plan, &engines, &root)?;
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let out = serde_json::json!({
            "plan": plan,
            "footing": plan.footing(&engines, &skip),
            "sweep_reference_bytes": reference_bytes,
            "engines": summaries,
            "results": rows,
            "transactions": tx_rows,
            "ycsb": ycsb_rows,
            "scale": scale,
            "seconds": seconds,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        if !summaries.is_empty() {
            report::print_engines(&summaries);
        }
        if !rows.is_empty() {
            report::print_measurements(&rows);
        }
        pressure_table::print(&rows);
        tx_table::print(&tx_rows);
        ycsb_table::print(&ycsb_rows);
        scale_table::print(&scale);
        println!("total {seconds:.0} s");
    }
    Ok(())
}

/// Every workload on one engine: those on the main key space (inside the engine's peak-RSS
/// window), the large keys, then the transactions on a database of their own.
fn run_engine(
    variant: Variant,
    plan: &Plan,
    skip: &[Family],
    root: &Path,
    order: &[u64],
    references: (&mut Option<u64>, &mut Option<u64>),
) -> Result<EngineRun, Box<dyn Error + Send + Sync>> {
    let mut run = EngineRun { summary: None, rows: Vec::new(), tx_rows: Vec::new(), ycsb_rows: Vec::new() };
    if Family::ALL.iter().any(|f| f.needs_main_load() && !skip.contains(f)) {
        let (summary, rows) = run_loaded(variant, plan, skip, root, order, references)?;
        run.summary = Some(summary);
        run.rows = rows;
    } else if !skip.contains(&Family::BigKeys) {
        run.rows.extend(big_keys(variant, plan, root)?);
        let _ = std::fs::remove_dir_all(root.join(format!("{}-big", variant.name())));
    }
    if !skip.contains(&Family::Transactions) && TX_VARIANTS.contains(&variant) {
        run.tx_rows = transactions(variant, plan, root)?;
    }
    if !skip.contains(&Family::Ycsb) && YCSB_VARIANTS.contains(&variant) {
        run.ycsb_rows = workload::ycsb::run(variant, &plan.ycsb, &plan.setup, root)?;
    }
    Ok(run)
}

/// The transaction rows of one engine, on a fresh database of its own.
fn transactions(
    variant: Variant,
    plan: &Plan,
    root: &Path,
) -> Result<Vec<TxMeasurement>, Box<dyn Error + Send + Sync>> {
    let dir = root.join(format!("{}-tx", variant.name()));
    let _ = std::fs::remove_dir_all(&dir);
    let db = open_tx(variant, &dir, &plan.setup)?;
    let accounts = Accounts { n: plan.tx_accounts, spec: plan.spec };
    let rows = Phases { engine: db.as_ref(), accounts, ops: plan.tx_ops, seed: plan.seed }.run()?;
    db.close()?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(rows)
}

/// The workloads on the main loaded key space (and the large keys), inside the engine's
/// peak-RSS window: the engine's summary and rows.
fn run_loaded(
    variant: Variant,
    plan: &Plan,
    skip: &[Family],
    root: &Path,
    order: &[u64],
    (reference_bytes, reference_filter_bytes): (&mut Option<u64>, &mut Option<u64>),
) -> Result<(EngineSummary, Vec<Measurement>), Box<dyn Error + Send + Sync>> {
    let window = measure::start_window();
    let dir = root.join(variant.name());
    let _ = std::fs::remove_dir_all(&dir);
    let mut rows = Vec::new();
    let spec = &plan.spec;
    let key_table = format!("{} B keys", spec.key_size);

    let db = engine::open(variant, &dir, &plan.setup)?;
    let loaded = load::load(db.as_ref(), spec, order, &format!("random load, {key_table}"))?;
    let shape = db.shape()?;
    let reference = *reference_bytes.get_or_insert(shape.metadata_bytes());
    let reference_filter = *reference_filter_bytes.get_or_insert(shape.filter_bytes);
    if !skip.contains(&Family::Point) {
        for (dist, name) in [(KeyDistribution::Uniform, "uniform"), (KeyDistribution::Zipfian, "Zipfian")] {
            let table = format!("point lookups, {name}, {key_table}, filters in memory");
            rows.extend(point::all_mixes(db.as_ref(), spec, dist, plan.zipf_theta, plan.seed, plan.reads, &table)?);
        }
    }
    if !skip.contains(&Family::MultiGet) {
        let table = format!("multi_get: batches of {} keys, uniform, {key_table}, filters in memory", multi_get::BATCH);
        rows.extend(multi_get::rows(db.as_ref(), spec, plan.seed, plan.reads, &table)?);
    }
    if !skip.contains(&Family::Scan) {
        let table = format!("short range scans, {key_table}");
        rows.push(scan::short_scans(db.as_ref(), spec, plan.scan_len, plan.seed, plan.reads / 5, &table)?);
    }
    db.close()?;

    if !skip.contains(&Family::Pressure) {
        let sweep = pressure::Sweep {
            dir: &dir,
            setup: &plan.setup,
            spec: *spec,
            reference_bytes: reference,
            reference_filter_bytes: reference_filter,
            direct_io: plan.direct_io,
            ops: plan.reads / 2,
            seed: plan.seed,
        };
        let table = format!(
            "{}{}: empty lookups, index+filter in a cache of N% of {} KiB (the first engine's)",
            pressure_table::TABLE_PREFIX,
            if plan.direct_io { ", O_DIRECT reads" } else { "" },
            reference / 1024
        );
        rows.extend(sweep.run(variant, &table)?);
    }
    if plan.direct_io && !skip.contains(&Family::MultiGet) {
        rows.extend(direct_multi_get(variant, plan, &dir, &key_table)?);
    }
    let _ = std::fs::remove_dir_all(&dir);

    if !skip.contains(&Family::BigKeys) {
        rows.extend(big_keys(variant, plan, root)?);
        let _ = std::fs::remove_dir_all(root.join(format!("{}-big", variant.name())));
    }

    let peak = measure::peak_rss_bytes();
    let summary = EngineSummary {
        engine: variant,
        description: variant.describe(),
        keys: spec.n,
        load_ops_per_sec: loaded.load.ops_per_sec,
        settle_seconds: loaded.settle_seconds,
        filter_bits_per_key: shape.filter_bytes as f64 * 8.0 / spec.n as f64,
        shape,
        peak_rss_bytes: peak,
        rss_growth_bytes: peak.saturating_sub(window.baseline_bytes),
    };
    rows.insert(0, loaded.load);
    Ok((summary, rows))
}

/// The multi_get rows again with O_DIRECT table reads (reopened, the cache's default
/// size): a batch's reads can overlap on the disk, a single get's cannot. A first pass
/// warms the cache with indexes and filters and is not kept; a twentieth of the lookups,
/// since each miss is a disk read.
fn direct_multi_get(
    variant: Variant,
    plan: &Plan,
    dir: &Path,
    key_table: &str,
) -> Result<Vec<Measurement>, Box<dyn Error + Send + Sync>> {
    let setup = Setup { direct_io: true, ..plan.setup.clone() };
    let db = engine::open(variant, dir, &setup)?;
    let table = format!("multi_get: batches of {} keys, uniform, {key_table}, O_DIRECT reads", multi_get::BATCH);
    let keys = (plan.reads / 20).max(multi_get::BATCH as u64);
    multi_get::rows(db.as_ref(), &plan.spec, plan.seed.wrapping_add(7), keys, &table)?;
    let rows = multi_get::rows(db.as_ref(), &plan.spec, plan.seed, keys, &table)?;
    db.close()?;
    Ok(rows)
}

/// Large keys: load num/8 keys of `big_key_size` bytes, then uniform lookups.
fn big_keys(variant: Variant, plan: &Plan, root: &Path) -> Result<Vec<Measurement>, Box<dyn Error + Send + Sync>> {
    let spec = &plan.big_spec;
    let dir = root.join(format!("{}-big", variant.name()));
    let _ = std::fs::remove_dir_all(&dir);
    let order = load::shuffled_ids(spec.n, plan.seed);
    let db: Box<dyn Engine> = engine::open(variant, &dir, &plan.setup)?;
    let table = format!("{} B keys ({} keys), uniform lookups", spec.key_size, spec.n);
    let loaded = load::load(db.as_ref(), spec, &order, &table)?;
    let mut rows = vec![loaded.load];
    rows.extend(point::all_mixes(db.as_ref(), spec, KeyDistribution::Uniform, 0.0, plan.seed, plan.reads / 2, &table)?);
    db.close()?;
    Ok(rows)
}
