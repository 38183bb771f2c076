//! What a power loss keeps: writes acknowledged without `sync` are made durable by a later
//! `Db::sync_wal`, and by a later synced write even across a memtable switch.

use shamba::lab::{CrashKeeps, SimFault, SimStorage};
use shamba::{Db, Options, Readable, WriteBatch, WriteOptions};
use std::sync::Arc;

fn options(disk: &SimStorage) -> Options {
    Options { storage: Arc::new(disk.clone()), write_buffer_size: 4096, ..Options::default() }
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:04}").into_bytes()
}

/// Stop the machine now, drop the database (its close cannot write), lose power, reopen.
fn power_loss(disk: &SimStorage, db: Db) -> Db {
    disk.fail_at(disk.ops(), SimFault::Crash);
    drop(db);
    disk.crash(CrashKeeps::Synced);
    Db::open("/db", options(disk)).expect("reopen")
}

#[test]
fn sync_wal_makes_unsynced_writes_survive_a_power_loss() {
    let disk = SimStorage::new();
    let db = Db::open("/db", Options { write_buffer_size: 1 << 20, ..options(&disk) }).expect("open");
    for i in 0..20 {
        db.put(key(i), b"v").expect("put");
    }
    db.sync_wal().expect("sync_wal");
    db.put(key(100), b"after the sync").expect("put");
    let db = power_loss(&disk, db);
    for i in 0..20 {
        assert!(db.get(key(i)).expect("get").is_some(), "key {i} was acknowledged before sync_wal");
    }
    // Not synced: a power loss may take it (here it does, the disk keeping only synced bytes).
    assert_eq!(db.get(key(100)).expect("get"), None);
}

#[test]
fn a_synced_write_keeps_the_unsynced_ones_before_it_across_a_memtable_switch() {
    let disk = SimStorage::new();
    let db = Db::open("/db", options(&disk)).expect("open");
    // Unsynced writes fill more than one memtable: the logs switch under them.
    for i in 0..200 {
        db.put(key(i), vec![b'v'; 64]).expect("put");
    }
    let mut b = WriteBatch::new();
    b.put(b"synced", b"last");
    db.write_opt(b, &WriteOptions { sync: true, ..WriteOptions::default() }).expect("synced write");
    let db = power_loss(&disk, db);
    assert!(db.get(b"synced").expect("get").is_some());
    for i in 0..200 {
        assert!(db.get(key(i)).expect("get").is_some(), "key {i}, acknowledged before a synced write, was lost");
    }
}

/// A crash during the open that replays a WAL holding range deletes (after a keyspace's
/// recovered tables are in the manifest, before its new log number is) replays that WAL
/// again at the next open, range deletes included: the next open works and reads them once.
#[test]
fn a_crash_while_the_open_replays_range_deletes_is_recovered_from() {
    let opts = |disk: &SimStorage| Options { write_buffer_size: 1 << 20, ..options(disk) };
    // A database whose WAL holds puts and range deletes in two keyspaces, closed unflushed.
    let setup = || {
        let disk = SimStorage::new();
        let db = Db::open("/db", opts(&disk)).expect("open");
        let ks = db.keyspace("ks").expect("keyspace");
        let mut batch = WriteBatch::new();
        for i in 0..40 {
            batch.put(key(i), b"v").put_in(&ks, key(i), b"w");
        }
        db.write(batch).expect("write");
        let mut batch = WriteBatch::new();
        batch.delete_range(key(10)..key(20)).delete_range_in(&ks, key(5)..key(30));
        db.write_opt(batch, &WriteOptions { sync: true, ..WriteOptions::default() }).expect("range deletes");
        db.close().expect("close");
        disk
    };
    let check = |db: &Db| {
        let ks = db.keyspace("ks").expect("keyspace");
        assert_eq!(db.iter().count(), 30);
        assert_eq!(ks.iter().count(), 15);
        assert_eq!(db.get(key(15)).expect("get"), None);
        assert_eq!(ks.get(key(29)).expect("get"), None);
    };
    let disk = setup();
    let start = disk.ops();
    check(&Db::open("/db", opts(&disk)).expect("reopen"));
    let ops = disk.ops() - start;
    assert!(ops >= 4, "the reopen did only {ops} operations");
    for n in 0..ops {
        for keeps in [CrashKeeps::Synced, CrashKeeps::Written] {
            let disk = setup();
            disk.fail_at(disk.ops() + n, SimFault::Crash);
            drop(Db::open("/db", opts(&disk)));
            disk.crash(keeps);
            match Db::open("/db", opts(&disk)) {
                Ok(db) => check(&db),
                Err(e) => panic!("a crash at operation {n} of the replaying open, keeping {keeps:?}: {e}"),
            }
        }
    }
}
