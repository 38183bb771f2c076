//! Point lookups: memtables, then the candidate files of each level, with one digest.
//!
//! The lookup in steps, each its own function: lease the super version
//! (`super_version.rs`), search the memtables, hash the key once, prefetch the filters of
//! the first candidates, probe candidates one by one until one knows the key, and record
//! the lookup's trace once. The experiments' variants exist with the `lab` feature only: a
//! profiled lookup is this code with its stage timer on (`options/stage_timer.rs`, nothing
//! at all without the feature), and the unshared-digest baseline is its own function in
//! `lab_lookup.rs`, chosen at the entry.

use super::inner::DbInner;
use super::super_version::SuperVersion;
use super::table_slots::{TableSlot, TableSlots};
use super::tree::Tree;
use crate::error::{Error, Result};
use crate::expiry::{live_value, Clock};
use crate::filter::Digest;
use crate::key::{seek_key, SeqNo, ValueKind};
use crate::manager::Candidate;
use crate::memtable::Lookup;
use crate::options::ReadOptions;
use crate::stats::LookupTrace;
use crate::table::{Spot, TableGet, TableReader};
use crate::version::{FileMeta, FileRef, Version};
use std::sync::Arc;

/// Candidate tables whose filters a lookup prefetches before probing the first: enough for
/// a leveled tree of any practical depth plus a few L0 files.
const PREFETCH_DEPTH: usize = 16;

/// What a lookup answers: the value, or `None` (absent, deleted, or expired).
pub(super) type Answer = Option<Vec<u8>>;

/// What a lookup found before the clock is asked: the newest visible version's kind and
/// stored value when it holds one (an expiring entry's starts with its deadline), `None`
/// when the key is absent or deleted.
pub(crate) type Found = Option<(ValueKind, Vec<u8>)>;

/// A version found at `seq`, read under a range tombstone whose floor is `floor`.
#[inline(always)]
pub(super) fn visible(kind: ValueKind, seq: SeqNo, floor: SeqNo, value: Vec<u8>) -> Found {
    (kind.is_value() && seq >= floor).then_some((kind, value))
}

/// The answer of what a lookup found: an expiring entry's value only while `clock` has not
/// reached its deadline. The clock is read for expiring entries alone: a plain value
/// costs the comparison of its kind.
#[inline(always)]
pub(crate) fn settle(found: Found, clock: &dyn Clock) -> Answer {
    match found? {
        (ValueKind::PutExpiring, stored) => live_value(stored, clock),
        (_, value) => Some(value),
    }
}

/// One lookup's inputs, built once at its entry and borrowed by each of its steps: the
/// tree and the super version it reads, the key in its two forms, the newest range
/// tombstone over it and the read's options. References on the lookup's stack, passed as
/// one: nothing is allocated or copied per table.
pub(super) struct LookupCtx<'l> {
    pub(super) tree: &'l Tree,
    pub(super) sv: &'l SuperVersion,
    /// The user key.
    pub(super) key: &'l [u8],
    /// Its seek key at the lookup's sequence number.
    pub(super) seek: &'l [u8],
    /// A version older than this (the newest range tombstone over the key) is deleted.
    pub(super) floor: SeqNo,
    pub(super) ro: &'l ReadOptions,
}

/// A candidate table with its reader open and the key located in it, all borrowed from the
/// lookup's version and its table slots.
pub(super) struct OpenCandidate<'v> {
    pub(super) level: usize,
    pub(super) file: &'v Arc<FileMeta>,
    pub(super) slot: &'v TableSlot,
    pub(super) reader: &'v TableReader,
    pub(super) spot: Spot<'v>,
}

impl<'v> OpenCandidate<'v> {
    /// The candidate as the filter manager plans it.
    #[inline(always)]
    pub(super) fn planned<'c>(&'c self, version: &'c Version, last_level: Option<usize>) -> Candidate<'c> {
        Candidate {
            level: self.level,
            last_level: Some(self.level) == last_level,
            version,
            meta: self.file,
            state: &self.slot.filter_state,
            reader: self.reader,
            spot: &self.spot,
        }
    }
}

impl DbInner {
    /// Check a key's length against the configured limit.
    pub(crate) fn check_key(&self, key: &[u8]) -> Result<()> {
        if key.len() > self.opts.max_key_size {
            return Err(Error::InvalidArgument(format!(
                "key of {} bytes exceeds max_key_size ({})",
                key.len(),
                self.opts.max_key_size
            )));
        }
        Ok(())
    }

    /// The newest version of `key` visible at `seq` (a snapshot's), or, with `None`, the
    /// newest: then the sequence number is read after the super version is taken, as
    /// RocksDB does, so the lookup's version holds every version of the key it may see (a
    /// compaction installed in between may have dropped versions that a sequence number
    /// read earlier would look for, and found no version at all).
    ///
    /// The key's digest is computed once and handed to every table: no table hashes the
    /// key again. For each candidate table the filter manager chooses which filter parts to
    /// probe.
    pub(crate) fn get_at(&self, tree: &Tree, key: &[u8], seq: Option<SeqNo>, ro: &ReadOptions) -> Result<Answer> {
        Ok(settle(self.find_at(tree, key, seq, ro)?, &*self.opts.clock))
    }

    /// [`get_at`](Self::get_at) before the clock is asked: what the lookup found, an
    /// expiring entry with its deadline.
    pub(crate) fn find_at(&self, tree: &Tree, key: &[u8], seq: Option<SeqNo>, ro: &ReadOptions) -> Result<Found> {
        self.check_open()?;
        self.check_key(key)?;
        if tree.is_dropped() {
            return Err(tree.dropped_error());
        }
        let _tier = crate::read_tier::Scope::enter(ro.read_tier);
        #[cfg(feature = "lab")]
        if !ro.lab.share_hash {
            return self.lookup_unshared(tree, key, seq, ro);
        }
        self.lookup(tree, key, seq, ro)
    }

    /// The point lookup: the memtables, then the tables with one digest.
    #[inline]
    fn lookup(&self, tree: &Tree, key: &[u8], seq: Option<SeqNo>, ro: &ReadOptions) -> Result<Found> {
        let sv = tree.sv.lease();
        let mut trace = sv.trace(ro.stage_timer());
        let seq = seq.unwrap_or_else(|| self.visible_seq());
        // Built once, for every memtable and table.
        let seek = seek_key(key, seq);
        let floor = sv.range_del_floor(key, seq);
        let answer = match search_memtables(&sv, &seek, floor, &mut trace) {
            Some(answer) => Ok(answer),
            None => {
                let start = trace.timer().start();
                let digest = self.opts.digest(key);
                trace.hashing_took(trace.timer().nanos_since(start));
                let l = LookupCtx { tree, sv: &sv, key, seek: &seek, floor, ro };
                self.search_tables(&l, &digest, &mut trace)
            }
        };
        trace.finish();
        answer
    }

    /// The candidate tables, level by level, with the lookup's digest, each probed until one
    /// holds a version of the key (deleted if older than the lookup's floor): from their
    /// slots when the filter manager plans nothing and the first candidates keep their
    /// first filter parts there, else through their readers.
    fn search_tables(&self, l: &LookupCtx<'_>, digest: &Digest, trace: &mut LookupTrace<'_>) -> Result<Found> {
        l.tree.manager.begin_lookup();
        let last_level = l.sv.version.deepest_nonempty_level();
        let mut candidates = l.sv.version.candidates(l.key);
        if !l.tree.manager.hands_off() || trace.timer().is_on() {
            return self.search_through_readers(l, last_level, candidates, digest, trace);
        }
        // The filter manager plans nothing and no stage is timed: if the first candidates'
        // slots each hold the table's first filter part, the lookup needs nothing else of
        // them until one says maybe.
        let mut named: [Option<(FileRef<'_>, &TableSlot)>; PREFETCH_DEPTH] = Default::default();
        let mut all_in_slots = true;
        for (at, file) in named.iter_mut().zip(candidates.by_ref()) {
            let slot = self.slot_of(&l.sv.tables, file)?;
            all_in_slots &= slot.first_filter().is_some();
            *at = Some((file, slot));
        }
        let named = named.iter().map_while(|n| *n);
        if all_in_slots {
            return self.search_from_slots(l, last_level, named, candidates, digest, trace);
        }
        self.search_through_readers(l, last_level, named.map(|(file, _)| file).chain(candidates), digest, trace)
    }

    /// The candidates through their readers: the filters of the first ones prefetched
    /// (when the super version says they are large enough to pay), then each probed as the
    /// filter manager plans.
    fn search_through_readers<'v>(
        &self,
        l: &LookupCtx<'v>,
        last_level: Option<usize>,
        mut candidates: impl Iterator<Item = FileRef<'v>>,
        digest: &Digest,
        trace: &mut LookupTrace<'_>,
    ) -> Result<Found> {
        let mut ahead: [Option<OpenCandidate<'_>>; PREFETCH_DEPTH] = Default::default();
        if l.sv.prefetch {
            self.prefetch(l, &mut candidates, &mut ahead, last_level, digest)?;
        }
        // The prefetched candidates are probed where they lie (moving one out would copy
        // its spot), then the rest are opened one by one.
        for c in ahead.iter().map_while(Option::as_ref) {
            if let Some(answer) = self.probe(l, last_level, c, digest, trace)? {
                return Ok(answer);
            }
        }
        for file in candidates {
            let c = self.open_candidate(&l.sv.tables, file, l.seek)?;
            if let Some(answer) = self.probe(l, last_level, &c, digest, trace)? {
                return Ok(answer);
            }
        }
        Ok(None)
    }

    /// The candidates when the first of them (`named`, with their slots) each keep their
    /// table's first filter part in their slot (`TableSlot::first_filter`): each is probed
    /// there, and the table's reader is reached only when that part says maybe (or, past
    /// the first ones, the slot holds none). A table that does not hold the key then costs
    /// its slot and the filter's probe line; with the prefetch the probe lines of the first
    /// candidates are asked for before the first is probed, so a deep tree pays about one
    /// memory latency for its filters. Through the reader a table cost a chain of dependent
    /// misses before its probe line (the reader, its partitions, its filter parts).
    fn search_from_slots<'v>(
        &self,
        l: &LookupCtx<'v>,
        last_level: Option<usize>,
        named: impl Iterator<Item = (FileRef<'v>, &'v TableSlot)> + Clone,
        rest: impl Iterator<Item = FileRef<'v>>,
        digest: &Digest,
        trace: &mut LookupTrace<'_>,
    ) -> Result<Found> {
        if l.sv.prefetch {
            for part in named.clone().filter_map(|(_, slot)| slot.first_filter()) {
                part.part().prefetch(digest);
            }
        }
        let rest = rest.map(|file| self.slot_of(&l.sv.tables, file).map(|slot| (file, slot)));
        for candidate in named.map(Ok).chain(rest) {
            let (file, slot) = candidate?;
            if slot.first_filter().is_some_and(|part| !part.part().may_contain(digest)) {
                trace.filtered_out(file.level);
                continue;
            }
            let reader = &**slot.reader(&self.tables)?;
            let c = OpenCandidate { level: file.level, file: file.meta, slot, reader, spot: reader.locate(l.seek) };
            if let Some(answer) = self.probe(l, last_level, &c, digest, trace)? {
                return Ok(answer);
            }
        }
        Ok(None)
    }

    /// The slot of `file`, a candidate of the lookup's version, in `tables`, its slots.
    #[inline]
    fn slot_of<'v>(&self, tables: &'v TableSlots, file: FileRef<'v>) -> Result<&'v TableSlot> {
        tables
            .get(file)
            .ok_or_else(|| Error::internal(format!("table {} has no slot in the lookup's version", file.number)))
    }

    /// Open up to `ahead.len()` candidates into `ahead` and prefetch their filters, so the
    /// cache misses of a deep tree overlap instead of queueing one per level. Two passes:
    /// the parts' headers first (where the probe line is depends on them), then the probe
    /// lines; each pass's misses overlap with each other.
    fn prefetch<'v>(
        &self,
        l: &LookupCtx<'v>,
        candidates: &mut impl Iterator<Item = FileRef<'v>>,
        ahead: &mut [Option<OpenCandidate<'v>>],
        last_level: Option<usize>,
        digest: &Digest,
    ) -> Result<()> {
        // A policy that never probes the deepest level's filters need not prepare them.
        let skip_last = l.tree.manager.skips_last_level();
        for (slot, candidate) in ahead.iter_mut().zip(candidates) {
            let mut c = self.open_candidate(&l.sv.tables, candidate, l.seek)?;
            if !(skip_last && Some(c.level) == last_level) {
                c.reader.prefetch_filter_header(&mut c.spot);
            }
            *slot = Some(c);
        }
        for c in ahead.iter_mut().map_while(Option::as_mut) {
            c.reader.prefetch_filter_at(&mut c.spot, digest);
        }
        Ok(())
    }

    /// A candidate with its slot in the version, its reader (kept in the slot after the
    /// first lookup) and the spot where the key falls in it.
    #[inline]
    pub(super) fn open_candidate<'v>(
        &self,
        tables: &'v TableSlots,
        file: FileRef<'v>,
        seek: &[u8],
    ) -> Result<OpenCandidate<'v>> {
        let slot = self.slot_of(tables, file)?;
        let reader = &**slot.reader(&self.tables)?;
        Ok(OpenCandidate { level: file.level, file: file.meta, slot, reader, spot: reader.locate(seek) })
    }

    /// One table's probe: the filter parts the manager plans, then (on a maybe) index and
    /// data. `Some(answer)` when the table holds a version of the key (deleted if older
    /// than the lookup's floor). `last_level` is the deepest level of the lookup's version
    /// that holds tables.
    #[inline(always)]
    pub(super) fn probe(
        &self,
        l: &LookupCtx<'_>,
        last_level: Option<usize>,
        c: &OpenCandidate<'_>,
        digest: &Digest,
        trace: &mut LookupTrace<'_>,
    ) -> Result<Option<Found>> {
        let (plan, state) = l.tree.manager.plan(&c.planned(&l.sv.version, last_level));
        let (got, outcome) = c.reader.get_at_spot(&c.spot, l.seek, digest, l.ro, plan)?;
        trace.table_visit(c.level, &outcome, &got, c.reader.filter_part_count() > 0);
        let TableGet::Found { kind, value, seq } = got else { return Ok(None) };
        l.tree.manager.found(state);
        Ok(Some(visible(kind, seq, l.floor, value)))
    }
}

/// The memtables, newest first: `Some(answer)` when one holds a version of the key
/// (deleted if older than `floor`, the newest range tombstone over the key).
#[inline]
pub(super) fn search_memtables(
    sv: &SuperVersion,
    seek: &[u8],
    floor: SeqNo,
    trace: &mut LookupTrace<'_>,
) -> Option<Found> {
    let start = trace.timer().start();
    for mem in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
        // An empty memtable (just after a switch or a reopen) costs nothing to skip.
        if mem.is_empty() {
            continue;
        }
        match mem.get_at_seek_key(seek) {
            Lookup::Value(seq, v) => {
                trace.memtable_hit();
                return Some(visible(ValueKind::Put, seq, floor, v));
            }
            Lookup::Expiring(seq, v) => {
                trace.memtable_hit();
                return Some(visible(ValueKind::PutExpiring, seq, floor, v));
            }
            Lookup::Deleted(_) => {
                trace.memtable_hit();
                return Some(None);
            }
            Lookup::NotFound => {}
        }
    }
    trace.memtables_took(trace.timer().nanos_since(start));
    None
}
