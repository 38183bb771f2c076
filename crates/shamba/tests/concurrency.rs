//! Readers, a writer and background compaction at once: every snapshot read sees exactly
//! one moment of the database.

use shamba::{Db, Options, Readable, WriteBatch};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const KEYS: u32 = 64;

fn key(i: u32) -> Vec<u8> {
    format!("shared-{i:04}").into_bytes()
}

/// Every batch sets all keys to the same round number (with a filler that makes flushes
/// and compactions frequent), so a consistent view has one round everywhere.
fn round_of(v: &[u8]) -> u64 {
    let s = std::str::from_utf8(v).expect("utf8");
    s.split(':').next().and_then(|r| r.parse().ok()).expect("round")
}

/// A database of small memtables, files and levels (so flushes and compactions are
/// frequent) holding every key at round 0; the directory lives as long as the result.
fn small_tree_at_round_zero() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = Options {
        write_buffer_size: 32 << 10,
        target_file_size: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        size_ratio: 3,
        level0_compaction_trigger: 2,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).expect("open");
    let mut first = WriteBatch::new();
    for i in 0..KEYS {
        first.put(key(i), b"0:");
    }
    db.write(first).expect("first batch");
    (dir, db)
}

#[test]
fn snapshot_reads_see_exactly_one_moment_while_writes_and_compactions_run() {
    let (_dir, db) = small_tree_at_round_zero();
    let stop = Arc::new(AtomicBool::new(false));

    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let filler = "f".repeat(200);
            let mut round = 1u64;
            while !stop.load(Ordering::Relaxed) && round < 3000 {
                let mut b = WriteBatch::new();
                for i in 0..KEYS {
                    b.put(key(i), format!("{round}:{filler}"));
                }
                db.write(b).expect("write");
                round += 1;
            }
            round
        })
    };

    let readers: Vec<_> = (0..3)
        .map(|r| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut last_round = 0;
                for step in 0..150 {
                    let snap = db.snapshot();
                    let by_get: Vec<u64> =
                        (0..KEYS).map(|i| round_of(&snap.get(key(i)).expect("get").expect("present"))).collect();
                    let round = by_get[0];
                    assert!(
                        by_get.iter().all(|&x| x == round),
                        "reader {r}: gets of one snapshot saw rounds {by_get:?}"
                    );
                    assert!(round >= last_round, "reader {r}: time went backward: {round} < {last_round}");
                    last_round = round;
                    // A scan of the same snapshot, possibly after more writes, sees the same round.
                    let mut n = 0;
                    let it: Box<dyn Iterator<Item = _>> =
                        if step % 2 == 0 { Box::new(snap.iter()) } else { Box::new(snap.iter().rev()) };
                    for kv in it {
                        let (_, v) = kv.expect("scan");
                        assert_eq!(round_of(&v), round, "reader {r}: scan of a snapshot saw another round");
                        n += 1;
                    }
                    assert_eq!(n, KEYS, "reader {r}: scan saw {n} keys");
                }
            })
        })
        .collect();
    for r in readers {
        r.join().expect("reader panicked");
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = writer.join().expect("writer panicked");
    db.wait_for_compactions().expect("settle");
    let stats = db.stats();
    assert!(stats.flushes > 0 && stats.compactions > 0, "no background work happened: {stats:?}");
    let last = round_of(&db.get(key(0)).expect("get").expect("present"));
    assert_eq!(last, rounds - 1);
}

/// More reader threads than a database has reader slots (32), so some share one, while a
/// writer's flushes and compactions install super version after super version: every
/// lookup sees a round at least as new as the one it saw before, each is counted exactly
/// once (every key exists, so a memtable or exactly one table answers each), and readers
/// gone idle keep no replaced table on disk.
#[test]
fn lookups_from_more_threads_than_slots_count_exactly_and_idle_readers_keep_no_replaced_table() {
    const READERS: u64 = 40;
    const ROUNDS: u64 = 60;
    let (dir, db) = small_tree_at_round_zero();
    let before = db.stats();
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..READERS)
        .map(|t| {
            let (db, done) = (db.clone(), done.clone());
            std::thread::spawn(move || {
                let mut seen = [0u64; KEYS as usize];
                let mut gets = 0u64;
                // At least a few lookups each, then until the writer is done.
                while gets < 50 || !done.load(Ordering::Relaxed) {
                    let i = ((t * 7 + gets) % u64::from(KEYS)) as usize;
                    let v = db.get(key(i as u32)).expect("get").expect("every key exists");
                    let round = round_of(&v);
                    assert!(round >= seen[i], "key {i}: round {round} after {}", seen[i]);
                    seen[i] = round;
                    gets += 1;
                }
                gets
            })
        })
        .collect();
    for round in 1..=ROUNDS {
        let mut b = WriteBatch::new();
        for i in 0..KEYS {
            b.put(key(i), format!("{round}:{}", "x".repeat(200)));
        }
        db.write(b).expect("write");
    }
    done.store(true, Ordering::Relaxed);
    let gets: u64 = readers.into_iter().map(|r| r.join().expect("reader")).sum();
    let after = db.stats();
    assert!(after.flushes - before.flushes >= 10, "installs happened while reading");
    assert_eq!(after.gets - before.gets, gets);
    let answered = (after.memtable_hits - before.memtable_hits) + (after.table_hits - before.table_hits);
    assert_eq!(answered, gets, "one memtable or table answers each lookup");
    let levels: u64 = after.lookup_levels.iter().map(|l| l.hits).sum();
    assert_eq!(levels, after.table_hits);

    // A compaction deletes its inputs once installed; readers gone idle hold no replaced
    // version (a last write and flush add a table of their own).
    db.compact().expect("compact");
    db.put(b"last", b"0:").expect("put");
    db.flush().expect("flush");
    let live: std::collections::HashSet<String> = db.files().iter().map(|f| format!("{:06}.sst", f.number)).collect();
    let on_disk: std::collections::HashSet<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    assert_eq!(on_disk, live, "only the live tables are left");
}
