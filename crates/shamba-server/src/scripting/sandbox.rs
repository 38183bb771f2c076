//! The Lua state: Lua 5.1's base, table, string and math libraries, Redis's `cjson`,
//! `cmsgpack` and `bit`, the protected environment scripts run in and the `redis` table
//! (`sandbox.lua`), the hook that watches
//! the running script, and the scripts compiled so far.

use super::busy::{Running, KILLED};
use crate::reply::Reply;
use mlua::{Function, HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Table, Value, VmState};
use std::collections::HashMap;
use std::sync::Arc;

/// Where the call function of the running script is kept for its run (see `run.rs`).
pub(super) const CALL_KEY: &str = "shamba.call";

/// Instructions between two looks of the hook at the running script (Redis's count).
const HOOK_EVERY: u32 = 100_000;

/// The Lua state and what was made in it.
pub(super) struct State {
    pub(super) lua: Lua,
    /// The environment scripts run in (reads fall through to the globals, writes fail).
    env: Table,
    /// Runs a script's function in a protected call: `(ok, value or error)`.
    pub(super) run: Function,
    /// Compiled scripts by SHA1.
    functions: HashMap<String, Function>,
}

impl State {
    /// The state in `slot`, made first if there is none.
    pub(super) fn get_or_make<'s>(slot: &'s mut Option<State>, running: &Arc<Running>) -> mlua::Result<&'s mut State> {
        if slot.is_none() {
            *slot = Some(State::new(running)?);
        }
        slot.as_mut().ok_or_else(|| mlua::Error::runtime("no Lua state"))
    }

    fn new(running: &Arc<Running>) -> mlua::Result<State> {
        let lua = Lua::new_with(StdLib::TABLE | StdLib::STRING | StdLib::MATH, LuaOptions::default())?;
        // The command runner of the script running now, put in the registry for its run.
        let raw_call = lua.create_function(|lua, args: MultiValue| {
            let call: Function = lua.named_registry_value(CALL_KEY)?;
            call.call::<MultiValue>(args)
        })?;
        let killed = Arc::clone(running);
        let check = lua.create_function(move |_, ()| match killed.is_killed() {
            true => Err(mlua::Error::runtime(KILLED)),
            false => Ok(()),
        })?;
        let sha1hex = lua.create_function(|_, args: MultiValue| match (args.len(), args.front()) {
            (1, Some(Value::String(s))) => Ok(super::sha1_hex(&s.as_bytes())),
            (1, Some(v @ (Value::Integer(_) | Value::Number(_)))) => Ok(super::sha1_hex(v.to_string()?.as_bytes())),
            _ => Err(mlua::Error::runtime("wrong number of arguments")),
        })?;
        let log = lua.create_function(|_, args: MultiValue| log(&args))?;
        let libraries = (super::cjson::table(&lua)?, super::cmsgpack::table(&lua)?, super::bit::table(&lua)?);
        let (env, run): (Table, Function) = lua.load(include_str!("sandbox.lua")).set_name("@sandbox").call((
            raw_call,
            check,
            sha1hex,
            log,
            libraries.0,
            libraries.1,
            libraries.2,
        ))?;
        let watched = Arc::clone(running);
        lua.set_hook(HookTriggers::new().every_nth_instruction(HOOK_EVERY), move |_, _| match watched.tick() {
            true => Err(mlua::Error::runtime(KILLED)),
            false => Ok(VmState::Continue),
        });
        Ok(State { lua, env, run, functions: HashMap::new() })
    }

    /// The script `sha` (whose body is `body`), compiled on first use.
    pub(super) fn function(&mut self, sha: &str, body: &[u8]) -> Result<Function, Reply> {
        if let Some(f) = self.functions.get(sha) {
            return Ok(f.clone());
        }
        let source = super::shebang::source(body);
        let compiled =
            self.lua.load(&*source).set_name("@user_script").set_environment(self.env.clone()).into_function();
        match compiled {
            Ok(f) => {
                self.functions.insert(sha.to_string(), f.clone());
                Ok(f)
            }
            Err(mlua::Error::SyntaxError { message, .. }) => {
                Err(Reply::err(format!("Error compiling script (new function): {message}")))
            }
            Err(e) => Err(Reply::err(format!("Error compiling script (new function): {e}"))),
        }
    }
}

/// `redis.log(level, message, ...)`: the words joined by spaces, on the server's standard
/// error with their level, as Redis writes them to its log (debug and verbose lines are
/// dropped, as under Redis's default `loglevel notice`).
fn log(args: &MultiValue) -> mlua::Result<()> {
    let mut words = args.iter();
    let (Some(level), Some(_)) = (words.next(), args.get(1)) else {
        return Err(mlua::Error::runtime("redis.log() requires two arguments or more."));
    };
    let Some(level) = level.as_integer().filter(|l| (0..=3).contains(l)) else {
        return Err(mlua::Error::runtime("Invalid debug level."));
    };
    if level < 2 {
        return Ok(());
    }
    let text: Vec<String> = words.map(|w| w.to_string().unwrap_or_default()).collect();
    let mark = ["debug", "verbose", "notice", "warning"].get(level as usize).copied().unwrap_or("notice");
    eprintln!("shamba serve: script ({mark}): {}", text.join(" "));
    Ok(())
}
