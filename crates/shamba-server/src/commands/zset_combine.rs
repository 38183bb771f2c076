//! ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD: the sources (sorted sets, or
//! sets whose members score 1) are read whole, combined in memory, and the result replied
//! or written as one new sorted set in one batch.

use super::zset::{attempt, eng, resp3, scored_reply, store_result};
use super::zset_args::{Aggregate, Combine, SetOp};
use super::zset_store::all;
use super::{arg, is, parse_int, selected, syntax_error, Args, Spec, RS, W};
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::Selected;
use crate::types::{self, Entry, Kind};
use std::collections::{HashMap, HashSet};

/// The combining commands.
#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "zunionstore", arity: -4, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Store the union of sorted sets (WEIGHTS, AGGREGATE)", run: zunionstore },
    Spec { name: "zinterstore", arity: -4, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Store the intersection of sorted sets (WEIGHTS, AGGREGATE)", run: zinterstore },
    Spec { name: "zdiffstore", arity: -4, flags: W, keys: (1, 1, 1), group: "sorted-set", summary: "Store the first sorted set less the others", run: zdiffstore },
    Spec { name: "zunion", arity: -3, flags: RS, keys: (0, 0, 0), group: "sorted-set", summary: "The union of sorted sets", run: zunion },
    Spec { name: "zinter", arity: -3, flags: RS, keys: (0, 0, 0), group: "sorted-set", summary: "The intersection of sorted sets", run: zinter },
    Spec { name: "zdiff", arity: -3, flags: RS, keys: (0, 0, 0), group: "sorted-set", summary: "The first sorted set less the others", run: zdiff },
    Spec { name: "zintercard", arity: -3, flags: RS, keys: (0, 0, 0), group: "sorted-set", summary: "Size of the intersection of sorted sets (LIMIT)", run: zintercard },
];

/// Members with their scores.
type Members = Vec<(Vec<u8>, f64)>;

/// One source's members and scores; `None` when absent. WRONGTYPE for a string, hash or
/// list.
fn source(db: &Selected<'_>, key: &[u8]) -> Result<Option<Members>, Reply> {
    match eng(types::lookup(db, key))? {
        Entry::Absent => Ok(None),
        Entry::Collection(meta) if meta.kind == Kind::ZSet => {
            Ok(Some(eng(all(db, key, &meta))?.into_iter().map(|(s, m)| (m, s)).collect()))
        }
        Entry::Collection(meta) if meta.kind == Kind::Set => {
            let members: shamba::Result<Vec<(Vec<u8>, f64)>> =
                types::fields(db, key, &meta, None).map(|f| f.map(|(m, _)| (m, 1.0))).collect();
            Ok(Some(eng(members)?))
        }
        _ => Err(types::wrong_type()),
    }
}

/// A score times its weight (`inf` × 0 is 0, as in Redis).
fn weighted(s: f64, w: f64) -> f64 {
    let v = s * w;
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

/// The result of `op` over `c`'s keys, in score order (ties by member).
fn combine(db: &Selected<'_>, op: SetOp, c: &Combine) -> Result<Vec<(Vec<u8>, f64)>, Reply> {
    let mut acc: HashMap<Vec<u8>, f64> = HashMap::new();
    for (i, key) in c.keys.iter().enumerate() {
        let w = c.weights.get(i).copied().unwrap_or(1.0);
        let members = source(db, key)?;
        match op {
            SetOp::Union => {
                for (m, s) in members.unwrap_or_default() {
                    let v = weighted(s, w);
                    acc.entry(m).and_modify(|a| *a = c.aggregate.combine(*a, v)).or_insert(v);
                }
            }
            SetOp::Inter => {
                let Some(members) = members else {
                    return Ok(Vec::new());
                };
                if i == 0 {
                    acc = members.into_iter().map(|(m, s)| (m, weighted(s, w))).collect();
                } else {
                    let mut next = HashMap::new();
                    for (m, s) in members {
                        if let Some(a) = acc.get(&m) {
                            let v = c.aggregate.combine(*a, weighted(s, w));
                            next.insert(m, v);
                        }
                    }
                    acc = next;
                }
            }
            SetOp::Diff => {
                if i == 0 {
                    let Some(members) = members else {
                        return Ok(Vec::new());
                    };
                    acc = members.into_iter().collect();
                } else {
                    for (m, _) in members.unwrap_or_default() {
                        acc.remove(&m);
                    }
                }
            }
        }
        if acc.is_empty() && op != SetOp::Union {
            // Nothing can come back; the remaining keys are still type-checked, as Redis
            // checks every key first.
            for key in c.keys.iter().skip(i + 1) {
                source(db, key)?;
            }
            return Ok(Vec::new());
        }
    }
    let mut out: Vec<(Vec<u8>, f64)> = acc.into_iter().collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    Ok(out)
}

fn store_command(ctx: &mut Ctx<'_>, args: &Args, op: SetOp, name: &str) -> Reply {
    let dst = arg(args, 1);
    let c = attempt!(Combine::parse(op, name, true, args.get(2..).unwrap_or_default()));
    let db = selected!(ctx);
    let _lock = db.lock(std::iter::once(dst).chain(c.keys.iter().map(Vec::as_slice)));
    let items = attempt!(combine(&db, op, &c));
    let reply = store_result(&db, dst, items);
    ctx.server.waiters.wake(db.index(), dst);
    reply
}

fn read_command(ctx: &mut Ctx<'_>, args: &Args, op: SetOp, name: &str) -> Reply {
    let c = attempt!(Combine::parse(op, name, false, args.get(1..).unwrap_or_default()));
    let db = selected!(ctx);
    scored_reply(attempt!(combine(&db, op, &c)), c.with_scores, resp3(ctx))
}

fn zunionstore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    store_command(ctx, args, SetOp::Union, "zunionstore")
}

fn zinterstore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    store_command(ctx, args, SetOp::Inter, "zinterstore")
}

fn zdiffstore(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    store_command(ctx, args, SetOp::Diff, "zdiffstore")
}

fn zunion(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    read_command(ctx, args, SetOp::Union, "zunion")
}

fn zinter(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    read_command(ctx, args, SetOp::Inter, "zinter")
}

fn zdiff(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    read_command(ctx, args, SetOp::Diff, "zdiff")
}

/// ZINTERCARD numkeys key... [LIMIT n]: the intersection's size, counting stopped at n
/// (0: no limit).
fn zintercard(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let words = args.get(1..).unwrap_or_default();
    let n = match words.first().and_then(|w| parse_int(w)) {
        Some(n) if n >= 1 => n as usize,
        Some(_) => return Reply::err("at least 1 input key is needed for 'zintercard' command"),
        None => return Reply::err("numkeys should be greater than 0"),
    };
    let Some(keys) = words.get(1..).and_then(|w| w.get(..n)) else {
        return Reply::err("Number of keys can't be greater than number of args");
    };
    let limit = match words.get(n + 1..).unwrap_or_default() {
        [] => 0,
        [l, v] if is(l, "LIMIT") => match parse_int(v) {
            Some(v) if v >= 0 => v as usize,
            _ => return Reply::err("LIMIT can't be negative"),
        },
        _ => return syntax_error(),
    };
    let c = Combine { keys: keys.to_vec(), weights: vec![1.0; n], aggregate: Aggregate::Sum, with_scores: false };
    let db = selected!(ctx);
    let found = attempt!(combine(&db, SetOp::Inter, &c));
    let unique: HashSet<&Vec<u8>> = found.iter().map(|(m, _)| m).collect();
    let count = if limit > 0 { unique.len().min(limit) } else { unique.len() };
    Reply::Int(count as i64)
}
