//! Which events a command makes, one match arm per command, and the two hooks dispatch
//! calls around every command. A command's events are published only when it wrote
//! (a command that changed nothing, like an SREM of absent members, publishes nothing),
//! after its write, in Redis's order: `new` for a key it created, its own events, then
//! `del` for a collection it emptied.

use super::{class, writes};
use crate::commands::Spec;
use crate::reply::Reply;
use crate::session::Ctx;
use crate::types;

/// What an event does when its key is gone after the command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gone {
    /// Published anyway.
    Publish,
    /// Published, then `del` (a pop or removal that emptied a collection).
    ThenDel,
    /// `del` instead (a store command with an empty result, an EXPIRE in the past).
    Del,
}

/// One event of a command.
struct Event<'a> {
    key: &'a [u8],
    /// The database, when not the selected one (MOVE's target).
    db: Option<usize>,
    class: u32,
    name: &'static str,
    gone: Gone,
}

fn ev<'a>(key: &'a [u8], class: u32, name: &'static str, gone: Gone) -> Event<'a> {
    Event { key, db: None, class, name, gone }
}

/// What [`before`] saw: the writes made so far on this thread, and which of the command's
/// keys existed (only when `new` events are wanted).
pub(crate) struct Before {
    writes: u64,
    existed: Vec<(Vec<u8>, bool)>,
}

/// Before a command runs: note what [`after`] compares with.
pub(crate) fn before(ctx: &Ctx<'_>, spec: &Spec, args: &[Vec<u8>]) -> Option<Before> {
    let events = &ctx.server.conns.pubsub.events;
    let flags = events.flags();
    if flags == 0 || !spec.is_write() {
        return None;
    }
    let mut existed = Vec::new();
    if events.wants(class::NEW) {
        if let Ok(db) = ctx.selected() {
            for key in crate::commands::keys_of(spec, args) {
                let there = types::lookup(&db, key).is_ok_and(|e| !matches!(e, types::Entry::Absent));
                existed.push((key.to_vec(), there));
            }
        }
    }
    Some(Before { writes: writes(), existed })
}

/// After a command ran: publish its events if it wrote, and watch the deadlines of the
/// keys it wrote.
pub(crate) fn after(ctx: &Ctx<'_>, spec: &Spec, args: &[Vec<u8>], reply: &Reply, before: Option<Before>) {
    let Some(before) = before else { return };
    if writes() == before.writes || matches!(reply, Reply::Error(_)) || crate::no_wait::refused() {
        return;
    }
    let Ok(db) = ctx.selected() else { return };
    let exists = |key: &[u8]| types::lookup(&db, key).is_ok_and(|e| !matches!(e, types::Entry::Absent));
    for (key, existed) in &before.existed {
        if !existed && exists(key) {
            ctx.notify(class::NEW, "new", key);
        }
    }
    let hub = &ctx.server.conns.pubsub;
    let here = ctx.session.db;
    match spec.name() {
        "flushdb" => hub.events.expiring.forget_db(here),
        "flushall" => hub.events.expiring.clear(),
        _ => {}
    }
    let mut watched = Vec::new();
    for e in events_of(spec.name(), args, reply) {
        let gone = e.gone != Gone::Publish && e.db.is_none() && !exists(e.key);
        watched.push(e.key);
        match (e.gone, gone) {
            (Gone::Del, true) => hub.notify(class::GENERIC, "del", e.key, here),
            (Gone::ThenDel, true) => {
                hub.notify(e.class, e.name, e.key, here);
                hub.notify(class::GENERIC, "del", e.key, here);
            }
            _ => hub.notify(e.class, e.name, e.key, e.db.unwrap_or(here)),
        }
    }
    // Every key written: a deadline given, kept or gone (DEL, RENAME's source).
    if hub.events.wants(class::EXPIRED) {
        watched.extend(crate::commands::keys_of(spec, args));
        for key in watched {
            hub.events.expiring.watch(&db, key);
        }
    }
}

/// The key at `args[i]`.
fn at(args: &[Vec<u8>], i: usize) -> &[u8] {
    args.get(i).map(Vec::as_slice).unwrap_or_default()
}

/// Whether an option among `args[from..]` is one of `words` (any case).
fn has(args: &[Vec<u8>], from: usize, words: &[&str]) -> bool {
    args.iter().skip(from).any(|a| words.iter().any(|w| a.eq_ignore_ascii_case(w.as_bytes())))
}

/// The key a multi-key pop (LMPOP, ZMPOP) popped from: the first element of its reply.
fn popped_from(reply: &Reply) -> Option<&[u8]> {
    match reply {
        Reply::Array(items) => match items.first() {
            Some(Reply::Bulk(k)) => Some(k.as_slice()),
            _ => None,
        },
        _ => None,
    }
}

/// LEFT or RIGHT at `args[i]`: `left` or `right`.
fn side<'n>(args: &[Vec<u8>], i: usize, left: &'n str, right: &'n str) -> &'n str {
    if at(args, i).eq_ignore_ascii_case(b"left") {
        left
    } else {
        right
    }
}

/// The events of the command `name` run with `args` that answered `reply` (and wrote).
/// DEL publishes its own (they depend on what each key held).
#[rustfmt::skip]
fn events_of<'a>(name: &str, args: &'a [Vec<u8>], reply: &'a Reply) -> Vec<Event<'a>> {
    use class::{GENERIC as G, HASH as H, LIST as L, SET as S, STRING as STR, ZSET as Z};
    use Gone::{Del, Publish as P, ThenDel};
    let k1 = at(args, 1);
    let one = |class, event| vec![ev(k1, class, event, P)];
    let emptied = |class, event| vec![ev(k1, class, event, ThenDel)];
    let store = |class, event| vec![ev(k1, class, event, Del)];
    match name {
        "set" => {
            let mut v = one(STR, "set");
            if has(args, 3, &["ex", "px", "exat", "pxat"]) {
                v.push(ev(k1, G, "expire", Del));
            }
            v
        }
        "setex" | "psetex" => vec![ev(k1, STR, "set", P), ev(k1, G, "expire", Del)],
        "getset" | "setnx" => one(STR, "set"),
        "mset" | "msetnx" => args.iter().skip(1).step_by(2).map(|k| ev(k, STR, "set", P)).collect(),
        "append" => one(STR, "append"),
        "incr" | "decr" | "incrby" | "decrby" => one(STR, "incrby"),
        "incrbyfloat" => one(STR, "incrbyfloat"),
        "setrange" => one(STR, "setrange"),
        "setbit" | "bitfield" => one(STR, "setbit"),
        "bitop" => vec![ev(at(args, 2), STR, "set", Del)],
        "getdel" => one(G, "del"),
        "getex" if has(args, 2, &["persist"]) => one(G, "persist"),
        "getex" => vec![ev(k1, G, "expire", Del)],
        "expire" | "pexpire" | "expireat" | "pexpireat" => vec![ev(k1, G, "expire", Del)],
        "persist" => one(G, "persist"),
        "rename" | "renamenx" => vec![ev(k1, G, "rename_from", P), ev(at(args, 2), G, "rename_to", P)],
        "copy" => vec![ev(at(args, 2), G, "copy_to", P)],
        "hset" | "hmset" | "hsetnx" => one(H, "hset"),
        "hdel" => emptied(H, "hdel"),
        "hincrby" => one(H, "hincrby"),
        "hincrbyfloat" => one(H, "hincrbyfloat"),
        "lpush" | "lpushx" => one(L, "lpush"),
        "rpush" | "rpushx" => one(L, "rpush"),
        "lpop" => emptied(L, "lpop"),
        "rpop" => emptied(L, "rpop"),
        "lset" => one(L, "lset"),
        "ltrim" => emptied(L, "ltrim"),
        "lrem" => emptied(L, "lrem"),
        "linsert" => one(L, "linsert"),
        "rpoplpush" => vec![ev(k1, L, "rpop", ThenDel), ev(at(args, 2), L, "lpush", P)],
        "lmove" => vec![
            ev(k1, L, side(args, 3, "lpop", "rpop"), ThenDel),
            ev(at(args, 2), L, side(args, 4, "lpush", "rpush"), P),
        ],
        "lmpop" => popped_from(reply).map_or_else(Vec::new, |k| {
            vec![ev(k, L, if has(args, 2, &["left"]) { "lpop" } else { "rpop" }, ThenDel)]
        }),
        // The blocking pops publish what their non-blocking forms do, once they pop.
        "blpop" | "brpop" => popped_from(reply).map_or_else(Vec::new, |k| {
            vec![ev(k, L, if name == "blpop" { "lpop" } else { "rpop" }, ThenDel)]
        }),
        "brpoplpush" => vec![ev(k1, L, "rpop", ThenDel), ev(at(args, 2), L, "lpush", P)],
        "blmove" => vec![
            ev(k1, L, side(args, 3, "lpop", "rpop"), ThenDel),
            ev(at(args, 2), L, side(args, 4, "lpush", "rpush"), P),
        ],
        "blmpop" => popped_from(reply).map_or_else(Vec::new, |k| {
            vec![ev(k, L, if has(args, 3, &["left"]) { "lpop" } else { "rpop" }, ThenDel)]
        }),
        "bzpopmin" | "bzpopmax" => popped_from(reply).map_or_else(Vec::new, |k| {
            vec![ev(k, Z, if name == "bzpopmin" { "zpopmin" } else { "zpopmax" }, ThenDel)]
        }),
        "bzmpop" => popped_from(reply).map_or_else(Vec::new, |k| {
            vec![ev(k, Z, if has(args, 3, &["min"]) { "zpopmin" } else { "zpopmax" }, ThenDel)]
        }),
        "sadd" => one(S, "sadd"),
        "srem" => emptied(S, "srem"),
        "spop" => emptied(S, "spop"),
        "smove" => vec![ev(k1, S, "srem", ThenDel), ev(at(args, 2), S, "sadd", P)],
        "sinterstore" => store(S, "sinterstore"),
        "sunionstore" => store(S, "sunionstore"),
        "sdiffstore" => store(S, "sdiffstore"),
        "zadd" if has(args, 2, &["incr"]) => one(Z, "zincr"),
        "zadd" => one(Z, "zadd"),
        "zincrby" => one(Z, "zincr"),
        "zrem" => emptied(Z, "zrem"),
        "zremrangebyscore" => emptied(Z, "zremrangebyscore"),
        "zremrangebyrank" => emptied(Z, "zremrangebyrank"),
        "zremrangebylex" => emptied(Z, "zremrangebylex"),
        "zpopmin" => emptied(Z, "zpopmin"),
        "zpopmax" => emptied(Z, "zpopmax"),
        "zmpop" => popped_from(reply).map_or_else(Vec::new, |k| {
            vec![ev(k, Z, if has(args, 2, &["min"]) { "zpopmin" } else { "zpopmax" }, ThenDel)]
        }),
        "zrangestore" => store(Z, "zrangestore"),
        "zunionstore" => store(Z, "zunionstore"),
        "zinterstore" => store(Z, "zinterstore"),
        "zdiffstore" => store(Z, "zdiffstore"),
        // Only SORT ... STORE writes: its destination is the second key.
        "sort" => crate::commands::sort_keys(args).get(1).map_or_else(Vec::new, |dst| vec![ev(dst, L, "sortstore", Del)]),
        "move" => vec![ev(k1, G, "move_from", P), Event {
            key: k1,
            db: crate::commands::parse_int(at(args, 2)).and_then(|n| usize::try_from(n).ok()),
            class: G,
            name: "move_to",
            gone: P,
        }],
        _ => Vec::new(),
    }
}
