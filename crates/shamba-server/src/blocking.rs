//! The waiters of the blocking commands (BLPOP, BZPOPMIN, ...): a client blocked on keys
//! waits here, holding no lock, until a write to one of its keys wakes it, its timeout
//! passes, or the server stops; then it tries its command again.
//!
//! A writer that may have filled a key calls [`Waiters::wake`] after its batch is written;
//! when nobody waits that costs one atomic load. Waking is a hint, never the only way
//! back: a waiter also retries every [`RETRY`], so a write that wakes nobody (a list made
//! by a command that does not call `wake`, a push inside EXEC that commits after its
//! `wake`) is seen within that time.
//!
//! A blocked client holds the thread its command runs on. On a worker of a multi-thread
//! runtime the wait tells tokio so (`block_in_place`), which moves the worker's other
//! tasks to another thread; on a current-thread runtime there is no other thread, so
//! there the commands do not wait (they answer as on a timeout).

use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How often a waiter retries without being woken.
const RETRY: Duration = Duration::from_millis(100);

/// The blocked clients of one server.
#[derive(Default)]
pub(crate) struct Waiters {
    /// Clients blocked now: a writer with nobody to wake skips the lock.
    blocked: AtomicUsize,
    state: Mutex<State>,
    woken: Condvar,
}

#[derive(Default)]
struct State {
    /// Bumped by every wake of a key someone waits on.
    generation: u64,
    /// (database, key) → how many waiters wait on it.
    keys: HashMap<(usize, Vec<u8>), usize>,
    closed: bool,
}

impl Waiters {
    /// A write to `key` of database `db` committed: wake the clients waiting on it.
    pub(crate) fn wake(&self, db: usize, key: &[u8]) {
        if self.blocked.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut s = self.state.lock();
        if s.keys.contains_key(&(db, key.to_vec())) {
            s.generation += 1;
            self.woken.notify_all();
        }
    }

    /// How many clients are blocked now (INFO's `blocked_clients`).
    pub(crate) fn blocked(&self) -> usize {
        self.blocked.load(Ordering::Acquire)
    }

    /// The server stops: every waiter returns (as on a timeout), and no new one waits.
    pub(crate) fn close(&self) {
        self.state.lock().closed = true;
        self.woken.notify_all();
    }

    /// Run `attempt` until it answers `Some`, waiting between tries for a write to one of
    /// `keys` (database `db`); `None` once `deadline` passes (`None`: never) or the server
    /// stops. `attempt` runs with no lock of this registry held.
    pub(crate) fn wait_for<T>(
        &self,
        db: usize,
        keys: &[Vec<u8>],
        deadline: Option<Instant>,
        mut attempt: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        // The common case first, without registering or leaving the runtime.
        if let Some(done) = attempt() {
            return Some(done);
        }
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| self.wait_registered(db, keys, deadline, &mut attempt))
            }
            Ok(_) => None,
            Err(_) => self.wait_registered(db, keys, deadline, &mut attempt),
        }
    }

    fn wait_registered<T>(
        &self,
        db: usize,
        keys: &[Vec<u8>],
        deadline: Option<Instant>,
        attempt: &mut impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let _registered = Registration::new(self, db, keys);
        let mut seen = self.state.lock().generation;
        loop {
            // Registered before this try: a write after it bumps the generation.
            if let Some(done) = attempt() {
                return Some(done);
            }
            let mut s = self.state.lock();
            if s.closed {
                return None;
            }
            if s.generation == seen {
                let now = Instant::now();
                let until = match deadline {
                    Some(d) if d <= now => return None,
                    Some(d) => d.min(now + RETRY),
                    None => now + RETRY,
                };
                self.woken.wait_until(&mut s, until);
            }
            seen = s.generation;
            if s.closed || deadline.is_some_and(|d| d <= Instant::now()) {
                drop(s);
                // One last try: a write may have come with the deadline.
                return attempt();
            }
        }
    }
}

/// A waiter's keys, registered while it waits.
struct Registration<'a> {
    waiters: &'a Waiters,
    keys: Vec<(usize, Vec<u8>)>,
}

impl<'a> Registration<'a> {
    fn new(waiters: &'a Waiters, db: usize, keys: &[Vec<u8>]) -> Registration<'a> {
        let keys: Vec<(usize, Vec<u8>)> = keys.iter().map(|k| (db, k.clone())).collect();
        let mut s = waiters.state.lock();
        for k in &keys {
            *s.keys.entry(k.clone()).or_default() += 1;
        }
        waiters.blocked.fetch_add(1, Ordering::AcqRel);
        Registration { waiters, keys }
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let mut s = self.waiters.state.lock();
        for k in &self.keys {
            if let Some(n) = s.keys.get_mut(k) {
                *n -= 1;
                if *n == 0 {
                    s.keys.remove(k);
                }
            }
        }
        self.waiters.blocked.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn a_waiter_returns_when_woken_on_its_key() {
        let w = Arc::new(Waiters::default());
        let ready = Arc::new(AtomicBool::new(false));
        let (w2, r2) = (w.clone(), ready.clone());
        let started = Instant::now();
        let waiter = std::thread::spawn(move || {
            w2.wait_for(0, &[b"k".to_vec()], Some(Instant::now() + Duration::from_secs(30)), || {
                r2.load(Ordering::SeqCst).then_some(7)
            })
        });
        std::thread::sleep(Duration::from_millis(50));
        ready.store(true, Ordering::SeqCst);
        w.wake(0, b"k");
        assert_eq!(waiter.join().unwrap(), Some(7));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(w.blocked.load(Ordering::SeqCst), 0, "unregistered");
        assert!(w.state.lock().keys.is_empty());
    }

    #[test]
    fn a_waiter_times_out_and_a_closed_registry_releases_every_waiter() {
        let w = Arc::new(Waiters::default());
        let started = Instant::now();
        let none: Option<()> =
            w.wait_for(0, &[b"k".to_vec()], Some(Instant::now() + Duration::from_millis(150)), || None);
        assert_eq!(none, None);
        assert!(started.elapsed() >= Duration::from_millis(150));
        let w2 = w.clone();
        let forever = std::thread::spawn(move || w2.wait_for(0, &[b"k".to_vec()], None, || None::<()>));
        std::thread::sleep(Duration::from_millis(50));
        w.close();
        assert_eq!(forever.join().unwrap(), None);
    }
}
