//! `multi_get`: answers in the keys' order, one result per key; keys in one data block
//! share its read; the statistics count every key as a lookup.

use shamba::{BlockKind, Db, Error, Options, ReadOptions, Readable};
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

/// A tree with versions of the keys on several levels, range deletes, a snapshot and a
/// memtable: every batch answers as the single gets do, key by key, whether the index
/// blocks are pinned (the batch's index searches then run interleaved, step by step, on
/// their fences) or read through the block cache (searched whole).
#[test]
fn batches_over_every_level_answer_as_single_gets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shape = Options {
        write_buffer_size: 64 << 10,
        target_file_size: 64 << 10,
        max_bytes_for_level_base: 256 << 10,
        level0_compaction_trigger: 2,
        size_ratio: 4,
        ..Options::default()
    };
    let n = 12_000u32;
    let db = Db::open(dir.path(), shape.clone()).expect("open");
    for i in 0..n {
        db.put(key(i), value(i)).expect("put");
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    for i in (0..n).step_by(3) {
        db.put(key(i), format!("second-{i}")).expect("put");
    }
    for i in (0..n).step_by(7) {
        db.delete(key(i)).expect("delete");
    }
    db.delete_range(key(4000)..key(4500)).expect("delete_range");
    db.flush().expect("flush");
    let snapshot = db.snapshot();
    for i in (0..n).step_by(11) {
        db.put(key(i), format!("third-{i}")).expect("put");
    }
    db.delete_range(key(9000)..key(9100)).expect("delete_range");
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    // And some only in the memtable.
    for i in (0..n).step_by(13) {
        db.put(key(i), format!("fourth-{i}")).expect("put");
    }
    let levels: std::collections::BTreeSet<usize> = db.files().iter().map(|f| f.level).collect();
    assert!(levels.len() >= 2, "versions on several levels: {levels:?}");

    // Present, overwritten, deleted, range-deleted and absent keys (past the end too), in
    // batches with repeats.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let batches: Vec<Vec<Vec<u8>>> = (0..40)
        .map(|_| {
            (0..64)
                .map(|_| match next() % 10 {
                    0 => format!("key-{:06}-absent", next() % u64::from(n)).into_bytes(),
                    1 => key(n + (next() % 1000) as u32),
                    2 => key(4000 + (next() % 600) as u32),
                    _ => key((next() % u64::from(n)) as u32),
                })
                .collect()
        })
        .collect();
    let check = |db: &Db, snapshot: &shamba::Snapshot| {
        for keys in &batches {
            let want: Vec<_> = keys.iter().map(|k| db.get(k).expect("get")).collect();
            let got: Vec<_> = db.multi_get(keys).into_iter().map(|r| r.expect("multi_get")).collect();
            assert_eq!(got, want);
            let want: Vec<_> = keys.iter().map(|k| snapshot.get(k).expect("snapshot get")).collect();
            let got: Vec<_> = snapshot.multi_get(keys).into_iter().map(|r| r.expect("snapshot multi_get")).collect();
            assert_eq!(got, want);
        }
    };
    check(&db, &snapshot);
    // Spot checks of the answers themselves, not only their agreement.
    let sample = [key(0), key(3), key(7), key(11), key(4100), key(9050), key(1), key(n + 5)];
    let got: Vec<_> = db.multi_get(&sample).into_iter().map(|r| r.expect("multi_get")).collect();
    assert_eq!(
        got,
        [
            Some(b"fourth-0".to_vec()),
            Some(b"second-3".to_vec()),
            None,
            Some(b"third-11".to_vec()),
            None,
            None,
            Some(value(1)),
            None
        ]
    );
    let old: Vec<_> = snapshot.multi_get(&sample).into_iter().map(|r| r.expect("snapshot")).collect();
    assert_eq!(
        old,
        [None, Some(b"second-3".to_vec()), None, Some(value(11)), None, Some(value(9050)), Some(value(1)), None]
    );
    drop(snapshot);
    db.close().expect("close");

    // Index blocks through the block cache: the batch searches them whole.
    let cached = Options { cache_index_and_filter_blocks: true, ..shape };
    let db = Db::open(dir.path(), cached).expect("reopen");
    let snapshot = db.snapshot();
    check(&db, &snapshot);
}

/// With `O_DIRECT` the round's block reads go to the device in flight together: the
/// answers and the count of reads are those of the same batch through the page cache.
#[test]
fn direct_reads_in_flight_together_answer_as_buffered_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    one_table(dir.path(), 3000).close().expect("close");
    let keys: Vec<Vec<u8>> = (0..40).map(|i| key(i * 73 % 3000)).chain([b"key-000001-absent".to_vec()]).collect();
    let mut answers = Vec::new();
    for direct in [false, true] {
        let mut options = Options::default();
        if direct {
            options.storage = std::sync::Arc::new(shamba::storage::DirectReadFsStorage);
        }
        let db = match Db::open(dir.path(), options) {
            Ok(db) => db,
            // A file system that refuses O_DIRECT (tmpfs): nothing to compare.
            Err(_) if direct => return,
            Err(e) => panic!("{e}"),
        };
        let before = data_reads(&db);
        let got: Vec<_> = db.multi_get_opt(&keys, &uncached()).into_iter().map(|r| r.expect("multi_get")).collect();
        answers.push((got, data_reads(&db) - before));
        db.close().expect("close");
    }
    let (buffered, direct) = (&answers[0], &answers[1]);
    assert_eq!(buffered, direct);
    assert!(buffered.1 >= 10, "the keys span many blocks: {} reads", buffered.1);
    let expected: Vec<_> = (0..40).map(|i| Some(value(i * 73 % 3000))).chain([None]).collect();
    assert_eq!(buffered.0, expected);
}

/// A tree of several levels (some keys overwritten, some deleted, the newest in the
/// memtable), and lookups of found, deleted, absent and memtable keys.
fn layered(dir: &Path) -> (Db, Vec<Vec<u8>>) {
    // Small levels, so that the settled tree keeps several of them whatever compaction did.
    let options = Options {
        write_buffer_size: 64 << 10,
        target_file_size: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        ..Options::default()
    };
    let db = Db::open(dir, options).expect("open");
    for round in 0..3u32 {
        for i in (round..4000).step_by(3) {
            db.put(key(i), value(i + round)).expect("put");
        }
        db.flush().expect("flush");
    }
    for i in (0..4000).step_by(7) {
        db.delete(key(i)).expect("delete");
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");
    for i in (0..4000).step_by(11) {
        db.put(key(i), value(i)).expect("put");
    }
    let mut keys: Vec<Vec<u8>> = (0..4000).step_by(13).map(key).collect();
    keys.extend((0..200).map(|i| format!("key-{i:06}-absent").into_bytes()));
    (db, keys)
}

#[test]
fn a_batch_counts_in_the_statistics_what_its_keys_count_as_single_gets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, keys) = layered(dir.path());
    let files = db.files().len();

    let s0 = db.stats();
    let singles: Vec<_> = keys.iter().map(|k| db.get(k).expect("get")).collect();
    let s1 = db.stats();
    let mut batched = Vec::new();
    for chunk in keys.chunks(32) {
        batched.extend(db.multi_get(chunk).into_iter().map(|r| r.expect("multi_get")));
    }
    let s2 = db.stats();
    assert_eq!(db.files().len(), files, "the tree did not change between the two passes");
    assert_eq!(batched, singles, "the same answers");

    assert_eq!(s2.gets - s1.gets, s1.gets - s0.gets);
    assert!(s1.memtable_hits > s0.memtable_hits, "some keys answered by the memtable");
    assert_eq!(s2.memtable_hits - s1.memtable_hits, s1.memtable_hits - s0.memtable_hits);
    let delta = |after: &[shamba::LevelLookupStats], before: &[shamba::LevelLookupStats]| {
        after
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let b = before.get(i).cloned().unwrap_or_default();
                (
                    a.table_lookups - b.table_lookups,
                    a.filter_parts_probed - b.filter_parts_probed,
                    a.filter_negatives - b.filter_negatives,
                    a.false_positives - b.false_positives,
                    a.hits - b.hits,
                )
            })
            .collect::<Vec<_>>()
    };
    let singles = delta(&s1.lookup_levels, &s0.lookup_levels);
    let batch = delta(&s2.lookup_levels, &s1.lookup_levels);
    assert_eq!(batch, singles, "per level: visits, parts probed, negatives, false positives, hits");
    assert!(singles.iter().filter(|d| d.0 > 0).count() >= 2, "lookups visited several levels: {singles:?}");
}
