//! # shamba-server
//!
//! A Redis-protocol server over the shamba engine's public API (RESP2, RESP3 after
//! `HELLO 3`), for clients nobody here wrote. The `shamba serve` command is [`run`] with a
//! [`ServerConfig`] made from its flags.
//!
//! The layers, bottom up, each usable on its own (a replication layer builds on the store
//! and the command execution):
//!
//! - [`Store`]: the engine (one [`shamba::Db`]) with SELECT's numbered databases (database 0
//!   the default keyspace, database n the keyspace `db{n}`), striped key locks that make
//!   read-modify-write commands atomic, and the chosen durability ([`SyncMode`]).
//!   [`Selected`] is one database as a command sees it.
//! - [`Server`]: the state every connection shares (the store, SCAN's cursors, the request
//!   limits, INFO's counters); [`Server::execute`] runs one request for a [`Session`] (one
//!   client's protocol, name and selected database) and answers with a [`Reply`]. The
//!   command table ([`command`]) is the one `COMMAND` reports.
//! - [`parse_request`] reads requests (RESP arrays of bulk strings, or inline commands)
//!   within [`Limits`]; [`Reply::encode`] writes answers in a session's [`Protocol`].
//! - [`Listener`]: accepts clients on a tokio runtime, one task each; a connection parses
//!   every whole request it has read and runs them on its own task while none needs to
//!   wait (reads served from memory, writes that meet no stall and need no sync: `no_wait`),
//!   a pipeline's runs of plain SET/MSET as one write and of GET as one `multi_get`
//!   (`pipeline`); from the first request that would wait, the rest run together on the
//!   blocking pool. The replies go out in order. It stops cleanly when told to: no new
//!   clients, the requests already read answered, the database flushed and closed.
//! - The connection layer: a password ([`ServerConfig::requirepass`], AUTH, HELLO's AUTH)
//!   and protected mode; TLS through rustls on a second port ([`TlsConfig`]); `maxclients`,
//!   request size limits and an idle timeout; a registry of the clients (CLIENT LIST, KILL,
//!   ...); pub/sub in memory. Its settings by Redis's names, from a config file or flags:
//!   [`Settings`].
//!
//! - Cluster mode ([`ServerConfig::cluster`], `shamba serve --node-id`): the server is a
//!   node of an openraft group whose storage is `shamba-raft`'s, in the node's one
//!   database. The [`Store`] is replicated (each command's writes one proposed command),
//!   reads wait for a read barrier on the leader, and a follower forwards the requests that
//!   touch keys to the leader over the nodes' tarpc service; [`Cluster`] is the node.
//!
//! Inside: `auth` (the password, protected mode), `clients` (the registry of connections),
//! `cluster` (the node, its RPCs and openraft's network over them), `commands`
//! (the table and one file per group of handlers), `connection` (one client's loop),
//! `cursor` (SCAN's cursors), `databases`, `durability`, `glob` (KEYS and SCAN MATCH
//! patterns), `no_wait` (what may run on a connection's task), `pipeline` (runs of like
//! requests executed together), `pubsub` (channels, patterns, delivery), `reply`, `resp`,
//! `session`, `settings` (Redis-style names and config files), `store`, `tls`.
//!
//! ```no_run
//! use shamba_server::{Listener, ServerConfig, SyncMode};
//!
//! # async fn example() -> Result<(), shamba_server::Error> {
//! let mut config = ServerConfig::new("/tmp/my-db");
//! config.bind = "127.0.0.1:0".parse().expect("an address");
//! config.sync = SyncMode::Always;
//! let listener = Listener::bind(&config).await?;
//! println!("listening on {}", listener.local_addr());
//! // Serve until ctrl-c, then flush and close the database.
//! listener.serve(async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

#![warn(missing_docs)]
#![deny(unreachable_pub)]
#![warn(clippy::missing_errors_doc)]
#![deny(clippy::unwrap_used, clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]
#![warn(clippy::expect_used)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod accept_failures;
mod auth;
mod blocking;
mod clients;
mod cluster;
mod commands;
mod config_file;
mod connection;
mod cursor;
mod database_map;
mod databases;
mod descriptor_limit;
mod durability;
#[doc(hidden)]
pub mod fuzz;
mod glob;
mod input_probe;
mod key_entry;
mod metrics;
mod no_wait;
mod notify;
mod pipeline;
mod pubsub;
mod reply;
mod resp;
mod runtime_settings;
mod scripting;
mod session;
mod store;
mod tls;
mod types;

pub use cluster::{Cluster, ClusterConfig, ClusterError};
pub use commands::{lookup as command, Spec as CommandSpec};
pub use config_file::{Settings, SettingsError};
pub use durability::SyncMode;
pub use reply::{Protocol, Reply};
pub use resp::{parse_request, Limits, ProtocolError};
pub use session::{Server, Session};
pub use store::{Batch, KeyLocks, Selected, Store, WriteError};
pub use tls::{TlsConfig, TlsError};

use session::ServerCounters;
use shamba::{Db, Options};
use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

/// What a server serves and how: `shamba serve`'s flags. Made by [`ServerConfig::new`],
/// then adjusted field by field (new settings may be added).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Database directory (created if missing).
    pub db: PathBuf,
    /// Address to listen on (port 0: any free port; [`Listener::local_addr`] says which).
    pub bind: SocketAddr,
    /// When acknowledged writes reach the disk.
    pub sync: SyncMode,
    /// Block cache size in MiB (`None`: the engine's default).
    pub cache_mb: Option<usize>,
    /// Added to the compaction threads' nice value, 0-19 (`Options::background_nice`):
    /// on a machine whose cores the connections keep busy, merges yield to them.
    pub background_nice: u8,
    /// Threads serving connections, for [`run`]'s runtime (`None`: one per core).
    pub threads: Option<usize>,
    /// Databases SELECT chooses among (at least 1): 0 is the default keyspace, n the
    /// keyspace `db{n}` (created when first selected).
    pub databases: u16,
    /// Cluster mode: this server is a node of a Raft group ([`ClusterConfig`]); its
    /// storage (log, vote, state machine, snapshots) is in `db`.
    pub cluster: Option<ClusterConfig>,
    /// The default user's password (`requirepass`): clients must AUTH before other
    /// commands. `None`: no password.
    pub requirepass: Option<Vec<u8>>,
    /// Protected mode: with no password and `bind` on every interface, clients from other
    /// hosts are refused with Redis's `-DENIED` message.
    pub protected_mode: bool,
    /// Most clients connected at once (`maxclients`); one more is told
    /// `-ERR max number of clients reached` and closed.
    pub maxclients: usize,
    /// Close a client idle this many seconds (`timeout`; 0: never).
    pub timeout: u64,
    /// TLS clients on a second port ([`TlsConfig`]), beside the plain one.
    pub tls: Option<TlsConfig>,
    /// Longest bulk string a request may hold (`proto-max-bulk-len`; `None`: the engine's
    /// largest key or value, at most 512 MB).
    pub proto_max_bulk_len: Option<usize>,
    /// Most bytes of one unfinished request (`client-query-buffer-limit`; `None`: 1 GiB).
    pub client_query_buffer_limit: Option<usize>,
    /// Where to serve Prometheus metrics on `GET /metrics` (`None`: nowhere).
    pub metrics_bind: Option<SocketAddr>,
    /// Whether DEBUG answers (Redis's `enable-debug-command`; off by default).
    pub enable_debug_command: bool,
    /// Keyspace notifications' classes (`notify-keyspace-events`, as Redis numbers its
    /// letters; 0: none, the default). Set from a config file's text.
    pub(crate) notify_keyspace_events: u32,
}

impl ServerConfig {
    /// The defaults of `shamba serve` for the database in `db`: `127.0.0.1:6380`,
    /// [`SyncMode::Everysec`], the engine's cache, one thread per core, 16 databases.
    pub fn new(db: impl Into<PathBuf>) -> ServerConfig {
        ServerConfig {
            db: db.into(),
            bind: SocketAddr::from(([127, 0, 0, 1], 6380)),
            sync: SyncMode::Everysec,
            cache_mb: None,
            background_nice: 0,
            threads: None,
            databases: 16,
            cluster: None,
            requirepass: None,
            protected_mode: true,
            maxclients: 10_000,
            timeout: 0,
            tls: None,
            proto_max_bulk_len: None,
            client_query_buffer_limit: None,
            metrics_bind: None,
            enable_debug_command: false,
            notify_keyspace_events: 0,
        }
    }

    /// The request limits: the engine's, narrowed by `proto-max-bulk-len` and
    /// `client-query-buffer-limit`.
    fn limits(&self, opts: &Options) -> Limits {
        let mut limits = Limits::for_engine(opts.max_key_size, opts.max_value_size);
        if let Some(b) = self.proto_max_bulk_len {
            limits.max_bulk = limits.max_bulk.min(b.max(1));
        }
        if let Some(q) = self.client_query_buffer_limit {
            limits.max_query = q.max(1);
        }
        limits
    }

    /// The engine's options this configuration opens the database with.
    fn engine_options(&self) -> Options {
        let mut opts = Options::default();
        if let Some(mb) = self.cache_mb {
            opts.cache_capacity = mb << 20;
        }
        opts.background_nice = self.background_nice;
        opts
    }
}

/// Why a server could not start, or did not stop cleanly.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The engine failed: opening the database, creating a database's keyspace, or the
    /// final flush and close.
    #[error(transparent)]
    Engine(#[from] shamba::Error),
    /// The system failed: building the runtime, binding the address, installing the
    /// signal handlers, writing the banner.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Cluster mode could not start: the Raft configuration, or initializing the group.
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// TLS could not be set up: a certificate or key file missing or unusable.
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// `shamba serve`: open the database, serve it on a runtime of its own until SIGTERM or
/// SIGINT, then flush and close it. Prints `shamba serve: listening on ADDR (db DIR, sync
/// MODE)` on standard output once clients can connect (scripts read the port from it), and
/// what it is doing when it stops on standard error.
///
/// # Errors
///
/// [`Error::Io`] when the runtime, the listening socket or the signal handlers cannot be
/// had; [`Error::Engine`] as [`Listener::bind`] and [`Listener::serve`].
pub fn run(config: &ServerConfig) -> Result<(), Error> {
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = config.threads {
        rt.worker_threads(n.max(1));
    }
    let rt = rt.enable_io().enable_time().build()?;
    rt.block_on(async {
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let listener = Listener::bind(config).await?;
        // Tests and scripts read this line to learn the port.
        let node = match listener.server.store.cluster() {
            Some(c) => format!(", node {}, raft {}", c.id(), c.raft_addr()),
            None => String::new(),
        };
        let tls = listener.tls_addr().map(|a| format!(", tls on {a}")).unwrap_or_default();
        println!(
            "shamba serve: listening on {} (db {}, sync {}{node}{tls})",
            listener.local_addr(),
            config.db.display(),
            config.sync.name()
        );
        std::io::stdout().flush()?;
        listener
            .serve(async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            })
            .await
    })
}

/// A server with its database open and its address bound, not yet accepting clients.
pub struct Listener {
    listener: TcpListener,
    /// The TLS port's listener and the acceptor its connections are handshaken with.
    tls: Option<(TcpListener, TlsAcceptor)>,
    server: Arc<Server>,
    /// `--metrics-bind`'s socket, served beside the clients'.
    metrics: Option<TcpListener>,
}

/// Longest a TLS handshake may take before the connection is dropped.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

impl Listener {
    /// Open `config.db` (on the blocking pool) and bind `config.bind`. Must run on a tokio
    /// runtime with I/O and time enabled. `config.threads` is [`run`]'s to use: a listener
    /// runs on the runtime it is given.
    ///
    /// # Errors
    ///
    /// [`Error::Engine`] when the database does not open (locked by another process,
    /// corrupt, bad options) or a database's keyspace does not; [`Error::Io`] when an
    /// address cannot be bound; [`Error::Tls`] when the TLS files are unusable.
    pub async fn bind(config: &ServerConfig) -> Result<Listener, Error> {
        let opts = config.engine_options();
        let limits = config.limits(&opts);
        // Unusable TLS files fail before the database is opened.
        let acceptor = config.tls.as_ref().map(tls::acceptor).transpose()?;
        let dir = config.db.clone();
        let databases = usize::from(config.databases);
        let (store, rpc) = match &config.cluster {
            None => {
                // Expired collections are reclaimed by compaction (see `types`).
                let filters = Arc::new(types::CollectionFilters::default());
                let mut opts = opts;
                filters.install(&mut opts, databases);
                let db =
                    tokio::task::spawn_blocking(move || Db::open(dir, opts)).await.map_err(std::io::Error::other)??;
                filters.attach(&db);
                let store = Store::new(db, config.sync, databases);
                if store.is_err() {
                    filters.detach();
                }
                (store?.with_filters(filters), None)
            }
            Some(cc) => {
                let (max_key, max_value) = (opts.max_key_size, opts.max_value_size);
                let storage_opts = shamba_raft::StoreOptions { db: opts, ..shamba_raft::StoreOptions::default() };
                let storage = tokio::task::spawn_blocking(move || shamba_raft::Store::open(&dir, storage_opts))
                    .await
                    .map_err(std::io::Error::other)??;
                let (node, rpc) = Cluster::start(cc, storage.log_store(), storage.state_machine()).await?;
                let node = Arc::new(node);
                let store = Store::replicated(storage.db().clone(), node.clone(), databases, max_key, max_value)?;
                (store, Some((node, rpc, cc.init.clone())))
            }
        };
        let listener = TcpListener::bind(config.bind).await?;
        let bind = listener.local_addr()?;
        let tls = match (&config.tls, acceptor) {
            (Some(t), Some(acceptor)) => Some((TcpListener::bind(t.bind).await?, acceptor)),
            _ => None,
        };
        let auth = auth::Auth::new(config.requirepass.clone(), config.protected_mode);
        let metrics = match config.metrics_bind {
            Some(addr) => Some(TcpListener::bind(addr).await?),
            None => None,
        };
        let fitted = descriptor_limit::fit_to_process(config.maxclients);
        if let Some(why) = &fitted.lowered {
            eprintln!("shamba serve: {why}");
        }
        let server = Arc::new(Server {
            store,
            cursors: cursor::CursorTable::new(),
            limits,
            bind,
            started: Instant::now(),
            counters: ServerCounters::default(),
            conns: clients::Connections::new(auth, fitted.maxclients, config.timeout),
            settings: runtime_settings::RuntimeSettings::default(),
            waiters: crate::blocking::Waiters::default(),
            scripts: crate::scripting::Scripts::default(),
            shutdown: tokio::sync::Notify::new(),
        });
        server.settings.debug_command.store(config.enable_debug_command, std::sync::atomic::Ordering::Relaxed);
        server.conns.pubsub.events.set_flags(config.notify_keyspace_events);
        if let Some((node, rpc, init)) = rpc {
            node.serve_rpc(rpc, Arc::downgrade(&server));
            if !init.is_empty() {
                node.initialize(&init).await?;
            }
        }
        Ok(Listener { listener, tls, server, metrics })
    }

    /// The address TLS clients connect to, when TLS is on.
    pub fn tls_addr(&self) -> Option<SocketAddr> {
        self.tls.as_ref().and_then(|(l, _)| l.local_addr().ok())
    }

    /// The address `GET /metrics` is served on, when `metrics_bind` was set.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().and_then(|m| m.local_addr().ok())
    }

    /// The address clients connect to (the port chosen when the configuration asked for
    /// port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.server.bind
    }

    /// The state the connections will share: its [`Store`] and [`Server::execute`].
    pub fn server(&self) -> &Arc<Server> {
        &self.server
    }

    /// Accept clients until `shutdown` completes or a client sends SHUTDOWN; then stop accepting, let every
    /// connection finish the requests it has read, and flush and close the database.
    /// With [`SyncMode::Everysec`], syncs the WAL once a second meanwhile when anything was
    /// written. Failures that do not stop the server (an accept, a background sync) are
    /// reported on standard error.
    ///
    /// # Errors
    ///
    /// [`Error::Engine`] when the final flush or close fails.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) -> Result<(), Error> {
        let Listener { listener, tls, server, metrics } = self;
        let scraper = metrics.map(|m| tokio::spawn(metrics::serve(m, server.clone())));
        let (stop_tx, stop_rx) = watch::channel(false);
        let syncer =
            (server.store.sync_mode() == SyncMode::Everysec).then(|| tokio::spawn(sync_every_second(server.clone())));
        let expiring = tokio::spawn(notify::expiring::run(server.clone()));
        let mut clients = JoinSet::new();
        let mut failures = accept_failures::AcceptFailures::default();
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, addr)) => {
                        ServerCounters::add(&server.counters.connections_received, 1);
                        let _ = stream.set_nodelay(true);
                        let peer = peer_of(&stream, addr, server.bind);
                        clients.spawn(connection::serve(server.clone(), stream, peer, stop_rx.clone()));
                    }
                    // Out of descriptors and the like: the listener stays; wait a little.
                    Err(e) => {
                        if let Some(line) = failures.failed(&e, clients.len(), Instant::now()) {
                            eprintln!("shamba serve: {line}");
                        }
                        tokio::time::sleep(accept_failures::RETRY_AFTER).await;
                    }
                },
                accepted = accept_on(&tls) => {
                    match (accepted, &tls) {
                        (Ok((stream, addr)), Some((l, acceptor))) => {
                            ServerCounters::add(&server.counters.connections_received, 1);
                            let _ = stream.set_nodelay(true);
                            let peer = peer_of(&stream, addr, l.local_addr().unwrap_or(server.bind));
                            let (server, acceptor, stop) = (server.clone(), acceptor.clone(), stop_rx.clone());
                            clients.spawn(async move {
                                match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                                    Ok(Ok(stream)) => connection::serve(server, stream, peer, stop).await,
                                    Ok(Err(e)) => eprintln!("shamba serve: TLS handshake with {addr} failed: {e}"),
                                    Err(_) => eprintln!("shamba serve: TLS handshake with {addr} timed out"),
                                }
                            });
                        }
                        (Err(e), _) => {
                            if let Some(line) = failures.failed(&e, clients.len(), Instant::now()) {
                                eprintln!("shamba serve: {line}");
                            }
                            tokio::time::sleep(accept_failures::RETRY_AFTER).await;
                        }
                        (Ok(_), None) => {}
                    }
                },
                Some(_) = clients.join_next(), if !clients.is_empty() => {}
                () = &mut shutdown => break,
                () = server.shutdown.notified() => break,
            }
        }
        // Stop accepting, let every connection finish the requests it has read, then flush.
        drop(listener);
        drop(tls);
        eprintln!("shamba serve: stopping ({} connections open)", clients.len());
        let _ = stop_tx.send(true);
        server.waiters.close();
        while clients.join_next().await.is_some() {}
        for task in syncer.into_iter().chain(scraper).chain([expiring]) {
            task.abort();
            let _ = task.await;
        }
        if let Some(node) = server.store.cluster() {
            node.shutdown().await;
        }
        let db = server.store.db().clone();
        tokio::task::spawn_blocking(move || -> shamba::Result<()> {
            db.flush()?;
            db.close()
        })
        .await
        .map_err(std::io::Error::other)??;
        eprintln!("shamba serve: flushed and closed");
        Ok(())
    }
}

/// The next client on the TLS port; never, without TLS.
async fn accept_on(tls: &Option<(TcpListener, TlsAcceptor)>) -> std::io::Result<(tokio::net::TcpStream, SocketAddr)> {
    match tls {
        Some((l, _)) => l.accept().await,
        None => std::future::pending().await,
    }
}

/// Where a connection comes from and arrives.
fn peer_of(stream: &tokio::net::TcpStream, addr: SocketAddr, listening: SocketAddr) -> connection::Peer {
    use std::os::fd::AsRawFd;
    let local = stream.local_addr().unwrap_or(listening);
    connection::Peer { addr, local, listening, fd: i64::from(stream.as_raw_fd()) }
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
