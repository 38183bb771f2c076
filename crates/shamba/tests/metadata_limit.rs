//! `Options::pinned_metadata_limit`: the index and filter bytes table readers pin stay under
//! the limit, whatever the number of tables; tables past it serve their metadata through
//! the block cache, and every read answers as with everything pinned.

use shamba::{BlockKind, Db, Options, Readable};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value{i:08}").into_bytes()
}

/// Small tables, so a few thousand keys make dozens; no compaction moves them meanwhile.
fn opts(limit: u64) -> Options {
    Options {
        write_buffer_size: 16 << 10,
        target_file_size: 16 << 10,
        level0_compaction_trigger: 1 << 20,
        level0_slowdown_trigger: 1 << 20,
        level0_stop_trigger: 1 << 20,
        pinned_metadata_limit: limit,
        ..Options::default()
    }
}

const N: u32 = 20_000;

fn check_reads(db: &Db) {
    for j in 0..N {
        let i = (j as u64 * 7_919 % N as u64) as u32;
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i)), "key {i}");
        assert_eq!(db.get(format!("absent{i}")).unwrap(), None);
    }
    assert_eq!(db.iter().count(), N as usize, "a full scan sees every key");
}

#[test]
fn pinned_metadata_stays_under_the_limit_and_the_rest_goes_through_the_block_cache() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(u64::MAX)).unwrap();
    for i in 0..N {
        db.put(key(i), value(i)).unwrap();
    }
    db.flush().unwrap();
    let tables = db.files().len() as u64;
    assert!(tables >= 20, "{tables} tables");
    let all = db.stats();
    assert_eq!(all.tables_metadata_in_cache, 0, "no limit: every table pins");
    let everything = all.pinned_table_bytes;
    db.close().unwrap();

    for limit in [everything / 3, everything * 2 / 3, 0] {
        let db = Db::open(dir.path(), opts(limit)).unwrap();
        check_reads(&db);
        let s = db.stats();
        assert_eq!(s.pinned_metadata_limit, limit);
        // One table's index fences may pass it (the properties estimate the rest).
        let one_table = everything / tables;
        assert!(s.pinned_table_bytes <= limit + one_table, "limit {limit}: {} pinned", s.pinned_table_bytes);
        assert!(s.pinned_table_bytes + one_table >= limit, "limit {limit}: room left unused: {s:?}");
        assert!(s.tables_metadata_in_cache > 0 && s.tables_metadata_in_cache < tables || limit == 0);
        let index = &s.cache[BlockKind::Index as usize];
        let filter = &s.cache[BlockKind::Filter as usize];
        assert!(index.bytes_inserted > 0 && filter.bytes_inserted > 0, "the spilled tables' metadata is cached");
        db.close().unwrap();
    }
}

#[test]
fn compacted_tables_give_their_room_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(u64::MAX)).unwrap();
    for i in 0..N {
        db.put(key(i), value(i)).unwrap();
    }
    db.flush().unwrap();
    let everything = db.stats().pinned_table_bytes;
    db.close().unwrap();

    let limit = everything / 2;
    let db = Db::open(dir.path(), Options { level0_compaction_trigger: 4, ..opts(limit) }).unwrap();
    check_reads(&db);
    assert!(db.stats().tables_metadata_in_cache > 0);
    db.compact().unwrap();
    check_reads(&db);
    let s = db.stats();
    let tables = db.files().len() as u64;
    // After the compaction the old readers are gone and their room with them: what the
    // new tables hold is under the limit, and counted once.
    assert!(s.pinned_table_bytes <= limit + everything / tables.max(1), "{s:?}");
    assert!(s.tables_metadata_in_cache <= tables, "{} spilled of {tables}", s.tables_metadata_in_cache);
    db.close().unwrap();
}
