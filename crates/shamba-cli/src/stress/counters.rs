//! Operations run, by kind, and what transactions and expiry did, for the summary.

use super::expected::Progress;
use std::sync::atomic::{AtomicU64, Ordering};

/// A worker operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Put,
    Delete,
    Batch,
    DeleteRange,
    Get,
    MultiGet,
    Scan,
    SnapshotRead,
    Flush,
    Compact,
    Transaction,
    ExpiringPut,
    Expire,
    Persist,
}

const KINDS: [(Op, &str); 14] = [
    (Op::Put, "puts"),
    (Op::Delete, "deletes"),
    (Op::Batch, "batches"),
    (Op::DeleteRange, "range deletes"),
    (Op::Get, "gets"),
    (Op::MultiGet, "multi_gets"),
    (Op::Scan, "scans"),
    (Op::SnapshotRead, "snapshot reads"),
    (Op::Flush, "flushes"),
    (Op::Compact, "compactions"),
    (Op::Transaction, "transactions"),
    (Op::ExpiringPut, "expiring puts"),
    (Op::Expire, "expires"),
    (Op::Persist, "persists"),
];

/// What happened inside operations, counted beside them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A transaction committed.
    Committed,
    /// A transaction's commit was refused with a conflict (nothing of it written).
    Conflict,
    /// A transaction rolled back on purpose.
    RolledBack,
    /// A key written with a deadline (by a put, a batch or a transaction).
    ExpiringWrite,
    /// A read found absent a key whose acknowledged put had expired.
    SeenExpired,
}

const EVENTS: [(Event, &str); 5] = [
    (Event::Committed, "transactions committed"),
    (Event::Conflict, "conflicts"),
    (Event::RolledBack, "rolled back"),
    (Event::ExpiringWrite, "keys written with a deadline"),
    (Event::SeenExpired, "keys seen expired"),
];

/// Counts of operations run and events seen.
#[derive(Default)]
pub struct Counters {
    by_kind: [AtomicU64; KINDS.len()],
    events: [AtomicU64; EVENTS.len()],
}

impl Counters {
    /// Count one operation.
    pub fn count(&self, op: Op) {
        if let Some(c) = KINDS.iter().position(|(k, _)| *k == op).and_then(|i| self.by_kind.get(i)) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Count `n` events of kind `event`.
    pub fn saw(&self, event: Event, n: u64) {
        if let Some(c) = EVENTS.iter().position(|(k, _)| *k == event).and_then(|i| self.events.get(i)) {
            c.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Operations of every kind.
    pub fn total(&self) -> u64 {
        self.by_kind.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// "N puts, N deletes, ...".
    pub fn breakdown(&self) -> String {
        KINDS
            .iter()
            .zip(&self.by_kind)
            .map(|((_, name), c)| format!("{} {name}", c.load(Ordering::Relaxed)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `base` (the progress recorded before this process ran) plus this process's counts.
    pub fn progress(&self, base: &Progress) -> Progress {
        let mut out = *base;
        out[0] += self.total();
        for (slot, c) in out.iter_mut().skip(1).zip(&self.events) {
            *slot += c.load(Ordering::Relaxed);
        }
        out
    }

    /// "N transactions committed, N conflicts, ..." for this process.
    pub fn events(&self) -> String {
        let mine = self.progress(&Progress::default());
        events_line(&mine)
    }
}

/// The events of a progress record (or of a difference of two) as text.
pub fn events_line(progress: &Progress) -> String {
    EVENTS
        .iter()
        .zip(progress.iter().skip(1))
        .map(|((_, name), n)| format!("{n} {name}"))
        .collect::<Vec<_>>()
        .join(", ")
}
