//! Compaction filters: a keyspace's say over each value its compactions read. Remove, change
//! and keep do what they say; a removed key does not uncover an older version of itself; a
//! value a live snapshot may read is not filtered; the filter is a setting of the process
//! (a database opened without it keeps everything), and each keyspace has its own.

use shamba::{CompactionFilter, Db, FilterDecision, KeyspaceOptions, ManualClock, Options, Readable, Ttl};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

/// Removes `tmp/` keys, upper-cases `up/` values, keeps the rest; counts its calls.
#[derive(Default)]
struct Tidy {
    calls: AtomicUsize,
}

impl CompactionFilter for Tidy {
    fn filter(&self, _level: usize, key: &[u8], value: &[u8]) -> FilterDecision {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if key.starts_with(b"tmp/") {
            FilterDecision::Remove
        } else if key.starts_with(b"up/") {
            FilterDecision::ChangeValue(value.to_ascii_uppercase())
        } else {
            FilterDecision::Keep
        }
    }

    fn name(&self) -> &str {
        "tidy"
    }
}

fn opts(filter: Option<Arc<Tidy>>) -> Options {
    Options {
        write_buffer_size: 16 << 10,
        compaction_filter: filter.map(|f| f as Arc<dyn CompactionFilter>),
        ..Options::default()
    }
}

fn get(r: &impl Readable, key: &str) -> Option<String> {
    r.get(key).unwrap().map(|v| String::from_utf8(v).unwrap())
}

#[test]
fn remove_change_and_keep_do_what_they_say() {
    let dir = tempfile::tempdir().unwrap();
    let tidy = Arc::new(Tidy::default());
    let db = Db::open(dir.path(), opts(Some(tidy.clone()))).unwrap();
    for (k, v) in [("tmp/a", "scratch"), ("up/b", "quiet"), ("keep/c", "as is")] {
        db.put(k, v).unwrap();
    }
    db.flush().unwrap();
    assert_eq!(tidy.calls.load(Ordering::Relaxed), 0, "a flush does not filter");
    assert_eq!(get(&db, "tmp/a").as_deref(), Some("scratch"));
    db.compact().unwrap();
    assert_eq!(tidy.calls.load(Ordering::Relaxed), 3);
    assert_eq!(get(&db, "tmp/a"), None);
    assert_eq!(get(&db, "up/b").as_deref(), Some("QUIET"));
    assert_eq!(get(&db, "keep/c").as_deref(), Some("as is"));
    let entries: u64 = db.files().iter().map(|f| f.entries).sum();
    assert_eq!(entries, 2, "at the bottom a removed key leaves nothing behind");
}

#[test]
fn a_removed_key_does_not_uncover_its_older_version_and_snapshots_read_what_they_read() {
    let dir = tempfile::tempdir().unwrap();
    let tidy = Arc::new(Tidy::default());
    let db = Db::open(dir.path(), opts(Some(tidy.clone()))).unwrap();
    db.put("tmp/a", "old").unwrap();
    db.put("up/b", "old").unwrap();
    let old = db.snapshot();
    db.put("tmp/a", "new").unwrap();
    db.put("up/b", "new").unwrap();
    db.compact().unwrap();
    // Above the snapshot: filtered. The removal is a tombstone over the old version, which
    // the snapshot still reads and so stays.
    assert_eq!(get(&db, "tmp/a"), None, "the old version must not come back");
    assert_eq!(db.iter().map(|kv| kv.unwrap().0).collect::<Vec<_>>(), [b"up/b".to_vec()]);
    assert_eq!(get(&db, "up/b").as_deref(), Some("NEW"));
    assert_eq!(get(&old, "tmp/a").as_deref(), Some("old"));
    assert_eq!(get(&old, "up/b").as_deref(), Some("old"), "a value a snapshot reads is not filtered");

    // A value the snapshot reads as the newest is left as it is while the snapshot lives.
    db.put("tmp/c", "seen").unwrap();
    let sees_c = db.snapshot();
    db.compact().unwrap();
    assert_eq!(get(&db, "tmp/c").as_deref(), Some("seen"));
    assert_eq!(get(&sees_c, "tmp/c").as_deref(), Some("seen"));
    drop((old, sees_c));
    db.compact().unwrap();
    assert_eq!((get(&db, "tmp/a"), get(&db, "tmp/c")), (None, None));
    assert_eq!(get(&db, "up/b").as_deref(), Some("NEW"));
    let entries: u64 = db.files().iter().map(|f| f.entries).sum();
    assert_eq!(entries, 1, "with no snapshot, removed keys and their old versions are gone");
}

#[test]
fn a_database_opened_without_its_filter_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(Some(Arc::new(Tidy::default())))).unwrap();
    db.put("tmp/a", "kept until compacted").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts(None)).unwrap();
    db.put("tmp/b", "b").unwrap();
    db.compact().unwrap();
    assert_eq!(get(&db, "tmp/a").as_deref(), Some("kept until compacted"));
    assert_eq!(get(&db, "tmp/b").as_deref(), Some("b"));
}

#[test]
fn each_keyspace_has_its_own_filter() {
    let dir = tempfile::tempdir().unwrap();
    let (default_filter, scratch_filter) = (Arc::new(Tidy::default()), Arc::new(Tidy::default()));
    let scratch_opts = KeyspaceOptions {
        compaction_filter: Some(scratch_filter.clone() as Arc<dyn CompactionFilter>),
        ..KeyspaceOptions::default()
    };
    let db = Db::open(dir.path(), opts(Some(default_filter.clone()))).unwrap();
    let scratch = db.keyspace_with("scratch", scratch_opts.clone()).unwrap();
    let plain = db.keyspace("plain").unwrap();
    assert!(plain.options().compaction_filter.is_none(), "the default keyspace's filter is its own");
    for ks in [&scratch, &plain] {
        ks.put("tmp/a", "x").unwrap();
        ks.compact().unwrap();
    }
    assert_eq!(get(&scratch, "tmp/a"), None);
    assert_eq!(get(&plain, "tmp/a").as_deref(), Some("x"));
    assert_eq!(default_filter.calls.load(Ordering::Relaxed), 0);
    assert_eq!(scratch_filter.calls.load(Ordering::Relaxed), 1);
    // The same options again are the keyspace's options: the filter compares by identity.
    assert!(db.keyspace_with("scratch", scratch_opts).is_ok());
    assert_eq!(format!("{:?}", scratch.options().compaction_filter), "Some(CompactionFilter(\"tidy\"))");
}

#[test]
fn the_filter_sees_an_expiring_value_without_its_deadline_and_never_an_expired_one() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(UNIX_EPOCH + Duration::from_secs(1_700_000_000)));
    let tidy = Arc::new(Tidy::default());
    let db = Db::open(dir.path(), Options { clock: clock.clone(), ..opts(Some(tidy.clone())) }).unwrap();
    db.put_with_ttl("up/a", "lives", Duration::from_secs(60)).unwrap();
    db.put_with_ttl("up/b", "expires", Duration::from_secs(1)).unwrap();
    clock.advance(Duration::from_secs(1));
    db.compact().unwrap();
    assert_eq!(tidy.calls.load(Ordering::Relaxed), 1);
    assert_eq!(get(&db, "up/a").as_deref(), Some("LIVES"));
    assert_eq!(db.ttl("up/a").unwrap(), Ttl::Remaining(Duration::from_secs(59)), "the change keeps the deadline");
    assert_eq!(get(&db, "up/b"), None);
}
