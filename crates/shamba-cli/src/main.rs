//! The `shamba` command.

mod exp;

use clap::{Parser, Subcommand};

/// Shamba: an LSM-tree key-value store built around its read path.
#[derive(Debug, Parser)]
#[command(name = "shamba", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one of the seeds' experiments.
    Exp(exp::ExpArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Exp(args) => exp::run(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
