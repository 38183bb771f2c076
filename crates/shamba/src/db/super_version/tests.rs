//! The reader slots on a value of the tests' own, which counts the copies alive: every
//! reference a slot, a lease or an install takes is given back exactly once.

use super::{in_use, SuperVersions, SLOTS};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

/// A super version stand-in: its number, a check word, and the count of live ones.
struct Version {
    n: usize,
    check: usize,
    live: Arc<AtomicUsize>,
}

impl Version {
    fn new(n: usize, live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Version { n, check: n.wrapping_mul(0x9E37_79B9), live: Arc::clone(live) }
    }

    /// Reads the whole value: a freed one would not hold its check word.
    fn number(&self) -> usize {
        assert_eq!(self.check, self.n.wrapping_mul(0x9E37_79B9), "a version read after it was freed");
        self.n
    }
}

impl Drop for Version {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}

fn versions(live: &Arc<AtomicUsize>) -> SuperVersions<Version> {
    SuperVersions::new(Version::new(0, live), 3)
}

fn live(n: &AtomicUsize) -> usize {
    n.load(Ordering::SeqCst)
}

#[test]
fn a_lease_takes_the_installed_version_and_puts_it_back_in_its_slot() {
    let count = Arc::new(AtomicUsize::new(0));
    let sv = versions(&count);
    let slot = &sv.slots[0].cached;
    assert!(slot.load(Ordering::SeqCst).is_null(), "a slot starts empty");
    {
        let lease = sv.lease_slot(0);
        assert_eq!(lease.number(), 0);
        assert_eq!(slot.load(Ordering::SeqCst), in_use(), "a held slot is marked in use");
        assert_eq!(Arc::strong_count(&sv.get()), 3, "installed, the slot's reference, and this one");
    }
    let cached = slot.load(Ordering::SeqCst);
    assert_eq!(cached, sv.current.load(Ordering::SeqCst), "the slot caches the installed version");
    assert_eq!(Arc::strong_count(&sv.get()), 3, "the slot keeps its reference between lookups");
    // The next lease uses the cached reference as is.
    assert_eq!(sv.lease_slot(0).number(), 0);
    assert_eq!(slot.load(Ordering::SeqCst), cached);
    assert_eq!(Arc::strong_count(&sv.get()), 3);
    drop(sv);
    assert_eq!(live(&count), 0, "dropping the versions releases the slot's reference");
}

#[test]
fn an_install_releases_the_idle_slots_and_the_next_lease_takes_the_new_version() {
    let count = Arc::new(AtomicUsize::new(0));
    let sv = versions(&count);
    for n in 0..SLOTS {
        assert_eq!(sv.lease_slot(n).number(), 0);
    }
    assert_eq!(Arc::strong_count(&sv.get()), 2 + SLOTS);
    sv.write().install(Version::new(1, &count));
    assert_eq!(live(&count), 1, "no idle slot keeps the replaced version alive");
    assert!(sv.slots.iter().all(|s| s.cached.load(Ordering::SeqCst).is_null()));
    assert_eq!(sv.lease_slot(3).number(), 1);
    assert_eq!(Arc::strong_count(&sv.get()), 3);
    drop(sv);
    assert_eq!(live(&count), 0);
}

#[test]
fn a_lease_held_across_an_install_keeps_its_version_until_the_slot_is_next_used() {
    let count = Arc::new(AtomicUsize::new(0));
    let sv = versions(&count);
    let lease = sv.lease_slot(1);
    sv.write().install(Version::new(1, &count));
    assert_eq!(live(&count), 2, "the held slot's version outlives the install");
    assert_eq!(lease.number(), 0, "a lease reads the version it took");
    drop(lease);
    assert_eq!(live(&count), 2, "put back stale: released at the slot's next lease");
    assert_eq!(sv.lease_slot(1).number(), 1, "the stale version is replaced");
    assert_eq!(live(&count), 1);
    // Or at the next install, if the slot is idle then.
    let lease = sv.lease_slot(0);
    sv.write().install(Version::new(2, &count));
    drop(lease);
    assert_eq!(live(&count), 2);
    sv.write().install(Version::new(3, &count));
    assert_eq!(live(&count), 1, "an install releases a stale idle slot");
    drop(sv);
    assert_eq!(live(&count), 0);
}

#[test]
fn a_lease_of_a_held_slot_reads_with_a_reference_and_counters_of_its_own() {
    let count = Arc::new(AtomicUsize::new(0));
    let sv = versions(&count);
    let first = sv.lease_slot(2);
    let before = Arc::strong_count(&sv.get());
    {
        let second = sv.lease_slot(2);
        assert!(second.slot.is_none() && first.slot.is_some());
        assert!(std::ptr::eq(second.counters, &sv.shared), "the meeting thread counts into the shared counters");
        assert_eq!(second.number(), 0);
        assert_eq!(Arc::strong_count(&sv.get()), before + 1, "its own reference");
        sv.write().install(Version::new(1, &count));
        assert_eq!(second.number(), 0, "its reference keeps the replaced version");
    }
    assert_eq!(sv.slots[2].cached.load(Ordering::SeqCst), in_use(), "the first lease still holds the slot");
    drop(first);
    assert_eq!(sv.lease_slot(2).number(), 1);
    assert_eq!(live(&count), 1);
    drop(sv);
    assert_eq!(live(&count), 0);
}

#[test]
fn dropping_the_versions_releases_every_slot_whatever_it_caches() {
    let count = Arc::new(AtomicUsize::new(0));
    let sv = versions(&count);
    drop(sv.lease_slot(0));
    let held = sv.lease_slot(1);
    sv.write().install(Version::new(1, &count));
    drop(held); // slot 1: the stale version 0
    drop(sv.lease_slot(2)); // slot 2: version 1
    assert_eq!(live(&count), 2);
    drop(sv);
    assert_eq!(live(&count), 0, "stale, current and empty slots all released");
}

#[test]
fn many_threads_lease_while_versions_are_installed_and_every_reference_comes_back() {
    const READERS: usize = 6;
    // Miri interprets each step: a shorter run there.
    const INSTALLS: usize = if cfg!(miri) { 20 } else { 2_000 };
    const LEASES: u64 = if cfg!(miri) { 10 } else { 1_000 };
    let count = Arc::new(AtomicUsize::new(0));
    let sv = versions(&count);
    let done = AtomicBool::new(false);
    let start = Barrier::new(READERS + 1);
    let leases = thread::scope(|s| {
        let readers: Vec<_> = (0..READERS)
            .map(|t| {
                let (sv, done, start) = (&sv, &done, &start);
                s.spawn(move || {
                    start.wait();
                    let mut last = 0;
                    let mut leases = 0u64;
                    while !done.load(Ordering::SeqCst) || leases < LEASES {
                        // The even threads use their own slot numbers; the odd ones all meet in
                        // slot 1 (one holds it, the others read with references of their own).
                        let lease = if t % 2 == 0 { sv.lease() } else { sv.lease_slot(1) };
                        let n = lease.number();
                        assert!(n >= last, "a thread never sees an older version than before");
                        last = n;
                        leases += 1;
                    }
                    leases
                })
            })
            .collect();
        start.wait();
        for n in 1..=INSTALLS {
            sv.write().install(Version::new(n, &count));
            if n % 64 == 0 {
                thread::yield_now();
            }
        }
        done.store(true, Ordering::SeqCst);
        readers.into_iter().map(|r| r.join().expect("reader")).sum::<u64>()
    });
    assert!(leases >= READERS as u64 * LEASES);
    assert_eq!(sv.lease_slot(0).number(), INSTALLS);
    assert!(live(&count) <= 1 + SLOTS, "at most one stale version per slot: {}", live(&count));
    drop(sv);
    assert_eq!(live(&count), 0, "every reference taken was given back");
}
