//! What clients ask about the server itself: COMMAND (bare, COUNT, LIST, INFO, DOCS,
//! GETKEYS), SLOWLOG, LATENCY (answered: nothing is tracked), MEMORY USAGE.

use super::{all, arg, engine_error, is, lookup, parse_int, printable, selected, syntax_error, Args, Spec};
use crate::glob;
use crate::reply::Reply;
use crate::session::Ctx;

const ADMIN: &[&str] = &["admin", "loading", "stale"];

#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "command", arity: -1, flags: &["loading", "stale"], keys: (0, 0, 0), group: "server", summary: "Describe the commands (COUNT, LIST, INFO, DOCS, GETKEYS)", run: command },
    Spec { name: "slowlog", arity: -2, flags: ADMIN, keys: (0, 0, 0), group: "server", summary: "GET [count], LEN, RESET: the commands slower than slowlog-log-slower-than", run: slowlog },
    Spec { name: "latency", arity: -2, flags: ADMIN, keys: (0, 0, 0), group: "server", summary: "LATEST, HISTORY, RESET, DOCTOR (no events are tracked)", run: latency },
    Spec { name: "memory", arity: -2, flags: &["readonly"], keys: (0, 0, 0), group: "server", summary: "USAGE key: bytes a key takes (its key and value)", run: memory },
];

/// One command as bare COMMAND and COMMAND INFO describe it (Redis 7's ten fields).
fn info_entry(s: &Spec) -> Reply {
    let (first, last, step) = s.keys;
    Reply::Array(vec![
        Reply::text_bulk(s.name),
        Reply::Int(s.arity),
        Reply::Array(s.flags.iter().map(|f| Reply::Simple(f)).collect()),
        Reply::Int(first),
        Reply::Int(last),
        Reply::Int(step),
        Reply::Array(vec![Reply::Simple(acl_category(s))]),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
    ])
}

/// The ACL category of a command's group (`@string`, `@keyspace`, ...).
fn acl_category(s: &Spec) -> &'static str {
    match s.group {
        "string" => "@string",
        "bitmap" => "@bitmap",
        "generic" => "@keyspace",
        "transactions" => "@transaction",
        "connection" => "@connection",
        "hash" => "@hash",
        "set" => "@set",
        "sorted-set" => "@sortedset",
        "list" => "@list",
        "pubsub" => "@pubsub",
        "scripting" => "@scripting",
        _ => "@admin",
    }
}

/// One command as COMMAND DOCS describes it: the fields Redis always gives.
fn docs_entry(s: &Spec) -> Reply {
    Reply::Map(vec![
        (Reply::text_bulk("summary"), Reply::text_bulk(s.summary)),
        (Reply::text_bulk("since"), Reply::text_bulk("1.0.0")),
        (Reply::text_bulk("group"), Reply::text_bulk(s.group)),
        (Reply::text_bulk("complexity"), Reply::text_bulk("")),
        (Reply::text_bulk("arguments"), Reply::Array(Vec::new())),
    ])
}

/// The keys of `args` by `spec`'s key positions (COMMAND GETKEYS, and EXEC's locks).
pub(crate) fn keys_of<'a>(spec: &Spec, args: &'a Args) -> Vec<&'a [u8]> {
    if spec.name == "sort" {
        // STORE's destination is found among the options.
        return super::sort_args::keys(args);
    }
    if matches!(spec.name, "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro") {
        // The keys follow their count.
        let count = args.get(2).and_then(|n| super::parse_int(n)).and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
        return args.iter().skip(3).take(count).map(Vec::as_slice).collect();
    }
    let (first, last, step) = spec.keys;
    if first <= 0 || step <= 0 {
        return Vec::new();
    }
    let n = args.len() as i64;
    let last = if last < 0 { n + last } else { last.min(n - 1) };
    (first..=last).step_by(step as usize).filter_map(|i| args.get(i as usize)).map(Vec::as_slice).collect()
}

fn command(_ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let Some(sub) = args.get(1) else {
        return Reply::Array(all().map(info_entry).collect());
    };
    let rest = args.get(2..).unwrap_or_default();
    if is(sub, "COUNT") && rest.is_empty() {
        Reply::Int(all().count() as i64)
    } else if is(sub, "LIST") {
        match rest {
            [] => Reply::Array(all().map(|s| Reply::text_bulk(s.name)).collect()),
            [f, kind, _] if is(f, "FILTERBY") && !["MODULE", "ACLCAT", "PATTERN"].iter().any(|k| is(kind, k)) => {
                syntax_error()
            }
            [f, kind, value] if is(f, "FILTERBY") => {
                let value = value.to_ascii_lowercase();
                let keep = |s: &Spec| {
                    if is(kind, "PATTERN") {
                        glob::matches(&value, s.name.as_bytes())
                    } else if is(kind, "ACLCAT") {
                        acl_category(s).as_bytes().get(1..) == Some(&value[..])
                    } else {
                        false
                    }
                };
                Reply::Array(all().filter(|s| keep(s)).map(|s| Reply::text_bulk(s.name)).collect())
            }
            _ => syntax_error(),
        }
    } else if is(sub, "INFO") {
        if rest.is_empty() {
            return Reply::Array(all().map(info_entry).collect());
        }
        Reply::Array(rest.iter().map(|n| lookup(n).map_or(Reply::Null, info_entry)).collect())
    } else if is(sub, "DOCS") {
        let specs: Vec<&Spec> =
            if rest.is_empty() { all().collect() } else { rest.iter().filter_map(|n| lookup(n)).collect() };
        Reply::Map(specs.into_iter().map(|s| (Reply::text_bulk(s.name), docs_entry(s))).collect())
    } else if is(sub, "GETKEYS") && !rest.is_empty() {
        let Some(spec) = rest.first().and_then(|n| lookup(n)) else {
            return Reply::err("Invalid command specified");
        };
        let n = rest.len() as i64;
        if (spec.arity >= 0 && n != spec.arity) || (spec.arity < 0 && n < -spec.arity) {
            return Reply::err("Invalid number of arguments specified for command");
        }
        let keys = keys_of(spec, rest);
        if keys.is_empty() {
            return Reply::err("The command has no key arguments");
        }
        Reply::Array(keys.into_iter().map(|k| Reply::Bulk(k.to_vec())).collect())
    } else if is(sub, "HELP") && rest.is_empty() {
        let lines = [
            "COMMAND",
            "COUNT",
            "LIST [FILTERBY (ACLCAT <cat>|PATTERN <pattern>)]",
            "INFO [<command-name> ...]",
            "DOCS [<command-name> ...]",
            "GETKEYS <full-command>",
        ];
        Reply::Array(lines.iter().map(|l| Reply::Simple(l)).collect())
    } else {
        Reply::err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try COMMAND HELP.",
            printable(sub)
        ))
    }
}

fn slowlog(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let sub = arg(args, 1);
    let settings = &ctx.server.settings;
    match args.len() {
        2 if is(sub, "LEN") => Reply::Int(settings.slowlog.lock().entries.len() as i64),
        2 if is(sub, "RESET") => {
            settings.slowlog.lock().entries.clear();
            Reply::OK
        }
        2 | 3 if is(sub, "GET") => {
            let count = match args.get(2) {
                None => 10,
                Some(c) => match parse_int(c) {
                    Some(-1) => usize::MAX,
                    Some(n) if n >= 0 => n as usize,
                    _ => return Reply::err("count should be greater than or equal to -1"),
                },
            };
            let log = settings.slowlog.lock();
            let entries = log.entries.iter().take(count).map(|e| {
                Reply::Array(vec![
                    Reply::Int(e.id as i64),
                    Reply::Int(e.at),
                    Reply::Int(e.micros as i64),
                    Reply::Array(e.args.iter().map(|a| Reply::Bulk(a.clone())).collect()),
                    Reply::text_bulk(e.peer.clone()),
                    Reply::text_bulk(""),
                ])
            });
            Reply::Array(entries.collect())
        }
        2 if is(sub, "HELP") => {
            let lines = ["SLOWLOG <subcommand> [<arg> ...]", "GET [<count>]", "LEN", "RESET"];
            Reply::Array(lines.iter().map(|l| Reply::Simple(l)).collect())
        }
        _ => Reply::err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try SLOWLOG HELP.",
            printable(sub)
        )),
    }
}

fn latency(_ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let sub = arg(args, 1);
    if is(sub, "LATEST") || is(sub, "HISTORY") {
        Reply::Array(Vec::new())
    } else if is(sub, "RESET") {
        Reply::Int(0)
    } else if is(sub, "HISTOGRAM") {
        Reply::Map(Vec::new())
    } else if is(sub, "DOCTOR") {
        Reply::Text("Latency monitoring is not tracked by this server: no events to report.\n".into())
    } else if is(sub, "GRAPH") {
        Reply::err(format!("No samples available for event '{}'", printable(arg(args, 2))))
    } else {
        Reply::err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try LATENCY HELP.",
            printable(sub)
        ))
    }
}

fn memory(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let sub = arg(args, 1);
    if is(sub, "USAGE") && (args.len() == 3 || (args.len() == 5 && is(arg(args, 3), "SAMPLES"))) {
        let key = arg(args, 2);
        return match selected!(ctx).get(key) {
            // The key and value bytes and the engine's per-entry overhead (its internal
            // key's sequence number and type, the table's offsets), roughly.
            Ok(Some(v)) => Reply::Int((key.len() + v.len() + 24) as i64),
            Ok(None) => Reply::Null,
            Err(e) => engine_error(e),
        };
    }
    if is(sub, "DOCTOR") && args.len() == 2 {
        return Reply::Text("Memory is the engine's memtables and block cache: see INFO memory.\n".into());
    }
    if is(sub, "PURGE") && args.len() == 2 {
        return Reply::OK;
    }
    Reply::err(format!("unknown subcommand or wrong number of arguments for '{}'. Try MEMORY HELP.", printable(sub)))
}
