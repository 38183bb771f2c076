//! Tests of the version set against a real directory: recovery, rollover, damage.

use super::file_meta::tests::file;
use super::*;
use crate::error::Error;
use crate::io::{FaultPlan, FaultyStorage, FsStorage, Storage};
use std::path::Path;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;

fn fs() -> Arc<dyn Storage> {
    Arc::new(FsStorage)
}

fn add(level: usize, n: u64, run: u64, lo: &[u8], hi: &[u8]) -> VersionEdit {
    VersionEdit { new_files: vec![(level, file(n, run, lo, hi))], ..VersionEdit::default() }
}

/// A flush of file `n` to L0, then a compaction of it into L1's run, with sequence numbers.
fn grow(set: &mut VersionSet, rounds: u64) {
    for i in 0..rounds {
        let n = set.new_file_number();
        let lo = format!("k{i:03}");
        set.set_last_sequence(set.last_sequence() + 10);
        set.log_and_apply(add(0, n, n, lo.as_bytes(), format!("{lo}z").as_bytes())).unwrap();
        let mut down = add(1, n, 1, lo.as_bytes(), format!("{lo}z").as_bytes());
        down.deleted_files.push((0, n));
        down.compact_pointers.push((1, lo.into_bytes()));
        set.log_and_apply(down).unwrap();
    }
}

fn recover(dir: &Path) -> crate::Result<(VersionSet, RecoveredState)> {
    VersionSet::recover(fs(), dir, 4)
}

#[test]
fn a_new_database_recovers_empty() {
    let dir = tempfile::tempdir().unwrap();
    let set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    assert!(set.manifest_path().exists());
    assert!(VersionSet::create(fs(), dir.path(), 4).is_err(), "a second create must not clobber the first");
    let (got, state) = recover(dir.path()).unwrap();
    assert_eq!(*got.current(0).unwrap(), Version::new(4));
    assert_eq!((state.log_number, state.last_sequence), (0, 0));
    assert!(state.next_file_number > set.manifest_number());
}

#[test]
fn recovery_after_several_edits_equals_the_version_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    grow(&mut set, 5);
    let wal = set.new_file_number();
    set.log_and_apply(VersionEdit { log_number: Some(wal), ..add(0, 100, 100, b"a", b"b") }).unwrap();
    let (got, state) = recover(dir.path()).unwrap();
    assert_eq!(*got.current(0).unwrap(), *set.current(0).unwrap());
    assert_eq!(state.log_number, wal);
    assert_eq!(state.last_sequence, 50);
    assert!(state.next_file_number > 100);
    assert!(!state.dropped_manifest_tail);
    assert_eq!(got.compact_pointer(1), Some(&b"k004"[..]));
    assert_eq!(got.compact_pointer(2), None);
    // Recovery starts a new manifest and points CURRENT at it.
    assert_ne!(got.manifest_number(), set.manifest_number());
    let current = std::fs::read_to_string(dir.path().join(CURRENT)).unwrap();
    assert_eq!(current, format!("{}\n", manifest_file_name(got.manifest_number())));
    assert!(!got.live_files().contains(&set.manifest_number()));
    // And recovering again from that one gives the same tree.
    let (again, _) = recover(dir.path()).unwrap();
    assert_eq!(*again.current(0).unwrap(), *set.current(0).unwrap());
}

#[test]
fn manifest_rolls_over_past_its_limit_and_current_follows() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    set.set_manifest_limit(300);
    let first = set.manifest_number();
    grow(&mut set, 10);
    assert_ne!(set.manifest_number(), first);
    let current = std::fs::read_to_string(dir.path().join(CURRENT)).unwrap();
    assert_eq!(current.trim_end(), manifest_file_name(set.manifest_number()));
    let live = set.live_files();
    assert!(live.contains(&set.manifest_number()) && !live.contains(&first));
    let (got, state) = recover(dir.path()).unwrap();
    assert_eq!(*got.current(0).unwrap(), *set.current(0).unwrap());
    assert_eq!(state.last_sequence, 100);
}

#[test]
fn a_torn_manifest_tail_loses_only_the_last_edit() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    grow(&mut set, 3);
    let before = set.current(0).unwrap();
    set.log_and_apply(add(2, 500, 7, b"x", b"y")).unwrap();
    let path = set.manifest_path();
    let len = std::fs::metadata(&path).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(len - 5).unwrap();
    drop(f);
    let (got, state) = recover(dir.path()).unwrap();
    assert_eq!(*got.current(0).unwrap(), *before);
    assert!(state.dropped_manifest_tail);
}

#[test]
fn a_flipped_byte_in_the_manifest_middle_is_corruption_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    grow(&mut set, 4);
    let path = set.manifest_path();
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    match recover(dir.path()) {
        Err(Error::Corruption { file, offset: Some(_), .. }) => assert_eq!(file, path),
        other => panic!("expected corruption naming {}, got {other:?}", path.display()),
    }
}

#[test]
fn a_manifest_edit_that_does_not_apply_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    let path = set.manifest_path();
    drop(set);
    // Rewrite it as a snapshot followed by a well-formed edit deleting a file that never
    // existed: every checksum holds, the history does not.
    let mut log = crate::wal::LogWriter::new(FsStorage.create(&path).unwrap());
    for edit in [
        VersionEdit {
            log_number: Some(0),
            next_file_number: Some(2),
            last_sequence: Some(0),
            ..VersionEdit::default()
        },
        VersionEdit { deleted_files: vec![(1, 77)], ..VersionEdit::default() },
    ] {
        let mut rec = Vec::new();
        edit.encode(&mut rec);
        log.add_record(&rec).unwrap();
    }
    log.sync().unwrap();
    drop(log);
    let err = recover(dir.path()).unwrap_err();
    assert!(matches!(&err, Error::Corruption { file, .. } if file == &path), "{err}");
}

#[test]
fn fewer_levels_than_the_database_has_is_invalid_options() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    set.log_and_apply(add(3, 9, 1, b"a", b"b")).unwrap();
    assert!(matches!(VersionSet::recover(fs(), dir.path(), 3), Err(Error::InvalidOptions(_))));
}

#[test]
fn a_bad_edit_is_an_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    grow(&mut set, 2);
    let before = set.current(0).unwrap();
    let del = VersionEdit { deleted_files: vec![(1, 12345)], ..VersionEdit::default() };
    assert!(matches!(set.log_and_apply(del), Err(Error::InvalidArgument(_))));
    assert!(matches!(set.log_and_apply(add(9, 7, 1, b"a", b"b")), Err(Error::InvalidArgument(_))));
    let backwards = VersionEdit { log_number: Some(0), ..VersionEdit::default() };
    set.log_and_apply(VersionEdit { log_number: Some(set.next_file_number() - 1), ..VersionEdit::default() }).unwrap();
    assert!(set.log_and_apply(backwards).is_err());
    assert_eq!(*set.current(0).unwrap(), *before);
    let (got, _) = recover(dir.path()).unwrap();
    assert_eq!(*got.current(0).unwrap(), *before);
}

#[test]
fn files_of_versions_held_by_readers_stay_live() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    set.log_and_apply(add(0, 10, 10, b"a", b"c")).unwrap();
    let reader = set.current(0).unwrap();
    let mut compact = add(1, 11, 1, b"a", b"c");
    compact.deleted_files.push((0, 10));
    set.log_and_apply(compact).unwrap();
    let live = set.live_files();
    assert!(live.contains(&10) && live.contains(&11) && live.contains(&set.manifest_number()));
    drop(reader);
    let live = set.live_files();
    assert!(!live.contains(&10) && live.contains(&11));
}

#[test]
fn a_failed_manifest_write_installs_nothing_and_the_next_edit_starts_a_new_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let plan = Arc::new(FaultPlan::default());
    let storage: Arc<dyn Storage> = Arc::new(FaultyStorage::new(FsStorage, Arc::clone(&plan)));
    let mut set = VersionSet::create(Arc::clone(&storage), dir.path(), 4).unwrap();
    set.log_and_apply(add(0, 10, 10, b"a", b"c")).unwrap();
    let before = set.current(0).unwrap();
    let first_manifest = set.manifest_number();
    plan.fail_syncs.store(true, SeqCst);
    assert!(set.log_and_apply(add(0, 11, 11, b"d", b"e")).is_err());
    assert_eq!(*set.current(0).unwrap(), *before);
    // Still failing: the roll-over cannot switch CURRENT either.
    assert!(set.log_and_apply(add(0, 12, 12, b"d", b"e")).is_err());
    assert!(set.live_files().contains(&first_manifest));
    plan.fail_syncs.store(false, SeqCst);
    set.log_and_apply(add(0, 13, 13, b"f", b"g")).unwrap();
    assert_ne!(set.manifest_number(), first_manifest);
    let (got, _) = VersionSet::recover(storage, dir.path(), 4).unwrap();
    assert_eq!(*got.current(0).unwrap(), *set.current(0).unwrap());
    let numbers: Vec<u64> = got.current(0).unwrap().file_numbers().collect();
    assert_eq!(numbers.len(), 2);
}

#[test]
fn file_numbers_found_on_disk_are_never_reused() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    set.mark_file_number_used(40);
    assert_eq!(set.new_file_number(), 41);
    set.mark_file_number_used(3);
    assert_eq!(set.new_file_number(), 42);
}

#[test]
fn current_naming_a_missing_manifest_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    std::fs::remove_file(set.manifest_path()).unwrap();
    let err = recover(dir.path()).unwrap_err();
    assert!(matches!(&err, Error::Corruption { file, .. } if file == &set.manifest_path()), "{err}");
    std::fs::remove_file(dir.path().join(CURRENT)).unwrap();
    assert!(matches!(recover(dir.path()), Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound));
}

/// Every edit of a manifest, decoded.
fn manifest_edits(set: &VersionSet) -> Vec<VersionEdit> {
    let bytes = std::fs::read(set.manifest_path()).unwrap();
    let log = crate::wal::read_log_report(&bytes, &set.manifest_path(), crate::options::WalRecovery::TolerateTornTail)
        .unwrap();
    log.records.iter().map(|r| VersionEdit::decode(&r.data).unwrap()).collect()
}

#[test]
fn a_database_without_keyspaces_writes_no_keyspace_field_and_one_with_them_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = VersionSet::create(fs(), dir.path(), 4).unwrap();
    grow(&mut set, 3);
    let (mut set, _) = recover(dir.path()).unwrap();
    let n = set.new_file_number();
    set.log_and_apply(add(0, n, n, b"x", b"y")).unwrap();
    // A release from before keyspaces refuses fields it does not know: none is written.
    for edit in manifest_edits(&set) {
        assert_eq!(edit.keyspace, DEFAULT_KEYSPACE);
        assert!(edit.create_keyspace.is_none() && !edit.drop_keyspace && edit.next_keyspace.is_none(), "{edit:?}");
    }
    // A keyspace, created and dropped: ids are never reused, across a recovery too.
    let record = KeyspaceRecord { name: "ks".into(), style: crate::options::CompactionStyle::Tiered, size_ratio: 4 };
    let id = set.next_keyspace();
    let log_number = set.new_file_number();
    let create = VersionEdit {
        keyspace: id,
        create_keyspace: Some(record.clone()),
        log_number: Some(log_number),
        ..VersionEdit::default()
    };
    set.log_and_apply(create.clone()).unwrap();
    assert!(set.log_and_apply(create).is_err(), "created twice");
    set.log_and_apply(VersionEdit { keyspace: id, ..add(0, 900, 900, b"a", b"b") }).unwrap();
    assert_eq!(set.keyspaces(), vec![(DEFAULT_KEYSPACE, None), (id, Some(record))]);
    // Read back without writing (a recovery would start a manifest this set does not use).
    let (versions, _) = VersionSet::read_only(fs(), dir.path(), 4).unwrap();
    let files: Vec<(u32, Vec<u64>)> = versions.iter().map(|(k, v)| (*k, v.file_numbers().collect())).collect();
    assert_eq!(files.last(), Some(&(id, vec![900])));
    set.log_and_apply(VersionEdit { keyspace: id, drop_keyspace: true, ..VersionEdit::default() }).unwrap();
    assert!(set.current(id).is_none());
    assert!(!set.live_files().contains(&900), "a dropped keyspace's tables are obsolete");
    let (got, _) = recover(dir.path()).unwrap();
    assert_eq!(got.keyspaces().len(), 1);
    assert_eq!(got.next_keyspace(), id + 1, "the next id survives the drop and the recovery");
    assert!(got.current(id).is_none());
    let mut got = got;
    let edit = VersionEdit { keyspace: id, ..add(0, 901, 901, b"a", b"b") };
    assert!(got.log_and_apply(edit).is_err(), "an edit of a dropped keyspace");
}
