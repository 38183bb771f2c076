//! SORT and SORT_RO over a list, a set or a sorted set, as Redis 7.0 sorts: by the
//! elements as numbers (or as bytes with ALPHA), or by other keys found through a
//! pattern (`weight_*`, `obj_*->field` for a hash's field); GET patterns replace each
//! element in the reply; STORE writes the result as a list, replacing what the
//! destination held, and serves clients blocked on it as a push would.
//!
//! The elements are read whole, as Redis does: the sort is in memory.

use super::list_store::{self, ListWrite};
use super::sort_args::SortArgs;
use super::zset::eng;
use super::{arg, engine_error, selected, Args, Spec};
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::Selected;
use crate::types::{self, Kind};
use std::cmp::Ordering;

/// SORT and SORT_RO (`movablekeys`: STORE's destination is among the options).
#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "sort", arity: -2, flags: &["write", "denyoom", "movablekeys"], keys: (1, 1, 1), group: "generic", summary: "Sort a list, set or sorted set (BY, LIMIT, GET, ASC|DESC, ALPHA, STORE)", run: sort },
    Spec { name: "sort_ro", arity: -2, flags: &["readonly", "movablekeys"], keys: (1, 1, 1), group: "generic", summary: "SORT without STORE", run: sort_ro },
];

/// Redis's error when an element or a BY value is not a number.
const NOT_A_DOUBLE: &str = "One or more scores can't be converted into double";

fn sort(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    run(ctx, args, false)
}

fn sort_ro(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    run(ctx, args, true)
}

fn run(ctx: &mut Ctx<'_>, args: &Args, read_only: bool) -> Reply {
    let mut opts = match SortArgs::parse(args, read_only) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let key = arg(args, 1);
    let db = selected!(ctx);
    // A STORE reads and writes under both keys' locks; a plain SORT is a read.
    let _lock = opts.store.as_deref().map(|dst| db.lock([key, dst]));
    let (kind, mut elements) = match read_elements(&db, key) {
        Ok(found) => found,
        Err(r) => return r,
    };
    // A set has no order of its own: stored, its elements are sorted anyway (as Redis
    // does, so a replica or a script sees the same list).
    if opts.dont_sort && kind == Some(Kind::Set) && opts.store.is_some() {
        opts.dont_sort = false;
        opts.alpha = true;
        opts.by = None;
    }
    if opts.dont_sort {
        // A list and a sorted set keep their order, read from the tail with DESC.
        if opts.desc && kind != Some(Kind::Set) {
            elements.reverse();
        }
    } else if let Err(r) = sort_elements(&db, &opts, &mut elements) {
        return r;
    }
    let picked =
        limit(elements.len(), opts.limit).and_then(|(start, end)| elements.get(start..=end)).unwrap_or_default();
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(picked.len() * opts.gets.len().max(1));
    for e in picked {
        if opts.gets.is_empty() {
            out.push(Some(e.clone()));
        }
        for pattern in &opts.gets {
            match by_pattern(&db, pattern, e) {
                Ok(v) => out.push(v),
                Err(r) => return r,
            }
        }
    }
    match opts.store {
        None => Reply::Array(out.into_iter().map(|v| v.map_or(Reply::Null, Reply::Bulk)).collect()),
        Some(dst) => store(ctx, &db, &dst, out),
    }
}

/// The key's elements in their stored order (a sorted set's by score), with its type;
/// an absent key is an empty list; another type is WRONGTYPE.
fn read_elements(db: &Selected<'_>, key: &[u8]) -> Result<(Option<Kind>, Vec<Vec<u8>>), Reply> {
    let meta = match eng(types::lookup(db, key))? {
        types::Entry::Absent => return Ok((None, Vec::new())),
        types::Entry::String => return Err(types::wrong_type()),
        types::Entry::Collection(m) => m,
    };
    let elements = match meta.kind {
        Kind::List => eng(list_store::all(db, key, &meta))?,
        Kind::Set => types::fields(db, key, &meta, None)
            .map(|r| r.map(|(m, _)| m))
            .collect::<shamba::Result<_>>()
            .map_err(engine_error)?,
        Kind::ZSet => eng(super::zset_store::all(db, key, &meta))?.into_iter().map(|(_, m)| m).collect(),
        Kind::Hash => return Err(types::wrong_type()),
    };
    Ok((Some(meta.kind), elements))
}

/// What an element is compared by.
enum SortKey {
    /// Its number (0 when its BY key is missing).
    Number(f64),
    /// Its BY value's bytes (ALPHA with BY; `None`: the BY key is missing).
    By(Option<Vec<u8>>),
    /// The element's own bytes (ALPHA without BY).
    Itself,
}

/// Sort `elements` as Redis does: equal numbers by the elements' bytes; with ALPHA and
/// BY, a missing value first; DESC reverses the whole order.
fn sort_elements(db: &Selected<'_>, opts: &SortArgs, elements: &mut Vec<Vec<u8>>) -> Result<(), Reply> {
    let mut keyed = Vec::with_capacity(elements.len());
    let mut not_a_number = false;
    for e in elements.drain(..) {
        let value = match &opts.by {
            Some(pattern) => by_pattern(db, pattern, &e)?,
            None => Some(e.clone()),
        };
        let key = match (opts.alpha, opts.by.is_some(), value) {
            (true, true, v) => SortKey::By(v),
            (true, false, _) => SortKey::Itself,
            (false, _, None) => SortKey::Number(0.0),
            (false, _, Some(v)) => SortKey::Number(parse_double(&v).unwrap_or_else(|| {
                not_a_number = true;
                0.0
            })),
        };
        keyed.push((key, e));
    }
    if not_a_number {
        return Err(Reply::err(NOT_A_DOUBLE));
    }
    keyed.sort_by(|(ka, a), (kb, b)| {
        let order = match (ka, kb) {
            (SortKey::Number(x), SortKey::Number(y)) => {
                x.partial_cmp(y).unwrap_or(Ordering::Equal).then_with(|| a.cmp(b))
            }
            (SortKey::By(x), SortKey::By(y)) => x.cmp(y),
            _ => a.cmp(b),
        };
        if opts.desc {
            order.reverse()
        } else {
            order
        }
    });
    elements.extend(keyed.into_iter().map(|(_, e)| e));
    Ok(())
}

/// The positions `start..=end` LIMIT picks among `len` elements (Redis's clamping: a
/// negative offset is 0, a negative count is "to the end"); `None` when it picks none.
fn limit(len: usize, limit: Option<(i64, i64)>) -> Option<(usize, usize)> {
    let len = len as i64;
    let (offset, count) = limit.unwrap_or((0, -1));
    let start = offset.max(0);
    let end = if count < 0 { len - 1 } else { start.saturating_add(count - 1) };
    let end = end.min(len - 1);
    if start >= len || end < start {
        return None;
    }
    Some((usize::try_from(start).ok()?, usize::try_from(end).ok()?))
}

/// A number as C's `strtod` reads the whole of a value: leading spaces, a sign, decimal or
/// exponent notation, `inf`; `None` for NaN, an overflow, trailing bytes or no digits (an
/// empty value is 0, as in Redis).
fn parse_double(v: &[u8]) -> Option<f64> {
    if v.is_empty() {
        return Some(0.0);
    }
    let s = std::str::from_utf8(v).ok()?;
    let s = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let x: f64 = s.parse().ok()?;
    let spelled_infinite = s.trim_start_matches(['+', '-']).get(..3).is_some_and(|w| w.eq_ignore_ascii_case("inf"));
    if x.is_nan() || (x.is_infinite() && !spelled_infinite) {
        return None;
    }
    Some(x)
}

/// The value a pattern names for `element` (Redis's `lookupKeyByPattern`): `#` is the
/// element; otherwise the first `*` is replaced by it and the key read as a string, or,
/// with `->field` after the `*`, as a hash's field. A pattern without `*`, a missing key
/// or one of another type: `None`.
fn by_pattern(db: &Selected<'_>, pattern: &[u8], element: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    if pattern == b"#" {
        return Ok(Some(element.to_vec()));
    }
    let Some(star) = pattern.iter().position(|&b| b == b'*') else {
        return Ok(None);
    };
    let (before, after) = (pattern.get(..star).unwrap_or_default(), pattern.get(star + 1..).unwrap_or_default());
    let arrow = after.windows(2).position(|w| w == b"->").filter(|&i| i + 2 < after.len());
    let (rest, field) = match arrow {
        Some(i) => (after.get(..i).unwrap_or_default(), after.get(i + 2..)),
        None => (after, None),
    };
    let key = [before, element, rest].concat();
    match field {
        None => eng(db.get(&key)),
        Some(field) => match eng(types::live_meta(db, &key))? {
            Some(meta) if meta.kind == Kind::Hash => eng(types::get_field(db, &key, &meta, field)),
            _ => Ok(None),
        },
    }
}

/// STORE: `values` replace whatever `dst` held, as a list (a missing GET value as an
/// empty element); none deletes `dst`. Clients blocked on `dst` are served after.
fn store(ctx: &Ctx<'_>, db: &Selected<'_>, dst: &[u8], values: Vec<Option<Vec<u8>>>) -> Reply {
    let mut batch = db.batch();
    if let Err(e) = types::delete_collection(db, &mut batch, dst) {
        return engine_error(e);
    }
    batch.delete(db, dst);
    let n = values.len() as i64;
    if !values.is_empty() {
        let mut w = match ListWrite::fresh(db, dst, batch) {
            Ok(w) => w,
            Err(r) => return r,
        };
        for v in &values {
            w.push_back(v.as_deref().unwrap_or_default());
        }
        batch = w.finish();
    }
    if let Err(e) = db.write(batch) {
        return engine_error(e);
    }
    if n > 0 {
        ctx.server.waiters.wake(db.index(), dst);
    }
    Reply::Int(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_clamps_as_redis_does() {
        assert_eq!(limit(5, None), Some((0, 4)));
        assert_eq!(limit(5, Some((1, 2))), Some((1, 2)));
        assert_eq!(limit(5, Some((-10, 100))), Some((0, 4)));
        assert_eq!(limit(5, Some((5, 10))), None);
        assert_eq!(limit(5, Some((2, -1))), Some((2, 4)));
        assert_eq!(limit(5, Some((2, 0))), None);
        assert_eq!(limit(3, Some((2, i64::MAX))), Some((2, 2)));
        assert_eq!(limit(0, None), None);
    }

    #[test]
    fn values_are_read_as_strtod_reads_them() {
        assert_eq!(parse_double(b"1.5"), Some(1.5));
        assert_eq!(parse_double(b"  -3e2"), Some(-300.0));
        assert_eq!(parse_double(b""), Some(0.0));
        assert_eq!(parse_double(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_double(b"+Infinity"), Some(f64::INFINITY));
        for bad in [&b"abc"[..], b"1x", b"nan", b"1e400", b" ", b"1 "] {
            assert_eq!(parse_double(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }
}
