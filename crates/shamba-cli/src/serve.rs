//! `shamba serve`'s flags, turned into the server crate's configuration.

use shamba_server::{ClusterConfig, ServerConfig, Settings, SyncMode};
use std::error::Error;
use std::net::SocketAddr;
use std::path::PathBuf;

/// `shamba serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Database directory (created if missing).
    #[arg(long)]
    db: PathBuf,
    /// A Redis-style config file of `name value` lines for the settings below (port,
    /// bind, requirepass, protected-mode, maxclients, timeout, databases, tls-port,
    /// tls-cert-file, tls-key-file, tls-ca-cert-file, tls-auth-clients, proto-max-bulk-len,
    /// client-query-buffer-limit); flags given here win over its lines. An unknown name is
    /// an error naming the line.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to listen on (port 0: any free port; the address is printed). Default
    /// 127.0.0.1:6380.
    #[arg(long)]
    bind: Option<SocketAddr>,
    /// The default user's password: clients must AUTH (or HELLO ... AUTH default PASSWORD)
    /// before other commands.
    #[arg(long, value_name = "PASSWORD")]
    requirepass: Option<String>,
    /// Protected mode: with no password and --bind on every interface (0.0.0.0), clients
    /// from other hosts are refused. Default yes.
    #[arg(long, value_name = "yes|no")]
    protected_mode: Option<String>,
    /// Most clients connected at once; one more is refused. Default 10000.
    #[arg(long, value_name = "N")]
    maxclients: Option<u64>,
    /// Close a client idle this many seconds (0: never, the default; subscribers never).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// Also serve TLS clients on this port (of --bind's address); needs --tls-cert-file
    /// and --tls-key-file.
    #[arg(long, value_name = "PORT")]
    tls_port: Option<u16>,
    /// The server's certificate chain, PEM.
    #[arg(long, value_name = "FILE")]
    tls_cert_file: Option<PathBuf>,
    /// The server's private key, PEM.
    #[arg(long, value_name = "FILE")]
    tls_key_file: Option<PathBuf>,
    /// CA certificates, PEM: TLS clients must present a certificate they signed.
    #[arg(long, value_name = "FILE")]
    tls_ca_cert_file: Option<PathBuf>,
    /// Longest bulk string (key or value) a request may hold, in bytes or with a unit
    /// (512mb). Default: the engine's largest key or value, at most 512mb.
    #[arg(long, value_name = "SIZE")]
    proto_max_bulk_len: Option<String>,
    /// Most bytes of one unfinished request (default 1gb).
    #[arg(long, value_name = "SIZE")]
    client_query_buffer_limit: Option<String>,
    /// When acknowledged writes reach the disk: always (each write synced before its
    /// reply), everysec (synced once a second), never (left to the OS). Not used in
    /// cluster mode, where a write is acknowledged once its log entry is synced on a
    /// majority of the nodes.
    #[arg(long, value_enum, default_value_t = SyncFlag::Everysec)]
    sync: SyncFlag,
    /// Block cache size in MiB (default: the engine's).
    #[arg(long)]
    cache_mb: Option<usize>,
    /// Added to the engine's compaction threads' nice value, 0-19 (default 0): merges then
    /// yield to the threads serving connections.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=19))]
    background_nice: u8,
    /// Threads serving connections (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Databases SELECT chooses among: 0 is the default keyspace, n the keyspace "db{n}"
    /// (created when first selected).
    /// Default 16.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    databases: Option<u16>,
    /// Cluster mode: run as node ID of a Raft group (ids are unique in the group and never
    /// reused). The Raft log, vote, state machine and snapshots are kept in --db; writes
    /// are replicated, reads are linearizable, and requests sent to a follower are
    /// forwarded to the leader.
    #[arg(long, value_name = "ID", requires = "raft_bind")]
    node_id: Option<u64>,
    /// Cluster mode: the address the node listens on for its peers (their Raft RPCs, and
    /// the requests followers forward). The group knows each node by the address --init or
    /// CLUSTER ADDNODE gave for it.
    #[arg(long, value_name = "ADDR", requires = "node_id")]
    raft_bind: Option<SocketAddr>,
    /// Cluster mode: initialize a new group whose voters are these nodes (this one among
    /// them), as ID=RAFT-ADDR, comma-separated. Give it to one node of a new group; a node
    /// whose group is already initialized ignores it, so a restart may keep it.
    #[arg(long, value_name = "ID=ADDR,...", value_delimiter = ',', value_parser = parse_member, requires = "node_id")]
    init: Vec<(u64, String)>,
    /// Cluster mode: milliseconds between the leader's heartbeats; a follower that hears
    /// none for 5 to 10 of them starts an election.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(10..))]
    heartbeat_ms: u64,
    /// Serve Prometheus metrics (requests and latency by command, bytes, connections, the
    /// engine's block reads, filters, compactions and stalls) on GET /metrics at ADDR.
    #[arg(long, value_name = "ADDR")]
    metrics_bind: Option<SocketAddr>,
    /// Answer DEBUG (SLEEP, RELOAD, OBJECT, ...), as Redis's enable-debug-command: for
    /// test harnesses.
    #[arg(long)]
    enable_debug_command: bool,
}

/// The settings given as flags, by their config-file names, applied after the file's.
fn flag_settings(args: &ServeArgs) -> Vec<(&'static str, String)> {
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let mut out = Vec::new();
    if let Some(b) = args.bind {
        out.push(("bind", b.ip().to_string()));
        out.push(("port", b.port().to_string()));
    }
    let given = [
        ("requirepass", args.requirepass.clone()),
        ("protected-mode", args.protected_mode.clone()),
        ("maxclients", args.maxclients.map(|n| n.to_string())),
        ("timeout", args.timeout.map(|n| n.to_string())),
        ("databases", args.databases.map(|n| n.to_string())),
        ("tls-port", args.tls_port.map(|n| n.to_string())),
        ("tls-cert-file", path(&args.tls_cert_file)),
        ("tls-key-file", path(&args.tls_key_file)),
        ("tls-ca-cert-file", path(&args.tls_ca_cert_file)),
        ("proto-max-bulk-len", args.proto_max_bulk_len.clone()),
        ("client-query-buffer-limit", args.client_query_buffer_limit.clone()),
    ];
    out.extend(given.into_iter().filter_map(|(name, v)| v.map(|v| (name, v))));
    out
}

/// One `--init` member: `ID=ADDR`.
fn parse_member(s: &str) -> Result<(u64, String), String> {
    let (id, addr) = s.split_once('=').ok_or_else(|| format!("{s:?} is not ID=ADDR"))?;
    let id = id.parse().map_err(|_| format!("{id:?} is not a node id"))?;
    if addr.is_empty() {
        return Err(format!("no address for node {id}"));
    }
    Ok((id, addr.to_string()))
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
    config.sync = args.sync.into();
    config.cache_mb = args.cache_mb;
    config.background_nice = args.background_nice;
    config.threads = args.threads;
    let mut settings = Settings::new();
    if let Some(file) = &args.config {
        settings.read_file(file)?;
    }
    for (name, value) in flag_settings(args) {
        settings.set(name, value.as_bytes())?;
    }
    settings.apply(&mut config)?;
    config.metrics_bind = args.metrics_bind;
    config.enable_debug_command = args.enable_debug_command;
    if let (Some(id), Some(bind)) = (args.node_id, args.raft_bind) {
        let mut cluster = ClusterConfig::new(id, bind);
        cluster.init = args.init.clone();
        cluster.heartbeat_ms = args.heartbeat_ms;
        config.cluster = Some(cluster);
    }
    Ok(shamba_server::run(&config)?)
}
