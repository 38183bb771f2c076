//! The client registry: every connection registered with what `CLIENT LIST` shows of it
//! (id, addresses, name, age, idle time, database, last command, flags, protocol), the
//! limit on how many there may be (`maxclients`), and a way to close one from another
//! connection (`CLIENT KILL`) that wakes it even while it waits for input. Each client also
//! owns the queue pub/sub messages reach it through (see `pubsub`).

use super::auth::Auth;
use super::pubsub::{Hub, Message};
use super::session::Session;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Notify};

/// Most bytes of pub/sub messages queued for one client before it is dropped: Redis's
/// `client-output-buffer-limit pubsub 32mb` hard limit.
pub(crate) const PUBSUB_QUEUE_LIMIT: usize = 32 << 20;

/// Every connected client, by id.
#[derive(Debug)]
pub(crate) struct Registry {
    clients: Mutex<BTreeMap<u64, Arc<Client>>>,
    next_id: AtomicU64,
    /// Most clients at once (`maxclients`).
    max: AtomicUsize,
}

/// One connection as the registry knows it.
#[derive(Debug)]
pub(crate) struct Client {
    pub(crate) id: u64,
    addr: Option<SocketAddr>,
    laddr: Option<SocketAddr>,
    fd: i64,
    created: Instant,
    /// What CLIENT LIST shows, as of the client's last command.
    shown: Mutex<Shown>,
    killed: AtomicBool,
    kill: Notify,
    outbox: mpsc::UnboundedSender<Message>,
    /// Bytes of messages queued and not yet written.
    queued: AtomicUsize,
    /// Set on the first subscription: only such clients are looked for in the pub/sub
    /// tables when they leave.
    pub(crate) ever_subscribed: AtomicBool,
    /// Its socket while it is subscribed, peeked for bytes not yet read.
    pub(crate) input: crate::input_probe::InputProbe,
    /// Set while requests it sent are read and not all answered.
    reading: AtomicBool,
    /// How many times everything it had sent was answered: PUBLISH watches it advance.
    answered_all: AtomicU64,
}

/// The parts of a session other connections see, copied after each command.
#[derive(Debug, Clone)]
struct Shown {
    name: Option<Vec<u8>>,
    db: usize,
    cmd: String,
    last: Instant,
    multi: i64,
    watch: usize,
    sub: usize,
    psub: usize,
    resp: i64,
    lib_name: Vec<u8>,
    lib_ver: Vec<u8>,
}

/// What the connection layer keeps for all connections: the password and protected mode,
/// the client registry, pub/sub's subscriptions, and the idle timeout.
#[derive(Debug)]
pub(crate) struct Connections {
    pub(crate) auth: Auth,
    pub(crate) registry: Registry,
    pub(crate) pubsub: Hub,
    /// Close a client idle this many seconds (`timeout`; 0: never). Subscribers are never
    /// closed for being idle, as in Redis.
    idle_secs: AtomicU64,
}

impl Connections {
    pub(crate) fn new(auth: Auth, maxclients: usize, idle_secs: u64) -> Connections {
        Connections {
            auth,
            registry: Registry::new(maxclients),
            pubsub: Hub::default(),
            idle_secs: AtomicU64::new(idle_secs),
        }
    }

    /// How long a client may be idle (`None`: for ever).
    pub(crate) fn idle_timeout(&self) -> Option<Duration> {
        Some(self.idle_secs.load(Ordering::Relaxed)).filter(|&s| s > 0).map(Duration::from_secs)
    }

    /// CONFIG SET timeout: seconds, 0 for never (a waiting client sees it after its next
    /// request).
    pub(crate) fn set_idle_timeout(&self, secs: u64) {
        self.idle_secs.store(secs, Ordering::Relaxed);
    }
}

/// Why a client was not registered.
#[derive(Debug)]
pub(crate) struct TooManyClients;

impl Registry {
    pub(crate) fn new(max: usize) -> Registry {
        Registry { clients: Mutex::new(BTreeMap::new()), next_id: AtomicU64::new(1), max: AtomicUsize::new(max.max(1)) }
    }

    /// `maxclients`.
    pub(crate) fn max(&self) -> usize {
        self.max.load(Ordering::Relaxed)
    }

    /// CONFIG SET maxclients: clients connected already stay.
    pub(crate) fn set_max(&self, max: usize) {
        self.max.store(max.max(1), Ordering::Relaxed);
    }

    /// How many are connected.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.clients.lock().len()
    }

    /// A new id, for a session that is not a connection.
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Register a connection from `addr` to `laddr` (its socket's descriptor `fd`): the
    /// client and the receiving end of its message queue; [`TooManyClients`] when
    /// `maxclients` are connected already.
    pub(crate) fn register(
        &self,
        addr: SocketAddr,
        laddr: SocketAddr,
        fd: i64,
    ) -> Result<(Arc<Client>, mpsc::UnboundedReceiver<Message>), TooManyClients> {
        let mut clients = self.clients.lock();
        if clients.len() >= self.max() {
            return Err(TooManyClients);
        }
        let (client, rx) = Client::new(self.next_id(), Some(addr), Some(laddr), fd);
        clients.insert(client.id, client.clone());
        Ok((client, rx))
    }

    /// Forget client `id` (its connection ended).
    pub(crate) fn remove(&self, id: u64) {
        self.clients.lock().remove(&id);
    }

    /// Every client still served, by id. A killed client is left out at once, as Redis
    /// frees it at once, though its connection may take a moment to close and leave the
    /// registry: a CLIENT LIST or KILL right after a KILL must not see it again.
    pub(crate) fn all(&self) -> Vec<Arc<Client>> {
        self.clients.lock().values().filter(|c| !c.is_killed()).cloned().collect()
    }
}

impl Client {
    fn new(
        id: u64,
        addr: Option<SocketAddr>,
        laddr: Option<SocketAddr>,
        fd: i64,
    ) -> (Arc<Client>, mpsc::UnboundedReceiver<Message>) {
        let (outbox, rx) = mpsc::unbounded_channel();
        let now = Instant::now();
        let shown = Shown {
            name: None,
            db: 0,
            cmd: "NULL".into(),
            last: now,
            multi: -1,
            watch: 0,
            sub: 0,
            psub: 0,
            resp: 2,
            lib_name: Vec::new(),
            lib_ver: Vec::new(),
        };
        let client = Client {
            id,
            addr,
            laddr,
            fd,
            created: now,
            shown: Mutex::new(shown),
            killed: AtomicBool::new(false),
            kill: Notify::new(),
            outbox,
            queued: AtomicUsize::new(0),
            ever_subscribed: AtomicBool::new(false),
            input: crate::input_probe::InputProbe::default(),
            reading: AtomicBool::new(false),
            answered_all: AtomicU64::new(0),
        };
        (Arc::new(client), rx)
    }

    /// A client for a session with no connection (the command layer used directly):
    /// messages published to it are dropped.
    pub(crate) fn detached(id: u64) -> Arc<Client> {
        Client::new(id, None, None, -1).0
    }

    /// Close its connection: at once if it waits for input, after its current requests
    /// otherwise.
    pub(crate) fn kill(&self) {
        self.killed.store(true, Ordering::Release);
        self.kill.notify_one();
    }

    pub(crate) fn is_killed(&self) -> bool {
        self.killed.load(Ordering::Acquire)
    }

    /// Completes when [`Client::kill`] is called (at once if it was already).
    pub(crate) async fn killed(&self) {
        if self.is_killed() {
            return;
        }
        self.kill.notified().await;
    }

    /// Queue a message for the client: `false` (and the client killed) when its queue is
    /// over [`PUBSUB_QUEUE_LIMIT`], as Redis drops a subscriber that does not keep up.
    pub(crate) fn deliver(&self, msg: Message) -> bool {
        if self.is_killed() {
            return false;
        }
        let size = msg.size();
        if self.queued.fetch_add(size, Ordering::AcqRel) + size > PUBSUB_QUEUE_LIMIT {
            self.queued.fetch_sub(size, Ordering::AcqRel);
            self.kill();
            return false;
        }
        if self.outbox.send(msg).is_err() {
            self.queued.fetch_sub(size, Ordering::AcqRel);
        }
        true
    }

    /// Its connection reads from the socket (`true`) or found nothing there (`false`).
    pub(crate) fn set_reading(&self, reading: bool) {
        self.reading.store(reading, Ordering::SeqCst);
    }

    /// Its connection answered everything it read and waits for more.
    pub(crate) fn answered_all(&self) {
        self.answered_all.fetch_add(1, Ordering::AcqRel);
        self.reading.store(false, Ordering::SeqCst);
    }

    /// How many times it answered everything it read.
    pub(crate) fn times_answered_all(&self) -> u64 {
        self.answered_all.load(Ordering::Acquire)
    }

    /// Whether it sent something not yet answered: still unread in its socket, or read and
    /// running. The socket is asked first: its connection marks itself reading before it
    /// reads, so bytes gone from the socket are seen by the mark. Asked the other way
    /// round, a read between the two looks would hide them from both.
    pub(crate) fn has_input(&self) -> bool {
        self.input.pending() || self.reading.load(Ordering::SeqCst)
    }

    /// Its connection ended: nothing more to read.
    pub(crate) fn input_done(&self) {
        self.reading.store(false, Ordering::SeqCst);
        self.input.close();
    }

    /// A queued message was taken off the queue (to be written).
    pub(crate) fn delivered(&self, msg: &Message) {
        self.queued.fetch_sub(msg.size(), Ordering::AcqRel);
    }

    /// Copy what other clients see of `session` after it ran the command `name` (with
    /// its subcommand `sub`, for the commands that have them).
    pub(crate) fn record(&self, session: &Session, name: &str, sub: Option<&[u8]>) {
        let mut s = self.shown.lock();
        s.cmd.clear();
        s.cmd.push_str(name);
        if let Some(sub) = sub {
            s.cmd.push('|');
            s.cmd.extend(sub.iter().take(64).map(|b| char::from(b.to_ascii_lowercase())));
        }
        s.last = Instant::now();
        s.db = session.db;
        if s.name != session.name {
            s.name.clone_from(&session.name);
        }
        s.multi = session.multi.as_ref().map_or(-1, |q| q.commands.len() as i64);
        s.watch = session.watch.as_ref().map_or(0, |w| w.len());
        s.sub = session.subs.channels.len();
        s.psub = session.subs.patterns.len();
        s.resp = session.proto.version();
    }

    /// CLIENT SETINFO LIB-NAME / LIB-VER.
    pub(crate) fn set_lib(&self, name: Option<&[u8]>, ver: Option<&[u8]>) {
        let mut s = self.shown.lock();
        if let Some(n) = name {
            s.lib_name = n.to_vec();
        }
        if let Some(v) = ver {
            s.lib_ver = v.to_vec();
        }
    }

    pub(crate) fn addr(&self) -> Option<SocketAddr> {
        self.addr
    }

    pub(crate) fn laddr(&self) -> Option<SocketAddr> {
        self.laddr
    }

    /// Seconds since it connected.
    pub(crate) fn age(&self) -> u64 {
        self.created.elapsed().as_secs()
    }

    /// The user it authenticated as (there is only `default`).
    pub(crate) fn user(&self) -> &'static str {
        "default"
    }

    /// Whether it is subscribed to a channel or a pattern (CLIENT LIST's `pubsub` type).
    pub(crate) fn is_subscriber(&self) -> bool {
        let s = self.shown.lock();
        s.sub + s.psub > 0
    }

    /// Its CLIENT LIST line (without the line end). `current` is the session running this
    /// command when the line is its own (fresher than what was copied), with the bytes of
    /// the request being run.
    pub(crate) fn line(&self, current: Option<(&Session, &str, usize)>) -> String {
        let mut s = self.shown.lock().clone();
        let mut qbuf = 0;
        if let Some((session, cmd, request_bytes)) = current {
            s.cmd = cmd.to_string();
            s.last = Instant::now();
            s.db = session.db;
            s.name.clone_from(&session.name);
            s.multi = session.multi.as_ref().map_or(-1, |q| q.commands.len() as i64);
            s.watch = session.watch.as_ref().map_or(0, |w| w.len());
            s.sub = session.subs.channels.len();
            s.psub = session.subs.patterns.len();
            s.resp = session.proto.version();
            qbuf = request_bytes;
        }
        let mut flags = String::new();
        if s.sub + s.psub > 0 {
            flags.push('P');
        }
        if s.multi >= 0 {
            flags.push('x');
        }
        if flags.is_empty() {
            flags.push('N');
        }
        let show = |a: Option<SocketAddr>| a.map_or_else(String::new, |a| a.to_string());
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let mut out = String::with_capacity(320);
        let _ = write!(
            out,
            "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={flags} db={} sub={} psub={} ssub=0 \
             multi={} watch={} qbuf={qbuf} qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 \
             tot-mem=0 events=r cmd={} user={} redir=-1 resp={} lib-name={} lib-ver={}",
            self.id,
            show(self.addr),
            show(self.laddr),
            self.fd,
            s.name.as_deref().map(text).unwrap_or_default(),
            self.age(),
            s.last.elapsed().as_secs(),
            s.db,
            s.sub,
            s.psub,
            s.multi,
            s.watch,
            s.cmd,
            self.user(),
            s.resp,
            text(&s.lib_name),
            text(&s.lib_ver),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn maxclients_bounds_the_registry_and_leaving_frees_a_place() {
        let r = Registry::new(2);
        let (a, _rx) = r.register(addr("127.0.0.1:1"), addr("127.0.0.1:9"), 5).unwrap();
        let (_b, _rx2) = r.register(addr("127.0.0.1:2"), addr("127.0.0.1:9"), 6).unwrap();
        assert!(r.register(addr("127.0.0.1:3"), addr("127.0.0.1:9"), 7).is_err());
        r.remove(a.id);
        assert_eq!(r.len(), 1);
        assert!(r.register(addr("127.0.0.1:3"), addr("127.0.0.1:9"), 7).is_ok());
        r.set_max(3);
        assert_eq!(r.max(), 3);
        assert!(r.register(addr("127.0.0.1:4"), addr("127.0.0.1:9"), 8).is_ok());
    }

    #[test]
    fn a_line_shows_what_the_session_last_did() {
        let r = Registry::new(10);
        let (c, _rx) = r.register(addr("10.0.0.1:5000"), addr("127.0.0.1:6380"), 9).unwrap();
        let mut s = Session::new(c.id);
        s.name = Some(b"worker".to_vec());
        s.db = 3;
        c.record(&s, "get", None);
        let line = c.line(None);
        assert!(line.starts_with(&format!("id={} addr=10.0.0.1:5000 laddr=127.0.0.1:6380 fd=9 name=worker ", c.id)));
        assert!(line.contains(" flags=N db=3 sub=0 psub=0 ssub=0 multi=-1 watch=0 "), "{line}");
        assert!(line.contains(" cmd=get user=default redir=-1 resp=2 lib-name= lib-ver="), "{line}");
        c.record(&s, "client", Some(b"LIST"));
        assert!(c.line(None).contains(" cmd=client|list "));
    }

    #[test]
    fn a_killed_client_is_no_longer_listed_while_its_connection_closes() {
        let r = Registry::new(10);
        let (a, _rx) = r.register(addr("127.0.0.1:1"), addr("127.0.0.1:9"), 5).unwrap();
        let (b, _rx2) = r.register(addr("127.0.0.1:2"), addr("127.0.0.1:9"), 6).unwrap();
        a.kill();
        let ids: Vec<u64> = r.all().iter().map(|c| c.id).collect();
        assert_eq!(ids, [b.id], "the killed client is still registered but not listed");
    }

    #[test]
    fn a_full_queue_drops_the_subscriber() {
        let (c, mut rx) = Client::new(1, None, None, -1);
        let big: Arc<[u8]> = vec![0u8; PUBSUB_QUEUE_LIMIT / 2].into();
        let msg = || Message { pattern: None, channel: b"ch"[..].into(), payload: big.clone() };
        assert!(c.deliver(msg()));
        assert!(!c.deliver(msg()), "over the limit");
        assert!(c.is_killed());
        let taken = rx.try_recv().unwrap();
        c.delivered(&taken);
        assert!(rx.try_recv().is_err(), "the message over the limit was not queued");
    }
}
