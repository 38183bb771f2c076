//! The background workers' state: their threads, whether they are shutting down, the first
//! background error (which stops writes until resumed), the condition variable that wakes
//! them and the writers that wait on them, the turns at the obsolete-file pass
//! (`purge_turns.rs`), and the locks held while a flush or a compaction runs. The jobs
//! themselves are in `background.rs`, resuming in `resume.rs`.

use super::purge_turns::PurgeTurns;
use super::thread_priority::lower_this_thread;
use crate::error::{Error, Result};
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

#[derive(Default)]
struct State {
    shutting_down: bool,
    /// First background failure, kept whole; once set, writes fail with
    /// [`Error::ReadOnly`] naming it (reads still work).
    error: Option<Arc<Error>>,
}

/// The background threads and what they share with the writers.
#[derive(Default)]
pub(crate) struct Workers {
    state: Mutex<State>,
    /// Wakes the workers when work arrives, and the writers waiting on them when work is
    /// done (or failed).
    cv: Condvar,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// Requests for an obsolete-file pass, taken by the purge thread or by a caller that
    /// promises settled files.
    pub purge: PurgeTurns,
    /// Held while a memtable is flushed (by the flush thread, or by `resume`).
    pub flushing: Mutex<()>,
    /// Held while a compaction runs (one at a time, in any tree).
    pub compaction: Mutex<()>,
}

impl Workers {
    /// Start a worker thread named `name`, running `work` at `nice` more than the calling
    /// thread's nice value (`Options::background_nice`).
    pub(crate) fn spawn(&self, name: &str, nice: u8, work: impl FnOnce() + Send + 'static) -> Result<()> {
        let thread = std::thread::Builder::new().name(name.into()).spawn(move || {
            lower_this_thread(nice);
            work()
        })?;
        self.threads.lock().push(thread);
        Ok(())
    }

    /// Tell the workers to stop, wake them, and wait until they have.
    pub(crate) fn stop(&self) {
        {
            let mut state = self.state.lock();
            state.shutting_down = true;
            self.cv.notify_all();
        }
        self.purge.stop();
        let threads: Vec<_> = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            let _ = t.join();
        }
    }

    pub(crate) fn shutting_down(&self) -> bool {
        self.state.lock().shutting_down
    }

    /// The first background failure, if one stopped writes.
    pub(crate) fn error(&self) -> Option<Arc<Error>> {
        self.state.lock().error.clone()
    }

    pub(crate) fn failed(&self) -> bool {
        self.state.lock().error.is_some()
    }

    /// Record a background failure (the first one is kept) and wake everyone waiting.
    pub(crate) fn set_error(&self, e: Error) {
        let mut state = self.state.lock();
        if state.error.is_none() {
            state.error = Some(Arc::new(e));
        }
        self.cv.notify_all();
    }

    /// Writes may go on: the failure is cured (`resume`).
    pub(crate) fn clear_error(&self) {
        self.state.lock().error = None;
    }

    /// Wake the workers (work arrived) and the writers waiting on them (work is done).
    pub(crate) fn wake(&self) {
        self.cv.notify_all();
    }

    /// A worker with nothing to do sleeps up to `wait`, or until woken; not at all once
    /// shutting down.
    pub(crate) fn idle(&self, wait: Duration) {
        let mut state = self.state.lock();
        if !state.shutting_down {
            self.cv.wait_for(&mut state, wait);
        }
    }

    /// A worker waiting to retry resuming sleeps up to `wait`, or until woken, while the
    /// background error stands (not at all once it is cleared, or shutting down).
    pub(crate) fn idle_while_failed(&self, wait: Duration) {
        let mut state = self.state.lock();
        if !state.shutting_down && state.error.is_some() {
            self.cv.wait_for(&mut state, wait);
        }
    }

    /// A writer waiting on the workers (a stall, or a flush it asked for): wake them and
    /// sleep up to `wait`, or until they say work is done. [`Error::Closed`] once they are
    /// shutting down.
    pub(crate) fn wake_and_wait(&self, wait: Duration) -> Result<()> {
        let mut state = self.state.lock();
        if state.shutting_down {
            return Err(Error::Closed);
        }
        self.cv.notify_all();
        self.cv.wait_for(&mut state, wait);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_first_error_is_kept_until_cleared() {
        let w = Workers::default();
        assert!(!w.failed());
        w.set_error(Error::InvalidArgument("first".into()));
        w.set_error(Error::InvalidArgument("second".into()));
        assert!(matches!(w.error().as_deref(), Some(Error::InvalidArgument(m)) if m == "first"));
        w.clear_error();
        assert!(w.error().is_none());
    }

    #[test]
    fn stop_wakes_idle_workers_and_joins_them() {
        let w = Arc::new(Workers::default());
        for name in ["one", "two"] {
            let worker = w.clone();
            w.spawn(name, 0, move || {
                while !worker.shutting_down() {
                    worker.idle(Duration::from_secs(60));
                }
            })
            .unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
        let t = Instant::now();
        w.stop();
        assert!(t.elapsed() < Duration::from_secs(30), "the workers were woken, not left to time out");
        assert!(w.threads.lock().is_empty());
        assert!(matches!(w.wake_and_wait(Duration::from_secs(60)), Err(Error::Closed)));
    }

    #[test]
    fn a_waiting_writer_is_woken_by_an_error() {
        let w = Arc::new(Workers::default());
        let waiter = {
            let w = w.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                while !w.failed() {
                    w.wake_and_wait(Duration::from_secs(60)).unwrap();
                }
                t.elapsed()
            })
        };
        // Every failure wakes the waiters (repeated, so the test does not depend on the
        // waiter being asleep already).
        while !waiter.is_finished() {
            w.set_error(Error::InvalidArgument("flush failed".into()));
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(waiter.join().unwrap() < Duration::from_secs(30));
        // Failed and not shutting down: a worker waiting to retry sleeps (briefly here).
        let t = Instant::now();
        w.idle_while_failed(Duration::from_millis(20));
        assert!(t.elapsed() >= Duration::from_millis(15));
    }
}
