//! A pipeline's runs of like requests, executed together on the connection's task: a run
//! of plain writes (`SET key value`, `MSET`) as one engine write under all their keys'
//! locks, a run of `GET`s as one `multi_get`. Each request still gets its own reply, in
//! order. A run that fails as a whole (a key over the engine's limit, a write that would
//! wait) changed nothing and is run again one request at a time, so each request gets
//! the answer it would get alone.

use super::no_wait;
use super::reply::Reply;
use super::resp::Args;
use super::session::{Server, ServerCounters, Session};
use std::collections::VecDeque;

/// Most requests executed together.
const MOST: usize = 1024;

/// What a request is to a run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `SET key value` or `MSET` with whole pairs: writes that read nothing.
    PlainWrite,
    /// `GET key`.
    Get,
    Other,
}

fn kind(args: &Args) -> Kind {
    match args.first() {
        Some(n) if n.eq_ignore_ascii_case(b"set") && args.len() == 3 => Kind::PlainWrite,
        Some(n) if n.eq_ignore_ascii_case(b"mset") && args.len() >= 3 && args.len() % 2 == 1 => Kind::PlainWrite,
        Some(n) if n.eq_ignore_ascii_case(b"get") && args.len() == 2 => Kind::Get,
        _ => Kind::Other,
    }
}

impl Server {
    /// When the front of `requests` is a run of two or more plain writes, or of two or more
    /// GETs, execute it together (see the module's note), append the replies to `out`,
    /// remove the run and answer `true`; otherwise (or when the run must go one request at
    /// a time) change nothing and answer `false`. Not inside MULTI, where requests queue,
    /// nor for a session the connection layer looks at request by request
    /// ([`Session::is_plain`]).
    pub(super) fn run_together(&self, session: &Session, requests: &mut VecDeque<Args>, out: &mut Vec<u8>) -> bool {
        // The connection layer's checks and records go one request at a time.
        // Keyspace notifications are published request by request (see `notify`).
        if session.multi.is_some() || !session.is_plain() || self.conns.pubsub.events.flags() != 0 {
            return false;
        }
        let Some(first) = requests.front().map(kind) else {
            return false;
        };
        if first == Kind::Other {
            return false;
        }
        let n = requests.iter().take(MOST).take_while(|a| kind(a) == first).count();
        if n < 2 {
            return false;
        }
        // No SWAPDB while the run is served (see `databases`).
        let _databases = self.store.databases().hold();
        let Some(Ok(db)) = self.store.select(session.db) else {
            return false;
        };
        if first == Kind::Get && db.collections().is_some() {
            // A GET of a collection answers WRONGTYPE, which a multi_get cannot tell: the
            // type check of each GET decides (SET replaces a collection in `Batch::put`).
            return false;
        }
        let started = std::time::Instant::now();
        let run = requests.range(..n);
        let replies: Option<Vec<Reply>> = if first == Kind::Get {
            let keys: Vec<&[u8]> = run.filter_map(|a| a.get(1)).map(Vec::as_slice).collect();
            match no_wait::try_run(|| db.get_many(keys)) {
                Some(Ok(values)) => Some(values.into_iter().map(|v| v.map_or(Reply::Null, Reply::Bulk)).collect()),
                _ => None,
            }
        } else {
            let pairs: Vec<(&[u8], &[u8])> = run
                .flat_map(|a| a.get(1..).unwrap_or_default().chunks_exact(2))
                .filter_map(|pair| match pair {
                    [k, v] => Some((k.as_slice(), v.as_slice())),
                    _ => None,
                })
                .collect();
            let _locks = db.lock(pairs.iter().map(|(k, _)| *k));
            let mut batch = db.batch();
            for (k, v) in &pairs {
                batch.put(&db, k, v);
            }
            match no_wait::try_run(|| db.write(batch)) {
                Some(Ok(())) => Some(vec![Reply::OK; n]),
                _ => None,
            }
        };
        let Some(replies) = replies else {
            return false;
        };
        let last = requests.get(n - 1).and_then(|a| a.first()).and_then(|name| super::commands::lookup(name));
        if let Some(spec) = last {
            session.note_ran(spec.name());
        }
        // Each request's share of the run's time, in the per-command statistics.
        let each = started.elapsed() / n as u32;
        for (args, reply) in requests.drain(..n).zip(replies) {
            if let Some(spec) = args.first().and_then(|name| super::commands::lookup(name)) {
                self.counters.by_command.ran(spec, each, &reply);
            }
            reply.encode(session.proto, out);
        }
        ServerCounters::add(&self.counters.commands, n as u64);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<u8>> {
        line.split(' ').map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn only_plain_sets_whole_msets_and_single_gets_join_runs() {
        assert!(kind(&words("SET k v")) == Kind::PlainWrite);
        assert!(kind(&words("mset a 1 b 2")) == Kind::PlainWrite);
        assert!(kind(&words("GET k")) == Kind::Get);
        for other in ["SET k v NX", "SET k v EX 10", "MSET a 1 b", "GET k extra", "MGET a b", "INCR k", "DEL k"] {
            assert!(kind(&words(other)) == Kind::Other, "{other}");
        }
    }
}
