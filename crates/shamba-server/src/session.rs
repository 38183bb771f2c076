//! What commands run against: the server's shared state and one connection's own.

use super::commands;
use super::cursor::CursorTable;
use super::reply::{Protocol, Reply};
use super::resp::{Args, Limits};
use super::store::{Selected, Store};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
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
}

/// Counters INFO reports beside the engine's.
#[derive(Debug, Default)]
pub(super) struct ServerCounters {
    pub(super) connections_received: AtomicU64,
    pub(super) connected: AtomicU64,
    pub(super) commands: AtomicU64,
    pub(super) protocol_errors: AtomicU64,
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
}

impl Session {
    /// A new client's session, numbered `id` (what `CLIENT ID` and `HELLO` report): RESP2,
    /// no name, database 0.
    pub fn new(id: u64) -> Session {
        Session { id, proto: Protocol::Resp2, name: None, db: 0, closing: false }
    }

    /// The protocol its replies are written in.
    pub fn protocol(&self) -> Protocol {
        self.proto
    }

    /// The database its commands act on (`SELECT`).
    pub fn database(&self) -> usize {
        self.db
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
}

impl<'a> Ctx<'a> {
    /// The database this connection selected; an error reply if its keyspace cannot be
    /// had (SELECT made it, so only a database closed under it fails here).
    pub(super) fn selected(&self) -> Result<Selected<'a>, Reply> {
        match self.server.store.select(self.session.db) {
            Some(Ok(s)) => Ok(s),
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
        let reply = commands::dispatch(&mut Ctx { server: self, session }, request);
        ServerCounters::add(&self.counters.commands, 1);
        reply
    }

    /// Run the requests read together, in order, appending each reply to `out` in the
    /// protocol in force when it was made (`HELLO` may switch it between two requests).
    /// Stops after QUIT.
    pub(super) fn run_batch(&self, session: &mut Session, requests: Vec<Args>, out: &mut Vec<u8>) {
        let mut ran = 0;
        for args in requests {
            if args.is_empty() {
                continue;
            }
            let mut ctx = Ctx { server: self, session };
            let reply: Reply = commands::dispatch(&mut ctx, &args);
            reply.encode(session.proto, out);
            ran += 1;
            if session.closing {
                break;
            }
        }
        ServerCounters::add(&self.counters.commands, ran);
    }
}
