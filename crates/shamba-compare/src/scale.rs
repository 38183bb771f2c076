//! Cost at scale: the sustained-load runs and the size sweep, the two opt-in families
//! (`--only sustained`, `--sizes 2M,20M,100M`). Each opens its own fresh databases, so they
//! run after the other families, engine by engine.

use crate::config::{Args, Family, Plan};
use crate::engine::{self, Engine, EngineError, Variant};
use crate::workload::sizes::{SizePoint, SizeSweep};
use crate::workload::sustained::{self, SustainedRun};
use crate::workload::KeySpec;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Key counts of the size sweep when `--only sizes` names no `--sizes`.
pub const DEFAULT_SIZES: [u64; 2] = [2_000_000, 20_000_000];

/// What the two families measured (empty where they did not run).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ScaleRuns {
    /// How they ran, as printed above their tables.
    pub footing: Vec<String>,
    /// Sustained-load runs, engine by engine within each (value size, threads).
    pub sustained: Vec<SustainedRun>,
    /// Size-sweep points, engine by engine within each size.
    pub sizes: Vec<SizePoint>,
    /// Where the plot went.
    pub plot: Option<String>,
}

/// Run the opted-in families.
pub fn run(args: &Args, plan: &Plan, engines: &[Variant], root: &Path) -> Result<ScaleRuns, EngineError> {
    let mut out = ScaleRuns::default();
    if args.opted_in(Family::Sustained) {
        out.footing.push(format!(
            "sustained: {} s of random puts per run on a fresh database, {} B keys from random 40-bit ids, values {:?} \
             B, client threads {:?}; WAL on, sync off; memtable {} KiB, SST {} KiB as above; rates per whole \
             second; a stall second is below {:.0}% of the run's mean",
            args.sustain_secs,
            plan.spec.key_size,
            args.sustain_values,
            args.sustain_threads,
            plan.setup.write_buffer_size / 1024,
            plan.setup.target_file_size / 1024,
            100.0 * sustained::LOW_FRACTION,
        ));
        for &value_size in &args.sustain_values {
            for &threads in &args.sustain_threads {
                for &variant in engines {
                    let spec = KeySpec { n: 0, key_size: plan.spec.key_size, value_size };
                    let dir = root.join(format!("{}-sustained", variant.name()));
                    let _ = std::fs::remove_dir_all(&dir);
                    // Shared with the client threads; dropped, not closed (a halted engine's
                    // stuck writer keeps its share: that engine is left open, and its files
                    // are removed under it).
                    let db: Arc<dyn Engine> = engine::open(variant, &dir, &plan.setup)?.into();
                    let run = sustained::run(&db, &spec, args.sustain_secs, threads, plan.seed);
                    drop(db);
                    let _ = std::fs::remove_dir_all(&dir);
                    let run = run?;
                    // One line per run on stderr as it ends: a later run that hangs or fails
                    // leaves the earlier ones on record.
                    eprintln!("sustained: {}", serde_json::to_string(&run)?);
                    out.sustained.push(run);
                }
            }
        }
    }
    if args.opted_in(Family::Sizes) {
        let sizes = if args.sizes.is_empty() { DEFAULT_SIZES.to_vec() } else { args.sizes.clone() };
        out.footing.push(format!(
            "size sweep: {sizes:?} keys, one size after another, each a fresh random load per engine ({} B keys, {} \
             B values, seed {}), settled, {} lookups per phase (uniform); pressure rows reopen with index+filter in \
             a cache of 10% / 40% of the first engine's filter+index bytes at that size; trees removed when done",
            plan.spec.key_size, plan.spec.value_size, plan.seed, plan.reads
        ));
        let sweep = SizeSweep { setup: &plan.setup, shape: plan.spec, reads: plan.reads, seed: plan.seed };
        for n in sizes {
            for point in sweep.at(n, engines, root)? {
                eprintln!("size point: {}", serde_json::to_string(&point)?);
                out.sizes.push(point);
            }
        }
        if let Some(path) = &args.plot {
            crate::scale_plot::plot(&out.sizes, path)?;
            out.plot = Some(path.display().to_string());
        }
    }
    Ok(out)
}

/// The runs recorded in earlier `--json` outputs (their `scale` objects), joined in the
/// order given, with the plot drawn again at `plot`: separate runs (one engine or one size
/// per process) read as one.
pub fn from_json_files(paths: &[PathBuf], plot: Option<&Path>) -> Result<ScaleRuns, EngineError> {
    let mut out = ScaleRuns::default();
    for path in paths {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut whole: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let runs: ScaleRuns = serde_json::from_value(whole["scale"].take())
            .map_err(|e| format!("{}: no scale runs: {e}", path.display()))?;
        for line in runs.footing {
            if !out.footing.contains(&line) {
                out.footing.push(line);
            }
        }
        out.sustained.extend(runs.sustained);
        out.sizes.extend(runs.sizes);
    }
    if let Some(path) = plot {
        crate::scale_plot::plot(&out.sizes, path)?;
        out.plot = Some(path.display().to_string());
    }
    Ok(out)
}
