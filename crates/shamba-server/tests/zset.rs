//! Sorted sets through the command layer: Redis's answers for the commands and their
//! options, WRONGTYPE, the key's life (TYPE, DEL, expiry, a STORE over another type), and
//! a model test: random commands against an in-memory model, every reply compared.

mod common;

use common::{fmt_score, run, script, server, show};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shamba_server::{Reply, Session};
use std::collections::HashMap;

#[test]
fn zadd_options_and_scores_answer_as_redis() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("ZADD z 1 a 2 b 3 c", "3"),
            ("ZADD z 5 a", "0"),
            ("ZSCORE z a", "5"),
            ("ZADD z CH 5 a 7 b 1 d", "2"),
            ("ZADD z XX 10 a 1 e", "0"),
            ("ZSCORE z e", "nil"),
            ("ZADD z NX 0 a 4 f", "1"),
            ("ZSCORE z a", "10"),
            ("ZADD z GT CH 9 a 11 b", "1"),
            ("ZADD z LT CH 9 a 11 b", "1"),
            ("ZSCORE z a", "9"),
            ("ZADD z INCR 1.5 a", "10.5"),
            ("ZADD z INCR NX 1 a", "nil"),
            ("ZINCRBY z -0.5 a", "10"),
            ("ZINCRBY z 1 newone", "1"),
            ("ZADD z NX XX 1 a", "!ERR XX and NX options at the same time are not compatible"),
            ("ZADD z 1 a 2", "!ERR syntax error"),
            ("ZADD z nan a", "!ERR value is not a valid float"),
            ("ZADD z +inf top -inf bottom", "2"),
            ("ZINCRBY z -inf top", "!ERR resulting score is not a number (NaN)"),
            ("ZCARD z", "8"),
            ("ZMSCORE z a nope top bottom", "[10 nil inf -inf]"),
            ("ZREM z a nope a", "1"),
            ("ZCARD nope", "0"),
            ("ZSCORE nope a", "nil"),
        ],
    );
}

#[test]
fn ranges_by_rank_score_and_member_both_ways() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("ZADD z 1 a 2 b 2 c 3 d -1.5 e", "5"),
            ("ZRANGE z 0 -1", "[e a b c d]"),
            ("ZRANGE z 0 -1 WITHSCORES", "[e -1.5 a 1 b 2 c 2 d 3]"),
            ("ZRANGE z -2 -1 REV", "[a e]"),
            ("ZREVRANGE z 0 1 WITHSCORES", "[d 3 c 2]"),
            ("ZRANGE z 10 20", "[]"),
            ("ZRANGEBYSCORE z (1 2", "[b c]"),
            ("ZRANGEBYSCORE z -inf +inf LIMIT 1 2", "[a b]"),
            ("ZRANGEBYSCORE z -inf +inf LIMIT -1 2", "[]"),
            ("ZRANGEBYSCORE z 2 (2", "[]"),
            ("ZREVRANGEBYSCORE z 2 -inf WITHSCORES", "[c 2 b 2 a 1 e -1.5]"),
            ("ZRANGE z (3 0 BYSCORE REV LIMIT 0 2", "[c b]"),
            ("ZCOUNT z (1 +inf", "3"),
            ("ZRANK z c", "3"),
            ("ZREVRANK z c", "1"),
            ("ZRANK z c WITHSCORE", "[3 2]"),
            ("ZRANK z nope", "nil"),
            ("ZRANGEBYSCORE z a b", "!ERR min or max is not a float"),
            (
                "ZRANGE z 0 1 LIMIT 0 1",
                "!ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
            ),
        ],
    );
    script(
        &srv,
        s,
        &[
            ("ZADD l 0 a 0 b 0 c 0 d 0 e", "5"),
            ("ZRANGEBYLEX l [b (d", "[b c]"),
            ("ZRANGEBYLEX l - +", "[a b c d e]"),
            ("ZREVRANGEBYLEX l + (c", "[e d]"),
            ("ZRANGE l [d - BYLEX REV LIMIT 1 5", "[c b a]"),
            ("ZLEXCOUNT l (a [c", "2"),
            ("ZRANGEBYLEX l a b", "!ERR min or max not valid string range item"),
            ("ZREMRANGEBYLEX l [b [c", "2"),
            ("ZRANGE l 0 -1", "[a d e]"),
        ],
    );
}

#[test]
fn removals_and_pops_shrink_and_finally_delete_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("ZADD z 1 a 2 b 3 c 4 d 5 e 6 f", "6"),
            ("ZREMRANGEBYRANK z 0 1", "2"),
            ("ZREMRANGEBYSCORE z (5 +inf", "1"),
            ("ZRANGE z 0 -1", "[c d e]"),
            ("ZPOPMIN z", "[c 3]"),
            ("ZPOPMAX z 5", "[e 5 d 4]"),
            ("ZPOPMIN z -1", "!ERR value is out of range, must be positive"),
            ("EXISTS z", "0"),
            ("TYPE z", "none"),
            ("ZPOPMIN z", "[]"),
            ("ZADD a 1 x 2 y", "2"),
            ("ZMPOP 2 nope a MAX COUNT 5", "[a [[y 2] [x 1]]]"),
            ("ZMPOP 1 a MIN", "nil"),
            ("ZMPOP 0 a MIN", "!ERR numkeys should be greater than 0"),
            ("ZMPOP 1 a MIN COUNT 0", "!ERR count should be greater than 0"),
        ],
    );
}

#[test]
fn the_key_is_typed_deleted_and_expired_as_every_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("SET str v", "OK"),
            ("ZADD str 1 a", "!WRONGTYPE Operation against a key holding the wrong kind of value"),
            ("ZRANGE str 0 -1", "!WRONGTYPE Operation against a key holding the wrong kind of value"),
            ("ZADD z 1 a 2 b", "2"),
            ("TYPE z", "zset"),
            ("GET z", "!WRONGTYPE Operation against a key holding the wrong kind of value"),
            ("DEL z", "1"),
            ("ZCARD z", "0"),
            ("ZADD z 3 c", "1"),
            ("ZRANGE z 0 -1 WITHSCORES", "[c 3]"),
            ("PEXPIRE z 1", "1"),
        ],
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    script(&srv, s, &[("ZCARD z", "0"), ("ZADD z 1 x", "1"), ("ZRANGE z 0 -1", "[x]")]);
}

#[test]
fn union_intersection_and_difference_with_weights_and_aggregates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("ZADD a 1 x 2 y 3 z", "3"),
            ("ZADD b 10 y 20 z 30 w", "3"),
            ("SADD s y w", "2"),
            ("ZUNION 2 a b WITHSCORES", "[x 1 y 12 z 23 w 30]"),
            ("ZUNION 2 a b WEIGHTS 2 1 AGGREGATE MIN WITHSCORES", "[x 2 y 4 z 6 w 30]"),
            ("ZINTER 2 a b AGGREGATE MAX WITHSCORES", "[y 10 z 20]"),
            ("ZINTER 2 a s WITHSCORES", "[y 3]"),
            ("ZDIFF 2 a b WITHSCORES", "[x 1]"),
            ("ZINTERCARD 2 a b", "2"),
            ("ZINTERCARD 2 a b LIMIT 1", "1"),
            ("SET str v", "OK"),
            ("ZUNIONSTORE str 2 a b", "4"),
            ("TYPE str", "zset"),
            ("ZRANGE str 0 -1 WITHSCORES", "[x 1 y 12 z 23 w 30]"),
            ("ZINTERSTORE str 2 a nope", "0"),
            ("EXISTS str", "0"),
            ("ZDIFFSTORE d 1 a", "3"),
            ("ZRANGESTORE r a 1 +inf BYSCORE LIMIT 1 5", "2"),
            ("ZRANGE r 0 -1", "[y z]"),
            ("ZUNION 0 a", "!ERR at least 1 input key is needed for 'zunion' command"),
            ("ZUNIONSTORE d 2 a str2 WEIGHTS 1", "!ERR syntax error"),
            ("ZUNION 2 a str", "[x y z]"),
            ("SET str v", "OK"),
            ("ZUNION 2 a str", "!WRONGTYPE Operation against a key holding the wrong kind of value"),
        ],
    );
}

#[test]
fn zscan_walks_every_member_once_and_zrandmember_draws_from_the_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let members: Vec<String> = (0..57).map(|i| format!("m{i:03}")).collect();
    let mut cmd = "ZADD z".to_string();
    for (i, m) in members.iter().enumerate() {
        cmd.push_str(&format!(" {i} {m}"));
    }
    assert_eq!(run(&srv, s, &cmd), Reply::Int(57));
    let mut seen = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let Reply::Array(parts) = run(&srv, s, &format!("ZSCAN z {cursor} COUNT 10")) else { panic!("an array") };
        let [Reply::Bulk(next), Reply::Array(items)] = parts.as_slice() else { panic!("cursor and items") };
        for pair in items.chunks(2) {
            seen.push(show(&pair[0]));
        }
        cursor = String::from_utf8(next.clone()).expect("digits");
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen, members);
    let Reply::Array(drawn) = run(&srv, s, "ZRANDMEMBER z 10") else { panic!("an array") };
    let mut distinct: Vec<String> = drawn.iter().map(show).collect();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 10, "a positive count draws distinct members");
    assert!(distinct.iter().all(|m| members.contains(m)));
    let Reply::Array(drawn) = run(&srv, s, "ZRANDMEMBER z -100") else { panic!("an array") };
    assert_eq!(drawn.len(), 100, "a negative count may repeat");
    assert_eq!(show(&run(&srv, s, "ZRANDMEMBER z 100")).matches(' ').count(), 56, "at most the whole set");
    assert_eq!(show(&run(&srv, s, "ZRANDMEMBER nope")), "nil");
    assert_eq!(show(&run(&srv, s, "ZRANDMEMBER z -9223372036854775808")), "!ERR value is out of range");
}

/// The model: member → score.
type Model = HashMap<String, f64>;

fn sorted(m: &Model) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = m.iter().map(|(k, s)| (k.clone(), *s)).collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    v
}

fn flat(items: &[(String, f64)], with_scores: bool) -> String {
    let mut out = Vec::new();
    for (m, s) in items {
        out.push(m.clone());
        if with_scores {
            out.push(fmt_score(*s));
        }
    }
    format!("[{}]", out.join(" "))
}

/// One random command and what the model answers (the model updated).
fn step(rng: &mut StdRng, model: &mut Model) -> (String, String) {
    let member = format!("m{}", rng.gen_range(0..12));
    let scores = [-2.0, -1.0, 0.0, 0.5, 1.0, 1.0, 2.0, 3.0, f64::INFINITY, f64::NEG_INFINITY];
    let score = scores[rng.gen_range(0..scores.len())];
    let word = |s: f64| if s == f64::INFINITY { "+inf".to_string() } else { fmt_score(s) };
    let n = model.len() as i64;
    match rng.gen_range(0..11) {
        0 | 1 => {
            let (opt, added) = match rng.gen_range(0..4) {
                0 => ("", !model.contains_key(&member)),
                1 => ("NX ", !model.contains_key(&member)),
                2 => ("XX ", false),
                _ => ("GT ", !model.contains_key(&member)),
            };
            let old = model.get(&member).copied();
            let apply = match (opt, old) {
                ("NX ", Some(_)) | ("XX ", None) => false,
                ("GT ", Some(o)) => score > o,
                _ => true,
            };
            if apply {
                model.insert(member.clone(), score);
            }
            (format!("ZADD z {opt}{} {member}", word(score)), if added { "1" } else { "0" }.into())
        }
        2 => {
            let by = [1.0, -1.0, 0.5][rng.gen_range(0..3)];
            let new = model.get(&member).copied().unwrap_or(0.0) + by;
            if new.is_nan() {
                return (format!("ZINCRBY z {by} {member}"), "!ERR resulting score is not a number (NaN)".into());
            }
            model.insert(member.clone(), new);
            (format!("ZINCRBY z {by} {member}"), fmt_score(new))
        }
        3 => {
            let removed = model.remove(&member).is_some();
            (format!("ZREM z {member}"), if removed { "1" } else { "0" }.into())
        }
        4 => {
            let (a, b) = (rng.gen_range(-n - 2..n + 2), rng.gen_range(-n - 2..n + 2));
            let rev = rng.gen_bool(0.5);
            let mut all = sorted(model);
            if rev {
                all.reverse();
            }
            let norm = |i: i64| if i < 0 { (n + i).max(0) } else { i };
            let (start, stop) = (norm(a), if b < 0 { n + b } else { b.min(n - 1) });
            let items: Vec<(String, f64)> =
                if start > stop || start >= n { Vec::new() } else { all[start as usize..=stop as usize].to_vec() };
            (format!("ZRANGE z {a} {b}{} WITHSCORES", if rev { " REV" } else { "" }), flat(&items, true))
        }
        5 => {
            let (lo, hi) = (scores[rng.gen_range(0..scores.len())], scores[rng.gen_range(0..scores.len())]);
            let (lo_ex, hi_ex) = (rng.gen_bool(0.3), rng.gen_bool(0.3));
            let inside = |s: f64| (if lo_ex { s > lo } else { s >= lo }) && (if hi_ex { s < hi } else { s <= hi });
            let rev = rng.gen_bool(0.5);
            let (offset, count) = (rng.gen_range(0..3), rng.gen_range(-1..4));
            let mut items: Vec<(String, f64)> = sorted(model).into_iter().filter(|(_, s)| inside(*s)).collect();
            if rev {
                items.reverse();
            }
            let items: Vec<(String, f64)> =
                items.into_iter().skip(offset).take(if count < 0 { usize::MAX } else { count as usize }).collect();
            let b = |s: f64, ex: bool| format!("{}{}", if ex { "(" } else { "" }, word(s));
            let (first, second) = if rev { (b(hi, hi_ex), b(lo, lo_ex)) } else { (b(lo, lo_ex), b(hi, hi_ex)) };
            let cmd = format!(
                "ZRANGE z {first} {second} BYSCORE{} LIMIT {offset} {count} WITHSCORES",
                if rev { " REV" } else { "" }
            );
            (cmd, flat(&items, true))
        }
        6 => {
            let all = sorted(model);
            let rev = rng.gen_bool(0.5);
            let rank = all.iter().position(|(m, _)| *m == member).map(|r| if rev { all.len() - 1 - r } else { r });
            (
                format!("{} z {member}", if rev { "ZREVRANK" } else { "ZRANK" }),
                rank.map_or("nil".into(), |r| r.to_string()),
            )
        }
        7 => {
            let max = rng.gen_bool(0.5);
            let count = rng.gen_range(0..3);
            let mut all = sorted(model);
            if max {
                all.reverse();
            }
            let popped: Vec<(String, f64)> = all.into_iter().take(count).collect();
            for (m, _) in &popped {
                model.remove(m);
            }
            (format!("{} z {count}", if max { "ZPOPMAX" } else { "ZPOPMIN" }), flat(&popped, true))
        }
        8 => {
            let (lo, hi) = (scores[rng.gen_range(0..scores.len())], scores[rng.gen_range(0..scores.len())]);
            let doomed: Vec<String> =
                model.iter().filter(|(_, s)| **s >= lo && **s <= hi).map(|(m, _)| m.clone()).collect();
            for m in &doomed {
                model.remove(m);
            }
            (format!("ZREMRANGEBYSCORE z {} {}", word(lo), word(hi)), doomed.len().to_string())
        }
        9 => (format!("ZSCORE z {member}"), model.get(&member).map_or("nil".into(), |s| fmt_score(*s))),
        _ => ("ZCARD z".into(), model.len().to_string()),
    }
}

#[test]
fn random_commands_agree_with_a_model() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let mut rng = StdRng::seed_from_u64(7);
    let mut model = Model::new();
    for i in 0..3000 {
        let (cmd, want) = step(&mut rng, &mut model);
        assert_eq!(show(&run(&srv, s, &cmd)), want, "step {i}: {cmd}");
        if i % 500 == 499 {
            // The whole set, both orders, agrees too.
            assert_eq!(show(&run(&srv, s, "ZRANGE z 0 -1 WITHSCORES")), flat(&sorted(&model), true));
        }
    }
}
