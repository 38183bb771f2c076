//! Batched point lookups: `multi_get`, many keys at one moment in one pass over the tree.
//!
//! A single lookup knows every probe position of every filter it may probe as soon as it
//! has the key's digest and its candidate tables, and prefetches them all before probing
//! the first (`read.rs`). A batch knows them for all its keys at once: every key's digest,
//! then every key's candidates, then the filter lines of all of them prefetched together,
//! so the DRAM misses of the whole batch overlap rather than those of one key. Then rounds:
//! each key's filters are probed table by table, as a single lookup's are, up to the first
//! that says maybe; the index searches of all those keys then run interleaved, a step of
//! each in turn, each step prefetching what its next one reads, so the misses of 32
//! binary searches overlap where one lookup waits for each of its own in turn; the keys
//! waiting on the same block of the same table share one read of it. A key the index or
//! the block rules out (a false positive) goes on to its next table in the next round.
//!
//! Range tombstones apply as in a single lookup: each key's floor (the newest tombstone over
//! it) is computed with its digest, and a version found below it is deleted, in a memtable
//! or in a shared block alike.
//!
//! Every key is a lookup of its own for the statistics and the filter manager: it counts
//! one get, its own table visits, and the manager plans each of its tables as it would for
//! a single lookup, so filters change the batch's cost, never its answers.

use super::inner::DbInner;
use super::read::{search_memtables, settle, visible, OpenCandidate};
use super::tree::Tree;
use crate::error::Result;
use crate::filter::Digest;
use crate::key::{compare_user_keys, push_seek_key, user_key_prefix, SeqNo};
use crate::manager::FileState;
use crate::options::ReadOptions;
use crate::stats::LookupTrace;
use crate::table::{read_data_blocks, Block, BlockHandle, BlockProbe, IndexSearch, ProbeOutcome, TableGet};
use crate::version::Version;
use std::cell::Cell;
use std::ops::Range;

/// A key's answer: its value, `None` when absent or deleted, or what kept it from one.
pub(crate) type KeyAnswer = Result<Option<Vec<u8>>>;

/// One key of the batch on its way down the tree.
struct KeyLookup {
    /// Its seek key in the batch's `seeks`.
    seek: Range<usize>,
    /// The newest range tombstone over the key (a version older than it is deleted).
    floor: SeqNo,
    digest: Digest,
    /// Its candidate tables in the batch's list, in the order a lookup visits them.
    candidates: Range<usize>,
    /// The next of them to probe.
    next: usize,
    answer: Option<KeyAnswer>,
}

/// A key whose filter said maybe at a candidate, searching that table's index.
struct Searching<'v> {
    key: usize,
    candidate: usize,
    search: IndexSearch,
    outcome: ProbeOutcome,
    state: Option<&'v FileState>,
}

/// A key waiting for a data block: the key, the candidate that named the block, the
/// block, the filter's outcome there and the manager's state of the table.
struct Waiting<'v> {
    key: usize,
    candidate: usize,
    handle: BlockHandle,
    outcome: ProbeOutcome,
    state: Option<&'v FileState>,
}

/// What every round of a batch reads and none changes, built once after the candidates
/// are open and borrowed by each step: the tree, the version and its deepest level, every
/// key's candidates and seek keys. References on the batch's stack, passed as one.
struct BatchCtx<'b, 'v> {
    tree: &'b Tree,
    version: &'v Version,
    last_level: Option<usize>,
    candidates: &'v [OpenCandidate<'v>],
    seeks: &'b [u8],
}

impl BatchCtx<'_, '_> {
    /// Key `k`'s seek key.
    #[inline]
    fn seek_of(&self, k: &KeyLookup) -> &[u8] {
        self.seeks.get(k.seek.clone()).unwrap_or_default()
    }
}

/// The batch's working vectors, kept per thread from one call to the next. Made fresh,
/// a batch of 32 keys allocates ~30 KiB of them (every key's candidates), writes it while
/// it is cold in the CPU's caches, and makes glibc consolidate its free lists, as it does
/// for every large request; kept, they are warm and cost nothing to get.
#[derive(Default)]
struct Scratch {
    seeks: Vec<u8>,
    seek_ranges: Vec<Range<usize>>,
    lookups: Vec<KeyLookup>,
    candidates: Vec<OpenCandidate<'static>>,
    searching: Vec<Searching<'static>>,
    waiting: Vec<Waiting<'static>>,
}

/// Most bytes of vectors a thread keeps between batches: a batch larger than that (tens
/// of thousands of keys, or keys with very many candidate tables) frees its own, so one
/// huge call does not leave its memory behind on every thread that made one.
const SCRATCH_KEPT_BYTES: usize = 256 << 10;

impl Scratch {
    /// Bytes its vectors hold.
    fn bytes(&self) -> usize {
        fn of<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        of(&self.seeks)
            + of(&self.seek_ranges)
            + of(&self.lookups)
            + of(&self.candidates)
            + of(&self.searching)
            + of(&self.waiting)
    }
}

thread_local! {
    /// This thread's scratch, taken for the length of a batch (a batch never runs inside
    /// another on one thread; if one did, it would make its own).
    static SCRATCH: Cell<Option<Box<Scratch>>> = const { Cell::new(None) };
}

/// An empty vector of `U` on `v`'s allocation, for types that differ only in lifetimes:
/// the standard library collects a mapped vector iterator in place when the layouts match
/// (and allocates a new vector otherwise, which is only slower).
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

impl DbInner {
    /// The values of `keys` at `seq` (a snapshot's), or the newest with `None`, in the
    /// order of the keys, each with its own result: a key whose table read fails does not
    /// hide the others' values.
    pub(crate) fn multi_get_at<K: AsRef<[u8]>>(
        &self,
        tree: &Tree,
        keys: &[K],
        seq: Option<SeqNo>,
        ro: &ReadOptions,
    ) -> Vec<KeyAnswer> {
        if let Err(e) = self.check_open() {
            return keys.iter().map(|_| Err(e.duplicate())).collect();
        }
        if tree.is_dropped() {
            return keys.iter().map(|_| Err(tree.dropped_error())).collect();
        }
        let _tier = crate::read_tier::Scope::enter(ro.read_tier);
        // The unshared-digest baseline is a single lookup's experiment: a batch always
        // shares its keys' digests.
        self.multi_lookup(tree, keys, seq, ro)
    }

    fn multi_lookup<K: AsRef<[u8]>>(
        &self,
        tree: &Tree,
        keys: &[K],
        seq: Option<SeqNo>,
        ro: &ReadOptions,
    ) -> Vec<KeyAnswer> {
        let sv = tree.sv.lease();
        // Read after the lease, as a single lookup does (see `get_at`).
        let seq = seq.unwrap_or_else(|| self.visible_seq());
        let clock = &*self.opts.clock;
        let version = &sv.version;
        let last_level = version.deepest_nonempty_level();

        // Every key is a lookup of its own in the statistics; the batch records them as one.
        let timer = ro.stage_timer();
        let mut trace = sv.batch_trace(keys.len() as u64, timer);

        let mut scratch = SCRATCH.take().unwrap_or_default();
        // Every key's seek key, in one buffer.
        let mut seeks = std::mem::take(&mut scratch.seeks);
        seeks.clear();
        let mut seek_ranges = std::mem::take(&mut scratch.seek_ranges);
        seek_ranges.clear();
        for key in keys {
            let at = seeks.len();
            push_seek_key(&mut seeks, key.as_ref(), seq);
            seek_ranges.push(at..seeks.len());
        }
        let seek_of = |r: &Range<usize>| seeks.get(r.clone()).unwrap_or_default();

        // Memtables first; then one digest per key that goes on to the tables.
        let mut candidates: Vec<OpenCandidate<'_>> = recycle(std::mem::take(&mut scratch.candidates));
        let mut lookups = std::mem::take(&mut scratch.lookups);
        lookups.clear();
        let mut to_tables = 0;
        for (key, seek) in keys.iter().zip(seek_ranges.drain(..)) {
            let key = key.as_ref();
            let floor = sv.range_del_floor(key, seq);
            let answer = match self.check_key(key) {
                Err(e) => Some(Err(e)),
                Ok(()) => search_memtables(&sv, seek_of(&seek), floor, &mut trace).map(|f| Ok(settle(f, clock))),
            };
            let mut digest = Digest::default();
            if answer.is_none() {
                let start = timer.start();
                digest = self.opts.digest(key);
                trace.hashing_took(timer.nanos_since(start));
                to_tables += 1;
            }
            lookups.push(KeyLookup { floor, seek, digest, candidates: 0..0, next: 0, answer });
        }
        tree.manager.begin_lookups(to_tables);

        // Their candidate tables, found for all of them in one walk of each run in key
        // order, and opened. Sorted by each key's first eight bytes, whole keys only to
        // break ties.
        let user_keys: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
        let mut by_prefix: Vec<(u64, usize)> = (0..keys.len())
            .filter(|&i| lookups[i].answer.is_none())
            .map(|i| (user_key_prefix(user_keys[i]), i))
            .collect();
        by_prefix.sort_unstable_by(|&(pa, a), &(pb, b)| {
            pa.cmp(&pb).then_with(|| compare_user_keys(user_keys[a], user_keys[b]))
        });
        let sorted: Vec<usize> = by_prefix.into_iter().map(|(_, i)| i).collect();
        let found = version.candidates_of_sorted(&user_keys, &sorted);
        for (i, k) in lookups.iter_mut().enumerate().filter(|(_, k)| k.answer.is_none()) {
            let first = candidates.len();
            for file in found.of(i) {
                match self.open_candidate(&sv.tables, file, seek_of(&k.seek)) {
                    Ok(c) => candidates.push(c),
                    Err(e) => {
                        k.answer = Some(Err(e));
                        break;
                    }
                }
            }
            k.candidates = first..candidates.len();
            k.next = first;
        }

        // Every key's filter lines at once: part headers first, then probe lines.
        if sv.prefetch {
            let skip_last = tree.manager.skips_last_level();
            for c in candidates.iter_mut() {
                if !(skip_last && Some(c.level) == last_level) {
                    c.reader.prefetch_filter_header(&mut c.spot);
                }
            }
            for k in lookups.iter().filter(|k| k.answer.is_none()) {
                for c in &mut candidates[k.candidates.clone()] {
                    c.reader.prefetch_filter_at(&mut c.spot, &k.digest);
                }
            }
        }

        // Rounds: each key probes filters on to the first table that says maybe; then the
        // index searches of all those keys run interleaved, step by step; then each data
        // block they name is read once for every key waiting on it.
        let mut searching: Vec<Searching<'_>> = recycle(std::mem::take(&mut scratch.searching));
        let mut waiting: Vec<Waiting<'_>> = recycle(std::mem::take(&mut scratch.waiting));
        let b = BatchCtx { tree, version, last_level, candidates: &candidates, seeks: &seeks };
        loop {
            searching.clear();
            for (i, k) in lookups.iter_mut().enumerate() {
                if k.answer.is_none() {
                    if let Some(s) = self.filter_on(&b, i, k, &mut trace) {
                        searching.push(s);
                    }
                }
            }
            if searching.is_empty() {
                break;
            }
            self.search_indexes(&b, &mut searching, &mut waiting, &mut lookups, &mut trace);
            waiting.sort_by_key(|w| (candidates[w.candidate].file.number, w.handle.offset));
            let groups: Vec<&[Waiting<'_>]> = waiting
                .chunk_by(|a, b| {
                    candidates[a.candidate].file.number == candidates[b.candidate].file.number
                        && a.handle.offset == b.handle.offset
                })
                .collect();
            // The round's blocks, read together: in flight at once where the storage allows.
            let start = timer.start();
            let wanted: Vec<_> =
                groups.iter().filter_map(|g| g.first()).map(|w| (candidates[w.candidate].reader, w.handle)).collect();
            let blocks = read_data_blocks(&wanted, ro);
            let read_nanos = timer.nanos_since(start) / waiting.len().max(1) as u64;
            // Every block's restart array, then every restart key, asked for before the
            // first seek: a block found in the cache is cold in the CPU's (one just read
            // is not, and these cost it a few hints).
            for block in blocks.iter().flatten() {
                block.prefetch_restart_array();
            }
            for block in blocks.iter().flatten() {
                block.prefetch_restart_heads();
            }
            for (group, block) in groups.into_iter().zip(blocks) {
                self.settle_shared_block(&b, group, block, read_nanos, &mut lookups, &mut trace);
            }
        }

        trace.finish();
        let answers = lookups.drain(..).map(|k| k.answer.unwrap_or(Ok(None))).collect();
        // The searches borrow the candidates: let them go first.
        let (searching, waiting) = (recycle(searching), recycle(waiting));
        *scratch = Scratch { seeks, seek_ranges, lookups, candidates: recycle(candidates), searching, waiting };
        if scratch.bytes() <= SCRATCH_KEPT_BYTES {
            SCRATCH.set(Some(scratch));
        }
        answers
    }

    /// Probe key `i`'s next tables' filters until one says maybe (returned, its index
    /// search started), or none is left (the key is absent), or a probe fails.
    fn filter_on<'v>(
        &self,
        b: &BatchCtx<'_, 'v>,
        i: usize,
        k: &mut KeyLookup,
        trace: &mut LookupTrace<'_>,
    ) -> Option<Searching<'v>> {
        while k.next < k.candidates.end {
            let at = k.next;
            k.next += 1;
            let c = &b.candidates[at];
            let (plan, state) = b.tree.manager.plan(&c.planned(b.version, b.last_level));
            match c.reader.probe_filters_at(&c.spot, &k.digest, plan, trace.timer()) {
                Err(e) => {
                    k.answer = Some(Err(e));
                    return None;
                }
                Ok((Some(done), outcome)) => {
                    let got = if done == BlockProbe::FilteredOut { TableGet::FilteredOut } else { TableGet::NotFound };
                    trace.table_visit(c.level, &outcome, &got, c.reader.filter_part_count() > 0);
                }
                Ok((None, outcome)) => {
                    let search = c.reader.start_index_search(&c.spot, b.seek_of(k));
                    return Some(Searching { key: i, candidate: at, search, outcome, state });
                }
            }
        }
        k.answer = Some(Ok(None));
        None
    }

    /// The index searches of every key in `searching`, interleaved: one step of each in
    /// turn, so that the cache miss each step starts is loaded while the other keys step;
    /// then the entries they land on, asked for together. A key whose index names a data
    /// block goes to `waiting`; one whose index rules the table out probes on next round.
    fn search_indexes<'v>(
        &self,
        b: &BatchCtx<'_, '_>,
        searching: &mut Vec<Searching<'v>>,
        waiting: &mut Vec<Waiting<'v>>,
        lookups: &mut [KeyLookup],
        trace: &mut LookupTrace<'_>,
    ) {
        waiting.clear();
        let timer = trace.timer();
        let start = timer.start();
        loop {
            let mut more = false;
            for s in searching.iter_mut() {
                let c = &b.candidates[s.candidate];
                more |= c.reader.step_index_search(&c.spot, &mut s.search);
            }
            if !more {
                break;
            }
        }
        for s in searching.iter_mut() {
            let c = &b.candidates[s.candidate];
            c.reader.settle_index_search(&c.spot, &mut s.search);
        }
        for s in searching.iter() {
            let c = &b.candidates[s.candidate];
            c.reader.prefetch_index_answer(&c.spot, &s.search);
        }
        // The interleaved steps' time, shared out over the keys.
        let index_nanos = timer.nanos_since(start) / searching.len().max(1) as u64;
        for s in searching.drain(..) {
            let c = &b.candidates[s.candidate];
            let k = &mut lookups[s.key];
            let seek = b.seek_of(k);
            let start = timer.start();
            let found = c.reader.finish_index_search(&c.spot, seek, s.search);
            let outcome = ProbeOutcome { index_nanos: index_nanos + timer.nanos_since(start), ..s.outcome };
            match found {
                Err(e) => k.answer = Some(Err(e)),
                Ok(BlockProbe::Block(handle)) => {
                    waiting.push(Waiting { key: s.key, candidate: s.candidate, handle, outcome, state: s.state });
                }
                Ok(_) => {
                    trace.table_visit(c.level, &outcome, &TableGet::NotFound, c.reader.filter_part_count() > 0);
                }
            }
        }
    }

    /// Look up every key of `group` (all waiting on one data block) in that block and settle
    /// what it answers; a key it does not hold probes on in the next round.
    fn settle_shared_block(
        &self,
        b: &BatchCtx<'_, '_>,
        group: &[Waiting<'_>],
        block: Result<Block>,
        read_nanos: u64,
        lookups: &mut [KeyLookup],
        trace: &mut LookupTrace<'_>,
    ) {
        let Some(first) = group.first() else { return };
        let c = &b.candidates[first.candidate];
        let block = match block {
            Ok(block) => block,
            Err(e) => {
                for w in group {
                    lookups[w.key].answer = Some(Err(e.duplicate()));
                }
                return;
            }
        };
        let timer = trace.timer();
        let start = timer.start();
        let keys = group.iter().map(|w| b.seek_of(&lookups[w.key]));
        let found = c.reader.get_in_block(block, first.handle, keys);
        // The round's reads, shared out over its keys, and this block's search over its own.
        let data_nanos = read_nanos + timer.nanos_since(start) / group.len() as u64;
        let has_filter = c.reader.filter_part_count() > 0;
        for (w, got) in group.iter().zip(found) {
            let k = &mut lookups[w.key];
            let got = match got {
                Ok(got) => got,
                Err(e) => {
                    k.answer = Some(Err(e));
                    continue;
                }
            };
            let outcome = ProbeOutcome { data_nanos, ..w.outcome };
            trace.table_visit(c.level, &outcome, &got, has_filter);
            if let TableGet::Found { kind, value, seq } = got {
                b.tree.manager.found(w.state);
                k.answer = Some(Ok(settle(visible(kind, seq, k.floor, value), &*self.opts.clock)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Readable;

    #[test]
    fn a_huge_batch_leaves_no_scratch_behind() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = crate::Db::open(dir.path(), crate::Options::default()).expect("open");
        for i in 0..100u32 {
            db.put(format!("k{i:05}"), "v").expect("put");
        }
        db.flush().expect("flush");
        let few: Vec<String> = (0..32).map(|i| format!("k{i:05}")).collect();
        assert!(db.multi_get(&few).iter().all(|r| matches!(r, Ok(Some(_)))));
        let kept = SCRATCH.take().expect("a batch of 32 keeps its scratch");
        assert!(kept.bytes() > 0 && kept.bytes() <= SCRATCH_KEPT_BYTES);
        let many: Vec<String> = (0..20_000).map(|i| format!("k{i:05}")).collect();
        let got = db.multi_get(&many);
        assert_eq!(got.iter().filter(|r| matches!(r, Ok(Some(_)))).count(), 100);
        assert!(SCRATCH.take().is_none(), "20K keys' vectors were kept");
    }

    #[test]
    fn recycled_vectors_keep_their_allocation() {
        let mut v: Vec<&'static [u8]> = Vec::with_capacity(256);
        v.push(b"key");
        let at = v.as_ptr() as usize;
        let w: Vec<&[u8]> = recycle(v);
        assert!(w.is_empty());
        assert_eq!((w.as_ptr() as usize, w.capacity()), (at, 256));
    }
}
