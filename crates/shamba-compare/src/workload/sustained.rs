//! Sustained load: random puts as fast as the engine takes them, for a fixed time, from one
//! or more client threads, on a fresh database. What a user who never stops writing sees:
//! puts per second, second by second; put latency quantiles; the longest stall (the longest
//! single put, and the longest run of seconds below a tenth of the mean rate); bytes
//! written per byte put. Once a second the first client thread samples the engine's L0
//! files, compaction debt and stall time, outside its timed puts.

use super::latency::Histogram;
use super::KeySpec;
use crate::disk::process_written_bytes;
use crate::engine::{Engine, EngineResult, Variant, WriteCounters};
use crate::measure::progress;
use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A second counts as stalled below this fraction of the run's mean rate.
pub const LOW_FRACTION: f64 = 0.1;

/// How long past the end of the run a client thread's last put may take before the run
/// is reported as halted (the engine stopped taking writes and never resumed).
pub const HALT_GRACE: Duration = Duration::from_secs(30);

/// The engine's state at the end of one second of the run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    /// Seconds since the run began.
    pub second: u64,
    /// L0 files (or runs), where exposed.
    pub l0_files: Option<u64>,
    /// Compaction debt in bytes, where exposed.
    pub pending_compaction_bytes: Option<u64>,
    /// Cumulative stall microseconds, where exposed.
    pub stall_micros: Option<u64>,
}

/// One sustained run of one engine.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SustainedRun {
    /// Engine configuration.
    pub engine: Variant,
    /// Key and value sizes (`n` unused: keys are drawn from 2^40 ids).
    pub key_size: usize,
    /// Value size in bytes.
    pub value_size: usize,
    /// Client threads putting at once.
    pub threads: usize,
    /// Wall-clock seconds the puts ran.
    pub seconds: f64,
    /// Puts done.
    pub puts: u64,
    /// Puts that completed in each whole second of the run.
    pub per_second: Vec<u64>,
    /// Mean puts per second.
    pub mean_per_sec: f64,
    /// The slowest whole second's puts.
    pub min_per_sec: u64,
    /// Put latency quantiles and maximum, nanoseconds.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// The longest put (for a halted run, at least the time since its writer's last put
    /// returned).
    pub max_ns: u64,
    /// Seconds into the run when a client thread's last put returned, if one put then
    /// never returned within [`HALT_GRACE`] past the end: the engine halted writes.
    #[serde(default)]
    pub halted_after_secs: Option<f64>,
    /// The longest run of consecutive seconds below [`LOW_FRACTION`] of the mean rate.
    pub longest_low_secs: u64,
    /// Key and value bytes put.
    pub user_bytes: u64,
    /// Bytes the process wrote through system calls meanwhile (every engine thread).
    pub process_written_bytes: Option<u64>,
    /// The engine's own WAL + flush + compaction bytes over the run, where it counts them.
    pub engine_written_bytes: Option<u64>,
    /// The engine's counters at the end (cumulative since open).
    pub end: WriteCounters,
    /// Files per level at the end (not settled: what the writers left behind).
    pub files_per_level: Vec<usize>,
    /// The engine's state once a second.
    pub samples: Vec<Sample>,
}

impl SustainedRun {
    /// Bytes written per byte put, by the process's own count.
    pub fn process_write_amp(&self) -> Option<f64> {
        ratio(self.process_written_bytes?, self.user_bytes)
    }

    /// Bytes written per byte put, by the engine's count.
    pub fn engine_write_amp(&self) -> Option<f64> {
        ratio(self.engine_written_bytes?, self.user_bytes)
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// The longest run of consecutive entries below `threshold`.
pub fn longest_run_below(per_second: &[u64], threshold: f64) -> u64 {
    let (mut best, mut run) = (0, 0);
    for &n in per_second {
        if (n as f64) < threshold {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// WAL + flush + compaction bytes, when the engine counts all three.
fn engine_bytes(c: &WriteCounters) -> Option<u64> {
    Some(c.wal_bytes? + c.flush_bytes? + c.compaction_bytes?)
}

/// What one client thread measured.
#[derive(Clone, Default)]
struct ThreadRun {
    hist: Histogram,
    per_second: Vec<u64>,
    samples: Vec<Sample>,
    /// When its last put returned.
    last_done: Option<Instant>,
}

/// Put for `secs` seconds from `threads` client threads (each its own seed), keys of
/// `spec.key_size` bytes from random 40-bit ids (almost all new), values of
/// `spec.value_size` bytes. A client thread whose put has not returned [`HALT_GRACE`] after
/// the end is left behind (it holds its `Arc` of the engine, which is then never closed),
/// and the run reports what that thread had measured up to its last second, as halted.
pub fn run(
    engine: &Arc<dyn Engine>,
    spec: &KeySpec,
    secs: u64,
    threads: usize,
    seed: u64,
) -> EngineResult<SustainedRun> {
    let threads = threads.max(1);
    let before = engine.write_counters();
    let written_before = process_written_bytes();
    let pb = progress(secs, engine.variant().name(), &format!("sustained {} B, {threads} thr", spec.value_size));
    let start = Instant::now();
    let deadline = start + Duration::from_secs(secs);
    let (tx, rx) = mpsc::channel();
    let mut published = Vec::new();
    for t in 0..threads {
        let (engine, spec, tx) = (Arc::clone(engine), *spec, tx.clone());
        let pb = (t == 0).then(|| pb.clone());
        let snapshot = Arc::new(Mutex::new(ThreadRun::default()));
        published.push(Arc::clone(&snapshot));
        let client = Client { engine, spec, secs, start, deadline, seed: seed.wrapping_add(t as u64), pb, snapshot };
        std::thread::Builder::new().name(format!("sustained-{t}")).spawn(move || {
            let _ = tx.send((t, client.run()));
        })?;
    }
    let mut finished: Vec<Option<ThreadRun>> = vec![None; threads];
    let mut received = 0;
    while received < threads {
        let wait = (deadline + HALT_GRACE).saturating_duration_since(Instant::now());
        match rx.recv_timeout(wait) {
            Ok((t, r)) => {
                if let Some(slot) = finished.get_mut(t) {
                    *slot = Some(r?);
                }
                received += 1;
            }
            Err(_) => break,
        }
    }
    let seconds = start.elapsed().as_secs_f64().min(secs as f64);
    pb.finish_and_clear();
    let mut hist = Histogram::default();
    let mut per_second = vec![0u64; secs as usize];
    let mut samples = Vec::new();
    let mut halted_after_secs: Option<f64> = None;
    for (done, snapshot) in finished.into_iter().zip(&published) {
        let r = match done {
            Some(r) => r,
            None => {
                // Halted: what the thread published at its last whole second.
                let r = snapshot.lock().clone();
                let last = r.last_done.unwrap_or(start);
                let after = last.duration_since(start).as_secs_f64();
                halted_after_secs = Some(halted_after_secs.map_or(after, |h| h.min(after)));
                hist.record(last.elapsed().as_nanos() as u64);
                r
            }
        };
        hist.merge(&r.hist);
        for (a, b) in per_second.iter_mut().zip(&r.per_second) {
            *a += b;
        }
        samples.extend(r.samples);
    }
    let written_after = process_written_bytes();
    let end = engine.write_counters();
    let puts = hist.count();
    let mean =
        if per_second.is_empty() { 0.0 } else { per_second.iter().sum::<u64>() as f64 / per_second.len() as f64 };
    Ok(SustainedRun {
        engine: engine.variant(),
        key_size: spec.key_size,
        value_size: spec.value_size,
        threads,
        seconds,
        puts,
        mean_per_sec: mean,
        min_per_sec: per_second.iter().copied().min().unwrap_or(0),
        longest_low_secs: longest_run_below(&per_second, LOW_FRACTION * mean),
        per_second,
        p50_ns: hist.quantile(0.5),
        p99_ns: hist.quantile(0.99),
        p999_ns: hist.quantile(0.999),
        max_ns: hist.max(),
        halted_after_secs,
        user_bytes: puts * (spec.key_size + spec.value_size) as u64,
        process_written_bytes: written_after.zip(written_before).map(|(a, b)| a.saturating_sub(b)),
        engine_written_bytes: engine_bytes(&end).zip(engine_bytes(&before)).map(|(a, b)| a.saturating_sub(b)),
        files_per_level: engine.shape()?.files_per_level,
        end,
        samples,
    })
}

/// One client thread: puts until the deadline. The sampling thread (`pb` given) also
/// samples the engine at each new second; every thread publishes what it has measured at
/// each new second, for the run to report if a put of its never returns.
struct Client {
    engine: Arc<dyn Engine>,
    spec: KeySpec,
    secs: u64,
    start: Instant,
    deadline: Instant,
    seed: u64,
    pb: Option<indicatif::ProgressBar>,
    snapshot: Arc<Mutex<ThreadRun>>,
}

impl Client {
    fn run(self) -> EngineResult<ThreadRun> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(self.seed);
        let mut key = self.spec.key_buf();
        let mut value = vec![0u8; self.spec.value_size];
        let mut run = ThreadRun { per_second: vec![0; self.secs as usize], ..ThreadRun::default() };
        let mut second = 0u64;
        loop {
            let id = rng.gen::<u64>() >> 24;
            self.spec.key(id, &mut key);
            self.spec.value(id, &mut value);
            let t = Instant::now();
            self.engine.put(&key, &value)?;
            let done = Instant::now();
            if done >= self.deadline {
                // A put that ends past the deadline is outside every whole second: not counted.
                break;
            }
            run.hist.record(done.duration_since(t).as_nanos() as u64);
            run.last_done = Some(done);
            let s = done.duration_since(self.start).as_secs();
            if let Some(c) = run.per_second.get_mut(s as usize) {
                *c += 1;
            }
            if s > second {
                second = s;
                if let Some(pb) = &self.pb {
                    let c = self.engine.write_counters();
                    run.samples.push(Sample {
                        second,
                        l0_files: c.l0_files,
                        pending_compaction_bytes: c.pending_compaction_bytes,
                        stall_micros: c.stall_micros,
                    });
                    pb.set_position(second);
                }
                *self.snapshot.lock() = run.clone();
            }
        }
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_low_run_counts_consecutive_seconds() {
        assert_eq!(longest_run_below(&[100, 5, 5, 100, 5, 5, 5, 100], 10.0), 3);
        assert_eq!(longest_run_below(&[100, 100], 10.0), 0);
        assert_eq!(longest_run_below(&[], 10.0), 0);
    }

    #[test]
    fn a_short_run_counts_every_put_in_its_seconds() {
        let dir = tempfile::tempdir().unwrap();
        let setup = crate::engine::Setup::small();
        let db: Arc<dyn Engine> = crate::engine::open(Variant::Shamba, dir.path(), &setup).unwrap().into();
        let spec = KeySpec { n: 0, key_size: 16, value_size: 32 };
        let r = run(&db, &spec, 2, 2, 1).unwrap();
        assert_eq!(r.halted_after_secs, None);
        assert_eq!(r.per_second.len(), 2);
        assert_eq!(r.per_second.iter().sum::<u64>(), r.puts);
        assert!(r.puts > 100, "{} puts", r.puts);
        assert!(r.p50_ns <= r.p99_ns && r.p99_ns <= r.p999_ns && r.p999_ns <= r.max_ns);
        assert_eq!(r.user_bytes, r.puts * 48);
        // The engine counts its WAL: at least the user bytes went through it.
        assert!(r.engine_written_bytes.unwrap() >= r.user_bytes);
        assert!(r.process_written_bytes.unwrap() >= r.user_bytes);
        assert!(!r.samples.is_empty());
    }

    /// An engine whose puts stop returning 1.3 s after it opened.
    struct Halting {
        opened: Instant,
    }

    impl Engine for Halting {
        fn variant(&self) -> Variant {
            Variant::Fjall
        }
        fn put(&self, _: &[u8], _: &[u8]) -> EngineResult<()> {
            if self.opened.elapsed() > Duration::from_millis(1300) {
                std::thread::sleep(Duration::from_secs(3600));
            }
            std::thread::sleep(Duration::from_micros(200));
            Ok(())
        }
        fn get(&self, _: &[u8]) -> EngineResult<bool> {
            Ok(false)
        }
        fn read(&self, _: &[u8]) -> EngineResult<Option<Vec<u8>>> {
            Ok(None)
        }
        fn multi_get(&self, _: &[Vec<u8>]) -> EngineResult<Option<usize>> {
            Ok(None)
        }
        fn scan(&self, _: &[u8], _: usize) -> EngineResult<usize> {
            Ok(0)
        }
        fn settle(&self) -> EngineResult<()> {
            Ok(())
        }
        fn counters(&self) -> crate::engine::ReadCounters {
            crate::engine::ReadCounters::default()
        }
        fn shape(&self) -> EngineResult<crate::engine::TreeShape> {
            Ok(crate::engine::TreeShape::default())
        }
        fn close(self: Box<Self>) -> EngineResult<()> {
            Ok(())
        }
    }

    #[test]
    #[ignore = "waits out the halt grace (about 32 s)"]
    fn a_put_that_never_returns_ends_the_run_as_halted() {
        let db: Arc<dyn Engine> = Arc::new(Halting { opened: Instant::now() });
        let spec = KeySpec { n: 0, key_size: 16, value_size: 16 };
        let r = run(&db, &spec, 2, 1, 1).unwrap();
        let halted = r.halted_after_secs.expect("halted");
        assert!(halted > 1.0 && halted < 2.0, "{halted}");
        assert!(r.max_ns >= HALT_GRACE.as_nanos() as u64, "{}", r.max_ns);
        // What the writer published at its last whole second is kept.
        assert!(r.per_second[0] > 0 && r.puts > r.per_second[0], "{:?}", r.per_second);
    }
}
