//! MULTI, EXEC, DISCARD, WATCH, UNWATCH, with Redis's semantics.
//!
//! Between MULTI and EXEC a connection's commands are queued (`+QUEUED`); an unknown
//! command or a wrong arity is answered at once and makes EXEC abort (`-EXECABORT`).
//!
//! EXEC runs the queue as one engine transaction: each command's reads go through it (so
//! they see the queue's earlier writes) and its writes are buffered in it; the commit
//! applies them as one atomic batch, so no reader sees half of the queue. EXEC holds the
//! stripe locks of every key the queue names (and every watched key) from start to commit,
//! so the read-modify-write commands of other connections, which hold the same locks,
//! neither interleave with it nor lose its writes; a commit that still conflicts (a FLUSHDB,
//! which takes no key lock) runs the queue again, a bounded number of times.
//!
//! WATCH begins an engine transaction and reads each watched key in it for update; EXEC
//! commits that transaction, which writes nothing: the engine's commit check fails with a
//! conflict exactly when someone (another connection, or this one) wrote a watched key
//! since, and EXEC then answers nil. No per-key version is kept: the engine already
//! answers the question at commit, and a plain write pays nothing for it. The check runs
//! under the watched keys' locks, so no write slips between it and the queue's commit.
//! Expiry writes nothing, so WATCH also notes each key's deadline: a key that expired
//! since WATCH counts as changed, as in Redis. A watch older than the engine's
//! transaction age bound still works (the commit check needs no old versions), but the
//! check may answer "changed" when it can no longer rule a write out (the writes since
//! were flushed to tables): EXEC answers nil, and the client retries, as after a change.
//!
//! Cluster mode refuses MULTI and WATCH: a queue would have to become one replicated
//! command, which is not built.

use super::expiry::{deadline_of, now_ms};
use super::{engine_error, lookup, Args};
use crate::durability::SyncMode;
use crate::reply::Reply;
use crate::session::{Ctx, Queued, ServerCounters};
use shamba::{Transaction, TransactionOptions};

/// How many times EXEC runs its queue when the commit meets a write that took no lock.
const EXEC_ATTEMPTS: usize = 16;

/// What WATCH watches: its transaction, and each key with its database and its deadline
/// (ms since the epoch) when watched.
#[derive(Debug)]
pub(crate) struct Watch {
    tx: Transaction,
    keys: Vec<(usize, Vec<u8>, Option<i64>)>,
    /// Per watched key: its database's swap count and whether the key existed, when
    /// watched (a SWAPDB touches the keys that exist on either side, as in Redis).
    swaps: Vec<(u64, bool)>,
    /// FLUSHDB/FLUSHALL count when the first key was watched.
    flushes: u64,
}

impl Watch {
    /// How many keys are watched (CLIENT LIST's `watch`).
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }
}

/// Whether the command runs at once even between MULTI and EXEC.
pub(super) fn runs_at_once(name: &str) -> bool {
    matches!(name, "multi" | "exec" | "discard" | "watch" | "unwatch" | "quit")
}

/// Whether `name` is refused between MULTI and EXEC (and makes EXEC abort), as Redis
/// refuses SAVE and SHUTDOWN there (SHUTDOWN is refused even though it is not served).
pub(super) fn refused_in_multi(name: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b"save") || name.eq_ignore_ascii_case(b"shutdown")
}

/// Queue a command for EXEC.
pub(super) fn queue(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    if let Some(q) = &mut ctx.session.multi {
        q.commands.push(args.to_vec());
    }
    Reply::Simple("QUEUED")
}

fn refuse_in_cluster(ctx: &Ctx<'_>, what: &str) -> Result<(), Reply> {
    match ctx.server.store.cluster() {
        Some(_) => Err(Reply::err(format!("{what} is not supported in cluster mode"))),
        None => Ok(()),
    }
}

pub(super) fn multi(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    if ctx.session.multi.is_some() {
        return Reply::err("MULTI calls can not be nested");
    }
    if let Err(r) = refuse_in_cluster(ctx, "MULTI") {
        return r;
    }
    ctx.session.multi = Some(Queued::default());
    Reply::OK
}

pub(super) fn discard(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    if ctx.session.multi.take().is_none() {
        return Reply::err("DISCARD without MULTI");
    }
    ctx.session.watch = None;
    Reply::OK
}

pub(super) fn watch(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    if ctx.session.multi.is_some() {
        return Reply::err("WATCH inside MULTI is not allowed");
    }
    if let Err(r) = refuse_in_cluster(ctx, "WATCH") {
        return r;
    }
    let db = match ctx.selected() {
        Ok(db) => db,
        Err(r) => return r,
    };
    let watch = ctx.session.watch.get_or_insert_with(|| Watch {
        tx: ctx.server.store.db().transaction(),
        keys: Vec::new(),
        swaps: Vec::new(),
        flushes: ServerCounters::get(&ctx.server.counters.flushes),
    });
    for key in args.iter().skip(1) {
        if let Err(e) = watch.tx.keyspace(db.keyspace()).get_for_update(key) {
            return engine_error(e);
        }
        // A collection's every write rewrites its metadata: watching that entry watches
        // the collection (from the database's first collection on).
        if let Some(c) = db.collections() {
            if let Err(e) = watch.tx.keyspace(&c.meta).get_for_update(key) {
                return engine_error(e);
            }
        }
        let deadline = match deadline_of(&db, key) {
            Ok(d) => d.ok().flatten(),
            Err(e) => return engine_error(e),
        };
        let existed = match crate::types::lookup(&db, key) {
            Ok(e) => e != crate::types::Entry::Absent,
            Err(e) => return engine_error(e),
        };
        watch.swaps.push((ctx.server.store.databases().swaps(db.index()), existed));
        watch.keys.push((db.index(), key.clone(), deadline));
    }
    Reply::OK
}

pub(super) fn unwatch(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    ctx.session.watch = None;
    Reply::OK
}

/// The keys `args` names (by its command's key positions), each with the database it is
/// in; `db` follows the queue's SELECTs.
fn keys_of<'k>(args: &'k Args, db: &mut usize, out: &mut Vec<(usize, &'k [u8])>) {
    let Some(spec) = args.first().and_then(|n| lookup(n)) else {
        return;
    };
    if spec.name == "select" {
        if let Some(n) = args.get(1).and_then(|a| super::parse_int(a)).and_then(|n| usize::try_from(n).ok()) {
            *db = n;
        }
        return;
    }
    out.extend(super::keys_of(spec, args).into_iter().map(|k| (*db, k)));
}

/// Whether a SWAPDB since WATCH touched a watched key: one that existed when watched,
/// or exists now, in a database swapped since.
fn swapped_touched(store: &crate::store::Store, w: &Watch) -> bool {
    w.keys.iter().zip(&w.swaps).any(|((db, key, _), &(swaps, existed))| {
        if store.databases().swaps(*db) == swaps {
            return false;
        }
        existed
            || store
                .select(*db)
                .and_then(Result::ok)
                .is_some_and(|s| crate::types::lookup(&s, key).is_ok_and(|e| e != crate::types::Entry::Absent))
    })
}

/// Whether a conflict at EXEC can be put down to a FLUSHDB or FLUSHALL that found none of
/// the watched keys: one ran since WATCH, no watched key existed when watched and none exists
/// now (Redis's flushes touch only the keys they delete). A key both written and deleted
/// again in the same window is then missed.
fn only_flushed(server: &crate::session::Server, w: &Watch) -> bool {
    if ServerCounters::get(&server.counters.flushes) == w.flushes || w.swaps.iter().any(|(_, existed)| *existed) {
        return false;
    }
    w.keys.iter().all(|(db, key, _)| {
        server
            .store
            .select(*db)
            .and_then(Result::ok)
            .is_some_and(|s| crate::types::lookup(&s, key).is_ok_and(|e| e == crate::types::Entry::Absent))
    })
}

pub(super) fn exec(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    let Some(queued) = ctx.session.multi.take() else {
        return Reply::err("EXEC without MULTI");
    };
    let watch = ctx.session.watch.take();
    if queued.refused {
        return Reply::Error("EXECABORT Transaction discarded because of previous errors.".into());
    }
    let server = ctx.server;
    let store = &server.store;
    let mut keys = Vec::new();
    let mut db = ctx.session.db;
    for args in &queued.commands {
        keys_of(args, &mut db, &mut keys);
    }
    if let Some(w) = &watch {
        keys.extend(w.keys.iter().map(|(db, k, _)| (*db, k.as_slice())));
    }
    let _locks = store.lock_stripes(keys);
    if let Some(w) = watch {
        let now = now_ms();
        if w.keys.iter().any(|(_, _, deadline)| deadline.is_some_and(|d| d <= now)) {
            return Reply::Null;
        }
        if swapped_touched(store, &w) {
            return Reply::Null;
        }
        let flushed_only = only_flushed(server, &w);
        match w.tx.commit() {
            Ok(()) => {}
            Err(e) if e.is_conflict() && !flushed_only => return Reply::Null,
            Err(e) if e.is_conflict() => {}
            Err(e) => return engine_error(e),
        }
    }
    let database = ctx.session.db;
    let mut attempt = 0;
    loop {
        attempt += 1;
        ctx.session.db = database;
        let sync = store.sync_mode() == SyncMode::Always;
        let tx = store.db().transaction_with(TransactionOptions { sync, ..TransactionOptions::default() });
        let mut replies = Vec::with_capacity(queued.commands.len());
        for args in &queued.commands {
            let mut inner = Ctx { server, session: &mut *ctx.session, tx: Some(&tx) };
            replies.push(super::dispatch(&mut inner, args));
        }
        match tx.commit() {
            Ok(()) => {
                if !replies.is_empty() {
                    store.tracker().wrote();
                }
                return Reply::Array(replies);
            }
            Err(e) if e.is_conflict() && attempt < EXEC_ATTEMPTS => continue,
            Err(e) => return engine_error(e),
        }
    }
}
