//! The blocking pops: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX,
//! BZMPOP. Each tries its non-blocking form under its keys' locks; when nothing is there
//! it joins its keys' queues in the server's `blocking::Waiters` with no lock held, and
//! tries again when its turn comes after a write to one of its keys, until its timeout
//! (0: forever). Inside MULTI/EXEC it never waits, as in Redis.

use super::list::{move_element, mpop, pop_elements};
use super::zset::{parse_mpop, pop, score_reply};
use super::{arg, is, syntax_error, Args, Spec, W};
use crate::blocking::Unblock;
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::Selected;
use std::time::{Duration, Instant};

/// The blocking commands.
#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "blpop", arity: -3, flags: W, keys: (1, -2, 1), group: "list", summary: "LPOP from the first non-empty list, waiting up to a timeout", run: blpop },
    Spec { name: "brpop", arity: -3, flags: W, keys: (1, -2, 1), group: "list", summary: "RPOP from the first non-empty list, waiting up to a timeout", run: brpop },
    Spec { name: "blmove", arity: 6, flags: W, keys: (1, 2, 1), group: "list", summary: "LMOVE, waiting up to a timeout", run: blmove },
    Spec { name: "brpoplpush", arity: 4, flags: W, keys: (1, 2, 1), group: "list", summary: "RPOPLPUSH, waiting up to a timeout", run: brpoplpush },
    Spec { name: "blmpop", arity: -5, flags: W, keys: (0, 0, 0), group: "list", summary: "LMPOP, waiting up to a timeout", run: blmpop },
    Spec { name: "bzpopmin", arity: -3, flags: W, keys: (1, -2, 1), group: "sorted-set", summary: "ZPOPMIN from the first non-empty sorted set, waiting up to a timeout", run: bzpopmin },
    Spec { name: "bzpopmax", arity: -3, flags: W, keys: (1, -2, 1), group: "sorted-set", summary: "ZPOPMAX from the first non-empty sorted set, waiting up to a timeout", run: bzpopmax },
    Spec { name: "bzmpop", arity: -5, flags: W, keys: (0, 0, 0), group: "sorted-set", summary: "ZMPOP, waiting up to a timeout", run: bzmpop },
];

/// A timeout argument in seconds as Redis reads one: when it ends (`None`: never).
fn deadline(word: &[u8]) -> Result<Option<Instant>, Reply> {
    let Some(secs) = std::str::from_utf8(word).ok().and_then(|s| s.parse::<f64>().ok()).filter(|s| s.is_finite())
    else {
        return Err(Reply::err("timeout is not a float or out of range"));
    };
    if secs < 0.0 {
        return Err(Reply::err("timeout is negative"));
    }
    if secs == 0.0 {
        return Ok(None);
    }
    if secs * 1000.0 > i64::MAX as f64 {
        return Err(Reply::err("timeout is out of range"));
    }
    // Past the end of `Instant`: as good as never.
    Ok(Duration::try_from_secs_f64(secs).ok().and_then(|d| Instant::now().checked_add(d)))
}

/// Try `attempt` and, unless it answered or the command runs inside a transaction, wait
/// for writes to `keys` and try again until `deadline`; a null array on a timeout (every
/// blocking pop's, BLMOVE's too, as in Redis). `attempt` is told whether it is the first
/// try (see [`waited_key_error`]).
fn block(
    ctx: &Ctx<'_>,
    keys: &[Vec<u8>],
    deadline: Option<Instant>,
    mut attempt: impl FnMut(bool, &Selected<'_>) -> Option<Reply>,
) -> Reply {
    // Each try holds the databases and finds the selected one again: a SWAPDB while the
    // client waits changes what its keys hold, as in Redis.
    let mut try_once = |first: bool| {
        let _databases = ctx.server.store.databases().hold();
        match ctx.selected() {
            Ok(db) => attempt(first, &db),
            Err(r) => Some(r),
        }
    };
    if ctx.tx.is_some() {
        return try_once(true).unwrap_or(Reply::NullArray);
    }
    let mut first = true;
    // A client killed or gone while it waits (CLIENT KILL, or its connection closed: see
    // `connection`) stops waiting, and if its turn comes first it pops nothing nobody
    // would receive.
    let client = ctx.session.client.clone();
    let gone = || client.as_ref().is_some_and(|c| c.is_killed());
    let tries = || {
        if !first && gone() {
            return Some(Reply::NullArray);
        }
        let r = try_once(first);
        first = false;
        r
    };
    match ctx.server.waiters.wait_for(Some(ctx.session.id), ctx.session.db, keys, deadline, gone, tries) {
        Ok(r) => r.unwrap_or(Reply::NullArray),
        Err(_) => Reply::Error("UNBLOCKED client unblocked via CLIENT UNBLOCK".into()),
    }
}

/// Whether `spec` is one of the blocking commands (they hold the databases only while
/// they try, see [`block`]).
pub(super) fn is_blocking(spec: &Spec) -> bool {
    SPECS.iter().any(|b| b.name == spec.name)
}

/// Requests read together by a connection: each blocking command among them takes its
/// place in line (see `blocking::Waiters::arrive`); whether there was one.
pub(crate) fn arrive(
    server: &crate::session::Server,
    client: u64,
    requests: &std::collections::VecDeque<Vec<Vec<u8>>>,
) -> bool {
    let mut arrived = false;
    for r in requests {
        if r.first().and_then(|name| super::lookup(name)).is_some_and(|spec| SPECS.iter().any(|b| b.name == spec.name))
        {
            server.waiters.arrive(client);
            arrived = true;
        }
    }
    arrived
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 if the client was blocked (its wait ends as on a
/// timeout, or with the error `UNBLOCKED`), 0 if not.
pub(super) fn client_unblock(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    if !(3..=4).contains(&args.len()) {
        return Reply::err("wrong number of arguments for 'client|unblock' command");
    }
    let Some(id) = std::str::from_utf8(arg(args, 2)).ok().and_then(|s| s.parse::<u64>().ok()) else {
        return Reply::err("value is not an integer or out of range");
    };
    let how = match args.get(3) {
        None => Unblock::Timeout,
        Some(w) if is(w, "TIMEOUT") => Unblock::Timeout,
        Some(w) if is(w, "ERROR") => Unblock::Error,
        Some(_) => return Reply::err("CLIENT UNBLOCK reason should be TIMEOUT or ERROR"),
    };
    Reply::Int(i64::from(ctx.server.waiters.unblock(id, how)))
}

/// The answer to an error about a key the client waits on: WRONGTYPE ends the command on
/// the first try only; once blocked, a client keeps waiting while its key holds another
/// type, as in Redis.
fn waited_key_error(first: bool, r: Reply) -> Option<Reply> {
    let wrong_type = matches!(&r, Reply::Error(e) if e.starts_with("WRONGTYPE"));
    (first || !wrong_type).then_some(r)
}

/// The keys and the deadline of `key... timeout`.
fn keys_and_deadline(args: &Args) -> Result<(Vec<Vec<u8>>, Option<Instant>), Reply> {
    let words = args.get(1..).unwrap_or_default();
    let (last, keys) = words.split_last().ok_or_else(syntax_error)?;
    Ok((keys.to_vec(), deadline(last)?))
}

fn list_pop(ctx: &mut Ctx<'_>, args: &Args, back: bool) -> Reply {
    let (keys, deadline) = match keys_and_deadline(args) {
        Ok(k) => k,
        Err(r) => return r,
    };
    block(ctx, &keys, deadline, |first, db| {
        let _lock = db.lock(keys.iter().map(Vec::as_slice));
        for key in &keys {
            match pop_elements(db, key, back, 1) {
                Err(r) => return waited_key_error(first, r),
                Ok(Some(popped)) => {
                    if let Some(e) = popped.into_iter().next() {
                        return Some(Reply::Array(vec![Reply::Bulk(key.clone()), Reply::Bulk(e)]));
                    }
                }
                Ok(None) => {}
            }
        }
        None
    })
}

fn blpop(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    list_pop(ctx, args, false)
}

fn brpop(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    list_pop(ctx, args, true)
}

fn moving(ctx: &mut Ctx<'_>, src: &[u8], dst: &[u8], from_back: bool, to_back: bool, timeout: &[u8]) -> Reply {
    let deadline = match deadline(timeout) {
        Ok(d) => d,
        Err(r) => return r,
    };
    let server = ctx.server;
    block(ctx, &[src.to_vec()], deadline, |first, db| {
        let _lock = db.lock([src, dst]);
        // The source is the key waited on; a destination of another type is an error
        // whenever it is found.
        if let Err(r) = super::list::read_list(db, src) {
            return waited_key_error(first, r);
        }
        match move_element(db, src, dst, from_back, to_back) {
            Err(r) => Some(r),
            Ok(Some(e)) => {
                server.waiters.wake(db.index(), dst);
                Some(Reply::Bulk(e))
            }
            Ok(None) => None,
        }
    })
}

fn blmove(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let end = |w: &[u8]| {
        if is(w, "LEFT") {
            Some(false)
        } else if is(w, "RIGHT") {
            Some(true)
        } else {
            None
        }
    };
    let (Some(from_back), Some(to_back)) = (end(arg(args, 3)), end(arg(args, 4))) else {
        return syntax_error();
    };
    moving(ctx, arg(args, 1), arg(args, 2), from_back, to_back, arg(args, 5))
}

fn brpoplpush(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    moving(ctx, arg(args, 1), arg(args, 2), true, false, arg(args, 3))
}

fn blmpop(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let deadline = match deadline(arg(args, 1)) {
        Ok(d) => d,
        Err(r) => return r,
    };
    let (keys, back, count) = match parse_mpop(args.get(2..).unwrap_or_default(), "LEFT", "RIGHT") {
        Ok(p) => p,
        Err(r) => return r,
    };
    block(ctx, &keys, deadline, |first, db| {
        let _lock = db.lock(keys.iter().map(Vec::as_slice));
        mpop(db, &keys, back, count).unwrap_or_else(|r| waited_key_error(first, r))
    })
}

fn zset_pop(ctx: &mut Ctx<'_>, args: &Args, max: bool) -> Reply {
    let (keys, deadline) = match keys_and_deadline(args) {
        Ok(k) => k,
        Err(r) => return r,
    };
    block(ctx, &keys, deadline, |first, db| {
        let _lock = db.lock(keys.iter().map(Vec::as_slice));
        for key in &keys {
            match pop(db, key, max, 1) {
                Err(r) => return waited_key_error(first, r),
                Ok(popped) => {
                    if let Some((m, s)) = popped.into_iter().next() {
                        return Some(Reply::Array(vec![Reply::Bulk(key.clone()), Reply::Bulk(m), score_reply(s)]));
                    }
                }
            }
        }
        None
    })
}

fn bzpopmin(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    zset_pop(ctx, args, false)
}

fn bzpopmax(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    zset_pop(ctx, args, true)
}

fn bzmpop(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let deadline = match deadline(arg(args, 1)) {
        Ok(d) => d,
        Err(r) => return r,
    };
    let (keys, max, count) = match parse_mpop(args.get(2..).unwrap_or_default(), "MIN", "MAX") {
        Ok(p) => p,
        Err(r) => return r,
    };
    block(ctx, &keys, deadline, |first, db| {
        let _lock = db.lock(keys.iter().map(Vec::as_slice));
        for key in &keys {
            match pop(db, key, max, count) {
                Err(r) => return waited_key_error(first, r),
                Ok(popped) if !popped.is_empty() => {
                    let pairs =
                        popped.into_iter().map(|(m, s)| Reply::Array(vec![Reply::Bulk(m), score_reply(s)])).collect();
                    return Some(Reply::Array(vec![Reply::Bulk(key.clone()), Reply::Array(pairs)]));
                }
                Ok(_) => {}
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_read_as_redis_reads_them() {
        assert_eq!(deadline(b"0"), Ok(None));
        assert!(deadline(b"0.5").unwrap().is_some());
        assert_eq!(deadline(b"-1"), Err(Reply::err("timeout is negative")));
        assert_eq!(deadline(b"abc"), Err(Reply::err("timeout is not a float or out of range")));
        assert_eq!(deadline(b"1e300"), Err(Reply::err("timeout is out of range")));
    }
}
