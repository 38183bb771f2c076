//! `shamba-lab exp latency` (seed 002, Figs. 13-14 and 16): mean lookup latency, not I/Os.
//!
//! Figs. 13-14: Plain against SHaMBa-eq (Fig. 13) and SHaMBa-prop (Fig. 14), each with P/F
//! skipping, on `memory-pressure`'s tree and cache sizes, uniform lookups at alpha 0, 0.5
//! and 1, every block that misses the engine's cache paying an emulated SSD read. Fig. 16:
//! SHaMBa's speedup over Plain for uniform empty lookups on each emulated device (the OS page
//! cache alone, NVM, PCIe SSD, SSD) and on this machine's disk through `O_DIRECT`.
//!
//! The seed measured both on its RocksDB prototype with a real SSD, a PCIe SSD and a
//! RAM-disk; ours are the same engine's trees as `memory-pressure`, so a latency here can be
//! set beside that experiment's I/O count for the same cell.

use std::collections::BTreeMap;
use std::error::Error;

use shamba::lab::DeviceModel;
use shamba_cli::bench::keys::KeyDistribution;
use shamba_cli::bench::report::PhaseResult;

use crate::args::ExpArgs;
use crate::modular::memory_pressure::pressure_tree;
use crate::modular::variants::{cached_options, prop_first_bits, Build, Variant, ALL};
use crate::support::figures::ratio;
use crate::support::lookups::{measure, ReadSpec};
use crate::support::report::{Cell, Plot, Report, Table};
use crate::support::tree::LoadedTree;

/// Bits per key of every filter (`memory-pressure`'s).
const BITS_PER_KEY: f64 = 10.0;

/// The variants of the seed's Figs. 13-14.
const FIG13_14: [&str; 7] = ["plain", "eq", "eq-P", "eq-F", "prop", "prop-P", "prop-F"];
/// The variants of Fig. 16 (the seed does not name which SHaMBa it ran; these are the
/// baseline, the plain modular filter and each family's full-skipping policy).
const FIG16: [&str; 4] = ["plain", "eq", "eq-F", "prop-F"];

/// A device of Fig. 16: an emulated cost per missed block, or `O_DIRECT` reads of this
/// machine's disk (no emulated cost).
#[derive(Debug, Clone, Copy)]
struct Device {
    name: &'static str,
    model: &'static str,
    direct: bool,
}

const DEVICES: [Device; 5] = [
    Device { name: "page cache", model: "none", direct: false },
    Device { name: "nvm (70 ns)", model: "nvm", direct: false },
    Device { name: "pcie (10 us)", model: "pcie", direct: false },
    Device { name: "ssd (100 us)", model: "ssd", direct: false },
    Device { name: "disk (O_DIRECT)", model: "none", direct: true },
];

/// The device of Figs. 13-14 (the seed's off-the-shelf SSD).
const FIG13_14_DEVICE: Device = Device { name: "ssd (100 us)", model: "ssd", direct: false };

struct Plan {
    num: u64,
    pcts: Vec<f64>,
    alphas: Vec<f64>,
    fig13: Vec<&'static str>,
    fig16_pcts: Vec<f64>,
    fig16: Vec<&'static str>,
    devices: Vec<Device>,
    warmup: u64,
    reads: u64,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                num: 200_000,
                pcts: vec![10.0, 100.0],
                alphas: vec![0.0],
                fig13: vec!["plain", "eq-F", "prop-F"],
                fig16_pcts: vec![10.0],
                fig16: vec!["plain", "eq-F"],
                devices: vec![DEVICES[0], DEVICES[2]],
                warmup: 2_000,
                reads: 1_000,
            }
        } else {
            Plan {
                num: 2_000_000,
                pcts: vec![10.0, 25.0, 40.0, 70.0, 100.0, 150.0],
                alphas: vec![0.0, 0.5, 1.0],
                fig13: FIG13_14.to_vec(),
                fig16_pcts: vec![10.0, 40.0],
                fig16: FIG16.to_vec(),
                devices: DEVICES.to_vec(),
                warmup: 30_000,
                reads: 5_000,
            }
        }
    }
}

/// The variant named `name` (not a `-budget` one: the cells give no filter budget).
fn variant(name: &str) -> Result<Variant, Box<dyn Error>> {
    ALL.iter().find(|v| v.name == name).copied().ok_or_else(|| format!("no variant {name}").into())
}

/// The trees of a run, by build (SHaMBa-prop: by budget), loaded when first needed.
struct Trees {
    num: u64,
    seed: u64,
    loaded: BTreeMap<String, LoadedTree>,
    notes: Vec<String>,
}

impl Trees {
    fn get(&mut self, build: Build, pct: f64) -> Result<&LoadedTree, Box<dyn Error>> {
        let key = match build {
            Build::Prop => prop_first_bits(BITS_PER_KEY, pct).map_or("whole".to_string(), |b| format!("prop-{b:.1}")),
            Build::Whole => "whole".to_string(),
            Build::Eq(n) => format!("eq{n}"),
            other => format!("{other:?}"),
        };
        if !self.loaded.contains_key(&key) {
            let t = LoadedTree::load(pressure_tree(self.num, build, pct, self.seed))?;
            self.notes.push(format!("{key} tree: {} (loaded in {:.1} s)", t.describe(), t.load_seconds));
            self.loaded.insert(key.clone(), t);
        }
        self.loaded.get(&key).ok_or_else(|| "tree just loaded is missing".into())
    }
}

/// One cell: `v` on its tree with a cold cache of `cache` bytes, every missed block paying
/// `device`.
fn cell(
    tree: &LoadedTree,
    v: &Variant,
    cache: usize,
    device: Device,
    spec: &ReadSpec,
) -> Result<PhaseResult, Box<dyn Error>> {
    let mut o = cached_options(&tree.spec.options, v, cache, 0);
    o.lab.device = DeviceModel::parse(device.model).ok_or_else(|| format!("unknown device {}", device.model))?;
    let db = tree.open_reads(o, device.direct)?;
    let r = measure(&db, tree.spec.num, tree.spec.key_size, spec)?;
    db.close()?;
    Ok(r)
}

/// Run the experiment.
pub fn run(args: &ExpArgs) -> Result<Report, Box<dyn Error>> {
    let plan = Plan::new(args.quick);
    let num = args.num.unwrap_or(plan.num);
    let mut report = Report::new("latency");
    let mut trees = Trees { num, seed: args.seed, loaded: BTreeMap::new(), notes: Vec::new() };
    let metadata = trees.get(Build::Whole, 100.0)?.metadata_bytes();
    let base = |alpha: f64, pct: f64| ReadSpec {
        existing: alpha,
        ..args.workload.spec(KeyDistribution::Uniform, ReadSpec::empty(plan.warmup, plan.reads, args.seed ^ pct as u64))
    };

    // Figs. 13-14: (alpha, pct, variant) -> result.
    let mut fig13: Vec<(f64, f64, &str, PhaseResult)> = Vec::new();
    for name in &plan.fig13 {
        let v = variant(name)?;
        for &pct in &plan.pcts {
            let cache = (metadata as f64 * pct / 100.0) as usize;
            for &alpha in &plan.alphas {
                let tree = trees.get(v.build, pct)?;
                let r = cell(tree, &v, cache, FIG13_14_DEVICE, &base(alpha, pct))?;
                fig13.push((alpha, pct, v.name, r));
            }
        }
    }
    let find = |cells: &[(f64, f64, &str, PhaseResult)], alpha: f64, pct: f64, name: &str| {
        cells.iter().find(|c| c.0 == alpha && c.1 == pct && c.2 == name).map(|c| c.3.clone())
    };
    let us = |r: &PhaseResult| r.ns_per_op / 1000.0;
    let mut long = Table::new(
        "fig13-14",
        "Figs. 13-14: mean us per lookup on an emulated SSD (100 us per missed block), uniform lookups; speedup = Plain's us / the variant's",
        &["alpha", "cache %", "variant", "us/lookup", "I/Os", "speedup vs plain", "I/O ratio plain / variant"],
    );
    for &alpha in &plan.alphas {
        let mut plot = Plot::new(
            &format!("fig13-14-a{alpha}"),
            &format!("us per lookup, emulated SSD, uniform alpha={alpha} (seed 002 Figs. 13-14)"),
            "cache % of filter+index",
            "us per lookup",
        );
        for name in &plan.fig13 {
            let mut pts = Vec::new();
            for &pct in &plan.pcts {
                let Some(r) = find(&fig13, alpha, pct, name) else { continue };
                let plain = find(&fig13, alpha, pct, "plain");
                long.row(vec![
                    Cell::num(alpha, 1),
                    Cell::num(pct, 0),
                    Cell::text(*name),
                    Cell::num(us(&r), 1),
                    Cell::num(r.ios_per_op, 3),
                    Cell::opt(plain.as_ref().map(|p| ratio(p.ns_per_op, r.ns_per_op)), 2),
                    Cell::opt(plain.as_ref().map(|p| ratio(p.ios_per_op, r.ios_per_op)), 2),
                ]);
                pts.push((pct, us(&r)));
            }
            plot.series(name, pts);
        }
        report.plots.push(plot);
    }
    report.tables.push(long);

    // Fig. 16: (device, pct, variant) -> result, uniform empty lookups.
    let mut fig16 = Table::new(
        "fig16",
        "Fig. 16: uniform empty lookups by device: mean us per lookup and speedup over Plain (the seed: 1.4-2x on SSD, PCIe SSD and RAM-disk)",
        &["device", "cache %", "variant", "us/lookup", "I/Os", "speedup vs plain", "I/O ratio plain / variant"],
    );
    for device in &plan.devices {
        for &pct in &plan.fig16_pcts {
            let cache = (metadata as f64 * pct / 100.0) as usize;
            let mut measured = Vec::new();
            for name in &plan.fig16 {
                let v = variant(name)?;
                let tree = trees.get(v.build, pct)?;
                measured.push((*name, cell(tree, &v, cache, *device, &base(0.0, pct))?));
            }
            let plain = measured.iter().find(|m| m.0 == "plain").map(|m| m.1.clone());
            for (name, r) in measured {
                fig16.row(vec![
                    Cell::text(device.name),
                    Cell::num(pct, 0),
                    Cell::text(name),
                    Cell::num(us(&r), 1),
                    Cell::num(r.ios_per_op, 3),
                    Cell::opt(plain.as_ref().map(|p| ratio(p.ns_per_op, r.ns_per_op)), 2),
                    Cell::opt(plain.as_ref().map(|p| ratio(p.ios_per_op, r.ios_per_op)), 2),
                ]);
            }
        }
    }
    report.tables.push(fig16);
    report.notes.append(&mut trees.notes);
    report.note(format!(
        "{}; {} warm-up lookups (the seed's 30K in the full form) + {} measured per cell, each cell from a freshly opened database (cold block cache), one thread",
        args.workload.describe(&[KeyDistribution::Uniform], num),
        plan.warmup,
        plan.reads
    ));
    report.note("cache % = the block cache as a share of the Plain tree's filter + index bytes (memory-pressure's); emulated devices add their cost to every block read that misses the engine's cache, served by the warm OS page cache (ssd sleeps, so a VM's timer slack adds tens of us per read); disk (O_DIRECT) reads this VM's virtual disk, shared with other work");
    report.note("seed 002: Figs. 13-14 show SHaMBa-eq and SHaMBa-prop below RocksDB's latency under memory pressure, with the same trends as its I/O plots (Figs. 6-7), P/F skipping helping for alpha 0 and 1; Fig. 16 a 1.4-2x speedup on an SSD, a PCIe SSD and a RAM-disk. The seed's figures carry no printed numbers besides Fig. 16's range");
    report.note("timings are single-threaded wall clock on a shared 2-core machine: noisy; the I/O column is robust and is memory-pressure's for the same cell shape");
    Ok(report)
}
