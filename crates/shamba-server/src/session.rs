//! What commands run against: the server's shared state and one connection's own.

use super::clients::{Client, Connections};
use super::cluster::Forwarded;
use super::commands;
use super::cursor::CursorTable;
use super::no_wait;
use super::pubsub::Subscriptions;
use super::reply::{Protocol, Reply};
use super::resp::{Args, Limits};
use super::store::{Selected, Store};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The state every connection shares: the [`Store`], SCAN's cursors, the request
/// [`Limits`], and the counters INFO reports. [`Listener::bind`](crate::Listener::bind)
/// makes one; [`Server::execute`] runs a request against it.
pub struct Server {
    pub(super) store: Store,
    pub(super) cursors: CursorTable,
    pub(super) limits: Limits,
    pub(super) bind: SocketAddr,
    pub(super) started: Instant,
    pub(super) counters: ServerCounters,
    /// The connection layer: password, client registry, pub/sub, idle timeout.
    pub(super) conns: Connections,
    /// CONFIG's run-time settings and the slow log.
    pub(crate) settings: crate::runtime_settings::RuntimeSettings,
    /// Clients blocked in BLPOP, BZPOPMIN, ... (see `blocking`).
    pub(super) waiters: crate::blocking::Waiters,
    /// The Lua state and the scripts it knows (see `scripting`).
    pub(super) scripts: crate::scripting::Scripts,
    /// SHUTDOWN asked the server to stop: [`Listener::serve`](crate::Listener::serve) stops
    /// as it does when its shutdown future completes.
    pub(super) shutdown: tokio::sync::Notify,
}

/// Counters INFO reports beside the engine's.
#[derive(Debug, Default)]
pub(super) struct ServerCounters {
    pub(super) connections_received: AtomicU64,
    pub(super) connected: AtomicU64,
    /// Clients refused because `maxclients` were connected (INFO's `rejected_connections`).
    pub(super) rejected_connections: AtomicU64,
    pub(super) commands: AtomicU64,
    pub(super) protocol_errors: AtomicU64,
    /// Bytes read from and written to clients.
    pub(crate) net_input_bytes: AtomicU64,
    pub(crate) net_output_bytes: AtomicU64,
    /// FLUSHDB and FLUSHALL run so far (EXEC tells their conflicts from other writes').
    pub(crate) flushes: AtomicU64,
    /// Writes since the start or the last SAVE (INFO's `rdb_changes_since_last_save`).
    pub(crate) dirty: AtomicU64,
    /// Calls, time and errors per command (INFO commandstats and errorstats).
    pub(crate) by_command: commands::stats::CommandStats,
}

impl ServerCounters {
    pub(super) fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn sub(c: &AtomicU64, n: u64) {
        c.fetch_sub(n, Ordering::Relaxed);
    }

    pub(super) fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// One client's state: its id, its protocol (RESP2 until `HELLO 3`), its name and the
/// database it selected.
#[derive(Debug)]
pub struct Session {
    pub(super) id: u64,
    pub(super) proto: Protocol,
    pub(super) name: Option<Vec<u8>>,
    /// The database SELECT chose (0 until then).
    pub(super) db: usize,
    /// Set by QUIT: reply, then close.
    pub(super) closing: bool,
    /// Between MULTI and EXEC: the commands queued, and whether one was refused while
    /// queuing (EXEC then aborts).
    pub(super) multi: Option<Queued>,
    /// The keys WATCH watches, since the first WATCH (see `commands::multi`).
    pub(super) watch: Option<commands::multi::Watch>,
    /// Whether it may run commands other than AUTH, HELLO, QUIT and RESET (sessions made
    /// by [`Session::new`] may; a connection's may not before AUTH when a password is set).
    pub(super) authenticated: bool,
    /// Its entry in the client registry, for a connection (and a detached one once a
    /// session with no connection subscribes).
    pub(super) client: Option<Arc<Client>>,
    /// Its pub/sub channels and patterns.
    pub(super) subs: Subscriptions,
    /// CLIENT REPLY: whether replies are sent.
    pub(super) replies: Replies,
    /// Set while a script flagged `allow-oom` runs: its writes pass `maxmemory`.
    pub(super) allow_oom: bool,
    /// Set by a script ending with the error of a command it called, which was counted
    /// when that command failed: the script's reply is not counted again.
    pub(super) error_counted: bool,
}

/// CLIENT REPLY's modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Replies {
    /// Every reply sent (the default).
    On,
    /// No reply sent until CLIENT REPLY ON.
    Off,
    /// The next command's reply not sent.
    Skip,
}

/// The commands MULTI queued.
#[derive(Debug, Default)]
pub(super) struct Queued {
    pub(super) commands: Vec<Vec<Vec<u8>>>,
    pub(super) refused: bool,
}

impl Session {
    /// A new client's session, numbered `id` (what `CLIENT ID` and `HELLO` report): RESP2,
    /// no name, database 0.
    pub fn new(id: u64) -> Session {
        Session {
            id,
            proto: Protocol::Resp2,
            name: None,
            db: 0,
            closing: false,
            multi: None,
            watch: None,
            authenticated: true,
            client: None,
            subs: Subscriptions::default(),
            replies: Replies::On,
            allow_oom: false,
            error_counted: false,
        }
    }

    /// The protocol its replies are written in.
    pub fn protocol(&self) -> Protocol {
        self.proto
    }

    /// The database its commands act on (`SELECT`).
    pub fn database(&self) -> usize {
        self.db
    }

    /// Whether its requests may run in the pipeline's runs, past the connection layer's
    /// per-request checks: authenticated, not subscribed, replies on.
    pub(super) fn is_plain(&self) -> bool {
        self.authenticated && self.subs.count() == 0 && self.replies == Replies::On
    }

    /// Note for CLIENT LIST that it ran the command `name` (outside the dispatch, which
    /// notes the others).
    pub(super) fn note_ran(&self, name: &str) {
        if let Some(c) = &self.client {
            c.record(self, name, None);
        }
    }

    /// Whether it asked to close (`QUIT`): its connection closes after the reply.
    pub fn is_closing(&self) -> bool {
        self.closing
    }
}

/// A command's view: the server and its connection.
pub(super) struct Ctx<'a> {
    pub(super) server: &'a Server,
    pub(super) session: &'a mut Session,
    /// EXEC's transaction, while EXEC runs the queue.
    pub(super) tx: Option<&'a shamba::Transaction>,
}

impl<'a> Ctx<'a> {
    /// The database this connection selected; an error reply if its keyspace cannot be
    /// had (SELECT made it, so only a database closed under it fails here).
    pub(super) fn selected(&self) -> Result<Selected<'a>, Reply> {
        match self.server.store.select(self.session.db) {
            Some(Ok(s)) => Ok(match self.tx {
                Some(tx) => s.in_transaction(tx),
                None => s,
            }),
            Some(Err(e)) => Err(commands::engine_error(e)),
            None => Err(Reply::err("DB index is out of range")),
        }
    }
}

impl Server {
    /// The database and its numbered databases, locks and durability.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Run one request (the command's name, then its arguments) for `session`, as a
    /// client's request runs: the name looked up in any case, the arity checked, then the
    /// command; every failure is an error [`Reply`]. Counted in INFO's
    /// `total_commands_processed`.
    pub fn execute(&self, session: &mut Session, request: &[Vec<u8>]) -> Reply {
        let reply = commands::dispatch(&mut Ctx { server: self, session, tx: None }, request);
        ServerCounters::add(&self.counters.commands, 1);
        reply
    }

    /// Run requests from the front of `requests` here, on the connection's own task, none
    /// of them waiting on the disk (see `no_wait`), appending each reply to `out`: stops at
    /// the first that would have waited (left at the front, with the ones after it, for
    /// [`Server::run_batch`] on the blocking pool), at a command that always runs there
    /// ([`no_wait::RUNS_ON_THE_POOL`]), or after QUIT (the rest dropped). In cluster mode
    /// nothing runs here.
    pub(super) fn run_without_waiting(&self, session: &mut Session, requests: &mut VecDeque<Args>, out: &mut Vec<u8>) {
        if self.store.cluster().is_some() {
            return;
        }
        let mut ran = 0;
        loop {
            if self.run_together(session, requests, out) {
                continue;
            }
            let Some(args) = requests.front() else {
                break;
            };
            let Some(name) = args.first() else {
                requests.pop_front();
                continue;
            };
            if commands::lookup(name).is_some_and(|s| no_wait::RUNS_ON_THE_POOL.contains(&s.name)) {
                break;
            }
            let Some(reply) =
                no_wait::try_run(|| commands::dispatch(&mut Ctx { server: self, session, tx: None }, args))
            else {
                break;
            };
            reply.encode(session.proto, out);
            ran += 1;
            requests.pop_front();
            if session.closing {
                requests.clear();
                break;
            }
        }
        ServerCounters::add(&self.counters.commands, ran);
    }

    /// End `session`: its subscriptions dropped. A connection's end, and what a caller of
    /// [`Server::execute`] does when it is done with a session that subscribed.
    pub fn end_session(&self, session: &mut Session) {
        commands::end_session(&mut Ctx { server: self, session, tx: None });
    }

    /// Run the requests read together, in order, appending each reply to `out` in the
    /// protocol in force when it was made (`HELLO` may switch it between two requests).
    /// Stops after QUIT. In cluster mode, requests that read or write keys run on the
    /// leader: here when this node leads, forwarded together otherwise (see `cluster`).
    pub(super) fn run_batch(&self, session: &mut Session, requests: Vec<Args>, out: &mut Vec<u8>) {
        let Some(node) = self.store.cluster() else {
            let mut ran = 0;
            for args in requests {
                if args.is_empty() {
                    continue;
                }
                commands::dispatch(&mut Ctx { server: self, session, tx: None }, &args).encode(session.proto, out);
                ran += 1;
                if session.closing {
                    break;
                }
            }
            ServerCounters::add(&self.counters.commands, ran);
            return;
        };
        if node.is_leader() {
            self.run_leading(session, requests, out);
            return;
        }
        let mut ran = 0;
        let mut requests = requests.into_iter().filter(|a| !a.is_empty()).peekable();
        while let Some(args) = requests.next() {
            if route(&args) == Route::Here {
                commands::dispatch(&mut Ctx { server: self, session, tx: None }, &args).encode(session.proto, out);
                ran += 1;
                if session.closing {
                    break;
                }
                continue;
            }
            // This request and the ones after it that go to the leader too: one RPC.
            let mut batch = vec![args];
            while batch.len() < FORWARD_BATCH {
                match requests.next_if(|a| route(a) != Route::Here) {
                    Some(next) => batch.push(next),
                    None => break,
                }
            }
            let n = batch.len();
            let forwarded =
                Forwarded { database: session.db as u32, resp3: session.proto == Protocol::Resp3, requests: batch };
            match node.forward(forwarded) {
                Ok(bytes) => out.extend_from_slice(&bytes),
                Err(e) => (0..n).for_each(|_| Reply::Error(e.to_string()).encode(session.proto, out)),
            }
            ran += n as u64;
        }
        ServerCounters::add(&self.counters.commands, ran);
    }

    /// Run `requests` on this node, which leads its group: the ones that read keys after one
    /// read barrier (taken on first need), and each run of writes that read nothing
    /// (`SET key value`, `MSET`) proposed together, so that their log entries are
    /// replicated and synced together instead of one round after another.
    fn run_leading(&self, session: &mut Session, requests: Vec<Args>, out: &mut Vec<u8>) {
        let Some(node) = self.store.cluster() else {
            return;
        };
        let mut barrier: Option<Result<u64, String>> = None;
        let mut ran = 0;
        let mut requests = requests.into_iter().filter(|a| !a.is_empty()).peekable();
        while let Some(args) = requests.next() {
            if is_plain_write(&args) {
                let mut run = vec![args];
                while run.len() < FORWARD_BATCH {
                    match requests.next_if(|a| is_plain_write(a)) {
                        Some(next) => run.push(next),
                        None => break,
                    }
                }
                ran += run.len() as u64;
                self.write_together(session, &run, out);
                continue;
            }
            let reply = if route(&args) == Route::Leader(true) {
                match barrier.get_or_insert_with(|| node.read_barrier().map_err(|e| e.to_string())) {
                    Ok(term) => crate::Cluster::in_term(*term, || {
                        commands::dispatch(&mut Ctx { server: self, session, tx: None }, &args)
                    }),
                    Err(e) => Reply::Error(e.clone()),
                }
            } else {
                commands::dispatch(&mut Ctx { server: self, session, tx: None }, &args)
            };
            reply.encode(session.proto, out);
            ran += 1;
            if session.closing {
                break;
            }
        }
        ServerCounters::add(&self.counters.commands, ran);
    }

    /// `SET key value` and `MSET` requests ([`is_plain_write`]), written as one batch each
    /// under all their keys' locks, the batches proposed together; `+OK` or the error, each.
    fn write_together(&self, session: &Session, run: &[Args], out: &mut Vec<u8>) {
        let db = match self.store.select(session.db) {
            Some(Ok(db)) => db,
            failed => {
                let reply = match failed {
                    Some(Err(e)) => commands::engine_error(e),
                    _ => Reply::err("DB index is out of range"),
                };
                run.iter().for_each(|_| reply.encode(session.proto, out));
                return;
            }
        };
        let pairs = |args: &Args| -> Vec<(usize, usize)> { (1..args.len()).step_by(2).map(|i| (i, i + 1)).collect() };
        let _locks =
            db.lock(run.iter().flat_map(|a| pairs(a).into_iter().filter_map(|(k, _)| a.get(k)).map(Vec::as_slice)));
        let batches = run
            .iter()
            .map(|args| {
                let mut b = db.batch();
                for (k, v) in pairs(args) {
                    if let (Some(k), Some(v)) = (args.get(k), args.get(v)) {
                        b.put(&db, k, v);
                    }
                }
                b
            })
            .collect();
        for result in self.store.write_each(batches) {
            result.map_or_else(commands::engine_error, |()| Reply::OK).encode(session.proto, out);
        }
    }

    /// Run requests a follower forwarded for its client (database `database`, protocol
    /// `proto`), answering their encoded replies. Only a leader runs them; a node that does
    /// not lead answers `-TRYAGAIN` to each rather than forward them again.
    pub(super) fn run_forwarded(&self, database: usize, proto: Protocol, requests: Vec<Args>) -> Vec<u8> {
        let mut session = Session::new(0);
        session.proto = proto;
        session.db = database;
        let mut out = Vec::new();
        match self.store.cluster() {
            Some(node) if node.is_leader() => self.run_leading(&mut session, requests, &mut out),
            node => {
                let e = crate::ClusterError::LeaderChanged(node.and_then(|c| c.leader()));
                for _ in &requests {
                    Reply::Error(e.to_string()).encode(proto, &mut out);
                }
            }
        }
        out
    }
}

/// Most requests forwarded in one RPC, or proposed together.
const FORWARD_BATCH: usize = 1024;

/// Whether `args` is a write that reads nothing and sets keys only: `SET key value`, or an
/// `MSET` with whole pairs.
fn is_plain_write(args: &[Vec<u8>]) -> bool {
    match args.first() {
        Some(n) if n.eq_ignore_ascii_case(b"set") => args.len() == 3,
        Some(n) if n.eq_ignore_ascii_case(b"mset") => args.len() >= 3 && args.len() % 2 == 1,
        _ => false,
    }
}

/// Where a request runs in cluster mode.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Route {
    /// On the node the client is connected to: connection and server commands.
    Here,
    /// On the leader; `true` when it reads keys, so it runs after the read barrier.
    Leader(bool),
}

/// Where `args` runs: commands that read or write keys (and membership changes) on the
/// leader. Writes that read nothing (SET without options, MSET, FLUSHDB, FLUSHALL) need
/// no barrier: the log orders them.
fn route(args: &[Vec<u8>]) -> Route {
    let Some(spec) = args.first().and_then(|n| commands::lookup(n)) else {
        return Route::Here;
    };
    let name = spec.name();
    if name == "cluster" {
        return if commands::cluster::changes_membership(args) { Route::Leader(false) } else { Route::Here };
    }
    let blind = (name == "set" && args.len() == 3) || matches!(name, "mset" | "flushdb" | "flushall");
    if blind {
        Route::Leader(false)
    } else if spec.is_write() || spec.flags().contains(&"readonly") {
        Route::Leader(true)
    } else {
        Route::Here
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<u8>> {
        line.split(' ').map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn requests_that_touch_keys_go_to_the_leader_and_reads_wait_for_the_barrier() {
        let cases = [
            ("SET k v", Route::Leader(false)),
            ("mset a 1 b 2", Route::Leader(false)),
            ("FLUSHDB", Route::Leader(false)),
            ("SET k v NX", Route::Leader(true)),
            ("GET k", Route::Leader(true)),
            ("INCR k", Route::Leader(true)),
            ("DEL a b", Route::Leader(true)),
            ("SCAN 0", Route::Leader(true)),
            ("CLUSTER ADDNODE 4 127.0.0.1:7004", Route::Leader(false)),
            ("CLUSTER INFO", Route::Here),
            ("PING", Route::Here),
            ("SELECT 1", Route::Here),
            ("INFO", Route::Here),
            ("NOSUCH k", Route::Here),
        ];
        for (line, want) in cases {
            assert_eq!(route(&words(line)), want, "{line}");
        }
    }

    #[test]
    fn only_whole_sets_are_proposed_together() {
        for (line, plain) in
            [("SET k v", true), ("MSET a 1 b 2", true), ("SET k v XX", false), ("MSET a 1 b", false), ("GET k", false)]
        {
            assert_eq!(is_plain_write(&words(line)), plain, "{line}");
        }
    }
}
