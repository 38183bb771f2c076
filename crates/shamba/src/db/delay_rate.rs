//! The delayed write rate: how fast a slowed-down writer is let through, adapted to whether
//! the background work gains ground under the slowdown.
//!
//! A fixed rate is right for one machine and one load only: above what flushes and
//! compactions sustain it slows nobody down (a writer already slower than the rate passes
//! untouched) and the stop comes anyway; far below it, writers wait for nothing. So the rate
//! is adjusted at every change of what the slowdown is measured by (the memtables waiting
//! for a flush, the L0 runs, the compaction debt; they change when a memtable is switched,
//! a flush or a compaction installs), as RocksDB's write controller does:
//!
//! - what caused the slowdown grew (a flush added an L0 run, the debt rose): the rate falls
//!   by [`LOWER`];
//! - it shrank: the rate rises by [`RAISE`];
//! - writes stopped anyway: the rate falls to [`STOPPED`] of the rate writes actually came
//!   at since the last change, if that was below the rate, else of the rate. A stop shows
//!   the load outran the background work at the rate it came at, which may be far below
//!   the configured rate: lowering from that, the next slowdown slows the writer at once.
//!   The penalty is larger than the reward below, so that a load that keeps reaching the
//!   stop is paced lower and lower until it no longer does;
//! - a slowdown ends without having stopped: the rate rises by [`RECOVERED`].
//!
//! The rate stays within [`RateBounds`]: never above the configured rate (the rate the first
//! slowdown starts at) and never below the floor. It is kept from one slowdown to the next:
//! a load that needed a low rate a moment ago likely needs it again.

use std::time::{Duration, Instant};

/// The factor a growing slowdown cause lowers the rate by (RocksDB's `kIncSlowdownRatio`).
pub(super) const LOWER: f64 = 0.8;
/// The factor a shrinking cause raises it by (RocksDB's `kDecSlowdownRatio`).
pub(super) const RAISE: f64 = 1.0 / LOWER;
/// The factor a stop lowers it by (RocksDB's `kNearStopSlowdownRatio`).
pub(super) const STOPPED: f64 = 0.6;
/// The factor a slowdown that ended without a stop raises it by (RocksDB's
/// `kDelayRecoverSlowdownRatio`).
pub(super) const RECOVERED: f64 = 1.4;

/// Writes measured over less than this are too few to say how fast writes come: the rate
/// they came at is then not used as the base of a lowering.
const MIN_WINDOW: Duration = Duration::from_millis(10);

/// The bounds of the delayed rate, in bytes per second (from the options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RateBounds {
    /// The rate the first slowdown starts at, and the most it rises to.
    pub ceiling: u64,
    /// The least it falls to.
    pub floor: u64,
}

/// What a slowdown is measured by, sampled by the write leader before each write group:
/// the most of any keyspace (the most loaded tree paces every writer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Pressure {
    /// Frozen memtables waiting for a flush.
    pub memtables_waiting: usize,
    /// Sorted runs in L0.
    pub l0_runs: usize,
    /// Bytes over the level targets.
    pub debt: u64,
}

/// Which causes of a slowdown hold (each at or past its slowdown trigger).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Causes {
    /// The last memtable slot before the stop is taken.
    pub memtables: bool,
    /// L0 at `level0_slowdown_trigger`.
    pub l0: bool,
    /// The debt at `pending_compaction_slowdown_bytes`.
    pub debt: bool,
}

impl Causes {
    /// Whether any cause holds.
    pub(crate) fn any(self) -> bool {
        self.memtables || self.l0 || self.debt
    }
}

/// How the measures of the causes holding moved since the last sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trend {
    Same,
    Grew,
    Shrank,
}

fn trend(before: Pressure, now: Pressure, causes: Causes) -> Trend {
    use std::cmp::Ordering::{Greater, Less};
    let moves = [
        (causes.memtables, now.memtables_waiting.cmp(&before.memtables_waiting)),
        (causes.l0, now.l0_runs.cmp(&before.l0_runs)),
        (causes.debt, now.debt.cmp(&before.debt)),
    ];
    let held = moves.iter().filter(|(holds, _)| *holds).map(|(_, m)| *m);
    if held.clone().any(|m| m == Greater) {
        Trend::Grew
    } else if held.into_iter().any(|m| m == Less) {
        Trend::Shrank
    } else {
        Trend::Same
    }
}

/// The adaptive delayed rate of one database (used by the write leader only).
#[derive(Debug, Default)]
pub(crate) struct DelayRate {
    /// Bytes per second; 0 before the first slowdown (it then starts at the ceiling).
    rate: u64,
    /// The pressure when the rate was last adjusted (or the slowdown began); `None`
    /// between slowdowns.
    last: Option<Pressure>,
    /// Whether writes stopped since the slowdown began (no reward when it ends).
    stopped: bool,
    /// When the current measuring window began, and the bytes let through in it.
    window: Option<(Instant, u64)>,
}

impl DelayRate {
    /// The rate now, in bytes per second.
    pub(crate) fn rate(&self, bounds: RateBounds) -> u64 {
        if self.rate == 0 {
            bounds.ceiling
        } else {
            self.rate.clamp(bounds.floor, bounds.ceiling)
        }
    }

    /// A write group of `bytes` is about to go through under a slowdown with `causes`, at
    /// `pressure`: adjust the rate if the pressure moved, and return it.
    pub(crate) fn observe(
        &mut self,
        pressure: Pressure,
        causes: Causes,
        bytes: usize,
        now: Instant,
        bounds: RateBounds,
    ) -> u64 {
        let mut rate = self.rate(bounds);
        match self.last {
            None => {
                self.last = Some(pressure);
                self.window = Some((now, 0));
            }
            Some(before) if before != pressure => {
                rate = match trend(before, pressure, causes) {
                    Trend::Grew => rate as f64 * LOWER,
                    Trend::Shrank => rate as f64 * RAISE,
                    Trend::Same => rate as f64,
                }
                .clamp(bounds.floor as f64, bounds.ceiling as f64) as u64;
                self.last = Some(pressure);
                self.window = Some((now, 0));
            }
            Some(_) => {}
        }
        if let Some((_, through)) = &mut self.window {
            *through = through.saturating_add(bytes as u64);
        }
        self.rate = rate;
        rate
    }

    /// Writes stopped (a stop trigger was reached) under the slowdown: lower the rate by
    /// the stop's penalty, from the rate writes came at if that was lower. Called once per
    /// stop.
    pub(crate) fn stopped(&mut self, now: Instant, bounds: RateBounds) {
        let rate = self.rate(bounds);
        self.rate = self.lowered(rate, STOPPED, now).clamp(bounds.floor as f64, bounds.ceiling as f64) as u64;
        self.stopped = true;
        self.window = Some((now, 0));
    }

    /// The slowdown is over: reward it if no write stopped during it; the next one starts
    /// measuring afresh.
    pub(crate) fn recovered(&mut self, bounds: RateBounds) {
        if self.last.is_some() && !self.stopped {
            let rate = self.rate(bounds);
            self.rate = (rate as f64 * RECOVERED).min(bounds.ceiling as f64) as u64;
        }
        self.last = None;
        self.stopped = false;
        self.window = None;
    }

    /// `factor` of the rate, or of the rate writes came at in the window if that was lower
    /// and measured long enough to tell.
    fn lowered(&self, rate: u64, factor: f64, now: Instant) -> f64 {
        let came = self.window.and_then(|(since, bytes)| {
            let spent = now.saturating_duration_since(since);
            (spent >= MIN_WINDOW).then(|| bytes as f64 / spent.as_secs_f64())
        });
        let base = came.map_or(rate as f64, |c| c.min(rate as f64));
        base * factor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: RateBounds = RateBounds { ceiling: 16 << 20, floor: 16 << 10 };
    const L0: Causes = Causes { memtables: false, l0: true, debt: false };

    fn l0(runs: usize) -> Pressure {
        Pressure { l0_runs: runs, ..Pressure::default() }
    }

    #[test]
    fn the_first_slowdown_starts_at_the_ceiling() {
        let mut d = DelayRate::default();
        assert_eq!(d.observe(l0(20), L0, 100, Instant::now(), BOUNDS), 16 << 20);
    }

    #[test]
    fn the_rate_falls_while_the_cause_grows_and_rises_as_it_shrinks() {
        let mut d = DelayRate::default();
        let t0 = Instant::now();
        let start = d.observe(l0(20), L0, 100, t0, BOUNDS);
        // The same pressure again changes nothing.
        assert_eq!(d.observe(l0(20), L0, 100, t0, BOUNDS), start);
        let mut rate = start;
        for runs in 21..25 {
            let next = d.observe(l0(runs), L0, 100, t0, BOUNDS);
            assert_eq!(next, (rate as f64 * LOWER) as u64, "L0 at {runs}");
            rate = next;
        }
        // A compaction takes runs away: the rate rises.
        let after = d.observe(l0(22), L0, 100, t0, BOUNDS);
        assert_eq!(after, (rate as f64 * RAISE) as u64);
        assert!(after > rate);
    }

    #[test]
    fn only_the_causes_that_hold_count() {
        // Under an L0 slowdown the debt grows as compactions push bytes down: that alone
        // does not lower the rate, L0 shrinking raises it.
        let mut d = DelayRate::default();
        let t0 = Instant::now();
        let start = d.observe(Pressure { l0_runs: 24, debt: 10, ..Pressure::default() }, L0, 1, t0, BOUNDS);
        let rate = d.observe(Pressure { l0_runs: 25, debt: 10, ..Pressure::default() }, L0, 1, t0, BOUNDS);
        assert!(rate < start);
        let raised = d.observe(Pressure { l0_runs: 20, debt: 99, ..Pressure::default() }, L0, 1, t0, BOUNDS);
        assert!(raised > rate, "{raised} after {rate}");
    }

    #[test]
    fn a_stop_lowers_from_the_rate_writes_came_at() {
        // Writes come at 1 MB/s, far under the ceiling, and still reach the stop: the rate
        // falls to 0.6 MB/s at once, not to 0.6 of a ceiling they never reached.
        let mut d = DelayRate::default();
        let t0 = Instant::now();
        d.observe(l0(20), L0, 0, t0, BOUNDS);
        for ms in 1..=100u64 {
            d.observe(l0(20), L0, 1000, t0 + Duration::from_millis(ms), BOUNDS);
        }
        d.stopped(t0 + Duration::from_millis(100), BOUNDS);
        let rate = d.rate(BOUNDS);
        assert!((590_000..=610_000).contains(&rate), "{rate}");
        // Measured over less than a few milliseconds, the rate writes came at says
        // nothing: a stop then lowers the rate itself.
        d.observe(l0(20), L0, 1, t0 + Duration::from_millis(100), BOUNDS);
        d.stopped(t0 + Duration::from_millis(101), BOUNDS);
        assert_eq!(d.rate(BOUNDS), (rate as f64 * STOPPED) as u64);
    }

    #[test]
    fn a_stop_lowers_more_than_a_recovery_raises() {
        let mut d = DelayRate::default();
        let t0 = Instant::now();
        let memtables = Causes { memtables: true, ..Causes::default() };
        let start = d.observe(Pressure { memtables_waiting: 2, ..Pressure::default() }, memtables, 1, t0, BOUNDS);
        d.stopped(t0, BOUNDS);
        assert_eq!(d.rate(BOUNDS), (start as f64 * STOPPED) as u64);
        // A slowdown that stopped is not rewarded when it ends.
        d.recovered(BOUNDS);
        assert_eq!(d.rate(BOUNDS), (start as f64 * STOPPED) as u64);
        // One that did not stop is, and stop then recovery leaves the rate lower.
        let penalized = d.observe(Pressure { memtables_waiting: 2, ..Pressure::default() }, memtables, 1, t0, BOUNDS);
        d.recovered(BOUNDS);
        let after = d.rate(BOUNDS);
        assert_eq!(after, (penalized as f64 * RECOVERED) as u64);
        assert!(after < start);
    }

    #[test]
    fn the_rate_stays_within_its_bounds() {
        let mut d = DelayRate::default();
        let t0 = Instant::now();
        let bounds = RateBounds { ceiling: 1 << 20, floor: 100 << 10 };
        for runs in 20..100 {
            d.observe(l0(runs), L0, 1, t0, bounds);
            d.stopped(t0, bounds);
        }
        assert_eq!(d.rate(bounds), 100 << 10);
        for runs in (0..100).rev() {
            d.observe(l0(runs), L0, 1, t0, bounds);
        }
        d.recovered(bounds);
        assert_eq!(d.rate(bounds), 1 << 20);
        // Bounds given later (other options) clamp a rate kept from before.
        assert_eq!(d.rate(RateBounds { ceiling: 1 << 10, floor: 1 << 9 }), 1 << 10);
    }
}
