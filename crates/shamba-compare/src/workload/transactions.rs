//! Optimistic transactions, one and two client threads: read-modify-write of 1 and of 10
//! keys drawn uniformly from the accounts (little contention), a transfer between two
//! accounts (read two, write two), and one hot counter every transaction increments (every
//! concurrent pair conflicts); then the same writes without a transaction (plain puts, and
//! a get then a put), which is what the transaction path is measured against.
//!
//! A transaction that conflicts is run again at once, by the same loop for every engine,
//! until it commits. Its latency runs from its first begin to the commit that succeeded,
//! retries included. After each phase the accounts are summed (and the counter read): a
//! lost update or a transfer applied twice fails the run, so a row that is fast because it
//! skipped a conflict cannot be reported.

use super::KeySpec;
use crate::engine::txn::{Outcome, TxEngine};
use crate::engine::{EngineResult, Variant};
use crate::measure::{progress, thread_cpu_seconds};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::{Barrier, OnceLock};
use std::time::Instant;

/// Every account's balance before the first phase.
pub const INITIAL_BALANCE: u64 = 1_000_000;

/// Keys of a read-modify-write transaction in the wide variant.
pub const WIDE_KEYS: usize = 10;

/// Attempts one transaction may take before the run fails (an engine that never lets a
/// transaction through would otherwise hang the run).
const MAX_ATTEMPTS: u64 = 100_000;

/// Client thread counts of every phase.
pub const THREADS: [usize; 2] = [1, 2];

/// Progress bar updates every this many operations per thread.
const TICK: u64 = 256;

/// What one phase does per operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// A transaction adding 1 to `keys` distinct accounts.
    ReadModifyWrite {
        /// Accounts per transaction.
        keys: usize,
    },
    /// A transaction moving 1..=100 from one account to another.
    Transfer,
    /// A transaction adding 1 to the hot counter (a key beside the accounts).
    HotCounter,
    /// One put of a random account, no read, no transaction.
    PlainPut,
    /// A get then a put of one random account (plus 1), no transaction: the read-modify-write
    /// without its guarantee (two threads can lose updates).
    GetPut,
}

impl Work {
    /// The transaction workloads, in the order they run.
    pub const TRANSACTIONS: [Work; 4] = [
        Work::ReadModifyWrite { keys: 1 },
        Work::ReadModifyWrite { keys: WIDE_KEYS },
        Work::Transfer,
        Work::HotCounter,
    ];

    /// The plain workloads, after the transactions.
    pub const PLAIN: [Work; 2] = [Work::PlainPut, Work::GetPut];

    /// Whether an operation is a transaction.
    pub fn is_transaction(self) -> bool {
        !matches!(self, Work::PlainPut | Work::GetPut)
    }

    /// Table name (transactions) or row label (plain writes).
    pub fn name(self, accounts: u64) -> String {
        match self {
            Work::ReadModifyWrite { keys: 1 } => format!("read-modify-write of 1 key, uniform over {accounts} keys"),
            Work::ReadModifyWrite { keys } => {
                format!("read-modify-write of {keys} keys, uniform over {accounts} keys")
            }
            Work::Transfer => format!("transfer: read 2 accounts, write 2, uniform over {accounts}"),
            Work::HotCounter => "hot counter: every transaction increments one key".into(),
            Work::PlainPut => "put".into(),
            Work::GetPut => "get + put".into(),
        }
    }

    /// Operations of a phase of `ops`: the wide read-modify-write runs a tenth as many, so
    /// it writes as many keys as the one-key phase.
    pub fn operations(self, ops: u64) -> u64 {
        match self {
            Work::ReadModifyWrite { keys } => (ops / keys.max(1) as u64).max(1),
            _ => ops.max(1),
        }
    }

    /// How much a committed operation changes the sum of the accounts.
    fn total_change(self) -> u64 {
        match self {
            Work::ReadModifyWrite { keys } => keys as u64,
            Work::Transfer | Work::HotCounter => 0,
            Work::PlainPut | Work::GetPut => 0,
        }
    }
}

/// The accounts every phase works on.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Accounts {
    /// Key ids 0..n.
    pub n: u64,
    /// Key and value sizes.
    pub spec: KeySpec,
}

impl Accounts {
    /// The key of account `id` (the hot counter is id `n`).
    fn key(&self, id: u64) -> Vec<u8> {
        let mut key = self.spec.key_buf();
        self.spec.key(id, &mut key);
        key
    }

    /// A value holding `balance`: its first 8 bytes little-endian, padded to the value size.
    fn value(&self, id: u64, balance: u64) -> Vec<u8> {
        let mut value = vec![0u8; self.spec.value_size.max(8)];
        self.spec.value(id, &mut value);
        value[..8].copy_from_slice(&balance.to_le_bytes());
        value
    }

    /// The balance a value holds (0 for an absent key or a short value).
    fn balance(value: Option<&[u8]>) -> u64 {
        value.and_then(|v| v.get(..8)).and_then(|b| b.try_into().ok()).map_or(0, u64::from_le_bytes)
    }

    /// The hot counter's key id.
    fn hot(&self) -> u64 {
        self.n
    }
}

/// One measured phase of one engine.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TxMeasurement {
    /// Which workload: a transaction table, or the plain writes table.
    pub table: String,
    /// Row label ("1 thread", "put, 2 threads").
    pub phase: String,
    /// Engine.
    pub engine: Variant,
    /// Client threads.
    pub threads: usize,
    /// Operations completed (committed transactions, or plain operations).
    pub ops: u64,
    /// Attempts that conflicted and were run again.
    pub conflicts: u64,
    /// Wall-clock seconds of the phase.
    pub seconds: f64,
    /// CPU seconds of the client threads, summed (background threads not included).
    pub cpu_seconds: f64,
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Conflicts per completed operation.
    pub conflicts_per_op: f64,
    /// Median latency of an operation, microseconds (a transaction: first begin to commit).
    pub p50_us: f64,
    /// 99th percentile latency, microseconds.
    pub p99_us: f64,
}

impl TxMeasurement {
    /// Client CPU microseconds per operation.
    pub fn cpu_us_per_op(&self) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            self.cpu_seconds * 1e6 / self.ops as f64
        }
    }
}

/// What one client thread did.
struct ThreadRun {
    ops: u64,
    conflicts: u64,
    latencies_ns: Vec<u64>,
    cpu_seconds: f64,
}

/// The transaction rows of one engine: load the accounts and settle, run every workload at
/// every thread count, check the sums after each transaction phase.
pub struct Phases<'a> {
    /// The engine, opened for transactions on an empty directory.
    pub engine: &'a dyn TxEngine,
    /// The accounts.
    pub accounts: Accounts,
    /// Operations per phase (the wide read-modify-write runs a tenth).
    pub ops: u64,
    /// Seed of every key choice.
    pub seed: u64,
}

impl Phases<'_> {
    /// Load, run, check. Fails on an engine error or a sum that does not add up.
    pub fn run(&self) -> EngineResult<Vec<TxMeasurement>> {
        let a = &self.accounts;
        let pb = progress(a.n, self.engine.variant().name(), "transactions: load accounts");
        for id in 0..a.n {
            self.engine.put(&a.key(id), &a.value(id, INITIAL_BALANCE))?;
            if id % 4096 == 4095 {
                pb.inc(4096);
            }
        }
        pb.finish_and_clear();
        // The first phase should not pay for the load's flushes and compactions.
        self.engine.settle()?;
        let mut total = a.n.wrapping_mul(INITIAL_BALANCE);
        let mut counter = 0u64;
        let mut rows = Vec::new();
        for (w, work) in Work::TRANSACTIONS.into_iter().chain(Work::PLAIN).enumerate() {
            for threads in THREADS {
                let seed = self.seed ^ ((w as u64) << 32) ^ (threads as u64) << 48;
                let row = self.phase(work, threads, seed)?;
                if work.is_transaction() {
                    total = total.wrapping_add(row.ops.wrapping_mul(work.total_change()));
                    if work == Work::HotCounter {
                        counter += row.ops;
                    }
                    self.check(work, total, counter)?;
                }
                rows.push(row);
            }
        }
        Ok(rows)
    }

    /// The sum of the accounts must be `total` and the counter `counter`.
    fn check(&self, work: Work, total: u64, counter: u64) -> EngineResult<()> {
        let a = &self.accounts;
        let mut sum = 0u64;
        for id in 0..a.n {
            sum = sum.wrapping_add(Accounts::balance(self.engine.get(&a.key(id))?.as_deref()));
        }
        let seen = Accounts::balance(self.engine.get(&a.key(a.hot()))?.as_deref());
        if sum != total || seen != counter {
            return Err(format!(
                "{} after '{}': accounts sum to {sum} (expected {total}), counter {seen} (expected {counter}): \
                 an update was lost or applied twice",
                self.engine.variant().name(),
                work.name(a.n)
            )
            .into());
        }
        Ok(())
    }

    /// One phase: `threads` client threads share the work, start together, and are timed
    /// until the last one finishes.
    fn phase(&self, work: Work, threads: usize, seed: u64) -> EngineResult<TxMeasurement> {
        let a = &self.accounts;
        let total_ops = work.operations(self.ops);
        let plural = if threads == 1 { "thread" } else { "threads" };
        let (table, phase) = if work.is_transaction() {
            (format!("transactions: {}", work.name(a.n)), format!("{threads} {plural}"))
        } else {
            (
                format!("plain writes, no transaction, uniform over {} keys", a.n),
                format!("{}, {threads} {plural}", work.name(a.n)),
            )
        };
        let pb = progress(total_ops, self.engine.variant().name(), &format!("{table}: {phase}"));
        let barrier = Barrier::new(threads);
        let start = OnceLock::new();
        let runs: Vec<EngineResult<ThreadRun>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let share = total_ops / threads as u64 + u64::from((t as u64) < total_ops % threads as u64);
                    let (barrier, start, pb) = (&barrier, &start, &pb);
                    s.spawn(move || {
                        if barrier.wait().is_leader() {
                            let _ = start.set(Instant::now());
                        }
                        self.client(work, share, seed.wrapping_add(t as u64), pb)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a client thread panicked".into()))).collect()
        });
        let seconds = start.get().map_or(0.0, |at| at.elapsed().as_secs_f64());
        pb.finish_and_clear();
        let mut ops = 0;
        let mut conflicts = 0;
        let mut cpu_seconds = 0.0;
        let mut latencies = Vec::with_capacity(total_ops as usize);
        for run in runs {
            let run = run?;
            ops += run.ops;
            conflicts += run.conflicts;
            cpu_seconds += run.cpu_seconds;
            latencies.extend(run.latencies_ns);
        }
        latencies.sort_unstable();
        Ok(TxMeasurement {
            table,
            phase,
            engine: self.engine.variant(),
            threads,
            ops,
            conflicts,
            seconds,
            cpu_seconds,
            ops_per_sec: if seconds > 0.0 { ops as f64 / seconds } else { 0.0 },
            conflicts_per_op: if ops == 0 { 0.0 } else { conflicts as f64 / ops as f64 },
            p50_us: percentile(&latencies, 0.50) as f64 / 1e3,
            p99_us: percentile(&latencies, 0.99) as f64 / 1e3,
        })
    }

    /// One client thread's share of a phase.
    fn client(&self, work: Work, ops: u64, seed: u64, pb: &indicatif::ProgressBar) -> EngineResult<ThreadRun> {
        let a = &self.accounts;
        let mut rng = StdRng::seed_from_u64(seed);
        let mut latencies_ns = Vec::with_capacity(ops as usize);
        let mut conflicts = 0;
        let cpu_start = thread_cpu_seconds();
        let mut ids = Vec::new();
        for i in 0..ops {
            pick(work, a, &mut rng, &mut ids);
            let keys: Vec<Vec<u8>> = ids.iter().map(|&id| a.key(id)).collect();
            let amount = rng.gen_range(1..=100u64);
            let began = Instant::now();
            match work {
                Work::PlainPut => self.engine.put(&keys[0], &a.value(ids[0], INITIAL_BALANCE))?,
                Work::GetPut => {
                    let balance = Accounts::balance(self.engine.get(&keys[0])?.as_deref());
                    self.engine.put(&keys[0], &a.value(ids[0], balance.wrapping_add(1)))?;
                }
                _ => {
                    let key_refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
                    let mut update = |read: &[Option<Vec<u8>>]| -> Vec<Vec<u8>> {
                        let balances = read.iter().map(|v| Accounts::balance(v.as_deref()));
                        match work {
                            Work::Transfer => {
                                let mut b = balances;
                                let (from, to) = (b.next().unwrap_or(0), b.next().unwrap_or(0));
                                vec![
                                    a.value(ids[0], from.wrapping_sub(amount)),
                                    a.value(ids[1], to.wrapping_add(amount)),
                                ]
                            }
                            _ => balances.zip(&ids).map(|(b, &id)| a.value(id, b.wrapping_add(1))).collect(),
                        }
                    };
                    let mut attempts = 0;
                    while self.engine.read_modify_write(&key_refs, &mut update)? == Outcome::Conflict {
                        attempts += 1;
                        if attempts >= MAX_ATTEMPTS {
                            return Err(format!(
                                "{}: a transaction conflicted {attempts} times in a row",
                                self.engine.variant().name()
                            )
                            .into());
                        }
                    }
                    conflicts += attempts;
                }
            }
            latencies_ns.push(began.elapsed().as_nanos() as u64);
            if i % TICK == TICK - 1 {
                pb.inc(TICK);
            }
        }
        Ok(ThreadRun { ops, conflicts, latencies_ns, cpu_seconds: thread_cpu_seconds() - cpu_start })
    }
}

/// The account ids one operation touches, distinct, into `ids`.
fn pick(work: Work, a: &Accounts, rng: &mut StdRng, ids: &mut Vec<u64>) {
    ids.clear();
    let want = match work {
        Work::ReadModifyWrite { keys } => keys.min(a.n as usize),
        Work::Transfer => 2.min(a.n as usize),
        Work::HotCounter => {
            ids.push(a.hot());
            return;
        }
        Work::PlainPut | Work::GetPut => 1,
    };
    while ids.len() < want {
        let id = rng.gen_range(0..a.n.max(1));
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
}

/// The `q` quantile of sorted `values` (nearest rank), 0 when empty.
fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::txn::{open_tx, TX_VARIANTS};
    use crate::engine::Setup;

    #[test]
    fn percentile_is_nearest_rank() {
        assert_eq!(percentile(&[], 0.5), 0);
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.50), 50);
        assert_eq!(percentile(&v, 0.99), 99);
        assert_eq!(percentile(&[7], 0.99), 7);
    }

    #[test]
    fn picked_accounts_are_distinct_and_in_range() {
        let a = Accounts { n: 12, spec: KeySpec { n: 12, key_size: 16, value_size: 16 } };
        let mut rng = StdRng::seed_from_u64(1);
        let mut ids = Vec::new();
        for _ in 0..200 {
            pick(Work::ReadModifyWrite { keys: WIDE_KEYS }, &a, &mut rng, &mut ids);
            assert_eq!(ids.len(), WIDE_KEYS);
            assert!(ids.iter().all(|&id| id < a.n));
            let mut sorted = ids.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), WIDE_KEYS);
        }
        pick(Work::HotCounter, &a, &mut rng, &mut ids);
        assert_eq!(ids, vec![a.n]);
    }

    /// A transaction that read a key another one then changed must not commit: with two
    /// transactions interleaved by hand, the second commit of each engine conflicts.
    #[test]
    fn every_engine_refuses_a_commit_over_a_changed_key() {
        for variant in TX_VARIANTS.into_iter().filter(|v| v.compiled_in()) {
            let dir = tempfile::tempdir().expect("tempdir");
            let db = open_tx(variant, dir.path(), &Setup::small()).expect("open");
            db.put(b"k", &7u64.to_le_bytes()).expect("put");
            let mut inner = |read: &[Option<Vec<u8>>]| {
                // While the outer transaction is between its read and its commit, another
                // writer commits to the same key.
                db.put(b"k", &100u64.to_le_bytes()).expect("put");
                vec![(Accounts::balance(read[0].as_deref()) + 1).to_le_bytes().to_vec()]
            };
            let outcome = db.read_modify_write(&[b"k"], &mut inner).expect("attempt");
            assert_eq!(outcome, Outcome::Conflict, "{}", variant.name());
            assert_eq!(db.get(b"k").expect("get").as_deref(), Some(&100u64.to_le_bytes()[..]), "{}", variant.name());
            let mut plus_one =
                |read: &[Option<Vec<u8>>]| vec![(Accounts::balance(read[0].as_deref()) + 1).to_le_bytes().to_vec()];
            assert_eq!(db.read_modify_write(&[b"k"], &mut plus_one).expect("attempt"), Outcome::Committed);
            assert_eq!(db.get(b"k").expect("get").as_deref(), Some(&101u64.to_le_bytes()[..]), "{}", variant.name());
            db.close().expect("close");
        }
    }

    /// Every phase on every engine compiled in, small: the sums check out (the run fails
    /// otherwise), every operation is counted, two threads on the hot counter are timed.
    #[test]
    fn every_engine_runs_every_phase_and_its_sums_add_up() {
        for variant in TX_VARIANTS.into_iter().filter(|v| v.compiled_in()) {
            let dir = tempfile::tempdir().expect("tempdir");
            let db = open_tx(variant, dir.path(), &Setup::small()).expect("open");
            let accounts = Accounts { n: 500, spec: KeySpec { n: 500, key_size: 16, value_size: 24 } };
            let rows = Phases { engine: db.as_ref(), accounts, ops: 2000, seed: 3 }
                .run()
                .unwrap_or_else(|e| panic!("{}: {e}", variant.name()));
            assert_eq!(rows.len(), (Work::TRANSACTIONS.len() + Work::PLAIN.len()) * THREADS.len());
            for row in &rows {
                assert!(row.ops > 0 && row.ops_per_sec > 0.0, "{}: {row:?}", variant.name());
                assert!(row.p99_us >= row.p50_us && row.p50_us > 0.0, "{}: {row:?}", variant.name());
            }
            let wide = rows.iter().find(|r| r.table.contains("10 keys")).expect("wide row");
            assert_eq!(wide.ops, 2000 / WIDE_KEYS as u64);
            assert!(rows.iter().filter(|r| !r.table.starts_with("transactions")).all(|r| r.conflicts == 0));
            db.close().expect("close");
        }
    }
}
