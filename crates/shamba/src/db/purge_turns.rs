//! Turns at the obsolete-file pass. A flush or compaction run by a background thread asks
//! for a pass and goes on to its next job; the purge thread takes the request. A call that
//! promises settled files (`Db::flush`, `Db::wait_for_compactions`) waits for a pass in
//! flight and takes a request still pending itself, so every request is served by exactly
//! one pass before the call returns, whichever thread runs it. That keeps the number of
//! passes, and so of storage operations, independent of thread timing for a caller that
//! waits on its work (the simulated-disk tests number every operation).

use parking_lot::{Condvar, Mutex};

#[derive(Default)]
struct State {
    /// A job made files obsolete since the last pass began.
    requested: bool,
    /// A pass runs (its turn is alive).
    passing: bool,
    /// The purge thread is to stop.
    stopping: bool,
}

/// The requests for an obsolete-file pass and whose turn it is.
#[derive(Default)]
pub(crate) struct PurgeTurns {
    state: Mutex<State>,
    /// Wakes the purge thread on a request, and callers waiting for a pass to end.
    cv: Condvar,
}

/// The right to run one pass; the next may begin once it is dropped.
pub(crate) struct PurgeTurn<'a>(&'a PurgeTurns);

impl Drop for PurgeTurn<'_> {
    fn drop(&mut self) {
        self.0.state.lock().passing = false;
        self.0.cv.notify_all();
    }
}

impl PurgeTurns {
    /// A job made files obsolete: ask for a pass. Requests made while a pass runs are
    /// folded into one more pass after it.
    pub(crate) fn request(&self) {
        self.state.lock().requested = true;
        self.cv.notify_all();
    }

    /// The purge thread sleeps until a pass is requested and none runs (its turn), or it
    /// is told to stop (`None`; the closing database runs the last pass itself).
    pub(crate) fn next(&self) -> Option<PurgeTurn<'_>> {
        let mut state = self.state.lock();
        loop {
            if state.stopping {
                return None;
            }
            if state.requested && !state.passing {
                return Some(self.take(&mut state));
            }
            self.cv.wait(&mut state);
        }
    }

    /// A caller about to promise settled files: wait for a pass in flight, then take the
    /// turn if a request is still pending (or `anyway`, for the caller's own work).
    /// `None`: every request so far has been served.
    pub(crate) fn settle(&self, anyway: bool) -> Option<PurgeTurn<'_>> {
        let mut state = self.state.lock();
        while state.passing {
            self.cv.wait(&mut state);
        }
        (state.requested || anyway).then(|| self.take(&mut state))
    }

    /// The purge thread is to stop once its pass in flight (if any) is over.
    pub(crate) fn stop(&self) {
        self.state.lock().stopping = true;
        self.cv.notify_all();
    }

    fn take(&self, state: &mut State) -> PurgeTurn<'_> {
        state.requested = false;
        state.passing = true;
        PurgeTurn(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    #[test]
    fn requests_are_folded_until_taken_and_stop_ends_the_wait() {
        let turns = PurgeTurns::default();
        turns.request();
        turns.request();
        assert!(turns.next().is_some(), "a request made before the wait is taken");
        assert!(turns.settle(false).is_none(), "two requests made one pass, taken already");
        assert!(turns.settle(true).is_some(), "a caller's own work takes a turn anyway");
        turns.stop();
        turns.request();
        assert!(turns.next().is_none(), "a stopped thread takes no more requests");
    }

    #[test]
    fn a_caller_waits_for_the_pass_in_flight_and_does_not_repeat_it() {
        let turns = Arc::new(PurgeTurns::default());
        let passes = Arc::new(AtomicUsize::new(0));
        turns.request();
        let turn = turns.next();
        assert!(turn.is_some());
        let waiter = {
            let (turns, passes) = (turns.clone(), passes.clone());
            std::thread::spawn(move || {
                let mine = turns.settle(false);
                // The pass in flight was over before `settle` returned.
                (passes.load(Ordering::SeqCst), mine.is_some())
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        passes.fetch_add(1, Ordering::SeqCst);
        drop(turn);
        let (seen, took) = waiter.join().unwrap();
        assert_eq!(seen, 1, "settle returned before the pass in flight was over");
        assert!(!took, "the request was served by the pass in flight");
    }

    #[test]
    fn the_thread_waits_for_a_callers_turn_and_stop_wakes_it() {
        let turns = Arc::new(PurgeTurns::default());
        let passes = Arc::new(AtomicUsize::new(0));
        let caller = turns.settle(true);
        turns.request();
        let thread = {
            let (turns, passes) = (turns.clone(), passes.clone());
            std::thread::spawn(move || {
                while let Some(_turn) = turns.next() {
                    passes.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(passes.load(Ordering::SeqCst), 0, "the thread ran while a caller held the turn");
        drop(caller);
        let t = Instant::now();
        while passes.load(Ordering::SeqCst) == 0 && t.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(passes.load(Ordering::SeqCst), 1, "the request made during the caller's turn is served after it");
        turns.stop();
        thread.join().unwrap();
    }
}
