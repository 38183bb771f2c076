//! A write that did not ask for a sync never waits for one: memtable switches, the creation
//! of the next WAL and flushes sync nothing on its path. A synced write (and
//! `Db::sync_wal`) syncs every earlier live log first, so it never outlives an unsynced
//! write acknowledged before it. Reads during a stalled flush are answered from the frozen
//! memtables. A failed creation of the next WAL stops writes until `Db::resume`. When
//! flushes (slow syncs) fall behind a writer, it is slowed down before it is stopped, and
//! once paced it no longer waits out whole flushes.

use shamba::lab::{CrashKeeps, FaultPlan, FaultyStorage, SimFault, SimStorage};
use shamba::storage::{DirLock, FsStorage, RandomRead, SequentialWrite, Storage};
use shamba::{Db, Error, Options, Readable, WriteBatch, WriteOptions};
use std::path::Path;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:05}").into_bytes()
}

/// About a quarter of a 4 KiB memtable: a switch every four writes or so.
fn value(i: u32) -> Vec<u8> {
    let mut v = format!("value-{i}-").into_bytes();
    v.resize(1000, b'v');
    v
}

/// Small memtables, room for many frozen ones, and no compaction or stall of its own: the
/// writes of a test switch memtables and nothing else makes them wait.
fn options(storage: Arc<dyn Storage>) -> Options {
    Options {
        storage,
        write_buffer_size: 4096,
        max_immutable_memtables: 16,
        level0_compaction_trigger: 100,
        level0_slowdown_trigger: 100,
        level0_stop_trigger: 100,
        auto_resume_interval: None,
        ..Options::default()
    }
}

fn synced() -> WriteOptions {
    WriteOptions { sync: true, ..WriteOptions::default() }
}

/// What runs before every sync of a file or a directory.
type BeforeSync = Arc<dyn Fn() + Send + Sync>;

/// A storage whose syncs (of files and directories) first run `before_sync`: a stall, a
/// delay, a gate.
struct SyncHook {
    inner: Arc<dyn Storage>,
    before_sync: BeforeSync,
}

struct HookedWriter {
    inner: Box<dyn SequentialWrite>,
    before_sync: BeforeSync,
}

impl SequentialWrite for HookedWriter {
    fn append(&mut self, data: &[u8]) -> shamba::Result<()> {
        self.inner.append(data)
    }
    fn flush(&mut self) -> shamba::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> shamba::Result<()> {
        (self.before_sync)();
        self.inner.sync()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

impl Storage for SyncHook {
    fn open_read(&self, path: &Path) -> shamba::Result<Arc<dyn RandomRead>> {
        self.inner.open_read(path)
    }
    fn create(&self, path: &Path) -> shamba::Result<Box<dyn SequentialWrite>> {
        Ok(Box::new(HookedWriter { inner: self.inner.create(path)?, before_sync: self.before_sync.clone() }))
    }
    fn read_all(&self, path: &Path) -> shamba::Result<Vec<u8>> {
        self.inner.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> shamba::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove(&self, path: &Path) -> shamba::Result<()> {
        self.inner.remove(path)
    }
    fn list(&self, dir: &Path) -> shamba::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> shamba::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> shamba::Result<()> {
        (self.before_sync)();
        self.inner.sync_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn lock(&self, path: &Path) -> shamba::Result<Box<dyn DirLock>> {
        self.inner.lock(path)
    }
}

#[test]
fn non_sync_writes_across_switches_complete_while_every_sync_is_stalled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), options(Arc::new(FaultyStorage::new(FsStorage, plan.clone())))).expect("open");
    // The device stalls: no sync of a file or a directory returns until released.
    plan.hold_syncs.store(true, SeqCst);
    const WRITES: u32 = 24;
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || (0..WRITES).try_for_each(|i| db.put(key(i), value(i))))
    };
    let t = Instant::now();
    while !writer.is_finished() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let finished = writer.is_finished();
    if !finished {
        // Let the stuck writer go (it may hold what `stats` reads), then fail.
        plan.hold_syncs.store(false, SeqCst);
    }
    assert!(finished, "non-sync writes waited for a stalled sync (a memtable switch synced)");
    let stats = db.stats();
    writer.join().expect("writer").expect("every non-sync write is acknowledged");
    assert!(stats.immutable_memtables >= 4, "several switches: {} frozen memtables", stats.immutable_memtables);
    assert_eq!(stats.flushes, 0, "the flush is stalled in a sync");

    // Reads during the stalled flush: the frozen memtables answer.
    let hits = stats.memtable_hits;
    for i in 0..WRITES {
        assert_eq!(db.get(key(i)).expect("get").as_deref(), Some(&value(i)[..]), "key {i} during the stalled flush");
    }
    let stats = db.stats();
    assert_eq!(stats.memtable_hits - hits, u64::from(WRITES), "every get answered by a memtable");
    assert_eq!(stats.flushes, 0, "still stalled");

    plan.hold_syncs.store(false, SeqCst);
    db.flush().expect("flush once the device is back");
    for i in 0..WRITES {
        assert_eq!(db.get(key(i)).expect("get").as_deref(), Some(&value(i)[..]));
    }
    db.close().expect("close");
}

/// Non-sync writes across several switches with no flush (none runs unless asked), then
/// `make_durable`, then a power loss: every write acknowledged before `make_durable`
/// survives, and so do `extra` (written by it).
fn survives_power_loss(make_durable: impl FnOnce(&Db) -> shamba::Result<()>, extra: &[u32]) {
    let disk = SimStorage::new();
    let mut opts = options(Arc::new(disk.clone()));
    opts.lab.background_flushes = false;
    let db = Db::open("/sim/db", opts).expect("open");
    for i in 0..20 {
        db.put(key(i), value(i)).expect("non-sync write");
    }
    let frozen = db.stats().immutable_memtables;
    assert!(frozen >= 3, "several switches: {frozen} frozen memtables");
    make_durable(&db).expect("the synced write");
    assert_eq!(db.stats().flushes, 0, "no flush synced the retired logs");
    // The machine stops now: the close syncs nothing more.
    disk.fail_at(disk.ops(), SimFault::Crash);
    let _ = db.close();
    disk.crash(CrashKeeps::Synced);

    let db = Db::open("/sim/db", options(Arc::new(disk.clone()))).expect("reopen after the power loss");
    for i in (0..20).chain(extra.iter().copied()) {
        assert_eq!(
            db.get(key(i)).expect("get").as_deref(),
            Some(&value(i)[..]),
            "key {i}, acknowledged before the synced write, was lost"
        );
    }
    db.close().expect("close");
}

#[test]
fn a_synced_write_syncs_the_logs_of_the_writes_before_it() {
    survives_power_loss(
        |db| {
            let mut b = WriteBatch::new();
            b.put(key(100), value(100));
            db.write_opt(b, &synced())
        },
        &[100],
    );
}

#[test]
fn sync_wal_syncs_every_live_log() {
    survives_power_loss(Db::sync_wal, &[]);
}

#[test]
fn a_failed_creation_of_the_next_wal_stops_writes_until_resumed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = Arc::new(FaultPlan::default());
    let db = Db::open(dir.path(), options(Arc::new(FaultyStorage::new(FsStorage, plan.clone())))).expect("open");
    let big = |i: u32| {
        let mut v = value(i);
        v.resize(1500, b'w');
        v
    };
    // Three writes of 1.5 KB fit in the 4 KiB memtable; the fourth switches it.
    for i in 0..3 {
        db.put(key(i), big(i)).expect("write");
    }
    assert_eq!(db.stats().immutable_memtables, 0);
    plan.fail_writes.store(true, SeqCst);
    let e = db.put(key(3), big(3)).expect_err("the next WAL cannot be created");
    assert!(matches!(&e, Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull), "{e}");
    plan.fail_writes.store(false, SeqCst);
    // Writes stay stopped, naming the cause, though the disk has room again.
    let e = db.put(key(4), big(4)).expect_err("writes are stopped");
    match &e {
        Error::ReadOnly { cause } => {
            assert!(matches!(&**cause, Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull), "{cause}")
        }
        other => panic!("expected ReadOnly, got {other}"),
    }
    assert_eq!(db.get(key(2)).expect("reads still work").as_deref(), Some(&big(2)[..]));
    db.resume().expect("a full disk is resumable");
    db.put(key(4), big(4)).expect("writes go on after resuming");
    db.flush().expect("flush");
    for i in [0, 1, 2, 4] {
        assert_eq!(db.get(key(i)).expect("get").as_deref(), Some(&big(i)[..]), "key {i}");
    }
    assert_eq!(db.get(key(3)).expect("get"), None, "the failed write is not applied");
    db.close().expect("close");
}

/// Flushes whose syncs take 15 ms each fall behind a writer that never waits for a sync.
/// The writer is paced while the last memtable slot is taken, before any stop; the paced
/// rate falls each time it still reaches the stop; and once it has adapted (after a
/// second), no put waits for as long as half a flush, where without the slowdown every
/// memtable's worth of puts waits out a whole one.
#[test]
fn writers_are_slowed_before_slow_flushes_stop_them_and_then_never_wait_a_whole_flush() {
    let dir = tempfile::tempdir().expect("tempdir");
    let before_sync: BeforeSync = Arc::new(|| std::thread::sleep(Duration::from_millis(15)));
    let opts = Options {
        write_buffer_size: 64 << 10,
        max_immutable_memtables: 2,
        // A debug build's writer, checking the stats after each put, may come at less
        // than the default 16 MiB/s: a slowdown at that rate would not slow it before the
        // first stop.
        delayed_write_rate: 2 << 20,
        ..options(Arc::new(SyncHook { inner: Arc::new(FsStorage), before_sync }))
    };
    let db = Db::open(dir.path(), opts).expect("open");
    // How long one flush takes with nothing else running: its syncs, mostly.
    for i in 0..64 {
        db.put(key(i), value(i)).expect("write");
    }
    let t = Instant::now();
    db.flush().expect("flush");
    let flush = t.elapsed();

    const ADAPTING: Duration = Duration::from_secs(1);
    const RUN: Duration = Duration::from_millis(2500);
    let t0 = Instant::now();
    let mut first_stall = None;
    let mut longest_adapted = Duration::ZERO;
    let mut i = 0u32;
    while t0.elapsed() < RUN {
        let t = Instant::now();
        db.put(key(i % 100_000), value(i)).expect("write");
        let took = t.elapsed();
        if first_stall.is_none() {
            let s = db.stats();
            if s.stall_micros() > 0 {
                first_stall = Some((s.delayed_micros, s.stopped_for_flush_micros));
            }
        }
        if t.duration_since(t0) >= ADAPTING {
            longest_adapted = longest_adapted.max(took);
        }
        i += 1;
    }
    let s = db.stats();
    let (delayed, stopped) = first_stall.expect("the flushes kept up: no stall at all");
    assert!(delayed > 0 && stopped == 0, "the first stall was a stop: {delayed} us delayed, {stopped} us stopped");
    assert!(
        longest_adapted < flush / 2,
        "a put waited {longest_adapted:?} after the first second, against flushes of {flush:?} \
         ({} puts, {} us delayed, {} us stopped for a flush, rate now {} B/s)",
        i,
        s.delayed_micros,
        s.stopped_for_flush_micros,
        s.delayed_write_rate,
    );
    println!(
        "flush {flush:?}; {i} puts; longest after {ADAPTING:?}: {longest_adapted:?}; {} us delayed ({} for a flush), \
         {} us stopped for a flush; rate now {} B/s",
        s.delayed_micros, s.delayed_for_flush_micros, s.stopped_for_flush_micros, s.delayed_write_rate
    );
    db.close().expect("close");
}

/// Latency of non-sync writes across memtable switches on a device whose syncs (of files
/// and directories) take 50 ms. Run with
/// `cargo test -p shamba --features lab --test sync_path -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: prints latencies"]
fn measure_non_sync_write_latency_with_50ms_syncs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let before_sync: BeforeSync = Arc::new(|| std::thread::sleep(Duration::from_millis(50)));
    let opts = Options {
        write_buffer_size: 64 << 10,
        max_immutable_memtables: 64,
        ..options(Arc::new(SyncHook { inner: Arc::new(FsStorage), before_sync }))
    };
    let db = Db::open(dir.path(), opts).expect("open");
    const WRITES: u32 = 1280;
    let mut micros = Vec::with_capacity(WRITES as usize);
    let t0 = Instant::now();
    for i in 0..WRITES {
        let t = Instant::now();
        db.put(key(i), value(i)).expect("write");
        micros.push(t.elapsed().as_micros() as u64);
    }
    let total = t0.elapsed();
    let stats = db.stats();
    micros.sort_unstable();
    let at = |q: f64| micros[((micros.len() - 1) as f64 * q).round() as usize];
    println!(
        "non-sync writes of 1000 B, 64 KiB memtables, syncs of 50 ms: {WRITES} writes in {:.1} s, \
         {} frozen memtables at the end, {} flushes; latency p50 {} us, p99 {} us, max {} us; \
         stopped for flush {} us",
        total.as_secs_f64(),
        stats.immutable_memtables,
        stats.flushes,
        at(0.5),
        at(0.99),
        at(1.0),
        stats.stopped_for_flush_micros,
    );
    db.close().expect("close");
}
