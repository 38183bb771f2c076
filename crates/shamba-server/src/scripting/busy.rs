//! The running script's state, shared with the Lua hook and with other clients: how long
//! it has run, whether it wrote, whether SCRIPT KILL asked it to stop; and the BUSY
//! refusal other clients get once it has run past `busy-reply-threshold`.

use crate::commands::Spec;
use crate::reply::Reply;
use crate::session::Ctx;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Redis's answer to a client while a script is busy.
pub(crate) const BUSY: &str = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

/// Redis's SCRIPT KILL answer for a script that wrote.
const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";

/// The error a killed script ends with.
pub(crate) const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";

/// What the running script is doing (all zero/false when none runs).
#[derive(Debug)]
pub(crate) struct Running {
    /// The running script's client's session id + 1; 0 when none runs.
    runner: AtomicU64,
    /// It has run past the threshold: other clients are answered BUSY.
    busy: AtomicBool,
    /// SCRIPT KILL (or SHUTDOWN) asked it to stop.
    killed: AtomicBool,
    /// SHUTDOWN stopped it: its writes are not committed (as Redis, stopping without
    /// saving, keeps none of a script it interrupted).
    discarded: AtomicBool,
    /// It ran a write command (SCRIPT KILL then refuses).
    wrote: AtomicBool,
    /// When it started, and the threshold, in microseconds since `epoch`.
    started: AtomicU64,
    threshold: AtomicU64,
    epoch: Instant,
}

impl Default for Running {
    fn default() -> Running {
        Running {
            runner: AtomicU64::new(0),
            busy: AtomicBool::new(false),
            killed: AtomicBool::new(false),
            discarded: AtomicBool::new(false),
            wrote: AtomicBool::new(false),
            started: AtomicU64::new(0),
            threshold: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }
}

impl Running {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// A script of session `session` starts (the Lua state's lock is held: one at a time).
    pub(crate) fn start(&self, session: u64, threshold_ms: u64) {
        self.killed.store(false, Relaxed);
        self.discarded.store(false, Relaxed);
        self.wrote.store(false, Relaxed);
        self.busy.store(false, Relaxed);
        self.threshold.store(threshold_ms.saturating_mul(1000), Relaxed);
        self.started.store(self.now(), Relaxed);
        self.runner.store(session.wrapping_add(1), Relaxed);
    }

    /// The script ended: other clients run again.
    pub(crate) fn end(&self) {
        self.runner.store(0, Relaxed);
        self.busy.store(false, Relaxed);
        self.killed.store(false, Relaxed);
    }

    pub(crate) fn is_busy(&self) -> bool {
        self.busy.load(Relaxed)
    }

    pub(crate) fn is_killed(&self) -> bool {
        self.killed.load(Relaxed)
    }

    pub(crate) fn wrote(&self) {
        self.wrote.store(true, Relaxed);
    }

    /// Called from the Lua hook every so many instructions: marks the script busy once it
    /// has run past the threshold; whether it must stop.
    pub(crate) fn tick(&self) -> bool {
        if !self.busy.load(Relaxed) {
            let ran = self.now().saturating_sub(self.started.load(Relaxed));
            if ran >= self.threshold.load(Relaxed) {
                self.busy.store(true, Relaxed);
            }
        }
        self.is_killed()
    }

    /// SHUTDOWN: stop the running script, if any, written or not; its transaction is then
    /// dropped rather than committed.
    pub(crate) fn stop_for_shutdown(&self) {
        if self.runner.load(Relaxed) != 0 {
            self.discarded.store(true, Relaxed);
            self.killed.store(true, Relaxed);
        }
    }

    /// Whether SHUTDOWN stopped the script: its writes must not be committed.
    pub(crate) fn is_discarded(&self) -> bool {
        self.discarded.load(Relaxed)
    }

    /// SCRIPT KILL: stop the running script unless it wrote.
    pub(crate) fn kill(&self) -> Reply {
        if self.runner.load(Relaxed) == 0 {
            return Reply::Error("NOTBUSY No scripts in execution right now.".into());
        }
        if self.wrote.load(Relaxed) {
            return Reply::Error(UNKILLABLE.into());
        }
        self.killed.store(true, Relaxed);
        Reply::OK
    }
}

/// What a client may still run while another's script is busy (Redis's `allow-busy`
/// commands).
fn allowed_while_busy(spec: &Spec, args: &[Vec<u8>]) -> bool {
    let sub = |word: &str| args.get(1).is_some_and(|a| a.eq_ignore_ascii_case(word.as_bytes()));
    match spec.name() {
        "auth" | "hello" | "multi" | "discard" | "quit" | "reset" | "shutdown" => true,
        "script" => sub("kill"),
        "function" => sub("kill") || sub("stats"),
        _ => false,
    }
}

/// BUSY for a client other than the busy script's: a command refused while queuing makes
/// EXEC abort, and an EXEC refused ends the transaction (as Redis's `rejectCommand`). `None`
/// (one atomic load) when no script is busy.
pub(crate) fn refuse_while_busy(ctx: &mut Ctx<'_>, spec: &Spec, args: &[Vec<u8>]) -> Option<Reply> {
    let running = &ctx.server.scripts.running;
    if !running.is_busy() || running.runner.load(Relaxed) == ctx.session.id.wrapping_add(1) {
        return None;
    }
    if allowed_while_busy(spec, args) {
        return None;
    }
    if spec.name() == "exec" && ctx.session.multi.take().is_some() {
        ctx.session.watch = None;
        return Some(Reply::Error(format!("EXECABORT Transaction discarded because of: {BUSY}")));
    }
    if let Some(q) = &mut ctx.session.multi {
        q.refused = true;
    }
    Some(Reply::Error(BUSY.into()))
}
