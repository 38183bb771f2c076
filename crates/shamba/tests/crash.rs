//! Crash test: a child process writes batches with `sync = true` and reports each one as
//! acknowledged; the parent kills it with SIGKILL at a random moment, reopens the
//! database, and checks that every acknowledged batch is present, every batch is
//! all-or-nothing, and nothing that was never written appears. Repeated many times on the
//! same directory, with flushes and compactions running in the child.
//!
//! `SHAMBA_CRASH_ROUNDS=500 cargo test --release --test crash` runs a long loop.

use shamba::{Db, Options, WriteBatch, WriteOptions};
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
    let sync = WriteOptions { sync: true, ..WriteOptions::default() };
    let mut out = std::io::stdout().lock();
    for batch in start.. {
        let mut b = WriteBatch::new();
        for j in 0..KEYS_PER_BATCH {
            b.put(batch_key(batch, j), batch_value(batch, j));
        }
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
    let mut present = 0;
    let mut seen_absent = false;
    for batch in 0..=attempted_up_to + 1 {
        let found: Vec<bool> = (0..KEYS_PER_BATCH)
            .map(|j| match db.get(batch_key(batch, j)).expect("get after crash") {
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
    // The scan agrees with the point lookups.
    assert_eq!(db.iter().count() as u64, present * KEYS_PER_BATCH, "scan count differs");
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
