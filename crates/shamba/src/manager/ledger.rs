//! The database's one cap on resident filter bytes (`Options::filter_memory_budget`),
//! shared by the filter pools of every keyspace: each pool evicts only its own parts, and
//! takes the bytes of a part from the ledger before reading it, so the bytes held across
//! all pools never pass the cap, even while two pools load at once.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{AcqRel, Acquire};

/// Bytes held against the cap, and the most ever held at once.
#[derive(Debug)]
pub(crate) struct FilterLedger {
    cap: u64,
    held: AtomicU64,
    peak: AtomicU64,
}

impl FilterLedger {
    pub(crate) fn new(cap: u64) -> FilterLedger {
        FilterLedger { cap, held: AtomicU64::new(0), peak: AtomicU64::new(0) }
    }

    pub(crate) fn cap(&self) -> u64 {
        self.cap
    }

    /// How many bytes must be given back before `bytes` more fit.
    pub(super) fn over_by(&self, bytes: u64) -> u64 {
        (self.held.load(Acquire) + bytes).saturating_sub(self.cap)
    }

    /// Take `bytes` if they fit under the cap.
    pub(super) fn try_take(&self, bytes: u64) -> bool {
        let taken = self.held.fetch_update(AcqRel, Acquire, |held| {
            let after = held.checked_add(bytes)?;
            (after <= self.cap).then_some(after)
        });
        match taken {
            Ok(before) => {
                self.peak.fetch_max(before + bytes, AcqRel);
                true
            }
            Err(_) => false,
        }
    }

    /// Correct a take of `expected` bytes to the `actual` bytes a load held (never more
    /// than was taken: a part holds at most its recorded size).
    pub(super) fn settle(&self, expected: u64, actual: u64) {
        if actual < expected {
            self.give_back(expected - actual);
        }
    }

    pub(super) fn give_back(&self, bytes: u64) {
        let _ = self.held.fetch_update(AcqRel, Acquire, |held| Some(held.saturating_sub(bytes)));
    }

    /// Bytes held now across every pool.
    #[cfg(test)]
    pub(crate) fn held(&self) -> u64 {
        self.held.load(Acquire)
    }

    /// The most held at once since the database opened.
    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_fit_under_the_cap_and_gives_back_make_room() {
        let l = FilterLedger::new(100);
        assert!(l.try_take(60));
        assert_eq!(l.over_by(50), 10);
        assert!(!l.try_take(50), "over the cap");
        assert!(l.try_take(40));
        l.give_back(30);
        l.settle(20, 5);
        assert_eq!((l.held(), l.peak()), (55, 100));
    }

    #[test]
    fn racing_takes_never_pass_the_cap() {
        let l = std::sync::Arc::new(FilterLedger::new(1000));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let l = l.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        if l.try_take(7) {
                            assert!(l.held() <= 1000);
                            l.give_back(7);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(l.peak() <= 1000);
        assert_eq!(l.held(), 0);
    }
}
