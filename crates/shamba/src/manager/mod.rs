//! The filter manager: for every table a lookup visits, decide which filter parts to probe
//! (all, a prefix of the modules, the enabled units, or none), from the table's access
//! statistics and the configured [`ProbePolicy`]. Filters only change the cost of a lookup,
//! never its answer: a skipped part means a data-block read that the filter might have
//! saved.
//!
//! Statistics per table (seed 002, "Updating alpha and beta"): `beta`, how often lookups
//! reach the table, and `alpha`, the fraction of those that find their key. Measured values
//! are blended with values inherited from the tables a flush or compaction replaced
//! ([`inherit`]), by the table's age (Eq. 12). They are persisted in the manifest when the
//! database closes, so a restart does not start blind. Under `Plain` the manager stays out
//! of the way entirely (no statistics, not even a count of lookups: a lookup under it
//! writes nothing shared); the database keeps its own lookup counters regardless.

#[cfg(feature = "lab")]
mod accesses;
mod elastic;
#[cfg_attr(not(feature = "lab"), expect(unreachable_pub, reason = "public through `lab` only"))]
mod estimate;
pub(crate) mod inherit;
mod ledger;
mod residency;
mod shamba;

#[cfg(feature = "lab")]
pub use accesses::TableAccesses;
#[cfg(feature = "lab")]
pub use estimate::Estimate;
#[cfg(not(feature = "lab"))]
pub(crate) use estimate::Estimate;
pub(crate) use ledger::FilterLedger;
pub(crate) use residency::ResidencyCounters;

use crate::number_map::NumberMap;
use crate::options::{ProbePolicy, ShambaPolicy, Skipping};
use crate::table::{ProbePlan, ResidentParts, Spot, TableReader};
use crate::version::{FileMeta, FileStatsRecord, Version};
use elastic::ElasticState;
use parking_lot::{Mutex, RwLock};
use residency::Residency;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

/// Runtime state of one table, created on its first lookup.
#[derive(Debug)]
pub(crate) struct FileState {
    /// Table-reaching lookups of the database when this state was created (the table's birth,
    /// in lookup time).
    born_at: u64,
    /// Lookups that reached this table.
    accesses: AtomicU64,
    /// Lookups that found their key here.
    positives: AtomicU64,
    /// Analytic FP rate of each filter part (from the table's properties).
    part_fprs: Vec<f64>,
    /// Bytes of each filter part.
    part_bytes: Vec<u64>,
    /// Inherited estimate, from the manifest.
    prior: Option<FileStatsRecord>,
    /// Elastic units enabled and last access (Elastic only).
    units: elastic::UnitState,
    /// Filter parts the manager holds in memory (pooled filters only; else no slots).
    resident: ResidentParts,
    /// The table was deleted: nothing more is loaded for it.
    gone: AtomicBool,
    /// Its recent access rate, for the filter budget (written under the budget's lock).
    recent: residency::RecentRate,
}

/// A table as a lookup meets it.
pub(crate) struct Candidate<'a> {
    /// Its level.
    pub level: usize,
    /// Whether it is in the deepest non-empty level.
    pub last_level: bool,
    /// The version it belongs to (its level's file count gives relative popularity; only
    /// policies that need it count, so `Plain` pays nothing).
    pub version: &'a Version,
    /// Its metadata.
    pub meta: &'a FileMeta,
    /// Where its state is kept once made: a slot of the lookup's version, so that a lookup
    /// reaches the state with one load instead of a lock and a map probe.
    pub state: &'a OnceLock<Arc<FileState>>,
    /// Its reader.
    pub reader: &'a TableReader,
    /// Where the lookup falls in the table (its filter partition).
    pub spot: &'a Spot<'a>,
}

/// Decides filter probes and keeps the statistics that drive the decisions.
pub(crate) struct FilterManager {
    policy: ProbePolicy,
    /// Lookups that reached the tables (not answered by a memtable), the clock of the
    /// policies' statistics; not counted under `Plain`, which keeps none.
    lookups: AtomicU64,
    /// Accesses per level, for a table's popularity relative to its level.
    level_accesses: Vec<AtomicU64>,
    files: RwLock<NumberMap<u64, Arc<FileState>>>,
    elastic: Option<Mutex<ElasticState>>,
    /// The filter memory budget of every policy but Elastic (`None`: unbounded).
    residency: Option<Mutex<Residency>>,
    /// Whether lookups skip the manager entirely (`Plain` without a budget).
    hands_off: bool,
    /// Whether filter parts are pooled (loaded and released by the manager).
    pooled: bool,
    /// Whether probes read the parts that are not resident together
    /// (`ShambaPolicy::read_rest_together`).
    read_rest_together: bool,
}

impl FilterManager {
    /// A manager for a tree of `num_levels` levels, holding at most `filter_budget` bytes
    /// of filter parts (`None`: tables pin theirs, except Elastic's units).
    pub(crate) fn new(policy: ProbePolicy, num_levels: usize, ledger: Option<Arc<FilterLedger>>) -> Self {
        let (elastic, residency) = match &policy {
            ProbePolicy::Elastic(p) => {
                let budget = ledger.as_ref().map_or(p.budget_bytes, |l| l.cap().min(p.budget_bytes));
                (Some(Mutex::new(ElasticState::new(p.clone(), budget, ledger))), None)
            }
            _ => (None, ledger.map(|l| Mutex::new(Residency::new(l)))),
        };
        FilterManager {
            hands_off: matches!(policy, ProbePolicy::Plain) && residency.is_none(),
            pooled: elastic.is_some() || residency.is_some(),
            read_rest_together: matches!(&policy, ProbePolicy::Shamba(p) if p.read_rest_together),
            policy,
            lookups: AtomicU64::new(0),
            level_accesses: (0..num_levels).map(|_| AtomicU64::new(0)).collect(),
            files: RwLock::new(NumberMap::default()),
            elastic,
            residency,
        }
    }

    /// Whether this policy never probes the filter of a table of the deepest level
    /// (`NoLastLevel`): lookups need not prepare (prefetch) those filters.
    pub(crate) fn skips_last_level(&self) -> bool {
        matches!(self.policy, ProbePolicy::NoLastLevel)
    }

    /// Whether lookups may skip the manager entirely: it keeps no statistics and plans
    /// every part of every filter (`Plain` without a filter memory budget).
    #[inline]
    pub(crate) fn hands_off(&self) -> bool {
        self.hands_off
    }

    /// Count one lookup that reached the tables (not under `Plain`).
    #[inline]
    pub(crate) fn begin_lookup(&self) {
        self.begin_lookups(1);
    }

    /// Count `n` lookups that reached the tables at once (a batch's keys).
    #[inline]
    pub(crate) fn begin_lookups(&self, n: u64) {
        if !self.hands_off && n > 0 {
            self.lookups.fetch_add(n, Relaxed);
        }
    }

    /// Table-reaching lookups so far (0 under `Plain`).
    pub(crate) fn lookups(&self) -> u64 {
        self.lookups.load(Relaxed)
    }

    /// The state of a candidate's table, created on first use and then kept in the
    /// candidate's slot (the map stays the source of truth for persistence, and for a new
    /// version's slot, which starts empty).
    #[inline]
    fn state<'a>(&self, c: &Candidate<'a>) -> &'a Arc<FileState> {
        c.state.get_or_init(|| self.shared_state(c.meta, c.reader))
    }

    /// The state of a table from the map, created on first use.
    #[cold]
    fn shared_state(&self, meta: &FileMeta, reader: &TableReader) -> Arc<FileState> {
        if let Some(s) = self.files.read().get(&meta.number) {
            return s.clone();
        }
        let filter = &reader.properties().filter;
        let state = Arc::new(FileState {
            born_at: self.lookups(),
            accesses: AtomicU64::new(0),
            positives: AtomicU64::new(0),
            part_fprs: if filter.part_fprs.len() == filter.part_bytes.len() {
                filter.part_fprs.clone()
            } else {
                // Tables written before FP rates were recorded: assume 1% per part.
                vec![0.01; filter.part_bytes.len()]
            },
            part_bytes: filter.part_bytes.clone(),
            prior: meta.stats,
            units: elastic::UnitState::default(),
            resident: if self.pooled { reader.empty_resident_parts() } else { ResidentParts::empty(0, 0) },
            gone: AtomicBool::new(false),
            recent: residency::RecentRate::default(),
        });
        self.files.write().entry(meta.number).or_insert(state).clone()
    }

    /// Which filter parts to probe for this lookup of `c`. Counts the access.
    /// Under `Plain` nothing is decided and no statistics are kept: the baseline pays for
    /// nothing it does not use. Every other policy keeps them (and persists them).
    #[inline(always)]
    pub(crate) fn plan<'a>(&self, c: &Candidate<'a>) -> (ProbePlan<'a>, Option<&'a FileState>) {
        if self.hands_off {
            return (ProbePlan::ALL, None);
        }
        self.plan_by_statistics(c)
    }

    /// [`plan`](Self::plan) under a policy that keeps statistics.
    fn plan_by_statistics<'a>(&self, c: &Candidate<'a>) -> (ProbePlan<'a>, Option<&'a FileState>) {
        let state = self.state(c);
        let accesses = state.accesses.fetch_add(1, Relaxed) + 1;
        if let Some(a) = self.level_accesses.get(c.level) {
            a.fetch_add(1, Relaxed);
        }
        if let Some(residency) = &self.residency {
            self.maybe_load(residency, c, state, accesses);
        }
        let plan = match &self.policy {
            ProbePolicy::Plain => ProbePlan::ALL,
            ProbePolicy::NoLastLevel => {
                if c.last_level {
                    ProbePlan::SKIP
                } else {
                    ProbePlan::ALL
                }
            }
            // Nothing is skipped: the statistics above are all this lookup needs.
            ProbePolicy::Shamba(p) if p.skipping == Skipping::None && !self.read_rest_together => ProbePlan::ALL,
            ProbePolicy::Shamba(p) => {
                let files_in_level = c.version.levels.get(c.level).map_or(0, |l| l.file_count());
                let e = self.estimate(state, c.level, files_in_level, p.warmup_lookups);
                let plan = if p.skipping == Skipping::None {
                    ProbePlan::ALL
                } else {
                    shamba::plan(p, &e, &state.part_fprs, |d| {
                        state.resident.is_loaded(d - 1) || c.reader.filter_part_resident(c.spot, d - 1)
                    })
                };
                if self.read_rest_together {
                    let from = state.resident.first_missing().unwrap_or(0);
                    plan.reading_together(shamba::parts_read_together(&e, &state.part_fprs, from))
                } else {
                    plan
                }
            }
            ProbePolicy::Elastic(_) => match &self.elastic {
                Some(el) => {
                    let now = self.lookups();
                    if ElasticState::needs_lock(state, now) {
                        el.lock().on_access(c.meta.number, state, now, c.reader)
                    } else {
                        ProbePlan::first(state.units.enabled())
                    }
                }
                None => ProbePlan::ALL,
            },
        };
        let resident = if self.pooled { Some(&state.resident) } else { None };
        (plan.with_resident(resident), Some(&**state))
    }

    /// Under a filter budget, now and then (a table's first lookups, then one in
    /// [`LOAD_EVERY`]) ask the budget for the table's first part not resident.
    fn maybe_load(&self, residency: &Mutex<Residency>, c: &Candidate<'_>, state: &Arc<FileState>, accesses: u64) {
        let Some(d) = state.resident.first_missing() else { return };
        if accesses > 2 && !accesses.is_multiple_of(LOAD_EVERY) {
            return;
        }
        let worth = residency::density(&self.rough_estimate(state), state, d);
        residency.lock().consider(c.meta.number, state, c.reader, d, worth, |s, d| {
            residency::density(&self.rough_estimate(s), s, d)
        });
    }

    /// A table's alpha and absolute beta (no level needed: the relative beta is left 1),
    /// the beta of its recent lookups once it has some: what the budget values.
    fn rough_estimate(&self, s: &FileState) -> Estimate {
        let now = self.lookups();
        let warmup = match &self.policy {
            ProbePolicy::Shamba(p) => p.warmup_lookups,
            _ => ShambaPolicy::default().warmup_lookups,
        };
        let (accesses, positives) = (s.accesses.load(Relaxed), s.positives.load(Relaxed));
        let mut e =
            Estimate::blend(s.prior.as_ref(), accesses, positives, now.saturating_sub(s.born_at), now, 0, 0, warmup);
        if let Some(rate) = s.recent.rate(accesses, now) {
            e.beta_rate = rate;
        }
        e
    }

    /// Record that a lookup found its key in a table (alpha's numerator).
    pub(crate) fn found(&self, state: Option<&FileState>) {
        if let Some(s) = state {
            s.positives.fetch_add(1, Relaxed);
        }
    }

    /// The blended alpha/beta estimate of a table.
    fn estimate(&self, s: &FileState, level: usize, files_in_level: usize, warmup: u64) -> Estimate {
        let now = self.lookups();
        let level_accesses = self.level_accesses.get(level).map_or(0, |a| a.load(Relaxed));
        Estimate::blend(
            s.prior.as_ref(),
            s.accesses.load(Relaxed),
            s.positives.load(Relaxed),
            now.saturating_sub(s.born_at),
            now,
            level_accesses,
            files_in_level,
            warmup,
        )
    }

    /// Current estimate of a table, for inheritance and persistence (`None` if it was never
    /// looked up since open: its prior, if any, still stands).
    pub(crate) fn estimate_of(&self, number: u64, level: usize, files_in_level: usize) -> Option<Estimate> {
        let s = self.files.read().get(&number).cloned()?;
        let warmup = match &self.policy {
            ProbePolicy::Shamba(p) => p.warmup_lookups,
            _ => ShambaPolicy::default().warmup_lookups,
        };
        Some(self.estimate(&s, level, files_in_level, warmup))
    }

    /// The best estimate of a table: measured (blended) if it was looked up since open, else
    /// its inherited record, else `None`.
    pub(crate) fn current_estimate(&self, meta: &FileMeta, level: usize, files_in_level: usize) -> Option<Estimate> {
        self.estimate_of(meta.number, level, files_in_level).or_else(|| meta.stats.as_ref().map(Estimate::from_record))
    }

    /// What was counted for table `meta` of `level` since open (`None`: no lookup reached
    /// it, or the policy is `Plain`).
    #[cfg(feature = "lab")]
    pub(crate) fn accesses_of(&self, meta: &FileMeta, level: usize) -> Option<TableAccesses> {
        let s = self.files.read().get(&meta.number).cloned()?;
        Some(TableAccesses {
            level,
            number: meta.number,
            smallest_key: crate::key::user_key(&meta.smallest).to_vec(),
            largest_key: crate::key::user_key(&meta.largest).to_vec(),
            accesses: s.accesses.load(Relaxed),
            positives: s.positives.load(Relaxed),
            age: self.lookups().saturating_sub(s.born_at),
            part_fprs: s.part_fprs.clone(),
            part_bytes: s.part_bytes.clone(),
        })
    }

    /// Forget a deleted table (and release its elastic units and resident parts).
    pub(crate) fn forget(&self, number: u64) {
        let Some(state) = self.files.write().remove(&number) else { return };
        state.gone.store(true, Relaxed);
        if let Some(el) = &self.elastic {
            el.lock().forget(number, &state);
        }
        if let Some(r) = &self.residency {
            r.lock().forget(number, &state);
        }
    }

    /// Bytes of filter units currently enabled (Elastic), or `None` for other policies.
    pub(crate) fn enabled_filter_bytes(&self) -> Option<u64> {
        self.elastic.as_ref().map(|e| e.lock().used_bytes())
    }

    /// Filter parts held by the manager, with loads and evictions (zero when tables pin
    /// their filters).
    pub(crate) fn residency_counters(&self) -> ResidencyCounters {
        if let Some(el) = &self.elastic {
            return el.lock().counters;
        }
        self.residency.as_ref().map(|r| r.lock().counters).unwrap_or_default()
    }
}

impl FileState {
    /// A state with no statistics and no filter parts.
    #[cfg(test)]
    pub(crate) fn for_tests() -> FileState {
        FileState {
            born_at: 0,
            accesses: AtomicU64::new(0),
            positives: AtomicU64::new(0),
            part_fprs: Vec::new(),
            part_bytes: Vec::new(),
            prior: None,
            units: elastic::UnitState::default(),
            resident: ResidentParts::empty(0, 0),
            gone: AtomicBool::new(false),
            recent: residency::RecentRate::default(),
        }
    }
}

impl FileState {
    /// Whether the table was deleted.
    pub(super) fn forgotten(&self) -> bool {
        self.gone.load(Relaxed)
    }
}

/// Under a filter budget, a table with a part not resident asks for it on its first two
/// lookups and then on one in this many: often enough to follow a shift in hotness within
/// a few dozen lookups of a table, rarely enough that the budget's lock is not taken per
/// lookup.
const LOAD_EVERY: u64 = 16;
