//! String commands: GET, SET (with its expiry options, see `expiry`), GETSET, MGET, MSET, INCR and friends, APPEND, STRLEN.
//! Every write holds its keys' stripe locks from read to write (see `store`).

use super::expiry::{deadline_of, refuse_in_cluster, time_of, Unit};
use super::{arg, engine_error, is, not_an_integer, parse_int, selected, syntax_error, wrong_arity, Args};
use crate::reply::Reply;
use crate::session::Ctx;

fn bulk_or_null(v: Option<Vec<u8>>) -> Reply {
    v.map_or(Reply::Null, Reply::Bulk)
}

pub(super) fn get(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let db = selected!(ctx);
    match db.get(arg(args, 1)) {
        Ok(Some(v)) => Reply::Bulk(v),
        // A miss probes for a collection (WRONGTYPE) when the database ever held one.
        Ok(None) if db.collections().is_some() => crate::types::absent_string(&db, arg(args, 1)),
        Ok(None) => Reply::Null,
        Err(e) => engine_error(e),
    }
}

/// SET's options.
#[derive(Default)]
struct SetOptions {
    nx: bool,
    xx: bool,
    get: bool,
    keep_ttl: bool,
    /// EX, PX, EXAT or PXAT: the deadline, ms since the epoch.
    expires: Option<i64>,
}

fn parse_set_options(words: &Args) -> Result<SetOptions, Reply> {
    let mut o = SetOptions::default();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if is(w, "NX") && !o.xx {
            o.nx = true;
        } else if is(w, "XX") && !o.nx {
            o.xx = true;
        } else if is(w, "GET") {
            o.get = true;
        } else if is(w, "KEEPTTL") && o.expires.is_none() {
            o.keep_ttl = true;
        } else if let (Some(unit), Some(n), false, None) = (Unit::of(w), words.get(i + 1), o.keep_ttl, o.expires) {
            o.expires = Some(unit.deadline(n, "set")?);
            i += 1;
        } else {
            return Err(syntax_error());
        }
        i += 1;
    }
    Ok(o)
}

/// SET key value [NX|XX] [GET] [EX n|PX n|EXAT t|PXAT t|KEEPTTL]: a SET without KEEPTTL
/// clears the key's deadline, as in Redis.
pub(super) fn set(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let opts = match parse_set_options(args.get(3..).unwrap_or_default()) {
        Ok(o) => o,
        Err(r) => return r,
    };
    if opts.expires.is_some() {
        if let Err(r) = refuse_in_cluster(ctx) {
            return r;
        }
    }
    let (key, value) = (arg(args, 1), arg(args, 2));
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let old = if opts.nx || opts.xx || opts.get {
        match db.get(key) {
            Ok(v) => v,
            Err(e) => return engine_error(e),
        }
    } else {
        None
    };
    // XX over a collection: the key exists, and the string replaces it (`Batch::put`), as
    // in Redis. (NX and GET over a collection are answered by the type check before this.)
    let exists = match (old.is_some(), opts.xx) {
        (false, true) => match crate::types::live_meta(&db, key) {
            Ok(meta) => meta.is_some(),
            Err(e) => return engine_error(e),
        },
        (found, _) => found,
    };
    let allowed = !(opts.nx && exists || opts.xx && !exists);
    if allowed {
        let expires = match (opts.expires, opts.keep_ttl) {
            (Some(at), _) => Some(at),
            (None, true) => match deadline_of(&db, key) {
                Ok(Ok(d)) => d,
                Ok(Err(())) => None,
                Err(e) => return engine_error(e),
            },
            (None, false) => None,
        };
        let mut b = db.batch();
        match expires {
            Some(at) => b.put_expiring(&db, key, value, time_of(at)),
            None => b.put(&db, key, value),
        }
        if let Err(e) = db.write(b) {
            return engine_error(e);
        }
    }
    match (opts.get, allowed) {
        (true, _) => bulk_or_null(old),
        (false, true) => Reply::OK,
        (false, false) => Reply::Null,
    }
}

pub(super) fn getset(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (key, value) = (arg(args, 1), arg(args, 2));
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let old = match db.get(key) {
        Ok(v) => v,
        Err(e) => return engine_error(e),
    };
    db.put(key, value).map_or_else(engine_error, |()| bulk_or_null(old))
}

pub(super) fn mget(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let keys = args.iter().skip(1).map(Vec::as_slice);
    match selected!(ctx).get_many(keys) {
        Ok(values) => Reply::Array(values.into_iter().map(bulk_or_null).collect()),
        Err(e) => engine_error(e),
    }
}

pub(super) fn mset(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let pairs = args.get(1..).unwrap_or_default();
    if pairs.len() % 2 != 0 {
        return wrong_arity("mset");
    }
    let db = selected!(ctx);
    let _lock = db.lock(pairs.iter().step_by(2).map(Vec::as_slice));
    let mut batch = db.batch();
    for kv in pairs.chunks_exact(2) {
        if let [k, v] = kv {
            batch.put(&db, k, v);
        }
    }
    db.write(batch).map_or_else(engine_error, |()| Reply::OK)
}

/// Add `by` to the integer at `key` (absent: 0), atomically.
fn add(ctx: &mut Ctx<'_>, key: &[u8], by: i64) -> Reply {
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let current = match db.get(key) {
        Ok(None) => 0,
        Ok(Some(v)) => match parse_int(&v) {
            Some(n) => n,
            None => return not_an_integer(),
        },
        Err(e) => return engine_error(e),
    };
    let Some(next) = current.checked_add(by) else {
        return Reply::err("increment or decrement would overflow");
    };
    db.put(key, next.to_string().as_bytes()).map_or_else(engine_error, |()| Reply::Int(next))
}

pub(super) fn incr(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    add(ctx, arg(args, 1), 1)
}

pub(super) fn decr(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    add(ctx, arg(args, 1), -1)
}

pub(super) fn incrby(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    match parse_int(arg(args, 2)) {
        Some(by) => add(ctx, arg(args, 1), by),
        None => not_an_integer(),
    }
}

pub(super) fn decrby(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    match parse_int(arg(args, 2)).and_then(i64::checked_neg) {
        Some(by) => add(ctx, arg(args, 1), by),
        None => not_an_integer(),
    }
}

pub(super) fn append(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (key, tail) = (arg(args, 1), arg(args, 2));
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let mut value = match db.get(key) {
        Ok(v) => v.unwrap_or_default(),
        Err(e) => return engine_error(e),
    };
    value.extend_from_slice(tail);
    db.put(key, &value).map_or_else(engine_error, |()| Reply::Int(value.len() as i64))
}

pub(super) fn strlen(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    selected!(ctx).get(arg(args, 1)).map_or_else(engine_error, |v| Reply::Int(v.map_or(0, |v| v.len() as i64)))
}
