//! Subcompactions (`Options::max_subcompactions`): a large merge split into key ranges
//! merged on threads side by side must keep exactly what the same merge keeps unsplit:
//! the newest version of each key, the versions a snapshot reads, no deleted key, and
//! files that stay disjoint within each level.

use shamba::{Db, FileInfo, Options, Readable};
use std::collections::BTreeMap;

fn key(i: u32) -> Vec<u8> {
    format!("key-{:08}", (u64::from(i) * 2_654_435_761) % 1_000_003).into_bytes()
}

fn options(subcompactions: usize) -> Options {
    Options {
        write_buffer_size: 16 << 10,
        target_file_size: 8 << 10,
        max_bytes_for_level_base: 32 << 10,
        level0_compaction_trigger: 4,
        num_levels: 5,
        block_size: 512,
        max_subcompactions: subcompactions,
        ..Options::default()
    }
}

/// What one database ends with after the same writes: its contents, what a snapshot taken
/// halfway reads, the subcompactions it ran, and its files.
struct Outcome {
    now: Vec<(Vec<u8>, Vec<u8>)>,
    at_snapshot: Vec<(Vec<u8>, Vec<u8>)>,
    subcompactions: u64,
    files: Vec<FileInfo>,
}

/// Puts, overwrites and deletes over 3,000 keys, a snapshot held across the second half;
/// checked against a model at both points.
fn run(subcompactions: usize) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), options(subcompactions)).expect("open");
    let mut model = BTreeMap::new();
    for round in 0..3u32 {
        for i in 0..3_000u32 {
            let v = format!("value-{round}-{i}-{}", "x".repeat((i % 7) as usize * 10)).into_bytes();
            db.put(key(i), &v).expect("put");
            model.insert(key(i), v);
        }
        for i in (round..3_000).step_by(5) {
            db.delete(key(i)).expect("delete");
            model.remove(&key(i));
        }
    }
    let snapshot = db.snapshot();
    let at_snapshot_model = model.clone();
    for i in (0..3_000u32).step_by(3) {
        let v = format!("late-{i}").into_bytes();
        db.put(key(i), &v).expect("put");
        model.insert(key(i), v);
    }
    db.flush().expect("flush");
    db.wait_for_compactions().expect("settle");

    let read = |it: shamba::DbIterator| it.map(|e| e.expect("entry")).collect::<Vec<_>>();
    let now = read(db.iter());
    assert_eq!(now, model.into_iter().collect::<Vec<_>>(), "contents after the merges");
    let at_snapshot = read(snapshot.iter());
    assert_eq!(at_snapshot, at_snapshot_model.into_iter().collect::<Vec<_>>(), "the snapshot's view");
    assert!(db.verify().expect("verify").is_ok());
    Outcome { now, at_snapshot, subcompactions: db.stats().subcompactions, files: db.files() }
}

fn assert_levels_disjoint(files: &[FileInfo]) {
    let deepest = files.iter().map(|f| f.level).max().unwrap_or(0);
    for level in 1..=deepest {
        let mut in_level: Vec<&FileInfo> = files.iter().filter(|f| f.level == level).collect();
        in_level.sort_by(|a, b| a.smallest_key.cmp(&b.smallest_key));
        for pair in in_level.windows(2) {
            assert!(pair[0].largest_key < pair[1].smallest_key, "L{level}: two files overlap");
        }
    }
}

#[test]
fn split_merges_keep_what_one_merge_keeps() {
    let split = run(3);
    let whole = run(1);
    assert!(split.subcompactions > 0, "the merges were split");
    assert_eq!(whole.subcompactions, 0, "one thread per merge when subcompactions are off");
    assert_eq!(split.now, whole.now);
    assert_eq!(split.at_snapshot, whole.at_snapshot);
    assert_levels_disjoint(&split.files);
    assert_levels_disjoint(&whole.files);
}
