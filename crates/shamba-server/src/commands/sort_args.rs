//! SORT's words, read as Redis 7.0 reads them: `key [BY pattern] [LIMIT offset count]
//! [GET pattern ...] [ASC|DESC] [ALPHA] [STORE destination]`, in any order, a later word
//! overriding an earlier one; and the keys a SORT names (for COMMAND GETKEYS, EXEC's
//! locks and the STORE's notification): the sorted key and the last STORE's destination.

use super::{is, not_an_integer, parse_int, syntax_error, Args};
use crate::reply::Reply;

/// What one SORT asks for.
#[derive(Debug, Default, PartialEq)]
pub(super) struct SortArgs {
    pub(super) desc: bool,
    pub(super) alpha: bool,
    /// Offset and count as given (negative values are clamped when applied).
    pub(super) limit: Option<(i64, i64)>,
    pub(super) store: Option<Vec<u8>>,
    /// The BY pattern, when it has a `*` (a pattern without one means "do not sort").
    pub(super) by: Option<Vec<u8>>,
    /// A BY pattern without `*` was given: the elements keep their stored order.
    pub(super) dont_sort: bool,
    pub(super) gets: Vec<Vec<u8>>,
}

impl SortArgs {
    /// The options after the key (`args[2..]`); `read_only` (SORT_RO) refuses STORE as
    /// a syntax error, as Redis does.
    pub(super) fn parse(args: &Args, read_only: bool) -> Result<SortArgs, Reply> {
        let mut out = SortArgs::default();
        let words = args.get(2..).unwrap_or_default();
        let mut i = 0;
        while let Some(w) = words.get(i) {
            let left = words.len() - i - 1;
            if is(w, "ASC") {
                out.desc = false;
            } else if is(w, "DESC") {
                out.desc = true;
            } else if is(w, "ALPHA") {
                out.alpha = true;
            } else if is(w, "LIMIT") && left >= 2 {
                let int = |j: usize| words.get(j).and_then(|a| parse_int(a)).ok_or_else(not_an_integer);
                out.limit = Some((int(i + 1)?, int(i + 2)?));
                i += 2;
            } else if !read_only && is(w, "STORE") && left >= 1 {
                out.store = words.get(i + 1).cloned();
                i += 1;
            } else if is(w, "BY") && left >= 1 {
                let pattern = words.get(i + 1).cloned().unwrap_or_default();
                // A later BY replaces an earlier one, but "do not sort" once asked stays.
                if pattern.contains(&b'*') {
                    out.by = Some(pattern);
                } else {
                    out.dont_sort = true;
                    out.by = Some(pattern);
                }
                i += 1;
            } else if is(w, "GET") && left >= 1 {
                out.gets.push(words.get(i + 1).cloned().unwrap_or_default());
                i += 1;
            } else {
                return Err(syntax_error());
            }
            i += 1;
        }
        Ok(out)
    }
}

/// The keys a SORT names: `args[1]` and the destination of its last STORE (Redis's
/// `sortGetKeys`: LIMIT's two words and BY's and GET's one are skipped, not read as
/// options).
pub(crate) fn keys(args: &Args) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = args.get(1).map(Vec::as_slice).into_iter().collect();
    let mut store = None;
    let mut i = 2;
    while let Some(w) = args.get(i) {
        if is(w, "LIMIT") {
            i += 2;
        } else if is(w, "GET") || is(w, "BY") {
            i += 1;
        } else if is(w, "STORE") && i + 1 < args.len() {
            store = args.get(i + 1).map(Vec::as_slice);
        }
        i += 1;
    }
    out.extend(store);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Vec<u8>> {
        s.split(' ').map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn options_come_in_any_order_and_later_ones_win() {
        let a = SortArgs::parse(&words("sort k desc LIMIT 1 2 alpha asc get # get w_* by w_* store d"), false).unwrap();
        assert!(!a.desc && a.alpha && !a.dont_sort);
        assert_eq!(a.limit, Some((1, 2)));
        assert_eq!(a.gets, [b"#".to_vec(), b"w_*".to_vec()]);
        assert_eq!((a.by.as_deref(), a.store.as_deref()), (Some(&b"w_*"[..]), Some(&b"d"[..])));
        assert!(SortArgs::parse(&words("sort k by nosort"), false).unwrap().dont_sort);
    }

    #[test]
    fn bad_words_are_redis_errors() {
        let err = |s: &str, ro: bool| match SortArgs::parse(&words(s), ro) {
            Err(Reply::Error(e)) => e,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(err("sort k limit 1", false), "ERR syntax error");
        assert_eq!(err("sort k limit x 1", false), "ERR value is not an integer or out of range");
        assert_eq!(err("sort k store", false), "ERR syntax error");
        assert_eq!(err("sort_ro k store d", true), "ERR syntax error");
        assert_eq!(err("sort k nonsense", false), "ERR syntax error");
    }

    #[test]
    fn the_last_store_is_the_destination() {
        let w = words("sort abc store invalid store stillbad store def");
        assert_eq!(keys(&w), [&b"abc"[..], b"def"]);
        assert_eq!(keys(&words("sort abc get store by store")), [&b"abc"[..]], "patterns are not options");
        assert_eq!(keys(&words("sort abc limit store store store")), [&b"abc"[..]]);
        assert_eq!(keys(&words("sort abc store")), [&b"abc"[..]]);
    }
}
