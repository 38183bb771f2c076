//! A super version (what a read needs: the memtables and version of one moment), the
//! installed one, and each reader thread's lease of it.
//!
//! A point lookup writes no cache line that lookups on other cores write (an atomic
//! read-modify-write of a shared line passes it from core to core: two readers would
//! serialize on it). Taking the super version under a lock and cloning its `Arc` would
//! write two shared lines twice per lookup; instead, like RocksDB's thread-local super
//! version, every thread that looks up gets a slot number on its first lookup (round
//! robin over [`SLOTS`]), and each database a [`Slot`] of that number: cache-line aligned,
//! holding the super version the thread last used (one reference of its own) and the
//! thread's lookup counters.
//!
//! A lookup leases its slot ([`SuperVersions::lease`]): one atomic swap on the slot's own
//! line marks it in use and takes the cached super version, used as is if it is still the
//! installed one; the lookup records its trace in the slot's counters with plain stores
//! (it is their only writer) and puts the super version back with a plain store.
//! Installing a super version releases the cached ones not in use (RocksDB's scrape), so
//! idle readers do not keep a replaced version's files and memtables alive; one in use is
//! put back by its lookup and released at its next lease, or at the next install.
//! When two threads with the same slot number meet (more threads than slots), the second
//! one reads like any other reader (the lock, a reference of its own) and counts into
//! counters shared with atomic adds.

use super::table_slots::TableSlots;
use crate::key::SeqNo;
use crate::memtable::MemTable;
use crate::options::{Options, StageTimer};
use crate::stats::{LookupCounters, LookupTotals, LookupTrace, Writer};
use crate::version::Version;
use std::cell::Cell;
use std::ops::Deref;
use std::ptr::{self, NonNull};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use sync::{exclusive, AtomicPtr, Ordering, RwLock, RwLockWriteGuard};

mod sync;

#[cfg(all(test, loom))]
mod loom;
#[cfg(all(test, not(loom)))]
mod tests;

/// What a read needs, captured together so it is consistent: the memtables and the
/// version of one moment. Replaced (never mutated) by writes, flushes and compactions.
pub(crate) struct SuperVersion {
    pub mem: Arc<MemTable>,
    /// Frozen memtables, newest first.
    pub imm: Vec<Arc<MemTable>>,
    pub version: Arc<Version>,
    /// The open state of the version's tables (shared by the super versions of one version).
    pub tables: Arc<TableSlots>,
    /// Whether lookups prefetch the candidates' filters (`LabOptions::prefetch_filters` and
    /// `prefetch_min_filter_bytes`, decided once per version).
    pub prefetch: bool,
    /// Whether a frozen memtable or the version holds a range tombstone (the live memtable
    /// says so itself: it may get one later).
    pub range_dels: bool,
    /// The version's bytes above its levels' targets
    /// ([`pending_compaction_bytes`](crate::compaction::picker::pending_compaction_bytes)),
    /// summed once per version: every write reads it to decide whether to slow down, and
    /// summing a deep tree's file sizes on each one was a visible part of a writer's time
    /// (`docs/results/2026-11-28/output-sync.md`).
    pub compaction_debt: u64,
}

impl SuperVersion {
    /// The memtables and version of one moment, under `opts`; the tables of `previous`
    /// that are still in `version` keep their open state.
    pub(crate) fn new(
        mem: Arc<MemTable>,
        imm: Vec<Arc<MemTable>>,
        version: Arc<Version>,
        previous: Option<&SuperVersion>,
        opts: &Options,
    ) -> SuperVersion {
        let (tables, compaction_debt) = match previous {
            Some(p) if Arc::ptr_eq(&p.version, &version) => (p.tables.clone(), p.compaction_debt),
            _ => (
                Arc::new(TableSlots::new(&version, previous.map(|p| &*p.tables))),
                crate::compaction::picker::pending_compaction_bytes(&version, opts),
            ),
        };
        let filters: u64 = version.all_files().map(|(_, f)| f.filter_bytes).sum();
        let probed = if opts.cache_index_and_filter_blocks { filters.min(opts.cache_capacity as u64) } else { filters };
        let prefetch = opts.prefetch_filters() && probed >= opts.prefetch_min_filter_bytes;
        let range_dels = imm.iter().any(|m| m.has_range_dels()) || !version.range_dels.is_empty();
        SuperVersion { mem, imm, version, tables, prefetch, range_dels, compaction_debt }
    }

    /// The sequence number of the newest range tombstone over `key` that a reader at `seq`
    /// sees, or 0: a version of `key` older than it is deleted. Two loads when there are no
    /// range tombstones.
    #[inline]
    pub(crate) fn range_del_floor(&self, key: &[u8], seq: SeqNo) -> SeqNo {
        let mut floor = self.mem.range_del_cover(key, seq);
        if self.range_dels {
            for m in &self.imm {
                floor = floor.max(m.range_del_cover(key, seq));
            }
            floor = floor.max(self.version.range_dels.set.cover(key, seq));
        }
        floor
    }
}

/// Reader slots per database. Threads beyond this many share slots (correctly, and
/// without the benefit when two of them meet).
#[cfg(not(loom))]
const SLOTS: usize = 32;
/// Under the model checker, two slots: enough for two threads apart and two that meet.
#[cfg(loom)]
const SLOTS: usize = 2;

/// A slot's super version while a lookup holds the slot (no real one is at this address).
fn in_use<V>() -> *mut V {
    ptr::dangling_mut()
}

/// The next thread's slot number.
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's slot number (`usize::MAX` until its first lookup).
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// This thread's slot number, assigned round robin on first use.
#[inline]
fn slot_number() -> usize {
    SLOT.with(|slot| match slot.get() {
        usize::MAX => {
            let n = NEXT_SLOT.fetch_add(1, Ordering::Relaxed) % SLOTS;
            slot.set(n);
            n
        }
        n => n,
    })
}

/// One thread's state in one database, on cache lines of its own (two: the adjacent-line
/// prefetcher fetches lines in pairs).
#[repr(align(128))]
struct Slot<V> {
    /// The super version the slot's thread last used (a reference owned by the slot),
    /// null, or [`in_use`] while a lookup holds the slot.
    cached: AtomicPtr<V>,
    /// The lookups of the slot's thread, written only while holding the slot.
    counters: LookupCounters,
}

/// The installed super version, with the reader slots that cache it. (Generic so that the
/// slot logic's tests can run it on a value of their own; the engine's is [`SuperVersion`].)
pub(crate) struct SuperVersions<V = SuperVersion> {
    installed: RwLock<Arc<V>>,
    /// `Arc::as_ptr` of the installed one. A lease compares its cached pointer with it:
    /// equal only if the cached one is installed (the cached reference keeps its address
    /// from being reused).
    current: AtomicPtr<V>,
    slots: Box<[Slot<V>]>,
    /// Counters of lookups whose slot was in use by another thread.
    shared: LookupCounters,
}

/// Write access to the installed super version ([`SuperVersions::write`]), held while
/// building the next one.
pub(crate) struct InstallGuard<'a, V = SuperVersion> {
    versions: &'a SuperVersions<V>,
    installed: RwLockWriteGuard<'a, Arc<V>>,
}

impl<V> SuperVersions<V> {
    /// `first` installed, for a tree of `num_levels` levels.
    pub(crate) fn new(first: V, num_levels: usize) -> Self {
        let first = Arc::new(first);
        SuperVersions {
            current: AtomicPtr::new(Arc::as_ptr(&first).cast_mut()),
            installed: RwLock::new(first),
            slots: (0..SLOTS)
                .map(|_| Slot { cached: AtomicPtr::new(ptr::null_mut()), counters: LookupCounters::new(num_levels) })
                .collect(),
            shared: LookupCounters::new(num_levels),
        }
    }

    /// The installed super version, with a reference of its own (writers, iterators and
    /// background work; point lookups [`lease`](Self::lease) it).
    pub(crate) fn get(&self) -> Arc<V> {
        self.installed.read().clone()
    }

    /// Hold the installed super version to replace it ([`InstallGuard::install`]).
    pub(crate) fn write(&self) -> InstallGuard<'_, V> {
        InstallGuard { versions: self, installed: self.installed.write() }
    }

    /// Lease this thread's slot for one lookup: the installed super version, and the
    /// counters its trace goes to.
    #[inline]
    pub(crate) fn lease(&self) -> Lease<'_, V> {
        self.lease_slot(slot_number())
    }

    /// [`lease`](Self::lease) with slot `n` (the tests pick the slots their threads meet in).
    #[inline]
    fn lease_slot(&self, n: usize) -> Lease<'_, V> {
        let slot = &self.slots[n];
        let cached = slot.cached.swap(in_use(), Ordering::Acquire);
        if cached == in_use() {
            return self.lease_shared();
        }
        let sv = if cached == self.current.load(Ordering::Acquire) { cached } else { self.refresh(cached) };
        Lease {
            // SAFETY: `refresh` never returns null, and the current pointer is never null.
            // Exercised by `tests::a_lease_takes_the_installed_version_and_puts_it_back_in_its_slot`.
            sv: unsafe { NonNull::new_unchecked(sv) },
            slot: Some(slot),
            counters: &slot.counters,
        }
    }

    /// Release a slot's stale super version (if any) and take a reference to the installed
    /// one for it.
    #[cold]
    fn refresh(&self, stale: *mut V) -> *mut V {
        if !stale.is_null() {
            // SAFETY: a non-null pointer other than `in_use` in a slot is a reference the
            // slot owns (`Arc::into_raw`), now ours: the swap marked the slot in use.
            // Exercised by
            // `tests::a_lease_held_across_an_install_keeps_its_version_until_the_slot_is_next_used`
            // and `loom::loom_a_lease_racing_an_install_reads_a_live_version_and_leaks_none`.
            drop(unsafe { Arc::from_raw(stale) });
        }
        Arc::into_raw(self.get()).cast_mut()
    }

    /// A lease for a thread whose slot another thread holds: a reference of its own and the
    /// shared counters.
    #[cold]
    fn lease_shared(&self) -> Lease<'_, V> {
        let sv = Arc::into_raw(self.get()).cast_mut();
        // SAFETY: `Arc::into_raw` is never null. Exercised by
        // `tests::a_lease_of_a_held_slot_reads_with_a_reference_and_counters_of_its_own`.
        Lease { sv: unsafe { NonNull::new_unchecked(sv) }, slot: None, counters: &self.shared }
    }

    /// Lookup counters summed over the slots.
    pub(crate) fn lookup_totals(&self) -> LookupTotals {
        let mut totals = LookupTotals::default();
        for slot in self.slots.iter() {
            slot.counters.add_to(&mut totals);
        }
        self.shared.add_to(&mut totals);
        totals
    }

    /// Release the super versions cached by slots not in use, except the installed one.
    fn release_cached(&self) {
        let current = self.current.load(Ordering::Acquire);
        for slot in self.slots.iter() {
            let cached = slot.cached.load(Ordering::Acquire);
            if cached.is_null() || cached == in_use() || cached == current {
                continue;
            }
            // If a lookup took the slot meanwhile, it is in use: leave it.
            if slot.cached.compare_exchange(cached, ptr::null_mut(), Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                // SAFETY: the slot's reference, now ours. Exercised by
                // `tests::an_install_releases_the_idle_slots_and_the_next_lease_takes_the_new_version`
                // and `loom::loom_installs_racing_a_slot_put_back_stale`.
                drop(unsafe { Arc::from_raw(cached) });
            }
        }
    }
}

impl<V> Drop for SuperVersions<V> {
    fn drop(&mut self) {
        for slot in self.slots.iter_mut() {
            let cached = exclusive(&mut slot.cached);
            if !cached.is_null() && cached != in_use() {
                // SAFETY: the slot's reference; no lease outlives the database. Exercised by
                // `tests::dropping_the_versions_releases_every_slot_whatever_it_caches`.
                drop(unsafe { Arc::from_raw(cached) });
            }
        }
    }
}

impl<V> InstallGuard<'_, V> {
    /// Install `next` (readers see it from now on) and release the replaced one from the
    /// idle readers' slots.
    pub(crate) fn install(mut self, next: V) {
        let next = Arc::new(next);
        self.versions.current.store(Arc::as_ptr(&next).cast_mut(), Ordering::Release);
        *self.installed = next;
        self.versions.release_cached();
    }
}

impl<V> Deref for InstallGuard<'_, V> {
    type Target = V;

    fn deref(&self) -> &V {
        &self.installed
    }
}

/// One lookup's hold on its thread's slot: the super version it reads, and the counters
/// its trace goes to. Dropping it puts the super version back.
pub(crate) struct Lease<'a, V = SuperVersion> {
    /// A reference held for the lease: the slot's (while it is marked in use), or our own.
    sv: NonNull<V>,
    /// The slot held; `None` when it was in use and the lease has its own reference.
    slot: Option<&'a Slot<V>>,
    counters: &'a LookupCounters,
}

impl Lease<'_> {
    /// A trace of this lookup, recorded into the lease's counters when it finishes.
    #[inline]
    pub(crate) fn trace(&self, timer: StageTimer) -> LookupTrace<'_> {
        self.batch_trace(1, timer)
    }

    /// A trace of a batch of `lookups` lookups (a `multi_get`'s keys), recorded as one.
    #[inline]
    pub(crate) fn batch_trace(&self, lookups: u64, timer: StageTimer) -> LookupTrace<'_> {
        let writer = if self.slot.is_some() { Writer::Owner } else { Writer::Shared };
        LookupTrace::of_lookups(self.counters, writer, lookups, timer)
    }
}

impl<V> Deref for Lease<'_, V> {
    type Target = V;

    #[inline]
    fn deref(&self) -> &V {
        // SAFETY: the lease holds a reference (see `sv`). Exercised by
        // `tests::many_threads_lease_while_versions_are_installed_and_every_reference_comes_back`
        // and the loom models, whose versions check that they are read alive.
        unsafe { self.sv.as_ref() }
    }
}

impl<V> Drop for Lease<'_, V> {
    #[inline]
    fn drop(&mut self) {
        match self.slot {
            // Back to the slot, which owns the reference again; the store also publishes
            // the counters to the slot's next holder. If an install released the slot's
            // other super versions meanwhile, this one may be stale: the next lease or
            // install releases it.
            Some(slot) => slot.cached.store(self.sv.as_ptr(), Ordering::Release),
            // SAFETY: our own reference, from `Arc::into_raw`. Exercised by
            // `loom::loom_two_readers_meeting_in_one_slot_while_a_version_is_installed`.
            None => drop(unsafe { Arc::from_raw(self.sv.as_ptr()) }),
        }
    }
}
