//! List commands over `list_store`'s layout: LPUSH/RPUSH(X), LPOP/RPOP, LLEN, LRANGE,
//! LINDEX, LSET, LTRIM, LREM, LINSERT, LPOS, LMOVE/RPOPLPUSH, LMPOP. The blocking forms
//! are in `blocking_pops`.
//!
//! Each write holds its keys' stripe locks from its first read to its one batch.

use super::list_store::{all, element, range, ListWrite};
use super::ranks::{clamp_range, position};
use super::zset::{attempt, eng, parse_mpop};
use super::{arg, engine_error, is, not_an_integer, parse_int, selected, syntax_error, Args, Spec, R, RS, W};
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::Selected;
use crate::types::{self, Kind, Meta};

/// The list commands.
#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "lpush", arity: -3, flags: W, keys: (1, 1, 1), group: "list", summary: "Prepend elements", run: lpush },
    Spec { name: "rpush", arity: -3, flags: W, keys: (1, 1, 1), group: "list", summary: "Append elements", run: rpush },
    Spec { name: "lpushx", arity: -3, flags: W, keys: (1, 1, 1), group: "list", summary: "Prepend elements to an existing list", run: lpushx },
    Spec { name: "rpushx", arity: -3, flags: W, keys: (1, 1, 1), group: "list", summary: "Append elements to an existing list", run: rpushx },
    Spec { name: "lpop", arity: -2, flags: W, keys: (1, 1, 1), group: "list", summary: "Remove and reply the first elements", run: lpop },
    Spec { name: "rpop", arity: -2, flags: W, keys: (1, 1, 1), group: "list", summary: "Remove and reply the last elements", run: rpop },
    Spec { name: "llen", arity: 2, flags: R, keys: (1, 1, 1), group: "list", summary: "Number of elements", run: llen },
    Spec { name: "lrange", arity: 4, flags: RS, keys: (1, 1, 1), group: "list", summary: "Elements by position", run: lrange },
    Spec { name: "lindex", arity: 3, flags: RS, keys: (1, 1, 1), group: "list", summary: "The element at a position", run: lindex },
    Spec { name: "lset", arity: 4, flags: W, keys: (1, 1, 1), group: "list", summary: "Overwrite the element at a position", run: lset },
    Spec { name: "ltrim", arity: 4, flags: W, keys: (1, 1, 1), group: "list", summary: "Keep a range of positions only", run: ltrim },
    Spec { name: "lrem", arity: 4, flags: W, keys: (1, 1, 1), group: "list", summary: "Remove elements equal to a value (rewrites the list after the first)", run: lrem },
    Spec { name: "linsert", arity: 5, flags: W, keys: (1, 1, 1), group: "list", summary: "Insert before or after a pivot (rewrites the list after it)", run: linsert },
    Spec { name: "lpos", arity: -3, flags: RS, keys: (1, 1, 1), group: "list", summary: "Positions of an element (RANK, COUNT, MAXLEN)", run: lpos },
    Spec { name: "lmove", arity: 5, flags: W, keys: (1, 2, 1), group: "list", summary: "Pop from one list, push to another", run: lmove },
    Spec { name: "rpoplpush", arity: 3, flags: W, keys: (1, 2, 1), group: "list", summary: "Pop the last element, push it first on another list", run: rpoplpush },
    Spec { name: "lmpop", arity: -4, flags: W, keys: (2, -2, 1), group: "list", summary: "Pop from the first non-empty list of several", run: lmpop },
];

/// `key`'s list for a read: `None` when absent, WRONGTYPE for another type.
pub(super) fn read_list(db: &Selected<'_>, key: &[u8]) -> Result<Option<Meta>, Reply> {
    types::collection(db, key, Kind::List)
}

fn push(ctx: &mut Ctx<'_>, args: &Args, front: bool, only_existing: bool) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    if only_existing && attempt!(read_list(&db, key)).is_none() {
        return Reply::Int(0);
    }
    let mut w = attempt!(ListWrite::open(&db, key));
    for e in args.iter().skip(2) {
        if front {
            w.push_front(e);
        } else {
            w.push_back(e);
        }
    }
    let len = w.len() as i64;
    if let Err(e) = db.write(w.finish()) {
        return engine_error(e);
    }
    ctx.server.waiters.wake(db.index(), key);
    Reply::Int(len)
}

fn lpush(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    push(ctx, args, true, false)
}

fn rpush(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    push(ctx, args, false, false)
}

fn lpushx(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    push(ctx, args, true, true)
}

fn rpushx(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    push(ctx, args, false, true)
}

/// Remove and answer up to `count` elements from the head (`back`: the tail), in pop
/// order; `None` when the key is absent. Take the key's lock first.
pub(super) fn pop_elements(
    db: &Selected<'_>,
    key: &[u8],
    back: bool,
    count: u64,
) -> Result<Option<Vec<Vec<u8>>>, Reply> {
    let Some(meta) = read_list(db, key)? else {
        return Ok(None);
    };
    let n = count.min(meta.size);
    if n == 0 {
        return Ok(Some(Vec::new()));
    }
    let mut popped = if back {
        eng(range(db, key, &meta, meta.size - n, meta.size - 1))?
    } else {
        eng(range(db, key, &meta, 0, n - 1))?
    };
    if back {
        popped.reverse();
    }
    let mut w = ListWrite::open(db, key)?;
    w.drop_end(back, n);
    db.write(w.finish()).map_err(engine_error)?;
    Ok(Some(popped))
}

fn pop_command(ctx: &mut Ctx<'_>, args: &Args, back: bool) -> Reply {
    let key = arg(args, 1);
    let count = match args.get(2..).unwrap_or_default() {
        [] => None,
        [n] => match parse_int(n) {
            Some(n) if n >= 0 => Some(n as u64),
            Some(_) => return Reply::err("value is out of range, must be positive"),
            None => return not_an_integer(),
        },
        _ => return super::wrong_arity(if back { "rpop" } else { "lpop" }),
    };
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    match (attempt!(pop_elements(&db, key, back, count.unwrap_or(1))), count) {
        (None, None) => Reply::Null,
        (None, Some(_)) => Reply::NullArray,
        (Some(popped), None) => popped.into_iter().next().map_or(Reply::Null, Reply::Bulk),
        (Some(popped), Some(_)) => Reply::Array(popped.into_iter().map(Reply::Bulk).collect()),
    }
}

fn lpop(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    pop_command(ctx, args, false)
}

fn rpop(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    pop_command(ctx, args, true)
}

fn llen(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let db = selected!(ctx);
    Reply::Int(attempt!(read_list(&db, arg(args, 1))).map_or(0, |m| m.size as i64))
}

fn lrange(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let (Some(start), Some(stop)) = (parse_int(arg(args, 2)), parse_int(arg(args, 3))) else {
        return not_an_integer();
    };
    let db = selected!(ctx);
    let Some(meta) = attempt!(read_list(&db, key)) else {
        return Reply::Array(Vec::new());
    };
    let Some((first, last)) = clamp_range(start, stop, meta.size) else {
        return Reply::Array(Vec::new());
    };
    Reply::Array(attempt!(eng(range(&db, key, &meta, first, last))).into_iter().map(Reply::Bulk).collect())
}

fn lindex(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let Some(index) = parse_int(arg(args, 2)) else {
        return not_an_integer();
    };
    let db = selected!(ctx);
    let Some(meta) = attempt!(read_list(&db, key)) else {
        return Reply::Null;
    };
    let Some(pos) = position(index, meta.size) else {
        return Reply::Null;
    };
    attempt!(eng(element(&db, key, &meta, pos))).map_or(Reply::Null, Reply::Bulk)
}

fn lset(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (key, value) = (arg(args, 1), arg(args, 3));
    let Some(index) = parse_int(arg(args, 2)) else {
        return not_an_integer();
    };
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let Some(meta) = attempt!(read_list(&db, key)) else {
        return Reply::err("no such key");
    };
    let Some(pos) = position(index, meta.size) else {
        return Reply::err("index out of range");
    };
    let mut w = attempt!(ListWrite::open(&db, key));
    w.set(pos, value);
    db.write(w.finish()).map_or_else(engine_error, |()| Reply::OK)
}

fn ltrim(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let (Some(start), Some(stop)) = (parse_int(arg(args, 2)), parse_int(arg(args, 3))) else {
        return not_an_integer();
    };
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let Some(meta) = attempt!(read_list(&db, key)) else {
        return Reply::OK;
    };
    let mut w = attempt!(ListWrite::open(&db, key));
    match clamp_range(start, stop, meta.size) {
        Some((first, last)) => w.keep(first, last),
        // Nothing kept: the list goes.
        None => w.drop_end(false, meta.size),
    }
    db.write(w.finish()).map_or_else(engine_error, |()| Reply::OK)
}

/// LREM key count element: the first `count` equal elements from the head (negative:
/// from the tail; 0: all).
fn lrem(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (key, value) = (arg(args, 1), arg(args, 3));
    let Some(count) = parse_int(arg(args, 2)) else {
        return not_an_integer();
    };
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let Some(meta) = attempt!(read_list(&db, key)) else {
        return Reply::Int(0);
    };
    let old = attempt!(eng(all(&db, key, &meta)));
    let limit = if count == 0 { u64::MAX } else { count.unsigned_abs() };
    let mut removed = 0u64;
    let mut keep = vec![true; old.len()];
    let order: Box<dyn Iterator<Item = usize>> =
        if count < 0 { Box::new((0..old.len()).rev()) } else { Box::new(0..old.len()) };
    for i in order {
        if removed == limit {
            break;
        }
        if old.get(i).is_some_and(|e| e.as_slice() == value) {
            if let Some(k) = keep.get_mut(i) {
                *k = false;
            }
            removed += 1;
        }
    }
    if removed == 0 {
        return Reply::Int(0);
    }
    let new: Vec<Vec<u8>> = old.iter().zip(&keep).filter(|(_, k)| **k).map(|(e, _)| e.clone()).collect();
    let mut w = attempt!(ListWrite::open(&db, key));
    w.replace(&old, &new);
    db.write(w.finish()).map_or_else(engine_error, |()| Reply::Int(removed as i64))
}

/// LINSERT key BEFORE|AFTER pivot element: the new length, -1 without the pivot, 0
/// without the key.
fn linsert(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (key, pivot, value) = (arg(args, 1), arg(args, 3), arg(args, 4));
    let after = match arg(args, 2) {
        w if is(w, "BEFORE") => false,
        w if is(w, "AFTER") => true,
        _ => return syntax_error(),
    };
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let Some(meta) = attempt!(read_list(&db, key)) else {
        return Reply::Int(0);
    };
    let old = attempt!(eng(all(&db, key, &meta)));
    let Some(at) = old.iter().position(|e| e.as_slice() == pivot) else {
        return Reply::Int(-1);
    };
    let mut new = old.clone();
    new.insert(if after { at + 1 } else { at }, value.to_vec());
    let mut w = attempt!(ListWrite::open(&db, key));
    w.replace(&old, &new);
    let len = new.len() as i64;
    db.write(w.finish()).map_or_else(engine_error, |()| Reply::Int(len))
}

/// LPOS key element [RANK r] [COUNT c] [MAXLEN m].
fn lpos(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (key, value) = (arg(args, 1), arg(args, 2));
    let (mut rank, mut count, mut maxlen) = (1i64, None, 0u64);
    let mut words = args.iter().skip(3);
    while let Some(w) = words.next() {
        let Some(v) = words.next() else {
            return syntax_error();
        };
        let Some(n) = parse_int(v) else {
            return not_an_integer();
        };
        if is(w, "RANK") {
            if n == 0 {
                return Reply::err(
                    "RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list",
                );
            }
            if n == i64::MIN {
                return Reply::err("value is out of range");
            }
            rank = n;
        } else if is(w, "COUNT") {
            if n < 0 {
                return Reply::err("COUNT can't be negative");
            }
            count = Some(n as u64);
        } else if is(w, "MAXLEN") {
            if n < 0 {
                return Reply::err("MAXLEN can't be negative");
            }
            maxlen = n as u64;
        } else {
            return syntax_error();
        }
    }
    let db = selected!(ctx);
    let none = || if count.is_some() { Reply::Array(Vec::new()) } else { Reply::Null };
    let Some(meta) = attempt!(read_list(&db, key)) else {
        return none();
    };
    let elements = attempt!(eng(all(&db, key, &meta)));
    let len = elements.len();
    let limit = if maxlen == 0 { len } else { (maxlen as usize).min(len) };
    let order: Box<dyn Iterator<Item = usize>> =
        if rank < 0 { Box::new((0..len).rev().take(limit)) } else { Box::new((0..len).take(limit)) };
    let mut skip = rank.unsigned_abs() - 1;
    let wanted = match count {
        Some(0) => u64::MAX,
        Some(c) => c,
        None => 1,
    };
    let mut found = Vec::new();
    for i in order {
        if elements.get(i).is_some_and(|e| e.as_slice() == value) {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            found.push(Reply::Int(i as i64));
            if found.len() as u64 == wanted {
                break;
            }
        }
    }
    match count {
        Some(_) => Reply::Array(found),
        None => found.into_iter().next().unwrap_or(Reply::Null),
    }
}

/// Which end LMOVE's words name.
fn end_of(word: &[u8]) -> Option<bool> {
    match word {
        w if is(w, "LEFT") => Some(false),
        w if is(w, "RIGHT") => Some(true),
        _ => None,
    }
}

/// Pop from `src`'s end (`from_back`), push at `dst`'s (`to_back`), in one batch; the
/// element moved, or `None` when `src` is absent. WRONGTYPE (nothing moved) when either
/// key holds another type. Take both keys' locks first.
pub(super) fn move_element(
    db: &Selected<'_>,
    src: &[u8],
    dst: &[u8],
    from_back: bool,
    to_back: bool,
) -> Result<Option<Vec<u8>>, Reply> {
    let Some(meta) = read_list(db, src)? else {
        return Ok(None);
    };
    read_list(db, dst)?;
    let pos = if from_back { meta.size.saturating_sub(1) } else { 0 };
    let Some(e) = eng(element(db, src, &meta, pos))? else {
        return Ok(None);
    };
    let push = |w: &mut ListWrite<'_>| if to_back { w.push_back(&e) } else { w.push_front(&e) };
    let batch = if src == dst {
        let mut w = ListWrite::open(db, src)?;
        w.drop_end(from_back, 1);
        push(&mut w);
        w.finish()
    } else {
        let mut from = ListWrite::open(db, src)?;
        let mut to = ListWrite::open(db, dst)?;
        // One batch: the destination's (it may hold the delete of an expired list).
        from.join(std::mem::replace(&mut to.w.batch, db.batch()));
        from.drop_end(from_back, 1);
        to.join(from.finish());
        push(&mut to);
        to.finish()
    };
    db.write(batch).map_err(engine_error)?;
    Ok(Some(e))
}

fn lmove(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (src, dst) = (arg(args, 1), arg(args, 2));
    let (Some(from_back), Some(to_back)) = (end_of(arg(args, 3)), end_of(arg(args, 4))) else {
        return syntax_error();
    };
    let db = selected!(ctx);
    let _lock = db.lock([src, dst]);
    let moved = attempt!(move_element(&db, src, dst, from_back, to_back));
    if moved.is_some() {
        ctx.server.waiters.wake(db.index(), dst);
    }
    moved.map_or(Reply::Null, Reply::Bulk)
}

fn rpoplpush(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (src, dst) = (arg(args, 1), arg(args, 2));
    let db = selected!(ctx);
    let _lock = db.lock([src, dst]);
    let moved = attempt!(move_element(&db, src, dst, true, false));
    if moved.is_some() {
        ctx.server.waiters.wake(db.index(), dst);
    }
    moved.map_or(Reply::Null, Reply::Bulk)
}

/// Pop from the first non-empty list among `keys`: [key, elements], or nil.
pub(super) fn mpop(db: &Selected<'_>, keys: &[Vec<u8>], back: bool, count: u64) -> Result<Option<Reply>, Reply> {
    for key in keys {
        if let Some(popped) = pop_elements(db, key, back, count)? {
            if !popped.is_empty() {
                let elements = popped.into_iter().map(Reply::Bulk).collect();
                return Ok(Some(Reply::Array(vec![Reply::Bulk(key.clone()), Reply::Array(elements)])));
            }
        }
    }
    Ok(None)
}

/// LMPOP numkeys key... LEFT|RIGHT [COUNT n].
fn lmpop(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (keys, back, count) = attempt!(parse_mpop(args.get(1..).unwrap_or_default(), "LEFT", "RIGHT"));
    let db = selected!(ctx);
    let _lock = db.lock(keys.iter().map(Vec::as_slice));
    attempt!(mpop(&db, &keys, back, count)).unwrap_or(Reply::NullArray)
}
