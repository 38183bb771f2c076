//! The connection layer's commands: AUTH, RESET and CLIENT; and the checks every request
//! passes before its command runs (authenticated, allowed in RESP2's subscribed mode) and
//! the record of it that CLIENT LIST shows.

use super::{arg, is, parse_int, printable, syntax_error, wrong_arity, Args, Spec};
use crate::auth;
use crate::clients::Client;
use crate::reply::{Protocol, Reply};
use crate::session::{Ctx, Replies};
use std::sync::Arc;

const NO_AUTH: &[&str] = &["noscript", "loading", "stale", "fast", "no-auth", "allow-busy"];

/// The connection commands, one line each.
#[rustfmt::skip]
pub(super) static SPECS: &[Spec] = &[
    Spec { name: "auth", arity: -2, flags: NO_AUTH, keys: (0, 0, 0), group: "connection", summary: "Authenticate: AUTH [default] password", run: auth_cmd },
    Spec { name: "reset", arity: 1, flags: NO_AUTH, keys: (0, 0, 0), group: "connection", summary: "Reset the connection's state (protocol, database, name, subscriptions, transaction, authentication)", run: reset },
    Spec { name: "client", arity: -2, flags: &["loading", "stale"], keys: (0, 0, 0), group: "connection", summary: "LIST, INFO, KILL, ID, SETNAME, GETNAME, SETINFO, NO-EVICT, NO-TOUCH", run: client },
];

/// Commands a RESP2 client may send while subscribed.
fn allowed_subscribed(name: &str) -> bool {
    matches!(
        name,
        "ping"
            | "subscribe"
            | "unsubscribe"
            | "psubscribe"
            | "punsubscribe"
            | "ssubscribe"
            | "sunsubscribe"
            | "quit"
            | "reset"
    )
}

/// Whether `name` changes subscriptions (its replies are pushes, sent even when CLIENT
/// REPLY silences the others).
fn changes_subscriptions(name: &str) -> bool {
    matches!(name, "subscribe" | "unsubscribe" | "psubscribe" | "punsubscribe")
}

/// The error that refuses `spec` for this connection before it runs, if one does: not
/// authenticated, or in RESP2's subscribed mode.
pub(super) fn refuse(ctx: &mut Ctx<'_>, spec: &Spec, args: &Args) -> Option<Reply> {
    let s = &ctx.session;
    if !s.authenticated && !auth::runs_unauthenticated(spec.name) {
        return Some(Reply::Error(auth::NOAUTH.into()));
    }
    if s.proto == Protocol::Resp2 && s.subs.count() > 0 && !allowed_subscribed(spec.name) {
        return Some(Reply::err(format!(
            "Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
            full_name(spec, args)
        )));
    }
    None
}

/// After `spec` ran: note it (CLIENT LIST's `cmd` and `idle`, and the state other clients
/// see), and answer `reply` unless CLIENT REPLY silenced it (subscription confirmations
/// are sent even then, as Redis sends its pushes).
pub(super) fn after(ctx: &mut Ctx<'_>, spec: &Spec, args: &Args, reply: Reply) -> Reply {
    // Run again on the blocking pool: noted and counted then.
    if crate::no_wait::refused() {
        return reply;
    }
    if let Some(c) = &ctx.session.client {
        c.record(ctx.session, spec.name, subcommand(spec, args));
    }
    // Inside EXEC every queued command answers: EXEC's own reply is the one silenced.
    if ctx.session.replies == Replies::On || changes_subscriptions(spec.name) || ctx.tx.is_some() {
        return reply;
    }
    if ctx.session.replies == Replies::Skip && !(spec.name == "client" && is(arg(args, 1), "REPLY")) {
        ctx.session.replies = Replies::On;
    }
    // No frame at all.
    Reply::Frames(Vec::new())
}

/// The subcommand, for the commands that have them.
fn subcommand<'a>(spec: &Spec, args: &'a Args) -> Option<&'a [u8]> {
    const CONTAINERS: &[&str] =
        &["client", "pubsub", "config", "command", "cluster", "object", "memory", "slowlog", "function"];
    args.get(1).filter(|_| CONTAINERS.contains(&spec.name)).map(Vec::as_slice)
}

/// `name`, or `name|subcommand` for the commands that have subcommands (as CLIENT LIST
/// and Redis's errors show them).
fn full_name(spec: &Spec, args: &Args) -> String {
    match subcommand(spec, args) {
        Some(sub) => format!("{}|{}", spec.name, String::from_utf8_lossy(sub).to_lowercase()),
        None => spec.name.to_string(),
    }
}

/// The connection layer's settings, as CONFIG GET shows them.
pub(super) fn settings(ctx: &Ctx<'_>) -> Vec<(&'static str, Vec<u8>)> {
    let c = &ctx.server.conns;
    let yes_no = |b: bool| if b { b"yes".to_vec() } else { b"no".to_vec() };
    let secs = c.idle_timeout().map_or(0, |d| d.as_secs());
    vec![
        ("requirepass", c.auth.password()),
        ("protected-mode", yes_no(c.auth.protected())),
        ("maxclients", c.registry.max().to_string().into_bytes()),
        ("timeout", secs.to_string().into_bytes()),
        ("proto-max-bulk-len", ctx.server.limits.max_bulk.to_string().into_bytes()),
        ("client-query-buffer-limit", ctx.server.limits.max_query.to_string().into_bytes()),
    ]
}

/// CONFIG SET of one of the settings that may change while serving (requirepass,
/// protected-mode, maxclients, timeout); `None` when `name` is not one of them.
pub(super) fn set_setting(ctx: &Ctx<'_>, name: &[u8], value: &[u8]) -> Option<Result<(), Reply>> {
    let c = &ctx.server.conns;
    let invalid = || {
        Reply::err(format!(
            "CONFIG SET failed (possibly related to argument '{}') - argument couldn't be parsed into an integer",
            printable(name).to_lowercase()
        ))
    };
    let number = || parse_int(value).and_then(|n| u64::try_from(n).ok()).ok_or_else(invalid);
    Some(if is(name, "requirepass") {
        c.auth.set_password(value);
        Ok(())
    } else if is(name, "protected-mode") {
        if is(value, "yes") || is(value, "no") {
            c.auth.set_protected(is(value, "yes"));
            Ok(())
        } else {
            Err(Reply::err(
                "CONFIG SET failed (possibly related to argument 'protected-mode') - argument must be 'yes' or 'no'",
            ))
        }
    } else if is(name, "maxclients") {
        number().map(|n| c.registry.set_max(usize::try_from(n).unwrap_or(usize::MAX)))
    } else if is(name, "timeout") {
        number().map(|n| c.set_idle_timeout(n))
    } else {
        return None;
    })
}

/// AUTH [username] password.
fn auth_cmd(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let (user, pass) = match args {
        [_, pass] => {
            if !ctx.server.conns.auth.required() {
                return Reply::Error(auth::NO_PASSWORD_SET.into());
            }
            (&b"default"[..], pass.as_slice())
        }
        [_, user, pass] => (user.as_slice(), pass.as_slice()),
        _ => return syntax_error(),
    };
    authenticate(ctx, user, pass)
}

/// Check `user` and `pass`; authenticated on success, as AUTH and HELLO's AUTH reply.
pub(super) fn authenticate(ctx: &mut Ctx<'_>, user: &[u8], pass: &[u8]) -> Reply {
    if ctx.server.conns.auth.accepts(user, pass) {
        ctx.session.authenticated = true;
        Reply::OK
    } else {
        Reply::Error(auth::WRONGPASS.into())
    }
}

/// HELLO's check before anything else: an unauthenticated client must authenticate in it.
pub(super) fn hello_refused(ctx: &Ctx<'_>, has_auth: bool) -> Option<Reply> {
    (!ctx.session.authenticated && !has_auth).then(|| Reply::Error(auth::HELLO_NOAUTH.into()))
}

/// RESET: as a new connection, keeping the id and the library's name: RESP2, database 0,
/// no name, no transaction or watched keys, no subscriptions, not authenticated when a
/// password is set.
fn reset(ctx: &mut Ctx<'_>, _args: &Args) -> Reply {
    let id = ctx.session.id;
    super::pubsub::unsubscribe_all(ctx);
    let s = &mut *ctx.session;
    s.proto = Protocol::Resp2;
    s.db = 0;
    s.name = None;
    s.multi = None;
    s.watch = None;
    s.authenticated = !ctx.server.conns.auth.required();
    s.replies = Replies::On;
    debug_assert_eq!(s.id, id);
    Reply::Simple("RESET")
}

/// CLIENT subcommands.
fn client(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let sub = arg(args, 1);
    let n = args.len();
    let sub_arity = |sub: &str| Reply::err(format!("wrong number of arguments for 'client|{sub}' command"));
    if is(sub, "ID") {
        return if n == 2 { Reply::Int(ctx.session.id as i64) } else { sub_arity("id") };
    }
    if is(sub, "GETNAME") {
        return if n == 2 { ctx.session.name.clone().map_or(Reply::Null, Reply::Bulk) } else { sub_arity("getname") };
    }
    if is(sub, "SETNAME") {
        if n != 3 {
            return sub_arity("setname");
        }
        let name = arg(args, 2);
        if name.iter().any(|&b| b <= b' ' || b > b'~') {
            return Reply::err("Client names cannot contain spaces, newlines or special characters.");
        }
        ctx.session.name = Some(name.to_vec()).filter(|n| !n.is_empty());
        return Reply::OK;
    }
    if is(sub, "SETINFO") {
        if n != 4 {
            return sub_arity("setinfo");
        }
        let (attr, value) = (arg(args, 2), arg(args, 3));
        if value.iter().any(|&b| b <= b' ' || b > b'~') {
            return Reply::err(format!(
                "{} cannot contain spaces, newlines or special characters.",
                printable(attr).to_lowercase()
            ));
        }
        let lib = if is(attr, "LIB-NAME") {
            (Some(value), None)
        } else if is(attr, "LIB-VER") {
            (None, Some(value))
        } else {
            return Reply::err(format!("Unrecognized option '{}'", printable(attr)));
        };
        if let Some(c) = &ctx.session.client {
            c.set_lib(lib.0, lib.1);
        }
        return Reply::OK;
    }
    if is(sub, "NO-EVICT") || is(sub, "NO-TOUCH") {
        return match args.get(2) {
            Some(v) if n == 3 && (is(v, "ON") || is(v, "OFF")) => Reply::OK,
            _ if n != 3 => sub_arity(&String::from_utf8_lossy(sub).to_lowercase()),
            _ => syntax_error(),
        };
    }
    if is(sub, "REPLY") {
        if n != 3 {
            return sub_arity("reply");
        }
        let mode = arg(args, 2);
        ctx.session.replies = if is(mode, "ON") {
            Replies::On
        } else if is(mode, "OFF") {
            Replies::Off
        } else if is(mode, "SKIP") {
            Replies::Skip
        } else {
            return syntax_error();
        };
        return Reply::OK;
    }
    if is(sub, "INFO") {
        return if n == 2 { Reply::Text(format!("{}\n", own_line(ctx, args))) } else { sub_arity("info") };
    }
    if is(sub, "LIST") {
        return list(ctx, args);
    }
    if is(sub, "KILL") {
        return kill(ctx, args);
    }
    if is(sub, "UNBLOCK") {
        return super::blocking_pops::client_unblock(ctx, args);
    }
    Reply::err(format!("unknown subcommand '{}'. Try CLIENT HELP.", printable(sub)))
}

/// The calling client's CLIENT LIST line, fresh.
fn own_line(ctx: &Ctx<'_>, args: &Args) -> String {
    let cmd = format!("client|{}", String::from_utf8_lossy(arg(args, 1)).to_lowercase());
    // What the request took in the query buffer, as a RESP array.
    let digits = |n: usize| n.to_string().len();
    let request_bytes = 3 + digits(args.len()) + args.iter().map(|a| 5 + digits(a.len()) + a.len()).sum::<usize>();
    match &ctx.session.client {
        Some(c) => c.line(Some((ctx.session, &cmd, request_bytes))),
        None => Client::detached(ctx.session.id).line(Some((ctx.session, &cmd, request_bytes))),
    }
}

/// CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...].
fn list(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let mut kind: Option<Vec<u8>> = None;
    let mut ids: Option<Vec<u64>> = None;
    let mut i = 2;
    while i < args.len() {
        let opt = arg(args, i);
        if is(opt, "TYPE") && i + 1 < args.len() {
            let t = arg(args, i + 1).to_ascii_lowercase();
            if !matches!(t.as_slice(), b"normal" | b"master" | b"replica" | b"slave" | b"pubsub") {
                return Reply::err(format!("Unknown client type '{}'", printable(&t)));
            }
            kind = Some(t);
            i += 2;
        } else if is(opt, "ID") && i + 1 < args.len() {
            let mut wanted = Vec::new();
            for a in args.get(i + 1..).unwrap_or_default() {
                match parse_int(a).and_then(|v| u64::try_from(v).ok()).filter(|&v| v > 0) {
                    Some(id) => wanted.push(id),
                    None => return Reply::err("Invalid client ID"),
                }
            }
            ids = Some(wanted);
            i = args.len();
        } else {
            return syntax_error();
        }
    }
    let mut out = String::new();
    let me = ctx.session.id;
    let mut clients = ctx.server.conns.registry.all();
    if ctx.session.client.is_none() {
        clients.push(Client::detached(me));
    }
    for c in clients {
        if ids.as_ref().is_some_and(|ids| !ids.contains(&c.id)) {
            continue;
        }
        let subscriber = if c.id == me { ctx.session.subs.count() > 0 } else { c.is_subscriber() };
        let keep = match kind.as_deref() {
            None => true,
            Some(b"pubsub") => subscriber,
            Some(b"normal") => !subscriber,
            Some(_) => false,
        };
        if !keep {
            continue;
        }
        if c.id == me {
            out.push_str(&own_line(ctx, args));
        } else {
            out.push_str(&c.line(None));
        }
        out.push('\n');
    }
    Reply::Text(out)
}

/// Which clients CLIENT KILL's filters choose.
#[derive(Default)]
struct KillFilter {
    id: Option<u64>,
    addr: Option<Vec<u8>>,
    laddr: Option<Vec<u8>>,
    kind: Option<Vec<u8>>,
    maxage: Option<u64>,
    skipme: bool,
}

/// CLIENT KILL ip:port (the old form: +OK or "No such client"), or CLIENT KILL with
/// filters (ID, ADDR, LADDR, TYPE, USER, SKIPME, MAXAGE): how many were killed. A killed
/// client's connection closes promptly, even while it waits for input; this connection,
/// if killed, after this reply.
fn kill(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    if args.len() < 3 {
        return wrong_arity("client|kill");
    }
    if args.len() == 3 {
        let addr = arg(args, 2);
        let found = ctx
            .server
            .conns
            .registry
            .all()
            .into_iter()
            .find(|c| c.addr().is_some_and(|a| a.to_string().as_bytes() == addr));
        return match found {
            Some(c) => {
                c.kill();
                Reply::OK
            }
            None => Reply::err("No such client"),
        };
    }
    let mut f = KillFilter { skipme: true, ..KillFilter::default() };
    let rest = args.get(2..).unwrap_or_default();
    if !rest.len().is_multiple_of(2) {
        return syntax_error();
    }
    for pair in rest.chunks(2) {
        let (opt, v) = (arg(pair, 0), arg(pair, 1));
        if is(opt, "ID") {
            match parse_int(v).and_then(|v| u64::try_from(v).ok()).filter(|&v| v > 0) {
                Some(id) => f.id = Some(id),
                None => return Reply::err("client-id should be greater than 0"),
            }
        } else if is(opt, "ADDR") {
            f.addr = Some(v.to_vec());
        } else if is(opt, "LADDR") {
            f.laddr = Some(v.to_vec());
        } else if is(opt, "TYPE") {
            let t = v.to_ascii_lowercase();
            if !matches!(t.as_slice(), b"normal" | b"master" | b"replica" | b"slave" | b"pubsub") {
                return Reply::err(format!("Unknown client type '{}'", printable(v)));
            }
            f.kind = Some(t);
        } else if is(opt, "USER") {
            if v != b"default" {
                return Reply::err(format!("No such user '{}'", printable(v)));
            }
        } else if is(opt, "SKIPME") {
            f.skipme = if is(v, "YES") {
                true
            } else if is(v, "NO") {
                false
            } else {
                return syntax_error();
            };
        } else if is(opt, "MAXAGE") {
            match parse_int(v) {
                Some(age) if age >= 0 => f.maxage = Some(age as u64),
                Some(_) => return Reply::err("maxage should be greater than 0"),
                None => return super::not_an_integer(),
            }
        } else {
            return syntax_error();
        }
    }
    let me = ctx.session.id;
    let mut killed = 0;
    let mut clients = ctx.server.conns.registry.all();
    if ctx.session.client.is_none() {
        clients.push(Client::detached(me));
    }
    for c in clients {
        if (f.skipme && c.id == me)
            || f.id.is_some_and(|id| id != c.id)
            || f.addr.as_ref().is_some_and(|a| c.addr().map(|x| x.to_string().into_bytes()).as_ref() != Some(a))
            || f.laddr.as_ref().is_some_and(|a| c.laddr().map(|x| x.to_string().into_bytes()).as_ref() != Some(a))
            || f.maxage.is_some_and(|m| c.age() < m)
        {
            continue;
        }
        let subscriber = if c.id == me { ctx.session.subs.count() > 0 } else { c.is_subscriber() };
        match f.kind.as_deref() {
            Some(b"pubsub") if !subscriber => continue,
            Some(b"normal") if subscriber => continue,
            Some(b"master" | b"replica" | b"slave") => continue,
            _ => {}
        }
        c.kill();
        if c.id == me {
            ctx.session.closing = true;
        }
        killed += 1;
    }
    Reply::Int(killed)
}

/// The calling client as a shared handle: its registered client, or a detached one made
/// for a session with no connection (kept, so subscriptions find it again).
pub(super) fn client_of(ctx: &mut Ctx<'_>) -> Arc<Client> {
    let id = ctx.session.id;
    ctx.session.client.get_or_insert_with(|| Client::detached(id)).clone()
}
