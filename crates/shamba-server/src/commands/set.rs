//! Sets: SADD, SREM, SISMEMBER, SMISMEMBER, SCARD, SMEMBERS, SPOP, SRANDMEMBER, SMOVE,
//! SINTER, SUNION, SDIFF (and their STORE forms), SINTERCARD, SSCAN, on the collection
//! encoding (`types`): a member is one entry with an empty value, the member count is in
//! the metadata. Every write holds its keys' stripe locks from its reads to its one batch.

use super::field_scan::{parse_count, pick, pick_one, scan_fields};
use super::{arg, engine_error, is, parse_int, selected, syntax_error, Args, Spec, W};
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::Selected;
use crate::types::{self, Kind, Meta, Write};
use std::collections::BTreeSet;

const R: &[&str] = &["readonly", "fast"];
const RS: &[&str] = &["readonly"];

/// The set commands.
#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "sadd", arity: -3, flags: W, keys: (1, 1, 1), group: "set", summary: "Add members", run: sadd },
    Spec { name: "srem", arity: -3, flags: W, keys: (1, 1, 1), group: "set", summary: "Remove members", run: srem },
    Spec { name: "sismember", arity: 3, flags: R, keys: (1, 1, 1), group: "set", summary: "Whether a member is in the set", run: sismember },
    Spec { name: "smismember", arity: -3, flags: R, keys: (1, 1, 1), group: "set", summary: "Whether each member is in the set", run: smismember },
    Spec { name: "scard", arity: 2, flags: R, keys: (1, 1, 1), group: "set", summary: "How many members", run: scard },
    Spec { name: "smembers", arity: 2, flags: RS, keys: (1, 1, 1), group: "set", summary: "Every member", run: smembers },
    Spec { name: "spop", arity: -2, flags: W, keys: (1, 1, 1), group: "set", summary: "Remove and reply random members", run: spop },
    Spec { name: "srandmember", arity: -2, flags: RS, keys: (1, 1, 1), group: "set", summary: "Random members", run: srandmember },
    Spec { name: "smove", arity: 4, flags: W, keys: (1, 2, 1), group: "set", summary: "Move a member to another set", run: smove },
    Spec { name: "sinter", arity: -2, flags: RS, keys: (1, -1, 1), group: "set", summary: "Intersection of sets", run: sinter },
    Spec { name: "sinterstore", arity: -3, flags: W, keys: (1, -1, 1), group: "set", summary: "Store the intersection of sets", run: sinterstore },
    Spec { name: "sintercard", arity: -3, flags: RS, keys: (2, -1, 1), group: "set", summary: "Size of the intersection (LIMIT)", run: sintercard },
    Spec { name: "sunion", arity: -2, flags: RS, keys: (1, -1, 1), group: "set", summary: "Union of sets", run: sunion },
    Spec { name: "sunionstore", arity: -3, flags: W, keys: (1, -1, 1), group: "set", summary: "Store the union of sets", run: sunionstore },
    Spec { name: "sdiff", arity: -2, flags: RS, keys: (1, -1, 1), group: "set", summary: "Members of the first set not in the others", run: sdiff },
    Spec { name: "sdiffstore", arity: -3, flags: W, keys: (1, -1, 1), group: "set", summary: "Store the difference of sets", run: sdiffstore },
    Spec { name: "sscan", arity: -3, flags: RS, keys: (1, 1, 1), group: "set", summary: "Walk a set's members (cursor, MATCH, COUNT)", run: sscan },
];

/// The set at `key` (`None`: absent), or WRONGTYPE.
fn read(db: &Selected<'_>, key: &[u8]) -> Result<Option<Meta>, Reply> {
    types::collection(db, key, Kind::Set)
}

/// Every member of the set `meta` at `key`, in order.
fn members(db: &Selected<'_>, key: &[u8], meta: &Meta) -> Result<Vec<Vec<u8>>, Reply> {
    types::fields(db, key, meta, None).map(|r| r.map(|(m, _)| m)).collect::<shamba::Result<_>>().map_err(engine_error)
}

fn bulks(items: impl IntoIterator<Item = Vec<u8>>) -> Reply {
    Reply::Array(items.into_iter().map(Reply::Bulk).collect())
}

fn sadd(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let new: BTreeSet<&[u8]> = args.iter().skip(2).map(Vec::as_slice).collect();
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let mut w = match Write::open(&db, key, Kind::Set) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let old = if w.created {
        vec![None; new.len()]
    } else {
        match types::get_fields(&db, key, &w.meta, new.iter().copied()) {
            Ok(v) => v,
            Err(e) => return engine_error(e),
        }
    };
    let mut added = 0;
    for (m, was) in new.iter().zip(old) {
        if was.is_none() {
            w.put_field(key, m, b"");
            added += 1;
        }
    }
    if added == 0 {
        return Reply::Int(0);
    }
    w.meta.size += added;
    db.write(w.finish(key)).map_or_else(engine_error, |()| Reply::Int(added as i64))
}

/// Remove `gone` (present members) from the set being written.
fn remove(w: &mut Write<'_>, key: &[u8], gone: &[Vec<u8>]) {
    for m in gone {
        w.delete_field(key, m);
    }
    w.meta.size = w.meta.size.saturating_sub(gone.len() as u64);
}

fn srem(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let asked: BTreeSet<&[u8]> = args.iter().skip(2).map(Vec::as_slice).collect();
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    match read(&db, key) {
        Ok(Some(_)) => {}
        Ok(None) => return Reply::Int(0),
        Err(r) => return r,
    }
    let mut w = match Write::open(&db, key, Kind::Set) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let found = match types::get_fields(&db, key, &w.meta, asked.iter().copied()) {
        Ok(v) => v,
        Err(e) => return engine_error(e),
    };
    let gone: Vec<Vec<u8>> = asked.iter().zip(found).filter(|(_, f)| f.is_some()).map(|(m, _)| m.to_vec()).collect();
    if gone.is_empty() {
        return Reply::Int(0);
    }
    remove(&mut w, key, &gone);
    db.write(w.finish(key)).map_or_else(engine_error, |()| Reply::Int(gone.len() as i64))
}

fn sismember(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    match read(&db, key) {
        Ok(Some(m)) => types::get_field(&db, key, &m, arg(args, 2))
            .map_or_else(engine_error, |v| Reply::Int(i64::from(v.is_some()))),
        Ok(None) => Reply::Int(0),
        Err(r) => r,
    }
}

fn smismember(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let asked = args.get(2..).unwrap_or_default();
    let db = selected!(ctx);
    match read(&db, key) {
        Ok(Some(m)) => match types::get_fields(&db, key, &m, asked.iter().map(Vec::as_slice)) {
            Ok(v) => Reply::Array(v.into_iter().map(|v| Reply::Int(i64::from(v.is_some()))).collect()),
            Err(e) => engine_error(e),
        },
        Ok(None) => Reply::Array(vec![Reply::Int(0); asked.len()]),
        Err(r) => r,
    }
}

fn scard(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let db = selected!(ctx);
    match read(&db, arg(args, 1)) {
        Ok(m) => Reply::Int(m.map_or(0, |m| m.size as i64)),
        Err(r) => r,
    }
}

fn smembers(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    match read(&db, key) {
        Ok(Some(m)) => members(&db, key, &m).map_or_else(|r| r, bulks),
        Ok(None) => Reply::Array(Vec::new()),
        Err(r) => r,
    }
}

/// SPOP key [count].
fn spop(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let count = match args.get(2..).unwrap_or_default() {
        [] => None,
        [c] => match parse_int(c) {
            Some(n) if n >= 0 => Some(n),
            _ => return Reply::err("value is out of range, must be positive"),
        },
        _ => return syntax_error(),
    };
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let empty = if count.is_some() { Reply::Array(Vec::new()) } else { Reply::Null };
    match read(&db, key) {
        Ok(Some(_)) => {}
        Ok(None) => return empty,
        Err(r) => return r,
    }
    let mut w = match Write::open(&db, key, Kind::Set) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let all = match members(&db, key, &w.meta) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let gone = match count {
        None => pick_one(&all).into_iter().collect(),
        Some(n) => pick(&all, n),
    };
    if gone.is_empty() {
        return empty;
    }
    remove(&mut w, key, &gone);
    if let Err(e) = db.write(w.finish(key)) {
        return engine_error(e);
    }
    match count {
        None => gone.into_iter().next().map_or(Reply::Null, Reply::Bulk),
        Some(_) => bulks(gone),
    }
}

/// SRANDMEMBER key [count].
fn srandmember(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let count = match args.get(2..).unwrap_or_default() {
        [] => None,
        [c] => match parse_count(c) {
            Ok(n) => Some(n),
            Err(r) => return r,
        },
        _ => return syntax_error(),
    };
    let db = selected!(ctx);
    let meta = match read(&db, key) {
        Ok(Some(m)) => m,
        Ok(None) if count.is_some() => return Reply::Array(Vec::new()),
        Ok(None) => return Reply::Null,
        Err(r) => return r,
    };
    let all = match members(&db, key, &meta) {
        Ok(m) => m,
        Err(r) => return r,
    };
    match count {
        None => pick_one(&all).map_or(Reply::Null, Reply::Bulk),
        Some(n) => bulks(pick(&all, n)),
    }
}

/// SMOVE source destination member.
fn smove(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (src, dst, member) = (arg(args, 1), arg(args, 2), arg(args, 3));
    let db = selected!(ctx);
    let _lock = db.lock([src, dst]);
    let src_meta = match read(&db, src) {
        Ok(m) => m,
        Err(r) => return r,
    };
    if let Err(r) = read(&db, dst) {
        return r;
    }
    let Some(src_meta) = src_meta else {
        return Reply::Int(0);
    };
    match types::get_field(&db, src, &src_meta, member) {
        Ok(Some(_)) => {}
        Ok(None) => return Reply::Int(0),
        Err(e) => return engine_error(e),
    }
    if src == dst {
        return Reply::Int(1);
    }
    let present = match read(&db, dst) {
        Ok(Some(m)) => match types::get_field(&db, dst, &m, member) {
            Ok(v) => v.is_some(),
            Err(e) => return engine_error(e),
        },
        Ok(None) => false,
        Err(r) => return r,
    };
    let mut from = match Write::open(&db, src, Kind::Set) {
        Ok(w) => w,
        Err(r) => return r,
    };
    remove(&mut from, src, &[member.to_vec()]);
    let mut batch = from.finish(src);
    // A member the destination already has leaves it untouched (a WATCH of it holds).
    if !present {
        // One batch: the source's writes, then the destination's.
        let mut to = match Write::open_with(&db, dst, Kind::Set, batch) {
            Ok(w) => w,
            Err(r) => return r,
        };
        to.put_field(dst, member, b"");
        to.meta.size += 1;
        batch = to.finish(dst);
    }
    db.write(batch).map_or_else(engine_error, |()| Reply::Int(1))
}

/// How SINTER, SUNION and SDIFF combine their sets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Inter,
    Union,
    Diff,
}

/// The members of the sets at `keys` combined by `op`, or WRONGTYPE (every key is
/// checked, an absent one being the empty set).
fn combine(db: &Selected<'_>, keys: &[Vec<u8>], op: Op) -> Result<BTreeSet<Vec<u8>>, Reply> {
    let mut metas = Vec::with_capacity(keys.len());
    for k in keys {
        metas.push(read(db, k)?);
    }
    let mut out: Option<BTreeSet<Vec<u8>>> = None;
    for (i, (k, m)) in keys.iter().zip(&metas).enumerate() {
        let set: BTreeSet<Vec<u8>> = match m {
            Some(m) => members(db, k, m)?.into_iter().collect(),
            None => BTreeSet::new(),
        };
        out = Some(match (out, op) {
            (None, _) => set,
            (Some(acc), Op::Inter) => acc.intersection(&set).cloned().collect(),
            (Some(mut acc), Op::Union) => {
                acc.extend(set);
                acc
            }
            (Some(acc), Op::Diff) => acc.difference(&set).cloned().collect(),
        });
        if op == Op::Inter && out.as_ref().is_some_and(BTreeSet::is_empty) && i + 1 < keys.len() {
            // The rest cannot add back what an intersection lost (their types are checked).
            break;
        }
    }
    Ok(out.unwrap_or_default())
}

fn algebra(ctx: &mut Ctx<'_>, args: &Args, op: Op) -> Reply {
    let db = selected!(ctx);
    combine(&db, args.get(1..).unwrap_or_default(), op).map_or_else(|r| r, bulks)
}

/// The STORE forms: the result replaces whatever `destination` held (any type); an
/// empty result deletes it. One batch.
fn algebra_store(ctx: &mut Ctx<'_>, args: &Args, op: Op) -> Reply {
    let dst = arg(args, 1);
    let sources = args.get(2..).unwrap_or_default();
    let db = selected!(ctx);
    let _lock = db.lock(args.iter().skip(1).map(Vec::as_slice));
    let result = match combine(&db, sources, op) {
        Ok(r) => r,
        Err(r) => return r,
    };
    let mut batch = db.batch();
    if let Err(e) = types::delete_collection(&db, &mut batch, dst) {
        return engine_error(e);
    }
    batch.delete(&db, dst);
    let n = result.len() as i64;
    if !result.is_empty() {
        let mut w = match Write::open_fresh(&db, Kind::Set, batch) {
            Ok(w) => w,
            Err(r) => return r,
        };
        for m in &result {
            w.put_field(dst, m, b"");
        }
        w.meta.size = result.len() as u64;
        batch = w.finish(dst);
    }
    db.write(batch).map_or_else(engine_error, |()| Reply::Int(n))
}

fn sinter(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    algebra(ctx, args, Op::Inter)
}

fn sunion(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    algebra(ctx, args, Op::Union)
}

fn sdiff(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    algebra(ctx, args, Op::Diff)
}

fn sinterstore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    algebra_store(ctx, args, Op::Inter)
}

fn sunionstore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    algebra_store(ctx, args, Op::Union)
}

fn sdiffstore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    algebra_store(ctx, args, Op::Diff)
}

/// SINTERCARD numkeys key... [LIMIT limit].
fn sintercard(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let n = match parse_int(arg(args, 1)) {
        Some(n) if n > 0 => n as usize,
        Some(_) => return Reply::err("numkeys should be greater than 0"),
        None => return Reply::err("numkeys should be greater than 0"),
    };
    let Some(keys) = args.get(2..2 + n) else {
        return Reply::err("Number of keys can't be greater than number of args");
    };
    let mut limit = 0usize;
    match args.get(2 + n..).unwrap_or_default() {
        [] => {}
        [w, l] if is(w, "LIMIT") => match parse_int(l) {
            Some(l) if l >= 0 => limit = l as usize,
            _ => return Reply::err("LIMIT can't be negative"),
        },
        _ => return syntax_error(),
    }
    let db = selected!(ctx);
    match combine(&db, keys, Op::Inter) {
        Ok(r) if limit > 0 => Reply::Int(r.len().min(limit) as i64),
        Ok(r) => Reply::Int(r.len() as i64),
        Err(r) => r,
    }
}

fn sscan(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    scan_fields(ctx, args, Kind::Set, false)
}
