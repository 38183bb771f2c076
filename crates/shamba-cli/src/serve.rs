//! `shamba serve`'s flags, turned into the server crate's configuration.

use shamba_server::{ServerConfig, SyncMode};
use std::error::Error;
use std::net::SocketAddr;
use std::path::PathBuf;

/// `shamba serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Database directory (created if missing).
    #[arg(long)]
    db: PathBuf,
    /// Address to listen on (port 0: any free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:6380")]
    bind: SocketAddr,
    /// When acknowledged writes reach the disk: always (each write synced before its
    /// reply), everysec (synced once a second), never (left to the OS).
    #[arg(long, value_enum, default_value_t = SyncFlag::Everysec)]
    sync: SyncFlag,
    /// Block cache size in MiB (default: the engine's).
    #[arg(long)]
    cache_mb: Option<usize>,
    /// Threads serving connections (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Databases SELECT chooses among: 0 is the default keyspace, n the keyspace "db{n}"
    /// (created when first selected).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..))]
    databases: u16,
}

/// `--sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum SyncFlag {
    /// Sync every write before replying.
    Always,
    /// Sync once a second.
    Everysec,
    /// Leave write-back to the OS.
    Never,
}

impl From<SyncFlag> for SyncMode {
    fn from(s: SyncFlag) -> SyncMode {
        match s {
            SyncFlag::Always => SyncMode::Always,
            SyncFlag::Everysec => SyncMode::Everysec,
            SyncFlag::Never => SyncMode::Never,
        }
    }
}

/// Run the server until SIGTERM or SIGINT.
pub fn run(args: &ServeArgs) -> Result<(), Box<dyn Error>> {
    let mut config = ServerConfig::new(&args.db);
    config.bind = args.bind;
    config.sync = args.sync.into();
    config.cache_mb = args.cache_mb;
    config.threads = args.threads;
    config.databases = args.databases;
    Ok(shamba_server::run(&config)?)
}
