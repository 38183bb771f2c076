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

mod accesses;
mod elastic;
mod estimate;
pub(crate) mod inherit;
mod shamba;

pub use accesses::TableAccesses;
pub use estimate::Estimate;

use crate::number_map::NumberMap;
use crate::options::{ProbePolicy, ShambaPolicy, Skipping};
use crate::table::{ProbePlan, Spot, TableReader};
use crate::version::{FileMeta, FileStatsRecord, Version};
use elastic::ElasticState;
use parking_lot::{Mutex, RwLock};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
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
}

impl FilterManager {
    /// A manager for a tree of `num_levels` levels.
    pub(crate) fn new(policy: ProbePolicy, num_levels: usize) -> Self {
        let elastic = match &policy {
            ProbePolicy::Elastic(p) => Some(Mutex::new(ElasticState::new(p.clone()))),
            _ => None,
        };
        FilterManager {
            policy,
            lookups: AtomicU64::new(0),
            level_accesses: (0..num_levels).map(|_| AtomicU64::new(0)).collect(),
            files: RwLock::new(NumberMap::default()),
            elastic,
        }
    }

    /// Whether this policy never probes the filter of a table of the deepest level
    /// (`NoLastLevel`): lookups need not prepare (prefetch) those filters.
    pub(crate) fn skips_last_level(&self) -> bool {
        matches!(self.policy, ProbePolicy::NoLastLevel)
    }

    /// Count one lookup that reached the tables (not under `Plain`).
    #[inline]
    pub(crate) fn begin_lookup(&self) {
        if !matches!(self.policy, ProbePolicy::Plain) {
            self.lookups.fetch_add(1, Relaxed);
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
        });
        self.files.write().entry(meta.number).or_insert(state).clone()
    }

    /// Which filter parts to probe for this lookup of `c`. Counts the access.
    /// Under `Plain` nothing is decided and no statistics are kept: the baseline pays for
    /// nothing it does not use. Every other policy keeps them (and persists them).
    #[inline(always)]
    pub(crate) fn plan<'a>(&self, c: &Candidate<'a>) -> (ProbePlan, Option<&'a FileState>) {
        if let ProbePolicy::Plain = self.policy {
            return (ProbePlan::ALL, None);
        }
        self.plan_by_statistics(c)
    }

    /// [`plan`](Self::plan) under a policy that keeps statistics.
    fn plan_by_statistics<'a>(&self, c: &Candidate<'a>) -> (ProbePlan, Option<&'a FileState>) {
        let state = self.state(c);
        state.accesses.fetch_add(1, Relaxed);
        if let Some(a) = self.level_accesses.get(c.level) {
            a.fetch_add(1, Relaxed);
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
            ProbePolicy::Shamba(p) if p.skipping == Skipping::None => ProbePlan::ALL,
            ProbePolicy::Shamba(p) => {
                let files_in_level = c.version.levels.get(c.level).map_or(0, |l| l.file_count());
                let e = self.estimate(state, c.level, files_in_level, p.warmup_lookups);
                shamba::plan(p, &e, &state.part_fprs, |d| c.reader.filter_part_resident(c.spot, d - 1))
            }
            ProbePolicy::Elastic(_) => match &self.elastic {
                Some(el) => {
                    let now = self.lookups();
                    if ElasticState::needs_lock(state, now) {
                        el.lock().on_access(c.meta.number, state, now)
                    } else {
                        ProbePlan { max_parts: state.units.enabled() }
                    }
                }
                None => ProbePlan::ALL,
            },
        };
        (plan, Some(&**state))
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

    /// Forget a deleted table (and release its elastic units).
    pub(crate) fn forget(&self, number: u64) {
        let state = self.files.write().remove(&number);
        if let (Some(el), Some(state)) = (&self.elastic, state) {
            el.lock().forget(number, &state);
        }
    }

    /// Bytes of filter units currently enabled (Elastic), or `None` for other policies.
    pub(crate) fn enabled_filter_bytes(&self) -> Option<u64> {
        self.elastic.as_ref().map(|e| e.lock().used_bytes())
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
        }
    }
}
