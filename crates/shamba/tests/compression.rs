//! Compression per level: every table records the compression of the level it was
//! written to (`Options::compression_per_level`, `Options::bottommost_compression`), and
//! what it holds reads back whatever that was.

use shamba::lab::compact_level;
use shamba::sst::dump_table;
use shamba::storage::FsStorage;
use shamba::{Compression, Db, Options, Readable};
use std::path::Path;

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:08}").into_bytes()
}

/// Compressible: a counter, then a run of one byte.
fn value(i: u32) -> Vec<u8> {
    let mut v = format!("value {i} ").into_bytes();
    v.resize(100, b'a' + (i % 26) as u8);
    v
}

/// The compression each live table's properties record, by level: `(level, name)`.
fn compressions(db: &Db, dir: &Path) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = db
        .files()
        .iter()
        .map(|f| {
            let dump = dump_table(&FsStorage, &dir.join(format!("{:06}.sst", f.number)), 0).expect("dump");
            let name = dump
                .lines()
                .find_map(|l| l.split("compression ").nth(1))
                .expect("a compression line")
                .trim()
                .to_string();
            (f.level, name)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn load(db: &Db, keys: std::ops::Range<u32>) {
    for i in keys {
        db.put(key(i), value(i)).expect("put");
    }
}

fn check_all(db: &Db, n: u32) {
    for i in 0..n {
        assert_eq!(db.get(key(i)).expect("get"), Some(value(i)), "key {i}");
    }
}

#[test]
fn each_level_gets_its_compression_and_the_bottom_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options {
        num_levels: 4,
        // Keep every move by hand: no background compaction picks a level on its own.
        level0_compaction_trigger: 100,
        level0_slowdown_trigger: 100,
        level0_stop_trigger: 100,
        max_bytes_for_level_base: 1 << 30,
        compression_per_level: vec![Compression::None, Compression::Lz4],
        bottommost_compression: Some(Compression::zstd()),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).expect("open");
    load(&db, 0..2000);
    db.flush().expect("flush");
    assert_eq!(compressions(&db, dir.path()), [(0, "none".to_string())], "a flush never writes the bottom");

    // Into an empty L1: nothing lies below it, so it is the bottom.
    compact_level(&db, 0).expect("L0 into L1");
    assert_eq!(compressions(&db, dir.path()), [(1, "zstd".to_string())]);
    compact_level(&db, 1).expect("L1 into L2");
    assert_eq!(compressions(&db, dir.path()), [(2, "zstd".to_string())]);

    // L2 holds data now: L1 is no longer the bottom, and gets its level's compression.
    load(&db, 2000..4000);
    compact_level(&db, 0).expect("L0 into L1");
    assert_eq!(compressions(&db, dir.path()), [(1, "lz4".to_string()), (2, "zstd".to_string())]);
    // Level 3 is past the per-level list: it would take its last entry, but is the bottom.
    compact_level(&db, 1).expect("L1 into L2");
    compact_level(&db, 2).expect("L2 into L3");
    assert_eq!(compressions(&db, dir.path()), [(3, "zstd".to_string())]);
    check_all(&db, 4000);

    // Every kind reads back after a reopen, from disk rather than the block cache.
    db.close().expect("close");
    let db = Db::open(dir.path(), Options::default()).expect("reopen without compression");
    check_all(&db, 4000);
}

#[test]
fn compressed_tables_are_smaller_and_zstd_smallest() {
    let mut sizes = Vec::new();
    for compression in [Compression::None, Compression::Lz4, Compression::zstd()] {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(dir.path(), Options { compression, ..Options::default() }).expect("open");
        load(&db, 0..3000);
        db.flush().expect("flush");
        check_all(&db, 3000);
        sizes.push(db.files().iter().map(|f| f.size).sum::<u64>());
    }
    assert!(sizes[1] < sizes[0] * 3 / 4, "lz4 {} bytes, none {}", sizes[1], sizes[0]);
    assert!(sizes[2] < sizes[1], "zstd {} bytes, lz4 {}", sizes[2], sizes[1]);
}
