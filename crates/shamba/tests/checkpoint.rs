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
    assert!(!dir.path().join("cp.checkpoint-staging").exists(), "the staging directory was moved");

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
    fn rename_dir(&self, from: &Path, to: &Path) -> shamba::Result<()> {
        self.0.rename_dir(from, to)
    }
    fn remove_dir(&self, dir: &Path) -> shamba::Result<()> {
        self.0.remove_dir(dir)
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
    assert!(!dir.path().join("cp.checkpoint-staging").exists(), "the failed attempt removed its staging directory");
    // Once the disk has room, the next attempt succeeds.
    plan.fail_writes.store(false, Ordering::SeqCst);
    db.checkpoint(dir.path().join("cp")).expect("checkpoint");
    let expected = contents(&db);
    drop(db);
    assert_eq!(contents(&Db::open(dir.path().join("cp"), small()).expect("open")), expected);
}

#[test]
fn a_staging_directory_is_emptied_only_if_a_checkpoint_made_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), small()).expect("open");
    for i in 0..2000 {
        db.put(key(i), b"v").expect("put");
    }
    db.flush().expect("flush");
    let expected = contents(&db);

    // Someone's directory under the staging name: refused, and nothing in it touched.
    let theirs = dir.path().join("cp.checkpoint-staging");
    std::fs::create_dir(&theirs).expect("mkdir");
    std::fs::write(theirs.join("000001.sst"), b"not ours").expect("write");
    let e = db.checkpoint(dir.path().join("cp")).expect_err("the staging name is taken");
    assert!(matches!(e, shamba::Error::InvalidArgument(_)), "{e}");
    assert_eq!(std::fs::read(theirs.join("000001.sst")).expect("still there"), b"not ours");
    assert!(!dir.path().join("cp").exists());
    std::fs::remove_dir_all(&theirs).expect("clean up");

    // What a crashed attempt leaves (its marker, half a copy): emptied and reused.
    std::fs::create_dir(&theirs).expect("mkdir");
    std::fs::write(theirs.join("CHECKPOINT-STAGING.tmp"), b"").expect("marker");
    std::fs::write(theirs.join("000007.sst"), b"half a copy").expect("write");
    db.checkpoint(dir.path().join("cp")).expect("checkpoint over a crashed attempt");
    assert!(!theirs.exists(), "moved to cp");
    drop(db);
    let names: Vec<String> = std::fs::read_dir(dir.path().join("cp"))
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n == "000007.sst" || n.starts_with("CHECKPOINT")), "{names:?}");
    assert_eq!(contents(&Db::open(dir.path().join("cp"), small()).expect("open")), expected);
}

#[test]
fn a_checkpoint_being_made_into_the_same_target_is_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("db"), small()).expect("open");
    db.put(b"k", b"v").expect("put");
    // Another checkpoint into `cp` is under way: its staging directory, marked and locked.
    let staging = dir.path().join("cp.checkpoint-staging");
    std::fs::create_dir(&staging).expect("mkdir");
    std::fs::write(staging.join("CHECKPOINT-STAGING.tmp"), b"").expect("marker");
    std::fs::write(staging.join("000005.sst"), b"being copied").expect("write");
    let lock = FsStorage.lock(&staging.join("LOCK")).expect("lock");
    let e = db.checkpoint(dir.path().join("cp")).expect_err("the other one holds it");
    assert!(matches!(e, shamba::Error::Locked(_)), "{e}");
    assert_eq!(std::fs::read(staging.join("000005.sst")).expect("untouched"), b"being copied");
    drop(lock);
    db.checkpoint(dir.path().join("cp")).expect("once it is gone");
    assert!(!staging.exists());
}

/// A crash at every storage operation of a checkpoint, on the simulated disk: `cp` is then
/// absent or a whole checkpoint of the moment, and a later checkpoint into it succeeds (or
/// is refused, if it exists) and leaves no staging directory.
#[cfg(feature = "lab")]
mod crash_points;

#[cfg(feature = "lab")]
mod crash {
    use super::{contents, key};
    use crate::crash_points::{at_every_operation, quiet_options};
    use shamba::lab::{CrashKeeps, SimFault, SimStorage};
    use shamba::storage::Storage;
    use shamba::{Db, Readable};
    use std::collections::BTreeMap;
    use std::path::Path;

    const DB: &str = "/disk/db";
    const CP: &str = "/disk/cp";
    const STAGING: &str = "/disk/cp.checkpoint-staging";

    /// A database with tables, deletes and writes only in its WAL; its contents.
    fn populate(disk: &SimStorage) -> (Db, BTreeMap<Vec<u8>, Vec<u8>>) {
        let db = Db::open(DB, quiet_options(disk)).expect("open");
        for i in 0..300 {
            db.put(key(i), format!("first-{i}")).expect("put");
        }
        db.flush().expect("flush");
        for i in (0..300).step_by(3) {
            db.delete(key(i)).expect("delete");
        }
        for i in 300..400 {
            db.put(key(i), format!("wal-{i}")).expect("put");
        }
        db.wait_for_compactions().expect("settle");
        let expected = contents(&db);
        (db, expected)
    }

    /// Checkpoint with `fault` at the checkpoint's operation `at`, crash keeping `keeps`,
    /// and check what the disk holds. Returns the checkpoint's operation count.
    fn run(at: Option<(u64, SimFault)>, keeps: CrashKeeps) -> Result<u64, String> {
        let disk = SimStorage::new();
        let (db, expected) = populate(&disk);
        let start = disk.ops();
        if let Some((n, fault)) = at {
            disk.fail_at(start + n, fault);
        }
        let made = db.checkpoint(CP);
        let ops = disk.ops() - start;
        drop(db);
        disk.crash(keeps);
        if at.is_none() {
            made.as_ref().map_err(|e| format!("the checkpoint failed without a fault: {e}"))?;
        }
        if made.is_ok() && !disk.exists(Path::new(CP)) {
            return Err("an acknowledged checkpoint is gone after the crash".into());
        }
        if disk.exists(Path::new(CP)) {
            check_checkpoint(&disk, &expected, "after the crash")?;
        }
        // The original reopens; a second checkpoint is refused if `cp` is there, and is
        // made otherwise, over whatever staging directory the crash left.
        let db = Db::open(DB, quiet_options(&disk)).map_err(|e| format!("reopen the original: {e}"))?;
        if disk.exists(Path::new(CP)) {
            match db.checkpoint(CP) {
                Err(shamba::Error::InvalidArgument(_)) => {}
                other => return Err(format!("a checkpoint over an existing cp: {other:?}")),
            }
        } else {
            db.checkpoint(CP).map_err(|e| format!("a checkpoint after the crash: {e}"))?;
            drop(db);
            check_checkpoint(&disk, &expected, "made after the crash")?;
        }
        if disk.exists(Path::new(STAGING)) {
            return Err(format!("a staging directory is left: {:?}", disk.list(Path::new(STAGING))));
        }
        Ok(ops)
    }

    /// `cp` opens as a database with exactly `expected`, and its first open leaves no
    /// staging marker in it.
    fn check_checkpoint(disk: &SimStorage, expected: &BTreeMap<Vec<u8>, Vec<u8>>, when: &str) -> Result<(), String> {
        let cp = Db::open(CP, quiet_options(disk)).map_err(|e| format!("open cp {when}: {e}"))?;
        let got = cp.iter().collect::<shamba::Result<BTreeMap<_, _>>>().map_err(|e| format!("scan cp {when}: {e}"))?;
        cp.close().map_err(|e| format!("close cp {when}: {e}"))?;
        if &got != expected {
            return Err(format!("cp {when} holds {} pairs, the moment {}", got.len(), expected.len()));
        }
        let names = disk.list(Path::new(CP)).map_err(|e| format!("list cp: {e}"))?;
        if names.iter().any(|n| n.starts_with("CHECKPOINT")) {
            return Err(format!("cp {when} keeps the staging marker: {names:?}"));
        }
        Ok(())
    }

    #[test]
    fn a_crash_at_any_point_of_a_checkpoint_leaves_no_half_copy() {
        let kinds = [
            (SimFault::Crash, CrashKeeps::Synced),
            (SimFault::Crash, CrashKeeps::Written),
            (SimFault::TornWrite, CrashKeeps::Written),
            (SimFault::Error, CrashKeeps::Synced),
        ];
        at_every_operation("checkpoint", 11, &kinds, run);
    }
}
