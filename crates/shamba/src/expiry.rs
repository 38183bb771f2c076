//! Time to live: the clock a database reads, and how a deadline rides in front of a value.
//!
//! An entry that expires is its own kind ([`ValueKind::PutExpiring`](crate::key::ValueKind)),
//! whose stored value is the deadline, milliseconds since the Unix epoch as a `u64` LE,
//! followed by the user's value. Only writes that ask for an expiry make one, so a
//! database written without expiry holds exactly the bytes it held before expiry existed.
//!
//! A read asks the clock only when it meets an expiring entry: a plain get or scan pays one
//! comparison of the kind byte, never a clock read.

#![deny(clippy::indexing_slicing)]

use crate::key::ValueKind;
use parking_lot::Mutex;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Bytes of the deadline in front of an expiring entry's value.
pub(crate) const DEADLINE_LEN: usize = 8;

/// Where a database reads the time: when an expiring entry's deadline has passed, and what
/// "now" a time to live counts from. [`Options::clock`](crate::Options::clock) is the
/// system's by default; tests give a [`ManualClock`] and move it themselves.
///
/// A clock should not go backwards: an entry a read found expired may have been collected
/// by a compaction since, and does not come back if the clock is turned back.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> SystemTime;
}

// Not the time: `Options`' Debug text must be the same for the same options (the lab keys
// its store of loaded trees by it), and a clock's reading changes every call.
impl fmt::Debug for dyn Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Clock")
    }
}

/// The system's wall clock (`SystemTime::now`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that moves only when told: for tests of expiry, and for replaying a workload
/// at a time of one's choosing.
///
/// ```
/// use shamba::{Clock, ManualClock};
/// use std::time::{Duration, UNIX_EPOCH};
/// let clock = ManualClock::new(UNIX_EPOCH + Duration::from_secs(1_000));
/// clock.advance(Duration::from_secs(5));
/// assert_eq!(clock.now(), UNIX_EPOCH + Duration::from_secs(1_005));
/// ```
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<SystemTime>,
}

impl ManualClock {
    /// A clock reading `at` until moved.
    pub fn new(at: SystemTime) -> ManualClock {
        ManualClock { now: Mutex::new(at) }
    }

    /// Move the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock();
        *now += by;
    }

    /// Set the clock to `at`.
    pub fn set(&self, at: SystemTime) {
        *self.now.lock() = at;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.now.lock()
    }
}

/// A key's time to live, as [`Readable::ttl`](crate::Readable::ttl) reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ttl {
    /// No live value: absent, deleted, or expired.
    Absent,
    /// A value that does not expire.
    Persistent,
    /// A value that expires after this long (at least a millisecond).
    Remaining(Duration),
}

impl Ttl {
    /// The time left, for a value that expires.
    pub fn remaining(self) -> Option<Duration> {
        match self {
            Ttl::Remaining(d) => Some(d),
            Ttl::Absent | Ttl::Persistent => None,
        }
    }
}

/// `t` in milliseconds since the Unix epoch (0 before it; saturating far in the future).
pub(crate) fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The clock's now in milliseconds since the Unix epoch.
pub(crate) fn now_millis(clock: &dyn Clock) -> u64 {
    millis(clock.now())
}

/// The deadline of a time to live counted from `now_ms`, rounded up to the next
/// millisecond so an entry never expires before its time to live has passed.
pub(crate) fn deadline_after(now_ms: u64, ttl: Duration) -> u64 {
    let ms = ttl.as_micros().div_ceil(1000);
    now_ms.saturating_add(u64::try_from(ms).unwrap_or(u64::MAX))
}

/// A deadline in milliseconds as a time.
#[cfg(test)]
pub(crate) fn time_of(deadline_ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(deadline_ms)
}

/// An expiring entry's stored value split into its deadline and the user's value; `None`
/// if it is shorter than a deadline (a damaged entry).
#[inline]
pub(crate) fn split(stored: &[u8]) -> Option<(u64, &[u8])> {
    let (deadline, value) = stored.split_first_chunk::<DEADLINE_LEN>()?;
    Some((u64::from_le_bytes(*deadline), value))
}

/// The stored value of an expiring entry: `deadline_ms` then `value`.
pub(crate) fn join(deadline_ms: u64, value: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(DEADLINE_LEN + value.len());
    v.extend_from_slice(&deadline_ms.to_le_bytes());
    v.extend_from_slice(value);
    v
}

/// Whether an entry with this deadline is gone at `now_ms`: a deadline is the first
/// millisecond at which the entry is no longer there.
#[inline]
pub(crate) fn has_passed(deadline_ms: u64, now_ms: u64) -> bool {
    now_ms >= deadline_ms
}

/// The user's value of an expiring entry's stored value if it is still live for `clock`,
/// the deadline removed in place (a memmove of the value; only expiring entries pay it).
/// A stored value too short to hold a deadline counts as expired.
pub(crate) fn live_value(mut stored: Vec<u8>, clock: &dyn Clock) -> Option<Vec<u8>> {
    let (deadline, _) = split(&stored)?;
    if has_passed(deadline, now_millis(clock)) {
        return None;
    }
    stored.drain(..DEADLINE_LEN);
    Some(stored)
}

/// A version's user value as a read sees it: a plain value as it is, an expiring one
/// without its deadline while `clock` has not reached it, else `None`.
#[inline]
pub(crate) fn visible_slice<'a>(kind: ValueKind, stored: &'a [u8], clock: &dyn Clock) -> Option<&'a [u8]> {
    match kind {
        ValueKind::Put => Some(stored),
        ValueKind::PutExpiring => {
            let (deadline, value) = split(stored)?;
            (!has_passed(deadline, now_millis(clock))).then_some(value)
        }
        ValueKind::Delete => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_live_until_its_deadline_millisecond() {
        let clock = ManualClock::new(time_of(1_000));
        let stored = join(1_500, b"v");
        assert_eq!(split(&stored), Some((1_500, &b"v"[..])));
        assert_eq!(live_value(stored.clone(), &clock), Some(b"v".to_vec()));
        clock.set(time_of(1_499));
        assert_eq!(live_value(stored.clone(), &clock), Some(b"v".to_vec()));
        clock.set(time_of(1_500));
        assert_eq!(live_value(stored, &clock), None);
        assert_eq!(live_value(vec![1, 2, 3], &clock), None, "a damaged entry reads as gone");
    }

    #[test]
    fn a_time_to_live_rounds_up_to_the_millisecond() {
        assert_eq!(deadline_after(10, Duration::from_micros(1)), 11);
        assert_eq!(deadline_after(10, Duration::from_millis(5)), 15);
        assert_eq!(deadline_after(10, Duration::ZERO), 10);
        assert_eq!(deadline_after(u64::MAX - 1, Duration::from_secs(1)), u64::MAX);
    }
}
