//! FUNCTION, FCALL, SCRIPT, EVAL and EVALSHA answered as Redis answers them when it holds
//! no functions and no scripts: there is no scripting engine, so nothing can be loaded.

use super::{arg, is, printable, Args, Spec};
use crate::reply::Reply;
use crate::session::Ctx;

const S: &[&str] = &["noscript", "stale"];
/// EVAL and FCALL name their keys by a count argument: `movablekeys`, as Redis flags them.
const SK: &[&str] = &["noscript", "stale", "movablekeys"];

#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "function", arity: -2, flags: S, keys: (0, 0, 0), group: "scripting", summary: "LIST (none), FLUSH, STATS, DELETE, LOAD (refused: no scripting engine)", run: function },
    Spec { name: "fcall", arity: -3, flags: SK, keys: (0, 0, 0), group: "scripting", summary: "Call a function (there are none)", run: fcall },
    Spec { name: "fcall_ro", arity: -3, flags: SK, keys: (0, 0, 0), group: "scripting", summary: "Call a read-only function (there are none)", run: fcall },
    Spec { name: "script", arity: -2, flags: S, keys: (0, 0, 0), group: "scripting", summary: "FLUSH, EXISTS (none), KILL, LOAD (refused)", run: script },
    Spec { name: "eval", arity: -3, flags: SK, keys: (0, 0, 0), group: "scripting", summary: "Refused: no scripting engine", run: eval },
    Spec { name: "evalsha", arity: -3, flags: SK, keys: (0, 0, 0), group: "scripting", summary: "Run a loaded script (there are none)", run: evalsha },
];

const NO_ENGINE: &str = "scripting is not supported by this server (no Lua engine)";

fn unknown(sub: &[u8], command: &str) -> Reply {
    Reply::err(format!("unknown subcommand or wrong number of arguments for '{}'. Try {command} HELP.", printable(sub)))
}

fn function(_ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let sub = arg(args, 1);
    let n = args.len();
    if is(sub, "LIST") {
        Reply::Array(Vec::new())
    } else if is(sub, "FLUSH") && (n == 2 || (n == 3 && (is(arg(args, 2), "ASYNC") || is(arg(args, 2), "SYNC")))) {
        Reply::OK
    } else if is(sub, "DELETE") && n == 3 {
        Reply::err("Library not found")
    } else if is(sub, "STATS") && n == 2 {
        let lua = Reply::Map(vec![
            (Reply::text_bulk("libraries_count"), Reply::Int(0)),
            (Reply::text_bulk("functions_count"), Reply::Int(0)),
        ]);
        Reply::Map(vec![
            (Reply::text_bulk("running_script"), Reply::Null),
            (Reply::text_bulk("engines"), Reply::Map(vec![(Reply::text_bulk("LUA"), lua)])),
        ])
    } else if is(sub, "KILL") && n == 2 {
        Reply::Error("NOTBUSY No scripts in execution right now.".into())
    } else if ((is(sub, "LOAD") || is(sub, "RESTORE")) && n >= 3) || (is(sub, "DUMP") && n == 2) {
        Reply::err(NO_ENGINE)
    } else {
        unknown(sub, "FUNCTION")
    }
}

fn fcall(_ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    Reply::err("Function not found")
}

fn script(_ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let sub = arg(args, 1);
    if is(sub, "FLUSH") && args.len() <= 3 {
        Reply::OK
    } else if is(sub, "EXISTS") && args.len() >= 3 {
        Reply::Array(args.iter().skip(2).map(|_| Reply::Int(0)).collect())
    } else if is(sub, "KILL") && args.len() == 2 {
        Reply::Error("NOTBUSY No scripts in execution right now.".into())
    } else if is(sub, "LOAD") && args.len() == 3 {
        Reply::err(NO_ENGINE)
    } else {
        unknown(sub, "SCRIPT")
    }
}

fn eval(_ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    Reply::err(NO_ENGINE)
}

fn evalsha(_ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    Reply::Error("NOSCRIPT No matching script. Please use EVAL.".into())
}
