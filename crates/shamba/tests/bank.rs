//! Bank transfers in transactions: threads move amounts between accounts, each transfer a
//! transaction that reads both balances for update, writes both, and records itself in a
//! ledger keyspace; readers sum every account in snapshots and in transactions. The total
//! never changes; after a SIGKILL and a reopen the balances are exactly the opening ones
//! plus the ledger's transfers (none applied twice, none lost, none half applied), and
//! every transfer the child acknowledged (a synced commit) is in the ledger.
//!
//! `SHAMBA_BANK_ROUNDS=50 cargo test --release --test bank` runs a longer kill loop.

use shamba::{Db, Keyspace, Options, Readable, TransactionOptions};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ACCOUNTS: u64 = 16;
const OPENING: i64 = 1000;
const THREADS: u64 = 4;
const CHILD_ENV: &str = "SHAMBA_BANK_CHILD_DIR";

fn options() -> Options {
    // Small memtables and files: flushes and compactions run under the transfers.
    Options {
        write_buffer_size: 16 << 10,
        target_file_size: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        level0_compaction_trigger: 2,
        ..Options::default()
    }
}

fn account(i: u64) -> Vec<u8> {
    format!("acct{i:03}").into_bytes()
}

fn number(v: &[u8]) -> i64 {
    String::from_utf8_lossy(v).parse().expect("a balance is a number")
}

/// The accounts and the ledger, opened (and the accounts funded) if new.
fn open(dir: &std::path::Path) -> (Db, Keyspace, Keyspace) {
    let db = Db::open(dir, options()).expect("open");
    let accounts = db.keyspace("accounts").expect("accounts");
    let ledger = db.keyspace("ledger").expect("ledger");
    if accounts.get(account(0)).expect("read").is_none() {
        db.transact(|tx| {
            for i in 0..ACCOUNTS {
                tx.keyspace(&accounts).put(account(i), OPENING.to_string())?;
            }
            Ok(())
        })
        .expect("fund");
    }
    (db, accounts, ledger)
}

/// Move a pseudo-random amount between two accounts, recorded as `id` in the ledger.
/// Returns how many attempts it took.
fn transfer(db: &Db, accounts: &Keyspace, ledger: &Keyspace, id: &str, seed: u64, sync: bool) -> shamba::Result<u64> {
    let from = seed % ACCOUNTS;
    let to = (from + 1 + (seed >> 8) % (ACCOUNTS - 1)) % ACCOUNTS;
    let amount = ((seed >> 16) % 50) as i64 + 1;
    let opts = TransactionOptions { max_attempts: 10_000, sync, ..TransactionOptions::default() };
    let mut attempts = 0;
    db.transact_with(&opts, |tx| {
        attempts += 1;
        let a = tx.keyspace(accounts);
        let f = number(&a.get_for_update(account(from))?.unwrap_or_default());
        let t = number(&a.get_for_update(account(to))?.unwrap_or_default());
        a.put(account(from), (f - amount).to_string())?;
        a.put(account(to), (t + amount).to_string())?;
        tx.keyspace(ledger).put(id, format!("{from},{to},{amount}"))
    })?;
    Ok(attempts)
}

fn total(r: &impl Readable) -> i64 {
    r.iter().map(|kv| number(&kv.expect("scan").1)).sum()
}

/// The balances are the opening ones plus the ledger's transfers, each once; returns the
/// ledger's ids.
fn check_ledger(accounts: &Keyspace, ledger: &Keyspace) -> Vec<String> {
    let mut want: BTreeMap<u64, i64> = (0..ACCOUNTS).map(|i| (i, OPENING)).collect();
    let mut ids = Vec::new();
    for kv in ledger.iter() {
        let (id, v) = kv.expect("ledger scan");
        let parts: Vec<i64> =
            String::from_utf8_lossy(&v).split(',').map(|p| p.parse().expect("ledger entry")).collect();
        let [from, to, amount] = parts[..] else { panic!("ledger entry {v:?}") };
        *want.entry(from as u64).or_default() -= amount;
        *want.entry(to as u64).or_default() += amount;
        ids.push(String::from_utf8(id).expect("id"));
    }
    for (i, balance) in want {
        let got = number(&accounts.get(account(i)).expect("get").expect("account"));
        assert_eq!(got, balance, "account {i}: the ledger says {balance}");
    }
    assert_eq!(total(accounts), ACCOUNTS as i64 * OPENING);
    ids
}

#[test]
fn the_total_never_changes_under_concurrent_transfers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, accounts, ledger) = open(dir.path());
    let stop = Arc::new(AtomicBool::new(false));
    let sums = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (db, accounts, stop, sums) = (db.clone(), accounts.clone(), stop.clone(), sums.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let sum = if r == 0 {
                        total(&db.snapshot().keyspace(&accounts))
                    } else {
                        // A transaction reads a snapshot too (its lease may run out, never
                        // here: a minute).
                        total(&db.transaction().keyspace(&accounts))
                    };
                    assert_eq!(sum, ACCOUNTS as i64 * OPENING, "a reader saw money made or lost");
                    sums.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let per_thread = 150;
    let retries = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (db, accounts, ledger, retries) = (db.clone(), accounts.clone(), ledger.clone(), retries.clone());
            std::thread::spawn(move || {
                let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ t;
                for n in 0..per_thread {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let attempts =
                        transfer(&db, &accounts, &ledger, &format!("{t}-{n:05}"), seed >> 20, false).expect("transfer");
                    retries.fetch_add(attempts - 1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().expect("reader");
    }
    let ids = check_ledger(&accounts, &ledger);
    assert_eq!(ids.len() as u64, THREADS * per_thread, "every transfer recorded once");
    assert!(sums.load(Ordering::Relaxed) > 0);
    eprintln!(
        "{} transfers, {} retried after a conflict, {} sums read",
        ids.len(),
        retries.load(Ordering::Relaxed),
        sums.load(Ordering::Relaxed)
    );
    drop((accounts, ledger));
    db.close().expect("close");
    let (db, accounts, ledger) = open(dir.path());
    assert_eq!(check_ledger(&accounts, &ledger).len(), ids.len(), "after a reopen");
    drop((accounts, ledger));
    db.close().expect("close");
}

/// Run by the child process: transfer forever from several threads with synced commits,
/// printing each transfer's id once its commit returned.
#[test]
fn bank_child_transfers() {
    let Ok(dir) = std::env::var(CHILD_ENV) else { return };
    let round: u64 = std::env::var("SHAMBA_BANK_ROUND").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let (db, accounts, ledger) = open(std::path::Path::new(&dir));
    let out = Arc::new(std::sync::Mutex::new(std::io::stdout()));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (db, accounts, ledger, out) = (db.clone(), accounts.clone(), ledger.clone(), out.clone());
            std::thread::spawn(move || {
                let mut seed = (round << 32) ^ (t + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                for n in 0.. {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let id = format!("{round:03}-{t}-{n:06}");
                    transfer(&db, &accounts, &ledger, &id, seed >> 20, true).expect("child transfer");
                    let mut out = out.lock().expect("stdout");
                    // Marked: the test harness prints to the same stream.
                    writeln!(out, "\nacked {id}").expect("child stdout");
                    out.flush().expect("child flush");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("child thread");
    }
}

#[test]
fn transfers_survive_sigkill_exactly_once() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let rounds: u64 = std::env::var("SHAMBA_BANK_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("test binary");
    let mut seed: u64 = 0xba4c;
    let mut recorded = 0;
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args(["--exact", "bank_child_transfers", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .env("SHAMBA_BANK_ROUND", round.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let stdout = child.stdout.take().expect("child stdout");
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let target = 30 + (seed >> 33) % 300;
        let acked = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let reader = {
            let acked = acked.clone();
            // Read to EOF (closing the pipe early would kill the child by EPIPE instead).
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if let Some(id) = line.trim().strip_prefix("acked ") {
                        acked.lock().expect("acked").push(id.to_string());
                    }
                }
            })
        };
        let started = Instant::now();
        while (acked.lock().expect("acked").len() as u64) < target && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_micros(500));
        }
        child.kill().expect("kill child");
        let _ = child.wait();
        let _ = reader.join();
        let acked = acked.lock().expect("acked").clone();

        let (db, accounts, ledger) = open(dir.path());
        let ids = check_ledger(&accounts, &ledger);
        let mut missing: Vec<&String> = acked.iter().filter(|id| ids.binary_search(id).is_err()).collect();
        missing.truncate(5);
        assert!(missing.is_empty(), "round {round}: acknowledged transfers lost: {missing:?}");
        assert!(ids.len() >= recorded, "round {round}: transfers of earlier rounds lost");
        // At most one transfer per child thread was committed but not acknowledged.
        let this_round = ids.iter().filter(|id| id.starts_with(&format!("{round:03}-"))).count();
        assert!(
            this_round <= acked.len() + THREADS as usize,
            "round {round}: {this_round} recorded, {} acked",
            acked.len()
        );
        recorded = ids.len();
        drop((accounts, ledger));
        db.close().expect("close");
    }
    assert!(recorded as u64 > rounds * 10, "the child barely transferred anything: {recorded}");
    eprintln!("{recorded} transfers recorded over {rounds} kills");
}
