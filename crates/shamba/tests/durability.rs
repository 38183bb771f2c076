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
