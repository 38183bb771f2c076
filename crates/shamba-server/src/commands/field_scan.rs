//! What the collection commands share: HSCAN/SSCAN's walk of one key's fields with a
//! cursor (the SCAN cursor table, standing for the last field returned), and the random
//! picks of HRANDFIELD, SRANDMEMBER and SPOP.

use super::{arg, engine_error, is, not_an_integer, parse_int, selected, syntax_error, Args};
use crate::glob;
use crate::reply::Reply;
use crate::session::Ctx;
use crate::types::{self, Kind};
use rand::seq::SliceRandom;
use rand::Rng;

/// HSCAN / SSCAN key cursor [MATCH pattern] [COUNT n] [NOVALUES]: `with_values` for a
/// hash (field, value pairs, unless NOVALUES).
pub(super) fn scan_fields(ctx: &mut Ctx<'_>, args: &Args, kind: Kind, with_values: bool) -> Reply {
    let mut pattern = None;
    let mut count = 10usize;
    let mut values = with_values;
    let mut i = 3;
    while let Some(w) = args.get(i) {
        if is(w, "NOVALUES") && with_values {
            values = false;
            i += 1;
            continue;
        }
        let Some(v) = args.get(i + 1) else {
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
        i += 2;
    }
    let server = ctx.server;
    let after = match arg(args, 2) {
        b"0" => None,
        c => match std::str::from_utf8(c).ok().and_then(|s| s.parse::<u64>().ok()) {
            Some(n) => match server.cursors.resolve(n) {
                Some(field) => Some(field),
                None => return Reply::err("invalid cursor"),
            },
            None => return Reply::err("invalid cursor"),
        },
    };
    let key = arg(args, 1);
    let db = selected!(ctx);
    let meta = match types::collection(&db, key, kind) {
        Ok(Some(m)) => m,
        Ok(None) => return Reply::Array(vec![Reply::text_bulk("0"), Reply::Array(Vec::new())]),
        Err(r) => return r,
    };
    let mut found = Vec::new();
    let mut examined = 0;
    let mut last = None;
    for item in types::fields(&db, key, &meta, after.as_deref()) {
        let (field, value) = match item {
            Ok(fv) => fv,
            Err(e) => return engine_error(e),
        };
        examined += 1;
        if pattern.as_deref().is_none_or(|p| glob::matches(p, &field)) {
            found.push(Reply::Bulk(field.clone()));
            if values {
                found.push(Reply::Bulk(value));
            }
        }
        if examined == count {
            last = Some(field);
            break;
        }
    }
    let cursor = last.map_or(0, |f| server.cursors.issue(f));
    Reply::Array(vec![Reply::text_bulk(cursor.to_string()), Reply::Array(found)])
}

/// `count` picks among `items` as HRANDFIELD/SRANDMEMBER make them: count >= 0, distinct
/// ones (all of them when count is past their number); count < 0, |count| picks that may
/// repeat.
pub(super) fn pick<T: Clone>(items: &[T], count: i64) -> Vec<T> {
    let mut rng = rand::thread_rng();
    if count >= 0 {
        let n = usize::try_from(count).unwrap_or(usize::MAX).min(items.len());
        items.choose_multiple(&mut rng, n).cloned().collect()
    } else if items.is_empty() {
        Vec::new()
    } else {
        let n = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        (0..n).filter_map(|_| items.get(rng.gen_range(0..items.len())).cloned()).collect()
    }
}

/// One item of `items` at random.
pub(super) fn pick_one<T: Clone>(items: &[T]) -> Option<T> {
    items.choose(&mut rand::thread_rng()).cloned()
}

/// A count argument of HRANDFIELD/SRANDMEMBER/SPOP: an integer whose magnitude a reply
/// can hold.
pub(super) fn parse_count(word: &[u8]) -> Result<i64, Reply> {
    match parse_int(word) {
        Some(n) if n.unsigned_abs() <= (i64::MAX / 2) as u64 => Ok(n),
        Some(_) => Err(Reply::err("value is out of range")),
        None => Err(not_an_integer()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_are_distinct_for_a_positive_count_and_may_repeat_for_a_negative_one() {
        let items: Vec<u32> = (0..5).collect();
        let mut p = pick(&items, 3);
        p.sort_unstable();
        p.dedup();
        assert_eq!(p.len(), 3);
        assert_eq!(pick(&items, 10).len(), 5, "no more than there are");
        let many = pick(&items, -50);
        assert_eq!(many.len(), 50);
        assert!(many.iter().all(|i| items.contains(i)));
        assert!(pick::<u32>(&[], -3).is_empty());
        assert_eq!(pick_one::<u32>(&[]), None);
    }
}
