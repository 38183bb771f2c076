//! The public API's promises: errors for bad input, locking, persistence, iterators,
//! statistics.

#[cfg(feature = "lab")]
use shamba::lab::{DeviceModel, LabOptions};
use shamba::BlockKind;
use shamba::{CompactionFilter, CompactionStyle, Db, Error, FilterDecision, Options, Readable, WriteBatch};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

#[test]
fn second_open_of_the_same_directory_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert!(matches!(Db::open(dir.path(), Options::default()), Err(Error::Locked(_))));
    db.close().unwrap();
    Db::open(dir.path(), Options::default()).unwrap();
}

#[test]
fn bad_options_are_rejected_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let e = Db::open(dir.path(), Options { block_size: 0, ..Options::default() }).unwrap_err();
    assert!(matches!(&e, Error::InvalidOptions(m) if m.contains("block_size")), "{e}");
    let e = Db::open(dir.path(), Options { size_ratio: 1, ..Options::default() }).unwrap_err();
    assert!(matches!(&e, Error::InvalidOptions(m) if m.contains("size_ratio")), "{e}");
    let e = Db::open(dir.path(), Options { max_open_files: 15, ..Options::default() }).unwrap_err();
    assert!(matches!(&e, Error::InvalidOptions(m) if m.contains("max_open_files")), "{e}");
}

#[test]
fn oversized_keys_and_values_are_invalid_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options { max_key_size: 16, max_value_size: 32, ..Options::default() }).unwrap();
    assert!(matches!(db.put([0u8; 17], b"v"), Err(Error::InvalidArgument(_))));
    assert!(matches!(db.put(b"k", [0u8; 33]), Err(Error::InvalidArgument(_))));
    assert!(matches!(db.get([0u8; 17]), Err(Error::InvalidArgument(_))));
    let mut b = WriteBatch::new();
    b.put(b"ok", b"fine").put([1u8; 40], b"too long key");
    assert!(matches!(db.write(b), Err(Error::InvalidArgument(_))));
    assert_eq!(db.get(b"ok").unwrap(), None, "a rejected batch must apply nothing");
}

#[test]
fn missing_database_without_create_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = Db::open(dir.path().join("nope"), Options { create_if_missing: false, ..Options::default() }).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
}

#[test]
fn writes_survive_close_and_reopen_without_flush() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        db.put(b"a", b"1").unwrap();
        db.put(b"b", b"2").unwrap();
        db.delete(b"a").unwrap();
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    // And survive a second reopen after recovery flushed them.
    db.close().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
}

#[test]
fn closed_database_refuses_operations() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let other = db.clone();
    db.close().unwrap();
    assert!(matches!(other.put(b"k", b"v"), Err(Error::Closed)));
    assert!(matches!(other.get(b"k"), Err(Error::Closed)));
}

#[test]
fn an_iterator_made_after_close_yields_closed_then_ends() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let users = db.keyspace("users").unwrap();
    for i in 0..10u32 {
        db.put(format!("k{i}"), b"v").unwrap();
        users.put(format!("u{i}"), b"v").unwrap();
    }
    let snap = db.snapshot();
    let before = db.iter();
    let other = db.clone();
    db.close().unwrap();

    /// The first item is `Closed`, then nothing, in both directions.
    fn refused(mut it: shamba::DbIterator, what: &str) {
        assert!(matches!(it.next(), Some(Err(Error::Closed))), "{what}: the first item is Closed");
        assert!(it.next().is_none() && it.next_back().is_none(), "{what}: then it ends");
    }
    refused(other.iter(), "db.iter");
    refused(other.range(&b"k1"[..]..&b"k5"[..]), "db.range");
    refused(users.prefix(b"u"), "keyspace.prefix");
    refused(snap.iter(), "snapshot.iter");
    refused(snap.keyspace(&users).iter(), "snapshot.keyspace.iter");
    let mut back = other.iter();
    assert!(matches!(back.next_back(), Some(Err(Error::Closed))), "backward too");
    assert!(back.next().is_none());
    // A seek restarts a walk: it meets the closed database again.
    back.seek(b"k3");
    assert!(matches!(back.next(), Some(Err(Error::Closed))));
    assert!(back.next().is_none());
    // One made before the close reads to its end: it holds its files and memtables.
    assert_eq!(before.map(Result::unwrap).count(), 10);
}

#[test]
fn iterators_are_double_ended_and_respect_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny()).unwrap();
    for i in 0..500u32 {
        db.put(format!("k{i:04}"), format!("v{i}")).unwrap();
    }
    for i in (0..500u32).step_by(3) {
        db.delete(format!("k{i:04}")).unwrap();
    }
    db.flush().unwrap();
    let live: Vec<u32> = (0..500).filter(|i| i % 3 != 0).collect();
    let mut it = db.range(&b"k0100"[..]..=&b"k0200"[..]);
    let first = it.next().unwrap().unwrap();
    let last = it.next_back().unwrap().unwrap();
    assert_eq!(first.0, b"k0100".to_vec());
    assert_eq!(last.0, b"k0200".to_vec());
    let middle: Vec<_> = it.map(|kv| kv.unwrap().0).collect();
    let want: Vec<Vec<u8>> =
        live.iter().filter(|&&i| i > 100 && i < 200).map(|i| format!("k{i:04}").into_bytes()).collect();
    assert_eq!(middle, want);
    // Meeting in the middle yields every key once.
    let mut it = db.iter();
    let mut seen = Vec::new();
    loop {
        match (it.next(), it.next_back()) {
            (Some(a), Some(b)) => {
                seen.push(a.unwrap().0);
                seen.push(b.unwrap().0);
            }
            (Some(a), None) | (None, Some(a)) => seen.push(a.unwrap().0),
            (None, None) => break,
        }
    }
    seen.sort();
    assert_eq!(seen.len(), live.len());
}

#[test]
fn compaction_builds_levels_and_drops_deleted_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny()).unwrap();
    for i in 0..3000u32 {
        db.put(format!("key{:05}", (i * 7919) % 3000), vec![b'x'; 64]).unwrap();
    }
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    assert!(s.non_empty_levels() >= 2, "{:?}", s.levels);
    assert!(s.compactions > 0);
    for i in 0..3000u32 {
        db.delete(format!("key{i:05}")).unwrap();
    }
    db.compact().unwrap();
    let s = db.stats();
    assert_eq!(db.iter().count(), 0);
    assert_eq!(
        s.levels.iter().map(|l| l.entries).sum::<u64>(),
        0,
        "tombstones at the bottom must be dropped: {:?}",
        s.levels
    );
}

#[test]
fn snapshot_keeps_old_versions_through_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), tiny()).unwrap();
    db.put(b"k", b"old").unwrap();
    let snap = db.snapshot();
    db.put(b"k", b"new").unwrap();
    db.delete(b"gone-later").unwrap();
    db.compact().unwrap();
    assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"old"[..]));
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"new"[..]));
}

#[test]
fn tiered_compaction_keeps_several_runs_per_level() {
    let dir = tempfile::tempdir().unwrap();
    let db =
        Db::open(dir.path(), Options { compaction_style: CompactionStyle::Tiered, size_ratio: 4, ..tiny() }).unwrap();
    for i in 0..4000u32 {
        db.put(format!("key{:05}", (i * 7919) % 4000), vec![b'y'; 64]).unwrap();
    }
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    assert!(s.levels.iter().skip(1).any(|l| l.runs >= 1), "{:?}", s.levels);
    assert!(
        s.levels.iter().skip(1).all(|l| l.runs < 4),
        "a tiered level holds at most T-1 runs at rest: {:?}",
        s.levels
    );
    for i in 0..4000u32 {
        assert!(db.get(format!("key{i:05}")).unwrap().is_some());
    }
}

#[test]
fn lookups_are_counted_by_block_kind() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options { cache_capacity: 0, ..tiny() }).unwrap();
    for i in 0..2000u32 {
        db.put(format!("key{i:05}"), vec![b'z'; 32]).unwrap();
    }
    db.wait_for_compactions().unwrap();
    let before = db.stats();
    for i in 0..200u32 {
        assert!(db.get(format!("key{i:05}")).unwrap().is_some());
    }
    let after = db.stats();
    let io = after.io.since(&before.io);
    assert!(io.reads_of(BlockKind::Data) >= 200, "every hit reads a data block with no cache: {io:?}");
    assert!(io.bytes_of(BlockKind::Data) > 0);
    assert_eq!(after.gets - before.gets, 200);
}

#[test]
fn empty_lookups_rarely_read_data_blocks_thanks_to_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options { cache_capacity: 0, ..tiny() }).unwrap();
    for i in 0..2000u32 {
        db.put(format!("key{:05}", 2 * i), vec![b'z'; 32]).unwrap();
    }
    db.wait_for_compactions().unwrap();
    let before = db.stats();
    for i in 0..2000u32 {
        assert!(db.get(format!("key{:05}", 2 * i + 1)).unwrap().is_none());
    }
    let io = db.stats().io.since(&before.io);
    // 10 bits/key Bloom: about 1% false positives per probed table.
    assert!(io.reads_of(BlockKind::Data) < 2000 / 20, "too many data reads for empty lookups: {io:?}");
}

#[cfg(feature = "lab")]
#[test]
fn another_digest_hash_builds_and_probes_its_own_filters_and_a_mismatch_is_corruption() {
    use shamba::lab::filter::HashFn;
    let dir = tempfile::tempdir().unwrap();
    let murmur = Options { lab: LabOptions { digest_hash: HashFn::Murmur64A, ..LabOptions::default() }, ..tiny() };
    let db = Db::open(dir.path(), murmur.clone()).unwrap();
    for i in 0..2000u32 {
        db.put(format!("key{i:05}").as_bytes(), i.to_le_bytes()).unwrap();
    }
    db.compact().unwrap();
    for i in 0..2000u32 {
        assert_eq!(db.get(format!("key{i:05}").as_bytes()).unwrap(), Some(i.to_le_bytes().to_vec()));
    }
    let before = db.stats();
    for i in 0..2000u32 {
        assert_eq!(db.get(format!("key{i:05}x").as_bytes()).unwrap(), None);
    }
    let after = db.stats();
    let negatives = after.filter_negatives - before.filter_negatives;
    assert!(negatives >= 1900, "the MurmurHash64A filters answered only {negatives} of 2000 empty lookups");
    db.close().unwrap();

    // Reopened with the default digest, a table's filter cannot be probed: an error, never
    // a false negative.
    let db = Db::open(dir.path(), tiny()).unwrap();
    let e = db.get(b"key00001").unwrap_err();
    assert!(matches!(&e, Error::Corruption { .. }), "{e}");
    db.close().unwrap();
    let db = Db::open(dir.path(), murmur).unwrap();
    assert_eq!(db.get(b"key00001").unwrap(), Some(1u32.to_le_bytes().to_vec()));
}

#[test]
fn the_filter_policy_does_not_change_the_shape_of_the_tree() {
    use shamba::filter::{Allocation, FilterLayout, ModuleSizes};
    // Files of the tree loaded with `o`: written in chunks smaller than a memtable, each
    // flushed and its compactions finished before the next, so nothing races and the shape
    // depends on the data and the sizing rules alone.
    let shape = |o: Options| {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), o).unwrap();
        for chunk in 0..100u64 {
            for i in 0..100u64 {
                let id = (chunk * 100 + i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                db.put(id.to_be_bytes(), [7u8; 24]).unwrap();
            }
            db.flush().unwrap();
            db.wait_for_compactions().unwrap();
        }
        db.files().into_iter().map(|f| (f.level, f.smallest_key, f.largest_key, f.entries)).collect::<Vec<_>>()
    };
    for partitioned in [false, true] {
        let base = Options { partition_index_and_filters: partitioned, metadata_partition_size: 256, ..tiny() };
        let mut other = base.clone();
        other.filter_policy.ribbon_from_level = Some(1);
        other.filter_policy.allocation = Allocation::Monkey;
        other.filter_policy.layout = FilterLayout::Modules(ModuleSizes::Equal { count: 2 });
        let (a, b) = (shape(base), shape(other));
        assert!(a.iter().map(|f| f.0).max() >= Some(2), "a tree of at least three levels");
        assert_eq!(a, b, "partitioned: {partitioned}");
    }
}

#[cfg(feature = "lab")]
#[test]
fn writes_under_a_slowdown_are_paced_and_all_kept() {
    // Every table read costs 2 ms (an emulated slow device), so compactions fall behind
    // and L0 stays at its slowdown trigger: from then on 4 KiB puts, far quicker than
    // 16 MiB/s even in a debug build, go through the pacer (4 MB at that rate is a quarter
    // of a second of sleep), and nothing is lost. Frozen memtables may pile up, so that
    // the writer waits for the pacer, not for flushes.
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        write_buffer_size: 64 << 10,
        level0_compaction_trigger: 2,
        level0_slowdown_trigger: 2,
        level0_stop_trigger: 1000,
        max_immutable_memtables: 1000,
        lab: LabOptions { device: DeviceModel::PerRead { nanos: 2_000_000 }, ..LabOptions::default() },
        ..tiny()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let value = [7u8; 4096];
    // Two flushes in this thread put L0 at its slowdown trigger before the paced writes
    // begin: a writer that never waits for a sync outruns the background flushes, which
    // alone would leave L0 below the trigger for the whole loop.
    for round in 0..2u32 {
        db.put(format!("early{round}"), value).unwrap();
        db.flush().unwrap();
    }
    for i in 0..1000u32 {
        db.put(format!("key{i:06}"), value).unwrap();
    }
    let s = db.stats();
    assert!(s.delayed_micros > 0, "the pacer never delayed a write: L0 {:?}", s.levels[0]);
    assert_eq!(s.stall_micros(), s.delayed_micros + s.stopped_for_flush_micros + s.stopped_for_compaction_micros);
    db.close().unwrap();
    let db = Db::open(dir.path(), tiny()).unwrap();
    for i in (0..1000u32).step_by(7) {
        assert_eq!(db.get(format!("key{i:06}")).unwrap().as_deref(), Some(&value[..]), "key {i}");
    }
}

/// The names of the tables in `dir`, sorted.
fn tables_on_disk(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    names.sort();
    names
}

#[test]
fn a_compaction_deletes_its_inputs_as_soon_as_it_installs_its_outputs() {
    let dir = tempfile::tempdir().unwrap();
    // L0 compacts at 10 files: the four flushes below stay in L0 until `compact`.
    let opts = Options { level0_compaction_trigger: 10, ..Options::default() };
    let db = Db::open(dir.path(), opts).unwrap();
    for round in 0..4u32 {
        for i in 0..500u32 {
            db.put(format!("k{:05}", i * 4 + round), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    let on_disk = || tables_on_disk(dir.path());
    assert_eq!(on_disk().len(), 4, "four flushed tables");
    // No flush, no other compaction and no reopen after this one: it deletes its own inputs.
    db.compact().unwrap();
    let mut live: Vec<String> = db.files().iter().map(|f| format!("{:06}.sst", f.number)).collect();
    live.sort();
    assert_eq!(on_disk(), live, "only the compaction's outputs are left");
    assert_eq!(db.get(b"k01999").unwrap().as_deref(), Some(&b"v"[..]));
}

/// Holds the first merge into L1 until released, and says when it holds it.
struct HoldFirstMergeIntoL1 {
    holding: Mutex<Option<Sender<()>>>,
    release: Mutex<Receiver<()>>,
}

impl CompactionFilter for HoldFirstMergeIntoL1 {
    fn filter(&self, level: usize, _key: &[u8], _value: &[u8]) -> FilterDecision {
        if level == 1 {
            if let Some(holding) = self.holding.lock().unwrap().take() {
                holding.send(()).unwrap();
                let _ = self.release.lock().unwrap().recv();
            }
        }
        FilterDecision::Keep
    }
}

#[test]
fn a_background_compaction_deletes_its_inputs_with_no_call_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (holding_tx, holding) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    let gate = HoldFirstMergeIntoL1 { holding: Mutex::new(Some(holding_tx)), release: Mutex::new(release_rx) };
    let opts = Options { level0_compaction_trigger: 4, compaction_filter: Some(Arc::new(gate)), ..Options::default() };
    let db = Db::open(dir.path(), opts).unwrap();
    let tables_on_disk = || tables_on_disk(dir.path());
    // The fourth flush wakes the compaction thread, whose merge of the four overlapping
    // tables is held until the flush has returned (and run its own pass, which finds the
    // inputs live). Nothing is called after the merge that deletes files itself: only the
    // purge thread, asked by the compaction, can.
    for round in 0..4u32 {
        for i in 0..500u32 {
            db.put(format!("k{:05}", i * 4 + round), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    holding.recv_timeout(Duration::from_secs(60)).expect("the four tables are merged into L1");
    assert_eq!(tables_on_disk().len(), 4, "the inputs are live while their merge is held");
    release.send(()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut live: Vec<String> = db.files().iter().map(|f| format!("{:06}.sst", f.number)).collect();
        live.sort();
        if db.stats().levels[0].files == 0 && tables_on_disk() == live {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the compaction's inputs are still on disk: {:?} against live {live:?}",
            tables_on_disk()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(db.get(b"k01999").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn tables_an_iterator_kept_past_their_compaction_are_deleted_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let sst = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".sst"))
            .count()
    };
    let db = Db::open(dir.path(), Options { level0_compaction_trigger: 10, ..Options::default() }).unwrap();
    for round in 0..4u32 {
        for i in 0..300u32 {
            db.put(format!("k{:05}", i * 4 + round), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    // The iterator holds the version of the four flushed tables through the compaction.
    let iter = db.iter();
    db.compact().unwrap();
    assert_eq!(sst(dir.path()), 4 + db.files().len(), "the held inputs stay while the iterator lives");
    drop(iter);
    let live = db.files().len();
    db.close().unwrap();
    assert_eq!(sst(dir.path()), live, "closing leaves only live tables");
}
