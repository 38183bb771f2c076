//! `Db::verify` and `Db::verify_dir`: a sound database checks clean through flushes and
//! compactions; each kind of damage is found and named (file, place, what was expected and
//! found), and orphans are reported apart from damage.

use shamba::{Db, Options, Problem, ProblemKind, Readable, VerifyReport};
use std::fs;
use std::path::{Path, PathBuf};

fn tiny() -> Options {
    Options {
        write_buffer_size: 8 << 10,
        target_file_size: 8 << 10,
        max_bytes_for_level_base: 32 << 10,
        level0_compaction_trigger: 2,
        size_ratio: 3,
        block_size: 512,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

fn ssts(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    v.sort();
    v
}

/// Small blocks, and a memtable that holds every test's writes.
fn small() -> Options {
    Options { block_size: 512, ..Options::default() }
}

/// A closed database of one table holding `n` keys; its path.
fn one_table(dir: &Path, n: u32) -> PathBuf {
    let db = Db::open(dir, small()).expect("open");
    for i in 0..n {
        db.put(key(i), format!("value-{i}")).expect("put");
    }
    db.flush().expect("flush");
    db.close().expect("close");
    let tables = ssts(dir);
    assert_eq!(tables.len(), 1, "{tables:?}");
    tables[0].clone()
}

/// The footer's handles: (metaindex, index, properties, filter index) as (offset, size).
fn footer(bytes: &[u8]) -> [(u64, u64); 4] {
    let f = &bytes[bytes.len() - 80..];
    let u = |at: usize| u64::from_le_bytes(f[at..at + 8].try_into().expect("8 bytes"));
    [(u(0), u(8)), (u(16), u(24)), (u(32), u(40)), (u(48), u(56))]
}

fn flip(path: &Path, at: usize) {
    let mut bytes = fs::read(path).expect("read");
    bytes[at] ^= 0x10;
    fs::write(path, bytes).expect("write");
}

/// The one problem of `report`, which must be in `file`.
fn the_problem<'r>(report: &'r VerifyReport, file: &Path) -> &'r Problem {
    assert_eq!(report.problems().len(), 1, "{report}");
    let p = &report.problems()[0];
    assert_eq!(p.file, file, "{report}");
    assert!(!report.is_ok());
    p
}

#[test]
fn a_sound_database_verifies_clean_through_flushes_and_compactions() {
    for partitioned in [false, true] {
        let dir = tempfile::tempdir().expect("tempdir");
        let opts = Options { partition_index_and_filters: partitioned, metadata_partition_size: 256, ..tiny() };
        let db = Db::open(dir.path(), opts.clone()).expect("open");
        for round in 0..3u32 {
            for i in 0..3000 {
                let i = (i * 7919 + round * 13) % 4000;
                db.put(key(i), format!("value-{i}-{round}")).expect("put");
                if i % 17 == 0 {
                    db.delete(key(i + 1)).expect("delete");
                }
            }
            db.wait_for_compactions().expect("compactions");
        }
        for i in 0..200 {
            db.put(key(i), "fresh").expect("put");
        }
        // Settled, so the version stays as `files` saw it (one L0 table is under the trigger).
        db.wait_for_compactions().expect("compactions");
        let files = db.files();
        let levels: std::collections::BTreeSet<usize> = files.iter().map(|f| f.level).collect();
        assert!(levels.len() >= 2, "several levels: {levels:?}");
        let report = db.verify().expect("verify");
        assert!(report.is_ok(), "{report}");
        assert!(report.orphans().is_empty(), "{report}");
        assert_eq!(report.tables, files.len() as u64);
        assert_eq!(report.keys, files.iter().map(|f| f.entries).sum::<u64>());
        assert_eq!(report.bytes, files.iter().map(|f| f.size).sum::<u64>() + wal_bytes(dir.path()));
        assert!(report.blocks > 5 * report.tables, "{report}");
        db.close().expect("close");

        let offline = Db::verify_dir(dir.path(), opts).expect("verify_dir");
        assert!(offline.is_ok(), "{offline}");
        assert_eq!(offline.tables, report.tables);
        assert_eq!(offline.keys, report.keys);
    }
}

fn wal_bytes(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| fs::metadata(p).expect("metadata").len())
        .sum()
}

#[test]
fn a_flipped_byte_is_named_by_file_block_and_offset_in_data_index_filter_and_footer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let table = one_table(dir.path(), 2000);
    let original = fs::read(&table).expect("read");
    let len = original.len();
    let [_, index, _, filter_index] = footer(&original);
    let cases = [
        ("data block 0", 3, Some(0), ProblemKind::Checksum),
        ("index block", index.0 as usize + 2, Some(index.0), ProblemKind::Checksum),
        // The last filter part ends where the filter index starts (its 5-byte trailer last).
        ("filter part", filter_index.0 as usize - 8, None, ProblemKind::Checksum),
        ("footer", len - 30, Some(len as u64 - 80), ProblemKind::Checksum),
        ("footer", len - 3, Some(len as u64 - 80), ProblemKind::Malformed),
    ];
    for (location, at, offset, kind) in cases {
        fs::write(&table, &original).expect("restore");
        flip(&table, at);
        let report = Db::verify_dir(dir.path(), small()).expect("verify_dir");
        let p = the_problem(&report, &table);
        assert_eq!((p.kind, p.location.as_str()), (kind, location), "{p}");
        if let Some(offset) = offset {
            assert_eq!(p.offset, Some(offset), "{p}");
        }
        let text = report.to_string();
        assert!(text.contains(&table.display().to_string()) && text.contains(location), "{text}");
    }
    fs::write(&table, &original).expect("restore");
    assert!(Db::verify_dir(dir.path(), small()).expect("verify_dir").is_ok());
}

#[test]
fn damage_on_disk_is_found_while_the_block_cache_holds_a_sound_copy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let table = one_table(dir.path(), 500);
    let db = Db::open(dir.path(), small()).expect("open");
    for i in 0..500 {
        assert!(db.get(key(i)).expect("get").is_some());
    }
    flip(&table, 3);
    // Every block is cached: a read through the cache would see nothing wrong.
    assert!(db.get(key(0)).expect("cached get").is_some());
    let report = db.verify().expect("verify");
    assert_eq!(the_problem(&report, &table).location, "data block 0");
    assert!(report.keys > 0, "the other blocks were walked");
}

#[test]
fn a_truncated_table_is_a_size_mismatch_and_a_bad_footer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let table = one_table(dir.path(), 2000);
    let original = fs::read(&table).expect("read");
    fs::write(&table, &original[..original.len() / 2]).expect("truncate");
    let report = Db::verify_dir(dir.path(), small()).expect("verify_dir");
    let kinds: Vec<(ProblemKind, &str)> = report.problems().iter().map(|p| (p.kind, p.location.as_str())).collect();
    assert_eq!(kinds, vec![(ProblemKind::Mismatch, "manifest record"), (ProblemKind::Malformed, "footer")], "{report}");
    assert!(report.problems().iter().all(|p| p.file == table));
    let size = &report.problems()[0];
    assert!(size.expected.contains(&original.len().to_string()), "{size}");
    assert!(size.found.contains(&(original.len() / 2).to_string()), "{size}");
}

#[test]
fn a_table_deleted_from_the_directory_is_missing_and_an_extra_one_an_orphan() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), small()).expect("open");
    for batch in 0..2u32 {
        for i in 0..300 {
            db.put(key(batch * 1000 + i), "v").expect("put");
        }
        db.flush().expect("flush");
    }
    let tables = ssts(dir.path());
    assert!(tables.len() >= 2, "{tables:?}");
    let kept = fs::read(&tables[1]).expect("read");
    fs::remove_file(&tables[1]).expect("remove");
    let report = db.verify().expect("verify");
    let p = the_problem(&report, &tables[1]);
    assert_eq!(p.kind, ProblemKind::Missing, "{p}");
    assert_eq!(report.tables as usize, tables.len(), "a missing table still counts as checked");
    db.close().expect("close");

    // An open database deletes tables nothing names (at open, after each flush or
    // compaction, at close), so an orphan is seen offline, next to the missing table (an
    // open would refuse this database: a table is missing).
    let orphan = dir.path().join("999999.sst");
    fs::copy(&tables[0], &orphan).expect("copy");
    let report = Db::verify_dir(dir.path(), small()).expect("verify_dir");
    assert_eq!(the_problem(&report, &tables[1]).kind, ProblemKind::Missing);
    assert_eq!(report.orphans(), std::slice::from_ref(&orphan));
    assert!(report.to_string().contains(&format!("orphan: {}", orphan.display())), "{report}");
    fs::write(&tables[1], &kept).expect("put the missing table back");
    let report = Db::verify_dir(dir.path(), small()).expect("verify_dir");
    assert!(report.is_ok(), "an orphan is not damage: {report}");
    assert_eq!(report.orphans(), &[orphan]);
}

#[test]
fn keys_out_of_order_in_a_block_with_a_valid_checksum_are_a_key_order_problem() {
    // User keys [i, b'x', b'y'] share no prefix with their neighbours, so every entry
    // stores its whole key: `0 shared | 11 unshared | 4 value bytes | key`. Raising one
    // key's first byte puts it after the next key, and re-sealing the block's checksum
    // leaves only the order to catch it.
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), small()).expect("open");
    for i in 0..200u8 {
        db.put([i, b'x', b'y'], "vvvv").expect("put");
    }
    db.flush().expect("flush");
    db.close().expect("close");
    let table = ssts(dir.path()).remove(0);
    let mut bytes = fs::read(&table).expect("read");
    let entry = [0u8, 11, 4, 100, b'x', b'y'];
    let at = bytes.windows(entry.len()).position(|w| w == entry).expect("the entry of key 100") + 3;
    bytes[at] = 250;
    // Re-seal the data block holding it: blocks are listed by the dump's index lines.
    let dump = shamba::sst::dump_table(&shamba::storage::FsStorage, &table, 0).expect("dump");
    let (offset, size) = dump
        .lines()
        .filter_map(|l| l.split(" -> offset ").nth(1))
        .map(|h| {
            let mut parts = h.split(" size ");
            let n = |s: Option<&str>| s.expect("field").trim().parse::<usize>().expect("number");
            (n(parts.next()), n(parts.next()))
        })
        .find(|&(offset, size)| offset <= at && at < offset + size)
        .expect("the block holding the entry");
    let crc = crc32c::crc32c_append(crc32c::crc32c(&bytes[offset..offset + size]), &bytes[offset + size..][..1]);
    let masked = crc.rotate_right(15).wrapping_add(0xa282_ead8);
    bytes[offset + size + 1..offset + size + 5].copy_from_slice(&masked.to_le_bytes());
    fs::write(&table, &bytes).expect("write");

    let report = Db::verify_dir(dir.path(), small()).expect("verify_dir");
    let order: Vec<&Problem> = report.problems().iter().filter(|p| p.kind == ProblemKind::KeyOrder).collect();
    assert!(!order.is_empty(), "{report}");
    assert!(order.iter().all(|p| p.file == table && p.offset == Some(offset as u64)), "{report}");
    assert!(order[0].location.starts_with("data block"), "{report}");
    assert!(order[0].found.contains("\\xfaxy") || order[0].expected.contains("\\xfaxy"), "{report}");
    assert!(!report.problems().iter().any(|p| p.kind == ProblemKind::Checksum), "re-sealed: {report}");
}

#[test]
fn a_damaged_log_record_is_named_with_its_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), Options::default()).expect("open");
    for i in 0..200 {
        db.put(key(i), "v".repeat(100)).expect("put");
    }
    db.close().expect("close");
    let log = fs::read_dir(dir.path())
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|e| e == "log") && fs::metadata(p).is_ok_and(|m| m.len() > 10_000))
        .expect("the log holding the writes");
    assert!(Db::verify_dir(dir.path(), Options::default()).expect("verify_dir").is_ok());
    flip(&log, 1000);
    let report = Db::verify_dir(dir.path(), Options::default()).expect("verify_dir");
    let p = the_problem(&report, &log);
    assert_eq!(p.kind, ProblemKind::Checksum, "{p}");
    assert!(p.offset.is_some_and(|o| o <= 1000), "{p}");
}

#[test]
fn verify_runs_only_where_it_can_and_says_why_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(matches!(Db::verify_dir(dir.path(), small()), Err(shamba::Error::InvalidArgument(_))));
    let db = Db::open(dir.path(), tiny()).expect("open");
    assert!(matches!(Db::verify_dir(dir.path(), small()), Err(shamba::Error::Locked(_))), "an open database");
    let other = db.clone();
    db.close().expect("close");
    assert!(matches!(other.verify(), Err(shamba::Error::Closed)));
}

#[test]
fn verify_during_writes_flushes_and_compactions_finds_no_damage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), tiny()).expect("open");
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            for i in 0..8_000u32 {
                db.put(key(i * 7 % 3000), format!("value-{i}")).expect("put");
            }
            done.store(true, std::sync::atomic::Ordering::Release);
        })
    };
    let mut runs = 0;
    while !done.load(std::sync::atomic::Ordering::Acquire) || runs < 2 {
        let report = db.verify().expect("verify");
        assert!(report.is_ok(), "run {runs}: {report}");
        runs += 1;
    }
    writer.join().expect("writer");
    db.wait_for_compactions().expect("compactions");
    let report = db.verify().expect("verify");
    assert!(report.is_ok() && report.orphans().is_empty(), "{report}");
    assert_eq!(report.tables as usize, db.files().len());
}
