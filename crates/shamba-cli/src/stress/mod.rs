//! `shamba stress`: db_stress-style random operations from several threads, every result
//! checked against an expected state kept in a file beside the database; with `--crash`,
//! a parent process kills a child running them with SIGKILL at random moments, reopens
//! the database and verifies every key.
//!
//! The files: `expected.rs` and `slot.rs` (the expected-state file), `values.rs` (keys,
//! and values derived from key and value id), `workers.rs` (the operations and their
//! checks), `verify.rs` (whole-database verification), `crash.rs` (the kill loop),
//! `engine_options.rs` (the options drawn per database), `transaction.rs` (the
//! transactions of the mix), `expiry.rs` (puts with a deadline, `expire`, `persist`),
//! `divergence.rs`, `counters.rs`.

mod counters;
mod crash;
mod divergence;
mod engine_options;
mod expected;
mod expiry;
mod slot;
mod spaces;
mod transaction;
mod values;
mod verify;
mod workers;

use counters::Counters;
use divergence::Divergences;
use engine_options::{engine_options, Style};
use expected::ExpectedState;
use shamba::{Db, Options};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};
use verify::{verify_all, Verified};
use workers::Shared;

type Res<T> = Result<T, Box<dyn Error + Send + Sync>>;

/// Keys of a new database when `--keys` is not given.
const DEFAULT_KEYS: u32 = 20_000;

/// Arguments of `shamba stress`.
#[derive(Debug, Clone, clap::Args)]
pub struct StressArgs {
    /// Database directory (created if missing; an existing one must have been made by
    /// `shamba stress`, with its expected-state file).
    #[arg(long)]
    pub db: PathBuf,
    /// The expected-state file. Default: the database directory's path + `.expected`.
    #[arg(long)]
    pub expected: Option<PathBuf>,
    /// Seconds to run (with --crash: seconds of kill cycles). Default: 60, or unbounded
    /// with --cycles.
    #[arg(long)]
    pub duration: Option<f64>,
    /// Worker threads.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Keys in the key space (at most 100,000,000), fixed when the database is created.
    /// Default: 20,000.
    #[arg(long)]
    pub keys: Option<u32>,
    /// Seed of the engine options (when the database is created) and of the operations.
    /// Default: from the clock (printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Kill a child running the workload with SIGKILL at random moments, then reopen and
    /// verify, in a loop.
    #[arg(long)]
    pub crash: bool,
    /// With --crash: stop after this many kill cycles.
    #[arg(long)]
    pub cycles: Option<u64>,
    /// With --crash: least milliseconds between starting a child and killing it.
    #[arg(long, default_value_t = 200)]
    pub kill_min_ms: u64,
    /// With --crash: most milliseconds between starting a child and killing it.
    #[arg(long, default_value_t = 2000)]
    pub kill_max_ms: u64,
    /// Mean seconds between coordinated close + reopen + verify (0: never).
    #[arg(long, default_value_t = 3.0)]
    pub reopen_secs: f64,
    /// Fraction of writes that fsync the WAL (with or without, the engine promises that
    /// an acknowledged write survives a process kill, so both are checked the same way).
    #[arg(long, default_value_t = 0.1)]
    pub sync_fraction: f64,
    /// Compaction style of a new database. Default: drawn from the seed.
    #[arg(long, value_enum)]
    pub style: Option<Style>,
    /// Run as the child of a --crash parent: no summary, no final verification.
    #[arg(long, hide = true)]
    pub child: bool,
}

/// Run `shamba stress`.
pub fn run(args: &StressArgs) -> Result<(), Box<dyn Error>> {
    if !(0.0..=1.0).contains(&args.sync_fraction) {
        return Err("--sync-fraction must be within 0..=1".into());
    }
    if args.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    let result = if args.crash && !args.child { crash::run(args) } else { run_in_process(args) };
    result.map_err(|e| -> Box<dyn Error> { e })
}

fn expected_path(args: &StressArgs) -> PathBuf {
    args.expected.clone().unwrap_or_else(|| {
        let mut p = args.db.clone().into_os_string();
        p.push(".expected");
        PathBuf::from(p)
    })
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// Open the expected state, or create it with an empty database directory. Returns
/// whether it was created.
fn open_or_create(args: &StressArgs, seed: u64) -> Res<(ExpectedState, bool)> {
    let path = expected_path(args);
    if path.exists() {
        let state = ExpectedState::open(&path)?;
        if let Some(keys) = args.keys.filter(|k| *k != state.keys()) {
            return Err(format!("--keys {keys}: {} was made for {} keys", path.display(), state.keys()).into());
        }
        return Ok((state, false));
    }
    if args.db.read_dir().is_ok_and(|mut d| d.next().is_some()) {
        return Err(format!(
            "{} holds files but there is no expected-state file at {}: stress checks only databases it created",
            args.db.display(),
            path.display()
        )
        .into());
    }
    let keys = args.keys.unwrap_or(DEFAULT_KEYS);
    if keys == 0 || keys > values::MAX_KEYS {
        return Err(format!("--keys must be within 1..={}", values::MAX_KEYS).into());
    }
    Ok((ExpectedState::create(&path, keys, seed)?, true))
}

/// Whole-database verifications of one process, summed.
#[derive(Debug, Default)]
struct Tally {
    verifications: u64,
    keys: u64,
    scanned: u64,
    settled: u64,
    landed: u64,
}

impl Tally {
    fn add(&mut self, v: &Verified) {
        self.verifications += 1;
        self.keys += v.keys;
        self.scanned += v.scanned;
        self.settled += v.settled;
        self.landed += v.landed;
    }

    fn line(&self) -> String {
        format!(
            "{} verifications ({} gets, {} scanned pairs); {} writes cut off by a kill settled ({} had landed)",
            self.verifications, self.keys, self.scanned, self.settled, self.landed
        )
    }
}

/// Open `dir`, verify every key (settling cut-off writes), and return the open database.
fn open_and_verify(
    dir: &Path,
    options: &Options,
    state: &ExpectedState,
    backward: bool,
    divergences: &Divergences,
    tally: &mut Tally,
) -> Res<Db> {
    let db = Db::open(dir, options.clone()).map_err(|e| format!("open {}: {e}", dir.display()))?;
    let v = verify_all(&db, state, backward, divergences)?;
    tally.add(&v);
    Ok(db)
}

/// The workload in this process: workers, and a coordinator (this thread) that records
/// progress and now and then closes, reopens and verifies the database.
fn run_in_process(args: &StressArgs) -> Res<()> {
    let seed = args.seed.unwrap_or_else(clock_seed);
    let (state, fresh) = open_or_create(args, seed)?;
    let (options, described) = engine_options(state.options_seed(), args.style);
    let quiet = args.child;
    if !quiet {
        println!(
            "stress: {} threads, {} keys, seed {seed} (options from seed {}), {}\n  engine: {described}",
            args.threads,
            state.keys(),
            state.options_seed(),
            expected_path(args).display()
        );
    }
    let divergences = Divergences::default();
    let mut tally = Tally::default();
    let db = if fresh || quiet {
        Db::open(&args.db, options.clone()).map_err(|e| format!("open {}: {e}", args.db.display()))?
    } else {
        open_and_verify(&args.db, &options, &state, false, &divergences, &mut tally)?
    };
    let run_seed = seed ^ u64::from(state.runs()).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let shared = Shared {
        db: RwLock::new(Some(db)),
        state,
        divergences,
        counters: Counters::default(),
        stop: AtomicBool::new(false),
        failure: Mutex::new(None),
        sync_fraction: args.sync_fraction,
    };
    if shared.divergences.count() > 0 {
        shared.stop.store(true, Ordering::Relaxed);
    }
    let duration = args.duration.unwrap_or(60.0);
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(duration.max(0.0));
    std::thread::scope(|scope| {
        for t in 0..args.threads {
            let shared = &shared;
            scope.spawn(move || workers::work(shared, run_seed.wrapping_add(t as u64 + 1)));
        }
        if let Err(e) = coordinate(&shared, args, &options, deadline, run_seed, &mut tally) {
            let mut f = shared.failure.lock().unwrap_or_else(|p| p.into_inner());
            f.get_or_insert_with(|| e.to_string());
        }
        shared.stop.store(true, Ordering::Relaxed);
    });
    let elapsed = started.elapsed().as_secs_f64();
    let failure = shared.failure.lock().unwrap_or_else(|p| p.into_inner()).take();
    let mut db_slot = shared.db.write().unwrap_or_else(|p| p.into_inner());
    if let Some(db) = db_slot.take() {
        db.close().map_err(|e| format!("close: {e}"))?;
    }
    if failure.is_none() && shared.divergences.count() == 0 && !quiet {
        let db = open_and_verify(&args.db, &options, &shared.state, true, &shared.divergences, &mut tally)?;
        db.close().map_err(|e| format!("close: {e}"))?;
    }
    if !quiet {
        println!(
            "ran {elapsed:.1} s: {} operations ({}); {}; {}; {} divergences",
            shared.counters.total(),
            shared.counters.breakdown(),
            shared.counters.events(),
            tally.line(),
            shared.divergences.count()
        );
    }
    finish(&shared.divergences, failure)
}

/// The run's verdict: an engine error, or divergences, fail it.
fn finish(divergences: &Divergences, failure: Option<String>) -> Res<()> {
    if let Some(f) = failure {
        return Err(format!("engine error: {f}").into());
    }
    match divergences.count() {
        0 => Ok(()),
        n => {
            let first = divergences.first().map(|d| format!("; the first: {d}")).unwrap_or_default();
            Err(format!("{n} divergences between the database and the expected state (DIVERGENCE lines above){first}")
                .into())
        }
    }
}

/// Until the deadline or a stop: record progress in the expected-state file, and close,
/// reopen and verify the database now and then, with every worker paused.
fn coordinate(
    shared: &Shared,
    args: &StressArgs,
    options: &Options,
    deadline: Instant,
    seed: u64,
    tally: &mut Tally,
) -> Res<()> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let before = shared.state.progress()?;
    let mut reopen_after = || {
        (args.reopen_secs > 0.0)
            .then(|| Instant::now() + Duration::from_secs_f64(args.reopen_secs * rng.gen_range(0.5..1.5)))
    };
    let mut next_reopen = reopen_after();
    let mut backward = false;
    // A child whose parent is gone (reparented) stops rather than run on unwatched.
    let parent = std::os::unix::process::parent_id();
    let orphaned = || args.child && std::os::unix::process::parent_id() != parent;
    while !shared.stop.load(Ordering::Relaxed) && Instant::now() < deadline && !orphaned() {
        std::thread::sleep(Duration::from_millis(50).min(deadline.saturating_duration_since(Instant::now())));
        shared.state.set_progress(&shared.counters.progress(&before))?;
        if next_reopen.is_some_and(|t| Instant::now() >= t) {
            let mut slot = shared.db.write().unwrap_or_else(|p| p.into_inner());
            if let Some(db) = slot.take() {
                db.close().map_err(|e| format!("close before a reopen: {e}"))?;
            }
            backward = !backward;
            *slot = Some(open_and_verify(&args.db, options, &shared.state, backward, &shared.divergences, tally)?);
            if shared.divergences.count() > 0 {
                shared.stop.store(true, Ordering::Relaxed);
            }
            next_reopen = reopen_after();
        }
    }
    shared.state.set_progress(&shared.counters.progress(&before))
}
