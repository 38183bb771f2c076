//! Readers, a writer and background compaction at once: every snapshot read sees exactly
//! one moment of the database.

use shamba::{Db, Options, WriteBatch};
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

#[test]
fn snapshot_reads_see_exactly_one_moment_while_writes_and_compactions_run() {
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
