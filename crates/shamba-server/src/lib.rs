//! `shamba serve`: a Redis-protocol server over the engine's public API (RESP2, RESP3
//! after `HELLO 3`), for clients nobody here wrote.
//!
//! `resp` reads requests, `reply` writes answers, `commands` is the command table,
//! `session` the state commands run against, `store` the engine with striped key locks
//! and the chosen durability (`durability`), `databases` SELECT's numbered databases (one
//! keyspace each), `connection` one client's loop; this file
//! starts the runtime, accepts clients and stops cleanly on SIGTERM or SIGINT.

mod commands;
mod connection;
mod cursor;
mod databases;
mod durability;
mod glob;
mod reply;
mod resp;
mod session;
mod store;

use durability::SyncMode;
use resp::Limits;
use session::{Server, ServerCounters};
use shamba::{Db, Options};
use std::error::Error;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::Store;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;
use tokio::task::JoinSet;

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
    #[arg(long, value_enum, default_value_t = SyncMode::Everysec)]
    sync: SyncMode,
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

/// Run the server until SIGTERM or SIGINT.
pub fn run(args: &ServeArgs) -> Result<(), Box<dyn Error>> {
    let mut opts = Options::default();
    if let Some(mb) = args.cache_mb {
        opts.cache_capacity = mb << 20;
    }
    let limits = Limits::for_engine(opts.max_key_size, opts.max_value_size);
    let db = Db::open(&args.db, opts)?;
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.threads {
        rt.worker_threads(n.max(1));
    }
    let rt = rt.enable_io().enable_time().build()?;
    rt.block_on(serve(args, db, limits))
}

async fn serve(args: &ServeArgs, db: Db, limits: Limits) -> Result<(), Box<dyn Error>> {
    let listener = TcpListener::bind(args.bind).await?;
    let bind = listener.local_addr()?;
    let server = Arc::new(Server {
        store: Store::new(db, args.sync, usize::from(args.databases))?,
        cursors: cursor::CursorTable::new(),
        limits,
        bind,
        started: Instant::now(),
        counters: ServerCounters::default(),
    });
    // Tests and scripts read this line to learn the port.
    println!("shamba serve: listening on {bind} (db {}, sync {})", args.db.display(), args.sync.name());
    std::io::stdout().flush()?;

    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let syncer = (args.sync == SyncMode::Everysec).then(|| tokio::spawn(sync_every_second(server.clone())));
    let mut clients = JoinSet::new();
    let mut next_id = 1u64;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    ServerCounters::add(&server.counters.connections_received, 1);
                    clients.spawn(connection::serve(server.clone(), stream, next_id, stop_rx.clone()));
                    next_id += 1;
                }
                // Out of descriptors and the like: the listener stays; wait a little.
                Err(e) => {
                    eprintln!("shamba serve: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            Some(_) = clients.join_next(), if !clients.is_empty() => {}
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    // Stop accepting, let every connection finish the requests it has read, then flush.
    drop(listener);
    eprintln!("shamba serve: stopping ({} connections open)", clients.len());
    let _ = stop_tx.send(true);
    while clients.join_next().await.is_some() {}
    if let Some(s) = syncer {
        s.abort();
        let _ = s.await;
    }
    let db = server.store.db().clone();
    tokio::task::spawn_blocking(move || -> shamba::Result<()> {
        db.flush()?;
        db.close()
    })
    .await??;
    eprintln!("shamba serve: flushed and closed");
    Ok(())
}

/// `--sync everysec`: once a second, if anything was written since the last sync, make it
/// durable (see `durability`).
async fn sync_every_second(server: Arc<Server>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if !server.store.tracker().take_dirty() {
            continue;
        }
        let s = server.clone();
        match tokio::task::spawn_blocking(move || s.store.sync_now()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("shamba serve: WAL sync failed: {e}"),
            Err(e) => eprintln!("shamba serve: WAL sync task failed: {e}"),
        }
    }
}
