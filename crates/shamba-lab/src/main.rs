//! `shamba-lab`: the seeds' experiments and the lab's bench, on the engine built with its
//! `lab` feature (device emulation, stage clocks, lookup variants, per-table counts).
//!
//! The experiments live in one folder per family, named after what the seed document
//! studies: `hash_sharing/` (seed 000, and 001's API), `modular/` (seed 002, SHaMBa's modular
//! filters under memory pressure), `elastic/` (seed 003), `ribbon/` (seed 004), and
//! `read_path/` (the engine's own lookups: headline, prefetch, multi-get). `support/` holds
//! what they share: the loaded trees and their store, the lookups' workload and measurement,
//! the reports, the metered allocator. [`registry::EXPERIMENTS`] lists every experiment once.

#![deny(clippy::unwrap_used, clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![warn(clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod args;
mod bench;
mod elastic;
mod hash_sharing;
mod modular;
mod read_path;
mod registry;
mod ribbon;
mod support;

use std::error::Error;

use clap::{Parser, Subcommand};

/// The lab binary's allocator: the system's, metered (`exp ribbon-hybrid` reads a filter
/// build's peak heap bytes from it). The `shamba` binary runs on the system allocator.
#[global_allocator]
static ALLOCATOR: support::alloc_meter::Meter = support::alloc_meter::Meter;

/// The Shamba lab: the seeds' experiments and the lab's bench.
#[derive(Debug, Parser)]
#[command(name = "shamba-lab", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one experiment: our figure beside the seed's (text or --json on stdout, CSV and
    /// SVG under --out).
    Exp(args::ExpArgs),
    /// List the experiments: name, family, the seed's figure, what each measures.
    List {
        /// Names only, one a line.
        #[arg(long)]
        names: bool,
    },
    /// `shamba bench` with the lab's knobs: an emulated device, lookup stages timed,
    /// no filter prefetch, one digest per table.
    Bench(bench::LabBenchArgs),
}

/// Run the experiment `args` names and emit its report.
fn exp(args: &args::ExpArgs) -> Result<(), Box<dyn Error>> {
    let experiment = registry::find(&args.name).ok_or_else(|| format!("unknown experiment {:?}", args.name))?;
    if let Some(dir) = &args.trees {
        support::tree_store::keep_in(dir.clone());
    }
    (experiment.run)(args)?.emit(args)
}

/// Print the experiments, as a table or their names alone.
fn list(names: bool) {
    for e in registry::EXPERIMENTS {
        if names {
            println!("{}", e.name);
        } else {
            println!("{:<17} {:<13} {:<22} {}", e.name, e.family, e.source, e.about);
        }
    }
}

fn main() {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Exp(args) => exp(args),
        Command::List { names } => {
            list(*names);
            Ok(())
        }
        Command::Bench(args) => bench::run(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
