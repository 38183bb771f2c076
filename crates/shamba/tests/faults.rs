//! Fault injection: a full disk, failing syncs and failing reads give errors, never
//! panics, and never lose an acknowledged write.

use shamba::lab::{FaultPlan, FaultyStorage};
use shamba::storage::FsStorage;
use shamba::{Db, Error, Options, Readable, WriteBatch, WriteOptions};
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
            Err(Error::Io(_) | Error::ReadOnly { .. }) => return i,
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
    let err = db.put(b"k", b"v").expect_err("read-only");
    match &err {
        Error::ReadOnly { cause } => assert!(matches!(**cause, Error::Io(_)), "cause: {cause}"),
        _ => panic!("expected ReadOnly, got {err}"),
    }
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

/// Whether `e` is an I/O error of `kind`.
fn is_io(e: &Error, kind: std::io::ErrorKind) -> bool {
    e.io_kind() == Some(kind)
}

/// Whether `e` is a [`Error::ReadOnly`] whose cause satisfies `cause`; `source()` is the cause.
fn is_read_only(e: &Error, cause: impl Fn(&Error) -> bool) -> bool {
    match e {
        Error::ReadOnly { cause: c } => {
            let source = std::error::Error::source(e).map(|s| s.to_string());
            cause(c) && source == Some(c.to_string()) && e.to_string().contains(&c.to_string())
        }
        _ => false,
    }
}

#[test]
fn the_writes_grouped_behind_a_failing_leader_get_its_error_kind() {
    use std::io::ErrorKind::StorageFull;
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), faulty(&plan)).expect("open");
    let put = |db: &Db, k: Vec<u8>| {
        let mut b = WriteBatch::new();
        b.put(k, b"v");
        db.write_opt(b, &WriteOptions { sync: true, ..WriteOptions::default() })
    };
    // A first writer leads and stalls in its WAL sync; the writers after it queue up
    // behind it, and the next leader takes them all as one group.
    plan.hold_syncs.store(true, SeqCst);
    let first = {
        let db = db.clone();
        std::thread::spawn(move || put(&db, key(0)))
    };
    std::thread::sleep(std::time::Duration::from_millis(100));
    let queued: Vec<_> = (1..8)
        .map(|i| {
            let db = db.clone();
            std::thread::spawn(move || put(&db, key(i)))
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    // The disk fills up: the group's WAL append fails.
    plan.fail_writes.store(true, SeqCst);
    plan.hold_syncs.store(false, SeqCst);
    first.join().expect("first writer").expect("the first write was logged before the disk filled");
    let results: Vec<_> = queued.into_iter().map(|t| t.join().expect("writer")).collect();
    // One of them led the group and met the full disk; the rest were its followers (or,
    // had one come late, a writer refused because the database is read-only now).
    let full = results.iter().filter(|r| r.as_ref().is_err_and(|e| is_io(e, StorageFull))).count();
    for r in &results {
        let e = r.as_ref().expect_err("every write after the disk filled fails");
        assert!(
            is_io(e, StorageFull) || is_read_only(e, |c| is_io(c, StorageFull)),
            "a write of the failed group got {e:?}, not the leader's full disk"
        );
    }
    assert!(full >= 2, "expected a leader and a follower to meet the full disk: {results:?}");
    // Later writes are refused with the full disk as the cause.
    plan.fail_writes.store(false, SeqCst);
    let e = db.put(b"later", b"v").expect_err("read-only");
    assert!(is_read_only(&e, |c| is_io(c, StorageFull)), "{e:?}");
    assert!(e.is_read_only() && !e.is_corruption());
}

#[test]
fn a_flush_failing_on_a_full_disk_makes_writes_fail_read_only_with_that_cause() {
    use std::io::ErrorKind::StorageFull;
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), faulty(&plan)).expect("open");
    for i in 0..100 {
        db.put(key(i), b"v").expect("put");
    }
    // The WAL still takes writes; the table the flush writes does not.
    plan.fail_table_writes.store(true, SeqCst);
    let e = db.flush().expect_err("the flush met a full disk");
    assert!(is_read_only(&e, |c| is_io(c, StorageFull)), "{e:?}");
    let e = db.put(b"k", b"v").expect_err("read-only");
    assert!(is_read_only(&e, |c| is_io(c, StorageFull)), "{e:?}");
    // Reads still work.
    assert_eq!(db.get(key(7)).expect("read after failure").as_deref(), Some(&b"v"[..]));
    drop(db);
    plan.fail_table_writes.store(false, SeqCst);
    assert_recovered(dir.path(), 100);
}

#[test]
fn a_compaction_meeting_a_corrupt_table_makes_writes_fail_read_only_with_that_cause() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = || Options { level0_compaction_trigger: 4, block_size: 512, ..Options::default() };
    // Three overlapping L0 tables, one short of a compaction.
    let fill = |db: &Db, round: u32| {
        for i in 0..300 {
            db.put(key(i), format!("value-{round}-{i}")).expect("put");
        }
    };
    {
        let db = Db::open(dir.path(), opts()).expect("open");
        for round in 0..3 {
            fill(&db, round);
            db.flush().expect("flush");
        }
        assert_eq!(db.stats().levels[0].files, 3);
        db.close().expect("close");
    }
    // Damage the first data block of one of them: only a compaction (or a lookup of
    // its first keys) reads it.
    let mut tables: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    tables.sort();
    let damaged = tables[0].clone();
    let mut bytes = std::fs::read(&damaged).expect("read");
    bytes[20] ^= 0x5a;
    std::fs::write(&damaged, bytes).expect("write");

    let db = Db::open(dir.path(), opts()).expect("reopen");
    // A fourth table triggers the background compaction of all four (which may fail
    // before the flush returns: its result is checked below).
    fill(&db, 3);
    let _ = db.flush();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let e = loop {
        match db.put(b"k", b"v") {
            Err(e) => break e,
            Ok(()) => {
                assert!(std::time::Instant::now() < deadline, "the compaction never failed");
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    };
    let names_damaged = |c: &Error| match c {
        Error::Corruption { file, .. } => file.file_name() == damaged.file_name(),
        _ => false,
    };
    assert!(is_read_only(&e, names_damaged), "{e:?}");
    // Reads of the tables' other blocks still work.
    assert!(db.get(key(299)).expect("read after failure").is_some());
}

#[test]
fn a_manual_compaction_meeting_a_corrupt_block_stops_writes_and_leaves_no_orphan_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Small blocks and output files: the compaction writes several outputs before it meets
    // the damaged block in the middle of a table.
    let opts =
        || Options { level0_compaction_trigger: 8, block_size: 512, target_file_size: 4 << 10, ..Options::default() };
    let tables = |dir: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sst"))
            .collect();
        names.sort();
        names
    };
    {
        let db = Db::open(dir.path(), opts()).expect("open");
        for round in 0..3 {
            for i in 0..3000 {
                db.put(key(i), format!("value-{round}-{i}")).expect("put");
            }
            db.flush().expect("flush");
        }
        db.close().expect("close");
    }
    let before = tables(dir.path());
    assert_eq!(before.len(), 3, "{before:?}");
    let damaged = dir.path().join(&before[1]);
    let mut bytes = std::fs::read(&damaged).expect("read");
    let middle = bytes.len() / 3;
    bytes[middle] ^= 0x5a;
    std::fs::write(&damaged, bytes).expect("write");

    let db = Db::open(dir.path(), opts()).expect("reopen");
    let err = db.compact().expect_err("the compaction reads the damaged block");
    assert!(err.is_corruption(), "{err}");
    assert_eq!(tables(dir.path()), before, "the outputs written before the failure are gone");
    let write = db.put(b"k", b"v").expect_err("writes stop");
    assert!(is_read_only(&write, Error::is_corruption), "{write}");
}

/// Whether `e` is a corruption or I/O error naming a table file other than `inputs`.
fn names_a_new_table(e: &Error, inputs: &[String]) -> bool {
    match e {
        Error::Corruption { file, .. } => {
            let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name.ends_with(".sst") && !inputs.contains(&name)
        }
        _ => false,
    }
}

fn table_names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_compaction_on_a_disk_that_drops_table_appends_is_refused_and_keeps_its_inputs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let opts = || Options { level0_compaction_trigger: 8, write_buffer_size: 1 << 20, ..faulty(&plan) };
    let db = Db::open(dir.path(), opts()).expect("open");
    for round in 0..3 {
        for i in 0..300 {
            db.put(key(i), format!("value-{round}-{i}")).expect("put");
        }
        db.flush().expect("flush");
    }
    let inputs = table_names(dir.path());
    assert_eq!(inputs.len(), 3, "{inputs:?}");
    // The disk now acknowledges table appends and syncs it never makes durable.
    plan.drop_table_appends.store(true, SeqCst);
    let e = db.compact().expect_err("the compaction's output does not read back");
    assert!(names_a_new_table(&e, &inputs), "{e:?}");
    let write = db.put(b"k", b"v").expect_err("writes stop");
    assert!(is_read_only(&write, |c| names_a_new_table(c, &inputs)), "{write:?}");
    // The inputs are still there and still the tree; the empty outputs are gone.
    assert_eq!(table_names(dir.path()), inputs);
    assert_eq!(db.get(key(7)).expect("read after failure").as_deref(), Some(&b"value-2-7"[..]));
    drop(db);
    plan.drop_table_appends.store(false, SeqCst);
    assert_recovered(dir.path(), 300);
}

#[test]
fn a_flush_on_a_disk_that_drops_table_appends_is_refused_and_keeps_its_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), faulty(&plan)).expect("open");
    for i in 0..100 {
        db.put(key(i), b"v").expect("put");
    }
    plan.drop_table_appends.store(true, SeqCst);
    let e = db.flush().expect_err("the flushed table does not read back");
    assert!(is_read_only(&e, |c| names_a_new_table(c, &[])), "{e:?}");
    assert!(table_names(dir.path()).is_empty(), "the flush's empty table is gone");
    drop(db);
    plan.drop_table_appends.store(false, SeqCst);
    assert_recovered(dir.path(), 100);
}

/// A storage whose WAL appends panic while `panic` is set: a stand-in for a bug in the
/// write path.
struct PanickingWal {
    inner: FsStorage,
    panic: Arc<std::sync::atomic::AtomicBool>,
}

struct PanickingWriter {
    inner: Box<dyn shamba::storage::SequentialWrite>,
    panic: Arc<std::sync::atomic::AtomicBool>,
}

impl shamba::storage::SequentialWrite for PanickingWriter {
    fn append(&mut self, data: &[u8]) -> shamba::Result<()> {
        assert!(!self.panic.load(SeqCst), "injected panic in a WAL append");
        self.inner.append(data)
    }
    fn flush(&mut self) -> shamba::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> shamba::Result<()> {
        self.inner.sync()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

impl shamba::storage::Storage for PanickingWal {
    fn open_read(&self, path: &std::path::Path) -> shamba::Result<Arc<dyn shamba::storage::RandomRead>> {
        self.inner.open_read(path)
    }
    fn create(&self, path: &std::path::Path) -> shamba::Result<Box<dyn shamba::storage::SequentialWrite>> {
        let inner = self.inner.create(path)?;
        if path.extension().is_some_and(|e| e == "log") {
            return Ok(Box::new(PanickingWriter { inner, panic: self.panic.clone() }));
        }
        Ok(inner)
    }
    fn read_all(&self, path: &std::path::Path) -> shamba::Result<Vec<u8>> {
        self.inner.read_all(path)
    }
    fn rename(&self, from: &std::path::Path, to: &std::path::Path) -> shamba::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove(&self, path: &std::path::Path) -> shamba::Result<()> {
        self.inner.remove(path)
    }
    fn rename_dir(&self, from: &std::path::Path, to: &std::path::Path) -> shamba::Result<()> {
        self.inner.rename_dir(from, to)
    }
    fn remove_dir(&self, dir: &std::path::Path) -> shamba::Result<()> {
        self.inner.remove_dir(dir)
    }
    fn list(&self, dir: &std::path::Path) -> shamba::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &std::path::Path) -> shamba::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &std::path::Path) -> shamba::Result<()> {
        self.inner.sync_dir(dir)
    }
    fn exists(&self, path: &std::path::Path) -> bool {
        self.inner.exists(path)
    }
    fn lock(&self, path: &std::path::Path) -> shamba::Result<Box<dyn shamba::storage::DirLock>> {
        self.inner.lock(path)
    }
}

#[test]
fn a_panic_in_the_write_path_leaves_an_error_not_a_hang() {
    let dir = tempfile::tempdir().expect("tempdir");
    let panic = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let storage = PanickingWal { inner: FsStorage, panic: panic.clone() };
    let db = Db::open(dir.path(), Options { storage: Arc::new(storage), ..Options::default() }).expect("open");
    db.put(b"before", b"v").expect("put");
    panic.store(true, SeqCst);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.put(b"boom", b"v")));
    assert!(panicked.is_err(), "the injected panic reached the caller");
    panic.store(false, SeqCst);
    // The next writer neither hangs nor writes: the lead was given up, writes stopped.
    let other = {
        let db = db.clone();
        std::thread::spawn(move || db.put(b"after", b"v"))
    };
    let e = other.join().expect("writer thread").expect_err("writes stopped");
    assert!(e.is_read_only(), "{e}");
    // The cause is a broken invariant of the engine's own: neither the caller's argument
    // nor a file.
    assert!(matches!(&e, Error::ReadOnly { cause } if matches!(**cause, Error::Internal { .. })), "{e:?}");
    assert_eq!(db.get(b"before").expect("get").as_deref(), Some(&b"v"[..]));
    db.close().expect("close returns");
}
