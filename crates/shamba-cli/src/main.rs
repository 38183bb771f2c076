//! The `shamba` command: admin, bench, the stress tool and the server.

#![deny(clippy::unwrap_used, clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![warn(clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod admin;
mod serve;
mod stress;

use clap::{Parser, Subcommand};
use shamba_cli::bench;
use std::path::PathBuf;

/// Shamba: an LSM-tree key-value store built around its read path.
#[derive(Debug, Parser)]
#[command(name = "shamba", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Set a key (keys and values starting with 0x are hex).
    Put {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// The keyspace (created if it does not exist; default: the default keyspace).
        #[arg(long, default_value = "default")]
        keyspace: String,
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// Print a key's value (exit code 2 if absent).
    Get {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// The keyspace (default: the default keyspace).
        #[arg(long, default_value = "default")]
        keyspace: String,
        /// The key.
        key: String,
    },
    /// Delete a key.
    Delete {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// The keyspace (default: the default keyspace).
        #[arg(long, default_value = "default")]
        keyspace: String,
        /// The key.
        key: String,
    },
    /// Print key-value pairs in key order.
    Scan {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// The keyspace (default: the default keyspace).
        #[arg(long, default_value = "default")]
        keyspace: String,
        /// First key (inclusive).
        #[arg(long)]
        from: Option<String>,
        /// Last key (exclusive).
        #[arg(long)]
        to: Option<String>,
        /// At most this many pairs.
        #[arg(long)]
        limit: Option<usize>,
        /// Walk backward from the end.
        #[arg(long)]
        reverse: bool,
    },
    /// Show every keyspace's levels (and files: sizes, key ranges, filter sizes) and the
    /// I/O counters.
    Inspect {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// List every file.
        #[arg(long)]
        files: bool,
    },
    /// Flush and merge every table into one sorted run of the deepest level; print the
    /// tables before and after, and the table files left in the directory.
    Compact {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
    },
    /// Write a consistent copy of a database into a new directory (tables hard-linked where
    /// the file system allows), which opens as a database of its own.
    Checkpoint {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
        /// Where the copy goes (must not exist).
        out: PathBuf,
    },
    /// Dump every part of one SST file.
    Sst {
        /// The .sst file.
        file: PathBuf,
        /// Data entries to print.
        #[arg(long, default_value_t = 20)]
        max_entries: usize,
    },
    /// Check every block of every table, key order, levels, the directory and the logs,
    /// without writing (exit 0: sound, 1: damaged, 2: could not check).
    Verify {
        /// Database directory.
        #[arg(long)]
        db: PathBuf,
    },
    /// Load then read a database, db_bench style.
    Bench(bench::BenchArgs),
    /// Random operations from several threads checked against an expected state; with
    /// --crash, kill -9 cycles with a verification after each.
    Stress(stress::StressArgs),
    /// Serve a database over the Redis protocol (RESP2/RESP3) until SIGTERM or SIGINT; with
    /// --node-id, as a node of a replicated group (Raft).
    Serve(serve::ServeArgs),
}

/// Die quietly on a closed pipe (`shamba scan | head`), as Unix tools do, instead of
/// panicking in `println!`. Rust ignores SIGPIPE by default.
#[cfg(unix)]
fn restore_sigpipe() {
    // SAFETY: setting SIGPIPE's disposition to SIG_DFL has no preconditions, and it runs
    // first thing in `main`, before any other thread exists. Exercised by the
    // `output_to_a_closed_pipe_ends_quietly` test.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() {
    let cli = Cli::parse();
    // A server must outlive a client that hangs up mid-reply: only the one-shot commands
    // die on a closed pipe.
    #[cfg(unix)]
    if !matches!(cli.command, Command::Serve(_)) {
        restore_sigpipe();
    }
    let result = match &cli.command {
        Command::Put { db, keyspace, key, value } => admin::put(db, keyspace, key, value),
        Command::Get { db, keyspace, key } => admin::get(db, keyspace, key),
        Command::Delete { db, keyspace, key } => admin::delete(db, keyspace, key),
        Command::Scan { db, keyspace, from, to, limit, reverse } => {
            admin::scan(db, keyspace, from.as_deref(), to.as_deref(), *limit, *reverse)
        }
        Command::Inspect { db, files } => admin::inspect(db, *files),
        Command::Checkpoint { db, out } => admin::checkpoint(db, out),
        Command::Compact { db } => admin::compact(db),
        Command::Sst { file, max_entries } => admin::sst(file, *max_entries),
        Command::Verify { db } => admin::verify(db),
        Command::Bench(args) => bench::run(args),
        Command::Stress(args) => stress::run(args),
        Command::Serve(args) => serve::run(args),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
