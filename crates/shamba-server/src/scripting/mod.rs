//! Lua scripting (EVAL, EVALSHA, their `_RO` forms, SCRIPT): Lua 5.1, as Redis embeds it.
//!
//! One Lua state serves the server ([`Scripts`]); scripts run one at a time on it, each on
//! its client's thread of the blocking pool. A script's commands run through the same
//! dispatch as a client's, inside one engine transaction with the stripe locks of its
//! declared keys held from start to commit, as EXEC runs its queue (`commands::multi`): no
//! other client sees half of a script's writes, and a crash keeps all of them or none.
//! Other clients are not stopped while a script runs; once it has run longer than
//! `busy-reply-threshold` (`lua-time-limit`), they are answered BUSY until it ends, as in
//! Redis, and SCRIPT KILL may stop it.
//!
//! - `sandbox.rs` (with `sandbox.lua`): the Lua state, its protected globals and the
//!   `redis` table.
//! - `convert.rs`: replies to Lua values and back, as Redis converts them.
//! - `run.rs`: one script's run: its transaction, its calls, its errors.
//! - `busy.rs`: what the running script is doing, SCRIPT KILL, and the BUSY refusal.
//! - `shebang.rs`: a script's `#!lua flags=...` line.
//! - `cjson.rs`, `cmsgpack.rs`, `bit.rs`: the libraries Redis gives scripts.

mod bit;
mod busy;
mod cjson;
mod cmsgpack;
mod convert;
mod run;
mod sandbox;
mod shebang;

pub(crate) use busy::refuse_while_busy;
pub(crate) use run::{eval, Source};

use crate::reply::Reply;
use busy::Running;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The server's scripts: the Lua state, the scripts it knows (in memory, as in Redis:
/// lost on restart and with SCRIPT FLUSH), and the running script's state.
pub(crate) struct Scripts {
    /// Made on first use; dropped by SCRIPT FLUSH. Held for a script's whole run.
    state: Mutex<Option<sandbox::State>>,
    /// SHA1 (lowercase hex) → body, for EVALSHA and SCRIPT EXISTS (readable while a
    /// script runs).
    bodies: Mutex<HashMap<String, Vec<u8>>>,
    running: Arc<Running>,
    /// Off: EVAL and SCRIPT LOAD answer an error (the fuzz server, where a script that
    /// loops forever would stop the campaign).
    enabled: bool,
}

impl std::fmt::Debug for Scripts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripts").field("known", &self.bodies.lock().len()).field("enabled", &self.enabled).finish()
    }
}

impl Default for Scripts {
    fn default() -> Scripts {
        Scripts { state: Mutex::new(None), bodies: Mutex::new(HashMap::new()), running: Arc::default(), enabled: true }
    }
}

/// Redis's answer to EVALSHA of a script it does not know.
pub(crate) const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

impl Scripts {
    /// Scripts that never run: EVAL, EVALSHA and SCRIPT LOAD answer an error.
    pub(crate) fn disabled() -> Scripts {
        Scripts { enabled: false, ..Scripts::default() }
    }

    /// How many scripts it knows (INFO's `number_of_cached_scripts`).
    pub(crate) fn cached(&self) -> usize {
        self.bodies.lock().len()
    }

    fn refuse_disabled(&self) -> Option<Reply> {
        (!self.enabled).then(|| Reply::err("scripting is disabled on this server"))
    }

    /// The Lua state, waiting while another script runs; BUSY once that one has run too
    /// long (its client may then be waiting for us).
    fn lock_state(&self) -> Result<parking_lot::MutexGuard<'_, Option<sandbox::State>>, Reply> {
        loop {
            if let Some(guard) = self.state.try_lock_for(Duration::from_millis(10)) {
                return Ok(guard);
            }
            if self.running.is_busy() {
                return Err(Reply::Error(busy::BUSY.into()));
            }
        }
    }

    /// SCRIPT LOAD: compile `body` and remember it; its SHA1.
    pub(crate) fn load(&self, body: &[u8]) -> Reply {
        if let Some(r) = self.refuse_disabled() {
            return r;
        }
        if let Err(r) = shebang::parse(body) {
            return r;
        }
        let sha = sha1_hex(body);
        let mut state = match self.lock_state() {
            Ok(s) => s,
            Err(r) => return r,
        };
        let state = match sandbox::State::get_or_make(&mut state, &self.running) {
            Ok(s) => s,
            Err(e) => return Reply::err(format!("Error creating the Lua state: {e}")),
        };
        if let Err(r) = state.function(&sha, body) {
            return r;
        }
        self.bodies.lock().insert(sha.clone(), body.to_vec());
        Reply::Bulk(sha.into_bytes())
    }

    /// SCRIPT EXISTS: whether each SHA1 is known.
    pub(crate) fn exists<'a>(&self, shas: impl Iterator<Item = &'a [u8]>) -> Reply {
        let bodies = self.bodies.lock();
        Reply::Array(
            shas.map(|s| Reply::Int(i64::from(bodies.contains_key(&String::from_utf8_lossy(s).to_ascii_lowercase()))))
                .collect(),
        )
    }

    /// SCRIPT FLUSH: forget every script and start a new Lua state.
    pub(crate) fn flush(&self) -> Reply {
        let mut state = match self.lock_state() {
            Ok(s) => s,
            Err(r) => return r,
        };
        self.bodies.lock().clear();
        *state = None;
        Reply::OK
    }

    /// SCRIPT KILL.
    pub(crate) fn kill(&self) -> Reply {
        self.running.kill()
    }

    /// SHUTDOWN: stop the running script, if any, and keep none of its writes.
    pub(crate) fn stop_for_shutdown(&self) {
        self.running.stop_for_shutdown();
    }
}

/// SHA1 of `bytes` in lowercase hex, as Redis names scripts.
pub(crate) fn sha1_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_is_redis_s_script_name() {
        assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(sha1_hex(b"Pizza & Mandolino"), "74822d82031af7493c20eefa13bd07ec4fada82f");
    }
}
