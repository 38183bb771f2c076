//! Crash test: a child process writes batches with `sync = true` and reports each one as
//! acknowledged; the parent kills it with SIGKILL at a random moment, reopens the
//! database, and checks that every acknowledged batch is present, every batch is
//! all-or-nothing across the keyspaces it writes to, and nothing that was never written
//! appears. Repeated many times on the same directory, with flushes and compactions
//! running in the child.
//!
//! Each batch puts its keys into three keyspaces (the default one and two named ones), and
//! in the `left` keyspace also puts a marker key and range-deletes the previous batch's
//! marker: after any crash exactly the last present batch's marker is left.
//!
//! `SHAMBA_CRASH_ROUNDS=500 cargo test --release --test crash` runs a long loop.

use shamba::{Db, Keyspace, Options, Readable, WriteBatch, WriteOptions};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const KEYS_PER_BATCH: u64 = 4;
const CHILD_ENV: &str = "SHAMBA_CRASH_CHILD_DIR";

fn options() -> Options {
    Options {
        write_buffer_size: 16 << 10,
        target_file_size: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        size_ratio: 3,
        level0_compaction_trigger: 2,
        ..Options::default()
    }
}

fn batch_key(batch: u64, j: u64) -> Vec<u8> {
    // Spread batches over the key space so flushes and compactions overlap many files.
    format!("{:08x}-{batch:08}-{j}", (batch.wrapping_mul(2654435761) % 100_000)).into_bytes()
}

/// The keyspace key `j` of every batch goes to: the default one (`None`) or a named one.
fn keyspace_of(j: u64) -> Option<&'static str> {
    [None, Some("left"), Some("right")][(j % 3) as usize]
}

/// The marker key batch `batch` leaves in `left` (and the next batch range-deletes).
fn marker(batch: u64) -> Vec<u8> {
    format!("~marker-{batch:08}").into_bytes()
}

/// Handles of the named keyspaces.
fn keyspaces(db: &Db) -> (Keyspace, Keyspace) {
    (db.keyspace("left").expect("keyspace left"), db.keyspace("right").expect("keyspace right"))
}

fn get_in(db: &Db, ks: &(Keyspace, Keyspace), j: u64, key: &[u8]) -> Option<Vec<u8>> {
    match keyspace_of(j) {
        None => db.get(key),
        Some("left") => ks.0.get(key),
        Some(_) => ks.1.get(key),
    }
    .expect("get after crash")
}

fn batch_value(batch: u64, j: u64) -> Vec<u8> {
    format!("value-of-{batch}-{j}-{}", "p".repeat((batch % 50) as usize)).into_bytes()
}

/// Run by the child process: write batches forever from `start`, printing each batch
/// number once its write returned.
#[test]
fn crash_child_writer() {
    let Ok(dir) = std::env::var(CHILD_ENV) else { return };
    let start: u64 = std::env::var("SHAMBA_CRASH_START").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let db = Db::open(&dir, options()).expect("child open");
    let (left, right) = keyspaces(&db);
    let sync = WriteOptions { sync: true, ..WriteOptions::default() };
    let mut out = std::io::stdout().lock();
    for batch in start.. {
        let mut b = WriteBatch::new();
        for j in 0..KEYS_PER_BATCH {
            let (key, value) = (batch_key(batch, j), batch_value(batch, j));
            match keyspace_of(j) {
                None => b.put(key, value),
                Some("left") => b.put_in(&left, key, value),
                Some(_) => b.put_in(&right, key, value),
            };
        }
        b.delete_range_in(&left, marker(batch.saturating_sub(1))..marker(batch));
        b.put_in(&left, marker(batch), b"marker");
        db.write_opt(b, &sync).expect("child write");
        use std::io::Write;
        writeln!(out, "{batch}").expect("child stdout");
        out.flush().expect("child flush");
    }
}

/// Returns the number of batches present, checking that they are exactly a prefix of
/// whole batches: `0..n` fully present, everything after fully absent.
fn verify(dir: &std::path::Path, acknowledged: u64, attempted_up_to: u64) -> u64 {
    let db = Db::open(dir, options()).expect("reopen after crash");
    let ks = keyspaces(&db);
    let mut present = 0;
    let mut seen_absent = false;
    for batch in 0..=attempted_up_to + 1 {
        let found: Vec<bool> = (0..KEYS_PER_BATCH)
            .map(|j| match get_in(&db, &ks, j, &batch_key(batch, j)) {
                Some(v) => {
                    assert_eq!(v, batch_value(batch, j), "batch {batch} key {j} has a wrong value");
                    true
                }
                None => false,
            })
            .collect();
        let all = found.iter().all(|&f| f);
        let none = found.iter().all(|&f| !f);
        assert!(all || none, "batch {batch} is partially present: {found:?}");
        if all {
            assert!(!seen_absent, "batch {batch} present after an absent batch");
            present = batch + 1;
        } else {
            seen_absent = true;
        }
    }
    assert!(present >= acknowledged, "acknowledged {acknowledged} batches but only {present} survived");
    assert!(present <= attempted_up_to + 1, "batch {present} appeared but was never written");
    // The scans agree with the point lookups, and the range deletes left one marker.
    let per_batch = |ks: Option<&str>| (0..KEYS_PER_BATCH).filter(|&j| keyspace_of(j) == ks).count() as u64;
    assert_eq!(db.iter().count() as u64, present * per_batch(None), "scan count differs (default)");
    assert_eq!(ks.1.iter().count() as u64, present * per_batch(Some("right")), "scan count differs (right)");
    let markers: Vec<Vec<u8>> = ks.0.prefix(b"~marker-").map(|kv| kv.expect("scan").0).collect();
    let expected_markers = if present == 0 { vec![] } else { vec![marker(present - 1)] };
    assert_eq!(markers, expected_markers, "range deletes of markers");
    assert_eq!(ks.0.iter().count() as u64, present * per_batch(Some("left")) + markers.len() as u64);
    drop(ks);
    db.close().expect("close");
    present
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let rounds: u64 = std::env::var("SHAMBA_CRASH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(12);
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("test binary");
    let mut next = 0u64;
    let mut seed: u64 = 0x5eed;
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child_writer", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .env("SHAMBA_CRASH_START", next.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let stdout = child.stdout.take().expect("child stdout");
        // Kill after a random number of acknowledged batches (or a timeout), so kills land
        // during writes, flushes and compactions alike.
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let target = 20 + (seed >> 33) % 400;
        let acked = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(next));
        let reader = {
            let acked = acked.clone();
            // Read to EOF (closing the pipe early would kill the child by EPIPE instead).
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if let Ok(n) = line.trim().parse::<u64>() {
                        acked.store(n + 1, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            })
        };
        let started = Instant::now();
        while acked.load(std::sync::atomic::Ordering::SeqCst) < next + target
            && started.elapsed() < Duration::from_secs(20)
        {
            std::thread::sleep(Duration::from_micros(200));
        }
        child.kill().expect("kill child");
        let _ = child.wait();
        let _ = reader.join();
        let acknowledged = acked.load(std::sync::atomic::Ordering::SeqCst);
        // The child may have written (not acknowledged) one more batch, never two.
        let present = verify(dir.path(), acknowledged, acknowledged);
        assert!(present >= next, "round {round}: lost batches from earlier rounds");
        next = present;
    }
    assert!(next > rounds, "the child barely wrote anything: {next} batches");
}
