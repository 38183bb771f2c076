//! The type check of string commands, run before one when its database has ever held a
//! collection (otherwise it costs nothing): a string command on a collection answers
//! WRONGTYPE, as in Redis, except the ones that overwrite (SET, MSET, SETEX, PSETEX: the
//! string replaces the collection, see `Batch::put`), MGET (nil for a non-string) and GET
//! (which probes only on a miss, so a hit pays nothing; see `absent_string`).
//!
//! The check takes the keys' locks and the command runs holding them (its own lock of the
//! same keys is then no wait), so a collection cannot be written between the check and the
//! command: an INCR racing an HSET on a new key makes one of the two, never both.

use super::access::{live_meta, wrong_type};
use crate::commands::{engine_error, is, Args, Spec};
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::{KeyLocks, Selected};

/// Lock the keys of a string command that the type check applies to, and check them:
/// the locks to hold while the command runs, or the reply that replaces the command's
/// (a key it names is a collection).
pub(crate) fn check<'a>(ctx: &Ctx<'a>, spec: &Spec, args: &Args) -> Result<Option<KeyLocks<'a>>, Reply> {
    if !matches!(spec.group, "string" | "bitmap") {
        return Ok(None);
    }
    let Ok(db) = ctx.selected() else { return Ok(None) };
    if db.collections().is_none() || !checked(spec, args) {
        return Ok(None);
    }
    let locks = db.lock(key_args(spec, args));
    match answer(&db, spec, args) {
        Some(reply) => Err(reply),
        None => Ok(Some(locks)),
    }
}

/// Whether the command is checked at all: not the ones that overwrite any type (SET
/// without GET or NX, MSET, SETEX, PSETEX) nor the reads that answer for themselves (GET, MGET).
fn checked(spec: &Spec, args: &Args) -> bool {
    match spec.name {
        "get" | "mget" | "mset" | "setex" | "psetex" => false,
        "set" => args.get(3..).unwrap_or_default().iter().any(|o| is(o, "GET") || is(o, "NX")),
        _ => true,
    }
}

/// The reply that replaces the command's, when a key it names is a collection.
fn answer(db: &Selected<'_>, spec: &Spec, args: &Args) -> Option<Reply> {
    let is_collection = |key: &[u8]| match live_meta(db, key) {
        Ok(m) => Ok(m.is_some()),
        Err(e) => Err(engine_error(e)),
    };
    let key = args.get(1).map(Vec::as_slice).unwrap_or_default();
    let answer = match spec.name {
        "get" | "mget" | "mset" | "setex" | "psetex" => return None,
        "set" => {
            let options = args.get(3..).unwrap_or_default();
            let get = options.iter().any(|o| is(o, "GET"));
            let nx = options.iter().any(|o| is(o, "NX"));
            if !get && !nx {
                return None;
            }
            match is_collection(key) {
                Ok(true) if get => wrong_type(),
                Ok(true) => Reply::Null,
                Ok(false) => return None,
                Err(r) => r,
            }
        }
        "setnx" => match is_collection(key) {
            Ok(true) => Reply::Int(0),
            Ok(false) => return None,
            Err(r) => r,
        },
        "msetnx" => {
            for k in args.iter().skip(1).step_by(2) {
                match is_collection(k) {
                    Ok(true) => return Some(Reply::Int(0)),
                    Ok(false) => {}
                    Err(r) => return Some(r),
                }
            }
            return None;
        }
        _ => {
            for k in key_args(spec, args) {
                match is_collection(k) {
                    Ok(true) => return Some(wrong_type()),
                    Ok(false) => {}
                    Err(r) => return Some(r),
                }
            }
            return None;
        }
    };
    Some(answer)
}

/// The keys `args` names by its command's key positions.
fn key_args<'k>(spec: &Spec, args: &'k Args) -> impl Iterator<Item = &'k [u8]> {
    let (first, last, step) = spec.keys;
    let names_keys = first > 0;
    let n = args.len() as i64;
    let last = if last < 0 { n + last } else { last };
    let step = usize::try_from(step.max(1)).unwrap_or(1);
    let (first, last) = (usize::try_from(first.max(1)).unwrap_or(1), usize::try_from(last).unwrap_or(0));
    args.iter().take(last + 1).skip(first).step_by(step).map(Vec::as_slice).filter(move |_| names_keys)
}

/// What a string read answers for `key` when the string keyspace has no value there: nil,
/// or WRONGTYPE when a collection holds the key.
pub(crate) fn absent_string(db: &Selected<'_>, key: &[u8]) -> Reply {
    match live_meta(db, key) {
        Ok(Some(_)) => wrong_type(),
        Ok(None) => Reply::Null,
        Err(e) => engine_error(e),
    }
}
