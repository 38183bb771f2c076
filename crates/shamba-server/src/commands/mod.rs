//! The command table: each command's name, arity, key positions and handler, and the
//! dispatch that checks arity before a handler runs. `COMMAND` reports the same table, so
//! what clients learn and what the server does cannot drift apart.

mod admin;
mod bitfield;
mod bits;
pub(super) mod blocking_pops;
pub(crate) mod cluster;
mod config;
mod conn;
pub(crate) mod expiry;
mod field_scan;
mod hash;
mod info;
mod introspection;
mod keys;
mod keys2;
mod list;
mod list_store;
pub(crate) mod memory_limit;
pub(crate) mod multi;
mod persistence;
mod pubsub;
mod ranks;
mod score;
mod scripting;
mod set;
mod sort;
mod sort_args;
pub(crate) mod stats;
mod strings;
mod strings2;
mod swapdb;
mod zset;
mod zset_args;
mod zset_combine;
mod zset_store;

pub(crate) use introspection::keys_of;
pub(crate) use sort_args::keys as sort_keys;

use super::reply::Reply;
use super::session::Ctx;
use super::store::WriteError;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The connection's selected database, or return the error reply that says why there is
/// none.
macro_rules! selected {
    ($ctx:expr) => {
        match $ctx.selected() {
            Ok(db) => db,
            Err(reply) => return reply,
        }
    };
}
use selected;

/// A request's words: the command name first.
pub(super) type Args = [Vec<u8>];

/// One command of the table: its name, arity, flags and key positions, as `COMMAND`
/// reports them.
pub struct Spec {
    /// Lowercase name.
    pub(super) name: &'static str,
    /// Redis's convention: `n` exactly n words (the name included), `-n` at least n.
    pub(super) arity: i64,
    /// Redis's command flags, as `COMMAND` reports them.
    pub(super) flags: &'static [&'static str],
    /// First key's position, last key's (-1: the last word), step between keys.
    pub(super) keys: (i64, i64, i64),
    /// Group, as `COMMAND DOCS` reports it.
    pub(super) group: &'static str,
    /// One line for `COMMAND DOCS`.
    pub(super) summary: &'static str,
    pub(super) run: fn(&mut Ctx<'_>, &Args) -> Reply,
}

const W: &[&str] = &["write"];
const R: &[&str] = &["readonly", "fast"];
const RS: &[&str] = &["readonly"];
const C: &[&str] = &["loading", "stale", "fast"];

/// The core commands, one line each. Other modules keep their own `SPECS` slice, listed in
/// [`TABLES`].
#[rustfmt::skip]
static SPECS: &[Spec] = &[
    Spec { name: "ping", arity: -1, flags: C, keys: (0, 0, 0), group: "connection", summary: "Reply PONG, or the argument", run: admin::ping },
    Spec { name: "echo", arity: 2, flags: C, keys: (0, 0, 0), group: "connection", summary: "Reply the argument", run: admin::echo },
    Spec { name: "hello", arity: -1, flags: C, keys: (0, 0, 0), group: "connection", summary: "Choose RESP2 or RESP3 and describe the server", run: admin::hello },
    Spec { name: "select", arity: 2, flags: C, keys: (0, 0, 0), group: "connection", summary: "Choose the database (0 to databases - 1)", run: admin::select },
    Spec { name: "quit", arity: -1, flags: C, keys: (0, 0, 0), group: "connection", summary: "Close the connection", run: admin::quit },
    Spec { name: "cluster", arity: -2, flags: &["admin", "noscript"], keys: (0, 0, 0), group: "cluster", summary: "INFO, ADDNODE id raft-addr, PROMOTE id..., REMOVE id...", run: cluster::cluster },
    Spec { name: "multi", arity: 1, flags: C, keys: (0, 0, 0), group: "transactions", summary: "Start queuing commands for EXEC", run: multi::multi },
    Spec { name: "exec", arity: 1, flags: C, keys: (0, 0, 0), group: "transactions", summary: "Run the queued commands atomically (nil when a watched key changed)", run: multi::exec },
    Spec { name: "discard", arity: 1, flags: C, keys: (0, 0, 0), group: "transactions", summary: "Drop the queued commands", run: multi::discard },
    Spec { name: "watch", arity: -2, flags: C, keys: (1, -1, 1), group: "transactions", summary: "Make EXEC fail if these keys change", run: multi::watch },
    Spec { name: "unwatch", arity: 1, flags: C, keys: (0, 0, 0), group: "transactions", summary: "Forget the watched keys", run: multi::unwatch },
    Spec { name: "time", arity: 1, flags: C, keys: (0, 0, 0), group: "server", summary: "The server's time: seconds, microseconds", run: admin::time },
    Spec { name: "info", arity: -1, flags: C, keys: (0, 0, 0), group: "server", summary: "Server and engine statistics", run: info::info },
    Spec { name: "dbsize", arity: 1, flags: RS, keys: (0, 0, 0), group: "server", summary: "Count the keys (walks every key)", run: keys::dbsize },
    Spec { name: "flushdb", arity: -1, flags: W, keys: (0, 0, 0), group: "server", summary: "Delete every key of the selected database", run: keys::flushdb },
    Spec { name: "flushall", arity: -1, flags: W, keys: (0, 0, 0), group: "server", summary: "Delete every key of every database", run: keys::flushall },
    Spec { name: "get", arity: 2, flags: R, keys: (1, 1, 1), group: "string", summary: "Get a key's value", run: strings::get },
    Spec { name: "set", arity: -3, flags: W, keys: (1, 1, 1), group: "string", summary: "Set a key (NX, XX, GET, EX, PX, EXAT, PXAT, KEEPTTL)", run: strings::set },
    Spec { name: "setex", arity: 4, flags: W, keys: (1, 1, 1), group: "string", summary: "Set a key that expires in seconds", run: expiry::setex },
    Spec { name: "psetex", arity: 4, flags: W, keys: (1, 1, 1), group: "string", summary: "Set a key that expires in milliseconds", run: expiry::psetex },
    Spec { name: "getex", arity: -2, flags: W, keys: (1, 1, 1), group: "string", summary: "Get a key and set or remove its expiry", run: expiry::getex },
    Spec { name: "getset", arity: 3, flags: W, keys: (1, 1, 1), group: "string", summary: "Set a key, reply its old value", run: strings::getset },
    Spec { name: "mget", arity: -2, flags: R, keys: (1, -1, 1), group: "string", summary: "Get several keys", run: strings::mget },
    Spec { name: "mset", arity: -3, flags: W, keys: (1, -1, 2), group: "string", summary: "Set several keys atomically", run: strings::mset },
    Spec { name: "incr", arity: 2, flags: W, keys: (1, 1, 1), group: "string", summary: "Add 1", run: strings::incr },
    Spec { name: "decr", arity: 2, flags: W, keys: (1, 1, 1), group: "string", summary: "Subtract 1", run: strings::decr },
    Spec { name: "incrby", arity: 3, flags: W, keys: (1, 1, 1), group: "string", summary: "Add an integer", run: strings::incrby },
    Spec { name: "decrby", arity: 3, flags: W, keys: (1, 1, 1), group: "string", summary: "Subtract an integer", run: strings::decrby },
    Spec { name: "append", arity: 3, flags: W, keys: (1, 1, 1), group: "string", summary: "Append to a value", run: strings::append },
    Spec { name: "strlen", arity: 2, flags: R, keys: (1, 1, 1), group: "string", summary: "Length of a value", run: strings::strlen },
    Spec { name: "del", arity: -2, flags: W, keys: (1, -1, 1), group: "generic", summary: "Delete keys", run: keys::del },
    Spec { name: "unlink", arity: -2, flags: W, keys: (1, -1, 1), group: "generic", summary: "Delete keys (as DEL)", run: keys::del },
    Spec { name: "expire", arity: -3, flags: W, keys: (1, 1, 1), group: "generic", summary: "Expire a key in seconds (NX, XX, GT, LT)", run: expiry::expire },
    Spec { name: "pexpire", arity: -3, flags: W, keys: (1, 1, 1), group: "generic", summary: "Expire a key in milliseconds", run: expiry::pexpire },
    Spec { name: "expireat", arity: -3, flags: W, keys: (1, 1, 1), group: "generic", summary: "Expire a key at a Unix time in seconds", run: expiry::expireat },
    Spec { name: "pexpireat", arity: -3, flags: W, keys: (1, 1, 1), group: "generic", summary: "Expire a key at a Unix time in milliseconds", run: expiry::pexpireat },
    Spec { name: "ttl", arity: 2, flags: R, keys: (1, 1, 1), group: "generic", summary: "Seconds left (-1 none, -2 no key)", run: expiry::ttl },
    Spec { name: "pttl", arity: 2, flags: R, keys: (1, 1, 1), group: "generic", summary: "Milliseconds left (-1 none, -2 no key)", run: expiry::pttl },
    Spec { name: "expiretime", arity: 2, flags: R, keys: (1, 1, 1), group: "generic", summary: "Deadline as a Unix time in seconds", run: expiry::expiretime },
    Spec { name: "pexpiretime", arity: 2, flags: R, keys: (1, 1, 1), group: "generic", summary: "Deadline as a Unix time in milliseconds", run: expiry::pexpiretime },
    Spec { name: "persist", arity: 2, flags: W, keys: (1, 1, 1), group: "generic", summary: "Remove a key's expiry", run: expiry::persist },
    Spec { name: "exists", arity: -2, flags: R, keys: (1, -1, 1), group: "generic", summary: "Count keys that exist", run: keys::exists },
    Spec { name: "type", arity: 2, flags: R, keys: (1, 1, 1), group: "generic", summary: "string or none", run: keys::type_of },
    Spec { name: "scan", arity: -2, flags: RS, keys: (0, 0, 0), group: "generic", summary: "Walk the keys (cursor, MATCH, COUNT)", run: keys::scan },
    Spec { name: "keys", arity: 2, flags: RS, keys: (0, 0, 0), group: "generic", summary: "Keys matching a pattern", run: keys::keys },
];

/// Every command the server knows: one slice per module (one line each, so that modules
/// added side by side merge without touching each other's lines).
#[rustfmt::skip]
pub(super) static TABLES: &[&[Spec]] = &[
    SPECS,
    conn::SPECS,
    pubsub::SPECS,
    strings2::SPECS,
    keys2::SPECS,
    bits::SPECS,
    bitfield::SPECS,
    config::SPECS,
    introspection::SPECS,
    persistence::SPECS,
    scripting::SPECS,
    hash::SPECS,
    set::SPECS,
    zset::SPECS,
    zset_combine::SPECS,
    list::SPECS,
    blocking_pops::SPECS,
    sort::SPECS,
    swapdb::SPECS,
];

/// Every command the server knows, in table order.
pub(super) fn all() -> impl Iterator<Item = &'static Spec> {
    TABLES.iter().flat_map(|t| t.iter())
}

/// Longest command name [`lookup`] can find: a longer word is unknown without looking.
const LONGEST_NAME: usize = 32;

/// Lowercase name to command, built on first use. A request's lookup is then one hash of a
/// short word instead of a walk over a table of a few hundred names.
fn index() -> &'static HashMap<&'static [u8], &'static Spec> {
    static INDEX: OnceLock<HashMap<&'static [u8], &'static Spec>> = OnceLock::new();
    INDEX.get_or_init(|| all().map(|s| (s.name.as_bytes(), s)).collect())
}

impl Spec {
    /// Its name, in lowercase.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Redis's command flags (`write`, `readonly`, `fast`, ...).
    pub fn flags(&self) -> &'static [&'static str] {
        self.flags
    }

    /// Whether it may write (the `write` flag): the commands a replica must see.
    pub fn is_write(&self) -> bool {
        self.flags.contains(&"write")
    }

    /// Whether a request of `words` words (the name included) has its arity.
    pub(crate) fn arity_allows(&self, words: usize) -> bool {
        let n = words as i64;
        (self.arity >= 0 && n == self.arity) || (self.arity < 0 && n >= -self.arity)
    }
}

/// Whether a script may call `spec`: not the commands Redis flags `noscript` (a
/// transaction's, another script's, pub/sub's, the connection's), not SWAPDB (the script
/// holds the databases), and not the blocking pops, as Redis 7.0.
pub(crate) fn allowed_in_scripts(spec: &Spec) -> bool {
    const REFUSED: &[&str] = &[
        "multi",
        "exec",
        "discard",
        "watch",
        "unwatch",
        "eval",
        "evalsha",
        "eval_ro",
        "evalsha_ro",
        "script",
        "function",
        "fcall",
        "fcall_ro",
        "auth",
        "hello",
        "reset",
        "quit",
        "client",
        "swapdb",
        "monitor",
        "subscribe",
        "psubscribe",
        "unsubscribe",
        "punsubscribe",
        "ssubscribe",
        "sunsubscribe",
    ];
    !spec.flags.contains(&"noscript") && !REFUSED.contains(&spec.name) && !blocking_pops::is_blocking(spec)
}

/// `spec`'s position among [`all`] (where its statistics are kept): found by its
/// address within its table.
pub(super) fn position(spec: &Spec) -> Option<usize> {
    let at = std::ptr::from_ref(spec) as usize;
    let size = std::mem::size_of::<Spec>();
    let mut before = 0;
    for t in TABLES {
        let start = t.as_ptr() as usize;
        if at >= start && at < start + std::mem::size_of_val(*t) {
            return Some(before + (at - start) / size);
        }
        before += t.len();
    }
    None
}

/// The command named `name`, any case.
pub fn lookup(name: &[u8]) -> Option<&'static Spec> {
    let mut buf = [0u8; LONGEST_NAME];
    let lower = buf.get_mut(..name.len())?;
    lower.copy_from_slice(name);
    lower.make_ascii_lowercase();
    index().get(&*lower).copied()
}

/// Run one request.
pub(super) fn dispatch(ctx: &mut Ctx<'_>, args: &Args) -> Reply {
    let Some(name) = args.first() else {
        return Reply::err("empty command");
    };
    let queuing = ctx.session.multi.is_some();
    if queuing && multi::refused_in_multi(name) {
        if let Some(q) = &mut ctx.session.multi {
            q.refused = true;
        }
        return Reply::err("Command not allowed inside a transaction");
    }
    let Some(spec) = lookup(name) else {
        if let Some(q) = &mut ctx.session.multi {
            q.refused = true;
        }
        let mut msg = format!("unknown command '{}', with args beginning with:", printable(name));
        for a in args.iter().skip(1).take(8) {
            msg.push_str(&format!(" '{}'", printable(a)));
        }
        let reply = Reply::err(msg);
        if let Reply::Error(e) = &reply {
            ctx.server.counters.by_command.error(e);
        }
        return reply;
    };
    if !spec.arity_allows(args.len()) {
        if let Some(q) = &mut ctx.session.multi {
            q.refused = true;
        }
        let reply = wrong_arity(spec.name);
        ctx.server.counters.by_command.rejected(spec, &reply);
        return reply;
    }
    if let Some(refused) = conn::refuse(ctx, spec, args) {
        return refused;
    }
    if let Some(busy) = crate::scripting::refuse_while_busy(ctx, spec, args) {
        ctx.server.counters.by_command.rejected(spec, &busy);
        return busy;
    }
    if let Some(oom) = memory_limit::refuse_over_limit(ctx, spec) {
        ctx.server.counters.by_command.rejected(spec, &oom);
        return oom;
    }
    if queuing && !multi::runs_at_once(spec.name) {
        return multi::queue(ctx, args);
    }
    // No SWAPDB while a command runs (a blocking command holds this only while it tries;
    // SWAPDB takes it exclusively).
    let _databases =
        (spec.name != "swapdb" && !blocking_pops::is_blocking(spec)).then(|| ctx.server.store.databases().hold());
    let checked = match crate::types::check_string_command(ctx, spec, args) {
        Ok(locks) => locks,
        Err(r) => return r,
    };
    let noted = crate::notify::before(ctx, spec, args);
    let started = std::time::Instant::now();
    let reply = (spec.run)(ctx, args);
    // Before blocked clients are served: they take key locks of their own.
    drop(checked);
    let took = started.elapsed();
    // Taken whatever happens next: the mark is for this command's reply only.
    let counted_inside = std::mem::take(&mut ctx.session.error_counted);
    // A request refused on the connection's task runs again on the pool: counted there.
    if !crate::no_wait::refused() {
        ctx.server.counters.by_command.ran_counting(spec, took, &reply, !counted_inside);
        if spec.is_write() && !matches!(reply, Reply::Error(_)) {
            crate::session::ServerCounters::add(&ctx.server.counters.dirty, 1);
        }
        ctx.server.settings.maybe_log(args, took);
        crate::notify::after(ctx, spec, args, &reply, noted);
        // Clients blocked on keys this command (or this EXEC) filled are served before
        // its reply goes out; a command inside EXEC leaves that to the EXEC.
        if ctx.tx.is_none() {
            ctx.server.waiters.serve_ready();
        }
    }
    conn::after(ctx, spec, args, reply)
}

/// A session's end: its subscriptions dropped.
pub(super) fn end_session(ctx: &mut Ctx<'_>) {
    pubsub::unsubscribe_all(ctx);
}

/// `args[i]` (present: arity is checked before a handler runs; empty otherwise).
pub(super) fn arg(args: &Args, i: usize) -> &[u8] {
    args.get(i).map(Vec::as_slice).unwrap_or_default()
}

/// Redis's arity error.
pub(super) fn wrong_arity(name: &str) -> Reply {
    Reply::err(format!("wrong number of arguments for '{name}' command"))
}

/// Bytes shown in an error message (lossy, at most 128 bytes).
pub(super) fn printable(b: &[u8]) -> String {
    String::from_utf8_lossy(b.get(..128).unwrap_or(b)).into_owned()
}

/// An engine error, or a group's refusal of a write, as a reply (the group's errors carry
/// their own code: `TRYAGAIN` for the ones a retry may cure).
pub(super) fn engine_error(e: impl Into<WriteError>) -> Reply {
    match e.into() {
        WriteError::Engine(e) => {
            // A read that would have blocked: the request runs again on the blocking pool,
            // and this reply is dropped (see `no_wait`).
            crate::no_wait::saw_error(&e);
            Reply::err(e)
        }
        WriteError::Cluster(e) => Reply::Error(e.to_string()),
    }
}

/// A syntax error.
pub(super) fn syntax_error() -> Reply {
    Reply::err("syntax error")
}

/// Whether `word` is `option`, any case.
pub(super) fn is(word: &[u8], option: &str) -> bool {
    word.eq_ignore_ascii_case(option.as_bytes())
}

/// An integer argument as Redis parses one (`string2ll`): optional `-`, digits, no
/// leading zeros, no spaces, within `i64`.
pub(super) fn parse_int(b: &[u8]) -> Option<i64> {
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    let ok = match digits {
        [] => false,
        [b'0'] => digits.len() == b.len(),
        [b'0', ..] => false,
        _ => digits.iter().all(u8::is_ascii_digit),
    };
    if !ok {
        return None;
    }
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// Redis's error for a bad integer.
pub(super) fn not_an_integer() -> Reply {
    Reply::err("value is not an integer or out of range")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_as_redis_parses_them() {
        assert_eq!(parse_int(b"0"), Some(0));
        assert_eq!(parse_int(b"-12"), Some(-12));
        assert_eq!(parse_int(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [&b""[..], b"-", b"-0", b"01", b"+1", b" 1", b"1 ", b"9223372036854775808", b"1.5"] {
            assert_eq!(parse_int(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn every_name_is_lowercase_unique_and_found_in_any_case() {
        let specs: Vec<&Spec> = all().collect();
        for (i, s) in specs.iter().enumerate() {
            assert_eq!(s.name, s.name.to_lowercase());
            assert!(s.name.len() <= LONGEST_NAME, "{} is longer than lookup looks", s.name);
            assert!(specs.iter().skip(i + 1).all(|t| t.name != s.name), "{} twice", s.name);
            for name in [s.name.to_uppercase(), s.name.to_string()] {
                assert!(lookup(name.as_bytes()).is_some_and(|found| std::ptr::eq(found, *s)), "{name}");
            }
            assert_eq!(position(s), Some(i), "{}", s.name);
        }
        assert_eq!(index().len(), specs.len());
    }

    #[test]
    fn unknown_and_overlong_names_are_not_found() {
        assert!(lookup(b"GeT").is_some());
        assert!(lookup(b"").is_none());
        assert!(lookup(b"gett").is_none());
        assert!(lookup(&[b'g'; LONGEST_NAME + 1]).is_none());
        assert!(lookup(b"g\xc3\xa9t").is_none());
    }
}
