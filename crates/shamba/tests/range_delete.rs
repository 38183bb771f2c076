//! Range deletes: one record whatever the range holds; gets, iterators both ways and
//! snapshots honour them in memtables and tables alike; compaction drops what they delete
//! and then the tombstones themselves, unless a snapshot still needs them.

use shamba::{Db, Options, Readable, WriteBatch};
use std::collections::BTreeMap;

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

fn small() -> Options {
    Options { write_buffer_size: 64 << 10, target_file_size: 64 << 10, ..Options::default() }
}

fn contents(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iter().collect::<shamba::Result<_>>().expect("scan")
}

fn load(db: &Db, n: u32) {
    for i in 0..n {
        db.put(key(i), format!("value-{i}")).expect("put");
    }
}

#[test]
fn a_range_delete_is_one_small_record_and_hides_the_range_everywhere() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), small()).expect("open");
    load(&db, 20_000);
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    let before = db.stats();
    db.delete_range(key(1000)..key(19_000)).expect("delete_range");
    let after = db.stats();
    assert!(after.wal_bytes - before.wal_bytes < 100, "{} WAL bytes", after.wal_bytes - before.wal_bytes);
    assert_eq!(after.write_ops - before.write_ops, 1);

    let check = |db: &Db, when: &str| {
        assert_eq!(db.get(key(999)).expect("get").as_deref(), Some(&b"value-999"[..]), "{when}");
        assert_eq!(db.get(key(1000)).expect("get"), None, "{when}");
        assert_eq!(db.get(key(18_999)).expect("get"), None, "{when}");
        assert!(db.get(key(19_000)).expect("get").is_some(), "{when}: the end is excluded");
        let all = contents(db);
        assert_eq!(all.len(), 2000, "{when}");
        let backward: Vec<Vec<u8>> = db.iter().rev().map(|kv| kv.expect("scan").0).collect();
        assert_eq!(backward.len(), 2000, "{when}");
        assert_eq!(backward[999], key(19_000), "{when}");
        assert_eq!(db.range(key(500)..key(19_500)).count(), 1000, "{when}");
    };
    check(&db, "in the memtable");
    db.flush().expect("flush");
    assert_eq!(db.stats().range_tombstones, 1);
    check(&db, "flushed");
    db.close().expect("close");
    let db = Db::open(dir.path(), small()).expect("reopen");
    check(&db, "after a reopen");
}

#[test]
fn newer_writes_inside_the_range_survive_it_and_older_snapshots_see_through_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), small()).expect("open");
    load(&db, 5000);
    db.flush().expect("flush");
    let snap = db.snapshot();
    let mut batch = WriteBatch::new();
    batch.delete_range(key(100)..key(4000)).put(key(200), b"rewritten in the same batch");
    db.write(batch).expect("write");
    db.put(key(300), b"rewritten later").expect("put");
    for db_state in ["memtable", "flushed", "compacted"] {
        match db_state {
            "flushed" => db.flush().expect("flush"),
            "compacted" => db.compact().expect("compact"),
            _ => {}
        }
        assert_eq!(db.get(key(200)).expect("get").as_deref(), Some(&b"rewritten in the same batch"[..]));
        assert_eq!(db.get(key(300)).expect("get").as_deref(), Some(&b"rewritten later"[..]));
        assert_eq!(db.get(key(301)).expect("get"), None);
        assert_eq!(contents(&db).len(), 5000 - 3900 + 2, "{db_state}");
        // The snapshot predates the range delete: it sees every old value.
        assert_eq!(snap.get(key(301)).expect("get").as_deref(), Some(&b"value-301"[..]), "{db_state}");
        assert_eq!(snap.iter().count(), 5000, "{db_state}");
        assert_eq!(snap.iter().rev().count(), 5000, "{db_state}");
    }
    // The snapshot keeps the tombstone (and what it deletes) through the compaction.
    assert_eq!(db.stats().range_tombstones, 1);
    drop(snap);
    db.compact().expect("compact");
    assert_eq!(db.stats().range_tombstones, 0, "collected once no snapshot needs it");
    let entries: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    assert_eq!(entries, 5000 - 3900 + 2, "the deleted versions are gone from the tables");
    assert_eq!(db.get(key(301)).expect("get"), None);
}

#[test]
fn deleting_everything_and_an_unbounded_tail() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), small()).expect("open");
    load(&db, 3000);
    db.delete_range(key(2000)..).expect("tail");
    assert_eq!(contents(&db).len(), 2000);
    db.flush().expect("flush");
    db.delete_range::<&[u8], _>(..).expect("everything");
    assert!(db.iter().next().is_none());
    assert!(db.iter().next_back().is_none());
    db.put(key(5), b"after").expect("put");
    assert_eq!(contents(&db).len(), 1);
    db.compact().expect("compact");
    assert_eq!(contents(&db).len(), 1);
    assert_eq!(db.stats().range_tombstones, 0);
    let entries: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    assert_eq!(entries, 1);
}

#[test]
fn a_range_delete_over_keys_never_written_is_collected_at_the_next_flush() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), small()).expect("open");
    load(&db, 100);
    db.flush().expect("flush");
    db.delete_range(&b"zzz-a"[..]..&b"zzz-b"[..]).expect("delete_range");
    db.flush().expect("flush");
    // It reached the version with the flush; it meets no table, so the next flush drops it.
    db.put(b"another", b"write").expect("put");
    db.flush().expect("flush");
    assert_eq!(db.stats().range_tombstones, 0);
    assert_eq!(contents(&db).len(), 101);
}

/// Keys whose order is their numbers' up to 10^8.
fn wide_key(i: u32) -> Vec<u8> {
    format!("key-{i:08}").into_bytes()
}

/// The measurement, not a CI test: a range delete of 1M keys, its cost, and the
/// cost of gets and scans over the range before and after compaction.
/// `cargo test --release -p shamba --test range_delete -- --ignored --nocapture`
#[test]
#[ignore]
fn measure_a_range_delete_of_a_million_keys() {
    use std::time::Instant;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), Options::default()).expect("open");
    let n = 1_100_000;
    for i in 0..n {
        db.put(wide_key(i), [b'v'; 32]).expect("put");
    }
    db.wait_for_compactions().expect("settle");
    let (wal0, t) = (db.stats().wal_bytes, Instant::now());
    db.delete_range(wide_key(50_000)..wide_key(1_050_000)).expect("delete_range");
    let took = t.elapsed();
    println!(
        "delete_range of 1,000,000 keys: {:.1} us, {} WAL bytes",
        took.as_secs_f64() * 1e6,
        db.stats().wal_bytes - wal0
    );
    let probe = |db: &Db, when: &str| {
        let t = Instant::now();
        for i in (50_000..1_050_000).step_by(1000) {
            assert_eq!(db.get(wide_key(i)).expect("get"), None);
        }
        let get_us = t.elapsed().as_secs_f64() * 1e6 / 1000.0;
        let t = Instant::now();
        let left = db.range(wide_key(40_000)..wide_key(1_060_000)).count();
        let scan_ms = t.elapsed().as_secs_f64() * 1e3;
        let entries: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
        println!("{when}: get of a deleted key {get_us:.2} us; scan over the range {scan_ms:.1} ms ({left} keys left); {entries} entries in tables");
    };
    probe(&db, "before compaction");
    let (written0, t) = (db.stats().compaction_bytes_written, Instant::now());
    db.compact().expect("compact");
    println!(
        "compact: {:.1} s, {} MB written, {} range tombstones left",
        t.elapsed().as_secs_f64(),
        (db.stats().compaction_bytes_written - written0) >> 20,
        db.stats().range_tombstones
    );
    probe(&db, "after compaction");
}
