//! Expiry through the command layer, as Redis clients use it: SET's options, SETEX,
//! PSETEX, GETEX, EXPIRE and friends, TTL and friends, PERSIST; keys that expire leave
//! every read (GET, EXISTS, KEYS, SCAN, DBSIZE). Deadlines of a fraction of a second, so
//! the tests sleep briefly.

mod common;

use common::{bulk, run, server};
use shamba_server::{Reply, Session};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn int(r: Reply) -> i64 {
    match r {
        Reply::Int(n) => n,
        other => panic!("not an integer: {other:?}"),
    }
}

fn err(r: Reply) -> String {
    match r {
        Reply::Error(e) => e,
        other => panic!("not an error: {other:?}"),
    }
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("after the epoch").as_millis() as i64
}

#[test]
fn set_with_a_deadline_expires_and_a_plain_set_clears_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(run(&srv, s, "SET k v EX 100"), Reply::OK);
    let ttl = int(run(&srv, s, "TTL k"));
    assert!((99..=100).contains(&ttl), "{ttl}");
    let pttl = int(run(&srv, s, "PTTL k"));
    assert!((99_000..=100_000).contains(&pttl), "{pttl}");
    assert_eq!(run(&srv, s, "SET k v2"), Reply::OK);
    assert_eq!(run(&srv, s, "TTL k"), Reply::Int(-1), "a plain SET clears the deadline");
    assert_eq!(run(&srv, s, "TTL nope"), Reply::Int(-2));
    assert_eq!(run(&srv, s, "PTTL nope"), Reply::Int(-2));

    assert_eq!(run(&srv, s, "SET k v PX 100000"), Reply::OK);
    assert_eq!(run(&srv, s, "SET k v3 KEEPTTL"), Reply::OK);
    assert_eq!(run(&srv, s, "GET k"), bulk("v3"));
    assert!(int(run(&srv, s, "PTTL k")) > 90_000, "KEEPTTL keeps the deadline");

    let at = now_ms() / 1000 + 1000;
    assert_eq!(run(&srv, s, &format!("SET k v EXAT {at}")), Reply::OK);
    assert_eq!(run(&srv, s, "EXPIRETIME k"), Reply::Int(at));
    assert_eq!(run(&srv, s, "PEXPIRETIME k"), Reply::Int(at * 1000));
    assert_eq!(run(&srv, s, &format!("SET k v PXAT {}", at * 1000 + 7)), Reply::OK);
    assert_eq!(run(&srv, s, "PEXPIRETIME k"), Reply::Int(at * 1000 + 7));
    assert_eq!(run(&srv, s, "EXPIRETIME nope"), Reply::Int(-2));
    let Reply::Array(time) = run(&srv, s, "TIME") else { panic!("TIME") };
    let Some(Reply::Bulk(secs)) = time.first() else { panic!("TIME's seconds") };
    let secs: i64 = String::from_utf8_lossy(secs).parse().expect("seconds");
    assert!((secs - now_ms() / 1000).abs() <= 1, "TIME is the clock deadlines are read by");
    assert_eq!(run(&srv, s, "SET p v"), Reply::OK);
    assert_eq!(run(&srv, s, "EXPIRETIME p"), Reply::Int(-1));

    // Expiry with NX, XX and GET.
    assert_eq!(run(&srv, s, "SET n v NX PX 100000"), Reply::OK);
    assert_eq!(run(&srv, s, "SET n w NX PX 100000"), Reply::Null);
    assert_eq!(run(&srv, s, "SET n w XX GET EX 50"), bulk("v"));
    assert!((49..=50).contains(&int(run(&srv, s, "TTL n"))));

    // A deadline of a fraction of a second: the key leaves every read.
    assert_eq!(run(&srv, s, "SET gone v PX 50"), Reply::OK);
    assert_eq!(run(&srv, s, "PSETEX gone2 50 v"), Reply::OK);
    assert_eq!(run(&srv, s, "EXISTS gone gone2"), Reply::Int(2));
    std::thread::sleep(Duration::from_millis(120));
    assert_eq!(run(&srv, s, "GET gone"), Reply::Null);
    assert_eq!(run(&srv, s, "EXISTS gone gone2"), Reply::Int(0));
    assert_eq!(run(&srv, s, "TTL gone"), Reply::Int(-2));
    assert_eq!(run(&srv, s, "KEYS gone*"), Reply::Array(vec![]));
    assert_eq!(run(&srv, s, "SCAN 0 MATCH gone* COUNT 100"), Reply::Array(vec![bulk("0"), Reply::Array(vec![])]));
    assert_eq!(run(&srv, s, "DBSIZE"), Reply::Int(3), "k, p and n are left");
}

#[test]
fn bad_expiry_options_are_refused_with_redis_messages() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    for line in ["SET k v EX 0", "SET k v PX -1", "SET k v EX 9223372036854775807"] {
        assert_eq!(err(run(&srv, s, line)), "ERR invalid expire time in 'set' command", "{line}");
    }
    assert_eq!(err(run(&srv, s, "SET k v EX ten")), "ERR value is not an integer or out of range");
    for line in ["SET k v EX 10 PX 10", "SET k v EX 10 KEEPTTL", "SET k v KEEPTTL PX 1", "SET k v NX XX", "SET k v EX"]
    {
        assert_eq!(err(run(&srv, s, line)), "ERR syntax error", "{line}");
    }
    assert_eq!(err(run(&srv, s, "SETEX k 0 v")), "ERR invalid expire time in 'setex' command");
    assert_eq!(err(run(&srv, s, "PSETEX k -5 v")), "ERR invalid expire time in 'psetex' command");
    assert_eq!(err(run(&srv, s, "GETEX k EX 0")), "ERR invalid expire time in 'getex' command");
    assert_eq!(err(run(&srv, s, "GETEX k EX 1 PERSIST")), "ERR syntax error");
    assert_eq!(
        err(run(&srv, s, "EXPIRE k 10 NX XX")),
        "ERR NX and XX, GT or LT options at the same time are not compatible"
    );
    assert_eq!(err(run(&srv, s, "EXPIRE k 10 GT LT")), "ERR GT and LT options at the same time are not compatible");
    assert_eq!(err(run(&srv, s, "EXPIRE k 10 ZZ")), "ERR Unsupported option ZZ");
    assert_eq!(err(run(&srv, s, "EXPIRE k 9223372036854775807")), "ERR invalid expire time in 'expire' command");
    assert_eq!(run(&srv, s, "GET k"), Reply::Null, "nothing was written");
}

#[test]
fn expire_and_its_conditions_persist_and_getex() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert_eq!(run(&srv, s, "EXPIRE absent 10"), Reply::Int(0));
    assert_eq!(run(&srv, s, "SET k v"), Reply::OK);
    assert_eq!(run(&srv, s, "EXPIRE k 100 XX"), Reply::Int(0), "XX: no deadline yet");
    assert_eq!(run(&srv, s, "EXPIRE k 100 GT"), Reply::Int(0), "GT: persistent counts as infinite");
    assert_eq!(run(&srv, s, "EXPIRE k 100 NX"), Reply::Int(1));
    assert_eq!(run(&srv, s, "EXPIRE k 200 NX"), Reply::Int(0));
    assert_eq!(run(&srv, s, "EXPIRE k 50 GT"), Reply::Int(0));
    assert_eq!(run(&srv, s, "EXPIRE k 200 GT"), Reply::Int(1));
    assert_eq!(run(&srv, s, "EXPIRE k 300 LT"), Reply::Int(0));
    assert_eq!(run(&srv, s, "PEXPIRE k 150000 LT"), Reply::Int(1));
    assert!((149..=150).contains(&int(run(&srv, s, "TTL k"))));
    assert_eq!(run(&srv, s, "GET k"), bulk("v"), "the value is kept");
    let at = now_ms() / 1000 + 500;
    assert_eq!(run(&srv, s, &format!("EXPIREAT k {at}")), Reply::Int(1));
    assert_eq!(run(&srv, s, "EXPIRETIME k"), Reply::Int(at));
    assert_eq!(run(&srv, s, &format!("PEXPIREAT k {}", at * 1000 + 1)), Reply::Int(1));
    assert_eq!(run(&srv, s, "PEXPIRETIME k"), Reply::Int(at * 1000 + 1));
    assert_eq!(run(&srv, s, "PERSIST k"), Reply::Int(1));
    assert_eq!(run(&srv, s, "PERSIST k"), Reply::Int(0));
    assert_eq!(run(&srv, s, "PERSIST absent"), Reply::Int(0));
    assert_eq!(run(&srv, s, "TTL k"), Reply::Int(-1));
    assert_eq!(run(&srv, s, "EXPIRE k 10 LT"), Reply::Int(1), "LT: persistent counts as infinite");

    // A deadline already past deletes the key.
    assert_eq!(run(&srv, s, "EXPIRE k -1"), Reply::Int(1));
    assert_eq!(run(&srv, s, "EXISTS k"), Reply::Int(0));
    assert_eq!(run(&srv, s, "SET k v"), Reply::OK);
    assert_eq!(run(&srv, s, "PEXPIREAT k 1"), Reply::Int(1));
    assert_eq!(run(&srv, s, "GET k"), Reply::Null);

    // GETEX: the value, and the deadline set, removed or left.
    assert_eq!(run(&srv, s, "GETEX absent EX 10"), Reply::Null);
    assert_eq!(run(&srv, s, "SET g v"), Reply::OK);
    assert_eq!(run(&srv, s, "GETEX g"), bulk("v"));
    assert_eq!(run(&srv, s, "TTL g"), Reply::Int(-1));
    assert_eq!(run(&srv, s, "GETEX g EX 100"), bulk("v"));
    assert!((99..=100).contains(&int(run(&srv, s, "TTL g"))));
    assert_eq!(run(&srv, s, "GETEX g PERSIST"), bulk("v"));
    assert_eq!(run(&srv, s, "TTL g"), Reply::Int(-1));
    assert_eq!(run(&srv, s, "GETEX g PX 40"), bulk("v"));
    assert_eq!(run(&srv, s, "SETEX s 100 v"), Reply::OK);
    assert!((99..=100).contains(&int(run(&srv, s, "TTL s"))));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(run(&srv, s, "GET g"), Reply::Null);
}

#[test]
fn expiry_survives_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let (_rt, srv) = server(dir.path());
        let s = &mut Session::new(1);
        assert_eq!(run(&srv, s, "SET k v EX 1000"), Reply::OK);
        assert_eq!(run(&srv, s, "SET short v PX 1"), Reply::OK);
        srv.store().db().flush().expect("flush");
    }
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    assert!((990..=1000).contains(&int(run(&srv, s, "TTL k"))));
    assert_eq!(run(&srv, s, "GET short"), Reply::Null);
}

#[test]
fn compaction_reclaims_an_expired_collection_without_a_later_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let value = "v".repeat(200);
    for chunk in 0..20 {
        let mut cmd = String::from("HSET gone");
        for f in 0..100 {
            cmd.push_str(&format!(" f{chunk}_{f} {value}"));
        }
        run(&srv, s, &cmd);
        run(&srv, s, &cmd.replacen("HSET gone", "HSET kept", 1));
    }
    assert_eq!(run(&srv, s, "PEXPIRE gone 1"), Reply::Int(1));
    std::thread::sleep(Duration::from_millis(20));
    let db = srv.store().db().clone();
    let fields = db.keyspace("db0.fields").expect("fields keyspace");
    let meta = db.keyspace("db0.meta").expect("metadata keyspace");
    let bytes = |ks: &shamba::Keyspace| ks.files().iter().map(|f| f.size).sum::<u64>();
    db.flush().expect("flush");
    let before = bytes(&fields);
    assert!(before > 2 * 2000 * 200, "both hashes' fields on disk: {before} bytes");
    fields.compact().expect("compact");
    meta.compact().expect("compact");
    let after = bytes(&fields);
    // The live hash's fields stay, the expired one's are gone.
    assert!(after < before * 6 / 10, "{before} bytes before, {after} after");
    assert_eq!(shamba::Readable::iter(&fields).count(), 2000, "only the live hash's fields");
    assert_eq!(shamba::Readable::iter(&meta).count(), 1, "only the live hash's metadata");
    assert_eq!(run(&srv, s, "HLEN kept"), Reply::Int(2000));
    assert_eq!(run(&srv, s, "HGET kept f19_99"), bulk(&value));
    assert_eq!(run(&srv, s, "EXISTS gone"), Reply::Int(0));
}

/// PEXPIRETIME is the deadline set, to the millisecond, however the clock's millisecond
/// turns while it is read (the engine answers the time left by its own reading).
#[test]
fn pexpiretime_gives_back_the_deadline_exactly_every_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_rt, srv) = server(dir.path());
    let s = &mut Session::new(1);
    let at = now_ms() + 100_000_000;
    assert_eq!(run(&srv, s, &format!("SET k v PXAT {at}")), Reply::OK);
    let off: Vec<i64> = (0..20_000).map(|_| int(run(&srv, s, "PEXPIRETIME k")) - at).filter(|d| *d != 0).collect();
    assert!(off.is_empty(), "{} of 20,000 answers off the deadline, e.g. by {:?}", off.len(), off.first());
}
