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

use super::policy::ElasticPolicy;
use super::FileState;
use crate::table::ProbePlan;
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone)]
struct Entry {
    enabled: usize,
    units: usize,
    unit_bytes: u64,
    unit_fpr: f64,
    accesses: u64,
    last_access: u64,
}

impl Entry {
    /// E[Extra IO] contribution with `e` units enabled.
    fn extra_io(&self, e: usize) -> f64 {
        self.accesses as f64 * self.unit_fpr.powi(e as i32)
    }
}

/// The multi-queue and the budget.
#[derive(Debug)]
pub struct ElasticState {
    policy: ElasticPolicy,
    used: u64,
    files: HashMap<u64, Entry>,
    /// `queues[e]` holds `(last_access, table)` of tables with `e` units enabled; the
    /// smallest element is the least recently used.
    queues: Vec<BTreeSet<(u64, u64)>>,
}

impl ElasticState {
    pub fn new(policy: ElasticPolicy) -> Self {
        ElasticState { policy, used: 0, files: HashMap::new(), queues: vec![BTreeSet::new()] }
    }

    pub fn used_bytes(&self) -> u64 {
        self.used
    }

    fn queue(&mut self, e: usize) -> &mut BTreeSet<(u64, u64)> {
        if self.queues.len() <= e {
            self.queues.resize_with(e + 1, BTreeSet::new);
        }
        &mut self.queues[e]
    }

    /// Count an access to `table` at time `now`, maybe enable one more of its units, and
    /// return how many units to probe.
    pub fn on_access(&mut self, table: u64, state: &FileState, now: u64) -> ProbePlan {
        if !self.files.contains_key(&table) {
            let units = state.part_bytes.len();
            let entry = Entry {
                enabled: 0,
                units,
                unit_bytes: state.part_bytes.iter().copied().max().unwrap_or(0),
                unit_fpr: if units == 0 { 1.0 } else { state.part_fprs.iter().sum::<f64>() / units as f64 },
                accesses: 0,
                last_access: now,
            };
            self.queue(0).insert((now, table));
            self.files.insert(table, entry);
        }
        let Some(entry) = self.files.get_mut(&table) else { return ProbePlan::SKIP };
        let (old_last, enabled) = (entry.last_access, entry.enabled);
        entry.accesses += 1;
        entry.last_access = now;
        self.queue(enabled).remove(&(old_last, table));
        self.queue(enabled).insert((now, table));
        self.try_enable_one(table, now);
        ProbePlan { max_parts: self.files.get(&table).map_or(0, |e| e.enabled) }
    }

    fn try_enable_one(&mut self, table: u64, now: u64) {
        let Some(entry) = self.files.get(&table).cloned() else { return };
        if entry.enabled >= entry.units || entry.unit_bytes > self.policy.budget_bytes {
            return;
        }
        let gain = entry.extra_io(entry.enabled) - entry.extra_io(entry.enabled + 1);
        let over = (self.used + entry.unit_bytes).saturating_sub(self.policy.budget_bytes);
        let mut victims = Vec::new();
        if over > 0 {
            let mut freed = 0;
            let mut cost = 0.0;
            'search: for e in (1..self.queues.len()).rev() {
                for &(last, victim) in self.queues[e].iter() {
                    if last.saturating_add(self.policy.life_time) >= now {
                        // The least recently used table of this queue is not expired, so
                        // none is: look one queue lower.
                        continue 'search;
                    }
                    if victim == table {
                        continue;
                    }
                    let Some(v) = self.files.get(&victim) else { continue };
                    cost += v.extra_io(e - 1) - v.extra_io(e);
                    freed += v.unit_bytes;
                    victims.push((victim, e, last));
                    if freed >= over {
                        break 'search;
                    }
                }
            }
            if freed < over || cost >= gain {
                return;
            }
        }
        for (victim, e, last) in victims {
            self.queue(e).remove(&(last, victim));
            self.queue(e - 1).insert((last, victim));
            if let Some(v) = self.files.get_mut(&victim) {
                v.enabled = e - 1;
                self.used -= v.unit_bytes;
            }
        }
        let e = entry.enabled;
        self.queue(e).remove(&(entry.last_access, table));
        self.queue(e + 1).insert((entry.last_access, table));
        if let Some(t) = self.files.get_mut(&table) {
            t.enabled = e + 1;
        }
        self.used += entry.unit_bytes;
    }

    /// Drop a deleted table, releasing its units.
    pub fn forget(&mut self, table: u64) {
        if let Some(e) = self.files.remove(&table) {
            self.used -= e.unit_bytes * e.enabled as u64;
            self.queue(e.enabled).remove(&(e.last_access, table));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    fn state(units: usize, bytes: u64) -> FileState {
        FileState {
            born_at: 0,
            accesses: AtomicU64::new(0),
            positives: AtomicU64::new(0),
            part_fprs: vec![0.3; units],
            part_bytes: vec![bytes; units],
            prior: None,
        }
    }

    #[test]
    fn enabled_units_never_exceed_the_budget() {
        let mut el = ElasticState::new(ElasticPolicy { life_time: 10, budget_bytes: 1000 });
        let s = state(4, 100);
        let mut now = 0;
        for round in 0..2000u64 {
            now += 1;
            // A shifting hot set over 50 tables.
            let table = (round * 7 + (round / 200) * 13) % 50;
            el.on_access(table, &s, now);
            assert!(el.used_bytes() <= 1000, "budget exceeded: {}", el.used_bytes());
            let sum: u64 = el.files.values().map(|e| e.unit_bytes * e.enabled as u64).sum();
            assert_eq!(sum, el.used_bytes());
        }
    }

    #[test]
    fn hot_tables_get_more_units_than_cold_ones() {
        let mut el = ElasticState::new(ElasticPolicy { life_time: 20, budget_bytes: 1200 });
        let s = state(4, 100);
        for now in 1..=5000u64 {
            // Table 0 takes half the lookups; tables 1..40 share the rest.
            let table = if now % 2 == 0 { 0 } else { 1 + (now / 2) % 40 };
            el.on_access(table, &s, now);
        }
        let hot = el.files[&0].enabled;
        let cold_avg = (1..41).map(|t| el.files[&t].enabled).sum::<usize>() as f64 / 40.0;
        assert_eq!(hot, 4, "the hot table should have every unit");
        assert!(cold_avg < 1.0, "cold tables average {cold_avg} units");
    }

    #[test]
    fn forgetting_a_table_releases_its_units() {
        let mut el = ElasticState::new(ElasticPolicy { life_time: 10, budget_bytes: 1000 });
        let s = state(2, 100);
        for now in 1..10 {
            el.on_access(7, &s, now);
        }
        assert_eq!(el.used_bytes(), 200);
        el.forget(7);
        assert_eq!(el.used_bytes(), 0);
    }
}
