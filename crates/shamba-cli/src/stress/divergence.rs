//! A divergence: the database disagrees with the expected state. Recorded, counted and
//! printed, never panicked on.

use super::values::key_of;
use crate::admin::show;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Divergences printed as they are found; the rest are counted.
const KEEP: usize = 20;

/// Where a divergence was seen.
#[derive(Debug, Clone)]
enum Subject {
    Key(u32),
    Op(u32),
    Scan,
    Files,
}

/// One disagreement between the database and the expected state.
#[derive(Debug, Clone)]
pub struct Divergence {
    subject: Subject,
    what: String,
}

impl Divergence {
    /// About key `index`.
    pub fn key(index: u32, what: String) -> Divergence {
        Divergence { subject: Subject::Key(index), what }
    }

    /// About every key of write op `op`.
    pub fn op(op: u32, what: String) -> Divergence {
        Divergence { subject: Subject::Op(op), what }
    }

    /// About the database's files (damage `Db::verify` found).
    pub fn files(what: String) -> Divergence {
        Divergence { subject: Subject::Files, what }
    }

    /// About a scan as a whole.
    pub fn scan(what: String) -> Divergence {
        Divergence { subject: Subject::Scan, what }
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.subject {
            Subject::Key(index) => write!(f, "key {} (index {index}): {}", show(&key_of(index)), self.what),
            Subject::Op(op) => write!(f, "write op {op}: {}", self.what),
            Subject::Scan => write!(f, "{}", self.what),
            Subject::Files => write!(f, "files: {}", self.what),
        }
    }
}

/// Every divergence of a run, shared by its threads.
#[derive(Default)]
pub struct Divergences {
    count: AtomicU64,
    kept: Mutex<Vec<Divergence>>,
}

impl Divergences {
    /// Record one; the first few are printed to stderr at once, the rest counted.
    pub fn record(&self, d: Divergence) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() < KEEP {
            eprintln!("DIVERGENCE: {d}");
            kept.push(d);
        }
    }

    /// Divergences so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The first one, for the summary.
    pub fn first(&self) -> Option<Divergence> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner()).first().cloned()
    }
}
