//! Requests run on the connection's own task, where nothing may wait on the disk.
//!
//! A connection runs each request it read first on its own task (no hand-off to another
//! thread), inside [`try_run`]: the store's reads are then made with
//! `ReadTier::CacheOnly` (memtables, block cache and pinned index and filters only) and
//! its writes with `no_slowdown` and without a sync. When the engine answers
//! `WouldBlock` (a block to read, a table to open, a write stall, a memtable switch, a
//! sync asked for), the request is refused as a whole: [`try_run`] answers `None`, the
//! reply it made is dropped, and the connection runs that request and every one after it
//! on the blocking pool, as it runs them all when this path cannot be used.
//!
//! A refused request must have changed nothing, since it runs again: once a read was
//! refused, every write of the same request is refused too (a command that read through an
//! error would otherwise write from a wrong read), and once a write succeeded, the
//! request's later engine calls may wait (a request that wrote is never refused). Commands
//! read before they write, so a request that is refused is refused before its first write.
//!
//! The mode is a mark on the thread, set for the one request [`try_run`] runs: the request
//! runs without a suspension point, so no other task runs on the thread meanwhile.

use shamba::{ReadOptions, ReadTier, WriteOptions};
use std::cell::Cell;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Engine calls may wait (the blocking pool, or a request that wrote already).
    MayWait,
    /// Inside [`try_run`]: nothing may wait.
    MustNotWait,
    /// Inside [`try_run`], after the engine said it would have waited: the request runs
    /// again elsewhere, and writes nothing here.
    Refused,
}

/// Commands that always run on the blocking pool: a transaction's reads (WATCH's, and
/// EXEC's) go through its snapshot, which takes no read options, and its commit may sync;
/// the blocking pops wait for a push (see `blocking`), which must not hold a runtime worker,
/// and neither may a script, which runs a transaction and may run for long.
pub(crate) const RUNS_ON_THE_POOL: &[&str] = &[
    "watch",
    "exec",
    "blpop",
    "brpop",
    "blmove",
    "brpoplpush",
    "blmpop",
    "bzpopmin",
    "bzpopmax",
    "bzmpop",
    "eval",
    "evalsha",
    "eval_ro",
    "evalsha_ro",
];

thread_local! {
    static MODE: Cell<Mode> = const { Cell::new(Mode::MayWait) };
}

/// Run `f` (one request) so that no engine call it makes waits: `Some` of its result, or
/// `None` when an engine call would have waited (nothing was written: run it again where
/// waiting is allowed).
pub(crate) fn try_run<T>(f: impl FnOnce() -> T) -> Option<T> {
    let outer = MODE.replace(Mode::MustNotWait);
    let out = f();
    let mode = MODE.replace(outer);
    (mode != Mode::Refused).then_some(out)
}

/// The options of a read made now.
pub(crate) fn read_options() -> ReadOptions {
    match MODE.get() {
        Mode::MayWait => ReadOptions::default(),
        Mode::MustNotWait | Mode::Refused => ReadOptions { read_tier: ReadTier::CacheOnly, ..ReadOptions::default() },
    }
}

/// The options of a write made now with `sync`, or the refusal: a write after a refused
/// read, or one that must sync, is not made here.
pub(crate) fn write_options(sync: bool) -> shamba::Result<WriteOptions> {
    match MODE.get() {
        Mode::MayWait => Ok(WriteOptions { sync, ..WriteOptions::default() }),
        Mode::Refused => Err(shamba::Error::WouldBlock("an earlier read of this request would have blocked")),
        Mode::MustNotWait if sync => Err(refuse("a synced write")),
        Mode::MustNotWait => Ok(WriteOptions { no_slowdown: true, ..WriteOptions::default() }),
    }
}

/// Note an engine call's outcome: a `WouldBlock` refuses the request.
pub(crate) fn saw<T>(result: &shamba::Result<T>) {
    if let Err(e) = result {
        saw_error(e);
    }
}

/// Whether the request running here may wait (it is not on a connection's task).
pub(crate) fn may_wait() -> bool {
    MODE.get() == Mode::MayWait
}

/// Whether the request running here has been refused (its reply will be dropped and it
/// runs again on the blocking pool): state it changes besides the engine's must not change.
pub(crate) fn refused() -> bool {
    MODE.get() == Mode::Refused
}

/// Note an engine error: a `WouldBlock` refuses the request.
pub(crate) fn saw_error(e: &shamba::Error) {
    if e.is_would_block() && MODE.get() == Mode::MustNotWait {
        MODE.set(Mode::Refused);
    }
}

/// Refuse the request here (it needs something that may wait), answering the error its
/// command sees.
pub(crate) fn refuse(what: &'static str) -> shamba::Error {
    if MODE.get() == Mode::MustNotWait {
        MODE.set(Mode::Refused);
    }
    shamba::Error::WouldBlock(what)
}

/// A write succeeded: the rest of the request may wait (it must not run again).
pub(crate) fn wrote() {
    if MODE.get() == Mode::MustNotWait {
        MODE.set(Mode::MayWait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_that_saw_would_block_is_refused_and_writes_nothing_after() {
        let answer = try_run(|| {
            assert_eq!(read_options().read_tier, ReadTier::CacheOnly);
            assert!(write_options(false).is_ok_and(|wo| wo.no_slowdown && !wo.sync));
            saw::<()>(&Err(shamba::Error::WouldBlock("a block read")));
            assert!(write_options(false).is_err_and(|e| e.is_would_block()), "no write after a refusal");
        });
        assert!(answer.is_none());
        assert_eq!(read_options().read_tier, ReadTier::All, "outside, reads may wait");
        assert!(write_options(true).is_ok_and(|wo| wo.sync));
    }

    #[test]
    fn a_synced_write_is_refused_and_a_request_that_wrote_is_kept() {
        assert!(try_run(|| write_options(true).is_err()).is_none());
        let kept = try_run(|| {
            wrote();
            // A later read may now wait, and its outcome does not refuse the request.
            saw::<()>(&Err(shamba::Error::WouldBlock("a block read")));
            read_options().read_tier
        });
        assert_eq!(kept, Some(ReadTier::All));
        assert_eq!(try_run(|| 7), Some(7));
    }
}
