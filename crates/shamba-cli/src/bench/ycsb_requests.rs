//! YCSB's request streams, with no engine in them: the core workloads' mixes, the
//! scrambled Zipfian 0.99 choice of records, D's "latest" records below the acknowledged
//! insert counter, E's scan lengths, the field an update rewrites, and the latency summary
//! per operation kind. `shamba bench --ycsb` runs them on a `Db`; `shamba-compare` includes
//! this file (by `#[path]`, beside `keys.rs`) and runs the very same streams on every
//! engine it compares, so both drivers draw requests from one definition.
//!
//! The mixes and distributions are YCSB's (`workloads/workload[a-f]` of the YCSB
//! distribution): A 50% reads / 50% updates, B 95/5, C reads only, D 95% reads of the
//! latest records / 5% inserts, E 95% short scans / 5% inserts, F 50% reads / 50%
//! read-modify-writes. Scans read 1-100 records (uniform) from a Zipfian start. Inserts add
//! records after the loaded ones, in key order of their sequence number (the loaded
//! records are the even key ids `0, 2, .., 2(records-1)`).

use super::keys::{KeyDistribution, RankSampler};
use rand::Rng;
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// YCSB's request distribution constant.
pub const ZIPF_THETA: f64 = 0.99;

/// Longest scan of workload E (YCSB's `maxscanlength`).
pub const MAX_SCAN_LEN: usize = 100;

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
pub enum Op {
    /// Read one record.
    Read,
    /// Rewrite one field of a record (read, change, write).
    Update,
    /// Add a record after the newest one.
    Insert,
    /// Read 1-100 records forward from one.
    Scan,
    /// Read a record, then update one of its fields.
    ReadModifyWrite,
}

/// Every operation kind, in the order of [`Workload::mix`] and of the latency summaries.
pub const OPS: [Op; 5] = [Op::Read, Op::Update, Op::Insert, Op::Scan, Op::ReadModifyWrite];

impl Op {
    /// Name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Update => "update",
            Op::Insert => "insert",
            Op::Scan => "scan",
            Op::ReadModifyWrite => "rmw",
        }
    }

    /// Position in [`OPS`].
    pub fn index(self) -> usize {
        match self {
            Op::Read => 0,
            Op::Update => 1,
            Op::Insert => 2,
            Op::Scan => 3,
            Op::ReadModifyWrite => 4,
        }
    }
}

impl Workload {
    /// Every workload, in YCSB's order.
    pub const ALL: [Workload; 6] = [Workload::A, Workload::B, Workload::C, Workload::D, Workload::E, Workload::F];

    /// The share of each operation, in [`OPS`]' order.
    pub fn mix(self) -> [f64; 5] {
        match self {
            Workload::A => [0.5, 0.5, 0.0, 0.0, 0.0],
            Workload::B => [0.95, 0.05, 0.0, 0.0, 0.0],
            Workload::C => [1.0, 0.0, 0.0, 0.0, 0.0],
            Workload::D => [0.95, 0.0, 0.05, 0.0, 0.0],
            Workload::E => [0.0, 0.0, 0.05, 0.95, 0.0],
            Workload::F => [0.5, 0.0, 0.0, 0.0, 0.5],
        }
    }

    /// Draw the next operation kind.
    pub fn pick(self, rng: &mut impl Rng) -> Op {
        let mut x: f64 = rng.gen();
        for (op, share) in OPS.iter().zip(self.mix()) {
            if x < share {
                return *op;
            }
            x -= share;
        }
        Op::Read
    }

    /// A client thread's seed for this workload: the same for every engine, different per
    /// thread and per workload.
    pub fn thread_seed(self, seed: u64, thread: u64) -> u64 {
        seed ^ (thread + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ self as u64
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
    /// The next insert's sequence number.
    pub fn allocate(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Insert `seq` is written.
    pub fn acknowledge(&self, seq: u64) {
        let mut done = self.done_past_limit.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        done.insert(seq);
        let mut limit = self.limit.load(Ordering::Relaxed);
        while done.remove(&limit) {
            limit += 1;
        }
        self.limit.store(limit, Ordering::Release);
    }

    /// How many inserts have completed with every earlier one.
    pub fn acknowledged(&self) -> u64 {
        self.limit.load(Ordering::Acquire)
    }
}

/// One request, drawn before it runs so that every engine gets the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// What to do.
    pub op: Op,
    /// The record (its key id is `2 * record`); for an insert, the sequence number to
    /// acknowledge is `record - records`.
    pub record: u64,
    /// Records a scan reads.
    pub scan_len: usize,
    /// The field an update or read-modify-write rewrites.
    pub field: usize,
    /// The byte the rewritten field is filled with.
    pub fill: u8,
}

/// Draws one client thread's requests.
pub struct Requests<'a> {
    /// Which workload.
    pub workload: Workload,
    /// Records loaded before the run.
    pub records: u64,
    /// Fields per record.
    pub fields: usize,
    /// The run's inserts (D's latest records, D's and E's new ones).
    pub inserted: &'a Inserts,
    /// Zipfian 0.99 over the loaded records, scattered.
    pub sampler: &'a RankSampler,
}

/// The request sampler of a run over `records` loaded records: YCSB's Zipfian constant,
/// hot records scattered over the key space (its scrambled Zipfian).
pub fn sampler(records: u64) -> Result<RankSampler, String> {
    RankSampler::with_normal_sd(KeyDistribution::Zipfian, records, ZIPF_THETA, None)
}

impl Requests<'_> {
    /// The next request. An insert allocates its sequence number here: acknowledge it
    /// with [`Inserts::acknowledge`] once written.
    pub fn next(&self, rng: &mut impl Rng) -> Request {
        let op = self.workload.pick(rng);
        let record = if op == Op::Insert { self.records + self.inserted.allocate() } else { self.existing(rng) };
        let scan_len = if op == Op::Scan { rng.gen_range(1..=MAX_SCAN_LEN) } else { 0 };
        let (field, fill) = if matches!(op, Op::Update | Op::ReadModifyWrite) {
            (rng.gen_range(0..self.fields.max(1)), rng.gen_range(b'a'..=b'z'))
        } else {
            (0, 0)
        };
        Request { op, record, scan_len, field, fill }
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
}

/// Rewrite field `field` of `record` (split into `fields` equal fields) with `fill`, as
/// YCSB's update writes one field of the record it read.
pub fn rewrite_field(record: &mut [u8], fields: usize, field: usize, fill: u8) {
    let width = record.len() / fields.max(1);
    if let Some(f) = record.get_mut(field * width..(field + 1) * width) {
        f.fill(fill);
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

/// The summary of each operation kind that ran, from every thread's latencies (indexed by
/// [`Op::index`]; sorted here).
pub fn summarize(mut per_op: Vec<Vec<u64>>) -> Vec<OpLatency> {
    OPS.iter()
        .zip(per_op.iter_mut())
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
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_mix_sums_to_one_and_picks_as_it_says() {
        for w in Workload::ALL {
            let mix = w.mix();
            assert!((mix.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{w:?}");
            let mut rng = rand::rngs::StdRng::seed_from_u64(7);
            let mut counts = [0u32; 5];
            for _ in 0..100_000 {
                counts[w.pick(&mut rng).index()] += 1;
            }
            for (c, share) in counts.iter().zip(mix) {
                assert!((f64::from(*c) / 100_000.0 - share).abs() < 0.01, "{w:?}: {counts:?}");
            }
        }
    }

    #[test]
    fn op_indexes_are_their_places_in_the_list() {
        for (i, op) in OPS.iter().enumerate() {
            assert_eq!(op.index(), i, "{op:?}");
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

    #[test]
    fn one_seed_draws_one_stream_and_reads_stay_on_records_that_exist() {
        let sampler = sampler(1000).unwrap();
        let draw = |w: Workload| {
            let inserted = Inserts::default();
            let requests = Requests { workload: w, records: 1000, fields: 10, inserted: &inserted, sampler: &sampler };
            let mut rng = rand::rngs::StdRng::seed_from_u64(w.thread_seed(42, 0));
            let stream: Vec<Request> = (0..2000)
                .map(|_| {
                    let r = requests.next(&mut rng);
                    if r.op == Op::Insert {
                        inserted.acknowledge(r.record - 1000);
                    }
                    r
                })
                .collect();
            (stream, inserted.acknowledged())
        };
        for w in Workload::ALL {
            let (a, inserts) = draw(w);
            assert_eq!(a, draw(w).0, "{w:?}");
            for r in a.iter().filter(|r| r.op != Op::Insert) {
                assert!(r.record < 1000 + inserts, "{w:?}: {r:?}");
                assert!(r.field < 10);
            }
            assert!(a.iter().filter(|r| r.op == Op::Scan).all(|r| (1..=MAX_SCAN_LEN).contains(&r.scan_len)));
        }
    }

    #[test]
    fn an_update_rewrites_only_its_field() {
        let mut record = vec![b'x'; 100];
        rewrite_field(&mut record, 10, 3, b'q');
        assert!(record[30..40].iter().all(|&b| b == b'q'));
        assert!(record[..30].iter().chain(&record[40..]).all(|&b| b == b'x'));
    }

    #[test]
    fn summaries_cover_the_kinds_that_ran() {
        let mut per_op = vec![Vec::new(); OPS.len()];
        per_op[Op::Scan.index()] = (1..=1000).rev().collect();
        let s = summarize(per_op);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].op, s[0].count, s[0].p50_ns, s[0].p99_ns, s[0].max_ns), ("scan", 1000, 501, 991, 1000));
    }
}
