//! Fault injection: a full disk, failing syncs and failing reads give errors, never
//! panics, and never lose an acknowledged write.

use shamba::lab::{FaultPlan, FaultyStorage};
use shamba::storage::FsStorage;
use shamba::{Db, Error, Options, WriteBatch, WriteOptions};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

fn faulty(plan: &Arc<FaultPlan>) -> Options {
    Options {
        storage: Arc::new(FaultyStorage::new(FsStorage, plan.clone())),
        write_buffer_size: 16 << 10,
        target_file_size: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        level0_compaction_trigger: 2,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

/// Write until the storage fails; returns how many writes were acknowledged.
fn write_until_failure(db: &Db, sync: bool, limit: u32) -> u32 {
    let wo = WriteOptions { sync, ..WriteOptions::default() };
    for i in 0..limit {
        let mut b = WriteBatch::new();
        b.put(key(i), vec![b'v'; 100]);
        match db.write_opt(b, &wo) {
            Ok(()) => {}
            Err(Error::Io(_) | Error::Closed(_)) => return i,
            Err(e) => panic!("unexpected error kind: {e}"),
        }
    }
    limit
}

fn assert_recovered(dir: &std::path::Path, acknowledged: u32) {
    let db = Db::open(dir, Options::default()).expect("reopen on a healthy disk");
    for i in 0..acknowledged {
        assert!(db.get(key(i)).expect("get").is_some(), "acknowledged write {i} lost");
    }
}

#[test]
fn a_full_disk_fails_writes_and_keeps_every_acknowledged_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let acknowledged = {
        let db = Db::open(dir.path(), faulty(&plan)).expect("open");
        write_until_failure(&db, false, 500);
        // The disk fills up: a few hundred KB more and nothing fits.
        plan.write_budget.store(400 << 10, SeqCst);
        let n = write_until_failure(&db, true, 50_000);
        assert!(n < 50_000, "the full disk was never noticed");
        // Further writes keep failing cleanly.
        assert!(db.put(b"after", b"full").is_err());
        let _ = db.close();
        n
    };
    assert_recovered(dir.path(), acknowledged);
}

#[test]
fn a_failing_sync_is_reported_and_makes_the_database_read_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), faulty(&plan)).expect("open");
    let acknowledged = write_until_failure(&db, true, 200);
    assert_eq!(acknowledged, 200);
    plan.fail_syncs.store(true, SeqCst);
    let mut b = WriteBatch::new();
    b.put(b"unsynced", b"x");
    let err = db.write_opt(b, &WriteOptions { sync: true, ..WriteOptions::default() }).expect_err("sync failed");
    assert!(matches!(err, Error::Io(_)), "{err}");
    // Reads still work; writes are refused until the database is reopened.
    assert!(db.get(key(3)).expect("read after failure").is_some());
    assert!(matches!(db.put(b"k", b"v"), Err(Error::Closed(_))));
    drop(db);
    plan.fail_syncs.store(false, SeqCst);
    assert_recovered(dir.path(), acknowledged);
}

#[test]
fn failing_reads_are_errors_not_panics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), faulty(&plan)).expect("open");
    write_until_failure(&db, false, 3000);
    db.flush().expect("flush");
    // Drop cached blocks by reopening, then fail every read.
    db.close().expect("close");
    let db = Db::open(dir.path(), Options { cache_index_and_filter_blocks: true, ..faulty(&plan) }).expect("open");
    plan.fail_reads.store(true, SeqCst);
    let mut errors = 0;
    for i in 0..100 {
        if db.get(key(i)).is_err() {
            errors += 1;
        }
    }
    assert!(errors > 0, "reads from a failing device should fail");
    assert!(db.iter().any(|r| r.is_err()), "a scan over a failing device yields an error");
    plan.fail_reads.store(false, SeqCst);
    assert!(db.get(key(5)).expect("healthy again").is_some());
}
