//! Lists through the command layer: Redis's answers for the commands and their options,
//! WRONGTYPE, the key's life, and a model test: random commands against a `VecDeque`,
//! every reply compared.

mod common;

use common::{run, script, server, show};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shamba_server::Session;
use std::collections::VecDeque;

#[test]
fn pushes_pops_and_positions_answer_as_redis() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("RPUSH l a b c", "3"),
            ("LPUSH l z y", "5"),
            ("LRANGE l 0 -1", "[y z a b c]"),
            ("LRANGE l -2 100", "[b c]"),
            ("LRANGE l 3 1", "[]"),
            ("LINDEX l -1", "c"),
            ("LINDEX l 5", "nil"),
            ("LSET l 1 Z", "OK"),
            ("LSET l 5 x", "!ERR index out of range"),
            ("LSET nope 0 x", "!ERR no such key"),
            ("LPOP l", "y"),
            ("RPOP l 2", "[c b]"),
            ("LPOP l 0", "[]"),
            ("LPOP l -1", "!ERR value is out of range, must be positive"),
            ("LLEN l", "2"),
            ("LPUSHX nope a", "0"),
            ("RPUSHX l q", "3"),
            ("LRANGE l 0 -1", "[Z a q]"),
            ("RPOP l 10", "[q a Z]"),
            ("EXISTS l", "0"),
            ("LPOP l", "nil"),
            ("LPOP l 2", "nil"),
        ],
    );
}

#[test]
fn trims_removals_insertions_and_searches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("RPUSH l a b a c a d", "6"),
            ("LPOS l a", "0"),
            ("LPOS l a RANK 2", "2"),
            ("LPOS l a RANK -1", "4"),
            ("LPOS l a COUNT 0", "[0 2 4]"),
            ("LPOS l a COUNT 2 RANK -1", "[4 2]"),
            ("LPOS l a MAXLEN 1 COUNT 0", "[0]"),
            ("LPOS l x", "nil"),
            ("LPOS l a RANK 0", "!ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"),
            ("LREM l -2 a", "2"),
            ("LRANGE l 0 -1", "[a b c d]"),
            ("LINSERT l BEFORE c X", "5"),
            ("LINSERT l AFTER d Y", "6"),
            ("LINSERT l AFTER nope Y", "-1"),
            ("LINSERT nope AFTER a Y", "0"),
            ("LRANGE l 0 -1", "[a b X c d Y]"),
            ("LREM l 0 X", "1"),
            ("LTRIM l 1 -2", "OK"),
            ("LRANGE l 0 -1", "[b c d]"),
            ("LTRIM l 5 10", "OK"),
            ("EXISTS l", "0"),
        ],
    );
}

#[test]
fn moves_between_lists_and_onto_the_same_list() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    script(
        &srv,
        s,
        &[
            ("RPUSH a 1 2 3", "3"),
            ("RPOPLPUSH a a", "3"),
            ("LRANGE a 0 -1", "[3 1 2]"),
            ("LMOVE a b LEFT RIGHT", "3"),
            ("LMOVE a b RIGHT LEFT", "2"),
            ("LRANGE b 0 -1", "[2 3]"),
            ("SET str v", "OK"),
            ("LMOVE a str LEFT LEFT", "!WRONGTYPE Operation against a key holding the wrong kind of value"),
            ("LRANGE a 0 -1", "[1]"),
            ("LMOVE nope b LEFT LEFT", "nil"),
            ("LMOVE a b UP LEFT", "!ERR syntax error"),
            ("LMPOP 2 nope b RIGHT COUNT 5", "[b [3 2]]"),
            ("LMPOP 1 b LEFT", "nil"),
            ("LMPOP 0 b LEFT", "!ERR numkeys should be greater than 0"),
            ("LPUSH str x", "!WRONGTYPE Operation against a key holding the wrong kind of value"),
            ("LRANGE str 0 1", "!WRONGTYPE Operation against a key holding the wrong kind of value"),
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
            ("RPUSH l a b", "2"),
            ("TYPE l", "list"),
            ("DEL l", "1"),
            ("RPUSH l c", "1"),
            ("LRANGE l 0 -1", "[c]"),
            ("PEXPIRE l 1", "1"),
        ],
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    script(&srv, s, &[("LLEN l", "0"), ("LPUSH l x", "1"), ("LRANGE l 0 -1", "[x]")]);
}

fn list(items: impl IntoIterator<Item = String>) -> String {
    format!("[{}]", items.into_iter().collect::<Vec<_>>().join(" "))
}

/// One random command on list `a` (or a move to `b`) and what the model answers.
fn step(rng: &mut StdRng, a: &mut VecDeque<String>, b: &mut VecDeque<String>) -> (String, String) {
    let v = format!("v{}", rng.gen_range(0..5));
    let n = a.len() as i64;
    let idx = |rng: &mut StdRng| rng.gen_range(-n - 2..n + 2);
    let norm = |i: i64| if i < 0 { n + i } else { i };
    match rng.gen_range(0..12) {
        0 => {
            a.push_front(v.clone());
            (format!("LPUSH a {v}"), a.len().to_string())
        }
        1 => {
            a.push_back(v.clone());
            (format!("RPUSH a {v}"), a.len().to_string())
        }
        2 => {
            let count = rng.gen_range(0..3);
            let back = rng.gen_bool(0.5);
            let cmd = format!("{} a {count}", if back { "RPOP" } else { "LPOP" });
            if a.is_empty() {
                return (cmd, "nil".into());
            }
            let popped: Vec<String> =
                (0..count).filter_map(|_| if back { a.pop_back() } else { a.pop_front() }).collect();
            (cmd, list(popped))
        }
        3 => {
            let (x, y) = (idx(rng), idx(rng));
            let (start, stop) = (norm(x).max(0), norm(y).min(n - 1));
            let items =
                if start > stop { Vec::new() } else { a.range(start as usize..=stop as usize).cloned().collect() };
            (format!("LRANGE a {x} {y}"), list(items))
        }
        4 => {
            let i = idx(rng);
            let p = norm(i);
            let got = if (0..n).contains(&p) { a[p as usize].clone() } else { "nil".into() };
            (format!("LINDEX a {i}"), got)
        }
        5 => {
            let i = idx(rng);
            let p = norm(i);
            let cmd = format!("LSET a {i} {v}");
            if a.is_empty() {
                return (cmd, "!ERR no such key".into());
            }
            if !(0..n).contains(&p) {
                return (cmd, "!ERR index out of range".into());
            }
            a[p as usize] = v;
            (cmd, "OK".into())
        }
        6 => {
            let (x, y) = (idx(rng), idx(rng));
            let (start, stop) = (norm(x).max(0), norm(y).min(n - 1));
            let kept: VecDeque<String> = if start > stop || start >= n {
                VecDeque::new()
            } else {
                a.range(start as usize..=stop as usize).cloned().collect()
            };
            *a = kept;
            (format!("LTRIM a {x} {y}"), "OK".into())
        }
        7 => {
            let count = rng.gen_range(-2..3i64);
            let limit = if count == 0 { usize::MAX } else { count.unsigned_abs() as usize };
            let mut removed = 0;
            let mut keep = vec![true; a.len()];
            let order: Vec<usize> = if count < 0 { (0..a.len()).rev().collect() } else { (0..a.len()).collect() };
            for i in order {
                if removed < limit && a[i] == v {
                    keep[i] = false;
                    removed += 1;
                }
            }
            *a = a.iter().zip(&keep).filter(|(_, k)| **k).map(|(e, _)| e.clone()).collect();
            (format!("LREM a {count} {v}"), removed.to_string())
        }
        8 => {
            let pivot = format!("v{}", rng.gen_range(0..5));
            let after = rng.gen_bool(0.5);
            let cmd = format!("LINSERT a {} {pivot} {v}", if after { "AFTER" } else { "BEFORE" });
            if a.is_empty() {
                return (cmd, "0".into());
            }
            match a.iter().position(|e| *e == pivot) {
                Some(p) => {
                    a.insert(if after { p + 1 } else { p }, v);
                    (cmd, a.len().to_string())
                }
                None => (cmd, "-1".into()),
            }
        }
        9 => {
            let found: Vec<String> =
                a.iter().enumerate().filter(|(_, e)| **e == v).map(|(i, _)| i.to_string()).collect();
            (format!("LPOS a {v} COUNT 0"), list(found))
        }
        10 => {
            let (from_back, to_back) = (rng.gen_bool(0.5), rng.gen_bool(0.5));
            let same = rng.gen_bool(0.3);
            let word = |back: bool| if back { "RIGHT" } else { "LEFT" };
            let cmd = format!("LMOVE a {} {} {}", if same { "a" } else { "b" }, word(from_back), word(to_back));
            let Some(e) = (if from_back { a.pop_back() } else { a.pop_front() }) else {
                return (cmd, "nil".into());
            };
            let dst = if same { a } else { b };
            if to_back {
                dst.push_back(e.clone());
            } else {
                dst.push_front(e.clone());
            }
            (cmd, e)
        }
        _ => ("LLEN a".into(), a.len().to_string()),
    }
}

#[test]
fn random_commands_agree_with_a_model() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let mut rng = StdRng::seed_from_u64(11);
    let (mut a, mut b) = (VecDeque::new(), VecDeque::new());
    for i in 0..3000 {
        let (cmd, want) = step(&mut rng, &mut a, &mut b);
        assert_eq!(show(&run(&srv, s, &cmd)), want, "step {i}: {cmd}");
        if i % 250 == 249 {
            assert_eq!(show(&run(&srv, s, "LRANGE a 0 -1")), list(a.iter().cloned()));
            assert_eq!(show(&run(&srv, s, "LRANGE b 0 -1")), list(b.iter().cloned()));
        }
    }
}
