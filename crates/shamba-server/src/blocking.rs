//! The blocked clients of the blocking commands (BLPOP, BZPOPMIN, ...), served as Redis
//! serves them: first come, first served.
//!
//! A client that finds nothing to pop joins the queue of each of its keys and waits,
//! holding no lock. A write that may have filled a key calls [`Waiters::wake`], which only
//! marks the key ready (one atomic load when nobody is blocked). When the writing command
//! is over (an EXEC as a whole: its inner commands do not serve), dispatch calls
//! [`Waiters::serve_ready`]: for each ready key in the order they became ready, the oldest
//! client blocked on it is given the turn and runs its pop on its own thread, while the
//! server waits for its answer; while clients are served, the next one gets the turn,
//! until one finds nothing. A client served by one key leaves every queue, so a client
//! blocked on several keys is served by the first key that gets data. A served BLMOVE's
//! push marks its destination ready, and the same round serves that key's clients.
//!
//! One round serves at a time (`serving`), so two writers never hand the same key's turns
//! out together, and a pop is done once, by the client that answers for it: an element is
//! popped exactly once and reaches one client. The pop is a write to the engine like any
//! other.
//!
//! Waking is the common path, never the only one: a waiter also marks its own keys ready
//! every [`RETRY`] and serves them if no round is running, so a key filled by a write
//! that does not call `wake` is still served, in queue order, within that time. The same
//! tick ends the wait of a client that was killed or whose timeout passed.
//!
//! A blocked client holds the thread its command runs on. On a worker of a multi-thread
//! runtime the wait tells tokio so (`block_in_place`), which moves the worker's other
//! tasks to another thread; on a current-thread runtime there is no other thread, so
//! there the commands do not wait (they answer as on a timeout).

use parking_lot::{Condvar, Mutex};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How often a waiter looks at its keys, its client and its timeout without being woken.
const RETRY: Duration = Duration::from_millis(100);

/// A key of one database.
type Key = (usize, Vec<u8>);

/// A round's own client, when a waiter runs the round: its id, its keys, its try.
type Mine<'a, T> = Option<(u64, &'a [Key], &'a mut dyn FnMut() -> Option<T>)>;

/// Who waits: the client (for CLIENT UNBLOCK) and its place in line (see
/// [`Waiters::arrive`]).
#[derive(Clone, Copy)]
struct Caller {
    client: Option<u64>,
    ticket: Option<u64>,
}

/// The blocked clients of one server.
#[derive(Default)]
pub(crate) struct Waiters {
    /// Clients blocked now: a writer with nobody to wake skips the lock.
    blocked: AtomicUsize,
    state: Mutex<State>,
    /// Signalled on every change of a turn, of the ready keys, and on close.
    changed: Condvar,
    /// Held by the one round serving ready keys.
    serving: Mutex<()>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    /// Each key's blocked clients, oldest first.
    queues: HashMap<Key, VecDeque<u64>>,
    /// Each blocked client's turn.
    turns: HashMap<u64, Turn>,
    /// The waiter of each blocked client that has a client id (CLIENT UNBLOCK).
    by_client: HashMap<u64, u64>,
    /// Blocking commands read from a connection and not yet blocked or answered, by
    /// arrival: ticket → client (see [`Waiters::arrive`]).
    arrivals: std::collections::BTreeMap<u64, u64>,
    next_ticket: u64,
    /// Keys written since the last round, in order, each once.
    ready: VecDeque<Key>,
    closed: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Turn {
    /// Blocked, not asked.
    Waiting,
    /// Asked to pop now: the round waits for the answer.
    Granted,
    /// Asked, and found nothing: the round goes on with the next key.
    Empty,
    /// CLIENT UNBLOCK: leave, answering as on a timeout or with an error.
    Unblocked(Unblock),
}

/// How CLIENT UNBLOCK ends a wait.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Unblock {
    /// As if the timeout had passed.
    Timeout,
    /// With the error `UNBLOCKED`.
    Error,
}

/// What a round learns from a client given the turn.
enum Answer {
    /// The client answered (and left the queues): the next one may be served.
    Served,
    /// Nothing for this client: the key is empty (or holds another type).
    Empty,
}

impl Waiters {
    /// A write to `key` of database `db` committed: if clients wait on it, mark it ready
    /// for the next round (see [`Waiters::serve_ready`]).
    pub(crate) fn wake(&self, db: usize, key: &[u8]) {
        if self.blocked.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut s = self.state.lock();
        let k = (db, key.to_vec());
        if s.queues.contains_key(&k) && !s.ready.contains(&k) {
            s.ready.push_back(k);
        }
    }

    /// Mark ready every key of database `db` that clients wait on (SWAPDB: each of the
    /// database's keys may hold something else now).
    pub(crate) fn wake_db(&self, db: usize) {
        if self.blocked.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut s = self.state.lock();
        let waited: Vec<Key> = s.queues.keys().filter(|(d, _)| *d == db).cloned().collect();
        for k in waited {
            if !s.ready.contains(&k) {
                s.ready.push_back(k);
            }
        }
    }

    /// A command (or an EXEC) is over: serve the clients blocked on the keys it made
    /// ready, oldest first, before its own reply goes out. Called with no key lock held.
    pub(crate) fn serve_ready(&self) {
        if self.blocked.load(Ordering::Acquire) == 0 || self.state.lock().ready.is_empty() {
            return;
        }
        let _round = self.serving.lock();
        let _: Option<()> = self.round(None);
    }

    /// How many clients are blocked now (INFO's `blocked_clients`).
    pub(crate) fn blocked(&self) -> usize {
        self.blocked.load(Ordering::Acquire)
    }

    /// A connection read a blocking command of client `client`: it takes its first try
    /// after the blocking commands read before it (of any client) have blocked or
    /// answered, so clients that block together are queued in the order the server read
    /// their commands, as on Redis's one thread, however long the earlier ones take to
    /// get there.
    pub(crate) fn arrive(&self, client: u64) {
        let mut s = self.state.lock();
        let t = s.next_ticket;
        s.next_ticket += 1;
        s.arrivals.insert(t, client);
    }

    /// The requests of `client` read together are over: its arrivals left are dropped.
    pub(crate) fn departed(&self, client: u64) {
        let mut s = self.state.lock();
        if s.arrivals.values().any(|&c| c == client) {
            s.arrivals.retain(|_, c| *c != client);
            self.changed.notify_all();
        }
    }

    /// Wait until the blocking commands read before `client`'s oldest arrival are done
    /// with their first try; that arrival's ticket. No timer: an earlier arrival leaves
    /// the line when its command blocks or answers, or when its client's requests are over
    /// ([`Waiters::departed`]). The arrivals of a client blocked now are not waited for:
    /// they are its later commands, which run only once it is served (Redis reads them
    /// only then), so a pipeline of blocking commands holds nobody else up.
    fn first_in_line(&self, client: Option<u64>) -> Option<u64> {
        let client = client?;
        let mut s = self.state.lock();
        let ticket = s.arrivals.iter().find(|&(_, &c)| c == client).map(|(&t, _)| t)?;
        while !s.closed && s.arrivals.range(..ticket).any(|(_, c)| !s.by_client.contains_key(c)) {
            self.changed.wait(&mut s);
        }
        Some(ticket)
    }

    /// The command of `ticket` blocked or answered.
    fn leave_line(&self, ticket: Option<u64>) {
        if let Some(t) = ticket {
            if self.state.lock().arrivals.remove(&t).is_some() {
                self.changed.notify_all();
            }
        }
    }

    /// CLIENT UNBLOCK: end the wait of client `client`; `false` if it is not blocked (or
    /// its turn has come: it is being served).
    pub(crate) fn unblock(&self, client: u64, how: Unblock) -> bool {
        let mut s = self.state.lock();
        let Some(&id) = s.by_client.get(&client) else { return false };
        if s.turns.get(&id) != Some(&Turn::Waiting) {
            return false;
        }
        s.turns.insert(id, Turn::Unblocked(how));
        self.changed.notify_all();
        true
    }

    /// The server stops: every waiter returns (as on a timeout), and no new one waits.
    pub(crate) fn close(&self) {
        self.state.lock().closed = true;
        self.changed.notify_all();
    }

    /// Run `attempt` until it answers `Some`: at once, then each time this client's turn
    /// comes on one of `keys` (database `db`); `None` once `deadline` passes (`None`:
    /// never), `gone` says the client left, CLIENT UNBLOCK ends the wait of `client` with
    /// [`Unblock::Timeout`], or the server stops; `Err` for [`Unblock::Error`]. `attempt`
    /// runs with no lock of this registry held.
    pub(crate) fn wait_for<T>(
        &self,
        client: Option<u64>,
        db: usize,
        keys: &[Vec<u8>],
        deadline: Option<Instant>,
        gone: impl Fn() -> bool,
        mut attempt: impl FnMut() -> Option<T>,
    ) -> Result<Option<T>, Unblock> {
        let ticket = self.first_in_line(client);
        // The common case first, without registering or leaving the runtime.
        if let Some(done) = attempt() {
            self.leave_line(ticket);
            return Ok(Some(done));
        }
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| {
                    self.wait_registered(Caller { client, ticket }, db, keys, deadline, &gone, &mut attempt)
                })
            }
            Ok(_) => {
                self.leave_line(ticket);
                Ok(None)
            }
            Err(_) => self.wait_registered(Caller { client, ticket }, db, keys, deadline, &gone, &mut attempt),
        }
    }

    fn wait_registered<T>(
        &self,
        caller: Caller,
        db: usize,
        keys: &[Vec<u8>],
        deadline: Option<Instant>,
        gone: &dyn Fn() -> bool,
        attempt: &mut dyn FnMut() -> Option<T>,
    ) -> Result<Option<T>, Unblock> {
        let registered = self.register(caller.client, db, keys);
        self.leave_line(caller.ticket);
        let Some((id, keys)) = registered else { return Ok(None) };
        // The first tick at once: a write between the first try and the registration
        // woke nobody.
        let mut tick = Instant::now();
        loop {
            let mut s = self.state.lock();
            if s.turns.get(&id) == Some(&Turn::Granted) {
                drop(s);
                let r = attempt();
                let mut s = self.state.lock();
                match r {
                    Some(r) => {
                        self.leave(&mut s, id, &keys);
                        self.changed.notify_all();
                        return Ok(Some(r));
                    }
                    None => {
                        s.turns.insert(id, Turn::Empty);
                        self.changed.notify_all();
                        continue;
                    }
                }
            }
            if let Some(&Turn::Unblocked(how)) = s.turns.get(&id) {
                self.leave(&mut s, id, &keys);
                return match how {
                    Unblock::Timeout => Ok(None),
                    Unblock::Error => Err(Unblock::Error),
                };
            }
            let now = Instant::now();
            if s.closed || deadline.is_some_and(|d| d <= now) || (now >= tick && gone()) {
                self.leave(&mut s, id, &keys);
                return Ok(None);
            }
            if now >= tick {
                tick = now + RETRY;
                for k in &keys {
                    if !s.ready.contains(k) {
                        s.ready.push_back(k.clone());
                    }
                }
                drop(s);
                if let Some(_round) = self.serving.try_lock() {
                    if let Some(r) = self.round(Some((id, &keys, &mut *attempt))) {
                        return Ok(Some(r));
                    }
                }
                continue;
            }
            let until = deadline.map_or(tick, |d| d.min(tick));
            self.changed.wait_until(&mut s, until);
        }
    }

    /// Join the queues of `keys` (each once): the client's id and its keys, or `None` if
    /// the server stops.
    fn register(&self, client: Option<u64>, db: usize, keys: &[Vec<u8>]) -> Option<(u64, Vec<Key>)> {
        let mut s = self.state.lock();
        if s.closed {
            return None;
        }
        let id = s.next_id;
        s.next_id += 1;
        let mut mine: Vec<Key> = Vec::with_capacity(keys.len());
        for k in keys {
            let k = (db, k.clone());
            if !mine.contains(&k) {
                s.queues.entry(k.clone()).or_default().push_back(id);
                mine.push(k);
            }
        }
        s.turns.insert(id, Turn::Waiting);
        if let Some(c) = client {
            s.by_client.insert(c, id);
            // Its later arrivals no longer hold anyone up (see `first_in_line`).
            self.changed.notify_all();
        }
        self.blocked.fetch_add(1, Ordering::AcqRel);
        Some((id, mine))
    }

    /// Leave every queue (served, timed out, gone).
    fn leave(&self, s: &mut State, id: u64, keys: &[Key]) {
        for k in keys {
            if let Some(q) = s.queues.get_mut(k) {
                q.retain(|&w| w != id);
                if q.is_empty() {
                    s.queues.remove(k);
                }
            }
        }
        s.turns.remove(&id);
        s.by_client.retain(|_, w| *w != id);
        self.blocked.fetch_sub(1, Ordering::AcqRel);
        // Its later arrivals count again for those waiting in line.
        self.changed.notify_all();
    }

    /// One round, with `serving` held: every ready key's clients served in queue order
    /// while they find something. `me` is the round's own client when a waiter runs it
    /// (its turn is taken inline); its reply, if it was served, is the result.
    fn round<T>(&self, mut me: Mine<'_, T>) -> Option<T> {
        let mut mine = None;
        loop {
            let Some(key) = self.state.lock().ready.pop_front() else {
                return mine;
            };
            while let Answer::Served = self.serve_one(&key, &mut me, &mut mine) {}
        }
    }

    /// Give the turn on `key` to its oldest client and wait for its answer.
    fn serve_one<T>(&self, key: &Key, me: &mut Mine<'_, T>, mine: &mut Option<T>) -> Answer {
        let mut s = self.state.lock();
        if s.closed {
            return Answer::Empty;
        }
        let Some(&id) = s.queues.get(key).and_then(|q| q.front()) else {
            return Answer::Empty;
        };
        if let Some((my_id, my_keys, attempt)) = me.as_mut() {
            if *my_id == id {
                drop(s);
                let r = attempt();
                let mut s = self.state.lock();
                return match r {
                    Some(r) => {
                        self.leave(&mut s, id, my_keys);
                        *mine = Some(r);
                        *me = None;
                        Answer::Served
                    }
                    None => Answer::Empty,
                };
            }
        }
        s.turns.insert(id, Turn::Granted);
        self.changed.notify_all();
        while s.turns.get(&id) == Some(&Turn::Granted) {
            self.changed.wait(&mut s);
        }
        match s.turns.get(&id) {
            None => Answer::Served,
            Some(_) => {
                s.turns.insert(id, Turn::Waiting);
                Answer::Empty
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn a_waiter_is_served_when_its_key_is_made_ready() {
        let w = Arc::new(Waiters::default());
        let ready = Arc::new(AtomicBool::new(false));
        let (w2, r2) = (w.clone(), ready.clone());
        let started = Instant::now();
        let waiter = std::thread::spawn(move || {
            w2.wait_for(
                None,
                0,
                &[b"k".to_vec()],
                Some(Instant::now() + Duration::from_secs(30)),
                || false,
                || r2.load(Ordering::SeqCst).then_some(7),
            )
        });
        while w.blocked() == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        ready.store(true, Ordering::SeqCst);
        w.wake(0, b"k");
        w.serve_ready();
        assert_eq!(waiter.join().unwrap(), Ok(Some(7)));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(w.blocked(), 0, "unregistered");
        assert!(w.state.lock().queues.is_empty());
    }

    #[test]
    fn a_waiter_times_out_and_a_closed_registry_releases_every_waiter() {
        let w = Arc::new(Waiters::default());
        let started = Instant::now();
        let none: Result<Option<()>, Unblock> =
            w.wait_for(None, 0, &[b"k".to_vec()], Some(Instant::now() + Duration::from_millis(150)), || false, || None);
        assert_eq!(none, Ok(None));
        assert!(started.elapsed() >= Duration::from_millis(150));
        let w2 = w.clone();
        let forever = std::thread::spawn(move || w2.wait_for(None, 0, &[b"k".to_vec()], None, || false, || None::<()>));
        std::thread::sleep(Duration::from_millis(50));
        w.close();
        assert_eq!(forever.join().unwrap(), Ok(None));
    }

    /// Three clients block in turn on one key holding a counter of elements; two elements
    /// arrive: the first two clients get them, in the order they blocked, the third waits.
    #[test]
    fn clients_are_served_in_the_order_they_blocked() {
        let w = Arc::new(Waiters::default());
        let elements = Arc::new(Mutex::new(Vec::<u32>::new()));
        let mut handles = Vec::new();
        for client in 0..3u32 {
            let (w2, e2) = (w.clone(), elements.clone());
            handles.push(std::thread::spawn(move || {
                let r = w2.wait_for(
                    None,
                    0,
                    &[b"k".to_vec()],
                    Some(Instant::now() + Duration::from_secs(2)),
                    || false,
                    || {
                        let mut e = e2.lock();
                        (!e.is_empty()).then(|| e.remove(0))
                    },
                );
                (client, r)
            }));
            while w.blocked() as u32 != client + 1 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        elements.lock().extend([10, 11]);
        w.wake(0, b"k");
        w.serve_ready();
        let got: Vec<(u32, Result<Option<u32>, Unblock>)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(got, vec![(0, Ok(Some(10))), (1, Ok(Some(11))), (2, Ok(None))]);
    }

    #[test]
    fn client_unblock_ends_a_wait_as_a_timeout_or_an_error() {
        let w = Arc::new(Waiters::default());
        assert!(!w.unblock(5, Unblock::Timeout), "not blocked");
        for (how, answer) in [(Unblock::Timeout, Ok(None)), (Unblock::Error, Err(Unblock::Error))] {
            let w2 = w.clone();
            let waiter =
                std::thread::spawn(move || w2.wait_for(Some(5), 0, &[b"k".to_vec()], None, || false, || None::<()>));
            while w.blocked() == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert!(w.unblock(5, how));
            assert_eq!(waiter.join().unwrap(), answer);
            assert_eq!(w.blocked(), 0);
            assert!(w.state.lock().by_client.is_empty());
        }
    }
}
