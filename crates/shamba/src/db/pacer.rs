//! Pacing a slowed-down writer at a byte rate.
//!
//! When the memtables waiting for a flush, L0 or the compaction debt reach their slowdown
//! trigger, writes are let through at the delayed rate on average (RocksDB's
//! `delayed_write_rate`; [`DelayRate`] adapts it to whether the background work gains
//! ground), so that flushes and compactions catch up without any writer stopping for
//! long. A write of a few dozen bytes owes a
//! few microseconds at that rate, and the OS cannot sleep that short: a thread asking for a
//! few µs sleeps far longer (the kernel's 50 µs timer slack and a wakeup), so sleeping once
//! per write paced small writes many times slower than intended. The pacer instead keeps a
//! virtual clock (the time by which the bytes let through so far would have been written at
//! the rate) and has the writer sleep only when that clock is at least [`MIN_SLEEP`] ahead
//! of the real one, then for the whole lead. A writer slower than the rate is never
//! delayed.

use super::delay_rate::{Causes, DelayRate, Pressure, RateBounds};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Shortest sleep asked of the OS: long against its timer slack, short against a flush.
pub(super) const MIN_SLEEP: Duration = Duration::from_millis(1);

/// The virtual clock of one database's slowed-down writes (only the write leader uses it).
#[derive(Debug, Default)]
pub(super) struct WritePacer {
    /// When the bytes let through since the slowdown began would have been written at the
    /// delayed rate; `None` while writes are not slowed down.
    due: Option<Instant>,
}

impl WritePacer {
    /// Account for `bytes` about to be written at `now` under a slowdown paced at `rate`
    /// bytes per second, and say how long the writer must sleep first (zero while it is
    /// less than [`MIN_SLEEP`] ahead). A change of rate applies to the bytes from then on.
    pub(super) fn delay(&mut self, bytes: usize, now: Instant, rate: u64) -> Duration {
        let cost = Duration::from_nanos((bytes as u64).saturating_mul(1_000_000_000) / rate.max(1));
        // The clock lags the present by at most MIN_SLEEP: enough to credit the OS's
        // oversleeps, while a writer slower than the rate banks no more than that.
        let floor = now.checked_sub(MIN_SLEEP).unwrap_or(now);
        let due = self.due.map_or(now, |d| d.max(floor)) + cost;
        self.due = Some(due);
        let ahead = due.saturating_duration_since(now);
        if ahead >= MIN_SLEEP {
            ahead
        } else {
            Duration::ZERO
        }
    }

    /// The slowdown is over: the next one starts a fresh clock.
    pub(super) fn reset(&mut self) {
        self.due = None;
    }
}

/// A database's [`WritePacer`] and its [`DelayRate`], with a flag that keeps the common
/// case (no slowdown, no clock running) to one relaxed load per write instead of a lock.
#[derive(Debug, Default)]
pub(crate) struct Pacing {
    running: AtomicBool,
    clock: Mutex<(WritePacer, DelayRate)>,
}

impl Pacing {
    /// [`DelayRate::observe`] then [`WritePacer::delay`] at the rate it gives.
    pub(crate) fn delay(
        &self,
        bytes: usize,
        now: Instant,
        pressure: Pressure,
        causes: Causes,
        bounds: RateBounds,
    ) -> Duration {
        self.running.store(true, Relaxed);
        let (clock, rate) = &mut *self.clock.lock();
        let rate = rate.observe(pressure, causes, bytes, now, bounds);
        clock.delay(bytes, now, rate)
    }

    /// [`DelayRate::stopped`].
    pub(crate) fn stopped(&self, now: Instant, bounds: RateBounds) {
        self.running.store(true, Relaxed);
        self.clock.lock().1.stopped(now, bounds);
    }

    /// The slowdown is over: [`WritePacer::reset`] and [`DelayRate::recovered`], if a
    /// clock is running.
    pub(crate) fn reset(&self, bounds: RateBounds) {
        if self.running.load(Relaxed) {
            let (clock, rate) = &mut *self.clock.lock();
            clock.reset();
            rate.recovered(bounds);
            self.running.store(false, Relaxed);
        }
    }

    /// The delayed rate a slowdown would pace writes at now, in bytes per second.
    pub(crate) fn rate(&self, bounds: RateBounds) -> u64 {
        self.clock.lock().1.rate(bounds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rate the tests pace at: the default ceiling.
    const DELAYED_WRITE_RATE: u64 = 16 << 20;
    const BOUNDS: RateBounds = RateBounds { ceiling: DELAYED_WRITE_RATE, floor: 16 << 10 };
    const L0: Causes = Causes { memtables: false, l0: true, debt: false };
    const AT_TRIGGER: Pressure = Pressure { memtables_waiting: 0, l0_runs: 20, debt: 0 };

    #[test]
    fn small_writes_sleep_rarely_but_for_their_whole_debt() {
        let mut p = WritePacer::default();
        let t0 = Instant::now();
        // 64-byte writes at the rate owe ~3.8 µs each: the first ~260 pass, then the writer
        // sleeps about a millisecond.
        let per_write = Duration::from_nanos(64 * 1_000_000_000 / DELAYED_WRITE_RATE);
        let mut passed = 0;
        let sleep = loop {
            let d = p.delay(64, t0, DELAYED_WRITE_RATE);
            if d > Duration::ZERO {
                break d;
            }
            passed += 1;
        };
        assert_eq!(passed as u128, MIN_SLEEP.as_nanos() / per_write.as_nanos());
        assert!(sleep >= MIN_SLEEP && sleep < MIN_SLEEP + per_write * 2, "{sleep:?}");
    }

    #[test]
    fn the_average_rate_is_the_delayed_rate() {
        // Simulate a writer that sleeps as told plus an 80 µs oversleep (as the OS does):
        // after 16 MiB it has taken one second, the oversleeps credited.
        let mut p = WritePacer::default();
        let t0 = Instant::now();
        let mut now = t0;
        let mut written = 0u64;
        while written < DELAYED_WRITE_RATE {
            let d = p.delay(100, now, DELAYED_WRITE_RATE);
            if d > Duration::ZERO {
                now += d + Duration::from_micros(80);
                continue;
            }
            written += 100;
        }
        let secs = (now - t0).as_secs_f64();
        assert!((0.99..1.01).contains(&secs), "{secs} s for one second's worth of bytes");
    }

    #[test]
    fn a_slow_writer_is_not_delayed_and_banks_at_most_a_millisecond() {
        let mut p = WritePacer::default();
        let t0 = Instant::now();
        // One 1 KiB write every millisecond is 1 MiB/s, far under the rate: never delayed.
        for i in 0..1000 {
            assert_eq!(p.delay(1024, t0 + Duration::from_millis(i), DELAYED_WRITE_RATE), Duration::ZERO);
        }
        // A burst right after is paced from (nearly) now, not from a thousand idle
        // milliseconds.
        let now = t0 + Duration::from_secs(1);
        let burst: Duration = (0..1000).map(|_| p.delay(16 << 10, now, DELAYED_WRITE_RATE)).max().unwrap_or_default();
        assert!(burst > Duration::from_millis(900), "{burst:?}");
    }

    #[test]
    fn pacing_resets_only_a_running_clock() {
        let p = Pacing::default();
        let t0 = Instant::now();
        p.reset(BOUNDS);
        assert!(p.delay(1 << 20, t0, AT_TRIGGER, L0, BOUNDS) > Duration::from_millis(50));
        p.reset(BOUNDS);
        assert_eq!(p.delay(64, t0, AT_TRIGGER, L0, BOUNDS), Duration::ZERO);
    }

    #[test]
    fn pacing_follows_the_adapted_rate() {
        // L0 grows under the slowdown: the rate falls, and the same bytes owe more time.
        let p = Pacing::default();
        let t0 = Instant::now();
        let at_start = p.delay(1 << 20, t0, AT_TRIGGER, L0, BOUNDS);
        p.reset(BOUNDS);
        assert_eq!(p.rate(BOUNDS), DELAYED_WRITE_RATE);
        p.delay(0, t0, AT_TRIGGER, L0, BOUNDS);
        let grown = Pressure { l0_runs: 21, ..AT_TRIGGER };
        let lowered = p.delay(1 << 20, t0, grown, L0, BOUNDS);
        assert!(p.rate(BOUNDS) < DELAYED_WRITE_RATE);
        assert!(lowered > at_start + at_start / 5, "{lowered:?} against {at_start:?}");
    }

    #[test]
    fn reset_forgets_the_debt() {
        let mut p = WritePacer::default();
        let t0 = Instant::now();
        assert!(p.delay(1 << 20, t0, DELAYED_WRITE_RATE) > Duration::from_millis(50));
        p.reset();
        assert_eq!(p.delay(64, t0, DELAYED_WRITE_RATE), Duration::ZERO);
    }
}
