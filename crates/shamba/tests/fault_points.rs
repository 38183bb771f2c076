//! Every fault point survived. A workload (sync writes and batches, flushes, a full
//! compaction, the deletion of obsolete files, a close and a reopen, which replays the WAL
//! and starts a fresh manifest; then, reopened with small memtables flushed only when
//! asked, non-sync writes across several memtable switches between synced writes, a
//! flush and `Db::sync_wal`) runs once on a simulated disk to count its storage
//! operations, then once per operation N and fault kind with the fault injected at N: an
//! error, a full disk, a short write, a crash before the operation, a torn write. After a
//! fault the workload goes on (calling `Db::resume` where a step failed). Then the machine
//! loses power (after a crash, or the process dies and the page cache keeps what was
//! written; after a torn write, the latter), the database is reopened on what survived,
//! and every key is compared with the model of the workload's writes: what was acknowledged
//! is there (a non-sync write once a later synced write, flush or `sync_wal` succeeded:
//! a synced write never outlives the unsynced ones acknowledged before it), what failed is
//! there whole or not at all, nothing panicked; and
//! `Db::verify_dir` finds no damage before the reopen nor after it. Keys from `IN_KS` on
//! live in a second keyspace, created in the middle of the workload (its creation is a
//! fault point too), so batches and a range delete span two keyspaces.
//!
//! CI runs every operation with every fault kind; `SHAMBA_FAULT_POINTS_STRIDE=k` runs one
//! operation in k (a quick local check).

use shamba::lab::{CrashKeeps, SimFault, SimStorage};
use shamba::storage::Storage;
use shamba::{Db, Keyspace, Options, Readable, WriteBatch, WriteOptions};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

const DIR: &str = "/sim/db";
const KEYS: u32 = 64;

/// Keys from this index on live in the keyspace `ks`.
const IN_KS: u32 = 40;

fn key(i: u32) -> Vec<u8> {
    format!("key-{i:03}").into_bytes()
}

/// Whether key `k` lives in the keyspace `ks`.
fn in_ks(k: &[u8]) -> bool {
    let digits = k.strip_prefix(b"key-").unwrap_or_default();
    std::str::from_utf8(digits).ok().and_then(|d| d.parse::<u32>().ok()).is_some_and(|i| i >= IN_KS)
}

/// The keyspace `ks`, created if need be; after a failed creation, once more after
/// resuming writes. `None` if it still fails.
fn open_ks(db: &Db) -> Option<Keyspace> {
    db.keyspace("ks").ok().or_else(|| {
        resume(db);
        db.keyspace("ks").ok()
    })
}

/// Every pair of both keyspaces, the default one's first.
fn scan_both(db: &Db, ks: &Keyspace) -> shamba::Result<Vec<(Vec<u8>, Vec<u8>)>> {
    db.iter().chain(ks.iter()).collect()
}

mod crash_points;
use crash_points::quiet_options as options;

/// Small memtables (a switch every few writes of `big` values), flushed only when the
/// workload asks (so every run numbers its operations alike), with room for all the frozen
/// ones.
fn small_memtables(disk: &SimStorage) -> Options {
    let mut opts = Options { write_buffer_size: 4096, max_immutable_memtables: 64, ..options(disk) };
    opts.lab.background_flushes = false;
    opts
}

/// One key's write: a put (`Some`) or a delete (`None`).
type Op = (Vec<u8>, Option<Vec<u8>>);

/// A write since the last durable point: its value, and whether it was acknowledged.
type Pending = (Option<Vec<u8>>, bool);

/// The values each key may hold: one once a write was made durable (a synced write, or a
/// non-sync one followed by a synced write, a flush or `sync_wal` that succeeded), more
/// while failed writes may or may not have landed, or acknowledged non-sync ones may or
/// may not survive a power loss. `None` is "absent".
#[derive(Default)]
struct Model {
    /// As of the last point where every acknowledged write was durable.
    allowed: BTreeMap<Vec<u8>, Vec<Option<Vec<u8>>>>,
    /// Writes since that point, oldest first, each with whether it was acknowledged.
    pending: BTreeMap<Vec<u8>, Vec<Pending>>,
    /// Failed batches: each key with the value it wrote, to check all-or-nothing.
    failed_batches: Vec<Vec<Op>>,
    /// Keys written after each failed batch (the check skips them).
    overwritten: Vec<Vec<Vec<u8>>>,
}

impl Model {
    fn new() -> Model {
        let mut m = Model::default();
        for i in 0..KEYS {
            m.allowed.insert(key(i), vec![None]);
        }
        m
    }

    /// A write, `acknowledged` or failed, `synced` or not.
    fn record(&mut self, ops: &[Op], acknowledged: bool, synced: bool) {
        for (k, v) in ops {
            self.pending.entry(k.clone()).or_default().push((v.clone(), acknowledged));
            for later in &mut self.overwritten {
                later.push(k.clone());
            }
        }
        if !acknowledged && ops.len() > 1 {
            self.failed_batches.push(ops.to_vec());
            self.overwritten.push(Vec::new());
        }
        if acknowledged && synced {
            self.durable();
        }
    }

    /// Every write acknowledged so far is durable: each key holds its last acknowledged
    /// value, or a failed write's that came after it.
    fn durable(&mut self) {
        for (k, writes) in std::mem::take(&mut self.pending) {
            let allowed = self.allowed.entry(k).or_default();
            match writes.iter().rposition(|(_, acknowledged)| *acknowledged) {
                Some(last) => *allowed = writes[last..].iter().map(|(v, _)| v.clone()).collect(),
                None => allowed.extend(writes.into_iter().map(|(v, _)| v)),
            }
        }
    }

    fn allows(&self, k: &[u8], v: &Option<Vec<u8>>) -> bool {
        self.allowed.get(k).is_some_and(|a| a.contains(v))
            || self.pending.get(k).is_some_and(|p| p.iter().any(|(w, _)| w == v))
    }
}

/// One write of the workload: a batch of puts (`Some`) and deletes (`None`), synced, each
/// into its key's keyspace (if `ks` could not be created, its writes fail).
fn write(db: &Db, ks: Option<&Keyspace>, model: &mut Model, ops: Vec<Op>) -> bool {
    write_opt(db, ks, model, ops, true)
}

/// As [`write`], not synced.
fn write_unsynced(db: &Db, ks: Option<&Keyspace>, model: &mut Model, ops: Vec<Op>) -> bool {
    write_opt(db, ks, model, ops, false)
}

fn write_opt(db: &Db, ks: Option<&Keyspace>, model: &mut Model, ops: Vec<Op>, sync: bool) -> bool {
    let mut batch = WriteBatch::new();
    let mut writable = true;
    for (k, v) in &ops {
        match (v, in_ks(k).then_some(ks)) {
            (Some(v), None) => batch.put(k, v),
            (None, None) => batch.delete(k),
            (Some(v), Some(Some(ks))) => batch.put_in(ks, k, v),
            (None, Some(Some(ks))) => batch.delete_in(ks, k),
            (_, Some(None)) => {
                writable = false;
                &mut batch
            }
        };
    }
    let ok = writable && db.write_opt(batch, &WriteOptions { sync, ..WriteOptions::default() }).is_ok();
    model.record(&ops, ok, sync);
    if !ok {
        resume(db);
    }
    ok
}

/// Times a failed step was followed by `Db::resume` taking writes again.
static RESUMED: AtomicUsize = AtomicUsize::new(0);

fn resume(db: &Db) {
    let before = db.stats().resumes;
    if db.resume().is_ok() && db.stats().resumes > before {
        RESUMED.fetch_add(1, Ordering::SeqCst);
    }
}

/// A range delete of keys `lo..hi` (of both keyspaces, in one batch), synced, as the model
/// sees it: a delete of each key in it.
fn delete_range(db: &Db, ks: Option<&Keyspace>, model: &mut Model, lo: u32, hi: u32) {
    let mut batch = WriteBatch::new();
    batch.delete_range(key(lo)..key(hi));
    let ok = match ks {
        Some(ks) => {
            batch.delete_range_in(ks, key(lo)..key(hi));
            db.write_opt(batch, &WriteOptions { sync: true, ..WriteOptions::default() }).is_ok()
        }
        None => false,
    };
    let ops: Vec<Op> = (lo..hi).map(del).collect();
    model.record(&ops, ok, true);
    if !ok {
        resume(db);
    }
}

fn put(i: u32, tag: &str) -> Op {
    (key(i), Some(format!("{tag}-{i}").into_bytes()))
}

fn del(i: u32) -> Op {
    (key(i), None)
}

/// A put of a value of about 1000 bytes: four fill a small memtable.
fn put_big(i: u32, tag: &str) -> Op {
    let mut v = format!("{tag}-{i}-").into_bytes();
    v.resize(1000, b'.');
    (key(i), Some(v))
}

/// A step that makes every acknowledged write durable when it succeeds (a flush,
/// `Db::sync_wal`); on failure, try to resume writes.
fn durable_step(db: &Db, model: &mut Model, r: shamba::Result<()>) {
    match r {
        Ok(()) => model.durable(),
        Err(_) => resume(db),
    }
}

/// A step that may fail: on failure, try to resume writes.
fn step(db: &Db, r: shamba::Result<()>) {
    if r.is_err() {
        resume(db);
    }
}

/// Reads during the workload may fail, but what they return must be allowed.
fn check_reads(db: &Db, ks: Option<&Keyspace>, model: &Model) -> Result<(), String> {
    let Some(ks) = ks else { return Ok(()) };
    for i in (0..KEYS).step_by(7) {
        let got = if in_ks(&key(i)) { ks.get(key(i)) } else { db.get(key(i)) };
        if let Ok(v) = got {
            if !model.allows(&key(i), &v) {
                return Err(format!("get of key {i} during the workload returned {v:?}"));
            }
        }
    }
    for item in db.iter().chain(ks.iter()).flatten() {
        if !model.allows(&item.0, &Some(item.1.clone())) {
            return Err(format!("scan during the workload returned {item:?}"));
        }
    }
    Ok(())
}

/// The workload; `Err` only for a wrong answer seen on the way.
fn workload(disk: &SimStorage, model: &mut Model) -> Result<(), String> {
    let dir = Path::new(DIR);
    if let Ok(db) = Db::open(dir, options(disk)) {
        for i in 0..24 {
            write(&db, None, model, vec![put(i, "a")]);
        }
        write(&db, None, model, vec![put(24, "b"), put(25, "b"), put(26, "b"), del(0), del(1)]);
        step(&db, db.flush());
        let ks = open_ks(&db);
        let ks = ks.as_ref();
        for i in 8..32 {
            write(&db, ks, model, vec![put(i, "c")]);
        }
        write(&db, ks, model, vec![put(40, "c"), put(3, "c"), put(41, "c")]);
        for i in 3..6 {
            write(&db, ks, model, vec![del(i)]);
        }
        delete_range(&db, ks, model, 14, 20);
        step(&db, db.flush());
        step(&db, db.compact());
        check_reads(&db, ks, model)?;
        write(&db, ks, model, vec![put(40, "d"), put(2, "d"), del(9), put(41, "d")]);
        for i in 42..48 {
            write(&db, ks, model, vec![put(i, "d")]);
        }
        let _ = db.close();
    }
    // Reopening replays the WAL into tables and starts a fresh manifest.
    if let Ok(db) = Db::open(dir, options(disk)) {
        let ks = open_ks(&db);
        let ks = ks.as_ref();
        check_reads(&db, ks, model)?;
        for i in 48..56 {
            write(&db, ks, model, vec![put(i, "e")]);
        }
        write(&db, ks, model, vec![del(10), del(11), put(12, "e"), put(56, "e")]);
        delete_range(&db, ks, model, 50, 53);
        step(&db, db.flush());
        write(&db, ks, model, vec![put(57, "f"), put(7, "f")]);
        let _ = db.close();
    }
    // Small memtables: non-sync writes switch them every few writes, and leave the retired
    // logs unsynced until a synced write, a flush or `sync_wal` makes them durable.
    if let Ok(db) = Db::open(dir, small_memtables(disk)) {
        let ks = open_ks(&db);
        let ks = ks.as_ref();
        for i in 0..10 {
            write_unsynced(&db, ks, model, vec![put_big(i * 5 % KEYS, "g")]);
        }
        write(&db, ks, model, vec![put(58, "g")]);
        for i in 10..18 {
            write_unsynced(&db, ks, model, vec![put_big(i * 5 % KEYS, "h")]);
        }
        durable_step(&db, model, db.flush());
        for i in 18..26 {
            write_unsynced(&db, ks, model, vec![put_big(i * 5 % KEYS, "i")]);
        }
        durable_step(&db, model, db.sync_wal());
        for i in 26..32 {
            write_unsynced(&db, ks, model, vec![put_big(i * 5 % KEYS, "j")]);
        }
        check_reads(&db, ks, model)?;
        let _ = db.close();
    }
    Ok(())
}

/// `Db::verify_dir` finds no damage (a database that was never created is skipped).
fn verify(disk: &SimStorage, when: &str) -> Result<(), String> {
    if !disk.exists(&Path::new(DIR).join("CURRENT")) {
        return Ok(());
    }
    let report = Db::verify_dir(DIR, options(disk)).map_err(|e| format!("verify {when} failed to run: {e}"))?;
    if report.is_ok() {
        Ok(())
    } else {
        Err(format!("verify {when} found damage: {:?}", report.problems()))
    }
}

/// Verify what the crash left, reopen on it, compare every key with the model, and
/// verify again after the recovery.
fn check_recovered(disk: &SimStorage, model: &Model) -> Result<(), String> {
    verify(disk, "after the crash")?;
    let db = Db::open(Path::new(DIR), options(disk)).map_err(|e| format!("reopen failed: {e}"))?;
    let ks = db.keyspace("ks").map_err(|e| format!("keyspace ks after reopen: {e}"))?;
    let mut found = BTreeMap::new();
    for k in model.allowed.keys() {
        let v = if in_ks(k) { ks.get(k) } else { db.get(k) };
        let v = v.map_err(|e| format!("get of {} failed after reopen: {e}", String::from_utf8_lossy(k)))?;
        if !model.allows(k, &v) {
            return Err(format!(
                "key {} holds {:?}; the model allows {:?}",
                String::from_utf8_lossy(k),
                v.as_deref().map(String::from_utf8_lossy),
                model.allowed.get(k)
            ));
        }
        found.insert(k.clone(), v);
    }
    let scanned = scan_both(&db, &ks).map_err(|e| format!("scan failed after reopen: {e}"))?;
    // The default keyspace's keys sort before the others: the gets in that order.
    let from_gets: Vec<(Vec<u8>, Vec<u8>)> = found.iter().filter_map(|(k, v)| Some((k.clone(), v.clone()?))).collect();
    if scanned != from_gets {
        return Err(format!("the scan ({} pairs) disagrees with the gets ({} pairs)", scanned.len(), from_gets.len()));
    }
    for (batch, later) in model.failed_batches.iter().zip(&model.overwritten) {
        // Puts write values no other write does, so finding one proves the batch landed;
        // a delete proves nothing (the key may never have existed).
        let mine: Vec<bool> = batch
            .iter()
            .filter(|(k, v)| v.is_some() && !later.contains(k))
            .map(|(k, v)| found.get(k) == Some(v))
            .collect();
        if mine.iter().any(|&b| b) && !mine.iter().all(|&b| b) {
            return Err(format!("a failed batch is half visible: {batch:?}"));
        }
    }
    drop(ks);
    db.close().map_err(|e| format!("close after the check failed: {e}"))?;
    verify(disk, "after recovery")
}

/// Panics anywhere in the process (background threads included).
static PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        default(info);
    }));
}

/// Run the workload with `fault` at operation `at` (if any), then crash keeping `keeps`.
fn run_with_fault(at: Option<(u64, SimFault)>, keeps: CrashKeeps) -> Result<u64, String> {
    let disk = SimStorage::new();
    if let Some((n, fault)) = at {
        disk.fail_at(n, fault);
    }
    let mut model = Model::new();
    workload(&disk, &mut model)?;
    let ops = disk.ops();
    disk.crash(keeps);
    check_recovered(&disk, &model)?;
    Ok(ops)
}

#[test]
fn every_fault_point_of_the_workload_is_survived() {
    count_panics();
    let total = run_with_fault(None, CrashKeeps::Synced).expect("the workload without a fault");
    assert!(total > 300, "the workload did only {total} storage operations");
    // The count is the same on a second run: every N below names the same operation.
    assert_eq!(run_with_fault(None, CrashKeeps::Written).expect("again"), total);

    // A short or torn write at an operation that is not an append fails it as a full disk
    // or a crash would. A crash loses power (only synced bytes stay) or kills the process
    // (everything written stays); a torn write kills the process mid-append.
    let stride: u64 = std::env::var("SHAMBA_FAULT_POINTS_STRIDE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let kinds = [
        (SimFault::Error, CrashKeeps::Synced),
        (SimFault::NoSpace, CrashKeeps::Synced),
        (SimFault::ShortWrite, CrashKeeps::Synced),
        (SimFault::Crash, CrashKeeps::Synced),
        (SimFault::Crash, CrashKeeps::Written),
        (SimFault::TornWrite, CrashKeeps::Written),
    ];
    let mut failures = Vec::new();
    let mut runs = 0;
    for n in (0..total).step_by(stride.max(1) as usize) {
        for (fault, keeps) in kinds {
            runs += 1;
            if let Err(e) = run_with_fault(Some((n, fault)), keeps) {
                failures.push(format!("{fault:?} at operation {n}, the crash keeping {keeps:?}: {e}"));
            }
        }
    }
    let panics = PANICS.load(Ordering::SeqCst);
    let resumed = RESUMED.load(Ordering::SeqCst);
    eprintln!(
        "fault points: {total} operations, {runs} runs, {} failures, {panics} panics, writes resumed {resumed} times after a failed step",
        failures.len()
    );
    assert!(resumed > 0, "no run resumed writes after a fault");
    assert!(failures.is_empty(), "{} of {runs} runs failed:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(panics, 0, "a fault made the engine panic");
}
