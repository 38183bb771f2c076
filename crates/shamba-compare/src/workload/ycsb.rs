//! YCSB's core workloads A-F on each engine, one and two client threads, on the same
//! request streams.
//!
//! Per record shape (value size), each engine loads the same records in the same shuffled
//! order on a fresh database of its own (the comparison's shared options, WAL on, no sync),
//! settles, then runs every workload in the order given, each with 1 then 2 client
//! threads. Each run starts from a settled tree (the memtable flushed, no compaction
//! running), so one run's compaction debt is not charged to the next; D and E insert
//! records that the later runs see, the same for every engine. The requests come from
//! `ycsb_requests.rs`, shared with `shamba bench --ycsb`: thread `t` of workload `w` draws
//! from the same seed on every engine, so with one thread every engine serves the very same
//! requests; with two, each thread's stream is the same and only their interleaving
//! differs. An update reads the record, rewrites one field and writes it back (as YCSB's
//! RocksDB binding does); a read copies the value out (every engine once).

use super::run_stats::{RunStats, Snapshot};
use super::{load, KeySpec};
use crate::engine::{self, Engine, EngineResult, Setup, Variant};
use crate::keys::key_into;
use crate::measure::{progress, thread_cpu_seconds};
use crate::ycsb_requests::{
    rewrite_field, sampler, summarize, Inserts, Op, OpLatency, Request, Requests, Workload, OPS,
};
use rand::SeedableRng;
use std::path::Path;
use std::time::Instant;

/// The engines that have YCSB rows: one per engine, as the filter variants barely change
/// what a YCSB run measures.
pub const YCSB_VARIANTS: [Variant; 3] = [Variant::Shamba, Variant::Rocksdb, Variant::Fjall];

/// Client thread counts of every workload.
pub const THREADS: [usize; 2] = [1, 2];

/// Progress bar updates every this many operations per thread.
const TICK: u64 = 256;

/// The YCSB family's arguments (flattened into the command line).
#[derive(Debug, Clone, clap::Args)]
pub struct YcsbArgs {
    /// YCSB workloads to run, in order (default: a-f). Giving them runs the YCSB family;
    /// without them it runs only with `--only ycsb`.
    #[arg(long = "ycsb", value_enum, value_delimiter = ',')]
    pub workloads: Vec<Workload>,
    /// Records loaded before the YCSB workloads (default: 200k; 20k with --quick).
    #[arg(long)]
    pub ycsb_records: Option<u64>,
    /// Operations per YCSB workload and thread count (default: 200k; 20k with --quick).
    #[arg(long)]
    pub ycsb_ops: Option<u64>,
    /// Fields per YCSB record: an update rewrites one of them.
    #[arg(long, default_value_t = 10)]
    pub ycsb_fields: usize,
    /// YCSB record sizes in bytes, one database each (1000 = YCSB's 10 fields of 100 B).
    #[arg(long, value_delimiter = ',', default_value = "1000")]
    pub ycsb_value_sizes: Vec<usize>,
}

impl YcsbArgs {
    /// The plan, with the run's key size and seed.
    pub fn plan(&self, quick: bool, key_size: usize, seed: u64) -> YcsbPlan {
        let (records, ops) = if quick { (20_000, 20_000) } else { (200_000, 200_000) };
        YcsbPlan {
            workloads: if self.workloads.is_empty() { Workload::ALL.to_vec() } else { self.workloads.clone() },
            records: self.ycsb_records.unwrap_or(records).max(16),
            ops: self.ycsb_ops.unwrap_or(ops).max(16),
            fields: self.ycsb_fields.max(1),
            value_sizes: self.ycsb_value_sizes.clone(),
            key_size,
            seed,
        }
    }
}

impl YcsbPlan {
    /// The family's line of the equal footing.
    pub fn footing(&self) -> String {
        format!(
            "ycsb: workloads {:?} on {} records ({} B keys; records of {:?} B in {} fields) per engine, {} ops per \
             workload and thread count (1 and 2 client threads), Zipfian 0.99 scattered, seed {}; each run starts \
             settled; an update reads the record, rewrites one field, writes it back; WAL on, sync off; shamba, \
             rocksdb, fjall",
            self.workloads, self.records, self.key_size, self.value_sizes, self.fields, self.ops, self.seed
        )
    }
}

/// What the YCSB family runs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct YcsbPlan {
    /// Workloads, in the order they run.
    pub workloads: Vec<Workload>,
    /// Records loaded before the workloads.
    pub records: u64,
    /// Operations per workload and thread count (split over the threads).
    pub ops: u64,
    /// Fields per record: an update rewrites one.
    pub fields: usize,
    /// Record (value) sizes; one database per size.
    pub value_sizes: Vec<usize>,
    /// Key size in bytes.
    pub key_size: usize,
    /// Seed of the load order and of every request stream.
    pub seed: u64,
}

/// One workload run on one engine.
#[derive(Debug, Clone, serde::Serialize)]
pub struct YcsbMeasurement {
    /// Engine.
    pub engine: Variant,
    /// Workload.
    pub workload: Workload,
    /// Client threads.
    pub threads: usize,
    /// Record size in bytes.
    pub value_size: usize,
    /// Operations run (all threads).
    pub ops: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// CPU seconds of the client threads, summed (the engines' background threads not
    /// included).
    pub cpu_seconds: f64,
    /// Operations per second, all threads.
    pub ops_per_sec: f64,
    /// Requests whose record was not found (a bug in the driver or the engine if not 0).
    pub not_found: u64,
    /// Per operation kind.
    pub latencies: Vec<OpLatency>,
    /// The engine's counters over the run: block reads, compactions, stalls.
    pub engine_stats: RunStats,
    /// Table files per level (L0 first) when the run started, settled.
    pub files_per_level: Vec<usize>,
}

impl YcsbMeasurement {
    /// One line on the run just finished, printed as it ends (a run that is stopped later,
    /// e.g. an engine that stops taking writes, keeps the rows it finished).
    pub fn progress_line(&self) -> String {
        format!(
            "ycsb row: {} {:?} {} thread(s) {} B: {:.0} ops/s, {:.2} cpu us/op, not found {}, {:.2} blocks read/op, \
             files per level at the start {:?}",
            self.engine.name(),
            self.workload,
            self.threads,
            self.value_size,
            self.ops_per_sec,
            self.cpu_us_per_op(),
            self.not_found,
            self.blocks_per_op(),
            self.files_per_level
        )
    }

    /// Blocks the engine read from files per operation during the run.
    pub fn blocks_per_op(&self) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            self.engine_stats.blocks_read as f64 / self.ops as f64
        }
    }

    /// Client CPU microseconds per operation.
    pub fn cpu_us_per_op(&self) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            self.cpu_seconds * 1e6 / self.ops as f64
        }
    }
}

/// Every workload of `plan` on `variant`, one fresh database per record size under `root`
/// (removed afterwards).
pub fn run(variant: Variant, plan: &YcsbPlan, setup: &Setup, root: &Path) -> EngineResult<Vec<YcsbMeasurement>> {
    let fields = plan.fields.max(1);
    let mut rows = Vec::new();
    for &value_size in &plan.value_sizes {
        if value_size < fields {
            return Err(format!("YCSB record of {value_size} B is smaller than its {fields} fields").into());
        }
        let dir = root.join(format!("{}-ycsb-{value_size}", variant.name()));
        let _ = std::fs::remove_dir_all(&dir);
        let db = engine::open(variant, &dir, setup)?;
        let spec = KeySpec { n: plan.records.max(1), key_size: plan.key_size, value_size };
        let order = load::shuffled_ids(spec.n, plan.seed);
        load::load(db.as_ref(), &spec, &order, &format!("ycsb records of {value_size} B"))?;
        let inserted = Inserts::default();
        for &workload in &plan.workloads {
            for threads in THREADS {
                db.settle()?;
                let run = Run { engine: db.as_ref(), spec, fields, inserted: &inserted, seed: plan.seed };
                let row = run.workload(workload, threads, plan.ops)?;
                eprintln!("{}", row.progress_line());
                rows.push(row);
            }
        }
        db.close()?;
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(rows)
}

/// One loaded database and the inserts made on it so far.
struct Run<'a> {
    engine: &'a dyn Engine,
    spec: KeySpec,
    fields: usize,
    inserted: &'a Inserts,
    seed: u64,
}

/// What one client thread measured.
struct Thread {
    latencies: Vec<Vec<u64>>,
    not_found: u64,
    cpu_seconds: f64,
}

impl Run<'_> {
    /// `ops` operations of `workload` over `threads` client threads.
    fn workload(&self, workload: Workload, threads: usize, ops: u64) -> EngineResult<YcsbMeasurement> {
        let sampler = sampler(self.spec.n)?;
        let phase = format!("ycsb {workload:?}, {threads} thread(s), {} B", self.spec.value_size);
        let pb = progress(ops, self.engine.variant().name(), &phase);
        let files_per_level = self.engine.shape()?.files_per_level;
        let before = Snapshot::of(self.engine);
        let start = Instant::now();
        let per_thread: Vec<EngineResult<Thread>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads as u64)
                .map(|t| {
                    let n = ops / threads as u64 + u64::from(t < ops % threads as u64);
                    let (sampler, pb) = (&sampler, &pb);
                    s.spawn(move || {
                        let requests = Requests {
                            workload,
                            records: self.spec.n,
                            fields: self.fields,
                            inserted: self.inserted,
                            sampler,
                        };
                        let mut rng = rand::rngs::StdRng::seed_from_u64(workload.thread_seed(self.seed, t));
                        self.client(&requests, n, &mut rng, pb)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        });
        let seconds = start.elapsed().as_secs_f64();
        let engine_stats = RunStats::between(&before, &Snapshot::of(self.engine));
        pb.finish_and_clear();
        let mut all: Vec<Vec<u64>> = vec![Vec::new(); OPS.len()];
        let (mut not_found, mut cpu_seconds) = (0, 0.0);
        for t in per_thread {
            let t = t?;
            not_found += t.not_found;
            cpu_seconds += t.cpu_seconds;
            for (into, from) in all.iter_mut().zip(t.latencies) {
                into.extend(from);
            }
        }
        Ok(YcsbMeasurement {
            engine: self.engine.variant(),
            workload,
            threads,
            value_size: self.spec.value_size,
            ops,
            seconds,
            cpu_seconds,
            ops_per_sec: if seconds > 0.0 { ops as f64 / seconds } else { 0.0 },
            not_found,
            latencies: summarize(all),
            engine_stats,
            files_per_level,
        })
    }

    /// One client thread: `n` requests, each timed.
    fn client(
        &self,
        requests: &Requests<'_>,
        n: u64,
        rng: &mut rand::rngs::StdRng,
        pb: &indicatif::ProgressBar,
    ) -> EngineResult<Thread> {
        let cpu_start = thread_cpu_seconds();
        let mut latencies = vec![Vec::new(); OPS.len()];
        let mut not_found = 0;
        let mut key = self.spec.key_buf();
        for i in 0..n {
            let request = requests.next(rng);
            let t = Instant::now();
            let found = self.serve(&request, &mut key)?;
            let ns = t.elapsed().as_nanos() as u64;
            if !found {
                not_found += 1;
            }
            if let Some(l) = latencies.get_mut(request.op.index()) {
                l.push(ns);
            }
            if i % TICK == TICK - 1 {
                pb.inc(TICK);
            }
        }
        Ok(Thread { latencies, not_found, cpu_seconds: thread_cpu_seconds() - cpu_start })
    }

    /// Run one request; false if a record it needed was not found.
    fn serve(&self, r: &Request, key: &mut [u8]) -> EngineResult<bool> {
        key_into(2 * r.record, key);
        Ok(match r.op {
            Op::Read => self.engine.read(key)?.is_some(),
            Op::Update => self.update_field(key, r)?,
            Op::ReadModifyWrite => self.engine.read(key)?.is_some() && self.update_field(key, r)?,
            Op::Insert => {
                let mut value = vec![0u8; self.spec.value_size];
                self.spec.value(2 * r.record, &mut value);
                self.engine.put(key, &value)?;
                self.inserted.acknowledge(r.record - self.spec.n);
                true
            }
            Op::Scan => self.engine.scan(key, r.scan_len)? > 0,
        })
    }

    /// Rewrite one field of the record at `key`: read it, change the field, write it back.
    /// False if the record was not found.
    fn update_field(&self, key: &[u8], r: &Request) -> EngineResult<bool> {
        let Some(mut record) = self.engine.read(key)? else {
            return Ok(false);
        };
        rewrite_field(&mut record, self.fields, r.field, r.fill);
        self.engine.put(key, &record)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every engine compiled in answers every workload, one and two threads, with every
    /// record it is asked for found, and runs each operation kind the mix names.
    #[test]
    fn every_engine_answers_every_workload_with_nothing_missing() {
        let plan = YcsbPlan {
            workloads: Workload::ALL.to_vec(),
            records: 3000,
            ops: 2000,
            fields: 10,
            value_sizes: vec![100],
            key_size: 16,
            seed: 42,
        };
        for variant in YCSB_VARIANTS.into_iter().filter(|v| v.compiled_in()) {
            let dir = tempfile::tempdir().expect("tempdir");
            let rows = run(variant, &plan, &Setup::small(), dir.path()).expect("ycsb run");
            assert_eq!(rows.len(), Workload::ALL.len() * THREADS.len(), "{}", variant.name());
            for r in &rows {
                assert_eq!(r.not_found, 0, "{} {:?} {} threads", variant.name(), r.workload, r.threads);
                assert!(!r.files_per_level.is_empty(), "{} {:?}: no tables before the run", variant.name(), r.workload);
                assert_eq!(r.latencies.iter().map(|l| l.count).sum::<u64>(), r.ops);
                let ran: Vec<&str> = r.latencies.iter().map(|l| l.op).collect();
                let named: Vec<&str> = OPS
                    .iter()
                    .zip(r.workload.mix())
                    .filter(|(_, share)| *share > 0.0)
                    .map(|(op, _)| op.name())
                    .collect();
                assert_eq!(ran, named, "{} {:?}", variant.name(), r.workload);
            }
        }
    }

    /// An update rewrites one field of the stored record, and the record keeps its size.
    #[test]
    fn an_update_writes_back_the_record_with_one_field_changed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = engine::open(Variant::Shamba, dir.path(), &Setup::small()).expect("open");
        let spec = KeySpec { n: 10, key_size: 16, value_size: 100 };
        let mut key = spec.key_buf();
        spec.key(2 * 3, &mut key);
        let mut value = vec![0u8; 100];
        spec.value(2 * 3, &mut value);
        db.put(&key, &value).expect("put");
        let inserted = Inserts::default();
        let run = Run { engine: db.as_ref(), spec, fields: 10, inserted: &inserted, seed: 1 };
        let request = Request { op: Op::Update, record: 3, scan_len: 0, field: 2, fill: b'#' };
        assert!(run.serve(&request, &mut key).expect("update"));
        let stored = db.read(&key).expect("read").expect("present");
        assert_eq!(stored.len(), 100);
        assert!(stored[20..30].iter().all(|&b| b == b'#'));
        assert_eq!(stored[..20], value[..20]);
        assert_eq!(stored[30..], value[30..]);
        let missing = Request { record: 4, ..request };
        assert!(!run.serve(&missing, &mut key).expect("update of a missing record"));
        db.close().expect("close");
    }
}
