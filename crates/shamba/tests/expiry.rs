//! Time to live: what a user relies on. An expired key is gone for every read at once (gets,
//! `multi_get`, scans both ways, snapshots read after the deadline, keyspaces), whether it
//! lies in the memtable or in tables; it does not uncover an older version of its key; its
//! bytes leave the disk with the next compaction; deadlines survive a reopen; a database
//! written before expiry existed opens and reads unchanged. Every test runs on an injected
//! clock. The model test (`model.rs`) checks expiry under random operations.

use shamba::{Db, ManualClock, Options, Readable, Ttl, WriteBatch};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const MINUTE: Duration = Duration::from_secs(60);

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(UNIX_EPOCH + Duration::from_secs(1_700_000_000)))
}

fn small(clock: &Arc<ManualClock>) -> Options {
    Options { write_buffer_size: 16 << 10, target_file_size: 16 << 10, clock: clock.clone(), ..Options::default() }
}

fn keys(r: impl Iterator<Item = shamba::Result<(Vec<u8>, Vec<u8>)>>) -> Vec<String> {
    r.map(|kv| String::from_utf8(kv.unwrap().0).unwrap()).collect()
}

/// Bytes of the table files in `dir`.
fn table_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sst"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

/// Keys `k00`..`k09`: even ones expire in a minute, odd ones never; `k00`..`k04` are in
/// tables, the rest in the memtable.
fn write_half_expiring(db: &Db) {
    for i in 0..10 {
        let key = format!("k{i:02}");
        if i % 2 == 0 {
            db.put_with_ttl(&key, format!("v{i}"), MINUTE).unwrap();
        } else {
            db.put(&key, format!("v{i}")).unwrap();
        }
        if i == 4 {
            db.flush().unwrap();
        }
    }
}

#[test]
fn an_expired_key_is_gone_for_every_read_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let clock = clock();
    let db = Db::open(dir.path(), small(&clock)).unwrap();
    write_half_expiring(&db);
    let all: Vec<String> = (0..10).map(|i| format!("k{i:02}")).collect();
    let odd: Vec<String> = (0..10).filter(|i| i % 2 == 1).map(|i| format!("k{i:02}")).collect();
    assert_eq!(keys(db.iter()), all);
    assert_eq!(db.get("k00").unwrap().as_deref(), Some(&b"v0"[..]), "the deadline is not part of the value");
    assert_eq!(db.ttl("k00").unwrap(), Ttl::Remaining(MINUTE));
    assert_eq!(db.ttl("k01").unwrap(), Ttl::Persistent);
    let before = db.snapshot();

    clock.advance(MINUTE - Duration::from_millis(1));
    assert_eq!(db.ttl("k08").unwrap(), Ttl::Remaining(Duration::from_millis(1)));
    assert_eq!(keys(db.iter()), all, "not yet");
    clock.advance(Duration::from_millis(1));
    let after = db.snapshot();

    for reader in 0..3 {
        let get = |k: &str| match reader {
            0 => db.get(k).unwrap(),
            1 => before.get(k).unwrap(),
            _ => after.get(k).unwrap(),
        };
        for (i, key) in all.iter().enumerate() {
            assert_eq!(get(key).is_some(), i % 2 == 1, "{key}, reader {reader}");
        }
    }
    for r in [db.multi_get(&all), before.multi_get(&all), after.multi_get(&all)] {
        let found: Vec<bool> = r.into_iter().map(|v| v.unwrap().is_some()).collect();
        assert_eq!(found, (0..10).map(|i| i % 2 == 1).collect::<Vec<_>>());
    }
    let mut odd_back = odd.clone();
    odd_back.reverse();
    for it in [db.iter(), before.iter(), after.iter()] {
        assert_eq!(keys(it), odd);
    }
    for it in [db.iter(), before.iter(), after.iter()] {
        assert_eq!(keys(it.rev()), odd_back);
    }
    assert_eq!(keys(db.range("k02".."k07")), ["k03", "k05"]);
    assert_eq!(keys(db.range("k02"..="k08").rev()), ["k07", "k05", "k03"]);
    assert_eq!(keys(db.prefix("k0")), odd);
    assert_eq!(db.ttl("k00").unwrap(), Ttl::Absent);

    // Written back without a time to live, a key lives again; its expired version is older.
    db.put("k00", "again").unwrap();
    assert_eq!(db.get("k00").unwrap().as_deref(), Some(&b"again"[..]));
    assert_eq!(db.ttl("k00").unwrap(), Ttl::Persistent);
}

#[test]
fn an_expired_key_does_not_uncover_an_older_version() {
    let dir = tempfile::tempdir().unwrap();
    let clock = clock();
    let db = Db::open(dir.path(), small(&clock)).unwrap();
    db.put("k", "old").unwrap();
    db.compact().unwrap();
    let old = db.snapshot();
    db.put_with_ttl("k", "new", MINUTE).unwrap();
    db.flush().unwrap();
    clock.advance(MINUTE);
    assert_eq!(db.get("k").unwrap(), None);
    assert_eq!(keys(db.iter()), Vec::<String>::new());
    // The compaction turns the expired entry into a tombstone (a snapshot still reads the
    // old version, so the old version stays, and so must something above it).
    db.compact().unwrap();
    assert_eq!(db.get("k").unwrap(), None);
    assert_eq!(db.multi_get(&["k"])[0].as_ref().unwrap(), &None);
    assert_eq!(keys(db.iter().rev()), Vec::<String>::new());
    assert_eq!(old.get("k").unwrap().as_deref(), Some(&b"old"[..]), "the snapshot still reads what it read");
    drop(old);
    db.compact().unwrap();
    assert_eq!(db.get("k").unwrap(), None);
    assert_eq!(db.iter().count(), 0);
}

#[test]
fn a_compaction_reclaims_the_bytes_of_expired_keys() {
    let dir = tempfile::tempdir().unwrap();
    let clock = clock();
    let opts = Options { target_file_size: 1 << 20, ..small(&clock) };
    let db = Db::open(dir.path(), opts).unwrap();
    let n = 20_000;
    let value = vec![b'x'; 100];
    let mut batch = WriteBatch::new();
    for i in 0..n {
        let key = format!("key{i:08}");
        // One key in ten lives on.
        if i % 10 == 0 {
            batch.put(&key, &value);
        } else {
            batch.put_with_ttl(&key, &value, MINUTE);
        }
        if batch.len() == 1000 {
            db.write(std::mem::take(&mut batch)).unwrap();
        }
    }
    db.compact().unwrap();
    let before = table_bytes(dir.path());
    assert_eq!(db.iter().count(), n);
    clock.advance(MINUTE);
    assert_eq!(db.iter().count(), n / 10, "expired before any compaction");
    db.compact().unwrap();
    let after = table_bytes(dir.path());
    println!("{n} keys of 100-byte values, 90% expired: {before} bytes of tables before the compaction, {after} after");
    assert!(after * 5 < before, "{after} bytes left of {before}");
    assert_eq!(db.iter().count(), n / 10);
    let entries: u64 = db.files().iter().map(|f| f.entries).sum();
    assert_eq!(entries, (n / 10) as u64, "no tombstone or expired entry is left at the bottom");
}

#[test]
fn deadlines_survive_a_reopen_and_a_batch_stamps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let clock = clock();
    let db = Db::open(dir.path(), small(&clock)).unwrap();
    let users = db.keyspace("users").unwrap();
    let at = clock.now_for_test() + 2 * MINUTE;
    let mut batch = WriteBatch::new();
    batch.put_with_ttl("a", "1", MINUTE).put_with_expiry("b", "2", at).put_with_ttl_in(&users, "u", "3", MINUTE);
    // The time to live counts from the write, not from when the batch was built.
    clock.advance(Duration::from_secs(10));
    db.write(batch).unwrap();
    users.put_with_expiry("w", "4", at).unwrap();
    db.put_with_expiry("gone", "5", clock.now_for_test()).unwrap();
    assert_eq!(db.get("gone").unwrap(), None, "a deadline already reached writes a key no read finds");
    assert_eq!(db.ttl("a").unwrap(), Ttl::Remaining(MINUTE));
    assert_eq!(users.ttl("u").unwrap(), Ttl::Remaining(MINUTE));
    drop(users);
    db.close().unwrap();

    // Half from the log, half from tables.
    let db = Db::open(dir.path(), small(&clock)).unwrap();
    let users = db.keyspace("users").unwrap();
    assert_eq!(db.ttl("b").unwrap(), Ttl::Remaining(2 * MINUTE - Duration::from_secs(10)));
    db.flush().unwrap();
    clock.advance(MINUTE);
    assert_eq!((db.get("a").unwrap(), users.get("u").unwrap()), (None, None));
    assert_eq!(db.get("b").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(users.get("w").unwrap().as_deref(), Some(&b"4"[..]));
    clock.advance(MINUTE);
    assert_eq!((db.get("b").unwrap(), users.get("w").unwrap()), (None, None));
    assert!(db.verify().unwrap().is_ok());
}

/// `now` of a manual clock, for building deadlines.
trait NowForTest {
    fn now_for_test(&self) -> SystemTime;
}

impl NowForTest for Arc<ManualClock> {
    fn now_for_test(&self) -> SystemTime {
        shamba::Clock::now(&**self)
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// `tests/fixtures/pre-expiry` was written by the release binary of 494d991 (before
/// expiry existed): `shamba put` key000..key039 = flushed-i; `shamba compact`;
/// key020..key029 = updated-i; `shamba delete key005`; `shamba put key030 in-wal`.
#[test]
fn a_database_written_before_expiry_opens_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pre-expiry"), dir.path());
    let check = |db: &Db| {
        for i in 0..40 {
            let key = format!("key{i:03}");
            let want = match i {
                5 => None,
                20..=29 => Some(format!("updated-{i}")),
                30 => Some("in-wal".to_string()),
                _ => Some(format!("flushed-{i}")),
            };
            let ttl = if want.is_some() { Ttl::Persistent } else { Ttl::Absent };
            assert_eq!(db.get(&key).unwrap(), want.map(String::into_bytes), "{key}");
            assert_eq!(db.ttl(&key).unwrap(), ttl, "{key}");
        }
        assert_eq!(db.iter().count(), 39);
    };
    let clock = clock();
    let db = Db::open(dir.path(), small(&clock)).unwrap();
    check(&db);
    assert!(db.verify().unwrap().is_ok());
    db.put_with_ttl("key100", "expires", MINUTE).unwrap();
    db.compact().unwrap();
    db.close().unwrap();

    let db = Db::open(dir.path(), small(&clock)).unwrap();
    assert_eq!(db.get("key100").unwrap().as_deref(), Some(&b"expires"[..]));
    clock.advance(MINUTE);
    check(&db);
    db.compact().unwrap();
    check(&db);
    assert!(db.verify().unwrap().is_ok());
}

#[test]
fn expire_and_persist_rewrite_a_deadline_and_keep_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let clock = clock();
    let db = Db::open(dir.path(), small(&clock)).unwrap();
    let users = db.keyspace("users").unwrap();
    db.put("k", "v").unwrap();
    users.put("u", "ada").unwrap();
    assert!(!db.persist("k").unwrap(), "nothing to persist");
    assert!(db.expire_after("k", MINUTE).unwrap());
    assert!(users.expire(b"u", clock.now_for_test() + MINUTE).unwrap());
    assert!(!db.expire_after("absent", MINUTE).unwrap());
    assert_eq!(db.ttl("absent").unwrap(), Ttl::Absent, "expire does not create a key");
    assert_eq!((db.ttl("k").unwrap(), users.ttl("u").unwrap()), (Ttl::Remaining(MINUTE), Ttl::Remaining(MINUTE)));
    db.flush().unwrap();
    assert!(users.persist("u").unwrap());
    clock.advance(MINUTE);
    assert_eq!(db.get("k").unwrap(), None);
    assert!(!db.expire_after("k", MINUTE).unwrap(), "an expired key is not there to expire");
    assert!(!db.persist("k").unwrap());
    assert_eq!(users.get("u").unwrap().as_deref(), Some(&b"ada"[..]));
    assert_eq!(users.ttl("u").unwrap(), Ttl::Persistent);
    // A deadline already past removes the key.
    assert!(users.expire("u", clock.now_for_test()).unwrap());
    assert_eq!(users.get("u").unwrap(), None);

    // In a transaction: its own expiring writes read as such, and commit with their deadline.
    let tx = db.transaction();
    tx.put_with_ttl("t", "1", MINUTE).unwrap();
    tx.keyspace(&users).put_with_expiry("tu", "2", clock.now_for_test() + MINUTE).unwrap();
    assert_eq!(tx.ttl("t").unwrap(), Ttl::Remaining(MINUTE));
    assert_eq!(tx.keyspace(&users).ttl("tu").unwrap(), Ttl::Remaining(MINUTE));
    assert_eq!(keys(tx.iter()), ["t"]);
    tx.commit().unwrap();
    assert_eq!(db.ttl("t").unwrap(), Ttl::Remaining(MINUTE));
    assert_eq!(users.ttl("tu").unwrap(), Ttl::Remaining(MINUTE));
    clock.advance(MINUTE);
    assert_eq!((db.get("t").unwrap(), users.get("tu").unwrap()), (None, None));
}

/// `expire` and `persist` read a value and write it back with another deadline: done
/// naively, a put between the read and the write would be overwritten with the old value.
/// Run as transactions, the last put's value is the one left, whatever the interleaving.
#[test]
fn expire_and_persist_never_lose_a_concurrent_put() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("k", "0").unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    let puts = 3000;
    let rewrites = std::thread::scope(|s| {
        let rewriter = s.spawn(|| {
            let mut ok = 0;
            let far = SystemTime::now() + Duration::from_secs(3600);
            for i in 0.. {
                if done.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                let r = if i % 2 == 0 { db.expire("k", far) } else { db.persist("k") };
                match r {
                    Ok(_) => ok += 1,
                    Err(e) if e.is_conflict() => {}
                    Err(e) => panic!("{e}"),
                }
            }
            ok
        });
        for i in 1..=puts {
            db.put("k", i.to_string()).unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        rewriter.join().unwrap()
    });
    assert!(rewrites > 0);
    assert_eq!(db.get("k").unwrap(), Some(puts.to_string().into_bytes()), "after {rewrites} rewrites");
}

/// What an expired key costs a lookup until a compaction collects it: its filter still
/// says "maybe" (the key is in the table), so the lookup searches a data block and finds
/// an entry it must hide. After the compaction the key is gone from the table and its filter.
#[test]
fn an_expired_key_costs_a_data_block_search_until_compacted() {
    let dir = tempfile::tempdir().unwrap();
    let clock = clock();
    let db = Db::open(dir.path(), small(&clock)).unwrap();
    for i in 0..200 {
        db.put(format!("k{i:04}-live"), "v").unwrap();
        db.put_with_ttl(format!("k{i:04}-gone"), "v", MINUTE).unwrap();
    }
    db.compact().unwrap();
    clock.advance(MINUTE);
    let table_hits = |db: &Db| -> (u64, u64) {
        let s = db.stats();
        (s.lookup_levels.iter().map(|l| l.hits).sum(), s.lookup_levels.iter().map(|l| l.filter_negatives).sum())
    };
    let before = table_hits(&db);
    for i in 0..200 {
        assert_eq!(db.get(format!("k{i:04}-gone")).unwrap(), None);
    }
    let after = table_hits(&db);
    assert_eq!(after.0 - before.0, 200, "each expired key is found in its table, then hidden");
    db.compact().unwrap();
    let before = table_hits(&db);
    for i in 0..200 {
        assert_eq!(db.get(format!("k{i:04}-gone")).unwrap(), None);
    }
    let after = table_hits(&db);
    assert!(after.0 - before.0 < 10, "collected: only the filter's false positives reach a data block");
    assert!(after.1 - before.1 > 190, "the filter answers for the collected keys");
}
