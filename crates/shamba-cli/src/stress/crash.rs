//! `--crash`: the kill loop. Each cycle starts a child (this binary, `stress --child`)
//! running the workload on the database, kills it with SIGKILL after a random delay, then
//! opens the database in this process and verifies every key against the expected state
//! the child left (a write the kill cut off may have landed or not, nothing else), which
//! settles the cut-off writes for the next child.

use super::counters::events_line;
use super::divergence::Divergences;
use super::engine_options::engine_options;
use super::expected::{ExpectedState, Progress};
use super::{clock_seed, expected_path, finish, open_and_verify, open_or_create, Res, StressArgs, Tally};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run kill cycles until `--cycles` or `--duration`.
pub fn run(args: &StressArgs) -> Res<()> {
    if args.kill_min_ms > args.kill_max_ms {
        return Err("--kill-min-ms must not exceed --kill-max-ms".into());
    }
    let seed = args.seed.unwrap_or_else(clock_seed);
    let path = expected_path(args);
    let divergences = Divergences::default();
    let mut tally = Tally::default();
    let (state, fresh) = open_or_create(args, seed)?;
    let (options, described) = engine_options(state.options_seed(), args.style);
    println!(
        "stress --crash: {} threads per child, {} keys, seed {seed} (options from seed {}), kill after {}..{} ms, \
         {}\n  engine: {described}",
        args.threads,
        state.keys(),
        state.options_seed(),
        args.kill_min_ms,
        args.kill_max_ms,
        path.display()
    );
    let progress_at_start = state.progress()?;
    let mut ops_seen = progress_at_start[0];
    let mut progress_now = progress_at_start;
    if !fresh {
        open_and_verify(&args.db, &options, &state, false, &divergences, &mut tally)?.close()?;
    }
    drop(state);
    let exe = std::env::current_exe().map_err(|e| format!("the stress binary's path: {e}"))?;
    let mut rng = StdRng::seed_from_u64(seed ^ 0x6b69_6c6c);
    let started = Instant::now();
    let deadline = match (args.duration, args.cycles) {
        (None, Some(_)) => None,
        (d, _) => Some(started + Duration::from_secs_f64(d.unwrap_or(60.0).max(0.0))),
    };
    let (mut cycles, mut ops) = (0u64, 0u64);
    while divergences.count() == 0
        && args.cycles.is_none_or(|c| cycles < c)
        && deadline.is_none_or(|d| Instant::now() < d)
    {
        let delay = Duration::from_millis(rng.gen_range(args.kill_min_ms..=args.kill_max_ms));
        let mut cmd = Command::new(&exe);
        cmd.arg("stress")
            .arg("--db")
            .arg(&args.db)
            .arg("--expected")
            .arg(&path)
            .args(["--child", "--threads", &args.threads.to_string()])
            .args(["--seed", &seed.wrapping_add(cycles).to_string()])
            .args(["--duration", &(delay.as_secs_f64() + 60.0).to_string()])
            .args(["--reopen-secs", &args.reopen_secs.to_string()])
            .args(["--sync-fraction", &args.sync_fraction.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        let mut child = cmd.spawn().map_err(|e| format!("start the child: {e}"))?;
        let kill_at = Instant::now() + delay;
        while Instant::now() < kill_at {
            if let Some(status) = child.try_wait().map_err(|e| format!("wait for the child: {e}"))? {
                return Err(format!(
                    "cycle {cycles}: the child stopped by itself before the kill ({status}); see its message above"
                )
                .into());
            }
            std::thread::sleep(Duration::from_millis(5).min(kill_at.saturating_duration_since(Instant::now())));
        }
        // `Child::kill` is SIGKILL on Unix: no destructor, no close, no flush runs.
        child.kill().map_err(|e| format!("kill the child: {e}"))?;
        child.wait().map_err(|e| format!("reap the child: {e}"))?;
        cycles += 1;
        let state = ExpectedState::open(&path)?;
        progress_now = state.progress()?;
        ops += progress_now[0].saturating_sub(ops_seen);
        ops_seen = progress_now[0];
        open_and_verify(&args.db, &options, &state, cycles % 2 == 0, &divergences, &mut tally)
            .and_then(|db| db.close().map_err(|e| format!("close after verifying: {e}").into()))
            .map_err(|e| format!("cycle {cycles}: {e}"))?;
        if cycles % 50 == 0 {
            println!(
                "  {cycles} cycles, {ops} operations, {:.0} s; {}",
                started.elapsed().as_secs_f64(),
                events_line(&since(&progress_now, &progress_at_start))
            );
        }
    }
    println!(
        "crash: {cycles} kill -9 cycles in {:.1} s; {ops} operations in the children; {}; {}; {} divergences",
        started.elapsed().as_secs_f64(),
        events_line(&since(&progress_now, &progress_at_start)),
        tally.line(),
        divergences.count()
    );
    finish(&divergences, None)
}

/// The counters of `now` less those of `start`: what this parent's children did.
fn since(now: &Progress, start: &Progress) -> Progress {
    let mut out = Progress::default();
    for ((o, n), s) in out.iter_mut().zip(now).zip(start) {
        *o = n.saturating_sub(*s);
    }
    out
}
