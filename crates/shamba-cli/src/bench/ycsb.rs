//! YCSB's core workloads A-F on a loaded database (`shamba bench --ycsb a,b,...`).
//!
//! The mixes and distributions are YCSB's (`workloads/workload[a-f]` of the YCSB
//! distribution): A 50% reads / 50% updates, B 95/5, C reads only, D 95% reads of the
//! latest records / 5% inserts, E 95% short scans / 5% inserts, F 50% reads / 50%
//! read-modify-writes; requests Zipfian (constant 0.99, the hot records scattered over the
//! key space as YCSB's scrambled Zipfian does), D's reads skewed to the newest insert.
//! A record is the load's value, split into `--ycsb-fields` equal fields (YCSB's default
//! record is 10 fields of 100 bytes: `--value-size 1000`). An update writes one field, as
//! YCSB's RocksDB binding does it: read the record, replace the field, write the record
//! back. Scans read 1-100 records (uniform) from a Zipfian start. Inserts add records after
//! the loaded ones, in key order of their sequence number (keys are the load's: even ids).

use super::keys::{key_into, RankSampler};
use super::BenchArgs;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use shamba::{Db, Readable};
use std::collections::BTreeSet;
use std::error::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// One of YCSB's core workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Update heavy: 50% reads, 50% updates.
    A,
    /// Read mostly: 95% reads, 5% updates.
    B,
    /// Read only.
    C,
    /// Read latest: 95% reads skewed to recent inserts, 5% inserts.
    D,
    /// Short ranges: 95% scans, 5% inserts.
    E,
    /// Read-modify-write: 50% reads, 50% read-modify-writes.
    F,
}

/// An operation kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

const OPS: [Op; 5] = [Op::Read, Op::Update, Op::Insert, Op::Scan, Op::ReadModifyWrite];

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Update => "update",
            Op::Insert => "insert",
            Op::Scan => "scan",
            Op::ReadModifyWrite => "rmw",
        }
    }
}

impl Workload {
    /// The share of each operation, in [`OPS`]' order.
    fn mix(self) -> [f64; 5] {
        match self {
            Workload::A => [0.5, 0.5, 0.0, 0.0, 0.0],
            Workload::B => [0.95, 0.05, 0.0, 0.0, 0.0],
            Workload::C => [1.0, 0.0, 0.0, 0.0, 0.0],
            Workload::D => [0.95, 0.0, 0.05, 0.0, 0.0],
            Workload::E => [0.0, 0.0, 0.05, 0.95, 0.0],
            Workload::F => [0.5, 0.0, 0.0, 0.0, 0.5],
        }
    }

    fn pick(self, rng: &mut impl Rng) -> Op {
        let mut x: f64 = rng.gen();
        for (op, share) in OPS.iter().zip(self.mix()) {
            if x < share {
                return *op;
            }
            x -= share;
        }
        Op::Read
    }
}

/// The records inserted after the load, shared by every client of a run. A read of the
/// "latest" records must find what it asks for, so it looks below the acknowledged limit:
/// the longest prefix of sequence numbers whose inserts have all completed (YCSB's
/// acknowledged counter), not the last number handed out.
#[derive(Debug, Default)]
pub struct Inserts {
    next: AtomicU64,
    limit: AtomicU64,
    done_past_limit: Mutex<BTreeSet<u64>>,
}

impl Inserts {
    fn allocate(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    fn acknowledge(&self, seq: u64) {
        let mut done = self.done_past_limit.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        done.insert(seq);
        let mut limit = self.limit.load(Ordering::Relaxed);
        while done.remove(&limit) {
            limit += 1;
        }
        self.limit.store(limit, Ordering::Release);
    }

    /// How many inserts have completed with every earlier one.
    fn acknowledged(&self) -> u64 {
        self.limit.load(Ordering::Acquire)
    }
}

/// Latencies of one operation kind, in nanoseconds.
#[derive(Debug, Clone, Serialize)]
pub struct OpLatency {
    /// Operation (`read`, `update`, `insert`, `scan`, `rmw`).
    pub op: &'static str,
    /// How many ran.
    pub count: u64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Longest.
    pub max_ns: u64,
}

/// One workload's run.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadResult {
    /// Which.
    pub workload: Workload,
    /// Client threads.
    pub threads: usize,
    /// Operations run.
    pub ops: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Operations per second, all threads.
    pub ops_per_sec: f64,
    /// Reads that found no record (a bug in the driver or the engine if not 0).
    pub not_found: u64,
    /// Per operation kind.
    pub latencies: Vec<OpLatency>,
}

/// Run `workload` with `ops` operations over `threads` threads on `db`, loaded by the bench's
/// load (`records` records). `inserted` holds the records inserted by earlier workloads of
/// the same run, so D and E add after them.
pub fn run_workload(
    db: &Db,
    args: &BenchArgs,
    workload: Workload,
    ops: u64,
    records: u64,
    inserted: &Inserts,
) -> Result<WorkloadResult, Box<dyn Error>> {
    let fields = args.ycsb_fields.max(1);
    if args.value_size < fields {
        return Err(format!("--value-size {} is smaller than --ycsb-fields {fields}", args.value_size).into());
    }
    let sampler = RankSampler::with_normal_sd(super::keys::KeyDistribution::Zipfian, records, 0.99, None)?;
    let threads = args.threads.max(1);
    let start = Instant::now();
    let per_thread: Vec<Result<Thread, shamba::Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads as u64)
            .map(|t| {
                let n = ops / threads as u64 + u64::from(t < ops % threads as u64);
                let sampler = &sampler;
                s.spawn(move || {
                    let seed = args.seed ^ (t + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ workload as u64;
                    let ctx = Client { db, args, workload, records, inserted, sampler, fields };
                    ctx.run(n, &mut rand::rngs::StdRng::seed_from_u64(seed))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let mut all: Vec<Vec<u64>> = vec![Vec::new(); OPS.len()];
    let mut not_found = 0;
    for t in per_thread {
        let t = t?;
        not_found += t.not_found;
        for (into, from) in all.iter_mut().zip(t.latencies) {
            into.extend(from);
        }
    }
    let latencies = OPS
        .iter()
        .zip(all.iter_mut())
        .filter(|(_, l)| !l.is_empty())
        .map(|(op, l)| {
            l.sort_unstable();
            let at = |q: f64| l.get(((l.len() as f64 * q) as usize).min(l.len() - 1)).copied().unwrap_or(0);
            OpLatency {
                op: op.name(),
                count: l.len() as u64,
                p50_ns: at(0.5),
                p99_ns: at(0.99),
                p999_ns: at(0.999),
                max_ns: l.last().copied().unwrap_or(0),
            }
        })
        .collect();
    Ok(WorkloadResult { workload, threads, ops, seconds, ops_per_sec: ops as f64 / seconds, not_found, latencies })
}

/// What one client thread measured.
struct Thread {
    latencies: Vec<Vec<u64>>,
    not_found: u64,
}

/// One client thread's view.
struct Client<'a> {
    db: &'a Db,
    args: &'a BenchArgs,
    workload: Workload,
    records: u64,
    inserted: &'a Inserts,
    sampler: &'a RankSampler,
    fields: usize,
}

impl Client<'_> {
    fn run(&self, n: u64, rng: &mut impl Rng) -> Result<Thread, shamba::Error> {
        let mut latencies = vec![Vec::new(); OPS.len()];
        let mut not_found = 0;
        let mut key = vec![0u8; self.args.key_size];
        for _ in 0..n {
            let op = self.workload.pick(rng);
            let t = Instant::now();
            let found = match op {
                Op::Read => {
                    key_into(2 * self.existing(rng), &mut key);
                    self.db.get(&key)?.is_some()
                }
                Op::Update => self.update_field(&mut key, self.existing(rng), rng)?,
                Op::ReadModifyWrite => {
                    let id = self.existing(rng);
                    key_into(2 * id, &mut key);
                    self.db.get(&key)?.is_some() && self.update_field(&mut key, id, rng)?
                }
                Op::Insert => {
                    let n = self.inserted.allocate();
                    let seq = self.records + n;
                    key_into(2 * seq, &mut key);
                    let mut value = vec![0u8; self.args.value_size];
                    self.args.values().fill(2 * seq, &mut value);
                    self.db.put(&key, &value)?;
                    self.inserted.acknowledge(n);
                    true
                }
                Op::Scan => {
                    key_into(2 * self.existing(rng), &mut key);
                    let len = rng.gen_range(1..=100usize);
                    let mut it = self.db.iter();
                    it.seek(&key);
                    let mut read = 0;
                    for item in it.take(len) {
                        item?;
                        read += 1;
                    }
                    read > 0
                }
            };
            let ns = t.elapsed().as_nanos() as u64;
            if !found {
                not_found += 1;
            }
            if let Some(l) = OPS.iter().position(|o| *o == op).and_then(|i| latencies.get_mut(i)) {
                l.push(ns);
            }
        }
        Ok(Thread { latencies, not_found })
    }

    /// A record that exists: Zipfian over the loaded ones, or for D the newest inserted
    /// ones (YCSB's "latest": the Zipfian rank counted back from the last insert).
    fn existing(&self, rng: &mut impl Rng) -> u64 {
        let rank = self.sampler.sample(rng);
        if self.workload == Workload::D {
            let newest = self.records + self.inserted.acknowledged();
            newest.saturating_sub(1 + rank % newest.max(1))
        } else {
            rank
        }
    }

    /// Replace one field of record `id`: read it, change the field, write it back. False
    /// if the record was not found.
    fn update_field(&self, key: &mut [u8], id: u64, rng: &mut impl Rng) -> Result<bool, shamba::Error> {
        key_into(2 * id, key);
        let Some(mut record) = self.db.get(&*key)? else {
            return Ok(false);
        };
        let width = record.len() / self.fields;
        let field = rng.gen_range(0..self.fields);
        let fill: u8 = rng.gen_range(b'a'..=b'z');
        if let Some(f) = record.get_mut(field * width..(field + 1) * width) {
            f.fill(fill);
        }
        self.db.put(&*key, &record)?;
        Ok(true)
    }
}

/// Print one workload's result as table rows.
pub fn print(r: &WorkloadResult) {
    println!(
        "ycsb-{:?} {} thread(s): {} ops in {:.2} s, {:.0} ops/s{}",
        r.workload,
        r.threads,
        r.ops,
        r.seconds,
        r.ops_per_sec,
        if r.not_found > 0 { format!(", {} not found", r.not_found) } else { String::new() }
    );
    for l in &r.latencies {
        println!(
            "  {:<7} {:>9} ops  p50 {:>8.1} us  p99 {:>8.1} us  p99.9 {:>8.1} us  max {:>9.1} us",
            l.op,
            l.count,
            l.p50_ns as f64 / 1e3,
            l.p99_ns as f64 / 1e3,
            l.p999_ns as f64 / 1e3,
            l.max_ns as f64 / 1e3
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mix_sums_to_one_and_picks_as_it_says() {
        for w in [Workload::A, Workload::B, Workload::C, Workload::D, Workload::E, Workload::F] {
            let mix = w.mix();
            assert!((mix.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{w:?}");
            let mut rng = rand::rngs::StdRng::seed_from_u64(7);
            let mut counts = [0u32; 5];
            for _ in 0..100_000 {
                let op = w.pick(&mut rng);
                counts[OPS.iter().position(|o| *o == op).unwrap()] += 1;
            }
            for (c, share) in counts.iter().zip(mix) {
                assert!((f64::from(*c) / 100_000.0 - share).abs() < 0.01, "{w:?}: {counts:?}");
            }
        }
    }

    #[test]
    fn the_acknowledged_limit_waits_for_every_earlier_insert() {
        let i = Inserts::default();
        let (a, b, c) = (i.allocate(), i.allocate(), i.allocate());
        i.acknowledge(b);
        assert_eq!(i.acknowledged(), 0, "insert {a} is still running");
        i.acknowledge(a);
        assert_eq!(i.acknowledged(), 2);
        i.acknowledge(c);
        assert_eq!(i.acknowledged(), 3);
    }
}
