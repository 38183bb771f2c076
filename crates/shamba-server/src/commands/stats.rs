//! Per-command statistics, as Redis's `INFO commandstats` and `INFO errorstats` report
//! them: calls, microseconds, calls refused before they ran (`rejected_calls`: arity) and
//! calls that answered an error (`failed_calls`). Each command's counters are atomics at
//! the command's position in the table, so recording one takes no lock and allocates
//! nothing; only an error reply touches the (locked) count per error code.

use super::{all, position, Spec};
use crate::reply::Reply;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// One command's counters.
#[derive(Debug, Default)]
pub(crate) struct CommandStat {
    pub(crate) calls: AtomicU64,
    pub(crate) usec: AtomicU64,
    pub(crate) rejected: AtomicU64,
    pub(crate) failed: AtomicU64,
}

/// Most distinct error codes counted (Redis's bound too): past it, new codes are counted
/// only in the total.
const MAX_ERROR_CODES: usize = 128;

/// The command families latency is kept for (a command's `group`), the last for any other.
pub(crate) const FAMILIES: &[&str] = &[
    "string",
    "bitmap",
    "generic",
    "hash",
    "set",
    "sorted-set",
    "list",
    "transactions",
    "connection",
    "server",
    "scripting",
    "pubsub",
    "cluster",
    "other",
];

/// Upper bounds of the latency buckets, in microseconds (a last bucket holds the rest).
pub(crate) const LATENCY_BOUNDS_US: &[u64] =
    &[10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 100_000, 1_000_000];

/// One family's latency histogram: a count per bucket (not cumulative), and the sum.
#[derive(Debug, Default)]
pub(crate) struct Histogram {
    pub(crate) buckets: [AtomicU64; LATENCY_BOUNDS_US.len() + 1],
    pub(crate) sum_us: AtomicU64,
}

impl Histogram {
    fn record(&self, us: u64) {
        let i = LATENCY_BOUNDS_US.iter().position(|&b| us <= b).unwrap_or(LATENCY_BOUNDS_US.len());
        if let Some(b) = self.buckets.get(i) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        self.sum_us.fetch_add(us, Ordering::Relaxed);
    }
}

/// Every command's counters and the error replies by code.
#[derive(Debug)]
pub(crate) struct CommandStats {
    per_command: Box<[CommandStat]>,
    /// Latency by family, indexed like [`FAMILIES`].
    pub(crate) latency: Box<[Histogram]>,
    errors: Mutex<BTreeMap<String, u64>>,
    error_replies: AtomicU64,
}

impl Default for CommandStats {
    fn default() -> CommandStats {
        CommandStats {
            per_command: all().map(|_| CommandStat::default()).collect(),
            latency: FAMILIES.iter().map(|_| Histogram::default()).collect(),
            errors: Mutex::new(BTreeMap::new()),
            error_replies: AtomicU64::new(0),
        }
    }
}

impl CommandStats {
    /// `spec`'s counters.
    pub(crate) fn of(&self, spec: &Spec) -> Option<&CommandStat> {
        self.per_command.get(position(spec)?)
    }

    /// A call of `spec` that ran for `took` and answered `reply`.
    pub(crate) fn ran(&self, spec: &Spec, took: Duration, reply: &Reply) {
        self.ran_counting(spec, took, reply, true);
    }

    /// [`ran`](Self::ran); an error reply counts among the errors only when
    /// `count_error` (a script passing on the error of a command it called, counted
    /// when that command failed, counts as a failed call only, as in Redis).
    pub(crate) fn ran_counting(&self, spec: &Spec, took: Duration, reply: &Reply, count_error: bool) {
        if let Some(s) = self.of(spec) {
            s.calls.fetch_add(1, Ordering::Relaxed);
            let us = took.as_micros() as u64;
            s.usec.fetch_add(us, Ordering::Relaxed);
            let family = FAMILIES.iter().position(|f| *f == spec.group).unwrap_or(FAMILIES.len() - 1);
            if let Some(h) = self.latency.get(family) {
                h.record(us);
            }
            if let Reply::Error(e) = reply {
                s.failed.fetch_add(1, Ordering::Relaxed);
                if count_error {
                    self.error(e);
                }
            }
        }
    }

    /// A call of `spec` refused before it ran (wrong arity), answered `error`.
    pub(crate) fn rejected(&self, spec: &Spec, error: &Reply) {
        if let Some(s) = self.of(spec) {
            s.rejected.fetch_add(1, Ordering::Relaxed);
        }
        if let Reply::Error(e) = error {
            self.error(e);
        }
    }

    /// An error reply (any command, or none: an unknown command), counted by its code (the
    /// first word).
    pub(crate) fn error(&self, message: &str) {
        self.error_replies.fetch_add(1, Ordering::Relaxed);
        let code = message.split(' ').next().unwrap_or_default();
        let mut errors = self.errors.lock();
        if let Some(n) = errors.get_mut(code) {
            *n += 1;
        } else if errors.len() < MAX_ERROR_CODES {
            errors.insert(code.to_string(), 1);
        }
    }

    /// Every error reply so far (INFO's `total_error_replies`).
    pub(crate) fn error_replies(&self) -> u64 {
        self.error_replies.load(Ordering::Relaxed)
    }

    /// The error codes seen and how often, in name order.
    pub(crate) fn errors(&self) -> Vec<(String, u64)> {
        self.errors.lock().iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    /// Every command with at least one call or rejection: its name and counters.
    pub(crate) fn used(&self) -> impl Iterator<Item = (&'static Spec, &CommandStat)> {
        all().zip(self.per_command.iter()).filter(|(_, s)| {
            s.calls.load(Ordering::Relaxed) + s.rejected.load(Ordering::Relaxed) + s.failed.load(Ordering::Relaxed) > 0
        })
    }

    /// CONFIG RESETSTAT: every counter back to zero.
    pub(crate) fn reset(&self) {
        for s in self.per_command.iter() {
            for c in [&s.calls, &s.usec, &s.rejected, &s.failed] {
                c.store(0, Ordering::Relaxed);
            }
        }
        self.errors.lock().clear();
        self.error_replies.store(0, Ordering::Relaxed);
        for h in self.latency.iter() {
            h.buckets.iter().chain([&h.sum_us]).for_each(|c| c.store(0, Ordering::Relaxed));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_failures_rejections_and_error_codes_are_counted_per_command() {
        let stats = CommandStats::default();
        let get = super::super::lookup(b"get").unwrap();
        let set = super::super::lookup(b"SET").unwrap();
        stats.ran(get, Duration::from_micros(7), &Reply::Null);
        stats.ran(get, Duration::from_micros(5), &Reply::Error("WRONGTYPE no".into()));
        stats.rejected(set, &Reply::err("wrong number of arguments"));
        let g = stats.of(get).unwrap();
        assert_eq!(g.calls.load(Ordering::Relaxed), 2);
        assert_eq!(g.usec.load(Ordering::Relaxed), 12);
        assert_eq!(g.failed.load(Ordering::Relaxed), 1);
        assert_eq!(stats.of(set).unwrap().rejected.load(Ordering::Relaxed), 1);
        assert_eq!(stats.of(set).unwrap().calls.load(Ordering::Relaxed), 0);
        assert_eq!(stats.errors(), vec![("ERR".to_string(), 1), ("WRONGTYPE".to_string(), 1)]);
        assert_eq!(stats.used().map(|(s, _)| s.name).collect::<Vec<_>>(), ["get", "set"]);
        let strings = &stats.latency[0];
        assert_eq!(strings.buckets[0].load(Ordering::Relaxed), 2, "7 and 5 us are under 10 us");
        assert_eq!(strings.sum_us.load(Ordering::Relaxed), 12);
        stats.reset();
        assert_eq!(stats.used().count(), 0);
        assert_eq!(stats.error_replies(), 0);
    }
}
