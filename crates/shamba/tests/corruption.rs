//! Damaged files give `Error::Corruption` naming the file (or, for a torn WAL tail, a
//! clean recovery up to the last whole record), never a panic.

use shamba::{Db, Error, Options, Readable, WriteOptions};
use std::fs;
use std::path::{Path, PathBuf};

fn small() -> Options {
    Options { write_buffer_size: 1 << 20, block_size: 512, ..Options::default() }
}

fn files_with(dir: &Path, pred: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&pred))
        .collect();
    v.sort();
    v
}

fn flip(path: &Path, offset: u64) {
    let mut bytes = fs::read(path).expect("read");
    let at = offset as usize % bytes.len();
    bytes[at] ^= 0x5a;
    fs::write(path, bytes).expect("write");
}

fn names(err: &Error, file: &Path) -> bool {
    match err {
        Error::Corruption { file: f, .. } => f.file_name() == file.file_name(),
        _ => false,
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

/// A database with one SST holding keys 0..n and nothing in the WAL.
fn db_with_one_table(dir: &Path, n: u32) -> PathBuf {
    let db = Db::open(dir, small()).expect("open");
    for i in 0..n {
        db.put(key(i), format!("value-{i}")).expect("put");
    }
    db.flush().expect("flush");
    db.close().expect("close");
    let ssts = files_with(dir, |n| n.ends_with(".sst"));
    assert_eq!(ssts.len(), 1, "expected one table");
    ssts[0].clone()
}

/// Read everything; return the first error (a scan touches every block).
fn read_all(dir: &Path, n: u32) -> Result<(), Error> {
    let db = Db::open(dir, small())?;
    for item in db.iter() {
        item?;
    }
    for i in 0..n {
        db.get(key(i))?;
    }
    Ok(())
}

#[test]
fn flipped_byte_anywhere_in_a_table_is_reported_as_corruption_of_that_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sst = db_with_one_table(dir.path(), 2000);
    let pristine = fs::read(&sst).expect("read");
    let len = pristine.len() as u64;
    // Every 97th byte plus the last 80 (index, filter, properties, footer).
    let offsets: Vec<u64> = (0..len).step_by(97).chain(len.saturating_sub(80)..len).collect();
    for off in offsets {
        fs::write(&sst, &pristine).expect("restore");
        flip(&sst, off);
        match read_all(dir.path(), 2000) {
            Err(e) => assert!(names(&e, &sst), "offset {off}: expected corruption naming {}, got {e}", sst.display()),
            Ok(()) => panic!("offset {off}: a flipped byte went unnoticed"),
        }
    }
}

#[test]
fn truncated_table_is_reported_as_corruption() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sst = db_with_one_table(dir.path(), 500);
    let len = fs::metadata(&sst).expect("meta").len();
    for keep in [0, 10, len / 2, len - 1] {
        let bytes = fs::read(&sst).expect("read");
        fs::write(&sst, &bytes[..keep as usize]).expect("truncate");
        let e = read_all(dir.path(), 500).expect_err("truncated table read fine");
        assert!(names(&e, &sst), "keep {keep}: got {e}");
        fs::write(&sst, &bytes).expect("restore");
    }
}

/// Writes `n` single-key records to the WAL only (no flush), then closes.
fn db_with_wal_only(dir: &Path, n: u32) -> PathBuf {
    let db = Db::open(dir, small()).expect("open");
    let sync = WriteOptions { sync: true, ..WriteOptions::default() };
    for i in 0..n {
        let mut b = shamba::WriteBatch::new();
        b.put(key(i), vec![b'v'; 100]);
        db.write_opt(b, &sync).expect("put");
    }
    db.close().expect("close");
    let logs: Vec<PathBuf> = files_with(dir, |n| n.ends_with(".log"))
        .into_iter()
        .filter(|p| fs::metadata(p).map(|m| m.len() > 0).unwrap_or(false))
        .collect();
    assert_eq!(logs.len(), 1, "expected one non-empty WAL");
    logs[0].clone()
}

#[test]
fn torn_wal_tail_recovers_every_whole_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wal = db_with_wal_only(dir.path(), 50);
    let bytes = fs::read(&wal).expect("read");
    // Cut into the last record.
    fs::write(&wal, &bytes[..bytes.len() - 20]).expect("truncate");
    let db = Db::open(dir.path(), small()).expect("recovery from a torn tail");
    for i in 0..49 {
        assert!(db.get(key(i)).expect("get").is_some(), "record {i} lost");
    }
    assert_eq!(db.get(key(49)).expect("get"), None, "the torn record must not appear");
}

#[test]
fn damaged_wal_middle_is_reported_as_corruption_of_the_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wal = db_with_wal_only(dir.path(), 50);
    let len = fs::metadata(&wal).expect("meta").len();
    flip(&wal, len / 3);
    let e = Db::open(dir.path(), small()).expect_err("a damaged WAL opened");
    assert!(names(&e, &wal), "got {e}");
}

#[test]
fn damaged_manifest_is_reported_as_corruption_of_the_manifest() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let db = Db::open(dir.path(), small()).expect("open");
        for round in 0..4 {
            for i in 0..200 {
                db.put(key(round * 1000 + i), b"v").expect("put");
            }
            db.flush().expect("flush");
        }
        db.close().expect("close");
    }
    let manifest = files_with(dir.path(), |n| n.starts_with("MANIFEST-")).pop().expect("a manifest");
    flip(&manifest, 12);
    let e = Db::open(dir.path(), small()).expect_err("a damaged manifest opened");
    assert!(names(&e, &manifest), "got {e}");
}

#[test]
fn garbage_current_file_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    Db::open(dir.path(), small()).expect("open").close().expect("close");
    fs::write(dir.path().join("CURRENT"), b"\xff\xfe not a manifest name").expect("write");
    assert!(Db::open(dir.path(), small()).is_err());
}

#[test]
fn a_table_missing_from_the_directory_stops_the_open_and_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let db = Db::open(dir.path(), small()).expect("open");
        for round in 0..3u32 {
            for i in 0..200 {
                db.put(key(round * 1000 + i), b"v").expect("put");
            }
            db.flush().expect("flush");
        }
        db.close().expect("close");
    }
    let tables = files_with(dir.path(), |n| n.ends_with(".sst"));
    assert!(tables.len() >= 3, "{tables:?}");
    let gone = &tables[1];
    let bytes = fs::read(gone).expect("read");
    fs::remove_file(gone).expect("remove");
    let Err(err) = Db::open(dir.path(), small()) else { panic!("a database missing a table does not open") };
    assert!(names(&err, gone), "{err}");
    assert!(err.to_string().contains("missing"), "{err}");
    // With the table back, it opens and reads everything.
    fs::write(gone, bytes).expect("restore");
    let db = Db::open(dir.path(), small()).expect("reopen");
    for round in 0..3u32 {
        for i in 0..200 {
            assert_eq!(db.get(key(round * 1000 + i)).expect("get").as_deref(), Some(&b"v"[..]));
        }
    }
}

/// A data block whose bytes decode, its checksum not checked, but one of whose keys is not
/// an internal key (its kind byte is none the engine writes): a scan reports corruption
/// naming the table and the block's offset, and ends.
#[test]
fn a_malformed_internal_key_met_by_an_iterator_names_its_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sst = db_with_one_table(dir.path(), 2000);
    let mut bytes = fs::read(&sst).expect("read");
    // The first data block's first entry holds its whole key: the user key, then the
    // trailer, little-endian, whose first byte is the kind.
    let user = key(0);
    let at = bytes.windows(user.len()).position(|w| w == user.as_slice()).expect("the first key is in the file");
    let kind = at + user.len();
    assert_eq!(bytes[kind], 1, "a put");
    bytes[kind] = 0x7f;
    fs::write(&sst, bytes).expect("write");

    let db = Db::open(dir.path(), small()).expect("open");
    let ro = shamba::ReadOptions { verify_checksums: false, ..shamba::ReadOptions::default() };
    for backward in [false, true] {
        let mut it = db.iter_opt(&ro);
        let mut seen = 0;
        let err = loop {
            match if backward { it.next_back() } else { it.next() } {
                Some(Ok(_)) => seen += 1,
                Some(Err(e)) => break e,
                None => panic!("a scan (backward: {backward}) met no malformed key after {seen} entries"),
            }
        };
        assert!(names(&err, &sst), "backward {backward}: expected corruption naming {}, got {err}", sst.display());
        match &err {
            Error::Corruption { offset, reason, .. } => {
                assert_eq!(*offset, Some(0), "the first data block");
                assert!(reason.contains("malformed internal key"), "{reason}");
            }
            other => panic!("{other}"),
        }
        assert!(it.next().is_none() && it.next_back().is_none(), "the error ends the scan");
    }
    db.close().expect("close");
}
