//! Connection and server commands: PING, ECHO, HELLO, SELECT, QUIT, CLIENT, COMMAND,
//! CONFIG GET.

use super::{all, arg, is, lookup, not_an_integer, parse_int, printable, syntax_error, Args, Spec};
use crate::glob;
use crate::reply::{Protocol, Reply};
use crate::session::Ctx;

/// The Redis version whose commands and replies the server follows (what HELLO and INFO
/// report as `version`, for clients that check it); shamba's own version is reported
/// beside it.
pub(super) const REDIS_COMPAT_VERSION: &str = "7.0.0";

pub(super) fn ping(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    // A subscribed RESP2 client gets Redis's `pong` array (its replies and messages share
    // one stream).
    if ctx.session.proto == Protocol::Resp2 && ctx.session.subs.count() > 0 && args.len() <= 2 {
        return Reply::Array(vec![Reply::text_bulk("pong"), Reply::Bulk(arg(args, 1).to_vec())]);
    }
    match args {
        [_] => Reply::Simple("PONG"),
        [_, msg] => Reply::Bulk(msg.clone()),
        _ => super::wrong_arity("ping"),
    }
}

pub(super) fn echo(_ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    Reply::Bulk(arg(args, 1).to_vec())
}

/// TIME: the server's clock (the one deadlines are read by), seconds and microseconds.
pub(super) fn time(_ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    Reply::Array(vec![Reply::text_bulk(now.as_secs().to_string()), Reply::text_bulk(now.subsec_micros().to_string())])
}

/// HELLO [protover [AUTH user pass] [SETNAME name]]: switch protocol, describe the server.
pub(super) fn hello(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let mut proto = ctx.session.proto;
    let mut name = None;
    let mut credentials = None;
    if let Some(v) = args.get(1) {
        proto = match parse_int(v) {
            Some(2) => Protocol::Resp2,
            Some(3) => Protocol::Resp3,
            Some(_) => return Reply::Error("NOPROTO unsupported protocol version".into()),
            None => return Reply::err("Protocol version is not an integer or out of range"),
        };
        let mut rest = args.get(2..).unwrap_or_default().iter();
        while let Some(opt) = rest.next() {
            if is(opt, "AUTH") {
                match (rest.next(), rest.next()) {
                    (Some(user), Some(pass)) => credentials = Some((user, pass)),
                    _ => return syntax_error(),
                }
            } else if is(opt, "SETNAME") {
                match rest.next() {
                    Some(n) => name = Some(n.clone()),
                    None => return syntax_error(),
                }
            } else {
                return syntax_error();
            }
        }
    }
    if let Some(refused) = super::conn::hello_refused(ctx, credentials.is_some()) {
        return refused;
    }
    if let Some((user, pass)) = credentials {
        if let Reply::Error(e) = super::conn::authenticate(ctx, user, pass) {
            return Reply::Error(e);
        }
    }
    ctx.session.proto = proto;
    if name.is_some() {
        ctx.session.name = name;
    }
    let s = |k: &str, v: Reply| (Reply::text_bulk(k), v);
    Reply::Map(vec![
        s("server", Reply::text_bulk("shamba")),
        s("version", Reply::text_bulk(REDIS_COMPAT_VERSION)),
        s("shamba_version", Reply::text_bulk(env!("CARGO_PKG_VERSION"))),
        s("proto", Reply::Int(proto.version())),
        s("id", Reply::Int(ctx.session.id as i64)),
        s("mode", Reply::text_bulk("standalone")),
        s("role", Reply::text_bulk("master")),
        s("modules", Reply::Array(Vec::new())),
    ])
}

/// SELECT n: the connection's commands act on database n from now on (its keyspace is
/// created here the first time any connection selects it).
pub(super) fn select(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let Some(n) = parse_int(arg(args, 1)) else {
        return not_an_integer();
    };
    let selected = usize::try_from(n).ok().and_then(|n| ctx.server.store.select(n).map(|s| (n, s)));
    match selected {
        Some((n, Ok(_))) => {
            ctx.session.db = n;
            Reply::OK
        }
        Some((_, Err(e))) => super::engine_error(e),
        None => Reply::err("DB index is out of range"),
    }
}

pub(super) fn quit(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    ctx.session.closing = true;
    Reply::OK
}

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
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
    ])
}

/// One command as COMMAND DOCS describes it: the three fields Redis always gives.
fn docs_entry(s: &Spec) -> Reply {
    Reply::Map(vec![
        (Reply::text_bulk("summary"), Reply::text_bulk(s.summary)),
        (Reply::text_bulk("since"), Reply::text_bulk("1.0.0")),
        (Reply::text_bulk("group"), Reply::text_bulk(s.group)),
    ])
}

/// COMMAND, COMMAND COUNT / LIST / INFO / DOCS: the command table, for clients
/// (`redis-cli` asks for DOCS on start).
pub(super) fn command(_ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let Some(sub) = args.get(1) else {
        return Reply::Array(all().map(info_entry).collect());
    };
    let names = args.get(2..).unwrap_or_default();
    if is(sub, "COUNT") && names.is_empty() {
        Reply::Int(all().count() as i64)
    } else if is(sub, "LIST") && names.is_empty() {
        Reply::Array(all().map(|s| Reply::text_bulk(s.name)).collect())
    } else if is(sub, "INFO") {
        if names.is_empty() {
            return Reply::Array(all().map(info_entry).collect());
        }
        Reply::Array(names.iter().map(|n| lookup(n).map_or(Reply::Null, info_entry)).collect())
    } else if is(sub, "DOCS") {
        let specs: Vec<&Spec> =
            if names.is_empty() { all().collect() } else { names.iter().filter_map(|n| lookup(n)).collect() };
        Reply::Map(specs.into_iter().map(|s| (Reply::text_bulk(s.name), docs_entry(s))).collect())
    } else {
        Reply::err(format!("unknown subcommand or wrong number of arguments for '{}'", printable(sub)))
    }
}

/// CONFIG GET pattern...: the settings benchmark tools read (`save`, `appendonly`,
/// `appendfsync`, `databases`) and the connection layer's; CONFIG SET name value ... of
/// the connection layer's that may change while serving.
pub(super) fn config(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    if is(arg(args, 1), "SET") && args.len() >= 4 && args.len().is_multiple_of(2) {
        for pair in args.get(2..).unwrap_or_default().chunks(2) {
            match super::conn::set_setting(ctx, arg(pair, 0), arg(pair, 1)) {
                Some(Ok(())) => {}
                Some(Err(e)) => return e,
                None => {
                    return Reply::err(format!(
                        "Unknown option or number of arguments for CONFIG SET - '{}'",
                        printable(arg(pair, 0))
                    ))
                }
            }
        }
        return Reply::OK;
    }
    if !is(arg(args, 1), "GET") || args.len() < 3 {
        return Reply::err("CONFIG supports only GET pattern [pattern ...] and SET name value [name value ...]");
    }
    let sync = ctx.server.store.sync_mode().name();
    let databases = ctx.server.store.databases().count().to_string();
    let settings = [("save", ""), ("appendonly", "yes"), ("appendfsync", sync), ("databases", databases.as_str())];
    let settings = settings.into_iter().map(|(k, v)| (k, v.as_bytes().to_vec())).chain(super::conn::settings(ctx));
    let mut pairs = Vec::new();
    for (k, v) in settings {
        if args.iter().skip(2).any(|p| glob::matches(&p.to_ascii_lowercase(), k.as_bytes())) {
            pairs.push((Reply::text_bulk(k), Reply::Bulk(v)));
        }
    }
    Reply::Map(pairs)
}
