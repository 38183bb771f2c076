//! `expired` events: the keys written with a deadline while `x` events are wanted are
//! watched, and a background task publishes `expired` for each one whose deadline passed
//! with no write to it since (Redis's active expiry, for the keys notifications care
//! about). A key's latest write replaces what is watched of it, so a key deleted, renamed
//! or given another deadline meanwhile is not reported expired.

use crate::session::Server;
use crate::store::Selected;
use parking_lot::Mutex;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// How often the background task looks for passed deadlines (Redis's `hz 10`).
const TICK: Duration = Duration::from_millis(100);

/// (deadline in ms since the epoch, database, key).
type Due = (i64, usize, Vec<u8>);

/// The watched keys.
#[derive(Debug, Default)]
pub(crate) struct Expiring {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Soonest first; an entry no longer in `current` (or with another deadline) is stale.
    queue: BinaryHeap<Reverse<Due>>,
    /// (database, key) → its deadline as last written.
    current: HashMap<(usize, Vec<u8>), i64>,
}

impl Expiring {
    /// Note `key`'s deadline after a write to it (none, or absent: no longer watched).
    pub(crate) fn watch(&self, db: &Selected<'_>, key: &[u8]) {
        let deadline = crate::commands::expiry::deadline_of(db, key).ok().and_then(Result::ok).flatten();
        self.note(db.index(), key, deadline);
    }

    fn note(&self, db: usize, key: &[u8], deadline: Option<i64>) {
        let mut s = self.state.lock();
        match deadline {
            Some(d) => {
                s.current.insert((db, key.to_vec()), d);
                s.queue.push(Reverse((d, db, key.to_vec())));
            }
            None => {
                s.current.remove(&(db, key.to_vec()));
            }
        }
    }

    /// Forget every key (`x` events turned off, FLUSHALL).
    pub(crate) fn clear(&self) {
        let mut s = self.state.lock();
        s.queue.clear();
        s.current.clear();
    }

    /// Forget the keys of database `db` (FLUSHDB).
    pub(crate) fn forget_db(&self, db: usize) {
        self.state.lock().current.retain(|(n, _), _| *n != db);
    }

    /// SWAPDB `a` `b`: the keys watched in each database now live in the other, and are
    /// checked and reported there.
    pub(crate) fn swap_dbs(&self, a: usize, b: usize) {
        let other = |n: usize| {
            if n == a {
                b
            } else if n == b {
                a
            } else {
                n
            }
        };
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.current = std::mem::take(&mut s.current).into_iter().map(|((n, k), d)| ((other(n), k), d)).collect();
        s.queue =
            std::mem::take(&mut s.queue).into_iter().map(|Reverse((d, n, k))| Reverse((d, other(n), k))).collect();
    }

    /// Take the keys whose deadline is at or before `now_ms` and was not replaced since.
    fn take_due(&self, now_ms: i64) -> Vec<(usize, Vec<u8>)> {
        let mut s = self.state.lock();
        let mut due = Vec::new();
        while let Some(Reverse((d, _, _))) = s.queue.peek() {
            if *d > now_ms {
                break;
            }
            let Some(Reverse((d, db, key))) = s.queue.pop() else { break };
            let id = (db, key);
            if s.current.get(&id) == Some(&d) {
                s.current.remove(&id);
                due.push(id);
            }
        }
        due
    }
}

/// Publish `expired` for every watched key whose deadline passed, every [`TICK`], until
/// the task is aborted.
pub(crate) async fn run(server: Arc<Server>) {
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let hub = &server.conns.pubsub;
        let due = hub.events.expiring.take_due(crate::commands::expiry::now_ms());
        if due.is_empty() {
            continue;
        }
        let s = server.clone();
        // The check reads the engine, which may wait: on the blocking pool.
        let _ = tokio::task::spawn_blocking(move || publish_expired(&s, due)).await;
    }
}

/// Publish `expired` for each of `due` that is indeed gone (a key written by a path that
/// does not note it may have been given a later deadline).
fn publish_expired(server: &Server, due: Vec<(usize, Vec<u8>)>) {
    let hub = &server.conns.pubsub;
    for (n, key) in due {
        let Some(Ok(db)) = server.store.select(n) else { continue };
        let _lock = db.lock([key.as_slice()]);
        match crate::commands::expiry::deadline_of(&db, &key) {
            Ok(Err(())) => hub.notify(super::class::EXPIRED, "expired", &key, n),
            Ok(Ok(Some(later))) => hub.events.expiring.note(n, &key, Some(later)),
            Ok(Ok(None)) | Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_latest_deadline_of_a_key_comes_due() {
        let e = Expiring::default();
        e.note(0, b"a", Some(10));
        e.note(0, b"a", Some(30));
        e.note(1, b"b", Some(20));
        e.note(0, b"c", Some(5));
        e.note(0, b"c", None);
        assert_eq!(e.take_due(25), vec![(1, b"b".to_vec())], "a's first deadline was replaced, c's removed");
        assert_eq!(e.take_due(25), Vec::<(usize, Vec<u8>)>::new());
        assert_eq!(e.take_due(30), vec![(0, b"a".to_vec())]);
    }

    #[test]
    fn a_swap_moves_the_watched_keys_to_the_other_database() {
        let e = Expiring::default();
        e.note(0, b"a", Some(10));
        e.note(1, b"b", Some(20));
        e.note(2, b"c", Some(30));
        e.swap_dbs(0, 1);
        e.note(0, b"b", None);
        assert_eq!(e.take_due(30), vec![(1, b"a".to_vec()), (2, b"c".to_vec())], "b moved to 0, then dropped there");
    }
}
