//! Leaving read-only: a full disk is resumed from by itself once it has room, other write
//! errors on `Db::resume()`, and a failed sync never (until a reopen).

use shamba::lab::{FaultPlan, FaultyStorage};
use shamba::storage::FsStorage;
use shamba::{Db, Error, Options, Readable, WriteBatch, WriteOptions};
use std::io::ErrorKind;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn faulty(plan: &Arc<FaultPlan>, auto_resume: Option<Duration>) -> Options {
    Options {
        storage: Arc::new(FaultyStorage::new(FsStorage, plan.clone())),
        write_buffer_size: 16 << 10,
        target_file_size: 16 << 10,
        auto_resume_interval: auto_resume,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

fn put_range(db: &Db, keys: std::ops::Range<u32>) {
    for i in keys {
        db.put(key(i), format!("value-{i}")).expect("put");
    }
}

fn assert_all_present(db: &Db, keys: std::ops::Range<u32>) {
    for i in keys {
        assert_eq!(db.get(key(i)).expect("get"), Some(format!("value-{i}").into_bytes()), "key {i}");
    }
}

fn put_synced(db: &Db, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> shamba::Result<()> {
    let mut b = WriteBatch::new();
    b.put(key, value);
    db.write_opt(b, &WriteOptions { sync: true, ..WriteOptions::default() })
}

fn read_only_cause(e: &Error) -> &Error {
    match e {
        Error::ReadOnly { cause } => cause,
        other => panic!("expected ReadOnly, got {other:?}"),
    }
}

/// Close `db`, then the table files in its directory and the tables its manifest names
/// (read by an open that starts no compaction).
fn tables_on_disk_and_live(dir: &std::path::Path, db: Db) -> (Vec<u64>, Vec<u64>) {
    db.close().expect("close");
    let mut on_disk: Vec<u64> = std::fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".sst")?.parse().ok())
        .collect();
    on_disk.sort_unstable();
    let quiet = Options {
        level0_compaction_trigger: 1000,
        level0_slowdown_trigger: 1000,
        level0_stop_trigger: 1000,
        ..Options::default()
    };
    let db = Db::open(dir, quiet).expect("reopen");
    let mut live: Vec<u64> = db.files().iter().map(|f| f.number).collect();
    live.sort_unstable();
    db.close().expect("close");
    (on_disk, live)
}

#[test]
fn a_full_disk_is_resumed_from_by_itself_once_it_has_room() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), faulty(&plan, Some(Duration::from_millis(10)))).expect("open");
    put_range(&db, 0..200);
    plan.fail_table_writes.store(true, SeqCst);
    let e = db.flush().expect_err("the flush met a full disk");
    assert_eq!(read_only_cause(&e).io_kind(), Some(ErrorKind::StorageFull), "{e}");
    // While the disk stays full the database stays read-only, retries and all.
    std::thread::sleep(Duration::from_millis(100));
    let e = db.put(b"k", b"v").expect_err("still full");
    assert!(e.is_read_only(), "{e}");

    plan.fail_table_writes.store(false, SeqCst);
    let deadline = Instant::now() + Duration::from_secs(20);
    while db.put(b"after", b"room").is_err() {
        assert!(Instant::now() < deadline, "writes never resumed after the disk had room");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(db.stats().resumes >= 1);
    put_range(&db, 200..400);
    db.flush().expect("flush after resuming");
    assert_all_present(&db, 0..400);
    // The failed flush's table is gone; only live tables are on disk.
    let (on_disk, live) = tables_on_disk_and_live(dir.path(), db);
    assert_eq!(on_disk, live);

    let db = Db::open(dir.path(), Options::default()).expect("reopen");
    assert_all_present(&db, 0..400);
    assert_eq!(db.get(b"after").expect("get"), Some(b"room".to_vec()));
}

#[test]
fn a_failed_wal_write_is_resumed_from_on_request_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), faulty(&plan, None)).expect("open");
    put_range(&db, 0..100);
    plan.fail_writes.store(true, SeqCst);
    let e = db.put(b"lost", b"x").expect_err("the WAL write failed");
    assert_eq!(e.io_kind(), Some(ErrorKind::StorageFull), "{e}");
    plan.fail_writes.store(false, SeqCst);
    // With no automatic retry, the database waits to be told.
    std::thread::sleep(Duration::from_millis(50));
    assert!(db.put(b"k", b"v").expect_err("read-only until resumed").is_read_only());

    db.resume().expect("resume");
    assert_eq!(db.stats().resumes, 1);
    db.resume().expect("resuming a writable database is a no-op");
    assert_eq!(db.stats().resumes, 1);
    put_range(&db, 100..300);
    db.put(b"lost", b"rewritten").expect("put");
    db.flush().expect("flush");
    assert_all_present(&db, 0..300);
    let (on_disk, live) = tables_on_disk_and_live(dir.path(), db);
    assert_eq!(on_disk, live);

    let db = Db::open(dir.path(), Options::default()).expect("reopen");
    assert_all_present(&db, 0..300);
    assert_eq!(db.get(b"lost").expect("get"), Some(b"rewritten".to_vec()));
}

#[test]
fn a_failed_manifest_write_is_resumed_from_with_a_fresh_manifest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), faulty(&plan, None)).expect("open");
    put_range(&db, 0..200);
    // Tables and the WAL take writes; the manifest edit that would install the flush does
    // not.
    plan.fail_manifest_writes.store(true, SeqCst);
    let e = db.flush().expect_err("the manifest write failed");
    assert!(e.is_read_only(), "{e}");
    plan.fail_manifest_writes.store(false, SeqCst);
    db.resume().expect("resume");
    put_range(&db, 200..300);
    db.flush().expect("flush after resuming");
    assert_all_present(&db, 0..300);
    let (on_disk, live) = tables_on_disk_and_live(dir.path(), db);
    assert_eq!(on_disk, live, "the output of the failed edit was deleted once a fresh manifest was current");
    let db = Db::open(dir.path(), Options::default()).expect("reopen");
    assert_all_present(&db, 0..300);
}

#[test]
fn a_failed_sync_keeps_the_database_read_only_until_it_is_reopened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), faulty(&plan, Some(Duration::from_millis(5)))).expect("open");
    for i in 0..100 {
        put_synced(&db, key(i), format!("value-{i}")).expect("put");
    }
    plan.fail_syncs.store(true, SeqCst);
    put_synced(&db, b"unsynced", b"x").expect_err("the sync failed");
    plan.fail_syncs.store(false, SeqCst);
    // Syncs work again, but a success now would not vouch for what the failed one lost:
    // neither the background thread nor `resume` retries.
    std::thread::sleep(Duration::from_millis(100));
    let e = db.put(b"k", b"v").expect_err("read-only");
    assert!(read_only_cause(&e).io_kind().is_some(), "{e}");
    let e = db.resume().expect_err("no resuming after a failed sync");
    assert!(e.is_read_only(), "{e}");
    assert_eq!(db.stats().resumes, 0);
    assert_all_present(&db, 0..100);
    db.close().expect("close does not retry the failed sync");

    let db = Db::open(dir.path(), Options::default()).expect("reopen");
    assert_all_present(&db, 0..100);
    db.put(b"k", b"v").expect("writable after a reopen");
}
