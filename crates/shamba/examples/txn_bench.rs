//! Transaction commit throughput and conflict rate: read-modify-write of 1 and of 10 keys
//! per transaction (each key read with `get_for_update`, then incremented), by one thread
//! alone and by two threads over the same keys, each row beside the same work done with
//! plain gets and puts (no isolation) in one batch.
//!
//! `cargo run --release -p shamba --example txn_bench [SECONDS_PER_ROW] [KEYS]`
//! (defaults: 3 seconds, 10000 keys). Prints one line per row: keys per transaction,
//! threads, commits/s, and the commits refused for a write after the snapshot and for
//! history flushed past it, as shares of the attempts.

use shamba::{Db, Options, Readable, WriteBatch};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Default)]
struct Counts {
    commits: AtomicU64,
    written: AtomicU64,
    flushed: AtomicU64,
}

fn key(i: u64) -> Vec<u8> {
    format!("counter{i:08}").into_bytes()
}

fn next(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

/// One transaction: read `per_tx` keys for update, write each back incremented.
fn rmw_tx(db: &Db, keys: &[u64], counts: &Counts) -> shamba::Result<()> {
    let tx = db.transaction();
    for &k in keys {
        let n = tx.get_for_update(key(k))?.map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap_or([0; 8])));
        tx.put(key(k), (n + 1).to_le_bytes())?;
    }
    match tx.commit() {
        Ok(()) => {
            counts.commits.fetch_add(1, Ordering::Relaxed);
        }
        Err(shamba::Error::Conflict { reason, .. }) => {
            let which = if reason.contains("flushed") { &counts.flushed } else { &counts.written };
            which.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// The same reads and writes without a transaction: gets, then one batch.
fn rmw_plain(db: &Db, keys: &[u64], counts: &Counts) -> shamba::Result<()> {
    let mut b = WriteBatch::new();
    for &k in keys {
        let n = db.get(key(k))?.map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap_or([0; 8])));
        b.put(key(k), (n + 1).to_le_bytes());
    }
    db.write(b)?;
    counts.commits.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

type Work = fn(&Db, &[u64], &Counts) -> shamba::Result<()>;

fn row(db: &Db, work: Work, per_tx: u64, threads: u64, keys: u64, secs: f64) -> shamba::Result<Arc<Counts>> {
    let counts = Arc::new(Counts::default());
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (db, counts, stop) = (db.clone(), counts.clone(), stop.clone());
            std::thread::spawn(move || -> shamba::Result<()> {
                let mut seed = 0x5eed ^ ((t + 1) * 0x9e37_79b9);
                let mut picked = Vec::with_capacity(per_tx as usize);
                while !stop.load(Ordering::Relaxed) {
                    picked.clear();
                    for _ in 0..per_tx {
                        picked.push(next(&mut seed) % keys);
                    }
                    work(&db, &picked, &counts)?;
                }
                Ok(())
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().map_err(|_| shamba::Error::InvalidArgument("a bench thread panicked".into()))??;
    }
    Ok(counts)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let secs: f64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3.0);
    let keys: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(10_000);
    let dir = tempfile::tempdir()?;
    let db = Db::open(dir.path(), Options::default())?;
    for k in 0..keys {
        db.put(key(k), 0u64.to_le_bytes())?;
    }
    println!(
        "{:>10} {:>7} {:>8} {:>12} {:>10} {:>10}",
        "keys/tx", "threads", "mode", "commits/s", "written", "flushed"
    );
    for per_tx in [1, 10] {
        for threads in [1, 2] {
            for (mode, work) in [("tx", rmw_tx as Work), ("plain", rmw_plain as Work)] {
                let t = Instant::now();
                let c = row(&db, work, per_tx, threads, keys, secs)?;
                let elapsed = t.elapsed().as_secs_f64();
                let commits = c.commits.load(Ordering::Relaxed);
                let (written, flushed) = (c.written.load(Ordering::Relaxed), c.flushed.load(Ordering::Relaxed));
                let attempts = (commits + written + flushed).max(1) as f64;
                println!(
                    "{per_tx:>10} {threads:>7} {mode:>8} {:>12.0} {:>9.3}% {:>9.3}%",
                    commits as f64 / elapsed,
                    100.0 * written as f64 / attempts,
                    100.0 * flushed as f64 / attempts
                );
            }
        }
    }
    db.close()?;
    Ok(())
}
