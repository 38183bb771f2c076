//! One hard budget on filter bytes held in memory across all tables
//! (`Options::filter_memory_budget`), for every policy but Elastic (whose units are
//! resident exactly while enabled, `elastic.rs`).
//!
//! A filter part is worth keeping by the reads it saves per byte. A lookup reaching part
//! `d` of a table (0-based) for an absent key got past the parts before it with
//! probability `F_<d`, the product of their FP rates; the part then saves the data read of
//! a false positive with probability `1 - f_d`. So, with `beta_rate` the table's lookups
//! per table-reaching lookup and `alpha` the fraction that find their key,
//! `density = beta_rate (1 - alpha) F_<d (1 - f_d) / bytes_d` (seed 002's utility, per
//! byte and per lookup of the database rather than per lookup of the level). A part not
//! resident costs at least that when the policy skips it, and a read per use when it
//! fetches it, so the ranking serves both.
//!
//! The pool holds the resident parts ordered by their density when last valued (they
//! change as statistics do: the head is re-valued before it is given up, as CLOCK checks a
//! page before evicting it). A lookup of a table with a part not resident asks, now and
//! then, for the first such part: it is loaded if it fits, or if the least dense resident
//! parts that make room for it are each worth less than it by a margin (a load is a read,
//! so two parts of near equal worth must not trade places back and forth). Bytes are
//! freed before the load, so the budget holds at every moment.

use super::estimate::Estimate;
use super::ledger::FilterLedger;
use super::FileState;
use crate::table::TableReader;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// A part displaces resident ones only if it is worth this many times more per byte.
const MARGIN: f64 = 1.5;

/// Stale heads re-valued per admission, at most.
const REVALUE: usize = 8;

/// Every this many admissions that must make room, every resident part is re-valued: a
/// part whose table went cold keeps the high key it was filed with until then.
const REVALUE_ALL_EVERY: u64 = 256;

/// Lookups of the database over which a table's recent access rate is measured.
const RATE_WINDOW: u64 = 1024;

/// A table's access rate over its last whole window of [`RATE_WINDOW`] lookups: a table's
/// rate since its birth follows a shift of the hot keys only as fast as its age grows, so
/// a table that was hot long ago would keep its filter. Written only under the budget's
/// lock (plain stores); read there too.
#[derive(Debug, Default)]
pub(crate) struct RecentRate {
    /// Lookup time and the table's accesses when the current window began.
    start: AtomicU64,
    start_accesses: AtomicU64,
    /// The last whole window's rate plus one (`f64` bits), 0 until a window has passed.
    rate: AtomicU64,
}

impl RecentRate {
    /// The rate of the last whole window, starting a new window when the current one is
    /// done; `None` before the first window ends.
    pub(super) fn rate(&self, accesses: u64, now: u64) -> Option<f64> {
        let start = self.start.load(Relaxed);
        if start == 0 {
            self.start.store(now.max(1), Relaxed);
            self.start_accesses.store(accesses, Relaxed);
        } else if now >= start + RATE_WINDOW {
            let rate = accesses.saturating_sub(self.start_accesses.load(Relaxed)) as f64 / (now - start) as f64;
            self.rate.store((rate + 1.0).to_bits(), Relaxed);
            self.start.store(now, Relaxed);
            self.start_accesses.store(accesses, Relaxed);
        }
        let bits = self.rate.load(Relaxed);
        (bits != 0).then(|| f64::from_bits(bits) - 1.0)
    }
}

/// What filter residency has done, for `Stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ResidencyCounters {
    /// Bytes of filter parts held now.
    pub resident_bytes: u64,
    /// The most ever held at once.
    pub peak_bytes: u64,
    /// Parts loaded (each a filter-block read per partition of its table).
    pub loads: u64,
    /// Parts released to make room (or disabled Elastic units).
    pub evictions: u64,
}

impl ResidencyCounters {
    /// Count a load of `bytes`.
    pub(super) fn loaded(&mut self, bytes: u64) {
        self.loads += 1;
        self.resident_bytes += bytes;
        self.peak_bytes = self.peak_bytes.max(self.resident_bytes);
    }

    /// Count the release of `bytes` (`evicted`: to make room, not because the table went).
    pub(super) fn released(&mut self, bytes: u64, evicted: bool) {
        self.resident_bytes = self.resident_bytes.saturating_sub(bytes);
        if evicted {
            self.evictions += 1;
        }
    }
}

/// Queue key: (density's bits, table number, part). Densities are finite and >= 0, whose
/// bit patterns sort as the numbers do.
type Key = (u64, u64, usize);

/// The resident parts of every table under one budget.
#[derive(Debug)]
pub(super) struct Residency {
    /// The database's cap, shared with every keyspace's pool.
    ledger: Arc<FilterLedger>,
    pub(super) counters: ResidencyCounters,
    queue: BTreeMap<Key, Arc<FileState>>,
    /// Admissions that had to make room.
    crowded: u64,
}

/// A table's density for part `d`, per byte.
pub(super) fn density(e: &Estimate, s: &FileState, d: usize) -> f64 {
    let before: f64 = s.part_fprs.iter().take(d).product();
    let f = s.part_fprs.get(d).copied().unwrap_or(1.0);
    let bytes = s.part_bytes.get(d).copied().unwrap_or(0).max(1) as f64;
    let v = e.beta_rate * (1.0 - e.alpha) * before * (1.0 - f) / bytes;
    if v.is_finite() && v > 0.0 {
        v
    } else {
        0.0
    }
}

impl Residency {
    pub(super) fn new(ledger: Arc<FilterLedger>) -> Self {
        Residency { ledger, counters: ResidencyCounters::default(), queue: BTreeMap::new(), crowded: 0 }
    }

    /// Consider loading part `d` of table `number` (state `s`, read from `reader`), worth
    /// `worth` per byte; `value` re-values a resident part. Returns whether it is resident.
    pub(super) fn consider(
        &mut self,
        number: u64,
        s: &Arc<FileState>,
        reader: &TableReader,
        d: usize,
        worth: f64,
        value: impl Fn(&FileState, usize) -> f64,
    ) -> bool {
        if s.resident.is_loaded(d) {
            return true;
        }
        let bytes = s.part_bytes.get(d).copied().unwrap_or(0);
        if bytes > self.ledger.cap() || s.forgotten() {
            return false;
        }
        // Room is made among this pool's own parts; what other keyspaces' pools hold
        // counts against the cap but is theirs to release.
        let need = self.ledger.over_by(bytes);
        if need > 0 {
            self.crowded += 1;
            if self.crowded.is_multiple_of(REVALUE_ALL_EVERY) {
                self.revalue_all(&value);
            } else {
                self.revalue_head(&value);
            }
            let mut victims = Vec::new();
            let mut freed = 0;
            for (&key, v) in &self.queue {
                if freed >= need {
                    break;
                }
                if key.1 == number {
                    continue;
                }
                if value(v, key.2) * MARGIN >= worth {
                    return false;
                }
                freed += v.part_bytes.get(key.2).copied().unwrap_or(0);
                victims.push(key);
            }
            if freed < need {
                return false;
            }
            for key in victims {
                if let Some(v) = self.queue.remove(&key) {
                    let released = v.resident.release(key.2);
                    self.ledger.give_back(released);
                    self.counters.released(released, true);
                }
            }
        }
        // Another pool may have taken the room meanwhile.
        if !self.ledger.try_take(bytes) {
            return false;
        }
        match reader.load_part(&s.resident, d) {
            Ok(held) => {
                self.ledger.settle(bytes, held);
                self.counters.loaded(held);
                self.queue.insert((worth.to_bits(), number, d), s.clone());
                true
            }
            // The lookup reads (or skips) the part as if it had not fit; a later lookup
            // asks again.
            Err(_) => {
                self.ledger.give_back(bytes);
                false
            }
        }
    }

    /// Re-file the first few parts whose density rose since they were filed.
    fn revalue_head(&mut self, value: &impl Fn(&FileState, usize) -> f64) {
        for _ in 0..REVALUE {
            let Some(entry) = self.queue.first_entry() else { return };
            let &(bits, number, d) = entry.key();
            let now = value(entry.get(), d);
            if now <= f64::from_bits(bits) * MARGIN {
                return;
            }
            let s = entry.remove();
            self.queue.insert((now.to_bits(), number, d), s);
        }
    }

    /// Re-file every part by its density now.
    fn revalue_all(&mut self, value: &impl Fn(&FileState, usize) -> f64) {
        let queue = std::mem::take(&mut self.queue);
        self.queue = queue.into_iter().map(|((_, n, d), s)| ((value(&s, d).to_bits(), n, d), s)).collect();
    }

    /// Drop a deleted table's parts.
    pub(super) fn forget(&mut self, number: u64, s: &FileState) {
        self.queue.retain(|k, _| k.1 != number);
        let released = s.resident.release_all();
        self.ledger.give_back(released);
        self.counters.released(released, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(fprs: &[f64], bytes: &[u64]) -> FileState {
        let mut s = FileState::for_tests();
        s.part_fprs = fprs.to_vec();
        s.part_bytes = bytes.to_vec();
        s
    }

    #[test]
    fn parts_are_worth_the_reads_they_save_per_byte() {
        let s = state(&[0.1, 0.5], &[100, 50]);
        let e = Estimate { alpha: 0.5, beta_rate: 2.0, beta: 1.0 };
        // First part: 2 x 0.5 x 1 x 0.9 / 100; second: reached by 0.1 of the absent keys.
        assert!((density(&e, &s, 0) - 0.009).abs() < 1e-12);
        assert!((density(&e, &s, 1) - 2.0 * 0.5 * 0.1 * 0.5 / 50.0).abs() < 1e-12);
        // A table whose lookups all find their key gains nothing from its filter.
        assert_eq!(density(&Estimate { alpha: 1.0, ..e }, &s, 0), 0.0);
    }

    #[test]
    fn the_recent_rate_follows_a_shift_the_lifetime_rate_would_not() {
        let r = RecentRate::default();
        assert_eq!(r.rate(0, 1), None, "the first window starts");
        // Hot for a window: 900 of 1024 lookups.
        assert_eq!(r.rate(900, 1 + RATE_WINDOW), Some(900.0 / RATE_WINDOW as f64));
        // Then cold: no access in the next window. Its lifetime rate would still be 0.44.
        assert_eq!(r.rate(900, 1 + 2 * RATE_WINDOW), Some(0.0));
        // Within a window the last whole one stands.
        assert_eq!(r.rate(950, 10 + 2 * RATE_WINDOW), Some(0.0));
    }

    #[test]
    fn counters_keep_the_peak_and_count_evictions_only_to_make_room() {
        let mut c = ResidencyCounters::default();
        c.loaded(100);
        c.loaded(50);
        c.released(100, true);
        c.loaded(20);
        c.released(50, false);
        assert_eq!(c, ResidencyCounters { resident_bytes: 20, peak_bytes: 150, loads: 3, evictions: 1 });
    }
}
