//! Time to live: SET's expiry options, SETEX, PSETEX, GETEX, EXPIRE and friends, TTL and
//! friends, PERSIST. Deadlines are absolute (milliseconds since the Unix epoch, by the
//! system clock, the engine's default) and kept by the engine, which hides a key from every
//! read once its deadline passes. A command that reads a key's deadline and writes it holds
//! the key's stripe lock from read to write, as every read-modify-write command does.
//!
//! A collection's deadline is in its metadata (see `types`): these commands read and
//! rewrite it there, in one batch as every write.
//!
//! A replicated store refuses a deadline (its commands carry none): in cluster mode these
//! commands answer an error naming cluster mode, and TTL answers -1 for every key.

use super::{arg, engine_error, is, not_an_integer, parse_int, selected, syntax_error, Args};
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::{Selected, NO_EXPIRY_IN_CLUSTER};
use crate::types;
use shamba::Ttl;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The time `ms` milliseconds after the Unix epoch (the epoch itself for a time before it).
pub(super) fn time_of(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// A key's deadline in milliseconds since the epoch: `Ok(None)` when persistent, `Err(())`
/// when absent (or expired).
pub(crate) fn deadline_of(db: &Selected<'_>, key: &[u8]) -> shamba::Result<Result<Option<i64>, ()>> {
    // The engine answers the time left from its own reading of the clock: the deadline is
    // that plus the same millisecond. A reading before and one after that agree name it;
    // when the millisecond turned in between, the engine is asked again (a deadline off by
    // one, as PEXPIRETIME once answered under load, otherwise).
    let (mut now, mut ttl) = (0, Ttl::Absent);
    for _ in 0..4 {
        let before = now_ms();
        ttl = db.ttl(key)?;
        now = now_ms();
        if now == before {
            break;
        }
    }
    Ok(match ttl {
        Ttl::Absent => match types::live_meta(db, key)? {
            Some(m) => Ok(m.deadline_ms),
            None => Err(()),
        },
        Ttl::Persistent => Ok(None),
        Ttl::Remaining(d) => Ok(Some(now.saturating_add(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)))),
    })
}

/// One of the expiry options of SET and GETEX, by its word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    Seconds,
    Millis,
    UnixSeconds,
    UnixMillis,
}

impl Unit {
    pub(super) fn of(word: &[u8]) -> Option<Unit> {
        [("EX", Unit::Seconds), ("PX", Unit::Millis), ("EXAT", Unit::UnixSeconds), ("PXAT", Unit::UnixMillis)]
            .into_iter()
            .find(|(w, _)| is(word, w))
            .map(|(_, u)| u)
    }

    /// The deadline (ms since the epoch) of `n` in this unit, as Redis checks it: not an
    /// integer is `not_an_integer`, zero, negative or overflowing is "invalid expire time".
    pub(super) fn deadline(self, n: &[u8], command: &str) -> Result<i64, Reply> {
        let invalid = || Reply::err(format!("invalid expire time in '{command}' command"));
        let n = parse_int(n).ok_or_else(not_an_integer)?;
        if n <= 0 {
            return Err(invalid());
        }
        let ms = match self {
            Unit::Seconds | Unit::UnixSeconds => n.checked_mul(1000).ok_or_else(invalid)?,
            Unit::Millis | Unit::UnixMillis => n,
        };
        match self {
            Unit::Seconds | Unit::Millis => now_ms().checked_add(ms).ok_or_else(invalid),
            Unit::UnixSeconds | Unit::UnixMillis => Ok(ms),
        }
    }
}

/// Refuse a deadline in cluster mode.
pub(super) fn refuse_in_cluster(ctx: &Ctx<'_>) -> Result<(), Reply> {
    match ctx.server.store.cluster() {
        Some(_) => Err(Reply::err(NO_EXPIRY_IN_CLUSTER)),
        None => Ok(()),
    }
}

/// SETEX / PSETEX key n value.
fn set_for(ctx: &mut Ctx<'_>, args: &Args, unit: Unit, command: &str) -> Reply {
    if let Err(r) = refuse_in_cluster(ctx) {
        return r;
    }
    let at = match unit.deadline(arg(args, 2), command) {
        Ok(at) => at,
        Err(r) => return r,
    };
    let (key, value) = (arg(args, 1), arg(args, 3));
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let mut b = db.batch();
    b.put_expiring(&db, key, value, time_of(at));
    db.write(b).map_or_else(engine_error, |()| Reply::OK)
}

pub(super) fn setex(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    set_for(ctx, args, Unit::Seconds, "setex")
}

pub(super) fn psetex(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    set_for(ctx, args, Unit::Millis, "psetex")
}

/// GETEX key [EX n | PX n | EXAT t | PXAT t | PERSIST].
pub(super) fn getex(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    // None: leave the deadline; Some(None): PERSIST; Some(Some(at)): a new deadline.
    let mut change: Option<Option<i64>> = None;
    let mut i = 2;
    while let Some(w) = args.get(i) {
        if change.is_some() {
            return syntax_error();
        }
        if is(w, "PERSIST") {
            change = Some(None);
        } else if let (Some(unit), Some(n)) = (Unit::of(w), args.get(i + 1)) {
            match unit.deadline(n, "getex") {
                Ok(at) => change = Some(Some(at)),
                Err(r) => return r,
            }
            i += 1;
        } else {
            return syntax_error();
        }
        i += 1;
    }
    if let Some(Some(_)) = change {
        if let Err(r) = refuse_in_cluster(ctx) {
            return r;
        }
    }
    let key = arg(args, 1);
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let value = match db.get(key) {
        Ok(Some(v)) => v,
        Ok(None) => return Reply::Null,
        Err(e) => return engine_error(e),
    };
    let mut b = db.batch();
    match change {
        None => return Reply::Bulk(value),
        Some(Some(at)) => b.put_expiring(&db, key, &value, time_of(at)),
        Some(None) => match deadline_of(&db, key) {
            Ok(Ok(Some(_))) => b.put(&db, key, &value),
            Ok(_) => return Reply::Bulk(value),
            Err(e) => return engine_error(e),
        },
    }
    db.write(b).map_or_else(engine_error, |()| Reply::Bulk(value))
}

/// EXPIRE's conditions.
#[derive(Default)]
struct Conditions {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

fn parse_conditions(words: &Args) -> Result<Conditions, Reply> {
    let mut c = Conditions::default();
    for w in words {
        if is(w, "NX") {
            c.nx = true;
        } else if is(w, "XX") {
            c.xx = true;
        } else if is(w, "GT") {
            c.gt = true;
        } else if is(w, "LT") {
            c.lt = true;
        } else {
            return Err(Reply::err(format!("Unsupported option {}", super::printable(w))));
        }
    }
    if c.nx && (c.xx || c.gt || c.lt) {
        return Err(Reply::err("NX and XX, GT or LT options at the same time are not compatible"));
    }
    if c.gt && c.lt {
        return Err(Reply::err("GT and LT options at the same time are not compatible"));
    }
    Ok(c)
}

/// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT key n [NX|XX|GT|LT]: 1 when the deadline was
/// set (a deadline already past deletes the key), 0 when the key is absent or a condition
/// said no.
fn expire_with(ctx: &mut Ctx<'_>, args: &Args, unit: Unit, command: &str) -> Reply {
    let conditions = match parse_conditions(args.get(3..).unwrap_or_default()) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let n = match parse_int(arg(args, 2)) {
        Some(n) => n,
        None => return not_an_integer(),
    };
    let invalid = || Reply::err(format!("invalid expire time in '{command}' command"));
    let ms = match unit {
        Unit::Seconds | Unit::UnixSeconds => match n.checked_mul(1000) {
            Some(ms) => ms,
            None => return invalid(),
        },
        Unit::Millis | Unit::UnixMillis => n,
    };
    let at = match unit {
        Unit::Seconds | Unit::Millis => match now_ms().checked_add(ms) {
            Some(at) => at,
            None => return invalid(),
        },
        Unit::UnixSeconds | Unit::UnixMillis => ms,
    };
    if let Err(r) = refuse_in_cluster(ctx) {
        return r;
    }
    let key = arg(args, 1);
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let current = match deadline_of(&db, key) {
        Ok(Ok(d)) => d,
        Ok(Err(())) => return Reply::Int(0),
        Err(e) => return engine_error(e),
    };
    // A persistent key's deadline counts as infinite for GT and LT.
    let allowed = match current {
        None => !conditions.xx && !conditions.gt,
        Some(d) => {
            let refused = conditions.nx || (conditions.gt && at <= d) || (conditions.lt && at >= d);
            !refused
        }
    };
    if !allowed {
        return Reply::Int(0);
    }
    let value = match db.get(key) {
        Ok(Some(v)) => v,
        Ok(None) => return set_collection_deadline(&db, key, Some(at)),
        Err(e) => return engine_error(e),
    };
    let mut b = db.batch();
    if at <= now_ms() {
        b.delete(&db, key);
    } else {
        b.put_expiring(&db, key, &value, time_of(at));
    }
    db.write(b).map_or_else(engine_error, |()| Reply::Int(1))
}

pub(super) fn expire(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    expire_with(ctx, args, Unit::Seconds, "expire")
}

pub(super) fn pexpire(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    expire_with(ctx, args, Unit::Millis, "pexpire")
}

pub(super) fn expireat(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    expire_with(ctx, args, Unit::UnixSeconds, "expireat")
}

pub(super) fn pexpireat(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    expire_with(ctx, args, Unit::UnixMillis, "pexpireat")
}

/// What TTL and friends answer: -2 absent, -1 persistent, else `of(deadline, now)`.
fn ttl_reply(ctx: &mut Ctx<'_>, args: &Args, of: fn(i64, i64) -> i64) -> Reply {
    let db = selected!(ctx);
    match deadline_of(&db, arg(args, 1)) {
        Ok(Err(())) => Reply::Int(-2),
        Ok(Ok(None)) => Reply::Int(-1),
        Ok(Ok(Some(d))) => Reply::Int(of(d, now_ms())),
        Err(e) => engine_error(e),
    }
}

pub(super) fn ttl(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    // Rounded to the nearest second, as Redis rounds it.
    ttl_reply(ctx, args, |d, now| (d - now + 500).max(0) / 1000)
}

pub(super) fn pttl(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    ttl_reply(ctx, args, |d, now| (d - now).max(0))
}

pub(super) fn expiretime(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    ttl_reply(ctx, args, |d, _| d / 1000)
}

pub(super) fn pexpiretime(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    ttl_reply(ctx, args, |d, _| d)
}

/// PERSIST key: 1 when it removed a deadline, 0 when the key is absent or has none.
pub(super) fn persist(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    match deadline_of(&db, key) {
        Ok(Ok(Some(_))) => {}
        Ok(_) => return Reply::Int(0),
        Err(e) => return engine_error(e),
    }
    let value = match db.get(key) {
        Ok(Some(v)) => v,
        Ok(None) => return set_collection_deadline(&db, key, None),
        Err(e) => return engine_error(e),
    };
    let mut b = db.batch();
    b.put(&db, key, &value);
    db.write(b).map_or_else(engine_error, |()| Reply::Int(1))
}

/// Give the collection at `key` the deadline `at` (`None`: persistent; a time already
/// past deletes it) by rewriting its metadata: 1, or 0 when there is no collection.
fn set_collection_deadline(db: &Selected<'_>, key: &[u8], at: Option<i64>) -> Reply {
    let Some(c) = db.collections() else {
        return Reply::Int(0);
    };
    let mut meta = match types::live_meta(db, key) {
        Ok(Some(m)) => m,
        Ok(None) => return Reply::Int(0),
        Err(e) => return engine_error(e),
    };
    let mut b = db.batch();
    if at.is_some_and(|at| at <= now_ms()) {
        types::delete_entries(&mut b, c, key, &meta);
    } else {
        meta.deadline_ms = at;
        types::put_meta(&mut b, c, key, &meta);
    }
    db.write(b).map_or_else(engine_error, |()| Reply::Int(1))
}
