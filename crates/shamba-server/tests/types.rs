//! Hashes and sets through the command layer: their commands as Redis answers them, the
//! type checks between strings and collections, the commands over every key (TYPE, DEL,
//! EXISTS, SCAN, KEYS, DBSIZE, FLUSHDB, expiry), HSCAN/SSCAN cursors, EXEC and WATCH over
//! collections, a restart, and a model test of random commands against a map of values.

mod common;

use common::{bulk, run, server};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shamba_server::{Reply, Session};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

fn bulks(items: &[&str]) -> Reply {
    Reply::Array(items.iter().map(|s| bulk(s)).collect())
}

fn sorted(r: Reply) -> Vec<Vec<u8>> {
    let Reply::Array(items) = r else { panic!("an array: {r:?}") };
    let mut out: Vec<Vec<u8>> = items
        .into_iter()
        .map(|i| match i {
            Reply::Bulk(b) => b,
            other => panic!("a bulk: {other:?}"),
        })
        .collect();
    out.sort();
    out
}

fn wrong_type() -> Reply {
    Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into())
}

#[test]
fn hash_commands_answer_as_redis_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(run(&srv, s, "HSET h a 1 b 2 a 3"), Reply::Int(2), "a field named twice is new once");
    assert_eq!(run(&srv, s, "HGET h a"), bulk("3"));
    assert_eq!(run(&srv, s, "HGET h zz"), Reply::Null);
    assert_eq!(run(&srv, s, "HGET nohash a"), Reply::Null);
    assert_eq!(run(&srv, s, "HMSET h c 4"), Reply::OK);
    assert_eq!(run(&srv, s, "HLEN h"), Reply::Int(3));
    assert_eq!(run(&srv, s, "HMGET h a zz c"), Reply::Array(vec![bulk("3"), Reply::Null, bulk("4")]));
    assert_eq!(
        run(&srv, s, "HGETALL h"),
        Reply::Map(vec![(bulk("a"), bulk("3")), (bulk("b"), bulk("2")), (bulk("c"), bulk("4"))])
    );
    assert_eq!(run(&srv, s, "HKEYS h"), bulks(&["a", "b", "c"]));
    assert_eq!(run(&srv, s, "HVALS h"), bulks(&["3", "2", "4"]));
    assert_eq!(run(&srv, s, "HEXISTS h b"), Reply::Int(1));
    assert_eq!(run(&srv, s, "HSETNX h b 9"), Reply::Int(0));
    assert_eq!(run(&srv, s, "HSETNX h d 9"), Reply::Int(1));
    assert_eq!(run(&srv, s, "HSTRLEN h d"), Reply::Int(1));
    assert_eq!(run(&srv, s, "HINCRBY h a 10"), Reply::Int(13));
    assert_eq!(run(&srv, s, "HINCRBY h new -2"), Reply::Int(-2));
    assert_eq!(run(&srv, s, "HINCRBYFLOAT h f 10.5"), bulk("10.5"));
    assert_eq!(run(&srv, s, "HINCRBYFLOAT h f 0.1"), bulk("10.6"));
    assert_eq!(run(&srv, s, "HINCRBY h f 1"), Reply::err("hash value is not an integer"));
    assert_eq!(run(&srv, s, "HINCRBYFLOAT nohash f +inf"), Reply::err("value is NaN or Infinity"));
    assert_eq!(run(&srv, s, "EXISTS nohash"), Reply::Int(0));
    assert_eq!(run(&srv, s, "HSET h big 9223372036854775807"), Reply::Int(1));
    assert_eq!(run(&srv, s, "HINCRBY h big 1"), Reply::err("increment or decrement would overflow"));
    assert_eq!(run(&srv, s, "HDEL h a a zz new f big"), Reply::Int(4));
    assert_eq!(run(&srv, s, "HLEN h"), Reply::Int(3));
    assert_eq!(run(&srv, s, "HDEL h b c d"), Reply::Int(3));
    assert_eq!(run(&srv, s, "EXISTS h"), Reply::Int(0), "a hash with no field left is gone");
    assert_eq!(run(&srv, s, "HSET h a"), Reply::err("wrong number of arguments for 'hset' command"));
    assert_eq!(run(&srv, s, "HRANDFIELD h"), Reply::Null);
    run(&srv, s, "HSET r x 1 y 2 z 3");
    assert_eq!(sorted(run(&srv, s, "HRANDFIELD r 5")), [b"x".to_vec(), b"y".to_vec(), b"z".to_vec()]);
    let Reply::Array(with_values) = run(&srv, s, "HRANDFIELD r -4 WITHVALUES") else { panic!("an array") };
    assert_eq!(with_values.len(), 8);
    // RESP3: each field with its value as a pair.
    let s3 = &mut Session::new(2);
    run(&srv, s3, "HELLO 3");
    let Reply::Array(pairs) = run(&srv, s3, "HRANDFIELD r 2 WITHVALUES") else { panic!("an array") };
    assert_eq!(pairs.len(), 2);
    assert!(pairs.iter().all(|p| matches!(p, Reply::Array(fv) if fv.len() == 2)), "{pairs:?}");
}

#[test]
fn set_commands_answer_as_redis_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(run(&srv, s, "SADD a 1 2 3 3"), Reply::Int(3));
    assert_eq!(run(&srv, s, "SADD a 3 4"), Reply::Int(1));
    assert_eq!(run(&srv, s, "SCARD a"), Reply::Int(4));
    assert_eq!(run(&srv, s, "SISMEMBER a 4"), Reply::Int(1));
    assert_eq!(run(&srv, s, "SMISMEMBER a 4 9"), Reply::Array(vec![Reply::Int(1), Reply::Int(0)]));
    assert_eq!(run(&srv, s, "SREM a 4 9"), Reply::Int(1));
    assert_eq!(run(&srv, s, "SMEMBERS a"), bulks(&["1", "2", "3"]));
    run(&srv, s, "SADD b 2 3 5");
    assert_eq!(run(&srv, s, "SINTER a b"), bulks(&["2", "3"]));
    assert_eq!(run(&srv, s, "SINTER a b missing"), bulks(&[]));
    assert_eq!(run(&srv, s, "SUNION a b missing"), bulks(&["1", "2", "3", "5"]));
    assert_eq!(run(&srv, s, "SDIFF a b"), bulks(&["1"]));
    assert_eq!(run(&srv, s, "SINTERCARD 2 a b"), Reply::Int(2));
    assert_eq!(run(&srv, s, "SINTERCARD 2 a b LIMIT 1"), Reply::Int(1));
    run(&srv, s, "SET str v");
    assert_eq!(run(&srv, s, "SUNIONSTORE str a b"), Reply::Int(4), "STORE replaces any type");
    assert_eq!(run(&srv, s, "TYPE str"), Reply::Simple("set"));
    assert_eq!(run(&srv, s, "SDIFFSTORE str a a"), Reply::Int(0));
    assert_eq!(run(&srv, s, "EXISTS str"), Reply::Int(0), "an empty result deletes the destination");
    assert_eq!(run(&srv, s, "SINTERSTORE d a b"), Reply::Int(2));
    assert_eq!(run(&srv, s, "SMEMBERS d"), bulks(&["2", "3"]));
    assert_eq!(run(&srv, s, "SMOVE a c 1"), Reply::Int(1));
    assert_eq!(run(&srv, s, "SMOVE a c 1"), Reply::Int(0));
    assert_eq!(run(&srv, s, "SMEMBERS c"), bulks(&["1"]));
    assert_eq!(run(&srv, s, "SCARD a"), Reply::Int(2));
    assert_eq!(sorted(run(&srv, s, "SPOP a 5")), [b"2".to_vec(), b"3".to_vec()]);
    assert_eq!(run(&srv, s, "EXISTS a"), Reply::Int(0));
    assert_eq!(run(&srv, s, "SPOP a"), Reply::Null);
    assert_eq!(run(&srv, s, "SRANDMEMBER c"), bulk("1"));
    let Reply::Array(picks) = run(&srv, s, "SRANDMEMBER c -3") else { panic!("an array") };
    assert_eq!(picks, vec![bulk("1"); 3]);
    run(&srv, s, "HSET h f v");
    assert_eq!(run(&srv, s, "SINTER d h"), wrong_type());
    assert_eq!(run(&srv, s, "SMOVE c h 1"), wrong_type());
    assert_eq!(run(&srv, s, "SISMEMBER c 1"), Reply::Int(1), "a refused SMOVE moved nothing");
}

#[test]
fn every_key_command_covers_every_type() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    run(&srv, s, "SET s v");
    run(&srv, s, "HSET h f v");
    run(&srv, s, "SADD t m");
    assert_eq!(run(&srv, s, "TYPE s"), Reply::Simple("string"));
    assert_eq!(run(&srv, s, "TYPE h"), Reply::Simple("hash"));
    assert_eq!(run(&srv, s, "TYPE t"), Reply::Simple("set"));
    assert_eq!(run(&srv, s, "TYPE none"), Reply::Simple("none"));
    for wrong in ["GET h", "INCR h", "APPEND h x", "STRLEN t", "SET h x GET", "GETSET t v"] {
        assert_eq!(run(&srv, s, wrong), wrong_type(), "{wrong}");
    }
    for wrong in ["HGET s f", "HSET t f v", "SADD h m", "SMEMBERS s", "HGETALL t", "HLEN s"] {
        assert_eq!(run(&srv, s, wrong), wrong_type(), "{wrong}");
    }
    assert_eq!(run(&srv, s, "MGET s h"), Reply::Array(vec![bulk("v"), Reply::Null]));
    assert_eq!(run(&srv, s, "SET h x NX"), Reply::Null, "NX sees the hash");
    assert_eq!(run(&srv, s, "EXISTS s h t none h"), Reply::Int(4));
    assert_eq!(run(&srv, s, "KEYS *"), bulks(&["h", "s", "t"]));
    assert_eq!(run(&srv, s, "DBSIZE"), Reply::Int(3));
    assert_eq!(run(&srv, s, "SCAN 0 TYPE hash"), Reply::Array(vec![bulk("0"), bulks(&["h"])]));
    assert_eq!(run(&srv, s, "SCAN 0 TYPE string"), Reply::Array(vec![bulk("0"), bulks(&["s"])]));
    assert_eq!(run(&srv, s, "SCAN 0 MATCH [ht]"), Reply::Array(vec![bulk("0"), bulks(&["h", "t"])]));
    // SET over a collection replaces it.
    assert_eq!(run(&srv, s, "SET t now-a-string"), Reply::OK);
    assert_eq!(run(&srv, s, "TYPE t"), Reply::Simple("string"));
    assert_eq!(run(&srv, s, "SADD t m"), wrong_type());
    // So does SET XX: the key exists, whatever its type.
    assert_eq!(run(&srv, s, "SET h replaced XX"), Reply::OK, "XX sees the hash");
    assert_eq!(run(&srv, s, "TYPE h"), Reply::Simple("string"));
    assert_eq!(run(&srv, s, "GET h"), bulk("replaced"));
    assert_eq!(run(&srv, s, "HGET h f"), wrong_type());
    assert_eq!(run(&srv, s, "SET missing v XX"), Reply::Null);
    assert_eq!(run(&srv, s, "DEL s h t none"), Reply::Int(3));
    assert_eq!(run(&srv, s, "DBSIZE"), Reply::Int(0));
    run(&srv, s, "HSET h f v");
    assert_eq!(run(&srv, s, "HGET h f"), bulk("v"), "no field of the deleted hash comes back");
    assert_eq!(run(&srv, s, "HLEN h"), Reply::Int(1));
    // Another database is another keyspace.
    assert_eq!(run(&srv, s, "SELECT 2"), Reply::OK);
    assert_eq!(run(&srv, s, "HGET h f"), Reply::Null);
    run(&srv, s, "SADD other m");
    assert_eq!(run(&srv, s, "FLUSHDB"), Reply::OK);
    assert_eq!(run(&srv, s, "DBSIZE"), Reply::Int(0));
    assert_eq!(run(&srv, s, "SELECT 0"), Reply::OK);
    assert_eq!(run(&srv, s, "DBSIZE"), Reply::Int(1));
    assert_eq!(run(&srv, s, "FLUSHALL"), Reply::OK);
    assert_eq!(run(&srv, s, "HGET h f"), Reply::Null);
}

#[test]
fn collections_expire_and_leave_nothing_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    run(&srv, s, "HSET h old 1");
    assert_eq!(run(&srv, s, "TTL h"), Reply::Int(-1));
    assert_eq!(run(&srv, s, "EXPIRE h 100"), Reply::Int(1));
    assert_eq!(run(&srv, s, "TTL h"), Reply::Int(100));
    assert_eq!(run(&srv, s, "EXPIRE h 50 GT"), Reply::Int(0));
    assert_eq!(run(&srv, s, "PERSIST h"), Reply::Int(1));
    assert_eq!(run(&srv, s, "TTL h"), Reply::Int(-1));
    assert_eq!(run(&srv, s, "HSET h keep 1"), Reply::Int(1), "writes keep the deadline's absence");
    assert_eq!(run(&srv, s, "PEXPIRE h 50"), Reply::Int(1));
    std::thread::sleep(Duration::from_millis(120));
    assert_eq!(run(&srv, s, "EXISTS h"), Reply::Int(0));
    assert_eq!(run(&srv, s, "TTL h"), Reply::Int(-2));
    assert_eq!(run(&srv, s, "TYPE h"), Reply::Simple("none"));
    assert_eq!(run(&srv, s, "KEYS *"), bulks(&[]));
    assert_eq!(run(&srv, s, "SADD h m"), Reply::Int(1), "an expired hash is no obstacle to a set");
    assert_eq!(run(&srv, s, "SMEMBERS h"), bulks(&["m"]));
    assert_eq!(run(&srv, s, "EXPIRE h 0"), Reply::Int(1), "a past deadline deletes");
    assert_eq!(run(&srv, s, "EXISTS h"), Reply::Int(0));
    run(&srv, s, "HSET h2 f v");
    assert_eq!(run(&srv, s, "SET h2 str EX 100"), Reply::OK);
    assert_eq!(run(&srv, s, "TTL h2"), Reply::Int(100));
}

#[test]
fn hscan_and_sscan_return_every_field_once_with_cursors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let mut want = BTreeSet::new();
    for i in 0..25 {
        run(&srv, s, &format!("HSET h f{i} v{i}"));
        run(&srv, s, &format!("SADD t m{i}"));
        want.insert(i);
    }
    for (cmd, with_values) in [("HSCAN h", true), ("SSCAN t", false)] {
        let mut seen = Vec::new();
        let mut cursor = "0".to_string();
        loop {
            let Reply::Array(parts) = run(&srv, s, &format!("{cmd} {cursor} COUNT 4")) else { panic!("an array") };
            let [Reply::Bulk(next), Reply::Array(items)] = parts.as_slice() else { panic!("cursor and items") };
            let step = if with_values { 2 } else { 1 };
            for item in items.iter().step_by(step) {
                let Reply::Bulk(b) = item else { panic!("a bulk") };
                seen.push(String::from_utf8_lossy(b.get(1..).unwrap_or_default()).parse::<i32>().expect("number"));
            }
            cursor = String::from_utf8_lossy(next).into_owned();
            if cursor == "0" {
                break;
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, want.iter().copied().collect::<Vec<_>>(), "{cmd}");
    }
    assert_eq!(
        run(&srv, s, "HSCAN h 0 MATCH f1? COUNT 100 NOVALUES"),
        Reply::Array(vec![bulk("0"), bulks(&["f10", "f11", "f12", "f13", "f14", "f15", "f16", "f17", "f18", "f19"])])
    );
    assert_eq!(run(&srv, s, "SSCAN missing 0"), Reply::Array(vec![bulk("0"), bulks(&[])]));
}

#[test]
fn exec_runs_collection_writes_and_watch_sees_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let a = &mut Session::new(1);
    let b = &mut Session::new(2);
    assert_eq!(run(&srv, a, "MULTI"), Reply::OK);
    run(&srv, a, "HSET h f 1");
    run(&srv, a, "HINCRBY h f 5");
    run(&srv, a, "SADD t m");
    run(&srv, a, "SMOVE t u m");
    run(&srv, a, "HGET h f");
    assert_eq!(
        run(&srv, a, "EXEC"),
        Reply::Array(vec![Reply::Int(1), Reply::Int(6), Reply::Int(1), Reply::Int(1), bulk("6")])
    );
    assert_eq!(run(&srv, b, "SMEMBERS u"), bulks(&["m"]));
    assert_eq!(run(&srv, b, "EXISTS t"), Reply::Int(0));
    // WATCH on a hash: another connection's HSET makes EXEC fail.
    assert_eq!(run(&srv, a, "WATCH h"), Reply::OK);
    assert_eq!(run(&srv, b, "HSET h g 2"), Reply::Int(1));
    run(&srv, a, "MULTI");
    run(&srv, a, "HSET h f 7");
    assert_eq!(run(&srv, a, "EXEC"), Reply::Null);
    assert_eq!(run(&srv, b, "HGET h f"), bulk("6"));
    // SMOVE of a member the destination has leaves the destination as it was.
    run(&srv, b, "SADD src x y");
    run(&srv, b, "SADD dst x");
    assert_eq!(run(&srv, a, "WATCH dst"), Reply::OK);
    run(&srv, a, "MULTI");
    run(&srv, a, "SADD dst z");
    assert_eq!(run(&srv, b, "SMOVE src dst x"), Reply::Int(1));
    assert_eq!(run(&srv, a, "EXEC"), Reply::Array(vec![Reply::Int(1)]));
    assert_eq!(run(&srv, b, "SMEMBERS src"), bulks(&["y"]));
    assert_eq!(run(&srv, b, "SMEMBERS dst"), bulks(&["x", "z"]));
}

#[test]
fn collections_survive_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (rt, srv) = server(dir.path());
        let s = &mut Session::new(1);
        run(&srv, s, "SELECT 3");
        run(&srv, s, "HSET h f v");
        run(&srv, s, "SADD t m");
        srv.store().db().clone().close().expect("close");
        drop(srv);
        drop(rt);
    }
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    run(&srv, s, "SELECT 3");
    assert_eq!(run(&srv, s, "HGET h f"), bulk("v"));
    assert_eq!(run(&srv, s, "GET t"), wrong_type(), "the database is known to hold collections");
    assert_eq!(run(&srv, s, "DBSIZE"), Reply::Int(2));
}

/// What the model holds at a key.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Str(String),
    Hash(BTreeMap<String, String>),
    Set(BTreeSet<String>),
}

fn type_name(v: Option<&Value>) -> &'static str {
    match v {
        None => "none",
        Some(Value::Str(_)) => "string",
        Some(Value::Hash(_)) => "hash",
        Some(Value::Set(_)) => "set",
    }
}

/// The model's answer to `cmd`, applying its writes.
fn model(m: &mut BTreeMap<String, Value>, cmd: &[String]) -> Reply {
    let key = cmd[1].clone();
    let cur = m.get(&key).cloned();
    let wrong = |want: &str| cur.as_ref().is_some_and(|v| type_name(Some(v)) != want);
    match cmd[0].as_str() {
        "SET" => {
            m.insert(key, Value::Str(cmd[2].clone()));
            Reply::OK
        }
        "GET" => match cur {
            None => Reply::Null,
            Some(Value::Str(s)) => bulk(&s),
            Some(_) => wrong_type(),
        },
        "HSET" if wrong("hash") => wrong_type(),
        "HSET" => {
            let mut h = match cur {
                Some(Value::Hash(h)) => h,
                _ => BTreeMap::new(),
            };
            let new = h.insert(cmd[2].clone(), cmd[3].clone()).is_none();
            m.insert(key, Value::Hash(h));
            Reply::Int(i64::from(new))
        }
        "HDEL" if wrong("hash") => wrong_type(),
        "HDEL" => {
            let Some(Value::Hash(mut h)) = cur else { return Reply::Int(0) };
            let gone = h.remove(&cmd[2]).is_some();
            if h.is_empty() {
                m.remove(&key);
            } else {
                m.insert(key, Value::Hash(h));
            }
            Reply::Int(i64::from(gone))
        }
        "HGETALL" if wrong("hash") => wrong_type(),
        "HGETALL" => match cur {
            Some(Value::Hash(h)) => Reply::Map(h.iter().map(|(f, v)| (bulk(f), bulk(v))).collect()),
            _ => Reply::Map(Vec::new()),
        },
        "HLEN" if wrong("hash") => wrong_type(),
        "HLEN" => Reply::Int(match cur {
            Some(Value::Hash(h)) => h.len() as i64,
            _ => 0,
        }),
        "SADD" if wrong("set") => wrong_type(),
        "SADD" => {
            let mut s = match cur {
                Some(Value::Set(s)) => s,
                _ => BTreeSet::new(),
            };
            let new = s.insert(cmd[2].clone());
            m.insert(key, Value::Set(s));
            Reply::Int(i64::from(new))
        }
        "SREM" if wrong("set") => wrong_type(),
        "SREM" => {
            let Some(Value::Set(mut s)) = cur else { return Reply::Int(0) };
            let gone = s.remove(&cmd[2]);
            if s.is_empty() {
                m.remove(&key);
            } else {
                m.insert(key, Value::Set(s));
            }
            Reply::Int(i64::from(gone))
        }
        "SMEMBERS" if wrong("set") => wrong_type(),
        "SMEMBERS" => match cur {
            Some(Value::Set(s)) => Reply::Array(s.iter().map(|x| bulk(x)).collect()),
            _ => Reply::Array(Vec::new()),
        },
        "DEL" => Reply::Int(i64::from(m.remove(&key).is_some())),
        "EXISTS" => Reply::Int(i64::from(cur.is_some())),
        "TYPE" => Reply::Simple(type_name(cur.as_ref())),
        other => panic!("the model has no {other}"),
    }
}

#[test]
fn random_commands_answer_as_a_model_of_typed_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let seed = std::env::var("TYPES_MODEL_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(7u64);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut m = BTreeMap::new();
    let commands =
        ["SET", "GET", "HSET", "HDEL", "HGETALL", "HLEN", "SADD", "SREM", "SMEMBERS", "DEL", "EXISTS", "TYPE"];
    for step in 0..3000 {
        let name = commands[rng.gen_range(0..commands.len())];
        let key = format!("k{}", rng.gen_range(0..6));
        let field = format!("f{}", rng.gen_range(0..4));
        let value = format!("v{}", rng.gen_range(0..100));
        let cmd: Vec<String> = match name {
            "SET" => vec![name.into(), key, value],
            "HSET" => vec![name.into(), key, field, value],
            "HDEL" | "SADD" | "SREM" => vec![name.into(), key, field],
            _ => vec![name.into(), key],
        };
        let want = model(&mut m, &cmd);
        let got = srv.execute(s, &cmd.iter().map(|w| w.as_bytes().to_vec()).collect::<Vec<_>>());
        assert_eq!(got, want, "step {step} (seed {seed}): {cmd:?}");
    }
    let Reply::Array(keys) = run(&srv, s, "KEYS *") else { panic!("an array") };
    assert_eq!(keys, m.keys().map(|k| bulk(k)).collect::<Vec<_>>());
}

#[test]
fn rename_copy_move_touch_and_randomkey_take_collections_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let mut s = Session::new(1);
    assert_eq!(run(&srv, &mut s, "HSET h a 1 b 2"), Reply::Int(2));
    assert_eq!(run(&srv, &mut s, "RANDOMKEY"), bulk("h"), "the only key is a hash");
    assert_eq!(run(&srv, &mut s, "PEXPIRE h 100000"), Reply::Int(1));
    assert_eq!(run(&srv, &mut s, "RENAME h h2"), Reply::OK);
    assert_eq!(run(&srv, &mut s, "EXISTS h"), Reply::Int(0));
    assert_eq!(run(&srv, &mut s, "HMGET h2 a b"), bulks(&["1", "2"]));
    assert_eq!(run(&srv, &mut s, "HLEN h2"), Reply::Int(2));
    assert!(
        matches!(run(&srv, &mut s, "PTTL h2"), Reply::Int(ms) if ms > 0 && ms <= 100_000),
        "the deadline moves with it"
    );
    // A string at the destination is replaced; the copy is a collection of its own.
    assert_eq!(run(&srv, &mut s, "SET c x"), Reply::OK);
    assert_eq!(run(&srv, &mut s, "COPY h2 c REPLACE"), Reply::Int(1));
    assert_eq!(run(&srv, &mut s, "HSET c a changed"), Reply::Int(0));
    assert_eq!(run(&srv, &mut s, "HGET h2 a"), bulk("1"), "the source is not the copy");
    assert_eq!(run(&srv, &mut s, "TYPE c"), Reply::Simple("hash"));
    // A set moved to another database, and a hash over an old hash of the same name.
    assert_eq!(run(&srv, &mut s, "SADD s m1 m2"), Reply::Int(2));
    assert_eq!(run(&srv, &mut s, "MOVE s 1"), Reply::Int(1));
    assert_eq!(run(&srv, &mut s, "HSET old z 9"), Reply::Int(1));
    assert_eq!(run(&srv, &mut s, "RENAME c old"), Reply::OK);
    assert_eq!(run(&srv, &mut s, "HGET old z"), Reply::Null, "the old hash's fields are gone");
    assert_eq!(run(&srv, &mut s, "TOUCH h2 old s nope"), Reply::Int(2));
    assert_eq!(run(&srv, &mut s, "SELECT 1"), Reply::OK);
    assert_eq!(sorted(run(&srv, &mut s, "SMEMBERS s")), [b"m1".to_vec(), b"m2".to_vec()]);
    assert_eq!(run(&srv, &mut s, "OBJECT ENCODING s"), bulk("listpack"));
    let Reply::Text(info) = run(&srv, &mut s, "INFO keyspace") else { panic!("INFO is text") };
    assert!(info.contains("db0:keys=2,expires=2,"), "two hashes, both with the deadline COPY kept: {info}");
    assert!(info.contains("db1:keys=1,expires=0,"), "{info}");
}
