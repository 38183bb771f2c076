//! `multi_get`: answers in the keys' order, one result per key; keys in one data block
//! share its read; the statistics count every key as a lookup.

use shamba::{BlockKind, Db, Error, Options, ReadOptions};
use std::fs;
use std::path::{Path, PathBuf};

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i}").into_bytes()
}

/// Every data block read goes to the device (none is kept in the block cache), so the I/O
/// counters count each read.
fn uncached() -> ReadOptions {
    ReadOptions { fill_cache: false, ..ReadOptions::default() }
}

fn ssts(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    v.sort();
    v
}

/// A database of one table holding keys `0..n` (values of a dozen bytes: in 4 KiB blocks,
/// about 150 keys share one).
fn one_table(dir: &Path, n: u32) -> Db {
    let db = Db::open(dir, Options::default()).expect("open");
    for i in 0..n {
        db.put(key(i), value(i)).expect("put");
    }
    db.flush().expect("flush");
    db
}

fn data_reads(db: &Db) -> u64 {
    db.stats().io.reads_of(BlockKind::Data)
}

#[test]
fn keys_in_one_data_block_share_one_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = one_table(dir.path(), 20);
    let keys: Vec<Vec<u8>> = (0..20).map(key).collect();

    let before = data_reads(&db);
    for k in &keys {
        assert!(db.get_opt(k, &uncached()).expect("get").is_some());
    }
    assert_eq!(data_reads(&db) - before, 20, "one read per single get");

    let before = (data_reads(&db), db.stats().gets, db.stats().table_hits);
    let got = db.multi_get_opt(&keys, &uncached());
    let after = (data_reads(&db), db.stats().gets, db.stats().table_hits);
    let values: Vec<_> = got.into_iter().map(|r| r.expect("multi_get")).collect();
    assert_eq!(values, (0..20).map(|i| Some(value(i))).collect::<Vec<_>>());
    assert_eq!(after.0 - before.0, 1, "20 keys of one block: one read");
    assert_eq!(after.1 - before.1, 20, "every key counts as a get");
    assert_eq!(after.2 - before.2, 20, "and as a table hit");
}

#[test]
fn keys_spread_over_blocks_read_each_block_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = one_table(dir.path(), 3000);
    let blocks = db.files()[0].data_bytes / 4096;
    assert!(blocks >= 10, "the table needs many blocks, has about {blocks}");
    // Two keys near each end of the table, each twice, and an absent key between them.
    let keys = [key(0), key(1), key(2999), key(2998), key(0), b"key-000001-absent".to_vec(), key(2999)];
    let before = data_reads(&db);
    let got: Vec<_> = db.multi_get_opt(&keys, &uncached()).into_iter().map(|r| r.expect("multi_get")).collect();
    assert_eq!(
        got,
        [Some(value(0)), Some(value(1)), Some(value(2999)), Some(value(2998)), Some(value(0)), None, Some(value(2999))]
    );
    // The absent key's block is the first one, unless its filter says no: then no read.
    assert_eq!(data_reads(&db) - before, 2, "first block and last block, once each");
}

#[test]
fn memtables_deletes_snapshots_and_absent_keys_answer_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = one_table(dir.path(), 100);
    let snap = db.snapshot();
    db.put(key(5), b"new").expect("put");
    db.delete(key(6)).expect("delete");
    db.put(key(500), b"only in the memtable").expect("put");
    let keys = [key(500), key(5), key(6), key(7), key(1000), key(5)];
    let got: Vec<_> = db.multi_get(&keys).into_iter().map(|r| r.expect("multi_get")).collect();
    assert_eq!(
        got,
        [
            Some(b"only in the memtable".to_vec()),
            Some(b"new".to_vec()),
            None,
            Some(value(7)),
            None,
            Some(b"new".to_vec())
        ]
    );
    let old: Vec<_> = snap.multi_get(&keys).into_iter().map(|r| r.expect("snapshot multi_get")).collect();
    assert_eq!(old, [None, Some(value(5)), Some(value(6)), Some(value(7)), None, Some(value(5))]);
    // The same after a flush moved the new versions into a table above the old ones.
    db.flush().expect("flush");
    let again: Vec<_> = db.multi_get(&keys).into_iter().map(|r| r.expect("multi_get")).collect();
    assert_eq!(again, got);
    assert_eq!(snap.multi_get(&keys).into_iter().map(|r| r.expect("snapshot")).collect::<Vec<_>>(), old);
    assert!(db.multi_get::<&[u8]>(&[]).is_empty());
}

#[test]
fn a_bad_key_or_a_damaged_block_fails_only_its_own_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let db = Db::open(dir.path(), Options::default()).expect("open");
        for i in 0..3000 {
            db.put(key(i), value(i)).expect("put");
        }
        db.flush().expect("flush");
        db.close().expect("close");
    }
    // Damage the table's first data block (it starts the file).
    let table = ssts(dir.path()).remove(0);
    let mut bytes = fs::read(&table).expect("read");
    bytes[20] ^= 0x5a;
    fs::write(&table, bytes).expect("write");

    let db = Db::open(dir.path(), Options::default()).expect("reopen");
    let too_long = vec![b'k'; Options::default().max_key_size + 1];
    let keys = [key(0), key(2999), too_long, key(1)];
    let got = db.multi_get(&keys);
    assert!(matches!(&got[0], Err(e) if e.is_corruption()), "{:?}", got[0]);
    assert_eq!(got[1].as_ref().expect("a key of an intact block"), &Some(value(2999)));
    assert!(matches!(&got[2], Err(Error::InvalidArgument(_))), "{:?}", got[2]);
    assert!(matches!(&got[3], Err(e) if e.is_corruption()), "{:?}", got[3]);

    let handle = db.clone();
    db.close().expect("close");
    assert!(handle.multi_get(&[key(1), key(2)]).iter().all(|r| matches!(r, Err(Error::Closed))));
}
