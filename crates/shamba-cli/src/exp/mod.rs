//! `shamba exp NAME`: the seeds' experiments, our figure beside the paper's.

use std::error::Error;

/// Arguments of `shamba exp`.
#[derive(Debug, clap::Args)]
pub struct ExpArgs {
    /// Experiment name.
    pub name: String,
    /// A short run (a few minutes at most).
    #[arg(long)]
    pub quick: bool,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Where CSV and SVG files go.
    #[arg(long, default_value = "results")]
    pub out: std::path::PathBuf,
}

/// Run the named experiment.
pub fn run(args: &ExpArgs) -> Result<(), Box<dyn Error>> {
    Err(format!("unknown experiment {:?}", args.name).into())
}
