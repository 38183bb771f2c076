//! Commands that move, copy or pick whole keys: RENAME, RENAMENX, COPY (DB, REPLACE), MOVE,
//! RANDOMKEY, TOUCH, OBJECT. They work on keys whole through `key_entry` (a key's value and
//! deadline today), so a type stored as several entries needs no change here.

use super::expiry::now_ms;
use super::{arg, engine_error, is, not_an_integer, parse_int, printable, selected, syntax_error, Args, Spec};
use crate::key_entry::KeyEntry;
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::{KeyLocks, Selected};
use std::hash::{BuildHasher, RandomState};

const W: &[&str] = &["write"];

#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "rename", arity: 3, flags: W, keys: (1, 2, 1), group: "generic", summary: "Rename a key (with its deadline), replacing the destination", run: rename },
    Spec { name: "renamenx", arity: 3, flags: &["write", "fast"], keys: (1, 2, 1), group: "generic", summary: "Rename a key only if the new name is free", run: renamenx },
    Spec { name: "copy", arity: -3, flags: W, keys: (1, 2, 1), group: "generic", summary: "Copy a key (DB n, REPLACE)", run: copy },
    Spec { name: "move", arity: 3, flags: &["write", "fast"], keys: (1, 1, 1), group: "generic", summary: "Move a key to another database", run: move_key },
    Spec { name: "randomkey", arity: 1, flags: &["readonly"], keys: (0, 0, 0), group: "generic", summary: "A key picked at random (by a random position in key order)", run: randomkey },
    Spec { name: "touch", arity: -2, flags: &["readonly", "fast"], keys: (1, -1, 1), group: "generic", summary: "Count the keys that exist", run: touch },
    Spec { name: "object", arity: -2, flags: &["readonly"], keys: (2, 2, 1), group: "generic", summary: "ENCODING, FREQ, IDLETIME, REFCOUNT of a key", run: object },
];

/// Database `index` as this command sees it (inside EXEC's transaction when in one).
fn database<'a>(ctx: &Ctx<'a>, index: usize) -> Result<Selected<'a>, Reply> {
    match ctx.server.store.select(index) {
        Some(Ok(s)) => Ok(match ctx.tx {
            Some(tx) => s.in_transaction(tx),
            None => s,
        }),
        Some(Err(e)) => Err(engine_error(e)),
        None => Err(Reply::err("DB index is out of range")),
    }
}

/// The stripe locks of `keys` (database, key); none inside EXEC, which holds its own.
fn lock<'a>(ctx: &Ctx<'a>, keys: &[(usize, &[u8])]) -> KeyLocks<'a> {
    let store = &ctx.server.store;
    if ctx.tx.is_some() {
        return store.lock_stripes([]);
    }
    store.lock_stripes(keys.iter().copied())
}

fn read(db: &Selected<'_>, key: &[u8]) -> Result<Option<KeyEntry>, Reply> {
    db.read_entry(key).map_err(engine_error)
}

/// Move `from`'s key `src` to `to`'s key `dst` (one batch when both are in one database):
/// `Ok(false)` when `dst` exists and `replace` is not set, an error when `src` is absent.
fn relocate(
    ctx: &Ctx<'_>,
    from: usize,
    src: &[u8],
    to: usize,
    dst: &[u8],
    keep_source: bool,
    replace: bool,
) -> Result<bool, Reply> {
    let (a, b) = (database(ctx, from)?, database(ctx, to)?);
    let _locks = lock(ctx, &[(from, src), (to, dst)]);
    let Some(entry) = read(&a, src)? else {
        return Err(Reply::err("no such key"));
    };
    if from == to && src == dst {
        return Ok(true);
    }
    if !replace && read(&b, dst)?.is_some() {
        return Ok(false);
    }
    if from == to {
        let mut batch = a.batch();
        a.write_entry(&mut batch, dst, &entry).map_err(engine_error)?;
        if !keep_source {
            a.delete_entry(&mut batch, src).map_err(engine_error)?;
        }
        return a.write(batch).map(|()| true).map_err(engine_error);
    }
    // Two databases are two keyspaces: the copy is written first, so a failure between the
    // two writes leaves the key in both rather than in neither.
    let mut batch = b.batch();
    b.write_entry(&mut batch, dst, &entry).map_err(engine_error)?;
    b.write(batch).map_err(engine_error)?;
    if !keep_source {
        let mut batch = a.batch();
        a.delete_entry(&mut batch, src).map_err(engine_error)?;
        a.write(batch).map_err(engine_error)?;
    }
    Ok(true)
}

fn rename(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let db = ctx.session.db;
    match relocate(ctx, db, arg(args, 1), db, arg(args, 2), false, true) {
        Ok(_) => Reply::OK,
        Err(r) => r,
    }
}

fn renamenx(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let db = ctx.session.db;
    if arg(args, 1) == arg(args, 2) {
        // Redis answers 0 for a key renamed to itself (it exists), and the error otherwise.
        let selected = selected!(ctx);
        return match read(&selected, arg(args, 1)) {
            Ok(Some(_)) => Reply::Int(0),
            Ok(None) => Reply::err("no such key"),
            Err(r) => r,
        };
    }
    match relocate(ctx, db, arg(args, 1), db, arg(args, 2), false, false) {
        Ok(moved) => Reply::Int(i64::from(moved)),
        Err(r) => r,
    }
}

/// A database number argument (COPY's DB, MOVE's): out of range is an error.
fn db_index(ctx: &Ctx<'_>, word: &[u8]) -> Result<usize, Reply> {
    let n = parse_int(word).ok_or_else(not_an_integer)?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n < ctx.server.store.database_count())
        .ok_or_else(|| Reply::err("DB index is out of range"))
}

/// COPY source destination [DB n] [REPLACE].
fn copy(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let from = ctx.session.db;
    let mut to = from;
    let mut replace = false;
    let mut i = 3;
    while let Some(w) = args.get(i) {
        if is(w, "REPLACE") {
            replace = true;
        } else if is(w, "DB") && i + 1 < args.len() {
            match db_index(ctx, arg(args, i + 1)) {
                Ok(n) => to = n,
                Err(r) => return r,
            }
            i += 1;
        } else {
            return syntax_error();
        }
        i += 1;
    }
    let (src, dst) = (arg(args, 1), arg(args, 2));
    if from == to && src == dst {
        return Reply::err("source and destination objects are the same");
    }
    match relocate(ctx, from, src, to, dst, true, replace) {
        Ok(copied) => Reply::Int(i64::from(copied)),
        Err(Reply::Error(e)) if e == "ERR no such key" => Reply::Int(0),
        Err(r) => r,
    }
}

/// MOVE key db: 1 when moved, 0 when the key is absent or the target has it.
fn move_key(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let from = ctx.session.db;
    let to = match db_index(ctx, arg(args, 2)) {
        Ok(n) => n,
        Err(r) => return r,
    };
    if from == to {
        return Reply::err("source and destination objects are the same");
    }
    let key = arg(args, 1);
    match relocate(ctx, from, key, to, key, false, false) {
        Ok(moved) => Reply::Int(i64::from(moved)),
        Err(Reply::Error(e)) if e == "ERR no such key" => Reply::Int(0),
        Err(r) => r,
    }
}

/// RANDOMKEY: the first key at or after a random position in key order (so keys after
/// long gaps are picked more often; every key can be).
fn randomkey(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    let db = selected!(ctx);
    let random = RandomState::new().hash_one(now_ms()).to_be_bytes();
    match db.key_near(&random) {
        Ok(Some(k)) => Reply::Bulk(k),
        Ok(None) => Reply::Null,
        Err(e) => engine_error(e),
    }
}

fn touch(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let db = selected!(ctx);
    let mut n = 0;
    for key in args.iter().skip(1) {
        match crate::types::lookup(&db, key) {
            Ok(crate::types::Entry::Absent) => {}
            Ok(_) => n += 1,
            Err(e) => return engine_error(e),
        }
    }
    Reply::Int(n)
}

/// The encoding Redis would give a string value: `int` for an integer that fits in 64
/// bits, `embstr` up to 44 bytes, `raw` beyond.
pub(super) fn string_encoding(v: &[u8]) -> &'static str {
    if v.len() <= 20 && parse_int(v).is_some() {
        "int"
    } else if v.len() <= 44 {
        "embstr"
    } else {
        "raw"
    }
}

/// OBJECT ENCODING / FREQ / IDLETIME / REFCOUNT key, OBJECT HELP. There is no access
/// tracking: IDLETIME is 0 and FREQ answers as Redis does without an LFU policy.
/// The encoding Redis would give a collection of this size at its default thresholds
/// (128 entries: `listpack` below, its large encoding above). Every collection here is the
/// same layout of engine entries; the name is what clients and tests expect to read.
fn collection_encoding(meta: &crate::types::Meta) -> &'static str {
    use crate::types::Kind;
    let small = meta.size <= 128;
    match meta.kind {
        _ if small => "listpack",
        Kind::Hash | Kind::Set => "hashtable",
        Kind::ZSet => "skiplist",
        Kind::List => "quicklist",
    }
}

fn object(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let sub = arg(args, 1);
    if is(sub, "HELP") && args.len() == 2 {
        let lines =
            ["OBJECT <subcommand> [<arg> ...]", "ENCODING <key>", "FREQ <key>", "IDLETIME <key>", "REFCOUNT <key>"];
        return Reply::Array(lines.iter().map(|l| Reply::Simple(l)).collect());
    }
    let known = ["ENCODING", "FREQ", "IDLETIME", "REFCOUNT"].iter().any(|s| is(sub, s));
    if !known || args.len() != 3 {
        return Reply::err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try OBJECT HELP.",
            printable(sub)
        ));
    }
    let db = selected!(ctx);
    let encoding = match db.get(arg(args, 2)) {
        Ok(Some(v)) => string_encoding(&v),
        Ok(None) => match crate::types::live_meta(&db, arg(args, 2)) {
            Ok(Some(meta)) => collection_encoding(&meta),
            Ok(None) => return Reply::Null,
            Err(e) => return engine_error(e),
        },
        Err(e) => return engine_error(e),
    };
    if is(sub, "ENCODING") {
        Reply::text_bulk(encoding)
    } else if is(sub, "FREQ") {
        Reply::err("An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
    } else if is(sub, "IDLETIME") {
        Reply::Int(0)
    } else {
        Reply::Int(1)
    }
}
