//! Optimistic transactions: what a user relies on. A transaction reads its snapshot with
//! its own writes over it (gets, multi_get, iterators both ways, range deletes, keyspaces);
//! its commit is one atomic batch, refused with `Error::Conflict` naming the key when a
//! key it wrote or read for update was written after its snapshot, or when that can no
//! longer be checked; dropping it writes nothing; `transact` reruns a conflicting closure.
//! The model test (`model.rs`) checks interleaved transactions against a model; the bank
//! test (`bank.rs`) checks many of them under contention and a SIGKILL.

use shamba::{Db, Error, Options, Readable, TransactionOptions};
use std::sync::{Arc, Barrier};
use std::time::Duration;

fn open(dir: &std::path::Path) -> Db {
    Db::open(dir, Options::default()).unwrap()
}

fn pairs(it: impl Iterator<Item = shamba::Result<(Vec<u8>, Vec<u8>)>>) -> Vec<(String, String)> {
    it.map(|kv| {
        let (k, v) = kv.unwrap();
        (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap())
    })
    .collect()
}

fn kv(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

#[test]
fn a_transaction_reads_its_snapshot_with_its_own_writes_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    for (k, v) in [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"), ("e", "5")] {
        db.put(k, v).unwrap();
    }
    db.flush().unwrap();
    db.put("f", "6").unwrap();
    let tx = db.transaction();
    db.put("a", "later").unwrap();
    db.put("g", "later").unwrap();

    tx.put("b", "tx").unwrap();
    tx.delete("c").unwrap();
    tx.put("bb", "new").unwrap();
    tx.delete_range(&b"d"[..]..&b"f"[..]).unwrap();
    tx.put("dd", "after the range").unwrap();

    assert_eq!(tx.get("a").unwrap().as_deref(), Some(&b"1"[..]), "the snapshot, not the later write");
    assert_eq!(tx.get("b").unwrap().as_deref(), Some(&b"tx"[..]));
    assert_eq!(tx.get("c").unwrap(), None);
    assert_eq!(tx.get("d").unwrap(), None, "under the transaction's range delete");
    assert_eq!(tx.get("g").unwrap(), None);
    let got: Vec<Option<Vec<u8>>> =
        tx.multi_get(&["a", "b", "c", "d", "dd", "f"]).into_iter().collect::<Result<_, _>>().unwrap();
    assert_eq!(
        got,
        [Some(b"1".to_vec()), Some(b"tx".to_vec()), None, None, Some(b"after the range".to_vec()), Some(b"6".to_vec())]
    );
    let want = vec![kv("a", "1"), kv("b", "tx"), kv("bb", "new"), kv("dd", "after the range"), kv("f", "6")];
    assert_eq!(pairs(tx.iter()), want);
    let mut back = pairs(tx.iter().rev());
    back.reverse();
    assert_eq!(back, want, "backward as forward");
    assert_eq!(pairs(tx.range(&b"b"[..]..&b"e"[..])), want[1..4].to_vec());
    assert_eq!(pairs(tx.range(&b"b"[..]..&b"dd"[..]).rev()), vec![kv("bb", "new"), kv("b", "tx")]);
    assert_eq!(pairs(tx.prefix(b"b")), vec![kv("b", "tx"), kv("bb", "new")]);
    let mut it = tx.iter();
    it.seek("bb");
    assert_eq!(it.next().unwrap().unwrap().0, b"bb");

    // Nobody else sees any of it before the commit.
    assert_eq!(db.get("b").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(db.get("bb").unwrap(), None);
    tx.commit().unwrap();
    let after = vec![
        kv("a", "later"),
        kv("b", "tx"),
        kv("bb", "new"),
        kv("dd", "after the range"),
        kv("f", "6"),
        kv("g", "later"),
    ];
    assert_eq!(pairs(db.iter()), after);
}

#[test]
fn a_commit_conflicts_with_a_write_after_its_snapshot_and_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    db.put("k", "0").unwrap();

    // Read for update, then written by someone else: refused, nothing written.
    let tx = db.transaction();
    assert_eq!(tx.get_for_update("k").unwrap().as_deref(), Some(&b"0"[..]));
    tx.put("other", "x").unwrap();
    db.put("k", "1").unwrap();
    match tx.commit() {
        Err(Error::Conflict { keyspace, key, .. }) => {
            assert_eq!((keyspace.as_str(), key.as_slice()), ("default", &b"k"[..]))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(db.get("other").unwrap(), None, "a refused commit writes nothing");

    // Two transactions write one key: the first commit wins.
    let (t1, t2) = (db.transaction(), db.transaction());
    t1.put("k", "t1").unwrap();
    t2.put("k", "t2").unwrap();
    t1.commit().unwrap();
    let e = t2.commit().unwrap_err();
    assert!(e.is_conflict() && e.to_string().contains("k"), "{e}");
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"t1"[..]));

    // A delete, and a range delete over the key, count as writes.
    let tx = db.transaction();
    tx.put("k", "again").unwrap();
    db.delete_range(&b"a"[..]..&b"z"[..]).unwrap();
    assert!(tx.commit().unwrap_err().is_conflict());

    // A plain read is not tracked (snapshot isolation); a write to another key is no conflict.
    db.put("k", "0").unwrap();
    let tx = db.transaction();
    tx.get("k").unwrap();
    tx.put("mine", "1").unwrap();
    db.put("k", "1").unwrap();
    db.put("unrelated", "1").unwrap();
    tx.commit().unwrap();
    assert_eq!(db.get("mine").unwrap().as_deref(), Some(&b"1"[..]));

    // A transaction that only read for update is checked too.
    let tx = db.transaction();
    tx.get_for_update("k").unwrap();
    db.put("k", "2").unwrap();
    assert!(tx.commit().unwrap_err().is_conflict());
}

#[test]
fn a_dropped_transaction_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let tx = db.transaction();
    tx.put("a", "1").unwrap();
    tx.delete_range::<&[u8], _>(..).unwrap();
    drop(tx);
    let tx = db.transaction();
    tx.put("b", "1").unwrap();
    tx.rollback();
    assert_eq!(db.iter().count(), 0);
    db.close().unwrap();
    let db = open(dir.path());
    assert_eq!(db.iter().count(), 0);
}

#[test]
fn a_flush_after_the_snapshot_makes_the_commit_conflict_and_transact_retries() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    db.put("k", "0").unwrap();
    let tx = db.transaction();
    tx.put("k", "tx").unwrap();
    db.put("unrelated", "1").unwrap();
    db.flush().unwrap();
    let e = tx.commit().unwrap_err();
    assert!(matches!(&e, Error::Conflict { reason, .. } if reason.contains("flushed")), "{e}");

    // Without a write since the snapshot, a flush leaves nothing to check against.
    let tx = db.transaction();
    tx.put("k", "tx").unwrap();
    db.flush().unwrap();
    tx.commit().unwrap();

    // transact runs the closure again after a conflict, and returns its value.
    let mut runs = 0;
    let v = db
        .transact(|tx| {
            runs += 1;
            let n = tx.get_for_update("k")?.map_or(0, |v| v.len());
            if runs == 1 {
                db.put("k", "someone else")?;
            }
            tx.put("k", "mine")?;
            Ok(n)
        })
        .unwrap();
    assert_eq!((runs, v), (2, "someone else".len()));
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"mine"[..]));

    // ... up to its bound: then the last conflict.
    let opts = TransactionOptions { max_attempts: 3, ..TransactionOptions::default() };
    let mut runs = 0;
    let e = db
        .transact_with(&opts, |tx| {
            runs += 1;
            tx.put("k", "x")?;
            db.put("k", "always someone else")
        })
        .unwrap_err();
    assert!(e.is_conflict() && runs == 3, "{e} after {runs}");
    // An error that is not a conflict ends it at once.
    let mut runs = 0;
    let e = db
        .transact(|tx| -> shamba::Result<()> {
            runs += 1;
            tx.put("k", "x")?;
            Err(Error::InvalidArgument("mine".into()))
        })
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)) && runs == 1);
}

#[test]
fn transactions_span_keyspaces() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let users = db.keyspace("users").unwrap();
    let other = tempfile::tempdir().unwrap();
    let other_db = open(other.path());
    let foreign = other_db.keyspace("users").unwrap();
    users.put("u1", "ada").unwrap();
    db.put("u1", "default").unwrap();

    let tx = db.transaction();
    let u = tx.keyspace(&users);
    assert_eq!(u.get_for_update("u1").unwrap().as_deref(), Some(&b"ada"[..]));
    u.put("u2", "grace").unwrap();
    u.delete_range(&b"u1"[..]..&b"u2"[..]).unwrap();
    tx.put("count", "1").unwrap();
    assert_eq!(pairs(u.iter()), vec![kv("u2", "grace")]);
    assert_eq!(pairs(tx.iter()), vec![kv("count", "1"), kv("u1", "default")]);
    assert!(matches!(tx.keyspace(&foreign).put("x", "y"), Err(Error::InvalidArgument(_))));
    assert!(matches!(tx.keyspace(&foreign).get("x"), Err(Error::InvalidArgument(_))));
    tx.commit().unwrap();
    assert_eq!(pairs(users.iter()), vec![kv("u2", "grace")]);
    assert_eq!(db.get("count").unwrap().as_deref(), Some(&b"1"[..]));

    // A conflict in a keyspace names it.
    let tx = db.transaction();
    tx.keyspace(&users).put("u2", "mine").unwrap();
    users.put("u2", "theirs").unwrap();
    match tx.commit() {
        Err(Error::Conflict { keyspace, key, .. }) => {
            assert_eq!((keyspace.as_str(), key.as_slice()), ("users", &b"u2"[..]))
        }
        other => panic!("{other:?}"),
    }
    // The same key in the default keyspace is another key.
    let tx = db.transaction();
    tx.put("u2", "mine").unwrap();
    users.put("u2", "theirs again").unwrap();
    tx.commit().unwrap();
    drop(foreign);
    drop(other_db);
}

#[test]
fn a_transaction_past_its_max_age_stops_reading_but_commits() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    db.put("k", "0").unwrap();
    let tx = db.transaction_with(TransactionOptions { max_age: Some(Duration::from_millis(50)), ..Default::default() });
    assert!(tx.get("k").unwrap().is_some());
    tx.put("mine", "1").unwrap();
    std::thread::sleep(Duration::from_millis(80));
    assert!(tx.get("k").unwrap_err().is_conflict(), "its versions may be gone");
    assert!(tx.iter().next().unwrap().unwrap_err().is_conflict());
    assert!(tx.multi_get(&["k", "mine"])[0].as_ref().unwrap_err().is_conflict());
    assert_eq!(tx.get("mine").unwrap().as_deref(), Some(&b"1"[..]), "its own writes still read");
    tx.commit().unwrap();
    assert_eq!(db.get("mine").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn keys_and_values_over_their_limits_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options { max_key_size: 8, max_value_size: 8, ..Options::default() }).unwrap();
    let tx = db.transaction();
    assert!(matches!(tx.put("a key too long", "v"), Err(Error::InvalidArgument(_))));
    assert!(matches!(tx.put("k", "a value too long"), Err(Error::InvalidArgument(_))));
    assert!(matches!(tx.get_for_update("a key too long"), Err(Error::InvalidArgument(_))));
    tx.put("k", "v").unwrap();
    tx.commit().unwrap();
}

/// Threads increment counters in transactions, each read for update: with conflicts
/// retried, no increment is lost or applied twice, whichever commits share a write group.
#[test]
fn concurrent_increments_are_neither_lost_nor_doubled() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options { write_buffer_size: 64 << 10, ..Options::default() }).unwrap();
    let (threads, rounds, counters) = (4, 200, 3);
    let barrier = Arc::new(Barrier::new(threads));
    let conflicts = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (db, barrier, conflicts) = (db.clone(), barrier.clone(), conflicts.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for i in 0..rounds {
                    let key = format!("counter{}", (t + i) % counters);
                    let opts = TransactionOptions { max_attempts: 1000, ..Default::default() };
                    let mut runs = 0;
                    db.transact_with(&opts, |tx| {
                        runs += 1;
                        let n: u64 =
                            tx.get_for_update(&key)?.map_or(0, |v| String::from_utf8_lossy(&v).parse().unwrap());
                        tx.put(&key, (n + 1).to_string())?;
                        // Padding so the memtable switches now and then.
                        tx.put(format!("pad{t}-{i}"), vec![0u8; 200])
                    })
                    .unwrap();
                    conflicts.fetch_add(runs - 1, std::sync::atomic::Ordering::Relaxed);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let total: u64 = (0..counters)
        .map(|c| String::from_utf8(db.get(format!("counter{c}")).unwrap().unwrap()).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, (threads * rounds) as u64);
    eprintln!("{} conflicts retried", conflicts.load(std::sync::atomic::Ordering::Relaxed));
}

#[test]
fn compactions_keep_what_a_live_transaction_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    db.put("k", "old").unwrap();
    db.put("gone", "old").unwrap();
    let tx = db.transaction();
    db.put("k", "new").unwrap();
    db.delete("gone").unwrap();
    db.compact().unwrap();
    assert_eq!(tx.get("k").unwrap().as_deref(), Some(&b"old"[..]));
    assert_eq!(pairs(tx.iter()), vec![kv("gone", "old"), kv("k", "old")]);
    drop(tx);
    db.compact().unwrap();
    assert_eq!(db.stats().levels.iter().map(|l| l.entries).sum::<u64>(), 1, "released: the old versions go");
}
