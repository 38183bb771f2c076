//! Keyspace commands: DEL, EXISTS, TYPE, SCAN, KEYS, DBSIZE, FLUSHDB, FLUSHALL, each on the
//! connection's selected database.
//!
//! KEYS and DBSIZE walk every key (the engine keeps no count, and its iterator yields
//! values with keys), so they cost a full scan, as KEYS does in Redis; a pattern with a
//! literal prefix (`user:*`) walks only the keys with that prefix. FLUSHDB and FLUSHALL
//! are range deletes: one record per database whatever it holds.
//!
//! Every command here covers every type: a key is a string (the database's keyspace) or a
//! collection (its metadata keyspace, see `types`); walks merge the two in key order.

use super::{arg, engine_error, is, not_an_integer, parse_int, selected, syntax_error, Args};
use crate::glob;
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::Selected;
use crate::types;

/// DEL / UNLINK: a string is one delete, a collection its metadata delete and one range
/// delete over its fields; all in one batch.
pub(super) fn del(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let keys = args.get(1..).unwrap_or_default();
    let db = selected!(ctx);
    let _lock = db.lock(keys.iter().map(Vec::as_slice));
    let found = match db.get_many(keys.iter().map(Vec::as_slice)) {
        Ok(v) => v,
        Err(e) => return engine_error(e),
    };
    let mut batch = db.batch();
    let mut seen = std::collections::HashSet::new();
    let mut deleted = Vec::new();
    for (k, v) in keys.iter().zip(found) {
        // A key named twice is deleted (and counted) once, as in Redis.
        if !seen.insert(k.as_slice()) {
            continue;
        }
        if v.is_some() {
            batch.delete(&db, k);
            deleted.push(k);
        } else {
            match types::delete_collection(&db, &mut batch, k) {
                Ok(true) => deleted.push(k),
                Ok(false) => {}
                Err(e) => return engine_error(e),
            }
        }
    }
    let n = deleted.len() as i64;
    if let Err(e) = db.write(batch) {
        return engine_error(e);
    }
    for k in deleted {
        ctx.notify(crate::notify::class::GENERIC, "del", k);
    }
    Reply::Int(n)
}

pub(super) fn exists(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let keys = args.get(1..).unwrap_or_default();
    let db = selected!(ctx);
    let strings = match db.get_many(keys.iter().map(Vec::as_slice)) {
        Ok(v) => v,
        Err(e) => return engine_error(e),
    };
    // A key named twice counts twice, as in Redis.
    let mut n = 0;
    for (k, v) in keys.iter().zip(strings) {
        if v.is_some() {
            n += 1;
        } else if db.collections().is_some() {
            match types::live_meta(&db, k) {
                Ok(m) => n += i64::from(m.is_some()),
                Err(e) => return engine_error(e),
            }
        }
    }
    Reply::Int(n)
}

pub(super) fn type_of(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    match types::lookup(&selected!(ctx), arg(args, 1)) {
        Ok(entry) => Reply::Simple(entry.type_name()),
        Err(e) => engine_error(e),
    }
}

/// SCAN's options.
struct ScanOptions {
    pattern: Option<Vec<u8>>,
    count: usize,
    /// TYPE: only keys of this type (lowercase).
    type_name: Option<String>,
}

fn parse_scan_options(words: &Args) -> Result<ScanOptions, Reply> {
    let mut o = ScanOptions { pattern: None, count: 10, type_name: None };
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let Some(value) = it.next() else {
            return Err(syntax_error());
        };
        if is(w, "MATCH") {
            o.pattern = Some(value.clone()).filter(|p| p.as_slice() != b"*");
        } else if is(w, "COUNT") {
            match parse_int(value) {
                Some(n) if n >= 1 => o.count = n.min(1 << 20) as usize,
                Some(_) => return Err(syntax_error()),
                None => return Err(not_an_integer()),
            }
        } else if is(w, "TYPE") {
            o.type_name = Some(String::from_utf8_lossy(value).to_lowercase());
        } else {
            return Err(syntax_error());
        }
    }
    Ok(o)
}

pub(super) fn scan(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let opts = match parse_scan_options(args.get(2..).unwrap_or_default()) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let server = ctx.server;
    let db = selected!(ctx);
    let after = match arg(args, 1) {
        b"0" => None,
        c => match std::str::from_utf8(c).ok().and_then(|s| s.parse::<u64>().ok()) {
            Some(n) => match server.cursors.resolve(n) {
                Some(key) => Some(key),
                None => {
                    return Reply::err("invalid cursor (unknown, or too old: the server remembers recent cursors only)")
                }
            },
            None => return Reply::err("invalid cursor"),
        },
    };
    let prefix = opts.pattern.as_deref().map(glob::literal_prefix).unwrap_or_default();
    let mut found = Vec::new();
    let mut examined = 0;
    let mut last = None;
    for item in types::walk_keys(&db, &prefix, after.as_deref()) {
        let (key, type_name) = match item {
            Ok(kt) => kt,
            Err(e) => return engine_error(e),
        };
        let wanted = opts.pattern.as_deref().is_none_or(|p| glob::matches(p, &key))
            && opts.type_name.as_deref().is_none_or(|t| t == type_name);
        examined += 1;
        if examined == opts.count {
            if wanted {
                found.push(Reply::Bulk(key.clone()));
            }
            last = Some(key);
            break;
        }
        if wanted {
            found.push(Reply::Bulk(key));
        }
    }
    // A scan that stopped on its count resumes after the last key examined; one that ran
    // out of keys is done (cursor 0).
    let cursor = last.map_or(0, |k| server.cursors.issue(k));
    Reply::Array(vec![Reply::text_bulk(cursor.to_string()), Reply::Array(found)])
}

/// Every key matching `pattern`, walking only its literal prefix.
fn matching_keys(db: Selected<'_>, pattern: &[u8], mut each: impl FnMut(Vec<u8>)) -> shamba::Result<()> {
    let prefix = glob::literal_prefix(pattern);
    let everything = pattern == b"*";
    for item in types::walk_keys(&db, &prefix, None) {
        let (key, _) = item?;
        if everything || glob::matches(pattern, &key) {
            each(key);
        }
    }
    Ok(())
}

pub(super) fn keys(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let mut found = Vec::new();
    match matching_keys(selected!(ctx), arg(args, 1), |k| found.push(Reply::Bulk(k))) {
        Ok(()) => Reply::Array(found),
        Err(e) => engine_error(e),
    }
}

pub(super) fn dbsize(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    let mut n = 0;
    match matching_keys(selected!(ctx), b"*", |_| n += 1) {
        Ok(()) => Reply::Int(n),
        Err(e) => engine_error(e),
    }
}

/// FLUSHDB/FLUSHALL's optional ASYNC or SYNC (both run at once: a range delete is one
/// record either way).
fn flush_mode(args: &Args) -> Result<(), Reply> {
    match args.get(1..).unwrap_or_default() {
        [] => Ok(()),
        [mode] if is(mode, "ASYNC") || is(mode, "SYNC") => Ok(()),
        _ => Err(syntax_error()),
    }
}

/// FLUSHDB [ASYNC|SYNC]: every key of the selected database, deleted by one range delete
/// over its keyspace (atomic: a read sees all of it or none).
pub(super) fn flushdb(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    if let Err(r) = flush_mode(args) {
        return r;
    }
    let db = selected!(ctx);
    crate::session::ServerCounters::add(&ctx.server.counters.flushes, 1);
    let mut batch = db.batch();
    db.delete_all(&mut batch);
    db.write(batch).map_or_else(engine_error, |()| Reply::OK)
}

/// FLUSHALL [ASYNC|SYNC]: every key of every database, by one batch of range deletes
/// across their keyspaces (all or nothing, after a crash too).
pub(super) fn flushall(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    if let Err(r) = flush_mode(args) {
        return r;
    }
    let store = &ctx.server.store;
    crate::session::ServerCounters::add(&ctx.server.counters.flushes, 1);
    if let Some(tx) = ctx.tx {
        // Inside EXEC: into its transaction, database by database.
        for (index, _) in store.databases().existing() {
            if let Some(Ok(db)) = store.select(index) {
                let db = db.in_transaction(tx);
                let mut batch = db.batch();
                db.delete_all(&mut batch);
                if let Err(e) = db.write(batch) {
                    return engine_error(e);
                }
            }
        }
        return Reply::OK;
    }
    let mut batch = store.batch();
    for (index, ks) in store.databases().existing() {
        store.delete_all(&mut batch, index, ks);
    }
    store.write(batch).map_or_else(engine_error, |()| Reply::OK)
}
