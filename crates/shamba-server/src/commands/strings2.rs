//! More string commands: SETNX, MSETNX, GETDEL, GETRANGE (SUBSTR), SETRANGE, INCRBYFLOAT,
//! LCS. Writes hold their keys' stripe locks from read to write (see `store`), and the ones
//! that change a value in place (SETRANGE, INCRBYFLOAT) keep its deadline, as Redis does.

use super::expiry::{deadline_of, time_of};
use super::{arg, engine_error, is, not_an_integer, parse_int, selected, syntax_error, wrong_arity, Args, Spec};
use crate::reply::Reply;
use crate::session::Ctx;
use crate::store::Selected;

const WD: &[&str] = &["write", "denyoom"];
const R: &[&str] = &["readonly"];

/// Redis's `proto-max-bulk-len`: the longest string SETRANGE may make.
pub(super) const MAX_STRING: i64 = 512 << 20;

#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "setnx", arity: 3, flags: &["write", "denyoom", "fast"], keys: (1, 1, 1), group: "string", summary: "Set a key only if it does not exist (1 set, 0 not)", run: setnx },
    Spec { name: "msetnx", arity: -3, flags: WD, keys: (1, -1, 2), group: "string", summary: "Set several keys only if none exists", run: msetnx },
    Spec { name: "getdel", arity: 2, flags: &["write", "fast"], keys: (1, 1, 1), group: "string", summary: "Get a key's value and delete it", run: getdel },
    Spec { name: "getrange", arity: 4, flags: R, keys: (1, 1, 1), group: "string", summary: "A substring of a value (inclusive offsets, negative from the end)", run: getrange },
    Spec { name: "substr", arity: 4, flags: R, keys: (1, 1, 1), group: "string", summary: "GETRANGE's old name", run: getrange },
    Spec { name: "setrange", arity: 4, flags: WD, keys: (1, 1, 1), group: "string", summary: "Overwrite part of a value at an offset (zero-padded)", run: setrange },
    Spec { name: "incrbyfloat", arity: 3, flags: &["write", "denyoom", "fast"], keys: (1, 1, 1), group: "string", summary: "Add a floating point number", run: incrbyfloat },
    Spec { name: "lcs", arity: -3, flags: R, keys: (1, 2, 1), group: "string", summary: "Longest common subsequence of two values (LEN, IDX, MINMATCHLEN, WITHMATCHLEN)", run: lcs },
];

fn read(db: &Selected<'_>, key: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    db.get(key).map_err(engine_error)
}

/// Write `value` to `key`, keeping the deadline it has.
pub(super) fn put_keeping_deadline(db: &Selected<'_>, key: &[u8], value: &[u8]) -> Result<(), Reply> {
    let mut b = db.batch();
    match deadline_of(db, key).map_err(engine_error)? {
        Ok(Some(at)) => b.put_expiring(db, key, value, time_of(at)),
        _ => b.put(db, key, value),
    }
    db.write(b).map_err(engine_error)
}

fn setnx(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (key, value) = (arg(args, 1), arg(args, 2));
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    match read(&db, key) {
        Ok(Some(_)) => Reply::Int(0),
        Ok(None) => db.put(key, value).map_or_else(engine_error, |()| Reply::Int(1)),
        Err(r) => r,
    }
}

fn msetnx(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let pairs = args.get(1..).unwrap_or_default();
    if !pairs.len().is_multiple_of(2) {
        return wrong_arity("msetnx");
    }
    let db = selected!(ctx);
    let keys = || pairs.iter().step_by(2).map(Vec::as_slice);
    let _lock = db.lock(keys());
    match db.get_many(keys()) {
        Ok(found) if found.iter().any(Option::is_some) => return Reply::Int(0),
        Ok(_) => {}
        Err(e) => return engine_error(e),
    }
    let mut batch = db.batch();
    for kv in pairs.chunks_exact(2) {
        if let [k, v] = kv {
            batch.put(&db, k, v);
        }
    }
    db.write(batch).map_or_else(engine_error, |()| Reply::Int(1))
}

fn getdel(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    match read(&db, key) {
        Ok(Some(v)) => {
            let mut b = db.batch();
            b.delete(&db, key);
            db.write(b).map_or_else(engine_error, |()| Reply::Bulk(v))
        }
        Ok(None) => Reply::Null,
        Err(r) => r,
    }
}

/// The bytes `start..=end` of a value `len` long, by Redis's rules for GETRANGE: negative
/// offsets count from the end, both are clamped into the value, and a range that is empty
/// after that (or two negative offsets in the wrong order) is empty.
pub(super) fn clamp_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    if (start < 0 && end < 0 && start > end) || len == 0 {
        return None;
    }
    let start = if start < 0 { (len + start).max(0) } else { start };
    let end = if end < 0 { (len + end).max(0) } else { end }.min(len - 1);
    (start <= end).then_some((start as usize, end as usize))
}

/// GETRANGE's bytes `start..=end` of a value `len` long: as [`clamp_range`], except that an
/// end still before the value after counting from its end selects nothing (Redis 7.2's
/// rule: `GETRANGE k 0 -100` of a short value is empty).
fn substring_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    if end < 0 && (len as i64) + end < 0 {
        return None;
    }
    clamp_range(start, end, len)
}

fn getrange(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (Some(start), Some(end)) = (parse_int(arg(args, 2)), parse_int(arg(args, 3))) else {
        return not_an_integer();
    };
    let value = match read(&selected!(ctx), arg(args, 1)) {
        Ok(v) => v.unwrap_or_default(),
        Err(r) => return r,
    };
    match substring_range(start, end, value.len()).and_then(|(s, e)| value.get(s..=e)) {
        Some(part) => Reply::Bulk(part.to_vec()),
        None => Reply::Bulk(Vec::new()),
    }
}

/// Redis's error for a string over `proto-max-bulk-len`.
pub(super) fn too_long() -> Reply {
    Reply::err("string exceeds maximum allowed size (proto-max-bulk-len)")
}

fn setrange(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (key, patch) = (arg(args, 1), arg(args, 3));
    let Some(offset) = parse_int(arg(args, 2)) else {
        return not_an_integer();
    };
    if offset < 0 {
        return Reply::err("offset is out of range");
    }
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let old = match read(&db, key) {
        Ok(v) => v,
        Err(r) => return r,
    };
    if patch.is_empty() {
        // Setting nothing creates nothing and changes nothing.
        return Reply::Int(old.map_or(0, |v| v.len() as i64));
    }
    if offset.saturating_add(patch.len() as i64) > MAX_STRING {
        return too_long();
    }
    let mut value = old.unwrap_or_default();
    let (at, end) = (offset as usize, offset as usize + patch.len());
    if value.len() < end {
        value.resize(end, 0);
    }
    if let Some(dst) = value.get_mut(at..end) {
        dst.copy_from_slice(patch);
    }
    match put_keeping_deadline(&db, key, &value) {
        Ok(()) => Reply::Int(value.len() as i64),
        Err(r) => r,
    }
}

/// A float as Redis reads one (`strtold` on the whole word): no spaces, no NaN.
fn parse_float(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?;
    if s.is_empty()
        || s.starts_with(|c: char| c.is_ascii_whitespace())
        || s.ends_with(|c: char| c.is_ascii_whitespace())
    {
        return None;
    }
    let v: f64 = s.parse().ok()?;
    (!v.is_nan()).then_some(v)
}

/// A float as INCRBYFLOAT writes it: the shortest decimal that reads back the same, with
/// no exponent and no negative zero (Redis prints 17 digits and trims the zeros, which
/// gives the same text for the values a double holds exactly).
pub(super) fn format_float(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    format!("{v}")
}

fn incrbyfloat(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let key = arg(args, 1);
    let Some(by) = parse_float(arg(args, 2)) else {
        return Reply::err("value is not a valid float");
    };
    let db = selected!(ctx);
    let _lock = db.lock([key]);
    let current = match read(&db, key) {
        Ok(None) => 0.0,
        Ok(Some(v)) => match parse_float(&v) {
            Some(n) => n,
            None => return Reply::err("value is not a valid float"),
        },
        Err(r) => return r,
    };
    let next = current + by;
    if !next.is_finite() {
        return Reply::err("increment would produce NaN or Infinity");
    }
    let text = format_float(next);
    match put_keeping_deadline(&db, key, text.as_bytes()) {
        Ok(()) => Reply::Bulk(text.into_bytes()),
        Err(r) => r,
    }
}

/// LCS's options.
#[derive(Default)]
struct LcsOptions {
    len: bool,
    idx: bool,
    min_match: usize,
    with_match_len: bool,
}

fn parse_lcs_options(words: &Args) -> Result<LcsOptions, Reply> {
    let mut o = LcsOptions::default();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if is(w, "LEN") {
            o.len = true;
        } else if is(w, "IDX") {
            o.idx = true;
        } else if is(w, "WITHMATCHLEN") {
            o.with_match_len = true;
        } else if is(w, "MINMATCHLEN") && i + 1 < words.len() {
            let n = parse_int(arg(words, i + 1)).ok_or_else(not_an_integer)?;
            o.min_match = usize::try_from(n).unwrap_or(0);
            i += 1;
        } else {
            return Err(syntax_error());
        }
        i += 1;
    }
    if o.len && o.idx {
        return Err(Reply::err("If you want both the length and indexes, please just use IDX."));
    }
    Ok(o)
}

/// The longest common subsequence of `a` and `b`, and the runs it is made of, last first:
/// each `(a_start, b_start, len)`.
pub(super) fn lcs_of(a: &[u8], b: &[u8]) -> (Vec<u8>, Vec<(usize, usize, usize)>) {
    let w = b.len() + 1;
    // table[i * w + j]: the LCS length of a[..i] and b[..j].
    let mut table = vec![0u32; (a.len() + 1) * w];
    for (i, &ca) in a.iter().enumerate() {
        for (j, &cb) in b.iter().enumerate() {
            let v = if ca == cb { table[i * w + j] + 1 } else { table[i * w + j + 1].max(table[(i + 1) * w + j]) };
            table[(i + 1) * w + j + 1] = v;
        }
    }
    let (mut i, mut j) = (a.len(), b.len());
    let mut common = Vec::new();
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    while i > 0 && j > 0 {
        if a[i - 1] == b[j - 1] {
            common.push(a[i - 1]);
            match runs.last_mut() {
                Some((sa, sb, n)) if *sa == i && *sb == j => {
                    *sa -= 1;
                    *sb -= 1;
                    *n += 1;
                }
                _ => runs.push((i - 1, j - 1, 1)),
            }
            i -= 1;
            j -= 1;
        } else if table[(i - 1) * w + j] > table[i * w + j - 1] {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    common.reverse();
    (common, runs)
}

fn lcs(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let opts = match parse_lcs_options(args.get(3..).unwrap_or_default()) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let db = selected!(ctx);
    let values = match db.get_many([arg(args, 1), arg(args, 2)]) {
        Ok(v) => v,
        Err(e) => return engine_error(e),
    };
    let mut values = values.into_iter().map(Option::unwrap_or_default);
    let (a, b) = (values.next().unwrap_or_default(), values.next().unwrap_or_default());
    if (a.len() as u64 + 1).saturating_mul(b.len() as u64 + 1).saturating_mul(4) > MAX_STRING as u64 {
        return Reply::err("Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    }
    let (common, runs) = lcs_of(&a, &b);
    if opts.len {
        return Reply::Int(common.len() as i64);
    }
    if !opts.idx {
        return Reply::Bulk(common);
    }
    let pair = |s: usize, n: usize| Reply::Array(vec![Reply::Int(s as i64), Reply::Int((s + n - 1) as i64)]);
    let matches = runs
        .iter()
        .filter(|(_, _, n)| *n >= opts.min_match)
        .map(|&(sa, sb, n)| {
            let mut m = vec![pair(sa, n), pair(sb, n)];
            if opts.with_match_len {
                m.push(Reply::Int(n as i64));
            }
            Reply::Array(m)
        })
        .collect();
    Reply::Map(vec![
        (Reply::text_bulk("matches"), Reply::Array(matches)),
        (Reply::text_bulk("len"), Reply::Int(common.len() as i64)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_clamp_as_redis_clamps_them() {
        assert_eq!(clamp_range(0, -1, 5), Some((0, 4)));
        assert_eq!(clamp_range(-3, -1, 5), Some((2, 4)));
        assert_eq!(clamp_range(2, 100, 5), Some((2, 4)));
        assert_eq!(clamp_range(-100, 1, 5), Some((0, 1)));
        assert_eq!(clamp_range(-1, -5, 5), None);
        assert_eq!(clamp_range(3, 1, 5), None);
        assert_eq!(clamp_range(0, -1, 0), None);
        assert_eq!(clamp_range(0, -100, 5), Some((0, 0)));
        assert_eq!(substring_range(0, -100, 5), None);
        assert_eq!(substring_range(-100, -99, 11), None);
        assert_eq!(substring_range(-5000, 10000, 11), Some((0, 10)));
    }

    #[test]
    fn floats_print_without_exponents_or_negative_zero() {
        assert_eq!(format_float(10.5 + 0.1), "10.6");
        assert_eq!(format_float(3.0), "3");
        assert_eq!(format_float(17179869184.0 + 1.5), "17179869185.5");
        assert_eq!(format_float(1.0 / 41.0 - 1.0 / 41.0), "0");
        assert_eq!(format_float(-0.0), "0");
        assert_eq!(parse_float(b" 1"), None);
        assert_eq!(parse_float(b"nan"), None);
        assert_eq!(parse_float(b"1e3"), Some(1000.0));
    }

    #[test]
    fn the_common_subsequence_and_its_runs() {
        let (common, runs) = lcs_of(b"ohmytext", b"mynewtext");
        assert_eq!(common, b"mytext");
        assert_eq!(runs, vec![(4, 5, 4), (2, 0, 2)]);
        assert_eq!(lcs_of(b"", b"abc").0, b"");
    }
}
