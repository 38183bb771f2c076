//! One script's run: its keys and arguments, its transaction (the one of an EXEC it is
//! part of, or its own, committed at its end and run again on a conflict, as EXEC's
//! queue), the commands it calls and the reply or error it ends with.

use super::busy::{Running, KILLED};
use super::convert::{error_reply, number_argument, to_lua, to_reply};
use super::sandbox::{State, CALL_KEY};
use super::{sha1_hex, NOSCRIPT};
use crate::commands::{self, engine_error, not_an_integer, parse_int};
use crate::durability::SyncMode;
use crate::reply::Reply;
use crate::session::Ctx;
use mlua::{Function, Lua, MultiValue, Value};
use shamba::TransactionOptions;
use std::cell::RefCell;

/// How many times a script runs when its commit meets a write that took no lock (as EXEC).
const ATTEMPTS: usize = 16;

/// What EVAL or EVALSHA names.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Source<'a> {
    /// The script's text (EVAL).
    Body(&'a [u8]),
    /// Its SHA1 (EVALSHA), any case.
    Sha(&'a [u8]),
}

/// EVAL, EVALSHA and their `_RO` forms: `args` is the whole request (name, script or
/// SHA1, numkeys, keys..., arguments...).
pub(crate) fn eval(ctx: &mut Ctx<'_>, source: Source<'_>, args: &[Vec<u8>], read_only: bool) -> Reply {
    let scripts = &ctx.server.scripts;
    if let Some(r) = scripts.refuse_disabled() {
        return r;
    }
    if ctx.server.store.cluster().is_some() {
        return Reply::err("scripts are not supported in cluster mode");
    }
    let (keys, argv) = match split_keys(args) {
        Ok(split) => split,
        Err(r) => return r,
    };
    let (sha, body) = match source {
        Source::Body(b) => (sha1_hex(b), b.to_vec()),
        Source::Sha(s) => {
            let sha = String::from_utf8_lossy(s).to_ascii_lowercase();
            match scripts.bodies.lock().get(&sha).cloned() {
                Some(body) => (sha, body),
                None => return Reply::Error(NOSCRIPT.into()),
            }
        }
    };
    let flags = match super::shebang::parse(&body) {
        Ok(f) => f,
        Err(r) => return r,
    };
    if let Some(f) = flags {
        if read_only && !f.no_writes {
            return Reply::err("Can not execute a script with write flag using *_ro command.");
        }
        if !f.no_writes && !f.allow_oom && crate::commands::memory_limit::over_limit(ctx) {
            return Reply::Error(crate::commands::memory_limit::OOM.into());
        }
    }
    let read_only = read_only || flags.is_some_and(|f| f.no_writes);
    // The keys' locks before the Lua state's, in the order EXEC takes them (its queue's
    // keys, then the state for an EVAL in it): two orders could wait on each other forever.
    let server = ctx.server;
    let db = ctx.session.db;
    let _locks = ctx.tx.is_none().then(|| server.store.lock_stripes(keys.iter().map(|k| (db, k.as_slice()))));
    let mut guard = match scripts.lock_state() {
        Ok(g) => g,
        Err(r) => return r,
    };
    let state = match State::get_or_make(&mut guard, &scripts.running) {
        Ok(s) => s,
        Err(e) => return Reply::err(format!("Error creating the Lua state: {e}")),
    };
    let function = match state.function(&sha, &body) {
        Ok(f) => f,
        Err(r) => return r,
    };
    if matches!(source, Source::Body(_)) {
        scripts.bodies.lock().insert(sha, body);
    }
    let threshold =
        ctx.server.settings.text.lock().get("busy-reply-threshold").and_then(|v| v.parse::<u64>().ok()).unwrap_or(5000);
    let running = &scripts.running;
    running.start(ctx.session.id, threshold);
    ctx.session.allow_oom = flags.is_some_and(|f| f.allow_oom);
    let script = Script {
        state,
        function: &function,
        keys: &keys,
        argv: &argv,
        read_only,
        running,
        last_counted_error: RefCell::new(None),
    };
    let reply = match ctx.tx {
        Some(_) => script.run(ctx),
        None => script.run_committed(ctx),
    };
    // An error a called command answered was counted then: passed on, it is not again.
    ctx.session.error_counted =
        matches!(&reply, Reply::Error(e) if script.last_counted_error.borrow().as_ref() == Some(e));
    ctx.session.allow_oom = false;
    running.end();
    // SELECT inside a script selects for the script only.
    ctx.session.db = db;
    reply
}

/// A request's words.
type Words = Vec<Vec<u8>>;

/// The keys and the arguments after `numkeys`.
fn split_keys(args: &[Vec<u8>]) -> Result<(Words, Words), Reply> {
    let count = args.get(2).and_then(|n| parse_int(n)).ok_or_else(not_an_integer)?;
    let rest = args.get(3..).unwrap_or_default();
    let count = usize::try_from(count).map_err(|_| Reply::err("Number of keys can't be negative"))?;
    if count > rest.len() {
        return Err(Reply::err("Number of keys can't be greater than number of args"));
    }
    let (keys, argv) = rest.split_at(count);
    Ok((keys.to_vec(), argv.to_vec()))
}

/// One script about to run.
struct Script<'a> {
    state: &'a State,
    function: &'a Function,
    keys: &'a [Vec<u8>],
    argv: &'a [Vec<u8>],
    read_only: bool,
    running: &'a Running,
    /// The error the last failed command it called answered (counted by `dispatch`).
    last_counted_error: RefCell<Option<String>>,
}

impl Script<'_> {
    /// Run in a transaction of its own (its keys' locks are held), and commit it.
    fn run_committed(&self, ctx: &mut Ctx<'_>) -> Reply {
        let server = ctx.server;
        let store = &server.store;
        let db = ctx.session.db;
        let mut attempt = 0;
        loop {
            attempt += 1;
            ctx.session.db = db;
            let sync = store.sync_mode() == SyncMode::Always;
            let tx = store.db().transaction_with(TransactionOptions { sync, ..TransactionOptions::default() });
            let reply = self.run(&mut Ctx { server, session: &mut *ctx.session, tx: Some(&tx) });
            if self.running.is_discarded() {
                // SHUTDOWN stopped it: the transaction is dropped, none of its writes kept.
                return reply;
            }
            match tx.commit() {
                Ok(()) => {
                    store.tracker().wrote();
                    return reply;
                }
                Err(e) if e.is_conflict() && attempt < ATTEMPTS => continue,
                Err(e) => return engine_error(e),
            }
        }
    }

    /// Run in `ctx`'s transaction.
    fn run(&self, ctx: &mut Ctx<'_>) -> Reply {
        let lua = &self.state.lua;
        let outcome = self.set_globals(lua).and_then(|()| {
            lua.scope(|scope| {
                let call = scope.create_function_mut(|lua, words: MultiValue| {
                    let (reply, failed) = self.call(ctx, words);
                    Ok((to_lua(lua, &reply)?, failed))
                })?;
                lua.set_named_registry_value(CALL_KEY, call)?;
                let (ok, value): (bool, Value) = self.state.run.call(self.function.clone())?;
                Ok(if ok { to_reply(&value) } else { self.failure(&value) })
            })
        });
        let _ = lua.unset_named_registry_value(CALL_KEY);
        match outcome {
            Ok(reply) => reply,
            Err(e) => Reply::err(root_message(&e)),
        }
    }

    /// KEYS and ARGV, as the script's globals.
    fn set_globals(&self, lua: &Lua) -> mlua::Result<()> {
        let globals = lua.globals();
        for (name, words) in [("KEYS", self.keys), ("ARGV", self.argv)] {
            let t = lua.create_table_with_capacity(words.len(), 0)?;
            for (i, w) in words.iter().enumerate() {
                t.raw_set(i + 1, lua.create_string(w)?)?;
            }
            globals.raw_set(name, t)?;
        }
        Ok(())
    }

    /// `redis.call` / `redis.pcall`: run one command; its reply and whether it is an error.
    fn call(&self, ctx: &mut Ctx<'_>, words: MultiValue) -> (Reply, bool) {
        // Busy is judged at each call too, not only at the hook's instruction counts: a
        // script that spends its time in commands runs few Lua instructions between them
        // (a stop SCRIPT KILL asked for is still taken at the hook).
        let _ = self.running.tick();
        let refused = |msg: &str| (Reply::err(msg), true);
        if words.is_empty() {
            return refused("Please specify at least one argument for this redis lib call");
        }
        let mut args = Vec::with_capacity(words.len());
        for w in words {
            let bytes = match &w {
                Value::String(s) => s.as_bytes().to_vec(),
                Value::Integer(_) | Value::Number(_) => {
                    number_argument(super::convert::number(&w).unwrap_or_default()).into_bytes()
                }
                _ => return refused("Lua redis lib command arguments must be strings or integers"),
            };
            args.push(bytes);
        }
        let Some(spec) = args.first().and_then(|n| commands::lookup(n)) else {
            return refused("Unknown Redis command called from script");
        };
        let refusal = if !spec.arity_allows(args.len()) {
            Some("Wrong number of args calling Redis command from script")
        } else if !commands::allowed_in_scripts(spec) {
            Some("This Redis command is not allowed from script")
        } else if self.read_only && spec.is_write() {
            Some("Write commands are not allowed from read-only scripts.")
        } else {
            None
        };
        let reply = match refusal {
            // The command is refused (counted as such), as dispatch refuses one.
            Some(msg) => {
                let reply = Reply::err(msg);
                ctx.server.counters.by_command.rejected(spec, &reply);
                reply
            }
            None => commands::dispatch(ctx, &args),
        };
        let failed = matches!(reply, Reply::Error(_));
        if let Reply::Error(e) = &reply {
            *self.last_counted_error.borrow_mut() = Some(e.clone());
        }
        if spec.is_write() && !failed {
            self.running.wrote();
        }
        (reply, failed)
    }

    /// The error a script ended with (its own, or one a `redis.call` raised).
    fn failure(&self, value: &Value) -> Reply {
        if self.running.is_killed() {
            return Reply::Error(KILLED.into());
        }
        match value {
            Value::Table(t) => match t.raw_get::<Value>("err") {
                Ok(Value::String(e)) => error_reply(&e.to_string_lossy()),
                _ => Reply::err("Error running script: the error is a table without 'err'"),
            },
            Value::String(s) => Reply::err(s.to_string_lossy()),
            Value::Error(e) => Reply::err(root_message(e)),
            other => Reply::err(format!("Error running script: {}", other.type_name())),
        }
    }
}

/// The message of the error at the root of `e` (a Rust callback's error is wrapped once
/// per Lua call it crossed).
fn root_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => root_message(cause),
        mlua::Error::RuntimeError(s) => s.clone(),
        other => other.to_string(),
    }
}
