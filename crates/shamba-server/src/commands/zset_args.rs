//! The arguments of the sorted-set commands, parsed before any read: score ranges
//! (`(1.5`, `-inf`, `+inf`), lexicographic ranges (`[a`, `(a`, `-`, `+`), ZADD's options,
//! ZRANGE's unified form (BYSCORE / BYLEX / REV / LIMIT / WITHSCORES) and the
//! union/intersection/difference options (WEIGHTS, AGGREGATE). Errors carry Redis's texts.

use super::score;
use super::{is, not_an_integer, parse_int, syntax_error};
use crate::reply::Reply;

/// A score interval, each end inclusive unless marked exclusive (`(`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct ScoreRange {
    pub(super) min: f64,
    pub(super) min_exclusive: bool,
    pub(super) max: f64,
    pub(super) max_exclusive: bool,
}

fn score_bound(word: &[u8]) -> Option<(f64, bool)> {
    match word.strip_prefix(b"(") {
        Some(rest) => Some((score::parse(rest)?, true)),
        None => Some((score::parse(word)?, false)),
    }
}

impl ScoreRange {
    /// `min` and `max` as ZRANGEBYSCORE reads them.
    pub(super) fn parse(min: &[u8], max: &[u8]) -> Result<ScoreRange, Reply> {
        match (score_bound(min), score_bound(max)) {
            (Some((min, min_exclusive)), Some((max, max_exclusive))) => {
                Ok(ScoreRange { min, min_exclusive, max, max_exclusive })
            }
            _ => Err(Reply::err("min or max is not a float")),
        }
    }

    /// Whether `s` is at or past the low end.
    pub(super) fn above_min(&self, s: f64) -> bool {
        if self.min_exclusive {
            s > self.min
        } else {
            s >= self.min
        }
    }

    /// Whether `s` is at or before the high end.
    pub(super) fn below_max(&self, s: f64) -> bool {
        if self.max_exclusive {
            s < self.max
        } else {
            s <= self.max
        }
    }

    #[cfg(test)]
    pub(super) fn contains(&self, s: f64) -> bool {
        self.above_min(s) && self.below_max(s)
    }

    /// Whether no score can be in it (then no read is needed).
    pub(super) fn is_empty(&self) -> bool {
        self.min > self.max || (self.min == self.max && (self.min_exclusive || self.max_exclusive))
    }
}

/// One end of a lexicographic range.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum LexBound {
    /// `-`: before every member.
    Lowest,
    /// `+`: after every member.
    Highest,
    /// `[m`.
    Inclusive(Vec<u8>),
    /// `(m`.
    Exclusive(Vec<u8>),
}

impl LexBound {
    fn parse(word: &[u8]) -> Option<LexBound> {
        match word {
            b"-" => Some(LexBound::Lowest),
            b"+" => Some(LexBound::Highest),
            [b'[', rest @ ..] => Some(LexBound::Inclusive(rest.to_vec())),
            [b'(', rest @ ..] => Some(LexBound::Exclusive(rest.to_vec())),
            _ => None,
        }
    }
}

/// A member interval for the BYLEX forms (meaningful when every score is equal).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct LexRange {
    pub(super) min: LexBound,
    pub(super) max: LexBound,
}

impl LexRange {
    /// `min` and `max` as ZRANGEBYLEX reads them.
    pub(super) fn parse(min: &[u8], max: &[u8]) -> Result<LexRange, Reply> {
        match (LexBound::parse(min), LexBound::parse(max)) {
            (Some(min), Some(max)) => Ok(LexRange { min, max }),
            _ => Err(Reply::err("min or max not valid string range item")),
        }
    }

    pub(super) fn above_min(&self, m: &[u8]) -> bool {
        match &self.min {
            LexBound::Lowest => true,
            LexBound::Highest => false,
            LexBound::Inclusive(b) => m >= b.as_slice(),
            LexBound::Exclusive(b) => m > b.as_slice(),
        }
    }

    pub(super) fn below_max(&self, m: &[u8]) -> bool {
        match &self.max {
            LexBound::Lowest => false,
            LexBound::Highest => true,
            LexBound::Inclusive(b) => m <= b.as_slice(),
            LexBound::Exclusive(b) => m < b.as_slice(),
        }
    }

    #[cfg(test)]
    pub(super) fn contains(&self, m: &[u8]) -> bool {
        self.above_min(m) && self.below_max(m)
    }
}

/// ZADD's options and its score-member pairs.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct ZaddOptions {
    pub(super) nx: bool,
    pub(super) xx: bool,
    pub(super) gt: bool,
    pub(super) lt: bool,
    /// Count changed members (added or updated), not only added ones.
    pub(super) ch: bool,
    /// ZINCRBY's behaviour: reply the new score (nil when an option refused it).
    pub(super) incr: bool,
    pub(super) pairs: Vec<(f64, Vec<u8>)>,
}

impl ZaddOptions {
    /// ZADD's words after the key.
    pub(super) fn parse(words: &[Vec<u8>]) -> Result<ZaddOptions, Reply> {
        let mut o = ZaddOptions::default();
        let mut i = 0;
        while let Some(w) = words.get(i) {
            match () {
                () if is(w, "NX") => o.nx = true,
                () if is(w, "XX") => o.xx = true,
                () if is(w, "GT") => o.gt = true,
                () if is(w, "LT") => o.lt = true,
                () if is(w, "CH") => o.ch = true,
                () if is(w, "INCR") => o.incr = true,
                () => break,
            }
            i += 1;
        }
        let rest = words.get(i..).unwrap_or_default();
        if rest.is_empty() || !rest.len().is_multiple_of(2) {
            return Err(syntax_error());
        }
        if o.nx && o.xx {
            return Err(Reply::err("XX and NX options at the same time are not compatible"));
        }
        if (o.nx && (o.gt || o.lt)) || (o.gt && o.lt) {
            return Err(Reply::err("GT, LT, and/or NX options at the same time are not compatible"));
        }
        if o.incr && rest.len() > 2 {
            return Err(Reply::err("INCR option supports a single increment-element pair"));
        }
        for pair in rest.chunks_exact(2) {
            if let [s, m] = pair {
                let Some(s) = score::parse(s) else {
                    return Err(not_a_float());
                };
                o.pairs.push((s, m.clone()));
            }
        }
        Ok(o)
    }

    /// Whether a member now at `old` (`None`: absent) may take `new`; `None` when the
    /// options refuse the change.
    pub(super) fn allows(&self, old: Option<f64>, new: f64) -> bool {
        match old {
            None => !self.xx,
            Some(old) => !(self.nx || (self.gt && new <= old) || (self.lt && new >= old)),
        }
    }
}

/// Redis's error for a bad score.
pub(super) fn not_a_float() -> Reply {
    Reply::err("value is not a valid float")
}

/// What a ZRANGE-family command selects by.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum RangeBy {
    /// Ranks, `start..=stop` (negative from the end).
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

/// A ZRANGE-family request after its key: what, which direction, how many, with scores.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct RangeRequest {
    pub(super) by: RangeBy,
    pub(super) rev: bool,
    /// LIMIT offset count (count < 0: all).
    pub(super) limit: Option<(i64, i64)>,
    pub(super) with_scores: bool,
}

/// Which form of the family is parsed: they differ in the options they accept and in
/// the order of their bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RangeForm {
    /// ZRANGE / ZRANGESTORE: BYSCORE, BYLEX, REV and LIMIT (ZRANGESTORE: no WITHSCORES).
    Unified { store: bool },
    /// ZRANGEBYSCORE / ZREVRANGEBYSCORE (`rev`: bounds given max first).
    ByScore { rev: bool },
    /// ZRANGEBYLEX / ZREVRANGEBYLEX.
    ByLex { rev: bool },
    /// ZREVRANGE.
    RevRank,
}

impl RangeRequest {
    /// `start stop [options]` in `form`.
    pub(super) fn parse(
        form: RangeForm,
        start: &[u8],
        stop: &[u8],
        options: &[Vec<u8>],
    ) -> Result<RangeRequest, Reply> {
        let unified = matches!(form, RangeForm::Unified { .. });
        let (mut by_score, mut by_lex, mut rev) = match form {
            RangeForm::Unified { .. } => (false, false, false),
            RangeForm::ByScore { rev } => (true, false, rev),
            RangeForm::ByLex { rev } => (false, true, rev),
            RangeForm::RevRank => (false, false, true),
        };
        let mut limit = None;
        let mut with_scores = false;
        let mut i = 0;
        while let Some(w) = options.get(i) {
            if is(w, "WITHSCORES") && form != (RangeForm::Unified { store: true }) {
                with_scores = true;
            } else if is(w, "LIMIT") && form != RangeForm::RevRank {
                let (Some(offset), Some(count)) = (options.get(i + 1), options.get(i + 2)) else {
                    return Err(syntax_error());
                };
                let (Some(offset), Some(count)) = (parse_int(offset), parse_int(count)) else {
                    return Err(not_an_integer());
                };
                limit = Some((offset, count));
                i += 2;
            } else if unified && is(w, "BYSCORE") {
                by_score = true;
            } else if unified && is(w, "BYLEX") {
                by_lex = true;
            } else if unified && is(w, "REV") {
                rev = true;
            } else {
                return Err(syntax_error());
            }
            i += 1;
        }
        if by_score && by_lex {
            return Err(syntax_error());
        }
        if limit.is_some() && !by_score && !by_lex {
            return Err(Reply::err(
                "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
            ));
        }
        if with_scores && by_lex {
            return Err(Reply::err("syntax error, WITHSCORES not supported in combination with BYLEX"));
        }
        // The reverse forms name the high end first.
        let (low, high) = if rev && (by_score || by_lex) { (stop, start) } else { (start, stop) };
        let by = if by_score {
            RangeBy::Score(ScoreRange::parse(low, high)?)
        } else if by_lex {
            RangeBy::Lex(LexRange::parse(low, high)?)
        } else {
            let (Some(a), Some(b)) = (parse_int(start), parse_int(stop)) else {
                return Err(not_an_integer());
            };
            RangeBy::Rank(a, b)
        };
        Ok(RangeRequest { by, rev, limit, with_scores })
    }
}

/// How ZUNION/ZINTER combine the scores of a member found in several sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Aggregate {
    #[default]
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// `acc` and `s` combined (a sum of `inf` and `-inf` is 0, as in Redis).
    pub(super) fn combine(self, acc: f64, s: f64) -> f64 {
        match self {
            Aggregate::Sum => {
                let sum = acc + s;
                if sum.is_nan() {
                    0.0
                } else {
                    sum
                }
            }
            Aggregate::Min => acc.min(s),
            Aggregate::Max => acc.max(s),
        }
    }
}

/// Which set operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SetOp {
    Union,
    Inter,
    Diff,
}

/// `numkeys key... [WEIGHTS w...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]`, parsed.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Combine {
    pub(super) keys: Vec<Vec<u8>>,
    pub(super) weights: Vec<f64>,
    pub(super) aggregate: Aggregate,
    pub(super) with_scores: bool,
}

impl Combine {
    /// The words from `numkeys` on, for command `name` (its error texts name it); `store`:
    /// the STORE form, which takes no WITHSCORES.
    pub(super) fn parse(op: SetOp, name: &str, store: bool, words: &[Vec<u8>]) -> Result<Combine, Reply> {
        let Some(n) = words.first().and_then(|w| parse_int(w)) else {
            return Err(not_an_integer());
        };
        if n < 1 {
            return Err(Reply::err(format!("at least 1 input key is needed for '{name}' command")));
        }
        let n = n as usize;
        let Some(keys) = words.get(1..).and_then(|w| w.get(..n)) else {
            return Err(syntax_error());
        };
        let mut c =
            Combine { keys: keys.to_vec(), weights: vec![1.0; n], aggregate: Aggregate::Sum, with_scores: false };
        let mut i = n + 1;
        while let Some(w) = words.get(i) {
            if op != SetOp::Diff && is(w, "WEIGHTS") {
                for j in 0..n {
                    let Some(weight) = words.get(i + 1 + j) else {
                        return Err(syntax_error());
                    };
                    let Some(weight) = score::parse(weight) else {
                        return Err(Reply::err("weight value is not a float"));
                    };
                    if let Some(slot) = c.weights.get_mut(j) {
                        *slot = weight;
                    }
                }
                i += n;
            } else if op != SetOp::Diff && is(w, "AGGREGATE") {
                let Some(a) = words.get(i + 1) else {
                    return Err(syntax_error());
                };
                c.aggregate = match () {
                    () if is(a, "SUM") => Aggregate::Sum,
                    () if is(a, "MIN") => Aggregate::Min,
                    () if is(a, "MAX") => Aggregate::Max,
                    () => return Err(syntax_error()),
                };
                i += 1;
            } else if !store && is(w, "WITHSCORES") {
                c.with_scores = true;
            } else {
                return Err(syntax_error());
            }
            i += 1;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Vec<u8>> {
        s.split_whitespace().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn err(r: Result<impl std::fmt::Debug, Reply>) -> String {
        match r {
            Err(Reply::Error(e)) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn score_ranges_read_exclusive_marks_and_infinities() {
        let r = ScoreRange::parse(b"(1.5", b"+inf").unwrap();
        assert!(!r.contains(1.5) && r.contains(1.6) && r.contains(f64::INFINITY));
        let r = ScoreRange::parse(b"-inf", b"(3").unwrap();
        assert!(r.contains(f64::NEG_INFINITY) && r.contains(2.9) && !r.contains(3.0));
        assert!(ScoreRange::parse(b"(2", b"2").unwrap().is_empty());
        assert!(ScoreRange::parse(b"3", b"2").unwrap().is_empty());
        assert!(!ScoreRange::parse(b"2", b"2").unwrap().is_empty());
        assert_eq!(err(ScoreRange::parse(b"a", b"2")), "ERR min or max is not a float");
        assert_eq!(err(ScoreRange::parse(b"1", b"(nan")), "ERR min or max is not a float");
    }

    #[test]
    fn lex_ranges_read_brackets_and_the_open_ends() {
        let r = LexRange::parse(b"[b", b"(d").unwrap();
        assert!(!r.contains(b"a") && r.contains(b"b") && r.contains(b"c") && !r.contains(b"d"));
        let r = LexRange::parse(b"-", b"+").unwrap();
        assert!(r.contains(b"") && r.contains(b"\xff\xff"));
        let r = LexRange::parse(b"+", b"-").unwrap();
        assert!(!r.contains(b"m"));
        assert_eq!(err(LexRange::parse(b"a", b"+")), "ERR min or max not valid string range item");
    }

    #[test]
    fn zadd_options_are_checked_before_any_pair() {
        let o = ZaddOptions::parse(&words("xx CH 1 a 2.5 b")).unwrap();
        assert!(o.xx && o.ch && !o.nx);
        assert_eq!(o.pairs, vec![(1.0, b"a".to_vec()), (2.5, b"b".to_vec())]);
        assert_eq!(
            err(ZaddOptions::parse(&words("NX XX 1 a"))),
            "ERR XX and NX options at the same time are not compatible"
        );
        assert_eq!(
            err(ZaddOptions::parse(&words("GT LT 1 a"))),
            "ERR GT, LT, and/or NX options at the same time are not compatible"
        );
        assert_eq!(
            err(ZaddOptions::parse(&words("INCR 1 a 2 b"))),
            "ERR INCR option supports a single increment-element pair"
        );
        assert_eq!(err(ZaddOptions::parse(&words("1 a 2"))), "ERR syntax error");
        assert_eq!(err(ZaddOptions::parse(&words("NX"))), "ERR syntax error");
        assert_eq!(err(ZaddOptions::parse(&words("1 a nan b"))), "ERR value is not a valid float");
    }

    #[test]
    fn zadd_options_decide_which_updates_happen() {
        let gt = ZaddOptions { gt: true, ..ZaddOptions::default() };
        assert!(
            gt.allows(None, 1.0)
                && gt.allows(Some(1.0), 2.0)
                && !gt.allows(Some(2.0), 1.0)
                && !gt.allows(Some(1.0), 1.0)
        );
        let lt_xx = ZaddOptions { lt: true, xx: true, ..ZaddOptions::default() };
        assert!(!lt_xx.allows(None, 1.0) && lt_xx.allows(Some(2.0), 1.0) && !lt_xx.allows(Some(1.0), 2.0));
        let nx = ZaddOptions { nx: true, ..ZaddOptions::default() };
        assert!(nx.allows(None, 1.0) && !nx.allows(Some(1.0), 5.0));
    }

    #[test]
    fn zrange_unified_form_swaps_bounds_when_reversed() {
        let r = RangeRequest::parse(
            RangeForm::Unified { store: false },
            b"5",
            b"(1",
            &words("BYSCORE REV LIMIT 1 2 WITHSCORES"),
        )
        .unwrap();
        assert!(r.rev && r.with_scores);
        assert_eq!(r.limit, Some((1, 2)));
        assert_eq!(r.by, RangeBy::Score(ScoreRange { min: 1.0, min_exclusive: true, max: 5.0, max_exclusive: false }));
        let r = RangeRequest::parse(RangeForm::ByLex { rev: true }, b"[z", b"-", &[]).unwrap();
        assert_eq!(r.by, RangeBy::Lex(LexRange { min: LexBound::Lowest, max: LexBound::Inclusive(b"z".to_vec()) }));
        let r = RangeRequest::parse(RangeForm::RevRank, b"0", b"-1", &words("withscores")).unwrap();
        assert_eq!((r.by, r.rev, r.with_scores), (RangeBy::Rank(0, -1), true, true));
    }

    #[test]
    fn zrange_refuses_what_redis_refuses() {
        let unified = RangeForm::Unified { store: false };
        assert_eq!(
            err(RangeRequest::parse(unified, b"0", b"1", &words("LIMIT 0 1"))),
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
        );
        assert_eq!(
            err(RangeRequest::parse(unified, b"-", b"+", &words("BYLEX WITHSCORES"))),
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
        );
        assert_eq!(err(RangeRequest::parse(unified, b"a", b"1", &[])), "ERR value is not an integer or out of range");
        assert_eq!(err(RangeRequest::parse(unified, b"0", b"1", &words("LIMIT 0"))), "ERR syntax error");
        assert_eq!(
            err(RangeRequest::parse(RangeForm::ByScore { rev: false }, b"0", b"1", &words("BYLEX"))),
            "ERR syntax error"
        );
        assert_eq!(
            err(RangeRequest::parse(RangeForm::Unified { store: true }, b"0", b"1", &words("WITHSCORES"))),
            "ERR syntax error"
        );
    }

    #[test]
    fn combine_reads_weights_and_aggregate() {
        let c = Combine::parse(SetOp::Union, "zunion", false, &words("2 a b WEIGHTS 2 3 AGGREGATE max WITHSCORES"))
            .unwrap();
        assert_eq!(c.keys, words("a b"));
        assert_eq!(c.weights, vec![2.0, 3.0]);
        assert_eq!((c.aggregate, c.with_scores), (Aggregate::Max, true));
        assert_eq!(
            err(Combine::parse(SetOp::Union, "zunionstore", true, &words("0 a"))),
            "ERR at least 1 input key is needed for 'zunionstore' command"
        );
        assert_eq!(err(Combine::parse(SetOp::Inter, "zinter", false, &words("3 a b"))), "ERR syntax error");
        assert_eq!(err(Combine::parse(SetOp::Diff, "zdiff", false, &words("1 a WEIGHTS 2"))), "ERR syntax error");
        assert_eq!(
            err(Combine::parse(SetOp::Union, "zunion", false, &words("1 a WEIGHTS x"))),
            "ERR weight value is not a float"
        );
        assert_eq!(
            err(Combine::parse(SetOp::Union, "zunionstore", true, &words("1 a WITHSCORES"))),
            "ERR syntax error"
        );
    }

    #[test]
    fn a_sum_of_opposite_infinities_is_zero() {
        assert_eq!(Aggregate::Sum.combine(f64::INFINITY, f64::NEG_INFINITY), 0.0);
        assert_eq!(Aggregate::Min.combine(1.0, 2.0), 1.0);
        assert_eq!(Aggregate::Max.combine(1.0, 2.0), 2.0);
    }
}
