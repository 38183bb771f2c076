//! Checkpoints: a consistent copy as of one moment, taken while writers run, that opens as
//! a database of its own and outlives what happens to the original.

#[cfg(feature = "lab")]
use shamba::lab::{FaultPlan, FaultyStorage};
use shamba::storage::{DirLock, FsStorage, RandomRead, SequentialWrite, Storage};
use shamba::{Db, Options, Readable};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:06}").into_bytes()
}

fn small() -> Options {
    Options { write_buffer_size: 32 << 10, target_file_size: 32 << 10, ..Options::default() }
}

fn contents(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.iter().collect::<shamba::Result<_>>().expect("scan")
}

#[test]
fn a_checkpoint_holds_the_moment_it_was_taken_in_tables_memtable_and_wal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), small()).expect("open");
    for i in 0..3000 {
        db.put(key(i), format!("first-{i}")).expect("put");
    }
    db.flush().expect("flush");
    for i in 0..3000 {
        if i % 3 == 0 {
            db.delete(key(i)).expect("delete");
        }
    }
    db.put(b"in-the-memtable", b"only").expect("put");
    let expected = contents(&db);
    db.checkpoint(dir.path().join("cp")).expect("checkpoint");
    assert!(!dir.path().join("cp.tmp").exists(), "the staging directory was renamed");

    // The original moves on; its old tables are compacted away.
    for i in 0..3000 {
        db.put(key(i), b"second").expect("put");
    }
    db.compact().expect("compact");
    db.close().expect("close");

    let cp = Db::open(dir.path().join("cp"), small()).expect("open the checkpoint");
    assert_eq!(contents(&cp), expected);
    cp.put(b"the checkpoint", b"is a database").expect("write to the checkpoint");
    cp.close().expect("close");
    let db = Db::open(dir.path().join("db"), small()).expect("reopen the original");
    assert!(db.get(b"the checkpoint").expect("get").is_none(), "the two are separate");
    assert_eq!(db.get(key(1)).expect("get").as_deref(), Some(&b"second"[..]));
}

#[test]
fn tables_are_hard_linked_not_copied() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), small()).expect("open");
    for i in 0..2000 {
        db.put(key(i), b"v").expect("put");
    }
    db.flush().expect("flush");
    // Settled, so the tables listed below are the ones the checkpoint saw (a compaction
    // running after it would list tables it never had).
    db.wait_for_compactions().expect("settle");
    db.checkpoint(dir.path().join("cp")).expect("checkpoint");
    let files = db.files();
    assert!(!files.is_empty());
    for f in files {
        let name = format!("{:06}.sst", f.number);
        let a = std::fs::metadata(dir.path().join("db").join(&name)).expect("table");
        let b = std::fs::metadata(dir.path().join("cp").join(&name)).expect("checkpoint table");
        assert_eq!(a.ino(), b.ino(), "{name} was copied, not linked");
    }
}

/// The file system without hard links (as across devices): tables are copied.
struct NoLinks(FsStorage);

impl Storage for NoLinks {
    fn open_read(&self, path: &Path) -> shamba::Result<Arc<dyn RandomRead>> {
        self.0.open_read(path)
    }
    fn create(&self, path: &Path) -> shamba::Result<Box<dyn SequentialWrite>> {
        self.0.create(path)
    }
    fn read_all(&self, path: &Path) -> shamba::Result<Vec<u8>> {
        self.0.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> shamba::Result<()> {
        self.0.rename(from, to)
    }
    fn remove(&self, path: &Path) -> shamba::Result<()> {
        self.0.remove(path)
    }
    fn list(&self, dir: &Path) -> shamba::Result<Vec<String>> {
        self.0.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> shamba::Result<()> {
        self.0.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> shamba::Result<()> {
        self.0.sync_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        self.0.exists(path)
    }
    fn lock(&self, path: &Path) -> shamba::Result<Box<dyn DirLock>> {
        self.0.lock(path)
    }
}

#[test]
fn without_hard_links_tables_are_copied() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options { storage: Arc::new(NoLinks(FsStorage)), ..small() };
    let db = Db::open(dir.path().join("db"), opts).expect("open");
    for i in 0..2000 {
        db.put(key(i), format!("v{i}")).expect("put");
    }
    db.flush().expect("flush");
    // Settled, as above: the table looked at below is one the checkpoint saw.
    db.wait_for_compactions().expect("settle");
    let expected = contents(&db);
    db.checkpoint(dir.path().join("cp")).expect("checkpoint");
    let f = &db.files()[0];
    let name = format!("{:06}.sst", f.number);
    let a = std::fs::metadata(dir.path().join("db").join(&name)).expect("table");
    let b = std::fs::metadata(dir.path().join("cp").join(&name)).expect("checkpoint table");
    assert_ne!(a.ino(), b.ino());
    assert_eq!(a.len(), b.len());
    drop(db);
    let cp = Db::open(dir.path().join("cp"), small()).expect("open the checkpoint");
    assert_eq!(contents(&cp), expected);
}

#[test]
fn a_checkpoint_taken_while_a_writer_runs_holds_a_prefix_of_its_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), small()).expect("open");
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0u32;
            while !stop.load(Ordering::Relaxed) && i < 200_000 {
                db.put(key(i), format!("value-{i}")).expect("put");
                i += 1;
            }
            i
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(100));
    let acknowledged_before = db.get(key(0)).expect("get").is_some();
    db.checkpoint(dir.path().join("cp")).expect("checkpoint");
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().expect("writer");
    assert!(acknowledged_before);

    let cp = Db::open(dir.path().join("cp"), small()).expect("open the checkpoint");
    let got = contents(&cp);
    // One writer writes keys in order: the checkpoint holds keys 0..n for some n, whole.
    let n = got.len() as u32;
    assert!(n > 0 && n <= written, "{n} of {written}");
    for i in 0..n {
        assert_eq!(got.get(&key(i)).map(Vec::as_slice), Some(format!("value-{i}").as_bytes()), "key {i}");
    }
}

#[cfg(feature = "lab")]
#[test]
fn an_existing_target_is_refused_and_a_failed_checkpoint_leaves_no_target() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let opts = Options { storage: Arc::new(FaultyStorage::new(FsStorage, plan.clone())), ..small() };
    let db = Db::open(dir.path().join("db"), opts).expect("open");
    for i in 0..2000 {
        db.put(key(i), b"v").expect("put");
    }
    db.flush().expect("flush");
    std::fs::create_dir(dir.path().join("taken")).expect("mkdir");
    let e = db.checkpoint(dir.path().join("taken")).expect_err("target exists");
    assert!(matches!(e, shamba::Error::InvalidArgument(_)), "{e}");

    // A disk that takes no writes: the checkpoint fails, and leaves no `cp`.
    plan.fail_writes.store(true, Ordering::SeqCst);
    let e = db.checkpoint(dir.path().join("cp")).expect_err("the disk is full");
    assert!(e.io_kind().is_some(), "{e}");
    assert!(!dir.path().join("cp").exists());
    // Once the disk has room, the next attempt reuses the staging directory.
    plan.fail_writes.store(false, Ordering::SeqCst);
    db.checkpoint(dir.path().join("cp")).expect("checkpoint");
    let expected = contents(&db);
    drop(db);
    assert_eq!(contents(&Db::open(dir.path().join("cp"), small()).expect("open")), expected);
}
