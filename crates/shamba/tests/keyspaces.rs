//! Keyspaces: separate trees in one database, one WAL, one manifest. What a user relies on:
//! a database written before keyspaces opens unchanged; keyspaces and their shape survive
//! a reopen; a dropped keyspace is gone for good (its handles fail, its files are deleted,
//! its WAL records never replay into anything); batches and snapshots span keyspaces; an
//! idle keyspace does not keep old WALs alive. The model test (`model.rs`) checks the
//! contents under random operations, the crash test (`crash.rs`) batches across keyspaces
//! under SIGKILL.

use shamba::{CompactionStyle, Compression, Db, Error, KeyspaceOptions, Options, ReadOptions, Readable, WriteBatch};
use std::path::Path;

fn small() -> Options {
    Options { write_buffer_size: 8 << 10, target_file_size: 8 << 10, ..Options::default() }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn files_ending(dir: &Path, suffix: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(suffix))
        .count()
}

/// `tests/fixtures/pre-keyspaces` was written by the release binary of e9fb4bf (before
/// keyspaces): 40 keys put and compacted, 10 updated, one deleted, and a last put left in
/// the WAL:
/// `shamba put` key000..key039 = flushed-i; `shamba compact`; key020..key029 = updated-i;
/// `shamba delete key005`; `shamba put key030 in-wal`.
#[test]
fn a_database_written_before_keyspaces_opens_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pre-keyspaces"), dir.path());
    let check = |db: &Db| {
        for i in 0..40 {
            let key = format!("key{i:03}");
            let want = match i {
                5 => None,
                20..=29 => Some(format!("updated-{i}")),
                30 => Some("in-wal".to_string()),
                _ => Some(format!("flushed-{i}")),
            };
            assert_eq!(db.get(&key).unwrap(), want.map(String::into_bytes), "{key}");
        }
        assert_eq!(db.iter().count(), 39);
    };
    let db = Db::open(dir.path(), Options::default()).unwrap();
    check(&db);
    assert_eq!(db.keyspace_names(), ["default"]);
    let users = db.keyspace("users").unwrap();
    users.put(b"key001", b"a user").unwrap();
    drop(users);
    db.close().unwrap();

    let db = Db::open(dir.path(), Options::default()).unwrap();
    check(&db);
    assert_eq!(db.keyspace_names(), ["default", "users"]);
    assert_eq!(db.keyspace("users").unwrap().get(b"key001").unwrap().as_deref(), Some(&b"a user"[..]));
    assert!(db.verify().unwrap().is_ok());
}

#[test]
fn keyspaces_are_separate_trees_that_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let tiered =
        KeyspaceOptions { compaction_style: CompactionStyle::Tiered, size_ratio: 3, ..KeyspaceOptions::default() };
    {
        let db = Db::open(dir.path(), small()).unwrap();
        let a = db.keyspace("a").unwrap();
        let t = db.keyspace_with("t", tiered.clone()).unwrap();
        for i in 0..2000u32 {
            let k = format!("k{i:05}");
            db.put(&k, format!("default-{i}")).unwrap();
            a.put(&k, format!("a-{i}")).unwrap();
            if i % 2 == 0 {
                t.put(&k, format!("t-{i}")).unwrap();
            }
        }
        a.delete_range(&b"k00100"[..]..&b"k00200"[..]).unwrap();
        db.wait_for_compactions().unwrap();
        assert!(a.stats().levels.iter().map(|l| l.files).sum::<usize>() > 0, "a has tables of its own");
        assert_eq!(a.iter().count(), 1900);
        assert_eq!(t.iter().count(), 1000);
        assert_eq!(db.iter().count(), 2000);
        // The last writes stay in the WAL only.
        t.put(b"only-in-wal", b"t").unwrap();
    }
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.keyspace_names(), ["default", "a", "t"]);
    let (a, t) = (db.keyspace("a").unwrap(), db.keyspace("t").unwrap());
    assert_eq!(t.options().compaction_style, CompactionStyle::Tiered, "the shape is recorded");
    assert_eq!(t.options().size_ratio, 3);
    assert_eq!(a.get(b"k00150").unwrap(), None);
    assert_eq!(a.get(b"k00250").unwrap().as_deref(), Some(&b"a-250"[..]));
    assert_eq!(t.get(b"k00251").unwrap(), None, "odd keys were never written to t");
    assert_eq!(t.get(b"k00250").unwrap().as_deref(), Some(&b"t-250"[..]));
    assert_eq!(t.get(b"only-in-wal").unwrap().as_deref(), Some(&b"t"[..]));
    assert_eq!(db.get(b"k00150").unwrap().as_deref(), Some(&b"default-150"[..]));
    assert_eq!((a.iter().count(), t.iter().count(), db.iter().count()), (1900, 1001, 2000));
    // The same keyspace with the same options, again; with other options, refused.
    db.keyspace_with("t", t.options()).unwrap();
    let leveled = KeyspaceOptions { compaction_style: CompactionStyle::Leveled, ..t.options() };
    assert!(matches!(db.keyspace_with("t", leveled), Err(Error::InvalidOptions(_))));
    let report = db.verify().unwrap();
    assert!(report.is_ok() && report.orphans().is_empty(), "{report}");
    db.close().unwrap();
    let report = Db::verify_dir(dir.path(), small()).unwrap();
    assert!(report.is_ok() && report.orphans().is_empty(), "{report}");
}

#[test]
fn options_named_for_a_keyspace_apply_at_creation_and_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let zstd = KeyspaceOptions { compression: Compression::zstd(), block_size: 1024, ..KeyspaceOptions::default() };
    let opts = || Options { keyspace_options: vec![("z".into(), zstd.clone())], ..small() };
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.keyspace("z").unwrap().options(), zstd);
    assert_eq!(db.keyspace("plain").unwrap().options(), KeyspaceOptions::of(&small()));
    db.close().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.keyspace("z").unwrap().options(), zstd);
    let bad = KeyspaceOptions { size_ratio: 1, ..KeyspaceOptions::default() };
    assert!(matches!(db.keyspace_with("bad", bad), Err(Error::InvalidOptions(_))));
    assert!(matches!(db.keyspace(""), Err(Error::InvalidArgument(_))));
    let named_default = Options { keyspace_options: vec![("default".into(), zstd.clone())], ..small() };
    assert!(matches!(named_default.validate(), Err(Error::InvalidOptions(_))), "the default keyspace's are the db's");
    assert_eq!(db.keyspace("default").unwrap().name(), "default");
}

#[test]
fn a_dropped_keyspace_is_gone_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let gone = db.keyspace("gone").unwrap();
    let kept = db.keyspace("kept").unwrap();
    for i in 0..3000u32 {
        gone.put(format!("k{i:05}"), [7u8; 40]).unwrap();
        kept.put(format!("k{i:05}"), b"kept").unwrap();
    }
    db.flush().unwrap();
    let tables_before = files_ending(dir.path(), ".sst");
    // Some writes only in the WAL, then the drop: a reopen must skip them.
    gone.put(b"in-wal", b"x").unwrap();
    let snap = db.snapshot();
    db.drop_keyspace("gone").unwrap();
    assert!(matches!(gone.get(b"k00001"), Err(Error::InvalidArgument(_))));
    assert!(matches!(gone.put(b"k", b"v"), Err(Error::InvalidArgument(_))));
    let mut batch = WriteBatch::new();
    batch.put(b"default", b"v").put_in(&gone, b"k", b"v");
    assert!(matches!(db.write(batch), Err(Error::InvalidArgument(_))), "a batch naming it is refused whole");
    assert_eq!(db.get(b"default").unwrap(), None);
    // Its iterators are refused as its gets are: the error first, then nothing.
    let mut it = gone.iter();
    assert!(matches!(it.next(), Some(Err(Error::InvalidArgument(m))) if m.contains("dropped")));
    assert!(it.next().is_none());
    assert!(snap.keyspace(&gone).get(b"k00001").is_err());
    assert!(matches!(snap.keyspace(&gone).iter().next(), Some(Err(Error::InvalidArgument(_)))));
    assert!(matches!(db.drop_keyspace("gone"), Err(Error::InvalidArgument(_))));
    assert!(matches!(db.drop_keyspace("default"), Err(Error::InvalidArgument(_))));
    drop(snap);
    db.compact().unwrap();
    assert!(files_ending(dir.path(), ".sst") < tables_before, "its tables are deleted");
    assert_eq!(db.keyspace_names(), ["default", "kept"]);
    // The name comes back as a new, empty keyspace.
    let again = db.keyspace("gone").unwrap();
    assert_eq!(again.get(b"k00001").unwrap(), None);
    again.put(b"new", b"1").unwrap();
    drop((gone, again, kept));
    db.close().unwrap();

    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.keyspace_names(), ["default", "gone", "kept"]);
    let again = db.keyspace("gone").unwrap();
    assert_eq!(again.iter().collect::<Result<Vec<_>, _>>().unwrap(), vec![(b"new".to_vec(), b"1".to_vec())]);
    assert_eq!(db.keyspace("kept").unwrap().iter().count(), 3000);
    let report = db.verify().unwrap();
    assert!(report.is_ok() && report.orphans().is_empty(), "{report}");
}

#[test]
fn batches_and_snapshots_span_keyspaces() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let (from, to) = (db.keyspace("from").unwrap(), db.keyspace("to").unwrap());
    from.put(b"item", b"42").unwrap();
    let before = db.snapshot();
    let mut moved = WriteBatch::new();
    moved.delete_in(&from, b"item").put_in(&to, b"item", b"42").put(b"moves", b"1");
    db.write(moved).unwrap();
    assert_eq!((from.get(b"item").unwrap(), to.get(b"item").unwrap().as_deref()), (None, Some(&b"42"[..])));
    let (from_before, to_before) = (before.keyspace(&from), before.keyspace(&to));
    assert_eq!(from_before.get(b"item").unwrap().as_deref(), Some(&b"42"[..]));
    assert_eq!(to_before.get(b"item").unwrap(), None);
    assert_eq!(before.get(b"moves").unwrap(), None);
    assert_eq!(from_before.range(..b"z".as_slice()).count(), 1);
    assert_eq!(to_before.iter().count(), 0);
    assert_eq!(from_before.sequence(), before.sequence(), "one moment for every keyspace");

    // A keyspace of another database is refused, not written to this one's tree.
    let other_dir = tempfile::tempdir().unwrap();
    let other = Db::open(other_dir.path(), small()).unwrap();
    let foreign = other.keyspace("from").unwrap();
    let mut b = WriteBatch::new();
    b.put_in(&foreign, b"x", b"y");
    assert!(matches!(db.write(b), Err(Error::InvalidArgument(_))));
    let foreign_before = before.keyspace(&foreign);
    assert!(matches!(foreign_before.get(b"item"), Err(Error::InvalidArgument(_))));
    assert!(foreign_before.multi_get(&[b"item"]).iter().all(|r| matches!(r, Err(Error::InvalidArgument(_)))));
    let mut it = foreign_before.range(..b"z".as_slice());
    assert!(matches!(it.next(), Some(Err(Error::InvalidArgument(m))) if m.contains("another database")));
    assert!(it.next().is_none());
}

#[test]
fn the_snapshots_of_a_moment_keep_it_while_any_of_them_lives() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let ks = db.keyspace("ks").unwrap();
    ks.put(b"k", b"old").unwrap();
    db.put(b"k", b"default-old").unwrap();
    let snap = db.snapshot();
    let then = snap.keyspace(&ks);
    let copy = then.clone();
    drop(snap);
    ks.put(b"k", b"new").unwrap();
    db.put(b"k", b"default-new").unwrap();
    db.compact().unwrap();
    assert_eq!(then.get(b"k").unwrap().as_deref(), Some(&b"old"[..]), "compaction kept the pinned version");
    assert_eq!(then.multi_get(&[b"k"]).pop().unwrap().unwrap().as_deref(), Some(&b"old"[..]));
    drop(then);
    assert_eq!(copy.iter().collect::<Result<Vec<_>, _>>().unwrap(), vec![(b"k".to_vec(), b"old".to_vec())]);
    assert_eq!(ks.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
    // Reading the default keyspace again from a keyspace's snapshot: the same moment.
    let default = db.keyspace("default").unwrap();
    assert_eq!(copy.keyspace(&default).get(b"k").unwrap().as_deref(), Some(&b"default-old"[..]));
}

#[test]
fn every_reader_reads_through_one_trait_with_read_options() {
    fn first_key(r: &impl Readable, ro: &ReadOptions) -> Option<Vec<u8>> {
        assert_eq!(r.get_opt(b"a", ro).unwrap(), r.get(b"a").unwrap());
        assert_eq!(r.multi_get_opt(&[b"a"], ro).pop().unwrap().unwrap(), r.get(b"a").unwrap());
        assert_eq!(r.prefix_opt(b"a", ro).count(), r.prefix(b"a").count());
        assert_eq!(r.range_opt(&b"a"[..]..&b"b"[..], ro).count(), r.range(&b"a"[..]..&b"b"[..]).count());
        r.iter_opt(ro).next().map(|kv| kv.unwrap().0)
    }
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let ks = db.keyspace("ks").unwrap();
    db.put(b"a", b"1").unwrap();
    ks.put(b"b", b"2").unwrap();
    db.flush().unwrap();
    let snap = db.snapshot();
    let scan = ReadOptions { fill_cache: false, readahead_size: 64 << 10, ..ReadOptions::default() };
    assert_eq!(first_key(&db, &scan), Some(b"a".to_vec()));
    assert_eq!(first_key(&ks, &scan), Some(b"b".to_vec()));
    assert_eq!(first_key(&snap, &scan), Some(b"a".to_vec()));
    assert_eq!(first_key(&snap.keyspace(&ks), &scan), Some(b"b".to_vec()));
}

#[test]
fn an_idle_keyspace_does_not_keep_old_logs_alive() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let idle = db.keyspace("idle").unwrap();
    idle.put(b"once", b"1").unwrap();
    for i in 0..20_000u32 {
        db.put(format!("k{i:06}"), [1u8; 64]).unwrap();
    }
    db.flush().unwrap();
    let logs = files_ending(dir.path(), ".log");
    assert!(logs <= 3, "{logs} WALs left behind by a keyspace that took no writes");
    assert_eq!(idle.get(b"once").unwrap().as_deref(), Some(&b"1"[..]));
    drop(idle);
    db.close().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.keyspace("idle").unwrap().get(b"once").unwrap().as_deref(), Some(&b"1"[..]));
}

#[test]
fn a_checkpoint_holds_every_keyspace() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), small()).unwrap();
    let ks = db.keyspace("ks").unwrap();
    for i in 0..500u32 {
        ks.put(format!("k{i:04}"), b"v").unwrap();
    }
    db.flush().unwrap();
    ks.put(b"in-wal", b"w").unwrap();
    db.checkpoint(dir.path().join("copy")).unwrap();
    ks.put(b"after", b"a").unwrap();
    let copy = Db::open(dir.path().join("copy"), small()).unwrap();
    let ks = copy.keyspace("ks").unwrap();
    assert_eq!(ks.iter().count(), 501);
    assert_eq!(ks.get(b"after").unwrap(), None);
    assert_eq!(copy.keyspace_names(), ["default", "ks"]);
}

#[test]
fn a_keyspace_lists_its_own_table_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    let ks = db.keyspace("logs").unwrap();
    ks.put(b"a", b"1").unwrap();
    ks.put(b"z", b"2").unwrap();
    db.put(b"m", b"default").unwrap();
    db.flush().unwrap();
    let files = ks.files();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!((files[0].smallest_key.as_slice(), files[0].largest_key.as_slice()), (&b"a"[..], &b"z"[..]));
    assert_eq!(db.files().len(), 1, "the default keyspace's table is its own");
    assert_eq!(db.files()[0].smallest_key, b"m");
    assert_eq!(db.keyspace("default").unwrap().files().len(), 1);
    db.drop_keyspace("logs").unwrap();
    assert!(ks.files().is_empty(), "a dropped keyspace has no files");
}

/// A batch holds no handle, so it may outlive the database its keyspaces belong to. Written
/// to a database opened after that one closed, whose keyspace of the same id is another
/// keyspace, it is refused, naming the keyspace, and writes nothing there.
#[test]
fn a_batch_outliving_its_database_is_refused_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..10 {
        let first = Db::open(dir.path().join(format!("first{round}")), small()).unwrap();
        let users = first.keyspace("users").unwrap();
        let mut batch = WriteBatch::new();
        batch.put_in(&users, b"k", b"from the first");
        drop(users);
        first.close().unwrap();

        let second = Db::open(dir.path().join(format!("second{round}")), small()).unwrap();
        let logs = second.keyspace("logs").unwrap();
        match second.write(batch) {
            Err(Error::InvalidArgument(msg)) => assert!(msg.contains("another database"), "{msg}"),
            other => panic!("round {round}: a batch of a closed database was not refused: {other:?}"),
        }
        assert_eq!(logs.get(b"k").unwrap(), None, "round {round}: written into another keyspace");
        second.close().unwrap();
    }
}

/// A batch names its keyspaces by id: one naming a dropped keyspace, or a keyspace (the
/// default one included) of another database, is refused whole with a message naming it,
/// also when the drop comes while the write waits in the queue.
#[test]
fn a_batch_naming_a_keyspace_it_cannot_write_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), small()).unwrap();
    let gone = db.keyspace("gone").unwrap();
    db.drop_keyspace("gone").unwrap();
    let mut batch = WriteBatch::new();
    batch.put(b"d", b"v").delete_in(&gone, b"k");
    match db.write(batch) {
        Err(Error::InvalidArgument(msg)) => assert!(msg.contains("\"gone\"") && msg.contains("dropped"), "{msg}"),
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(db.get(b"d").unwrap(), None);

    let other = Db::open(dir.path().join("other"), small()).unwrap();
    let mut batch = WriteBatch::new();
    batch.put_in(&other.keyspace("default").unwrap(), b"d", b"v");
    match db.write(batch) {
        Err(Error::InvalidArgument(msg)) => assert!(msg.contains("another database"), "{msg}"),
        other => panic!("a batch naming another database's default keyspace was not refused: {other:?}"),
    }
    assert_eq!(db.get(b"d").unwrap(), None);
    assert_eq!(other.get(b"d").unwrap(), None);

    // Writers race a drop: each batch is applied whole (its default key is there) or
    // refused whole (it is not), never applied in part.
    let racing = db.keyspace("racing").unwrap();
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let (db, racing) = (db.clone(), racing.clone());
            std::thread::spawn(move || {
                (0..200)
                    .map(|i| {
                        let key = format!("w{t}-{i}");
                        let mut batch = WriteBatch::new();
                        batch.put(&key, b"v").put_in(&racing, &key, b"v");
                        (key, db.write(batch))
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(5));
    db.drop_keyspace("racing").unwrap();
    for writer in writers {
        for (key, result) in writer.join().unwrap() {
            match result {
                Ok(()) => assert!(db.get(&key).unwrap().is_some(), "{key} acknowledged but not applied"),
                Err(Error::InvalidArgument(msg)) => {
                    assert!(msg.contains("\"racing\""), "{msg}");
                    assert_eq!(db.get(&key).unwrap(), None, "{key} refused but applied in part");
                }
                Err(e) => panic!("{key}: {e}"),
            }
        }
    }
}

/// A crash at every storage operation of `drop_keyspace`, on the simulated disk: after
/// the reopen the keyspace is whole (every key) or gone (not named, its tables deleted by
/// the reopen's cleanup); a drop that returned is never undone; a synced write to the
/// keyspace acknowledged after a drop failed is never lost (the failed drop's record may be
/// on disk: writes wait until a fresh manifest or a reopen decides); the default keyspace
/// keeps its keys either way.
#[cfg(feature = "lab")]
mod crash_points;

#[cfg(feature = "lab")]
mod crash {
    use crate::crash_points::{at_every_operation, quiet_options};
    use shamba::lab::{CrashKeeps, SimFault, SimStorage};
    use shamba::storage::Storage;
    use shamba::{Db, Readable, WriteBatch, WriteOptions};
    use std::collections::BTreeMap;
    use std::path::Path;

    const DB: &str = "/disk/db";

    fn key(i: u32) -> Vec<u8> {
        format!("key-{i:04}").into_bytes()
    }

    type Pairs = BTreeMap<Vec<u8>, Vec<u8>>;

    /// A database whose keyspace `ks` has tables (several, from a compaction) and keys only
    /// in the WAL; the default keyspace has its own. Returns both contents and the table
    /// files of `ks`.
    fn populate(disk: &SimStorage) -> (Db, Pairs, Pairs, Vec<String>) {
        let db = Db::open(DB, quiet_options(disk)).expect("open");
        let ks = db.keyspace("ks").expect("keyspace");
        for i in 0..300 {
            ks.put(key(i), format!("ks-{i}")).expect("put");
            db.put(key(i), format!("default-{i}")).expect("put");
        }
        db.flush().expect("flush");
        ks.compact().expect("compact");
        for i in 300..350 {
            ks.put(key(i), format!("ks-wal-{i}")).expect("put");
        }
        db.wait_for_compactions().expect("settle");
        let whole = ks.iter().collect::<shamba::Result<Pairs>>().expect("scan ks");
        let default = db.iter().collect::<shamba::Result<Pairs>>().expect("scan default");
        let tables: Vec<String> = ks.files().iter().map(|f| format!("{:06}.sst", f.number)).collect();
        assert!(tables.len() > 1, "ks has {} tables", tables.len());
        (db, whole, default, tables)
    }

    /// Drop `ks` with `fault` at the drop's operation `at`, crash keeping `keeps`, reopen
    /// and check. Returns the drop's operation count.
    fn run(at: Option<(u64, SimFault)>, keeps: CrashKeeps) -> Result<u64, String> {
        let disk = SimStorage::new();
        let (db, mut whole, default, tables) = populate(&disk);
        let start = disk.ops();
        if let Some((n, fault)) = at {
            disk.fail_at(start + n, fault);
        }
        let dropped = db.drop_keyspace("ks");
        let ops = disk.ops() - start;
        // After a failed drop the keyspace is still there: a write to it that is
        // acknowledged must stay. (No handle is held across the drop, so that its tables
        // are deleted in it.)
        // Writes resumed (where they can be) first.
        let acknowledged = dropped.is_err()
            && db.resume().is_ok()
            && db.keyspace("ks").is_ok_and(|ks| {
                let mut batch = WriteBatch::new();
                batch.put_in(&ks, b"after a failed drop", b"synced");
                db.write_opt(batch, &WriteOptions { sync: true, ..WriteOptions::default() }).is_ok()
            });
        if acknowledged {
            whole.insert(b"after a failed drop".to_vec(), b"synced".to_vec());
        }
        drop(db);
        disk.crash(keeps);
        if at.is_none() {
            dropped.as_ref().map_err(|e| format!("the drop failed without a fault: {e}"))?;
        }

        let db = Db::open(DB, quiet_options(&disk)).map_err(|e| format!("reopen: {e}"))?;
        let got_default = db.iter().collect::<shamba::Result<Pairs>>().map_err(|e| format!("scan default: {e}"))?;
        if got_default != default {
            return Err(format!("the default keyspace holds {} pairs of {}", got_default.len(), default.len()));
        }
        if db.keyspace_names().iter().any(|n| n == "ks") {
            if dropped.is_ok() {
                return Err("a drop that returned is undone by the crash".into());
            }
            let ks = db.keyspace("ks").map_err(|e| format!("keyspace: {e}"))?;
            let got = ks.iter().collect::<shamba::Result<Pairs>>().map_err(|e| format!("scan ks: {e}"))?;
            if got != whole {
                return Err(format!("ks is back with {} pairs of {}", got.len(), whole.len()));
            }
        } else {
            if acknowledged {
                return Err("a synced write to ks acknowledged after the failed drop is lost".into());
            }
            let names = disk.list(Path::new(DB)).map_err(|e| format!("list: {e}"))?;
            let left: Vec<&String> = tables.iter().filter(|t| names.contains(t)).collect();
            if !left.is_empty() {
                return Err(format!("ks is gone but its tables {left:?} stay after the reopen"));
            }
            // A new keyspace of the same name starts empty (no old record replays into it).
            let ks = db.keyspace("ks").map_err(|e| format!("recreate ks: {e}"))?;
            if ks.iter().next().is_some() {
                return Err("a keyspace made again under the dropped one's name is not empty".into());
            }
        }
        db.close().map_err(|e| format!("close: {e}"))?;
        Ok(ops)
    }

    #[test]
    fn a_crash_at_any_point_of_a_drop_leaves_the_keyspace_whole_or_gone() {
        let kinds = [
            (SimFault::Crash, CrashKeeps::Synced),
            (SimFault::Crash, CrashKeeps::Written),
            (SimFault::TornWrite, CrashKeeps::Written),
            (SimFault::Error, CrashKeeps::Synced),
            (SimFault::Error, CrashKeeps::Written),
            (SimFault::ShortWrite, CrashKeeps::Synced),
            (SimFault::ShortWrite, CrashKeeps::Written),
        ];
        at_every_operation("drop", 4, &kinds, run);
    }

    /// Two unsynced puts in one log, one per keyspace (`default_first` says which comes
    /// first), then a flush of both memtables, crashed at operation `at`: whichever
    /// keyspace's table is made durable first, the put acknowledged before its own must
    /// survive with it (the flush syncs the log first, which a flush with one keyspace
    /// need not do).
    fn flush_run(default_first: bool, at: Option<(u64, SimFault)>, keeps: CrashKeeps) -> Result<u64, String> {
        let disk = SimStorage::new();
        let mut opts = quiet_options(&disk);
        opts.lab.background_flushes = false;
        let db = Db::open(DB, opts.clone()).map_err(|e| format!("open: {e}"))?;
        let ks = db.keyspace("ks").map_err(|e| format!("keyspace: {e}"))?;
        let put = |in_default: bool, key: &[u8]| if in_default { db.put(key, b"v") } else { ks.put(key, b"v") };
        put(default_first, b"first").map_err(|e| format!("put: {e}"))?;
        put(!default_first, b"second").map_err(|e| format!("put: {e}"))?;
        let start = disk.ops();
        if let Some((n, fault)) = at {
            disk.fail_at(start + n, fault);
        }
        let _ = db.flush();
        let ops = disk.ops() - start;
        // The machine stops now: the close syncs nothing more.
        disk.fail_at(disk.ops(), SimFault::Crash);
        drop(ks);
        let _ = db.close();
        disk.crash(keeps);

        let db = Db::open(DB, opts).map_err(|e| format!("reopen: {e}"))?;
        let ks = db.keyspace("ks").map_err(|e| format!("keyspace: {e}"))?;
        let has = |in_default: bool, key: &[u8]| {
            if in_default { db.get(key) } else { ks.get(key) }.map(|v| v.is_some()).map_err(|e| format!("get: {e}"))
        };
        if has(!default_first, b"second")? && !has(default_first, b"first")? {
            return Err("the second put survived the first, acknowledged before it".into());
        }
        drop(ks);
        db.close().map_err(|e| format!("close: {e}"))?;
        Ok(ops)
    }

    #[test]
    fn a_flush_of_one_keyspace_never_outlives_a_write_of_another_before_it() {
        let kinds = [(SimFault::Crash, CrashKeeps::Synced)];
        for default_first in [true, false] {
            at_every_operation("flush", 4, &kinds, |at, keeps| flush_run(default_first, at, keeps));
        }
    }
}
