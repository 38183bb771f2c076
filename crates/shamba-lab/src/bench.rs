//! `shamba-lab bench`: `shamba bench` (the same flags, load and read loops, from
//! `shamba_cli::bench`) with the lab's knobs on top: an emulated device, the lookup stages
//! timed, filters probed level by level, one digest per table.

use std::error::Error;

use shamba::lab::DeviceModel;
use shamba::{Options, ReadOptions};
use shamba_cli::bench::{self, BenchArgs, Tuning};

/// Arguments of `shamba-lab bench`.
#[derive(Debug, clap::Args)]
pub struct LabBenchArgs {
    /// Everything `shamba bench` takes.
    #[command(flatten)]
    pub bench: BenchArgs,
    /// The lab's knobs.
    #[command(flatten)]
    pub knobs: LabKnobs,
}

/// The lab's knobs on a benchmark: what `shamba bench` leaves out because it reaches
/// `Options::lab` or `ReadOptions::lab`.
#[derive(Debug, Clone, clap::Args)]
pub struct LabKnobs {
    /// Emulated device cost per block read: none, nvm, pcie, ssd, or nanoseconds.
    #[arg(long, default_value = "none")]
    pub device: String,
    /// Time each lookup stage (hashing, memtables, filters, index, data); costs a few clock
    /// reads per lookup.
    #[arg(long)]
    pub profile: bool,
    /// Probe level by level without prefetching the candidates' filters first.
    #[arg(long)]
    pub no_prefetch: bool,
    /// Recompute the key digest per table (the unshared baseline).
    #[arg(long)]
    pub no_share_hash: bool,
}

impl Default for LabKnobs {
    /// The engine's own behaviour: no device cost, no stage clocks, prefetch, one digest.
    fn default() -> LabKnobs {
        LabKnobs { device: "none".to_string(), profile: false, no_prefetch: false, no_share_hash: false }
    }
}

impl Tuning for LabKnobs {
    fn options(&self, options: &mut Options) -> Result<(), Box<dyn Error>> {
        options.lab.prefetch_filters = !self.no_prefetch;
        options.lab.device =
            DeviceModel::parse(&self.device).ok_or_else(|| format!("unknown device {:?}", self.device))?;
        Ok(())
    }

    fn read_options(&self, read_options: &mut ReadOptions) {
        read_options.lab.share_hash = !self.no_share_hash;
        read_options.lab.profile = self.profile;
    }

    fn config(&self, config: &mut serde_json::Map<String, serde_json::Value>) {
        config.insert("device".into(), self.device.clone().into());
        config.insert("share_hash".into(), (!self.no_share_hash).into());
        config.insert("prefetch".into(), (!self.no_prefetch).into());
        config.insert("profile".into(), self.profile.into());
    }
}

/// Run the benchmark with the lab's knobs and print its results.
pub fn run(args: &LabBenchArgs) -> Result<(), Box<dyn Error>> {
    bench::run_tuned(&args.bench, &args.knobs)
}
