//! Sorted-set commands over `zset_store`'s layout: ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE,
//! ZMSCORE, ZRANK/ZREVRANK, ZCOUNT, ZLEXCOUNT, the ZRANGE family, the ZREMRANGEBY
//! family, ZPOPMIN/ZPOPMAX/ZMPOP, ZRANDMEMBER, ZSCAN. The union, intersection and
//! difference commands are in `zset_combine`.
//!
//! Each write holds its key's stripe lock from its first read to its one batch. A score
//! range or a lexicographic range is a seek and a walk; a rank is a walk from an end,
//! O(rank) (the layout counts nothing between two keys).

use super::ranks::clamp_range;
use super::score;
use super::zset_args::{not_a_float, LexBound, RangeBy, RangeForm, RangeRequest, ScoreRange, ZaddOptions};
use super::zset_store::{all, score_of, scores_of, ByMember, ByScore, ZsetWrite};
use super::{arg, engine_error, is, not_an_integer, parse_int, selected, syntax_error, Args, Spec, R, RS, W};
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::Selected;
use crate::types::{self, Kind, Meta};
use rand::seq::SliceRandom;
use rand::Rng;

/// The sorted-set commands.
#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "zadd", arity: -4, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Add members or update their scores (NX, XX, GT, LT, CH, INCR)", run: zadd },
    Spec { name: "zincrby", arity: 4, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Add to a member's score", run: zincrby },
    Spec { name: "zrem", arity: -3, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Remove members", run: zrem },
    Spec { name: "zcard", arity: 2, flags: R, keys: (1, 1, 1), group: "sorted-set", summary: "Number of members", run: zcard },
    Spec { name: "zscore", arity: 3, flags: R, keys: (1, 1, 1), group: "sorted-set", summary: "A member's score", run: zscore },
    Spec { name: "zmscore", arity: -3, flags: R, keys: (1, 1, 1), group: "sorted-set", summary: "Several members' scores", run: zmscore },
    Spec { name: "zrank", arity: -3, flags: R, keys: (1, 1, 1), group: "sorted-set", summary: "A member's rank, lowest score first (walks the ranks before it)", run: zrank },
    Spec { name: "zrevrank", arity: -3, flags: R, keys: (1, 1, 1), group: "sorted-set", summary: "A member's rank, highest score first (walks the ranks before it)", run: zrevrank },
    Spec { name: "zcount", arity: 4, flags: R, keys: (1, 1, 1), group: "sorted-set", summary: "Members in a score range", run: zcount },
    Spec { name: "zlexcount", arity: 4, flags: R, keys: (1, 1, 1), group: "sorted-set", summary: "Members in a lexicographic range", run: zlexcount },
    Spec { name: "zrange", arity: -4, flags: RS, keys: (1, 1, 1), group: "sorted-set", summary: "Members by rank, score (BYSCORE) or member (BYLEX), REV, LIMIT, WITHSCORES", run: zrange },
    Spec { name: "zrangestore", arity: -5, flags: W, keys: (1, 2, 1), group: "sorted-set", summary: "Store a ZRANGE's members in a sorted set", run: zrangestore },
    Spec { name: "zrevrange", arity: -4, flags: RS, keys: (1, 1, 1), group: "sorted-set", summary: "Members by rank, highest score first", run: zrevrange },
    Spec { name: "zrangebyscore", arity: -4, flags: RS, keys: (1, 1, 1), group: "sorted-set", summary: "Members in a score range", run: zrangebyscore },
    Spec { name: "zrevrangebyscore", arity: -4, flags: RS, keys: (1, 1, 1), group: "sorted-set", summary: "Members in a score range, highest first", run: zrevrangebyscore },
    Spec { name: "zrangebylex", arity: -4, flags: RS, keys: (1, 1, 1), group: "sorted-set", summary: "Members in a lexicographic range", run: zrangebylex },
    Spec { name: "zrevrangebylex", arity: -4, flags: RS, keys: (1, 1, 1), group: "sorted-set", summary: "Members in a lexicographic range, last first", run: zrevrangebylex },
    Spec { name: "zremrangebyscore", arity: 4, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Remove the members in a score range", run: zremrangebyscore },
    Spec { name: "zremrangebyrank", arity: 4, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Remove the members in a rank range", run: zremrangebyrank },
    Spec { name: "zremrangebylex", arity: 4, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Remove the members in a lexicographic range", run: zremrangebylex },
    Spec { name: "zpopmin", arity: -2, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Remove and reply the lowest-scored members", run: zpopmin },
    Spec { name: "zpopmax", arity: -2, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Remove and reply the highest-scored members", run: zpopmax },
    Spec { name: "zmpop", arity: -4, flags: W, keys: (2, -2, 1), group: "sorted-set", summary: "Pop from the first non-empty sorted set of several", run: zmpop },
    Spec { name: "zrandmember", arity: -2, flags: RS, keys: (1, 1, 1), group: "sorted-set", summary: "Random members (reads the whole set)", run: zrandmember },
    Spec { name: "zscan", arity: -3, flags: RS, keys: (1, 1, 1), group: "sorted-set", summary: "Walk a sorted set's members (cursor, MATCH, COUNT)", run: zscan },
];

/// Return the reply of an `Err`.
macro_rules! attempt {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(r) => return r,
        }
    };
}
pub(super) use attempt;

/// An engine result as a command's: its error as the reply.
pub(super) fn eng<T>(r: shamba::Result<T>) -> Result<T, Reply> {
    r.map_err(engine_error)
}

/// `key`'s sorted set for a read: `None` when absent, WRONGTYPE for another type.
pub(super) fn read_zset(db: &Selected<'_>, key: &[u8]) -> Result<Option<Meta>, Reply> {
    types::collection(db, key, Kind::ZSet)
}

/// Members with their scores as a reply: members alone, or with scores as Redis gives
/// them, member, score, member, ... in RESP2 and [member, score] pairs in RESP3 (`pairs`).
pub(super) fn scored_reply(items: Vec<(Vec<u8>, f64)>, with_scores: bool, pairs: bool) -> Reply {
    if with_scores && pairs {
        return Reply::Array(
            items.into_iter().map(|(m, s)| Reply::Array(vec![Reply::Bulk(m), score_reply(s)])).collect(),
        );
    }
    let mut out = Vec::with_capacity(items.len() * if with_scores { 2 } else { 1 });
    for (m, s) in items {
        out.push(Reply::Bulk(m));
        if with_scores {
            out.push(score_reply(s));
        }
    }
    Reply::Array(out)
}

/// Whether the connection speaks RESP3 (scored replies come as pairs).
pub(super) fn resp3(ctx: &Ctx<'_>) -> bool {
    ctx.session.proto == crate::reply::Protocol::Resp3
}

/// A score as a reply.
pub(super) fn score_reply(s: f64) -> Reply {
    Reply::Double(s)
}

fn zadd(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let opts = attempt!(ZaddOptions::parse(args.get(2..).unwrap_or_default()));
    zadd_with(ctx, arg(args, 1), &opts)
}

fn zincrby(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let Some(by) = score::parse(arg(args, 2)) else {
        return not_a_float();
    };
    let opts = ZaddOptions { incr: true, pairs: vec![(by, arg(args, 3).to_vec())], ..ZaddOptions::default() };
    zadd_with(ctx, arg(args, 1), &opts)
}

fn zadd_with(ctx: &mut Ctx<'_>, key: &[u8], opts: &ZaddOptions) -> Reply {
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let mut w = attempt!(ZsetWrite::open(&db, key));
    let (mut added, mut changed) = (0, 0);
    let mut incr_result = None;
    for (s, member) in &opts.pairs {
        let old = attempt!(eng(w.score(&db, member)));
        let new = if opts.incr { old.unwrap_or(0.0) + s } else { *s };
        if new.is_nan() {
            return Reply::err("resulting score is not a number (NaN)");
        }
        if !opts.allows(old, new) {
            continue;
        }
        match old {
            None => added += 1,
            Some(o) if score::encode(o) != score::encode(new) => changed += 1,
            Some(_) => {}
        }
        w.set(member, old, new);
        incr_result = Some(new);
    }
    let batch = w.finish();
    if let Err(e) = db.write(batch) {
        return engine_error(e);
    }
    ctx.server.waiters.wake(db.index(), key);
    if opts.incr {
        return incr_result.map_or(Reply::Null, score_reply);
    }
    Reply::Int(if opts.ch { added + changed } else { added })
}

fn zrem(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    if attempt!(read_zset(&db, key)).is_none() {
        return Reply::Int(0);
    }
    let mut w = attempt!(ZsetWrite::open(&db, key));
    let mut removed = 0;
    for member in args.iter().skip(2) {
        if let Some(old) = attempt!(eng(w.score(&db, member))) {
            w.remove(member, old);
            removed += 1;
        }
    }
    if removed == 0 {
        // Nothing changed: nothing written (and no notification).
        return Reply::Int(0);
    }
    db.write(w.finish()).map_or_else(engine_error, |()| Reply::Int(removed))
}

fn zcard(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let db = selected!(ctx);
    Reply::Int(attempt!(read_zset(&db, arg(args, 1))).map_or(0, |m| m.size as i64))
}

fn zscore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (key, member) = (arg(args, 1), arg(args, 2));
    let db = selected!(ctx);
    let Some(meta) = attempt!(read_zset(&db, key)) else {
        return Reply::Null;
    };
    attempt!(eng(score_of(&db, key, &meta, member))).map_or(Reply::Null, score_reply)
}

fn zmscore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let members: Vec<&[u8]> = args.iter().skip(2).map(Vec::as_slice).collect();
    let db = selected!(ctx);
    let Some(meta) = attempt!(read_zset(&db, key)) else {
        return Reply::Array(vec![Reply::Null; members.len()]);
    };
    let scores = attempt!(eng(scores_of(&db, key, &meta, &members)));
    Reply::Array(scores.into_iter().map(|s| s.map_or(Reply::Null, score_reply)).collect())
}

fn zrank(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    rank(ctx, args, false)
}

fn zrevrank(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    rank(ctx, args, true)
}

/// ZRANK/ZREVRANK key member [WITHSCORE]: a walk from the end the rank counts from.
fn rank(ctx: &mut Ctx<'_>, args: &Args, rev: bool) -> Reply {
    let (key, member) = (arg(args, 1), arg(args, 2));
    let with_score = match args.get(3..).unwrap_or_default() {
        [] => false,
        [w] if is(w, "WITHSCORE") => true,
        _ => return syntax_error(),
    };
    let none = if with_score { Reply::NullArray } else { Reply::Null };
    let db = selected!(ctx);
    let Some(meta) = attempt!(read_zset(&db, key)) else {
        return none;
    };
    let Some(s) = attempt!(eng(score_of(&db, key, &meta, member))) else {
        return none;
    };
    let mut rank = 0i64;
    for item in ByScore::new(&db, key, &meta, rev, None) {
        let (_, m) = attempt!(eng(item));
        if m == member {
            break;
        }
        rank += 1;
    }
    if with_score {
        Reply::Array(vec![Reply::Int(rank), score_reply(s)])
    } else {
        Reply::Int(rank)
    }
}

fn zcount(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let range = attempt!(ScoreRange::parse(arg(args, 2), arg(args, 3)));
    let db = selected!(ctx);
    let Some(meta) = attempt!(read_zset(&db, key)) else {
        return Reply::Int(0);
    };
    let req = RangeRequest { by: RangeBy::Score(range), rev: false, limit: None, with_scores: false };
    attempt!(eng(select(&db, key, &meta, &req))).len().try_into().map_or(Reply::Int(i64::MAX), Reply::Int)
}

fn zlexcount(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let range = attempt!(super::zset_args::LexRange::parse(arg(args, 2), arg(args, 3)));
    let db = selected!(ctx);
    let Some(meta) = attempt!(read_zset(&db, key)) else {
        return Reply::Int(0);
    };
    let req = RangeRequest { by: RangeBy::Lex(range), rev: false, limit: None, with_scores: false };
    attempt!(eng(select(&db, key, &meta, &req))).len().try_into().map_or(Reply::Int(i64::MAX), Reply::Int)
}

/// The members `req` selects from the set `meta` at `key`, in reply order, with scores.
///
/// # Errors
///
/// The first error of the walk.
pub(super) fn select(
    db: &Selected<'_>,
    key: &[u8],
    meta: &Meta,
    req: &RangeRequest,
) -> shamba::Result<Vec<(Vec<u8>, f64)>> {
    let (mut skip, mut take) = match req.limit {
        None => (0, u64::MAX),
        Some((offset, _)) if offset < 0 => return Ok(Vec::new()),
        Some((offset, count)) => (offset as u64, u64::try_from(count).unwrap_or(u64::MAX)),
    };
    let mut out = Vec::new();
    match &req.by {
        RangeBy::Rank(start, stop) => {
            let Some((first, last)) = clamp_range(*start, *stop, meta.size) else {
                return Ok(out);
            };
            // Every item is looked at, those before `first` too: a step of the walk that
            // fails (a block not in memory, on a connection's task: see `no_wait`) comes as
            // an item, and `Iterator::skip` would drop it and answer from a cut walk.
            for (rank, item) in (0u64..).zip(ByScore::new(db, key, meta, req.rev, None)) {
                let (s, m) = item?;
                if rank >= first {
                    out.push((m, s));
                }
                if rank >= last {
                    break;
                }
            }
        }
        RangeBy::Score(range) => {
            if range.is_empty() {
                return Ok(out);
            }
            let from = if req.rev { range.max } else { range.min };
            for item in ByScore::new(db, key, meta, req.rev, Some(from)) {
                let (s, m) = item?;
                let (before_start, past_end) = if req.rev {
                    (!range.below_max(s), !range.above_min(s))
                } else {
                    (!range.above_min(s), !range.below_max(s))
                };
                if before_start {
                    continue;
                }
                if past_end || take == 0 {
                    break;
                }
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                out.push((m, s));
                take -= 1;
            }
        }
        RangeBy::Lex(range) => {
            let start = if req.rev { &range.max } else { &range.min };
            let from = match start {
                LexBound::Inclusive(m) | LexBound::Exclusive(m) => Some(m.as_slice()),
                LexBound::Lowest if req.rev => return Ok(out),
                LexBound::Highest if !req.rev => return Ok(out),
                LexBound::Lowest | LexBound::Highest => None,
            };
            for item in ByMember::new(db, key, meta, req.rev, from) {
                let (m, s) = item?;
                let (before_start, past_end) = if req.rev {
                    (!range.below_max(&m), !range.above_min(&m))
                } else {
                    (!range.above_min(&m), !range.below_max(&m))
                };
                if before_start {
                    continue;
                }
                if past_end || take == 0 {
                    break;
                }
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                out.push((m, s));
                take -= 1;
            }
        }
    }
    Ok(out)
}

fn range_command(ctx: &mut Ctx<'_>, args: &Args, form: RangeForm) -> Reply {
    let key = arg(args, 1);
    let req = attempt!(RangeRequest::parse(form, arg(args, 2), arg(args, 3), args.get(4..).unwrap_or_default()));
    let db = selected!(ctx);
    let Some(meta) = attempt!(read_zset(&db, key)) else {
        return Reply::Array(Vec::new());
    };
    scored_reply(attempt!(eng(select(&db, key, &meta, &req))), req.with_scores, resp3(ctx))
}

fn zrange(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    range_command(ctx, args, RangeForm::Unified { store: false })
}

fn zrevrange(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    range_command(ctx, args, RangeForm::RevRank)
}

fn zrangebyscore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    range_command(ctx, args, RangeForm::ByScore { rev: false })
}

fn zrevrangebyscore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    range_command(ctx, args, RangeForm::ByScore { rev: true })
}

fn zrangebylex(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    range_command(ctx, args, RangeForm::ByLex { rev: false })
}

fn zrevrangebylex(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    range_command(ctx, args, RangeForm::ByLex { rev: true })
}

/// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count].
fn zrangestore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (dst, src) = (arg(args, 1), arg(args, 2));
    let req = attempt!(RangeRequest::parse(
        RangeForm::Unified { store: true },
        arg(args, 3),
        arg(args, 4),
        args.get(5..).unwrap_or_default()
    ));
    let db = selected!(ctx);
    let _lock = db.lock([dst, src]);
    let items = match attempt!(read_zset(&db, src)) {
        Some(meta) => attempt!(eng(select(&db, src, &meta, &req))),
        None => Vec::new(),
    };
    let reply = store_result(&db, dst, items);
    ctx.server.waiters.wake(db.index(), dst);
    reply
}

/// Replace whatever `dst` holds with a sorted set of `items` (none: delete `dst`); reply
/// its size. Take `dst`'s lock first.
pub(super) fn store_result(db: &Selected<'_>, dst: &[u8], items: Vec<(Vec<u8>, f64)>) -> Reply {
    let mut batch = db.batch();
    attempt!(eng(types::delete_collection(db, &mut batch, dst)));
    batch.delete(db, dst);
    let n = items.len() as i64;
    if !items.is_empty() {
        let mut w = attempt!(ZsetWrite::fresh(db, dst, batch));
        for (m, s) in items {
            w.set(&m, None, s);
        }
        batch = w.finish();
    }
    db.write(batch).map_or_else(engine_error, |()| Reply::Int(n))
}

fn remove_range(ctx: &mut Ctx<'_>, args: &Args, by: RangeBy) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let Some(meta) = attempt!(read_zset(&db, key)) else {
        return Reply::Int(0);
    };
    let req = RangeRequest { by, rev: false, limit: None, with_scores: false };
    let doomed = attempt!(eng(select(&db, key, &meta, &req)));
    if doomed.is_empty() {
        return Reply::Int(0);
    }
    let mut w = attempt!(ZsetWrite::open(&db, key));
    for (m, s) in &doomed {
        w.remove(m, *s);
    }
    db.write(w.finish()).map_or_else(engine_error, |()| Reply::Int(doomed.len() as i64))
}

fn zremrangebyscore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let range = attempt!(ScoreRange::parse(arg(args, 2), arg(args, 3)));
    remove_range(ctx, args, RangeBy::Score(range))
}

fn zremrangebylex(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let range = attempt!(super::zset_args::LexRange::parse(arg(args, 2), arg(args, 3)));
    remove_range(ctx, args, RangeBy::Lex(range))
}

fn zremrangebyrank(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (Some(start), Some(stop)) = (parse_int(arg(args, 2)), parse_int(arg(args, 3))) else {
        return not_an_integer();
    };
    remove_range(ctx, args, RangeBy::Rank(start, stop))
}

/// Remove and answer up to `count` members from the low end (`max`: the high end).
pub(super) fn pop(db: &Selected<'_>, key: &[u8], max: bool, count: u64) -> Result<Vec<(Vec<u8>, f64)>, Reply> {
    let Some(meta) = read_zset(db, key)? else {
        return Ok(Vec::new());
    };
    let mut popped = Vec::new();
    for item in ByScore::new(db, key, &meta, max, None).take(count.min(meta.size) as usize) {
        let (s, m) = eng(item)?;
        popped.push((m, s));
    }
    let mut w = ZsetWrite::open(db, key)?;
    for (m, s) in &popped {
        w.remove(m, *s);
    }
    db.write(w.finish()).map_err(engine_error)?;
    Ok(popped)
}

fn zpopmin(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    pop_command(ctx, args, false)
}

fn zpopmax(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    pop_command(ctx, args, true)
}

fn pop_command(ctx: &mut Ctx<'_>, args: &Args, max: bool) -> Reply {
    let key = arg(args, 1);
    let count = match args.get(2..).unwrap_or_default() {
        [] => None,
        [n] => match parse_int(n) {
            Some(n) if n >= 0 => Some(n as u64),
            Some(_) => return Reply::err("value is out of range, must be positive"),
            None => return not_an_integer(),
        },
        _ => return syntax_error(),
    };
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    // Without a count: one flat [member, score], in either protocol.
    scored_reply(attempt!(pop(&db, key, max, count.unwrap_or(1))), true, count.is_some() && resp3(ctx))
}

/// ZMPOP numkeys key... MIN|MAX [COUNT n].
fn zmpop(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (keys, max, count) = attempt!(parse_mpop(args.get(1..).unwrap_or_default(), "MIN", "MAX"));
    let db = selected!(ctx);
    let _lock = db.lock(keys.iter().map(Vec::as_slice));
    for key in &keys {
        let popped = attempt!(pop(&db, key, max, count));
        if !popped.is_empty() {
            let pairs = popped.into_iter().map(|(m, s)| Reply::Array(vec![Reply::Bulk(m), score_reply(s)])).collect();
            return Reply::Array(vec![Reply::Bulk(key.clone()), Reply::Array(pairs)]);
        }
    }
    Reply::NullArray
}

/// `numkeys key... WHERE [COUNT n]` of ZMPOP and LMPOP (`low`/`high`: the two words of
/// WHERE): the keys, whether the high end was named, the count.
pub(super) fn parse_mpop(words: &[Vec<u8>], low: &str, high: &str) -> Result<(Vec<Vec<u8>>, bool, u64), Reply> {
    let numkeys = || Reply::err("numkeys should be greater than 0");
    let n = match words.first().and_then(|w| parse_int(w)) {
        Some(n) if n > 0 => n as usize,
        _ => return Err(numkeys()),
    };
    let keys = words.get(1..).and_then(|w| w.get(..n)).ok_or_else(syntax_error)?.to_vec();
    let rest = words.get(n + 1..).unwrap_or_default();
    let high_end = match rest.first() {
        Some(w) if is(w, low) => false,
        Some(w) if is(w, high) => true,
        _ => return Err(syntax_error()),
    };
    let count = match rest.get(1..).unwrap_or_default() {
        [] => 1,
        [c, n] if is(c, "COUNT") => match parse_int(n) {
            Some(n) if n > 0 => n as u64,
            _ => return Err(Reply::err("count should be greater than 0")),
        },
        _ => return Err(syntax_error()),
    };
    Ok((keys, high_end, count))
}

/// ZRANDMEMBER key [count [WITHSCORES]]: reads the whole set, then draws.
fn zrandmember(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let (count, with_scores) = match args.get(2..).unwrap_or_default() {
        [] => (None, false),
        [n, rest @ ..] => {
            let with_scores = match rest {
                [] => false,
                [w] if is(w, "WITHSCORES") => true,
                _ => return syntax_error(),
            };
            match parse_int(n) {
                Some(i64::MIN) => return Reply::err("value is out of range"),
                Some(n) if with_scores && n < -(i64::MAX / 2) => return Reply::err("value is out of range"),
                Some(n) => (Some(n), with_scores),
                None => return not_an_integer(),
            }
        }
    };
    let db = selected!(ctx);
    let Some(meta) = attempt!(read_zset(&db, key)) else {
        return if count.is_some() { Reply::Array(Vec::new()) } else { Reply::Null };
    };
    let mut members: Vec<(Vec<u8>, f64)> =
        attempt!(eng(all(&db, key, &meta))).into_iter().map(|(s, m)| (m, s)).collect();
    let mut rng = rand::thread_rng();
    let Some(count) = count else {
        return members.choose(&mut rng).map_or(Reply::Null, |(m, _)| Reply::Bulk(m.clone()));
    };
    if members.is_empty() {
        return Reply::Array(Vec::new());
    }
    let picked: Vec<(Vec<u8>, f64)> = if count >= 0 {
        members.shuffle(&mut rng);
        members.truncate(count as usize);
        members
    } else {
        (0..count.unsigned_abs()).filter_map(|_| members.get(rng.gen_range(0..members.len())).cloned()).collect()
    };
    scored_reply(picked, with_scores, resp3(ctx))
}

/// ZSCAN key cursor [MATCH pattern] [COUNT n]: the cursor stands for the last member
/// returned (the server's cursor table), so members added meanwhile never make a scan
/// repeat one.
fn zscan(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let mut pattern = None;
    let mut count = 10usize;
    let mut words = args.iter().skip(3);
    while let Some(w) = words.next() {
        let Some(v) = words.next() else {
            return syntax_error();
        };
        if is(w, "MATCH") {
            pattern = Some(v.clone()).filter(|p| p.as_slice() != b"*");
        } else if is(w, "COUNT") {
            match parse_int(v) {
                Some(n) if n >= 1 => count = n.min(1 << 20) as usize,
                Some(_) => return syntax_error(),
                None => return not_an_integer(),
            }
        } else {
            return syntax_error();
        }
    }
    let server = ctx.server;
    let after = match arg(args, 2) {
        b"0" => None,
        c => match std::str::from_utf8(c).ok().and_then(|s| s.parse::<u64>().ok()) {
            Some(n) => match server.cursors.resolve(n) {
                Some(m) => Some(m),
                None => return Reply::err("invalid cursor"),
            },
            None => return Reply::err("invalid cursor"),
        },
    };
    let db = selected!(ctx);
    let Some(meta) = attempt!(read_zset(&db, key)) else {
        return Reply::Array(vec![Reply::text_bulk("0"), Reply::Array(Vec::new())]);
    };
    let mut found = Vec::new();
    let mut examined = 0;
    let mut last = None;
    for item in ByMember::new(&db, key, &meta, false, after.as_deref()) {
        let (m, s) = attempt!(eng(item));
        if after.as_ref() == Some(&m) {
            continue;
        }
        examined += 1;
        if pattern.as_deref().is_none_or(|p| crate::glob::matches(p, &m)) {
            found.push(Reply::Bulk(m.clone()));
            found.push(score_reply(s));
        }
        if examined == count {
            last = Some(m);
            break;
        }
    }
    let cursor = last.map_or(0, |m| server.cursors.issue(m));
    Reply::Array(vec![Reply::text_bulk(cursor.to_string()), Reply::Array(found)])
}
