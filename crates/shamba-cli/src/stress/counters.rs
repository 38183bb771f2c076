//! Operations run, by kind, for the summary.

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
}

const KINDS: [(Op, &str); 10] = [
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
];

/// Counts of operations run.
#[derive(Default)]
pub struct Counters {
    by_kind: [AtomicU64; KINDS.len()],
}

impl Counters {
    /// Count one operation.
    pub fn count(&self, op: Op) {
        if let Some(c) = KINDS.iter().position(|(k, _)| *k == op).and_then(|i| self.by_kind.get(i)) {
            c.fetch_add(1, Ordering::Relaxed);
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
}
