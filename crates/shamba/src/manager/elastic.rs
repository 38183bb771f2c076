//! ElasticBF's unit management (seed 003).
//!
//! Each table's filter is `U` independent units; a lookup probes the enabled ones, and the
//! FP rate with `e` enabled units is `f^e`. The expected extra reads caused by false
//! positives, `E[Extra IO] = sum_i freq_i * f_i^(e_i)` (Eq. 1), fall when a hot table gets
//! another unit; under a fixed budget of enabled bytes that unit's memory comes from
//! tables that went cold. Tables live in multi-queue LRU lists `Q_0..Q_m` by enabled
//! units; a table is expired when it was not looked up for `life_time` lookups
//! (`expiredTime = currentTime + lifeTime`, time counted in lookups). On each access the
//! accessed table asks for one more unit; victims are expired tables searched from `Q_m`
//! down, least recently used first, each giving up one unit; the exchange happens only if
//! it lowers `E[Extra IO]`.
//!
//! Resident = enabled (the seed's point: units not enabled are not in memory, so hot
//! tables get more units for the same RAM): tables open with their units unloaded; enabling
//! a unit reads it from its table (`TableReader::load_part`, one counted filter-block read
//! per partition) into the table's resident slots, and disabling it releases them, victims
//! first, so the bytes held never exceed the budget. A lookup probes the enabled units from
//! those slots; one that races with a disable reads the unit for itself.
//!
//! What a lookup pays: a table's enabled count and last access are atomics in its
//! [`FileState`], so a table with every unit enabled costs two relaxed memory operations
//! and no lock. Only a table that may still gain a unit takes the lock. The queues are
//! ordered by each table's last access *as of its last move* (lazy promotion, as in
//! CLOCK): an access does not touch them; the victim search re-files a table found
//! accessed since, and stops at the first table that really is not expired. (The first
//! version kept the queues exact on every access: a hash map lookup and a B-tree remove
//! and insert per table visited, a cost every lookup paid.)

use super::ledger::FilterLedger;
use super::residency::ResidencyCounters;
use super::FileState;
use crate::options::ElasticPolicy;
use crate::table::{ProbePlan, TableReader};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;

/// A table's units, as lookups see them.
#[derive(Debug, Default)]
pub(super) struct UnitState {
    /// Units enabled (written under the manager's lock, read by lookups).
    enabled: AtomicU8,
    /// Lookup time of the last access (written by lookups).
    last_access: AtomicU64,
    /// Its key in its queue (under the lock): the last access when it was filed.
    filed_at: AtomicU64,
    /// Whether it is in a queue (under the lock).
    filed: AtomicBool,
    /// Deleted: never filed again (under the lock).
    forgotten: AtomicBool,
}

impl UnitState {
    /// Units to probe.
    pub(super) fn enabled(&self) -> usize {
        usize::from(self.enabled.load(Relaxed))
    }
}

/// A table's unit economics, from its filter's parts.
struct Units {
    count: usize,
    bytes: u64,
    fpr: f64,
}

impl Units {
    fn of(s: &FileState) -> Units {
        let count = s.part_bytes.len().min(usize::from(u8::MAX));
        Units {
            count,
            bytes: s.part_bytes.iter().copied().max().unwrap_or(0),
            fpr: if count == 0 { 1.0 } else { s.part_fprs.iter().sum::<f64>() / count as f64 },
        }
    }

    /// `E[Extra IO]` saved by the table's `e+1`-th unit (lost by disabling it).
    fn gain(&self, accesses: u64, e: usize) -> f64 {
        accesses as f64 * self.fpr.powi(e as i32) * (1.0 - self.fpr)
    }
}

/// Queue key: (last access when filed, table number).
type Key = (u64, u64);

/// The multi-queue and the budget.
#[derive(Debug)]
pub(super) struct ElasticState {
    policy: ElasticPolicy,
    /// Bytes of units that may be enabled: the policy's, or a smaller filter budget.
    budget: u64,
    used: u64,
    /// The database's cap on filter bytes, shared with every keyspace's pool, if set.
    ledger: Option<Arc<FilterLedger>>,
    /// Units loaded and released, and the bytes they hold.
    pub(super) counters: ResidencyCounters,
    /// `queues[e]`: tables with `e` units enabled, least recently used first.
    queues: Vec<BTreeMap<Key, Arc<FileState>>>,
}

impl ElasticState {
    pub(super) fn new(policy: ElasticPolicy, budget: u64, ledger: Option<Arc<FilterLedger>>) -> Self {
        ElasticState {
            policy,
            budget,
            used: 0,
            ledger,
            counters: ResidencyCounters::default(),
            queues: vec![BTreeMap::new()],
        }
    }

    pub(super) fn used_bytes(&self) -> u64 {
        self.used
    }

    /// Whether an access at `now` must take the lock: the table is not filed yet, or may
    /// gain a unit. Otherwise only its last access is recorded.
    #[inline]
    pub(super) fn needs_lock(state: &FileState, now: u64) -> bool {
        let u = &state.units;
        u.last_access.store(now, Relaxed);
        !u.filed.load(Relaxed) || u.enabled() < state.part_bytes.len()
    }

    /// Count an access to table `number` at time `now` (its state already records the
    /// access), maybe enable one more of its units, and return how many units to probe.
    /// `load` reads a unit into the table's resident slots (its bytes held, or an error).
    pub(super) fn on_access(
        &mut self,
        number: u64,
        state: &Arc<FileState>,
        now: u64,
        reader: &TableReader,
    ) -> ProbePlan<'static> {
        self.on_access_loading(number, state, now, |d| reader.load_part(&state.resident, d))
    }

    /// [`on_access`](Self::on_access) with the unit loader given (tests load nothing).
    fn on_access_loading(
        &mut self,
        number: u64,
        state: &Arc<FileState>,
        now: u64,
        load: impl FnOnce(usize) -> crate::error::Result<u64>,
    ) -> ProbePlan<'static> {
        let u = &state.units;
        if u.forgotten.load(Relaxed) {
            return ProbePlan::first(u.enabled());
        }
        if !u.filed.load(Relaxed) {
            self.file(number, state, 0, now);
        }
        self.try_enable_one(number, state, now, load);
        ProbePlan::first(u.enabled())
    }

    fn queue(&mut self, e: usize) -> &mut BTreeMap<Key, Arc<FileState>> {
        if self.queues.len() <= e {
            self.queues.resize_with(e + 1, BTreeMap::new);
        }
        &mut self.queues[e]
    }

    /// Put a table in `Q_e` at its position for last access `at`.
    fn file(&mut self, number: u64, state: &Arc<FileState>, e: usize, at: u64) {
        let u = &state.units;
        u.filed_at.store(at, Relaxed);
        u.filed.store(true, Relaxed);
        self.queue(e).insert((at, number), state.clone());
    }

    /// Take a table out of its queue.
    fn unfile(&mut self, number: u64, state: &FileState) {
        let u = &state.units;
        if u.filed.swap(false, Relaxed) {
            let e = u.enabled();
            self.queue(e).remove(&(u.filed_at.load(Relaxed), number));
        }
    }

    fn try_enable_one(
        &mut self,
        number: u64,
        state: &Arc<FileState>,
        now: u64,
        load: impl FnOnce(usize) -> crate::error::Result<u64>,
    ) {
        let units = Units::of(state);
        let e = state.units.enabled();
        if e >= units.count || units.bytes > self.budget {
            return;
        }
        let gain = units.gain(state.accesses.load(Relaxed), e);
        // Over this pool's budget, or over the database's cap (which other keyspaces' pools
        // share: only this pool's units are victims here).
        let over_ledger = self.ledger.as_ref().map_or(0, |l| l.over_by(units.bytes));
        let over = (self.used + units.bytes).saturating_sub(self.budget).max(over_ledger);
        let mut victims = Vec::new();
        if over > 0 {
            let (mut freed, mut cost) = (0, 0.0);
            for q in (1..self.queues.len()).rev() {
                self.promote_accessed(q, now);
                for ((filed_at, victim), v) in &self.queues[q] {
                    if filed_at.saturating_add(self.policy.life_time) >= now {
                        // Filed (so last accessed) recently, and so is every table after it.
                        break;
                    }
                    if *victim == number
                        || v.units.last_access.load(Relaxed).saturating_add(self.policy.life_time) >= now
                    {
                        // Accessed since it was filed (promotion re-files only the head):
                        // not expired.
                        continue;
                    }
                    let vu = Units::of(v);
                    cost += vu.gain(v.accesses.load(Relaxed), q - 1);
                    freed += vu.bytes;
                    victims.push((*victim, v.clone()));
                    if freed >= over {
                        break;
                    }
                }
                if freed >= over {
                    break;
                }
            }
            if freed < over || cost >= gain {
                return;
            }
        }
        // Victims first: their bytes are released before the new unit's are read.
        for (victim, v) in victims {
            let at = v.units.filed_at.load(Relaxed);
            self.unfile(victim, &v);
            let ve = v.units.enabled();
            v.units.enabled.store((ve - 1) as u8, Relaxed);
            self.used -= Units::of(&v).bytes;
            let released = v.resident.release(ve - 1);
            if let Some(l) = &self.ledger {
                l.give_back(released);
            }
            self.counters.released(released, true);
            self.file(victim, &v, ve - 1, at);
        }
        // Another keyspace's pool may have taken the room meanwhile.
        if self.ledger.as_ref().is_some_and(|l| !l.try_take(units.bytes)) {
            return;
        }
        match load(e) {
            Ok(held) => {
                if let Some(l) = &self.ledger {
                    l.settle(units.bytes, held);
                }
                self.counters.loaded(held)
            }
            // Left disabled: the lookup probes the units it has, and a later one asks again.
            Err(_) => {
                if let Some(l) = &self.ledger {
                    l.give_back(units.bytes);
                }
                return;
            }
        }
        self.unfile(number, state);
        state.units.enabled.store((e + 1) as u8, Relaxed);
        self.used += units.bytes;
        self.file(number, state, e + 1, state.units.last_access.load(Relaxed));
    }

    /// Re-file the tables at the head of `Q_q` that were accessed since they were filed,
    /// until the head is a table whose filed access is its last one, or not expired.
    fn promote_accessed(&mut self, q: usize, now: u64) {
        let life_time = self.policy.life_time;
        let Some(queue) = self.queues.get_mut(q) else { return };
        while let Some(entry) = queue.first_entry() {
            let (filed_at, number) = *entry.key();
            let last = entry.get().units.last_access.load(Relaxed);
            if last == filed_at || filed_at.saturating_add(life_time) >= now {
                return;
            }
            let state = entry.remove();
            state.units.filed_at.store(last, Relaxed);
            queue.insert((last, number), state);
        }
    }

    /// Drop a deleted table, releasing its units.
    pub(super) fn forget(&mut self, number: u64, state: &FileState) {
        self.unfile(number, state);
        state.units.forgotten.store(true, Relaxed);
        let e = state.units.enabled.swap(0, Relaxed);
        self.used -= Units::of(state).bytes * u64::from(e);
        let released = state.resident.release_all();
        if let Some(l) = &self.ledger {
            l.give_back(released);
        }
        self.counters.released(released, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(units: usize, bytes: u64) -> Arc<FileState> {
        Arc::new(FileState {
            born_at: 0,
            accesses: AtomicU64::new(0),
            positives: AtomicU64::new(0),
            part_fprs: vec![0.3; units],
            part_bytes: vec![bytes; units],
            prior: None,
            units: UnitState::default(),
            resident: crate::table::ResidentParts::empty(0, 0),
            gone: std::sync::atomic::AtomicBool::new(false),
            recent: crate::manager::residency::RecentRate::default(),
        })
    }

    /// One lookup of `table` at `now`, as the manager does it.
    fn access(el: &mut ElasticState, table: u64, s: &Arc<FileState>, now: u64) -> usize {
        s.accesses.fetch_add(1, Relaxed);
        if ElasticState::needs_lock(s, now) {
            el.on_access_loading(table, s, now, |_| Ok(0)).max_parts as usize
        } else {
            s.units.enabled()
        }
    }

    fn enabled_bytes(tables: &[Arc<FileState>]) -> u64 {
        tables.iter().map(|t| Units::of(t).bytes * t.units.enabled() as u64).sum()
    }

    #[test]
    fn enabled_units_never_exceed_the_budget() {
        let mut el = ElasticState::new(ElasticPolicy { life_time: 10, budget_bytes: 1000 }, 1000, None);
        let tables: Vec<_> = (0..50).map(|_| state(4, 100)).collect();
        let mut now = 0;
        for round in 0..2000u64 {
            now += 1;
            // A shifting hot set over 50 tables.
            let t = ((round * 7 + (round / 200) * 13) % 50) as usize;
            access(&mut el, t as u64, &tables[t], now);
            assert!(el.used_bytes() <= 1000, "budget exceeded: {}", el.used_bytes());
            assert_eq!(enabled_bytes(&tables), el.used_bytes());
        }
        // Every table is filed exactly once, in the queue of its enabled count.
        let filed: usize = el.queues.iter().map(BTreeMap::len).sum();
        assert_eq!(filed, 50);
        for (e, q) in el.queues.iter().enumerate() {
            assert!(q.values().all(|t| t.units.enabled() == e));
        }
    }

    #[test]
    fn hot_tables_get_more_units_than_cold_ones() {
        let mut el = ElasticState::new(ElasticPolicy { life_time: 20, budget_bytes: 1200 }, 1200, None);
        let tables: Vec<_> = (0..41).map(|_| state(4, 100)).collect();
        for now in 1..=5000u64 {
            // Table 0 takes half the lookups; tables 1..40 share the rest.
            let t = if now % 2 == 0 { 0 } else { 1 + (now / 2) % 40 } as usize;
            access(&mut el, t as u64, &tables[t], now);
        }
        let hot = tables[0].units.enabled();
        let cold_avg = tables[1..].iter().map(|t| t.units.enabled()).sum::<usize>() as f64 / 40.0;
        assert_eq!(hot, 4, "the hot table should have every unit");
        assert!(cold_avg < 1.0, "cold tables average {cold_avg} units");
    }

    #[test]
    fn a_table_accessed_since_it_was_filed_is_not_a_victim() {
        // Budget for 2 units. Table 1 takes both, then table 0 (cold until now) asks: table
        // 1 was filed long ago but accessed just before, so it is not expired.
        let mut el = ElasticState::new(ElasticPolicy { life_time: 10, budget_bytes: 200 }, 200, None);
        let (t0, t1) = (state(2, 100), state(2, 100));
        access(&mut el, 1, &t1, 1);
        access(&mut el, 1, &t1, 2);
        assert_eq!(t1.units.enabled(), 2);
        for now in 3..100 {
            access(&mut el, 1, &t1, now); // lock-free: every unit already enabled
        }
        for _ in 0..50 {
            access(&mut el, 0, &t0, 100);
        }
        assert_eq!(t1.units.enabled(), 2, "a recently used table lost a unit");
        assert_eq!(t0.units.enabled(), 0);
        // Once table 1 goes cold (not accessed for life_time), table 0's accesses take its
        // units.
        for now in 120..1000 {
            access(&mut el, 0, &t0, now);
        }
        assert_eq!(t0.units.enabled(), 2);
        assert_eq!(t1.units.enabled(), 0);
        assert_eq!(enabled_bytes(&[t0, t1]), el.used_bytes());
    }

    #[test]
    fn a_victim_behind_the_head_must_be_expired_too() {
        // Budget for 3 small units, all taken by A, B, C (filed in that order). B is then
        // accessed (lock-free: its one unit is enabled), and D needs two small units' worth:
        // the victims are A and C, not B, though B's queue entry is older than C's.
        let mut el = ElasticState::new(ElasticPolicy { life_time: 10, budget_bytes: 300 }, 300, None);
        let (a, b, c, d) = (state(1, 100), state(1, 100), state(1, 100), state(1, 200));
        access(&mut el, 1, &a, 1);
        access(&mut el, 2, &b, 2);
        access(&mut el, 3, &c, 3);
        access(&mut el, 2, &b, 95);
        for _ in 0..10 {
            access(&mut el, 4, &d, 100);
        }
        let enabled: Vec<usize> = [&a, &b, &c, &d].iter().map(|t| t.units.enabled()).collect();
        assert_eq!(enabled, vec![0, 1, 0, 1]);
        assert_eq!(el.used_bytes(), 300);
    }

    #[test]
    fn forgetting_a_table_releases_its_units() {
        let mut el = ElasticState::new(ElasticPolicy { life_time: 10, budget_bytes: 1000 }, 1000, None);
        let s = state(2, 100);
        for now in 1..10 {
            access(&mut el, 7, &s, now);
        }
        assert_eq!(el.used_bytes(), 200);
        el.forget(7, &s);
        assert_eq!(el.used_bytes(), 0);
        assert!(el.queues.iter().all(BTreeMap::is_empty));
        // A late lookup of the deleted table (an older version) neither files nor enables.
        access(&mut el, 7, &s, 11);
        assert_eq!(el.used_bytes(), 0);
        assert!(el.queues.iter().all(BTreeMap::is_empty));
    }
}
