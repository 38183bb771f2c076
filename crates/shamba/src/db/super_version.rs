//! The installed super version, and each reader thread's lease of it.
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

use super::inner::SuperVersion;
use crate::options::StageTimer;
use crate::stats::{LookupCounters, LookupTotals, LookupTrace, Writer};
use parking_lot::{RwLock, RwLockWriteGuard};
use std::cell::Cell;
use std::ops::Deref;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;

/// Reader slots per database. Threads beyond this many share slots (correctly, and
/// without the benefit when two of them meet).
const SLOTS: usize = 32;

/// A slot's super version while a lookup holds the slot (no real one is at this address).
fn in_use() -> *mut SuperVersion {
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
struct Slot {
    /// The super version the slot's thread last used (a reference owned by the slot),
    /// null, or [`in_use`] while a lookup holds the slot.
    cached: AtomicPtr<SuperVersion>,
    /// The lookups of the slot's thread, written only while holding the slot.
    counters: LookupCounters,
}

/// The installed super version, with the reader slots that cache it.
pub(crate) struct SuperVersions {
    installed: RwLock<Arc<SuperVersion>>,
    /// `Arc::as_ptr` of the installed one. A lease compares its cached pointer with it:
    /// equal only if the cached one is installed (the cached reference keeps its address
    /// from being reused).
    current: AtomicPtr<SuperVersion>,
    slots: Box<[Slot]>,
    /// Counters of lookups whose slot was in use by another thread.
    shared: LookupCounters,
}

/// Write access to the installed super version ([`SuperVersions::write`]), held while
/// building the next one.
pub(crate) struct InstallGuard<'a> {
    versions: &'a SuperVersions,
    installed: RwLockWriteGuard<'a, Arc<SuperVersion>>,
}

impl SuperVersions {
    /// `first` installed, for a tree of `num_levels` levels.
    pub(crate) fn new(first: SuperVersion, num_levels: usize) -> Self {
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
    pub(crate) fn get(&self) -> Arc<SuperVersion> {
        self.installed.read().clone()
    }

    /// Hold the installed super version to replace it ([`InstallGuard::install`]).
    pub(crate) fn write(&self) -> InstallGuard<'_> {
        InstallGuard { versions: self, installed: self.installed.write() }
    }

    /// Lease this thread's slot for one lookup: the installed super version, and the
    /// counters its trace goes to.
    #[inline]
    pub(crate) fn lease(&self) -> Lease<'_> {
        let slot = &self.slots[slot_number()];
        let cached = slot.cached.swap(in_use(), Ordering::Acquire);
        if cached == in_use() {
            return self.lease_shared();
        }
        let sv = if cached == self.current.load(Ordering::Acquire) { cached } else { self.refresh(cached) };
        Lease {
            // SAFETY: `refresh` never returns null, and the current pointer is never null.
            sv: unsafe { NonNull::new_unchecked(sv) },
            slot: Some(slot),
            counters: &slot.counters,
        }
    }

    /// Release a slot's stale super version (if any) and take a reference to the installed
    /// one for it.
    #[cold]
    fn refresh(&self, stale: *mut SuperVersion) -> *mut SuperVersion {
        if !stale.is_null() {
            // SAFETY: a non-null pointer other than `in_use` in a slot is a reference the
            // slot owns (`Arc::into_raw`), now ours: the swap marked the slot in use.
            drop(unsafe { Arc::from_raw(stale) });
        }
        Arc::into_raw(self.get()).cast_mut()
    }

    /// A lease for a thread whose slot another thread holds: a reference of its own and the
    /// shared counters.
    #[cold]
    fn lease_shared(&self) -> Lease<'_> {
        let sv = Arc::into_raw(self.get()).cast_mut();
        // SAFETY: `Arc::into_raw` is never null.
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
                // SAFETY: the slot's reference, now ours.
                drop(unsafe { Arc::from_raw(cached) });
            }
        }
    }
}

impl Drop for SuperVersions {
    fn drop(&mut self) {
        for slot in self.slots.iter_mut() {
            let cached = *slot.cached.get_mut();
            if !cached.is_null() && cached != in_use() {
                // SAFETY: the slot's reference; no lease outlives the database.
                drop(unsafe { Arc::from_raw(cached) });
            }
        }
    }
}

impl InstallGuard<'_> {
    /// Install `next` (readers see it from now on) and release the replaced one from the
    /// idle readers' slots.
    pub(crate) fn install(mut self, next: SuperVersion) {
        let next = Arc::new(next);
        self.versions.current.store(Arc::as_ptr(&next).cast_mut(), Ordering::Release);
        *self.installed = next;
        self.versions.release_cached();
    }
}

impl Deref for InstallGuard<'_> {
    type Target = SuperVersion;

    fn deref(&self) -> &SuperVersion {
        &self.installed
    }
}

/// One lookup's hold on its thread's slot: the super version it reads, and the counters
/// its trace goes to. Dropping it puts the super version back.
pub(crate) struct Lease<'a> {
    /// A reference held for the lease: the slot's (while it is marked in use), or our own.
    sv: NonNull<SuperVersion>,
    /// The slot held; `None` when it was in use and the lease has its own reference.
    slot: Option<&'a Slot>,
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

impl Deref for Lease<'_> {
    type Target = SuperVersion;

    #[inline]
    fn deref(&self) -> &SuperVersion {
        // SAFETY: the lease holds a reference (see `sv`).
        unsafe { self.sv.as_ref() }
    }
}

impl Drop for Lease<'_> {
    #[inline]
    fn drop(&mut self) {
        match self.slot {
            // Back to the slot, which owns the reference again; the store also publishes
            // the counters to the slot's next holder. If an install released the slot's
            // other super versions meanwhile, this one may be stale: the next lease or
            // install releases it.
            Some(slot) => slot.cached.store(self.sv.as_ptr(), Ordering::Release),
            // SAFETY: our own reference, from `Arc::into_raw`.
            None => drop(unsafe { Arc::from_raw(self.sv.as_ptr()) }),
        }
    }
}
