//! EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (run by `crate::scripting`), and
//! FUNCTION and FCALL answered as Redis answers them when it holds no functions: functions
//! (Redis 7's libraries) are not supported.

use super::{arg, is, printable, Args, Spec};
use crate::reply::Reply;
use crate::scripting::Source;
use crate::session::Ctx;

const S: &[&str] = &["noscript", "stale"];
/// EVAL and FCALL name their keys by a count argument: `movablekeys`, as Redis flags them.
const SK: &[&str] = &["noscript", "stale", "movablekeys"];
/// The read-only forms.
const SKR: &[&str] = &["noscript", "stale", "movablekeys", "readonly"];

#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "function", arity: -2, flags: S, keys: (0, 0, 0), group: "scripting", summary: "LIST (none), FLUSH, STATS, DELETE, LOAD (refused: no scripting engine)", run: function },
    Spec { name: "fcall", arity: -3, flags: SK, keys: (0, 0, 0), group: "scripting", summary: "Call a function (there are none)", run: fcall },
    Spec { name: "fcall_ro", arity: -3, flags: SK, keys: (0, 0, 0), group: "scripting", summary: "Call a read-only function (there are none)", run: fcall },
    Spec { name: "script", arity: -2, flags: S, keys: (0, 0, 0), group: "scripting", summary: "LOAD, EXISTS, FLUSH [ASYNC|SYNC], KILL", run: script },
    Spec { name: "eval", arity: -3, flags: SK, keys: (0, 0, 0), group: "scripting", summary: "Run a Lua script atomically (script numkeys key... arg...)", run: eval },
    Spec { name: "evalsha", arity: -3, flags: SK, keys: (0, 0, 0), group: "scripting", summary: "Run a script known by its SHA1", run: evalsha },
    Spec { name: "eval_ro", arity: -3, flags: SKR, keys: (0, 0, 0), group: "scripting", summary: "Run a Lua script that may not write", run: eval_ro },
    Spec { name: "evalsha_ro", arity: -3, flags: SKR, keys: (0, 0, 0), group: "scripting", summary: "Run a script known by its SHA1 that may not write", run: evalsha_ro },
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

fn script(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let sub = arg(args, 1);
    let scripts = &ctx.server.scripts;
    let n = args.len();
    if is(sub, "FLUSH") && (n == 2 || (n == 3 && (is(arg(args, 2), "ASYNC") || is(arg(args, 2), "SYNC")))) {
        scripts.flush()
    } else if is(sub, "FLUSH") && n == 3 {
        Reply::err("SCRIPT FLUSH only support SYNC|ASYNC option")
    } else if is(sub, "EXISTS") && n >= 3 {
        scripts.exists(args.iter().skip(2).map(Vec::as_slice))
    } else if is(sub, "KILL") && n == 2 {
        scripts.kill()
    } else if is(sub, "LOAD") && n == 3 {
        scripts.load(arg(args, 2))
    } else {
        unknown(sub, "SCRIPT")
    }
}

fn eval(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    crate::scripting::eval(ctx, Source::Body(arg(args, 1)), args, false)
}

fn evalsha(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    crate::scripting::eval(ctx, Source::Sha(arg(args, 1)), args, false)
}

fn eval_ro(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    crate::scripting::eval(ctx, Source::Body(arg(args, 1)), args, true)
}

fn evalsha_ro(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    crate::scripting::eval(ctx, Source::Sha(arg(args, 1)), args, true)
}
