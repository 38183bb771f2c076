//! Hashes: HSET, HMSET, HSETNX, HGET, HMGET, HDEL, HLEN, HEXISTS, HGETALL, HKEYS, HVALS,
//! HINCRBY, HINCRBYFLOAT, HSTRLEN, HRANDFIELD, HSCAN, on the collection encoding (`types`):
//! a field is one entry, the field count is in the metadata. Every write holds the key's
//! stripe lock from its reads to its one batch.

use super::field_scan::{parse_count, pick, pick_one, scan_fields};
use super::{arg, engine_error, is, not_an_integer, parse_int, selected, syntax_error, wrong_arity, Args, Spec, W};
use crate::reply::{Protocol, Reply};
use crate::session::Ctx;
use crate::store::Selected;
use crate::types::{self, Kind, Meta, Write};

const R: &[&str] = &["readonly", "fast"];
const RS: &[&str] = &["readonly"];

/// The hash commands.
#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "hset", arity: -4, flags: W, keys: (1, 1, 1), group: "hash", summary: "Set fields of a hash", run: hset },
    Spec { name: "hmset", arity: -4, flags: W, keys: (1, 1, 1), group: "hash", summary: "Set fields of a hash (replies OK)", run: hmset },
    Spec { name: "hsetnx", arity: 4, flags: W, keys: (1, 1, 1), group: "hash", summary: "Set a field if it is absent", run: hsetnx },
    Spec { name: "hget", arity: 3, flags: R, keys: (1, 1, 1), group: "hash", summary: "A field's value", run: hget },
    Spec { name: "hmget", arity: -3, flags: R, keys: (1, 1, 1), group: "hash", summary: "Several fields' values", run: hmget },
    Spec { name: "hdel", arity: -3, flags: W, keys: (1, 1, 1), group: "hash", summary: "Delete fields", run: hdel },
    Spec { name: "hlen", arity: 2, flags: R, keys: (1, 1, 1), group: "hash", summary: "How many fields", run: hlen },
    Spec { name: "hexists", arity: 3, flags: R, keys: (1, 1, 1), group: "hash", summary: "Whether a field exists", run: hexists },
    Spec { name: "hgetall", arity: 2, flags: RS, keys: (1, 1, 1), group: "hash", summary: "Every field and value", run: hgetall },
    Spec { name: "hkeys", arity: 2, flags: RS, keys: (1, 1, 1), group: "hash", summary: "Every field", run: hkeys },
    Spec { name: "hvals", arity: 2, flags: RS, keys: (1, 1, 1), group: "hash", summary: "Every value", run: hvals },
    Spec { name: "hincrby", arity: 4, flags: W, keys: (1, 1, 1), group: "hash", summary: "Add an integer to a field", run: hincrby },
    Spec { name: "hincrbyfloat", arity: 4, flags: W, keys: (1, 1, 1), group: "hash", summary: "Add a number to a field", run: hincrbyfloat },
    Spec { name: "hstrlen", arity: 3, flags: R, keys: (1, 1, 1), group: "hash", summary: "Length of a field's value", run: hstrlen },
    Spec { name: "hrandfield", arity: -2, flags: RS, keys: (1, 1, 1), group: "hash", summary: "Random fields (count, WITHVALUES)", run: hrandfield },
    Spec { name: "hscan", arity: -3, flags: RS, keys: (1, 1, 1), group: "hash", summary: "Walk a hash's fields (cursor, MATCH, COUNT, NOVALUES)", run: hscan },
];

/// The hash at `key` for a read: its metadata, or the reply when absent (`empty`) or of
/// another type.
fn read(db: &Selected<'_>, key: &[u8], empty: Reply) -> Result<Meta, Reply> {
    match types::collection(db, key, Kind::Hash) {
        Ok(Some(m)) => Ok(m),
        Ok(None) => Err(empty),
        Err(r) => Err(r),
    }
}

/// A field and its value.
type Pair = (Vec<u8>, Vec<u8>);

/// Every field and value of a hash.
fn all(db: &Selected<'_>, key: &[u8], meta: &Meta) -> Result<Vec<Pair>, Reply> {
    types::fields(db, key, meta, None).collect::<shamba::Result<_>>().map_err(engine_error)
}

/// Set `pairs` (field, value, field, value...) in the hash at `key`; answers how many
/// fields were new. `only_new`: leave existing fields alone (HSETNX).
fn set_fields(ctx: &mut Ctx<'_>, key: &[u8], pairs: &Args, only_new: bool) -> Result<i64, Reply> {
    let db = ctx.selected()?;
    let _lock = db.lock([key]);
    let mut w = Write::open(&db, key, Kind::Hash)?;
    let fields: Vec<&[u8]> = pairs.iter().step_by(2).map(Vec::as_slice).collect();
    let old = if w.created {
        vec![None; fields.len()]
    } else {
        types::get_fields(&db, key, &w.meta, fields.iter().copied()).map_err(engine_error)?
    };
    let mut seen = std::collections::HashSet::new();
    let mut added = 0;
    for (pair, was) in pairs.chunks_exact(2).zip(old) {
        let [f, v] = pair else { continue };
        if only_new && was.is_some() {
            continue;
        }
        w.put_field(key, f, v);
        // A field named twice in one command is new once.
        if was.is_none() && seen.insert(f.as_slice()) {
            added += 1;
        }
    }
    w.meta.size += added as u64;
    if added == 0 && only_new {
        return Ok(0);
    }
    db.write(w.finish(key)).map_err(engine_error)?;
    Ok(added)
}

fn hset(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let pairs = args.get(2..).unwrap_or_default();
    if pairs.len() % 2 != 0 {
        return wrong_arity("hset");
    }
    set_fields(ctx, arg(args, 1), pairs, false).map_or_else(|r| r, Reply::Int)
}

fn hmset(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let pairs = args.get(2..).unwrap_or_default();
    if pairs.len() % 2 != 0 {
        return wrong_arity("hmset");
    }
    set_fields(ctx, arg(args, 1), pairs, false).map_or_else(|r| r, |_| Reply::OK)
}

fn hsetnx(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    set_fields(ctx, arg(args, 1), args.get(2..4).unwrap_or_default(), true).map_or_else(|r| r, Reply::Int)
}

fn hget(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    let meta = match read(&db, key, Reply::Null) {
        Ok(m) => m,
        Err(r) => return r,
    };
    types::get_field(&db, key, &meta, arg(args, 2)).map_or_else(engine_error, |v| v.map_or(Reply::Null, Reply::Bulk))
}

fn hmget(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let fields = args.get(2..).unwrap_or_default();
    let db = selected!(ctx);
    let meta = match read(&db, key, Reply::Array(vec![Reply::Null; fields.len()])) {
        Ok(m) => m,
        Err(r) => return r,
    };
    match types::get_fields(&db, key, &meta, fields.iter().map(Vec::as_slice)) {
        Ok(vs) => Reply::Array(vs.into_iter().map(|v| v.map_or(Reply::Null, Reply::Bulk)).collect()),
        Err(e) => engine_error(e),
    }
}

fn hdel(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let fields = args.get(2..).unwrap_or_default();
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    if let Err(r) = read(&db, key, Reply::Int(0)) {
        return r;
    }
    let mut w = match Write::open(&db, key, Kind::Hash) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let old = match types::get_fields(&db, key, &w.meta, fields.iter().map(Vec::as_slice)) {
        Ok(v) => v,
        Err(e) => return engine_error(e),
    };
    let mut seen = std::collections::HashSet::new();
    let mut removed = 0;
    for (f, was) in fields.iter().zip(old) {
        if was.is_some() && seen.insert(f.as_slice()) {
            w.delete_field(key, f);
            removed += 1;
        }
    }
    if removed == 0 {
        return Reply::Int(0);
    }
    w.meta.size = w.meta.size.saturating_sub(removed);
    db.write(w.finish(key)).map_or_else(engine_error, |()| Reply::Int(removed as i64))
}

fn hlen(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let db = selected!(ctx);
    read(&db, arg(args, 1), Reply::Int(0)).map_or_else(|r| r, |m| Reply::Int(m.size as i64))
}

fn hexists(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    let meta = match read(&db, key, Reply::Int(0)) {
        Ok(m) => m,
        Err(r) => return r,
    };
    types::get_field(&db, key, &meta, arg(args, 2)).map_or_else(engine_error, |v| Reply::Int(i64::from(v.is_some())))
}

/// HGETALL, HKEYS, HVALS: the pairs, each made a reply by `each`.
fn walk(ctx: &mut Ctx<'_>, args: &Args, each: fn(Vec<u8>, Vec<u8>, &mut Vec<Reply>)) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    let meta = match read(&db, key, Reply::Array(Vec::new())) {
        Ok(m) => m,
        Err(r) => return r,
    };
    match all(&db, key, &meta) {
        Ok(pairs) => {
            let mut out = Vec::with_capacity(pairs.len() * 2);
            for (f, v) in pairs {
                each(f, v, &mut out);
            }
            Reply::Array(out)
        }
        Err(r) => r,
    }
}

fn hgetall(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    let meta = match read(&db, key, Reply::Map(Vec::new())) {
        Ok(m) => m,
        Err(r) => return r,
    };
    match all(&db, key, &meta) {
        Ok(pairs) => Reply::Map(pairs.into_iter().map(|(f, v)| (Reply::Bulk(f), Reply::Bulk(v))).collect()),
        Err(r) => r,
    }
}

fn hkeys(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    walk(ctx, args, |f, _, out| out.push(Reply::Bulk(f)))
}

fn hvals(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    walk(ctx, args, |_, v, out| out.push(Reply::Bulk(v)))
}

fn hstrlen(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    let meta = match read(&db, key, Reply::Int(0)) {
        Ok(m) => m,
        Err(r) => return r,
    };
    types::get_field(&db, key, &meta, arg(args, 2))
        .map_or_else(engine_error, |v| Reply::Int(v.map_or(0, |v| v.len() as i64)))
}

/// Read-modify-write of one field: `next` makes the new value from the old one (or the
/// reply that refuses it).
fn update_field(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    field: &[u8],
    next: impl FnOnce(Option<&[u8]>) -> Result<(Vec<u8>, Reply), Reply>,
) -> Reply {
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let mut w = match Write::open(&db, key, Kind::Hash) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let old = if w.created {
        None
    } else {
        match types::get_field(&db, key, &w.meta, field) {
            Ok(v) => v,
            Err(e) => return engine_error(e),
        }
    };
    let (value, reply) = match next(old.as_deref()) {
        Ok(vr) => vr,
        Err(r) => return r,
    };
    if old.is_none() {
        w.meta.size += 1;
    }
    w.put_field(key, field, &value);
    db.write(w.finish(key)).map_or_else(engine_error, |()| reply)
}

fn hincrby(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let Some(by) = parse_int(arg(args, 3)) else {
        return not_an_integer();
    };
    update_field(ctx, arg(args, 1), arg(args, 2), |old| {
        let current = match old {
            None => 0,
            Some(v) => parse_int(v).ok_or_else(|| Reply::err("hash value is not an integer"))?,
        };
        let next = current.checked_add(by).ok_or_else(|| Reply::err("increment or decrement would overflow"))?;
        Ok((next.to_string().into_bytes(), Reply::Int(next)))
    })
}

/// A float argument as Redis reads one: no spaces, not NaN.
fn parse_float(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?;
    if s.is_empty() || s.starts_with(char::is_whitespace) || s.ends_with(char::is_whitespace) {
        return None;
    }
    let lower = s.to_ascii_lowercase();
    let v: f64 = match lower.as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        _ => s.parse().ok()?,
    };
    (!v.is_nan()).then_some(v)
}

/// A float as Redis writes an incremented one: the shortest text that reads back the same,
/// never in exponent form.
fn format_float(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e17 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn hincrbyfloat(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let Some(by) = parse_float(arg(args, 3)) else {
        return Reply::err("value is not a valid float");
    };
    if !by.is_finite() {
        return Reply::err("value is NaN or Infinity");
    }
    update_field(ctx, arg(args, 1), arg(args, 2), |old| {
        let current = match old {
            None => 0.0,
            Some(v) => parse_float(v).ok_or_else(|| Reply::err("hash value is not a float"))?,
        };
        let next = current + by;
        if !next.is_finite() {
            return Err(Reply::err("increment would produce NaN or Infinity"));
        }
        let text = format_float(next);
        Ok((text.clone().into_bytes(), Reply::Bulk(text.into_bytes())))
    })
}

/// HRANDFIELD key [count [WITHVALUES]].
fn hrandfield(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let (count, with_values) = match args.get(2..).unwrap_or_default() {
        [] => (None, false),
        [c] => (Some(c), false),
        [c, w] if is(w, "WITHVALUES") => (Some(c), true),
        _ => return syntax_error(),
    };
    let count = match count.map(|c| parse_count(c)).transpose() {
        Ok(c) => c,
        Err(r) => return r,
    };
    let db = selected!(ctx);
    let empty = if count.is_some() { Reply::Array(Vec::new()) } else { Reply::Null };
    let meta = match read(&db, key, empty) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let pairs = match all(&db, key, &meta) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let Some(count) = count else {
        return pick_one(&pairs).map_or(Reply::Null, |(f, _)| Reply::Bulk(f));
    };
    let resp3 = ctx.session.proto == Protocol::Resp3;
    let mut out = Vec::new();
    for (f, v) in pick(&pairs, count) {
        match (with_values, resp3) {
            // RESP3: each field with its value, as a pair.
            (true, true) => out.push(Reply::Array(vec![Reply::Bulk(f), Reply::Bulk(v)])),
            (true, false) => out.extend([Reply::Bulk(f), Reply::Bulk(v)]),
            (false, _) => out.push(Reply::Bulk(f)),
        }
    }
    Reply::Array(out)
}

fn hscan(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    scan_fields(ctx, args, Kind::Hash, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_and_write_as_redis_does() {
        assert_eq!(parse_float(b"1.5"), Some(1.5));
        assert_eq!(parse_float(b"-inf"), Some(f64::NEG_INFINITY));
        for bad in [&b""[..], b" 1", b"1 ", b"nan", b"abc"] {
            assert_eq!(parse_float(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(format_float(10.6), "10.6");
        assert_eq!(format_float(3.0), "3");
        assert_eq!(format_float(17179869185.5), "17179869185.5");
        assert_eq!(format_float(-0.25), "-0.25");
    }
}
