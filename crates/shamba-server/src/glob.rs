//! Redis glob patterns (`KEYS`, `SCAN MATCH`): `*`, `?`, `[abc]`, `[^a-z]` and `\` escapes,
//! matched on bytes as Redis's `stringmatchlen` does; and the literal prefix a pattern
//! starts with, so a scan can seek to it instead of walking every key.

#![deny(clippy::indexing_slicing)]

/// Whether `s` matches `pattern`. Iterative, remembering only the last star (each token
/// other than a star matches exactly one byte), so a hostile pattern costs at most
/// pattern length times key length, never an exponential backtrack.
pub(super) fn matches(pattern: &[u8], s: &[u8]) -> bool {
    if star_groups(trim_trailing_stars(pattern)) > MAX_STAR_NESTING {
        return false;
    }
    let mut pat = pattern;
    let mut pos = 0;
    // After the last star seen: the pattern that follows it, and where in `s` it was tried.
    let mut star: Option<(&[u8], usize)> = None;
    loop {
        if let Some((b'*', rest)) = pat.split_first() {
            star = Some((rest, pos));
            pat = rest;
            continue;
        }
        let Some(&c) = s.get(pos) else {
            return trim_stars(pat).is_empty();
        };
        if let Some(rest) = first_token(pat, c) {
            pat = rest;
            pos += 1;
            continue;
        }
        match star {
            Some((after, tried)) => {
                star = Some((after, tried + 1));
                pat = after;
                pos = tried + 1;
            }
            None => return false,
        }
    }
}

/// Redis gives up on a pattern whose stars nest deeper than this (its matcher recurses
/// once per star), answering no match; so does this one, to answer as Redis does.
const MAX_STAR_NESTING: usize = 1000;

/// How many runs of stars `p` has.
fn star_groups(p: &[u8]) -> usize {
    p.iter().zip(std::iter::once(&0).chain(p.iter())).filter(|(c, prev)| **c == b'*' && **prev != b'*').count()
}

fn trim_trailing_stars(mut p: &[u8]) -> &[u8] {
    while let Some((b'*', rest)) = p.split_last() {
        p = rest;
    }
    p
}

fn trim_stars(mut p: &[u8]) -> &[u8] {
    while let Some((b'*', rest)) = p.split_first() {
        p = rest;
    }
    p
}

/// Whether the pattern's first token (not a star) matches `c`; the pattern after it if so.
fn first_token(pattern: &[u8], c: u8) -> Option<&[u8]> {
    match pattern {
        [] => None,
        [b'?', rest @ ..] => Some(rest),
        [b'[', rest @ ..] => {
            let (hit, after) = class(rest, c);
            hit.then_some(after)
        }
        [b'\\', e, rest @ ..] | [e, rest @ ..] => (*e == c).then_some(rest),
    }
}

/// Match `c` against the class that starts after `[`; returns the verdict and the pattern
/// after the closing `]` (an unclosed class runs to the end, as in Redis).
fn class(mut p: &[u8], c: u8) -> (bool, &[u8]) {
    let negate = matches!(p.first(), Some(b'^'));
    if negate {
        p = p.get(1..).unwrap_or_default();
    }
    let mut hit = false;
    loop {
        match p {
            [] => break,
            [b']', rest @ ..] => {
                p = rest;
                break;
            }
            [b'\\', e, rest @ ..] => {
                hit |= *e == c;
                p = rest;
            }
            [lo, b'-', hi, rest @ ..] if *hi != b']' => {
                let (lo, hi) = if lo <= hi { (*lo, *hi) } else { (*hi, *lo) };
                hit |= (lo..=hi).contains(&c);
                p = rest;
            }
            [e, rest @ ..] => {
                hit |= *e == c;
                p = rest;
            }
        }
    }
    (hit != negate, p)
}

/// The bytes every match starts with: the pattern up to its first special character.
pub(super) fn literal_prefix(pattern: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut p = pattern;
    loop {
        match p {
            [b'*' | b'?' | b'[', ..] | [] | [b'\\'] => return out,
            [b'\\', c, rest @ ..] => {
                out.push(*c);
                p = rest;
            }
            [c, rest @ ..] => {
                out.push(*c);
                p = rest;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_nested_deeper_than_redis_allows_match_nothing() {
        let key = vec![b'a'; 2000];
        assert!(matches(&b"*?".repeat(1000), &key));
        assert!(!matches(&b"*?".repeat(1001), &key));
        assert!(matches(&b"*?".repeat(1000).into_iter().chain(*b"***").collect::<Vec<u8>>(), &key));
    }

    #[test]
    fn stars_questions_and_classes() {
        let m = |p: &str, s: &str| matches(p.as_bytes(), s.as_bytes());
        assert!(m("*", "") && m("*", "abc") && m("a*", "abc") && m("*c", "abc") && m("a*c", "ac"));
        assert!(!m("a*d", "abc") && !m("", "a"));
        assert!(m("h?llo", "hello") && !m("h?llo", "hllo"));
        assert!(m("h[ae]llo", "hallo") && !m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo") && !m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo") && !m("h[a-b]llo", "hcllo") && m("h[b-a]llo", "hallo"));
        assert!(m("a\\*", "a*") && !m("a\\*", "ab"));
        assert!(m("key:*:x", "key:12:x") && !m("key:*:x", "key:12:y"));
    }

    #[test]
    fn many_stars_do_not_backtrack_exponentially() {
        // With recursive matching this pattern takes ~ 4000^8 steps on a miss.
        let s = vec![b'a'; 4000];
        assert!(!matches(b"*a*a*a*a*a*a*a*a*b", &s));
        assert!(matches(b"*a*a*a*a*a*a*a*a*", &s));
    }

    #[test]
    fn prefix_stops_at_the_first_wildcard() {
        assert_eq!(literal_prefix(b"user:*"), b"user:");
        assert_eq!(literal_prefix(b"a\\*b?"), b"a*b");
        assert_eq!(literal_prefix(b"[ab]"), b"");
        assert_eq!(literal_prefix(b"plain"), b"plain");
    }
}
