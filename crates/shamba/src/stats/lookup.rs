//! Counters of point lookups, written where no other core writes.
//!
//! A lookup keeps what it did in a [`LookupTrace`] on its stack (LevelDB's `GetStats`) and
//! records it once, at its end, into [`LookupCounters`] of its own: the counters of its
//! thread's reader slot (`db/super_version.rs`), which other cores' lookups do not write,
//! so two readers never pass a counter's cache line back and forth. `Db::stats` sums the
//! slots. A thread that holds its slot for the lookup is the counters' only writer and
//! records with plain loads and stores; one that shares counters (its slot was busy)
//! records with atomic adds.

use super::{LevelCounters, LevelLookupStats, LookupCosts};
use crate::options::StageTimer;
use crate::table::{ProbeOutcome, TableGet};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Lookup counters of one reader slot (or of the lookups that found theirs busy).
#[derive(Debug)]
pub(crate) struct LookupCounters {
    /// Point lookups served.
    gets: AtomicU64,
    /// Point lookups answered by a memtable.
    memtable_hits: AtomicU64,
    /// Profiled lookups, and their nanoseconds hashing, in memtables, filters, index and
    /// data.
    costs: [AtomicU64; 6],
    /// Per level (each on cache lines of its own: see [`LevelCounters`]).
    levels: Box<[LevelCounters]>,
}

/// Whether a recording thread is the only writer of the counters it records into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writer {
    /// It holds the counters' slot: a plain load and store, no read-modify-write.
    Owner,
    /// Other threads may write them too: an atomic add.
    Shared,
}

impl Writer {
    #[inline]
    fn add(self, counter: &AtomicU64, n: u64) {
        if n == 0 {
            return;
        }
        match self {
            Writer::Owner => counter.store(counter.load(Relaxed).wrapping_add(n), Relaxed),
            Writer::Shared => {
                counter.fetch_add(n, Relaxed);
            }
        }
    }
}

/// Lookups of a database, summed over its reader slots.
#[derive(Debug, Clone, Default)]
pub(crate) struct LookupTotals {
    /// Point lookups served.
    pub gets: u64,
    /// Point lookups answered by a memtable.
    pub memtable_hits: u64,
    /// Time of profiled lookups by stage.
    pub costs: LookupCosts,
    /// Per level.
    pub levels: Vec<LevelLookupStats>,
}

impl LookupTotals {
    /// Table hits per lookup that reached the tables (0 before any did).
    pub(crate) fn table_hit_ratio(&self) -> f64 {
        let hits: u64 = self.levels.iter().map(|l| l.hits).sum();
        match self.gets.saturating_sub(self.memtable_hits) {
            0 => 0.0,
            reached => (hits as f64 / reached as f64).min(1.0),
        }
    }
}

impl LookupCounters {
    /// Zeroed counters for a tree of `num_levels` levels.
    pub(crate) fn new(num_levels: usize) -> Self {
        LookupCounters {
            gets: AtomicU64::new(0),
            memtable_hits: AtomicU64::new(0),
            costs: Default::default(),
            levels: (0..num_levels).map(|_| LevelCounters::default()).collect(),
        }
    }

    /// Add these counters to `totals` (whose `levels` are as many as ours).
    pub(crate) fn add_to(&self, totals: &mut LookupTotals) {
        let g = |a: &AtomicU64| a.load(Relaxed);
        totals.gets += g(&self.gets);
        totals.memtable_hits += g(&self.memtable_hits);
        let c = &mut totals.costs;
        for (sum, n) in [
            &mut c.lookups,
            &mut c.hash_nanos,
            &mut c.memtable_nanos,
            &mut c.filter_nanos,
            &mut c.index_nanos,
            &mut c.data_nanos,
        ]
        .into_iter()
        .zip(&self.costs)
        {
            *sum += g(n);
        }
        totals.levels.resize_with(self.levels.len(), LevelLookupStats::default);
        for (sum, level) in totals.levels.iter_mut().zip(self.levels.iter()) {
            let l = level.snapshot();
            sum.table_lookups += l.table_lookups;
            sum.filter_parts_probed += l.filter_parts_probed;
            sum.filter_negatives += l.filter_negatives;
            sum.false_positives += l.false_positives;
            sum.filters_skipped += l.filters_skipped;
            sum.hits += l.hits;
        }
    }

    /// Add one level's tally.
    #[inline]
    fn record_level(&self, t: &LevelTally, w: Writer) {
        let Some(l) = self.levels.get(t.level as usize) else { return };
        w.add(&l.filter_parts_probed, u64::from(t.parts_probed));
        w.add(&l.filters_skipped, u64::from(t.filters_skipped));
        w.add(&l.filter_negatives, u64::from(t.filter_negatives));
        w.add(&l.false_positives, u64::from(t.false_positives));
        w.add(&l.hits, u64::from(t.hits));
    }
}

/// Distinct levels a trace tallies before it records the first ones early (a lookup visits
/// levels in order, so only a tree deeper than this ever does).
const TRACED_LEVELS: usize = 8;

/// What a lookup's table visits of one level came to.
#[derive(Debug, Clone, Copy, Default)]
struct LevelTally {
    level: u32,
    parts_probed: u32,
    filters_skipped: u32,
    filter_negatives: u32,
    false_positives: u32,
    hits: u32,
}

/// What one lookup did, kept on its stack and recorded once, at its end
/// ([`finish`](Self::finish)), into its reader slot's counters, with its stage timer: off
/// (always, without the `lab` feature), the stage times are zeros it does not record.
pub(crate) struct LookupTrace<'s> {
    sink: &'s LookupCounters,
    writer: Writer,
    /// Lookups traced: one for a single lookup, a batch's keys for a `multi_get`.
    lookups: u64,
    memtable_hits: u64,
    /// One tally per level visited, in the order first visited (a single lookup's levels
    /// ascend; a batch's keys interleave theirs).
    levels: [LevelTally; TRACED_LEVELS],
    len: usize,
    costs: LookupCosts,
    timer: StageTimer,
}

impl<'s> LookupTrace<'s> {
    /// A trace of `lookups` lookups, to be recorded into `sink`, written as `writer` says:
    /// one for a single lookup; a batch's keys at once (each still a lookup of its own in
    /// the counters: the sums are those of as many single traces, recorded once). `timer`
    /// says whether the lookups time their stages.
    #[inline]
    pub(crate) fn of_lookups(sink: &'s LookupCounters, writer: Writer, lookups: u64, timer: StageTimer) -> Self {
        LookupTrace {
            sink,
            writer,
            lookups,
            memtable_hits: 0,
            levels: [LevelTally::default(); TRACED_LEVELS],
            len: 0,
            costs: LookupCosts::default(),
            timer,
        }
    }

    /// The lookup's stage timer.
    #[inline(always)]
    pub(crate) fn timer(&self) -> StageTimer {
        self.timer
    }

    /// A memtable answered the lookup.
    #[inline]
    pub(crate) fn memtable_hit(&mut self) {
        self.memtable_hits += 1;
    }

    /// The memtables took `nanos` (and did not answer).
    #[inline]
    pub(crate) fn memtables_took(&mut self, nanos: u64) {
        self.costs.memtable_nanos += nanos;
    }

    /// Hashing the key took `nanos`.
    #[inline]
    pub(crate) fn hashing_took(&mut self, nanos: u64) {
        self.costs.hash_nanos += nanos;
    }

    /// A table at `level` whose first filter part, probed from the table's slot without its
    /// reader, said the key is not there: what `table_visit` records for that outcome.
    #[inline]
    pub(crate) fn filtered_out(&mut self, level: usize) {
        let t = self.tally(level as u32);
        t.parts_probed += 1;
        t.filter_negatives += 1;
    }

    /// One table of `level` was visited: what its probe did and what it found.
    /// `has_filter`: whether the table has filter parts (a visit probing none skipped them).
    #[inline]
    pub(crate) fn table_visit(&mut self, level: usize, outcome: &ProbeOutcome, got: &TableGet, has_filter: bool) {
        let t = self.tally(level as u32);
        t.parts_probed += outcome.parts_probed;
        t.filters_skipped += u32::from(outcome.parts_probed == 0 && has_filter);
        match got {
            TableGet::FilteredOut => t.filter_negatives += 1,
            TableGet::NotFound => t.false_positives += 1,
            TableGet::Found { .. } => t.hits += 1,
        }
        if self.timer.is_on() {
            self.costs.filter_nanos += outcome.filter_nanos;
            self.costs.index_nanos += outcome.index_nanos;
            self.costs.data_nanos += outcome.data_nanos;
        }
    }

    /// The tally of `level`: the last one, or a new one.
    #[inline]
    fn tally(&mut self, level: u32) -> &mut LevelTally {
        // The last tally first: a single lookup's levels ascend.
        let at = match self.levels[..self.len].iter().rposition(|t| t.level == level) {
            Some(at) => at,
            None => {
                if self.len == TRACED_LEVELS {
                    self.record_levels();
                }
                self.levels[self.len] = LevelTally { level, ..LevelTally::default() };
                self.len += 1;
                self.len - 1
            }
        };
        &mut self.levels[at]
    }

    /// Record the level tallies so far, and start over.
    fn record_levels(&mut self) {
        for t in &self.levels[..self.len] {
            self.sink.record_level(t, self.writer);
        }
        self.len = 0;
    }

    /// Record the lookups.
    #[inline]
    pub(crate) fn finish(mut self) {
        let (sink, w) = (self.sink, self.writer);
        w.add(&sink.gets, self.lookups);
        w.add(&sink.memtable_hits, self.memtable_hits);
        self.record_levels();
        if self.timer.is_on() {
            let c = &self.costs;
            for (counter, n) in sink.costs.iter().zip([
                self.lookups,
                c.hash_nanos,
                c.memtable_nanos,
                c.filter_nanos,
                c.index_nanos,
                c.data_nanos,
            ]) {
                w.add(counter, n);
            }
        }
    }
}
