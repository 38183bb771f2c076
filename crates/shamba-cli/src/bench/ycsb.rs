//! YCSB's core workloads A-F on a loaded database (`shamba bench --ycsb a,b,...`).
//!
//! The requests (mixes, Zipfian 0.99 records, D's latest records, scan lengths, the field
//! an update rewrites) come from `ycsb_requests.rs`, which `shamba-compare` shares. A
//! record is the load's value, split into `--ycsb-fields` equal fields (YCSB's default
//! record is 10 fields of 100 bytes: `--value-size 1000`). An update writes one field, as
//! YCSB's RocksDB binding does it: read the record, replace the field, write the record
//! back. Scans read 1-100 records (uniform) from a Zipfian start. Inserts add records after
//! the loaded ones, in key order of their sequence number (keys are the load's: even ids).

use super::keys::key_into;
use super::ycsb_requests::{rewrite_field, sampler, summarize, Op, Request, Requests, OPS};
pub use super::ycsb_requests::{Inserts, OpLatency, Workload};
use super::BenchArgs;
use rand::SeedableRng;
use serde::Serialize;
use shamba::{Db, Readable};
use std::error::Error;
use std::time::Instant;

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
    let sampler = sampler(records)?;
    let threads = args.threads.max(1);
    let start = Instant::now();
    let per_thread: Vec<Result<Thread, shamba::Error>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads as u64)
            .map(|t| {
                let n = ops / threads as u64 + u64::from(t < ops % threads as u64);
                let sampler = &sampler;
                s.spawn(move || {
                    let seed = workload.thread_seed(args.seed, t);
                    let requests = Requests { workload, records, fields, inserted, sampler };
                    let ctx = Client { db, args, requests };
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
    let latencies = summarize(all);
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
    requests: Requests<'a>,
}

impl Client<'_> {
    fn run(&self, n: u64, rng: &mut impl rand::Rng) -> Result<Thread, shamba::Error> {
        let mut latencies = vec![Vec::new(); OPS.len()];
        let mut not_found = 0;
        let mut key = vec![0u8; self.args.key_size];
        for _ in 0..n {
            let request = self.requests.next(rng);
            let t = Instant::now();
            let found = self.serve(&request, &mut key)?;
            let ns = t.elapsed().as_nanos() as u64;
            if !found {
                not_found += 1;
            }
            if let Some(l) = latencies.get_mut(request.op.index()) {
                l.push(ns);
            }
        }
        Ok(Thread { latencies, not_found })
    }

    /// Run one request; false if a record it needed was not found.
    fn serve(&self, r: &Request, key: &mut [u8]) -> Result<bool, shamba::Error> {
        key_into(2 * r.record, key);
        Ok(match r.op {
            Op::Read => self.db.get(&*key)?.is_some(),
            Op::Update => self.update_field(key, r)?,
            Op::ReadModifyWrite => self.db.get(&*key)?.is_some() && self.update_field(key, r)?,
            Op::Insert => {
                let mut value = vec![0u8; self.args.value_size];
                self.args.values().fill(2 * r.record, &mut value);
                self.db.put(&*key, &value)?;
                self.requests.inserted.acknowledge(r.record - self.requests.records);
                true
            }
            Op::Scan => {
                let mut it = self.db.iter();
                it.seek(key);
                let mut read = 0;
                for item in it.take(r.scan_len) {
                    item?;
                    read += 1;
                }
                read > 0
            }
        })
    }

    /// Replace one field of the record at `key`: read it, change the field, write it back.
    /// False if the record was not found.
    fn update_field(&self, key: &[u8], r: &Request) -> Result<bool, shamba::Error> {
        let Some(mut record) = self.db.get(key)? else {
            return Ok(false);
        };
        rewrite_field(&mut record, self.requests.fields, r.field, r.fill);
        self.db.put(key, &record)?;
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
