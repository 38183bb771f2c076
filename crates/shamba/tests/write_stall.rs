//! Writes and the compaction debt: `Stats::pending_compaction_bytes` reports the bytes the
//! levels hold beyond their targets, writes stop while it is at
//! `Options::pending_compaction_stop_bytes`, and go on, every one kept, once a compaction
//! pays it.

use shamba::{CompactionFilter, Db, FilterDecision, Options, Readable};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Once closed, holds every merge into `level` until opened, and says once that it holds
/// one.
struct Gate {
    level: usize,
    closed: Mutex<bool>,
    opened: Condvar,
    holding: Mutex<Option<Sender<()>>>,
}

impl Gate {
    fn new(level: usize) -> Gate {
        Gate { level, closed: Mutex::new(false), opened: Condvar::new(), holding: Mutex::new(None) }
    }

    fn close(&self, holding: Sender<()>) {
        *self.holding.lock().unwrap() = Some(holding);
        *self.closed.lock().unwrap() = true;
    }

    fn open(&self) {
        *self.closed.lock().unwrap() = false;
        self.opened.notify_all();
    }
}

impl CompactionFilter for Gate {
    fn filter(&self, level: usize, _key: &[u8], _value: &[u8]) -> FilterDecision {
        if level == self.level {
            if let Some(tx) = self.holding.lock().unwrap().take() {
                tx.send(()).unwrap();
            }
            let mut closed = self.closed.lock().unwrap();
            while *closed {
                closed = self.opened.wait(closed).unwrap();
            }
        }
        FilterDecision::Keep
    }
}

const KEYS: u64 = 4000;

fn key(i: u64) -> Vec<u8> {
    format!("key-{:08}", i % KEYS).into_bytes()
}

/// Three levels, L1 of 64 KiB: a few memtables of the keys put L1 over its target, and a
/// byte of debt stops writes.
fn opts(gate: Option<Arc<Gate>>) -> Options {
    Options {
        write_buffer_size: 64 << 10,
        target_file_size: 64 << 10,
        max_bytes_for_level_base: 64 << 10,
        num_levels: 3,
        level0_compaction_trigger: 1,
        pending_compaction_slowdown_bytes: 1,
        pending_compaction_stop_bytes: 1,
        compaction_filter: gate.map(|g| g as Arc<dyn CompactionFilter>),
        ..Options::default()
    }
}

#[test]
fn writes_stop_while_the_debt_is_at_its_stop_and_resume_once_a_compaction_pays_it() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gate::new(2));
    let db = Arc::new(Db::open(dir.path(), opts(Some(gate.clone()))).unwrap());
    // The keys in L2 first (through the gate, still open), so that every later L1 file
    // overlaps L2 and goes down by a merge, not a move.
    for i in 0..KEYS {
        db.put(key(i), [1u8; 100]).unwrap();
    }
    db.compact().unwrap();
    let s = db.stats();
    assert!(s.levels[2].files > 0 && s.levels[1].files == 0, "{:?}", s.levels);
    assert_eq!(s.pending_compaction_bytes, 0, "a compacted tree owes nothing");
    let (tx, holding) = mpsc::channel();
    gate.close(tx);

    // A writer overwrites the keys until told to stop: L0 merges into L1 until L1 is over
    // its target, and the merge of L1 into L2 waits at the gate.
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let (db, stop, written) = (db.clone(), stop.clone(), written.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                db.put(key(i), [2u8; 100]).unwrap();
                i += 1;
                written.store(i, Ordering::Relaxed);
            }
            i
        })
    };
    holding.recv_timeout(Duration::from_secs(60)).expect("a merge into L2 reached the gate");
    let owed = db.stats().pending_compaction_bytes;
    let l1 = db.stats().levels[1].bytes;
    assert!(owed > 0 && owed < l1, "owed {owed} of L1's {l1} bytes");
    // From here the writer fills what is left of its memtable and stops at the next
    // switch; only the held merge could pay the debt.
    // (Stops before the hold ended when a merge paid the debt; one that began before it or
    // after it cannot end now, and it adds its time every 50 ms.)
    let stopped_before = db.stats().stopped_for_compaction_micros;
    let waited = std::time::Instant::now();
    while db.stats().stopped_for_compaction_micros <= stopped_before {
        assert!(waited.elapsed() < Duration::from_secs(60), "the writer never stopped");
        std::thread::sleep(Duration::from_millis(5));
    }
    let before = written.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(300));
    let after = written.load(Ordering::Relaxed);
    assert_eq!(before, after, "a write went in while the debt was at its stop");

    gate.open();
    while written.load(Ordering::Relaxed) < after + 2 * KEYS {
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    let total = writer.join().unwrap();
    db.wait_for_compactions().unwrap();
    assert_eq!(db.stats().pending_compaction_bytes, 0, "every level is within its target again");
    // The last value written of each key is the one read (the writer went round the keys
    // more than twice: every key holds its second value).
    assert!(total >= 2 * KEYS);
    for i in 0..KEYS {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&[2u8; 100][..]), "key {i}");
    }
}
