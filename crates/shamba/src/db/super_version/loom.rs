//! The reader slots under loom, a model checker that runs each test over every interleaving
//! of its threads' atomic operations and lock acquisitions (with `sync.rs` giving loom's
//! atomics and lock): a lease racing an install, readers meeting in one slot, installs
//! racing a stale slot. Each model ends by dropping everything and counting the versions
//! alive: a reference taken twice or given back twice shows as a count left over, a read
//! after free as a wrong check word.
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p shamba --lib --release super_version::loom`
//! (CI runs it in a target directory of its own, `.ci/run`).

use super::SuperVersions;
use ::loom::thread;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A super version stand-in, counted while alive (std's atomics: the count is the test's,
/// not part of the model).
struct Version {
    n: usize,
    check: usize,
    live: Arc<AtomicUsize>,
}

impl Version {
    fn new(n: usize, live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Version { n, check: !n, live: Arc::clone(live) }
    }

    fn number(&self) -> usize {
        assert_eq!(self.check, !self.n, "a version read after it was freed");
        self.n
    }
}

impl Drop for Version {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Run `body` under the model with a fresh count, then check every version was released.
fn model(body: impl Fn(&Arc<AtomicUsize>) + Sync + Send + 'static) {
    ::loom::model(move || {
        let live = Arc::new(AtomicUsize::new(0));
        body(&live);
        assert_eq!(live.load(Ordering::SeqCst), 0, "a version was leaked or released twice");
    });
}

#[test]
fn loom_a_lease_racing_an_install_reads_a_live_version_and_leaks_none() {
    model(|live| {
        let sv = Arc::new(SuperVersions::new(Version::new(0, live), 1));
        let reader = {
            let sv = Arc::clone(&sv);
            thread::spawn(move || {
                let first = sv.lease_slot(0).number();
                let second = sv.lease_slot(0).number();
                assert!(second >= first, "versions only move forward");
            })
        };
        sv.write().install(Version::new(1, live));
        reader.join().expect("reader");
        assert_eq!(sv.lease_slot(0).number(), 1, "after the install, the new version");
        drop(sv);
    });
}

#[test]
fn loom_two_readers_meeting_in_one_slot_while_a_version_is_installed() {
    model(|live| {
        let sv = Arc::new(SuperVersions::new(Version::new(0, live), 1));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let sv = Arc::clone(&sv);
                thread::spawn(move || {
                    let n = sv.lease_slot(1).number();
                    assert!(n <= 1);
                })
            })
            .collect();
        sv.write().install(Version::new(1, live));
        for r in readers {
            r.join().expect("reader");
        }
        drop(sv);
    });
}

#[test]
fn loom_installs_racing_a_slot_put_back_stale() {
    model(|live| {
        let sv = Arc::new(SuperVersions::new(Version::new(0, live), 1));
        let reader = {
            let sv = Arc::clone(&sv);
            thread::spawn(move || {
                let lease = sv.lease_slot(0);
                assert!(lease.number() <= 2);
            })
        };
        let installer = {
            let sv = Arc::clone(&sv);
            let live = Arc::clone(live);
            thread::spawn(move || sv.write().install(Version::new(1, &live)))
        };
        sv.write().install(Version::new(2, live));
        reader.join().expect("reader");
        installer.join().expect("installer");
        let last = sv.lease_slot(0).number();
        assert!(last == 1 || last == 2);
        drop(sv);
    });
}
